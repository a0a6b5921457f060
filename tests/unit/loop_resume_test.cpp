// The resume of loops (loop_resume.h) on its own: a stopped loop is taken up once, only on its
// thread, at the phase where it stopped; a failing launch leaves nothing to take up; and a
// segment counts as the loop again only when its tokens follow the loop's rotation.
#include "graph/loop_resume.h"

#include <gtest/gtest.h>

#include <vector>

#include "graph/sequence_detector.h"

namespace pygraph {
namespace {

// Two threads, as the engine tells them apart: by an address per thread.
char kThreadA, kThreadB;

TEST(LoopResume, AStoppedLoopIsTakenUpOnceWhereItStopped) {
  LoopResume r;
  EXPECT_EQ(r.take(&kThreadA).loop, 0u);  // nothing stopped yet
  r.remember(7, 3, &kThreadA);
  const ResumePoint p = r.take(&kThreadA);
  EXPECT_EQ(p.loop, 7u);
  EXPECT_EQ(p.phase, 3u);
  EXPECT_EQ(r.take(&kThreadA).loop, 0u);  // tried once
}

TEST(LoopResume, OnlyTheLoopsThreadTakesItUpAndAnotherUsesTheTryUp) {
  LoopResume r;
  r.remember(7, 3, &kThreadA);
  EXPECT_EQ(r.take(&kThreadB).loop, 0u);  // another thread's launch after the sync
  EXPECT_EQ(r.take(&kThreadA).loop, 0u);  // and the try is gone
}

TEST(LoopResume, TheLatestStopCountsAndAFailingLaunchLeavesNothing) {
  LoopResume r;
  r.remember(7, 3, &kThreadA);
  r.remember(9, 1, &kThreadB);
  EXPECT_EQ(r.take(&kThreadA).loop, 0u);
  r.remember(9, 1, &kThreadB);
  const ResumePoint p = r.take(&kThreadB);
  EXPECT_EQ(p.loop, 9u);
  EXPECT_EQ(p.phase, 1u);

  r.remember(7, 3, &kThreadA);
  r.forget();
  EXPECT_EQ(r.take(&kThreadA).loop, 0u);
}

TEST(LoopResume, AResumedLoopIsAGuessUntilItSettles) {
  LoopResume r;
  EXPECT_FALSE(r.guessing());
  r.resumed();
  EXPECT_TRUE(r.guessing());
  r.remember(7, 3, &kThreadA);  // stopping remembers it again; the engine settles it
  EXPECT_TRUE(r.guessing());
  r.settled();
  EXPECT_FALSE(r.guessing());
}

Sequence seq(std::vector<uint64_t> tokens, bool periodic) {
  Sequence s;
  s.id = periodic ? 1 : 2;
  s.periodic = periodic;
  s.tokens = std::move(tokens);
  return s;
}

TEST(MadeOfLoop, TheSegmentFollowsTheLoopsRotationFromThePhase) {
  const Sequence loop = seq({1, 2, 3, 4}, true);
  EXPECT_TRUE(made_of_loop(seq({3, 4, 1, 2}, false), &loop, 2));
  EXPECT_TRUE(made_of_loop(seq({3, 4, 1, 2, 3, 4, 1, 2}, false), &loop, 2));
  EXPECT_TRUE(made_of_loop(seq({3, 4, 1, 2, 3}, false), &loop, 6));   // phases wrap
  EXPECT_FALSE(made_of_loop(seq({3, 4, 1, 2}, false), &loop, 0));     // another phase
  EXPECT_FALSE(made_of_loop(seq({3, 4, 1, 2, 9}, false), &loop, 2));  // a launch it lacks
  EXPECT_FALSE(made_of_loop(seq({3, 4}, false), &loop, 2));           // less than one period
  EXPECT_FALSE(made_of_loop(seq({3, 4, 1, 2}, false), nullptr, 2));   // dropped, or none
  const Sequence segment = seq({1, 2, 3, 4}, false);
  EXPECT_FALSE(made_of_loop(seq({1, 2, 3, 4}, false), &segment, 0));  // not a loop
}

TEST(LoopAfterSegment, TheLoopGoesOnAtThePhaseAfterTheSegmentsLastLaunch) {
  Sequence inner = seq({2, 3}, true);  // a shorter loop inside the iteration, found first
  inner.id = 3;
  inner.occurrences = 5;
  Sequence loop = seq({1, 2, 3, 4}, true);
  loop.occurrences = 2;
  const std::vector<Sequence> known = {inner, seq({9, 9}, false), loop};
  // Two iterations from phase 2 (3, 4, 1, 2, ...): the next launch is the loop's at 2 again.
  ResumePoint p = loop_after_segment(seq({3, 4, 1, 2, 3, 4, 1, 2}, false), known, 2);
  EXPECT_EQ(p.loop, loop.id);
  EXPECT_EQ(p.phase, 2u);
  p = loop_after_segment(seq({1, 2, 3, 4, 1, 2}, false), known, 2);  // one and a half
  EXPECT_EQ(p.loop, loop.id);
  EXPECT_EQ(p.phase, 2u);
  EXPECT_EQ(loop_after_segment(seq({1, 2, 3, 9}, false), known, 2).loop, 0u);  // not the loop
  EXPECT_EQ(loop_after_segment(seq({1, 2, 3}, false), known, 2).loop, 0u);     // not one period
  EXPECT_EQ(loop_after_segment(seq({1, 2, 3, 4}, false), known, 3).loop, 0u);  // seen too few
  EXPECT_EQ(loop_after_segment(seq({1, 2, 3, 4}, true), known, 2).loop, 0u);   // a loop itself
  // The inner loop, a whole segment of its own: it goes on too.
  p = loop_after_segment(seq({3, 2, 3, 2}, false), known, 2);
  EXPECT_EQ(p.loop, inner.id);
  EXPECT_EQ(p.phase, 1u);
}

TEST(MadeOfLoop, AtTheDetectorsPhaseTheLoopsNextIterationsMatch) {
  // A loop of three launches pushed from another launch than its canonical rotation's first:
  // the phase the detector gives is where its next launch stands, whatever the rotation.
  const std::vector<uint64_t> body = {30, 10, 20};
  SequenceDetector d;
  const Sequence* found = nullptr;
  size_t pushed = 0;
  for (; pushed < 30 && !found; ++pushed) {
    const Sequence* s = d.push(body[pushed % body.size()]);
    if (s && s->periodic) found = s;
  }
  ASSERT_NE(found, nullptr);
  const Sequence loop = *found;  // the detector's pointer lasts until its next call
  const uint32_t phase = d.periodic_phase();
  std::vector<uint64_t> next;
  for (size_t i = 0; i < 2 * body.size(); ++i) next.push_back(body[(pushed + i) % body.size()]);
  EXPECT_TRUE(made_of_loop(seq(next, false), &loop, phase));
  EXPECT_FALSE(made_of_loop(seq(next, false), &loop, phase + 1));
}

}  // namespace
}  // namespace pygraph
