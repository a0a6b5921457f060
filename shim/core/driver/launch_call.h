// A kernel launch as the hooks describe it to the core, whichever of the three launch ABIs
// (cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel) it came through. The recorder
// writes it to the trace; graph mode's engine records or launches it (EngineLaunch).
#pragma once

#include <cuda.h>

#include "driver/function_table.h"
#include "driver/ops.h"
#include "trace/trace_format.h"

namespace pygraph {

struct LaunchCall {
  Op op;
  trace::Door door;
  CUfunction function;  // as the program passed it (a CUfunction or a CUkernel)
  unsigned grid[3];
  unsigned block[3];
  unsigned shared_mem;
  CUstream stream;  // as the program passed it
  const CUlaunchAttribute* attrs;
  unsigned attr_count;
  void** params;
  void** extra;
  const FunctionInfo* info = nullptr;  // the kernel, once looked up (null: unknown)
};

}  // namespace pygraph
