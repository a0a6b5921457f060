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
// Then weighed: a pause costs the GPU time only where work waits it out and the GPU is left
// with nothing to do; a cut costs a graph launch and leaves smaller graphs. While weighing,
// chunks go out at every pause, and in rounds (whole occurrences: a segment's, or a loop's
// unrolled period, recorded from its start) every chunk is timed (gpu_timer.h), a graph's
// replay or the calls of one that went out eagerly, or a launch that went out as it came (a
// lone start, chunk_policy.h): its GPU time, and the GPU's idle time before it where it follows
// the chunk before at once. Of kSamples sights of each place in whole rounds, the largest work
// and the least idle are kept. Then, in the order of the places, the
// GPU time since the last pause that still cuts adds up (the work waiting there), and a pause cuts
// only where
//  - that work is at least `light` ns: less is not worth a cut, and
//  - in a segment (a sequence between syncs), the GPU idles less than `idle_ratio` times that
//    work later in the occurrence (in the chunks after the one that follows the pause). Else
//    the work held back delays only work the GPU has time for before the occurrence ends: a
//    host-bound step (GPT-2 decoding a token, 13.7 ms a step, most of it Python) loses nothing
//    without the cut. A loop has no end to reach in time: it is weighed whole, and no pause of
//    it cuts where the GPU idled at least `idle_ratio` times its work in every whole round (a
//    batch-1 MLP on a slow host: 1.8 ms of Python an iteration around a few µs of kernels).
// Else it is dropped (and the work waiting there waits on to the next). A place with no whole
// round keeps cutting. Weighing ends when every place has its samples, or after kWeighRounds
// recorded occurrences.
// Measured on the H200 (session 16): on a slow host every Python gap above 200 µs was a pause,
// and BERT batch 1 eager replayed 4.4 launches per graph.
// A segment's split, weighed on the same rounds (`idle_ratio` > 0; a segment is weighed even
// where no pause was found): the small chunks that start an occurrence (chunk_policy.h) get an
// idle GPU going early, which pays where the GPU runs behind the host. Where it keeps up, they
// add graph launches and nothing else: the GPU idles later in the occurrence anyway. Each place
// where a chunk of a whole round started may be the split; it fits where the GPU's idle time
// before that chunk and the ones after it was at least `idle_ratio` times the GPU time of the
// chunks before it. At the latest place that fits in every whole round (at least kSamples), the
// occurrence goes out whole up to there (chunks as large as may be), then in the chunks the
// rounds had after it, ending at the same places. All the work held back then fits in idle time
// the GPU had (one queue: what runs later is no later than before). Pauses before the split no
// longer cut. Each pause after it is weighed again on the work waiting since the split or the
// last cut after it, not since the last pause that cut: the split's chunk already took the
// earlier work to the GPU. So two of the rounds' chunks after the split may go out as one
// (session 34: mlp-dropout-item eager, split at 59 of 71 places, kept a pause after it weighed
// from an earlier cut, and replayed 3 graphs a step). Measured on the H200 (session 23),
// whole steps as one chunk against chunks that start small: gpt2-decode 2.5 points faster,
// mlp-dropout-item 9 points slower (its GPU work does not fit in its last chunk's idle time),
// ResNet-50 batch 64 (its GPU runs behind) 4 to 6 points slower.
// A segment's tail (`tail_ns`): its last place, before the entry after which the host waits for
// the GPU (a sync, `loss.item()`'s copy), is learned as a pause where the host's gap there is at
// least `tail_ns` (or `threshold`, if less), and weighed with `tail_ns` as its light mark (or
// `light`, if less). The work recorded since the last cut would otherwise wait out that gap,
// then run while the host waits in the sync, where without the shim the GPU ran it during the
// gap. No later chunk can catch up with it: the occurrence ends there. Measured on the H200
// (session 43): in mlp-dropout-item, the host waited 96-138 µs a step in `loss.item()` with
// the shim against 31-33 µs without it, its tail chunk holding 50-58 µs of GPU work (SGD's
// kernels) recorded 60 µs of Python before the copy. With the tail (9c6a1c7) it waited
// 40.5-42.9 µs against 35.4-36.0, and the cell under reduce-overhead read -6.3 % where it had
// read +3.1 % (median of three processes).
// A segment's restarts, weighed on the same rounds: a chunk that begins at a cut (a pause, or a
// split's cut) is as large as the schedule has grown by then, up to `max_chunk`, and the GPU
// waits until all of it is recorded. Where the GPU drained before it (the host paused, or ran
// behind), the GPU idles for the whole recording. Measured on the H200 (session 45): compiled
// ResNet-50 batch 64 went out in chunks of 128 after the cut at each step's start; in a process
// whose host was slow, the GPU idled 2.0-2.2 ms a round of 4 steps before the second step's
// (none elsewhere), and the cell read +5.7 % where a process with a faster host read -2.9 %.
// A restart begins that chunk small and lets it grow again, as an occurrence's start does: the
// GPU gets its first work after a few entries. It is chosen where, in each of at least
// kSamples whole rounds, the GPU's idle time before the chunk that the restart would cut
// (at most the host's time recording that chunk: the pause itself is idle no restart takes
// away; and at most the chunk's own GPU time: begun small, its work ends earlier by no more
// than itself), less the GPU's idle time after it (which the work would run into later
// anyway), was at least `light`. It costs graph launches. That difference is what a restart could
// save at most: the restarted chunk still waits for its first entries, and the GPU may idle between
// the chunks that grow after it. The tail's place never restarts (the chunk after it is one
// entry), nor does a loop's. Sized from the same rounds (the least of each):
//  - its first chunk holds the entries the host recorded while the GPU still ran the work
//    before the cut (recording less idle, over the recording, of the chunk's entries; at least
//    `first_chunk`), so that it is on its way before the GPU drains;
//  - the chunks after it, up to the next cut, grow by its pace: the GPU time its entries brought
//    per unit of recording time, where that is between 1 and `chunk_growth` (else they grow by
//    `chunk_growth`). Each is then recorded in about the GPU time of the one before it.
// Measured on the H200 for ResNet-50 b64 compiled: begun at `first_chunk` and growing by 2
// (session 45), its launches a replay fell to 29-31, under the target of 32, for no gain beyond
// one process's spread. Sized and paced (session 46), in each of the 6 processes of 8 where a
// restart was chosen it was faster than the same process's cell without (by 0.05 to 0.20 ms
// a step of about 4.8), at 37.7 launches a replay. Over the whole suite (session 47), GPT-2
// decoding compiled restarted where 240 us of work took 925 us to record, and replayed 17
// launches a graph instead of 34, 1 and 4 points slower: its work, not the recording's idle
// time, bounds what a restart saves.
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
  // Segments that go out in chunks as large as may be up to their split, then as weighed (not
  // the tail pause above).
  uint64_t tail_splits = 0;
  // Cut places after which a chunk restarts small: the GPU had drained while it was recorded.
  uint64_t restarts = 0;
};

