// `pygraph run`: the program under the shim, then a summary of what graph mode did.
#pragma once

namespace pygraph::launcher {

// argv: the arguments after "run". Returns the exit status to leave with, or ends this process
// with the program's signal.
int run_command(int argc, char** argv);

}  // namespace pygraph::launcher
