#include "graph/program_calls.h"

namespace pygraph {

CUresult call_launch(const EngineLaunch& l, void** params, void** extra,
                     const CUlaunchAttribute* attrs) {
  switch (l.op) {
    case Op::LaunchKernelEx: {
      CUlaunchConfig cfg{};
      cfg.gridDimX = l.grid[0];
      cfg.gridDimY = l.grid[1];
      cfg.gridDimZ = l.grid[2];
      cfg.blockDimX = l.block[0];
      cfg.blockDimY = l.block[1];
      cfg.blockDimZ = l.block[2];
      cfg.sharedMemBytes = l.shared_mem;
      cfg.hStream = l.stream;
      cfg.attrs = const_cast<CUlaunchAttribute*>(attrs);
      cfg.numAttrs = l.attr_count;
      return reinterpret_cast<CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**)>(
          l.eager)(&cfg, l.function, params, extra);
    }
    case Op::LaunchCooperativeKernel:
      return reinterpret_cast<CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                           unsigned, unsigned, unsigned, CUstream, void**)>(
          l.eager)(l.function, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
                   l.shared_mem, l.stream, params);
    default:
      return reinterpret_cast<CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                           unsigned, unsigned, unsigned, CUstream, void**, void**)>(
          l.eager)(l.function, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
                   l.shared_mem, l.stream, params, extra);
  }
}

CUresult call_memop(const MemopCall& m) {
  using Set8 = CUresult (*)(CUdeviceptr, unsigned char, size_t, CUstream);
  using Set16 = CUresult (*)(CUdeviceptr, unsigned short, size_t, CUstream);
  using Set32 = CUresult (*)(CUdeviceptr, unsigned int, size_t, CUstream);
  using HtoD = CUresult (*)(CUdeviceptr, const void*, size_t, CUstream);
  using DtoH = CUresult (*)(void*, CUdeviceptr, size_t, CUstream);
  using DtoD = CUresult (*)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  switch (m.op) {
    case Op::MemsetD8Async:
      return reinterpret_cast<Set8>(m.eager)(m.dst, static_cast<unsigned char>(m.value), m.count,
                                             m.stream);
    case Op::MemsetD16Async:
      return reinterpret_cast<Set16>(m.eager)(m.dst, static_cast<unsigned short>(m.value), m.count,
                                              m.stream);
    case Op::MemsetD32Async:
      return reinterpret_cast<Set32>(m.eager)(m.dst, m.value, m.count, m.stream);
    case Op::MemcpyHtoDAsync:
      return reinterpret_cast<HtoD>(m.eager)(m.dst, reinterpret_cast<const void*>(m.src), m.count,
                                             m.stream);
    case Op::MemcpyDtoHAsync:
      return reinterpret_cast<DtoH>(m.eager)(reinterpret_cast<void*>(m.dst), m.src, m.count,
                                             m.stream);
    default:  // MemcpyDtoDAsync, MemcpyAsync
      return reinterpret_cast<DtoD>(m.eager)(m.dst, m.src, m.count, m.stream);
  }
}

CUresult call_event(const EventCall& e) {
  switch (e.op) {
    case Op::EventRecord:
      return reinterpret_cast<CUresult (*)(CUevent, CUstream)>(e.eager)(e.event, e.stream);
    case Op::EventRecordWithFlags:
      return reinterpret_cast<CUresult (*)(CUevent, CUstream, unsigned int)>(e.eager)(
          e.event, e.stream, e.flags);
    default:  // StreamWaitEvent
      return reinterpret_cast<CUresult (*)(CUstream, CUevent, unsigned int)>(e.eager)(
          e.stream, e.event, e.flags);
  }
}

CUresult call_graph(const ProgramGraphCall& g) {
  return reinterpret_cast<CUresult (*)(CUgraphExec, CUstream)>(g.eager)(g.exec, g.stream);
}

}  // namespace pygraph
