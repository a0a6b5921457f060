// Several streams in one graph (stream_fork.h) on the asynchronous stand-in: a step shaped like
// the suite's two-streams workload (PyTorch's wait_stream both ways) replays whole, as one graph
// per chunk with its fork and join, and computes bit for bit what the same work computes
// eagerly; queries and syncs of an event the chunk records see it.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "graph/graph_engine.h"
#include "standin.h"
#include "standin_driver_api.h"
#include "test_kernels.h"

namespace pygraph {
namespace {

constexpr int kN = test::kKernelFloats;

using test::engine_launch;
using test::take;

class GraphStreamsTest : public ::testing::Test {
 protected:
  // first_chunk 32 by default: one chunk per step, the whole step in one graph.
  explicit GraphStreamsTest(uint32_t first_chunk = 32, uint32_t max_sequences = 1024,
                            bool answer_queries = true)
      : options_([first_chunk, max_sequences, answer_queries] {
          EngineOptions o;
          o.first_chunk = first_chunk;
          o.multi_stream = true;
          o.max_sequences = max_sequences;
          o.answer_queries = answer_queries;
          return o;
        }()),
        engine_(&api_, options_) {}

  void SetUp() override {
    standin_set_async(1);
    test::fill_standin_driver_api(&api_);
    take(&launch_, "cuLaunchKernel");
    take(&record_, "cuEventRecord");
    take(&wait_, "cuStreamWaitEvent");
    take(&ctx_sync_, "cuCtxSynchronize");
    take(&event_sync_, "cuEventSynchronize");
    decltype(&cuStreamCreate) create;
    take(&create, "cuStreamCreate");
    for (CUstream* s : {&main_, &side_}) ASSERT_EQ(create(s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    const size_t sizes[2] = {4, 8};
    scale_ = test::standin_kernel(&table_, "scale", &test::scale_kernel, 2, sizes);
    addk_ = test::standin_kernel(&table_, "addk", &test::add_kernel, 2, sizes);
    for (int i = 0; i < kN; ++i)
      y_engine_[i] = y_eager_[i] = z_engine_[i] = z_eager_[i] = float(i) * 0.25f;
  }
  void TearDown() override {
    standin_set_async(0);
    for (CUevent e : scratch_) {
      if (e) {
        EXPECT_EQ(api_.event_destroy(e), CUDA_SUCCESS);
      }
    }
  }

  // A launch through the engine on `engine_buf` and directly on `eager_buf`.
  void both(const FunctionInfo* f, void* scalar, CUstream stream, float* engine_buf = nullptr,
            float* eager_buf = nullptr) {
    CUdeviceptr ye = reinterpret_cast<CUdeviceptr>(engine_buf ? engine_buf : y_engine_);
    CUdeviceptr yr = reinterpret_cast<CUdeviceptr>(eager_buf ? eager_buf : y_eager_);
    void* pe[] = {scalar, &ye};
    void* pr[] = {scalar, &yr};
    ASSERT_EQ(engine_.launch(engine_launch(Op::LaunchKernel, reinterpret_cast<void*>(launch_), f, 1,
                                           32, stream, pe)),
              CUDA_SUCCESS);
    ASSERT_EQ(
        launch_(reinterpret_cast<CUfunction>(f->handle), 1, 1, 1, 32, 1, 1, 0, stream, pr, nullptr),
        CUDA_SUCCESS);
  }
  // `to` waits for `from` (wait_stream): an event recorded on `from`, waited for on `to`, through
  // the engine and directly, each arm with its own events.
  void wait_stream(CUstream to, CUstream from, CUevent engine_event, CUevent eager_event) {
    const EventCall r{
        Op::EventRecord, reinterpret_cast<void*>(record_), false, engine_event, from, 0};
    ASSERT_EQ(engine_.event_op(r), CUDA_SUCCESS);
    const EventCall w{
        Op::StreamWaitEvent, reinterpret_cast<void*>(wait_), false, engine_event, to, 0};
    ASSERT_EQ(engine_.event_op(w), CUDA_SUCCESS);
    ASSERT_EQ(record_(eager_event, from), CUDA_SUCCESS);
    ASSERT_EQ(wait_(to, eager_event, 0), CUDA_SUCCESS);
  }
  CUevent new_event() {
    CUevent e = nullptr;
    EXPECT_EQ(api_.event_create(&e, 0), CUDA_SUCCESS);
    return e;
  }
  // The suite's step: a first layer on main, the side stream waits for it and computes its
  // branch while main waits (strictly ordered here: one buffer), main waits for the side stream
  // and computes the rest; the host reads after a sync of main.
  void step(int n) {
    ASSERT_NO_FATAL_FAILURE(step_work(n));
    ASSERT_EQ(engine_.before_op(Op::StreamSynchronize, main_, false), CUDA_SUCCESS);
    ASSERT_EQ(ctx_sync_(), CUDA_SUCCESS);
    ASSERT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0) << "step " << n;
    engine_.after_op(Op::StreamSynchronize, main_, false, CUDA_SUCCESS);
  }
  // The step's work, without the sync: 10 launches, 2 records, 2 waits.
  void step_work(int n) {
    float a = 0.5f;
    CUevent e1 = new_event(), e2 = new_event(), r1 = new_event(), r2 = new_event();
    for (int i = 0; i < 3; ++i)
      both(i % 2 ? addk_ : scale_, i % 2 ? static_cast<void*>(&n) : &a, main_);
    wait_stream(side_, main_, e1, r1);
    for (int i = 0; i < 4; ++i)
      both(i % 2 ? addk_ : scale_, i % 2 ? static_cast<void*>(&n) : &a, side_);
    wait_stream(main_, side_, e2, r2);
    for (int i = 0; i < 3; ++i)
      both(i % 2 ? scale_ : addk_, i % 2 ? static_cast<void*>(&a) : &n, main_);
    // Events destroyed right after their wait, as PyTorch's temporary events are.
    for (CUevent e : {e1, e2}) {
      ASSERT_EQ(engine_.before_op(Op::EventDestroy, nullptr, false, reinterpret_cast<uint64_t>(e)),
                CUDA_SUCCESS);
      ASSERT_EQ(api_.event_destroy(e), CUDA_SUCCESS);
    }
    for (CUevent e : {r1, r2}) ASSERT_EQ(api_.event_destroy(e), CUDA_SUCCESS);
  }

  // 12 steps that begin with the side stream's own work (its buffer), then the main stream's,
  // wait_stream both ways; a sync after each. Steps 3 to 12 replay whole, one graph each, with
  // the side stream forked and joined and no cut.
  void side_first_steps() {
    float a = 0.5f;
    for (int n = 1; n <= 12; ++n) {
      CUevent e1 = new_event(), e2 = new_event(), r1 = new_event(), r2 = new_event();
      both(scale_, &a, side_, z_engine_, z_eager_);
      both(addk_, &n, side_, z_engine_, z_eager_);
      both(scale_, &a, main_);
      both(addk_, &n, main_);
      wait_stream(side_, main_, e1, r1);
      both(scale_, &a, side_);
      wait_stream(main_, side_, e2, r2);
      both(addk_, &n, main_);
      ASSERT_NO_FATAL_FAILURE(sync_and_compare(n));
      for (CUevent e : {e1, e2, r1, r2}) {
        ASSERT_EQ(
            engine_.before_op(Op::EventDestroy, nullptr, false, reinterpret_cast<uint64_t>(e)),
            CUDA_SUCCESS);
        ASSERT_EQ(api_.event_destroy(e), CUDA_SUCCESS);
      }
    }
    const EngineStats& s = engine_.stats();
    ASSERT_TRUE(engine_.idle());
    EXPECT_EQ(s.flushes_by_cause[static_cast<int>(FlushCause::kStreamChange)], 0u);
    EXPECT_EQ(s.replays, 10u);
    EXPECT_EQ(s.replayed, 10u * 6u);
    EXPECT_EQ(s.side_streams, 10u);
    EXPECT_EQ(s.launches, s.replayed + s.eager_total());
  }

  // NCCL's way around its kernel: one scratch event, recorded on main and waited for by the
  // side stream, then recorded on the side stream and waited for by main. 12 steps of 5
  // launches (`side_kernel` on the side stream), a sync after each; steps 3 to 12 replay.
  // The scratch events are scratch_[0] (the engine's arm) and scratch_[1] (the eager arm),
  // created here unless the test made them.
  void relay_steps(const FunctionInfo* side_kernel) {
    for (CUevent& e : scratch_) {
      if (!e) e = new_event();
    }
    float a = 0.5f;
    for (int n = 1; n <= 12; ++n) {
      both(scale_, &a, main_);
      both(addk_, &n, main_);
      wait_stream(side_, main_, scratch_[0], scratch_[1]);
      both(side_kernel, &n, side_);
      wait_stream(main_, side_, scratch_[0], scratch_[1]);
      both(scale_, &a, main_);
      both(addk_, &n, main_);
      ASSERT_NO_FATAL_FAILURE(sync_and_compare(n));
    }
    const EngineStats& s = engine_.stats();
    ASSERT_TRUE(engine_.idle());
    EXPECT_EQ(s.launches, s.replayed + s.eager_total());
  }

  // Steps 1 to 3 (the step is followed from then on), then step 4's first three launches and
  // its first record, of `e` through the engine and of `r` directly on the eager arm: the
  // record is a node of the pending chunk.
  void record_mid_step(CUevent e, CUevent r) {
    for (int n = 1; n <= 3; ++n) ASSERT_NO_FATAL_FAILURE(step(n));
    float a = 0.5f;
    int n = 4;
    for (int i = 0; i < 3; ++i)
      both(i % 2 ? addk_ : scale_, i % 2 ? static_cast<void*>(&n) : &a, main_);
    const EventCall rec{Op::EventRecord, reinterpret_cast<void*>(record_), false, e, main_, 0};
    ASSERT_EQ(engine_.event_op(rec), CUDA_SUCCESS);
    ASSERT_EQ(record_(r, main_), CUDA_SUCCESS);
  }

  // A context sync through the engine and the driver; both buffers equal in both arms.
  void sync_and_compare(int n) {
    ASSERT_EQ(engine_.before_op(Op::CtxSynchronize, nullptr, false), CUDA_SUCCESS);
    ASSERT_EQ(ctx_sync_(), CUDA_SUCCESS);
    ASSERT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0) << "step " << n;
    ASSERT_EQ(std::memcmp(z_engine_, z_eager_, sizeof z_engine_), 0) << "step " << n;
    engine_.after_op(Op::CtxSynchronize, nullptr, false, CUDA_SUCCESS);
  }

