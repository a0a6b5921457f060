// The dlsym door: cuBLAS, cuBLASLt, Triton and NVRTC take driver entry points with dlsym on a
// libcuda handle. We interpose dlsym itself and wrap what it returns for the symbols we know.
//
// dlsym(RTLD_NEXT, ...) resolves relative to its caller's return address, so those calls must
// reach glibc with the caller's frame intact: the exported dlsym is a trampoline that jumps
// straight to glibc's for RTLD_NEXT and only calls our hook for other handles.
#include <dlfcn.h>

#include <cstring>

#include "entry_points.h"
#include "shim_state.h"

extern "C" __attribute__((visibility("hidden"))) void* pygraph_real_dlsym;
extern "C" __attribute__((visibility("hidden"))) void* pygraph_dlsym_hook(void* handle,
                                                                          const char* name);

#if defined(__x86_64__)
asm(R"(
.text
.globl dlsym
.type dlsym,@function
.p2align 4
dlsym:
  endbr64
  cmpq $-1, %rdi
  jne 1f
  movq pygraph_real_dlsym(%rip), %rax
  testq %rax, %rax
  jz 1f
  jmp *%rax
1:
  jmp pygraph_dlsym_hook
.size dlsym, .-dlsym
)");
#elif defined(__aarch64__)
asm(R"(
.text
.globl dlsym
.type dlsym,%function
.p2align 4
dlsym:
  cmn x0, #1
  b.ne 1f
  adrp x16, pygraph_real_dlsym
  ldr x16, [x16, :lo12:pygraph_real_dlsym]
  cbz x16, 1f
  br x16
1:
  b pygraph_dlsym_hook
.size dlsym, .-dlsym
)");
#endif

// Not instrumented under AddressSanitizer or ThreadSanitizer: their runtimes resolve what they
// intercept with dlsym(RTLD_NEXT, ...) while they start, before their shadow memory may be read
// (an instrumented shim crashed there, in off mode too; under TSan in its first call).
extern "C" __attribute__((no_sanitize("address", "thread"))) void* pygraph_dlsym_hook(
    void* handle, const char* name) {
  using namespace pygraph::hooks;
  void* found = real_dlsym(handle, name);
  // Fast rejection: everything that is not a driver function we know passes through untouched.
  if (!found || !name || name[0] != 'c' || name[1] != 'u') return found;
  const int row = row_by_symbol(name);
  if (row < 0) return found;
  if (!shim_ready() && !shim_init()) return found;
  if (g_mode == pygraph::Mode::kOff || found != real_dlsym(driver_handle(), name)) {
    // Not the driver's function: our own export (already a wrapper) or another library's.
    return found;
  }
  return wrap(row, Door::kDlsym, found);
}
