// The launcher's parts that need no program: the summary line of a stats document, the stats
// files a run left, and LD_PRELOAD with the shim first.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <fstream>

#include "graph/stats_summary.h"
#include "preload.h"
#include "stats_summary.h"

namespace pygraph::launcher {
namespace {

TEST(SummaryLine, GraphModeFigures) {
  // The example of docs/stats-format.md, trimmed to what the summary reads.
  const char* doc = R"({"schema": "pygraph-stats/1", "mode": "graph",
    "launches": {"intercepted": 17746, "seen_by_engine": 17746, "replayed_in_graphs": 17586,
                 "eager": 160},
    "graphs": {"instantiated": 72, "replays": 3952},
    "eager_launches_by_reason": {"not_repeating": 156, "mismatch": 4, "short_chunk": 0}})";
  EXPECT_EQ(stats_summary_line(doc),
            "graph mode: 99.1 % of 17746 launches replayed in graphs (72 graphs, 3952 replays); "
            "eager: not_repeating 156, mismatch 4");
}

TEST(SummaryLine, TopThreeReasonsLargestFirst) {
  const char* doc = R"({"mode": "graph", "launches": {"seen_by_engine": 10},
    "eager_launches_by_reason": {"a": 1, "b": 4, "c": 2, "d": 3}})";
  EXPECT_EQ(stats_summary_line(doc),
            "graph mode: 0.0 % of 10 launches replayed in graphs (0 graphs, 0 replays); eager: b "
            "4, d 3, c 2");
  EXPECT_EQ(stats_summary_line(R"({"mode": "graph"})"),
            "graph mode: 0.0 % of 0 launches replayed in graphs (0 graphs, 0 replays); no eager "
            "launches");
}

TEST(SummaryLine, OtherModesAndNonDocuments) {
  EXPECT_EQ(stats_summary_line(R"({"mode": "trace", "launches": {"intercepted": 12}})"),
            "trace mode: 12 launches, passed through");
  EXPECT_EQ(stats_summary_line(R"({"mode": "off"})"), "off mode: everything passed through");
  for (const char* bad : {"", "{", "[]", R"({"mode": 1})", R"({"launches": {}})"}) {
    EXPECT_EQ(stats_summary_line(bad), "") << bad;
  }
  // Fields of the wrong type count as zero rather than throwing.
  EXPECT_EQ(stats_summary_line(R"({"mode": "graph", "launches": [], "graphs": {"replays": "x"},
                            "eager_launches_by_reason": {"a": "many"}})"),
            "graph mode: 0.0 % of 0 launches replayed in graphs (0 graphs, 0 replays); no eager "
            "launches");
}

TEST(StatsFiles, OneFileOrEveryProcesssOwnProgramFirst) {
  char dir_template[] = "/tmp/pygraph-stats-files-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  for (const char* name :
       {"s-100.json", "s-7.json", "s-42.json", "s-x.json", "other.json", "s-.json"}) {
    std::ofstream(dir + "/" + name) << "{}";
  }
  const time_t now = std::time(nullptr);
  std::vector<StatsFile> files = stats_files(dir + "/s-%p.json", 42, now - 60);
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].path, dir + "/s-42.json");
  EXPECT_EQ(files[0].pid, 42);
  EXPECT_EQ(files[1].path, dir + "/s-100.json");
  EXPECT_EQ(files[1].pid, 100);
  EXPECT_EQ(files[2].pid, 7);
  // Files from before the run are not this run's.
  EXPECT_TRUE(stats_files(dir + "/s-%p.json", 42, now + 60).empty());
  files = stats_files(dir + "/other.json", 42, now - 60);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].pid, 0);
  EXPECT_TRUE(stats_files(dir + "/missing.json", 42, 0).empty());
  EXPECT_TRUE(stats_files("/nonexistent-dir/s-%p.json", 42, 0).empty());
  for (const char* name :
       {"s-100.json", "s-7.json", "s-42.json", "s-x.json", "other.json", "s-.json"}) {
    unlink((dir + "/" + name).c_str());
  }
  rmdir(dir.c_str());
}

TEST(Preload, TheShimComesFirstOnce) {
  EXPECT_EQ(with_preload(nullptr, "/b/libpygraph.so"), "/b/libpygraph.so");
  EXPECT_EQ(with_preload("", "/b/libpygraph.so"), "/b/libpygraph.so");
  EXPECT_EQ(with_preload("libm.so.6", "/b/libpygraph.so"), "/b/libpygraph.so:libm.so.6");
  EXPECT_EQ(with_preload("/a.so /b/libpygraph.so", "/b/libpygraph.so"), "/a.so /b/libpygraph.so");
  EXPECT_EQ(with_preload("/a.so:/b/libpygraph.so", "/b/libpygraph.so"), "/a.so:/b/libpygraph.so");
  EXPECT_EQ(with_preload("/b/libpygraph.so.old", "/b/libpygraph.so"),
            "/b/libpygraph.so:/b/libpygraph.so.old");
}

}  // namespace
}  // namespace pygraph::launcher
