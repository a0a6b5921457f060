// Finds launch sequences that repeat, from a stream of launch tokens (token.h) and boundaries
// (ops that synchronize with the host or otherwise end what a graph could hold).
//
// Two ways a sequence shows itself:
//  - as a segment: the launches between two boundaries, repeated (a training step that ends in
//    `loss.item()`); a segment is an occurrence when its tokens equal a known sequence's.
//  - as a period: within a run without boundaries, the last p tokens equal the p before them
//    (a loop that never synchronizes); every further p matching tokens are one more occurrence.
//    A period is kept in its canonical rotation, whatever launch it was first seen at. One
//    kernel launched again and again is a period of one launch from `min_run` repeats on.
// A sequence is found (worth a graph) once it has occurred `min_repeats` times. Memory is
// bounded: at most `max_sequences` sequences (the least recently seen are dropped), segments
// longer than `max_length` are not tracked, and period detection looks back a fixed window.
//
// Used offline by `pygraph-analyze sequences`, and meant for the online engine of graph mode,
// so that both agree on what repeats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace pygraph {

struct DetectorOptions {
  uint32_t min_repeats = 2;
  uint32_t min_length = 2;
  uint32_t max_length = 4096;
  uint32_t max_sequences = 1024;
  // A period shorter than `min_length` (one kernel launched again and again) is a loop only
  // once it has repeated this many launches in a row: shorter runs of one kernel are common
  // inside a longer loop's iteration (elementwise kernels of one shape in a row), and taken
  // for a period they would hide that iteration until it repeats whole.
  uint32_t min_run = 32;
};

struct Sequence {
  uint32_t id = 0;  // 1-based, in order of first sight
  bool periodic = false;
  std::vector<uint64_t> tokens;
  uint64_t occurrences = 0;
  uint64_t first_end = 0;  // launch count at the end of the first occurrence
  uint64_t last_end = 0;   // launch count at the end of the latest occurrence
  uint64_t hash = 0;       // of its tokens (and whether periodic): the detector's index
  // For segments: how often each boundary tag ended an occurrence.
  std::unordered_map<uint64_t, uint64_t> ended_by;
};

class SequenceDetector {
 public:
  explicit SequenceDetector(DetectorOptions options = {});

  // One launch. Returns the periodic sequence an occurrence of which this token completes, or
  // nullptr. Returned pointers stay valid until the next call.
  const Sequence* push(uint64_t token);
  // One launch the caller already knows continues a segment sequence it follows: the segment
  // and window take it, period detection does not (no loop without boundaries is looked for
  // inside a followed segment). Cheaper than push() on the launch path.
  void push_in_segment(uint64_t token) {
    append(token);
    period_ = 0;
    matched_ = 0;
    periodic_ = kNone;
  }
  // A boundary, tagged for attribution (the analyzer passes op and call site). Returns the
  // sequence the segment since the previous boundary is an occurrence of, or nullptr.
  const Sequence* boundary(uint64_t tag);

  // Periodic sequences are stored in their canonical rotation (period.h). When push() returns
  // one, the next launch, if the loop goes on, is its token at this index.
  uint32_t periodic_phase() const { return periodic_phase_; }

  // In order of first sight (ids ascending).
  const std::vector<Sequence>& sequences() const { return sequences_; }
  // The sequence with this id, or nullptr (never seen, or dropped).
  const Sequence* find(uint32_t id) const;
  // Of the segment sequences that begin with this token and have occurred min_repeats times,
  // the one that occurred last, or nullptr. What a launch after a boundary most likely begins;
  // one hash lookup, however many sequences are known (it is asked at every segment start).
  const Sequence* latest_found_segment(uint64_t first_token) const;
  uint64_t launches() const { return launches_; }
  const DetectorOptions& options() const { return options_; }
  // How many times the table was full and dropped its least recently seen: a user keeping state
  // per sequence id compares it to find ids that are gone for good (ids are never reused).
  uint64_t evictions() const { return evictions_; }

 private:
  static constexpr size_t kNone = ~size_t(0);

  uint64_t at(uint64_t position) const;  // token at a launch position still in the window
  // Into the window and the segment; its position. Inline: on the launch path.
  uint64_t append(uint64_t token) {
    const uint64_t pos = launches_++;
    window_[pos & (window_.size() - 1)] = token;
    if (!segment_overflow_) {
      if (segment_.size() < options_.max_length) {
        segment_.push_back(token);
      } else {
        segment_overflow_ = true;
        segment_.clear();
      }
    }
    return pos;
  }
  // How many tokens up to `pos` equal the token `p` before them (within the run and window),
  // counted up to `cap`.
  uint64_t repeated_back(uint64_t pos, uint64_t p, uint64_t cap) const;
  // No period is followed and the n-gram ending at `pos` was seen before at `seen_at`: sets
  // the candidate period (period_, matched_) from the sights of that n-gram.
  void choose_period(uint64_t pos, uint64_t seen_at);
  // Index of the sequence with these tokens, added if new (first=true then).
  size_t find_or_add(const std::vector<uint64_t>& tokens, bool periodic, bool* added);
  // The table is full: the least recently seen eighth goes at once, so that the indexes are
  // rebuilt once per many new sequences rather than at each (a program whose segments never
  // repeat makes a new one at every boundary).
  void evict();

  DetectorOptions options_;
  std::vector<Sequence> sequences_;
  std::unordered_map<uint64_t, uint32_t> by_hash_;          // sequence hash -> index in sequences_
  std::unordered_map<uint32_t, uint32_t> by_id_;            // id -> index in sequences_
  std::unordered_map<uint64_t, uint32_t> latest_by_first_;  // first token -> id (see above)
  uint64_t launches_ = 0;
  uint32_t next_id_ = 1;
  uint64_t evictions_ = 0;

  // The current segment (tokens since the last boundary); overflow: longer than max_length.
  std::vector<uint64_t> segment_;
  bool segment_overflow_ = false;

  // Period detection: a window of recent tokens, and the last position of each n-gram.
  std::vector<uint64_t> window_;  // ring, size a power of two >= 2 * max_length
  std::vector<uint64_t> ngram_key_, ngram_pos_;
  std::vector<uint64_t> ngram_prev_;  // per window position: the earlier sight of its n-gram
  uint64_t run_start_ = 0;            // position of the first launch after the last boundary
  uint64_t period_ = 0;               // candidate period, 0: none
  uint64_t matched_ = 0;              // consecutive tokens equal to the one `period_` before
  size_t periodic_ = kNone;           // index of the periodic sequence being repeated, if confirmed
  uint32_t periodic_phase_ = 0;       // see periodic_phase()
};

}  // namespace pygraph
