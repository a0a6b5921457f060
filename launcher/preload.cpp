#include "preload.h"

#include <unistd.h>

#include <climits>

namespace pygraph::launcher {

std::string shim_library() {
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return "";
  std::string path(exe, n);
  path = path.substr(0, path.rfind('/') + 1) + "libpygraph.so";
  return access(path.c_str(), R_OK) == 0 ? path : "";
}

std::string with_preload(const char* existing, const std::string& library) {
  const std::string list = existing ? existing : "";
  // The loader separates entries with colons or spaces.
  for (size_t at = 0; at <= list.size();) {
    const size_t end = std::min(list.find_first_of(": ", at), list.size());
    if (list.compare(at, end - at, library) == 0 && end - at == library.size()) return list;
    at = end + 1;
  }
  return list.empty() ? library : library + ":" + list;
}

}  // namespace pygraph::launcher
