// Recorded work goes out in the context it was recorded in, whichever thread submits it: a
// submission (or an engine call about a graph of another context) makes that context current
// for its duration, and the thread's own context is current again after it.
#pragma once

#include <cuda.h>

#include "driver/driver_api.h"

namespace pygraph {

// The calling thread's current context; null: none, or the driver cannot say.
inline CUcontext current_context(const DriverApi& api) {
  CUcontext ctx = nullptr;
  if (api.ctx_get_current && api.ctx_get_current(&ctx) != CUDA_SUCCESS) ctx = nullptr;
  return ctx;
}

class ContextScope {
 public:
  // `current`: the thread's current context, as the caller knows it (current_context()).
  ContextScope(const DriverApi& api, CUcontext want, CUcontext current) : api_(api) {
    pushed_ = want && want != current && api.ctx_push_current && api.ctx_pop_current &&
              api.ctx_push_current(want) == CUDA_SUCCESS;
  }
  ~ContextScope() {
    CUcontext popped;
    if (pushed_) api_.ctx_pop_current(&popped);
  }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  const DriverApi& api_;
  bool pushed_;
};

}  // namespace pygraph
