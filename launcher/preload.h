// Where libpygraph.so is, and LD_PRELOAD with it.
#pragma once

#include <string>

namespace pygraph::launcher {

// libpygraph.so beside this executable (both land in build/), as an absolute path; empty if it
// is not there.
std::string shim_library();

// LD_PRELOAD with `library` first: `existing` (null or empty: none) keeps its entries after
// it; a list that already holds `library` is left as it is.
std::string with_preload(const char* existing, const std::string& library);

}  // namespace pygraph::launcher
