// The JSON configuration file: one object whose keys are the options' keys (option_table.h).
#pragma once

#include <string>

#include "options/config.h"

namespace pygraph {

// Applies the file at `path` (read through `sources`) over `result`'s values. A key with a bad
// value is one error and keeps the value before it; an unknown key is one warning naming the
// closest option; an unreadable or malformed file is one error (with the parser's line and
// column) and none of its values count.
void apply_config_file(const std::string& path, const ConfigSources& sources, ConfigResult* result);

}  // namespace pygraph
