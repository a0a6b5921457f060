#include "graph/engine_stats.h"

#include <nlohmann/json.hpp>

#include "graph/chunk_policy.h"
#include "json_text.h"

namespace pygraph {

const char* eager_reason_name(EagerReason r) {
  switch (r) {
#define PYGRAPH_EAGER_NAME(e, name) \
  case EagerReason::e:              \
    return name;
    PYGRAPH_EAGER_REASONS(PYGRAPH_EAGER_NAME)
#undef PYGRAPH_EAGER_NAME
    case EagerReason::kCount:
      break;
  }
  return "unknown";
}

const char* flush_cause_name(FlushCause c) {
  switch (c) {
    case FlushCause::kOp:
      return "op";
    case FlushCause::kStreamChange:
      return "stream_change";
    case FlushCause::kContextChange:
      return "context_change";
    case FlushCause::kExit:
      return "exit";
    case FlushCause::kFork:
      return "fork";
    case FlushCause::kStall:
      return "stall";
    case FlushCause::kCount:
      break;
  }
  return "unknown";
}

uint64_t EngineStats::eager_total() const {
  uint64_t n = 0;
  for (uint64_t v : eager) n += v;
  return n;
}

uint64_t EngineStats::memop_eager_total() const {
  uint64_t n = 0;
  for (uint64_t v : memop_eager) n += v;
  return n;
}

uint64_t EngineStats::flushes_total() const {
  uint64_t n = 0;
  for (uint64_t v : flushes_by_cause) n += v;
  return n;
}

namespace {

// A name that may not be known yet: null rather than "".
nlohmann::ordered_json text_or_null(const std::string& text) {
  return text.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(text);
}

}  // namespace

std::string stats_json(const EngineStats& s, const DoorCounts& doors, const char* mode,
                       const std::vector<SequenceStat>& sequences,
                       const std::vector<DriverCallCount>& driver_calls) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["schema"] = "pygraph-stats/1";
  j["mode"] = mode;
  j["launches"] = {
      {"intercepted", doors.exported + doors.dlsym + doors.procaddr},
      {"by_door",
       {{"export", doors.exported}, {"dlsym", doors.dlsym}, {"cuGetProcAddress", doors.procaddr}}},
      {"seen_by_engine", s.launches},
      {"recorded", s.recorded},
      {"replayed_in_graphs", s.replayed},
      {"eager", s.eager_total()}};
  j["coverage_percent"] = s.launches ? 100.0 * double(s.replayed) / double(s.launches) : 0.0;
  j["graphs"] = {
      {"instantiated", s.graphs_built},
      {"programmatic_allowed", s.programmatic_allowed},
      {"evicted", s.graphs_evicted},
      {"unloaded", s.graphs_unloaded},
      {"context_ended", s.graphs_context_ended},
      {"live", s.graphs_live},
      {"replays", s.replays},
      {"replays_borrowed", s.replays_borrowed},
      {"patched_nodes", s.patched_nodes},
      {"patched_nodes_per_replay", s.replays ? double(s.patched_nodes) / double(s.replays) : 0.0},
      {"launches_per_replay", s.replays ? double(s.replayed) / double(s.replays) : 0.0},
      {"mismatches", s.mismatches},
      {"variant_switches", s.variant_switches},
      {"loops_resumed", s.loops_resumed},
      {"loops_past_segments", s.loops_past_segments},
      {"early_heads", s.early_heads},
      {"resume_mismatches", s.resume_mismatches},
      {"loops_unrolled_by_arguments", s.loops_unrolled_by_arguments},
      {"sequences_followed", s.sequences_followed},
      {"sequences_known", s.sequences_known},
      {"sequences_forgotten", s.sequences_forgotten},
      {"sequences_disabled", s.graph_failures},
      {"sequences_cut_short", s.cut_short},
      {"pause_places", s.pauses.places},
      {"pause_cuts", s.pause_cuts},
      {"pause_light", s.pauses.light},
      {"pause_weighing", s.pauses.weighing},
      {"pause_unweighed", s.pauses.unweighed},
      {"tail_splits", s.pauses.tail_splits},
      {"pause_restarts", s.pauses.restarts},
      {"restarted_chunks", s.restarted_chunks},
      {"peer_cuts", s.peer_cuts}};
  if (!s.last_graph_failure.empty()) j["graphs"]["last_failure"] = s.last_graph_failure;
  ordered_json flushes = ordered_json::object();
  for (int i = 0; i < static_cast<int>(Op::kCount); ++i) {
    if (s.flushes_by_op[i]) flushes[kOpInfo[i].name] = s.flushes_by_op[i];
  }
  for (int i = 1; i < static_cast<int>(FlushCause::kCount); ++i) {
    if (s.flushes_by_cause[i])
      flushes[flush_cause_name(static_cast<FlushCause>(i))] = s.flushes_by_cause[i];
  }
  j["flushes"] = {{"total", s.flushes_total()},
                  {"by_reason", flushes},
                  {"queries_answered", s.queries_answered}};
  ordered_json eager = ordered_json::object();
  for (int i = 0; i < static_cast<int>(EagerReason::kCount); ++i) {
    if (s.eager[i]) eager[eager_reason_name(static_cast<EagerReason>(i))] = s.eager[i];
  }
  j["eager_launches_by_reason"] = eager;
  ordered_json memop_eager = ordered_json::object();
  for (int i = 0; i < static_cast<int>(EagerReason::kCount); ++i) {
    if (s.memop_eager[i])
      memop_eager[eager_reason_name(static_cast<EagerReason>(i))] = s.memop_eager[i];
  }
  // Measured decisions (off unless PYGRAPH_MEASURE_WINDOWS > 0): verdicts reached, by kind,
  // measurements begun (a first one per sequence followed, then re-measurements) and their
  // windows completed; verdicts taken from the cache, and sequences the kernel patterns keep
  // eager.
  ordered_json list = ordered_json::array();
  for (const SequenceStat& q : sequences) {
    // Its whole rounds' mean, in microseconds (0: none whole).
    const auto per_round = [&q](uint64_t ns) {
      return q.rounds.whole ? double(ns) / 1e3 / q.rounds.whole : 0.0;
    };
    // Its whole rounds' chunks: positions, GPU time, the idle time before each and the host's
    // time around its launch (null: not measured), in microseconds. The last round, and the
    // ones before it.
    const auto us = [](uint64_t ns) {
      return ns == ~0ull ? ordered_json(nullptr) : ordered_json(double(ns) / 1e3);
    };
    const auto round_json = [&us](const std::vector<PausePlaces::Timed>& round) {
      ordered_json chunks = ordered_json::array();
      for (const PausePlaces::Timed& t : round) {
        chunks.push_back({{"start", t.start},
                          {"end", t.end},
                          {"gpu_us", us(t.gpu_ns)},
                          {"idle_us", us(t.idle_ns)},
                          {"host_us", us(t.host_ns)},
                          {"record_us", us(t.record_ns)}});
      }
      return chunks;
    };
    const size_t whole = q.whole_rounds.size();
    ordered_json last_round = whole ? round_json(q.whole_rounds.back()) : ordered_json::array();
    ordered_json earlier_rounds = ordered_json::array();
    for (size_t r = 0; r + 1 < whole; ++r) earlier_rounds.push_back(round_json(q.whole_rounds[r]));
    // How each restart begins: its first size, and the pace of the chunks after it (the GPU
    // time its entries brought per unit of recording time; the engine grows by chunk_growth
    // where it is not between 1 and that).
    ordered_json restart_sizes = ordered_json::array();
    for (const PausePlaces::Restart& r : q.restart_sizes) {
      restart_sizes.push_back(
          {{"first", r.first}, {"pace", double(r.pace) / ChunkCursor::kPaceOne}});
    }
    list.push_back({{"signature", text_or_null(q.signature)},
                    {"first_kernel", text_or_null(q.first_kernel)},
                    {"verdict", q.verdict},
                    {"source", q.source},
                    {"why", q.why},
                    {"launches", q.launches},
                    {"gain_percent", q.gain_percent},
                    {"eager_us", q.eager_us},
                    {"graph_us", q.graph_us},
                    {"replays", q.replays},
                    {"launches_per_replay", q.launches_per_replay},
                    {"pauses",
                     {{"state", q.pause_state},
                      {"cutting", q.pauses_cutting},
                      {"dropped", q.pauses_dropped},
                      {"split", q.split},
                      {"cuts", q.cuts},
                      {"restarts", q.restarts},
                      {"restart_sizes", restart_sizes},
                      {"last_round", last_round},
                      {"earlier_rounds", earlier_rounds},
                      {"rounds",
                       {{"whole", q.rounds.whole},
                        {"untimed", q.rounds.untimed},
                        {"left", q.rounds.left},
                        {"unrecorded", q.rounds.unrecorded},
                        {"gpu_us", per_round(q.rounds.gpu_ns)},
                        {"idle_us", per_round(q.rounds.idle_ns)}}}}}});
  }
  j["decisions"] = {{"graph", s.decided_graph},
                    {"eager", s.decided_eager},
                    {"measurements", s.measurements},
                    {"windows", s.measure_windows},
                    {"cached", s.decided_cached},
                    {"config", s.decided_config},
                    {"sequences", list}};
  j["memops"] = {{"seen_by_engine", s.memops},
                 {"recorded", s.memops_recorded},
                 {"replayed_in_graphs", s.memops_replayed},
                 {"eager", s.memop_eager_total()},
                 {"staged_bytes", s.staged_bytes},
                 {"kind_queries", s.kind_queries},
                 {"eager_by_reason", memop_eager}};
  j["streams"] = {{"event_records_in_graphs", s.events_recorded},
                  {"waits_as_edges", s.event_waits},
                  {"event_ops_issued", s.events_eager},
                  {"side_streams_forked", s.side_streams},
                  {"legacy_joins", s.legacy_joins},
                  {"rerecords_in_graphs", s.rerecords}};
  j["program_graphs"] = {
      {"launches", s.program_graphs},
      {"taken_into_chunks", s.program_graphs_recorded},
      {"replayed_in_graphs", s.program_graphs_replayed},
      {"nodes_replayed", s.program_graph_nodes_replayed},
      {"issued_with_chunk", s.program_graphs_eager},
      {"instantiated", s.program_graphs_instantiated},
      {"takeable", s.program_graphs_takeable},
      {"last_refusal",
       s.program_graph_refused ? ordered_json(s.program_graph_refused) : ordered_json()}};
  if (!driver_calls.empty()) {
    ordered_json calls = ordered_json::object();
    for (const DriverCallCount& c : driver_calls) {
      calls[c.name] = {{"calls", c.calls}, {"us", double(c.ns) / 1000.0}};
    }
    j["driver_calls"] = calls;
  }
  // Names come from the driver and the program (kernels, patterns in the why): json_text.
  return json_text(j, 2) + "\n";
}

}  // namespace pygraph
