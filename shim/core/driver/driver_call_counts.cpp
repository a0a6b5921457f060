#include "driver/driver_call_counts.h"

#include <time.h>

#include <atomic>
#include <cstddef>

namespace pygraph {
namespace {

// Every entry of DriverApi, in order (the static_assert below catches one added there only).
#define PYGRAPH_DRIVER_ENTRIES(X)                                                                  \
  X(func_get_name)                                                                                 \
  X(func_get_param_info) X(kernel_get_name) X(kernel_get_param_info) X(func_get_module)            \
      X(kernel_get_library) X(library_get_module) X(graph_create) X(graph_add_kernel_node)         \
          X(graph_instantiate) X(graph_kernel_node_set_attribute)                                  \
              X(graph_exec_kernel_node_set_params) X(graph_add_memset_node)                        \
                  X(graph_add_memcpy_node) X(graph_exec_memset_node_set_params)                    \
                      X(graph_exec_memcpy_node_set_params) X(graph_launch)                         \
                          X(graph_add_event_record_node) X(graph_exec_event_record_node_set_event) \
                              X(stream_wait_event) X(stream_get_flags) X(graph_exec_destroy)       \
                                  X(graph_destroy) X(ctx_get_current) X(ctx_push_current)          \
                                      X(ctx_pop_current) X(pointer_get_attribute)                  \
                                          X(mem_host_alloc) X(event_create) X(event_record)        \
                                              X(event_query) X(event_destroy) X(ctx_get_device)    \
                                                  X(device_get_name) X(driver_get_version)

enum Entry : size_t {
#define PYGRAPH_ENTRY_ENUM(name) k_##name,
  PYGRAPH_DRIVER_ENTRIES(PYGRAPH_ENTRY_ENUM)
#undef PYGRAPH_ENTRY_ENUM
      kEntries
};
static_assert(sizeof(DriverApi) == kEntries * sizeof(void*),
              "an entry of DriverApi is missing from PYGRAPH_DRIVER_ENTRIES");

constexpr const char* kNames[kEntries] = {
#define PYGRAPH_ENTRY_NAME(name) #name,
    PYGRAPH_DRIVER_ENTRIES(PYGRAPH_ENTRY_NAME)
#undef PYGRAPH_ENTRY_NAME
};

struct Counter {
  std::atomic<uint64_t> calls{0}, ns{0};
};
Counter g_counters[kEntries];
std::atomic<bool> g_on{false};

uint64_t now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return uint64_t(t.tv_sec) * 1'000'000'000u + uint64_t(t.tv_nsec);
}

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
#define PYGRAPH_ENTRY_WRAP(name) wrap<k_##name>(api->name);
  PYGRAPH_DRIVER_ENTRIES(PYGRAPH_ENTRY_WRAP)
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
