// Where the stats documents of a run are, for the lines `pygraph run` prints at the end (each
// one graph/stats_summary.h's line).
#pragma once

#include <sys/types.h>

#include <ctime>
#include <string>
#include <vector>

namespace pygraph::launcher {

struct StatsFile {
  std::string path;
  pid_t pid = 0;  // the process that wrote it, when the path says (%p); else 0
};

// The stats files a run left at `destination` (a path; %p is each process's id), written
// since `since`: the program's own (`pid`) first, then its children's by name.
std::vector<StatsFile> stats_files(const std::string& destination, pid_t pid, time_t since);

}  // namespace pygraph::launcher
