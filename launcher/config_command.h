// `pygraph config`: the configuration a program would get, and where each value comes from.
#pragma once

namespace pygraph::launcher {

// argv: the arguments after "config". Returns the exit status.
int config_command(int argc, char** argv);

}  // namespace pygraph::launcher
