#include "options/config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace pygraph {
namespace {

std::map<std::string, std::string> g_env;
const char* fake_getenv(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

Config parse(std::map<std::string, std::string> env, std::vector<std::string>* warnings) {
  g_env = std::move(env);
  return parse_config(&fake_getenv, warnings);
}

TEST(Config, DefaultsAreGraphModeWithoutFiles) {
  std::vector<std::string> w;
  Config c = parse({}, &w);
  EXPECT_EQ(c.mode, Mode::kGraph);
  EXPECT_EQ(c.stats_path, "");
  EXPECT_EQ(c.min_repeats, 2u);
  EXPECT_EQ(c.max_graphs, 1024u);
  EXPECT_EQ(c.trace_path, "");
  EXPECT_FALSE(c.debug);
  EXPECT_TRUE(w.empty());
}

TEST(Config, ReadsEveryOption) {
  std::vector<std::string> w;
  Config c = parse(
      {{"PYGRAPH_MODE", "trace"}, {"PYGRAPH_TRACE", "/tmp/x-%p"}, {"PYGRAPH_DEBUG", "1"}}, &w);
  EXPECT_EQ(c.mode, Mode::kTrace);
  EXPECT_EQ(c.trace_path, "/tmp/x-%p");
  EXPECT_TRUE(c.debug);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(parse({{"PYGRAPH_MODE", "off"}}, &w).mode, Mode::kOff);
  c = parse({{"PYGRAPH_MODE", "graph"},
             {"PYGRAPH_STATS", "stderr"},
             {"PYGRAPH_MIN_REPEATS", "5"},
             {"PYGRAPH_MAX_GRAPHS", "64"},
             {"PYGRAPH_FIRST_CHUNK", "8"},
             {"PYGRAPH_STAGING_MB", "0"},
             {"PYGRAPH_PATCH_GRID", "0"}},
            &w);
  EXPECT_EQ(c.mode, Mode::kGraph);
  EXPECT_EQ(c.stats_path, "stderr");
  EXPECT_EQ(c.min_repeats, 5u);
  EXPECT_EQ(c.max_graphs, 64u);
  EXPECT_EQ(c.first_chunk, 8u);
  EXPECT_EQ(c.staging_mb, 0u);
  EXPECT_FALSE(c.patch_grid);
  EXPECT_TRUE(w.empty());
  Config d = parse({}, &w);
  EXPECT_EQ(d.first_chunk, 2u);
  EXPECT_EQ(d.staging_mb, 4u);
  EXPECT_TRUE(d.patch_grid);
}

TEST(Config, BadNumbersWarnAndKeepDefaults) {
  for (const char* bad : {"0", "-3", "2x", "", " 4", "99999999999999999999", "1001"}) {
    std::vector<std::string> w;
    Config c = parse({{"PYGRAPH_MIN_REPEATS", bad}}, &w);
    EXPECT_EQ(c.min_repeats, 2u) << bad;
    EXPECT_EQ(w.size(), *bad ? 1u : 0u) << bad;
  }
  std::vector<std::string> w;
  EXPECT_EQ(parse({{"PYGRAPH_MAX_GRAPHS", "0"}}, &w).max_graphs, 1024u);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], "PYGRAPH_MAX_GRAPHS='0' is not a whole number from 1 to 1000000; using 1024");
  w.clear();
  Config c = parse({{"PYGRAPH_PATCH_GRID", "yes"}, {"PYGRAPH_FIRST_CHUNK", "129"}}, &w);
  EXPECT_TRUE(c.patch_grid);
  EXPECT_EQ(c.first_chunk, 2u);
  EXPECT_EQ(w.size(), 2u);
}

TEST(Config, UnknownModeFallsBackToPassthroughWithOneLine) {
  std::vector<std::string> w;
  Config c = parse({{"PYGRAPH_MODE", "Trace"}, {"PYGRAPH_TRACE", "t"}}, &w);
  EXPECT_EQ(c.mode, Mode::kOff);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0],
            "PYGRAPH_MODE='Trace' is not one of: graph, trace, off; running in off mode "
            "(passthrough)");
}

TEST(Config, BadDebugValueWarnsAndKeepsDefault) {
  std::vector<std::string> w;
  Config c = parse({{"PYGRAPH_DEBUG", "yes"}}, &w);
  EXPECT_FALSE(c.debug);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("PYGRAPH_DEBUG='yes'"), std::string::npos);
}

TEST(Config, TraceInOffModeIsDroppedWithAWarning) {
  std::vector<std::string> w;
  Config c = parse({{"PYGRAPH_MODE", "off"}, {"PYGRAPH_TRACE", "t"}}, &w);
  EXPECT_EQ(c.trace_path, "");
  EXPECT_EQ(w.size(), 1u);
}

TEST(Config, PathTemplatesTakeTheProcessId) {
  const std::string pid = std::to_string(getpid());
  EXPECT_EQ(with_pid("/tmp/x.trace"), "/tmp/x.trace");
  EXPECT_EQ(with_pid("/tmp/%p/x-%p.json"), "/tmp/" + pid + "/x-" + pid + ".json");
  EXPECT_EQ(with_pid("%"), "%");
}

TEST(Config, EveryOptionIsDocumentedInTheTable) {
  // config/README.md has a table row for every option, with the option's default.
  std::ifstream f(CONFIG_README);
  ASSERT_TRUE(f) << CONFIG_README;
  std::stringstream doc;
  doc << f.rdbuf();
  ASSERT_EQ(kOptionCount, 9);
  for (int i = 0; i < kOptionCount; ++i) {
    EXPECT_EQ(std::string(kOptions[i].name).rfind("PYGRAPH_", 0), 0u);
    EXPECT_GT(std::string(kOptions[i].help).size(), 10u);
    const std::string def = *kOptions[i].default_value ? kOptions[i].default_value : "(none)";
    const std::string cell = *kOptions[i].default_value ? "`" + def + "`" : def;
    EXPECT_NE(doc.str().find("| `" + std::string(kOptions[i].name) + "` | " + cell + " |"),
              std::string::npos)
        << kOptions[i].name << " (default " << def << ") has no row in config/README.md";
  }
}

}  // namespace
}  // namespace pygraph
