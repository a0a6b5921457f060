// Graph mode on loops without syncs (the engine on the driver stand-in): short periods are
// followed as multiples, a loop found again at another launch reuses its graphs, and a loop
// with a shorter loop inside it is followed as the outer one. Results are compared bit for bit
// with the same launches made eagerly.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "graph/graph_engine.h"
#include "standin.h"
#include "standin_driver_api.h"
#include "test_kernels.h"

namespace pygraph {
namespace {

constexpr int kN = test::kOrderFloats;

class GraphLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::fill_standin_driver_api(&api_);
    test::take(&launch_, "cuLaunchKernel");
    const size_t sizes[2] = {4, 8};
    standin_kernel_fn fns[4] = {&test::order_k0, &test::order_k1, &test::order_k2, &test::order_k3};
    const char* names[4] = {"loop_k0", "loop_k1", "loop_k2", "loop_k3"};
    for (int k = 0; k < 4; ++k)
      kernels_[k] = test::standin_kernel(&table_, names[k], fns[k], 2, sizes);
    for (int i = 0; i < kN; ++i) y_engine_[i] = y_eager_[i] = float(i) * 0.125f;
  }

  // Kernel k with scalar a, through the engine and directly.
  void both(int k, float a) {
    CUdeviceptr ye = reinterpret_cast<CUdeviceptr>(y_engine_);
    CUdeviceptr yr = reinterpret_cast<CUdeviceptr>(y_eager_);
    void* pe[] = {&a, &ye};
    void* pr[] = {&a, &yr};
    const EngineLaunch l = test::engine_launch(Op::LaunchKernel, reinterpret_cast<void*>(launch_),
                                               kernels_[k], 1, 32, stream_, pe);
    ASSERT_EQ(engine_.launch(l), CUDA_SUCCESS);
    ASSERT_EQ(launch_(l.function, 1, 1, 1, 32, 1, 1, 0, stream_, pr, nullptr), CUDA_SUCCESS);
  }

  // `rounds` iterations of `body` (kernel indices), starting at its launch `first`; the scalar
  // changes every iteration for kernel 1 and stays for the others. Kernel 1's scalars come back
  // every `cycle` iterations (0: never, a counter).
  void loop(const std::vector<int>& body, int rounds, size_t first = 0, int cycle = 7) {
    for (int r = 0; r < rounds; ++r) {
      for (size_t i = 0; i < body.size(); ++i) {
        const int k = body[(first + i) % body.size()];
        both(k, k == 1 ? 0.001f * float(cycle ? iteration_ % cycle : iteration_) : 0.75f);
      }
      ++iteration_;
    }
  }

  // The host reads (a sync): everything deferred goes out; the results must be equal.
  void sync() {
    ASSERT_EQ(engine_.before_op(Op::CtxSynchronize, nullptr, false), CUDA_SUCCESS);
    ASSERT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0);
    engine_.after_op(Op::CtxSynchronize, nullptr, false, CUDA_SUCCESS);
    const EngineStats& s = engine_.stats();
    ASSERT_EQ(s.launches, s.replayed + s.eager_total());
  }

  // A loop with a shorter one inside its iteration, once run: its launches replay in graphs of
  // at least `per_replay` on average, with at most 4 mismatches (while the outer loop was not
  // known yet).
  void expect_outer_loop_replayed(uint64_t per_replay) {
    const EngineStats& s = engine_.stats();
    EXPECT_GE(s.replayed, s.launches * 95 / 100);
    EXPECT_GE(s.replayed / s.replays, per_replay);
    EXPECT_LE(s.mismatches, 4u);
  }

  // `rounds` iterations of `body` between two syncs (a segment), with a flush (a copy to the
  // host) before each launch whose index in the segment is one of `cuts`. Kernel 1's scalar
  // changes with the iteration of the loop (`by_round`: of the segment, the same at each
  // place in every segment).
  void cut_segment(const std::vector<int>& body, int rounds, const std::vector<uint32_t>& cuts,
                   bool by_round = false) {
    uint32_t at = 0;
    for (int r = 0; r < rounds; ++r) {
      for (int k : body) {
        for (uint32_t c : cuts) {
          if (c != at) continue;
          ASSERT_EQ(engine_.before_op(Op::MemcpyDtoHAsync, nullptr, false), CUDA_SUCCESS);
          engine_.after_op(Op::MemcpyDtoHAsync, nullptr, false, CUDA_SUCCESS);
        }
        both(k, k == 1 ? 0.001f * float((by_round ? r : iteration_) % 7) : 0.75f);
        ++at;
      }
      ++iteration_;
    }
    sync();  // the results are compared
  }

  DriverApi api_;
  FunctionTable table_{&api_};
  GraphEngine engine_{&api_};
  decltype(&cuLaunchKernel) launch_ = nullptr;
  const FunctionInfo* kernels_[4] = {};
  float y_engine_[kN], y_eager_[kN];
  int iteration_ = 0;
  CUstream stream_ = nullptr;  // the loop's stream: the legacy one unless a test says otherwise
};

