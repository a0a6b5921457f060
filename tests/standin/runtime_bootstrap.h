// How the CUDA runtime reaches the driver, for test programs: dlopen libcuda.so.1, take
// cuGetProcAddress_v2 with dlsym, ask it for "cuGetProcAddress" itself and resolve every other
// entry point through the pointer that comes back. Under the shim, that is the
// cuGetProcAddress door.
#pragma once

#include <cuda.h>
#include <dlfcn.h>

namespace standin {

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

// nullptr when libcuda.so.1 cannot be loaded or refuses.
inline GetProcAddress runtime_get_proc_address() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  auto boot = lib ? reinterpret_cast<GetProcAddress>(dlsym(lib, "cuGetProcAddress_v2")) : nullptr;
  void* self = nullptr;
  if (!boot || boot("cuGetProcAddress", &self, 13000, 0, nullptr) != CUDA_SUCCESS) return nullptr;
  return reinterpret_cast<GetProcAddress>(self);
}

template <class Fn>
bool resolve(GetProcAddress get, const char* name, Fn* out, cuuint64_t flags = 0) {
  void* p = nullptr;
  if (get(name, &p, 13000, flags, nullptr) != CUDA_SUCCESS || !p) return false;
  *out = reinterpret_cast<Fn>(p);
  return true;
}

}  // namespace standin
