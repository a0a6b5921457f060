// pygraph_write_stats: the stats document on demand (shim/include/pygraph.h), so that a
// benchmark can take the counters after warm-up and at the end and difference them.
#include <string>

#include "../core/log.h"
#include "../include/pygraph.h"
#include "shim_state.h"

using namespace pygraph;
using namespace pygraph::hooks;

extern "C" __attribute__((visibility("default"))) int pygraph_write_stats(const char* path) {
  if (path && *path) return write_stats_now(path, "the stats to ") ? 0 : -1;
  const std::string destination = stats_destination();
  if (destination.empty()) {
    log_error("pygraph_write_stats: no path given and PYGRAPH_STATS is not set");
    return -1;
  }
  return write_stats_now(destination, "PYGRAPH_STATS=") ? 0 : -1;
}
