// `pygraph-analyze breaks`: every eager launch graph mode would leave is put down to one cause,
// and the causes are what the stand-in programs do.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_program.h"

namespace pygraph::test {
namespace {

nlohmann::json breaks_of(const std::string& trace) {
  RunResult r = run_program({ANALYZER, "breaks", "--json", "--top", "100000", trace}, {});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out, nullptr, false);
}

TEST(AnalyzerBreaks, EveryEagerLaunchHasOneCause) {
  for (const std::vector<std::string>& program : {std::vector<std::string>{THREAD_PROGRAM},
                                                  {RANDOM_PROGRAM, "0", "40"},
                                                  {RANDOM_LOOP_PROGRAM, "0", "40"}}) {
    const std::string trace = temp_path("breaks.trace");
    RunResult run = run_program(program, {{"LD_PRELOAD", PYGRAPH_SHIM},
                                          {"LD_LIBRARY_PATH", STANDIN_DIR},
                                          {"PYGRAPH_MODE", "trace"},
                                          {"PYGRAPH_TRACE", trace}});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const nlohmann::json b = breaks_of(trace);
    unlink(trace.c_str());
    ASSERT_TRUE(b.is_object()) << program[0];
    uint64_t attributed = 0;
    double last_cost = 1e300;
    for (const auto& row : b["breaks"]) {
      attributed += row["eager_launches"].get<uint64_t>();
      EXPECT_LE(row["cost_ms"].get<double>(), last_cost) << "ranked by cost";
      last_cost = row["cost_ms"].get<double>();
    }
    EXPECT_EQ(attributed, b["eager_launches"].get<uint64_t>()) << program[0];
    EXPECT_GT(b["breaks"].size(), 0u) << program[0];
  }
}

TEST(AnalyzerBreaks, TheSyncAfterTheOddStepComesFirstWithItsCallSite) {
  const nlohmann::json b = breaks_of(GOLDEN_DIR "/loop_program.trace");
  ASSERT_TRUE(b.is_object());
  ASSERT_GE(b["breaks"].size(), 1u);
  const auto& top = b["breaks"][0];
  EXPECT_EQ(top["kind"], "ends_segment");
  EXPECT_EQ(top["op"], "cuStreamSynchronize");
  EXPECT_EQ(top["times"], 1);
  // The odd step [a b b a] and the first launches of the loop before it was found.
  EXPECT_EQ(top["eager_launches"], 10);
  ASSERT_FALSE(top["frames"].empty());
  EXPECT_NE(top["frames"][0].get<std::string>().find("loop_program"), std::string::npos);
  RunResult text = run_program({ANALYZER, "breaks", GOLDEN_DIR "/loop_program.trace"}, {});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("18 of 48 launches stay eager"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  1. cuStreamSynchronize ends a sequence"), std::string::npos)
      << text.out;
  RunResult bad = run_program({ANALYZER, "breaks", "--launch-us", "-1", "x.trace"}, {});
  EXPECT_EQ(bad.exit_code, 1);
}

}  // namespace
}  // namespace pygraph::test
