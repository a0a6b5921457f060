#include "summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "graph/engine_stats.h"

namespace pygraph::analyze {
namespace {

using nlohmann::json;

template <class Map>
std::vector<std::pair<typename Map::key_type, uint64_t>> ranked(const Map& m, int top) {
  std::vector<std::pair<typename Map::key_type, uint64_t>> v(m.begin(), m.end());
  std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second > b.second; });
  if (top >= 0 && v.size() > static_cast<size_t>(top)) v.resize(top);
  return v;
}

std::string function_name(const Trace& t, uint32_t id) {
  const TraceFunction* f = t.function(id);
  if (!f) return "(unknown function " + std::to_string(id) + ")";
  return f->name.empty() ? "(unnamed function " + std::to_string(id) + ")" : f->name;
}

std::string eager_name(uint8_t r) {
  return r < static_cast<uint8_t>(EagerReason::kCount)
             ? eager_reason_name(static_cast<EagerReason>(r))
             : "reason " + std::to_string(r);
}

std::string flush_name(const TraceFlush& f) {
  if (f.cause == static_cast<uint8_t>(FlushCause::kOp) && f.op < Op::kCount) {
    return op_info(f.op).name;
  }
  return f.cause < static_cast<uint8_t>(FlushCause::kCount)
             ? flush_cause_name(static_cast<FlushCause>(f.cause))
             : "cause " + std::to_string(f.cause);
}

// What graph mode wrote about itself (format 2): replays, coverage, and why work stayed eager
// or went out early, by call site where an op caused it.
json graph_mode_did(const Trace& t, int top) {
  const TraceEngineEvents& e = t.engine;
  uint64_t nodes = 0, patched = 0, eager_launches = 0;
  for (const TraceReplay& r : e.replays) {
    nodes += r.nodes;
    patched += r.patched;
  }
  std::map<std::string, uint64_t> eager;
  for (const TraceEager& r : e.eager) {
    if (!r.memop) eager_launches += r.count;
    eager[eager_name(r.reason)] += r.count;
  }
  std::map<std::pair<std::string, uint32_t>, uint64_t> flushes;  // (cause, call site)
  for (const TraceFlush& f : e.flushes) flushes[{flush_name(f), f.callsite_id}]++;
  json j;
  j["sequences_followed"] = e.followed.size();
  j["graphs_built"] = e.chunks.size();
  j["replays"] = e.replays.size();
  j["nodes_replayed"] = nodes;
  j["patched_nodes"] = patched;
  // Launches in graphs are those not sent eagerly: the same sum as the stats' coverage.
  const uint64_t launches = t.launches.size();
  j["coverage_percent"] =
      launches ? 100.0 * double(launches - std::min(launches, eager_launches)) / double(launches)
               : 0.0;
  json reasons = json::array();
  for (auto& [name, n] : ranked(eager, top)) reasons.push_back({{"reason", name}, {"count", n}});
  j["top_eager_reasons"] = reasons;
  json causes = json::array();
  for (auto& [key, n] : ranked(flushes, top)) {
    json frames = json::array();
    if (const TraceCallSite* cs = t.callsite(key.second)) frames = cs->frames;
    causes.push_back(
        {{"cause", key.first}, {"count", n}, {"callsite", key.second}, {"frames", frames}});
  }
  j["top_flush_causes"] = causes;
  if (!e.decisions.empty()) {
    // Each sequence's last decision (records come at every change: measuring, then a verdict).
    std::map<uint32_t, const TraceDecision*> last;
    for (const TraceDecision& d : e.decisions) last[d.sequence] = &d;
    json counts = {{"graph", 0}, {"eager", 0}, {"measuring", 0}, {"cached", 0}, {"config", 0}};
    json list = json::array();
    for (const auto& [sequence, d] : last) {
      counts[decision_verdict_name(d->verdict)] =
          counts[decision_verdict_name(d->verdict)].get<int>() + 1;
      if (d->source != trace::DecisionSource::kMeasured) {
        counts[decision_source_name(d->source)] =
            counts[decision_source_name(d->source)].get<int>() + 1;
      }
      json x = {{"sequence", sequence},
                {"signature", d->signature.empty() ? json() : json(d->signature)},
                {"verdict", decision_verdict_name(d->verdict)},
                {"source", decision_source_name(d->source)},
                {"launches", d->launches}};
      if (d->eager_ns > 0) {
        x["gain_percent"] = d->gain_percent();
        x["eager_us"] = d->eager_ns / 1e3;
        x["graph_us"] = d->graph_ns / 1e3;
      }
      list.push_back(x);
    }
    j["decisions"] = {{"counts", counts}, {"sequences", list}};
  }
  return j;
}

}  // namespace

