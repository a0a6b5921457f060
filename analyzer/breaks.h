// `pygraph-analyze breaks`: what keeps launches out of graphs, ranked by the launch time it
// costs, each with the call site or kernel that causes it. A trace written in graph mode holds
// what graph mode did (trace format 2, records 7 to 12) and is read as it ran; over any other,
// graph mode's own engine runs offline (simulate.h) and tells what it does (engine_observer.h).
// Either way each eager launch and early submission is put down to the event the engine was
// handling: a sync's call site (the segment it ended had launches that never repeated, or it
// cut a chunk too short to graph), the kernel of a launch that no graph can hold, the kernel
// where a followed sequence went elsewhere, the sequence whose graphs measured as not paying.
// Kernel names are shown demangled.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "graph/graph_engine.h"
#include "trace/trace_reader.h"

namespace pygraph::analyze {

struct BreakCosts {
  double launch_us = 3.5;        // an eager launch on the CPU (NOTES.md: 3.5-3.7 us)
  double graph_launch_us = 2.0;  // a graph launch: what a chunk cut early costs more
};

nlohmann::json find_breaks(const Trace& trace, const EngineOptions& options,
                           const BreakCosts& costs, int top);
std::string breaks_text(const nlohmann::json& result);
int run_breaks(const std::vector<std::string>& args);

}  // namespace pygraph::analyze
