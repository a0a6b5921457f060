// What memory an address is, as far as graph nodes care: the driver is asked
// (cuPointerGetAttribute, memory type) and its answer is remembered per address until the
// program next allocates, maps, registers, unregisters or frees memory (changed()), since only
// those change what an address is. Graph mode asks for both operands of every async copy and
// the destination of every memset, and the driver is slow to answer for pageable memory: 0.6-1.1
// us in a small program, about 8 us in a PyTorch process (H200, session 9: a step that builds
// two small tensors on the host spent 17 us per iteration asking; tests/gpu/op_cost.cu).
// Device and pageable answers only: pinned memory is answered in 50-80 ns, and it can turn
// pageable without a call pygraph sees (cuDevicePrimaryCtxRelease of the last reference).
// Exact addresses, never pages: a registered range may share a page with pageable bytes, and a
// pinned source taken for pageable would be snapshotted at the call instead of read in stream
// order. Four ways to a set: any four operands are remembered together wherever they lie (one
// slot per address hash left two that shared it asking at every use; which two depended on the
// process's memory layout: session 37).
#pragma once

#include <array>
#include <cstdint>

#include "driver/driver_api.h"

namespace pygraph {

enum class MemKind : uint8_t { kDevice = 1, kPinned, kPageable, kOther };

// The driver's answer, asked now (what MemoryKinds remembers; trace mode's recorder asks it for
// every memop it records, from any thread).
MemKind ask_memory_kind(const DriverApi& api, uint64_t address);

class MemoryKinds {
 public:
  explicit MemoryKinds(const DriverApi* api) : api_(api) {}

  MemKind of(uint64_t address);
  // The program allocated, mapped, registered, unregistered or freed memory: every answer may
  // be out of date.
  void changed() { ++generation_; }
  uint64_t asked() const { return asked_; }  // driver queries made (the rest were remembered)

 private:
  struct Slot {
    uint64_t address = 0;
    uint64_t generation = 0;  // 0: empty
    MemKind kind = MemKind::kOther;
  };
  static constexpr size_t kWays = 4, kSets = 64;
  const DriverApi* api_;
  std::array<Slot, kWays * kSets> slots_{};
  std::array<uint8_t, kSets> victim_{};  // per set: the way a new answer takes when all are live
  uint64_t generation_ = 1;
  uint64_t asked_ = 0;
};

}  // namespace pygraph