  DriverApi api_;
  FunctionTable table_{&api_};
  EngineOptions options_;
  GraphEngine engine_;
  decltype(&cuLaunchKernel) launch_ = nullptr;
  decltype(&cuEventRecord) record_ = nullptr;
  decltype(&cuStreamWaitEvent) wait_ = nullptr;
  decltype(&cuCtxSynchronize) ctx_sync_ = nullptr;
  decltype(&cuEventSynchronize) event_sync_ = nullptr;
  CUstream main_ = nullptr, side_ = nullptr;
  const FunctionInfo* scale_ = nullptr;
  const FunctionInfo* addk_ = nullptr;
  float y_engine_[kN], y_eager_[kN];
  float z_engine_[kN], z_eager_[kN];  // the side stream's own buffer
  CUevent scratch_[2] = {};           // relay_steps' events
};

TEST_F(GraphStreamsTest, AStepWithASideStreamReplaysWholeAsOneGraph) {
  for (int n = 1; n <= 12; ++n) step(n);
  const EngineStats& s = engine_.stats();
  ASSERT_TRUE(engine_.idle());
  // Steps 3..12 replay: 10 launches per step, one graph each (before: an event record or a
  // launch on the other stream cut the chunk, 3 to 4 launches per replay at most).
  EXPECT_EQ(s.replays, 10u);
  EXPECT_EQ(s.replayed, 10u * 10u);
  EXPECT_EQ(s.events_recorded, 2u * 10u);
  EXPECT_EQ(s.event_waits, 2u * 10u);
  EXPECT_EQ(s.side_streams, 10u);
  EXPECT_EQ(s.flushes_by_cause[static_cast<int>(FlushCause::kStreamChange)], 0u);
  EXPECT_EQ(s.launches, s.replayed + s.eager_total());
  std::printf("launches per replay: %.1f\n", double(s.replayed) / double(s.replays));
}

TEST_F(GraphStreamsTest, OneEventRelayedBetweenTheStreamsReplaysWholeAsOneGraph) {
  // The second record of the step's one event runs after the first through the wait, so the
  // chunk takes both (before, the second record was issued in place after the chunk was
  // submitted: two graphs a step).
  ASSERT_NO_FATAL_FAILURE(relay_steps(addk_));
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.replays, 10u);
  EXPECT_EQ(s.replayed, 10u * 5u);
  EXPECT_EQ(s.rerecords, 10u);
  EXPECT_EQ(s.events_eager, 0u);
}

TEST_F(GraphStreamsTest, AnEventRecordedAgainInAChunkIsRecordedOnceByItsGraph) {
  // The earlier record names a spare event instead: the graph records the program's event
  // once, at its latest record, whatever the driver makes of two record nodes of one event.
  // The program's scratch event: 2 records in each of steps 1 and 2 (eager), then 1 in each
  // replayed step; the eager arm's event 2 in every step.
  ASSERT_NO_FATAL_FAILURE(relay_steps(addk_));
  EXPECT_EQ(engine_.stats().replays, 10u);
  EXPECT_EQ(standin_event_records(scratch_[0]), 2u * 2u + 10u);
  EXPECT_EQ(standin_event_records(scratch_[1]), 2u * 12u);
}

TEST_F(GraphStreamsTest, WithNoSpareEventTheSecondRecordSubmitsTheChunkFirst) {
  // The driver creates no event for the engine (its fork event and spares): each second
  // record is issued where the program made it, after the chunk, and results stay the same.
  // The program's events first: the injection fails every creation after them.
  for (CUevent& e : scratch_) e = new_event();
  standin_inject_failure("cuEventCreate", 1 << 20, CUDA_ERROR_OUT_OF_MEMORY);
  relay_steps(addk_);
  standin_inject_failure("cuEventCreate", 0, CUDA_SUCCESS);
  if (HasFatalFailure()) return;
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.rerecords, 0u);
  EXPECT_GT(s.events_eager, 0u);
}

