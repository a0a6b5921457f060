// GraphEngine, a sequence's name and verdict: its plan when first followed, its signature put
// together from the nodes its occurrences record (signature.h), the kernel patterns and the
// decision store that may decide it at once, the measured arm of each occurrence
// (decision_policy.h, measure_turn.h), and the per-sequence figures the stats report. Called
// per occurrence or per chunk, never per launch: apart from graph_engine.cpp, which holds the
// launch path.
#include <fnmatch.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "decisions/signature.h"
#include "graph/flush_rules.h"
#include "graph/graph_engine.h"

namespace pygraph {

void GraphEngine::new_plan(Plan* plan, const Sequence& s) {
  forget_plans();
  ++stats_.sequences_followed;
  if (observer_) observer_->followed(s.id, s.periodic, s.tokens.size());
  plan->policy = SequencePolicy(options_.policy);
  plan->length = static_cast<uint32_t>(s.tokens.size());
  plan->periodic = s.periodic;
  plan->pauses.start(s.tokens.size(), s.periodic, options_.pause_ns, options_.pause_gpu_ns,
                     options_.pause_idle_ratio, &stats_.pauses, options_.tail_pause_ns,
                     options_.restart_chunks);
  if (s.periodic) plan->args.start(s.tokens.size());
  plan->names.resize(s.tokens.size());
  plan->names_left = s.tokens.size();
}

void GraphEngine::forget_plans() {
  if (detector_.evictions() == detector_evictions_) return;
  detector_evictions_ = detector_.evictions();
  for (auto it = plans_.begin(); it != plans_.end();) {
    Plan& plan = it->second;
    // The plan about to be followed is kept with the others: its sequence came from the
    // detector. A measured verdict is in the store already (record_decision).
    if (detector_.find(it->first)) {
      ++it;
      continue;
    }
    turn_.forget(&plan);
    // park_destroyed prunes the list only at an event's destroy, which a program that reuses
    // its events (NCCL) never calls.
    std::erase(submitter_.event_graph_sequences(), it->first);
    stats_.graphs_evicted += destroy_chunks(plan);
    ++stats_.sequences_forgotten;
    it = plans_.erase(it);
  }
}

void GraphEngine::name_nodes(Plan& plan) {
  // By each node's position: a loop's run over its unrolled period from its canonical
  // rotation's start.
  for (const Pending& p : pending_) {
    NodeName& n = plan.names[p.position % plan.names.size()];
    if (n.known) continue;
    n.known = true;
    if (p.kind == NodeKind::kKernel) {
      const EngineLaunch& l = p.launch;
      n.kernel = l.info->name;
      std::memcpy(n.block, l.block, sizeof n.block);
      n.op = static_cast<uint16_t>(l.op);
      n.attrs = node_attrs(l, attrs_.data() + p.attrs_offset);
      n.stream = normalized_stream(l.stream, l.per_thread);
    } else if (is_event_op(p.kind)) {
      n.memop = true;
      n.op = static_cast<uint16_t>(p.event.op);
      n.stream = normalized_stream(p.event.stream, p.event.per_thread);
    } else if (p.kind == NodeKind::kChildGraph) {
      n.memop = true;  // named by its op and stream: its id is no name across runs
      n.op = static_cast<uint16_t>(Op::GraphLaunch);
      n.stream = normalized_stream(p.graph.stream, p.graph.per_thread);
    } else {
      n.memop = true;
      n.op = static_cast<uint16_t>(p.memop.op);
      n.element_size = memset_element_size(p.memop.op);
      n.src_kind = p.kind == NodeKind::kCopy ? static_cast<uint32_t>(p.src) : 0;
      n.stream = normalized_stream(p.memop.stream, p.memop.per_thread);
    }
    if (--plan.names_left == 0) {
      name_plan(plan);
      return;
    }
  }
}

bool GraphEngine::kernel_allowed(const std::string& name) const {
  for (const std::string& p : options_.deny_kernels) {
    if (fnmatch(p.c_str(), name.c_str(), 0) == 0) return false;  // deny wins
  }
  for (const std::string& p : options_.allow_kernels) {
    if (fnmatch(p.c_str(), name.c_str(), 0) == 0) return true;
  }
  return false;
}

void GraphEngine::name_plan(Plan& plan) {
  SignatureBuilder b;
  std::vector<uint64_t> streams;  // in order of first use within the sequence
  bool allowed = true;
  for (const NodeName& n : plan.names) {
    const auto at = std::find(streams.begin(), streams.end(), n.stream);
    const uint32_t ordinal = static_cast<uint32_t>(at - streams.begin());
    if (at == streams.end()) streams.push_back(n.stream);
    if (n.memop) {
      b.add_memop(n.op, n.element_size, n.src_kind, ordinal);
    } else {
      b.add_launch(n.kernel, n.block, n.op, n.attrs, ordinal);
      allowed = allowed && kernel_allowed(n.kernel);
    }
  }
  plan.signature = b.finish(plan.periodic);
  // Beside the signature in the stats: which code a sequence is, without a trace.
  const auto first = std::find_if(plan.names.begin(), plan.names.end(),
                                  [](const NodeName& n) { return !n.memop; });
  if (first != plan.names.end()) plan.first_kernel = first->kernel;
  plan.names = {};
  if (!allowed) {
    // Final: the config is not measured against. Its occurrences run eagerly from the next on.
    plan.config_eager = true;
    plan.policy.adopt(false, "config");
    ++stats_.decided_config;
    if (observer_) observer_->decided(following_id_, plan.signature, plan.policy, plan.length);
    return;
  }
  if (!options_.measure) return;
  const Decision* d = options_.store ? options_.store->find(plan.signature) : nullptr;
  if (d) {
    // Warm start: an earlier run measured it on this GPU, driver and shim.
    plan.policy.adopt(d->verdict == "graph", "cached");
    ++stats_.decided_cached;
    if (observer_) observer_->decided(following_id_, plan.signature, plan.policy, plan.length);
  } else {
    ++stats_.measurements;  // its first measurement: the windows under way go on
  }
}

void GraphEngine::record_decision(const Plan& plan) {
  if (!options_.store || plan.signature.empty()) return;
  const SequencePolicy& p = plan.policy;
  Decision d;
  d.verdict = p.phase() == SequencePolicy::Phase::kGraph ? "graph" : "eager";
  d.why = p.why();
  d.eager_us = p.eager_ns() / 1e3;
  d.graph_us = p.graph_ns() / 1e3;
  d.windows = 2 * p.pairs();
  d.launches = plan.length;
  options_.store->record(plan.signature, d);
}

std::vector<SequenceStat> GraphEngine::sequence_stats(size_t max) const {
  // The `max` with most launches first (then by signature), chosen before anything is copied.
  std::vector<const Plan*> plans;
  plans.reserve(plans_.size());
  for (const auto& [id, plan] : plans_) plans.push_back(&plan);
  auto first = [](const Plan* a, const Plan* b) {
    return a->followed != b->followed ? a->followed > b->followed : a->signature < b->signature;
  };
  const size_t kept = std::min(max, plans.size());
  std::partial_sort(plans.begin(), plans.begin() + kept, plans.end(), first);
  plans.resize(kept);
  std::vector<SequenceStat> out;
  out.reserve(kept);
  for (const Plan* each : plans) {
    const Plan& plan = *each;
    const SequencePolicy& p = plan.policy;
    SequenceStat s;
    s.signature = plan.signature;
    s.first_kernel = plan.first_kernel;
    s.launches = plan.followed;
    s.replays = plan.graph_replays;
    s.launches_per_replay =
        plan.graph_replays ? double(plan.graph_launches) / double(plan.graph_replays) : 0.0;
    const PausePlaces& pauses = plan.pauses;
    s.pause_state = pauses.learning() ? "learning" : pauses.weighing() ? "weighing" : "settled";
    s.pauses_cutting = pauses.count();
    s.pauses_dropped = pauses.light();
    s.split = pauses.split();
    s.rounds = pauses.rounds();
    s.cuts = pauses.cut_places();
    s.restarts = pauses.restart_places();
    s.restart_sizes = pauses.restart_sizes();
    s.whole_rounds = pauses.whole_rounds();
    if (plan.disabled) {
      s.verdict = "eager";
      s.source = "disabled";
      s.why = "eager (graph failure or module unload)";
    } else if (!options_.measure && !plan.config_eager) {
      s.verdict = "graph";
      s.source = "unmeasured";
      s.why = "graph (measuring off)";
    } else {
      s.verdict = p.phase() == SequencePolicy::Phase::kGraph   ? "graph"
                  : p.phase() == SequencePolicy::Phase::kEager ? "eager"
                                                               : "measuring";
      s.source = p.source();
      s.why = p.why();
      if (!p.decided()) s.why = turn_why(plan, s.why);
      s.gain_percent = p.gain_percent();
      s.eager_us = p.eager_ns() / 1e3;
      s.graph_us = p.graph_ns() / 1e3;
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::string GraphEngine::turn_why(const Plan& plan, const std::string& policy_why) const {
  // The policy counts windows only while its sequence holds the measuring turn: one that waits
  // would read "window 1 of 6" for good (session 19: eight sequences of the suite's
  // reduce-overhead MLP did).
  char line[200];
  if (turn_.set_aside(plan.turn_blocked_until)) {
    std::snprintf(line, sizeof line,
                  "measuring set aside for the next %llu sequence starts: its windows were cut "
                  "short (a mismatch or a flush) every time; graphs, unmeasured, meanwhile",
                  static_cast<unsigned long long>(plan.turn_blocked_until - turn_.starts()));
    return line;
  }
  const uint64_t unmet = turn_.starts() - plan.turn_last_start;
  if (unmet > MeasureTurn<Plan>::kIdleStarts) {
    // Met before (in a warm-up, a set-up) and not since: it measures when it comes back.
    std::snprintf(line, sizeof line, "%s; not met in the last %llu sequence starts",
                  policy_why.c_str(), static_cast<unsigned long long>(unmet));
    return line;
  }
  if (turn_.holder() && turn_.holder() != &plan) {
    return "waiting to measure: another sequence measures now (one at a time); graphs, "
           "unmeasured, meanwhile";
  }
  return policy_why;
}

void GraphEngine::choose_arm() {
  eager_arm_ = false;
  if (!plan_) return;
  plan_->followed += following_tokens_.size() - position_;
  if (plan_->short_chunks.undeferred()) {
    // Its chunks are cut to one launch: this occurrence goes out as it comes (chunk_policy.h).
    eager_arm_ = true;
    eager_arm_reason_ = EagerReason::kShortChunk;
    if (options_.measure) plan_->policy.interrupt();  // no sample spans these
    return;
  }
  if (plan_->config_eager) {
    eager_arm_ = true;  // never measured: the config said so
    eager_arm_reason_ = EagerReason::kDecidedEager;
    return;
  }
  if (!options_.measure) return;
  SequencePolicy& policy = plan_->policy;
  // One sequence measures at a time; its iteration spans whatever ran between two of its starts
  // (measure_turn.h).
  if (Plan* gone = turn_.start(plan_)) gone->policy.interrupt();
  plan_->turn_last_start = turn_.starts();
  if (turn_.waits(plan_, policy.decided(), plan_->turn_blocked_until)) {
    policy.interrupt();
    eager_arm_ = false;
    return;
  }
  const auto before = policy.phase();
  const uint32_t windows = policy.windows();
  eager_arm_ = policy.next(now_ns()) == Arm::kEager;
  eager_arm_reason_ = policy.decided() ? EagerReason::kDecidedEager : EagerReason::kMeasuring;
  // A loop taken up in the middle of its period (found again, or resumed after a sync): this
  // partial iteration is no sample; the first whole one begins at the wrap.
  if (position_ != 0) policy.interrupt();
  stats_.measure_windows += policy.windows() - windows;
  const auto after = policy.phase();
  if (const uint64_t blocked = turn_.ran(plan_, after == SequencePolicy::Phase::kMeasuring,
                                         policy.windows() != windows)) {
    // Its samples are always cut short: graphs, unmeasured, this occurrence already; what it
    // measured so far is no half of a later measurement.
    plan_->turn_blocked_until = blocked;
    policy.restart();
    eager_arm_ = false;
  }
  if (after != before) {
    if (after == SequencePolicy::Phase::kMeasuring) ++stats_.measurements;
    if (after == SequencePolicy::Phase::kGraph) ++stats_.decided_graph;
    if (after == SequencePolicy::Phase::kEager) ++stats_.decided_eager;
    if (after != SequencePolicy::Phase::kMeasuring) record_decision(*plan_);
    if (observer_) observer_->decided(following_id_, plan_->signature, policy, plan_->length);
  }
}

}  // namespace pygraph
