#include "trim.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "cli.h"
#include "json_text.h"
#include "trace_encoder.h"

namespace pygraph::analyze {

const char* const kTrimUsage =
    "usage: pygraph-analyze trim --out OUT.trace [--skip N] [--launches N] [--json] TRACE\n"
    "\n"
    "Cuts a trace down to a window of its launches and writes it as a trace of its own, which\n"
    "every subcommand reads like the original: small enough to attach to a report or to check\n"
    "in as a test. It keeps launches N+1 to N+M in the program's order (--skip N, --launches M)\n"
    "with the other driver calls and graph mode's events from just after launch N up to launch\n"
    "N+M+1 (so the sync that ends the last step kept stays in), the kernels, call sites and\n"
    "threads these use (numbered anew), and the end record when the trace has one. A window\n"
    "that starts later than the first launch starts the trace's clock at its first call.\n"
    "\n"
    "options:\n"
    "  --out OUT.trace   where to write the cut trace\n"
    "  --skip N          launches to leave out first (default 0)\n"
    "  --launches N      launches to keep (default: all after those skipped)\n"
    "  --json            print what was kept as JSON instead of a sentence\n"
    "\n"
    "example:\n"
    "  pygraph-analyze sequences run.trace   # a loop of 55 launches, syncs every 2200\n"
    "  pygraph-analyze trim --skip 2530 --launches 275 --out small.trace run.trace\n"
    "    Wrote small.trace (195063 bytes): launches 2531 to 2805 of 26950, 7 other driver\n"
    "    calls, 13 kernels, 2 call sites, 2 thread(s).\n";

namespace {

uint64_t seq_of(const Trace& t, const TraceEvent& e) {
  return e.is_launch ? t.launches[e.index].seq : t.ops[e.index].seq;
}

// Ids of one table, numbered anew from 1 in order of first use; 0 (none) stays 0.
class Renumbering {
 public:
  uint32_t map(uint32_t old_id) {
    if (old_id == 0) return 0;
    auto [it, added] = ids_.emplace(old_id, static_cast<uint32_t>(order_.size() + 1));
    if (added) order_.push_back(old_id);
    return it->second;
  }
  // The old ids, in the order of their new ones.
  const std::vector<uint32_t>& order() const { return order_; }

 private:
  std::unordered_map<uint32_t, uint32_t> ids_;
  std::vector<uint32_t> order_;
};

// One of graph mode's events, to be written in seq order among the calls.
struct EngineItem {
  uint64_t seq;
  int kind;  // 0 followed, 1 chunk, 2 replay, 3 flush, 4 eager
  size_t index;
};

}  // namespace

Trimmed trim_trace(const Trace& t, const TrimWindow& w) {
  // The window in t.events: [begin, end).
  const size_t n = t.events.size();
  size_t begin = w.skip == 0 ? 0 : n, end = n;
  uint64_t seen = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!t.events[i].is_launch) continue;
    ++seen;
    if (seen == w.skip) begin = i + 1;
    if (seen > w.skip && seen - w.skip > w.launches) {
      end = i;
      break;
    }
  }
  end = std::max(begin, end);
  // Graph mode's events belong to the call they were seen in, whose record has a higher seq:
  // those after the call before the window up to the last call in it, or to the end of the
  // trace when the window reaches it (what exit submits).
  const bool has_lo = begin > 0, to_the_end = end == n;
  const uint64_t lo = has_lo ? seq_of(t, t.events[begin - 1]) : 0;
  const uint64_t hi = end > begin ? seq_of(t, t.events[end - 1]) : 0;
  auto in_window = [&](uint64_t seq) {
    return (!has_lo || seq > lo) && (to_the_end || (end > begin && seq < hi));
  };

  Trimmed out;
  Renumbering functions, callsites;
  std::vector<bool> thread_used;
  auto use_thread = [&](uint16_t tid) {
    if (thread_used.size() <= tid) thread_used.resize(size_t(tid) + 1);
    thread_used[tid] = true;
  };
  uint64_t first_ts = UINT64_MAX, last_end = 0;
  for (size_t i = begin; i < end; ++i) {
    const TraceEvent& e = t.events[i];
    if (e.is_launch) {
      const TraceLaunch& l = t.launches[e.index];
      functions.map(l.function_id);
      use_thread(l.tid);
      first_ts = std::min(first_ts, l.ts_ns);
      last_end = std::max(last_end, l.ts_ns + l.dur_ns);
      ++out.launches;
    } else {
      const TraceOp& o = t.ops[e.index];
      callsites.map(o.callsite_id);
      use_thread(o.tid);
      first_ts = std::min(first_ts, o.ts_ns);
      last_end = std::max(last_end, o.ts_ns + o.dur_ns);
      ++out.ops;
    }
  }
  std::vector<EngineItem> engine;
  auto gather = [&](const auto& v, int kind) {
    for (size_t i = 0; i < v.size(); ++i) {
      if (in_window(v[i].seq)) engine.push_back({v[i].seq, kind, i});
    }
  };
  gather(t.engine.followed, 0);
  gather(t.engine.chunks, 1);
  gather(t.engine.replays, 2);
  gather(t.engine.flushes, 3);
  gather(t.engine.eager, 4);
  gather(t.engine.decisions, 5);
  std::stable_sort(engine.begin(), engine.end(),
                   [](const EngineItem& a, const EngineItem& b) { return a.seq < b.seq; });
  for (const EngineItem& item : engine) {
    if (item.kind == 3) callsites.map(t.engine.flushes[item.index].callsite_id);
  }
  out.engine_events = engine.size();
  if (out.launches) out.first_launch = w.skip + 1;

  // The clock starts at the window's first call, unless the window starts at the beginning.
  trace::FileHeader header = t.header;
  if (begin > 0 && first_ts != UINT64_MAX && first_ts > header.start_mono_ns) {
    header.start_real_ns += first_ts - header.start_mono_ns;
    header.start_mono_ns = first_ts;
  }
  TraceEncoder enc(header);
  for (const trace::ThreadRecord& r : t.threads) {
    if (r.tid < thread_used.size() && thread_used[r.tid]) {
      thread_used[r.tid] = false;  // one record per thread
      enc.thread(r);
      ++out.threads;
    }
  }
  for (size_t i = 0; i < functions.order().size(); ++i) {
    if (const TraceFunction* f = t.function(functions.order()[i])) {
      TraceFunction g = *f;
      g.id = static_cast<uint32_t>(i + 1);
      enc.function(g);
      ++out.functions;
    }
  }
  for (size_t i = 0; i < callsites.order().size(); ++i) {
    if (const TraceCallSite* s = t.callsite(callsites.order()[i])) {
      TraceCallSite c = *s;
      c.id = static_cast<uint32_t>(i + 1);
      enc.callsite(c);
      ++out.callsites;
    }
  }

  size_t next_engine = 0;
  auto engine_before = [&](uint64_t seq, bool all) {
    for (; next_engine < engine.size() && (all || engine[next_engine].seq < seq); ++next_engine) {
      const EngineItem& item = engine[next_engine];
      switch (item.kind) {
        case 0:
          enc.followed(t.engine.followed[item.index]);
          break;
        case 1:
          enc.chunk(t.engine.chunks[item.index]);
          break;
        case 2:
          enc.replay(t.engine.replays[item.index]);
          break;
        case 3: {
          TraceFlush f = t.engine.flushes[item.index];
          f.callsite_id = callsites.map(f.callsite_id);
          enc.flush(f);
          break;
        }
        case 4:
          enc.eager(t.engine.eager[item.index]);
          break;
        default:
          enc.decision(t.engine.decisions[item.index]);
      }
    }
  };
  for (size_t i = begin; i < end; ++i) {
    const TraceEvent& e = t.events[i];
    engine_before(seq_of(t, e), false);
    if (e.is_launch) {
      TraceLaunch l = t.launches[e.index];
      l.function_id = functions.map(l.function_id);
      enc.launch(l);
    } else {
      TraceOp o = t.ops[e.index];
      o.callsite_id = callsites.map(o.callsite_id);
      enc.op(o);
    }
  }
  engine_before(0, true);  // those after the last call

  if (t.has_end) {
    trace::EndRecord r = t.end;
    // The window's length: to the trace's end when it reaches it, else to its last call's end.
    const uint64_t stop = to_the_end ? t.header.start_mono_ns + t.end.dur_ns : last_end;
    r.dur_ns = stop > header.start_mono_ns ? stop - header.start_mono_ns : 0;
    enc.end(r);
    out.complete = true;
  }
  out.bytes = enc.bytes();
  return out;
}

