// The options table written out for people: config/README.md's table, a configuration file,
// and `pygraph config`'s listing. All from the table, so that none can drift from it
// (config_test compares the checked-in files with these; scripts/update-config-docs.sh
// rewrites them).
#pragma once

#include <string>

#include "options/config.h"

namespace pygraph {

// The Markdown table of every option (key, variable, default, values, meaning), ending in a
// newline.
std::string options_markdown();

// `config` as a configuration file: every option the file may hold, in table order, two-space
// indented JSON ending in a newline. Of default_config(), config/pygraph.json.
std::string config_json(const Config& config);

// The effective configuration, one option a line: key, value, and where the value came from
// ("default", "file PATH", "environment PYGRAPH_KEY").
std::string config_listing(const ConfigResult& result);

}  // namespace pygraph
