// Chunks that end where the program pauses on the host (pause_places.h), on the driver
// stand-in with a clock the test drives: a loop without syncs whose iterations pause before
// the same launch; once learned, the work before the pause is on its way to the GPU when the
// pause begins, and results stay equal to eager execution.
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "graph/graph_engine.h"
#include "standin.h"
#include "standin_driver_api.h"
#include "test_kernels.h"

namespace pygraph {
namespace {

constexpr int kN = test::kKernelFloats;
constexpr int kLoop = 10;  // launches an iteration, each its own block: a period of 10
constexpr int kPauseBefore = 4;
uint64_t g_now = 1;
uint64_t fake_clock() {
  return g_now;
}

class GraphPauseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::fill_standin_driver_api(&api_);
    test::take(&launch_, "cuLaunchKernel");
    test::take(&sync_, "cuCtxSynchronize");
    const size_t sizes[2] = {4, 8};
    scale_ = test::standin_kernel(&table_, "pause_scale", &test::scale_kernel, 2, sizes);
    for (int i = 0; i < kN; ++i) y_engine_[i] = y_eager_[i] = float(i) * 0.25f;
    g_now = 1;
  }

  void TearDown() override {
    standin_set_async(0);
    standin_set_timer_progress(0);
    standin_set_kernel_ns(1'000);
  }

  void make_engine(uint64_t pause_ns, uint64_t pause_gpu_ns = 0, uint32_t idle_ratio = 0,
                   uint64_t tail_pause_ns = 0, bool restart_chunks = false) {
    EngineOptions o;
    o.restart_chunks = restart_chunks;
    o.clock_ns = &fake_clock;
    o.pause_ns = pause_ns;
    o.pause_gpu_ns = pause_gpu_ns;
    o.pause_idle_ratio = idle_ratio;
    o.tail_pause_ns = tail_pause_ns;
    engine_ = std::make_unique<GraphEngine>(&api_, o);
  }

  // Launch i through the engine and, unless `eager_too` is false (reference() later), the
  // same launch on the eager copy (whose kernels also advance the stand-in's GPU clock).
  void launch(int i, float a, bool eager_too = true) {
    CUdeviceptr ye = reinterpret_cast<CUdeviceptr>(y_engine_);
    void* pe[] = {&a, &ye};
    ASSERT_EQ(
        engine_->launch(test::engine_launch(Op::LaunchKernel, reinterpret_cast<void*>(launch_),
                                            scale_, 1, 32 + i, nullptr, pe)),
        CUDA_SUCCESS);
    if (eager_too) reference(i, a);
  }
  void reference(int i, float a) {
    CUdeviceptr yr = reinterpret_cast<CUdeviceptr>(y_eager_);
    void* pr[] = {&a, &yr};
    ASSERT_EQ(launch_(reinterpret_cast<CUfunction>(scale_->handle), 1, 1, 1, 32 + i, 1, 1, 0,
                      nullptr, pr, nullptr),
              CUDA_SUCCESS);
  }

  // `iterations` of the loop, 5 us between launches and `pause` ns before launch kPauseBefore,
  // the GPU idling `idle` ns meanwhile. Returns in how many of the last `tail` iterations
  // nothing was left waiting when the pause began.
  int run(int iterations, uint64_t pause, int tail, uint64_t idle = 0) {
    int submitted = 0;
    for (int it = 0; it < iterations; ++it) {
      for (int i = 0; i < kLoop; ++i) {
        if (i == kPauseBefore) {
          submitted += it >= iterations - tail && engine_->idle();
          g_now += pause;
          if (idle) standin_gpu_idle(idle);
        } else {
          g_now += 5'000;
        }
        launch(i, 1.0f + 0.001f * float(it % 5));
      }
    }
    EXPECT_EQ(engine_->before_op(Op::CtxSynchronize, nullptr, false), CUDA_SUCCESS);
    EXPECT_EQ(sync_(), CUDA_SUCCESS);  // the work queued in the stand-in's asynchronous mode
    EXPECT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0);
    engine_->after_op(Op::CtxSynchronize, nullptr, false, CUDA_SUCCESS);
    return submitted;
  }

  // `steps` of kLoop launches each ending in a sync (a segment), 5 us between launches and
  // `pause` ns before launches `first_pause` and 8, the GPU idling `idle` ns meanwhile (it has
  // caught up with the host). A wait on an event the program recorded outside the step comes
  // `wait_at` (before its first launch, or before its sync), issued in place. Results are compared
  // at the end.
  enum class WaitAt { kNowhere, kStart, kEnd };
  void run_steps(int steps, uint64_t pause, uint64_t idle, WaitAt wait_at = WaitAt::kNowhere,
                 int first_pause = 4) {
    decltype(&cuEventCreate) create = nullptr;
    decltype(&cuEventRecord) record = nullptr;
    decltype(&cuStreamWaitEvent) wait = nullptr;
    test::take(&create, "cuEventCreate");
    test::take(&record, "cuEventRecord");
    test::take(&wait, "cuStreamWaitEvent");
    CUevent ev = nullptr;
    ASSERT_EQ(create(&ev, 0), CUDA_SUCCESS);
    const EventCall waits{
        Op::StreamWaitEvent, reinterpret_cast<void*>(wait), false, ev, nullptr, 0};
    for (int step = 0; step < steps; ++step) {
      ASSERT_EQ(record(ev, nullptr), CUDA_SUCCESS);  // the program's, outside the engine
      if (wait_at == WaitAt::kStart) {
        ASSERT_EQ(engine_->event_op(waits), CUDA_SUCCESS);
      }
      for (int i = 0; i < kLoop; ++i) {
        if (i == first_pause || i == 8) {
          g_now += pause;
          standin_gpu_idle(idle);
        } else {
          g_now += 5'000;
        }
        launch(i, 1.0f + 0.001f * float(step % 5));
      }
      if (wait_at == WaitAt::kEnd) {
        ASSERT_EQ(engine_->event_op(waits), CUDA_SUCCESS);
      }
      ctx_sync();
    }
    expect_equal_results();
  }

