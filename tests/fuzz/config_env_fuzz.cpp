// Fuzz target: the PYGRAPH_* environment variables. The input is lines NAME=VALUE (any bytes;
// a line without '=' is a name with an empty value); PYGRAPH_CONFIG, if named, reads a small
// fixed file, so that the variables meet values from a file.
#include <cstddef>
#include <cstdint>
#include <map>

#include "config_invariants.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pygraph;
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::map<std::string, std::string> env;
  for (size_t at = 0; at < input.size();) {
    const size_t end = std::min(input.find('\n', at), input.size());
    const std::string line = input.substr(at, end - at);
    const size_t eq = line.find('=');
    // Like a real environment: names hold no '=' and values no NUL.
    std::string value = eq == std::string::npos ? "" : line.substr(eq + 1);
    value = value.substr(0, value.find('\0'));
    env[line.substr(0, std::min(eq, line.find('\0')))] = value;
    at = end + 1;
  }
  ConfigSources s{[&env](const char* name) -> const char* {
                    auto it = env.find(name);
                    return it == env.end() ? nullptr : it->second.c_str();
                  },
                  [&env] {
                    std::vector<std::string> names;
                    for (const auto& [k, v] : env) names.push_back(k);
                    return names;
                  },
                  [](const std::string&, std::string* text, std::string*) {
                    *text = R"({"mode": "trace", "first_chunk": 64, "deny_kernels": ["*nccl*"]})";
                    return true;
                  }};
  fuzz::check_config(parse_config(s));
  return 0;
}