class PausePlaces {
 public:
  static constexpr uint8_t kSamples = 2;
  static constexpr uint32_t kRounds = 16;
  static constexpr uint32_t kWeighRounds = 6;
  static constexpr uint32_t kWeighOccurrences = 4 * kWeighRounds;  // weighing ends by then

  // Learning starts for a sequence of `length` places (a loop: its period; `wraps`: its first
  // place follows its last, else what comes before it is a boundary and no gap of its own). A
  // `threshold` of 0 learns nothing (no clock reads); a `light_ns` of 0 weighs nothing (every
  // pause cuts); an `idle_ratio` of 0 keeps every pause that is not light. `counts`, if any,
  // counts this sequence's places as they are learned and weighed. A `tail_ns` above 0 learns a
  // segment's last place as its tail (above), where `threshold` is above 0 too. `restarts`: a
  // segment's restarts (above) are chosen.
  void start(size_t length, bool wraps, uint64_t threshold_ns, uint64_t light_ns = 0,
             uint32_t idle_ratio = 0, PauseCounts* counts = nullptr, uint64_t tail_ns = 0,
             bool restarts = false);
  bool learning() const { return learning_; }
  // The entry at `place` arrives at `now_ns`: a sample of its gap if the entry before it was
  // the place before (modulo length) and nothing interrupted the two.
  void arrived(size_t place, uint64_t now_ns);
  // The engine is done with the entry that arrived last at `now_ns` (it submitted a chunk):
  // the next gap is the program's from here.
  void done_at(uint64_t now_ns) { last_ns_ = now_ns; }
  // What happened since the last entry is no gap of the program's (it stopped following).
  void interrupt() { last_ns_ = 0; }
  // Whether a pause (kPause) or a split segment's cut (kSplitCut) comes before `place`: the
  // chunk goes out when the occurrence reaches it.
  static constexpr uint8_t kPause = 1, kSplitCut = 2;
  uint8_t before(size_t place) const { return place < pauses_.size() ? pauses_[place] : 0; }
  bool any() const { return !pauses_.empty(); }
  size_t count() const { return count_; }  // pauses that cut
  // A segment's split place (before() is true there), 0 for none: its occurrences begin with a
  // chunk as large as may be.
  size_t split() const { return split_; }
  // How the chunk that begins at a cut `place` restarts (a restart, weighed: see the header
  // comment): its first size in entries (at least 1 where it restarts, 0 where it does not; the
  // engine begins no smaller than its first_chunk) and the growth of the chunks after it up to
  // the next cut, in ChunkCursor::kPaceOne units (begin_paced).
  struct Restart {
    uint32_t first = 0;
    uint32_t pace = 0;
    explicit operator bool() const { return first != 0; }
  };
  // One load and compare where the sequence has none (an empty vector): each chunk's submission.
  Restart restart_at(size_t place) const {
    return place < restarts_.size() ? restarts_[place] : Restart{};
  }
  bool restarts(size_t place) const { return bool(restart_at(place)); }
  std::vector<uint32_t> restart_places() const;
  std::vector<Restart> restart_sizes() const;  // in the order of restart_places()

