// A module or library being unloaded, and which kernels may be its own.
//
// After cuModuleUnload / cuLibraryUnload the driver may hand a kernel's handle out again, for
// another kernel of another module with another parameter layout. So what pygraph keeps about
// the kernels that may belong to the unloaded module is forgotten at the unload: their
// descriptions in the FunctionTable (a later launch of the handle describes it again, with a new
// id, so tokens recorded before never match it) and the graphs that launch them (GraphEngine).
// Everything else goes on.
//
// Which module a kernel is of was asked when it was first described (FunctionInfo::module:
// cuFuncGetModule for a CUfunction, cuKernelGetLibrary for a CUkernel); what the unload is
// compared with is asked here, before the unload runs.
#pragma once

#include <cstdint>

#include "driver/driver_api.h"
#include "driver/function_table.h"
#include "driver/ops.h"

namespace pygraph {

struct ModuleUnload {
  bool library = false;  // cuLibraryUnload, else cuModuleUnload
  uint64_t handle = 0;   // the CUmodule or CUlibrary
  // A library's module in the context current at the unload: the CUfunctions taken from the
  // library's kernels in that context (cuKernelGetFunction) are that module's.
  uint64_t library_module = 0;
  bool library_module_known = false;  // false: the driver could not say
  uint64_t context = 0;               // current at the unload (0: none, or unknown)
};

// Asks the driver what `op` (ModuleUnload or LibraryUnload) of `handle` unloads; to be called
// before the unload runs (a library's module can no longer be asked for afterwards).
ModuleUnload describe_unload(const DriverApi& api, Op op, uint64_t handle);

// Whether `f` may be one of the unloaded module's kernels. Yes whenever it cannot be told: a
// kernel whose module the driver did not give, a CUfunction described in another context than
// the one current at a library's unload (the library's module there is not known).
bool may_belong(const FunctionInfo& f, const ModuleUnload& u);

}  // namespace pygraph
