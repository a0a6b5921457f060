#include "graph/gpu_timer.h"

namespace pygraph {

CUevent GpuTimer::begin(CUcontext ctx) {
  if (!api_->event_elapsed_time || !api_->event_create || !api_->event_record) return nullptr;
  if (count_ + 1 >= kSlots) return nullptr;  // the slot before the oldest keeps its end event
  if (!bound_) {
    ctx_ = ctx;
    bound_ = true;
  }
  if (ctx != ctx_) return nullptr;
  Slot& s = slots_[(head_ + count_) % kSlots];
  // Timing events (flags 0): the engine's other events disable timing, these cannot.
  if (!s.start && api_->event_create(&s.start, 0) != CUDA_SUCCESS) {
    s.start = nullptr;
    return nullptr;
  }
  if (!s.stop && api_->event_create(&s.stop, 0) != CUDA_SUCCESS) {
    s.stop = nullptr;
    return nullptr;
  }
  s.begun_ns = clock_ns_();
  return s.start;
}

bool GpuTimer::start(CUcontext ctx, CUstream stream) {
  const CUevent s = begin(ctx);
  return s && api_->event_record(s, stream) == CUDA_SUCCESS;
}

bool GpuTimer::end(CUstream stream, Tag tag, bool launched) {
  Slot& s = slots_[(head_ + count_) % kSlots];
  if (!launched || api_->event_record(s.stop, stream) != CUDA_SUCCESS) return false;
  s.host_ns = clock_ns_() - s.begun_ns;
  s.tag = tag;
  ++count_;
  return true;
}

CUresult GpuTimer::elapsed(CUevent from, CUevent to, uint64_t* ns) const {
  float ms = 0;
  const CUresult r = api_->event_elapsed_time(&ms, from, to);
  if (r == CUDA_ERROR_NOT_READY) return r;
  *ns = r == CUDA_SUCCESS && ms >= 0 ? uint64_t(double(ms) * 1e6 + 0.5) : kLost;
  return r;
}

void GpuTimer::forget_events() {
  // The events may belong to the context that ended: never a call on them, and where another
  // context ended, a leak of a few handles (the engine forgets its own events alike).
  for (Slot& s : slots_) s = Slot{};
  ctx_ = nullptr;
  bound_ = false;
  head_ = count_ = 0;
}

}  // namespace pygraph
