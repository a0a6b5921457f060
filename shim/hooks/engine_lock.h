// The lock every call into graph mode's engine holds. A test-and-test-and-set lock: taking it
// uncontended is one atomic exchange and releasing it one plain store, cheaper than a mutex on
// the launch path (the lock is taken once per launch). Contention is rare (PyTorch's backward
// thread and its main thread take turns); a waiter spins briefly, then yields the CPU, since
// the holder may be submitting a graph (microseconds).
#pragma once

#include <sched.h>

#include <atomic>

namespace pygraph::hooks {

class EngineMutex {
 public:
  void lock() {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      for (int spins = 0; locked_.load(std::memory_order_relaxed); ++spins) {
        if (spins < 64) {
          cpu_relax();
        } else {
          sched_yield();
        }
      }
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }
  // In a fork child, where the thread that held it no longer exists.
  void reset() { locked_.store(false, std::memory_order_relaxed); }

 private:
  static void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
  std::atomic<bool> locked_{false};
};

}  // namespace pygraph::hooks