json summarize(const Trace& t, const SummaryOptions& o) {
  json s;
  s["trace_version"] = t.header.version;
  s["pid"] = t.header.pid;
  s["complete"] = t.has_end;
  if (t.has_end) {
    s["duration_s"] = t.end.dur_ns / 1e9;
    s["dropped_records"] = t.end.dropped;
    s["unwrapped_entry_points"] = t.end.unwrapped;
  }
  s["threads"] = t.threads.size();

  std::map<std::string, uint64_t> by_door;
  std::map<uint32_t, uint64_t> by_function;
  uint64_t failed = 0;
  for (const auto& l : t.launches) {
    by_door[trace::door_name(l.door)]++;
    by_function[l.function_id]++;
    if (l.result != 0) failed++;
  }
  s["launches"] = {{"total", t.launches.size()}, {"failed", failed}, {"by_door", by_door}};
  json kernels = json::array();
  for (auto& [id, n] : ranked(by_function, o.top)) {
    kernels.push_back({{"name", function_name(t, id)}, {"id", id}, {"count", n}});
  }
  s["top_kernels"] = kernels;
  s["distinct_kernels"] = by_function.size();

  std::map<std::string, uint64_t> by_op;
  std::map<std::pair<uint16_t, uint32_t>, uint64_t> boundaries;  // (op, call site)
  for (const auto& op : t.ops) {
    by_op[op_info(op.op).name]++;
    if (op_observes_gpu(op.op)) boundaries[{static_cast<uint16_t>(op.op), op.callsite_id}]++;
  }
  json ops = json::array();
  for (auto& [name, n] : ranked(by_op, -1)) {
    Op op{};
    op_from_name(name.c_str(), &op);
    ops.push_back({{"op", name}, {"class", op_class_name(op_info(op).cls)}, {"count", n}});
  }
  s["ops"] = ops;
  json sites = json::array();
  for (auto& [key, n] : ranked(boundaries, o.top)) {
    json frames = json::array();
    if (const TraceCallSite* cs = t.callsite(key.second)) frames = cs->frames;
    sites.push_back({{"op", op_info(static_cast<Op>(key.first)).name},
                     {"count", n},
                     {"callsite", key.second},
                     {"frames", frames}});
  }
  s["boundaries"] = sites;
  if (!t.engine.empty()) s["graph_mode"] = graph_mode_did(t, o.top);
  return s;
}

const char* const kSummaryUsage =
    "usage: pygraph-analyze summary [--json] [--top N] TRACE\n"
    "\n"
    "What the program launched and where it waited: launches per interception door, the top\n"
    "kernels, the other driver calls by op, syncs, queries and other boundaries ranked by\n"
    "count with their call sites, and, for a trace written in graph mode, what graph mode did\n"
    "(coverage, replays, eager launches by reason, early submissions by cause).\n"
    "\n"
    "options:\n"
    "  --json    the same as JSON\n"
    "  --top N   rows per ranking (default 20)\n"
    "\n"
    "example:\n"
    "  PYGRAPH_MODE=trace PYGRAPH_TRACE=run.trace LD_PRELOAD=build/libpygraph.so python train.py\n"
    "  pygraph-analyze summary --top 5 run.trace\n";