int run_trim(const std::vector<std::string>& args) {
  bool as_json = false;
  std::string out_path, path;
  uint64_t skip = 0, launches = UINT64_MAX;
  const std::vector<Option> accepted = {flag_option("--json", &as_json),
                                        file_option("--out", &out_path),
                                        count_option("--skip", 0, UINT64_MAX - 1, &skip),
                                        count_option("--launches", 1, UINT64_MAX - 1, &launches)};
  if (int status = parse_options(args, accepted, kTrimUsage, &path); status >= 0) return status;
  if (out_path.empty()) return usage_error("--out OUT.trace is needed", kTrimUsage);

  Trace trace;
  ReadResult read;
  if (int status = load_trace(path, &trace, &read)) return status;
  const uint64_t total = trace.launches.size();
  if (skip > 0 && skip >= total) {
    return usage_error("--skip " + std::to_string(skip) + " leaves none of this trace's " +
                           std::to_string(total) + " launches",
                       kTrimUsage);
  }
  const Trimmed cut = trim_trace(trace, TrimWindow{skip, launches});
  // The whole trace is in memory by now: OUT may even be the trace itself.
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  out.write(cut.bytes.data(), static_cast<std::streamsize>(cut.bytes.size()));
  out.close();
  if (!out) {
    std::cerr << "pygraph-analyze: cannot write " << out_path << "\n";
    return 2;
  }
  const uint64_t last = cut.launches ? cut.first_launch + cut.launches - 1 : 0;
  if (as_json) {
    const nlohmann::json j = {{"out", out_path},
                              {"bytes", cut.bytes.size()},
                              {"launches_in_trace", total},
                              {"first_launch", cut.first_launch},
                              {"last_launch", last},
                              {"launches", cut.launches},
                              {"other_calls", cut.ops},
                              {"graph_mode_events", cut.engine_events},
                              {"kernels", cut.functions},
                              {"call_sites", cut.callsites},
                              {"threads", cut.threads},
                              {"complete", cut.complete}};
    std::cout << json_text(j, 2) << "\n";
  } else {
    std::cout << "Wrote " << out_path << " (" << cut.bytes.size() << " bytes): ";
    if (cut.launches) {
      std::cout << "launches " << cut.first_launch << " to " << last << " of " << total;
    } else {
      std::cout << "no launches";
    }
    std::cout << ", " << cut.ops << " other driver calls, ";
    if (cut.engine_events) std::cout << cut.engine_events << " graph-mode events, ";
    std::cout << cut.functions << " kernels, " << cut.callsites << " call sites, " << cut.threads
              << " thread(s).\n";
    if (!cut.complete) std::cout << "The trace has no end record, so neither has the cut.\n";
  }
  return finish(path, read);
}

}  // namespace pygraph::analyze
