// The configuration's real sources: the process's environment and files, bad files included.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "options/config.h"

namespace pygraph {
namespace {

std::string temp_dir() {
  char dir[] = "/tmp/pygraph-sources-XXXXXX";
  return mkdtemp(dir) ? dir : "";
}

TEST(ProcessSources, ReadsTheEnvironment) {
  setenv("PYGRAPH_SOURCES_TEST", "x", 1);
  ConfigSources s = process_config_sources();
  EXPECT_STREQ(s.getenv("PYGRAPH_SOURCES_TEST"), "x");
  const std::vector<std::string> names = s.env_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "PYGRAPH_SOURCES_TEST"), names.end());
  unsetenv("PYGRAPH_SOURCES_TEST");
}

TEST(ProcessSources, ReadsFilesAndSaysWhyNot) {
  const std::string dir = temp_dir();
  ASSERT_FALSE(dir.empty());
  ConfigSources s = process_config_sources();
  std::string text, error;
  std::ofstream(dir + "/c.json") << "{\"mode\": \"off\"}";
  EXPECT_TRUE(s.read_file(dir + "/c.json", &text, &error));
  EXPECT_EQ(text, "{\"mode\": \"off\"}");
  EXPECT_FALSE(s.read_file(dir + "/missing.json", &text, &error));
  EXPECT_EQ(error, "No such file or directory");
  EXPECT_FALSE(s.read_file(dir, &text, &error));
  EXPECT_EQ(error, "Is a directory");
  // A pipe named as the file: refused at once, not waited on for a writer.
  ASSERT_EQ(mkfifo((dir + "/pipe.json").c_str(), 0644), 0);
  EXPECT_FALSE(s.read_file(dir + "/pipe.json", &text, &error));
  EXPECT_EQ(error, "not a regular file");
  unlink((dir + "/pipe.json").c_str());
  std::ofstream(dir + "/big.json") << std::string((1 << 20) + 1, ' ');
  EXPECT_FALSE(s.read_file(dir + "/big.json", &text, &error));
  EXPECT_EQ(error, "larger than 1 MiB");
  std::ofstream(dir + "/edge.json") << std::string(1 << 20, ' ');
  EXPECT_TRUE(s.read_file(dir + "/edge.json", &text, &error));
  EXPECT_EQ(text.size(), size_t(1) << 20);
  for (const char* f : {"/c.json", "/big.json", "/edge.json"}) unlink((dir + f).c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace pygraph
