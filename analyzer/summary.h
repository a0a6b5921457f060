// `pygraph-analyze summary`: what the program launched, through which doors, and where it
// synchronized, as text or JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "trace/trace_reader.h"

namespace pygraph::analyze {

extern const char* const kSummaryUsage;

struct SummaryOptions {
  int top = 20;  // rows in each ranking
};

nlohmann::json summarize(const Trace& trace, const SummaryOptions& options);
std::string summary_text(const nlohmann::json& summary);

}  // namespace pygraph::analyze
