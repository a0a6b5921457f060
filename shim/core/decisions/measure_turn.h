// Which sequence may measure now (decision_policy.h): one at a time.
//
// An iteration of a sequence is the time from one of its starts to the next, whatever ran
// between. A step made of several sequences (cut by syncs) starts them in turn; if each start of
// one voided the other's sample, none would ever be measured (the suite's reduce-overhead MLP
// had 15 sequences, all still measuring after 1,000 iterations, session 9). So one sequence
// holds the turn while it measures, and what runs between two of its starts runs the same way in
// its eager and its graph windows: the others keep their verdict's arm, or run as graphs with no
// sample while they wait.
//  - A holder that has not started for kIdleStarts starts of others gives the turn up (a set-up
//    sequence met before a loop would otherwise keep it: with 1,024, the MLP's loop never
//    reached a verdict on the GPU); a step of up to that many sequences taking turns keeps it.
//  - A holder that keeps coming but completes no window in `stuck` starts of its own (its
//    samples are always cut short: two variants of a step taking turns, the eager one ending in
//    a mismatch every time) gives the turn up too, and may not take it again for
//    kBlockedStarts starts: meanwhile it runs as graphs, unmeasured, as with measuring off.
// A unit of its own, keyed by whatever the engine names a sequence with (its plan).
#pragma once

#include <cstdint>

namespace pygraph {

template <class Key>
class MeasureTurn {
 public:
  static constexpr uint64_t kIdleStarts = 32;
  static constexpr uint64_t kBlockedStarts = 4096;

  // `stuck`: the holder's own starts without a completed window after which it lets go (a few
  // windows' worth).
  explicit MeasureTurn(uint64_t stuck = 64) : stuck_(stuck) {}

  // An occurrence of `who` starts. Returns the holder that gave its turn up now for not having
  // come (its running window is no sample), or nullptr.
  Key* start(Key* who) {
    ++starts_;
    if (!holder_ || holder_ == who || starts_ - holder_start_ <= kIdleStarts) return nullptr;
    Key* gone = holder_;
    holder_ = nullptr;
    return gone;
  }
  // Whether `who`, not decided, must wait (as graphs, no sample): another holds the turn, or
  // `who` gave it up stuck and `blocked_until` (what ran() returned then) is not reached yet.
  bool waits(const Key* who, bool decided, uint64_t blocked_until = 0) const {
    return !decided && ((holder_ && holder_ != who) || set_aside(blocked_until));
  }
  // Whether one that gave the turn up stuck (ran() returned `blocked_until`) may not take it yet.
  bool set_aside(uint64_t blocked_until) const { return starts_ < blocked_until; }
  // After `who`'s policy ran at its start: measuring, it holds the turn; decided, it lets go.
  // `window_done`: a window of its measurement completed at this start. Returns 0, or, when
  // `who` gave the turn up stuck, the start count it waits until (its running window is no
  // sample).
  uint64_t ran(Key* who, bool measuring, bool window_done = false) {
    if (!measuring) {
      if (holder_ == who) holder_ = nullptr;
      return 0;
    }
    if (holder_ != who) own_starts_ = 0;
    holder_ = who;
    holder_start_ = starts_;
    own_starts_ = window_done ? 0 : own_starts_ + 1;
    if (own_starts_ < stuck_) return 0;
    holder_ = nullptr;
    return starts_ + kBlockedStarts;
  }
  // `who` is gone (its sequence forgotten): it holds the turn no more.
  void forget(const Key* who) {
    if (holder_ == who) holder_ = nullptr;
  }
  const Key* holder() const { return holder_; }
  uint64_t starts() const { return starts_; }

 private:
  uint64_t stuck_;
  Key* holder_ = nullptr;
  uint64_t holder_start_ = 0;  // starts_ at the holder's last start
  uint64_t own_starts_ = 0;    // the holder's starts since its last completed window
  uint64_t starts_ = 0;        // starts of followed sequences so far
};

}  // namespace pygraph
