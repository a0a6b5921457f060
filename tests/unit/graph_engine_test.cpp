// The graph-mode engine on the driver stand-in: a training-shaped loop run through the engine
// computes bit for bit what the same launches compute eagerly, after every step, while the
// steady-state steps run as patched graph replays; mismatches, flushes and graph failures fall
// back to eager launches in order.
#include "graph/graph_engine.h"

#include <gtest/gtest.h>

#include <cstring>

#include "standin.h"
#include "standin_driver_api.h"

namespace pygraph {
namespace {

constexpr int kN = 32;

void scale(const unsigned*, const unsigned*, void** p) {  // y = y * a + 1
  float a = *static_cast<float*>(p[0]);
  auto* y = reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(p[1]));
  for (int i = 0; i < kN; ++i) y[i] = y[i] * a + 1.0f;
}
void addk(const unsigned* g, const unsigned*, void** p) {  // y += step * (i % grid + 1)
  int step = *static_cast<int*>(p[0]);
  auto* y = reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(p[1]));
  for (int i = 0; i < kN; ++i) y[i] += float(step * int(i % g[0] + 1));
}

using test::engine_launch;
using test::take;

// The exact counts below assume chunks of 8, 16, ... launches (the default first chunk is 2).
EngineOptions chunks_from_8() {
  EngineOptions o;
  o.first_chunk = 8;
  return o;
}

// The launch attribute that allows (or, `allowed` false, names but does not allow) programmatic
// stream serialization.
CUlaunchAttribute programmatic_attr(bool allowed = true) {
  CUlaunchAttribute a{};
  a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  a.value.programmaticStreamSerializationAllowed = allowed;
  return a;
}

class GraphEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::fill_standin_driver_api(&api_);
    take(&launch_, "cuLaunchKernel");
    take(&launch_ex_, "cuLaunchKernelEx");
    const size_t sizes[2] = {4, 8};
    scale_ = test::standin_kernel(&table_, "scale", &scale, 2, sizes);
    addk_ = test::standin_kernel(&table_, "addk", &addk, 2, sizes);
    for (int i = 0; i < kN; ++i) y_engine_[i] = y_eager_[i] = float(i) * 0.25f;
    execs_before_ = standin_graph_execs_live();  // other tests' engines may hold some
  }

  // One launch, through the engine (graph arm) and directly (reference arm).
  void both(const FunctionInfo* f, void* scalar, unsigned grid = 1, CUstream stream = nullptr,
            const CUlaunchAttribute* attrs = nullptr, unsigned nattrs = 0) {
    CUdeviceptr ye = reinterpret_cast<CUdeviceptr>(y_engine_);
    CUdeviceptr yr = reinterpret_cast<CUdeviceptr>(y_eager_);
    void* pe[] = {scalar, &ye};
    void* pr[] = {scalar, &yr};
    const bool ex = attrs != nullptr;
    const EngineLaunch l =
        ex ? engine_launch(Op::LaunchKernelEx, reinterpret_cast<void*>(launch_ex_), f, grid, 32,
                           stream, pe, attrs, nattrs)
           : engine_launch(Op::LaunchKernel, reinterpret_cast<void*>(launch_), f, grid, 32, stream,
                           pe);
    ASSERT_EQ(engine_.launch(l), CUDA_SUCCESS);
    ASSERT_EQ(launch_(reinterpret_cast<CUfunction>(f->handle), grid, 1, 1, 32, 1, 1, 0, stream, pr,
                      nullptr),
              CUDA_SUCCESS);
  }

  // The host reads after a sync of `stream`: flush what it observes, compare, end the segment.
  void host_read(const char* when, CUstream stream = nullptr) {
    ASSERT_EQ(engine_.before_op(Op::StreamSynchronize, stream, false), CUDA_SUCCESS);
    ASSERT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0) << when;
    engine_.after_op(Op::StreamSynchronize, stream, false, CUDA_SUCCESS);
  }

  // Launch `i` of a 40-launch step with no period inside (kernel and block by position),
  // through engine `e` and directly.
  void step_launch(GraphEngine& e, int i) {
    float a = 0.5f;
    int step = i;
    const FunctionInfo* f = i % 3 ? scale_ : addk_;
    both_on(e, f, f == scale_ ? static_cast<void*>(&a) : &step, 32 + i % 5);
  }
  // One launch of `f` with `block` threads through engine `e` and directly.
  void both_on(GraphEngine& e, const FunctionInfo* f, void* scalar, unsigned block) {
    CUdeviceptr ye = reinterpret_cast<CUdeviceptr>(y_engine_);
    CUdeviceptr yr = reinterpret_cast<CUdeviceptr>(y_eager_);
    void* pe[] = {scalar, &ye};
    void* pr[] = {scalar, &yr};
    const EngineLaunch l =
        engine_launch(Op::LaunchKernel, reinterpret_cast<void*>(launch_), f, 1, block, nullptr, pe);
    ASSERT_EQ(e.launch(l), CUDA_SUCCESS);
    ASSERT_EQ(launch_(l.function, 1, 1, 1, block, 1, 1, 0, nullptr, pr, nullptr), CUDA_SUCCESS);
  }
  // The host reads after a sync, with engine `e`.
  void read_on(GraphEngine& e, int n) {
    ASSERT_EQ(e.before_op(Op::CtxSynchronize, nullptr, false), CUDA_SUCCESS);
    ASSERT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0) << "step " << n;
    e.after_op(Op::CtxSynchronize, nullptr, false, CUDA_SUCCESS);
  }

  // A training step: 20 launches on `stream`, the step number as an argument of some, then the
  // host reads the result, as `loss.item()` does.
  void step(int n, int odd_position = -1, CUstream stream = nullptr) {
    float a = 0.5f;
    for (int i = 0; i < 20; ++i) {
      if (i == odd_position) {
        both(scale_, &a, 1, stream);  // another kernel where addk belongs
      } else {
        step_launch(n, i, stream);
      }
    }
    host_read(("after step " + std::to_string(n)).c_str(), stream);
  }
  // Launch i of step n: scale and addk alternate.
  void step_launch(int n, int i, CUstream stream = nullptr) {
    float a = 0.5f;
    if (i % 2) {
      both(addk_, &n, 1, stream);
    } else {
      both(scale_, &a, 1, stream);
    }
  }

  CUstream new_stream() {
    decltype(&cuStreamCreate) create;
    take(&create, "cuStreamCreate");
    CUstream s = nullptr;
    EXPECT_EQ(create(&s, 0), CUDA_SUCCESS);
    return s;
  }

  // Launches of the occurrences of sequences a graph failure disabled, as started.
  uint64_t disabled_launches() const {
    uint64_t n = 0;
    for (const SequenceStat& q : engine_.sequence_stats(100)) {
      if (q.source == "disabled") n += q.launches;
    }
    return n;
  }

  // Every launch either ran in a graph or eagerly for one counted reason.
  void expect_all_accounted() {
    ASSERT_TRUE(engine_.idle());
    const EngineStats& s = engine_.stats();
    EXPECT_EQ(s.launches, s.replayed + s.eager_total());
  }

  DriverApi api_;
  FunctionTable table_{&api_};
  GraphEngine engine_{&api_, chunks_from_8()};
  long long execs_before_ = 0;
  decltype(&cuLaunchKernel) launch_ = nullptr;
  decltype(&cuLaunchKernelEx) launch_ex_ = nullptr;
  const FunctionInfo* scale_ = nullptr;
  const FunctionInfo* addk_ = nullptr;
  float y_engine_[kN], y_eager_[kN];
};

