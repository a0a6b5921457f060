// Files the analyzer tests read and make: a file's bytes, and a fresh trace of a stand-in
// program run under the shim in trace mode.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "run_program.h"

namespace pygraph::test {

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The trace's path (the caller removes it); the run's failure fails the calling test.
inline std::string traced_run(const std::vector<std::string>& argv, const std::string& stem) {
  const std::string path = temp_path(stem);
  RunResult r = run_program(argv, {{"LD_PRELOAD", PYGRAPH_SHIM},
                                   {"LD_LIBRARY_PATH", STANDIN_DIR},
                                   {"PYGRAPH_MODE", "trace"},
                                   {"PYGRAPH_TRACE", path}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return path;
}

}  // namespace pygraph::test
