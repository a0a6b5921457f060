// What each kind of wrapped call does in the shim. Launches are described field by field for
// the core; every other op is described generically from its argument types (first stream,
// first event/graph/module handle, first address, first size). In graph mode launches go to the
// engine, and every other op first lets the engine submit what the op can observe.
#pragma once

#include <cuda.h>

#include <tuple>

#include "../core/driver/module_unload.h"
#include "../core/graph/flush_rules.h"
#include "../core/graph/graph_engine.h"
#include "../core/recording/recorder.h"
#include "../core/trace/trace_writer.h"
#include "shim_state.h"
#include "stall_watchdog.h"

namespace pygraph::hooks {

CUresult get_proc_address(CUresult (*real)(const char*, void**, int, cuuint64_t,
                                           CUdriverProcAddressQueryResult*),
                          Door door, const char* symbol, void** pfn, int version, cuuint64_t flags,
                          CUdriverProcAddressQueryResult* status);
CUresult get_proc_address_v1(CUresult (*real)(const char*, void**, int, cuuint64_t), Door door,
                             const char* symbol, void** pfn, int version, cuuint64_t flags);

// Argument extraction for generic ops.
struct OpArgs {
  OpCall call;
  bool has_stream = false, has_handle = false, has_ptr = false, has_bytes = false;

  void before(CUstream s) { set(has_stream, call.stream, reinterpret_cast<uint64_t>(s)); }
  void before(CUevent e) { set(has_handle, call.handle, reinterpret_cast<uint64_t>(e)); }
  void before(CUgraphExec g) { set(has_handle, call.handle, reinterpret_cast<uint64_t>(g)); }
  void before(CUmodule m) { set(has_handle, call.handle, reinterpret_cast<uint64_t>(m)); }
  void before(CUlibrary l) { set(has_handle, call.handle, reinterpret_cast<uint64_t>(l)); }
  void before(CUcontext c) { set(has_handle, call.handle, reinterpret_cast<uint64_t>(c)); }
  void before(CUdeviceptr p) { set(has_ptr, call.ptr, p); }
  void before(void* p) { set(has_ptr, call.ptr, reinterpret_cast<uint64_t>(p)); }
  void before(const void* p) { set(has_ptr, call.ptr, reinterpret_cast<uint64_t>(p)); }
  void before(size_t n) { set(has_bytes, call.bytes, n); }
  template <class T>
  void before(T) {}

  // Allocations return their address through an out-parameter.
  void after(CUdeviceptr* p) { set(has_ptr, call.ptr, p ? *p : 0); }
  void after(void** p) { set(has_ptr, call.ptr, p ? reinterpret_cast<uint64_t>(*p) : 0); }
  template <class T>
  void after(T) {}

