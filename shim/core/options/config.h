// Run-time options, read once from the environment (PYGRAPH_<NAME>).
//
// One table lists every option with its default and meaning; config/README.md documents the
// same table for users. A bad value never stops the program: it is named in one line on stderr
// and the safe choice is taken.
#pragma once

#include <string>
#include <vector>

namespace pygraph {

enum class Mode {
  kOff,    // pure passthrough: the program's calls reach the driver untouched
  kTrace,  // passthrough, recording every launch and op (to PYGRAPH_TRACE, if set)
  kGraph,  // repeating launch sequences run as CUDA graphs (and recorded, if PYGRAPH_TRACE)
};

struct Config {
  Mode mode = Mode::kGraph;
  std::string trace_path;  // empty: no trace file
  std::string stats_path;  // empty: no stats; "stderr": to standard error
  bool debug = false;
  unsigned min_repeats = 2;    // graph mode: occurrences seen eagerly before a sequence is graphed
  unsigned max_graphs = 1024;  // graph mode: instantiated graphs kept (least recently used go)
  unsigned first_chunk = 2;    // graph mode: launches recorded before an occurrence's first graph
  unsigned staging_mb = 4;     // graph mode: pinned staging for pageable copies; 0: none
  bool patch_grid = true;      // graph mode: grid and dynamic shared memory patched, not in token
};

struct OptionSpec {
  const char* name;  // environment variable
  const char* default_value;
  const char* help;
};
extern const OptionSpec kOptions[];
extern const int kOptionCount;

// Reads the options through `getenv` (injectable for tests); problems are appended to
// `warnings`, one line each, already naming the variable and its value.
Config parse_config(const char* (*getenv_fn)(const char*), std::vector<std::string>* warnings);

const char* mode_name(Mode mode);

// A path option with every "%p" replaced by this process's id (PYGRAPH_TRACE, PYGRAPH_STATS).
std::string with_pid(const std::string& path_template);

}  // namespace pygraph