TEST_F(GraphLoopTest, AFiveLaunchLoopReplaysInLargeGraphs) {
  // A CuPy loop's shape: 5 small kernels per iteration, never a sync until the end.
  loop({0, 1, 2, 3, 2}, 2000);
  sync();
  const EngineStats& s = engine_.stats();
  EXPECT_GE(s.replayed, s.launches * 95 / 100);
  EXPECT_GE(s.replayed / s.replays, 64u);  // unrolled to 16 periods: 80 launches a replay
  EXPECT_LE(s.graphs_built, 9u);           // the first chunks of 2, 4, ... then one graph
  EXPECT_EQ(s.mismatches, 0u);
}

TEST_F(GraphLoopTest, ATwoLaunchLoopReplaysInLargeGraphs) {
  // A compiled model's fused layer: a GEMV and a Triton kernel, over and over.
  loop({0, 1}, 3000);
  sync();
  const EngineStats& s = engine_.stats();
  EXPECT_GE(s.replayed, s.launches * 95 / 100);
  // Kernel 1's scalar comes back every 7 iterations: the loop is unrolled 56 times (112
  // launches, arg_period.h), not 64, so each replay finds every node as it left it.
  EXPECT_EQ(s.loops_unrolled_by_arguments, 1u);
  EXPECT_GE(s.replayed / s.replays, 95u);
  EXPECT_EQ(s.patched_nodes, 0u);
  // The first chunks of 2, 4, ... 64 from where following began, the rest of that unrolled
  // period, the steady graph, and the part the final sync cut off.
  EXPECT_LE(s.graphs_built, 9u);
}

TEST_F(GraphLoopTest, ALoopOfOneKernelReplaysInLargeGraphs) {
  // A plain C++ benchmark loop: one kernel, its arguments fixed or a counter, again and again.
  // It is a loop from its 33rd launch (sequence_detector.h), unrolled to 128 launches a graph.
  loop({0}, 3000);
  sync();
  const EngineStats fixed = engine_.stats();
  EXPECT_EQ(fixed.eager[static_cast<int>(EagerReason::kNotRepeating)], 33u);
  EXPECT_GE(fixed.replayed, fixed.launches * 95 / 100);
  EXPECT_GE(fixed.replayed / fixed.replays, 64u);
  EXPECT_EQ(fixed.patched_nodes, 0u);
  EXPECT_EQ(fixed.mismatches, 0u);
  // Kernel 1's scalar counts the iterations (it never comes back): every node is patched.
  loop({1}, 3000, 0, 0);
  sync();
  const EngineStats& s = engine_.stats();
  EXPECT_GE(s.replayed - fixed.replayed, (s.launches - fixed.launches) * 95 / 100);
  EXPECT_GE((s.replayed - fixed.replayed) / (s.replays - fixed.replays), 64u);
  EXPECT_GT(s.patched_nodes, (s.replayed - fixed.replayed) * 9 / 10);
  EXPECT_EQ(s.sequences_followed, 2u);
}

