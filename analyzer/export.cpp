#include "export.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <unordered_map>

#include "chrome_trace_writer.h"
#include "cli.h"
#include "graph_mode_events.h"
#include "json_text.h"
#include "sequence_walk.h"
#include "simulate.h"

namespace pygraph::analyze {

const char* const kExportUsage =
    "usage: pygraph-analyze export --perfetto OUT.json [--limit N] [--json] TRACE\n"
    "\n"
    "Writes the run as a timeline in the Chrome trace event format, which Perfetto\n"
    "(ui.perfetto.dev) and chrome://tracing open: every launch and other driver\n"
    "call on its thread, with its duration and arguments (grid, block, stream, door, result;\n"
    "the call site of syncs and other boundaries, which are in category \"boundary\"), and one\n"
    "track per stream with a mark for each launch and call on that stream.\n"
    "\n"
    "options:\n"
    "  --perfetto OUT.json   where to write the timeline\n"
    "  --limit N             write at most N events (the output says so when it stops early)\n"
    "  --json                print what was written as JSON instead of a sentence\n"
    "\n"
    "example:\n"
    "  PYGRAPH_TRACE=run.trace LD_PRELOAD=build/libpygraph.so python train.py\n"
    "  pygraph-analyze export --perfetto run.json run.trace   # then open run.json in Perfetto\n";

namespace {

using nlohmann::json;

// Linux pids stay below 2^22 (PID_MAX_LIMIT), so the streams' and graph mode's pseudo-processes
// cannot share their pids with a real process in the same view.
constexpr int64_t kStreamsPidOffset = int64_t(1) << 22;
constexpr int64_t kGraphModePidOffset = int64_t(2) << 22;
// Graph mode's tracks: sequences and chunks, flushes, then one per stream for its replays.
constexpr int64_t kPlansTid = 1, kFlushesTid = 2, kReplaysTid = 16;
// Eager launches are a running count per reason, sampled at most this many times over the run
// (and whenever a reason first shows), so a long eager run does not double the output.
constexpr uint64_t kEagerSamples = 1000;

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string stream_name(uint64_t stream) {
  switch (stream) {
    case 0:
      return "stream 0 (default)";
    case 1:
      return "stream 0x1 (legacy default)";
    case 2:
      return "stream 0x2 (per-thread default)";
    default:
      return "stream " + hex(stream);
  }
}

struct Counts {
  uint64_t launches = 0, ops = 0, boundaries = 0, stream_marks = 0;
  // Graph mode's events (graph_mode_events.h); eager launches as counter samples.
  uint64_t followed = 0, chunks = 0, replays = 0, flushes = 0, eager_samples = 0, decisions = 0;
  uint64_t last_ns = 0;  // end of the last call written (CLOCK_MONOTONIC)
};

// Maps the trace onto the writer's tracks: its process with one track per thread, and a
// pseudo-process with one track per stream. Each kind of record has its emitter; format
// version 2's graph-mode events (sequences found, chunks built, replays, flushes) are meant to
// come in as more emitters and tracks (a graph-mode track per stream) through the same writer.
class TimelineExport {
 public:
  TimelineExport(const Trace& t, const GraphEvents& g, ChromeTraceWriter& w)
      : t_(t), g_(g), w_(w), sample_ns_(trace_duration_ns(t) / kEagerSamples) {
    const int64_t pid = t.header.pid;
    w_.declare_process(pid, "pid " + std::to_string(pid) + ": driver calls per thread", 0);
    w_.declare_process(pid + kStreamsPidOffset,
                       "pid " + std::to_string(pid) + ": launches and calls per stream", 1);
    const Track plans{pid + kGraphModePidOffset, kPlansTid};
    w_.declare_process(plans.pid,
                       "pid " + std::to_string(pid) +
                           (g.simulated ? ": simulated graph mode (the engine run offline)"
                                        : ": graph mode (its records)"),
                       2);
    w_.declare_track(plans, "sequences followed, graphs built", 1);
    w_.declare_track({plans.pid, kFlushesTid}, "flushes (cause, op, call site)", 2);
    for (const auto& th : t.threads) {
      os_tid_[th.tid] = th.os_tid;
      w_.declare_track(
          {pid, th.os_tid},
          "thread " + std::to_string(th.tid) + " (tid " + std::to_string(th.os_tid) + ")",
          static_cast<int>(th.tid));
    }
  }

