#include "graph/staging_ring.h"

#include <cstring>

namespace pygraph {

void* StagingRing::stage(const void* src, size_t bytes) {
  // A snapshot larger than a quarter of the ring would stall it for every other copy.
  if (broken_ || bytes == 0 || bytes > capacity_ / 4) return nullptr;
  if (!base_) {
    void* p = nullptr;
    if (!api_->mem_host_alloc || !api_->event_create || !api_->event_record || !api_->event_query ||
        !api_->event_destroy ||
        api_->mem_host_alloc(&p, capacity_, CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS || !p) {
      broken_ = true;
      return nullptr;
    }
    base_ = static_cast<uint8_t*>(p);
    CUcontext ctx = nullptr;
    context_ = api_->ctx_get_current && api_->ctx_get_current(&ctx) == CUDA_SUCCESS
                   ? reinterpret_cast<uint64_t>(ctx)
                   : 0;
  }
  const size_t n = (bytes + kAlign - 1) / kAlign * kAlign;
  bool wrap;
  size_t waste;
  for (;;) {
    // A span never wraps: the tail end of the ring is skipped and counted as used until freed.
    wrap = head_ + n > capacity_;
    waste = wrap ? capacity_ - head_ : 0;
    if (used_ + waste + n <= capacity_ && count_ < kMaxFences) break;
    if (!reclaim_oldest()) return nullptr;
  }
  if (wrap) {
    head_ = 0;
    used_ += waste;
    open_ += waste;
  }
  void* slot = base_ + head_;
  std::memcpy(slot, src, bytes);
  head_ += n;
  used_ += n;
  open_ += n;
  staged_ += bytes;
  return slot;
}

void StagingRing::context_ends(uint64_t ended) {
  if (!base_ || (ended != 0 && context_ != 0 && ended != context_)) return;
  base_ = nullptr;
  context_ = 0;
  broken_ = false;
  head_ = used_ = open_ = 0;
  first_ = count_ = 0;
}

void StagingRing::fence(CUstream stream) {
  if (!open_) return;
  CUevent e = nullptr;
  if (api_->event_create(&e, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
    // No way to tell when the open span is read: it is never reused, nor is the ring.
    broken_ = true;
    return;
  }
  if (api_->event_record(e, stream) != CUDA_SUCCESS) {
    api_->event_destroy(e);
    broken_ = true;
    return;
  }
  fences_[(first_ + count_) % kMaxFences] = {e, open_};
  ++count_;
  open_ = 0;
}

bool StagingRing::reclaim_oldest() {
  if (!count_) return false;
  Fence& f = fences_[first_];
  // Not ready, or an error: the span stays in use (reusing it could overwrite a snapshot a
  // pending copy still reads).
  if (api_->event_query(f.event) != CUDA_SUCCESS) return false;
  api_->event_destroy(f.event);
  used_ -= f.bytes;
  first_ = (first_ + 1) % kMaxFences;
  --count_;
  if (used_ == 0) head_ = 0;  // nothing in flight: start at the beginning, no waste
  return true;
}

}  // namespace pygraph
