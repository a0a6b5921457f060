// The submission of a chunk (chunk_submit.h) on the driver stand-in, without the engine: a
// replay builds the chunk's graph once, patches what changed and rebuilds it for another shape;
// side streams are forked and joined around it; a graph that fails runs nothing and says why;
// a drain issues every call in order. Each computes what the same calls compute eagerly, and
// counts what it did in the stats.
#include "graph/chunk_submit.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "graph/flush_rules.h"
#include "standin.h"
#include "standin_driver_api.h"
#include "test_kernels.h"

namespace pygraph {
namespace {

constexpr int kN = test::kKernelFloats;

uint64_t no_clock() {
  return 0;
}  // the timer's host time: not asked here

using test::take;

// What the submitter tells an observer.
struct Told : EngineObserver {
  void eager(bool memop, EagerReason) override { ++(memop ? eager_memops : eager_launches); }
  void chunk_built(uint32_t sequence, uint32_t start, uint32_t end, size_t nodes) override {
    built.push_back({sequence, start, end, uint32_t(nodes)});
  }
  void replayed(uint32_t sequence, size_t nodes, uint32_t patched) override {
    replays.push_back({sequence, uint32_t(nodes), patched});
  }
  void patched(uint32_t sequence, NodeKind kind, const FunctionInfo* function) override {
    patches.push_back({sequence, kind, function});
  }
  bool wants_patches() const override { return true; }
  struct Patch {
    uint32_t sequence;
    NodeKind kind;
    const FunctionInfo* function;
    bool operator==(const Patch&) const = default;
  };
  int eager_launches = 0, eager_memops = 0;
  std::vector<std::vector<uint32_t>> built, replays;
  std::vector<Patch> patches;
};

class ChunkSubmitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::fill_standin_driver_api(&api_);
    take(&launch_, "cuLaunchKernel");
    take(&memset_, "cuMemsetD32Async");
    take(&record_, "cuEventRecord");
    take(&wait_, "cuStreamWaitEvent");
    decltype(&cuMemAlloc_v2) alloc;
    take(&alloc, "cuMemAlloc_v2");
    for (CUdeviceptr* p : {&y_, &z_}) ASSERT_EQ(alloc(p, kN * sizeof(float)), CUDA_SUCCESS);
    const size_t sizes[2] = {4, 8};
    scale_ = test::standin_kernel(&table_, "scale", &test::scale_kernel, 2, sizes);
    for (int i = 0; i < kN; ++i) {
      y()[i] = y_want_[i] = float(i) * 0.25f;
      z()[i] = z_want_[i] = float(i) * -0.5f;
    }
    submit_.set_observer(&told_);
  }
  void TearDown() override {
    standin_set_async(0);  // a test that stopped early leaves the next one synchronous
    chunk_.graph.destroy(api_);
    standin_inject_failure("cuGraphInstantiateWithFlags", 0, CUDA_SUCCESS);
  }

  float* y() { return reinterpret_cast<float*>(y_); }
  float* z() { return reinterpret_cast<float*>(z_); }

