// `pygraph-analyze simulate`: a trace recorded in trace mode run through graph mode's own engine
// offline (detector, following, chunks, patching: the same code as the shim), on a driver that
// only counts (counting_driver.h). It predicts what graph mode would do with the program:
// coverage, graphs, replays, launches and patched nodes per replay, eager launches and flushes
// by reason, in the stats document's format (docs/stats-format.md, mode "simulate").
//
// What a format-1 trace does not hold is approximated: a copy's source (a host source is taken
// as pageable memory, staged; a device copy's source as device memory) and a memset's value (so
// patches of changed values are not counted). Format 2 holds both, with the memory kinds the
// process's driver reported. Neither holds per-thread default streams or time (the stall
// watchdog never fires), nor streams' flags (every stream is taken as blocking: the legacy
// stream's joins are not predicted) or the flags of event records and waits (taken as 0).
// Event records and waits go to the engine as the hooks hand them to graph mode (several
// streams in one graph).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "graph/graph_engine.h"
#include "trace/trace_reader.h"

namespace pygraph::analyze {

// The engine a config file (the format of PYGRAPH_CONFIG) sets up, as the shim would
// (graph/engine_config.h); the file only, no PYGRAPH_* variables, measuring off (offline there is
// no time to measure). Warnings go to stderr; false with *error on a malformed file.
bool options_from_file(const std::string& file, EngineOptions* out, std::string* error);
// The engine as the shim runs it with every option at its default (default_config()), measuring
// off: what every command simulates without a config file.
EngineOptions default_engine_options();
// The engine's stats after the whole trace (everything submitted at its end).
nlohmann::json simulate(const Trace& trace, const EngineOptions& options);
// The same, telling `observer` what the engine does and calling `before_event` before each
// event of the trace is fed to it (and once more, with index ~0u, before the final submission).
nlohmann::json replay_trace(const Trace& trace, const EngineOptions& options,
                            EngineObserver* observer,
                            const std::function<void(const TraceEvent&)>& before_event);
std::string simulate_text(const nlohmann::json& stats, const std::string& config_name);
// The subcommand: options, the trace, the report (cli.h's exit statuses).
int run_simulate(std::vector<std::string> args);

}  // namespace pygraph::analyze
