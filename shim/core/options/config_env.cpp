#include "options/config_env.h"

#include "options/closest_option.h"
#include "options/option_value.h"

namespace pygraph {

void apply_environment(const ConfigSources& sources, ConfigResult* result) {
  for (const OptionSpec& option : kOptions) {
    const std::string name = env_name(option);
    const char* value = sources.getenv(name.c_str());
    if (!value || !*value) continue;
    std::string problem;
    if (!set_from_text(option, value, &result->config, &problem)) {
      result->errors.push_back(name + "=" + in_quotes(value) + " " + problem);
      continue;
    }
    result->sources[option_index(option)] = Source::kEnvironment;
  }
  for (const std::string& name : sources.env_names()) {
    if (name.rfind("PYGRAPH_", 0) != 0) continue;
    bool known = false;
    for (const OptionSpec& option : kOptions) known = known || name == env_name(option);
    if (known) continue;
    result->warnings.push_back(escaped(name) + unknown_option_text(name, true) + "; ignored");
  }
}

}  // namespace pygraph
