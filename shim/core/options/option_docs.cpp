#include "options/option_docs.h"

#include <algorithm>

#include "json_text.h"
#include "options/option_table.h"
#include "options/option_value.h"

namespace pygraph {
namespace {

std::string cell(std::string text) {
  for (size_t at = 0; (at = text.find('|', at)) != std::string::npos; at += 2) {
    text.replace(at, 1, "\\|");
  }
  return text;
}

std::string source_text(const ConfigResult& r, int i) {
  switch (r.sources[i]) {
    case Source::kDefault:
      return "default";
    case Source::kFile:
      return "file " + escaped(r.config.config_path);
    case Source::kEnvironment:
      return "environment " + env_name(kOptions[i]);
    case Source::kFallback:
      return "off because of the configuration errors";
  }
  return "";
}

}  // namespace

std::string options_markdown() {
  const Config defaults = default_config();
  std::string md =
      "| key | variable | default | values | meaning |\n"
      "| --- | --- | --- | --- | --- |\n";
  for (const OptionSpec& o : kOptions) {
    const std::string def = value_text(o, defaults);
    md += "| `" + std::string(o.key) + "` | `" + env_name(o) + "` | " +
          (def.empty() ? "(none)" : "`" + def + "`") + " | " + cell(accepted_values(o)) + " | " +
          cell(o.doc) + " |\n";
  }
  return md;
}

std::string config_json(const Config& config) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  for (const OptionSpec& o : kOptions) {
    if (!o.env_only) doc[o.key] = value_json(o, config);
  }
  return json_text(doc, 2) + "\n";
}

std::string config_listing(const ConfigResult& r) {
  size_t key_width = 0, value_width = 0;
  std::vector<std::string> values;
  for (const OptionSpec& o : kOptions) {
    const std::string v = value_text(o, r.config);
    values.push_back(v.empty() ? "(none)" : escaped(v));
    key_width = std::max(key_width, std::string(o.key).size());
    value_width = std::max(value_width, values.back().size());
  }
  std::string out;
  for (int i = 0; i < kOptionCount; ++i) {
    std::string line = kOptions[i].key;
    line.resize(key_width + 2, ' ');
    line += values[i];
    line.resize(key_width + 2 + value_width + 2, ' ');
    out += line + source_text(r, i) + "\n";
  }
  return out;
}

}  // namespace pygraph
