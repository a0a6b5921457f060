#include "config.h"

#include <gtest/gtest.h>

#include <map>
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

TEST(Config, DefaultsAreTraceModeWithoutAFile) {
  std::vector<std::string> w;
  Config c = parse({}, &w);
  EXPECT_EQ(c.mode, Mode::kTrace);
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
}

TEST(Config, UnknownModeFallsBackToPassthroughWithOneLine) {
  std::vector<std::string> w;
  Config c = parse({{"PYGRAPH_MODE", "Trace"}, {"PYGRAPH_TRACE", "t"}}, &w);
  EXPECT_EQ(c.mode, Mode::kOff);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0],
            "PYGRAPH_MODE='Trace' is not one of: off, trace; running in off mode (passthrough)");
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

TEST(Config, EveryOptionIsDocumentedInTheTable) {
  ASSERT_EQ(kOptionCount, 3);
  for (int i = 0; i < kOptionCount; ++i) {
    EXPECT_EQ(std::string(kOptions[i].name).rfind("PYGRAPH_", 0), 0u);
    EXPECT_GT(std::string(kOptions[i].help).size(), 10u);
  }
}

}  // namespace
}  // namespace pygraph
