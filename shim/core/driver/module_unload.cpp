#include "driver/module_unload.h"

namespace pygraph {

ModuleUnload describe_unload(const DriverApi& api, Op op, uint64_t handle) {
  ModuleUnload u;
  u.library = op == Op::LibraryUnload;
  u.handle = handle;
  CUcontext ctx = nullptr;
  if (api.ctx_get_current && api.ctx_get_current(&ctx) == CUDA_SUCCESS) {
    u.context = reinterpret_cast<uint64_t>(ctx);
  }
  if (u.library && api.library_get_module) {
    CUmodule m = nullptr;
    const CUresult r = api.library_get_module(&m, reinterpret_cast<CUlibrary>(handle));
    if (r == CUDA_SUCCESS) {
      u.library_module = reinterpret_cast<uint64_t>(m);
      u.library_module_known = true;
    } else if (r == CUDA_ERROR_NOT_FOUND) {
      u.library_module_known = true;  // not loaded in this context: no function here is its
    }
  }
  return u;
}

bool may_belong(const FunctionInfo& f, const ModuleUnload& u) {
  if (!f.module) return true;
  if (!u.library) return !f.is_kernel_handle && f.module == u.handle;
  if (f.is_kernel_handle) return f.module == u.handle;
  // A CUfunction may have been taken from one of the library's kernels.
  if (f.context != u.context || !u.library_module_known) return true;
  return u.library_module && f.module == u.library_module;
}

}  // namespace pygraph
