// The configuration's sources in a real process: its environment and its files.
#include <cstdlib>
#include <cstring>

#include "file_text.h"
#include "options/config.h"

extern char** environ;

namespace pygraph {
namespace {

// Larger than any configuration: a path that names something else (a log) ends in an error
// rather than in reading it whole.
constexpr size_t kMaxFileBytes = 1 << 20;

bool read_file(const std::string& path, std::string* text, std::string* error) {
  return read_file_text(path, text, error, kMaxFileBytes) == FileText::kRead;
}

std::vector<std::string> env_names() {
  std::vector<std::string> names;
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    names.emplace_back(*e, eq ? eq - *e : std::strlen(*e));
  }
  return names;
}

}  // namespace

ConfigSources process_config_sources() {
  return {[](const char* name) -> const char* { return std::getenv(name); }, &env_names,
          &read_file};
}

}  // namespace pygraph
