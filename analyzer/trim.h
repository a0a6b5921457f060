// `pygraph-analyze trim`: a window of a trace's launches written as a trace of its own, small
// enough to check in or attach to a report, that every subcommand reads like the original.
//
// A window is launches skip+1 to skip+launches in the program's order, with the other driver
// calls and graph mode's events from just after launch `skip` up to launch skip+launches+1, so
// that the sync ending the last step kept stays in. Records refer to kernels, call sites and
// threads announced earlier in the file: the cut keeps those its records use, numbered anew in
// order of first use (a trace's ids stay below what its size can hold, trace_reader.cpp), and
// writes them ahead of the records that use them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/trace_reader.h"

namespace pygraph::analyze {

extern const char* const kTrimUsage;

struct TrimWindow {
  uint64_t skip = 0;               // launches left out before the window
  uint64_t launches = UINT64_MAX;  // launches kept
};

struct Trimmed {
  std::string bytes;          // the cut trace, a whole file
  uint64_t first_launch = 0;  // number (from 1) in the original of the first launch kept; 0: none
  uint64_t launches = 0, ops = 0, engine_events = 0;
  uint64_t functions = 0, callsites = 0, threads = 0;  // definitions written
  bool complete = false;                               // an end record was written
};

// The window of `trace` as a trace file. When the window does not start at the beginning, the
// file's start time moves to its first call's, so that timelines and charts start there too.
// The end record is written when the trace has one, with the duration of the window.
Trimmed trim_trace(const Trace& trace, const TrimWindow& window);

// The subcommand: options, the trace, the cut (cli.h's exit statuses).
int run_trim(const std::vector<std::string>& args);

}  // namespace pygraph::analyze
