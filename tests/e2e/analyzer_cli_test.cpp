// pygraph-analyze as users run it: a golden summary, JSON that matches the trace, and one clear
// error with a non-zero exit for every kind of bad file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "run_program.h"
#include "trace/trace_reader.h"

namespace pygraph::test {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary) << data;
}

// loop_program with `arg`, traced in graph mode: `sequences` on its trace (JSON and text) and
// graph mode's stats of the run. `ran`: everything ran and parsed (the failure is reported).
struct TracedRun {
  bool ran = false;
  nlohmann::json sequences, stats;
  std::string text;
};

TracedRun sequences_of_graph_run(const std::string& arg) {
  TracedRun t;
  const std::string path = temp_path("loop-" + arg + ".trace");
  const std::string stats = temp_path("loop-" + arg + ".json");
  RunResult run = run_program({LOOP_PROGRAM, arg}, {{"LD_PRELOAD", PYGRAPH_SHIM},
                                                    {"LD_LIBRARY_PATH", STANDIN_DIR},
                                                    {"PYGRAPH_TRACE", path},
                                                    {"PYGRAPH_STATS", stats}});
  RunResult r = run_program({ANALYZER, "sequences", "--json", path}, {});
  RunResult text = run_program({ANALYZER, "sequences", path}, {});
  const std::string st = read_file(stats);
  unlink(path.c_str());
  unlink(stats.c_str());
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (run.exit_code != 0 || r.exit_code != 0) return t;
  t.sequences = nlohmann::json::parse(r.out);
  t.stats = nlohmann::json::parse(st);
  t.text = text.out;
  t.ran = true;
  return t;
}

