// The JSON decision cache: decisions survive the process, a cache from another GPU, driver or
// shim version is not trusted, bad files are set aside with one warning, and many processes
// saving into one file at once lose nothing and never leave it corrupt.
#include "decisions/decision_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace pygraph {
namespace {

namespace fs = std::filesystem;

const DecisionEnvironment kH100{"NVIDIA H100 80GB HBM3", "13000", "0.1.0"};

Decision graph_decision(double gain_us, int64_t updated = 0) {
  Decision d;
  d.verdict = "graph";
  d.why = "graph windows faster";
  d.eager_us = 100 + gain_us;
  d.graph_us = 100;
  d.windows = 6;
  d.launches = 55;
  d.env = kH100;
  d.updated = updated;
  return d;
}

class DecisionCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("pygraph-cache-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    path_ = (dir_ / "sub" / "decisions.json").string();  // the folder does not exist yet
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& text) {
    fs::create_directories(fs::path(path_).parent_path());
    std::ofstream(path_) << text;
  }
  int files_named(const std::string& part) {
    int n = 0;
    for (const auto& e : fs::directory_iterator(fs::path(path_).parent_path()))
      n += e.path().filename().string().find(part) != std::string::npos;
    return n;
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(DecisionCacheTest, ADecisionSurvivesTheProcess) {
  DecisionCache a(path_);
  std::vector<std::string> warnings;
  EXPECT_EQ(a.load(&warnings), 0u);  // no file yet: an empty cache, no warning
  EXPECT_TRUE(warnings.empty());
  a.put("p1-0123456789abcdef-55", graph_decision(20));
  std::string error;
  ASSERT_TRUE(a.save(&error)) << error;

  DecisionCache b(path_);
  EXPECT_EQ(b.load(&warnings), 1u);
  const Decision* d = nullptr;
  ASSERT_EQ(b.find("p1-0123456789abcdef-55", kH100, &d), DecisionCache::Lookup::kFound);
  EXPECT_EQ(d->verdict, "graph");
  EXPECT_DOUBLE_EQ(d->eager_us, 120);
  EXPECT_EQ(d->launches, 55u);
  EXPECT_GT(d->updated, 0);
  EXPECT_EQ(b.find("p1-other", kH100, &d), DecisionCache::Lookup::kMissing);
  EXPECT_EQ(files_named(".tmp-"), 0);
}

TEST_F(DecisionCacheTest, ADecisionFromAnotherGpuDriverOrShimIsStaleUntilMeasuredAgain) {
  DecisionCache a(path_);
  std::vector<std::string> warnings;
  a.load(&warnings);
  a.put("sig", graph_decision(20));
  std::string error;
  ASSERT_TRUE(a.save(&error));
  DecisionEnvironment gpu = kH100, driver = kH100, shim = kH100;
  gpu.gpu = "NVIDIA H200";
  driver.driver = "13010";
  shim.shim = "0.2.0";
  for (const DecisionEnvironment& other : {gpu, driver, shim}) {
    DecisionCache b(path_);
    b.load(&warnings);
    const Decision* d = nullptr;
    EXPECT_EQ(b.find("sig", other, &d), DecisionCache::Lookup::kStale);
    Decision fresh = graph_decision(-10);  // measured again here: now eager wins
    fresh.verdict = "eager";
    fresh.env = other;
    b.put("sig", fresh);
    ASSERT_TRUE(b.save(&error));
    DecisionCache c(path_);
    c.load(&warnings);
    ASSERT_EQ(c.find("sig", other, &d), DecisionCache::Lookup::kFound);
    EXPECT_EQ(d->verdict, "eager");
  }
  EXPECT_TRUE(warnings.empty());
}

TEST_F(DecisionCacheTest, BadFilesAreSetAsideWithOneWarningAndRewritten) {
  const std::string good =
      R"({"schema": "pygraph-decisions/1", "entries": {"sig": {"verdict": "graph"}}})";
  const std::map<std::string, std::string> bad = {
      {"garbage", "\x01\x02not json at all"},
      {"truncated", R"({"schema": "pygraph-decisions/1", "entries": {"sig": {"verdi)"},
      {"newer version", R"({"schema": "pygraph-decisions/99", "entries": {}})"},
      {"not an object", "[1, 2, 3]"},
      {"empty", ""},
      {"schema not a string", R"({"schema": 1, "entries": {}})"},  // found by the fuzzer
      {"entries not an object", R"({"schema": "pygraph-decisions/1", "entries": [1]})"},
  };
  for (const auto& [what, text] : bad) {
    fs::remove_all(dir_);
    write(text);
    DecisionCache a(path_);
    std::vector<std::string> warnings;
    EXPECT_EQ(a.load(&warnings), 0u) << what;
    ASSERT_EQ(warnings.size(), 1u) << what;
    EXPECT_NE(warnings[0].find(path_), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("set aside"), std::string::npos) << warnings[0];
    EXPECT_EQ(files_named(".bad-"), 1) << what;
    a.put("sig", graph_decision(5));
    std::string error;
    ASSERT_TRUE(a.save(&error)) << what << ": " << error;
    DecisionCache b(path_);
    warnings.clear();
    EXPECT_EQ(b.load(&warnings), 1u) << what;
    EXPECT_TRUE(warnings.empty()) << what;
  }
  // An entry that is not one of ours is dropped, the rest of the file kept.
  fs::remove_all(dir_);
  write(good);
  DecisionCache c(path_);
  std::vector<std::string> warnings;
  EXPECT_EQ(c.load(&warnings), 0u);
  EXPECT_TRUE(warnings.empty());
}

TEST_F(DecisionCacheTest, AnEntryWhoseCountsAreNoFittingIntegerIsDropped) {
  // nlohmann casts a float or a negative number to the integer asked for: a wrap, or undefined
  // behaviour where it does not fit (3e99 in a uint32_t). Such an entry is not ours.
  const auto entry = [](const std::string& name, const std::string& counts) {
    return "\"" + name + R"(": {"verdict": "graph", "eager_us": 2, "graph_us": 1, "gpu": "g", )" +
           R"("driver": "d", "shim": "s", )" + counts + "}";
  };
  write(R"({"schema": "pygraph-decisions/1", "entries": {)" +
        entry("good", R"("windows": 6, "launches": 55, "updated": 7)") + "," +
        entry("huge", R"("windows": 3e99, "launches": 55, "updated": 7)") + "," +
        entry("negative", R"("windows": 6, "launches": -1, "updated": 7)") + "," +
        entry("too big", R"("windows": 4294967296, "launches": 55, "updated": 7)") + "," +
        entry("fraction", R"("windows": 6, "launches": 55, "updated": 1.5)") + "," +
        entry("past int64", R"("windows": 6, "launches": 55, "updated": 18446744073709551615)") +
        "}}");
  DecisionCache a(path_);
  std::vector<std::string> warnings;
  EXPECT_EQ(a.load(&warnings), 1u);
  EXPECT_TRUE(warnings.empty());
  const Decision* d = nullptr;
  ASSERT_EQ(a.find("good", DecisionEnvironment{"g", "d", "s"}, &d), DecisionCache::Lookup::kFound);
  EXPECT_EQ(d->windows, 6u);
  EXPECT_EQ(d->updated, 7);
}

TEST_F(DecisionCacheTest, APathThatIsAFolderOrAPipeIsLeftAsItIs) {
  fs::create_directories(path_);
  std::ofstream(fs::path(path_) / "someones-file") << "keep me";
  DecisionCache a(path_);
  std::vector<std::string> warnings;
  EXPECT_EQ(a.load(&warnings), 0u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("not a regular file"), std::string::npos) << warnings[0];
  EXPECT_EQ(files_named(".bad-"), 0);  // not renamed out of the way
  a.put("sig", graph_decision(5));
  std::string error;
  EXPECT_TRUE(a.save(&error)) << error;  // said once, at load: nothing written
  EXPECT_EQ(a.size(), 1u);               // still known in this process
  // Saved without a load first: an error, and still nothing written beside it.
  DecisionCache b(path_);
  b.put("sig", graph_decision(5));
  EXPECT_FALSE(b.save(&error));
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
  EXPECT_TRUE(fs::is_regular_file(fs::path(path_) / "someones-file"));
  EXPECT_EQ(files_named(".lock"), 0);
  // A pipe: opening it to read would wait for a writer; it is refused at once instead.
  fs::remove_all(path_);
  ASSERT_EQ(::mkfifo(path_.c_str(), 0644), 0);
  DecisionCache c(path_);
  warnings.clear();
  EXPECT_EQ(c.load(&warnings), 0u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("not a regular file"), std::string::npos) << warnings[0];
  EXPECT_TRUE(fs::is_fifo(path_));
}

TEST_F(DecisionCacheTest, ALinkToTheCacheStaysALink) {
  // A cache shared through a symbolic link: saves and a bad file's setting aside act on the
  // file behind it, and the link stays.
  const fs::path shared = dir_ / "shared" / "decisions.json";
  fs::create_directories(shared.parent_path());
  fs::create_directories(fs::path(path_).parent_path());
  fs::create_symlink(shared, path_);
  DecisionCache a(path_);
  std::vector<std::string> warnings;
  a.load(&warnings);  // dangling so far: an empty cache
  a.put("sig", graph_decision(5));
  std::string error;
  ASSERT_TRUE(a.save(&error)) << error;
  EXPECT_TRUE(fs::is_symlink(path_));
  EXPECT_TRUE(fs::is_regular_file(shared));
  DecisionCache b(path_);
  EXPECT_EQ(b.load(&warnings), 1u);
  EXPECT_TRUE(warnings.empty());
  b.put("other", graph_decision(6));
  ASSERT_TRUE(b.save(&error)) << error;
  EXPECT_TRUE(fs::is_symlink(path_));
  // A bad file behind the link is set aside beside itself, the link left to be written through.
  std::ofstream(shared) << "not json";
  DecisionCache c(path_);
  EXPECT_EQ(c.load(&warnings), 0u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(fs::is_symlink(path_));
  int aside = 0;
  for (const auto& e : fs::directory_iterator(shared.parent_path()))
    aside += e.path().filename().string().find(".bad-") != std::string::npos;
  EXPECT_EQ(aside, 1);
  c.put("sig", graph_decision(7));
  ASSERT_TRUE(c.save(&error)) << error;
  EXPECT_TRUE(fs::is_symlink(path_));
  EXPECT_EQ(DecisionCache(path_).load(&warnings), 1u);
}

TEST_F(DecisionCacheTest, WhatTheCacheWritesReadsBackWhole) {
  // A number no double holds is no JSON to the parser: the whole file is bad, as above.
  std::map<std::string, Decision> read;
  std::string why;
  EXPECT_FALSE(parse_decisions(
      R"({"schema": "pygraph-decisions/1", "entries": {"x": {"eager_us": 1e999}}})", &read, &why));
  EXPECT_TRUE(read.empty());
  // What decisions_text writes, parse_decisions reads back whole.
  const std::map<std::string, Decision> mine = {{"a", graph_decision(20, 7)},
                                                {"b", graph_decision(-5, 8)}};
  std::map<std::string, Decision> again;
  ASSERT_TRUE(parse_decisions(decisions_text(mine), &again, &why)) << why;
  ASSERT_EQ(again.size(), 2u);
  EXPECT_DOUBLE_EQ(again.at("a").eager_us, 120);
  EXPECT_EQ(again.at("b").updated, 8);
  EXPECT_EQ(again.at("b").env, kH100);
  // A why that is no UTF-8 (a pattern from the environment) is written, never thrown.
  Decision odd = graph_decision(1);
  odd.why = "denied by '\xff'";
  std::string text;
  ASSERT_NO_THROW(text = decisions_text({{"odd", odd}}));
  again.clear();
  ASSERT_TRUE(parse_decisions(text, &again, &why)) << why;
  EXPECT_EQ(again.at("odd").why, "denied by '\xef\xbf\xbd'");
}

TEST_F(DecisionCacheTest, TwoWritersMergeAndTheNewerEntryWins) {
  std::vector<std::string> warnings;
  DecisionCache a(path_), b(path_);
  a.load(&warnings);
  b.load(&warnings);
  a.put("only-a", graph_decision(1, 100));
  b.put("only-b", graph_decision(2, 100));
  a.put("both", graph_decision(3, 200));
  b.put("both", graph_decision(4, 100));  // older than a's
  std::string error;
  ASSERT_TRUE(a.save(&error));
  ASSERT_TRUE(b.save(&error));
  DecisionCache c(path_);
  EXPECT_EQ(c.load(&warnings), 3u);
  const Decision* d = nullptr;
  ASSERT_EQ(c.find("both", kH100, &d), DecisionCache::Lookup::kFound);
  EXPECT_DOUBLE_EQ(d->eager_us, 103);
}

TEST_F(DecisionCacheTest, ManyProcessesSavingAtOnceLoseNothing) {
  constexpr int kProcs = 16, kEach = 25;
  std::vector<pid_t> kids;
  for (int p = 0; p < kProcs; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      DecisionCache c(path_);
      std::vector<std::string> warnings;
      c.load(&warnings);
      std::string error;
      bool ok = warnings.empty();
      for (int i = 0; i < kEach; ++i) {
        c.put("p" + std::to_string(p) + "-" + std::to_string(i), graph_decision(i));
        if (i % 5 == 4) ok = c.save(&error) && ok;  // save often: many overlapping writers
      }
      ::_exit(ok ? 0 : 1);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  DecisionCache all(path_);
  std::vector<std::string> warnings;
  EXPECT_EQ(all.load(&warnings), size_t(kProcs * kEach));
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(files_named(".tmp-"), 0);
  EXPECT_EQ(files_named(".bad-"), 0);
}

TEST_F(DecisionCacheTest, AFileThatCannotBeWrittenIsAnErrorAndNothingElse) {
  DecisionCache a("/proc/pygraph-no/decisions.json");
  std::vector<std::string> warnings;
  a.load(&warnings);
  a.put("sig", graph_decision(1));
  std::string error;
  EXPECT_FALSE(a.save(&error));
  EXPECT_NE(error.find("/proc/pygraph-no"), std::string::npos) << error;
  EXPECT_EQ(a.size(), 1u);  // still known in this process
}

TEST(DecisionCachePath, EnvironmentDecidesWhereTheCacheLives) {
  static std::map<std::string, std::string> env;
  auto get = [](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  env = {{"HOME", "/home/u"}};
  EXPECT_EQ(default_decision_cache_path(get), "/home/u/.cache/pygraph/decisions.json");
  env["XDG_CACHE_HOME"] = "/xdg";
  EXPECT_EQ(default_decision_cache_path(get), "/xdg/pygraph/decisions.json");
  env["PYGRAPH_CACHE"] = "/tmp/mine.json";
  EXPECT_EQ(default_decision_cache_path(get), "/tmp/mine.json");
  env = {};
  EXPECT_EQ(default_decision_cache_path(get), "");
}

}  // namespace
}  // namespace pygraph
