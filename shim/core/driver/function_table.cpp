#include "driver/function_table.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>

#include "driver/module_unload.h"

namespace pygraph {

void FunctionInfo::size_args() {
  // In 64 bits: a damaged trace's layout must not wrap to a small block whose parameters lie
  // beyond it. One past 32 bits sizes the block at UINT32_MAX, which no launch's bytes reach.
  uint64_t bytes = 0;
  for (const auto& p : params) bytes = std::max(bytes, uint64_t(p.offset) + p.size);
  arg_bytes = static_cast<uint32_t>(std::min<uint64_t>(bytes, UINT32_MAX));
  // Padding: some byte below arg_bytes that no parameter covers (parameters in order without
  // overlap cover exactly their sizes' sum; anything else is zeroed, to be safe).
  uint64_t covered = 0, end = 0;
  bool in_order = true;
  for (const auto& p : params) {
    in_order = in_order && p.offset >= end;
    end = uint64_t(p.offset) + p.size;
    covered += p.size;
  }
  has_padding = !in_order || covered != bytes;
}
namespace {

std::mutex g_insert_mu;  // first sight of a kernel only

// Asks the driver for the parameter layout, one index at a time, until it says "no more".
template <class Handle, class GetInfo>
bool read_params(GetInfo get, Handle h, std::vector<trace::ParamLayout>* out) {
  if (!get) return false;
  for (size_t i = 0; i < 4096; ++i) {
    size_t offset = 0, size = 0;
    CUresult r = get(h, i, &offset, &size);
    if (r == CUDA_ERROR_INVALID_VALUE) return true;  // past the last parameter
    if (r != CUDA_SUCCESS) return false;
    out->push_back({static_cast<uint32_t>(offset), static_cast<uint32_t>(size)});
  }
  return false;
}

}  // namespace

FunctionTable::~FunctionTable() {
  clear();
}

bool waits_for_peers(const std::string& name) {
  // The driver gives the mangled name: _Z, a length, then NCCL's free function's name
  // (_Z29ncclDevKernel_AllReduce_...); extern "C" names come as they are.
  size_t at = 0;
  if (name.rfind("_Z", 0) == 0) {
    at = 2;
    if (at < name.size() && name[at] == 'L') ++at;  // internal linkage
    const size_t digits = at;
    while (at < name.size() && name[at] >= '0' && name[at] <= '9') ++at;
    if (at == digits) return false;  // a nested or special name: not NCCL's kernels
  }
  return name.compare(at, 4, "nccl") == 0;
}

FunctionInfo* FunctionTable::describe(uint64_t handle) {
  auto* info = new (std::nothrow) FunctionInfo;
  if (!info) return nullptr;
  info->handle = handle;
  const char* name = nullptr;
  auto f = reinterpret_cast<CUfunction>(handle);
  auto k = reinterpret_cast<CUkernel>(handle);
  // CUDA 13's runtime may hand the driver a CUkernel where a CUfunction belongs; the driver
  // accepts both, and so must we. A handle whose function name the driver refuses is tried as
  // a kernel.
  if (driver_->func_get_name && driver_->func_get_name(&name, f) == CUDA_SUCCESS) {
    info->params_known = read_params(driver_->func_get_param_info, f, &info->params);
  } else if (driver_->kernel_get_name && driver_->kernel_get_name(&name, k) == CUDA_SUCCESS) {
    info->is_kernel_handle = true;
    info->params_known = read_params(driver_->kernel_get_param_info, k, &info->params);
  } else {
    info->params_known = read_params(driver_->func_get_param_info, f, &info->params);
  }
  // Its module, so that an unload of another module keeps it (module_unload.h).
  if (info->is_kernel_handle) {
    CUlibrary lib = nullptr;
    if (driver_->kernel_get_library && driver_->kernel_get_library(&lib, k) == CUDA_SUCCESS) {
      info->module = reinterpret_cast<uint64_t>(lib);
    }
  } else {
    CUmodule mod = nullptr;
    if (driver_->func_get_module && driver_->func_get_module(&mod, f) == CUDA_SUCCESS) {
      info->module = reinterpret_cast<uint64_t>(mod);
    }
  }
  CUcontext ctx = nullptr;
  if (driver_->ctx_get_current && driver_->ctx_get_current(&ctx) == CUDA_SUCCESS) {
    info->context = reinterpret_cast<uint64_t>(ctx);
  }
  if (name) info->name = name;
  info->waits_for_peers = waits_for_peers(info->name);
  if (!info->params_known) info->params.clear();
  info->size_args();
  return info;
}

const FunctionInfo* FunctionTable::lookup_probe(uint64_t handle, bool* created) {
  *created = false;
  Slot* slots = slots_.load(std::memory_order_acquire);
  if (__builtin_expect(slots != nullptr, 1)) {
    for (size_t i = hash_handle(handle), n = 0; n < kSlots; ++i, ++n) {
      Slot& s = slots[i & (kSlots - 1)];
      uint64_t key = s.key.load(std::memory_order_acquire);
      if (key == handle) return s.info.load(std::memory_order_relaxed);
      if (key == 0) break;
    }
  }
  // First launch of this kernel: describe it and publish it (info first, then key).
  std::lock_guard<std::mutex> lock(g_insert_mu);
  slots = slots_.load(std::memory_order_acquire);
  if (!slots) {
    slots = new (std::nothrow) Slot[kSlots];
    if (!slots) return nullptr;
    slots_.store(slots, std::memory_order_release);
  }
  if (used_ >= kSlots * 3 / 4) {  // keep probes short
    if (forgotten_slots_ < kSlots / 4) return nullptr;
    rebuild();
    slots = slots_.load(std::memory_order_acquire);
    if (!slots || used_ >= kSlots * 3 / 4) return nullptr;
  }
  for (size_t i = hash_handle(handle);; ++i) {
    Slot& s = slots[i & (kSlots - 1)];
    uint64_t key = s.key.load(std::memory_order_acquire);
    if (key == handle) return s.info.load(std::memory_order_relaxed);
    if (key != 0) continue;
    FunctionInfo* info = describe(handle);
    if (!info) return nullptr;
    info->id = ids_.fetch_add(1) + 1;
    s.info.store(info, std::memory_order_relaxed);
    s.key.store(handle, std::memory_order_release);
    ++used_;
    *created = true;
    return info;
  }
}

void FunctionTable::rebuild() {
  Slot* old = slots_.load(std::memory_order_acquire);
  auto* fresh = new (std::nothrow) Slot[kSlots];
  if (!old || !fresh) return;  // out of memory: the table stays full
  uint32_t live = 0;
  for (size_t i = 0; i < kSlots; ++i) {
    const uint64_t key = old[i].key.load(std::memory_order_relaxed);
    FunctionInfo* info = old[i].info.load(std::memory_order_relaxed);
    if (key == 0 || key == kForgotten || !info) continue;
    for (size_t j = hash_handle(key);; ++j) {
      Slot& s = fresh[j & (kSlots - 1)];
      if (s.key.load(std::memory_order_relaxed) != 0) continue;
      s.info.store(info, std::memory_order_relaxed);
      s.key.store(key, std::memory_order_relaxed);
      break;
    }
    ++live;
  }
  // Release: a lookup that loads the new array sees its keys and infos. One that loaded the old
  // array before reads it on, as it would have without the rebuild (it is never freed before
  // clear()).
  slots_.store(fresh, std::memory_order_release);
  retired_.push_back(old);
  used_ = live;
  forgotten_slots_ = 0;
}

size_t FunctionTable::forget(const ModuleUnload& unload) {
  std::lock_guard<std::mutex> lock(g_insert_mu);
  Slot* slots = slots_.load(std::memory_order_acquire);
  if (!slots) return 0;
  size_t n = 0;
  for (size_t i = 0; i < kSlots; ++i) {
    Slot& s = slots[i];
    const uint64_t key = s.key.load(std::memory_order_relaxed);
    FunctionInfo* info = s.info.load(std::memory_order_relaxed);
    if (key == 0 || key == kForgotten || !info || !may_belong(*info, unload)) continue;
    // Key first: a lookup that still sees the old key reads the old info or null (then the
    // launch is one of an unknown kernel), never another kernel's.
    s.key.store(kForgotten, std::memory_order_release);
    s.info.store(nullptr, std::memory_order_release);
    forgotten_.push_back(info);
    ++forgotten_slots_;
    ++n;
  }
  return n;
}

void FunctionTable::reset_in_child() {
  new (&g_insert_mu) std::mutex;
}

void FunctionTable::clear() {
  std::lock_guard<std::mutex> lock(g_insert_mu);
  for (FunctionInfo* info : forgotten_) delete info;
  forgotten_.clear();
  for (Slot* old : retired_) delete[] old;  // their live infos are the current array's too
  retired_.clear();
  used_ = forgotten_slots_ = 0;
  ids_ = 0;
  Slot* slots = slots_.exchange(nullptr);
  if (!slots) return;
  for (size_t i = 0; i < kSlots; ++i) delete slots[i].info.load();
  delete[] slots;
}

}  // namespace pygraph