// A fresh trace of door_program (procaddr door).
std::string make_trace() {
  const std::string path = temp_path("cli.trace");
  RunResult r = run_program(
      {DOOR_PROGRAM, "procaddr"},
      {{"LD_PRELOAD", PYGRAPH_SHIM}, {"LD_LIBRARY_PATH", STANDIN_DIR}, {"PYGRAPH_TRACE", path}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return path;
}

TEST(AnalyzerCli, GoldenSummary) {
  // A trace checked in once (tests/e2e/golden), so its text output never changes.
  RunResult r = run_program({ANALYZER, "summary", GOLDEN_DIR "/door_program.trace"}, {});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, read_file(GOLDEN_DIR "/door_program.summary.txt"));
}

TEST(AnalyzerCli, JsonMatchesTheTrace) {
  const std::string path = make_trace();
  RunResult r = run_program({ANALYZER, "summary", "--json", "--top", "3", path}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  Trace t;
  ASSERT_EQ(read_trace(path, &t).status, ReadStatus::kOk);
  unlink(path.c_str());
  EXPECT_EQ(j["launches"]["total"], t.launches.size());
  EXPECT_EQ(j["launches"]["by_door"]["cuGetProcAddress"], 16);
  EXPECT_EQ(j["top_kernels"][0]["name"], "axpy");
  EXPECT_EQ(j["top_kernels"][0]["count"], 15);  // the CUfunction handle; the CUkernel has 1
  EXPECT_LE(j["boundaries"].size(), 3u);
  EXPECT_TRUE(j["complete"].get<bool>());
  for (const auto& b : j["boundaries"]) EXPECT_FALSE(b["frames"].empty());
}

TEST(AnalyzerCli, SequencesOfATrainingShapedLoop) {
  const std::string path = temp_path("loop.trace");
  RunResult run = run_program(
      {LOOP_PROGRAM},
      {{"LD_PRELOAD", PYGRAPH_SHIM}, {"LD_LIBRARY_PATH", STANDIN_DIR}, {"PYGRAPH_TRACE", path}});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  RunResult r = run_program({ANALYZER, "sequences", "--json", path}, {});
  unlink(path.c_str());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["launches"], 48);
  ASSERT_EQ(j["sequences_found"], 2);  // the odd last step occurred once: not found
  const auto& segment = j["sequences"][0];
  EXPECT_EQ(segment["kind"], "segment");
  EXPECT_EQ(segment["length"], 4);
  EXPECT_EQ(segment["occurrences"], 6);
  EXPECT_EQ(segment["first_kernels"], nlohmann::json({"a", "b", "c"}));
  ASSERT_EQ(segment["ended_by"].size(), 1u);
  EXPECT_EQ(segment["ended_by"][0]["op"], "cuStreamSynchronize");
  EXPECT_EQ(segment["ended_by"][0]["count"], 6);
  EXPECT_EQ(segment["ended_by"][0]["frames"][0].get<std::string>().rfind("loop_program", 0), 0u);
  const auto& period = j["sequences"][1];
  EXPECT_EQ(period["kind"], "period");
  EXPECT_EQ(period["length"], 2);
  EXPECT_EQ(period["occurrences"], 10);
  // Segments from their 3rd occurrence; the loop from the launch after the one at which it
  // was found, as graph mode (its 4-grams first repeat in its 3rd period, which finds it with
  // 3 occurrences): 30, what `simulate` says graph mode replays of this trace.
  EXPECT_EQ(j["graphable_launches"], (6 - 2) * 4 + (10 - 3) * 2);
  RunResult fewer = run_program(
      {ANALYZER, "sequences", "--json", "--min-repeats", "7", GOLDEN_DIR "/loop_program.trace"},
      {});
  ASSERT_EQ(fewer.exit_code, 0) << fewer.err;
  EXPECT_EQ(nlohmann::json::parse(fewer.out)["sequences_found"], 1);  // only the period
}

TEST(AnalyzerCli, ALoopOfOneKernelIsAPeriodOfOneForBothTheAnalyzerAndGraphMode) {
  // 300 launches of one kernel and a sync, traced in graph mode: `sequences` names a period of
  // one launch, and graph mode replays the loop in graphs from its 34th launch (a run of 32
  // after the first makes it a loop, sequence_detector.h); the what-if says the same.
  const TracedRun t = sequences_of_graph_run("run");
  ASSERT_TRUE(t.ran);
  const nlohmann::json& j = t.sequences;
  const nlohmann::json& st = t.stats;
  EXPECT_NE(t.text.find("period of 1 launch x 300 = 300 launches"), std::string::npos) << t.text;
  EXPECT_EQ(j["launches"], 300);
  ASSERT_EQ(j["sequences_found"], 1);
  const auto& period = j["sequences"][0];
  EXPECT_EQ(period["kind"], "period");
  EXPECT_EQ(period["length"], 1);
  EXPECT_EQ(period["occurrences"], 300);
  EXPECT_EQ(j["graphable_launches"], 300 - 33);
  EXPECT_EQ(st["launches"]["replayed_in_graphs"], 300 - 33);
  EXPECT_EQ(st["launches"]["eager"], 33);
  EXPECT_EQ(st["eager_launches_by_reason"]["not_repeating"], 33);
  // The stats name the loop by its kernel as well as by its signature.
  const auto& seq = st["decisions"]["sequences"][0];
  EXPECT_EQ(seq["signature"].get<std::string>().rfind("p-1-", 0), 0u);
  EXPECT_EQ(seq["first_kernel"], "a");
}

TEST(AnalyzerCli, SequencesHoldMemopsAndAgreeWithGraphMode) {
  // The same run in graph mode, traced: the analyzer's what-if for it matches what graph mode
  // replayed, memsets included (both use one detector and one tokenization).
  const TracedRun t = sequences_of_graph_run("memset");
  ASSERT_TRUE(t.ran);
  const nlohmann::json& j = t.sequences;
  const nlohmann::json& st = t.stats;
  EXPECT_EQ(j["launches"], 28);
  EXPECT_EQ(j["memops"], 6);
  ASSERT_EQ(j["sequences_found"], 1);
  const auto& segment = j["sequences"][0];
  EXPECT_EQ(segment["length"], 5);
  EXPECT_EQ(segment["memops"], 1);
  EXPECT_EQ(segment["occurrences"], 6);
  EXPECT_EQ(segment["first_kernels"], nlohmann::json({"a", "b", "cuMemsetD8Async"}));
  EXPECT_EQ(j["graphable_launches"], (6 - 2) * 4);
  EXPECT_EQ(j["graphable_memops"], 6 - 2);
  // Graph mode also sent the odd last step's first chunk [a b] as a graph before that step
  // parted from the sequence, which the what-if (whole occurrences only) leaves out.
  EXPECT_EQ(st["launches"]["replayed_in_graphs"], j["graphable_launches"].get<int>() + 2);
  EXPECT_EQ(st["memops"]["replayed_in_graphs"], j["graphable_memops"]);
  EXPECT_NE(t.text.find("segment of 4 launches + 1 memsets/copies x 6 = 24 launches + 6 "
                        "memsets/copies"),
            std::string::npos)
      << t.text;
  EXPECT_NE(t.text.find("16 of 28 launches (57.1%) and 4 of 6 memsets/copies"), std::string::npos)
      << t.text;
}

TEST(AnalyzerCli, GoldenSequences) {
  RunResult r = run_program({ANALYZER, "sequences", GOLDEN_DIR "/loop_program.trace"}, {});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, read_file(GOLDEN_DIR "/loop_program.sequences.txt"));
}

