#include "run_command.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "child_process.h"
#include "graph/stats_summary.h"
#include "options/config.h"
#include "options/option_table.h"
#include "options/option_value.h"
#include "preload.h"
#include "stats_summary.h"
#include "usage.h"

namespace pygraph::launcher {
namespace {

constexpr size_t kMaxSummarized = 8;  // processes summarized one by one; the rest are counted

// The program runs where pygraph was run, but may change directory before its first CUDA call.
std::string absolute(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  char cwd[4096];
  return getcwd(cwd, sizeof cwd) ? std::string(cwd) + "/" + path : path;
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "pygraph run: %s\n\n%s", message.c_str(), pygraph::launcher::kUsage);
  return 2;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A directory of our own for the stats when the user asked for none.
std::string temporary_stats_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/pygraph-run-XXXXXX";
  return mkdtemp(dir.data()) ? dir : "";
}

// `shim_said`: each process's shim printed its own line at exit (log_level info or debug).
void summarize(const std::string& destination, bool temporary, pid_t pid, time_t since,
               bool shim_said) {
  if (destination == "stderr") {
    std::fprintf(stderr, "pygraph: the stats went to stderr\n");
    return;
  }
  const std::vector<StatsFile> files = stats_files(destination, pid, since);
  if (files.empty()) {
    std::fprintf(stderr,
                 "pygraph: no stats were written (the program made no CUDA call, or did not "
                 "exit normally)\n");
  }
  for (size_t i = 0; i < files.size() && i < kMaxSummarized && !shim_said; ++i) {
    const std::string line = stats_summary_line(slurp(files[i].path));
    const std::string who = files.size() > 1 ? "[pid " + std::to_string(files[i].pid) + "] " : "";
    std::fprintf(stderr, "pygraph: %s%s\n", who.c_str(),
                 line.empty() ? ("not a stats document: " + files[i].path).c_str() : line.c_str());
  }
  if (files.size() > kMaxSummarized && !shim_said) {
    std::fprintf(stderr, "pygraph: and %zu more processes\n", files.size() - kMaxSummarized);
  }
  if (temporary) {
    for (const StatsFile& f : stats_files(destination, pid, 0)) unlink(f.path.c_str());
    rmdir(destination.substr(0, destination.rfind('/')).c_str());
    std::fprintf(stderr, "pygraph: stats not kept (--stats FILE keeps them)\n");
  } else if (files.size() == 1) {
    std::fprintf(stderr, "pygraph: stats in %s\n", files[0].path.c_str());
  } else if (!files.empty()) {
    std::fprintf(stderr, "pygraph: stats in %s (%%p: process id)\n", destination.c_str());
  }
}

}  // namespace

int run_command(int argc, char** argv) {
  // Options become the variables the shim reads; the program's environment is ours otherwise.
  static const std::pair<const char*, const char*> kFlags[] = {
      {"--config", "PYGRAPH_CONFIG"},
      {"--stats", "PYGRAPH_STATS"},
      {"--trace", "PYGRAPH_TRACE"},
      {"--mode", "PYGRAPH_MODE"},
  };
  int i = 0;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a.empty() || a[0] != '-') break;
    std::string value;
    const size_t eq = a.find('=');
    if (eq != std::string::npos) {
      value = a.substr(eq + 1);
      a.resize(eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return usage_error("'" + a + "' needs a value");
    }
    const char* variable = nullptr;
    for (const auto& [flag, name] : kFlags) {
      if (a == flag) variable = name;
    }
    if (!variable) return usage_error("unknown option '" + a + "'");
    if (a == "--mode") {
      // A typo on the command line is caught here, before anything runs.
      Config scratch = default_config();
      std::string problem;
      if (!set_from_text(*find_option("mode"), value, &scratch, &problem)) {
        return usage_error("--mode " + in_quotes(value) + " " + problem);
      }
    } else if (!(a == "--stats" && value == "stderr")) {
      value = absolute(value);
    }
    setenv(variable, value.c_str(), 1);
  }
  if (i >= argc) return usage_error("no program to run");
  const std::vector<std::string> program(argv + i, argv + argc);

  const std::string library = shim_library();
  if (library.empty()) {
    std::fprintf(stderr, "pygraph: libpygraph.so is not beside this executable\n");
    return 2;
  }
  setenv("LD_PRELOAD", with_preload(std::getenv("LD_PRELOAD"), library).c_str(), 1);

  // Where the stats will go: the configuration's own choice, or a temporary file of ours. The
  // configuration's problems are left for the shim to report, once, in the program.
  const Config config = parse_config(process_config_sources()).config;
  std::string destination = config.stats_path;
  bool temporary = false;
  if (destination.empty()) {
    const std::string dir = temporary_stats_dir();
    if (!dir.empty()) {
      destination = dir + "/stats-%p.json";
      temporary = true;
      setenv("PYGRAPH_STATS", destination.c_str(), 1);
    }
  }

  const time_t since = std::time(nullptr);
  const ChildResult child = run_child(program);
  if (!child.started) {
    std::fprintf(stderr, "pygraph: cannot run '%s': %s\n", program[0].c_str(), child.error.c_str());
    if (temporary) rmdir(destination.substr(0, destination.rfind('/')).c_str());
    return 127;
  }
  if (!destination.empty()) {
    summarize(destination, temporary, child.pid, since, config.log_level >= LogLevel::kInfo);
  }
  exit_like(child.status);
}

}  // namespace pygraph::launcher
