// `build/pygraph` end to end, on the stand-in driver: `run` preloads the shim, passes its
// options, forwards exit status and signals and prints the summary; `config` shows where each
// value comes from; a bad configuration passes through with one message, or stops the program
// under PYGRAPH_STRICT=1.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "options/option_table.h"
#include "run_program.h"

namespace pygraph::test {
namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

RunResult pygraph(std::vector<std::string> args, Env env = {}) {
  args.insert(args.begin(), PYGRAPH_LAUNCHER);
  env.push_back({"LD_LIBRARY_PATH", STANDIN_DIR});
  return run_program(args, env);
}

std::string write_file(const std::string& stem, const std::string& text) {
  const std::string path = temp_path(stem);
  std::ofstream(path) << text;
  return path;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// "pygraph: graph mode: 87.5 % of 160 launches replayed in graphs (3 graphs, 40 replays);
// eager: not_repeating 20": the figures of the loop, which graph mode mostly replays.
const std::regex kLoopSummary(
    R"(pygraph: graph mode: [0-9]+\.[0-9] % of 160 launches replayed in graphs \([1-9][0-9]* graphs, [1-9][0-9]* replays\); eager: not_repeating [1-9][0-9]*)");

TEST(LauncherRun, SummaryAtExitAndTheTemporaryStatsAreRemoved) {
  const std::string tmp = temp_path("tmpdir");
  ASSERT_EQ(mkdir(tmp.c_str(), 0755), 0);
  RunResult r = pygraph({"run", "--", LAUNCHER_PROGRAM, "loop"}, {{"TMPDIR", tmp}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "done\n");
  const std::vector<std::string> err = lines(r.err);
  ASSERT_EQ(err.size(), 2u) << r.err;
  EXPECT_TRUE(std::regex_match(err[0], kLoopSummary)) << err[0];
  EXPECT_EQ(err[1], "pygraph: stats not kept (--stats FILE keeps them)");
  EXPECT_EQ(rmdir(tmp.c_str()), 0) << "the launcher left files in " << tmp;
}

TEST(LauncherRun, AtLogLevelInfoTheShimsLineIsTheOnlyOne) {
  // The shim prints its mode and configuration at start and its summary at exit; the launcher
  // does not print the summary again.
  const std::string tmp = temp_path("tmpdir-info");
  ASSERT_EQ(mkdir(tmp.c_str(), 0755), 0);
  RunResult r = pygraph({"run", "--", LAUNCHER_PROGRAM, "loop"},
                        {{"TMPDIR", tmp}, {"PYGRAPH_LOG_LEVEL", "info"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> err = lines(r.err);
  ASSERT_EQ(err.size(), 3u) << r.err;
  EXPECT_EQ(err[0].rfind("pygraph: graph mode; configuration: ", 0), 0u) << err[0];
  EXPECT_TRUE(std::regex_match(err[1], kLoopSummary)) << err[1];
  EXPECT_EQ(err[2], "pygraph: stats not kept (--stats FILE keeps them)");
  EXPECT_EQ(rmdir(tmp.c_str()), 0) << "the launcher left files in " << tmp;
}

TEST(LauncherRun, StatsFileIsKeptAndTheSummaryIsItsFigures) {
  const std::string stats = temp_path("stats.json");
  RunResult r = pygraph({"run", "--stats", stats, LAUNCHER_PROGRAM, "loop"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(std::ifstream(stats), nullptr, false);
  unlink(stats.c_str());
  ASSERT_TRUE(doc.is_object()) << r.err;
  const std::vector<std::string> err = lines(r.err);
  ASSERT_EQ(err.size(), 2u) << r.err;
  EXPECT_TRUE(std::regex_match(err[0], kLoopSummary)) << err[0];
  const auto& launches = doc["launches"];
  char coverage[64];
  std::snprintf(coverage, sizeof coverage, "%.1f %% of %lld launches",
                100.0 * launches["replayed_in_graphs"].get<double>() /
                    launches["seen_by_engine"].get<double>(),
                launches["seen_by_engine"].get<long long>());
  EXPECT_NE(err[0].find(coverage), std::string::npos) << err[0];
  EXPECT_NE(
      err[0].find("(" + std::to_string(doc["graphs"]["instantiated"].get<int>()) + " graphs, " +
                  std::to_string(doc["graphs"]["replays"].get<int>()) + " replays)"),
      std::string::npos)
      << err[0];
  EXPECT_EQ(err[1], "pygraph: stats in " + stats);
}

TEST(LauncherRun, EveryProcessGetsALine) {
  const std::string dir = temp_path("stats-dir");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  RunResult r = pygraph({"run", "--stats=" + dir + "/s-%p.json", LAUNCHER_PROGRAM, "fork", "loop"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> err = lines(r.err);
  ASSERT_EQ(err.size(), 3u) << r.err;
  // The program's own first, then its child's; each names its file.
  for (int i = 0; i < 2; ++i) {
    std::smatch m;
    ASSERT_TRUE(
        std::regex_match(err[i], m, std::regex(R"(pygraph: \[pid ([0-9]+)\] graph mode: .*)")))
        << err[i];
    EXPECT_EQ(unlink((dir + "/s-" + m[1].str() + ".json").c_str()), 0) << err[i];
  }
  EXPECT_EQ(err[2], "pygraph: stats in " + dir + "/s-%p.json (%p: process id)");
  rmdir(dir.c_str());
}

TEST(LauncherRun, ExitStatusIsTheProgramsAndTheSummaryStillComes) {
  RunResult r = pygraph({"run", "--", LAUNCHER_PROGRAM, "loop", "exit=7"});
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_TRUE(std::regex_search(r.err, kLoopSummary)) << r.err;
  r = pygraph({"run", "--", LAUNCHER_PROGRAM, "exit=0"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err,
            "pygraph: no stats were written (the program made no CUDA call, or did not exit "
            "normally)\npygraph: stats not kept (--stats FILE keeps them)\n");
}

// Runs the launcher with stderr to a file, returning its pid.
pid_t spawn(const std::vector<std::string>& args, const std::string& err_path) {
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("LD_LIBRARY_PATH", STANDIN_DIR, 1);
    FILE* err = std::freopen(err_path.c_str(), "w", stderr);
    (void)err;
    std::vector<char*> argv = {const_cast<char*>(PYGRAPH_LAUNCHER)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(LauncherRun, TheProgramsSignalIsThePygraphs) {
  const std::string err = temp_path("err");
  const pid_t pid = spawn({"run", LAUNCHER_PROGRAM, "loop", "signal=15"}, err);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_NE(slurp(err).find("pygraph: no stats were written"), std::string::npos) << slurp(err);
  unlink(err.c_str());
}

TEST(LauncherRun, ASignalSentToPygraphReachesTheProgram) {
  const std::string err = temp_path("err"), ready = temp_path("ready");
  const pid_t pid = spawn({"run", LAUNCHER_PROGRAM, "loop", "ready=" + ready}, err);
  for (int i = 0; i < 2000 && access(ready.c_str(), F_OK) != 0; ++i) usleep(5000);
  ASSERT_EQ(access(ready.c_str(), F_OK), 0) << slurp(err);
  // The program waits in pause(): only the forwarded signal ends it, and with it pygraph.
  kill(pid, SIGUSR1);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGUSR1);
  EXPECT_NE(slurp(err).find("pygraph: no stats were written"), std::string::npos) << slurp(err);
  unlink(err.c_str());
  unlink(ready.c_str());
}

TEST(LauncherRun, PreloadsTheShimFirstAndPassesItsOptions) {
  const std::string trace_name = "pygraph-launcher-test-" + std::to_string(getpid()) + ".trace";
  RunResult r = pygraph({"run", "--mode", "trace", "--trace", trace_name, "--", LAUNCHER_PROGRAM,
                         "env=LD_PRELOAD", "env=PYGRAPH_MODE", "env=PYGRAPH_TRACE", "loop"},
                        {{"LD_PRELOAD", "libm.so.6"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  const std::string trace = std::string(cwd) + "/" + trace_name;
  char shim[4096];
  ASSERT_NE(realpath(PYGRAPH_SHIM, shim), nullptr);
  EXPECT_EQ(r.out, "LD_PRELOAD=" + std::string(shim) + ":libm.so.6\nPYGRAPH_MODE=trace\n" +
                       "PYGRAPH_TRACE=" + trace + "\ndone\n");
  EXPECT_EQ(access(trace.c_str(), F_OK), 0) << "no trace at " << trace;
  unlink(trace.c_str());
  EXPECT_EQ(r.err,
            "pygraph: trace mode: 160 launches, passed through\n"
            "pygraph: stats not kept (--stats FILE keeps them)\n");
  // Already preloaded: once is enough.
  r = pygraph({"run", LAUNCHER_PROGRAM, "env=LD_PRELOAD"}, {{"LD_PRELOAD", shim}});
  EXPECT_EQ(r.out, "LD_PRELOAD=" + std::string(shim) + "\ndone\n");
}

TEST(LauncherRun, ABadConfigurationPassesThroughWithOneMessage) {
  const std::string config = write_file("bad.json", R"({"mode": "graph", "first_chunk": 0})");
  RunResult r = pygraph({"run", "--config", config, "--", LAUNCHER_PROGRAM, "loop"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "done\n");
  EXPECT_EQ(r.err, "pygraph: " + config +
                       ": \"first_chunk\": 0 is not a whole number from 1 to 4096; running in "
                       "off mode (passthrough)\n"
                       "pygraph: off mode: everything passed through\n"
                       "pygraph: stats not kept (--stats FILE keeps them)\n");
  unlink(config.c_str());
}

TEST(LauncherRun, StrictStopsTheProgramAtItsFirstCudaCall) {
  const std::string config = write_file("bad.json", "{\"mode\": \"graph\",}");
  RunResult r = pygraph({"run", "--config", config, "--", LAUNCHER_PROGRAM, "env=HOME", "loop"},
                        {{"PYGRAPH_STRICT", "1"}, {"HOME", "/home"}});
  EXPECT_EQ(r.exit_code, 78);
  EXPECT_EQ(r.out, "HOME=/home\n");  // what it printed before its first CUDA call, and no more
  EXPECT_EQ(r.err, "pygraph: PYGRAPH_CONFIG='" + config +
                       "' is not valid JSON: line 1, column 18: syntax error while parsing "
                       "object key - unexpected '}'; expected string literal; stopping the "
                       "process (strict)\n"
                       "pygraph: no stats were written (the program made no CUDA call, or did "
                       "not exit normally)\n"
                       "pygraph: stats not kept (--stats FILE keeps them)\n");
  unlink(config.c_str());
}

TEST(LauncherRun, MistakesOnTheCommandLineStopBeforeAnythingRuns) {
  RunResult r = pygraph({"run", "--mode", "turbo", "--", LAUNCHER_PROGRAM});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(lines(r.err)[0], "pygraph run: --mode 'turbo' is not one of: graph, trace, off");
  r = pygraph({"run", "--stats"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines(r.err)[0], "pygraph run: '--stats' needs a value");
  r = pygraph({"run", "--frobnicate", "1", LAUNCHER_PROGRAM});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines(r.err)[0], "pygraph run: unknown option '--frobnicate'");
  r = pygraph({"run"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines(r.err)[0], "pygraph run: no program to run");
  r = pygraph({"run", "/nonexistent/program"});
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_EQ(r.err, "pygraph: cannot run '/nonexistent/program': No such file or directory\n");
  r = pygraph({"launch"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines(r.err)[0], "pygraph: unknown command 'launch'");
}

TEST(LauncherHelp, SaysHowWithExamples) {
  RunResult r = pygraph({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
  for (const char* part :
       {"pygraph run [--config F] [--stats F] [--trace F] [--mode M] [--]",
        "pygraph config [--config F]", "examples:", "pygraph run -- python train.py"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part;
  }
  EXPECT_EQ(pygraph({"run", "--help"}).out, r.out);
}

TEST(LauncherConfig, ShowsEachValueAndItsSource) {
  const std::string config = write_file("c.json", R"({"mode": "trace", "first_chunk": 8})");
  RunResult r = pygraph({"config", "--config", config},
                        {{"PYGRAPH_FIRST_CHUNK", "4"}, {"PYGRAPH_STATS", "/tmp/s.json"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  auto row = [&](const std::string& key) {
    for (const std::string& line : lines(r.out)) {
      if (line.rfind(key + " ", 0) == 0) {
        // Columns apart: "key value source".
        return std::regex_replace(line, std::regex(" {2,}"), " | ");
      }
    }
    return std::string("(no row)");
  };
  EXPECT_EQ(row("mode"), "mode | trace | file " + config);
  EXPECT_EQ(row("first_chunk"), "first_chunk | 4 | environment PYGRAPH_FIRST_CHUNK");
  EXPECT_EQ(row("stats"), "stats | /tmp/s.json | environment PYGRAPH_STATS");
  EXPECT_EQ(row("max_chunk"), "max_chunk | 128 | default");
  EXPECT_EQ(row("trace"), "trace | (none) | default");
  EXPECT_EQ(row("config"), "config | " + config + " | environment PYGRAPH_CONFIG");
  EXPECT_EQ(lines(r.out).size(), kOptions.size());  // one row per option
  // As a file: read back, the same values.
  r = pygraph({"config", "--config", config, "--json"}, {{"PYGRAPH_FIRST_CHUNK", "4"}});
  const nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << r.out;
  EXPECT_EQ(doc["mode"], "trace");
  EXPECT_EQ(doc["first_chunk"], 4);
  EXPECT_FALSE(doc.contains("config"));
  unlink(config.c_str());
}

TEST(LauncherConfig, ProblemsGoToStderrAndErrorsExitOne) {
  const std::string config = write_file("c.json", R"({"mode": "fast", "frist_chunk": 3})");
  RunResult r = pygraph({"config", "--config=" + config});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "pygraph: " + config +
                       ": \"frist_chunk\" is not a pygraph option (did you mean "
                       "\"first_chunk\"?); ignored\n"
                       "pygraph: " +
                       config +
                       ": \"mode\": \"fast\" is not one of: graph, trace, off; running in off "
                       "mode (passthrough)\n");
  EXPECT_NE(r.out.find("off because of the configuration errors"), std::string::npos) << r.out;
  unlink(config.c_str());
}

}  // namespace
}  // namespace pygraph::test