TEST_F(GraphEngineTest, SteadyStateStepsReplayAsPatchedGraphs) {
  // Steps 1 and 2 find the sequence (meanwhile the loop of alternating kernels inside them is
  // followed as a period: some of their launches replay too).
  for (int n = 1; n <= 2; ++n) step(n);
  const EngineStats before = engine_.stats();
  const auto graphs_before = standin_graph_launches();
  EXPECT_LT(before.replayed, 40u);
  for (int n = 3; n <= 10; ++n) step(n);
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.launches, 200u);
  // Steps 3..10 replay the step in two chunks (8 + 12 launches).
  EXPECT_EQ(s.replayed - before.replayed, 160u);
  EXPECT_EQ(s.graphs_built - before.graphs_built, 2u);
  EXPECT_EQ(s.replays - before.replays, 16u);
  EXPECT_EQ(standin_graph_launches() - graphs_before, 16u);
  // The step argument changes every step: its 10 nodes are patched in every replay but the first.
  EXPECT_EQ(s.patched_nodes - before.patched_nodes, 7u * 10u);
  EXPECT_EQ(s.mismatches, before.mismatches);
  EXPECT_EQ(s.graph_failures, 0u);
  EXPECT_EQ(s.eager_total(), before.eager_total());
  expect_all_accounted();
}

TEST_F(GraphEngineTest, StallCheckSubmitsWorkNothingFollowsAndSaysWhetherAnyWasRecorded) {
  // The watchdog's check (stall_watchdog.cpp) backs off while it finds nothing recorded.
  uint64_t mark = ~uint64_t(0);
  EXPECT_FALSE(engine_.flush_if_stalled(&mark));  // nothing recorded yet
  for (int n = 1; n <= 3; ++n) step(n);           // found, then replayed: nothing left after
  EXPECT_FALSE(engine_.flush_if_stalled(&mark));
  for (int i = 0; i < 4; ++i) step_launch(4, i);  // step 4 is under way: its first chunk waits
  ASSERT_FALSE(engine_.idle());
  const uint64_t stalls = engine_.stats().flushes_by_cause[static_cast<int>(FlushCause::kStall)];
  EXPECT_TRUE(engine_.flush_if_stalled(&mark));  // recorded since the last check: no flush yet
  EXPECT_FALSE(engine_.idle());
  EXPECT_TRUE(engine_.flush_if_stalled(&mark));  // nothing new since: it goes out
  EXPECT_TRUE(engine_.idle());
  EXPECT_EQ(engine_.stats().flushes_by_cause[static_cast<int>(FlushCause::kStall)], stalls + 1);
  EXPECT_FALSE(engine_.flush_if_stalled(&mark));
  for (int i = 4; i < 20; ++i) step_launch(4, i);
  host_read("after step 4");
  expect_all_accounted();
}

TEST_F(GraphEngineTest, MismatchSendsTheRecordedPrefixOutInOrder) {
  for (int n = 1; n <= 2; ++n) step(n);
  const EngineStats before = engine_.stats();
  for (int n = 3; n <= 5; ++n) step(n);
  step(6, /*odd_position=*/13);  // diverges in the second chunk
  for (int n = 7; n <= 9; ++n) step(n);
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.mismatches - before.mismatches, 1u);
  // Steps 3, 4, 5, 7, 8, 9 replay fully; step 6 only its first chunk.
  EXPECT_EQ(s.replayed - before.replayed, 6u * 20u + 8u);
  const int mismatch = static_cast<int>(EagerReason::kMismatch);
  EXPECT_EQ(s.eager[mismatch] - before.eager[mismatch], 5u);  // positions 8..12
  expect_all_accounted();
}