TEST_F(GraphStreamsTest, AKernelItsPeersWaitForEndsItsChunk) {
  // The same steps with NCCL's kernel on the side stream (as DDP's all-reduce): the chunk goes
  // out as soon as it is recorded, the rest of the step in a chunk of its own. Other ranks wait
  // for it; held in a chunk until the step's end, it would hold them back too.
  const size_t sizes[2] = {4, 8};
  const FunctionInfo* nccl = test::standin_kernel(
      &table_, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", &test::add_kernel, 2, sizes);
  ASSERT_TRUE(nccl->waits_for_peers);
  EXPECT_FALSE(addk_->waits_for_peers);
  ASSERT_NO_FATAL_FAILURE(relay_steps(nccl));
  EXPECT_EQ(engine_.stats().replays, 2u * 10u);  // one graph a step without the rule
  EXPECT_EQ(engine_.stats().replayed, 10u * 5u);
}

TEST_F(GraphStreamsTest, ALoopOfCollectivesKeepsTheRestOfItsStepsInGraphs) {
  // 40 collectives in a row between compute (a loop of all_reduce calls): each ends a chunk of
  // one launch, which goes out eagerly. Counted as cut short, 32 of them in a row stopped the
  // whole sequence's deferral for 1,024 occurrences (found by review: 2 replays in 40 steps);
  // the compute launches around them stay in graphs.
  const size_t sizes[2] = {4, 8};
  const FunctionInfo* nccl = test::standin_kernel(
      &table_, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", &test::add_kernel, 2, sizes);
  const CUevent engine_scratch = new_event(), eager_scratch = new_event();
  float a = 0.5f;
  constexpr int kSteps = 40, kCollectives = 40;
  for (int n = 1; n <= kSteps; ++n) {
    for (int i = 0; i < 4; ++i)
      both(i % 2 ? addk_ : scale_, i % 2 ? static_cast<void*>(&n) : &a, main_);
    for (int c = 0; c < kCollectives; ++c) {
      wait_stream(side_, main_, engine_scratch, eager_scratch);
      both(nccl, &n, side_);
      wait_stream(main_, side_, engine_scratch, eager_scratch);
    }
    both(scale_, &a, main_);
    both(addk_, &n, main_);
    ASSERT_NO_FATAL_FAILURE(sync_and_compare(n));
  }
  const EngineStats& s = engine_.stats();
  ASSERT_TRUE(engine_.idle());
  EXPECT_EQ(s.cut_short, 0u);
  // Steps 3 to 40: the 4 launches before the first collective go out with it, the 2 after the
  // last in a chunk of their own, and the collectives between one by one.
  EXPECT_EQ(s.replays, 2u * (kSteps - 2));
  EXPECT_EQ(s.replayed, 7u * (kSteps - 2));
  // (and some earlier: the collectives' own loop is followed from step 2)
  EXPECT_GE(s.peer_cuts, uint64_t(kCollectives) * (kSteps - 2));
  EXPECT_EQ(s.launches, s.replayed + s.eager_total());
  for (CUevent e : {engine_scratch, eager_scratch}) ASSERT_EQ(api_.event_destroy(e), CUDA_SUCCESS);
}

TEST_F(GraphStreamsTest, AStepThatBeginsOnTheSideStreamReplaysWholeAsOneGraph) {
  // The side stream's first work of the step orders nothing with the main stream (its own
  // buffer): the main stream's launch after it joins the chunk without a wait. Before, it cut
  // the chunk (stream_change), and so did the record on the main stream (the GPU check's
  // streams_loop: 2 to 5.5 launches per replay).
  ASSERT_NO_FATAL_FAILURE(side_first_steps());
  EXPECT_EQ(engine_.stats().legacy_joins, 0u);
}

TEST_F(GraphStreamsTest, TheLegacyStreamJoinsAChunkBegunOnANonBlockingStream) {
  // PyTorch's main stream is the legacy one. A chunk that begins on the side stream (its
  // independent work first) was cut at the main stream's next launch (stream_change): the
  // legacy stream joined nothing. Now it joins when every stream of the chunk is non-blocking,
  // and the graph goes out on it, as a chunk begun there would.
  main_ = nullptr;
  ASSERT_NO_FATAL_FAILURE(side_first_steps());
  EXPECT_EQ(engine_.stats().legacy_joins, 10u);  // one per recorded step (3 to 12)
}

TEST_F(GraphStreamsTest, TheLegacyStreamJoinsNoChunkThatHoldsABlockingStream) {
  // A blocking stream's work is ordered after the legacy stream's earlier work with no event:
  // beside the legacy stream in a graph, nothing would say so. The chunk begun on it is cut.
  decltype(&cuStreamCreate) create;
  take(&create, "cuStreamCreate");
  ASSERT_EQ(create(&side_, 0), CUDA_SUCCESS);
  main_ = nullptr;
  float a = 0.5f;
  for (int n = 1; n <= 6; ++n) {
    both(scale_, &a, side_, z_engine_, z_eager_);
    both(addk_, &n, side_, z_engine_, z_eager_);
    both(scale_, &a, main_);
    both(addk_, &n, main_);
    ASSERT_NO_FATAL_FAILURE(sync_and_compare(n));
  }
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.legacy_joins, 0u);
  EXPECT_GT(s.flushes_by_cause[static_cast<int>(FlushCause::kStreamChange)], 0u);
  EXPECT_EQ(s.launches, s.replayed + s.eager_total());
}

TEST_F(GraphStreamsTest, PyTorchsShapeOnTheLegacyStreamReplaysWholeAsOneGraph) {
  // PyTorch's default stream is the legacy stream; its side streams are non-blocking: they join
  // a chunk on the legacy stream (on the H100, torch's two-stream step kept 5.4 launches per
  // replay while they could not).
  main_ = nullptr;
  for (int n = 1; n <= 12; ++n) step(n);
  const EngineStats& s = engine_.stats();
  ASSERT_TRUE(engine_.idle());
  EXPECT_EQ(s.replays, 10u);
  EXPECT_EQ(s.replayed, 10u * 10u);
  EXPECT_EQ(s.side_streams, 10u);
  EXPECT_EQ(s.graph_failures, 0u);
  EXPECT_EQ(s.launches, s.replayed + s.eager_total());
}

TEST_F(GraphStreamsTest, ABlockingStreamNeverJoinsAChunkOnTheLegacyStream) {
  // Its work is ordered after the legacy stream's earlier work without any event: no edge in a
  // graph would say so. The step is cut where it changes streams, as before.
  decltype(&cuStreamCreate) create;
  take(&create, "cuStreamCreate");
  ASSERT_EQ(create(&side_, 0), CUDA_SUCCESS);
  main_ = nullptr;
  for (int n = 1; n <= 12; ++n) step(n);
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.side_streams, 0u);
  EXPECT_GT(s.replays, 10u);  // several chunks per step
  EXPECT_EQ(s.launches, s.replayed + s.eager_total());
}

