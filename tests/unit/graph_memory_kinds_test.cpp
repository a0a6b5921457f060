// What graph mode takes an address for (memory_kinds.h): the driver's answer is remembered per
// address until the program allocates, registers or frees memory, and memory registered after
// its use as a pageable source is read in stream order from then on (asynchronous stand-in).
#include <gtest/gtest.h>

#include <cstring>

#include "driver/memory_kinds.h"
#include "graph/graph_engine.h"
#include "standin.h"
#include "standin_driver_api.h"
#include "test_kernels.h"

namespace pygraph {
namespace {

constexpr int kN = test::kKernelFloats;

// A driver that answers from a table and counts the questions.
int g_asked = 0;
CUresult g_answer = CUDA_SUCCESS;
unsigned g_type = CU_MEMORYTYPE_DEVICE;
CUresult counting_attribute(void* data, CUpointer_attribute, CUdeviceptr) {
  ++g_asked;
  *static_cast<unsigned*>(data) = g_type;
  return g_answer;
}

TEST(MemoryKinds, AnAnswerIsRememberedUntilMemoryChanges) {
  DriverApi api{};
  api.pointer_get_attribute = &counting_attribute;
  MemoryKinds kinds(&api);
  g_asked = 0;
  g_answer = CUDA_ERROR_INVALID_VALUE;  // what the driver says of pageable memory
  EXPECT_EQ(kinds.of(0x1000), MemKind::kPageable);
  EXPECT_EQ(kinds.of(0x1000), MemKind::kPageable);
  EXPECT_EQ(g_asked, 1);
  EXPECT_EQ(kinds.asked(), 1u);
  // Another address, even in the same page, is asked of its own.
  EXPECT_EQ(kinds.of(0x1008), MemKind::kPageable);
  EXPECT_EQ(g_asked, 2);
  // The program registered memory: the same address may be pinned now. Pinned answers are
  // never remembered (cheap to ask, and they can change unseen).
  kinds.changed();
  g_answer = CUDA_SUCCESS;
  g_type = CU_MEMORYTYPE_HOST;
  EXPECT_EQ(kinds.of(0x1000), MemKind::kPinned);
  EXPECT_EQ(kinds.of(0x1000), MemKind::kPinned);
  EXPECT_EQ(g_asked, 4);
  // Device memory is.
  g_type = CU_MEMORYTYPE_DEVICE;
  EXPECT_EQ(kinds.of(0x3000), MemKind::kDevice);
  g_type = CU_MEMORYTYPE_HOST;
  EXPECT_EQ(kinds.of(0x3000), MemKind::kDevice);  // remembered
  EXPECT_EQ(g_asked, 5);
  // A failure other than "not the driver's" is no answer: asked again next time.
  g_answer = CUDA_ERROR_NOT_INITIALIZED;
  EXPECT_EQ(kinds.of(0x2000), MemKind::kOther);
  EXPECT_EQ(kinds.of(0x2000), MemKind::kOther);
  EXPECT_EQ(g_asked, 7);
  g_answer = CUDA_SUCCESS;
}

TEST(MemoryKinds, AnyFourOperandsUsedInTurnAreRememberedWhateverTheirAddresses) {
  // A step's copies name a few operands again and again. Remembered one per slot of a table
  // indexed by address, two that fell on one slot asked the driver at every use (0.6-8 us each),
  // and which two did depended on where the process's memory lay: under ASan the GraphMemoryKinds
  // tests below asked twice as often in some runs (session 37's CI). Four at a time, wherever
  // they lie, are all remembered.
  DriverApi api{};
  api.pointer_get_attribute = &counting_attribute;
  g_answer = CUDA_SUCCESS;
  g_type = CU_MEMORYTYPE_DEVICE;
  uint64_t x = 0x9e3779b97f4a7c15ull;
  auto next = [&x] {  // xorshift: 5,000 sets of four addresses, 8-byte aligned
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return (x & 0x7ffffffffff8ull) | 0x1000;
  };
  int missed = 0;
  for (int set = 0; set < 5000; ++set) {
    MemoryKinds kinds(&api);
    const uint64_t a[4] = {next(), next(), next(), next()};
    g_asked = 0;
    for (int round = 0; round < 8; ++round) {
      for (uint64_t address : a) EXPECT_EQ(kinds.of(address), MemKind::kDevice);
    }
    const int distinct = 4 - (a[1] == a[0]) - (a[2] == a[0] || a[2] == a[1]) -
                         (a[3] == a[0] || a[3] == a[1] || a[3] == a[2]);
    missed += g_asked != distinct;
  }
  EXPECT_EQ(missed, 0) << "sets of four operands asked about more than once each";
}

// A step: a kernel updates A; B takes A's values through host buffer H (device to host, then
// host to device, in stream order); a kernel updates B; the host syncs and compares both arms.
class GraphMemoryKindsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    standin_set_async(1);
    test::fill_standin_driver_api(&api_);
    test::take(&launch_, "cuLaunchKernel");
    test::take(&htod_, "cuMemcpyHtoDAsync_v2");
    test::take(&dtoh_, "cuMemcpyDtoHAsync_v2");
    test::take(&sync_, "cuStreamSynchronize");
    test::take(&register_, "cuMemHostRegister_v2");
    decltype(&cuMemAlloc_v2) alloc;
    test::take(&alloc, "cuMemAlloc_v2");
    const size_t sizes[2] = {4, 8};
    scale_ = test::standin_kernel(&table_, "k_scale", &test::scale_kernel, 2, sizes);
    addk_ = test::standin_kernel(&table_, "k_addk", &test::add_kernel, 2, sizes);
    for (int arm = 0; arm < 2; ++arm) {
      ASSERT_EQ(alloc(&a_[arm], kN * 4), CUDA_SUCCESS);
      ASSERT_EQ(alloc(&b_[arm], kN * 4), CUDA_SUCCESS);
      for (int i = 0; i < kN; ++i) {
        reinterpret_cast<float*>(a_[arm])[i] = float(i);
        reinterpret_cast<float*>(b_[arm])[i] = 0.0f;
        host_[arm][i] = -1.0f;
      }
    }
  }
  void TearDown() override { standin_set_async(0); }

