// The engine making the program's calls itself (program_calls.h): each goes to the entry point
// the program called, with that entry point's ABI and the call's own arguments.
#include "graph/program_calls.h"

#include <gtest/gtest.h>

#include <cstring>
#include <tuple>

namespace pygraph {
namespace {

// What the fake entry points below were called with.
struct Seen {
  int entry = 0;
  CUfunction f = nullptr;
  unsigned dims[6] = {};
  unsigned shared = 0;
  CUstream stream = nullptr;
  void** params = nullptr;
  void** extra = nullptr;
  const CUlaunchAttribute* attrs = nullptr;
  unsigned nattrs = 0;
  uint64_t dst = 0, src = 0, value = 0;
  size_t count = 0;
  CUevent event = nullptr;
  unsigned flags = 0;
};
Seen g_seen;

CUresult launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned shared, CUstream s, void** params,
                       void** extra) {
  g_seen = Seen{1, f, {gx, gy, gz, bx, by, bz}, shared, s, params, extra};
  return CUDA_SUCCESS;
}
CUresult launch_cooperative(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned shared, CUstream s, void** params) {
  g_seen = Seen{2, f, {gx, gy, gz, bx, by, bz}, shared, s, params};
  return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;  // the driver's answer is the caller's
}
CUresult launch_ex(const CUlaunchConfig* c, CUfunction f, void** params, void** extra) {
  g_seen = Seen{3,
                f,
                {c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ},
                c->sharedMemBytes,
                c->hStream,
                params,
                extra,
                c->attrs,
                c->numAttrs};
  return CUDA_SUCCESS;
}
CUresult set8(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
  g_seen = {.entry = 8, .stream = s, .dst = d, .value = v, .count = n};
  return CUDA_SUCCESS;
}
CUresult set16(CUdeviceptr d, unsigned short v, size_t n, CUstream s) {
  g_seen = {.entry = 16, .stream = s, .dst = d, .value = v, .count = n};
  return CUDA_SUCCESS;
}
CUresult set32(CUdeviceptr d, unsigned int v, size_t n, CUstream s) {
  g_seen = {.entry = 32, .stream = s, .dst = d, .value = v, .count = n};
  return CUDA_SUCCESS;
}
CUresult htod(CUdeviceptr d, const void* src, size_t n, CUstream s) {
  g_seen = {.entry = 40, .stream = s, .dst = d, .src = uint64_t(src), .count = n};
  return CUDA_SUCCESS;
}
CUresult dtoh(void* d, CUdeviceptr src, size_t n, CUstream s) {
  g_seen = {.entry = 41, .stream = s, .dst = uint64_t(d), .src = src, .count = n};
  return CUDA_SUCCESS;
}
CUresult dtod(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s) {
  g_seen = {.entry = 42, .stream = s, .dst = d, .src = src, .count = n};
  return CUDA_SUCCESS;
}
CUresult record(CUevent e, CUstream s) {
  g_seen = {.entry = 50, .stream = s, .event = e};
  return CUDA_SUCCESS;
}
CUresult record_flags(CUevent e, CUstream s, unsigned int flags) {
  g_seen = {.entry = 51, .stream = s, .event = e, .flags = flags};
  return CUDA_SUCCESS;
}
CUresult wait(CUstream s, CUevent e, unsigned int flags) {
  g_seen = {.entry = 52, .stream = s, .event = e, .flags = flags};
  return CUDA_SUCCESS;
}

template <class F>
void* entry(F* f) {
  return reinterpret_cast<void*>(f);
}

EngineLaunch a_launch(Op op, void* eager) {
  EngineLaunch l{};
  l.op = op;
  l.function = reinterpret_cast<CUfunction>(0x1000);
  l.grid[0] = 2, l.grid[1] = 3, l.grid[2] = 4;
  l.block[0] = 32, l.block[1] = 2, l.block[2] = 1;
  l.shared_mem = 96;
  l.stream = reinterpret_cast<CUstream>(0x2000);
  l.attr_count = 1;
  l.eager = eager;
  return l;
}

// The entry point `entry` was called with a_launch()'s shape.
void expect_shape_seen(int entry) {
  const unsigned dims[6] = {2, 3, 4, 32, 2, 1};
  EXPECT_EQ(g_seen.entry, entry);
  EXPECT_EQ(std::memcmp(g_seen.dims, dims, sizeof dims), 0);
  EXPECT_EQ(g_seen.shared, 96u);
  EXPECT_EQ(g_seen.stream, reinterpret_cast<CUstream>(0x2000));
}

TEST(ProgramCalls, ALaunchGoesThroughItsOwnEntryPointWithTheArgumentsGiven) {
  void* params[1] = {};
  void* extra[1] = {};
  CUlaunchAttribute attrs[1] = {};

  EXPECT_EQ(call_launch(a_launch(Op::LaunchKernel, entry(launch_kernel)), params, extra, attrs),
            CUDA_SUCCESS);
  expect_shape_seen(1);
  EXPECT_EQ(g_seen.f, reinterpret_cast<CUfunction>(0x1000));
  EXPECT_EQ(g_seen.params, params);
  EXPECT_EQ(g_seen.extra, extra);

  EXPECT_EQ(call_launch(a_launch(Op::LaunchCooperativeKernel, entry(launch_cooperative)), params,
                        nullptr, attrs),
            CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
  expect_shape_seen(2);
  EXPECT_EQ(g_seen.params, params);

  // cuLaunchKernelEx: the shape and the attributes passed (a recorded launch's own copies).
  EXPECT_EQ(call_launch(a_launch(Op::LaunchKernelEx, entry(launch_ex)), nullptr, extra, attrs),
            CUDA_SUCCESS);
  expect_shape_seen(3);
  EXPECT_EQ(g_seen.extra, extra);
  EXPECT_EQ(g_seen.attrs, attrs);
  EXPECT_EQ(g_seen.nattrs, 1u);
}

TEST(ProgramCalls, AMemopGoesThroughItsOwnEntryPoint) {
  const CUstream s = reinterpret_cast<CUstream>(0x3000);
  auto memop = [&](Op op, void* eager) {
    return MemopCall{op, eager, false, s, 0x10, 0x20, 7, 0x1234abcd};
  };
  ASSERT_EQ(call_memop(memop(Op::MemsetD8Async, entry(set8))), CUDA_SUCCESS);
  EXPECT_EQ(g_seen.entry, 8);
  EXPECT_EQ(g_seen.value, 0xcdu);  // the element's width
  EXPECT_EQ(g_seen.dst, 0x10u);
  EXPECT_EQ(g_seen.count, 7u);
  EXPECT_EQ(g_seen.stream, s);
  ASSERT_EQ(call_memop(memop(Op::MemsetD16Async, entry(set16))), CUDA_SUCCESS);
  EXPECT_EQ(g_seen.entry, 16);
  EXPECT_EQ(g_seen.value, 0xabcdu);
  ASSERT_EQ(call_memop(memop(Op::MemsetD32Async, entry(set32))), CUDA_SUCCESS);
  EXPECT_EQ(g_seen.entry, 32);
  EXPECT_EQ(g_seen.value, 0x1234abcdu);
  for (auto [op, eager, want] : {std::tuple{Op::MemcpyHtoDAsync, entry(htod), 40},
                                 std::tuple{Op::MemcpyDtoHAsync, entry(dtoh), 41},
                                 std::tuple{Op::MemcpyDtoDAsync, entry(dtod), 42},
                                 std::tuple{Op::MemcpyAsync, entry(dtod), 42}}) {
    ASSERT_EQ(call_memop(memop(op, eager)), CUDA_SUCCESS);
    EXPECT_EQ(g_seen.entry, want);
    EXPECT_EQ(g_seen.dst, 0x10u);
    EXPECT_EQ(g_seen.src, 0x20u);
    EXPECT_EQ(g_seen.count, 7u);
    EXPECT_EQ(g_seen.stream, s);
  }
}

TEST(ProgramCalls, AnEventOpGoesThroughItsOwnEntryPoint) {
  const CUstream s = reinterpret_cast<CUstream>(0x3000);
  const CUevent e = reinterpret_cast<CUevent>(0x4000);
  ASSERT_EQ(call_event(EventCall{Op::EventRecord, entry(record), false, e, s, 0}), CUDA_SUCCESS);
  EXPECT_EQ(g_seen.entry, 50);
  EXPECT_EQ(g_seen.event, e);
  EXPECT_EQ(g_seen.stream, s);
  ASSERT_EQ(call_event(EventCall{Op::EventRecordWithFlags, entry(record_flags), false, e, s, 1}),
            CUDA_SUCCESS);
  EXPECT_EQ(g_seen.entry, 51);
  EXPECT_EQ(g_seen.flags, 1u);
  ASSERT_EQ(call_event(EventCall{Op::StreamWaitEvent, entry(wait), false, e, s, 0}), CUDA_SUCCESS);
  EXPECT_EQ(g_seen.entry, 52);
  EXPECT_EQ(g_seen.event, e);
  EXPECT_EQ(g_seen.stream, s);
}

}  // namespace
}  // namespace pygraph
