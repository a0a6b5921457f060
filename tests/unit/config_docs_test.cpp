// The options written out: config/README.md's table and config/pygraph.json are exactly what the
// table gives (scripts/update-config-docs.sh rewrites them), and `pygraph config`'s listing.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "options/config.h"
#include "options/option_docs.h"
#include "options/option_table.h"
#include "options/option_value.h"

namespace pygraph {
namespace {

constexpr char kBegin[] = "<!-- options table: generated from shim/core/options/option_table.cpp";
constexpr char kEnd[] = "<!-- end of options table -->";

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

ConfigSources file_sources(const std::string& path, const std::string& text) {
  return {[path](const char* name) -> const char* {
            return std::string(name) == "PYGRAPH_CONFIG" ? path.c_str() : nullptr;
          },
          [] { return std::vector<std::string>{"PYGRAPH_CONFIG"}; },
          [text](const std::string&, std::string* out, std::string*) {
            *out = text;
            return true;
          }};
}

TEST(ConfigDocs, ReadmeTableIsTheTable) {
  const std::string doc = slurp(CONFIG_DIR "/README.md");
  const size_t begin = doc.find(kBegin);
  ASSERT_NE(begin, std::string::npos) << "config/README.md has no generated options table";
  const size_t start = doc.find('\n', begin) + 1;
  const size_t end = doc.find(kEnd, start);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(doc.substr(start, end - start), options_markdown())
      << "config/README.md's options table is out of date: run scripts/update-config-docs.sh";
}

TEST(ConfigDocs, DefaultFileHoldsEveryKeyAtItsDefault) {
  const std::string text = slurp(CONFIG_DIR "/pygraph.json");
  EXPECT_EQ(text, config_json(default_config()))
      << "config/pygraph.json is out of date: run scripts/update-config-docs.sh";
  ConfigResult r = parse_config(file_sources("pygraph.json", text));
  EXPECT_TRUE(r.errors.empty());
  EXPECT_TRUE(r.warnings.empty());
  for (int i = 0; i < kOptionCount; ++i) {
    EXPECT_EQ(r.sources[i], kOptions[i].env_only ? Source::kEnvironment : Source::kFile)
        << kOptions[i].key;
    if (!kOptions[i].env_only) {
      EXPECT_EQ(value_text(kOptions[i], r.config), kOptions[i].default_value) << kOptions[i].key;
    }
  }
}

TEST(ConfigDocs, AConfigWrittenOutReadsBackTheSame) {
  Config c = default_config();
  c.mode = Mode::kTrace;
  c.trace_path = "/tmp/t-%p";
  c.first_chunk = 7;
  c.min_gain_percent = 0.25;
  c.patch_grid = false;
  c.allow_kernels = {"gemm*", "*,odd"};  // a comma: the file's lists keep it
  ConfigResult r = parse_config(file_sources("c.json", config_json(c)));
  EXPECT_TRUE(r.errors.empty());
  for (const OptionSpec& o : kOptions) {
    if (!o.env_only) {
      EXPECT_EQ(value_text(o, r.config), value_text(o, c)) << o.key;
    }
  }
}

TEST(ConfigDocs, ListingShowsEachValueAndWhereItCameFrom) {
  ConfigSources s = file_sources("/etc/pg.json", R"({"first_chunk": 8, "mode": "fast"})");
  s.getenv = [](const char* name) -> const char* {
    if (std::string(name) == "PYGRAPH_CONFIG") return "/etc/pg.json";
    if (std::string(name) == "PYGRAPH_STATS") return "/tmp/s.json";
    return nullptr;
  };
  const std::string listing = config_listing(parse_config(s));
  auto line = [&](const std::string& key) {
    const size_t at = listing.find("\n" + key + " ");
    return at == std::string::npos ? ""
                                   : listing.substr(at + 1, listing.find('\n', at + 1) - at - 1);
  };
  EXPECT_EQ(listing.rfind("mode ", 0), 0u) << listing;
  EXPECT_NE(listing.find("off because of the configuration errors\n"), std::string::npos);
  EXPECT_NE(line("first_chunk").find(" 8 "), std::string::npos) << listing;
  EXPECT_NE(line("first_chunk").find("file /etc/pg.json"), std::string::npos) << listing;
  EXPECT_NE(line("stats").find("/tmp/s.json"), std::string::npos) << listing;
  EXPECT_NE(line("stats").find("environment PYGRAPH_STATS"), std::string::npos) << listing;
  EXPECT_NE(line("trace").find("(none)"), std::string::npos) << listing;
  EXPECT_NE(line("max_chunk").find("default"), std::string::npos) << listing;
  EXPECT_NE(line("config").find("environment PYGRAPH_CONFIG"), std::string::npos) << listing;
}

}  // namespace
}  // namespace pygraph