TEST_F(GraphEngineTest, FlushInTheMiddleSubmitsWhatWasRecordedAndFollowingGoesOn) {
  for (int n = 1; n <= 3; ++n) step(n);
  float a = 0.5f;
  int n = 4;
  both(scale_, &a);
  both(addk_, &n);
  both(scale_, &a);
  // An async copy on the same stream: it may read what the three launches wrote.
  ASSERT_EQ(engine_.before_op(Op::MemcpyDtoHAsync, nullptr, false), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0);
  engine_.after_op(Op::MemcpyDtoHAsync, nullptr, false, CUDA_SUCCESS);
  EXPECT_EQ(engine_.stats().flushes_by_op[static_cast<int>(Op::MemcpyDtoHAsync)], 1u);
  const uint64_t replayed = engine_.stats().replayed;
  for (int i = 3; i < 20; ++i) both(i % 2 ? addk_ : scale_, i % 2 ? static_cast<void*>(&n) : &a);
  // The rest of the step still went out as graphs: [3, 19) as one chunk, the last one eagerly.
  EXPECT_EQ(engine_.stats().replayed - replayed, 16u);
  host_read("after the step with a copy");
  for (int m = 5; m <= 7; ++m) step(m);
  expect_all_accounted();
}

TEST_F(GraphEngineTest, OpsOnAnUnrelatedStreamDoNotFlush) {
  CUstream other = reinterpret_cast<CUstream>(0x5000);  // never dereferenced by the engine
  for (int n = 1; n <= 3; ++n) step(n);
  float a = 0.5f;
  both(scale_, &a);
  both(scale_, &a);  // mismatch (addk expected): drained, not replayed
  for (int n = 4; n <= 5; ++n) step(n);
  // Recording on the legacy stream: an event record on another stream must still flush (the
  // legacy stream synchronizes with every blocking stream).
  int n = 6;
  both(scale_, &a);
  both(addk_, &n);
  const uint64_t flushes = engine_.stats().flushes_total();
  ASSERT_EQ(engine_.before_op(Op::EventRecord, other, false), CUDA_SUCCESS);
  EXPECT_EQ(engine_.stats().flushes_total(), flushes + 1);
  EXPECT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0);
  engine_.after_op(Op::EventRecord, other, false, CUDA_SUCCESS);
  // Event sync and query need nothing: recording flushed what the event covers.
  both(scale_, &a);
  both(addk_, &n);
  ASSERT_EQ(engine_.before_op(Op::EventQuery, nullptr, false), CUDA_SUCCESS);
  EXPECT_EQ(engine_.stats().flushes_total(), flushes + 1);
  EXPECT_FALSE(engine_.idle());
  // An allocation neither.
  ASSERT_EQ(engine_.before_op(Op::MemAlloc, nullptr, false), CUDA_SUCCESS);
  EXPECT_FALSE(engine_.idle());
  // A free needs everything.
  ASSERT_EQ(engine_.before_op(Op::MemFree, nullptr, false), CUDA_SUCCESS);
  EXPECT_TRUE(engine_.idle());
  EXPECT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0);
  engine_.after_op(Op::MemFree, nullptr, false, CUDA_SUCCESS);
  expect_all_accounted();
}

TEST_F(GraphEngineTest, GraphFailureFallsBackEagerAndDisablesTheSequence) {
  for (int n = 1; n <= 2; ++n) step(n);
  const EngineStats before = engine_.stats();
  standin_inject_failure("cuGraphInstantiateWithFlags", 1, CUDA_ERROR_OUT_OF_MEMORY);
  step(3);
  const uint64_t disabled = disabled_launches();
  for (int n = 4; n <= 6; ++n) step(n);
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.graph_failures, 1u);
  // The stats say what failed, with the driver's error (2: CUDA_ERROR_OUT_OF_MEMORY).
  EXPECT_EQ(s.last_graph_failure.rfind("cuGraphInstantiate failed (CUresult 2)", 0), 0u)
      << s.last_graph_failure;
  // The step is never followed again: only the loop of alternating kernels inside it, a
  // sequence of its own, still replays (from its sixth launch in step 3; the sync cuts it at the
  // end of each step, and it resumes at the next step's first launch).
  EXPECT_GT(disabled, 0u);
  EXPECT_EQ(disabled_launches(), disabled);
  EXPECT_LE(s.replayed - before.replayed, 14u + 3u * 20u);
  EXPECT_EQ(s.graphs_live, before.graphs_live);
  expect_all_accounted();
}

TEST_F(GraphEngineTest, GraphLaunchFailureFallsBackEager) {
  for (int n = 1; n <= 2; ++n) step(n);
  const EngineStats before = engine_.stats();
  for (int n = 3; n <= 4; ++n) step(n);
  EXPECT_EQ(engine_.stats().replayed - before.replayed, 2u * 20u);
  standin_inject_failure("cuGraphLaunch", 1, CUDA_ERROR_LAUNCH_FAILED);
  step(5);  // results compared after every step
  const uint64_t disabled = disabled_launches();
  for (int n = 6; n <= 7; ++n) step(n);
  EXPECT_EQ(engine_.stats().graph_failures, 1u);
  EXPECT_EQ(engine_.stats().last_graph_failure.rfind("cuGraphLaunch failed (CUresult 719)", 0), 0u)
      << engine_.stats().last_graph_failure;
  // The step is never followed again (only the loop inside it: from its sixth launch in step 5,
  // then resumed at each step's first launch).
  EXPECT_GT(disabled, 0u);
  EXPECT_EQ(disabled_launches(), disabled);
  EXPECT_LE(engine_.stats().replayed - before.replayed, 2u * 20u + 14u + 2u * 20u);
  // The broken graph was destroyed with the others, and counted so: the stats' live graphs are
  // the driver's.
  EXPECT_EQ(engine_.stats().graphs_live, uint64_t(standin_graph_execs_live() - execs_before_));
  expect_all_accounted();
}

