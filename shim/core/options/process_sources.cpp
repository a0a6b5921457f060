// The configuration's sources in a real process: its environment and its files.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "options/config.h"

extern char** environ;

namespace pygraph {
namespace {

// Larger than any configuration: a path that names something else (a device, a log) ends in
// an error rather than in reading it whole.
constexpr size_t kMaxFileBytes = 1 << 20;

bool read_file(const std::string& path, std::string* text, std::string* error) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    *error = std::strerror(errno);
    return false;
  }
  char buf[4096];
  size_t n = 0;
  text->clear();
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0 && text->size() <= kMaxFileBytes) {
    text->append(buf, n);
  }
  const bool failed = std::ferror(f);
  const int err = errno;
  std::fclose(f);
  if (failed) {
    *error = std::strerror(err);
    return false;
  }
  if (text->size() > kMaxFileBytes) {
    *error = "larger than 1 MiB";
    return false;
  }
  return true;
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
