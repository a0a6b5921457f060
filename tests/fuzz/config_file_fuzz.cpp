// Fuzz target: the JSON configuration file. The input is the file's text; the environment
// names only the file. Beyond not crashing: the invariants of config_invariants.h, and a clean
// configuration written out as a file reads back the same.
#include <cstddef>
#include <cstdint>

#include "config_invariants.h"

namespace {

pygraph::ConfigSources sources(const std::string& text) {
  return {[](const char* name) -> const char* {
            return std::string(name) == "PYGRAPH_CONFIG" ? "fuzz.json" : nullptr;
          },
          [] { return std::vector<std::string>{"PYGRAPH_CONFIG"}; },
          [text](const std::string&, std::string* out, std::string*) {
            *out = text;
            return true;
          }};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pygraph;
  const ConfigResult r =
      parse_config(sources(std::string(reinterpret_cast<const char*>(data), size)));
  fuzz::check_config(r);
  if (r.errors.empty()) {
    const ConfigResult again = parse_config(sources(config_json(r.config)));
    fuzz::require(again.errors.empty() && again.warnings.empty(), "its own file reads back");
    for (const OptionSpec& o : kOptions) {
      fuzz::require(value_text(o, again.config) == value_text(o, r.config), "the same values",
                    o.key);
    }
  }
  return 0;
}
