// ChunkGraph on the driver stand-in: a replayed chunk computes exactly what the same launches
// compute eagerly, patches only what changed, and fails cleanly.
#include "graph/graph_chunk.h"

#include <gtest/gtest.h>

#include <cstring>

#include "graph/stream_fork.h"
#include "standin.h"
#include "standin_driver_api.h"

namespace pygraph {
namespace {

void axpy(const unsigned*, const unsigned*, void** p) {
  float a = *static_cast<float*>(p[0]);
  auto* x = reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(p[1]));
  auto* y = reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(p[2]));
  int n = *static_cast<int*>(p[3]);
  for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i] * 0.5f;  // order-sensitive on purpose
}

using test::take;

class ChunkGraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::fill_standin_driver_api(&api_);
    take(&launch_, "cuLaunchKernel");
    const size_t sizes[4] = {4, 8, 8, 4};
    info_ = test::standin_kernel(&table_, "axpy", &axpy, 4, sizes);
    ASSERT_NE(info_, nullptr);
    f_ = reinterpret_cast<CUfunction>(info_->handle);
    ASSERT_TRUE(info_->params_known);
    for (int i = 0; i < kN; ++i) x_[i] = float(i % 7) - 3.0f;
  }

  // Packs axpy(a, x, y, n) the way graph mode records it.
  std::vector<uint8_t> pack(float a, float* y) {
    std::vector<uint8_t> b(info_->arg_bytes, 0);
    CUdeviceptr x = reinterpret_cast<CUdeviceptr>(x_), yp = reinterpret_cast<CUdeviceptr>(y);
    int n = kN;
    std::memcpy(b.data() + info_->params[0].offset, &a, 4);
    std::memcpy(b.data() + info_->params[1].offset, &x, 8);
    std::memcpy(b.data() + info_->params[2].offset, &yp, 8);
    std::memcpy(b.data() + info_->params[3].offset, &n, 4);
    return b;
  }

  std::vector<RecordedNode> record(const std::vector<std::vector<uint8_t>>& args,
                                   const FunctionInfo* f) {
    std::vector<RecordedNode> out;
    for (const auto& a : args) out.push_back({f, {1, 1, 1}, {32, 1, 1}, 0, a.data()});
    return out;
  }

  void eager(const std::vector<float>& as, float* y) {
    CUdeviceptr x = reinterpret_cast<CUdeviceptr>(x_), yp = reinterpret_cast<CUdeviceptr>(y);
    int n = kN;
    for (float a : as) {
      void* params[] = {&a, &x, &yp, &n};
      ASSERT_EQ(launch_(f_, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), CUDA_SUCCESS);
    }
  }

  static constexpr int kN = 64;
  DriverApi api_;
  FunctionTable table_{&api_};
  decltype(&cuLaunchKernel) launch_ = nullptr;
  CUfunction f_ = nullptr;
  const FunctionInfo* info_ = nullptr;
  float x_[kN];
};

TEST_F(ChunkGraphTest, ReplayEqualsEagerAndPatchesOnlyWhatChanged) {
  float y_graph[kN], y_eager[kN];
  for (int i = 0; i < kN; ++i) y_graph[i] = y_eager[i] = float(i);
  std::vector<std::vector<uint8_t>> args = {pack(1.0f, y_graph), pack(2.0f, y_graph),
                                            pack(3.0f, y_graph)};
  auto launches = record(args, info_);
  ChunkGraph g;
  ASSERT_EQ(g.build(api_, launches.data(), launches.size(), nullptr), CUDA_SUCCESS);
  EXPECT_TRUE(g.usable());
  EXPECT_EQ(g.size(), 3u);

  uint32_t patched = 99;
  const auto before = standin_graph_launches();
  ASSERT_EQ(g.replay(api_, launches.data(), launches.size(), nullptr, nullptr, &patched),
            CUDA_SUCCESS);
  EXPECT_EQ(patched, 0u);
  EXPECT_EQ(standin_graph_launches(), before + 1);
  eager({1.0f, 2.0f, 3.0f}, y_eager);
  EXPECT_EQ(std::memcmp(y_graph, y_eager, sizeof y_graph), 0);

  // The next iteration: the middle launch has another scalar (an RNG offset, a step count).
  args[1] = pack(5.0f, y_graph);
  launches = record(args, info_);
  ASSERT_EQ(g.replay(api_, launches.data(), launches.size(), nullptr, nullptr, &patched),
            CUDA_SUCCESS);
  EXPECT_EQ(patched, 1u);
  eager({1.0f, 5.0f, 3.0f}, y_eager);
  EXPECT_EQ(std::memcmp(y_graph, y_eager, sizeof y_graph), 0);

  // Same again: nothing to patch.
  ASSERT_EQ(g.replay(api_, launches.data(), launches.size(), nullptr, nullptr, &patched),
            CUDA_SUCCESS);
  EXPECT_EQ(patched, 0u);
  eager({1.0f, 5.0f, 3.0f}, y_eager);
  EXPECT_EQ(std::memcmp(y_graph, y_eager, sizeof y_graph), 0);

  // A new grid is patched like arguments.
  launches[2].grid[0] = 2;
  ASSERT_EQ(g.replay(api_, launches.data(), launches.size(), nullptr, nullptr, &patched),
            CUDA_SUCCESS);
  EXPECT_EQ(patched, 1u);
  g.destroy(api_);
  EXPECT_FALSE(g.usable());
}

