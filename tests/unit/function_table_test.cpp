// The kernel table against a fake driver: names, parameter layouts, CUkernel handles in the
// CUfunction slot, and drivers that cannot say.
#include "driver/function_table.h"

#include <gtest/gtest.h>

namespace pygraph {
namespace {

// Handles: 0x100 is a CUfunction "f" with (int, double*), 0x200 a CUkernel "k" with (char),
// 0x300 something the driver refuses.
int g_param_calls = 0;

CUresult func_name(const char** n, CUfunction f) {
  if (reinterpret_cast<uintptr_t>(f) != 0x100) return CUDA_ERROR_INVALID_HANDLE;
  *n = "f";
  return CUDA_SUCCESS;
}
CUresult func_params(CUfunction f, size_t i, size_t* off, size_t* size) {
  ++g_param_calls;
  if (reinterpret_cast<uintptr_t>(f) != 0x100) return CUDA_ERROR_INVALID_HANDLE;
  if (i == 0) {
    *off = 0;
    *size = 4;
    return CUDA_SUCCESS;
  }
  if (i == 1) {
    *off = 8;
    *size = 8;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}
CUresult kernel_name(const char** n, CUkernel k) {
  if (reinterpret_cast<uintptr_t>(k) != 0x200) return CUDA_ERROR_INVALID_HANDLE;
  *n = "k";
  return CUDA_SUCCESS;
}
CUresult kernel_params(CUkernel k, size_t i, size_t* off, size_t* size) {
  if (reinterpret_cast<uintptr_t>(k) != 0x200) return CUDA_ERROR_INVALID_HANDLE;
  if (i == 0) {
    *off = 0;
    *size = 1;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

TEST(FunctionTable, DescribesEachKernelOnceWithItsLayout) {
  DriverApi api;
  api.func_get_name = func_name;
  api.func_get_param_info = func_params;
  api.kernel_get_name = kernel_name;
  api.kernel_get_param_info = kernel_params;
  FunctionTable table(&api);
  bool created;
  const FunctionInfo* f = table.lookup(0x100, &created);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(created);
  EXPECT_EQ(f->id, 1u);
  EXPECT_EQ(f->name, "f");
  EXPECT_TRUE(f->params_known);
  ASSERT_EQ(f->params.size(), 2u);
  EXPECT_EQ(f->arg_bytes, 16u);
  int calls = g_param_calls;
  EXPECT_EQ(table.lookup(0x100, &created), f);  // cached: the driver is not asked again
  EXPECT_FALSE(created);
  EXPECT_EQ(g_param_calls, calls);

  const FunctionInfo* k = table.lookup(0x200, &created);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->id, 2u);
  EXPECT_TRUE(k->is_kernel_handle);
  EXPECT_EQ(k->name, "k");
  EXPECT_EQ(k->arg_bytes, 1u);

  const FunctionInfo* u = table.lookup(0x300, &created);
  ASSERT_NE(u, nullptr);
  EXPECT_FALSE(u->params_known);
  EXPECT_EQ(u->name, "");
  EXPECT_EQ(table.size(), 3u);
}

TEST(FunctionTable, OlderDriverWithoutTheCallsStillGivesIds) {
  DriverApi none;
  FunctionTable table(&none);
  bool created;
  const FunctionInfo* a = table.lookup(0x100, &created);
  const FunctionInfo* b = table.lookup(0x108, &created);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a->id, b->id);
  EXPECT_FALSE(a->params_known);
}

TEST(FunctionTable, ManyKernelsStayDistinct) {
  DriverApi none;
  FunctionTable table(&none);
  bool created;
  for (uint64_t h = 1; h <= 20000; ++h) {
    const FunctionInfo* f = table.lookup(h * 64, &created);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->id, h);
  }
  for (uint64_t h = 1; h <= 20000; ++h) EXPECT_EQ(table.lookup(h * 64, &created)->id, h);
}

}  // namespace
}  // namespace pygraph
