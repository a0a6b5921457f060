#include "breaks.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <tuple>

#include "cli.h"
#include "graph/engine_observer.h"
#include "graph_mode_events.h"
#include "json_text.h"
#include "recording/callsite.h"
#include "simulate.h"

namespace pygraph::analyze {
namespace {

const char* const kBreaksUsage =
    "usage: pygraph-analyze breaks [--top N] [--launch-us X] [--config FILE] [--json] TRACE\n"
    "\n"
    "Ranks what keeps launches out of graphs by the launch time it costs, each with its call\n"
    "site or kernel: syncs and host reads whose steps never repeat the same way, launches no\n"
    "graph can hold, the places where a repeated sequence goes elsewhere, ops that submit a\n"
    "chunk early, sequences whose graphs measured as not paying. A trace written in graph mode\n"
    "holds what graph mode did: its own records are read. Otherwise graph mode's engine runs\n"
    "over the trace offline to find them (as `simulate` does). The cost is eager launches times\n"
    "the launch cost, plus a graph launch per chunk cut early.\n"
    "\n"
    "options:\n"
    "  --top N         rows (default 20)\n"
    "  --launch-us X   CPU cost of one eager launch in microseconds (default 3.5)\n"
    "  --config FILE   simulate the engine this pygraph config file sets up (as `simulate\n"
    "                  --config`); a graph-mode trace is read as it ran\n"
    "  --json          machine-readable output\n"
    "\n"
    "example:\n"
    "  pygraph-analyze breaks run.trace\n"
    "    1. cuStreamSynchronize at py:train.py:42 <module>: 1000 times; ends a step whose 57\n"
    "       launches run eagerly each time (57000 eager launches, ~199.5 ms)\n";

// What a break is put down to.
enum class Kind { kBoundary, kKernel, kDiverges, kCutsChunks, kDrained, kDecision, kEnd };

struct Key {
  Kind kind;
  uint32_t op;        // the op (boundaries, cuts, drains) or the reason (kernels, decisions)
  uint32_t callsite;  // boundaries, cuts, drains: the call site id
  uint32_t function;  // kernels and divergences: the function id; drains: the reason;
                      // decisions: the sequence
  bool operator<(const Key& o) const {
    return std::tie(kind, op, callsite, function) < std::tie(o.kind, o.op, o.callsite, o.function);
  }
};

struct Tally {
  uint64_t times = 0;  // boundaries: segments ended; cuts: chunks cut; others: events
  uint64_t eager = 0;  // launches run eagerly because of it
  uint64_t cuts = 0;   // chunks submitted early because of it
};

class Attribution : public EngineObserver {
 public:
  explicit Attribution(const Trace& trace) : trace_(trace) {}

  void at(const TraceEvent& e) {
    event_ = e;
    flush_site_ = 0;
  }

  void eager(bool memop, EagerReason reason) override { eager_launches(memop, reason, 1); }

  void eager_launches(bool memop, EagerReason reason, uint64_t count) {
    if (memop) return;  // launches are what is ranked
    if (reason == EagerReason::kNotRepeating) {
      unexplained_ += count;  // put down to whatever ends the segment
      return;
    }
    if (reason == EagerReason::kDecidedEager || reason == EagerReason::kMeasuring) {
      // The sequence whose eager arm runs: the last one to reach that phase.
      const uint32_t sequence = reason == EagerReason::kDecidedEager ? eager_ : measuring_;
      tally(Key{Kind::kDecision, static_cast<uint32_t>(reason), 0, sequence}).eager += count;
      return;
    }
    if (!is_launch()) {
      // Work recorded earlier, sent out while an op (or the end) is handled: the op cut it.
      // An op without a call site of its own may have had one taken for its flush.
      const uint32_t site = callsite() ? callsite() : flush_site_;
      tally(Key{Kind::kDrained, op(), site, static_cast<uint32_t>(reason)}).eager += count;
      return;
    }
    if (reason == EagerReason::kMismatch) {
      tally(Key{Kind::kDiverges, 0, 0, function()}).eager += count;
      return;
    }
    tally(Key{Kind::kKernel, static_cast<uint32_t>(reason), 0, function()}).eager += count;
  }