  // The call at `i` of the trace's events, after what graph mode did while handling it; `i` ==
  // events.size(): what it did at the end. False once the writer's limit is reached.
  bool emit(size_t i) {
    for (; next_ < g_.events.size() && g_.events[next_].at <= i; ++next_) {
      if (!graph_event(g_.events[next_])) return false;
    }
    if (i == t_.events.size()) return eager_sample(true);
    const TraceEvent& e = t_.events[i];
    return e.is_launch ? launch(t_.launches[e.index]) : op(t_.ops[e.index]);
  }

  const Counts& counts() const { return counts_; }
  size_t streams() const { return streams_.size(); }

 private:
  int64_t ns(uint64_t mono) const { return static_cast<int64_t>(mono - t_.header.start_mono_ns); }
  Track thread(uint16_t tid) const {
    auto it = os_tid_.find(tid);
    return {t_.header.pid, it != os_tid_.end() ? it->second : tid};  // unannounced: its number
  }
  Track stream(uint64_t s) {
    auto [it, added] = streams_.emplace(s, streams_.size() + 1);
    const Track track{t_.header.pid + kStreamsPidOffset, it->second};
    if (added) w_.declare_track(track, stream_name(s), static_cast<int>(it->second));
    return track;
  }
  // The call on its thread.
  bool call(const TimelineEvent& e, uint64_t end_mono_ns) {
    if (!w_.complete(e)) return false;
    counts_.last_ns = std::max(counts_.last_ns, end_mono_ns);
    return true;
  }
  // A mark for the call on the stream it acted on, so that each stream shows what it got.
  bool mark(const TimelineEvent& e, uint64_t s, uint64_t seq) {
    const json args = {{"seq", seq}, {"thread", e.track.tid}};
    if (!w_.instant({stream(s), e.name, e.cat, e.ts_ns, 0, e.cname, &args})) return false;
    ++counts_.stream_marks;
    return true;
  }

  bool launch(const TraceLaunch& l) {
    const TraceFunction* f = t_.function(l.function_id);
    const std::string name =
        f && !f->name.empty() ? f->name : "(function " + std::to_string(l.function_id) + ")";
    json args = {{"seq", l.seq},
                 {"op", op_info(l.op).name},
                 {"grid", {l.grid[0], l.grid[1], l.grid[2]}},
                 {"block", {l.block[0], l.block[1], l.block[2]}},
                 {"shared_mem", l.shared_mem},
                 {"stream", hex(l.stream)},
                 {"door", trace::door_name(l.door)},
                 {"result", l.result}};
    if (!l.attrs.empty()) args["attributes"] = l.attrs.size();
    const TimelineEvent e{thread(l.tid), name, "launch", ns(l.ts_ns), l.dur_ns, "", &args};
    if (!call(e, l.ts_ns + l.dur_ns)) return false;
    ++counts_.launches;
    last_stream_[l.tid] = l.stream;
    last_stream_any_ = l.stream;
    return mark(e, l.stream, l.seq);
  }

  bool op(const TraceOp& o) {
    const bool boundary = op_ends_sequence(o);
    const bool on_stream = acts_on_stream(o.op);
    json args = {{"seq", o.seq}, {"door", trace::door_name(o.door)}, {"result", o.result}};
    if (on_stream) args["stream"] = hex(o.stream);
    if (o.handle) args["handle"] = hex(o.handle);
    if (o.ptr) args["ptr"] = hex(o.ptr);
    if (o.bytes) args["bytes"] = o.bytes;
    if (const TraceCallSite* cs = t_.callsite(o.callsite_id)) args["call_site"] = cs->frames;
    const std::string cls = op_class_name(op_info(o.op).cls);
    const std::string cat = boundary ? "boundary," + cls : cls;
    // "terrible" is the format's red: boundaries are where graphs end.
    const TimelineEvent e{thread(o.tid), op_info(o.op).name,         cat,  ns(o.ts_ns),
                          o.dur_ns,      boundary ? "terrible" : "", &args};
    if (!call(e, o.ts_ns + o.dur_ns)) return false;
    ++counts_.ops;
    counts_.boundaries += boundary;
    return !on_stream || mark(e, o.stream, o.seq);
  }

  // Graph mode's replays per stream. A replay record names no stream: it is the stream of the
  // call being handled, or, for a call on none (a context sync), that thread's last launch's.
  Track replay_track(const CallPlace& p) {
    const auto last = last_stream_.find(p.tid);
    const uint64_t s = p.has_stream                 ? p.stream
                       : last != last_stream_.end() ? last->second
                                                    : last_stream_any_;
    auto [it, added] = replay_tracks_.emplace(s, kReplaysTid + replay_tracks_.size());
    const Track track{t_.header.pid + kGraphModePidOffset, it->second};
    if (added)
      w_.declare_track(track, "replays on " + stream_name(s), static_cast<int>(it->second));
    return track;
  }

