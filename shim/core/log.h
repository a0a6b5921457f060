// Messages from the shim to the program's stderr: one line each, prefixed "pygraph: ".
// Written with write(2) so they interleave sanely with the program's own output.
#pragma once

namespace pygraph {

void log_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// Only when PYGRAPH_DEBUG is set.
void log_debug(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void set_debug_logging(bool on);

}  // namespace pygraph
