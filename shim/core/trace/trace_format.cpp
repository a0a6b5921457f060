#include "trace/trace_format.h"

namespace pygraph::trace {

const char* door_name(Door door) {
  switch (door) {
    case Door::kExport:
      return "export";
    case Door::kDlsym:
      return "dlsym";
    case Door::kProcAddr:
      return "cuGetProcAddress";
    case Door::kCount:
      break;
  }
  return "unknown";
}

}  // namespace pygraph::trace
