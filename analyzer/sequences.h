// `pygraph-analyze sequences`: the launch sequences that repeat in a trace, found by the same
// detector graph mode uses online, what ends them (op and call site), and how many launches
// graphs could carry.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "graph/sequence_detector.h"
#include "trace/trace_reader.h"

namespace pygraph::analyze {

extern const char* const kSequencesUsage;

nlohmann::json find_sequences(const Trace& trace, const DetectorOptions& options, int top);
std::string sequences_text(const nlohmann::json& result);

}  // namespace pygraph::analyze
