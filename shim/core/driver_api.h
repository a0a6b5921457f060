// The few driver functions the core itself calls, as plain pointers.
//
// The core never links or loads the driver: the hook layer fills this table with the real
// driver's entry points, and unit tests fill it with fakes. A null entry means "not available"
// (an older driver), and the core degrades instead of failing.
#pragma once

#include <cuda.h>

namespace pygraph {

struct DriverApi {
  CUresult (*func_get_name)(const char** name, CUfunction f) = nullptr;
  CUresult (*func_get_param_info)(CUfunction f, size_t index, size_t* offset,
                                  size_t* size) = nullptr;
  CUresult (*kernel_get_name)(const char** name, CUkernel k) = nullptr;
  CUresult (*kernel_get_param_info)(CUkernel k, size_t index, size_t* offset,
                                    size_t* size) = nullptr;
};

}  // namespace pygraph