TEST_F(GraphLoopTest, ALoopOfOneKernelStillReplaysAfterSegmentsOfOneLaunch) {
  // A benchmark's warm-up loop, a few timed "launch; sync" steps, then its throughput loop.
  // Each one-launch step takes the loop up at its place (loop_resume.h) and is cut short there
  // (a chunk of one launch makes no graph): after LoneStarts::kLimit such cuts the place is
  // lone. A loop of one kernel has one place per launch of its unrolled period, not one in all:
  // counted modulo the period, every launch of the throughput loop started a lone chunk and
  // went out eagerly (0 of 3,000 replayed).
  loop({0}, 100);
  sync();
  for (int r = 0; r < 2 * LoneStarts::kLimit; ++r) {
    loop({0}, 1);
    sync();
  }
  const EngineStats before = engine_.stats();
  loop({0}, 3000);
  sync();
  const EngineStats& s = engine_.stats();
  EXPECT_GE(s.replayed - before.replayed, (s.launches - before.launches) * 95 / 100);
  EXPECT_GE((s.replayed - before.replayed) / (s.replays - before.replays), 64u);
}

TEST_F(GraphLoopTest, ALongRunOfOneKernelInsideALoopIsFollowedAsTheOuterLoop) {
  // An iteration with a run of 60 launches of one kernel: the run is a loop of its own in the
  // first iterations; then the iteration (64 launches) is what replays.
  std::vector<int> body = {3, 2};
  body.insert(body.end(), 60, 0);
  body.insert(body.end(), {1, 2});
  loop(body, 300);
  sync();
  expect_outer_loop_replayed(64);
  EXPECT_EQ(engine_.stats().sequences_followed, 2u);  // the run's, then the iteration's
}

TEST_F(GraphLoopTest, ALoopIsUnrolledToAMultipleOfItsArgumentPeriod) {
  // A ring of three buffers: a CuPy-like loop of 5 kernels whose arguments come back every 3
  // iterations. A power-of-two unroll (16 iterations) leaves them one iteration off at every
  // replay, so each replay patched kernel 1's nodes; unrolled 24 times (120 launches), none.
  loop({0, 1, 2, 3, 2}, 600, 0, 3);
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.loops_unrolled_by_arguments, 1u);
  const uint64_t replays = s.replays, patched = s.patched_nodes, replayed = s.replayed;
  loop({0, 1, 2, 3, 2}, 1200, 0, 3);
  sync();
  EXPECT_GE(s.replays - replays, 40u);
  EXPECT_EQ(s.patched_nodes, patched);  // the steady state patches nothing
  EXPECT_GE((s.replayed - replayed) / (s.replays - replays), 110u);
  EXPECT_EQ(s.mismatches, 0u);
}

TEST_F(GraphLoopTest, ALoopWhoseArgumentsNeverComeBackKeepsItsUnroll) {
  // A counter among the arguments (cuda_loop.cu's shape): no multiple patches less, so the
  // loop keeps its power-of-two unroll, 16 iterations of 5 launches, and patches every replay.
  loop({0, 1, 2, 3, 2}, 2000, 0, 0);
  sync();
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.loops_unrolled_by_arguments, 0u);
  EXPECT_GE(s.replayed / s.replays, 64u);
  EXPECT_GE(s.patched_nodes, s.replays);
}

TEST_F(GraphLoopTest, AnObserverIsToldEachPatchedNodeAndItsKernel) {
  // The counter loop above patches kernel 1's node at every replay and no other: the observer
  // (the analyzer's simulate counts these by kernel) hears of each patched node, with its
  // kernel, as many as the stats count.
  struct Patches : EngineObserver {
    void patched(uint32_t, NodeKind kind, const FunctionInfo* function) override {
      ++(kind == NodeKind::kKernel && function ? by_kernel[function->name] : others);
    }
    bool wants_patches() const override { return true; }
    std::map<std::string, uint64_t> by_kernel;
    uint64_t others = 0;
  } patches;
  engine_.set_observer(&patches);
  loop({0, 1, 2, 3, 2}, 2000, 0, 0);
  sync();
  engine_.set_observer(nullptr);
  const EngineStats& s = engine_.stats();
  ASSERT_GT(s.patched_nodes, 0u);
  EXPECT_EQ(patches.others, 0u);
  ASSERT_EQ(patches.by_kernel.size(), 1u);
  EXPECT_EQ(patches.by_kernel.begin()->first, "loop_k1");
  EXPECT_EQ(patches.by_kernel.begin()->second, s.patched_nodes);
}

