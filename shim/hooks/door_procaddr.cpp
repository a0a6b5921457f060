// The cuGetProcAddress door. CUDA's runtime asks the driver for "cuGetProcAddress" itself and
// then resolves ~400 entry points through the pointer it got, so wrapping the pointer returned
// for "cuGetProcAddress" is what makes PyTorch's launches visible at all (shared/NOTES.md).
#include <cstring>

#include "../core/log.h"
#include "entry_points.h"
#include "handlers.h"

namespace pygraph::hooks {
namespace {

void wrap_result(Door door, const char* symbol, void** pfn, int version, cuuint64_t flags) {
  (void)door;
  if (!symbol || !pfn || !*pfn) return;
  int row = row_for_proc_address(symbol, version, flags);
  if (row < 0) {
    Op op;
    if (op_from_name(symbol, &op)) {
      // A function we wrap, asked for at a version older than any ABI we know.
      shim_recorder().count_unwrapped();
      log_debug("cuGetProcAddress(%s, %d): ABI older than pygraph wraps; unwrapped", symbol,
                version);
    }
    return;
  }
  *pfn = wrap(row, Door::kProcAddr, *pfn);
}

}  // namespace

CUresult get_proc_address(CUresult (*real)(const char*, void**, int, cuuint64_t,
                                           CUdriverProcAddressQueryResult*),
                          Door door, const char* symbol, void** pfn, int version, cuuint64_t flags,
                          CUdriverProcAddressQueryResult* status) {
  CUresult r = real(symbol, pfn, version, flags, status);
  if (r == CUDA_SUCCESS) wrap_result(door, symbol, pfn, version, flags);
  return r;
}

CUresult get_proc_address_v1(CUresult (*real)(const char*, void**, int, cuuint64_t), Door door,
                             const char* symbol, void** pfn, int version, cuuint64_t flags) {
  CUresult r = real(symbol, pfn, version, flags);
  if (r == CUDA_SUCCESS) wrap_result(door, symbol, pfn, version, flags);
  return r;
}

}  // namespace pygraph::hooks
