#include "usage.h"

namespace pygraph::launcher {

const char kUsage[] =
    R"(pygraph: run a program with libpygraph.so preloaded, and see what graph mode did.

usage:
  pygraph run [--config F] [--stats F] [--trace F] [--mode M] [--] PROGRAM [ARGS...]
      Runs PROGRAM with libpygraph.so (beside this executable) first in LD_PRELOAD. The options
      become PYGRAPH_CONFIG, PYGRAPH_STATS, PYGRAPH_TRACE and PYGRAPH_MODE for it; other
      PYGRAPH_* variables pass through. At exit, a summary on stderr: coverage, graphs, replays,
      the top reasons for eager launches, and where the stats went (without --stats or a stats
      path in the configuration, they go to a temporary file, removed after the summary).
      The program's exit status (or signal) is pygraph's.
  pygraph config [--config F] [--json | --markdown]
      Prints the configuration a program would get here: each option, its value, and where the
      value comes from (default, file, environment); problems on stderr, exit status 1 if there
      are errors. --json: as a configuration file. --markdown: the table of all options, as in
      config/README.md.
  pygraph --help

examples:
  pygraph run -- python train.py --epochs 3
  pygraph run --stats run.json --mode graph -- python train.py
  pygraph run --config my.json --trace /tmp/train-%p.trace -- torchrun --nproc-per-node 2 train.py
  PYGRAPH_FIRST_CHUNK=8 pygraph config --config my.json
  pygraph config --json > my.json        # a configuration file to edit

Plain LD_PRELOAD=/path/to/libpygraph.so works as well; options: config/README.md.
)";

}  // namespace pygraph::launcher
