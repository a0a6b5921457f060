// The one table of options. Everything that reads, checks, documents or shows an option works
// from it: the file parser and the environment reader (config_file.cpp, config_env.cpp), the
// table of config/README.md and config/pygraph.json (option_docs.cpp, checked by a test), and
// `pygraph config`. Adding an option is one row here and one field in Config.
#pragma once

#include <span>
#include <string>
#include <variant>
#include <vector>

#include "options/config.h"

namespace pygraph {

// Where an option's value lives in Config. The field's type is the option's type:
//   Mode        one of the mode names (graph, trace, off)
//   LogLevel    one of the level names (error, info, debug)
//   bool        0 or 1 in the environment, false or true in the file
//   unsigned    a whole number in [lo, hi]
//   double      a decimal number in [lo, hi]
//   std::string a path; empty: none
//   std::vector<std::string>  glob patterns: a list of strings in the file, comma-separated in
//               the environment
using OptionField =
    std::variant<Mode Config::*, LogLevel Config::*, bool Config::*, unsigned Config::*,
                 double Config::*, std::string Config::*, std::vector<std::string> Config::*>;

struct OptionSpec {
  const char* key;            // in the file; the environment variable is PYGRAPH_<KEY>
  OptionField field;          // where the value goes; its type is the option's type
  const char* default_value;  // written as in the environment
  double lo, hi;              // whole and decimal numbers: the accepted range
  const char* doc;            // one line, for config/README.md
  bool env_only;              // PYGRAPH_CONFIG names the file, so the file cannot hold it
};

// Every option, in the order they are documented.
extern const std::span<const OptionSpec> kOptions;
extern const int kOptionCount;

// The option with this key (lower snake case), or nullptr.
const OptionSpec* find_option(const std::string& key);
int option_index(const OptionSpec& option);

// PYGRAPH_<KEY>.
std::string env_name(const OptionSpec& option);

}  // namespace pygraph
