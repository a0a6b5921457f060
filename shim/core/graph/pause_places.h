// Places in a sequence where the program pauses on the host: a chunk that reaches one goes out
// at once instead of waiting to fill.
//
// A chunk's work reaches the GPU when the chunk is full. When the program pauses in the middle
// of a chunk (Python between an optimizer's last kernel and the next step's first launch), the
// work recorded before the pause waits it out, and a GPU that has caught up with the CPU idles
// meanwhile. Measured on the H200 (session 14): GPT-2 training under reduce-overhead, syncing
// every 3 steps; the AdamW kernels after the program's backward graph waited for the next
// step's forward graph, about 1.2 ms a chunk of 3 steps (+4 %) in the first step after each
// sync, where the GPU catches up.
//
// Learned once per sequence from its first recorded occurrences: the time from the engine's
// return for one entry (after any submission it made) to the arrival of the next. A place whose
// gaps were at least `threshold` in each of kSamples samples is a pause. A clock is read per
// recorded entry while learning (and once more after a submission), never after: learning ends
// when every place has its samples, or after kRounds rounds of the sequence's places.
//
// Then weighed: a pause costs the GPU time only where work waits it out, and only as much as
// that work's GPU time; a cut costs a graph launch and leaves smaller graphs. While weighing,
// chunks go out at every pause; the GPU time of each chunk that runs from one pause to the next
// is measured (gpu_timer.h), kSamples times per place, the largest kept. Then, in the order of
// the places, the GPU time since the last pause that still cuts adds up; a pause cuts where the
// sum reaches `light` ns (and the sum starts again), else it is dropped: the work waiting there
// is too little to be worth a cut. A place with no measured time keeps cutting. Weighing ends
// when every place has its samples, or after kWeighRounds rounds of the places (a sequence
// between two syncs may hold many steps: each of its occurrences is one round).
// Measured on the H200 (session 16): on a slow host every Python gap above 200 µs was a pause,
// and BERT batch 1 eager replayed 4.4 launches per graph.
// A unit of its own, which the engine asks at each recorded entry while learning and at each
// chunk-full check after (one load where the sequence has no pause).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pygraph {

// Pause places over all sequences, kept by each sequence's PausePlaces as it learns and weighs
// (the engine's stats).
struct PauseCounts {
  uint64_t places = 0;     // learned pauses that cut (dropped ones leave)
  uint64_t light = 0;      // dropped once weighed: less than `light` GPU work waited there
  uint64_t weighing = 0;   // of `places`, those of sequences still being weighed
  uint64_t unweighed = 0;  // of `places`, weighed with no GPU time measured: they keep cutting
};

class PausePlaces {
 public:
  static constexpr uint8_t kSamples = 2;
  static constexpr uint32_t kRounds = 16;
  static constexpr uint32_t kWeighRounds = 4;

  // Learning starts for a sequence of `length` places (a loop: its period; `wraps`: its first
  // place follows its last, else what comes before it is a boundary and no gap of its own). A
  // `threshold` of 0 learns nothing (no clock reads); a `light_ns` of 0 weighs nothing (every
  // pause cuts). `counts`, if any, counts this sequence's places as they are learned and weighed.
  void start(size_t length, bool wraps, uint64_t threshold_ns, uint64_t light_ns = 0,
             PauseCounts* counts = nullptr);
  bool learning() const { return learning_; }
  // The entry at `place` arrives at `now_ns`: a sample of its gap if the entry before it was
  // the place before (modulo length) and nothing interrupted the two.
  void arrived(size_t place, uint64_t now_ns);
  // The engine is done with the entry that arrived last at `now_ns` (it submitted a chunk):
  // the next gap is the program's from here.
  void done_at(uint64_t now_ns) { last_ns_ = now_ns; }
  // What happened since the last entry is no gap of the program's (it stopped following).
  void interrupt() { last_ns_ = 0; }
  // Whether a pause comes before `place`: the chunk goes out when the occurrence reaches it.
  bool before(size_t place) const { return place < pauses_.size() && pauses_[place]; }
  bool any() const { return !pauses_.empty(); }
  size_t count() const { return count_; }  // pauses that cut

  // Weighing (after learning, where pauses were found and `light_ns` > 0).
  bool weighing() const { return weighing_; }
  // A chunk from place `start` to place `end` goes out: whether its GPU time is wanted (it
  // runs from a pause, or from the start of a sequence that does not wrap, to a pause whose
  // samples are not all in). True: weighed() must answer it. The weighing may end here (the
  // last round of requests passed with nothing in flight).
  bool wants_weight(size_t start, size_t end);
  // The GPU time of the chunk that ended at `end`, asked for by wants_weight (GpuTimer::kLost:
  // none).
  void weighed(size_t end, uint64_t gpu_ns);
  size_t light() const { return light_; }  // pauses dropped for the little work waiting there
  size_t unweighed() const { return unweighed_kept_; }  // kept: no GPU time was measured

 private:
  void finish();
  void finish_weighing();

  PauseCounts* counts_ = nullptr;
  bool learning_ = false;
  uint64_t threshold_ns_ = 0;
  uint64_t last_ns_ = 0;  // when the engine was done with the last entry; 0: no sample next
  size_t next_place_ = 0;
  size_t judged_ = 0;             // places with kSamples samples
  uint64_t arrivals_left_ = 0;    // learning stops when this reaches 0
  std::vector<uint8_t> samples_;  // per place, while learning
  std::vector<uint8_t> short_;    // per place: a sample below the threshold was seen
  std::vector<uint8_t> pauses_;   // per place, after learning; empty when there is none
  size_t count_ = 0;
  // Weighing: per place, the largest GPU time measured and how many samples; requests left
  // and in flight; places whose samples are not all in; pauses dropped.
  bool wraps_ = false;
  bool weighing_ = false;
  uint64_t light_ns_ = 0;
  std::vector<uint64_t> weight_;
  std::vector<uint8_t> weight_samples_;
  uint64_t requests_left_ = 0;
  uint64_t in_flight_ = 0;
  size_t unweighed_ = 0;
  size_t light_ = 0;
  size_t unweighed_kept_ = 0;
};

}  // namespace pygraph
