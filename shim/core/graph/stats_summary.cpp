#include "graph/stats_summary.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

namespace pygraph {
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

}  // namespace

std::string stats_summary_line(const std::string& json) {
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

}  // namespace pygraph
