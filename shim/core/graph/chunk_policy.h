// How graph mode cuts a followed occurrence into chunks, each submitted as one graph replay as
// soon as it is complete, and when a sequence's chunks are too short to be worth deferring.
//
//  - Sizes (ChunkCursor): an occurrence's first chunk is `first` launches (and memops), so the
//    GPU starts early in each iteration (a first chunk of 8 left the GPU idle up to 6x longer at
//    step start than no shim; one of 2 about as long: sessions 3-4), and each next chunk is
//    `growth` times as large (2 by default) up to `max`, so long sequences still go out in few
//    graph launches; the last chunk of a step that ends in a sync runs on the GPU after the CPU
//    is done, which a larger growth lengthens. A chunk that restarts at a cut (pause_places.h)
//    begins at a weighed size and grows at a weighed pace up to the next cut, where that is
//    slower than `growth` (begin_paced). A step whose GPU was measured to keep up is split
//    instead (pause_places.h): whole up to its split, then in the chunks it had. A loop keeps its
//    chunk size around its unrolled period. Flushes cut chunks shorter (flush_rules.h). Sizes count
//    work, not positions: the program's own graph launched inside a chunk (program_graphs.h) counts
//    as its nodes, so a chunk of a reduce-overhead loop holds one or two steps, not 32 copies of
//    the program's graph (session 11: such chunks took 1.8 ms to build, 83 us to launch, and were
//    rebuilt at every size on the way up).
//  - A kernel that waits for its peers in other processes (NCCL's: waits_for_peers(),
//    function_table.h) ends its chunk: the chunk goes out as soon as it is recorded. Held
//    back in a chunk, it would hold back every other rank's collective too. Measured on two
//    H100s (session 24, the suite's DDP workload, one lockstep each): NCCL's kernels held in
//    chunks -6.5 % (-10.9 / +1.1) against -11.9 % (-16.7 / -6.7) when they went out eagerly,
//    as before (24 chunks); ending their chunks -8.8 % (-13.5 / -1.6) against -6.0 % (-10.2 /
//    -1.1) for the eager ones (16 chunks), at 32.7 launches a replay against 23.1.
//  - Worth a graph: a chunk of fewer than kMinGraphWork launches and memops goes out eagerly.
//    Measured on the GPU (break_even.cu, sessions 8 and 9): steps of N launches and a sync as
//    one graph win from N = 2 on (2: -12 to -31 %). Its N = 1 row is no graph: graph mode
//    follows no segment of one launch, so that row (-19 to +13 % over the sessions, mostly
//    noise: about 60 ns a launch and sync on the stand-in) is the launch passed through. A graph of
//    one node, patched, against the launch: break_even's `raw` rows, on an H200 (session 29, no
//    shim) 6.6 against 9.3 us a step with its sync, 1.6 against 3.9 us of host time. Whether a
//    chunk of one kernel launch pays as a graph inside graph mode (deferral, its weighing, more
//    graphs) is measured with `one_launch_graphs` before it becomes the default.
//  - Cut short (ShortChunks, one per sequence): chunks cut below that again and again (a launch
//    right before the program's own graph launch, every iteration) only delay what they hold.
//    After kShortLimit in a row with no replay between, the sequence's next occurrences run as
//    they come, undeferred (1,024 of them, doubling each time it happens again).
//  - Early heads (the early_head option): at a segment's start, where the program's own graph
//    launch came within the first chunk after work that can be a graph (a kernel launch, the
//    input copy of a reduce-overhead step, or two entries or more; with the default first chunk
//    of 2, one kernel launch), that work is the first chunk, replayed at once (as a graph of one
//    node too), and the program's graph goes out alone after it, as the program launched it
//    (no restart resizes that chunk). Not in a segment whose split was chosen (its first chunk
//    is weighed), nor in a loop (its GPU is busy where it goes on). Without it the GPU,
//    idle after the sync, waits for the program's graph launch before it can start the copy:
//    measured with the CUPTI profiler on the H200 (session 50, BERT b1 under reduce-overhead),
//    the GPU's next activity after that launch call came 6-18 us later with the shim (medians of
//    two processes a side). On by default since session 51: on the four GPU-bound
//    reduce-overhead workloads of the suite the shim's median change went from +0.2..+0.5 % to
//    -0.3..+0.0 % (3 processes each, H200).
//  - Lone starts (LoneStarts, one per sequence): a chunk cut below that at the same place
//    again and again, between replays of the rest (a copy that the program follows with a
//    sync every iteration: PyTorch's torch.tensor(..., device="cuda")), is deferred only to go
//    out eagerly, after a snapshot of its pageable source (measured on the H200: host-tensors
//    3-5 % slower than with the snapshots off). After kLimit cuts in a row there, the work
//    at that place goes out as it comes, for good for this sequence.
// Units of their own so that the engine stays a coordinator and the tests call them directly.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace pygraph {

