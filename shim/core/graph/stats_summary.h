// A process's stats document (docs/stats-format.md) in one line: what `pygraph run` prints per
// process at the end, and the shim itself at exit with `log_level` info.
#pragma once

#include <string>

namespace pygraph {

// The mode, coverage, graphs, replays and the top reasons for eager launches ("graph mode:
// 99.1 % of 17746 launches replayed in graphs (72 graphs, 3952 replays); eager: not_repeating
// 156, mismatch 4"). Empty if `json` is no stats document (it may come from any file).
std::string stats_summary_line(const std::string& json);

}  // namespace pygraph
