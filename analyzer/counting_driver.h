// A driver for running graph mode's engine offline over a trace (`simulate`): graph calls
// succeed and are counted, launches and memops are counted instead of run, and what memory an
// address is comes from the allocations the trace recorded. The engine itself is the one the
// shim runs: nothing of its policy is written again here.
#pragma once

#include <cstdint>
#include <map>

#include "driver/driver_api.h"
#include "driver/ops.h"
#include "trace/trace_format.h"

namespace pygraph::analyze {

struct DriverCounts {
  uint64_t eager_launches = 0, eager_memops = 0, eager_event_ops = 0;
  uint64_t graphs_instantiated = 0, graph_launches = 0, node_updates = 0;
};

class CountingDriver {
 public:
  CountingDriver();
  ~CountingDriver();
  const DriverApi& api() const { return api_; }
  // The entry points an EngineLaunch/MemopCall names as its eager call.
  void* launch_entry() const;
  void* launch_ex_entry() const;
  void* memop_entry(Op op) const;
  // An EventCall's (event record, record with flags, stream wait).
  void* event_entry(Op op) const;

  // Address ranges from the trace's allocations: device memory and pinned host memory; any
  // other address is pageable host memory.
  void device_alloc(uint64_t ptr, uint64_t bytes) { ranges_[ptr] = {bytes, kDevice}; }
  void pinned_alloc(uint64_t ptr, uint64_t bytes) { ranges_[ptr] = {bytes, kPinned}; }
  void release(uint64_t ptr) { ranges_.erase(ptr); }
  // What the traced process's driver said of an address (trace format 2, memops): answered
  // instead of the ranges until forget_kinds(), so the engine classifies as graph mode did.
  void set_kind(uint64_t ptr, trace::MemoryKind kind) {
    if (kind != trace::MemoryKind::kUnknown) kinds_[ptr] = kind;
  }
  void forget_kinds() { kinds_.clear(); }

  static const DriverCounts& counts();

 private:
  enum Kind { kDevice, kPinned };
  struct Range {
    uint64_t bytes;
    Kind kind;
  };
  static CUresult pointer_attribute(void* data, CUpointer_attribute attr, CUdeviceptr ptr);

  DriverApi api_;
  std::map<uint64_t, Range> ranges_;
  std::map<uint64_t, trace::MemoryKind> kinds_;
};

}  // namespace pygraph::analyze