TEST_F(GraphStreamsTest, NoStreamJoinsWithoutAWaitOnceAStreamMayWaitForTheHost) {
  // A host function on any stream: the fork of a stream joined without a wait could make a
  // graph on L wait for the host (a host sync of L before the host releases it: a deadlock on a
  // GPU). The side stream's work then cuts the
  // chunk, as before the joins without a wait.
  ASSERT_EQ(engine_.before_op(Op::LaunchHostFunc, side_, false), CUDA_SUCCESS);
  float a = 0.5f;
  for (int n = 1; n <= 6; ++n) {
    both(scale_, &a, side_, z_engine_, z_eager_);
    both(scale_, &a, main_);
    both(addk_, &n, main_);
    ASSERT_NO_FATAL_FAILURE(sync_and_compare(n));
  }
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.side_streams, 0u);
  EXPECT_GT(s.flushes_by_cause[static_cast<int>(FlushCause::kStreamChange)], 0u);
}

TEST_F(GraphStreamsTest, AQueryOrSyncOfAnEventTheChunkRecordsSubmitsItFirst) {
  CUevent e = new_event(), r = new_event();
  ASSERT_NO_FATAL_FAILURE(record_mid_step(e, r));
  ASSERT_FALSE(engine_.idle());  // the record is in the chunk
  ASSERT_EQ(engine_.before_op(Op::EventSynchronize, nullptr, false, reinterpret_cast<uint64_t>(e)),
            CUDA_SUCCESS);
  EXPECT_TRUE(engine_.idle());
  // The event's record went with the graph: its sync runs the work before it.
  ASSERT_EQ(event_sync_(e), CUDA_SUCCESS);
  ASSERT_EQ(event_sync_(r), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0);
}

