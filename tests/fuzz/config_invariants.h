// What must hold for any configuration parse_config returns, whatever it read. A fuzz target
// that finds one broken stops like a crash (abort), with the reason on stderr.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "options/config.h"
#include "options/option_docs.h"
#include "options/option_table.h"
#include "options/option_value.h"

namespace pygraph::fuzz {

inline void require(bool ok, const char* what, const std::string& detail = "") {
  if (ok) return;
  std::fprintf(stderr, "invariant broken: %s %s\n", what, detail.c_str());
  std::abort();
}

inline void check_config(const ConfigResult& r) {
  require(r.sources.size() == size_t(kOptionCount), "a source per option");
  for (const auto* lines : {&r.warnings, &r.errors}) {
    for (const std::string& line : *lines) {
      require(!line.empty(), "no empty message");
      for (char c : line)
        require(static_cast<unsigned char>(c) >= 0x20, "one printable line", line);
    }
  }
  const Config& c = r.config;
  if (!r.errors.empty()) {
    require(c.mode == Mode::kOff, "errors mean off mode");
    const std::string& last = r.errors.back();
    require(last.find(c.strict ? "(strict)" : "(passthrough)") != std::string::npos,
            "the last error says what happens", last);
  } else {
    // Every value is one its option takes: written as a variable, it is accepted as it is.
    for (const OptionSpec& o : kOptions) {
      // A pattern from the file may hold a comma, which reads back as two patterns.
      if (std::holds_alternative<std::vector<std::string> Config::*>(o.field)) continue;
      Config copy = c;
      std::string problem;
      require(set_from_text(o, value_text(o, c), &copy, &problem), "a value its option takes",
              std::string(o.key) + ": " + problem);
      require(value_text(o, copy) == value_text(o, c), "the same value read back", o.key);
    }
    require(c.first_chunk >= 1 && c.first_chunk <= c.max_chunk, "first_chunk <= max_chunk");
  }
  if (c.mode == Mode::kOff) require(c.trace_path.empty(), "no trace in off mode");
  // Writing it out never fails.
  require(!config_listing(r).empty(), "a listing");
  require(!config_json(c).empty(), "a file");
}

}  // namespace pygraph::fuzz
