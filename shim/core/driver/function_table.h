// What the core knows about each kernel it has seen launched: a stable id, its name and the
// layout of its parameters. Looked up on every launch, so lookups are lock-free probes of a
// fixed open-addressing table; only the first launch of a kernel takes a lock and asks the
// driver.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "driver/driver_api.h"
#include "trace/trace_format.h"

namespace pygraph {

struct FunctionInfo {
  uint32_t id = 0;      // 1-based, in order of first launch
  uint64_t handle = 0;  // CUfunction (or CUkernel) value
  std::string name;     // "" when the driver could not say
  bool is_kernel_handle = false;
  bool params_known = false;
  std::vector<trace::ParamLayout> params;
  uint32_t arg_bytes = 0;  // size of the packed argument block (max offset + size)

  // Copies the values `kernelParams` points to into `out` (arg_bytes bytes, padding zeroed), the
  // block the driver would build. Only for params_known.
  void pack_args(void* const* kernel_params, uint8_t* out) const;
};

class FunctionTable {
 public:
  explicit FunctionTable(const DriverApi* driver) : driver_(driver) {}
  ~FunctionTable();

  // Returns the info for `handle`, creating it on first sight. `created` tells the caller to
  // announce the new function (in the trace). Returns nullptr only when out of memory or full.
  const FunctionInfo* lookup(uint64_t handle, bool* created);
  size_t size() const { return count_.load(std::memory_order_relaxed); }

  // Forgets everything (a new trace numbers kernels again).
  void clear();
  // In a forked child, where the lock may have been held by a thread that no longer exists.
  void reset_in_child();

 private:
  FunctionInfo* describe(uint64_t handle);

  static constexpr size_t kSlots = 1u << 16;  // power of two
  struct Slot {
    std::atomic<uint64_t> key{0};
    std::atomic<FunctionInfo*> info{nullptr};
  };
  const DriverApi* driver_;
  std::atomic<Slot*> slots_{nullptr};
  std::atomic<uint32_t> count_{0};
};

}  // namespace pygraph