TEST_F(GraphEngineTest, ChunksAlwaysCutToOneLaunchStopBeingDeferred) {
  // torch.compile's reduce-overhead shape: one launch (an input copy), then the program's own
  // graph launch, which submits the chunk: a chunk of one launch, sent out eagerly, every
  // iteration. Deferring it only delays it; after 32 such chunks in a row the loop's
  // occurrences go out as they come, for 1,024 occurrences, then 2,048 after the next try.
  for (int n = 0; n < 3000; ++n) {
    both(addk_, &n);
    ASSERT_EQ(engine_.before_op(Op::GraphLaunch, nullptr, false), CUDA_SUCCESS);
    engine_.after_op(Op::GraphLaunch, nullptr, false, CUDA_SUCCESS);
    if (n % 100 == 99) host_read(("after iteration " + std::to_string(n)).c_str());
  }
  const EngineStats& s = engine_.stats();
  // The loop and the 100-launch segment between two reads (a sequence of its own) each stopped
  // being deferred. A streak reached inside an occurrence stops the next occurrences only: the
  // rest of this one is still deferred and cut short, and counts again after 32 more (the
  // loop, from its 33rd launch to the end of its unrolled period of 128: twice; the segment's
  // 100 launches: three times). No place of either turns lone (a loop's places are those of its
  // unrolled period: chunk_policy.h).
  EXPECT_GE(s.cut_short, 2u);
  EXPECT_LE(s.cut_short, 5u);
  EXPECT_EQ(s.replays, 0u);
  // Deferred: the tries, not the 3,000: the loop's launches from its 34th to the first read (67),
  // and one whole occurrence of the segment (100).
  EXPECT_LE(s.recorded, 67u + 100u);
  // Eager: the launches before the one kernel's run is a loop (sequence_detector.h: 32 of
  // them after the first), then all for short chunks.
  EXPECT_EQ(s.eager[static_cast<int>(EagerReason::kNotRepeating)], 33u);
  EXPECT_EQ(s.eager[static_cast<int>(EagerReason::kShortChunk)], 2967u);
  expect_all_accounted();
}

TEST_F(GraphEngineTest, WithOneLaunchGraphsAChunkOfOneLaunchIsReplayedAsAGraph) {
  // The shape above with one_launch_graphs: each chunk of one launch, cut by the program's graph
  // launch, is a graph of one node, its argument (the iteration) patched at every replay.
  EngineOptions o = chunks_from_8();
  o.one_launch_graphs = true;
  GraphEngine e(&api_, o);
  for (int n = 0; n < 3000; ++n) {
    both_on(e, addk_, &n, 32);
    ASSERT_EQ(e.before_op(Op::GraphLaunch, nullptr, false), CUDA_SUCCESS);
    e.after_op(Op::GraphLaunch, nullptr, false, CUDA_SUCCESS);
    if (n % 100 == 99) read_on(e, n);
  }
  ASSERT_TRUE(e.idle());
  const EngineStats& s = e.stats();
  EXPECT_EQ(s.cut_short, 0u);
  EXPECT_EQ(s.eager[static_cast<int>(EagerReason::kShortChunk)], 0u);
  // All but the launches before the run is a loop went out as graphs of one node.
  EXPECT_EQ(s.eager[static_cast<int>(EagerReason::kNotRepeating)], 33u);
  EXPECT_EQ(s.replays, 2967u);
  EXPECT_EQ(s.replayed, s.replays);
  EXPECT_EQ(s.launches, s.replayed + s.eager_total());
  // The iteration changes at every launch: every replay but a graph's first patches its node.
  EXPECT_EQ(s.patched_nodes + s.graphs_built, s.replays);
}

TEST_F(GraphEngineTest, PatchFailureMidReplayStillComputesTheSame) {
  for (int n = 1; n <= 4; ++n) step(n);
  standin_inject_failure("cuGraphExecKernelNodeSetParams", 1, CUDA_ERROR_INVALID_VALUE);
  for (int n = 5; n <= 7; ++n) step(n);
  EXPECT_EQ(engine_.stats().graph_failures, 1u);
  EXPECT_EQ(engine_.stats().last_graph_failure.rfind(
                "cuGraphExec*NodeSetParams failed (CUresult 1) at a kernel", 0),
            0u)
      << engine_.stats().last_graph_failure;
  expect_all_accounted();
}

TEST_F(GraphEngineTest, LaunchesWithoutAKnownLayoutAreNeverRecorded) {
  FunctionInfo opaque = *scale_;
  opaque.params_known = false;
  for (int n = 1; n <= 6; ++n) {
    float a = 0.5f;
    for (int i = 0; i < 4; ++i) both(&opaque, &a);
    host_read("opaque");
  }
  EXPECT_EQ(engine_.stats().recorded, 0u);
  EXPECT_EQ(engine_.stats().eager[static_cast<int>(EagerReason::kUnknownLayout)], 24u);
  expect_all_accounted();
}

