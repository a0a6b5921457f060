#include "driver/driver_call_counts.h"

#include <atomic>
#include <cstddef>

#include "trace/trace_writer.h"  // now_ns

namespace pygraph {
namespace {

enum Entry : size_t {
#define PYGRAPH_ENTRY_ENUM(name, symbol) k_##name,
  PYGRAPH_DRIVER_API_ENTRIES(PYGRAPH_ENTRY_ENUM)
#undef PYGRAPH_ENTRY_ENUM
      kEntries
};
static_assert(sizeof(DriverApi) == kEntries * sizeof(void*),
              "an entry of DriverApi is missing from PYGRAPH_DRIVER_API_ENTRIES");

constexpr const char* kNames[kEntries] = {
#define PYGRAPH_ENTRY_NAME(name, symbol) #name,
    PYGRAPH_DRIVER_API_ENTRIES(PYGRAPH_ENTRY_NAME)
#undef PYGRAPH_ENTRY_NAME
};

struct Counter {
  std::atomic<uint64_t> calls{0}, ns{0};
};
Counter g_counters[kEntries];
std::atomic<bool> g_on{false};

// One wrapper per entry: the real pointer is its own static.
template <size_t I, class R, class... A>
struct Counted {
  static inline R (*real)(A...) = nullptr;
  static R call(A... a) {
    const uint64_t t0 = now_ns();
    const R r = real(a...);
    g_counters[I].ns.fetch_add(now_ns() - t0, std::memory_order_relaxed);
    g_counters[I].calls.fetch_add(1, std::memory_order_relaxed);
    return r;
  }
};

template <size_t I, class R, class... A>
void wrap(R (*&entry)(A...)) {
  if (!entry) return;
  Counted<I, R, A...>::real = entry;
  entry = &Counted<I, R, A...>::call;
}

}  // namespace

bool count_driver_calls(DriverApi* api) {
  if (g_on.exchange(true)) return false;
#define PYGRAPH_ENTRY_WRAP(name, symbol) wrap<k_##name>(api->name);
  PYGRAPH_DRIVER_API_ENTRIES(PYGRAPH_ENTRY_WRAP)
#undef PYGRAPH_ENTRY_WRAP
  return true;
}

std::vector<DriverCallCount> driver_call_counts() {
  std::vector<DriverCallCount> out;
  if (!g_on.load()) return out;
  for (size_t i = 0; i < kEntries; ++i) {
    const uint64_t calls = g_counters[i].calls.load(std::memory_order_relaxed);
    if (calls) out.push_back({kNames[i], calls, g_counters[i].ns.load(std::memory_order_relaxed)});
  }
  return out;
}

}  // namespace pygraph
