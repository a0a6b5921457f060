#include "options/closest_option.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace pygraph {
namespace {

std::string normalized(const std::string& key) {
  std::string k;
  for (char c : key)
    k += c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (k.rfind("pygraph_", 0) == 0) k.erase(0, 8);
  // Keys are short: past 64 characters nothing is closer, and the distance stays cheap.
  if (k.size() > 64) k.resize(64);
  return k;
}

struct Retired {
  const char* key;
  const char* why;
};

constexpr Retired kRetired[] = {
    {"programmatic_edges",
     "was removed: programmatic edges in graph mode's graphs gained nothing measured on the GPU "
     "(session 41, docs/design-graph-mode.md); kernel nodes keep full stream order"},
};

}  // namespace

const char* retired_option(const std::string& key) {
  const std::string k = normalized(key);
  for (const Retired& r : kRetired) {
    if (k == r.key) return r.why;
  }
  return nullptr;
}

std::string unknown_option_text(const std::string& key, bool env) {
  if (const char* why = retired_option(key)) return std::string(" ") + why;
  const OptionSpec& meant = closest_option(key, env);
  return " is not a pygraph option (did you mean " +
         (env ? env_name(meant) : "\"" + std::string(meant.key) + "\"") + "?)";
}

size_t edit_distance(const std::string& a, const std::string& b) {
  // Optimal string alignment over three rows: a transposition looks back two rows.
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        row[j] = std::min(row[j], before[j - 2] + 1);
      }
    }
    std::swap(before, prev);
    std::swap(prev, row);
  }
  return prev[b.size()];
}

const OptionSpec& closest_option(const std::string& key, bool env) {
  const std::string k = normalized(key);
  const OptionSpec* best = &kOptions[0];
  size_t best_distance = ~size_t(0);
  for (const OptionSpec& o : kOptions) {
    if (o.env_only && !env) continue;
    const size_t d = edit_distance(k, o.key);
    if (d < best_distance) {
      best = &o;
      best_distance = d;
    }
  }
  return *best;
}

}  // namespace pygraph
