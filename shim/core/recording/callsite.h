// Call sites of boundary ops (syncs, queries, blocking copies, frees, unloads): a native
// backtrace through libunwind plus, in Python processes, the innermost Python frames.
// Identical call sites share one id, so each is symbolized and written once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pygraph {

class CallSiteTable {
 public:
  // skip_own_module: leave out the innermost frames that lie in the module holding this code
  // (the shim's own frames, when it is built into libpygraph.so).
  explicit CallSiteTable(bool skip_own_module) : skip_own_module_(skip_own_module) {}

  // Captures the caller's call site. Returns its id (never 0); when the site is new,
  // *created is set and *frames holds its symbolized frames, Python first.
  uint32_t capture(bool* created, std::vector<std::string>* frames);

  // Forgets all sites (a new trace starts numbering again).
  void clear();
  // In a forked child, where the lock may have been held by a thread that no longer exists.
  void reset_in_child();

 private:
  bool skip_own_module_;
};

// One native frame as "MODULE!SYMBOL+0xOFF" (or "MODULE+0xOFF" without a symbol).
std::string symbolize_native(uintptr_t ip);
// A C++ symbol or kernel name as source text ("at::native::vectorized_elementwise_kernel<...>"),
// or the name as given when it is not a mangled one: the one demangler of native frames and of
// the kernel names the analyzer shows.
std::string demangle(const char* symbol);

}  // namespace pygraph
