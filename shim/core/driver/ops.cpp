#include "driver/ops.h"

#include <cstring>

namespace pygraph {

const char* op_class_name(OpClass cls) {
  switch (cls) {
    case OpClass::kLaunch:
      return "launch";
    case OpClass::kSync:
      return "sync";
    case OpClass::kQuery:
      return "query";
    case OpClass::kEvent:
      return "event";
    case OpClass::kStreamOrder:
      return "stream-order";
    case OpClass::kCopy:
      return "copy";
    case OpClass::kMemset:
      return "memset";
    case OpClass::kAlloc:
      return "alloc";
    case OpClass::kFree:
      return "free";
    case OpClass::kHostFunc:
      return "host-func";
    case OpClass::kGraphLaunch:
      return "graph-launch";
    case OpClass::kCapture:
      return "capture";
    case OpClass::kUnload:
      return "unload";
    case OpClass::kProcAddr:
      return "proc-addr";
    case OpClass::kContext:
      return "context";
    case OpClass::kExternal:
      return "external";
    case OpClass::kGraphExec:
      return "graph-exec";
  }
  return "unknown";
}

bool op_from_name(const char* name, Op* out) {
  for (int i = 0; i < static_cast<int>(Op::kCount); ++i) {
    if (std::strcmp(kOpInfo[i].name, name) == 0) {
      *out = static_cast<Op>(i);
      return true;
    }
  }
  return false;
}

}  // namespace pygraph
