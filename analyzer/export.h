// `pygraph-analyze export --perfetto OUT.json TRACE`: the run as a timeline that Perfetto and
// chrome://tracing open (Chrome trace event format).
#pragma once

#include <string>
#include <vector>

namespace pygraph::analyze {

extern const char* const kExportUsage;

// `args`: what follows the command name. Returns the exit status (cli.h).
int run_export(const std::vector<std::string>& args);

}  // namespace pygraph::analyze
