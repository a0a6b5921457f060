#include "config.h"

#include <cstring>

namespace pygraph {

const OptionSpec kOptions[] = {
    {"PYGRAPH_MODE", "trace",
     "off: pure passthrough; trace: passthrough and recording (graph mode is not built yet)"},
    {"PYGRAPH_TRACE", "",
     "file to write the binary trace to; %p becomes the process id; empty: no trace"},
    {"PYGRAPH_DEBUG", "0", "1: log diagnostic lines (entry points wrapped or not) to stderr"},
};
const int kOptionCount = sizeof(kOptions) / sizeof(kOptions[0]);

const char* mode_name(Mode mode) {
  return mode == Mode::kOff ? "off" : "trace";
}

Config parse_config(const char* (*getenv_fn)(const char*), std::vector<std::string>* warnings) {
  Config c;
  if (const char* m = getenv_fn("PYGRAPH_MODE"); m && *m) {
    if (std::strcmp(m, "off") == 0) {
      c.mode = Mode::kOff;
    } else if (std::strcmp(m, "trace") == 0) {
      c.mode = Mode::kTrace;
    } else {
      // Unknown means we cannot know what the user wanted: do the least, pass through.
      c.mode = Mode::kOff;
      warnings->push_back(std::string("PYGRAPH_MODE='") + m +
                          "' is not one of: off, trace; running in off mode (passthrough)");
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
  const char* m = getenv_fn("PYGRAPH_MODE");
  if (m && std::strcmp(m, "off") == 0 && !c.trace_path.empty()) {
    warnings->push_back("PYGRAPH_TRACE is set but PYGRAPH_MODE is off; no trace is written");
    c.trace_path.clear();
  }
  return c;
}

}  // namespace pygraph
