// `pygraph --help`, and the usage lines its commands print on a bad argument.
#pragma once

namespace pygraph::launcher {

extern const char kUsage[];

}  // namespace pygraph::launcher
