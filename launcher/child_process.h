// Runs the program as a child and waits for it, passing on the signals meant for it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace pygraph::launcher {

struct ChildResult {
  bool started = false;  // false: exec failed, `error` says why
  std::string error;
  pid_t pid = 0;
  int status = 0;  // waitpid's status
};

// Runs `argv` (argv[0] looked up in PATH) in the current environment and waits for it.
// Meanwhile signals sent to this process with kill (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
// SIGUSR2) are passed on to the child; those the terminal sends go to its whole foreground
// group, the child included, so they are not sent again, and this process stays to report.
ChildResult run_child(const std::vector<std::string>& argv);

// Ends this process the way the child ended: the same exit status, or the same signal (without
// a core file: the child made its own).
[[noreturn]] void exit_like(int status);

}  // namespace pygraph::launcher