  void decided(uint32_t sequence, const std::string& signature, const SequencePolicy& policy,
               size_t length) override {
    decision(decision_record(sequence, signature, policy, length));
  }

  void decision(const TraceDecision& d) {
    if (d.verdict == trace::DecisionVerdict::kEager) {
      eager_ = d.sequence;
      ++tally(
            Key{Kind::kDecision, static_cast<uint32_t>(EagerReason::kDecidedEager), 0, d.sequence})
            .times;
    } else if (d.verdict == trace::DecisionVerdict::kMeasuring) {
      measuring_ = d.sequence;
    }
    decisions_[d.sequence] = d;
  }

  void flushed(FlushCause cause, Op op, size_t) override { flushed_at(cause, op, callsite()); }

  void flushed_at(FlushCause cause, Op op, uint32_t callsite) {
    if (cause == FlushCause::kOp) flush_site_ = callsite;
    ++tally(Key{Kind::kCutsChunks,
                cause == FlushCause::kOp ? static_cast<uint32_t>(op)
                                         : 1000 + static_cast<uint32_t>(cause),
                cause == FlushCause::kOp ? callsite : 0, 0})
          .cuts;
  }

  void segment_ended(Op op) override {
    Tally& t = is_launch() ? tally(Key{Kind::kKernel, 1000, 0, function()})
                           : tally(Key{Kind::kBoundary, static_cast<uint32_t>(op), callsite(), 0});
    ++t.times;
    t.eager += unexplained_;
    unexplained_ = 0;
  }

  void finish() {
    if (unexplained_) tally(Key{Kind::kEnd, 0, 0, 0}).eager += unexplained_;
    unexplained_ = 0;
  }

  const std::map<Key, Tally>& tallies() const { return tallies_; }
  // The last decision of each sequence, by its id.
  const std::map<uint32_t, TraceDecision>& decisions() const { return decisions_; }

 private:
  bool is_launch() const { return event_.is_launch && event_.index != ~0u; }
  uint32_t function() const { return is_launch() ? trace_.launches[event_.index].function_id : 0; }
  uint32_t callsite() const {
    return !event_.is_launch && event_.index != ~0u ? trace_.ops[event_.index].callsite_id : 0;
  }
  // The op being handled; Op::kCount at the end of the trace.
  uint32_t op() const {
    return !event_.is_launch && event_.index != ~0u
               ? static_cast<uint32_t>(trace_.ops[event_.index].op)
               : static_cast<uint32_t>(Op::kCount);
  }
  Tally& tally(const Key& k) {
    Tally& t = tallies_[k];
    if (k.kind != Kind::kBoundary && k.kind != Kind::kDecision) ++t.times;
    return t;
  }