TEST_F(GraphStreamsTest, AnInterprocessEventsRecordGoesOutWhereTheProgramMadeIt) {
  // An event another process waits for (CU_EVENT_INTERPROCESS, its handle sent once): that
  // process's wait passes through no door of this one, so a record held in the chunk would
  // leave it waiting for nothing (a review found it, session 37). The record goes out in place,
  // after the work it follows.
  for (int n = 1; n <= 3; ++n) step(n);  // the step is followed from now on
  float a = 0.5f;
  int n = 4;
  CUevent e = new_event(), r = new_event();
  engine_.interprocess_event(e);
  for (int i = 0; i < 3; ++i)
    both(i % 2 ? addk_ : scale_, i % 2 ? static_cast<void*>(&n) : &a, main_);
  const EventCall rec{Op::EventRecord, reinterpret_cast<void*>(record_), false, e, main_, 0};
  ASSERT_EQ(engine_.event_op(rec), CUDA_SUCCESS);
  ASSERT_EQ(record_(r, main_), CUDA_SUCCESS);
  EXPECT_TRUE(engine_.idle());
  // The other process waits for the event, straight through the driver; then the eager arm's.
  ASSERT_EQ(event_sync_(e), CUDA_SUCCESS);
  ASSERT_EQ(event_sync_(r), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0);
  // Destroyed, it is forgotten: a new event on its handle is recorded in chunks again.
  ASSERT_EQ(engine_.before_op(Op::EventDestroy, nullptr, false, reinterpret_cast<uint64_t>(e)),
            CUDA_SUCCESS);
  ASSERT_EQ(ctx_sync_(), CUDA_SUCCESS);
  for (int k = 5; k <= 6; ++k) step(k);
  EXPECT_EQ(engine_.stats().events_eager, 1u);
}

