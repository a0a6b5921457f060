#include "entry_points.h"

#include <cstring>

#include "../core/log.h"
#include "handlers.h"
#include "shim_state.h"

namespace pygraph::hooks {

std::atomic<void*> g_real[kRowCount][static_cast<int>(Door::kCount)];

namespace {

template <int R, Door D, class PFN>
struct Entry;

template <int R, Door D, class... A>
struct Entry<R, D, CUresult(CUDAAPI*)(A...)> {
  static CUresult CUDAAPI call(A... a) {
    using Fn = CUresult(CUDAAPI*)(A...);
    if (__builtin_expect(!shim_ready(), 0)) {
      if (!shim_init()) return CUDA_ERROR_NOT_INITIALIZED;  // no driver in this process
    }
    auto real =
        reinterpret_cast<Fn>(g_real[R][static_cast<int>(D)].load(std::memory_order_relaxed));
    if (__builtin_expect(!real, 0)) return CUDA_ERROR_NOT_FOUND;  // symbol absent in this driver
    if constexpr (op_info(kRows[R].op).cls == OpClass::kLaunch) {
      return dispatch_inline<kRows[R].op, kRows[R].per_thread>(real, D, a...);
    } else {
      return dispatch<kRows[R].op, kRows[R].per_thread>(real, D, a...);
    }
  }
};

constexpr int kDoors = static_cast<int>(Door::kCount);

void* const kWrappers[kRowCount][kDoors] = {
#define HOOK(sym, op, since, per_thread, pfn)                             \
  {reinterpret_cast<void*>(&Entry<kRow_##sym, Door::kExport, pfn>::call), \
   reinterpret_cast<void*>(&Entry<kRow_##sym, Door::kDlsym, pfn>::call),  \
   reinterpret_cast<void*>(&Entry<kRow_##sym, Door::kProcAddr, pfn>::call)},
#include "hook_table.def"
#undef HOOK
};

}  // namespace

// The export door: libpygraph.so exports every row's symbol. Each export is a two-instruction
// trampoline into its wrapper, through a pointer that is constant-initialized (a relocation, no
// constructor), so a call that arrives before our constructors ran is still served.
#define HOOK(sym, op, since, per_thread, pfn)                                \
  extern "C" __attribute__((visibility("hidden"))) pfn pygraph_target_##sym; \
  pfn pygraph_target_##sym = &Entry<kRow_##sym, Door::kExport, pfn>::call;
#include "hook_table.def"
#undef HOOK

#if defined(__x86_64__)
#define HOOK(sym, op, since, per_thread, pfn)                               \
  asm(".text\n.globl " #sym "\n.type " #sym ",@function\n.p2align 4\n" #sym \
      ":\n\tendbr64\n\tjmp *pygraph_target_" #sym "(%rip)\n.size " #sym ", .-" #sym "\n");
#elif defined(__aarch64__)
#define HOOK(sym, op, since, per_thread, pfn)                                               \
  asm(".text\n.globl " #sym "\n.type " #sym ",%function\n.p2align 4\n" #sym                 \
      ":\n\tadrp x16, pygraph_target_" #sym "\n\tldr x16, [x16, :lo12:pygraph_target_" #sym \
      "]\n\tbr x16\n.size " #sym ", .-" #sym "\n");
#else
#error "pygraph's export trampolines support x86-64 and aarch64"
#endif
#include "hook_table.def"
#undef HOOK

int row_by_symbol(const char* symbol) {
  for (int r = 0; r < kRowCount; ++r) {
    if (std::strcmp(kRows[r].symbol, symbol) == 0) return r;
  }
  return -1;
}

int row_for_proc_address(const char* symbol, int cuda_version, cuuint64_t flags) {
  Op op;
  // From CUDA 12.0 on, "cuGraphInstantiate" is handed out with cuGraphInstantiateWithFlags's
  // ABI (cuda.h defines the one as the other); the older five-argument ABI before.
  if (cuda_version >= 12000 && std::strcmp(symbol, "cuGraphInstantiate") == 0) {
    symbol = "cuGraphInstantiateWithFlags";
  }
  if (!op_from_name(symbol, &op)) return -1;
  const bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  // The newest ABI the caller's version asks for; a per-thread request falls back to the legacy
  // row for functions that have no per-thread variant (cuEventSynchronize, cuMemAlloc, ...).
  for (int pass = per_thread ? 0 : 1; pass < 2; ++pass) {
    const bool want = pass == 0;
    int best = -1;
    for (int r = 0; r < kRowCount; ++r) {
      if (kRows[r].op == op && kRows[r].per_thread == want && kRows[r].since <= cuda_version &&
          (best < 0 || kRows[r].since > kRows[best].since)) {
        best = r;
      }
    }
    if (best >= 0) return best;
  }
  return -1;
}

void* wrapper(int row, Door door) {
  return kWrappers[row][static_cast<int>(door)];
}

void* wrap(int row, Door door, void* real) {
  auto& slot = g_real[row][static_cast<int>(door)];
  void* expected = nullptr;
  if (slot.compare_exchange_strong(expected, real) || expected == real) return wrapper(row, door);
  // One wrapper per (row, door) can forward to one pointer only.
  shim_recorder().count_unwrapped();
  log_debug("%s: a second driver pointer for door %s is handed out unwrapped", kRows[row].symbol,
            trace::door_name(door));
  return real;
}

}  // namespace pygraph::hooks
