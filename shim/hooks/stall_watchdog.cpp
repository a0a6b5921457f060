#include "stall_watchdog.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "../core/log.h"
#include "shim_state.h"

namespace pygraph::hooks {

std::atomic<bool> g_watchdog_started{false};

namespace {

// The check's period (stall_check_ms, 2 by default): long enough that a busy program always
// records something in between (a launch takes microseconds), short enough that a waiting
// program barely notices. 0: no watchdog.
long g_check_ns = 2'000'000;
// While a check finds no recorded work waiting, the next comes twice as late, up to this many
// periods:
// a program whose launches all go out as they come (its sequences decided eager, or next to its
// own graphs) is woken 8 times less often. Each wake of this thread preempts the program on a
// busy core. Work waiting brings the period back at the first check that sees it (which submits
// nothing yet: something was recorded since the check before), so a program that waits without
// CUDA calls after an idle stretch waits at most 8 + 1 periods once.
constexpr long kIdleBackoff = 8;

bool g_stopped = false;  // under the engine lock

void* watch(void*) {
  t_in_hook = true;  // its driver calls are the engine's own: they pass straight through
  uint64_t mark = ~uint64_t(0);
  long sleep_ns = g_check_ns;
  for (;;) {
    timespec t{sleep_ns / 1'000'000'000, sleep_ns % 1'000'000'000};
    nanosleep(&t, nullptr);
    EngineLock lock;
    if (g_stopped) return nullptr;
    const bool pending = shim_engine().flush_if_stalled(&mark);
    sleep_ns = pending ? g_check_ns : std::min(sleep_ns * 2, g_check_ns * kIdleBackoff);
  }
}

}  // namespace

void start_stall_watchdog() {
  if (g_watchdog_started.load(std::memory_order_relaxed) || g_watchdog_started.exchange(true))
    return;
  // The program's signals are never delivered to this thread.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 64 << 10);
  pthread_t thread;
  const int err = pthread_create(&thread, &attr, &watch, nullptr);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (err != 0) {
    log_error(
        "cannot start the stall watchdog thread (error %d): a program that waits for GPU "
        "results without CUDA calls may wait until its next CUDA call",
        err);
  } else {
    pthread_setname_np(thread, "pygraph-watch");
  }
}

void configure_stall_watchdog(unsigned check_ms) {
  g_check_ns = long(check_ms) * 1'000'000;
  stall_watchdog_forked();  // not started yet; with no period, never (ensure_... returns at once)
}

void stop_stall_watchdog() {
  g_stopped = true;
}

void stall_watchdog_forked() {
  g_watchdog_started.store(g_check_ns == 0);  // no period: never started
  g_stopped = false;
}

}  // namespace pygraph::hooks