  const Trace& trace_;
  TraceEvent event_{false, ~0u};
  uint64_t unexplained_ = 0;
  uint32_t flush_site_ = 0;             // the call site a flush of the call being handled named
  uint32_t eager_ = 0, measuring_ = 0;  // the sequences last decided eager, last measuring
  std::map<Key, Tally> tallies_;
  std::map<uint32_t, TraceDecision> decisions_;
};

std::string kernel_name(const Trace& trace, uint32_t id) {
  const TraceFunction* f = trace.function(id);
  return f && !f->name.empty() ? demangle(f->name.c_str()) : "kernel #" + std::to_string(id);
}

uint64_t seq_of(const Trace& trace, const TraceEvent& e) {
  return e.is_launch ? trace.launches[e.index].seq : trace.ops[e.index].seq;
}

// A trace written in graph mode: its own records say what it did, placed at the calls the shim
// was handling (graph_mode_events.h); decisions the same way, before that call's other events
// (a verdict is reached at an occurrence's start). A boundary op ends a segment: the launches
// before it that were not part of a sequence are put down to it (queries carry a call site too,
// but end no sequence: ops.h).
void attribute_records(const Trace& trace, Attribution* who) {
  const GraphEvents g = graph_mode_events(trace, default_engine_options());
  const std::vector<TraceDecision>& decisions = trace.engine.decisions;
  size_t next = 0, decision = 0;
  for (size_t i = 0; i <= trace.events.size(); ++i) {
    const bool end = i == trace.events.size();
    const TraceEvent ev = end ? TraceEvent{false, ~0u} : trace.events[i];
    who->at(ev);
    const uint64_t seq = end ? UINT64_MAX : seq_of(trace, ev);
    for (; decision < decisions.size() && decisions[decision].seq < seq; ++decision) {
      who->decision(decisions[decision]);
    }
    for (; next < g.events.size() && g.events[next].at == i; ++next) {
      const GraphEvent& x = g.events[next];
      if (x.kind == GraphEventKind::kFlush) who->flushed_at(x.cause, x.op, x.callsite_id);
      if (x.kind == GraphEventKind::kEager) who->eager_launches(x.memop, x.reason, x.count);
    }
    if (!end && !ev.is_launch && trace.ops[ev.index].callsite_id &&
        op_is_boundary(trace.ops[ev.index].op)) {
      who->segment_ended(trace.ops[ev.index].op);
    }
  }
}

// "graphs 1.2 % slower", "graphs only 0.8 % faster", or what decided it without figures.
std::string decision_figures(const TraceDecision& d) {
  char text[160];
  if (d.source == trace::DecisionSource::kConfig)
    return "kept eager by the config's kernel patterns";
  if (d.eager_ns <= 0) return std::string("eager (") + decision_source_name(d.source) + ")";
  const double gain = d.gain_percent();
  std::snprintf(text, sizeof text,
                "graphs %.1f %% %s (%.1f us an iteration eager, %.1f us as graphs, %s)",
                gain < 0 ? -gain : gain, gain < 0 ? "slower" : "faster, too little",
                d.eager_ns / 1e3, d.graph_ns / 1e3, decision_source_name(d.source));
  return text;
}

nlohmann::json frames_of(const Trace& trace, uint32_t callsite) {
  const TraceCallSite* c = trace.callsite(callsite);
  return c ? nlohmann::json(c->frames) : nlohmann::json::array();
}

}  // namespace

nlohmann::json find_breaks(const Trace& trace, const EngineOptions& options,
                           const BreakCosts& costs, int top) {
  Attribution who(trace);
  const bool recorded = !trace.engine.empty();
  uint64_t launches = 0, eager = 0;
  double coverage = 0;
  if (recorded) {
    attribute_records(trace, &who);
    launches = trace.launches.size();
    for (const TraceEager& x : trace.engine.eager) eager += x.memop ? 0 : x.count;
    coverage =
        launches ? 100.0 * double(launches - std::min(eager, launches)) / double(launches) : 0;
  } else {
    const nlohmann::json stats =
        replay_trace(trace, options, &who, [&](const TraceEvent& e) { who.at(e); });
    launches = stats["launches"]["seen_by_engine"].get<uint64_t>();
    eager = stats["launches"]["eager"].get<uint64_t>();
    coverage = stats["coverage_percent"].get<double>();
  }
  who.finish();
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [k, t] : who.tallies()) {
    // A sequence decided eager is shown even before its eager launches begin.
    if (!t.eager && !t.cuts && !(k.kind == Kind::kDecision && t.times)) continue;
    nlohmann::json r;
    r["eager_launches"] = t.eager;
    r["chunks_cut"] = t.cuts;
    r["cost_ms"] = (t.eager * costs.launch_us + t.cuts * costs.graph_launch_us) / 1000.0;
    r["times"] = t.times;
    switch (k.kind) {
      case Kind::kBoundary:
        r["kind"] = "ends_segment";
        r["op"] = op_info(static_cast<Op>(k.op)).name;
        r["frames"] = frames_of(trace, k.callsite);
        r["what"] = std::string(op_info(static_cast<Op>(k.op)).name) +
                    " ends a sequence; its launches since the previous one did not repeat";
        break;
      case Kind::kKernel:
        r["kind"] = "kernel";
        r["kernel"] = kernel_name(trace, k.function);
        r["reason"] =
            k.op == 1000 ? "ends_segment" : eager_reason_name(static_cast<EagerReason>(k.op));
        r["what"] = k.op == 1000 ? r["kernel"].get<std::string>() +
                                       " cannot be in a graph and ends a sequence; the launches "
                                       "before it did not repeat"
                                 : "launches of " + r["kernel"].get<std::string>() +
                                       " stay eager (" + r["reason"].get<std::string>() + ")";
        break;
      case Kind::kDiverges:
        r["kind"] = "diverges";
        r["kernel"] = kernel_name(trace, k.function);
        r["what"] = "a repeated sequence goes elsewhere at " + r["kernel"].get<std::string>() +
                    ": what was recorded runs eagerly";
        break;
      case Kind::kCutsChunks: {
        r["kind"] = "cuts_chunks";
        const bool is_op = k.op < 1000;
        r["op"] = is_op ? op_info(static_cast<Op>(k.op)).name
                        : flush_cause_name(static_cast<FlushCause>(k.op - 1000));
        r["frames"] = frames_of(trace, k.callsite);
        r["what"] = r["op"].get<std::string>() + " submits recorded work before its chunk ends";
        break;
      }
      case Kind::kDrained: {
        r["kind"] = "drains";
        const bool at_end = k.op >= static_cast<uint32_t>(Op::kCount);
        r["op"] = at_end ? "end of the trace" : op_info(static_cast<Op>(k.op)).name;
        r["reason"] = eager_reason_name(static_cast<EagerReason>(k.function));
        r["frames"] = frames_of(trace, k.callsite);
        r["what"] = r["op"].get<std::string>() + " sends out recorded launches as plain calls (" +
                    r["reason"].get<std::string>() + ")";
        break;
      }
      case Kind::kDecision: {
        r["kind"] = "decision";
        r["sequence"] = k.function;
        const auto d = who.decisions().find(k.function);
        const bool measuring = k.op == static_cast<uint32_t>(EagerReason::kMeasuring);
        std::string what = "sequence " + std::to_string(k.function);
        if (measuring) {
          r["verdict"] = "measuring";
          what += " is measured: its eager windows run as plain calls";
        } else {
          r["verdict"] = "eager";
          what += " decided eager";
          if (d != who.decisions().end()) what += ": " + decision_figures(d->second);
        }
        if (d != who.decisions().end()) {
          const TraceDecision& x = d->second;
          r["signature"] = x.signature;
          r["source"] = decision_source_name(x.source);
          r["launches_per_step"] = x.launches;
          if (x.eager_ns > 0) {
            r["eager_us"] = x.eager_ns / 1e3;
            r["graph_us"] = x.graph_ns / 1e3;
            r["gain_percent"] = x.gain_percent();
          }
          if (!measuring) {
            what += ", " + std::to_string(x.launches) + " launches a step stay eager";
          }
        }
        r["what"] = what;
        break;
      }
      case Kind::kEnd:
        r["kind"] = "unended";
        r["what"] =
            "launches after the last boundary that never repeated (a loop not found, "
            "or the end of the run)";
        break;
    }
    rows.push_back(r);
  }
  std::sort(rows.begin(), rows.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a["cost_ms"].get<double>() > b["cost_ms"].get<double>();
  });
  const size_t total = rows.size();
  if (rows.size() > static_cast<size_t>(top)) rows.erase(rows.begin() + top, rows.end());
  return {{"breaks", rows},
          {"breaks_total", total},
          {"launch_us", costs.launch_us},
          {"graph_launch_us", costs.graph_launch_us},
          {"source", recorded ? "graph_mode" : "simulated"},
          {"launches", launches},
          {"eager_launches", eager},
          {"coverage_percent", coverage}};
}