TEST_F(ChunkGraphTest, KernelHandlesBecomeNodesToo) {
  decltype(&cuLibraryGetKernel) get_kernel;
  take(&get_kernel, "cuLibraryGetKernel");
  CUkernel k;
  ASSERT_EQ(get_kernel(&k, nullptr, "axpy"), CUDA_SUCCESS);
  bool created;
  const FunctionInfo* kinfo = table_.lookup(reinterpret_cast<uint64_t>(k), &created);
  ASSERT_TRUE(kinfo->is_kernel_handle);
  float y_graph[kN], y_eager[kN];
  for (int i = 0; i < kN; ++i) y_graph[i] = y_eager[i] = 1.0f;
  std::vector<std::vector<uint8_t>> args = {pack(4.0f, y_graph), pack(-1.0f, y_graph)};
  auto launches = record(args, kinfo);
  ChunkGraph g;
  ASSERT_EQ(g.build(api_, launches.data(), launches.size(), nullptr), CUDA_SUCCESS);
  uint32_t patched;
  ASSERT_EQ(g.replay(api_, launches.data(), launches.size(), nullptr, nullptr, &patched),
            CUDA_SUCCESS);
  eager({4.0f, -1.0f}, y_eager);
  EXPECT_EQ(std::memcmp(y_graph, y_eager, sizeof y_graph), 0);
  g.destroy(api_);
}

TEST_F(ChunkGraphTest, FailuresLeaveNothingUsable) {
  float y[kN] = {};
  std::vector<std::vector<uint8_t>> args = {pack(1.0f, y), pack(2.0f, y)};
  auto launches = record(args, info_);
  ChunkGraph g;

  standin_inject_failure("cuGraphInstantiateWithFlags", 1, CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(g.build(api_, launches.data(), launches.size(), nullptr), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_FALSE(g.usable());
  EXPECT_EQ(g.size(), 0u);

  ASSERT_EQ(g.build(api_, launches.data(), launches.size(), nullptr), CUDA_SUCCESS);
  args[0] = pack(7.0f, y);
  launches = record(args, info_);
  uint32_t patched;
  const auto graph_launches = standin_graph_launches();
  standin_inject_failure("cuGraphExecKernelNodeSetParams", 1, CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(g.replay(api_, launches.data(), launches.size(), nullptr, nullptr, &patched),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_FALSE(g.usable());
  EXPECT_EQ(standin_graph_launches(), graph_launches);  // nothing ran
  EXPECT_EQ(g.replay(api_, launches.data(), launches.size(), nullptr, nullptr, &patched),
            CUDA_ERROR_INVALID_VALUE);  // a broken chunk is never launched again

  ASSERT_EQ(g.build(api_, launches.data(), launches.size(), nullptr), CUDA_SUCCESS);
  standin_inject_failure("cuGraphLaunch", 1, CUDA_ERROR_LAUNCH_FAILED);
  EXPECT_EQ(g.replay(api_, launches.data(), launches.size(), nullptr, nullptr, &patched),
            CUDA_ERROR_LAUNCH_FAILED);
  EXPECT_FALSE(g.usable());
  g.destroy(api_);
}

TEST_F(ChunkGraphTest, MissingGraphCallsAreNotSupported) {
  DriverApi none;
  float y[kN] = {};
  std::vector<std::vector<uint8_t>> args = {pack(1.0f, y)};
  auto launches = record(args, info_);
  ChunkGraph g;
  EXPECT_EQ(g.build(none, launches.data(), launches.size(), nullptr), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_FALSE(g.usable());
}

}  // namespace
}  // namespace pygraph
