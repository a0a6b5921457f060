// One option's value in and out: checked from the environment's text or the file's JSON, and
// written back as either. The option's type is its field's type (option_table.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "options/option_table.h"

namespace pygraph {

// Sets `option` in `config` from its variable's text. On a bad value, `config` is unchanged and
// `problem` says what is wrong, to follow the value ("is not a whole number from 1 to 128").
bool set_from_text(const OptionSpec& option, const std::string& text, Config* config,
                   std::string* problem);

// The same from the file's JSON value.
bool set_from_json(const OptionSpec& option, const nlohmann::json& value, Config* config,
                   std::string* problem);

// The value as the environment would say it ("graph", "1", "0.5", "a*,b*"; "" for none).
std::string value_text(const OptionSpec& option, const Config& config);

// The value as the file says it.
nlohmann::ordered_json value_json(const OptionSpec& option, const Config& config);

// What the option takes, in Markdown ("`graph`, `trace`, `off`"; "1 to 1000").
std::string accepted_values(const OptionSpec& option);

// Text from outside (a value, a name, a path) made safe for a message of one line: control
// characters and backslashes escaped, long text cut ("...").
std::string escaped(const std::string& text);
// The same in single quotes (quotes inside escaped).
std::string in_quotes(const std::string& text);

}  // namespace pygraph
