// GraphEngine, what the launch path follows: the sequence a launch begins or takes up (a found
// segment, or a loop where it stopped), a loop unrolled to its chunk (period.h, arg_period.h),
// an occurrence's start and end, a variant taking over where sequences part, and what is left
// when a sequence stops. Called when following starts, switches or ends, and at an
// occurrence's end, never per recorded launch: graph_engine.cpp holds the launch path.
#include <algorithm>

#include "graph/graph_engine.h"
#include "graph/period.h"
#include "graph/thread_id.h"

namespace pygraph {

bool GraphEngine::start_following(uint64_t tok, bool periodic_only, uint32_t periodic_id,
                                  uint32_t phase) {
  const Sequence* best = candidate(tok, periodic_only, periodic_id, phase);
  if (!best) return false;
  follow(*best, phase);
  return true;
}

const Sequence* GraphEngine::candidate(uint64_t tok, bool periodic_only, uint32_t periodic_id,
                                       uint32_t phase) const {
  auto usable = [&](const Sequence* s) {
    // A loop of one kernel is a sequence of one token (sequence_detector.h), unrolled when
    // followed; a segment of one launch saves nothing as a graph.
    if (!s || s->occurrences < options_.min_repeats || s->tokens.size() < (s->periodic ? 1 : 2))
      return false;
    auto plan = plans_.find(s->id);
    return plan == plans_.end() || !plan->second.disabled;
  };
  if (periodic_only) {
    const Sequence* s = detector_.find(periodic_id);
    return s && s->periodic && s->tokens[phase % s->tokens.size()] == tok && usable(s) ? s
                                                                                       : nullptr;
  }
  // Of the found segments that begin with this launch, the one seen last is the likeliest (a
  // true variant, the short last batch of an epoch, is a sequence of its own): the detector
  // keeps it, so a segment start costs one lookup however many sequences are known.
  const Sequence* latest = detector_.latest_found_segment(tok);
  if (!latest || usable(latest)) return latest;
  // Its plan is disabled (a graph failure, an unload): the latest of the others, by a scan.
  const Sequence* best = nullptr;
  for (const Sequence& s : detector_.sequences()) {
    if (s.periodic || s.tokens[0] != tok || !usable(&s)) continue;
    if (!best || s.last_end > best->last_end) best = &s;
  }
  return best;
}

bool GraphEngine::start_loop_after_segment(uint64_t tok) {
  const Sequence* segment = detector_.find(completed_segment_);
  if (!segment) return false;
  const ResumePoint next =
      loop_after_segment(*segment, detector_.sequences(), options_.min_repeats);
  if (!next.loop || !start_following(tok, true, next.loop, next.phase)) return false;
  resume_.resumed();  // until its first wrap: a mismatch before it was a wrong guess
  return true;
}

void GraphEngine::follow(const Sequence& s, uint32_t phase) {
  following_id_ = s.id;
  following_periodic_ = s.periodic;
  const size_t plans = plans_.size();
  plan_ = &plans_[s.id];
  if (plans_.size() != plans) new_plan(plan_, s);
  following_tokens_.assign(s.tokens.begin(), s.tokens.end());
  position_ = 0;
  if (s.periodic) {
    // A loop: followed as a multiple of its period (period.h), from wherever in its canonical
    // rotation it is now, and on around (end_of_occurrence).
    unroll_period();
    position_ = phase % s.tokens.size();
  }
  chunk_.begin(position_, plan_->pauses.split() != 0);  // a loop is never split
  // A segment's head goes out ahead of the program's graph (chunk_policy.h, early heads); a
  // split's first chunk is weighed already.
  if (options_.early_head && plan_->head && !s.periodic && !plan_->pauses.split()) {
    chunk_.begin_head(position_, plan_->head);
  }
}

void GraphEngine::unroll_period() {
  const size_t p = plan_->length;
  const size_t k = period_unroll(p, options_.min_period, chunk_.max(), plan_->arg_period);
  // Learned with another unroll than the one followed (learn_arg_period): the unroll changes
  // here, at a turn or at a follow while that turn was still to come.
  const bool anew = plan_->unroll_anew;
  plan_->unroll_anew = false;
  following_tokens_.resize(p);
  following_tokens_.reserve(p * k);
  for (size_t i = p; i < p * k; ++i) following_tokens_.push_back(following_tokens_[i - p]);
  // Unrolled anew, an occurrence, which the policy times as one iteration, spans another number
  // of launches. Told, it takes fresh references rather than read the change as a drift
  // (decision_policy.h); the next report of replay figures holds the new unroll's replays alone.
  if (anew && options_.measure) {
    plan_->policy.rescaled();
    plan_->restart_replay_figures();
  }
}

void GraphEngine::learn_arg_period() {
  // Positions count from the unrolled period's start; occurrences count its turns.
  const uint64_t base = plan_->occurrences * following_tokens_.size();
  for (const Pending& p : pending_) {
    if (!plan_->args.seen(base + p.position, patch_hash(p, arena_.data()))) continue;
    const uint32_t m = plan_->args.iterations();
    if (period_unroll(plan_->length, options_.min_period, chunk_.max(), m) * plan_->length !=
        following_tokens_.size()) {
      plan_->arg_period = m;
      plan_->unroll_anew = true;  // at the next turn (end_of_occurrence)
      ++stats_.loops_unrolled_by_arguments;
    }
    return;
  }
}

void GraphEngine::end_of_occurrence() {
  if (!following_id_ || position_ != following_tokens_.size()) return;
  if (plan_) plan_->pauses.ended();
  resume_.settled();
  if (following_periodic_ && plan_ && !plan_->disabled) {
    // A loop goes on at the start of its unrolled period; chunks keep their size. Where its
    // argument period was just learned, the period is unrolled anew for it: no chunk is open.
    position_ = 0;
    if (plan_->unroll_anew) unroll_period();
    chunk_.wrap();
    start_occurrence();
    return;
  }
  completed_segment_ = following_id_;  // the program may go on past it (take())
  stop_following();                    // a segment's occurrence is complete
}

void GraphEngine::start_occurrence() {
  if (plan_) ++plan_->occurrences;
  choose_arm();
  if (plan_ && !eager_arm_) ++plan_->graph_arms;
  // Its pauses are weighed on occurrences recorded from their start (pause_places.h).
  if (plan_) plan_->pauses.occurrence(!eager_arm_ && position_ == 0);
}

void GraphEngine::interrupt_occurrence() {
  if (plan_) plan_->policy.interrupt();
}

bool GraphEngine::switch_variant(uint64_t tok) {
  // Variants of one step (another grid, a branch taken every other step) share a prefix: the
  // one whose next token is this one takes over, recorded work and all. A loop that goes
  // elsewhere ends (its positions are in an unrolled, rotated period, no other's).
  // An eager occurrence (measuring or decided) belongs to its own plan's policy: it ends here.
  if (following_periodic_ || eager_arm_) return false;
  for (const Sequence& s : detector_.sequences()) {
    if (s.id == following_id_ || s.periodic != following_periodic_ ||
        s.occurrences < options_.min_repeats || s.tokens.size() <= position_ ||
        s.tokens[position_] != tok ||
        !std::equal(s.tokens.begin(), s.tokens.begin() + position_, following_tokens_.begin())) {
      continue;
    }
    auto plan = plans_.find(s.id);
    if (plan != plans_.end() && plan->second.disabled) continue;
    plan_->pauses.interrupt();  // left, as at stop_following
    plan_->pauses.left();
    const bool was_split = plan_->pauses.split() != 0;
    following_id_ = s.id;
    const size_t plans = plans_.size();
    plan_ = &plans_[s.id];
    if (plans_.size() != plans) new_plan(plan_, s);
    // A chunk begun whole for a split step is no chunk of a variant never weighed so.
    if (was_split && !plan_->pauses.split()) chunk_.begin(chunk_.start());
    following_tokens_.assign(s.tokens.begin(), s.tokens.end());
    ++stats_.variant_switches;
    return true;
  }
  return false;
}

void GraphEngine::stop_following() {
  if (following_id_ && following_periodic_ && plan_ && !plan_->disabled) {
    // A loop that stops (a boundary cuts it, or a launch it does not have comes) may go on at
    // the next segment's start, where it stopped (take()).
    resume_.remember(following_id_, static_cast<uint32_t>(position_ % plan_->length), thread_id());
  }
  // Every plan left (here, or for a variant) is interrupted: the next entry it records follows
  // no entry of its own.
  if (plan_) {
    plan_->pauses.interrupt();
    plan_->pauses.left();  // a round of its weighing that did not reach the occurrence's end
  }
  following_id_ = 0;
  resume_.settled();
  plan_ = nullptr;
  following_tokens_.clear();
  position_ = 0;
  chunk_.reset();
}

}  // namespace pygraph
