// Messages from the shim to the program's stderr: one line each, prefixed "pygraph: ".
// Written with write(2) so they interleave sanely with the program's own output.
#pragma once

namespace pygraph {

// How much the shim says (the `log_level` option): problems only; also a line at start (the
// mode, where the configuration came from) and a summary at exit; also diagnostics.
enum class LogLevel { kError, kInfo, kDebug };

void set_log_level(LogLevel level);
// Always: a problem (a bad configuration, a file that cannot be written, no driver).
void log_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// At `info` and `debug` (a graph the driver refused: its sequence runs eagerly, results stay).
void log_info(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// At `debug` only.
void log_debug(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace pygraph
