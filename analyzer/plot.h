// `pygraph-analyze plot [--out OUT.svg] [--bucket-ms N] TRACE`: an SVG chart of the run over
// time, launches per second that graph mode ran in graphs (or, for a trace-mode trace, would:
// its engine run offline) against eager ones, with its flushes marked by cause, so that one
// look shows where graphs stop.
#pragma once

#include <string>
#include <vector>

namespace pygraph::analyze {

extern const char* const kPlotUsage;

// `args`: what follows the command name. Returns the exit status (cli.h).
int run_plot(const std::vector<std::string>& args);

}  // namespace pygraph::analyze
