// The configuration file under plain LD_PRELOAD, on the stand-in driver: the shim reads
// PYGRAPH_CONFIG at the first CUDA call, the environment overrides it, its values reach the
// engine, and problems are one line each (passthrough, or exit 78 under PYGRAPH_STRICT=1).
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "run_program.h"

namespace pygraph::test {
namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

struct ShimRun {
  RunResult run;
  nlohmann::json stats;  // discarded when none was written
};

// launcher_program `loop` under the shim, with `config` (if any) as the file.
ShimRun run_loop(const std::string& config, Env env = {}) {
  const std::string path = temp_path("config.json"), stats = temp_path("stats.json");
  if (!config.empty()) {
    std::ofstream(path) << config;
    env.push_back({"PYGRAPH_CONFIG", path});
  }
  env.push_back({"LD_PRELOAD", PYGRAPH_SHIM});
  env.push_back({"LD_LIBRARY_PATH", STANDIN_DIR});
  // The test's own stats path, unless the file is to say where (then PYGRAPH_STATS is empty:
  // unset).
  const bool file_says = config.find("\"stats\"") != std::string::npos;
  env.push_back({"PYGRAPH_STATS", file_says ? "" : stats});
  ShimRun r;
  r.run = run_program({LAUNCHER_PROGRAM, "loop"}, env);
  r.stats = nlohmann::json::parse(std::ifstream(stats), nullptr, false);
  unlink(stats.c_str());
  unlink(path.c_str());
  return r;
}

TEST(ConfigFile, ItsValuesReachTheEngine) {
  // max_chunk bounds the launches one graph replays: the loop's period of 8 is followed in
  // graphs of 128 launches by default, of 8 with max_chunk 8.
  ShimRun plain = run_loop("");
  ShimRun small = run_loop(R"({"max_chunk": 8, "first_chunk": 2, "min_repeats": 3})");
  ASSERT_EQ(small.run.exit_code, 0) << small.run.err;
  EXPECT_EQ(small.run.err, "");
  ASSERT_TRUE(plain.stats.is_object() && small.stats.is_object());
  EXPECT_GT(plain.stats["graphs"]["launches_per_replay"].get<double>(), 8.0);
  EXPECT_LE(small.stats["graphs"]["launches_per_replay"].get<double>(), 8.0);
  EXPECT_GT(small.stats["launches"]["replayed_in_graphs"].get<int>(), 0);
  // One more eager occurrence of the period before it is recorded.
  EXPECT_GT(small.stats["launches"]["eager"].get<int>(),
            plain.stats["launches"]["eager"].get<int>());
}

TEST(ConfigFile, TheFileNamesTheStatsAndTheEnvironmentOverridesIt) {
  const std::string stats = temp_path("file-stats.json");
  const std::string config = R"({"stats": ")" + stats + R"(", "mode": "off"})";
  ShimRun r = run_loop(config, {{"PYGRAPH_MODE", "graph"}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(r.run.err, "");
  const nlohmann::json doc = nlohmann::json::parse(std::ifstream(stats), nullptr, false);
  unlink(stats.c_str());
  ASSERT_TRUE(doc.is_object()) << "no stats at " << stats;
  EXPECT_EQ(doc["mode"], "graph");
  EXPECT_GT(doc["launches"]["replayed_in_graphs"].get<int>(), 0);
}

TEST(ConfigFile, UnknownKeysAndVariablesWarnOnceAndTheRunGoesOn) {
  ShimRun r = run_loop(R"({"frist_chunk": 4})", {{"PYGRAPH_MAX_GRAPH", "5"}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(r.run.out, "done\n");
  const std::string file = r.run.err.substr(9, r.run.err.find(':', 9) - 9);
  EXPECT_EQ(r.run.err,
            "pygraph: " + file +
                ": \"frist_chunk\" is not a pygraph option (did you mean \"first_chunk\"?); "
                "ignored\n"
                "pygraph: PYGRAPH_MAX_GRAPH is not a pygraph option (did you mean "
                "PYGRAPH_MAX_GRAPHS?); ignored\n");
  ASSERT_TRUE(r.stats.is_object());
  EXPECT_EQ(r.stats["mode"], "graph");
  EXPECT_GT(r.stats["launches"]["replayed_in_graphs"].get<int>(), 0);
}

TEST(ConfigFile, DebugShowsTheConfigurationAndWhereEachValueCameFrom) {
  ShimRun r =
      run_loop(R"({"log_level": "debug", "first_chunk": 4})", {{"PYGRAPH_MAX_CHUNK", "64"}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  auto has = [&](const std::string& pattern) {
    return std::regex_search(r.run.err, std::regex(pattern));
  };
  EXPECT_TRUE(has("pygraph: config: first_chunk +4 +file /[^\\n]*\\n")) << r.run.err;
  EXPECT_TRUE(has("pygraph: config: max_chunk +64 +environment PYGRAPH_MAX_CHUNK\\n")) << r.run.err;
  EXPECT_TRUE(has("pygraph: config: mode +graph +default\\n")) << r.run.err;
}

TEST(ConfigFile, InfoSaysWhereTheConfigurationCameFromAndSumsTheRunUp) {
  // log_level info: a line at start, the summary `pygraph run` prints at exit, no diagnostics;
  // error (the default): nothing on stderr for a run without problems.
  ShimRun r = run_loop(R"({"log_level": "info", "first_chunk": 4})", {{"PYGRAPH_MAX_CHUNK", "64"}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  auto has = [&](const std::string& pattern) {
    return std::regex_search(r.run.err, std::regex(pattern));
  };
  EXPECT_TRUE(
      has("pygraph: graph mode; configuration: /[^\\n]* \\(2 options\\), 2 from the "
          "environment\\n"))
      << r.run.err;
  EXPECT_TRUE(
      has("pygraph: graph mode: [0-9.]+ % of [0-9]+ launches replayed in graphs "
          "\\([0-9]+ graphs, [0-9]+ replays\\)"))
      << r.run.err;
  EXPECT_FALSE(has("pygraph: config: ")) << r.run.err;
  ShimRun quiet = run_loop(R"({"first_chunk": 4})", {});
  ASSERT_EQ(quiet.run.exit_code, 0) << quiet.run.err;
  EXPECT_EQ(quiet.run.err.find("pygraph:"), std::string::npos) << quiet.run.err;
}

TEST(ConfigFile, ABadFileIsOneLineAndThenPassthrough) {
  for (const std::string& config :
       {std::string("{\"mode\": \"graph\""), std::string(R"({"staging_mb": 2048})"),
        std::string("[1, 2]")}) {
    ShimRun r = run_loop(config);
    ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
    EXPECT_EQ(r.run.out, "done\n");
    EXPECT_EQ(std::count(r.run.err.begin(), r.run.err.end(), '\n'), 1) << r.run.err;
    EXPECT_NE(r.run.err.find("; running in off mode (passthrough)\n"), std::string::npos)
        << r.run.err;
    ASSERT_TRUE(r.stats.is_object());
    EXPECT_EQ(r.stats["mode"], "off");
  }
  ShimRun r = run_loop("", {{"PYGRAPH_CONFIG", "/nonexistent/pygraph.json"}});
  EXPECT_EQ(r.run.exit_code, 0);
  EXPECT_EQ(r.run.err,
            "pygraph: cannot read PYGRAPH_CONFIG='/nonexistent/pygraph.json': No such file or "
            "directory; running in off mode (passthrough)\n");
}

TEST(ConfigFile, StrictEndsTheProcessWithStatus78) {
  ShimRun r = run_loop(R"({"first_chunk": "eight"})", {{"PYGRAPH_STRICT", "1"}});
  EXPECT_EQ(r.run.exit_code, 78);
  EXPECT_EQ(r.run.out, "");
  const std::string file = r.run.err.substr(9, r.run.err.find(':', 9) - 9);
  EXPECT_EQ(r.run.err, "pygraph: " + file +
                           ": \"first_chunk\": \"eight\" is not a whole number from 1 to 4096; "
                           "stopping the process (strict)\n");
  EXPECT_FALSE(r.stats.is_object());
  // Strict and a good configuration: nothing changes.
  r = run_loop(R"({"strict": true, "first_chunk": 4})");
  EXPECT_EQ(r.run.exit_code, 0);
  EXPECT_EQ(r.run.err, "");
}

}  // namespace
}  // namespace pygraph::test
