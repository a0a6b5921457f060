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

const char* decision_verdict_name(DecisionVerdict v) {
  switch (v) {
    case DecisionVerdict::kMeasuring:
      return "measuring";
    case DecisionVerdict::kGraph:
      return "graph";
    case DecisionVerdict::kEager:
      return "eager";
    case DecisionVerdict::kCount:
      break;
  }
  return "unknown";
}

const char* decision_source_name(DecisionSource s) {
  switch (s) {
    case DecisionSource::kMeasured:
      return "measured";
    case DecisionSource::kCached:
      return "cached";
    case DecisionSource::kConfig:
      return "config";
    case DecisionSource::kCount:
      break;
  }
  return "unknown";
}

}  // namespace pygraph::trace