  void kernel(const FunctionInfo* f, void* scalar, CUdeviceptr* y) {
    for (int arm = 0; arm < 2; ++arm) {
      void* p[] = {scalar, &y[arm]};
      if (arm == 0) {
        ASSERT_EQ(engine_.launch(test::engine_launch(
                      Op::LaunchKernel, reinterpret_cast<void*>(launch_), f, 1, 32, nullptr, p)),
                  CUDA_SUCCESS);
      } else {
        ASSERT_EQ(launch_(reinterpret_cast<CUfunction>(f->handle), 1, 1, 1, 32, 1, 1, 0, nullptr, p,
                          nullptr),
                  CUDA_SUCCESS);
      }
    }
  }
  void copies(bool round_trip) {
    if (round_trip) {
      ASSERT_EQ(
          engine_.memop(MemopCall{Op::MemcpyDtoHAsync, reinterpret_cast<void*>(dtoh_), false,
                                  nullptr, reinterpret_cast<uint64_t>(host_[0]), a_[0], kN * 4, 0}),
          CUDA_SUCCESS);
      ASSERT_EQ(dtoh_(host_[1], a_[1], kN * 4, nullptr), CUDA_SUCCESS);
    }
    ASSERT_EQ(
        engine_.memop(MemopCall{Op::MemcpyHtoDAsync, reinterpret_cast<void*>(htod_), false, nullptr,
                                b_[0], reinterpret_cast<uint64_t>(host_[0]), kN * 4, 0}),
        CUDA_SUCCESS);
    ASSERT_EQ(htod_(b_[1], host_[1], kN * 4, nullptr), CUDA_SUCCESS);
  }
  void step(int n, bool round_trip) {
    float half = 0.5f;
    kernel(addk_, &n, a_);
    if (!round_trip) {
      for (int arm = 0; arm < 2; ++arm) host_[arm][n % kN] = float(n);  // the host writes it
    }
    copies(round_trip);
    kernel(scale_, &half, b_);
    ASSERT_EQ(engine_.before_op(Op::StreamSynchronize, nullptr, false), CUDA_SUCCESS);
    ASSERT_EQ(sync_(nullptr), CUDA_SUCCESS);
    engine_.after_op(Op::StreamSynchronize, nullptr, false, CUDA_SUCCESS);
    ASSERT_EQ(std::memcmp(reinterpret_cast<void*>(b_[0]), reinterpret_cast<void*>(b_[1]), kN * 4),
              0)
        << "step " << n;
  }

