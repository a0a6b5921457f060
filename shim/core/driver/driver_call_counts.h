// Debug (`PYGRAPH_LOG_LEVEL=debug`): how often, and for how long, pygraph itself calls each driver
// function (graph builds, patches, replays, memory-type queries, context and event calls).
// Next to a program's own graphs graph mode costs time on launches it does not even defer
// (design notes, session 10); these counts, per stats snapshot, say which of its own driver
// calls that time goes to. The entries of a DriverApi are wrapped in place; off, nothing is.
#pragma once

#include <cstdint>
#include <vector>

#include "driver/driver_api.h"

namespace pygraph {

struct DriverCallCount {
  const char* name;  // the DriverApi entry
  uint64_t calls;
  uint64_t ns;  // wall time inside the driver, summed
};

// Wraps every non-null entry of `api` with a counter (once per process; a second call, or a
// second table, is refused: the counters are per entry, not per table). Before any call.
bool count_driver_calls(DriverApi* api);
// Entries called at least once, in DriverApi order; empty when counting is off.
std::vector<DriverCallCount> driver_call_counts();

}  // namespace pygraph