TEST_F(GraphLoopTest, AQueryOfAnotherStreamInEachIterationNeitherCutsNorEndsTheLoop) {
  // A loop that asks each iteration whether another stream is done (cuStreamQuery, a copy
  // stream's progress): the query sees none of the loop's deferred work, so it submits nothing,
  // and it ends no sequence (before: each iteration a segment of its own, 5 launches, from a
  // first chunk of 2).
  decltype(&cuStreamCreate) create;
  decltype(&cuStreamQuery) query;
  test::take(&create, "cuStreamCreate");
  test::take(&query, "cuStreamQuery");
  CUstream other = nullptr;
  ASSERT_EQ(create(&other, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  // (On the legacy stream the loop's work would be seen by any stream's op: flush_rules.h.)
  ASSERT_EQ(create(&stream_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  for (int r = 0; r < 400; ++r) {
    loop({0, 1, 2, 3, 2}, 1);
    ASSERT_EQ(engine_.before_op(Op::StreamQuery, other, false), CUDA_SUCCESS);
    engine_.after_op(Op::StreamQuery, other, false, query(other));
  }
  sync();
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.flushes_by_op[static_cast<int>(Op::StreamQuery)], 0u);
  EXPECT_GE(s.replayed, s.launches * 90 / 100);
  // 70 launches a replay once unrolled for kernel 1's argument period (7 iterations of 5), less
  // the first chunks of 2, 4, ... over 400 iterations.
  EXPECT_GE(s.replayed / s.replays, 50u);
}

TEST_F(GraphLoopTest, ALoopFoundAgainAtAnotherLaunchReusesItsGraphs) {
  const std::vector<int> body = {0, 1, 2, 3, 0, 2, 1};
  loop(body, 400);
  sync();
  const EngineStats first = engine_.stats();
  ASSERT_GT(first.replayed, first.launches * 9 / 10);
  // The loop goes on from its fourth launch: the same sequence, plan and steady graph; only the
  // chunks that lead up to the first unrolled period from that launch are new.
  loop(body, 400, 3);
  sync();
  const EngineStats& s = engine_.stats();
  EXPECT_GT(s.replayed - first.replayed, (s.launches - first.launches) * 9 / 10);
  EXPECT_EQ(s.sequences_followed, 1u);
  EXPECT_LE(s.graphs_built - first.graphs_built, 7u);
}

TEST_F(GraphLoopTest, ALoopInsideALoopIsFollowedAsTheOuterOne) {
  // A forward of 8 layers of two launches between a first and a last kernel, in a loop without
  // syncs: the outer iteration (18 launches) is what replays, in large graphs.
  std::vector<int> forward = {3};
  for (int l = 0; l < 8; ++l) forward.insert(forward.end(), {0, 1});
  forward.push_back(2);
  loop(forward, 300);
  sync();
  expect_outer_loop_replayed(32);
  EXPECT_LE(engine_.stats().sequences_followed, 3u);
}

TEST_F(GraphLoopTest, ALoopCutByASyncGoesOnAfterItWhereItStopped) {
  // A host read in the middle of an iteration, two syncs, and the loop goes on from the launch
  // it had next: replayed from the first launch after the syncs, not found again two periods on.
  const std::vector<int> body = {0, 1, 2, 3, 0, 2, 1};
  loop(body, 40);
  for (int i = 0; i < 3; ++i) both(body[i], 0.75f);
  sync();
  sync();
  const EngineStats before = engine_.stats();
  loop(body, 10, 3);
  sync();
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.launches - before.launches, 70u);
  EXPECT_EQ(s.replayed - before.replayed, 70u);
  EXPECT_EQ(s.mismatches, before.mismatches);
  EXPECT_EQ(s.sequences_followed, 1u);
  EXPECT_EQ(s.loops_resumed, before.loops_resumed + 1);
  EXPECT_EQ(s.resume_mismatches, 0u);
}

TEST_F(GraphLoopTest, ALoopGoesOnPastTheEndOfAShorterSegmentMadeOfIt) {
  // The suite's mlp-item10: 40 iterations between the harness's two syncs, and a host read
  // every 10th iteration counted from the run's start, so that each chunk's segments are 8, 10,
  // 10, 10 and 2 iterations of one loop, all from the same launch. At a segment's start the
  // segment seen last is followed: the 2-iteration one where 8 come. It ended after 2, and the
  // loop was found again two periods later, its launches until then eager (mlp-item10's 95 %
  // coverage, session 49). Now the loop the segment is made of goes on from there.
  const std::vector<int> body = {0, 1, 2, 3, 0, 2, 1};
  int n = 2;  // iterations before the first chunk: its first read falls after 8 of its own
  auto chunk = [&] {
    for (int i = 0; i < 40; ++i) {
      loop(body, 1);
      if (++n % 10 == 0) sync();
    }
    sync();
    sync();
  };
  for (int c = 0; c < 4; ++c) chunk();
  const EngineStats before = engine_.stats();
  for (int c = 0; c < 8; ++c) chunk();
  const EngineStats& s = engine_.stats();
  const uint64_t launches = s.launches - before.launches;
  EXPECT_EQ(launches, 8u * 40 * 7);
  EXPECT_GE(s.replayed - before.replayed, launches * 99 / 100);
  EXPECT_GE(s.loops_past_segments - before.loops_past_segments, 8u);
  EXPECT_EQ(s.resume_mismatches, 0u);
}

TEST_F(GraphLoopTest, ASegmentCutAtPlacesThatVaryReplaysTheGraphsOfItsRepeats) {
  // The suite's timed chunks: 60 iterations between syncs, the same launches every time, and
  // flushes that fall in other iterations each time (PyTorch's allocator queries an event as it
  // allocates, when the GPU is behind). Followed as a segment of 420 positions, each chunk that
  // began at a cut ended in a new place: a new graph to build (two-streams, session 21: 271
  // built in the suite's timed chunks, 11 % slower). Such a chunk holds the work of a chunk
  // some iterations away, whose graph it replays (chunk_windows.h).
  const std::vector<int> body = {0, 1, 2, 3, 0, 2, 1};
  uint32_t seed = 12345;
  auto cut_place = [&] {
    seed = seed * 1103515245u + 12345u;
    // At one of two places of an iteration (where the program allocates), in any iteration.
    return (seed >> 8) % 60 * 7 + ((seed >> 20) & 1 ? 2 : 5);
  };
  auto segment = [&] { cut_segment(body, 60, {cut_place(), cut_place(), cut_place()}); };
  for (int n = 0; n < 90; ++n) ASSERT_NO_FATAL_FAILURE(segment());
  const EngineStats before = engine_.stats();
  for (int n = 90; n < 120; ++n) ASSERT_NO_FATAL_FAILURE(segment());
  const EngineStats& s = engine_.stats();
  const uint64_t replays = s.replays - before.replays;
  // With a graph for each window: 77 of 305 replays built one here (and 115 in segments 30 to
  // 60). Borrowing: 25 (55); the rest are windows of lengths and places not seen yet.
  EXPECT_LE((s.graphs_built - before.graphs_built) * 10, replays);
  EXPECT_GE((s.replays_borrowed - before.replays_borrowed) * 5, replays);
  EXPECT_GE(s.replayed - before.replayed, (s.launches - before.launches) * 95 / 100);
  EXPECT_EQ(s.mismatches, before.mismatches);
}

TEST_F(GraphLoopTest, CutsThatRecurEverySecondSegmentEndUpInGraphsOfTheirOwn) {
  // A schedule of cuts that repeats every second segment, arguments the same at each place: a
  // window never borrows in two occurrences in a row, yet recurs for good. After kBorrowLimit
  // borrows it has its own graph, and nothing is patched any more (review of 3977474: 2,720
  // nodes patched in segments 40 to 80 without the limit, 0 with a graph per window).
  const std::vector<int> body = {0, 1, 2, 3, 0, 2, 1};
  auto segment = [&](int n) {
    const std::vector<uint32_t> even = {10 * 7 + 2, 25 * 7 + 5, 44 * 7 + 2};
    const std::vector<uint32_t> odd = {13 * 7 + 2, 28 * 7 + 5, 47 * 7 + 2};
    cut_segment(body, 60, n % 2 ? odd : even, /*by_round=*/true);
  };
  for (int n = 0; n < 40; ++n) ASSERT_NO_FATAL_FAILURE(segment(n));
  const EngineStats before = engine_.stats();
  for (int n = 40; n < 80; ++n) ASSERT_NO_FATAL_FAILURE(segment(n));
  const EngineStats& s = engine_.stats();
  EXPECT_GT(s.replays - before.replays, 300u);
  EXPECT_EQ(s.graphs_built - before.graphs_built, 0u);
  EXPECT_EQ(s.patched_nodes - before.patched_nodes, 0u);
  EXPECT_EQ(s.replays_borrowed - before.replays_borrowed, 0u);
}

TEST_F(GraphLoopTest, ALoopFlushedEveryThirdIterationEndsUpInGraphsOfItsOwn) {
  // A flush every third iteration of a loop unrolled 16 times: the cuts' pattern repeats every
  // third wrap. Arguments repeat with it, so graphs of their own patch nothing (review of
  // 3977474: 1,056 nodes patched in the last 600 iterations without the limit).
  const std::vector<int> body = {0, 1, 2, 3, 0, 2, 1};
  auto run = [&](int rounds) {
    for (int r = 0; r < rounds; ++r) {
      for (size_t i = 0; i < body.size(); ++i) {
        if (i == 3 && iteration_ % 3 == 0) {
          ASSERT_EQ(engine_.before_op(Op::StreamQuery, nullptr, false), CUDA_SUCCESS);
          engine_.after_op(Op::StreamQuery, nullptr, false, CUDA_SUCCESS);
        }
        const int k = body[i];
        both(k, k == 1 ? 0.001f * float(iteration_ % 48) : 0.75f);
      }
      ++iteration_;
    }
  };
  ASSERT_NO_FATAL_FAILURE(run(600));
  const EngineStats before = engine_.stats();
  ASSERT_NO_FATAL_FAILURE(run(600));
  ASSERT_NO_FATAL_FAILURE(sync());
  const EngineStats& s = engine_.stats();
  EXPECT_GT(s.replays - before.replays, 200u);
  EXPECT_EQ(s.patched_nodes - before.patched_nodes, 0u);
}

TEST_F(GraphLoopTest, ALoopEndedByOtherLaunchesGoesOnAtTheNextSegmentsStart) {
  // The loop's iterations, then launches it does not have before each sync (a reduction the
  // host reads): the next chunk's first launch goes on with the loop where those ended it.
  const std::vector<int> body = {0, 1, 2, 0, 2, 1, 1};
  loop(body, 40);
  both(3, 0.5f);
  sync();
  const EngineStats before = engine_.stats();
  loop(body, 10);
  sync();
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.replayed - before.replayed, 70u);
  EXPECT_EQ(s.mismatches, before.mismatches);
}

TEST_F(GraphLoopTest, ALoopResumedByAWrongGuessEndsAsAMismatch) {
  // After the sync, other work that begins with the launch the loop had next: the loop is
  // followed, then the work goes elsewhere, and what was recorded goes out first, in order.
  const std::vector<int> body = {0, 1, 2, 3, 0, 2, 1};
  loop(body, 40);
  sync();
  const EngineStats before = engine_.stats();
  for (const int k : {0, 1, 2, 3, 3, 1, 0, 2}) both(k, 0.25f);
  sync();  // the results are compared
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.mismatches, before.mismatches + 1);
  EXPECT_EQ(s.loops_resumed, before.loops_resumed + 1);
  EXPECT_EQ(s.resume_mismatches, before.resume_mismatches + 1);
  EXPECT_EQ(s.launches - before.launches, 8u);
}

TEST_F(GraphLoopTest, ALoopThatEndsSendsItsRecordedLaunchesOutInOrder) {
  loop({0, 1, 2}, 50);
  both(3, 0.5f);  // something else: the recorded part of the loop goes first, as it came
  both(2, 0.5f);
  sync();
  EXPECT_GE(engine_.stats().mismatches, 1u);
}

}  // namespace
}  // namespace pygraph
