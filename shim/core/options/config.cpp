#include "options/config.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace pygraph {

const OptionSpec kOptions[] = {
    {"PYGRAPH_MODE", "graph",
     "graph: repeating launch sequences run as CUDA graphs; trace: passthrough and recording; "
     "off: pure passthrough"},
    {"PYGRAPH_TRACE", "",
     "file to write the binary trace to; %p becomes the process id; empty: no trace"},
    {"PYGRAPH_DEBUG", "0", "1: log diagnostic lines (entry points wrapped or not) to stderr"},
    {"PYGRAPH_STATS", "", "file (or 'stderr') that receives a JSON summary at exit; %p: pid"},
    {"PYGRAPH_MIN_REPEATS", "2",
     "graph mode: times a sequence runs eagerly before it is graphed (1 to 1000)"},
    {"PYGRAPH_MAX_GRAPHS", "1024",
     "graph mode: instantiated graphs kept; the least recently used are destroyed (1 to 1000000)"},
    {"PYGRAPH_FIRST_CHUNK", "2",
     "graph mode: launches recorded before the first graph of an occurrence goes to the GPU; "
     "later chunks double up to 128 (1 to 128)"},
    {"PYGRAPH_STAGING_MB", "4",
     "graph mode: pinned host memory for snapshots of deferred copies from pageable memory; 0: "
     "such copies stay eager (0 to 1024)"},
    {"PYGRAPH_PATCH_GRID", "1",
     "graph mode: 1: a launch's grid and dynamic shared memory are patched like its arguments; "
     "0: they are part of its shape, so another grid makes another sequence"},
};
const int kOptionCount = sizeof(kOptions) / sizeof(kOptions[0]);

const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::kOff:
      return "off";
    case Mode::kTrace:
      return "trace";
    case Mode::kGraph:
      return "graph";
  }
  return "off";
}

std::string with_pid(const std::string& path_template) {
  std::string path = path_template;
  const std::string pid = std::to_string(::getpid());
  for (size_t at = 0; (at = path.find("%p", at)) != std::string::npos; at += pid.size()) {
    path.replace(at, 2, pid);
  }
  return path;
}

namespace {

// A whole decimal number in [lo, hi], or a warning and the default.
unsigned parse_count(const char* name, const char* value, unsigned lo, unsigned hi, unsigned def,
                     std::vector<std::string>* warnings) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(value, &end, 10);
  if (*value < '0' || *value > '9' || *end != '\0' || v < lo || v > hi) {
    warnings->push_back(std::string(name) + "='" + value + "' is not a whole number from " +
                        std::to_string(lo) + " to " + std::to_string(hi) + "; using " +
                        std::to_string(def));
    return def;
  }
  return static_cast<unsigned>(v);
}

}  // namespace

Config parse_config(const char* (*getenv_fn)(const char*), std::vector<std::string>* warnings) {
  Config c;
  if (const char* m = getenv_fn("PYGRAPH_MODE"); m && *m) {
    if (std::strcmp(m, "off") == 0) {
      c.mode = Mode::kOff;
    } else if (std::strcmp(m, "trace") == 0) {
      c.mode = Mode::kTrace;
    } else if (std::strcmp(m, "graph") == 0) {
      c.mode = Mode::kGraph;
    } else {
      // Unknown means we cannot know what the user wanted: do the least, pass through.
      c.mode = Mode::kOff;
      warnings->push_back(std::string("PYGRAPH_MODE='") + m +
                          "' is not one of: graph, trace, off; running in off mode (passthrough)");
    }
  }
  if (const char* t = getenv_fn("PYGRAPH_TRACE"); t && *t) c.trace_path = t;
  if (const char* d = getenv_fn("PYGRAPH_DEBUG"); d && *d) {
    if (std::strcmp(d, "1") == 0) {
      c.debug = true;
    } else if (std::strcmp(d, "0") != 0) {
      warnings->push_back(std::string("PYGRAPH_DEBUG='") + d + "' is not 0 or 1; using 0");
    }
  }
  if (const char* v = getenv_fn("PYGRAPH_STATS"); v && *v) c.stats_path = v;
  if (const char* v = getenv_fn("PYGRAPH_MIN_REPEATS"); v && *v) {
    c.min_repeats = parse_count("PYGRAPH_MIN_REPEATS", v, 1, 1000, c.min_repeats, warnings);
  }
  if (const char* v = getenv_fn("PYGRAPH_MAX_GRAPHS"); v && *v) {
    c.max_graphs = parse_count("PYGRAPH_MAX_GRAPHS", v, 1, 1000000, c.max_graphs, warnings);
  }
  if (const char* v = getenv_fn("PYGRAPH_FIRST_CHUNK"); v && *v) {
    c.first_chunk = parse_count("PYGRAPH_FIRST_CHUNK", v, 1, 128, c.first_chunk, warnings);
  }
  if (const char* v = getenv_fn("PYGRAPH_STAGING_MB"); v && *v) {
    c.staging_mb = parse_count("PYGRAPH_STAGING_MB", v, 0, 1024, c.staging_mb, warnings);
  }
  if (const char* v = getenv_fn("PYGRAPH_PATCH_GRID"); v && *v) {
    c.patch_grid = parse_count("PYGRAPH_PATCH_GRID", v, 0, 1, 1, warnings) == 1;
  }
  const char* m = getenv_fn("PYGRAPH_MODE");
  if (m && std::strcmp(m, "off") == 0 && !c.trace_path.empty()) {
    warnings->push_back("PYGRAPH_TRACE is set but PYGRAPH_MODE is off; no trace is written");
    c.trace_path.clear();
  }
  return c;
}

}  // namespace pygraph