  DriverApi api_;
  FunctionTable table_{&api_};
  GraphEngine engine_{&api_};
  decltype(&cuLaunchKernel) launch_ = nullptr;
  decltype(&cuMemcpyHtoDAsync_v2) htod_ = nullptr;
  decltype(&cuMemcpyDtoHAsync_v2) dtoh_ = nullptr;
  decltype(&cuStreamSynchronize) sync_ = nullptr;
  decltype(&cuMemHostRegister_v2) register_ = nullptr;
  const FunctionInfo* scale_ = nullptr;
  const FunctionInfo* addk_ = nullptr;
  CUdeviceptr a_[2] = {}, b_[2] = {};
  alignas(64) float host_[2][kN] = {};
};

TEST_F(GraphMemoryKindsTest, MemoryRegisteredAfterItsUseAsPageableIsReadInStreamOrder) {
  // Pageable: the copy's source is snapshotted at the call (the host rewrites it every step).
  for (int n = 1; n <= 4; ++n) step(n, false);
  EXPECT_GT(engine_.stats().staged_bytes, 0u);
  const uint64_t asked = engine_.stats().kind_queries;
  for (int n = 5; n <= 8; ++n) step(n, false);
  EXPECT_EQ(engine_.stats().kind_queries, asked);  // the same operands: remembered
  // Registered, as PyTorch's pinned host allocator does with its blocks; the hooks tell the
  // engine after any allocation or registration.
  for (int arm = 0; arm < 2; ++arm) ASSERT_EQ(register_(host_[arm], sizeof host_[arm], 0), 0);
  engine_.after_op(Op::MemHostRegister, nullptr, false, CUDA_SUCCESS);
  // Now a bounce buffer: filled from the GPU, then copied back, in stream order. Taken for
  // pageable (snapshotted at the call) it would send B the values from before the device to
  // host copy ran.
  const uint64_t staged = engine_.stats().staged_bytes;
  for (int n = 9; n <= 16; ++n) step(n, true);
  EXPECT_EQ(engine_.stats().staged_bytes, staged);
  EXPECT_GT(engine_.stats().memops_replayed, 0u);
}

TEST_F(GraphMemoryKindsTest, AnswersAreAskedAgainAfterAFreeOrTheEndOfAContext) {
  auto copy = [&] {
    ASSERT_EQ(
        engine_.memop(MemopCall{Op::MemcpyHtoDAsync, reinterpret_cast<void*>(htod_), false, nullptr,
                                b_[0], reinterpret_cast<uint64_t>(host_[0]), kN * 4, 0}),
        CUDA_SUCCESS);
  };
  copy();
  const uint64_t asked = engine_.stats().kind_queries;
  EXPECT_EQ(asked, 2u);  // destination and source
  copy();
  EXPECT_EQ(engine_.stats().kind_queries, asked);
  // A free (pinned memory may be another owner's pageable memory once it returns), before the
  // free runs and again after it.
  ASSERT_EQ(engine_.before_op(Op::MemFreeHost, nullptr, false), CUDA_SUCCESS);
  copy();
  EXPECT_EQ(engine_.stats().kind_queries, asked + 2);
  engine_.after_op(Op::MemFreeHost, nullptr, false, CUDA_SUCCESS);
  copy();
  EXPECT_EQ(engine_.stats().kind_queries, asked + 4);
  // A context's end takes its pinned and registered memory with it.
  ASSERT_EQ(engine_.before_op(Op::DevicePrimaryCtxReset, nullptr, false), CUDA_SUCCESS);
  engine_.after_op(Op::DevicePrimaryCtxReset, nullptr, false, CUDA_SUCCESS);
  copy();
  EXPECT_EQ(engine_.stats().kind_queries, asked + 6);
  ASSERT_EQ(engine_.before_op(Op::StreamSynchronize, nullptr, false), CUDA_SUCCESS);
  ASSERT_EQ(sync_(nullptr), CUDA_SUCCESS);
}

}  // namespace
}  // namespace pygraph
