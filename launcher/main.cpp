// pygraph: the command-line launcher (`pygraph run`, `pygraph config`). libpygraph.so works
// without it; it sets LD_PRELOAD and the options, and reads the stats back for a summary.
#include <cstdio>
#include <string>

#include "config_command.h"
#include "run_command.h"
#include "usage.h"

int main(int argc, char** argv) {
  using namespace pygraph::launcher;
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "run") return run_command(argc - 2, argv + 2);
  if (command == "config") return config_command(argc - 2, argv + 2);
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (!command.empty()) std::fprintf(stderr, "pygraph: unknown command '%s'\n\n", command.c_str());
  std::fputs(kUsage, stderr);
  return 2;
}