std::string breaks_text(const nlohmann::json& r) {
  std::string out;
  char line[512];
  std::snprintf(
      line, sizeof line,
      "What keeps launches out of graphs (%s): %llu of %llu launches "
      "stay eager (%.1f %% in graphs); costs at %.1f us a launch, %.1f us a graph "
      "launch.\n",
      r.value("source", "") == "graph_mode" ? "graph mode's own records" : "graph mode simulated",
      static_cast<unsigned long long>(r["eager_launches"].get<uint64_t>()),
      static_cast<unsigned long long>(r["launches"].get<uint64_t>()),
      r["coverage_percent"].get<double>(), r["launch_us"].get<double>(),
      r["graph_launch_us"].get<double>());
  out += line;
  int n = 0;
  for (const auto& b : r["breaks"]) {
    std::string where;
    if (b.contains("frames") && !b["frames"].empty()) {
      where = " at " + b["frames"][0].get<std::string>();
    }
    const uint64_t times = b["times"].get<uint64_t>();
    // Concatenated, not formatted into `line`: a demangled kernel name can be longer than it.
    std::snprintf(line, sizeof line, "%3d. ", ++n);
    out += line + b["what"].get<std::string>() + where + ": " +
           (times == 1 ? "once" : std::to_string(times) + " times") + "; " +
           std::to_string(b["eager_launches"].get<uint64_t>()) + " eager launches";
    if (b["kind"] == "ends_segment" && times) {
      std::snprintf(line, sizeof line, " (%.1f each time)",
                    double(b["eager_launches"].get<uint64_t>()) / double(times));
      out += line;
    }
    if (b["chunks_cut"].get<uint64_t>()) {
      out += ", " + std::to_string(b["chunks_cut"].get<uint64_t>()) + " chunks cut early";
    }
    std::snprintf(line, sizeof line, ", ~%.2f ms\n", b["cost_ms"].get<double>());
    out += line;
    if (b.contains("frames")) {
      for (size_t i = 1; i < b["frames"].size() && i < 3; ++i) {
        out += "       from " + b["frames"][i].get<std::string>() + "\n";
      }
    }
  }
  if (r["breaks"].empty()) out += "  nothing: every launch would run in a graph.\n";
  return out;
}