  // At the call graph mode was handling: its start, and for replays its duration (the graph
  // launch happened inside that call).
  bool graph_event(const GraphEvent& g) {
    const CallPlace p = call_place(t_, g.at);
    const int64_t ts = static_cast<int64_t>(p.t_ns);
    const Track plans{t_.header.pid + kGraphModePidOffset, kPlansTid};
    json args;
    switch (g.kind) {
      case GraphEventKind::kFollowed: {
        args = {{"sequence", g.sequence}, {"periodic", g.periodic}, {"length", g.length}};
        const std::string name = "follows sequence " + std::to_string(g.sequence);
        if (!w_.instant({plans, name, "graph_mode,followed", ts, 0, "", &args})) return false;
        ++counts_.followed;
        return true;
      }
      case GraphEventKind::kChunk: {
        args = {{"sequence", g.sequence}, {"start", g.start}, {"end", g.end}, {"nodes", g.nodes}};
        const std::string name = "graph built: sequence " + std::to_string(g.sequence) + " [" +
                                 std::to_string(g.start) + ", " + std::to_string(g.end) + ")";
        if (!w_.instant({plans, name, "graph_mode,chunk", ts, 0, "", &args})) return false;
        ++counts_.chunks;
        return true;
      }
      case GraphEventKind::kReplay: {
        args = {{"sequence", g.sequence}, {"nodes", g.nodes}, {"patched", g.patched}};
        const std::string name = "replay: sequence " + std::to_string(g.sequence) + ", " +
                                 std::to_string(g.nodes) + " nodes";
        const TimelineEvent e{
            replay_track(p), name, "graph_mode,replay", ts, static_cast<int64_t>(p.dur_ns),
            "good",          &args};
        if (!w_.complete(e)) return false;
        ++counts_.replays;
        return true;
      }
      case GraphEventKind::kFlush: {
        const bool by_op = g.cause == FlushCause::kOp;
        const std::string why = by_op ? op_info(g.op).name : flush_cause_name(g.cause);
        args = {{"cause", flush_cause_name(g.cause)}, {"pending", g.pending}};
        if (by_op) args["op"] = op_info(g.op).name;
        if (const TraceCallSite* cs = t_.callsite(g.callsite_id)) args["call_site"] = cs->frames;
        const std::string name = "flush: " + why;
        if (!w_.instant({{plans.pid, kFlushesTid}, name, "graph_mode,flush", ts, 0, "bad", &args}))
          return false;
        ++counts_.flushes;
        return true;
      }
      case GraphEventKind::kDecision: {
        // A sequence's verdict as it changed: measuring, then graph or eager, with its figures.
        const TraceDecision& d = g.decision;
        args = {{"sequence", d.sequence},
                {"signature", d.signature},
                {"verdict", decision_verdict_name(d.verdict)},
                {"source", decision_source_name(d.source)},
                {"launches", d.launches}};
        if (d.eager_ns > 0) {
          args["gain_percent"] = d.gain_percent();
          args["eager_us"] = d.eager_ns / 1e3;
          args["graph_us"] = d.graph_ns / 1e3;
        }
        char name[96];
        std::snprintf(name, sizeof name, "decision: sequence %u %s (%s)", d.sequence,
                      decision_verdict_name(d.verdict), decision_source_name(d.source));
        const char* colour = d.verdict == trace::DecisionVerdict::kGraph   ? "good"
                             : d.verdict == trace::DecisionVerdict::kEager ? "bad"
                                                                           : "";
        if (!w_.instant({plans, name, "graph_mode,decision", ts, 0, colour, &args})) return false;
        ++counts_.decisions;
        return true;
      }
      case GraphEventKind::kEager: {
        const std::string key =
            std::string(g.memop ? "memops: " : "launches: ") + eager_reason_name(g.reason);
        const bool new_key = !eager_.contains(key);
        eager_[key] += g.count;
        eager_changed_ = true;
        eager_at_ns_ = ts;
        return eager_sample(new_key);
      }
    }
    return true;
  }

  // The running counts of eager launches and memops by reason, when due (or `now`).
  bool eager_sample(bool now) {
    if (!eager_changed_) return true;
    if (!now && counts_.eager_samples &&
        uint64_t(eager_at_ns_ - last_sample_ns_) < std::max<uint64_t>(sample_ns_, 1)) {
      return true;
    }
    const json args = eager_;
    const Track track{t_.header.pid + kGraphModePidOffset, kPlansTid};
    if (!w_.counter(
            {track, "eager so far, by reason", "graph_mode,eager", eager_at_ns_, 0, "", &args})) {
      return false;
    }
    ++counts_.eager_samples;
    last_sample_ns_ = eager_at_ns_;
    eager_changed_ = false;
    return true;
  }