  // Weighing (after learning, where `light_ns` > 0 and pauses were found, or a segment's split
  // may be: `idle_ratio` > 0).
  bool weighing() const { return weighing_; }
  // An occurrence begins; `recorded`: from its start, and its work is recorded (not an eager
  // window, not a loop taken up mid-period). A recorded one is a round while rounds are left;
  // one before it that did not end says nothing.
  void occurrence(bool recorded);
  // A chunk of the occurrence, from position `start` to `end`, goes out: the round it belongs
  // to, 0 for none. Not 0: weighed() or lost() must answer it, in any order.
  uint32_t round(size_t start, size_t end);
  // The occurrence reached its end: its round is whole once every chunk is answered.
  void ended() { close(true); }
  // A chunk of a round, timed: its GPU time and the GPU's idle time before it (GpuTimer::kLost:
  // not measured), the host's time around its launch (gpu_timer.h; for the stats alone:
  // nothing here weighs it), and the host's time recording it, from its first entry to its
  // submission (~0: not measured), which a restart (below) can take off the GPU's idle time.
  struct Timed {
    uint32_t round = 0;
    uint32_t start = 0, end = 0;
    uint64_t gpu_ns = 0, idle_ns = 0;
    uint64_t host_ns = ~0ull;
    uint64_t record_ns = ~0ull;
  };
  void weighed(const Timed& t);
  // A chunk of `round` went out untimed (no free slot, a graph's first launch): the round says
  // nothing.
  void lost(uint32_t round) { weighed(Timed{round, 0, 0, ~0ull, ~0ull}); }
  // The engine left the occurrence before its end, or some of its work went out untimed: its
  // round says nothing. Left before its first chunk, it is no round at all (counted with the
  // occurrences that began none).
  void left() { close(false); }
  size_t light() const { return light_; }  // pauses dropped once weighed (they cut no chunk)
  size_t unweighed() const { return unweighed_kept_; }  // kept: no GPU time was measured
  // How its weighing went, for the stats: rounds taken whole; rounds that said nothing because
  // a chunk went out untimed (a graph's first launch, no free timer slot) or because the engine
  // left the occurrence before its end (a mismatch, a flush, a variant), or still open or
  // unanswered when weighing ended; occurrences while weighing that began no round (not
  // recorded from their start: an eager window, a loop taken up mid-period, or every round
  // already begun) or left it before its first chunk (a loop that ends where its period
  // begins). A place that stays weighing, or ends unweighed, is explained by these. Over the
  // whole rounds, summed: their chunks' GPU time, and the GPU's idle time before their chunks
  // where measured (a chunk that followed a timed one at once): whether the GPU waited for the host
  // between the chunks of an occurrence (session 35: a cell read slower where its chunks held three
  // of the program's graphs, and nothing said whether its GPU idled).
  struct RoundCounts {
    uint32_t whole = 0, untimed = 0, left = 0, unrecorded = 0;
    uint64_t gpu_ns = 0, idle_ns = 0;
  };
  const RoundCounts& rounds() const { return round_counts_; }
  // For the stats, what the weighing saw and chose: the chunks of each whole round, oldest
  // first, in the order of their positions (their GPU time, and the GPU's idle time before each;
  // ~0: not measured), and the places where a chunk now goes out at a pause or a split's cut
  // before it is full (chunks also end at their size and at flushes). Both tell why a settled
  // split sequence replays as many graphs an occurrence as it does; every round, not only the
  // last, since one round's outlier decides a place (the largest work is kept).
  const std::vector<std::vector<Timed>>& whole_rounds() const { return whole_rounds_; }
  std::vector<uint32_t> cut_places() const;