struct BadFile {
  const char* name;
  int exit_code;
  const char* message;  // expected in stderr
};

class AnalyzerBadFile : public ::testing::TestWithParam<BadFile> {};

TEST_P(AnalyzerBadFile, OneClearErrorAndNonZeroExit) {
  const std::string good_path = make_trace();
  const std::string good = read_file(good_path);
  unlink(good_path.c_str());
  const std::string path = temp_path("bad.trace");
  const std::string kind = GetParam().name;
  if (kind == "garbage") {
    write_file(path, "this is not a trace at all, just text\n");
  } else if (kind == "empty") {
    write_file(path, "");
  } else if (kind == "truncated") {
    write_file(path, good.substr(0, good.size() * 2 / 3 + 1));
  } else if (kind == "cut_header") {
    write_file(path, good.substr(0, sizeof(trace::FileHeader) / 2));
  } else if (kind == "killed") {  // every record but the end record
    write_file(
        path, good.substr(0, good.size() - sizeof(trace::RecordHeader) - sizeof(trace::EndRecord)));
  } else if (kind == "newer") {
    std::string newer = good;
    uint32_t v = trace::kTraceVersion + 1;
    std::memcpy(&newer[8], &v, 4);
    write_file(path, newer);
  } else if (kind == "corrupt") {
    std::string bad = good;
    uint32_t zero = 0;
    std::memcpy(&bad[sizeof(trace::FileHeader) + 4], &zero, 4);  // first record's size
    write_file(path, bad);
  }
  RunResult r =
      run_program({ANALYZER, "summary", kind == "missing" ? "/nonexistent.trace" : path}, {});
  unlink(path.c_str());
  EXPECT_EQ(r.exit_code, GetParam().exit_code);
  EXPECT_NE(r.err.find(GetParam().message), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

INSTANTIATE_TEST_SUITE_P(Files, AnalyzerBadFile,
                         ::testing::Values(BadFile{"missing", 2, "cannot open /nonexistent.trace"},
                                           BadFile{"garbage", 2, "not a pygraph trace"},
                                           BadFile{"empty", 2, "not a pygraph trace"},
                                           BadFile{"truncated", 3, "trace truncated at byte"},
                                           BadFile{"cut_header", 2, "trace header is truncated"},
                                           BadFile{"killed", 3, "trace has no end record"},
                                           BadFile{"newer", 2,
                                                   "is newer than this analyzer supports"},
                                           BadFile{"corrupt", 3, "corrupt record"}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(AnalyzerCli, UsageErrors) {
  EXPECT_EQ(run_program({ANALYZER}, {}).exit_code, 1);
  EXPECT_EQ(run_program({ANALYZER, "frobnicate", "x"}, {}).exit_code, 1);
  EXPECT_EQ(run_program({ANALYZER, "summary"}, {}).exit_code, 1);
  EXPECT_EQ(run_program({ANALYZER, "summary", "--top", "zero", "x"}, {}).exit_code, 1);
  EXPECT_EQ(run_program({ANALYZER, "summary", "--min-repeats", "2", "x"}, {}).exit_code, 1);
  EXPECT_EQ(run_program({ANALYZER, "sequences", "--min-repeats", "0", "x"}, {}).exit_code, 1);
  RunResult help = run_program({ANALYZER, "--help"}, {});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("usage: pygraph-analyze summary"), std::string::npos);
}

}  // namespace
}  // namespace pygraph::test