int run_breaks(const std::vector<std::string>& args) {
  bool as_json = false;
  uint64_t top = 20;
  std::string config;
  double launch_us = 3.5;
  const std::vector<Option> accepted = {
      flag_option("--json", &as_json), count_option("--top", 1, 100000, &top),
      Option{"--launch-us", true,
             [&](const std::string& v) {
               char* end = nullptr;
               launch_us = std::strtod(v.c_str(), &end);
               return end && !*end && launch_us > 0 && launch_us < 1e6;
             },
             "--launch-us needs a positive number of microseconds"},
      file_option("--config", &config)};
  std::string path;
  if (int status = parse_options(args, accepted, kBreaksUsage, &path); status >= 0) {
    return status;
  }
  EngineOptions options = default_engine_options();
  std::string error;
  if (!config.empty() && !options_from_file(config, &options, &error)) {
    return usage_error(error, kBreaksUsage);
  }
  Trace trace;
  ReadResult read;
  if (int status = load_trace(path, &trace, &read)) return status;
  if (!config.empty() && !trace.engine.empty()) {
    std::cerr << "pygraph-analyze: " << path
              << " was written in graph mode: its own records are read, --config is not used\n";
  }
  BreakCosts costs;
  costs.launch_us = launch_us;
  const nlohmann::json r = find_breaks(trace, options, costs, static_cast<int>(top));
  if (as_json) {
    std::cout << json_text(r, 2) << "\n";
  } else {
    std::cout << breaks_text(r);
  }
  return finish(path, read);
}

}  // namespace pygraph::analyze
