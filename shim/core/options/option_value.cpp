#include "options/option_value.h"

#include <charconv>
#include <cstdio>

namespace pygraph {
namespace {

constexpr Mode kModes[] = {Mode::kGraph, Mode::kTrace, Mode::kOff};
constexpr LogLevel kLevels[] = {LogLevel::kError, LogLevel::kInfo, LogLevel::kDebug};

// "graph, trace, off" (`quote`: "`graph`, `trace`, `off`"): an enum option's names, in order.
template <class E, size_t N>
std::string names_of(const E (&values)[N], const char* (*name_of)(E), const char* quote = "") {
  std::string out;
  for (E v : values) out += (out.empty() ? "" : ", ") + (quote + std::string(name_of(v))) + quote;
  return out;
}

std::string number_text(double v) {
  // Room for any double in fixed notation (the smallest have over 300 digits).
  char buf[512];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return ec == std::errc() ? std::string(buf, end) : "?";
}

std::string range_text(const OptionSpec& o) {
  return number_text(o.lo) + " to " + number_text(o.hi);
}

bool all_digits(const std::string& s, size_t from, size_t to) {
  if (from >= to) return false;
  for (size_t i = from; i < to; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

// Patterns and paths go to fnmatch and fopen as C strings: a NUL would cut them short silently.
bool has_nul(const std::string& s) {
  return s.find('\0') != std::string::npos;
}

// The typed setters, shared by both sources once the value is in hand.
struct Setter {
  const OptionSpec& o;
  Config* config;
  std::string* problem;

  // A named value of an enum option (the mode, the log level).
  template <class E, size_t N>
  bool one_of(const std::string& name, const E (&values)[N], const char* (*name_of)(E)) {
    for (E v : values) {
      if (name == name_of(v)) {
        config->*std::get<E Config::*>(o.field) = v;
        return true;
      }
    }
    *problem = "is not one of: " + names_of(values, name_of);
    return false;
  }
  bool mode(const std::string& name) { return one_of(name, kModes, mode_name); }
  bool level(const std::string& name) { return one_of(name, kLevels, log_level_name); }
  bool count(unsigned long long v, bool ok) {
    if (!ok || v < o.lo || v > o.hi) {
      *problem = "is not a whole number from " + range_text(o);
      return false;
    }
    config->*std::get<unsigned Config::*>(o.field) = static_cast<unsigned>(v);
    return true;
  }
  bool number(double v, bool ok) {
    // Written this way round so that a NaN fails too.
    if (!ok || !(v >= o.lo && v <= o.hi)) {
      *problem = "is not a number from " + range_text(o);
      return false;
    }
    config->*std::get<double Config::*>(o.field) = v;
    return true;
  }
  bool path(const std::string& v) {
    if (has_nul(v)) {
      *problem = "is not a path (it holds a NUL character)";
      return false;
    }
    config->*std::get<std::string Config::*>(o.field) = v;
    return true;
  }
  bool patterns(std::vector<std::string> v) {
    for (const std::string& p : v) {
      if (p.empty() || has_nul(p)) {
        *problem = "is not a list of glob patterns (each non-empty, without NUL)";
        return false;
      }
    }
    config->*std::get<std::vector<std::string> Config::*>(o.field) = std::move(v);
    return true;
  }
};

}  // namespace

bool set_from_text(const OptionSpec& o, const std::string& text, Config* config,
                   std::string* problem) {
  Setter set{o, config, problem};
  if (std::holds_alternative<Mode Config::*>(o.field)) return set.mode(text);
  if (std::holds_alternative<LogLevel Config::*>(o.field)) return set.level(text);
  if (auto f = std::get_if<bool Config::*>(&o.field)) {
    if (text != "0" && text != "1") {
      *problem = "is not 0 or 1";
      return false;
    }
    config->** f = text == "1";
    return true;
  }
  if (std::holds_alternative<unsigned Config::*>(o.field)) {
    unsigned long long v = 0;
    const bool digits = all_digits(text, 0, text.size());
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    return set.count(v, digits && ec == std::errc());
  }
  if (std::holds_alternative<double Config::*>(o.field)) {
    // Plain decimals only ("2", "0.5"): no sign, exponent, hex, inf or nan.
    const size_t dot = text.find('.');
    const bool plain = dot == std::string::npos
                           ? all_digits(text, 0, text.size())
                           : all_digits(text, 0, dot) && all_digits(text, dot + 1, text.size());
    double v = 0;
    const auto [end, ec] =
        std::from_chars(text.data(), text.data() + text.size(), v, std::chars_format::fixed);
    return set.number(v, plain && ec == std::errc() && end == text.data() + text.size());
  }
  if (std::holds_alternative<std::string Config::*>(o.field)) return set.path(text);
  std::vector<std::string> patterns;
  for (size_t at = 0; !text.empty() && at <= text.size();) {
    const size_t comma = std::min(text.find(',', at), text.size());
    patterns.push_back(text.substr(at, comma - at));
    at = comma + 1;
  }
  return set.patterns(std::move(patterns));
}

bool set_from_json(const OptionSpec& o, const nlohmann::json& value, Config* config,
                   std::string* problem) {
  Setter set{o, config, problem};
  if (std::holds_alternative<Mode Config::*>(o.field)) {
    return set.mode(value.is_string() ? value.get<std::string>() : std::string());
  }
  if (std::holds_alternative<LogLevel Config::*>(o.field)) {
    return set.level(value.is_string() ? value.get<std::string>() : std::string());
  }
  if (auto f = std::get_if<bool Config::*>(&o.field)) {
    if (!value.is_boolean()) {
      *problem = "is not true or false";
      return false;
    }
    config->** f = value.get<bool>();
    return true;
  }
  if (std::holds_alternative<unsigned Config::*>(o.field)) {
    const bool whole = value.is_number_unsigned();
    return set.count(whole ? value.get<unsigned long long>() : 0, whole);
  }
  if (std::holds_alternative<double Config::*>(o.field)) {
    return set.number(value.is_number() ? value.get<double>() : 0, value.is_number());
  }
  if (std::holds_alternative<std::string Config::*>(o.field)) {
    if (!value.is_string()) {
      *problem = "is not a string";
      return false;
    }
    return set.path(value.get<std::string>());
  }
  std::vector<std::string> patterns;
  bool strings = value.is_array();
  for (size_t i = 0; strings && i < value.size(); ++i) {
    strings = value[i].is_string();
    if (strings) patterns.push_back(value[i].get<std::string>());
  }
  if (!strings) {
    *problem = "is not a list of glob patterns (each non-empty, without NUL)";
    return false;
  }
  return set.patterns(std::move(patterns));
}

std::string value_text(const OptionSpec& o, const Config& config) {
  if (auto f = std::get_if<Mode Config::*>(&o.field)) return mode_name(config.**f);
  if (auto f = std::get_if<LogLevel Config::*>(&o.field)) return log_level_name(config.**f);
  if (auto f = std::get_if<bool Config::*>(&o.field)) return config.**f ? "1" : "0";
  if (auto f = std::get_if<unsigned Config::*>(&o.field)) return std::to_string(config.**f);
  if (auto f = std::get_if<double Config::*>(&o.field)) return number_text(config.**f);
  if (auto f = std::get_if<std::string Config::*>(&o.field)) return config.**f;
  std::string joined;
  for (const std::string& p : config.*std::get<std::vector<std::string> Config::*>(o.field)) {
    joined += (joined.empty() ? "" : ",") + p;
  }
  return joined;
}

nlohmann::ordered_json value_json(const OptionSpec& o, const Config& config) {
  if (auto f = std::get_if<Mode Config::*>(&o.field)) return mode_name(config.**f);
  if (auto f = std::get_if<LogLevel Config::*>(&o.field)) return log_level_name(config.**f);
  if (auto f = std::get_if<bool Config::*>(&o.field)) return config.**f;
  if (auto f = std::get_if<unsigned Config::*>(&o.field)) return config.**f;
  if (auto f = std::get_if<double Config::*>(&o.field)) return config.**f;
  if (auto f = std::get_if<std::string Config::*>(&o.field)) return config.**f;
  return config.*std::get<std::vector<std::string> Config::*>(o.field);
}

std::string accepted_values(const OptionSpec& o) {
  if (std::holds_alternative<Mode Config::*>(o.field)) return names_of(kModes, mode_name, "`");
  if (std::holds_alternative<LogLevel Config::*>(o.field)) {
    return names_of(kLevels, log_level_name, "`");
  }
  if (std::holds_alternative<bool Config::*>(o.field)) return "`0`, `1` (file: `false`, `true`)";
  if (std::holds_alternative<unsigned Config::*>(o.field)) return "whole number, " + range_text(o);
  if (std::holds_alternative<double Config::*>(o.field)) return "number, " + range_text(o);
  if (std::holds_alternative<std::string Config::*>(o.field)) return "path";
  return "glob patterns (file: a list of strings; environment: separated by commas)";
}

std::string escaped(const std::string& text) {
  constexpr size_t kMax = 100;
  std::string out;
  for (size_t i = 0; i < text.size() && i < kMax; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c == 0x7f) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02x", c);
      out += esc;
    } else {
      out += static_cast<char>(c);
    }
  }
  return text.size() > kMax ? out + "..." : out;
}

std::string in_quotes(const std::string& text) {
  std::string out = "'";
  for (char c : escaped(text)) out += c == '\'' ? std::string("\\'") : std::string(1, c);
  return out + "'";
}

}  // namespace pygraph
