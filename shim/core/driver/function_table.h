// What the core knows about each kernel it has seen launched: a stable id, its name, the layout
// of its parameters and its module. Looked up on every launch, so lookups are lock-free probes of
// a fixed open-addressing table; only the first launch of a kernel takes a lock and asks the
// driver. A module unload forgets the module's kernels (forget): their handles may come back for
// other kernels, which are then described anew, with new ids.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "driver/driver_api.h"
#include "trace/trace_format.h"

namespace pygraph {

struct ModuleUnload;  // module_unload.h

// Whether a kernel of this name (as the driver gives it: mangled) waits for its peers in other
// processes: NCCL's kernels (ncclDevKernel_*, ncclKernel_*, the symmetric ncclSymk*), whose
// collectives every rank must reach before any finishes.
bool waits_for_peers(const std::string& name);

struct FunctionInfo {
  uint32_t id = 0;      // 1-based, in order of first launch
  uint64_t handle = 0;  // CUfunction (or CUkernel) value
  std::string name;     // "" when the driver could not say
  bool is_kernel_handle = false;
  bool params_known = false;
  // The CUmodule of a CUfunction, the CUlibrary of a CUkernel (0: the driver could not say), and
  // the context current when it was described (module_unload.h).
  uint64_t module = 0;
  uint64_t context = 0;
  std::vector<trace::ParamLayout> params;
  uint32_t arg_bytes = 0;  // size of the packed argument block (max offset + size)
  // Layout unknown: the packed-argument size this kernel last launched with, eagerly and
  // without error. Graph mode records only that size: the driver refuses a block larger than
  // the kernel's parameters, and a recorded launch could not report that. Written by the
  // engine under its lock.
  mutable uint32_t packed_size_ok = 0;

  // A communication kernel (NCCL's, by its name): it runs in step with kernels of other
  // processes, which wait for it while it waits on this side (waits_for_peers()).
  bool waits_for_peers = false;

  // Whether the layout leaves bytes no parameter covers (padding), which pack_args zeroes.
  // True until size_args has looked: a hand-made info always zeroes.
  bool has_padding = true;

  // arg_bytes (and has_padding) from `params` (the driver's layout, or a trace's record of it).
  void size_args();
  // Copies the values `kernelParams` points to into `out` (arg_bytes bytes, padding zeroed), the
  // block the driver would build. Only for params_known. Inline: on the launch path, where
  // parameters are mostly 4 or 8 bytes (no call into libc for each).
  void pack_args(void* const* kernel_params, uint8_t* out) const {
    if (has_padding) std::memset(out, 0, arg_bytes);
    const trace::ParamLayout* p = params.data();
    for (size_t i = 0, n = params.size(); i < n; ++i) {
      uint8_t* dst = out + p[i].offset;
      const void* src = kernel_params[i];
      switch (p[i].size) {
        case 8:
          std::memcpy(dst, src, 8);
          break;
        case 4:
          std::memcpy(dst, src, 4);
          break;
        case 16:
          std::memcpy(dst, src, 16);
          break;
        case 2:
          std::memcpy(dst, src, 2);
          break;
        case 1:
          std::memcpy(dst, src, 1);
          break;
        default:
          std::memcpy(dst, src, p[i].size);
          break;
      }
    }
  }
};

class FunctionTable {
 public:
  explicit FunctionTable(const DriverApi* driver) : driver_(driver) {}
  ~FunctionTable();

  // Returns the info for `handle`, creating it on first sight. `created` tells the caller to
  // announce the new function (in the trace). Returns nullptr when out of memory or full, and
  // while a racing forget() drops the handle's info.
  // Inline: the launch path's lookup of a kernel seen before, whose slot is the first probed,
  // costs no call; anything else goes on in lookup_probe.
  const FunctionInfo* lookup(uint64_t handle, bool* created) {
    const Slot* slots = slots_.load(std::memory_order_acquire);
    if (__builtin_expect(slots != nullptr, 1)) {
      const Slot& s = slots[hash_handle(handle) & (kSlots - 1)];
      if (s.key.load(std::memory_order_acquire) == handle) {
        *created = false;
        return s.info.load(std::memory_order_relaxed);
      }
    }
    return lookup_probe(handle, created);
  }
  size_t size() const { return ids_.load(std::memory_order_relaxed); }  // infos ever created

  // A module or library is unloaded: the kernels that may be its own (module_unload.h) are
  // forgotten, so that their handles are described again, with new ids, at their next launch.
  // Their infos stay valid (callers may hold them) until clear(). Returns how many went.
  size_t forget(const ModuleUnload& unload);

  // Forgets everything (a new trace numbers kernels again).
  void clear();
  // In a forked child, where the lock may have been held by a thread that no longer exists.
  void reset_in_child();

 private:
  static size_t hash_handle(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return static_cast<size_t>(h);
  }
  const FunctionInfo* lookup_probe(uint64_t handle, bool* created);
  FunctionInfo* describe(uint64_t handle);
  // Under the insert lock: a fresh array holding the live entries, published in place of the
  // current one, which is retired (a lookup may still probe it) until clear().
  void rebuild();

  static constexpr size_t kSlots = 1u << 16;  // power of two
  // The key of a forgotten handle's slot: never a handle, never empty, so lookups probe past it
  // (no extra work on the launch path) and the slot is never taken again in this array (a
  // reader that saw the old key may still read the slot's info: it must not become another
  // kernel's). When forgotten slots pass a quarter of the table and it fills, it is rebuilt
  // without them, so that a long run that loads and unloads modules (autotuners) never fills it.
  static constexpr uint64_t kForgotten = ~uint64_t(0);
  struct Slot {
    std::atomic<uint64_t> key{0};
    std::atomic<FunctionInfo*> info{nullptr};
  };
  const DriverApi* driver_;
  std::atomic<Slot*> slots_{nullptr};
  std::atomic<uint32_t> ids_{0};  // infos created, forgotten ones included: the last id
  // Under the insert lock: slots of the current array with a key (forgotten ones included) and
  // of those the forgotten; infos forgotten and arrays retired, deleted by clear().
  uint32_t used_ = 0;
  uint32_t forgotten_slots_ = 0;
  std::vector<FunctionInfo*> forgotten_;
  std::vector<Slot*> retired_;
};

}  // namespace pygraph
