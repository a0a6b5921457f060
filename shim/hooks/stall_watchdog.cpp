#include "stall_watchdog.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <atomic>
#include <cstdint>

#include "../core/log.h"
#include "shim_state.h"

namespace pygraph::hooks {
namespace {

// Long enough that a busy program always records something in between (a launch takes
// microseconds), short enough that a waiting program barely notices.
constexpr long kCheckNs = 2'000'000;

std::atomic<bool> g_started{false};
bool g_stopped = false;  // under the engine lock

void* watch(void*) {
  t_in_hook = true;  // its driver calls are the engine's own: they pass straight through
  uint64_t mark = ~uint64_t(0);
  for (;;) {
    timespec t{0, kCheckNs};
    nanosleep(&t, nullptr);
    EngineLock lock;
    if (g_stopped) return nullptr;
    shim_engine().flush_if_stalled(&mark);
  }
}

}  // namespace

void ensure_stall_watchdog() {
  if (g_started.load(std::memory_order_relaxed) || g_started.exchange(true)) return;
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

void stop_stall_watchdog() {
  g_stopped = true;
}

void stall_watchdog_forked() {
  g_started.store(false);
  g_stopped = false;
}

}  // namespace pygraph::hooks