// Launches and memops a chunk needs to be replayed as a graph (event ops alone gain nothing).
constexpr size_t kMinGraphWork = 2;

// Whether a chunk of `work` launches and memops, `kernels` of them kernel launches, is replayed
// as a graph. `one_launch`: a chunk of a single kernel launch is too (the one_launch_graphs
// option; a single copy, memset or program's graph still goes out as it came). The program's
// graph with one launch beside it (the input copy of torch.compile's reduce-overhead step) is a
// graph of ours like any chunk of two. Left to the program (session 30's rule), it cost eight
// reduce-overhead cells coverage (0 to 99 %; host-tensors also read +7.2 % against +2.1 %) for
// 0.2 to 0.3 points on one GPU-bound cell, and one graph holding a copy and the program's graph
// ran as fast on the GPU as the two launched apart, in half the host time (session 31, H100, no
// shim: 300 small nodes -0.05 %, 3.1 against 6.6 us; ResNet-50 b64's compiled graph -0.05 %).
inline bool worth_a_graph(size_t work, size_t kernels, bool one_launch) {
  return work >= kMinGraphWork || (one_launch && work == 1 && kernels == 1);
}

// The current chunk of the occurrence being followed: where it starts and how large it may grow.
class ChunkCursor {
 public:
  ChunkCursor(uint32_t first, uint32_t max, uint32_t growth = 2)
      : first_(std::max<uint32_t>(first, 1)),
        max_(std::max(max, first_)),
        growth_(std::max<uint32_t>(growth, 2)) {}

  // An occurrence (or a loop taken up at a phase) begins at `position`: a first chunk, as
  // large as may be where `whole` (a segment split before its tail: pause_places.h).
  void begin(size_t position, bool whole = false) { begin_at(position, whole ? max_ : first_); }
  // An occurrence's head (early heads, above): its first chunk is `size` entries, however
  // small, so that it goes out at once where the program's graph would have filled it.
  void begin_head(size_t position, size_t size) {
    begin_at(position, std::clamp<size_t>(size, 1, max_), 0, true);
  }
  // The current chunk began as a head (until it is submitted or the cursor begins anew).
  bool head() const { return head_; }
  // A chunk of one entry (the program's graph after a head: alone).
  void begin_alone(size_t position) { begin_at(position, 1); }
  // A chunk restarts at `position` (pause_places.h, restarts): `first` large (within first and
  // max), the chunks after it growing `pace` / kPaceOne times each, where that is more than
  // once and less than `growth` (else by `growth`), until unpace().
  static constexpr uint32_t kPaceOne = 256;
  void begin_paced(size_t position, size_t first, uint32_t pace) {
    begin_at(position, std::clamp<size_t>(first, first_, max_),
             pace > kPaceOne && pace < growth_ * kPaceOne ? pace : 0);
  }
  // The chunks grow by `growth` again (the next cut ends a restart's pace).
  void unpace() { pace_ = 0; }
  bool paced() const { return pace_ != 0; }
  // A loop wraps around its unrolled period: the next chunk starts at 0, its size kept.
  void wrap() { start_ = 0; }
  // Following stopped.
  void reset() { begin_at(0, 0); }
  // Nothing is pending at `position` (an event op issued where it was): the chunk starts there.
  void move_start(size_t position) { start_ = position; }
  // The current chunk was submitted when the occurrence reached `position`, its entries
  // weighing `extra` more than one each: the next begins there, `growth` times as large as this
  // one was allowed to be or weighed, whichever is more, up to max. A program's graph that
  // alone outweighs the first sizes is no reason to take them one by one: each such chunk of
  // one launch goes out eagerly, and a sequence that starts with several would follow a
  // schedule of its own every time one of them went out as it came (LoneStarts).
  void submitted(size_t position, size_t extra = 0) {
    const size_t weight = position - start_ + extra;
    const size_t base = std::max(size_, weight);
    start_ = position;
    size_ = std::min<size_t>(pace_ ? std::max(base * pace_ / kPaceOne, base + 1) : base * growth_,
                             max_);
    head_ = false;
  }

