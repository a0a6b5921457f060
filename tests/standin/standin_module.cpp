// Modules, libraries and their functions and kernels in the driver stand-in: loading resolves
// names against the kernel registry; unloading is real (a launch of an unloaded module's function
// fails) and hands the function and kernel objects back for reuse, so that the next module's
// functions get the old handles, as a driver may hand out a freed handle again.
#include <cstring>

#include "standin_state.h"

#define API extern "C" __attribute__((visibility("default"))) CUresult

namespace standin {
namespace {

// What a null module or library stands for: always loaded (tests that need no module pass null).
Module* default_module() {
  static Module* m = new Module;
  return m;
}
Module* default_library() {
  static Module* l = [] {
    auto* lib = new Module;
    lib->library = true;
    lib->context_module = new Module;
    return lib;
  }();
  return l;
}

Module* module_of(CUmodule m) {
  return m ? reinterpret_cast<Module*>(m) : default_module();
}
Module* library_of(CUlibrary l) {
  return l ? reinterpret_cast<Module*>(l) : default_library();
}

bool has_magic(const void* h, uint32_t magic) {
  uint32_t m;
  if (!h) return false;
  std::memcpy(&m, h, sizeof m);
  return m == magic;
}

// A loaded function's or kernel's object behind a handle, or null (stale or not one).
Func* live_func(CUfunction f) {
  if (!has_magic(f, kFuncMagic)) return nullptr;
  Func* fn = reinterpret_cast<Func*>(f);
  return fn->module && fn->module->loaded ? fn : nullptr;
}
Kern* live_kern(CUkernel k) {
  if (!has_magic(k, kKernMagic)) return nullptr;
  Kern* kern = reinterpret_cast<Kern*>(k);
  return kern->library && kern->library->loaded ? kern : nullptr;
}

Kernel* registered(const char* name) {
  auto it = state().kernels.find(name ? name : "");
  return it == state().kernels.end() ? nullptr : &it->second;
}

CUresult param_info(Kernel* k, size_t i, size_t* off, size_t* size) {
  if (k->layout_hidden) return CUDA_ERROR_NOT_SUPPORTED;
  if (!off || !size) return CUDA_ERROR_INVALID_VALUE;
  if (i >= k->sizes.size()) return CUDA_ERROR_INVALID_VALUE;
  *off = k->offsets[i];
  *size = k->sizes[i];
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace standin

using namespace standin;

extern "C" __attribute__((visibility("default"))) void standin_hide_layout(const char* name) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  if (Kernel* k = registered(name)) k->layout_hidden = true;
}

API cuModuleLoadData(CUmodule* m, const void* image) {
  if (!m || !image) return CUDA_ERROR_INVALID_VALUE;
  *m = reinterpret_cast<CUmodule>(new Module);
  return CUDA_SUCCESS;
}
// One handle per (module, name), as the driver returns.
API cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Module* mod = module_of(m);
  Kernel* k = registered(name);
  if (!f || !k) return CUDA_ERROR_NOT_FOUND;
  if (!mod->loaded || mod->library) return CUDA_ERROR_INVALID_HANDLE;
  for (Func* fn : mod->funcs) {
    if (fn->kernel == k) {
      *f = reinterpret_cast<CUfunction>(fn);
      return CUDA_SUCCESS;
    }
  }
  Func* fn = nullptr;
  if (state().free_funcs.empty()) {
    fn = new Func;
  } else {
    fn = state().free_funcs.back();  // an unloaded module's handle, handed out again
    state().free_funcs.pop_back();
  }
  fn->kernel = k;
  fn->module = mod;
  mod->funcs.push_back(fn);
  *f = reinterpret_cast<CUfunction>(fn);
  return CUDA_SUCCESS;
}
API cuModuleUnload(CUmodule m) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Module* mod = reinterpret_cast<Module*>(m);
  if (!mod || mod->library || !mod->loaded) return CUDA_ERROR_INVALID_HANDLE;
  drain_all();  // queued launches of its functions run before it goes
  mod->loaded = false;
  for (Func* fn : mod->funcs) {
    fn->module = nullptr;
    state().free_funcs.push_back(fn);
  }
  mod->funcs.clear();
  return CUDA_SUCCESS;
}