TEST_F(GraphEngineTest, NodeAttributesGoIntoTheGraphAndOthersStayEager) {
  CUlaunchAttribute attrs[2] = {};
  attrs[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attrs[0].value.clusterDim.x = 1;
  attrs[0].value.clusterDim.y = 1;
  attrs[0].value.clusterDim.z = 1;
  attrs[1] = programmatic_attr();  // dropped: full stream order
  const auto node_attrs = standin_node_attributes();
  float a = 0.5f;
  const bool add[10] = {false, true, true, false, true, false, false, false, true, true};
  for (int n = 1; n <= 5; ++n) {
    for (int i = 0; i < 10; ++i)
      both(add[i] ? addk_ : scale_, add[i] ? static_cast<void*>(&n) : &a, 1, nullptr, attrs, 2);
    host_read("with attributes");
  }
  EXPECT_EQ(engine_.stats().replayed, 30u);
  // Built once: 2 chunks (8 + 2 nodes), one cluster attribute each, none for serialization.
  EXPECT_EQ(standin_node_attributes() - node_attrs, 10u);
  EXPECT_EQ(engine_.stats().programmatic_allowed, 10u);  // their nodes dropped it: counted

  CUlaunchAttribute event{};
  event.id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;  // no node can record it
  for (int n = 1; n <= 4; ++n) {
    for (int i = 0; i < 4; ++i) both(scale_, &a, 1, nullptr, &event, 1);
    host_read("with an event attribute");
  }
  EXPECT_EQ(engine_.stats().eager[static_cast<int>(EagerReason::kAttributes)], 16u);
  expect_all_accounted();
}

TEST_F(GraphEngineTest, WhetherALaunchAllowsProgrammaticSerializationIsNoPartOfItsShape) {
  // Its node drops the attribute (full stream order, launch_attributes.h), so a launch that
  // allows it and one that does not replay the same graph.
  GraphEngine e(&api_, chunks_from_8());
  const CUlaunchAttribute pdl = programmatic_attr();
  const CUlaunchAttribute off = programmatic_attr(false);  // present, not allowed
  // One launch through `e` with `attr` (if any) and directly.
  auto launch = [&](const FunctionInfo* f, void* scalar, unsigned block,
                    const CUlaunchAttribute* attr) {
    CUdeviceptr ye = reinterpret_cast<CUdeviceptr>(y_engine_);
    CUdeviceptr yr = reinterpret_cast<CUdeviceptr>(y_eager_);
    void* pe[] = {scalar, &ye};
    void* pr[] = {scalar, &yr};
    ASSERT_EQ(e.launch(engine_launch(Op::LaunchKernelEx, reinterpret_cast<void*>(launch_ex_), f, 1,
                                     block, nullptr, pe, attr, attr ? 1 : 0)),
              CUDA_SUCCESS);
    ASSERT_EQ(launch_(reinterpret_cast<CUfunction>(f->handle), 1, 1, 1, block, 1, 1, 0, nullptr, pr,
                      nullptr),
              CUDA_SUCCESS);
  };
  // A step of 10: positions 1, 2, 5, 7 and 9 allow it, 3 has the attribute turned off.
  // `flip`: position 5 does not allow it in this step.
  auto step = [&](int n, bool flip) {
    float a = 0.5f;
    for (int i = 0; i < 10; ++i) {
      const bool allows = (i == 1 || i == 2 || i == 5 || i == 7 || i == 9) && !(flip && i == 5);
      // Kernel and block by position: no period inside the step.
      launch(i % 2 ? addk_ : scale_, i % 2 ? static_cast<void*>(&n) : &a, 32 + i % 7,
             allows ? &pdl : (i == 3 ? &off : nullptr));
    }
    read_on(e, n);
  };
  for (int n = 1; n <= 5; ++n) step(n, false);
  EXPECT_EQ(e.stats().replayed, 30u);
  // Built once: chunks of 8 and 2; position 3's attribute does not allow it.
  EXPECT_EQ(e.stats().graphs_built, 2u);
  EXPECT_EQ(e.stats().programmatic_allowed, 5u);
  // A step where position 5 does not allow it replays the same graphs.
  step(6, true);
  for (int n = 7; n <= 9; ++n) step(n, false);
  EXPECT_EQ(e.stats().mismatches, 0u);
  EXPECT_EQ(e.stats().replayed, 70u);
  EXPECT_EQ(e.stats().graphs_built, 2u);
  EXPECT_EQ(e.stats().graph_failures, 0u);
  ASSERT_TRUE(e.idle());
  EXPECT_EQ(e.stats().launches, e.stats().replayed + e.stats().eager_total());
}

TEST_F(GraphEngineTest, SequenceStatsKeepThoseWithMostLaunchesFirst) {
  // Three segments a step, of 6, 10 and 8 launches, each of its own blocks (no period inside).
  GraphEngine e(&api_, chunks_from_8());
  float a = 0.5f;
  auto segment = [&](int n, unsigned length, unsigned base) {
    for (unsigned i = 0; i < length; ++i) {
      both_on(e, i % 2 ? addk_ : scale_, i % 2 ? static_cast<void*>(&n) : &a, base + i);
    }
    read_on(e, n);
  };
  for (int n = 1; n <= 6; ++n) {
    segment(n, 6, 64);
    segment(n, 10, 128);
    segment(n, 8, 256);
  }
  const std::vector<SequenceStat> all = e.sequence_stats(8);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_GT(all[0].launches, all[1].launches);
  EXPECT_GT(all[1].launches, all[2].launches);
  const std::vector<SequenceStat> two = e.sequence_stats(2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].launches, all[0].launches);
  EXPECT_EQ(two[1].launches, all[1].launches);
  EXPECT_EQ(two[0].signature, all[0].signature);
  EXPECT_EQ(two[1].signature, all[1].signature);
  EXPECT_TRUE(e.sequence_stats(0).empty());
}

TEST_F(GraphEngineTest, LoopsWithoutSyncsAreFoundAsPeriods) {
  // 40 iterations of a 12-launch body with no host read in between: period detection.
  float a = 0.5f;
  for (int it = 0; it < 40; ++it) {
    for (int i = 0; i < 12; ++i) {
      const bool add = i == 0 || i == 1 || i == 5;  // no shorter period inside the body
      both(add ? addk_ : scale_, add ? static_cast<void*>(&it) : &a);
    }
  }
  host_read("after the loop");
  const EngineStats& s = engine_.stats();
  EXPECT_GE(s.replayed, 35u * 12u) << "steady-state iterations replay as graphs";
  EXPECT_EQ(s.mismatches, 0u);
  expect_all_accounted();
}

TEST_F(GraphEngineTest, SequencesSpanningTwoStreamsSubmitOneChunkPerStreamRun) {
  // Two streams that never meet: a step launches 4 on one, then 4 on the other.
  const CUstream s1 = new_stream(), s2 = new_stream();
  float a = 0.5f;
  for (int n = 1; n <= 6; ++n) {
    for (int i = 0; i < 4; ++i) both(scale_, &a, 1, s1);
    for (int i = 0; i < 4; ++i) both(addk_, &n, 1, s2);
    ASSERT_EQ(engine_.before_op(Op::CtxSynchronize, nullptr, false), CUDA_SUCCESS);
    ASSERT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0) << n;
    engine_.after_op(Op::CtxSynchronize, nullptr, false, CUDA_SUCCESS);
  }
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.replayed, 4u * 8u);
  EXPECT_EQ(s.flushes_by_cause[static_cast<int>(FlushCause::kStreamChange)], 4u);
  expect_all_accounted();
}

