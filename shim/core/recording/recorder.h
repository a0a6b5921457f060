// The recording core: what the hooks hand over for each launch and op, turned into trace
// records. Driver-agnostic: it sees plain values and calls the driver only through DriverApi.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>

#include "driver/driver_api.h"
#include "driver/function_table.h"
#include "driver/launch_call.h"
#include "driver/ops.h"
#include "options/config.h"
#include "recording/callsite.h"
#include "trace/trace_format.h"
#include "trace/trace_writer.h"

namespace pygraph {

struct OpCall {
  Op op;
  trace::Door door;
  uint64_t stream = 0;
  uint64_t handle = 0;
  uint64_t ptr = 0;
  uint64_t bytes = 0;
  // Async memsets and 1-D copies (memop_call.h): the operands the first-of-each-type fields
  // miss, written as a MemopDetail (trace format 2) so that `simulate` sees what graph mode saw.
  bool memop = false;
  uint64_t src = 0;    // copies
  uint32_t value = 0;  // memsets
};

class Recorder {
 public:
  Recorder(const DriverApi* driver, bool skip_own_frames)
      : driver_(driver), functions_(driver), callsites_(skip_own_frames) {}

  // Opens the trace when the config names one; returns false with *error on failure.
  bool start(const Config& config, std::string* error);
  void stop();  // writes the trace's end; idempotent
  bool tracing() const { return g_trace_active.load(std::memory_order_acquire); }

  // The kernel behind a launch's CUfunction (or CUkernel), announced in the trace on first
  // sight. Lock-free after the first launch of each kernel.
  const FunctionInfo* function(CUfunction f) {
    bool created;
    const FunctionInfo* info = functions_.lookup(reinterpret_cast<uint64_t>(f), &created);
    if (__builtin_expect(created, 0)) announce_new(info);
    return info;
  }
  // A module or library is unloaded: its kernels are described anew (new ids, announced again)
  // at their handles' next launch (module_unload.h).
  void forget_kernels(const ModuleUnload& unload) { functions_.forget(unload); }

  // Counts the launch (per door) and writes it to the trace, if one is open.
  void record_launch(const LaunchCall& call, uint64_t t0, uint64_t t1, CUresult result);
  // The two halves, for graph mode: counting under the engine lock, which every graph-mode
  // launch holds (so a plain increment is enough: no atomic operation on the launch path), and
  // writing the trace record outside it.
  void count_launch_serialized(trace::Door door) {
    auto& n = launches_[static_cast<int>(door)];
    n.store(n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  void write_launch(const LaunchCall& call, uint64_t t0, uint64_t t1, CUresult result);
  void record_op(const OpCall& call, uint64_t t0, uint64_t t1, CUresult result);

  // The caller's call site, announced in the trace on first sight; 0 when not tracing.
  uint32_t callsite();

  // Entry points handed to the program without a wrapper (for the trace's end record).
  void count_unwrapped() { unwrapped_.fetch_add(1, std::memory_order_relaxed); }

  uint64_t launches(trace::Door door) const {
    return launches_[static_cast<int>(door)].load(std::memory_order_relaxed);
  }
  uint64_t ops() const { return ops_.load(std::memory_order_relaxed); }

  void reset_in_child();

 private:
  uint32_t announce_function(const FunctionInfo& f);
  void announce_new(const FunctionInfo* f);  // first sight: in the trace, if one is open
  trace::MemoryKind memory_kind(uint64_t address) const;

  const DriverApi* driver_;

  FunctionTable functions_;
  CallSiteTable callsites_;
  std::atomic<uint64_t> launches_[static_cast<int>(trace::Door::kCount)] = {};
  std::atomic<uint64_t> ops_{0};
  std::atomic<uint64_t> unwrapped_{0};
};

}  // namespace pygraph
