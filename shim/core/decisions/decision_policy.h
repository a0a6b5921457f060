// Whether a sequence's graphs pay, measured online (issue 11): once a sequence is graphable,
// windows of iterations run eagerly and as graphs in turn, and the iteration times decide.
//
// An iteration is the time from one start of the sequence to the next, as the engine sees it
// (one clock read per occurrence, never per launch), so everything graphs change is in it: the
// CPU's recording, patching and graph launches, and the GPU's stalls. The rule (noise-aware):
//  - windows alternate eager, graph, eager, graph, … (`pairs` of each, `window` iterations
//    each), so that slow drift of the machine hits both arms alike; the first iteration of each
//    window is dropped (it pays for the switch);
//  - each window gives its median iteration; each pair (an eager window and the graph window
//    after it) gives the ratio graph / eager;
//  - verdict "graph" when the median ratio shows a gain of at least `min_gain_percent` and the
//    graph window won in at least two thirds of the pairs; otherwise "eager" (graphs that do not
//    measurably pay are not kept: an eager sequence then costs what off mode costs).
// Measuring costs at most the eager windows' share of the gain: with the defaults, 3 pairs of 8
// iterations, under 0.5 % of a 1,000-iteration run for a sequence that graphs make 15 % faster.
//
// Re-evaluation: a "graph" verdict is measured again when the replays change (patched nodes
// per replayed launch grow by half, launches per replay shrink by a third; chunks that grow
// change neither) or the graph iterations drift from the figure of the verdict by more than
// `drift_percent` in `drift_windows` windows in a row (one slow window is noise: on the GPU
// machine, lockstep chunk medians of one run spread by ±10 %); an "eager" verdict is tried
// again after `recheck_iterations` iterations (doubling each time it is confirmed).
//
// A unit of its own: the engine asks it which way to run the next iteration and tells it the
// time; it never reaches into the engine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pygraph {

struct PolicyOptions {
  uint32_t pairs = 3;   // eager/graph window pairs per measurement
  uint32_t window = 8;  // iterations per window
  double min_gain_percent = 2.0;
  double drift_percent = 15.0;
  uint32_t drift_windows = 3;
  uint64_t recheck_iterations = 2000;
};

enum class Arm : uint8_t { kGraph, kEager };

class SequencePolicy {
 public:
  enum class Phase : uint8_t { kMeasuring, kGraph, kEager };

  explicit SequencePolicy(PolicyOptions options = {}) : options_(options) {}

  // A decision known before measuring (the cache, or the config forcing it): applied at once.
  void adopt(bool graph, const std::string& source);

  // At the start of an occurrence, `now_ns` on a monotonic clock: closes the previous iteration
  // (if any) and says how to run this one.
  Arm next(uint64_t now_ns);
  // The sequence did not go on (a mismatch, a flush that ended it): the running iteration is no
  // sample.
  void interrupt() { last_start_ = 0; }
  // Replay figures of the graph arm (for re-evaluation), at any time.
  void replay_figures(double patched_per_replay, double launches_per_replay);

  Phase phase() const { return phase_; }
  bool decided() const { return phase_ != Phase::kMeasuring; }
  // The figures of the last verdict, for stats, trace and cache.
  double eager_ns() const { return eager_ns_; }
  double graph_ns() const { return graph_ns_; }
  double gain_percent() const { return eager_ns_ > 0 ? 100.0 * (1.0 - graph_ns_ / eager_ns_) : 0; }
  uint32_t pairs_won() const { return pairs_won_; }
  const std::string& source() const { return source_; }  // "measured", "cached", "config"
  std::string why() const;
  uint32_t measurements() const { return measurements_; }

 private:
  void start_measuring();
  void decide();
  Arm arm_for(uint32_t window_index) const;

  PolicyOptions options_;
  Phase phase_ = Phase::kMeasuring;
  std::string source_ = "measured";
  uint64_t last_start_ = 0;
  Arm running_ = Arm::kGraph;
  // Measuring: samples of the current window, and each finished window's median.
  uint32_t window_index_ = 0;
  uint32_t position_ = 0;  // of the running iteration in its window
  std::vector<double> samples_;
  std::vector<double> window_medians_;
  // The verdict's figures, and what re-evaluation compares with.
  double eager_ns_ = 0, graph_ns_ = 0;
  uint32_t pairs_won_ = 0;
  double patched_now_ = -1, launches_now_ = -1;  // per replayed launch; per replay
  double patched_at_verdict_ = -1, launches_at_verdict_ = -1;
  std::vector<double> recent_;  // graph iterations since the verdict (drift)
  uint32_t drifting_ = 0;       // windows in a row beyond drift_percent
  uint64_t eager_iterations_ = 0, recheck_after_ = 0;
  bool last_verdict_eager_ = false;  // a confirmed eager verdict doubles recheck_after_
  uint32_t measurements_ = 0;
};

}  // namespace pygraph
