// The few lines `pygraph run` prints at the end, from the stats documents the run left
// (docs/stats-format.md).
#pragma once

#include <sys/types.h>

#include <ctime>
#include <string>
#include <vector>

namespace pygraph::launcher {

// One process's document in a line: the mode, coverage, graphs, replays and the top reasons
// for eager launches ("graph mode: 99.1 % of 17746 launches replayed in graphs (72 graphs,
// 3952 replays); eager: not_repeating 156, mismatch 4"). Empty if `json` is no stats document.
std::string summary_line(const std::string& json);

struct StatsFile {
  std::string path;
  pid_t pid = 0;  // the process that wrote it, when the path says (%p); else 0
};

// The stats files a run left at `destination` (a path; %p is each process's id), written
// since `since`: the program's own (`pid`) first, then its children's by name.
std::vector<StatsFile> stats_files(const std::string& destination, pid_t pid, time_t since);

}  // namespace pygraph::launcher
