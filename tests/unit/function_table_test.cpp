// The kernel table against a fake driver: names, parameter layouts, CUkernel handles in the
// CUfunction slot, drivers that cannot say, and module unloads.
#include "driver/function_table.h"

#include <gtest/gtest.h>

#include <cstring>

#include "driver/module_unload.h"

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

TEST(FunctionTable, NcclsKernelsWaitForTheirPeers) {
  EXPECT_TRUE(waits_for_peers("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
  EXPECT_TRUE(waits_for_peers("ncclKernel_AllReduce_RING_LL_Sum_float"));  // before NCCL 2.19
  EXPECT_TRUE(waits_for_peers("ncclSymkDevKernel_AllReduce_AGxLL_R"));
  // As the driver names them: mangled.
  EXPECT_TRUE(waits_for_peers("_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL19ncclDevKernelArgs4K"));
  EXPECT_TRUE(waits_for_peers("_ZL22ncclKernel_Broadcast_Xv"));
  EXPECT_FALSE(waits_for_peers("_ZN5torch4ncclEv"));
  EXPECT_FALSE(waits_for_peers("_Z4axpyfPfS_i"));
  EXPECT_FALSE(waits_for_peers("_Z"));
  EXPECT_FALSE(waits_for_peers("my_nccl_like_kernel"));
  EXPECT_FALSE(waits_for_peers("_Z4axpyfPfS_i"));
  EXPECT_FALSE(waits_for_peers(""));
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

// Modules of the fake driver: 0x100 is module 0xA1's, 0x200 (a CUkernel) library 0xB1's, 0x300
// has no module the driver will say, 0x400 is module 0xA2's (same name and layout as 0x100).
CUresult func_name_4(const char** n, CUfunction f) {
  if (reinterpret_cast<uintptr_t>(f) == 0x400) {
    *n = "f";
    return CUDA_SUCCESS;
  }
  return func_name(n, f);
}
CUresult func_params_4(CUfunction f, size_t i, size_t* off, size_t* size) {
  return func_params(
      reinterpret_cast<uintptr_t>(f) == 0x400 ? reinterpret_cast<CUfunction>(0x100) : f, i, off,
      size);
}
CUresult func_module(CUmodule* m, CUfunction f) {
  const uintptr_t h = reinterpret_cast<uintptr_t>(f);
  if (h != 0x100 && h != 0x400) return CUDA_ERROR_INVALID_HANDLE;
  *m = reinterpret_cast<CUmodule>(h == 0x100 ? 0xA1 : 0xA2);
  return CUDA_SUCCESS;
}
CUresult kernel_library(CUlibrary* l, CUkernel k) {
  if (reinterpret_cast<uintptr_t>(k) != 0x200) return CUDA_ERROR_INVALID_HANDLE;
  *l = reinterpret_cast<CUlibrary>(0xB1);
  return CUDA_SUCCESS;
}

DriverApi modules_api() {
  DriverApi api;
  api.func_get_name = func_name_4;
  api.func_get_param_info = func_params_4;
  api.kernel_get_name = kernel_name;
  api.kernel_get_param_info = kernel_params;
  api.func_get_module = func_module;
  api.kernel_get_library = kernel_library;
  return api;
}

TEST(FunctionTable, KnowsEachKernelsModule) {
  const DriverApi api = modules_api();
  FunctionTable table(&api);
  bool created;
  EXPECT_EQ(table.lookup(0x100, &created)->module, 0xA1u);
  EXPECT_EQ(table.lookup(0x200, &created)->module, 0xB1u);  // a CUkernel: its library
  EXPECT_EQ(table.lookup(0x300, &created)->module, 0u);
  EXPECT_EQ(table.lookup(0x400, &created)->module, 0xA2u);
}

TEST(FunctionTable, AnUnloadForgetsTheModulesKernelsAndThoseOfUnknownModules) {
  const DriverApi api = modules_api();
  FunctionTable table(&api);
  bool created;
  const FunctionInfo* f = table.lookup(0x100, &created);
  const FunctionInfo* k = table.lookup(0x200, &created);
  const FunctionInfo* u = table.lookup(0x300, &created);
  const FunctionInfo* other = table.lookup(0x400, &created);
  ModuleUnload unload;
  unload.handle = 0xA1;
  EXPECT_EQ(table.forget(unload), 2u);  // 0x100, and 0x300 whose module nobody knows
  // Their infos stay readable for whoever holds them.
  EXPECT_EQ(f->name, "f");
  EXPECT_EQ(f->params.size(), 2u);
  // The other module's function and the library's kernel are the same infos as before.
  EXPECT_EQ(table.lookup(0x400, &created), other);
  EXPECT_FALSE(created);
  EXPECT_EQ(table.lookup(0x200, &created), k);
  EXPECT_FALSE(created);
  // The forgotten handles are described again, with new ids: a token made with the old id never
  // matches a launch of whatever kernel the handle is now.
  const FunctionInfo* f2 = table.lookup(0x100, &created);
  EXPECT_TRUE(created);
  EXPECT_NE(f2, f);
  EXPECT_EQ(f2->id, 5u);
  EXPECT_EQ(table.lookup(0x100, &created), f2);
  EXPECT_FALSE(created);
  const FunctionInfo* u2 = table.lookup(0x300, &created);
  EXPECT_TRUE(created);
  EXPECT_NE(u2->id, u->id);
  EXPECT_EQ(table.forget(unload), 2u);  // again: the new infos are of the same module
  EXPECT_EQ(table.forget(unload), 0u);  // nothing left of it
}

TEST(FunctionTable, ALibraryUnloadForgetsItsKernels) {
  const DriverApi api = modules_api();
  FunctionTable table(&api);
  bool created;
  const FunctionInfo* k = table.lookup(0x200, &created);
  const FunctionInfo* f = table.lookup(0x100, &created);
  ModuleUnload unload;
  unload.library = true;
  unload.handle = 0xB1;
  unload.library_module_known = true;
  unload.library_module = 0xB100;  // its module in this context: no function of it was seen
  EXPECT_EQ(table.forget(unload), 1u);
  EXPECT_NE(table.lookup(0x200, &created), k);
  EXPECT_TRUE(created);
  EXPECT_EQ(table.lookup(0x100, &created), f);
}

TEST(FunctionTable, ManyUnloadsNeverHandOutAForgottenInfo) {
  // A module loaded and unloaded over and over, its function's handle reused every time (as a
  // driver may): every round describes it again; slots of forgotten handles are never reused.
  const DriverApi api = modules_api();
  FunctionTable table(&api);
  ModuleUnload unload;
  unload.handle = 0xA1;
  bool created;
  uint32_t last_id = 0;
  for (int round = 0; round < 1000; ++round) {
    const FunctionInfo* f = table.lookup(0x100, &created);
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(created);
    EXPECT_GT(f->id, last_id);
    last_id = f->id;
    EXPECT_EQ(table.lookup(0x100, &created), f);
    ASSERT_EQ(table.forget(unload), 1u);
  }
  EXPECT_EQ(table.size(), 1000u);
}

TEST(FunctionTable, UnloadsNeverFillTheTable) {
  // An autotuner's pattern: many kernels loaded, their modules unloaded, again and again; in all
  // more descriptions than the table has room for (49,152). Forgotten slots are reclaimed, a
  // kernel that stays keeps its info, and ids keep growing.
  const DriverApi api = modules_api();
  FunctionTable table(&api);
  bool created;
  const FunctionInfo* kept = table.lookup(0x400, &created);  // module 0xA2: never unloaded
  ModuleUnload unload;
  unload.handle = 0xA1;  // also forgets the kernels whose module the driver does not say
  uint32_t last = kept->id;
  uint64_t h = 0x10000;
  for (int round = 0; round < 8; ++round) {
    for (int i = 0; i < 10000; ++i, h += 64) {
      const FunctionInfo* f = table.lookup(h, &created);
      ASSERT_NE(f, nullptr) << "round " << round << ", kernel " << i;
      EXPECT_TRUE(created);
      EXPECT_GT(f->id, last);
      last = f->id;
    }
    EXPECT_EQ(table.lookup(0x400, &created), kept);
    EXPECT_FALSE(created);
    EXPECT_EQ(table.lookup(h - 64, &created)->id, last);  // a live one found after a rebuild
    EXPECT_FALSE(created);
    EXPECT_EQ(table.forget(unload), 10000u);
  }
  EXPECT_EQ(table.size(), 80001u);
}

TEST(FunctionInfo, PacksParametersAndZeroesOnlyWherePaddingIs) {
  // (int, double*): 4 bytes of padding at 4..8, zeroed over whatever the block held.
  FunctionInfo padded;
  padded.params = {{0, 4}, {8, 8}};
  padded.size_args();
  EXPECT_EQ(padded.arg_bytes, 16u);
  EXPECT_TRUE(padded.has_padding);
  int32_t i = 7;
  uint64_t p = 0x1122334455667788ull;
  void* params[] = {&i, &p};
  uint8_t block[16];
  std::memset(block, 0xee, sizeof block);
  padded.pack_args(params, block);
  uint8_t want[16] = {};
  std::memcpy(want, &i, 4);
  std::memcpy(want + 8, &p, 8);
  EXPECT_EQ(std::memcmp(block, want, 16), 0);
  // (double*, int, short, char, char, a 24-byte struct): every byte covered, none zeroed first;
  // sizes the switch does not name (24) copy whole.
  FunctionInfo dense;
  dense.params = {{0, 8}, {8, 4}, {12, 2}, {14, 1}, {15, 1}, {16, 24}};
  dense.size_args();
  EXPECT_EQ(dense.arg_bytes, 40u);
  EXPECT_FALSE(dense.has_padding);
  int16_t h = -2;
  uint8_t c = 0xab, d = 0xcd, big[24];
  for (int k = 0; k < 24; ++k) big[k] = uint8_t(k + 1);
  void* dparams[] = {&p, &i, &h, &c, &d, big};
  uint8_t dblock[40];
  std::memset(dblock, 0xee, sizeof dblock);
  dense.pack_args(dparams, dblock);
  uint8_t dwant[40];
  std::memcpy(dwant, &p, 8);
  std::memcpy(dwant + 8, &i, 4);
  std::memcpy(dwant + 12, &h, 2);
  dwant[14] = c;
  dwant[15] = d;
  std::memcpy(dwant + 16, big, 24);
  EXPECT_EQ(std::memcmp(dblock, dwant, 40), 0);
  // Parameters out of order, or overlapping: zeroed first, to be safe.
  FunctionInfo odd;
  odd.params = {{8, 8}, {0, 8}};
  odd.size_args();
  EXPECT_TRUE(odd.has_padding);
  odd.params = {{0, 8}, {4, 8}};
  odd.size_args();
  EXPECT_TRUE(odd.has_padding);
  FunctionInfo unsized;  // never sized: zeroes
  EXPECT_TRUE(unsized.has_padding);
  // A damaged trace's layout whose end passes 32 bits sizes no small block (it wrapped to 16
  // bytes once, with a parameter 4 GiB beyond them): no launch's bytes reach UINT32_MAX.
  FunctionInfo wrapped;
  wrapped.params = {{0, 8}, {0xfffffff0u, 0x20}};
  wrapped.size_args();
  EXPECT_EQ(wrapped.arg_bytes, UINT32_MAX);
}

}  // namespace
}  // namespace pygraph