  const Trace& t_;
  const GraphEvents& g_;
  ChromeTraceWriter& w_;
  std::unordered_map<uint16_t, int64_t> os_tid_;
  std::unordered_map<uint64_t, int64_t> streams_;  // stream -> track number, in order of sight
  std::unordered_map<uint64_t, int64_t> replay_tracks_;  // likewise, graph mode's replays
  std::unordered_map<uint16_t, uint64_t> last_stream_;   // thread -> its last launch's stream
  uint64_t last_stream_any_ = 0;
  size_t next_ = 0;  // into g_.events
  std::map<std::string, uint64_t> eager_;
  bool eager_changed_ = false;
  int64_t eager_at_ns_ = 0, last_sample_ns_ = 0;
  const uint64_t sample_ns_;
  Counts counts_;
};

std::string ms(uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  return buf;
}

}  // namespace

int run_export(const std::vector<std::string>& args) {
  std::string out_path, path;
  uint64_t limit = 0;
  bool as_json = false;
  const std::vector<Option> accepted = {flag_option("--json", &as_json),
                                        file_option("--perfetto", &out_path),
                                        count_option("--limit", 1, UINT64_MAX / 2, &limit)};
  if (int status = parse_options(args, accepted, kExportUsage, &path); status >= 0) return status;
  if (out_path.empty()) return usage_error("--perfetto OUT.json is needed", kExportUsage);

  Trace trace;
  ReadResult read;
  if (int status = load_trace(path, &trace, &read)) return status;
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  if (!out) {
    std::cerr << "pygraph-analyze: cannot write " << out_path << "\n";
    return 2;
  }
  const GraphEvents graph = graph_mode_events(trace, default_engine_options());
  ChromeTraceWriter writer(out, limit);
  TimelineExport timeline(trace, graph, writer);
  for (size_t i = 0; i <= trace.events.size(); ++i) {
    if (!timeline.emit(i)) break;
  }
  const uint64_t end_ns = trace.has_end ? trace.end.dur_ns : 0;
  writer.finish({{"source", "pygraph-analyze export"},
                 {"trace", path},
                 {"pid", trace.header.pid},
                 {"trace_version", trace.header.version},
                 {"complete", trace.has_end},
                 {"graph_mode", graph.simulated ? "simulated" : "recorded"},
                 {"capped", writer.capped()}});
  if (!writer.ok()) {
    std::cerr << "pygraph-analyze: cannot write " << out_path << "\n";
    return 2;
  }

  const Counts& c = timeline.counts();
  const uint64_t shown_ns =
      c.last_ns > trace.header.start_mono_ns ? c.last_ns - trace.header.start_mono_ns : 0;
  if (as_json) {
    json j = {{"out", out_path},
              {"events", writer.events()},
              {"metadata_events", writer.metadata()},
              {"launches", c.launches},
              {"other_calls", c.ops},
              {"boundaries", c.boundaries},
              {"stream_marks", c.stream_marks},
              {"threads", trace.threads.size()},
              {"streams", timeline.streams()},
              {"graph_mode",
               {{"source", graph.simulated ? "simulated" : "recorded"},
                {"sequences_followed", c.followed},
                {"graphs_built", c.chunks},
                {"replays", c.replays},
                {"flushes", c.flushes},
                {"decisions", c.decisions},
                {"eager_samples", c.eager_samples}}},
              {"capped", writer.capped()},
              {"limit", limit}};
    std::cout << json_text(j, 2) << "\n";
  } else {
    std::cout << "Wrote " << writer.events() << " events to " << out_path << ": " << c.launches
              << " launches and " << c.ops << " other driver calls (" << c.boundaries
              << " boundaries) on " << trace.threads.size() << " thread(s), " << c.stream_marks
              << " marks on " << timeline.streams() << " stream(s).\n"
              << (graph.simulated ? "Graph mode simulated offline (a trace-mode trace): "
                                  : "Graph mode, from its records: ")
              << c.followed << " sequences followed, " << c.chunks << " graphs built, " << c.replays
              << " replays, " << c.flushes << " flushes, " << c.decisions << " decisions, "
              << c.eager_samples << " samples of the eager counts.\n"
              << "Open it in Perfetto (ui.perfetto.dev) or chrome://tracing.\n";
    if (writer.capped()) {
      std::cout << "Capped at " << limit << " events (--limit): the timeline stops at "
                << ms(shown_ns) << " of " << (end_ns ? ms(end_ns) : "the trace") << ".\n";
    }
  }
  return finish(path, read);
}

}  // namespace pygraph::analyze