TEST_F(GraphStreamsTest, WorkBeforeAnOccurrencesLastEntryIssuedInPlaceGoesOutThere) {
  // A step on the main stream ends in a record on the side stream, which the chunk cannot take
  // (a host function made streams that may wait for the host: no join), so it is issued in
  // place. The step's launches were left pending past the occurrence's end, and a launch that
  // came next on the main stream, followed by nothing, went out before them (found by a
  // review, session 20: the results differed).
  ASSERT_EQ(engine_.before_op(Op::LaunchHostFunc, nullptr, false), CUDA_SUCCESS);
  engine_.after_op(Op::LaunchHostFunc, nullptr, false, CUDA_SUCCESS);
  float a = 0.5f;
  for (int n = 1; n <= 6; ++n) {
    CUevent e = new_event(), r = new_event();
    both(scale_, &a, main_);
    both(addk_, &n, main_);
    both(scale_, &a, main_);
    const EventCall rec{Op::EventRecord, reinterpret_cast<void*>(record_), false, e, side_, 0};
    ASSERT_EQ(engine_.event_op(rec), CUDA_SUCCESS);
    ASSERT_EQ(record_(r, side_), CUDA_SUCCESS);
    EXPECT_TRUE(engine_.idle()) << "step " << n;
    if (n == 6) {
      int k = 100;
      both(addk_, &k, main_);  // another variant of the step: one launch more
    }
    ASSERT_NO_FATAL_FAILURE(sync_and_compare(n));
    ASSERT_EQ(engine_.before_op(Op::EventDestroy, nullptr, false, reinterpret_cast<uint64_t>(e)),
              CUDA_SUCCESS);
    ASSERT_EQ(api_.event_destroy(e), CUDA_SUCCESS);
    ASSERT_EQ(api_.event_destroy(r), CUDA_SUCCESS);
  }
  EXPECT_GT(engine_.stats().replayed, 0u);
}

// Chunks as by default: 2 launches first, then twice as many each time.
class GraphStreamsLoopTest : public GraphStreamsTest {
 protected:
  GraphStreamsLoopTest() : GraphStreamsTest(2) {}
};

// The hooks' way with a query (handlers.h): the engine answers it where the work is deferred,
// else before_op, the driver and after_op. Returns what the program sees.
CUresult query_as_hooked(GraphEngine& engine, const DriverApi& api, Op op, CUstream stream,
                         CUevent event) {
  const uint64_t h = reinterpret_cast<uint64_t>(event);
  if (engine.answers_query(op, stream, false, h)) return CUDA_ERROR_NOT_READY;
  const CUresult flushed = engine.before_op(op, stream, false, h);
  decltype(&cuStreamQuery) stream_query = nullptr;
  take(&stream_query, "cuStreamQuery");
  const CUresult r = op == Op::EventQuery ? api.event_query(event) : stream_query(stream);
  engine.after_op(op, stream, false, r);
  return r == CUDA_SUCCESS ? flushed : r;
}

