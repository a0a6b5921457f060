// Loops taken up again where they stopped (docs/design-graph-mode.md, "Cause: the engine forgot
// the loop at every sync"). A loop without syncs is found two whole periods into a run; a sync
// cuts it, and the run after the sync would have to find it again (its first two iterations
// eager) while the step it belongs to becomes a segment only at its third occurrence. So a loop
// that stops, cut by a boundary or ended by a launch it does not have, is remembered with its
// phase (the index of its next launch in its canonical rotation), and at the next segment's first
// launch it goes on from there if that launch is its token there.
//
//  - Tried once, at the next segment's start, and only on the thread the loop ran on: another
//    thread's launch after the sync is no part of it (and a chunk's context is its thread's).
//  - A launch that fails ends the segment with no resume: a retry of it is no place to take the
//    loop up.
//  - It only chooses what the engine follows: a wrong guess ends as any mismatch does, and until
//    the resumed loop's first wrap a mismatch is counted as one (graphs.resume_mismatches).
// A unit of its own so that the engine stays a coordinator and tests call it directly.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/sequence_detector.h"

namespace pygraph {

// Where a stopped loop may go on.
struct ResumePoint {
  uint32_t loop = 0;   // its periodic sequence's id; 0: none
  uint32_t phase = 0;  // the index of its next launch in its canonical rotation
};

class LoopResume {
 public:
  // Loop `loop` stopped on `thread` (or the launch just before a boundary completed its period,
  // not yet followed), its next launch at `phase`: the next segment's start may take it up. A
  // later stop replaces it.
  void remember(uint32_t loop, uint32_t phase, const void* thread) {
    point_ = {loop, phase};
    thread_ = thread;
  }
  // The segment ended at a launch that failed: nothing to take up.
  void forget() { point_.loop = 0; }
  // At a segment's first launch, on `thread`: the loop to try there (loop 0: none). Tried once:
  // forgotten either way.
  ResumePoint take(const void* thread) {
    ResumePoint p = point_;
    if (thread_ != thread) p.loop = 0;
    point_.loop = 0;
    return p;
  }

  // The engine follows a loop it took up: until its first wrap, a mismatch was a wrong guess.
  void resumed() { guessing_ = true; }
  // It wrapped, or stopped: no longer a guess.
  void settled() { guessing_ = false; }
  bool guessing() const { return guessing_; }

 private:
  ResumePoint point_;
  const void* thread_ = nullptr;
  bool guessing_ = false;
};

// Whether `segment` is the loop again: the tokens of periodic sequence `loop` (null: none known)
// in order from `phase` of its canonical rotation on, for at least one whole period. A training
// loop's iterations between two syncs are such a segment; with measured decisions it is no
// sequence of its own (it would measure from nothing what the loop has decided or is measuring),
// so the loop is taken up instead. A scan of the segment's tokens, at a segment's start only.
bool made_of_loop(const Sequence& segment, const Sequence* loop, uint32_t phase);

// Where the loop a segment is made of goes on after the segment's last launch: a loop of
// `sequences` (seen at least `min_repeats` times) whose tokens, from some phase, are the
// segment's, with the phase of its next launch (loop 0: none). A segment that begins at
// several places of loops is the first found. For a segment followed to its end whose program
// went on without a boundary: the segments of one loop between syncs share their head, so the
// one seen last, followed at a segment's start, is sometimes shorter than the program's
// (a chunk of 40 steps read every 10 from step 8 ends in 8, 10, 10, 10 and 2 steps); the loop
// takes over where it ended instead of being found anew two periods later. A scan of the
// loops' phases, run only where a followed segment was too short.
ResumePoint loop_after_segment(const Sequence& segment, const std::vector<Sequence>& sequences,
                               uint32_t min_repeats);

}  // namespace pygraph
