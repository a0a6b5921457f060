// "Did you mean": edit distance and the closest option to an unknown key.
#include "options/closest_option.h"

#include <gtest/gtest.h>

namespace pygraph {
namespace {

TEST(EditDistance, CountsTyposOneEach) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("frist", "first"), 1u);  // neighbours swapped
  EXPECT_EQ(edit_distance("stat", "stats"), 1u);
  EXPECT_EQ(edit_distance("mode", "mdoe"), 1u);
}

TEST(ClosestOption, FindsWhatWasMeant) {
  EXPECT_STREQ(closest_option("frist_chunk", false).key, "first_chunk");
  EXPECT_STREQ(closest_option("PYGRAPH_MAX_GRAPH", true).key, "max_graphs");
  EXPECT_STREQ(closest_option("min-repeats", false).key, "min_repeats");
  EXPECT_STREQ(closest_option("Staging_MB", false).key, "staging_mb");
  EXPECT_STREQ(closest_option("allow_kernel", false).key, "allow_kernels");
  // The environment-only option is a candidate only for variables.
  EXPECT_STREQ(closest_option("PYGRAPH_CONFG", true).key, "config");
  EXPECT_STRNE(closest_option("confg", false).key, "config");
  // Anything at all gets some option, long keys included.
  EXPECT_NE(closest_option(std::string(100000, 'x'), true).key, nullptr);
  EXPECT_NE(closest_option("", false).key, nullptr);
}

TEST(RetiredOption, NamesOnlyOptionsThatWereRemoved) {
  EXPECT_NE(retired_option("programmatic_edges"), nullptr);
  EXPECT_NE(retired_option("PYGRAPH_PROGRAMMATIC_EDGES"), nullptr);
  EXPECT_NE(retired_option("programmatic-edges"), nullptr);
  EXPECT_EQ(retired_option("programmatic_edge"), nullptr);  // a typo of nothing that is gone
  EXPECT_EQ(retired_option("first_chunk"), nullptr);
  EXPECT_EQ(retired_option(""), nullptr);
}

}  // namespace
}  // namespace pygraph
