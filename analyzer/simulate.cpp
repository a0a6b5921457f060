#include "simulate.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <vector>

#include "cli.h"
#include "counting_driver.h"
#include "driver/memop_call.h"
#include "graph/engine_config.h"
#include "graph/engine_stats.h"
#include "json_text.h"
#include "options/config.h"

namespace pygraph::analyze {
namespace {

const char* const kSimulateUsage =
    "usage: pygraph-analyze simulate [--config FILE | --compare A.json B.json] [--json] TRACE\n"
    "\n"
    "Runs a trace recorded in trace mode through graph mode's own engine, offline, on a driver\n"
    "that only counts, and says what graph mode would do with the program: the share of\n"
    "launches that would run in graphs, graphs built and replayed, launches and patched nodes\n"
    "per replay, the kernels whose nodes were patched most, eager launches and flushes by\n"
    "reason (--json: the PYGRAPH_STATS document, and patched_most).\n"
    "Time is the trace's: the places where the program paused (pause_us) are learned from\n"
    "its timestamps. Not in a trace, so approximated: the rest of time (no stall flushes, no\n"
    "measured decisions: every sequence is graphed; no GPU time: every pause cuts, where a run\n"
    "drops those with little work waiting, pause_gpu_us, or with idle GPU time enough after\n"
    "them, pause_idle_ratio), contexts, what an unloaded module held; in a format-1 trace also\n"
    "copy sources and memset values.\n"
    "\n"
    "options:\n"
    "  --config FILE         the engine configured by this pygraph config file (the format of\n"
    "                        PYGRAPH_CONFIG, config/pygraph.json; PYGRAPH_* variables are not\n"
    "                        read); default: every option at its default\n"
    "  --compare A.json B.json   two configurations side by side\n"
    "  --json                the stats document (with --compare: {\"A\": ..., \"B\": ...})\n"
    "\n"
    "example:\n"
    "  PYGRAPH_MODE=trace PYGRAPH_TRACE=run.trace LD_PRELOAD=build/libpygraph.so python train.py\n"
    "  pygraph-analyze simulate run.trace\n"
    "  pygraph-analyze simulate --compare config/pygraph.json big-chunks.json run.trace\n";

// The kernels as the engine knows them, from the trace's function records (same ids).
std::vector<FunctionInfo> functions_of(const Trace& trace) {
  std::vector<FunctionInfo> out(trace.functions.size());
  for (size_t i = 0; i < trace.functions.size(); ++i) {
    const TraceFunction& f = trace.functions[i];
    FunctionInfo& info = out[i];
    info.id = f.id;
    info.handle = f.handle;
    info.name = f.name;
    info.waits_for_peers = waits_for_peers(f.name);
    info.is_kernel_handle = f.is_kernel_handle;
    info.params_known = f.params_known;
    info.params = f.params;
    info.size_args();
  }
  return out;
}

bool is_device_alloc(Op op) {
  switch (op) {
    case Op::MemAlloc:
    case Op::MemAllocPitch:
    case Op::MemAllocAsync:
    case Op::MemAllocFromPoolAsync:
    case Op::MemAllocManaged:
      return true;
    default:
      return false;
  }
}

bool is_pinned_alloc(Op op) {
  return op == Op::MemHostAlloc || op == Op::MemAllocHost || op == Op::MemHostRegister;
}

// The engine's view of a launch record. Owns what the EngineLaunch points to.
struct Launch {
  EngineLaunch call{};
  std::vector<void*> params;
  std::vector<CUlaunchAttribute> attrs;
  size_t extra_size = 0;
  void* extra[5] = {};
};

void describe(const TraceLaunch& l, const FunctionInfo* info, const CountingDriver& driver,
              Launch* out) {
  EngineLaunch& c = out->call;
  c = EngineLaunch{};
  c.op = l.op;
  c.door = l.door;
  c.info = info;
  c.function = reinterpret_cast<CUfunction>(info ? info->handle : 0);
  std::memcpy(c.grid, l.grid, sizeof c.grid);
  std::memcpy(c.block, l.block, sizeof c.block);
  c.shared_mem = l.shared_mem;
  c.stream = reinterpret_cast<CUstream>(l.stream);
  out->attrs.resize(l.attrs.size());
  for (size_t i = 0; i < l.attrs.size(); ++i) {
    out->attrs[i].id = static_cast<CUlaunchAttributeID>(l.attrs[i].id);
    static_assert(sizeof(out->attrs[i].value) == sizeof(l.attrs[i].value));
    std::memcpy(&out->attrs[i].value, l.attrs[i].value, sizeof l.attrs[i].value);
  }
  c.attrs = out->attrs.data();
  c.attr_count = static_cast<unsigned>(out->attrs.size());
  const auto* args = const_cast<uint8_t*>(l.args.data());
  if (l.flags & trace::kLaunchArgsFromExtra) {
    out->extra_size = l.args.size();
    out->extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
    out->extra[1] = const_cast<uint8_t*>(args);
    out->extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
    out->extra[3] = &out->extra_size;
    out->extra[4] = CU_LAUNCH_PARAM_END;
    c.extra = out->extra;
  } else if (info && info->params_known && !(l.flags & trace::kLaunchArgsUnknown) &&
             l.args.size() >= info->arg_bytes) {
    out->params.resize(info->params.size());
    for (size_t i = 0; i < info->params.size(); ++i) {
      out->params[i] = const_cast<uint8_t*>(args) + info->params[i].offset;
    }
    c.params = out->params.data();
  }
  c.eager = l.op == Op::LaunchKernelEx ? driver.launch_ex_entry() : driver.launch_entry();
  c.per_thread = false;
}

// The engine's clock offline: the time the trace recorded for the event being replayed, so that
// the places where the program paused (pause_places.h) are learned as in the run.
thread_local uint64_t t_trace_now = 0;

// The engine `config` sets up, as the shim would, measuring off (offline there is no time to
// measure).
EngineOptions offline_options(const Config& config) {
  EngineOptions options = engine_options(config);
  options.measure = false;
  return options;
}

}  // namespace

bool options_from_file(const std::string& file, EngineOptions* out, std::string* error) {
  ConfigSources sources = process_config_sources();
  sources.getenv = [file](const char* name) -> const char* {
    return std::strcmp(name, "PYGRAPH_CONFIG") == 0 ? file.c_str() : nullptr;
  };
  sources.env_names = [] { return std::vector<std::string>{"PYGRAPH_CONFIG"}; };
  const ConfigResult r = parse_config(sources);
  for (const std::string& w : r.warnings) std::cerr << "pygraph-analyze: " << w << "\n";
  if (!r.errors.empty()) {
    *error = r.errors.front();
    return false;
  }
  *out = offline_options(r.config);
  return true;
}

EngineOptions default_engine_options() {
  return offline_options(default_config());
}

nlohmann::json replay_trace(const Trace& trace, const EngineOptions& options,
                            EngineObserver* observer,
                            const std::function<void(const TraceEvent&)>& before_event) {
  CountingDriver driver;
  EngineOptions timed = options;
  if (!timed.clock_ns) timed.clock_ns = [] { return t_trace_now; };
  auto engine = std::make_unique<GraphEngine>(&driver.api(), timed);
  engine->set_observer(observer);
  const std::vector<FunctionInfo> functions = functions_of(trace);
  // A host source the engine may snapshot: any address outside the recorded allocations is
  // pageable memory to it; the bytes are never looked at.
  static std::vector<uint8_t> host_source;
  host_source.resize(size_t(options.staging_bytes) + 1);
  Launch launch;
  DoorCounts doors;
  for (const TraceEvent& e : trace.events) {
    if (before_event) before_event(e);
    t_trace_now = e.is_launch ? trace.launches[e.index].ts_ns : trace.ops[e.index].ts_ns;
    if (e.is_launch) {
      const TraceLaunch& l = trace.launches[e.index];
      const FunctionInfo* info = l.function_id >= 1 && l.function_id <= functions.size()
                                     ? &functions[l.function_id - 1]
                                     : nullptr;
      describe(l, info, driver, &launch);
      engine->launch(launch.call);
      ++(l.door == trace::Door::kExport  ? doors.exported
         : l.door == trace::Door::kDlsym ? doors.dlsym
                                         : doors.procaddr);
      continue;
    }
    const TraceOp& o = trace.ops[e.index];
    const auto stream = reinterpret_cast<CUstream>(o.stream);
    if (engine_memop(o.op)) {
      MemopCall m{};
      m.op = o.op;
      m.eager = driver.memop_entry(o.op);
      m.stream = stream;
      m.dst = o.ptr;
      m.count = o.bytes;
      const auto host = reinterpret_cast<uint64_t>(host_source.data());
      if (o.has_detail) {
        // Format 2: the source, the value and what the driver said of both addresses. A
        // pageable source is read for its snapshot: the engine gets readable memory instead.
        m.value = o.value;
        m.src = o.src_kind == trace::MemoryKind::kPageable ? host : o.src;
        driver.set_kind(m.dst, o.dst_kind);
        driver.set_kind(m.src, o.src_kind);
      } else {
        // Format 1 has no source: host for a host-to-device copy, else device memory like its
        // destination; and no value (changed memset values are not seen as patches).
        m.src = o.op == Op::MemcpyHtoDAsync ? host : o.ptr;
      }
      engine->memop(m);
      driver.forget_kinds();
      continue;
    }
    if (engine->multi_stream() && engine_event_op(o.op)) {
      // Several streams in one graph, as the hooks hand these to graph mode. The trace keeps no
      // flags: taken as 0, the only value PyTorch and the CUDA runtime pass (an external record
      // or wait would be issued in place live).
      engine->event_op(EventCall{o.op, driver.event_entry(o.op), false,
                                 reinterpret_cast<CUevent>(o.handle), stream, 0});
      continue;
    }
    if (o.result == 0 && is_device_alloc(o.op)) driver.device_alloc(o.ptr, o.bytes);
    if (o.result == 0 && is_pinned_alloc(o.op)) driver.pinned_alloc(o.ptr, o.bytes);
    // With its handle, as the hooks pass it: a query, sync or destruction of an event that a
    // chunk records, a program graph's launch. A query of deferred work the engine answers
    // itself, as the hooks let it (the trace's answer, taken without the shim, is timing).
    if (engine->answers_query(o.op, stream, false, o.handle)) continue;  // queries alone
    engine->before_op(o.op, stream, false, o.handle);
    engine->after_op(o.op, stream, false, static_cast<CUresult>(o.result));
    if (op_info(o.op).cls == OpClass::kFree) driver.release(o.ptr);
  }
  if (before_event) before_event(TraceEvent{false, ~0u});  // the end: what exit submits
  engine->flush_all(FlushCause::kExit);
  nlohmann::json stats = nlohmann::json::parse(stats_json(engine->stats(), doors, "simulate"));
  const DriverCounts& counts = CountingDriver::counts();
  stats["driver_calls"] = {{"eager_launches", counts.eager_launches},
                           {"eager_memops", counts.eager_memops},
                           {"eager_event_ops", counts.eager_event_ops},
                           {"graph_launches", counts.graph_launches},
                           {"graphs_instantiated", counts.graphs_instantiated},
                           {"node_updates", counts.node_updates}};
  return stats;
}

namespace {

// Which nodes make replays cost: patched nodes counted by kernel name (memops and event records
// by kind). A replay patches what changed since its graph last ran; a kernel that tops this list
// takes arguments that differ from one replay of its graph to the next (a counter, a buffer
// that moves, a graph shared by windows that differ there).
class PatchCounter : public EngineObserver {
 public:
  void patched(uint32_t, NodeKind kind, const FunctionInfo* function) override {
    ++counts_[kind == NodeKind::kMemset             ? "memset"
              : kind == NodeKind::kCopy             ? "copy"
              : kind == NodeKind::kEventRecord      ? "event record"
              : function && !function->name.empty() ? function->name
                                                    : "kernel (no name)"];
  }
  bool wants_patches() const override { return true; }
  // The `top` names patched most, most first (ties by name).
  nlohmann::json most(size_t top) const {
    std::vector<std::pair<std::string, uint64_t>> v(counts_.begin(), counts_.end());
    std::stable_sort(v.begin(), v.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    nlohmann::json out = nlohmann::json::array();
    for (size_t i = 0; i < v.size() && i < top; ++i) {
      out.push_back({{"node", v[i].first}, {"patched", v[i].second}});
    }
    return out;
  }

 private:
  std::map<std::string, uint64_t> counts_;
};

}  // namespace

nlohmann::json simulate(const Trace& trace, const EngineOptions& options) {
  PatchCounter patches;
  nlohmann::json stats = replay_trace(trace, options, &patches, nullptr);
  stats["patched_most"] = patches.most(10);
  return stats;
}

std::string simulate_text(const nlohmann::json& s, const std::string& config_name) {
  char line[512];
  std::string out;
  const auto& l = s["launches"];
  const auto& g = s["graphs"];
  std::snprintf(line, sizeof line,
                "Graph mode simulated on %llu launches (%s): %.1f %% would run in graphs.\n",
                static_cast<unsigned long long>(l.value("seen_by_engine", 0ull)),
                config_name.c_str(), s.value("coverage_percent", 0.0));
  out += line;
  std::snprintf(line, sizeof line,
                "  graphs built %llu, replays %llu, %.1f launches and %.1f patched nodes per "
                "replay, sequences followed %llu\n",
                static_cast<unsigned long long>(g.value("instantiated", 0ull)),
                static_cast<unsigned long long>(g.value("replays", 0ull)),
                g.value("launches_per_replay", 0.0), g.value("patched_nodes_per_replay", 0.0),
                static_cast<unsigned long long>(g.value("sequences_followed", 0ull)));
  out += line;
  if (s.contains("patched_most") && !s["patched_most"].empty()) {
    out += "  nodes patched most:";
    size_t shown = 0;
    for (const auto& p : s["patched_most"]) {
      if (shown++ == 5) break;
      out += "\n    " + std::to_string(p.value("patched", 0ull)) + " " + p.value("node", "");
    }
    out += "\n";
  }
  out += "  eager launches by reason:";
  for (const auto& [reason, n] : s["eager_launches_by_reason"].items()) {
    out += " " + reason + " " + n.dump();
  }
  out += s["eager_launches_by_reason"].empty() ? " none\n" : "\n";
  out += "  flushes by reason:";
  for (const auto& [reason, n] : s["flushes"]["by_reason"].items()) {
    out += " " + reason + " " + n.dump();
  }
  out += s["flushes"]["by_reason"].empty() ? " none\n" : "\n";
  const auto& m = s["memops"];
  std::snprintf(line, sizeof line, "  memsets and copies in graphs: %llu of %llu\n",
                static_cast<unsigned long long>(m.value("replayed_in_graphs", 0ull)),
                static_cast<unsigned long long>(m.value("seen_by_engine", 0ull)));
  out += line;
  return out;
}

// --compare's two figures per row, as text.
std::string compare_text(const nlohmann::json& a, const nlohmann::json& b, const std::string& na,
                         const std::string& nb) {
  auto num = [](const nlohmann::json& s, const char* section, const char* key) {
    const nlohmann::json& v = section ? s[section][key] : s[key];
    char out[32];
    std::snprintf(out, sizeof out, v.is_number_float() ? "%.1f" : "%.0f", v.get<double>());
    return std::string(out);
  };
  struct Row {
    const char* label;
    const char* section;
    const char* key;
  };
  const Row rows[] = {{"coverage %", nullptr, "coverage_percent"},
                      {"launches in graphs", "launches", "replayed_in_graphs"},
                      {"eager launches", "launches", "eager"},
                      {"graphs built", "graphs", "instantiated"},
                      {"graph launches", "graphs", "replays"},
                      {"launches per replay", "graphs", "launches_per_replay"},
                      {"patched nodes per replay", "graphs", "patched_nodes_per_replay"},
                      {"early submissions", "flushes", "total"}};
  char line[256];
  auto name = [](const std::string& path) {  // the file's name, as much as fits
    return path.substr(path.find_last_of('/') + 1).substr(0, 16);
  };
  std::snprintf(line, sizeof line, "%-26s %16s %16s\n", "", name(na).c_str(), name(nb).c_str());
  std::string out = line;
  for (const Row& r : rows) {
    std::snprintf(line, sizeof line, "%-26s %16s %16s\n", r.label, num(a, r.section, r.key).c_str(),
                  num(b, r.section, r.key).c_str());
    out += line;
  }
  return out;
}

int run_simulate(std::vector<std::string> args) {
  bool as_json = false;
  std::string config;
  std::vector<std::string> compare;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] != "--compare") continue;
    if (i + 2 >= args.size())
      return usage_error("--compare needs two config files", kSimulateUsage);
    compare = {args[i + 1], args[i + 2]};
    args.erase(args.begin() + i, args.begin() + i + 3);
    break;
  }
  const std::vector<Option> accepted = {flag_option("--json", &as_json),
                                        file_option("--config", &config)};
  std::string path;
  if (int status = parse_options(args, accepted, kSimulateUsage, &path); status >= 0) {
    return status;
  }
  if (!compare.empty() && !config.empty()) {
    return usage_error("--config and --compare do not go together", kSimulateUsage);
  }
  std::vector<std::string> files = compare.empty() ? std::vector<std::string>{config} : compare;
  std::vector<EngineOptions> options(files.size(), default_engine_options());
  for (size_t i = 0; i < files.size(); ++i) {
    std::string error;
    if (!files[i].empty() && !options_from_file(files[i], &options[i], &error)) {
      return usage_error(error, kSimulateUsage);
    }
  }
  Trace trace;
  ReadResult read;
  if (int status = load_trace(path, &trace, &read)) return status;
  std::vector<nlohmann::json> stats;
  for (const EngineOptions& o : options) stats.push_back(simulate(trace, o));
  if (stats.size() == 2) {
    if (as_json) {
      std::cout << json_text(nlohmann::json{{"A", stats[0]}, {"B", stats[1]}}, 2) << "\n";
    } else {
      std::cout << "Graph mode simulated on " << path << " with two configurations:\n"
                << compare_text(stats[0], stats[1], files[0], files[1]);
    }
  } else if (as_json) {
    std::cout << json_text(stats[0], 2) << "\n";
  } else {
    std::cout << simulate_text(stats[0], config.empty() ? "default options" : config);
  }
  return finish(path, read);
}

}  // namespace pygraph::analyze