  // Steps of kLoop launches between syncs, 5 us apart but for `gap` ns before the last launch
  // (the Python between an optimizer's last kernel and `loss.item()`'s copy), the GPU caught up
  // and idle there. Returns in how many of the last `tail` steps nothing was left waiting when
  // that gap began.
  int last_gap_steps(int steps, uint64_t gap, int tail) {
    int submitted = 0;
    for (int step = 0; step < steps; ++step) {
      for (int i = 0; i < kLoop; ++i) {
        if (i == kLoop - 1) {
          submitted += step >= steps - tail && engine_->idle();
          g_now += gap;
          standin_gpu_idle(gap);
        } else {
          g_now += 5'000;
        }
        launch(i, 1.0f + 0.001f * float(step % 5));
      }
      ctx_sync();
    }
    return submitted;
  }

  // The program syncs the context: a segment ends.
  void ctx_sync() {
    EXPECT_EQ(engine_->before_op(Op::CtxSynchronize, nullptr, false), CUDA_SUCCESS);
    engine_->after_op(Op::CtxSynchronize, nullptr, false, CUDA_SUCCESS);
  }
  // Everything queued run, the results with and without the engine are equal.
  void expect_equal_results() {
    EXPECT_EQ(sync_(), CUDA_SUCCESS);
    EXPECT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0);
  }

  // Weighing over: the pauses that cut, those dropped as light, those kept unweighed.
  void expect_weighed(size_t places, size_t light, size_t unweighed = 0) {
    const PauseCounts& p = engine_->stats().pauses;
    EXPECT_EQ(p.weighing, 0u);
    EXPECT_EQ(p.unweighed, unweighed);
    EXPECT_EQ(p.places, places);
    EXPECT_EQ(p.light, light);
  }

  DriverApi api_;
  FunctionTable table_{&api_};
  std::unique_ptr<GraphEngine> engine_;
  decltype(&cuLaunchKernel) launch_ = nullptr;
  CUresult (*sync_)() = nullptr;
  const FunctionInfo* scale_ = nullptr;
  float y_engine_[kN], y_eager_[kN];
};

