#include "options/config.h"

#include <unistd.h>

#include "options/config_env.h"
#include "options/config_file.h"
#include "options/option_table.h"
#include "options/option_value.h"

namespace pygraph {
namespace {

// Where an option's value came from, for messages about two options together.
std::string origin(const ConfigResult& r, const OptionSpec& option) {
  switch (r.sources[option_index(option)]) {
    case Source::kFile:
      return escaped(r.config.config_path);
    case Source::kEnvironment:
      return env_name(option);
    default:
      return "default";
  }
}

// Checks between options, once every source is in.
void check_together(ConfigResult* r) {
  const Config& c = r->config;
  if (c.first_chunk > c.max_chunk) {
    const OptionSpec& first = *find_option("first_chunk");
    const OptionSpec& max = *find_option("max_chunk");
    r->errors.push_back("first_chunk " + value_text(first, c) + " (" + origin(*r, first) +
                        ") is larger than max_chunk " + value_text(max, c) + " (" +
                        origin(*r, max) + ")");
  }
  if (c.mode == Mode::kOff && !c.trace_path.empty()) {
    const OptionSpec& trace = *find_option("trace");
    const OptionSpec& mode = *find_option("mode");
    auto name = [&](const OptionSpec& o) {
      return r->sources[option_index(o)] == Source::kEnvironment
                 ? env_name(o)
                 : std::string("\"") + o.key + "\" in " + escaped(c.config_path);
    };
    r->warnings.push_back(name(trace) + " is set but " + name(mode) +
                          " is off; no trace is written");
    r->config.trace_path.clear();
  }
}

}  // namespace

Config default_config() {
  Config c;
  for (const OptionSpec& option : kOptions) {
    std::string problem;
    set_from_text(option, option.default_value, &c, &problem);  // config_test checks every one
  }
  return c;
}

ConfigResult parse_config(const ConfigSources& sources) {
  ConfigResult r;
  r.config = default_config();
  r.sources.assign(kOptionCount, Source::kDefault);
  // The file first, so that the variables override it; its path is itself a variable.
  const char* path = sources.getenv("PYGRAPH_CONFIG");
  if (path && *path) apply_config_file(path, sources, &r);
  apply_environment(sources, &r);
  check_together(&r);
  if (!r.errors.empty()) {
    // A configuration we cannot read means we cannot know what the user wanted: do the least.
    if (r.config.mode != Mode::kOff) {
      r.config.mode = Mode::kOff;
      r.sources[option_index(*find_option("mode"))] = Source::kFallback;
    }
    r.config.trace_path.clear();
    r.errors.back() +=
        r.config.strict ? "; stopping the process (strict)" : "; running in off mode (passthrough)";
  }
  return r;
}

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

const char* log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
  }
  return "error";
}

std::string with_pid(const std::string& path_template) {
  std::string path = path_template;
  const std::string pid = std::to_string(::getpid());
  for (size_t at = 0; (at = path.find("%p", at)) != std::string::npos; at += pid.size()) {
    path.replace(at, 2, pid);
  }
  return path;
}

}  // namespace pygraph
