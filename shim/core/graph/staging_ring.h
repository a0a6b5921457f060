// Pinned host memory holding snapshots of the pageable host-to-device copies graph mode defers.
//
// A cuMemcpy*Async from pageable memory reads its source before it returns (the program may
// reuse the buffer at once), while a deferred copy node runs later: so at record time the bytes
// are copied here, and the node reads this snapshot when the graph runs. Space is handed out in
// ring order and becomes free again once an event recorded after the submission that reads it
// has completed. When no space is free the caller launches the copy eagerly: the ring never
// makes the host wait.
//
// Part of graph mode (graph_engine.h); not thread-safe (the engine's lock covers it).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

#include "driver/driver_api.h"

namespace pygraph {

class StagingRing {
 public:
  // `capacity` bytes of pinned memory, allocated at the first stage().
  StagingRing(const DriverApi* api, size_t capacity) : api_(api), capacity_(capacity) {}
  StagingRing(const StagingRing&) = delete;
  StagingRing& operator=(const StagingRing&) = delete;

  // A snapshot of `bytes` bytes at `src`, or null when none fits now (too large, ring full,
  // pinned memory or events unavailable).
  void* stage(const void* src, size_t bytes);

  // Everything staged since the last fence is read by work just submitted on `stream` (in the
  // current context): its space is reused once that work is done.
  void fence(CUstream stream);

  // A context ends (cuCtxDestroy of `ended`, or 0 for a primary-context reset, whose context
  // is not known): if the ring's memory may be that context's, the ring forgets it and its
  // fences without a driver call (the context frees them, and work in flight may still read
  // them until then), and allocates anew at the next stage(). The memory of another context is
  // kept.
  void context_ends(uint64_t ended);

  bool unfenced() const { return open_ != 0; }
  uint64_t staged_bytes() const { return staged_; }  // total, for stats

 private:
  static constexpr size_t kAlign = 64;
  static constexpr int kMaxFences = 64;
  struct Fence {
    CUevent event;
    size_t bytes;  // ring bytes it frees, wrap-around waste included
  };

  bool reclaim_oldest();  // frees the oldest fenced span if its work is done

  const DriverApi* api_;
  size_t capacity_;
  uint8_t* base_ = nullptr;
  uint64_t context_ = 0;  // current when base_ was allocated (0: not known)
  bool broken_ = false;   // no pinned memory or no events: stage() refuses
  size_t head_ = 0;       // next offset handed out
  size_t used_ = 0;       // bytes not free: fenced spans still in flight, plus open_
  size_t open_ = 0;       // bytes staged since the last fence
  uint64_t staged_ = 0;
  Fence fences_[kMaxFences] = {};
  int first_ = 0, count_ = 0;  // fences in flight, oldest first
};

}  // namespace pygraph