TEST_F(GraphEngineTest, TheProgramsOwnCaptureIsLeftAlone) {
  for (int n = 1; n <= 3; ++n) step(n);
  float a = 0.5f;
  int n = 4;
  both(scale_, &a);
  ASSERT_EQ(engine_.before_op(Op::StreamBeginCapture, nullptr, false), CUDA_SUCCESS);
  EXPECT_TRUE(engine_.idle());  // what came before the capture went out first
  engine_.after_op(Op::StreamBeginCapture, nullptr, false, CUDA_SUCCESS);
  EXPECT_TRUE(engine_.capturing());
  const uint64_t recorded = engine_.stats().recorded;
  for (int i = 0; i < 20; ++i) both(i % 2 ? addk_ : scale_, i % 2 ? static_cast<void*>(&n) : &a);
  EXPECT_EQ(engine_.stats().recorded, recorded);
  EXPECT_EQ(engine_.stats().eager[static_cast<int>(EagerReason::kCapture)], 20u);
  engine_.after_op(Op::StreamEndCapture, nullptr, false, CUDA_SUCCESS);
  EXPECT_FALSE(engine_.capturing());
  host_read("after the capture");
  for (int m = 5; m <= 7; ++m) step(m);
  expect_all_accounted();
}

TEST_F(GraphEngineTest, GraphMemoryIsBoundedLeastRecentlyUsedFirst) {
  EngineOptions o;
  o.first_chunk = 8;
  o.max_graphs = 2;
  GraphEngine small{&api_, o};
  float a = 0.5f;
  CUdeviceptr ye = reinterpret_cast<CUdeviceptr>(y_engine_);
  auto run = [&](const FunctionInfo* f, int count, unsigned block = 32) {
    for (int i = 0; i < count; ++i) {
      void* p[] = {&a, &ye};
      const EngineLaunch l = engine_launch(Op::LaunchKernel, reinterpret_cast<void*>(launch_), f, 1,
                                           block, nullptr, p);
      ASSERT_EQ(small.launch(l), CUDA_SUCCESS);
    }
    ASSERT_EQ(small.before_op(Op::CtxSynchronize, nullptr, false), CUDA_SUCCESS);
    small.after_op(Op::CtxSynchronize, nullptr, false, CUDA_SUCCESS);
  };
  // Sequences A (4 launches, one graph), B and C (other shapes): at most 2 graphs live.
  for (int i = 0; i < 4; ++i) run(scale_, 4);
  for (int i = 0; i < 4; ++i) run(addk_, 4);
  EXPECT_EQ(small.stats().graphs_live, 2u);
  for (int i = 0; i < 4; ++i) run(scale_, 6, 64);
  EXPECT_EQ(small.stats().graphs_built, 3u);
  EXPECT_EQ(small.stats().graphs_evicted, 1u);
  EXPECT_EQ(small.stats().graphs_live, 2u);
  for (int i = 0; i < 4; ++i) run(scale_, 4);  // A again: rebuilt, B (least recent) goes
  EXPECT_EQ(small.stats().graphs_built, 4u);
  EXPECT_EQ(small.stats().graphs_evicted, 2u);
}

TEST_F(GraphEngineTest, SequencesTheDetectorForgetsTakeTheirPlansAndGraphsWithThem) {
  // A program whose steps never repeat for long (a shape per batch, an autotuner) makes new
  // sequences for good. The detector keeps 8; the plans and graphs of those it dropped go too.
  EngineOptions o = chunks_from_8();
  o.max_sequences = 8;
  GraphEngine e{&api_, o};
  float a = 0.5f;
  for (unsigned shape = 0; shape < 40; ++shape) {
    for (int rep = 0; rep < 4; ++rep) {
      for (int i = 0; i < 4; ++i) both_on(e, scale_, &a, 32 + shape);
      read_on(e, int(shape));
    }
  }
  const EngineStats& s = e.stats();
  EXPECT_EQ(s.sequences_followed, 40u);
  EXPECT_GT(s.sequences_forgotten, 25u);
  // Plans of the sequences the detector still knows, and the one followed last.
  EXPECT_LE(e.sequence_stats(100).size(), 9u);
  EXPECT_EQ(s.graphs_built, 40u);
  EXPECT_LE(s.graphs_live, 9u);
  EXPECT_EQ(s.graphs_built - s.graphs_evicted, s.graphs_live);
  EXPECT_EQ(standin_graph_execs_live() - execs_before_, (long long)s.graphs_live);
  EXPECT_EQ(s.replayed, 40u * 2 * 4);  // the third and fourth occurrence of each, in graphs
}

TEST_F(GraphEngineTest, ASequenceWhoseCutsVaryStaysWithinTheGraphBound) {
  // One sequence between syncs, cut by a flush at another launch each time: its windows add up
  // without end. Before, the sequence being followed never lost a graph, whatever max_graphs
  // said (only other sequences' were evicted). Its graphs of the last two occurrences stay
  // (its schedule: see the next test); the older ones go first.
  EngineOptions o;
  o.max_graphs = 20;
  GraphEngine small{&api_, o};
  auto occurrence = [&](int n, int cut) {
    for (int i = 0; i < 40; ++i) {
      if (i == cut) {
        ASSERT_EQ(small.before_op(Op::MemcpyDtoHAsync, nullptr, false), CUDA_SUCCESS);
        small.after_op(Op::MemcpyDtoHAsync, nullptr, false, CUDA_SUCCESS);
      }
      ASSERT_NO_FATAL_FAILURE(step_launch(small, i));
      ASSERT_LE(small.stats().graphs_live, o.max_graphs);
    }
    ASSERT_NO_FATAL_FAILURE(read_on(small, n));
  };
  for (int n = 0; n < 60; ++n) ASSERT_NO_FATAL_FAILURE(occurrence(n, (n * 7) % 37 + 1));
  const EngineStats& s = small.stats();
  EXPECT_GT(s.graphs_built, 3u * o.max_graphs);
  EXPECT_GT(s.graphs_evicted, 0u);
  EXPECT_EQ(s.graphs_built - s.graphs_evicted, s.graphs_live);
  EXPECT_GT(s.replayed, s.launches / 2);
}

