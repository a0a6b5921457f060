// The GPU time of a chunk: two timing events recorded on the chunk's stream around its graph
// launch (or the calls of a chunk sent out eagerly), read later without waiting, in the order
// they were taken. The places where a
// program pauses are weighed with it (pause_places.h): a pause that leaves only a little work
// waiting is no reason to cut a chunk.
//
//  - The start event completes when the stream reaches the launch (after its earlier work), the
//    end event when the graph is done: their difference is the graph's time on the GPU. Where
//    the GPU was idle it also holds the CPU's launch call and the GPU's launch latency (a few
//    microseconds).
//  - Idle time: a replay that follows the one timed before it on its stream at once (the
//    caller says so: Tag::chained) also gets the time from that one's end event to its own
//    start event. Nothing else ran on the stream between, so the GPU waited for the CPU that
//    long (about 0 where it had work queued).
//  - kSlots - 1 timings at most are in flight (the slot before the oldest keeps its end event
//    for the idle time); a replay that finds no free slot is not timed. A GPU that runs far
//    behind the CPU fills them, and then few replays are timed. 127 hold two rounds of DDP's
//    step (about 50 chunks each, its GPU a step behind): with 15, most of its rounds were
//    untimed (session 28). Events are made as slots are first used: 2 each.
//  - Host time: from taking a slot (begin) to recording its end event, the host's own time
//    around the launch (a replay's patches included, each a driver call of about 1 us). Where
//    the GPU was idle when the start event was recorded, the GPU time holds the part of it
//    after that record: a launch call that blocked, or a thread preempted between the two,
//    reads as GPU work. Kept for the stats beside the GPU time, so that a chunk's outlier can
//    be told from its kernels (sessions 43 and 44: the first two launches of mlp-dropout-item's
//    compiled step read 162 and 587 us of GPU time, the eager step's first two 25 us).
//    Two clock reads per timed chunk, only while a sequence is weighed.
//  - Events of one context (the first that asks): a replay in another is not timed.
//  - Read only while a sequence is weighed, never on the launch path of a weighed one.
// Not thread-safe: the engine's lock covers it.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

#include "driver/driver_api.h"

namespace pygraph {

class GpuTimer {
 public:
  static constexpr size_t kSlots = 128;
  static constexpr uint64_t kLost = ~0ull;  // the driver could not tell the time
  // What a timing belongs to: a sequence, a round of its weighing, its chunk's positions in
  // the occurrence; `chained`: it follows the timing before it on the same stream at once.
  struct Tag {
    uint32_t sequence = 0;
    uint32_t round = 0;
    uint32_t start = 0, end = 0;
    bool chained = false;
    uint64_t record_ns = ~0ull;  // the caller's: carried back as it is (pause_places.h)
  };

  // `clock_ns`: a monotonic clock in ns, for the host time.
  GpuTimer(const DriverApi* api, uint64_t (*clock_ns)()) : api_(api), clock_ns_(clock_ns) {}

  // The start event of a free slot for a launch in `ctx` (current): the caller records it on
  // the launch's stream right before the launch. Null: not timed (no slot, another context, no
  // timing API, an event the driver would not create).
  CUevent begin(CUcontext ctx);
  // begin(), and its start event recorded on `stream` at once: for calls the caller makes now
  // (a replay records the event itself, right before its launch). True: end() follows them.
  bool start(CUcontext ctx, CUstream stream);
  // After begin: the launch went out (`launched`) and the end event is recorded behind it on
  // `stream`. True: the timing is in flight (poll reads it); false: it is not (the launch
  // failed, or the record did), and the slot is free again.
  bool end(CUstream stream, Tag tag, bool launched);
  // Timings whose events completed, in the order they were taken, up to the first that has
  // not: f(tag, gpu_ns, idle_ns, host_ns), kLost where the driver answered an error (or, for
  // the idle time, where the tag is not chained).
  template <class F>
  void poll(F f) {
    while (count_) {
      Slot& s = slots_[head_];
      uint64_t gpu_ns = 0;
      if (elapsed(s.start, s.stop, &gpu_ns) == CUDA_ERROR_NOT_READY) return;
      const Slot& before = slots_[(head_ + kSlots - 1) % kSlots];
      uint64_t idle_ns = kLost;
      if (s.tag.chained && before.stop) elapsed(before.stop, s.start, &idle_ns);
      head_ = (head_ + 1) % kSlots;
      --count_;
      f(s.tag, gpu_ns, idle_ns, s.host_ns);
    }
  }
  bool busy() const { return count_ > 0; }
  size_t in_flight() const { return count_; }
  // The context ends: its events go with it, and each timing in flight is lost:
  // f(tag, kLost, kLost, kLost).
  template <class F>
  void forget(F f) {
    for (; count_; --count_, head_ = (head_ + 1) % kSlots) {
      f(slots_[head_].tag, kLost, kLost, kLost);
    }
    forget_events();
  }

 private:
  struct Slot {
    CUevent start = nullptr, stop = nullptr;
    Tag tag;
    uint64_t begun_ns = 0, host_ns = 0;  // the clock at begin(); the host time to end()
  };

  // The time from `from` to `to` in *ns (kLost on an error); NOT_READY leaves it.
  CUresult elapsed(CUevent from, CUevent to, uint64_t* ns) const;
  void forget_events();

  const DriverApi* api_;
  uint64_t (*clock_ns_)();
  CUcontext ctx_ = nullptr;
  bool bound_ = false;  // ctx_ is the context of the events (null where none is current)
  Slot slots_[kSlots];
  size_t head_ = 0, count_ = 0;  // in flight: count_ slots from head_, around the ring
};

}  // namespace pygraph