API cuLibraryLoadData(CUlibrary* l, const void* code, CUjit_option*, void**, unsigned int,
                      CUlibraryOption*, void**, unsigned int) {
  if (!l || !code) return CUDA_ERROR_INVALID_VALUE;
  auto* lib = new Module;
  lib->library = true;
  lib->context_module = new Module;
  *l = reinterpret_cast<CUlibrary>(lib);
  return CUDA_SUCCESS;
}
API cuLibraryGetKernel(CUkernel* k, CUlibrary l, const char* name) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Module* lib = library_of(l);
  Kernel* kernel = registered(name);
  if (!k || !kernel) return CUDA_ERROR_NOT_FOUND;
  if (!lib->loaded || !lib->library) return CUDA_ERROR_INVALID_HANDLE;
  for (Kern* kern : lib->kerns) {
    if (kern->kernel == kernel) {
      *k = reinterpret_cast<CUkernel>(kern);
      return CUDA_SUCCESS;
    }
  }
  Kern* kern = nullptr;
  if (state().free_kerns.empty()) {
    kern = new Kern;
  } else {
    kern = state().free_kerns.back();  // an unloaded library's handle, handed out again
    state().free_kerns.pop_back();
  }
  kern->kernel = kernel;
  kern->library = lib;
  kern->func.kernel = kernel;
  kern->func.module = lib->context_module;
  lib->kerns.push_back(kern);
  *k = reinterpret_cast<CUkernel>(kern);
  return CUDA_SUCCESS;
}
API cuLibraryUnload(CUlibrary l) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Module* lib = reinterpret_cast<Module*>(l);
  if (!lib || !lib->library || !lib->loaded) return CUDA_ERROR_INVALID_HANDLE;
  drain_all();  // queued launches of its kernels run before it goes
  lib->loaded = false;
  lib->context_module->loaded = false;
  for (Kern* kern : lib->kerns) {
    kern->library = nullptr;
    kern->func.module = nullptr;
    state().free_kerns.push_back(kern);
  }
  lib->kerns.clear();
  return CUDA_SUCCESS;
}
// The kernel's function in the current context: its module is the library's module there.
API cuKernelGetFunction(CUfunction* f, CUkernel k) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Kern* kern = live_kern(k);
  if (!f || !kern) return CUDA_ERROR_INVALID_VALUE;
  *f = reinterpret_cast<CUfunction>(&kern->func);
  return CUDA_SUCCESS;
}

API cuFuncGetModule(CUmodule* m, CUfunction f) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Func* fn = live_func(f);
  if (!m) return CUDA_ERROR_INVALID_VALUE;
  if (!fn) return CUDA_ERROR_INVALID_HANDLE;
  *m = reinterpret_cast<CUmodule>(fn->module);
  return CUDA_SUCCESS;
}
API cuKernelGetLibrary(CUlibrary* l, CUkernel k) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Kern* kern = live_kern(k);
  if (!l) return CUDA_ERROR_INVALID_VALUE;
  if (!kern) return CUDA_ERROR_INVALID_HANDLE;
  *l = reinterpret_cast<CUlibrary>(kern->library);
  return CUDA_SUCCESS;
}
API cuLibraryGetModule(CUmodule* m, CUlibrary l) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Module* lib = library_of(l);
  if (!m) return CUDA_ERROR_INVALID_VALUE;
  if (!lib->library || !lib->loaded) return CUDA_ERROR_INVALID_HANDLE;
  *m = reinterpret_cast<CUmodule>(lib->context_module);
  return CUDA_SUCCESS;
}

// Names and layouts: a stale handle is refused (the real driver refuses cuFuncGetName on a
// function of an unloaded module).
API cuFuncGetName(const char** name, CUfunction f) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Func* fn = live_func(f);
  if (!name || !fn) return CUDA_ERROR_INVALID_HANDLE;
  *name = fn->kernel->name.c_str();
  return CUDA_SUCCESS;
}
API cuKernelGetName(const char** name, CUkernel k) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Kern* kern = live_kern(k);
  if (!name || !kern) return CUDA_ERROR_INVALID_HANDLE;
  *name = kern->kernel->name.c_str();
  return CUDA_SUCCESS;
}
// Like the real driver's documentation says: a CUfunction handle only.
API cuFuncGetParamInfo(CUfunction f, size_t i, size_t* off, size_t* size) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Func* fn = live_func(f);
  if (!fn) return CUDA_ERROR_INVALID_HANDLE;
  return param_info(fn->kernel, i, off, size);
}
API cuKernelGetParamInfo(CUkernel k, size_t i, size_t* off, size_t* size) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Kern* kern = live_kern(k);
  if (!kern) return CUDA_ERROR_INVALID_HANDLE;
  return param_info(kern->kernel, i, off, size);
}
