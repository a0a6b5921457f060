// Run-time options: defaults, then the JSON file named by PYGRAPH_CONFIG, then PYGRAPH_<KEY>
// variables, each overriding the one before. Read once, at the first CUDA call.
//
// The options are listed, with their defaults and checks, in one table (option_table.h);
// config/README.md documents it for users. A bad configuration never stops the program unless
// it asks for that (PYGRAPH_STRICT=1): each problem is one line on stderr, and the shim passes
// through (off mode).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "log.h"

namespace pygraph {

enum class Mode {
  kOff,    // pure passthrough: the program's calls reach the driver untouched
  kTrace,  // passthrough, recording every launch and op (to the trace path, if set)
  kGraph,  // repeating launch sequences run as CUDA graphs (and recorded, if a trace path is set)
};

// Every option's value. The defaults live in the table only: a configuration starts from
// default_config(), never from Config{} (all zeros).
struct Config {
  Mode mode{};
  std::string trace_path;  // empty: no trace file
  std::string stats_path;  // empty: no stats; "stderr": to standard error
  LogLevel log_level{};
  unsigned min_repeats{};       // graph mode: occurrences seen eagerly before a sequence is graphed
  unsigned first_chunk{};       // graph mode: launches recorded before an occurrence's first graph
  unsigned max_chunk{};         // graph mode: the largest chunk graph, in launches
  unsigned chunk_growth{};      // graph mode: each next chunk is this many times the one before
  unsigned max_graphs{};        // graph mode: instantiated graphs kept (least recently used go)
  unsigned max_sequences{};     // graph mode: sequences the detector keeps
  unsigned staging_mb{};        // graph mode: pinned staging for pageable copies; 0: none
  unsigned stall_check_ms{};    // graph mode: the stall watchdog's check; 0: no watchdog
  unsigned pause_us{};          // graph mode: a host pause this long ends a chunk; 0: never
  unsigned pause_gpu_us{};      // graph mode: ... where this much GPU work waits there; 0: always
  unsigned pause_idle_ratio{};  // graph mode: no cut where the GPU idles this x the work later
  unsigned tail_pause_us{};     // graph mode: a segment's last gap this long (and work) cuts
  bool restart_chunks{};        // graph mode: a chunk the GPU drained for begins small again
  bool answer_queries{};        // graph mode: a query of deferred work answered "not ready"
  bool patch_grid{};            // graph mode: grid and dynamic shared memory patched, not in token
  bool one_launch_graphs{};     // graph mode: a chunk of one kernel launch is replayed as a graph
  bool early_head{};            // graph mode: a segment's head goes out before the program's graph
  bool streams{};               // graph mode: several streams in one graph (stream_fork.h)
  bool program_graphs{};  // graph mode: the program's graphs as child graphs (program_graphs.h)
  unsigned program_graph_launches{};  // graph mode: a program graph's launches before it is taken
  // The measured decisions (decision_policy.h): on when measure_windows > 0. The kernel
  // patterns keep matching sequences eager, measuring or not.
  double min_gain_percent{};
  unsigned measure_windows{};
  unsigned measure_iterations{};
  std::vector<std::string> allow_kernels;
  std::vector<std::string> deny_kernels;
  std::string cache_path;
  bool strict{};            // a configuration error ends the process instead of passing through
  std::string config_path;  // the file read (PYGRAPH_CONFIG); empty: none
};

// Where the configuration comes from; injectable, so that tests and fuzz targets need neither
// the process's environment nor files.
struct ConfigSources {
  std::function<const char*(const char* name)> getenv;
  // Names of the environment's variables: unknown PYGRAPH_* names get a warning.
  std::function<std::vector<std::string>()> env_names;
  // The whole text of a file, or false with the reason in *error.
  std::function<bool(const std::string& path, std::string* text, std::string* error)> read_file;
};

// The process's environment and files.
ConfigSources process_config_sources();

// Where an option's value came from.
enum class Source {
  kDefault,
  kFile,
  kEnvironment,
  kFallback,  // the mode: off, because of the errors
};

struct ConfigResult {
  Config config;
  std::vector<Source> sources;  // one per option, in table order
  // One line each, naming the file or variable, the key and the value. Warnings (unknown keys,
  // a trace in off mode) leave the rest as configured; any error puts the mode to off (or, in
  // strict mode, asks the caller to end the process), and the last error line says which.
  std::vector<std::string> warnings;
  std::vector<std::string> errors;
};

ConfigResult parse_config(const ConfigSources& sources);

// Every option at its default.
Config default_config();

// PYGRAPH_STRICT=1 and an error: the process exits with this status (sysexits.h's EX_CONFIG).
constexpr int kStrictExitStatus = 78;

const char* mode_name(Mode mode);
const char* log_level_name(LogLevel level);

// A path option with every "%p" replaced by this process's id (trace, stats).
std::string with_pid(const std::string& path_template);

}  // namespace pygraph
