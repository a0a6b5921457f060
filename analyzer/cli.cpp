#include "cli.h"

#include <cerrno>
#include <cstdlib>
#include <iostream>

namespace pygraph::analyze {

int usage_error(const std::string& message, const char* usage) {
  std::cerr << "pygraph-analyze: " << message << "\n" << usage;
  return 1;
}

Option flag_option(const std::string& name, bool* on) {
  return {name, false, [on](const std::string&) { return *on = true; }};
}

Option file_option(const std::string& name, std::string* path) {
  return {name, true, [path](const std::string& v) { return !(*path = v).empty(); },
          name + " needs a file name"};
}

Option count_option(const std::string& name, uint64_t min, uint64_t max, uint64_t* out) {
  return {name, true, [=](const std::string& v) { return parse_count(v.c_str(), min, max, out); },
          name + " needs a number >= " + std::to_string(min)};
}

int parse_options(const std::vector<std::string>& args, const std::vector<Option>& options,
                  const char* usage, std::string* trace_path) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      std::cout << usage;
      return 0;
    }
    const Option* option = nullptr;
    for (const Option& o : options) {
      if (o.name == a) option = &o;
    }
    if (option) {
      const bool has_value = option->takes_value && i + 1 < args.size();
      if (option->takes_value && !has_value) return usage_error(option->error, usage);
      if (!option->take(has_value ? args[++i] : "")) return usage_error(option->error, usage);
    } else if (!a.empty() && a[0] == '-') {
      return usage_error("unknown option '" + a + "'", usage);
    } else if (trace_path->empty()) {
      *trace_path = a;
    } else {
      return usage_error("more than one trace given", usage);
    }
  }
  if (trace_path->empty()) return usage_error("no trace file given", usage);
  return -1;
}

bool parse_count(const char* text, uint64_t min, uint64_t max, uint64_t* out) {
  if (!text || *text < '0' || *text > '9') return false;  // strtoull would take "-1" and " 1"
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(text, &end, 10);
  if (errno || !end || *end || n < min || n > max) return false;
  *out = n;
  return true;
}

int load_trace(const std::string& path, Trace* trace, ReadResult* result) {
  *result = read_trace(path, trace);
  if (result->status != ReadStatus::kError) return 0;
  std::cerr << "pygraph-analyze: " << path << ": " << result->message << "\n";
  return 2;
}

int finish(const std::string& path, const ReadResult& result) {
  if (result.status != ReadStatus::kIncomplete) return 0;
  std::cerr << "pygraph-analyze: " << path << ": " << result.message << "\n";
  return 3;
}

}  // namespace pygraph::analyze