  size_t start() const { return start_; }
  // Exclusive end of the current chunk in an occurrence of `length` positions.
  size_t end(size_t length) const { return std::min(start_ + size_, length); }
  // Whether the chunk is complete at `position`, its entries weighing `extra` more than one
  // each (PendingList::extra_weight).
  bool full(size_t position, size_t length, size_t extra) const {
    return position >= end(length) || filled(position, extra);
  }
  // Whether the chunk weighs its size at `position` (not only the occurrence's end reached).
  bool filled(size_t position, size_t extra) const { return position - start_ + extra >= size_; }
  uint32_t max() const { return max_; }

 private:
  void begin_at(size_t position, size_t size, uint32_t pace = 0, bool head = false) {
    start_ = position;
    size_ = size;
    pace_ = pace;
    head_ = head;
  }

  uint32_t first_, max_, growth_;
  size_t start_ = 0;
  size_t size_ = 0;
  uint32_t pace_ = 0;  // 0: growth_
  bool head_ = false;  // begun as an occurrence's head
};

// Chunks of one sequence cut below worth_a_graph in a row.
class ShortChunks {
 public:
  // Chunks of one launch in a row (no replay between) after which a sequence's occurrences run
  // undeferred for a while: enough that a sequence whose chunks grow is never taken for one.
  static constexpr uint32_t kShortLimit = 32;

  // A chunk of the sequence went out eagerly for being short. True when this made the streak
  // long enough: its next occurrences run undeferred (count it).
  bool cut_short() {
    if (++in_row_ < kShortLimit) return false;
    in_row_ = 0;
    left_ = next_;
    next_ = std::min<uint32_t>(next_ * 2, 1u << 20);
    return true;
  }
  // A chunk of the sequence was replayed as a graph.
  void replayed() { in_row_ = 0; }
  // At an occurrence's start: whether it runs undeferred (one of those left is used up).
  bool undeferred() {
    if (!left_) return false;
    --left_;
    return true;
  }

 private:
  uint32_t in_row_ = 0;
  uint32_t left_ = 0;
  uint32_t next_ = 1024;
};

// Places in an occurrence where chunks were cut short in a row. A loop's places are those of its
// unrolled period, not of its period: a loop of one kernel has one place per launch of the
// unroll, and counted modulo its period of 1, one lone place made every launch go out eagerly
// for good (a few one-launch steps between syncs, each taking the loop up there, did it).
class LoneStarts {
 public:
  static constexpr uint8_t kLimit = 4;

  // A chunk starting at `place` of an occurrence of `length` went out eagerly for being short.
  void cut_short(size_t place, size_t length) {
    if (cuts_.size() < length) cuts_.resize(length);  // once per sequence (slow path)
    if (place < cuts_.size() && cuts_[place] < kLimit) ++cuts_[place];
  }
  // A chunk starting at `place` was replayed as a graph: the streak there ends (unless lone).
  void replayed(size_t place) {
    if (place < cuts_.size() && cuts_[place] < kLimit) cuts_[place] = 0;
  }
  // Whether work at `place`, starting a chunk, goes out as it comes.
  bool lone(size_t place) const { return place < cuts_.size() && cuts_[place] >= kLimit; }

 private:
  std::vector<uint8_t> cuts_;
};

}  // namespace pygraph
