// JSON as text, for every document pygraph writes or prints: a string that is no UTF-8 (a kernel
// name, a pattern or path from the environment) is written as U+FFFD, where nlohmann's default
// throws; inside the user's process, at exit, that would end the program.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace pygraph {

// `indent` as dump() takes it: -1 for one line.
template <class Json>
std::string json_text(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace pygraph
