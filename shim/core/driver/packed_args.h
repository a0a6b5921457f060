// A launch's `extra` array as the driver reads it: CU_LAUNCH_PARAM_BUFFER_POINTER and
// CU_LAUNCH_PARAM_BUFFER_SIZE pairs up to CU_LAUNCH_PARAM_END, passing the kernel's arguments as
// one packed block (NCCL launches this way). Shared by the trace recorder and graph mode.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

namespace pygraph {

struct PackedArgs {
  const void* data = nullptr;
  size_t size = 0;
};

enum class ExtraForm : uint8_t {
  kNone,    // no extra, or only CU_LAUNCH_PARAM_END: the arguments are in kernelParams
  kBuffer,  // a buffer pointer and its size
  kOther,   // anything else: other keys, a pointer or size missing, an unterminated array
};

inline ExtraForm parse_extra(void* const* extra, PackedArgs* out) {
  if (!extra || extra[0] == CU_LAUNCH_PARAM_END) return ExtraForm::kNone;
  const void* data = nullptr;
  const size_t* size = nullptr;
  // The driver knows two keys; a longer array is not one it takes.
  for (int i = 0; i < 8; i += 2) {
    if (extra[i] == CU_LAUNCH_PARAM_END) {
      if (!data || !size) return ExtraForm::kOther;
      out->data = data;
      out->size = *size;
      return ExtraForm::kBuffer;
    }
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
      data = extra[i + 1];
    } else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
      size = static_cast<const size_t*>(extra[i + 1]);
    } else {
      return ExtraForm::kOther;
    }
  }
  return ExtraForm::kOther;
}

}  // namespace pygraph
