#include "recording/callsite.h"

#include <gtest/gtest.h>

namespace pygraph {
namespace {

__attribute__((noinline)) uint32_t site_a(CallSiteTable& t, bool* created,
                                          std::vector<std::string>* frames) {
  uint32_t id = t.capture(created, frames);
  asm volatile("");  // keep the call from becoming a tail call
  return id;
}
__attribute__((noinline)) uint32_t site_b(CallSiteTable& t, bool* created,
                                          std::vector<std::string>* frames) {
  uint32_t id = t.capture(created, frames);
  asm volatile("");
  return id;
}

TEST(CallSites, SameSiteSameIdOtherSiteNewId) {
  CallSiteTable table(/*skip_own_module=*/false);
  table.clear();
  bool created;
  std::vector<std::string> frames;
  uint32_t a1 = site_a(table, &created, &frames);
  EXPECT_TRUE(created);
  EXPECT_FALSE(frames.empty());
  uint32_t a2 = 0;
  for (int i = 0; i < 2; ++i) a2 = site_a(table, &created, &frames);
  // The loop's call is another return address than the first call: a different site.
  EXPECT_NE(a1, a2);
  uint32_t a3 = 0;
  bool created3 = true;
  for (int i = 0; i < 3; ++i) a3 = site_a(table, &created3, &frames);
  EXPECT_FALSE(created3);  // repeated from one place: found again, not created
  uint32_t b = site_b(table, &created, &frames);
  EXPECT_TRUE(created);
  EXPECT_NE(b, a3);
  bool named = false;
  for (const auto& f : frames) named |= f.find("callsite_test") == 0;
  EXPECT_TRUE(named) << frames.front();
}

TEST(CallSites, NativeFramesAreModuleSymbolOffset) {
  std::string s = symbolize_native(reinterpret_cast<uintptr_t>(&symbolize_native) + 4);
  EXPECT_EQ(s.rfind("callsite_test", 0), 0u) << s;
  EXPECT_NE(s.find("+0x"), std::string::npos) << s;
}

}  // namespace
}  // namespace pygraph
