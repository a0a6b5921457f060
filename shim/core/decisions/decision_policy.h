// Whether a sequence's graphs pay, measured online (issue 11): once a sequence is graphable,
// windows of iterations run eagerly and as graphs in turn, and the iteration times decide.
//
// An iteration is the time from one start of the sequence to the next, as the engine sees it
// (one clock read per occurrence, never per launch), so everything graphs change is in it: the
// CPU's recording, patching and graph launches, and the GPU's stalls. The rule (noise-aware):
//  - windows alternate graph, eager, graph, eager, … (`pairs` of each, `window` iterations
//    each), so that slow drift of the machine hits both arms alike; the first iteration of each
//    window is dropped (it pays for the switch);
//  - each window gives its median iteration; each pair (a graph window and the eager window
//    after it) gives the ratio graph / eager;
//  - when some pairs are won by graphs and some lost, the median ratio is one noisy pair's:
//    twice as many pairs are measured, once;
//  - verdict "graph" when the median ratio shows a gain of at least `min_gain_percent` and the
//    graph window won in at least two thirds of the pairs; otherwise "eager" (graphs that do not
//    measurably pay are not kept: an eager sequence then costs what off mode costs);
//  - hysteresis: a "graph" verdict measured again (below) stays "graph" while the median ratio
//    still shows the gain, however the pairs split; it turns "eager" once the gain is under the
//    threshold. Near the threshold the pairs split on noise, and the verdict would flip on it;
//  - the verdict's figures are the eager windows' median and the graph time that the median
//    ratio gives it, so that 1 - graph / eager is the gain the rule used.
// Measuring costs at most the eager windows' share of the gain: with the defaults, 3 pairs of 8
// iterations, under 0.5 % of a 1,000-iteration run for a sequence that graphs make 15 % faster
// (pairs that disagree, measured twice as long, come where graphs gain little either way).
//
// Re-evaluation: a "graph" verdict is measured again when the replays change (patched nodes
// per replayed launch grow by half, launches per replay shrink by a third, in two reports in a
// row; chunks that grow change neither) or the graph iterations slow down by more than
// `drift_percent` in `drift_windows` windows in a row (one slow window is noise: on the GPU
// machine, lockstep chunk medians of one run spread by ±10 %). Windows that much faster, as
// many in a row, make the reference instead: graphs running faster are no sign that they stopped
// paying, and after a warm start the first window pays for building them (session 18: the cached
// verdict of the suite's MLP was measured again when it ran 19 % faster). Drift is measured from
// the first window of graph iterations after the verdict, not from the measurement's graph windows:
// those alternate with eager windows, and a GPU-bound program's iterations, timed on the CPU, run
// at another pace once the GPU's queue holds graph work only (ResNet-50 at batch 64 on the H100:
// 6.5 ms measured, its steady state drifted from it, and its verdict was measured again and
// again). A measurement that confirms the verdict doubles the drift windows needed next time.
// An occurrence rescaled (rescaled(): a loop unrolled anew, so that each occurrence spans
// another number of launches) is no drift and no change of the replays: the verdict takes fresh
// references, its drift from the next window and its replay figures from the next report that
// holds only the new unroll's replays; a measurement under way starts over.
// An "eager" verdict is tried again after `recheck_iterations` iterations (doubling each time it
// is confirmed). why() says what started the running measurement again, and the verdict after it.
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
  // The measurement under way starts over from its first window (its samples so far were taken
  // around a long pause: the engine's measuring turn, measure_turn.h).
  void restart() {
    interrupt();
    if (phase_ == Phase::kMeasuring) start_measuring(again_);
  }
  // An occurrence spans another number of launches from now on (a loop unrolled anew to a
  // multiple of its argument period, arg_period.h): iterations and replays before and after
  // are no figures of one thing, and set side by side they read as a change (a loop three times
  // as long per occurrence "drifted", and was measured again). The running iteration is no
  // sample; a measurement under way starts over from its first window, for the same reason; a
  // graph verdict takes its drift reference anew from the next window, and its replay-figure
  // reference from the next report, which the caller begins here: replays counted before the
  // rescale are dropped, not reported (GraphEngine::unroll_period). An eager verdict keeps its
  // recheck count; its next measurement takes replay figures of the new unroll only.
  void rescaled();
  // Replay figures of the graph arm (for re-evaluation), at any time.
  void replay_figures(double patched_per_replay, double launches_per_replay);

  Phase phase() const { return phase_; }
  bool decided() const { return phase_ != Phase::kMeasuring; }
  // The figures of the last verdict, for stats, trace and cache.
  double eager_ns() const { return eager_ns_; }
  double graph_ns() const { return graph_ns_; }
  double gain_percent() const { return eager_ns_ > 0 ? 100.0 * (1.0 - graph_ns_ / eager_ns_) : 0; }
  uint32_t pairs_won() const { return pairs_won_; }
  // Window pairs of the running or last measurement: `pairs`, or twice that where they
  // disagreed.
  uint32_t pairs() const { return pairs_; }
  const std::string& source() const { return source_; }  // "measured", "cached", "config"
  std::string why() const;
  uint32_t measurements() const { return measurements_; }
  // Measurement windows completed, over all measurements (a warm start completes none).
  uint32_t windows() const { return windows_; }

 private:
  void start_measuring(std::string why);
  // A graph verdict (measured or adopted): its drift and replay figures are watched from now.
  void watch_anew();
  // Graph phase: a window of graph iterations (its median) against the drift reference.
  void graph_window(double now);
  void decide();
  Arm arm_for(uint32_t window_index) const;

  PolicyOptions options_;
  Phase phase_ = Phase::kMeasuring;
  std::string source_ = "measured";
  uint64_t last_start_ = 0;
  Arm running_ = Arm::kGraph;
  // Measuring: samples of the current window, and each finished window's median.
  uint32_t window_index_ = 0;
  uint32_t position_ = 0;            // of the running iteration in its window
  uint32_t pairs_ = options_.pairs;  // of this measurement
  std::vector<double> samples_;
  std::vector<double> window_medians_;
  // The verdict's figures, and what re-evaluation compares with.
  double eager_ns_ = 0, graph_ns_ = 0;
  uint32_t pairs_won_ = 0;
  double patched_now_ = -1, launches_now_ = -1;  // per replayed launch; per replay
  double patched_at_verdict_ = -1, launches_at_verdict_ = -1;
  std::vector<double> recent_;    // graph iterations since the verdict (drift)
  double steady_ns_ = 0;          // the first graph window's median after the verdict (drift)
  uint32_t drifting_ = 0;         // windows in a row beyond drift_percent, slower
  uint32_t faster_ = 0;           // windows in a row beyond drift_percent, faster
  uint32_t confirmed_ = 0;        // measurements in a row that gave "graph" again (at most 4)
  uint32_t changed_reports_ = 0;  // replay-figure reports in a row that changed
  bool take_reference_ = false;   // after a rescale: the next report is the reference
  std::string again_;             // what started the running measurement, "" at the first
  uint64_t eager_iterations_ = 0, recheck_after_ = 0;
  bool last_verdict_eager_ = false;  // a confirmed eager verdict doubles recheck_after_
  bool kept_standing_ = false;       // the verdict is graph by the hysteresis alone
  uint32_t measurements_ = 0;
  uint32_t windows_ = 0;
};

}  // namespace pygraph
