// Process-wide state of the shim: initialized on the first CUDA call through any door, never
// before, so processes that do not use CUDA never see pygraph at all.
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include "../core/graph/graph_engine.h"
#include "../core/options/config.h"
#include "../core/recording/recorder.h"
#include "engine_lock.h"

namespace pygraph::hooks {

extern std::atomic<int> g_init_state;  // 0 new, 1 initializing, 2 ready
extern Mode g_mode;                    // valid once ready

inline bool shim_ready() {
  return g_init_state.load(std::memory_order_acquire) == 2;
}

// Reads the config, finds the driver, opens the trace. Returns false if no driver is loaded.
// Re-entrant calls during initialization (and other threads meanwhile) see false.
bool shim_init();

Recorder& shim_recorder_slow();
// Set once the recorder exists (never destroyed): the launch path reads it without a guard.
extern std::atomic<Recorder*> g_recorder;
inline Recorder& shim_recorder() {
  Recorder* r = g_recorder.load(std::memory_order_acquire);
  if (__builtin_expect(r != nullptr, 1)) return *r;
  return shim_recorder_slow();
}

// The driver's entry points the core calls (filled by shim_init).
const DriverApi& shim_driver_api();

// Graph mode's engine (valid once ready in graph mode) and the lock every call into it holds.
// The lock is held for the engine's bookkeeping and its submissions, never around a program's
// own blocking call.
extern GraphEngine* g_engine;
inline GraphEngine& shim_engine() {
  return *g_engine;
}
extern EngineMutex g_engine_mutex;
struct EngineLock {
  EngineLock() { g_engine_mutex.lock(); }
  ~EngineLock() { g_engine_mutex.unlock(); }
};

// Writes the stats document (docs/stats-format.md) as the counters stand now to `destination`:
// "stderr", or a path in which %p becomes the process id. Returns false with the cause logged,
// the destination named after `what` ("PYGRAPH_STATS="). Before the shim is ready (no CUDA call
// yet): zero counts in the mode the environment asks for. Flushes nothing.
bool write_stats_now(const std::string& destination, const char* what);

// PYGRAPH_STATS (read from the environment if the shim is not ready yet); empty: none.
std::string stats_destination();

// libcuda's handle and its real dlsym, bypassing our own dlsym hook.
void* driver_handle();
void* real_dlsym(void* handle, const char* name);

// Set while a thread is inside a wrapper, so driver calls made from inside pass straight
// through (the core asks the driver about kernels; a driver may call its own exports).
extern thread_local constinit bool t_in_hook __attribute__((tls_model("initial-exec")));

}  // namespace pygraph::hooks
