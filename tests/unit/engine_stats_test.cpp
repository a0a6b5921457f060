// The stats document (engine_stats.h): it is written by an exit handler inside the user's
// process, so whatever names it holds, writing it never throws, and it reads back as JSON.
#include "graph/engine_stats.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace pygraph {
namespace {

TEST(EngineStats, NamesThatAreNoUtf8AreWrittenNotThrown) {
  EngineStats s;
  s.launches = 3;
  SequenceStat q;
  q.signature = "s-3-0123456789abcdef";
  q.first_kernel = "kernel_\xff\xfe_latin1_\xe9";  // bytes that are no UTF-8
  q.why = "eager (denied by pattern '\xc3')";      // a cut UTF-8 sequence
  q.verdict = "eager";
  std::string text;
  ASSERT_NO_THROW(text = stats_json(s, DoorCounts{}, "graph", {q}));
  const nlohmann::json doc = nlohmann::json::parse(text);
  const auto& seq = doc["decisions"]["sequences"][0];
  EXPECT_EQ(seq["signature"], "s-3-0123456789abcdef");
  // Each bad byte became U+FFFD; the rest of the name is kept.
  const std::string name = seq["first_kernel"];
  EXPECT_EQ(name.rfind("kernel_", 0), 0u);
  EXPECT_NE(name.find("\xef\xbf\xbd"), std::string::npos);
  EXPECT_NE(name.find("_latin1_"), std::string::npos);
  EXPECT_EQ(doc["launches"]["seen_by_engine"], 3);
}

}  // namespace
}  // namespace pygraph