TEST_F(GraphStreamsLoopTest, TheAllocatorsEventQueryNeitherEndsNorCutsALoopWithoutSyncs) {
  // PyTorch's caching allocator, once a block was used on another stream (record_stream):
  // an event recorded on the main stream where the block is freed, at the step's end, and
  // queried at the next step's first allocation. As a boundary, each query ended the sequence
  // and the next step began again from a first chunk of 2 (the suite's two-streams loop: 4.7
  // launches per replay on the H200). Then the query submitted the chunk that records its
  // event: one graph a step (27 launches a replay on the H200, session 47). Now the record is
  // deferred, so "not ready" is the answer, and chunks grow across steps as in any loop.
  main_ = nullptr;  // PyTorch's default stream: the legacy one
  CUevent freed = nullptr;
  constexpr int kSteps = 40, kWarm = 20;
  uint64_t replays_warm = 0, replayed_warm = 0, answered = 0;
  for (int n = 1; n <= kSteps; ++n) {
    if (n == kWarm + 1) {
      replays_warm = engine_.stats().replays;
      replayed_warm = engine_.stats().replayed;
    }
    if (freed) {
      const uint64_t h = reinterpret_cast<uint64_t>(freed);
      const bool held = !engine_.idle();
      const CUresult q = query_as_hooked(engine_, api_, Op::EventQuery, nullptr, freed);
      ASSERT_TRUE(q == CUDA_SUCCESS || q == CUDA_ERROR_NOT_READY) << q;
      if (held && q == CUDA_ERROR_NOT_READY) {
        EXPECT_FALSE(engine_.idle()) << "step " << n;  // its record stays deferred
        ++answered;
      }
      ASSERT_EQ(engine_.before_op(Op::EventDestroy, nullptr, false, h), CUDA_SUCCESS);
      ASSERT_EQ(api_.event_destroy(freed), CUDA_SUCCESS);
    }
    ASSERT_NO_FATAL_FAILURE(step_work(n));
    freed = new_event();
    const EventCall rec{Op::EventRecord, reinterpret_cast<void*>(record_), false, freed, main_, 0};
    ASSERT_EQ(engine_.event_op(rec), CUDA_SUCCESS);
  }
  ASSERT_NO_FATAL_FAILURE(sync_and_compare(kSteps));  // submits the last chunk, then compares
  const EngineStats& s = engine_.stats();
  const uint64_t replays = s.replays - replays_warm, replayed = s.replayed - replayed_warm;
  EXPECT_GE(replayed, 10u * (kSteps - kWarm - 1));
  // Chunks of several steps (10 launches a step): fewer replays than steps.
  EXPECT_LT(replays, uint64_t(kSteps - kWarm) / 2);
  EXPECT_GE(double(replayed) / double(replays), 20.0);
  EXPECT_EQ(s.flushes_by_op[static_cast<int>(Op::EventQuery)], 0u);
  EXPECT_EQ(s.queries_answered, answered);
  EXPECT_GE(answered, uint64_t(kSteps - kWarm));
  std::printf("steady state: %.1f launches per replay\n", double(replayed) / double(replays));
  EXPECT_EQ(s.graph_failures, 0u);
  EXPECT_EQ(s.launches, s.replayed + s.eager_total());
  ASSERT_EQ(api_.event_destroy(freed), CUDA_SUCCESS);
}

TEST_F(GraphStreamsTest, AQueryOfDeferredWorkIsAnsweredNotReadyUntilTheProgramWaitsForIt) {
  // An event recorded in the chunk, and work of the chunk's stream: "not ready" without a
  // submission. Asked again with nothing recorded since, the program waits on the query: the
  // work goes out and the driver answers, until it says done.
  CUevent e = new_event(), r = new_event(), unrecorded = new_event();
  ASSERT_NO_FATAL_FAILURE(record_mid_step(e, r));
  ASSERT_FALSE(engine_.idle());  // the record is in the chunk
  const uint64_t h = reinterpret_cast<uint64_t>(e);
  EXPECT_TRUE(engine_.answers_query(Op::EventQuery, nullptr, false, h));
  EXPECT_TRUE(engine_.answers_query(Op::StreamQuery, main_, false, 0));   // another question
  EXPECT_FALSE(engine_.answers_query(Op::StreamQuery, side_, false, 0));  // not in the chunk
  EXPECT_FALSE(engine_.answers_query(Op::EventQuery, nullptr, false,
                                     reinterpret_cast<uint64_t>(unrecorded)));
  // A stream named from another thread is that thread's to answer for (its default streams
  // are its own): the driver answers, after before_op.
  bool other_thread = true;
  std::thread([&] {
    other_thread = engine_.answers_query(Op::StreamQuery, main_, false, 0);
  }).join();
  EXPECT_FALSE(other_thread);
  EXPECT_FALSE(engine_.idle());
  // The same question twice with nothing recorded between: the program waits on it.
  EXPECT_TRUE(engine_.answers_query(Op::EventQuery, nullptr, false, h));
  EXPECT_FALSE(engine_.answers_query(Op::EventQuery, nullptr, false, h));
  EXPECT_EQ(engine_.stats().queries_answered, 3u);
  CUresult q;
  int spins = 0;
  while ((q = query_as_hooked(engine_, api_, Op::EventQuery, nullptr, e)) == CUDA_ERROR_NOT_READY) {
    ASSERT_LT(++spins, 1000000);
  }
  EXPECT_EQ(q, CUDA_SUCCESS);
  EXPECT_TRUE(engine_.idle());
  EXPECT_EQ(engine_.stats().flushes_by_op[static_cast<int>(Op::EventQuery)], 1u);
  // The event's record went with the graph: the work before it is done.
  ASSERT_EQ(event_sync_(r), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0);
  for (CUevent x : {e, r, unrecorded}) ASSERT_EQ(api_.event_destroy(x), CUDA_SUCCESS);
}

