// The PYGRAPH_<KEY> environment variables, which override the file.
#pragma once

#include "options/config.h"

namespace pygraph {

// Applies every set, non-empty PYGRAPH_<KEY> over `result`'s values (an empty variable counts as
// unset). A bad value is one error and keeps the value before it; a PYGRAPH_* name that is no
// option is one warning naming the closest option.
void apply_environment(const ConfigSources& sources, ConfigResult* result);

}  // namespace pygraph