 private:
  static void set(bool& has, uint64_t& field, uint64_t v) {
    if (!has) field = v;
    has = true;
  }
};

inline uint64_t address(CUdeviceptr p) {
  return p;
}
inline uint64_t address(const void* p) {
  return reinterpret_cast<uint64_t>(p);
}

// An async memset's value or 1-D copy's source, which the generic description misses (a value
// has no pointer type; a source is the second address).
template <Op op, class Dst, class SrcOrValue>
void describe_memop(OpArgs& args, Dst, SrcOrValue v, size_t, CUstream) {
  args.call.memop = true;
  if constexpr (memset_element_size(op) != 0) {
    args.call.value = static_cast<uint32_t>(v);
  } else {
    args.call.src = address(v);
  }
}

template <Op op, class... A>
OpArgs describe_op(Door door, A... a) {
  OpArgs args;
  args.call.op = op;
  args.call.door = door;
  (args.before(a), ...);
  if constexpr (engine_memop(op)) describe_memop<op>(args, a...);
  return args;
}

// The time, for trace records only: a clock read costs ~40 ns on the H200 VM, paid only when a
// trace is being written.
inline uint64_t trace_time(bool tracing) {
  return tracing ? now_ns() : 0;
}

// Runs an op described by describe_op and records it.
template <Op op, class Fn, class... A>
CUresult generic_op(Fn real, OpArgs args, A... a) {
  const bool tracing = shim_recorder().tracing();
  const uint64_t t0 = trace_time(tracing);
  const CUresult r = real(a...);
  const uint64_t t1 = trace_time(tracing);
  if constexpr (op_info(op).cls == OpClass::kAlloc) {
    if (r == CUDA_SUCCESS) (args.after(a), ...);
  }
  shim_recorder().record_op(args.call, t0, t1, r);
  return r;
}

// A launch, described for the core, whichever of the three launch ABIs it came through.
inline LaunchCall describe_launch(Op op, Door door, CUfunction f, unsigned gx, unsigned gy,
                                  unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                  CUstream s, void** p, void** e) {
  return {op, door, f, {gx, gy, gz}, {bx, by, bz}, smem, s, nullptr, 0, p, e};
}
inline LaunchCall describe_launch(Op op, Door door, CUfunction f, unsigned gx, unsigned gy,
                                  unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                  CUstream s, void** p) {
  return {op, door, f, {gx, gy, gz}, {bx, by, bz}, smem, s, nullptr, 0, p, nullptr};
}
inline LaunchCall describe_launch(Op op, Door door, const CUlaunchConfig* cfg, CUfunction f,
                                  void** p, void** e) {
  return {op,
          door,
          f,
          {cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ},
          {cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ},
          cfg->sharedMemBytes,
          cfg->hStream,
          cfg->attrs,
          cfg->numAttrs,
          p,
          e};
}

// Graph mode: the engine records the launch or launches it, under the engine lock.
__attribute__((always_inline)) inline CUresult graph_launch(EngineLaunch&& l) {
  Recorder& recorder = shim_recorder();
  l.info = recorder.function(l.function);
  const bool tracing = recorder.tracing();
  const uint64_t t0 = trace_time(tracing);
  CUresult r;
  {
    EngineLock lock;
    r = shim_engine().launch(l);
    recorder.count_launch_serialized(l.door);
  }
  ensure_stall_watchdog();
  if (tracing) recorder.write_launch(l, t0, trace_time(tracing), r);
  return r;
}

// Graph mode, any other op: first the deferred work it can observe goes out (flush_rules.h).
template <Op op, bool per_thread, class Fn, class... A>
CUresult graph_op(Fn real, Door door, A... a) {
  if constexpr (op_info(op).cls == OpClass::kAlloc) {
    // It can neither see nor end anything, so nothing goes out before it; but an address may be
    // another kind of memory after it (after_op): allocations are rare in steady state.
    const OpArgs args = describe_op<op>(door, a...);
    const CUresult r = generic_op<op>(real, args, a...);
    EngineLock lock;
    shim_engine().after_op(op, reinterpret_cast<CUstream>(args.call.stream), per_thread, r);
    return r;
  } else if constexpr (flush_rule(op) == FlushRule::kNone && !op_is_boundary(op) &&
                       op != Op::StreamEndCapture) {
    // No lock: it can neither see nor end anything.
    return generic_op<op>(real, describe_op<op>(door, a...), a...);
  } else {
    const OpArgs args = describe_op<op>(door, a...);
    const auto stream = reinterpret_cast<CUstream>(args.call.stream);
    CUresult flushed;
    {
      EngineLock lock;
      if constexpr (op == Op::EventQuery || op == Op::StreamQuery) {
        // Of work still deferred: "not ready", from the engine, and the work stays deferred
        // (GraphEngine::answers_query). The program's call is traced with that answer.
        if (shim_engine().answers_query(op, stream, per_thread, args.call.handle)) {
          const uint64_t t = trace_time(shim_recorder().tracing());
          shim_recorder().record_op(args.call, t, t, CUDA_ERROR_NOT_READY);
          return CUDA_ERROR_NOT_READY;
        }
      }
      flushed = shim_engine().before_op(op, stream, per_thread, args.call.handle);
    }
    const CUresult r = generic_op<op>(real, args, a...);
    {
      EngineLock lock;
      shim_engine().after_op(op, stream, per_thread, r);
    }
    // An error of deferred work surfaces at the next op that needed it, never lost.
    return r == CUDA_SUCCESS ? flushed : r;
  }
}

// Graph mode, an event created: the engine learns those another process may wait for
// (flush_rules.h, kNone). Any other event passes as it would without the shim.
template <Op op, class Fn>
CUresult event_create(Fn real, Door door, CUevent* event, unsigned int flags) {
  const CUresult r = generic_op<op>(real, describe_op<op>(door, event, flags), event, flags);
  if (r == CUDA_SUCCESS && event && (flags & CU_EVENT_INTERPROCESS)) {
    EngineLock lock;
    shim_engine().interprocess_event(*event);
  }
  return r;
}

// Graph mode, an async memset or 1-D copy: the engine records it as a node or issues it, under
// the engine lock (memop_call.h).

template <Op op, bool per_thread, class Fn, class Dst, class SrcOrValue>
CUresult graph_memop(Fn real, Door door, Dst dst, SrcOrValue v, size_t count, CUstream stream) {
  const OpArgs args = describe_op<op>(door, dst, v, count, stream);
  MemopCall m{op, reinterpret_cast<void*>(real), per_thread, stream, address(dst), 0, count, 0};
  if constexpr (memset_element_size(op) != 0) {
    m.value = v;
  } else {
    m.src = address(v);
  }
  const bool tracing = shim_recorder().tracing();
  const uint64_t t0 = trace_time(tracing);
  CUresult r;
  {
    EngineLock lock;
    r = shim_engine().memop(m);
  }
  ensure_stall_watchdog();
  shim_recorder().record_op(args.call, t0, trace_time(tracing), r);
  return r;
}

// Graph mode, an event record or a stream's wait on an event: the engine records it into the
// chunk (several streams in one graph, stream_fork.h) or issues it, under the engine lock.
template <Op op, bool per_thread, class Fn, class... A>
CUresult graph_event(Fn real, Door door, A... a) {
  const OpArgs args = describe_op<op>(door, a...);
  unsigned int flags = 0;
  if constexpr (sizeof...(A) == 3)
    flags = static_cast<unsigned int>(std::get<2>(std::tuple<A...>(a...)));
  const EventCall e{op,
                    reinterpret_cast<void*>(real),
                    per_thread,
                    reinterpret_cast<CUevent>(args.call.handle),
                    reinterpret_cast<CUstream>(args.call.stream),
                    flags};
  const bool tracing = shim_recorder().tracing();
  const uint64_t t0 = trace_time(tracing);
  CUresult r;
  {
    EngineLock lock;
    r = shim_engine().event_op(e);
  }
  ensure_stall_watchdog();
  shim_recorder().record_op(args.call, t0, trace_time(tracing), r);
  return r;
}

// Graph mode with program_graphs on, the program's launch of its own executable graph: the engine
// takes it into the chunk as a child graph (program_graphs.h), or it goes as any other op does.
template <Op op, bool per_thread, class Fn>
CUresult program_graph_launch(Fn real, Door door, CUgraphExec exec, CUstream stream) {
  const ProgramGraphCall g{reinterpret_cast<void*>(real), per_thread, exec, stream};
  const bool tracing = shim_recorder().tracing();
  const uint64_t t0 = trace_time(tracing);
  CUresult r = CUDA_SUCCESS;
  bool taken;
  {
    EngineLock lock;
    taken = shim_engine().program_graph_launch(g, &r);
  }
  if (!taken) return graph_op<op, per_thread>(real, door, exec, stream);
  ensure_stall_watchdog();
  shim_recorder().record_op(describe_op<op>(door, exec, stream).call, t0, trace_time(tracing), r);
  return r;
}

// What an instantiation made: the executable graph, and the flags it was made with.
inline void instantiated(CUgraphExec* exec, CUgraph graph, CUgraphNode*, char*, size_t) {
  EngineLock lock;
  shim_engine().program_graph_instantiated(*exec, graph, 0);
}
inline void instantiated(CUgraphExec* exec, CUgraph graph, unsigned long long flags) {
  EngineLock lock;
  shim_engine().program_graph_instantiated(*exec, graph, flags);
}
inline void instantiated(CUgraphExec* exec, CUgraph graph, CUDA_GRAPH_INSTANTIATE_PARAMS* p) {
  if (p->result_out != CUDA_GRAPH_INSTANTIATE_SUCCESS) return;
  EngineLock lock;
  shim_engine().program_graph_instantiated(*exec, graph, p->flags);
}

// Graph mode with program_graphs on, the program's graph launch or instantiation: the engine
// takes the launch (above), and learns the new graph after its instantiation. Changes and
// destroys go as other ops do: before_op submits deferred launches of the graph first
// (flush_rules.h, kProgramGraph).
template <Op op, bool per_thread, class Fn, class... A>
CUresult program_graph_op(Fn real, Door door, A... a) {
  if constexpr (op == Op::GraphLaunch) {
    return program_graph_launch<op, per_thread>(real, door, a...);
  } else {
    const CUresult r = generic_op<op>(real, describe_op<op>(door, a...), a...);
    auto first = std::get<0>(std::tuple<A...>(a...));
    if (r == CUDA_SUCCESS && first && *first) {
      if constexpr (op == Op::GraphInstantiateWithParams) {
        if (std::get<2>(std::tuple<A...>(a...))) instantiated(a...);
      } else {
        instantiated(a...);
      }
    }
    return r;
  }
}

// A module or library unload (trace and graph mode): the kernel table forgets the kernels that
// may be the module's, whose handles the driver may hand out again for other kernels
// (module_unload.h); graph mode also drops the graphs that hold them (GraphEngine::before_op).
// What the unload unloads is asked while it is still loaded; the table forgets again after the
// unload, in case a launch on another thread described one of the kernels again meanwhile.
template <Op op, bool per_thread, class Fn, class... A>
CUresult unload_op(Fn real, Door door, A... a) {
  const OpArgs args = describe_op<op>(door, a...);
  Recorder& recorder = shim_recorder();
  const ModuleUnload unload = describe_unload(shim_driver_api(), op, args.call.handle);
  recorder.forget_kernels(unload);
  const CUresult r = g_mode == Mode::kGraph ? graph_op<op, per_thread>(real, door, a...)
                                            : generic_op<op>(real, args, a...);
  recorder.forget_kernels(unload);
  return r;
}

// Launches inline it into each door's wrapper (Entry::call): no second copy of the eleven
// arguments on the stack on the launch path. Other ops call dispatch().
template <Op op, bool per_thread, class Fn, class... A>
__attribute__((always_inline)) inline CUresult dispatch_inline(Fn real, Door door, A... a) {
  // Off mode and calls made from inside the shim go straight to the driver.
  if (g_mode == Mode::kOff || t_in_hook) return real(a...);
  struct Guard {
    Guard() { t_in_hook = true; }
    ~Guard() { t_in_hook = false; }
  } guard;
  if constexpr (op_info(op).cls == OpClass::kLaunch) {
    if constexpr (op == Op::LaunchKernelEx) {
      if (!std::get<0>(std::tuple<A...>(a...))) return real(a...);  // no config: the driver says
    }
    if (g_mode == Mode::kGraph) {
      return graph_launch(
          {describe_launch(op, door, a...), reinterpret_cast<void*>(real), per_thread});
    }
    const LaunchCall c = describe_launch(op, door, a...);
    const bool tracing = shim_recorder().tracing();
    const uint64_t t0 = trace_time(tracing);
    const CUresult r = real(a...);
    const uint64_t t1 = trace_time(tracing);
    shim_recorder().record_launch(c, t0, t1, r);
    return r;
  } else if constexpr (op == Op::GetProcAddress) {
    if constexpr (sizeof...(A) == 5) {
      return get_proc_address(real, door, a...);
    } else {
      return get_proc_address_v1(real, door, a...);
    }
  } else {
    if constexpr (op_info(op).cls == OpClass::kUnload) {
      return unload_op<op, per_thread>(real, door, a...);
    }
    if (g_mode == Mode::kGraph) {
      if constexpr (engine_memop(op)) return graph_memop<op, per_thread>(real, door, a...);
      if constexpr (op == Op::EventCreate) return event_create<op>(real, door, a...);
      if constexpr (engine_event_op(op)) {
        // Read without the lock: set once at initialization.
        if (shim_engine().multi_stream()) return graph_event<op, per_thread>(real, door, a...);
      }
      if constexpr (op == Op::GraphLaunch || is_instantiate(op)) {
        // Read without the lock: set once at initialization.
        if (shim_engine().program_graphs())
          return program_graph_op<op, per_thread>(real, door, a...);
      }
      return graph_op<op, per_thread>(real, door, a...);
    }
    return generic_op<op>(real, describe_op<op>(door, a...), a...);
  }
}

template <Op op, bool per_thread, class Fn, class... A>
CUresult dispatch(Fn real, Door door, A... a) {
  return dispatch_inline<op, per_thread>(real, door, a...);
}

}  // namespace pygraph::hooks
