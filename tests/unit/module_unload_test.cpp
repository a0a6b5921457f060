// Which kernels a module or library unload may take with it (module_unload.h): exactly the
// module's when the driver said which module each kernel is of, and every one it could not say.
#include "driver/module_unload.h"

#include <gtest/gtest.h>

namespace pygraph {
namespace {

FunctionInfo function_of(uint64_t module, uint64_t context = 0xC0) {
  FunctionInfo f;
  f.module = module;
  f.context = context;
  return f;
}
FunctionInfo kernel_of(uint64_t library) {
  FunctionInfo k;
  k.is_kernel_handle = true;
  k.module = library;
  k.context = 0xC0;
  return k;
}

ModuleUnload module_unload(uint64_t module) {
  ModuleUnload u;
  u.handle = module;
  u.context = 0xC0;
  return u;
}
ModuleUnload library_unload(uint64_t library, uint64_t module_here, bool known = true) {
  ModuleUnload u;
  u.library = true;
  u.handle = library;
  u.library_module = module_here;
  u.library_module_known = known;
  u.context = 0xC0;
  return u;
}

TEST(ModuleUnload, WhichKernelsMayBelongToTheUnloadedModule) {
  struct Case {
    const char* what;
    FunctionInfo f;
    ModuleUnload u;
    bool belongs;
  };
  const Case cases[] = {
      {"function of the module", function_of(0xA1), module_unload(0xA1), true},
      {"function of another module", function_of(0xA2), module_unload(0xA1), false},
      {"function of no known module", function_of(0), module_unload(0xA1), true},
      {"kernel of a library, module unload", kernel_of(0xA1), module_unload(0xA1), false},
      {"kernel of no known library", kernel_of(0), module_unload(0xA1), true},
      {"kernel of the library", kernel_of(0xB1), library_unload(0xB1, 0xB100), true},
      {"kernel of another library", kernel_of(0xB2), library_unload(0xB1, 0xB100), false},
      {"function of the library's module here", function_of(0xB100), library_unload(0xB1, 0xB100),
       true},
      {"function of a plain module", function_of(0xA1), library_unload(0xB1, 0xB100), false},
      {"function, library has no module here", function_of(0xA1), library_unload(0xB1, 0), false},
      {"function, library's module not known", function_of(0xA1),
       library_unload(0xB1, 0, /*known=*/false), true},
      {"function of another context", function_of(0xA1, 0xC1), library_unload(0xB1, 0xB100), true},
      {"function of another context, module unload", function_of(0xA2, 0xC1), module_unload(0xA1),
       false},
  };
  for (const Case& c : cases) EXPECT_EQ(may_belong(c.f, c.u), c.belongs) << c.what;
}

// The fake driver: the current context is 0xC0; library 0xB1 has module 0xB100 in it, library
// 0xB2 none, and 0xB3 is not one the driver knows.
CUresult current(CUcontext* ctx) {
  *ctx = reinterpret_cast<CUcontext>(0xC0);
  return CUDA_SUCCESS;
}
CUresult library_module(CUmodule* m, CUlibrary l) {
  switch (reinterpret_cast<uintptr_t>(l)) {
    case 0xB1:
      *m = reinterpret_cast<CUmodule>(0xB100);
      return CUDA_SUCCESS;
    case 0xB2:
      return CUDA_ERROR_NOT_FOUND;
    default:
      return CUDA_ERROR_INVALID_HANDLE;
  }
}

TEST(ModuleUnload, DescribedFromTheDriverBeforeTheUnload) {
  DriverApi api;
  api.ctx_get_current = current;
  api.library_get_module = library_module;
  const ModuleUnload m = describe_unload(api, Op::ModuleUnload, 0xA1);
  EXPECT_FALSE(m.library);
  EXPECT_EQ(m.handle, 0xA1u);
  EXPECT_EQ(m.context, 0xC0u);
  const ModuleUnload l = describe_unload(api, Op::LibraryUnload, 0xB1);
  EXPECT_TRUE(l.library);
  EXPECT_TRUE(l.library_module_known);
  EXPECT_EQ(l.library_module, 0xB100u);
  const ModuleUnload none = describe_unload(api, Op::LibraryUnload, 0xB2);
  EXPECT_TRUE(none.library_module_known);
  EXPECT_EQ(none.library_module, 0u);
  EXPECT_FALSE(describe_unload(api, Op::LibraryUnload, 0xB3).library_module_known);
  EXPECT_FALSE(describe_unload(DriverApi{}, Op::LibraryUnload, 0xB1).library_module_known);
}

}  // namespace
}  // namespace pygraph
