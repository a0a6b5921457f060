// The engine's options as the configuration sets them: one mapping, used by the shim and by
// `pygraph-analyze simulate --config`, so that a simulation runs the engine the shim would run.
#pragma once

#include "graph/graph_engine.h"
#include "options/config.h"

namespace pygraph {

// Everything but the decision store (the shim opens the cache; offline there is none).
EngineOptions engine_options(const Config& config);

}  // namespace pygraph
