#include "options/config_file.h"

#include "json_text.h"
#include "options/closest_option.h"
#include "options/option_value.h"

namespace pygraph {
namespace {

// A JSON value for a message: compact, one line, cut when long. Only its top level is written
// out, a nested array or object as [...] or {...}: dump() recurses, and a value nested a few
// hundred thousand deep (the parser takes it: it keeps its own stack) would overflow the stack
// of the user's thread.
std::string excerpt(const nlohmann::json& value) {
  constexpr size_t kMax = 100;
  const auto shallow = [](const nlohmann::json& v) -> std::string {
    if (v.is_array()) return v.empty() ? "[]" : "[...]";
    if (v.is_object()) return v.empty() ? "{}" : "{...}";
    return json_text(v);
  };
  std::string text;
  if (value.is_array() || value.is_object()) {
    text = value.is_array() ? "[" : "{";
    for (auto it = value.begin(); it != value.end() && text.size() <= kMax; ++it) {
      if (it != value.begin()) text += ",";
      if (value.is_object()) text += json_text(nlohmann::json(it.key())) + ":";
      text += shallow(*it);
    }
    text += value.is_array() ? "]" : "}";
  } else {
    text = json_text(value);
  }
  if (text.size() > kMax) {
    // Cut between characters: a UTF-8 character's continuation bytes are 10xxxxxx.
    size_t cut = kMax;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut) + "...";
  }
  return text;
}

// The parser's message without its exception tag: "line 3, column 1: syntax error ...".
std::string parse_problem(const nlohmann::json::exception& e) {
  std::string what = e.what();
  const size_t tag = what.find("] ");
  if (tag != std::string::npos) what.erase(0, tag + 2);
  if (what.rfind("parse error at ", 0) == 0) what.erase(0, 15);
  // The parser quotes what it read last, which may be any bytes: keep the line printable.
  for (char& c : what) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return what;
}

const char* json_type(const nlohmann::json& value) {
  return value.is_array() ? "an array" : value.is_string() ? "a string" : "a single value";
}

}  // namespace

void apply_config_file(const std::string& path, const ConfigSources& sources,
                       ConfigResult* result) {
  const std::string file = "PYGRAPH_CONFIG=" + in_quotes(path);
  std::string text, error;
  if (!sources.read_file(path, &text, &error)) {
    result->errors.push_back("cannot read " + file + ": " + error);
    return;
  }
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    result->errors.push_back(file + " is not valid JSON: " + parse_problem(e));
    return;
  }
  if (!doc.is_object()) {
    result->errors.push_back(file + " holds " + json_type(doc) +
                             ", not an object of options (see config/pygraph.json)");
    return;
  }
  for (const auto& [key, value] : doc.items()) {
    const std::string where = escaped(path) + ": " + excerpt(nlohmann::json(key));
    const OptionSpec* option = find_option(key);
    if (!option) {
      result->warnings.push_back(where + unknown_option_text(key, false) + "; ignored");
      continue;
    }
    if (option->env_only) {
      result->warnings.push_back(where + " can only be set in the environment (" +
                                 env_name(*option) + "); ignored");
      continue;
    }
    std::string problem;
    if (!set_from_json(*option, value, &result->config, &problem)) {
      result->errors.push_back(where + ": " + excerpt(value) + " " + problem);
      continue;
    }
    result->sources[option_index(*option)] = Source::kFile;
  }
}

}  // namespace pygraph