TEST_F(GraphStreamsTest, QueriesInTurnWithNothingRecordedBetweenSubmitAtTheEighth) {
  // A loop that asks about an event and a stream in turn, recording nothing: it waits on them.
  // Each question differs from the one before, so the 8th in a row (GraphEngine's
  // kQueryStreak) submits.
  CUevent e = new_event(), r = new_event();
  ASSERT_NO_FATAL_FAILURE(record_mid_step(e, r));
  const uint64_t h = reinterpret_cast<uint64_t>(e);
  for (int k = 0; k < 8; ++k) {
    EXPECT_TRUE(k % 2 ? engine_.answers_query(Op::StreamQuery, main_, false, 0)
                      : engine_.answers_query(Op::EventQuery, nullptr, false, h))
        << k;
  }
  EXPECT_FALSE(engine_.answers_query(Op::EventQuery, nullptr, false, h));
  ASSERT_EQ(engine_.before_op(Op::EventQuery, nullptr, false, h), CUDA_SUCCESS);
  EXPECT_TRUE(engine_.idle());
  ASSERT_EQ(event_sync_(e), CUDA_SUCCESS);
  ASSERT_EQ(event_sync_(r), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0);
  for (CUevent x : {e, r}) ASSERT_EQ(api_.event_destroy(x), CUDA_SUCCESS);
}

// answer_queries off (the default): a query of deferred work is before_op's, which submits it.
class GraphStreamsQueriesSubmitTest : public GraphStreamsTest {
 protected:
  GraphStreamsQueriesSubmitTest() : GraphStreamsTest(32, 1024, false) {}
};

TEST_F(GraphStreamsQueriesSubmitTest, WithoutTheOptionAQueryOfDeferredWorkSubmitsIt) {
  CUevent e = new_event(), r = new_event();
  ASSERT_NO_FATAL_FAILURE(record_mid_step(e, r));
  ASSERT_FALSE(engine_.idle());
  const uint64_t h = reinterpret_cast<uint64_t>(e);
  EXPECT_FALSE(engine_.answers_query(Op::EventQuery, nullptr, false, h));
  EXPECT_FALSE(engine_.answers_query(Op::StreamQuery, main_, false, 0));
  ASSERT_EQ(engine_.before_op(Op::EventQuery, nullptr, false, h), CUDA_SUCCESS);
  EXPECT_TRUE(engine_.idle());
  EXPECT_EQ(engine_.stats().queries_answered, 0u);
  ASSERT_EQ(event_sync_(e), CUDA_SUCCESS);  // the record went with the graph
  ASSERT_EQ(event_sync_(r), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0);
  for (CUevent x : {e, r}) ASSERT_EQ(api_.event_destroy(x), CUDA_SUCCESS);
}

// A detector that keeps 8 sequences.
class GraphStreamsSmallTableTest : public GraphStreamsTest {
 protected:
  GraphStreamsSmallTableTest() : GraphStreamsTest(32, 8) {}
};

TEST_F(GraphStreamsSmallTableTest, ForgottenSequencesLeaveTheEventGraphListWhenNoEventIsDestroyed) {
  // Steps of 60 shapes (another number of launches on the side stream each), wait_stream both
  // ways with four events made once and reused, as NCCL does: no event is ever destroyed, so
  // park_destroyed never prunes the list of sequences with event graphs. Forgotten plans leave
  // it themselves (a review found it growing by one sequence for good per shape).
  CUevent e1 = new_event(), e2 = new_event(), r1 = new_event(), r2 = new_event();
  float a = 0.5f;
  for (int shape = 0; shape < 60; ++shape) {
    for (int n = 0; n < 4; ++n) {
      both(scale_, &a, main_);
      wait_stream(side_, main_, e1, r1);
      for (int i = 0; i <= shape; ++i)
        both(i % 2 ? addk_ : scale_, i % 2 ? static_cast<void*>(&n) : &a, side_);
      wait_stream(main_, side_, e2, r2);
      both(addk_, &n, main_);
      ASSERT_NO_FATAL_FAILURE(sync_and_compare(shape * 4 + n));
    }
  }
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.sequences_followed, 60u);
  EXPECT_GE(s.sequences_forgotten, 50u);
  EXPECT_LE(engine_.plans(), 9u);
  EXPECT_GE(engine_.event_graph_plans(), 1u);  // graphs that record events were built
  EXPECT_LE(engine_.event_graph_plans(), engine_.plans());
  EXPECT_EQ(s.graph_failures, 0u);
  for (CUevent e : {e1, e2, r1, r2}) {
    ASSERT_EQ(engine_.before_op(Op::EventDestroy, nullptr, false, reinterpret_cast<uint64_t>(e)),
              CUDA_SUCCESS);
    ASSERT_EQ(api_.event_destroy(e), CUDA_SUCCESS);
  }
}

}  // namespace
}  // namespace pygraph
