// Contexts of the driver stand-in: a per-thread stack of current contexts, as the driver keeps
// one. The implicit context a thread starts with is null; programs may make others
// (standin_context_create) and switch between them. Contexts order nothing here: streams are the
// same whichever context is current (one queue model, standin_async.cpp) and every context sees all
// memory; what matters to tests is which one is current.
#include <algorithm>
#include <vector>

#include "standin_state.h"

#define API extern "C" __attribute__((visibility("default"))) CUresult

namespace standin {

bool is_context(CUcontext c) {
  State& s = state();
  std::lock_guard<std::recursive_mutex> g(s.mu);
  auto* ctx = reinterpret_cast<Context*>(c);
  return std::find(s.contexts.begin(), s.contexts.end(), ctx) != s.contexts.end();
}

namespace {

std::vector<CUcontext>& stack() {
  static thread_local std::vector<CUcontext> contexts;
  return contexts;
}

}  // namespace
}  // namespace standin

using namespace standin;

extern "C" __attribute__((visibility("default"))) CUcontext standin_context_create(void) {
  State& s = state();
  std::lock_guard<std::recursive_mutex> g(s.mu);
  s.contexts.push_back(new Context);
  return reinterpret_cast<CUcontext>(s.contexts.back());
}

// A new context, pushed as current (the driver's documented behaviour).
API cuCtxCreate_v2(CUcontext* ctx, unsigned int, CUdevice) {
  if (!ctx) return CUDA_ERROR_INVALID_VALUE;
  *ctx = standin_context_create();
  stack().push_back(*ctx);
  return CUDA_SUCCESS;
}

API cuCtxGetCurrent(CUcontext* ctx) {
  if (!ctx) return CUDA_ERROR_INVALID_VALUE;
  *ctx = stack().empty() ? nullptr : stack().back();
  return CUDA_SUCCESS;
}
// Replaces the top of the stack; null pops it, as the driver documents.
API cuCtxSetCurrent(CUcontext ctx) {
  if (ctx && !is_context(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
  if (!ctx) {
    if (!stack().empty()) stack().pop_back();
  } else if (stack().empty()) {
    stack().push_back(ctx);
  } else {
    stack().back() = ctx;
  }
  return CUDA_SUCCESS;
}
API cuCtxPushCurrent_v2(CUcontext ctx) {
  if (!ctx || !is_context(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
  stack().push_back(ctx);
  return CUDA_SUCCESS;
}
API cuCtxPopCurrent_v2(CUcontext* ctx) {
  if (stack().empty()) {
    if (ctx) *ctx = nullptr;
    return CUDA_SUCCESS;  // the implicit context stays
  }
  if (ctx) *ctx = stack().back();
  stack().pop_back();
  return CUDA_SUCCESS;
}
