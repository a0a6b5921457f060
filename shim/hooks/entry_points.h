// The wrappers the shim hands out for driver entry points, generated from hook_table.def.
//
// A wrapper exists per (row, door): Entry<row, door, PFN>::call has exactly the ABI of the
// row's PFN type and forwards to the real driver pointer stored for that row and door, so the
// same function reached through different doors is counted per door, and a wrapper never
// guesses which driver function it stands for.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <atomic>

#include "../core/driver/ops.h"
#include "../core/trace/trace_format.h"

namespace pygraph::hooks {

using trace::Door;

// ABIs that cudaTypedefs.h declares only for the driver's own build, still handed out to callers
// that ask cuGetProcAddress for an old version.
typedef CUresult(CUDAAPI* PFN_legacy_cuStreamBeginCapture_v10000)(CUstream hStream);
typedef CUresult(CUDAAPI* PFN_legacy_cuGraphInstantiate_v10000)(CUgraphExec* phGraphExec,
                                                                CUgraph hGraph,
                                                                CUgraphNode* phErrorNode,
                                                                char* logBuffer, size_t bufferSize);

enum Row : int {
#define HOOK(sym, op, since, per_thread, pfn) kRow_##sym,
#include "hook_table.def"
#undef HOOK
  kRowCount
};

struct RowInfo {
  const char* symbol;
  Op op;
  int since;
  bool per_thread;
};

inline constexpr RowInfo kRows[] = {
#define HOOK(sym, op, since, per_thread, pfn) {#sym, Op::op, since, per_thread != 0},
#include "hook_table.def"
#undef HOOK
};

// The driver's own pointer for each row, per door; null until handed out through that door.
extern std::atomic<void*> g_real[kRowCount][static_cast<int>(Door::kCount)];

// Row whose exported symbol is `symbol`, or -1.
int row_by_symbol(const char* symbol);

// Row that cuGetProcAddress(`symbol`, version, flags) stands for, or -1 (see hook_table.def).
int row_for_proc_address(const char* symbol, int cuda_version, cuuint64_t flags);

// Our wrapper for `row` at `door`.
void* wrapper(int row, Door door);

// Stores the driver's pointer for (row, door) and returns our wrapper, or returns `real` itself
// (counted as unwrapped) when another pointer is already stored there.
void* wrap(int row, Door door, void* real);

}  // namespace pygraph::hooks
