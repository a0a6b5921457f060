// The option an unknown key was most likely meant to be, for "did you mean" in its warning.
#pragma once

#include <string>

#include "options/option_table.h"

namespace pygraph {

// Edit distance (insertions, deletions, substitutions and swaps of neighbours, as typos go).
size_t edit_distance(const std::string& a, const std::string& b);

// The option closest to `key` by edit distance, case, a PYGRAPH_ prefix and dashes aside (a
// file written with variable names still finds its options); the first in table order on ties.
// Options that only the environment sets count only when `env` is true.
const OptionSpec& closest_option(const std::string& key, bool env);

// Why an option that pygraph once had is gone (matched as closest_option matches), or null: a
// config written for an older pygraph learns that, not a "did you mean" for another option.
const char* retired_option(const std::string& key);

// What the warning about a key that names no option says of it, after where it was found and
// before "; ignored": why it was removed (retired_option), or the option it was most likely
// meant to be, named as a variable (`env`: PYGRAPH_X) or as a file's key ("x").
std::string unknown_option_text(const std::string& key, bool env);

}  // namespace pygraph
