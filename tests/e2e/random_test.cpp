// Randomized differential test: thousands of generated programs (random_program.cpp) give the
// same digest of host-observed values with and without the shim.
#include <gtest/gtest.h>
#include <unistd.h>

#include <set>
#include <sstream>

#include "run_program.h"

namespace pygraph::test {
namespace {

constexpr const char* kSeeds = "3000";

void expect_same_digests(const char* mode) {
  RunResult plain = run_program({RANDOM_PROGRAM, "0", kSeeds}, {{"LD_LIBRARY_PATH", STANDIN_DIR}});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const std::string trace = temp_path("random.trace");
  RunResult shim = run_program({RANDOM_PROGRAM, "0", kSeeds}, {{"LD_PRELOAD", PYGRAPH_SHIM},
                                                               {"LD_LIBRARY_PATH", STANDIN_DIR},
                                                               {"PYGRAPH_MODE", mode},
                                                               {"PYGRAPH_TRACE", trace}});
  unlink(trace.c_str());
  ASSERT_EQ(shim.exit_code, 0) << shim.err;
  std::istringstream a(plain.out), b(shim.out);
  std::string la, lb;
  int lines = 0;
  while (std::getline(a, la)) {
    ASSERT_TRUE(std::getline(b, lb));
    ASSERT_EQ(la, lb) << "first differing seed (seed digest): " << la;
    ++lines;
  }
  EXPECT_EQ(lines, std::stoi(kSeeds));
}

TEST(Random, TraceModeChangesNoResult) {
  expect_same_digests("trace");
}
TEST(Random, GraphModeChangesNoResult) {
  expect_same_digests("graph");
}
TEST(Random, OffModeChangesNoResult) {
  expect_same_digests("off");
}

TEST(Random, DigestsDependOnTheProgram) {
  // Guards the harness itself: different seeds give different digests, the same seed the same.
  RunResult r = run_program({RANDOM_PROGRAM, "0", "50"}, {{"LD_LIBRARY_PATH", STANDIN_DIR}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  RunResult again = run_program({RANDOM_PROGRAM, "0", "50"}, {{"LD_LIBRARY_PATH", STANDIN_DIR}});
  EXPECT_EQ(r.out, again.out);
  std::istringstream in(r.out);
  std::set<std::string> digests;
  std::string seed, digest;
  while (in >> seed >> digest) digests.insert(digest);
  EXPECT_EQ(digests.size(), 50u);
}

}  // namespace
}  // namespace pygraph::test