 private:
  void finish();
  void finish_weighing();
  void split_sample(const Timed* chunks, size_t n);    // a whole round of a segment
  void restart_sample(const Timed* chunks, size_t n);  // the same round
  void choose_restarts();
  void choose_split(const std::vector<uint8_t>& learned);  // the pauses before weighing
  void reweigh_after_split(const std::vector<uint8_t>& learned);
  uint64_t work_between(size_t from, size_t to) const;  // the most of a whole round; ~0: unknown
  // Whether a pause at `place` with `waiting` ns of GPU work held there cuts: not light, and not
  // absorbed by the GPU's idle time later (`keeps_up`: a loop that keeps up absorbs any).
  bool cuts_for(size_t place, uint64_t waiting, bool keeps_up) const;
  uint64_t threshold_at(size_t place) const {
    return place == tail_place_ ? tail_gap_ns_ : threshold_ns_;
  }
  uint64_t light_at(size_t place) const {
    return place == tail_place_ ? tail_light_ns_ : light_ns_;
  }

  PauseCounts* counts_ = nullptr;
  bool learning_ = false;
  uint64_t threshold_ns_ = 0;
  // A segment's last place, the gap that makes it a pause and its light mark; none: kNoTail.
  static constexpr size_t kNoTail = ~size_t(0);
  size_t tail_place_ = kNoTail;
  uint64_t tail_gap_ns_ = 0, tail_light_ns_ = 0;
  uint64_t last_ns_ = 0;  // when the engine was done with the last entry; 0: no sample next
  size_t next_place_ = 0;
  size_t judged_ = 0;             // places with kSamples samples
  uint64_t arrivals_left_ = 0;    // learning stops when this reaches 0
  std::vector<uint8_t> samples_;  // per place, while learning
  std::vector<uint8_t> short_;    // per place: a sample below the threshold was seen
  std::vector<uint8_t> pauses_;   // per place, after learning; empty when there is none
  size_t count_ = 0;
  size_t length_ = 0;
  // A segment's split, weighed: per place, in how many whole rounds a chunk started there, and
  // in how many of those the work before it fit in the GPU's idle time after; whole rounds, and
  // whether every one covered the occurrence with its chunks.
  std::vector<uint8_t> split_seen_, split_fit_;
  // Per whole round, the GPU time of its chunks before each place one started (and the end),
  // in the order of the places: what waits at a pause after the split is counted from there.
  struct WorkBefore {
    uint32_t place = 0;
    uint64_t gpu_ns = 0;
  };
  std::vector<std::vector<WorkBefore>> split_work_;
  // A segment's restarts: per place, while weighing, in how many whole rounds a chunk started
  // there, and the least over them of the GPU time a restart would have saved, of its first
  // size and of its pace (~0: none seen); after weighing, how the chunk restarts at each place
  // (empty: nowhere).
  struct RestartSample {
    uint8_t seen = 0;
    uint64_t gain = ~0ull;
    uint32_t first = ~0u, pace = ~0u;
  };
  std::vector<RestartSample> restart_samples_;
  std::vector<Restart> restarts_;
  bool restarts_on_ = false;
  bool split_fits_ = true;
  uint32_t split_rounds_ = 0;
  size_t split_ = 0;
  // Weighing: per place, the largest work and the least idle time of its whole rounds, and
  // how many; per round (ids 1..kWeighRounds), its chunks' timings until it is whole.
  bool wraps_ = false;
  bool weighing_ = false;
  uint64_t light_ns_ = 0;
  uint32_t idle_ratio_ = 0;
  std::vector<uint64_t> work_, idle_;
  std::vector<uint8_t> weight_samples_;
  // A loop's whole rounds: the least idle time and the largest work of one, and how many.
  uint64_t loop_idle_ = ~0ull, loop_work_ = 0;
  uint32_t loop_rounds_ = 0;
  struct Round {
    uint32_t pending = 0;  // chunks not answered yet
    bool whole = false;    // the occurrence reached its end
    bool spoiled = false;  // a chunk untimed or lost, or the occurrence left before its end
    bool untimed = false;  // spoiled by a chunk untimed or lost
    bool counted = false;  // in round_counts_ (a spoiled round settles before its end too)
  };
  RoundCounts round_counts_;
  std::vector<std::vector<Timed>> whole_rounds_;  // kept after weighing, for the stats
  Round rounds_[kWeighRounds + 1];
  std::vector<Timed> timed_;  // of the rounds not complete yet, as they came
  uint32_t begun_ = 0;        // rounds begun
  uint32_t occurrences_ = 0;  // occurrences begun while weighing, recorded or not
  uint32_t current_ = 0;      // the round of the occurrence going out (0: none)
  size_t next_start_ = 0;     // where its last chunk ended (0: none went out yet)
  size_t unweighed_ = 0;
  size_t light_ = 0;
  size_t unweighed_kept_ = 0;

  void close(bool whole);  // the current round: its occurrence ended (whole) or was left
  void take(uint32_t round);
  void settle(uint32_t round);
  bool over() const;  // every round begun and answered
};

}  // namespace pygraph
