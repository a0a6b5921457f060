// The graph-mode engine on the driver stand-in: a training-shaped loop run through the engine
// computes bit for bit what the same launches compute eagerly, after every step, while the
// steady-state steps run as patched graph replays; mismatches, flushes and graph failures fall
// back to eager launches in order.
#include "graph_engine.h"

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

using test::take;

class GraphEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::fill_standin_driver_api(&api_);
    take(&launch_, "cuLaunchKernel");
    decltype(&cuModuleGetFunction) get_function;
    take(&get_function, "cuModuleGetFunction");
    const size_t scale_sizes[2] = {4, 8}, addk_sizes[2] = {4, 8};
    standin_register_kernel("scale", &scale, 2, scale_sizes);
    standin_register_kernel("addk", &addk, 2, addk_sizes);
    CUfunction f;
    bool created;
    ASSERT_EQ(get_function(&f, nullptr, "scale"), CUDA_SUCCESS);
    scale_ = table_.lookup(reinterpret_cast<uint64_t>(f), &created);
    ASSERT_EQ(get_function(&f, nullptr, "addk"), CUDA_SUCCESS);
    addk_ = table_.lookup(reinterpret_cast<uint64_t>(f), &created);
    for (int i = 0; i < kN; ++i) y_engine_[i] = y_eager_[i] = float(i) * 0.25f;
  }

  // One launch, through the engine (graph arm) and directly (reference arm).
  void both(const FunctionInfo* f, void* scalar, unsigned grid = 1) {
    CUdeviceptr ye = reinterpret_cast<CUdeviceptr>(y_engine_);
    CUdeviceptr yr = reinterpret_cast<CUdeviceptr>(y_eager_);
    void* pe[] = {scalar, &ye};
    void* pr[] = {scalar, &yr};
    EngineLaunch l{f, launch_, {grid, 1, 1}, {32, 1, 1}, 0, stream_, pe};
    ASSERT_EQ(engine_.launch(l), CUDA_SUCCESS);
    ASSERT_EQ(launch_(reinterpret_cast<CUfunction>(f->handle), grid, 1, 1, 32, 1, 1, 0, stream_, pr,
                      nullptr),
              CUDA_SUCCESS);
  }

  // A training step: 20 launches, the step number as an argument of some, then the host reads
  // the result (flush + read + boundary), as `loss.item()` does.
  void step(int n, int odd_position = -1) {
    float a = 0.5f;
    for (int i = 0; i < 20; ++i) {
      if (i == odd_position) {
        both(scale_, &a);  // another kernel where addk belongs
      } else if (i % 2) {
        both(addk_, &n);
      } else {
        both(scale_, &a);
      }
    }
    ASSERT_EQ(engine_.flush(), CUDA_SUCCESS);
    ASSERT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0) << "after step " << n;
    engine_.boundary(1);
  }

  DriverApi api_;
  FunctionTable table_{&api_};
  GraphEngine engine_{&api_};
  decltype(&cuLaunchKernel) launch_ = nullptr;
  const FunctionInfo* scale_ = nullptr;
  const FunctionInfo* addk_ = nullptr;
  CUstream stream_ = nullptr;
  float y_engine_[kN], y_eager_[kN];
};

TEST_F(GraphEngineTest, SteadyStateStepsReplayAsPatchedGraphs) {
  const auto graphs_before = standin_graph_launches();
  for (int n = 1; n <= 10; ++n) step(n);
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.launches, 200u);
  // Steps 1 and 2 find the sequence; 3..10 replay it in two chunks (8 + 12 launches).
  EXPECT_EQ(s.replayed, 160u);
  EXPECT_EQ(s.graphs_built, 2u);
  EXPECT_EQ(s.replays, 16u);
  EXPECT_EQ(standin_graph_launches() - graphs_before, 16u);
  // The step argument changes every step: its 10 nodes are patched in every replay but the first.
  EXPECT_EQ(s.patched_nodes, 7u * 10u);
  EXPECT_EQ(s.mismatches, 0u);
  EXPECT_EQ(s.graph_failures, 0u);
}

TEST_F(GraphEngineTest, MismatchSendsTheRecordedPrefixOutInOrder) {
  for (int n = 1; n <= 5; ++n) step(n);
  step(6, /*odd_position=*/13);  // diverges in the second chunk
  for (int n = 7; n <= 9; ++n) step(n);
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.mismatches, 1u);
  // Steps 3, 4, 5, 7, 8, 9 replay fully; step 6 only its first chunk.
  EXPECT_EQ(s.replayed, 6u * 20u + 8u);
}

TEST_F(GraphEngineTest, FlushInTheMiddleSubmitsWhatWasRecorded) {
  for (int n = 1; n <= 3; ++n) step(n);
  float a = 0.5f;
  int n = 4;
  both(scale_, &a);
  both(addk_, &n);
  both(scale_, &a);
  ASSERT_EQ(engine_.flush(), CUDA_SUCCESS);  // a memset or an event record comes here
  EXPECT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0);
  EXPECT_EQ(engine_.stats().flushes, 1u);
  for (int i = 3; i < 20; ++i) both(i % 2 ? addk_ : scale_, i % 2 ? static_cast<void*>(&n) : &a);
  ASSERT_EQ(engine_.flush(), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0);
  engine_.boundary(1);
  step(5);
}

TEST_F(GraphEngineTest, GraphFailureFallsBackEagerAndDisablesTheSequence) {
  for (int n = 1; n <= 2; ++n) step(n);
  standin_inject_failure("cuGraphInstantiateWithFlags", 1, CUDA_ERROR_OUT_OF_MEMORY);
  for (int n = 3; n <= 6; ++n) step(n);
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.graph_failures, 1u);
  EXPECT_EQ(s.replayed, 0u);  // never graphed again
}

TEST_F(GraphEngineTest, GraphLaunchFailureFallsBackEager) {
  for (int n = 1; n <= 4; ++n) step(n);
  standin_inject_failure("cuGraphLaunch", 1, CUDA_ERROR_LAUNCH_FAILED);
  for (int n = 5; n <= 7; ++n) step(n);  // results compared after every step
  EXPECT_EQ(engine_.stats().graph_failures, 1u);
  EXPECT_EQ(engine_.stats().replayed, 2u * 20u);  // steps 3 and 4 only
}

TEST_F(GraphEngineTest, PatchFailureMidReplayStillComputesTheSame) {
  for (int n = 1; n <= 4; ++n) step(n);
  standin_inject_failure("cuGraphExecKernelNodeSetParams", 1, CUDA_ERROR_INVALID_VALUE);
  for (int n = 5; n <= 7; ++n) step(n);
  EXPECT_EQ(engine_.stats().graph_failures, 1u);
}

TEST_F(GraphEngineTest, LaunchesWithoutAKnownLayoutAreNeverRecorded) {
  FunctionInfo opaque = *scale_;
  opaque.params_known = false;
  for (int n = 1; n <= 6; ++n) {
    float a = 0.5f;
    for (int i = 0; i < 4; ++i) both(&opaque, &a);
    ASSERT_EQ(engine_.flush(), CUDA_SUCCESS);
    engine_.boundary(1);
  }
  EXPECT_EQ(engine_.stats().recorded, 0u);
  EXPECT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0);
}

}  // namespace
}  // namespace pygraph
