#include "differential.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "run_program.h"

namespace pygraph::test {

nlohmann::json expect_same_digests(const std::string& program, int seeds, const char* mode,
                                   const std::vector<std::pair<std::string, std::string>>& env) {
  const std::string count = std::to_string(seeds);
  std::vector<std::pair<std::string, std::string>> plain_env = {{"LD_LIBRARY_PATH", STANDIN_DIR}};
  plain_env.insert(plain_env.end(), env.begin(), env.end());
  RunResult plain = run_program({program, "0", count}, plain_env);
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  const std::string trace = temp_path("random.trace");
  const std::string stats = temp_path("random-stats.json");
  std::vector<std::pair<std::string, std::string>> shim_env = {{"LD_PRELOAD", PYGRAPH_SHIM},
                                                               {"LD_LIBRARY_PATH", STANDIN_DIR},
                                                               {"PYGRAPH_MODE", mode},
                                                               {"PYGRAPH_TRACE", trace},
                                                               {"PYGRAPH_STATS", stats}};
  shim_env.insert(shim_env.end(), env.begin(), env.end());
  RunResult shim = run_program({program, "0", count}, shim_env);
  unlink(trace.c_str());
  nlohmann::json j = nlohmann::json::parse(std::ifstream(stats), nullptr, false);
  unlink(stats.c_str());
  EXPECT_EQ(shim.exit_code, 0) << shim.err;
  std::istringstream a(plain.out), b(shim.out);
  std::string la, lb;
  int lines = 0;
  while (std::getline(a, la)) {
    if (!std::getline(b, lb)) break;
    if (la != lb) {
      ADD_FAILURE() << program << ": first differing seed (seed digest): " << la << " vs " << lb;
      break;
    }
    ++lines;
  }
  EXPECT_EQ(lines, seeds);
  return j;
}

}  // namespace pygraph::test
