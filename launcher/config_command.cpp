#include "config_command.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "options/config.h"
#include "options/option_docs.h"
#include "usage.h"

namespace pygraph::launcher {

int config_command(int argc, char** argv) {
  enum { kListing, kJson, kMarkdown } form = kListing;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") {
      form = kJson;
    } else if (a == "--markdown") {
      form = kMarkdown;
    } else if ((a == "--config" && i + 1 < argc) || a.rfind("--config=", 0) == 0) {
      const std::string path = a == "--config" ? argv[++i] : a.substr(9);
      setenv("PYGRAPH_CONFIG", path.c_str(), 1);
    } else {
      std::fprintf(stderr, "pygraph config: unexpected argument '%s'\n\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  if (form == kMarkdown) {
    std::fputs(options_markdown().c_str(), stdout);
    return 0;
  }
  const ConfigResult r = parse_config(process_config_sources());
  std::fputs((form == kJson ? config_json(r.config) : config_listing(r)).c_str(), stdout);
  std::fflush(stdout);
  for (const std::string& w : r.warnings) std::fprintf(stderr, "pygraph: %s\n", w.c_str());
  for (const std::string& e : r.errors) std::fprintf(stderr, "pygraph: %s\n", e.c_str());
  return r.errors.empty() ? 0 : 1;
}

}  // namespace pygraph::launcher
