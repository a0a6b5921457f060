#include "stats_summary.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace pygraph::launcher {
namespace {

// A count from the document; anything but a whole number that fits is 0 (the file is read
// back from disk: it may be anything).
int64_t as_count(const nlohmann::json& v) {
  if (v.is_number_unsigned()) {
    return static_cast<int64_t>(std::min<uint64_t>(v.get<uint64_t>(), INT64_MAX));
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  return 0;
}

int64_t count(const nlohmann::json& doc, const char* a, const char* b) {
  return doc.contains(a) && doc[a].is_object() && doc[a].contains(b) ? as_count(doc[a][b]) : 0;
}

// "not_repeating 156, mismatch 4": the three largest.
std::string top_reasons(const nlohmann::json& reasons) {
  std::vector<std::pair<int64_t, std::string>> all;
  if (reasons.is_object()) {
    for (const auto& [reason, n] : reasons.items()) {
      if (as_count(n) > 0) all.push_back({-as_count(n), reason});
    }
  }
  std::sort(all.begin(), all.end());
  std::string out;
  for (size_t i = 0; i < all.size() && i < 3; ++i) {
    out += (i ? ", " : "") + all[i].second + " " + std::to_string(-all[i].first);
  }
  return out;
}

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

std::string summary_line(const std::string& json) {
  const nlohmann::json doc = nlohmann::json::parse(json, nullptr, false);
  if (!doc.is_object() || !doc.contains("mode") || !doc["mode"].is_string()) return "";
  const std::string mode = doc["mode"].get<std::string>();
  if (mode == "off") return "off mode: everything passed through";
  if (mode != "graph") {
    return mode + " mode: " + std::to_string(count(doc, "launches", "intercepted")) +
           " launches, passed through";
  }
  const int64_t seen = count(doc, "launches", "seen_by_engine");
  const int64_t replayed = count(doc, "launches", "replayed_in_graphs");
  char coverage[32];
  std::snprintf(coverage, sizeof coverage, "%.1f %%",
                seen ? 100.0 * static_cast<double>(replayed) / static_cast<double>(seen) : 0.0);
  std::string line = "graph mode: " + std::string(coverage) + " of " + std::to_string(seen) +
                     " launches replayed in graphs (" +
                     std::to_string(count(doc, "graphs", "instantiated")) + " graphs, " +
                     std::to_string(count(doc, "graphs", "replays")) + " replays)";
  const std::string reasons =
      top_reasons(doc.contains("eager_launches_by_reason") ? doc["eager_launches_by_reason"]
                                                           : nlohmann::json());
  return line + (reasons.empty() ? "; no eager launches" : "; eager: " + reasons);
}

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
