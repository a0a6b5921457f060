// What every subcommand of pygraph-analyze does the same way: option values, reading the trace,
// and the exit status (0 done; 1 usage error; 2 the trace could not be read or the output not
// written; 3 the trace was read only in part, the output covers what was read).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "trace/trace_reader.h"

namespace pygraph::analyze {

// Prints "pygraph-analyze: MESSAGE" and the usage text to stderr; returns 1.
int usage_error(const std::string& message, const char* usage);

// An option of a command: a flag, or one that takes the argument after it.
struct Option {
  std::string name;  // "--limit"
  bool takes_value = false;
  std::function<bool(const std::string&)> take;  // false: a bad value (flags get "")
  std::string error = "";                        // said when the value is missing or bad
};

// The usual kinds: a flag; a file name; a whole number in [min, max].
Option flag_option(const std::string& name, bool* on);
Option file_option(const std::string& name, std::string* path);
Option count_option(const std::string& name, uint64_t min, uint64_t max, uint64_t* out);

// Reads a command's arguments: its options and one trace path. Returns -1 to go on, else the
// exit status: 0 after printing `usage` for -h/--help, 1 after a usage error.
int parse_options(const std::vector<std::string>& args, const std::vector<Option>& options,
                  const char* usage, std::string* trace_path);

// A whole number in [min, max]; false for anything else.
bool parse_count(const char* text, uint64_t min, uint64_t max, uint64_t* out);

// Reads the trace at `path`. Returns 0 when something usable was read, else prints the
// reader's message and returns 2.
int load_trace(const std::string& path, Trace* trace, ReadResult* result);

// The exit status once the output is written: 3, with the reader's message on stderr, when
// the trace was read only in part, else 0.
int finish(const std::string& path, const ReadResult& result);

}  // namespace pygraph::analyze
