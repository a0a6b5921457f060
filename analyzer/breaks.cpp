#include "breaks.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <tuple>

#include "cli.h"
#include "graph/engine_observer.h"
#include "simulate.h"

namespace pygraph::analyze {
namespace {

const char* const kBreaksUsage =
    "usage: pygraph-analyze breaks [--top N] [--launch-us X] [--json] TRACE\n"
    "\n"
    "Ranks what keeps launches out of graphs by the launch time it costs, each with its call\n"
    "site or kernel: syncs and host reads whose steps never repeat the same way, launches no\n"
    "graph can hold, the places where a repeated sequence goes elsewhere, ops that submit a\n"
    "chunk early. Graph mode's own engine runs over the trace offline to find them (as\n"
    "`simulate` does); the cost is eager launches times the launch cost, plus a graph launch\n"
    "per chunk cut early.\n"
    "\n"
    "options:\n"
    "  --top N         rows (default 20)\n"
    "  --launch-us X   CPU cost of one eager launch in microseconds (default 3.5)\n"
    "  --json          machine-readable output\n"
    "\n"
    "example:\n"
    "  pygraph-analyze breaks run.trace\n"
    "    1. cuStreamSynchronize at py:train.py:42 <module>: 1000 times; ends a step whose 57\n"
    "       launches run eagerly each time (57000 eager launches, ~199.5 ms)\n";

// What a break is put down to.
enum class Kind { kBoundary, kKernel, kDiverges, kCutsChunks, kEnd };

struct Key {
  Kind kind;
  uint32_t op;        // the op (boundaries, cuts) or the reason (kernels)
  uint32_t callsite;  // boundaries and cuts: the call site id
  uint32_t function;  // kernels and divergences: the function id
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

  void at(const TraceEvent& e) { event_ = e; }

  void eager(bool memop, EagerReason reason) override {
    if (memop) return;  // launches are what is ranked
    switch (reason) {
      case EagerReason::kNotRepeating:
        ++unexplained_;  // put down to whatever ends the segment
        return;
      case EagerReason::kMismatch:
        ++tally(Key{Kind::kDiverges, 0, 0, function()}).eager;
        return;
      default:
        ++tally(Key{Kind::kKernel, static_cast<uint32_t>(reason), 0, function()}).eager;
        return;
    }
  }

  void flushed(FlushCause cause, Op op, size_t) override {
    ++tally(Key{Kind::kCutsChunks,
                cause == FlushCause::kOp ? static_cast<uint32_t>(op)
                                         : 1000 + static_cast<uint32_t>(cause),
                callsite(), 0})
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

 private:
  bool is_launch() const { return event_.is_launch && event_.index != ~0u; }
  uint32_t function() const { return is_launch() ? trace_.launches[event_.index].function_id : 0; }
  uint32_t callsite() const {
    return !event_.is_launch && event_.index != ~0u ? trace_.ops[event_.index].callsite_id : 0;
  }
  Tally& tally(const Key& k) {
    Tally& t = tallies_[k];
    if (k.kind != Kind::kBoundary) ++t.times;
    return t;
  }

  const Trace& trace_;
  TraceEvent event_{false, ~0u};
  uint64_t unexplained_ = 0;
  std::map<Key, Tally> tallies_;
};

std::string kernel_name(const Trace& trace, uint32_t id) {
  const TraceFunction* f = trace.function(id);
  return f && !f->name.empty() ? f->name : "kernel #" + std::to_string(id);
}

nlohmann::json frames_of(const Trace& trace, uint32_t callsite) {
  const TraceCallSite* c = trace.callsite(callsite);
  return c ? nlohmann::json(c->frames) : nlohmann::json::array();
}

}  // namespace

nlohmann::json find_breaks(const Trace& trace, const EngineOptions& options,
                           const BreakCosts& costs, int top) {
  Attribution who(trace);
  const nlohmann::json stats =
      replay_trace(trace, options, &who, [&](const TraceEvent& e) { who.at(e); });
  who.finish();
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [k, t] : who.tallies()) {
    if (!t.eager && !t.cuts) continue;
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
          {"launches", stats["launches"]["seen_by_engine"]},
          {"eager_launches", stats["launches"]["eager"]},
          {"coverage_percent", stats["coverage_percent"]}};
}

std::string breaks_text(const nlohmann::json& r) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line,
                "What keeps launches out of graphs (graph mode simulated): %llu of %llu launches "
                "stay eager (%.1f %% in graphs); costs at %.1f us a launch, %.1f us a graph "
                "launch.\n",
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
    std::snprintf(line, sizeof line, "%3d. %s%s: %s; %llu eager launches", ++n,
                  b["what"].get<std::string>().c_str(), where.c_str(),
                  times == 1 ? "once" : (std::to_string(times) + " times").c_str(),
                  static_cast<unsigned long long>(b["eager_launches"].get<uint64_t>()));
    out += line;
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
  double launch_us = 3.5;
  const std::vector<Option> accepted = {
      flag_option("--json", &as_json), count_option("--top", 1, 100000, &top),
      Option{"--launch-us", true,
             [&](const std::string& v) {
               char* end = nullptr;
               launch_us = std::strtod(v.c_str(), &end);
               return end && !*end && launch_us > 0 && launch_us < 1e6;
             },
             "--launch-us needs a positive number of microseconds"}};
  std::string path;
  if (int status = parse_options(args, accepted, kBreaksUsage, &path); status >= 0) {
    return status;
  }
  Trace trace;
  ReadResult read;
  if (int status = load_trace(path, &trace, &read)) return status;
  BreakCosts costs;
  costs.launch_us = launch_us;
  const nlohmann::json r = find_breaks(trace, EngineOptions{}, costs, static_cast<int>(top));
  if (as_json) {
    std::cout << r.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << breaks_text(r);
  }
  return finish(path, read);
}

}  // namespace pygraph::analyze