TEST_F(GraphEngineTest, ASequenceLargerThanTheGraphBoundIsNotRebuiltEveryTime) {
  // Its chunks of every occurrence are its schedule: each would be built again at its next
  // turn. They stay, beyond the bound (as before session 22), and nothing is built again.
  EngineOptions o;
  o.max_graphs = 2;
  GraphEngine small{&api_, o};
  for (int n = 0; n < 10; ++n) {
    for (int i = 0; i < 40; ++i) ASSERT_NO_FATAL_FAILURE(step_launch(small, i));
    ASSERT_NO_FATAL_FAILURE(read_on(small, n));
  }
  const uint64_t built = small.stats().graphs_built, evicted = small.stats().graphs_evicted;
  EXPECT_GT(built, uint64_t(o.max_graphs));
  for (int n = 10; n < 20; ++n) {
    for (int i = 0; i < 40; ++i) ASSERT_NO_FATAL_FAILURE(step_launch(small, i));
    ASSERT_NO_FATAL_FAILURE(read_on(small, n));
  }
  EXPECT_EQ(small.stats().graphs_built, built);
  EXPECT_EQ(small.stats().graphs_evicted, evicted);
  EXPECT_GT(small.stats().graphs_live, uint64_t(o.max_graphs));
}

TEST_F(GraphEngineTest, EachFlushRuleSubmitsExactlyWhatTheOpCanObserve) {
  // Work deferred on stream D; each op on D, on another stream S or on the legacy stream L must
  // submit it (then the host sees the eager arm's values) or leave it deferred, as
  // flush_rules.h says. The work is recorded in context A; a context op really makes A or
  // another context B current (a pop: returns to A or to B beneath it), and what it submits is
  // looked at once it ran.
  const CUstream d = new_stream(), other = new_stream();
  enum Where { kD, kS, kL };
  enum Switch { kNoSwitch, kToA, kToB };
  struct Case {
    Op op;
    Where where;
    bool flushes;
    Switch to = kNoSwitch;
  };
  decltype(&cuCtxSetCurrent) set_current;
  decltype(&cuCtxPushCurrent_v2) push;
  decltype(&cuCtxPopCurrent_v2) pop;
  take(&set_current, "cuCtxSetCurrent");
  take(&push, "cuCtxPushCurrent_v2");
  take(&pop, "cuCtxPopCurrent_v2");
  const CUcontext a = standin_context_create(), b = standin_context_create();
  CUcontext popped;
  ASSERT_EQ(push(a), CUDA_SUCCESS);
  const Case cases[] = {
      {Op::StreamSynchronize, kD, true},
      {Op::StreamSynchronize, kS, false},
      {Op::StreamSynchronize, kL, true},
      {Op::StreamQuery, kD, true},
      {Op::StreamQuery, kS, false},
      {Op::EventRecord, kD, true},
      {Op::EventRecord, kS, false},
      {Op::EventRecord, kL, true},
      {Op::EventSynchronize, kD, false},
      {Op::EventQuery, kD, false},
      {Op::EventElapsedTime, kS, true},  // reads two events, named by no handle here
      {Op::EventCreate, kD, false},
      {Op::StreamWaitEvent, kD, true},
      {Op::StreamWaitEvent, kS, false},
      {Op::LaunchHostFunc, kD, true},
      {Op::LaunchHostFunc, kS, false},
      {Op::GraphLaunch, kD, true},
      // A graph not learnt at its instantiation (as any here) may hold event nodes that wait for
      // or record an event the chunk records: everything goes first, whatever its stream. A
      // plain one on another stream: the e2e ProgramGraphs tests.
      {Op::GraphLaunch, kS, true},
      {Op::MemcpyDtoHAsync, kD, true},
      {Op::MemcpyDtoHAsync, kS, false},
      {Op::MemsetD2D8Async, kD, true},
      {Op::MemcpyDtoH, kS, true},
      {Op::MemFree, kS, true},
      {Op::MemFreeAsync, kS, true},
      {Op::MemUnmap, kS, true},
      {Op::CtxSynchronize, kS, true},
      {Op::StreamWaitValue32, kS, true},
      {Op::WaitExternalSemaphoresAsync, kS, true},
      {Op::StreamDestroy, kD, true},
      {Op::StreamDestroy, kS, false},
      {Op::CtxSetCurrent, kS, true, kToB},
      {Op::CtxSetCurrent, kS, false, kToA},  // compiled PyTorch code, once per iteration
      {Op::CtxPushCurrent, kS, true, kToB},
      {Op::CtxPushCurrent, kS, false, kToA},
      {Op::CtxPopCurrent, kS, true, kToB},
      {Op::CtxPopCurrent, kS, false, kToA},
      {Op::CtxDestroy, kS, true},
      {Op::MemAlloc, kD, false},
      {Op::MemAllocAsync, kD, false},
      {Op::StreamIsCapturing, kD, false},
      {Op::StreamBeginCapture, kS, true},
      // Last: an unload also forgets the graphs that may launch its kernels (graph_unload_test),
      // and for a library those of every function described in another context (here: none
      // current), the step's included.
      {Op::ModuleUnload, kS, true},
      {Op::LibraryUnload, kS, true},
  };
  int n = 0;
  for (const Case& c : cases) {
    const CUstream where = c.where == kD ? d : c.where == kS ? other : nullptr;
    const CUcontext to = c.to == kToB ? b : a;
    if (c.op == Op::CtxPopCurrent) {
      if (c.to == kToB) {
        ASSERT_EQ(set_current(b), CUDA_SUCCESS);  // B under A
      }
      ASSERT_EQ(push(a), CUDA_SUCCESS);
    }
    for (int k = 0; k < 3; ++k) step(++n, -1, d);  // the step is a found sequence, followed
    ++n;
    for (int i = 0; i < 3; ++i) step_launch(n, i, d);
    ASSERT_FALSE(engine_.idle()) << op_info(c.op).name;
    ASSERT_EQ(engine_.before_op(c.op, where, false), CUDA_SUCCESS);
    if (c.to == kNoSwitch) {
      EXPECT_EQ(engine_.idle(), c.flushes) << op_info(c.op).name << " on "
                                           << "DSL"[c.where];
      if (c.flushes) {
        EXPECT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0) << op_info(c.op).name;
      }
    } else if (c.op == Op::CtxSetCurrent) {
      ASSERT_EQ(set_current(to), CUDA_SUCCESS);
    } else if (c.op == Op::CtxPushCurrent) {
      ASSERT_EQ(push(to), CUDA_SUCCESS);
    } else {
      ASSERT_EQ(pop(&popped), CUDA_SUCCESS);
    }
    engine_.after_op(c.op, where, false, CUDA_SUCCESS);
    if (c.to != kNoSwitch) {
      EXPECT_EQ(engine_.idle(), c.flushes) << op_info(c.op).name << " to "
                                           << "-AB"[c.to];
      if (c.flushes) {
        EXPECT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0) << op_info(c.op).name;
      }
    }
    if (c.op == Op::StreamBeginCapture)
      engine_.after_op(Op::StreamEndCapture, where, false, CUDA_SUCCESS);
    host_read(op_info(c.op).name, d);
    // Back to A alone.
    if (c.op == Op::CtxPushCurrent) {
      ASSERT_EQ(pop(&popped), CUDA_SUCCESS);
    } else if (c.to == kToB) {
      ASSERT_EQ(set_current(a), CUDA_SUCCESS);
    }
  }
  ASSERT_EQ(pop(&popped), CUDA_SUCCESS);
  EXPECT_EQ(popped, a);
  expect_all_accounted();
}

