// Which thread calls: the engine compares it with the thread that began a chunk (a launch from
// another thread must check its current context) and that a loop ran on (loop_resume.h).
//
// A number per thread, given at its first call from a process-wide counter and never reused.
// Not the address of a thread-local (as before session 20): a thread started after another
// ended gets the ended one's thread-local block, so it was taken for that thread (a review
// found it; thread_id_test). One thread-local load and a compare on the launch path, with no
// system call.
#pragma once

#include <atomic>
#include <cstdint>

namespace pygraph {

inline std::atomic<uint64_t> g_thread_ids{0};

inline const void* thread_id() {
  // initial-exec: no __tls_get_addr call on the launch path (libpygraph.so is preloaded, so its
  // TLS is in the static block, as for the hooks' own t_in_hook).
  static thread_local uint64_t id __attribute__((tls_model("initial-exec"))) = 0;
  if (__builtin_expect(id == 0, 0)) id = g_thread_ids.fetch_add(1, std::memory_order_relaxed) + 1;
  return reinterpret_cast<const void*>(id);
}

}  // namespace pygraph