TEST_F(GraphPauseTest, AChunkEndsWhereTheProgramPauses) {
  make_engine(200'000);
  EXPECT_EQ(run(60, 1'000'000, 40), 40);
  const EngineStats& s = engine_->stats();
  EXPECT_EQ(s.pauses.places, 1u);
  EXPECT_GE(s.pause_cuts, 40u);
  EXPECT_GE(s.replayed, s.launches * 9 / 10);
  // The loop is followed unrolled to 8 periods (80 launches): 9 chunks between its pauses and
  // its ends, each a graph, and the first occurrences' chunks.
  EXPECT_LE(s.graphs_built, 16u);
}

TEST_F(GraphPauseTest, WithoutPausesTheChunkWaitsToFill) {
  // The same loop with the pause shorter than the threshold: the chunk holds the launches
  // before it and fills later. Its chunks span the unrolled period of 8 iterations, so one
  // pause in 8 comes at a chunk's end.
  make_engine(200'000);
  EXPECT_LE(run(60, 100'000, 40), 40 / 8);
  EXPECT_EQ(engine_->stats().pauses.places, 0u);
  EXPECT_EQ(engine_->stats().pause_cuts, 0u);
}

TEST_F(GraphPauseTest, APauseWithMuchGpuWorkWaitingKeepsCutting) {
  // Each iteration's 10 launches take 500 us on the (simulated) GPU: weighed at 100 us, the
  // pause still cuts. Timing it changes no result.
  standin_set_kernel_ns(50'000);
  make_engine(200'000, 100'000);
  EXPECT_EQ(run(120, 1'000'000, 40), 40);
  const EngineStats& s = engine_->stats();
  EXPECT_GE(s.pauses.places, 1u);
  EXPECT_EQ(s.pauses.light, 0u);
  EXPECT_EQ(s.pauses.weighing, 0u);  // weighed, kept
  EXPECT_GE(s.pause_cuts, 40u);
}

TEST_F(GraphPauseTest, ALoopWhoseGpuIdlesMostOfTheTimeCutsAtNoPause) {
  // The loop above (500 us of GPU work an iteration, a cut at 100 us) where the GPU idles 2 ms
  // at each pause: over a round it idles more than twice its work, so the pause is dropped and
  // the chunks fill. With the ratio at 0 it keeps cutting.
  standin_set_kernel_ns(50'000);
  make_engine(200'000, 100'000, 2);
  EXPECT_LE(run(120, 1'000'000, 40, 2'000'000), 40 / 8);
  const EngineStats& s = engine_->stats();
  EXPECT_EQ(s.pauses.places, 0u);
  EXPECT_EQ(s.pauses.light, 1u);
  EXPECT_EQ(s.pauses.weighing, 0u);
  // The stats say so of the loop itself: its pause dropped, its replays long.
  std::vector<SequenceStat> seqs = engine_->sequence_stats(1);
  ASSERT_EQ(seqs.size(), 1u);
  EXPECT_EQ(seqs[0].pause_state, "settled");
  EXPECT_EQ(seqs[0].pauses_cutting, 0u);
  EXPECT_EQ(seqs[0].pauses_dropped, 1u);
  EXPECT_GE(seqs[0].rounds.whole, uint32_t(PausePlaces::kSamples));
  // And why: over its whole rounds the GPU idled more than twice the time it worked.
  EXPECT_GT(seqs[0].rounds.gpu_ns, 0u);
  EXPECT_GT(seqs[0].rounds.idle_ns, 2 * seqs[0].rounds.gpu_ns);
  // The stats document gives both for one whole round (docs/stats-format.md).
  const nlohmann::json doc = nlohmann::json::parse(stats_json(s, DoorCounts{}, "graph", seqs));
  const nlohmann::json& rounds = doc["decisions"]["sequences"][0]["pauses"]["rounds"];
  EXPECT_DOUBLE_EQ(rounds["gpu_us"].get<double>(),
                   double(seqs[0].rounds.gpu_ns) / 1e3 / seqs[0].rounds.whole);
  EXPECT_GT(rounds["idle_us"].get<double>(), 2 * rounds["gpu_us"].get<double>());
  // Its last whole round's chunks, in order, each with its GPU time; no cut is left.
  const nlohmann::json& pauses = doc["decisions"]["sequences"][0]["pauses"];
  EXPECT_TRUE(pauses["cuts"].empty());
  const nlohmann::json& last = pauses["last_round"];
  ASSERT_FALSE(last.empty());
  ASSERT_FALSE(seqs[0].whole_rounds.empty());
  ASSERT_EQ(last.size(), seqs[0].whole_rounds.back().size());
  // The rounds before it, each as the last is.
  const nlohmann::json& earlier = pauses["earlier_rounds"];
  ASSERT_EQ(earlier.size(), seqs[0].whole_rounds.size() - 1);
  for (size_t r = 0; r < earlier.size(); ++r) {
    ASSERT_EQ(earlier[r].size(), seqs[0].whole_rounds[r].size()) << r;
    for (size_t k = 0; k < earlier[r].size(); ++k) {
      EXPECT_EQ(earlier[r][k]["start"], seqs[0].whole_rounds[r][k].start) << r << k;
      EXPECT_DOUBLE_EQ(earlier[r][k]["gpu_us"].get<double>(),
                       double(seqs[0].whole_rounds[r][k].gpu_ns) / 1e3)
          << r << k;
    }
  }
  double gpu_us = 0;
  for (size_t k = 0; k < last.size(); ++k) {
    EXPECT_LT(last[k]["start"].get<uint32_t>(), last[k]["end"].get<uint32_t>()) << k;
    if (k) {
      EXPECT_EQ(last[k]["start"], last[k - 1]["end"]) << k;
    }
    gpu_us += last[k]["gpu_us"].get<double>();
    // The host's time around each launch: this test's clock stands still within a call.
    EXPECT_EQ(last[k]["host_us"], 0.0) << k;
  }
  EXPECT_GT(gpu_us, 0.0);
  const double dropped_lpr = seqs[0].launches_per_replay;  // learning and weighing included
  make_engine(200'000, 100'000, 0);
  EXPECT_EQ(run(120, 1'000'000, 40, 2'000'000), 40);
  EXPECT_EQ(engine_->stats().pauses.places, 1u);
  seqs = engine_->sequence_stats(1);
  ASSERT_EQ(seqs.size(), 1u);
  EXPECT_EQ(seqs[0].pauses_cutting, 1u);
  EXPECT_EQ(seqs[0].cuts.size(), 1u);            // the pause that still cuts
  EXPECT_LE(seqs[0].launches_per_replay, 10.0);  // an iteration a chunk at most
  EXPECT_GT(seqs[0].replays, 80u);
  EXPECT_GT(dropped_lpr, 2 * seqs[0].launches_per_replay);
}

TEST_F(GraphPauseTest, APauseWithLittleGpuWorkWaitingIsDropped) {
  // The same loop whose launches take 1 us each: 10 us wait at each pause, below 100 us. Once
  // weighed, chunks fill across the pauses as without them (one pause in 8 at a chunk's end),
  // and replays grow.
  standin_set_kernel_ns(1'000);
  make_engine(200'000, 100'000);
  EXPECT_LE(run(120, 1'000'000, 40), 40 / 8);
  const EngineStats& s = engine_->stats();
  EXPECT_EQ(s.pauses.places, 0u);
  EXPECT_GE(s.pauses.light, 1u);
  EXPECT_EQ(s.pauses.weighing, 0u);
  EXPECT_EQ(s.pauses.unweighed, 0u);
  const uint64_t replays = s.replays, replayed = s.replayed;
  EXPECT_LE(run(80, 1'000'000, 40), 40 / 8);
  EXPECT_GE(double(s.replayed - replayed) / double(s.replays - replays), 40.0);
  EXPECT_EQ(s.pause_cuts, engine_->stats().pause_cuts);
}

TEST_F(GraphPauseTest, APauseWhoseWorkIsNeverTimedKeepsCutting) {
  // A driver without cuEventElapsedTime: no replay is timed, weighing ends after its rounds,
  // and the pause keeps cutting, counted as unweighed.
  standin_set_kernel_ns(1'000);
  api_.event_elapsed_time = nullptr;
  make_engine(200'000, 100'000);
  EXPECT_EQ(run(120, 1'000'000, 40), 40);
  expect_weighed(1, 0, 1);
  // The loop's stats say why: its rounds, all untimed, none whole.
  const std::vector<SequenceStat> seqs = engine_->sequence_stats(1);
  ASSERT_EQ(seqs.size(), 1u);
  EXPECT_EQ(seqs[0].rounds.whole, 0u);
  EXPECT_GT(seqs[0].rounds.untimed, 0u);
}

TEST_F(GraphPauseTest, WeighedPausesChangeNoResultOnTheAsynchronousStandIn) {
  standin_set_async(1);
  standin_set_timer_progress(1);  // the steps tell the engine of a sync, not the stand-in
  for (const uint64_t kernel_ns : {1'000, 50'000}) {
    standin_set_kernel_ns(kernel_ns);
    make_engine(200'000, 100'000);
    run(120, 1'000'000, 40);
    EXPECT_EQ(engine_->stats().pauses.weighing, 0u) << kernel_ns;
    EXPECT_EQ(engine_->stats().pauses.light, kernel_ns == 1'000 ? 1u : 0u) << kernel_ns;
  }
  standin_set_async(0);
}

TEST_F(GraphPauseTest, APauseTheGpuCatchesUpWithLaterInTheStepIsDropped) {
  // Steps between syncs, pausing 1 ms before launches 4 and 8, 200 us of GPU work before each
  // pause. Where the GPU idles through the pauses (a host-bound step), the work held at the
  // first pause has the second's idle time to catch up in: only the second cuts. Where it
  // never idles (it runs behind the host), both cut.
  standin_set_kernel_ns(50'000);
  make_engine(200'000, 100'000, 2);
  run_steps(40, 1'000'000, 1'000'000);
  expect_weighed(1, 1);
  make_engine(200'000, 100'000, 2);
  run_steps(40, 1'000'000, 0);
  EXPECT_EQ(engine_->stats().pauses.weighing, 0u);
  EXPECT_EQ(engine_->stats().pauses.places, 2u);
  EXPECT_EQ(engine_->stats().pauses.light, 0u);
  // Idle time not weighed: both cut.
  make_engine(200'000, 100'000, 0);
  run_steps(40, 1'000'000, 1'000'000);
  EXPECT_EQ(engine_->stats().pauses.places, 2u);
}

TEST_F(GraphPauseTest, StepsThatBeginOrEndWithAWaitInPlaceAreWeighed) {
  // The step's first or last position is a wait issued in place, so no chunk starts at its
  // first position or ends at its last: each recorded occurrence is still a round, and the
  // first pause is dropped as above.
  for (const WaitAt at : {WaitAt::kStart, WaitAt::kEnd}) {
    standin_set_kernel_ns(50'000);
    make_engine(200'000, 100'000, 2);
    SCOPED_TRACE(int(at));
    run_steps(60, 1'000'000, 1'000'000, at);
    expect_weighed(1, 1);
  }
}

TEST_F(GraphPauseTest, ALaunchThatGoesOutAloneIsWorkWaitingToo) {
  // Pauses before launches 1 and 8 of steps between syncs, 50 us a launch, 40 us light: the
  // chunk before the first pause is launch 0 alone, sent out eagerly (one launch is no graph).
  // Its time is measured as a replay's: 50 us wait there, so both pauses cut.
  standin_set_kernel_ns(50'000);
  make_engine(200'000, 40'000, 0);
  run_steps(60, 1'000'000, 0, WaitAt::kNowhere, 1);
  expect_weighed(2, 0);
}

TEST_F(GraphPauseTest, ALaunchThatTurnsLoneWhileWeighedIsTimedInItsRound) {
  // As above, launch 0 alone before the first pause; after LoneStarts::kLimit steps cut short
  // there it goes out as it comes. The first 20 timings fail (as a driver may), so every round
  // before it turns lone is untimed, and the one whole round comes after: the lone launch is
  // timed in it like a chunk, so both places are weighed on it (the pause after the lone
  // launch has its 50 us waiting). Untimed there, that place had no measured work and stayed
  // unweighed; left there (before session 28), no round was ever whole.
  standin_set_kernel_ns(50'000);
  make_engine(200'000, 40'000, 0);
  standin_inject_failure("cuEventElapsedTime", 20, CUDA_ERROR_INVALID_VALUE);
  run_steps(60, 1'000'000, 0, WaitAt::kNowhere, 1);
  standin_inject_failure("cuEventElapsedTime", 0, CUDA_SUCCESS);
  expect_weighed(2, 0);
  EXPECT_GT(engine_->stats().eager[static_cast<int>(EagerReason::kShortChunk)], 50u);
  const std::vector<SequenceStat> seqs = engine_->sequence_stats(1);
  ASSERT_EQ(seqs.size(), 1u);
  EXPECT_EQ(seqs[0].rounds.left, 0u);
  EXPECT_EQ(seqs[0].rounds.whole, 1u);
}

TEST_F(GraphPauseTest, ALoneLaunchThatFailedIsNotTimed) {
  // As above: launch 0 turns lone while the steps are still weighed. The next step's lone
  // launch fails in the driver: its timing would measure no work, so its round is untimed, not
  // timed and then left (the occurrence ends at the failure).
  standin_set_kernel_ns(50'000);
  make_engine(200'000, 40'000, 0);
  standin_inject_failure("cuEventElapsedTime", 20, CUDA_ERROR_INVALID_VALUE);
  bool lone_seen = false, failed = false;
  for (int step = 0; step < 20; ++step) {
    for (int i = 0; i < kLoop; ++i) {
      g_now += i == 1 || i == 8 ? 1'000'000 : 5'000;
      const float a = 1.0f + 0.001f * float(step % 5);
      if (i == 0 && lone_seen && !failed) {
        const std::vector<SequenceStat> before = engine_->sequence_stats(1);
        ASSERT_EQ(before.size(), 1u);
        ASSERT_EQ(before[0].pause_state, "weighing");
        const EngineStats& s = engine_->stats();
        const uint64_t recorded = s.recorded;
        const uint64_t errors = s.eager[static_cast<int>(EagerReason::kLaunchError)];
        // No timing read fails from here: a lost read would count the round untimed too.
        standin_inject_failure("cuEventElapsedTime", 0, CUDA_SUCCESS);
        standin_inject_failure("cuLaunchKernel", 1, CUDA_ERROR_LAUNCH_FAILED);
        CUdeviceptr ye = reinterpret_cast<CUdeviceptr>(y_engine_);
        float arg = a;
        void* pe[] = {&arg, &ye};
        EXPECT_EQ(
            engine_->launch(test::engine_launch(Op::LaunchKernel, reinterpret_cast<void*>(launch_),
                                                scale_, 1, 32, nullptr, pe)),
            CUDA_ERROR_LAUNCH_FAILED);
        EXPECT_EQ(s.recorded, recorded);  // went out as it came: lone
        EXPECT_EQ(s.eager[static_cast<int>(EagerReason::kLaunchError)], errors + 1);
        const std::vector<SequenceStat> after = engine_->sequence_stats(1);
        ASSERT_EQ(after.size(), 1u);
        EXPECT_EQ(after[0].rounds.untimed, before[0].rounds.untimed + 1);
        EXPECT_EQ(after[0].rounds.left, before[0].rounds.left);
        failed = true;
        continue;  // it did nothing: nor does the eager twin
      }
      const uint64_t recorded = engine_->stats().recorded;
      launch(i, a);
      // Launch 0 of a followed step, not recorded: it went out as it came.
      if (i == 0 && !engine_->sequence_stats(1).empty()) {
        lone_seen = lone_seen || engine_->stats().recorded == recorded;
      }
    }
    ctx_sync();
  }
  standin_inject_failure("cuEventElapsedTime", 0, CUDA_SUCCESS);
  EXPECT_TRUE(failed);
  expect_equal_results();
}

TEST_F(GraphPauseTest, AGpuFarBehindStillTimesWholeRounds) {
  // Steps of 20 launches between syncs, pausing 1 ms before every even one from 2 on: 10
  // chunks a round, 50 us of GPU work each. The GPU runs far behind: no timing completes
  // before the 100th read (each read answers "not ready"), so the timings of several rounds
  // are in flight at once. All are taken and answered later: two rounds are whole, and the
  // pauses are weighed on them (each has 100 us waiting: they cut). With 15 timings in flight
  // at most (before session 28), every round after the first found no free slot: 1 whole,
  // 5 untimed.
  standin_set_kernel_ns(50'000);
  make_engine(200'000, 40'000, 0);
  standin_inject_failure("cuEventElapsedTime", 100, CUDA_ERROR_NOT_READY);
  for (int step = 0; step < 40; ++step) {
    for (int i = 0; i < 2 * kLoop; ++i) {
      g_now += i >= 2 && i % 2 == 0 ? 1'000'000 : 5'000;
      launch(i, 1.0f + 0.001f * float(step % 5));
    }
    ctx_sync();
  }
  standin_inject_failure("cuEventElapsedTime", 0, CUDA_SUCCESS);
  expect_equal_results();
  const std::vector<SequenceStat> seqs = engine_->sequence_stats(1);
  ASSERT_EQ(seqs.size(), 1u);
  EXPECT_EQ(seqs[0].pause_state, "settled");
  EXPECT_EQ(seqs[0].rounds.whole, uint32_t(PausePlaces::kSamples));
  EXPECT_LE(seqs[0].rounds.untimed, 1u);  // the graphs' first launches
  EXPECT_EQ(seqs[0].pauses_cutting, 9u);
}

TEST_F(GraphPauseTest, AStepWhoseGpuIdlesBeforeItsLastChunkGoesOutInTwo) {
  // Steps of 10 launches between syncs, no pause, 1 us of GPU work a launch. The chunks start
  // small: [0, 2), [2, 6), [6, 10). Where the GPU idles 1 ms before the last (a host-bound
  // step), the 6 us before it fit in that idle time: once weighed, a step is [0, 6) and
  // [6, 10). Where the GPU never idles, the chunks stay as they were.
  for (const uint64_t idle : {uint64_t(1'000'000), uint64_t(0)}) {
    SCOPED_TRACE(idle);
    make_engine(200'000, 100'000, 2);
    run_steps(40, 5'000, idle);
    EXPECT_EQ(engine_->stats().pauses.weighing, 0u);
    EXPECT_EQ(engine_->stats().pauses.places, 0u);
    EXPECT_EQ(engine_->stats().pauses.tail_splits, idle ? 1u : 0u);
    const uint64_t replays = engine_->stats().replays;
    run_steps(20, 5'000, idle);  // results equal (run_steps compares them)
    EXPECT_EQ(engine_->stats().replays - replays, idle ? 40u : 60u);
  }
  // Idle time not weighed (a ratio of 0): no split.
  make_engine(200'000, 100'000, 0);
  run_steps(40, 5'000, 1'000'000);
  EXPECT_EQ(engine_->stats().pauses.tail_splits, 0u);
}

TEST_F(GraphPauseTest, APauseAfterTheSplitWithLittleWorkSinceItCutsNoMore) {
  // Steps of 10 launches between syncs, 40 us of GPU work a launch, a 300 us pause before
  // launch 8, and the GPU idle 1 ms before launch 6. Weighed, the chunks are [0, 2), [2, 6),
  // [6, 8), [8, 10): the 240 us before 6 fit in that idle time, a split at 6. From the step's
  // start, 320 us wait at the pause (a cut); from the split, 80 (light, under 100). A step then
  // goes out as [0, 6) and [6, 10): 2 replays, not 3 (mlp-dropout-item eager, session 34).
  standin_set_kernel_ns(40'000);
  make_engine(200'000, 100'000, 2);
  auto steps = [&](int n) {
    for (int step = 0; step < n; ++step) {
      for (int i = 0; i < kLoop; ++i) {
        g_now += i == 8 ? 300'000 : 5'000;
        if (i == 6) standin_gpu_idle(1'000'000);
        launch(i, 1.0f + 0.001f * float(step % 5));
      }
      ctx_sync();
    }
  };
  steps(40);
  EXPECT_EQ(engine_->stats().pauses.tail_splits, 1u);
  expect_weighed(0, 1);
  const uint64_t replays = engine_->stats().replays;
  const uint64_t cuts = engine_->stats().pause_cuts;
  steps(20);
  EXPECT_EQ(engine_->stats().replays - replays, 40u);
  EXPECT_EQ(engine_->stats().pause_cuts - cuts, 0u);
  expect_equal_results();
}

TEST_F(GraphPauseTest, AChunkTheGpuDrainedForWhileItWasRecordedStartsSmall) {
  // Steps of 10 launches between syncs, 40 us of GPU work a launch, a 1 ms pause before launch
  // 4 that the GPU idles through, then `apart` ns between launches. Weighed, the chunks are
  // [0, 2), [2, 4), [4, 10): a split at 4 (the GPU idles after it), and the last chunk recorded
  // over 5 gaps while the GPU waited. At 100 us apart (500 us of recording) it restarts: a step
  // then goes out as [0, 4), [4, 6), [6, 10). At 5 us apart (25 us, under the 100 us mark) the
  // GPU's wait was the pause: [0, 4), [4, 10). With restart_chunks off, nothing restarts.
  standin_set_kernel_ns(40'000);
  for (const auto& [apart, on] :
       {std::pair{uint64_t(100'000), true}, std::pair{uint64_t(5'000), true},
        std::pair{uint64_t(100'000), false}}) {
    SCOPED_TRACE(testing::Message() << apart << (on ? " on" : " off"));
    const bool restarts = apart == 100'000 && on;
    make_engine(200'000, 100'000, 2, 0, on);
    auto steps = [&](int n) {
      for (int step = 0; step < n; ++step) {
        for (int i = 0; i < kLoop; ++i) {
          g_now += i == 4 ? 1'000'000 : i > 4 ? apart : 5'000;
          if (i == 4) standin_gpu_idle(1'000'000);
          launch(i, 1.0f + 0.001f * float(step % 5));
        }
        ctx_sync();
      }
    };
    steps(40);
    EXPECT_EQ(engine_->stats().pauses.weighing, 0u);
    EXPECT_EQ(engine_->stats().pauses.tail_splits, 1u);
    EXPECT_EQ(engine_->stats().pauses.restarts, restarts ? 1u : 0u);
    const std::vector<SequenceStat> seqs = engine_->sequence_stats(1);
    ASSERT_EQ(seqs.size(), 1u);
    EXPECT_EQ(seqs[0].split, 4u);
    EXPECT_EQ(seqs[0].restarts, restarts ? std::vector<uint32_t>{4} : std::vector<uint32_t>{});
    // Each chunk of the last round carries the host's time recording it: the last one's 5 gaps.
    ASSERT_FALSE(seqs[0].whole_rounds.empty());
    const PausePlaces::Timed& last = seqs[0].whole_rounds.back().back();
    EXPECT_EQ(last.start, 4u);
    EXPECT_EQ(last.record_ns, 5 * apart);
    const uint64_t replays = engine_->stats().replays;
    const uint64_t restarted = engine_->stats().restarted_chunks;
    steps(20);
    EXPECT_EQ(engine_->stats().replays - replays, restarts ? 60u : 40u);
    EXPECT_EQ(engine_->stats().restarted_chunks - restarted, restarts ? 20u : 0u);
    expect_equal_results();
    // The stats document says so (docs/stats-format.md).
    const nlohmann::json doc = nlohmann::json::parse(
        stats_json(engine_->stats(), DoorCounts{}, "graph", engine_->sequence_stats(1)));
    EXPECT_EQ(doc["graphs"]["pause_restarts"], restarts ? 1 : 0);
    EXPECT_EQ(doc["graphs"]["restarted_chunks"], engine_->stats().restarted_chunks);
    const nlohmann::json& pauses = doc["decisions"]["sequences"][0]["pauses"];
    EXPECT_EQ(pauses["restarts"], restarts ? nlohmann::json::array({4}) : nlohmann::json::array());
    EXPECT_DOUBLE_EQ(pauses["last_round"].back()["record_us"].get<double>(), 5 * apart / 1e3);
  }
}

// The windows of the graphs the engine builds, in order.
struct BuiltWindows : EngineObserver {
  std::vector<std::pair<uint32_t, uint32_t>> windows;
  void chunk_built(uint32_t, uint32_t start, uint32_t end, size_t) override {
    windows.emplace_back(start, end);
  }
};

TEST_F(GraphPauseTest, ARestartBeginsWithWhatTheGpuStillRanAndGrowsAtItsPace) {
  // Steps of 20 launches between syncs, 150 us of GPU work a launch, a 1 ms pause before launch
  // 4, then 100 us between launches. Weighed, a step goes out as [0, 2), [2, 4), [4, 12),
  // [12, 20): [4, 12) is recorded in 700 us and brings 1.2 ms of GPU work (a pace of 1.71),
  // and the GPU idles 400 us before it: it drained 300 us into the recording, after 3 of 8
  // entries. No split (400 us is under twice the 600 us before it). Restarted, the chunk after
  // the pause begins with 3 entries and the next ones grow 1.71 times: [4, 7), [7, 12),
  // [12, 20), where growing by 2 would give [7, 13), [13, 20).
  // The eager copy's launches go after each step's sync, outside the chunks' timings.
  constexpr int kLaunches = 20;
  standin_set_kernel_ns(150'000);
  make_engine(200'000, 100'000, 2, 0, true);
  BuiltWindows built;
  engine_->set_observer(&built);
  auto steps = [&](int n) {
    for (int step = 0; step < n; ++step) {
      const float a = 1.0f + 0.001f * float(step % 5);
      for (int i = 0; i < kLaunches; ++i) {
        g_now += i == 4 ? 1'000'000 : i > 4 ? 100'000 : 5'000;
        if (i == 4) standin_gpu_idle(405'000);  // 400 us over the 5 us floor
        launch(i, a, false);
      }
      ctx_sync();
      for (int i = 0; i < kLaunches; ++i) reference(i, a);
    }
  };
  steps(40);
  EXPECT_EQ(engine_->stats().pauses.weighing, 0u);
  EXPECT_EQ(engine_->stats().pauses.tail_splits, 0u);
  const std::vector<SequenceStat> seqs = engine_->sequence_stats(1);
  ASSERT_EQ(seqs.size(), 1u);
  ASSERT_EQ(seqs[0].restarts, std::vector<uint32_t>{4});
  ASSERT_EQ(seqs[0].restart_sizes.size(), 1u);
  EXPECT_EQ(seqs[0].restart_sizes[0].first, 3u);
  EXPECT_EQ(seqs[0].restart_sizes[0].pace, 438u);  // 1.71 in 256ths
  // The last windows built are the restart's ([12, 20) was built while weighing).
  using Windows = std::vector<std::pair<uint32_t, uint32_t>>;
  ASSERT_GE(built.windows.size(), 2u);
  EXPECT_EQ(Windows(built.windows.end() - 2, built.windows.end()), (Windows{{4, 7}, {7, 12}}));
  const size_t windows = built.windows.size();
  const uint64_t replays = engine_->stats().replays;
  const uint64_t restarted = engine_->stats().restarted_chunks;
  steps(20);
  EXPECT_EQ(engine_->stats().replays - replays, 100u);  // [0, 2), [2, 4), the restart's three
  EXPECT_EQ(engine_->stats().restarted_chunks - restarted, 20u);
  EXPECT_EQ(built.windows.size(), windows);  // nothing built anew
  expect_equal_results();
  const nlohmann::json doc = nlohmann::json::parse(
      stats_json(engine_->stats(), DoorCounts{}, "graph", engine_->sequence_stats(1)));
  const nlohmann::json& sizes = doc["decisions"]["sequences"][0]["pauses"]["restart_sizes"];
  ASSERT_EQ(sizes.size(), 1u);
  EXPECT_EQ(sizes[0]["first"], 3);
  EXPECT_NEAR(sizes[0]["pace"].get<double>(), 1.71, 0.01);
  engine_->set_observer(nullptr);
}

TEST_F(GraphPauseTest, AVariantTakenOverFromASplitStepIsCutAsOneNeverWeighed) {
  // Steps split at 6 as above, then steps that alternate with a variant whose 8th launch
  // differs: each step is taken over from the other sequence at that launch (10 switches in
  // 10 steps). A chunk begun whole for the split step begins at the first size again where the
  // step switched to was never split: 3 replays a step. Kept whole, a switched step went out
  // as [6, 10): 25 replays in 10 steps.
  make_engine(200'000, 100'000, 2);
  run_steps(40, 5'000, 1'000'000);
  ASSERT_EQ(engine_->stats().pauses.tail_splits, 1u);
  auto steps = [&](int n) {
    for (int step = 0; step < n; ++step) {
      for (int i = 0; i < kLoop; ++i) {
        g_now += 5'000;
        launch(i == 7 && step % 2 ? 27 : i, 1.0f + 0.001f * float(step % 5));
      }
      ctx_sync();
    }
  };
  steps(10);
  const uint64_t replays = engine_->stats().replays;
  const uint64_t switches = engine_->stats().variant_switches;
  steps(10);
  EXPECT_EQ(engine_->stats().variant_switches - switches, 10u);
  EXPECT_EQ(engine_->stats().replays - replays, 30u);
  expect_equal_results();
}

TEST_F(GraphPauseTest, SplitStepsChangeNoResultOnTheAsynchronousStandIn) {
  standin_set_async(1);
  standin_set_timer_progress(1);  // the steps tell the engine of a sync, not the stand-in
  make_engine(200'000, 100'000, 2);
  run_steps(60, 5'000, 1'000'000);
  EXPECT_EQ(engine_->stats().pauses.tail_splits, 1u);
}

TEST_F(GraphPauseTest, TheWorkBeforeAStepsLastGapGoesOutBeforeIt) {
  // 10 us of GPU work a launch, 60 us of host time before the last launch, 20 us the tail's
  // mark: the 90 us recorded before that gap went out when it began, where the sync at the end
  // would have found it waiting (mlp-dropout-item, session 43). Without the tail it waits: the
  // step's 60 us gap is no pause (under 200 us).
  for (const uint64_t tail_ns : {uint64_t(20'000), uint64_t(0)}) {
    SCOPED_TRACE(tail_ns);
    standin_set_kernel_ns(10'000);
    make_engine(200'000, 100'000, 2, tail_ns);
    last_gap_steps(40, 60'000, 0);
    EXPECT_EQ(engine_->stats().pauses.weighing, 0u);
    EXPECT_EQ(engine_->stats().pauses.places, tail_ns ? 1u : 0u);
    const uint64_t cuts = engine_->stats().pause_cuts;
    EXPECT_EQ(last_gap_steps(20, 60'000, 20), tail_ns ? 20 : 0);
    EXPECT_EQ(engine_->stats().pause_cuts - cuts, tail_ns ? 20u : 0u);
    expect_equal_results();
  }
}

TEST_F(GraphPauseTest, AStepsLastGapWithLittleWorkBeforeItCutsNothing) {
  // 1 us a launch: 9 us wait at the last gap, under the tail's 20. Dropped once weighed; and a
  // gap shorter than the mark is no pause at all.
  standin_set_kernel_ns(1'000);
  make_engine(200'000, 100'000, 2, 20'000);
  last_gap_steps(40, 60'000, 0);
  expect_weighed(0, 1);
  standin_set_kernel_ns(10'000);
  make_engine(200'000, 100'000, 2, 20'000);
  EXPECT_EQ(last_gap_steps(40, 15'000, 10), 0);
  EXPECT_EQ(engine_->stats().pauses.places + engine_->stats().pauses.light, 0u);
  expect_equal_results();
}

TEST_F(GraphPauseTest, LastGapsChangeNoResultOnTheAsynchronousStandIn) {
  standin_set_async(1);
  standin_set_timer_progress(1);  // the steps tell the engine of a sync, not the stand-in
  standin_set_kernel_ns(10'000);
  make_engine(200'000, 100'000, 2, 20'000);
  last_gap_steps(60, 60'000, 20);
  EXPECT_EQ(engine_->stats().pauses.places, 1u);
}

TEST_F(GraphPauseTest, NoThresholdNoPauses) {
  make_engine(0);
  EXPECT_LE(run(60, 1'000'000, 40), 40 / 8);
  EXPECT_EQ(engine_->stats().pauses.places, 0u);
  // Nor a segment's last gap, nor a split weighed: the chunks fill (as at 2a13151).
  standin_set_kernel_ns(10'000);
  make_engine(0, 100'000, 2, 20'000);
  EXPECT_EQ(last_gap_steps(60, 60'000, 20), 0);
  EXPECT_EQ(engine_->stats().pauses.places + engine_->stats().pauses.light, 0u);
  EXPECT_EQ(engine_->stats().pauses.tail_splits, 0u);
  expect_equal_results();
}

}  // namespace
}  // namespace pygraph
