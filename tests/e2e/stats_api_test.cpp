// pygraph_write_stats (shim/include/pygraph.h) end to end, under LD_PRELOAD on the stand-in
// driver: snapshots taken after syncs balance and grow, a NULL path goes to PYGRAPH_STATS,
// failures are one line and -1, and without the shim the symbol is not there.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run_program.h"

namespace pygraph::test {
namespace {

constexpr int kLoopLaunches = 20 * 8;  // one `loop` of snapshot_program

RunResult run_shim(const std::vector<std::string>& args,
                   std::vector<std::pair<std::string, std::string>> env = {}) {
  std::vector<std::string> argv = {SNAPSHOT_PROGRAM};
  argv.insert(argv.end(), args.begin(), args.end());
  env.push_back({"LD_PRELOAD", PYGRAPH_SHIM});
  env.push_back({"LD_LIBRARY_PATH", STANDIN_DIR});
  return run_program(argv, env);
}

// The file's JSON document (discarded: not an object), removing the file.
nlohmann::json take(const std::string& path) {
  nlohmann::json j = nlohmann::json::parse(std::ifstream(path), nullptr, false);
  unlink(path.c_str());
  return j;
}

int64_t launches(const nlohmann::json& doc, const char* field) {
  return doc["launches"][field].get<int64_t>();
}

void expect_balanced(const nlohmann::json& doc, const char* name) {
  EXPECT_EQ(launches(doc, "seen_by_engine"),
            launches(doc, "replayed_in_graphs") + launches(doc, "eager"))
      << name << ": " << doc.dump();
}

TEST(StatsApi, SnapshotsAfterSyncsBalanceAndGrowWhileGraphsReplay) {
  const std::string a = temp_path("warm.json"), b = temp_path("end.json");
  RunResult r = run_shim({"loop", "write=" + a, "loop", "loop", "write=" + b});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("write 0\nwrite 0\n"), std::string::npos) << r.out;
  const nlohmann::json first = take(a), second = take(b);
  ASSERT_TRUE(first.is_object());
  ASSERT_TRUE(second.is_object());
  EXPECT_EQ(first["schema"], "pygraph-stats/1");
  EXPECT_EQ(first["mode"], "graph");
  EXPECT_EQ(launches(first, "seen_by_engine"), kLoopLaunches);
  EXPECT_EQ(launches(second, "seen_by_engine"), 3 * kLoopLaunches);
  EXPECT_EQ(launches(second, "intercepted"), 3 * kLoopLaunches);
  expect_balanced(first, "first");
  expect_balanced(second, "second");
  // Graph mode replays the loop between the snapshots: all of its 2 loops but one iteration
  // each (after a sync, the period is found again before it is followed).
  EXPECT_GE(launches(second, "replayed_in_graphs") - launches(first, "replayed_in_graphs"),
            2 * (kLoopLaunches - 8));
  EXPECT_GT(second["graphs"]["replays"].get<int64_t>(), first["graphs"]["replays"].get<int64_t>());
}

TEST(StatsApi, PathTemplateTakesThePid) {
  const std::string dir = temp_path("dir");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  RunResult r = run_shim({"loop", "write=" + dir + "/s-%p.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string pid = r.out.substr(4, r.out.find('\n') - 4);
  const nlohmann::json doc = take(dir + "/s-" + pid + ".json");
  rmdir(dir.c_str());
  ASSERT_TRUE(doc.is_object()) << r.out;
  EXPECT_EQ(launches(doc, "seen_by_engine"), kLoopLaunches);
}

TEST(StatsApi, NullPathWritesToTheStatsFile) {
  const std::string stats = temp_path("stats.json"), moved = temp_path("snapshot.json");
  RunResult r =
      run_shim({"loop", "write", "move-stats=" + moved, "loop"}, {{"PYGRAPH_STATS", stats}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const nlohmann::json snapshot = take(moved), at_exit = take(stats);
  ASSERT_TRUE(snapshot.is_object());
  ASSERT_TRUE(at_exit.is_object());
  EXPECT_EQ(launches(snapshot, "seen_by_engine"), kLoopLaunches);
  EXPECT_EQ(launches(at_exit, "seen_by_engine"), 2 * kLoopLaunches);
}

TEST(StatsApi, NullPathWritesToStderrWhenStatsGoThere) {
  RunResult r = run_shim({"loop", "write", "loop", "write"}, {{"PYGRAPH_STATS", "stderr"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Two snapshots, then the document written at exit.
  std::istringstream err(r.err);
  std::vector<nlohmann::json> docs(3);
  for (auto& doc : docs) {
    ASSERT_NO_THROW(err >> doc) << r.err;
  }
  EXPECT_EQ(launches(docs[0], "seen_by_engine"), kLoopLaunches);
  EXPECT_EQ(launches(docs[1], "seen_by_engine"), 2 * kLoopLaunches);
  EXPECT_EQ(docs[2], docs[1]);
  err >> std::ws;
  EXPECT_TRUE(err.eof()) << r.err;
}

TEST(StatsApi, FailuresReturnMinusOneWithOneLineEach) {
  RunResult r = run_shim({"loop", "write", "write=/nonexistent-dir/s.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("write -1\nwrite -1\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.err,
            "pygraph: pygraph_write_stats: no path given and PYGRAPH_STATS is not set\n"
            "pygraph: cannot write the stats to '/nonexistent-dir/s.json': No such file or "
            "directory\n");
}

TEST(StatsApi, BeforeAnyCudaCallZeroCountsInTheConfiguredMode) {
  const std::string a = temp_path("early.json"), b = temp_path("late.json");
  RunResult r = run_shim({"write=" + a, "loop", "write=" + b}, {{"PYGRAPH_MODE", "trace"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const nlohmann::json early = take(a), late = take(b);
  ASSERT_TRUE(early.is_object());
  ASSERT_TRUE(late.is_object());
  EXPECT_EQ(early["mode"], "trace");
  EXPECT_EQ(launches(early, "intercepted"), 0);
  EXPECT_EQ(late["mode"], "trace");
  EXPECT_EQ(launches(late, "intercepted"), kLoopLaunches);
  EXPECT_EQ(launches(late, "seen_by_engine"), 0);
}

TEST(StatsApi, FromInsideALaunchNeitherDeadlocksNorCrashes) {
  // The kernel runs inside the shim's launch wrapper, which holds the engine lock.
  const std::string inner = temp_path("inner.json"), after = temp_path("after.json");
  RunResult r = run_shim({"loop", "inner=" + inner, "write=" + after});
  ASSERT_EQ(r.exit_code, 0) << "killed by the alarm: a deadlock? " << r.err;
  EXPECT_NE(r.out.find("write 0\nwrite 0\n"), std::string::npos) << r.out;
  const nlohmann::json in = take(inner), out = take(after);
  ASSERT_TRUE(in.is_object());
  ASSERT_TRUE(out.is_object());
  EXPECT_EQ(in["mode"], "graph");
  EXPECT_EQ(launches(out, "seen_by_engine"), kLoopLaunches + 1);
  expect_balanced(out, "after");
}

TEST(StatsApi, WithoutTheShimTheSymbolIsAbsent) {
  RunResult r = run_program({SNAPSHOT_PROGRAM, "loop", "write=/dev/null"},
                            {{"LD_LIBRARY_PATH", STANDIN_DIR}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nwrite absent\n"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace pygraph::test