  // scale(a, buf) on `stream`, recorded as the engine records it; `want` computes it now.
  void add_scale(float a, CUdeviceptr buf, float* want, CUstream stream = nullptr) {
    void* params[] = {&a, &buf};
    Pending& p = pending_.add();
    p.kind = NodeKind::kKernel;
    p.launch = test::engine_launch(Op::LaunchKernel, reinterpret_cast<void*>(launch_), scale_, 1,
                                   32, stream, params);
    p.launch.params = nullptr;  // the program's are gone by the submission
    p.args_offset = static_cast<uint32_t>(arena_.size());
    arena_.resize(arena_.size() + scale_->arg_bytes);
    scale_->pack_args(params, arena_.data() + p.args_offset);
    p.attrs_offset = 0;
    p.packed_size = 0;
    p.src = MemKind::kOther;
    p.position = static_cast<uint32_t>(pending_.size() - 1);
    fork_.node(normalized_stream(stream, false));
    for (int i = 0; i < kN; ++i) want[i] = want[i] * a + 1.0f;
  }
  // The first `count` floats of y set to `v` by a 4-byte memset.
  void add_memset(float v, size_t count) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    Pending& p = pending_.add();
    p.kind = NodeKind::kMemset;
    p.memop = MemopCall{
        Op::MemsetD32Async, reinterpret_cast<void*>(memset_), false, nullptr, y_, 0, count, bits};
    p.src = MemKind::kOther;
    p.position = static_cast<uint32_t>(pending_.size() - 1);
    fork_.node(normalized_stream(nullptr, false));
    for (size_t i = 0; i < count; ++i) y_want_[i] = v;
  }
  void add_event(Op op, CUevent e, CUstream s) {
    Pending& p = pending_.add();
    p.kind = op == Op::StreamWaitEvent ? NodeKind::kEventWait : NodeKind::kEventRecord;
    void* eager = op == Op::StreamWaitEvent ? reinterpret_cast<void*>(wait_)
                                            : reinterpret_cast<void*>(record_);
    p.event = EventCall{op, eager, false, e, s, 0};
    p.position = static_cast<uint32_t>(pending_.size() - 1);
    const uint64_t stream = normalized_stream(s, false);
    if (op == Op::StreamWaitEvent) {
      fork_.wait(stream, reinterpret_cast<uint64_t>(e));
    } else {
      fork_.record(stream, reinterpret_cast<uint64_t>(e));
    }
  }
  ChunkWork work(CUstream stream = nullptr) {
    return ChunkWork{pending_, arena_, attrs_, fork_, stream, nullptr};
  }
  void clear() {
    pending_.clear();
    fork_.clear();
    arena_.clear();
  }
  Replayed replay(bool fresh, CUstream stream = nullptr) {
    submit_.prepare(work(stream));
    return submit_.replay(work(stream), chunk_, fresh, 42);
  }
  bool computed_as_eagerly() {
    return std::memcmp(y(), y_want_, sizeof y_want_) == 0 &&
           std::memcmp(z(), z_want_, sizeof z_want_) == 0;
  }
  CUevent new_event() {
    CUevent e = nullptr;
    EXPECT_EQ(api_.event_create(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    return e;
  }
  CUstream new_stream() {
    decltype(&cuStreamCreate) create;
    take(&create, "cuStreamCreate");
    CUstream s = nullptr;
    EXPECT_EQ(create(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    return s;
  }
  // A chunk on two streams: y scaled on the main stream, which records an event the side
  // stream waits for before it scales z. Returns the main stream.
  CUstream add_two_stream_chunk() {
    CUstream main = new_stream(), side = new_stream();
    CUevent e = new_event();
    add_scale(2.0f, y_, y_want_, main);
    add_event(Op::EventRecord, e, main);
    add_event(Op::StreamWaitEvent, e, side);
    add_scale(-1.0f, z_, z_want_, side);
    return main;
  }

  DriverApi api_;
  FunctionTable table_{&api_};
  EngineStats stats_;
  StagingRing staging_{&api_, 1 << 16};
  OwnEvents events_{&api_};
  ChunkSubmitter submit_{&api_, &stats_, &staging_, &events_};
  Told told_;
  PendingList pending_;
  std::vector<uint8_t> arena_;
  std::vector<CUlaunchAttribute> attrs_;
  StreamFork fork_;
  Chunk chunk_{0, 3, {}, 0};
  decltype(&cuLaunchKernel) launch_ = nullptr;
  decltype(&cuMemsetD32Async) memset_ = nullptr;
  decltype(&cuEventRecord) record_ = nullptr;
  decltype(&cuStreamWaitEvent) wait_ = nullptr;
  const FunctionInfo* scale_ = nullptr;
  CUdeviceptr y_ = 0, z_ = 0;
  float y_want_[kN], z_want_[kN];
};

TEST_F(ChunkSubmitTest, AReplayBuildsTheGraphOnceThenPatchesWhatChanged) {
  add_scale(2.0f, y_, y_want_);
  add_memset(1.5f, 4);
  add_scale(0.5f, y_, y_want_);
  const auto graph_launches = standin_graph_launches();
  Replayed r = replay(true);
  ASSERT_EQ(r.error, CUDA_SUCCESS);
  EXPECT_EQ(r.join_error, CUDA_SUCCESS);
  EXPECT_EQ(r.nodes, 3u);
  EXPECT_EQ(r.patched, 0u);
  EXPECT_TRUE(computed_as_eagerly());
  EXPECT_EQ(standin_graph_launches(), graph_launches + 1);
  EXPECT_EQ(stats_.graphs_built, 1u);
  EXPECT_EQ(stats_.graphs_live, 1u);
  EXPECT_EQ(stats_.replays, 1u);
  EXPECT_EQ(stats_.replayed, 2u);  // launches; the memset is a memop
  EXPECT_EQ(stats_.memops_replayed, 1u);
  EXPECT_EQ(told_.built, (std::vector<std::vector<uint32_t>>{{42, 0, 3, 3}}));

  // The next occurrence: the first launch has another scalar, patched into the same graph.
  clear();
  add_scale(3.0f, y_, y_want_);
  add_memset(1.5f, 4);
  add_scale(0.5f, y_, y_want_);
  r = replay(false);
  ASSERT_EQ(r.error, CUDA_SUCCESS);
  EXPECT_EQ(r.patched, 1u);
  EXPECT_TRUE(computed_as_eagerly());
  EXPECT_EQ(stats_.graphs_built, 1u);
  EXPECT_EQ(stats_.replays, 2u);
  EXPECT_EQ(stats_.patched_nodes, 1u);
  EXPECT_EQ(told_.replays, (std::vector<std::vector<uint32_t>>{{42, 3, 0}, {42, 3, 1}}));
  EXPECT_TRUE(submit_.event_graph_sequences().empty());
  // Each patched node is told with its kind and kernel: the scale above, then a memset's value
  // and the other scale's scalar.
  EXPECT_EQ(told_.patches, (std::vector<Told::Patch>{{42, NodeKind::kKernel, scale_}}));
  clear();
  add_scale(3.0f, y_, y_want_);
  add_memset(2.5f, 4);
  add_scale(0.25f, y_, y_want_);
  r = replay(false);
  ASSERT_EQ(r.error, CUDA_SUCCESS);
  EXPECT_EQ(r.patched, 2u);
  EXPECT_TRUE(computed_as_eagerly());
  EXPECT_EQ(told_.patches, (std::vector<Told::Patch>{{42, NodeKind::kKernel, scale_},
                                                     {42, NodeKind::kMemset, nullptr},
                                                     {42, NodeKind::kKernel, scale_}}));
}

TEST_F(ChunkSubmitTest, AnotherShapeBuildsTheGraphAgain) {
  add_scale(2.0f, y_, y_want_);
  add_scale(0.5f, y_, y_want_);
  ASSERT_EQ(replay(true).error, CUDA_SUCCESS);
  chunk_.shape ^= 1;  // built for another cross-stream shape than this chunk's
  ASSERT_EQ(replay(false).error, CUDA_SUCCESS);
  EXPECT_EQ(stats_.graphs_built, 2u);
  EXPECT_EQ(stats_.graphs_live, 1u);  // the old graph went
  EXPECT_EQ(chunk_.shape, fork_.shape());
  ASSERT_EQ(replay(false).error, CUDA_SUCCESS);
  EXPECT_EQ(stats_.graphs_built, 2u);
  for (int k = 1; k < 3; ++k) {  // three occurrences ran (add_scale counted the first)
    for (int i = 0; i < kN; ++i) y_want_[i] = (y_want_[i] * 2.0f + 1.0f) * 0.5f + 1.0f;
  }
  EXPECT_TRUE(computed_as_eagerly());
}

TEST_F(ChunkSubmitTest, AGraphThatFailsRunsNothingAndSaysWhyThenTheDrainRunsIt) {
  add_scale(2.0f, y_, y_want_);
  add_memset(1.5f, 4);
  add_scale(0.5f, y_, y_want_);
  float before[kN];
  std::memcpy(before, y(), sizeof before);
  standin_inject_failure("cuGraphInstantiateWithFlags", 1, CUDA_ERROR_OUT_OF_MEMORY);
  const Replayed r = replay(true);
  EXPECT_EQ(r.error, CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(std::memcmp(y(), before, sizeof before), 0);  // nothing ran
  EXPECT_EQ(stats_.graph_failures, 1u);
  EXPECT_EQ(stats_.replays, 0u);
  EXPECT_EQ(stats_.graphs_live, 0u);
  EXPECT_NE(stats_.last_graph_failure.find("cuGraphInstantiate"), std::string::npos)
      << stats_.last_graph_failure;
  EXPECT_NE(stats_.last_graph_failure.find("chunk of 3 nodes"), std::string::npos);
  EXPECT_TRUE(told_.replays.empty());

  ASSERT_EQ(submit_.drain(work(), EagerReason::kGraphFailure), CUDA_SUCCESS);
  EXPECT_TRUE(computed_as_eagerly());
  EXPECT_EQ(stats_.eager[static_cast<int>(EagerReason::kGraphFailure)], 2u);
  EXPECT_EQ(stats_.memop_eager[static_cast<int>(EagerReason::kGraphFailure)], 1u);
}

TEST_F(ChunkSubmitTest, ADrainIssuesEveryCallInOrderAndCountsLaunchesAndMemops) {
  CUstream side = new_stream();
  CUevent e = new_event();
  add_scale(2.0f, y_, y_want_);
  add_event(Op::EventRecord, e, nullptr);
  add_event(Op::StreamWaitEvent, e, side);
  add_scale(-1.0f, z_, z_want_, side);
  add_memset(0.25f, 8);
  add_scale(0.5f, y_, y_want_);
  const auto graph_launches = standin_graph_launches();
  ASSERT_EQ(submit_.drain(work(), EagerReason::kMismatch), CUDA_SUCCESS);
  EXPECT_TRUE(computed_as_eagerly());
  EXPECT_EQ(standin_graph_launches(), graph_launches);
  // Event ops are issued, never counted as eager launches.
  EXPECT_EQ(stats_.eager[static_cast<int>(EagerReason::kMismatch)], 3u);
  EXPECT_EQ(stats_.memop_eager[static_cast<int>(EagerReason::kMismatch)], 1u);
  EXPECT_EQ(told_.eager_launches, 3);
  EXPECT_EQ(told_.eager_memops, 1);
  EXPECT_EQ(submit_.drain(ChunkWork{PendingList{}, arena_, attrs_, fork_, nullptr, nullptr},
                          EagerReason::kMismatch),
            CUDA_SUCCESS);  // nothing to send
  EXPECT_EQ(told_.eager_launches, 3);
}

TEST_F(ChunkSubmitTest, ADrainThatFailedIsNotTimed) {
  // A timed drain (a chunk cut short inside a weighing round) whose launch failed: its timing
  // would measure less than the chunk's work, so it is lost and the timer's slot freed.
  const CUcontext ctx = standin_context_create();
  GpuTimer timer(&api_, &no_clock);
  add_scale(2.0f, y_, y_want_);
  add_scale(0.5f, z_, z_want_);
  bool timed = true;
  standin_inject_failure("cuLaunchKernel", 1, CUDA_ERROR_LAUNCH_FAILED);
  EXPECT_EQ(submit_.drain(ChunkWork{pending_, arena_, attrs_, fork_, nullptr, ctx},
                          EagerReason::kShortChunk, &timer, GpuTimer::Tag{1, 1, 0, 2}, &timed),
            CUDA_ERROR_LAUNCH_FAILED);
  EXPECT_FALSE(timed);
  EXPECT_FALSE(timer.busy());
  // The same drain, every launch gone out: timed, its timing in flight.
  ASSERT_EQ(submit_.drain(ChunkWork{pending_, arena_, attrs_, fork_, nullptr, ctx},
                          EagerReason::kShortChunk, &timer, GpuTimer::Tag{1, 2, 0, 2}, &timed),
            CUDA_SUCCESS);
  EXPECT_TRUE(timed);
  EXPECT_TRUE(timer.busy());
}

TEST_F(ChunkSubmitTest, SideStreamsAreForkedBeforeTheGraphAndJoinedAfterIt) {
  const CUstream main = add_two_stream_chunk();
  ASSERT_EQ(fork_.streams(), 2u);
  const Replayed r = replay(true, main);
  ASSERT_EQ(r.error, CUDA_SUCCESS);
  EXPECT_EQ(r.nodes, 3u);  // the wait is an edge
  EXPECT_TRUE(computed_as_eagerly());
  EXPECT_EQ(stats_.side_streams, 1u);  // joined
  EXPECT_EQ(stats_.replayed, 2u);
  // Sequence 42 built it, once however often it is built.
  EXPECT_EQ(submit_.event_graph_sequences(), std::vector<uint32_t>{42});
  ASSERT_EQ(replay(true, main).error, CUDA_SUCCESS);
  EXPECT_EQ(submit_.event_graph_sequences(), std::vector<uint32_t>{42});
  EXPECT_NE(events_.fork(nullptr), nullptr);  // the fork took the engine's event
}

TEST_F(ChunkSubmitTest, NoEventForTheForkIsAGraphFailureBeforeAnythingRan) {
  DriverApi no_events = api_;
  no_events.event_create = nullptr;
  OwnEvents none(&no_events);
  ChunkSubmitter submit(&api_, &stats_, &staging_, &none);
  const CUstream main = add_two_stream_chunk();
  float before[kN];
  std::memcpy(before, y(), sizeof before);
  const auto graph_launches = standin_graph_launches();
  submit.prepare(work(main));
  const Replayed r = submit.replay(work(main), chunk_, true, 7);
  EXPECT_EQ(r.error, CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(standin_graph_launches(), graph_launches);
  EXPECT_EQ(std::memcmp(y(), before, sizeof before), 0);
  EXPECT_EQ(stats_.last_graph_failure.rfind("side-stream fork failed", 0), 0u)
      << stats_.last_graph_failure;
  EXPECT_EQ(stats_.graph_failures, 1u);
  EXPECT_EQ(stats_.graphs_built, 1u);  // built, counted live until the caller destroys it
  EXPECT_EQ(stats_.graphs_live, 1u);
}

// cuStreamWaitEvent as the stand-in runs it, but for its `g_wait_fails`-th call, which fails.
decltype(&cuStreamWaitEvent) g_wait = nullptr;
int g_wait_calls = 0, g_wait_fails = 0;
CUresult wait_that_fails_once(CUstream stream, CUevent event, unsigned int flags) {
  if (++g_wait_calls == g_wait_fails) return CUDA_ERROR_LAUNCH_FAILED;
  return g_wait(stream, event, flags);
}

TEST_F(ChunkSubmitTest, AJoinThatFailsMakesTheHostWaitForTheGraph) {
  // The side stream cannot be made to wait for the graph (its second cuStreamWaitEvent, after
  // the fork's): the host waits instead, so that the side stream's later work still runs after
  // the graph. Asynchronously, the stand-in runs a side stream made later first where nothing
  // orders them, and so computes something else without that wait.
  standin_set_async(1);
  DriverApi api = api_;
  g_wait = api_.stream_wait_event;
  g_wait_calls = 0;
  g_wait_fails = 2;
  api.stream_wait_event = &wait_that_fails_once;
  OwnEvents events(&api);
  ChunkSubmitter submit(&api, &stats_, &staging_, &events);
  const CUstream main = new_stream(), side = new_stream();
  const CUevent e = new_event();
  add_scale(2.0f, y_, y_want_, main);
  add_event(Op::EventRecord, e, main);
  add_event(Op::StreamWaitEvent, e, side);
  add_scale(-1.0f, z_, z_want_, side);
  submit.prepare(work(main));
  const Replayed r = submit.replay(work(main), chunk_, true, 7);
  ASSERT_EQ(r.error, CUDA_SUCCESS);
  EXPECT_EQ(r.join_error, CUDA_SUCCESS);  // the host's wait stood in
  EXPECT_EQ(g_wait_calls, 2);
  EXPECT_EQ(stats_.side_streams, 0u);  // none joined
  // The program's next launch on the side stream reads what the graph wrote.
  float a = 3.0f;
  CUdeviceptr buf = y_;
  void* params[] = {&a, &buf};
  ASSERT_EQ(launch_(reinterpret_cast<CUfunction>(scale_->handle), 1, 1, 1, 32, 1, 1, 0, side,
                    params, nullptr),
            CUDA_SUCCESS);
  for (int i = 0; i < kN; ++i) y_want_[i] = y_want_[i] * a + 1.0f;
  standin_set_async(0);  // runs what is queued
  EXPECT_TRUE(computed_as_eagerly());
}

TEST(GraphWork, LaunchesMemopsAndTheProgramsGraphsCountEventOpsDoNot) {
  PendingList pending;
  for (NodeKind k : {NodeKind::kKernel, NodeKind::kEventRecord, NodeKind::kEventWait,
                     NodeKind::kMemset, NodeKind::kCopy, NodeKind::kChildGraph}) {
    pending.add().kind = k;
  }
  EXPECT_EQ(graph_work(pending), 4u);
  EXPECT_EQ(kernel_work(pending), 1u);
  pending.clear();
  EXPECT_EQ(graph_work(pending), 0u);
  EXPECT_EQ(kernel_work(pending), 0u);
}

}  // namespace
}  // namespace pygraph
