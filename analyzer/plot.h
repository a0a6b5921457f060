// `pygraph-analyze plot [--out OUT.svg] [--bucket-ms N] TRACE`: an SVG chart of the run over
// time, launches per second that repeated sequences could carry in graphs against eager ones,
// with the boundaries marked, so that one look shows where graphs stop.
#pragma once

#include <string>
#include <vector>

namespace pygraph::analyze {

extern const char* const kPlotUsage;

// `args`: what follows the command name. Returns the exit status (cli.h).
int run_plot(const std::vector<std::string>& args);

}  // namespace pygraph::analyze