TEST_F(GraphEngineTest, ASubmissionErrorNoCallCanReturnGoesToTheNextOp) {
  // A sync of an unrelated stream does not need the recorded work, but as a boundary it ends
  // the sequence and submits the chunk; if that submission fails, the next op reports it.
  const CUstream d = new_stream(), other = new_stream();
  for (int n = 1; n <= 3; ++n) step(n, -1, d);
  for (int i = 0; i < 3; ++i) step_launch(4, i, d);
  standin_inject_failure("cuGraphLaunch", 1, CUDA_ERROR_LAUNCH_FAILED);
  standin_inject_failure("cuLaunchKernel", 1, CUDA_ERROR_LAUNCH_FAILED);
  ASSERT_EQ(engine_.before_op(Op::StreamSynchronize, other, false), CUDA_SUCCESS);
  EXPECT_FALSE(engine_.idle());
  engine_.after_op(Op::StreamSynchronize, other, false, CUDA_SUCCESS);
  EXPECT_TRUE(engine_.idle());
  EXPECT_EQ(engine_.before_op(Op::EventQuery, nullptr, false), CUDA_ERROR_LAUNCH_FAILED);
  EXPECT_EQ(engine_.before_op(Op::EventQuery, nullptr, false), CUDA_SUCCESS);  // reported once
  standin_inject_failure("cuLaunchKernel", 0, CUDA_SUCCESS);
  expect_all_accounted();
}

TEST_F(GraphEngineTest, GridIsPatchedOrPartOfTheShapeAsConfigured) {
  // Steps of 10 launches whose 4th alternates its grid between steps: patched in place by
  // default, two sequence variants with their own graphs when the grid is part of the shape.
  for (bool patch_grid : {true, false}) {
    EngineOptions o = chunks_from_8();
    o.patch_grid = patch_grid;
    GraphEngine e{&api_, o};
    float a = 0.5f;
    CUdeviceptr ye = reinterpret_cast<CUdeviceptr>(y_engine_);
    CUdeviceptr yr = reinterpret_cast<CUdeviceptr>(y_eager_);
    // Kernels in an order with no loop inside the step (a period would be followed on its own).
    const bool add[10] = {false, true, true, false, true, false, false, false, true, true};
    for (int n = 1; n <= 12; ++n) {
      for (int i = 0; i < 10; ++i) {
        const unsigned grid = i == 3 ? 1 + n % 2 : 1;
        const FunctionInfo* f = add[i] ? addk_ : scale_;
        void* scalar = add[i] ? static_cast<void*>(&n) : &a;
        void* pe[] = {scalar, &ye};
        void* pr[] = {scalar, &yr};
        ASSERT_EQ(e.launch(engine_launch(Op::LaunchKernel, reinterpret_cast<void*>(launch_), f,
                                         grid, 32, nullptr, pe)),
                  CUDA_SUCCESS);
        ASSERT_EQ(launch_(reinterpret_cast<CUfunction>(f->handle), grid, 1, 1, 32, 1, 1, 0, nullptr,
                          pr, nullptr),
                  CUDA_SUCCESS);
      }
      ASSERT_EQ(e.before_op(Op::StreamSynchronize, nullptr, false), CUDA_SUCCESS);
      ASSERT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0) << n << patch_grid;
      e.after_op(Op::StreamSynchronize, nullptr, false, CUDA_SUCCESS);
    }
    const EngineStats& s = e.stats();
    EXPECT_EQ(s.launches, s.replayed + s.eager_total());
    if (patch_grid) {
      EXPECT_EQ(s.graphs_built, 2u);  // one sequence: chunks of 8 + 2
      EXPECT_EQ(s.replayed, 10u * 10u);
    } else {
      EXPECT_EQ(s.graphs_built, 4u);  // two variants, seen twice each before they replay
      EXPECT_EQ(s.replayed, 8u * 10u);
    }
  }
}

}  // namespace
}  // namespace pygraph
