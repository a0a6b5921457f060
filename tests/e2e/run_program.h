// Runs a program with extra environment variables and captures its exit status and stderr.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace pygraph::test {

struct RunResult {
  int exit_code = -1;  // -1: did not exit normally
  std::string out;
  std::string err;
};

RunResult run_program(const std::vector<std::string>& argv,
                      const std::vector<std::pair<std::string, std::string>>& env);

// Path of a fresh temporary file name (not created) for traces.
std::string temp_path(const std::string& stem);

}  // namespace pygraph::test