std::string summary_text(const json& s) {
  std::ostringstream out;
  out << "pygraph trace (format " << s["trace_version"] << "), pid " << s["pid"];
  if (s["complete"].get<bool>()) {
    out << ", " << s["duration_s"].get<double>() << " s";
  } else {
    out << ", incomplete";
  }
  out << ", " << s["threads"] << " thread(s)\n\n";

  const json& l = s["launches"];
  out << "Launches: " << l["total"] << " (" << l["failed"] << " failed), " << s["distinct_kernels"]
      << " distinct kernels\n";
  for (auto& [door, n] : l["by_door"].items()) out << "  via " << door << ": " << n << "\n";

  out << "\nTop kernels by launches:\n";
  for (const auto& k : s["top_kernels"]) {
    out << "  " << k["count"].get<uint64_t>() << "  " << k["name"].get<std::string>() << "\n";
  }

  // A trace of launches only has none: no heading over nothing.
  if (!s["ops"].empty()) out << "\nOther driver calls:\n";
  for (const auto& o : s["ops"]) {
    out << "  " << o["count"].get<uint64_t>() << "  " << o["op"].get<std::string>() << " ("
        << o["class"].get<std::string>() << ")\n";
  }

  out << "\nSyncs, queries and other boundaries by call site:\n";
  if (s["boundaries"].empty()) out << "  none\n";
  for (const auto& b : s["boundaries"]) {
    out << "  " << b["count"].get<uint64_t>() << "  " << b["op"].get<std::string>() << "\n";
    int shown = 0;
    for (const auto& f : b["frames"]) {
      if (shown++ == 6) break;
      out << "        at " << f.get<std::string>() << "\n";
    }
  }
  if (s.contains("graph_mode")) {
    const json& g = s["graph_mode"];
    char line[256];
    std::snprintf(line, sizeof line,
                  "\nGraph mode did: %.1f %% of launches in graphs, %llu replays of %llu graphs "
                  "(%llu nodes, %llu patched), %llu sequences followed\n",
                  g["coverage_percent"].get<double>(), g["replays"].get<unsigned long long>(),
                  g["graphs_built"].get<unsigned long long>(),
                  g["nodes_replayed"].get<unsigned long long>(),
                  g["patched_nodes"].get<unsigned long long>(),
                  g["sequences_followed"].get<unsigned long long>());
    out << line;
    out << "  eager launches and memops by reason:";
    for (const auto& r : g["top_eager_reasons"]) {
      out << " " << r["reason"].get<std::string>() << " " << r["count"].get<uint64_t>();
    }
    out << (g["top_eager_reasons"].empty() ? " none\n" : "\n");
    out << "  early submissions by cause:" << (g["top_flush_causes"].empty() ? " none\n" : "\n");
    for (const auto& f : g["top_flush_causes"]) {
      out << "    " << f["count"].get<uint64_t>() << "  " << f["cause"].get<std::string>() << "\n";
      int shown = 0;
      for (const auto& fr : f["frames"]) {
        if (shown++ == 3) break;
        out << "          at " << fr.get<std::string>() << "\n";
      }
    }
    if (g.contains("decisions")) {
      const json& d = g["decisions"];
      const json& c = d["counts"];
      out << "  decisions (each sequence's last): " << c["graph"] << " graph, " << c["eager"]
          << " eager, " << c["measuring"] << " measuring; " << c["cached"] << " from the cache, "
          << c["config"] << " by the config\n";
      for (const auto& x : d["sequences"]) {
        char line[256];
        const std::string sig = x["signature"].is_string() ? x["signature"].get<std::string>()
                                                           : "(signature not known yet)";
        if (x.contains("gain_percent")) {
          std::snprintf(
              line, sizeof line,
              "    sequence %u %s: %s (%s), graphs %.1f %% %s per iteration (%.1f vs "
              "%.1f us eager), %u launches\n",
              x["sequence"].get<unsigned>(), sig.c_str(), x["verdict"].get<std::string>().c_str(),
              x["source"].get<std::string>().c_str(), std::abs(x["gain_percent"].get<double>()),
              x["gain_percent"].get<double>() >= 0 ? "faster" : "slower",
              x["graph_us"].get<double>(), x["eager_us"].get<double>(),
              x["launches"].get<unsigned>());
        } else {
          std::snprintf(line, sizeof line, "    sequence %u %s: %s (%s), %u launches\n",
                        x["sequence"].get<unsigned>(), sig.c_str(),
                        x["verdict"].get<std::string>().c_str(),
                        x["source"].get<std::string>().c_str(), x["launches"].get<unsigned>());
        }
        out << line;
      }
    }
  }
  if (s.contains("unwrapped_entry_points") && s["unwrapped_entry_points"].get<uint64_t>() > 0) {
    out << "\nNote: " << s["unwrapped_entry_points"]
        << " driver entry points were handed out unwrapped (see README).\n";
  }
  if (s.contains("dropped_records") && s["dropped_records"].get<uint64_t>() > 0) {
    out << "Note: " << s["dropped_records"] << " records were dropped (trace buffers full).\n";
  }
  return out.str();
}

}  // namespace pygraph::analyze
