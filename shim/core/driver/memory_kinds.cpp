#include "driver/memory_kinds.h"

#include <cuda.h>

namespace pygraph {

MemKind ask_memory_kind(const DriverApi& api, uint64_t address) {
  if (!api.pointer_get_attribute) return MemKind::kOther;
  unsigned int type = 0;
  const CUresult r = api.pointer_get_attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address);
  // The driver knows every address it allocated or registered; any other host address is
  // ordinary pageable memory.
  if (r == CUDA_ERROR_INVALID_VALUE) return MemKind::kPageable;
  if (r != CUDA_SUCCESS) return MemKind::kOther;
  if (type == CU_MEMORYTYPE_DEVICE) return MemKind::kDevice;
  if (type == CU_MEMORYTYPE_HOST) return MemKind::kPinned;
  return MemKind::kOther;
}

MemKind MemoryKinds::of(uint64_t address) {
  const size_t set = (address ^ (address >> 8) ^ (address >> 16)) % kSets;
  Slot* ways = &slots_[set * kWays];
  Slot* slot = nullptr;  // an empty or outdated way, taken first by a new answer
  for (size_t i = 0; i < kWays; ++i) {
    if (ways[i].generation != generation_) {
      if (!slot) slot = &ways[i];
    } else if (ways[i].address == address) {
      return ways[i].kind;
    }
  }
  ++asked_;
  const MemKind kind = ask_memory_kind(*api_, address);
  // Pinned memory is answered quickly, and it can turn pageable without a call pygraph sees (a
  // primary context released for good takes its pinned memory along): never remembered. An
  // error may be passing: not remembered either.
  if (kind != MemKind::kDevice && kind != MemKind::kPageable) return kind;
  if (!slot) {  // all live: the set's ways in turn, so a step's few operands stay
    slot = &ways[victim_[set]];
    victim_[set] = static_cast<uint8_t>((victim_[set] + 1) % kWays);
  }
  *slot = {address, generation_, kind};
  return kind;
}

}  // namespace pygraph
