// Fuzz target: the decision cache file (decisions/decision_cache.h). The input is the file's
// text. Beyond not crashing (no exception escapes: the shim reads this file inside the user's
// process): text that reads as a cache has only entries save() could have written, and written
// back it reads back the same.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "decisions/decision_cache.h"

namespace {

void require(bool ok, const char* what, const std::string& detail = "") {
  if (ok) return;
  std::fprintf(stderr, "invariant broken: %s %s\n", what, detail.c_str());
  std::abort();
}

bool same(const pygraph::Decision& a, const pygraph::Decision& b) {
  return a.verdict == b.verdict && a.why == b.why && a.eager_us == b.eager_us &&
         a.graph_us == b.graph_us && a.windows == b.windows && a.launches == b.launches &&
         a.env == b.env && a.updated == b.updated;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pygraph;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::map<std::string, Decision> read;
  std::string why;
  if (!parse_decisions(text, &read, &why)) {
    require(!why.empty(), "a bad file says why");
    require(read.empty(), "a bad file yields no entry");
    return 0;
  }
  for (const auto& [signature, d] : read) {
    require(d.verdict == "graph" || d.verdict == "eager", "a verdict save() writes", signature);
    require(std::isfinite(d.eager_us) && std::isfinite(d.graph_us), "finite figures", signature);
  }
  std::map<std::string, Decision> again;
  require(parse_decisions(decisions_text(read), &again, &why), "its own text reads back", why);
  require(again.size() == read.size(), "every entry reads back");
  for (const auto& [signature, d] : read) {
    const auto it = again.find(signature);
    require(it != again.end() && same(it->second, d), "the same entry", signature);
  }
  return 0;
}
