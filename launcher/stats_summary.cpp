#include "stats_summary.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>

namespace pygraph::launcher {
namespace {

// `name` matches `pattern`, in which one %p stands for a process id (digits): the id, or -1.
pid_t matching_pid(const std::string& name, const std::string& pattern) {
  const size_t p = pattern.find("%p");
  if (name.compare(0, p, pattern, 0, p) != 0) return -1;
  size_t end = p;
  while (end < name.size() && end - p < 9 && name[end] >= '0' && name[end] <= '9') ++end;
  if (end == p || name.substr(end) != pattern.substr(p + 2)) return -1;
  return static_cast<pid_t>(std::stol(name.substr(p, end - p)));
}

bool written_since(const std::string& path, time_t since) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_mtime >= since;
}

}  // namespace

std::vector<StatsFile> stats_files(const std::string& destination, pid_t pid, time_t since) {
  std::vector<StatsFile> files;
  const size_t slash = destination.rfind('/');
  const std::string dir = slash == std::string::npos ? "./" : destination.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? destination : destination.substr(slash + 1);
  const size_t p = base.find("%p");
  if (p == std::string::npos || base.find("%p", p + 2) != std::string::npos ||
      dir.find("%p") != std::string::npos) {
    // One file, or a template that only the program's own id is looked up in.
    std::string path = destination;
    const std::string id = std::to_string(pid);
    for (size_t at = 0; (at = path.find("%p", at)) != std::string::npos; at += id.size()) {
      path.replace(at, 2, id);
    }
    if (written_since(path, since)) files.push_back({path, path == destination ? 0 : pid});
    return files;
  }
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d)) {
      const pid_t writer = matching_pid(e->d_name, base);
      if (writer >= 0 && written_since(dir + e->d_name, since)) {
        files.push_back({dir + e->d_name, writer});
      }
    }
    closedir(d);
  }
  std::sort(files.begin(), files.end(), [pid](const StatsFile& a, const StatsFile& b) {
    return (a.pid == pid) != (b.pid == pid) ? a.pid == pid : a.path < b.path;
  });
  return files;
}

}  // namespace pygraph::launcher
