// Graph mode holds recorded launches back until something needs them. A program may wait for
// their results without any CUDA call (spinning on mapped host memory a kernel writes, or on a
// flag a host function sets): it would wait forever. A background thread, started with the
// first launch in graph mode, checks every few milliseconds and submits recorded work when the
// program recorded nothing new since its previous check (GraphEngine::flush_if_stalled).
#pragma once

#include <atomic>

namespace pygraph::hooks {

// Before the first launch (shim_init): the check's period in ms (stall_check_ms); 0: the thread
// never starts.
void configure_stall_watchdog(unsigned check_ms);

// Idempotent and cheap (one relaxed load, inline) once started; call after a launch in graph
// mode.
extern std::atomic<bool> g_watchdog_started;
void start_stall_watchdog();
inline void ensure_stall_watchdog() {
  if (__builtin_expect(!g_watchdog_started.load(std::memory_order_relaxed), 0)) {
    start_stall_watchdog();
  }
}

// The thread stops at its next check (process exit). Call under the engine lock.
void stop_stall_watchdog();

// In a fork child: the thread did not survive the fork; the child starts its own when needed.
void stall_watchdog_forked();

}  // namespace pygraph::hooks
