// The configuration: defaults, the JSON file, the environment, their precedence, and every
// key's checks, through injected sources (no real environment or file is read).
#include "options/config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "options/option_table.h"
#include "options/option_value.h"

namespace pygraph {
namespace {

// An environment and files held in maps.
struct Fake {
  std::map<std::string, std::string> env;
  std::map<std::string, std::string> files;

  ConfigSources sources() {
    return {[this](const char* name) -> const char* {
              auto it = env.find(name);
              return it == env.end() ? nullptr : it->second.c_str();
            },
            [this] {
              std::vector<std::string> names;
              for (const auto& [k, v] : env) names.push_back(k);
              return names;
            },
            [this](const std::string& path, std::string* text, std::string* error) {
              auto it = files.find(path);
              if (it == files.end()) {
                *error = "No such file or directory";
                return false;
              }
              *text = it->second;
              return true;
            }};
  }
  ConfigResult parse() { return parse_config(sources()); }
};

// A configuration file at /cfg.json.
ConfigResult parse_file(const std::string& json, std::map<std::string, std::string> env = {}) {
  Fake f{std::move(env), {{"/cfg.json", json}}};
  f.env["PYGRAPH_CONFIG"] = "/cfg.json";
  return f.parse();
}

ConfigResult parse_env(std::map<std::string, std::string> env) {
  return Fake{std::move(env), {}}.parse();
}

std::string value(const ConfigResult& r, const char* key) {
  return value_text(*find_option(key), r.config);
}

Source source(const ConfigResult& r, const char* key) {
  return r.sources[option_index(*find_option(key))];
}

std::string upper(const std::string& key) {
  std::string u;
  for (char c : key) u += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

TEST(Config, DefaultsComeFromTheTable) {
  ConfigResult r = parse_env({});
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_TRUE(r.errors.empty());
  const Config& c = r.config;
  EXPECT_EQ(c.mode, Mode::kGraph);
  EXPECT_EQ(c.trace_path, "");
  EXPECT_EQ(c.stats_path, "");
  EXPECT_EQ(c.log_level, LogLevel::kError);
  EXPECT_EQ(c.min_repeats, 2u);
  EXPECT_EQ(c.first_chunk, 2u);
  EXPECT_EQ(c.max_chunk, 128u);
  EXPECT_EQ(c.chunk_growth, 2u);
  EXPECT_EQ(c.max_graphs, 1024u);
  EXPECT_EQ(c.max_sequences, 1024u);
  EXPECT_EQ(c.staging_mb, 4u);
  EXPECT_FALSE(c.one_launch_graphs);
  EXPECT_TRUE(c.early_head);
  EXPECT_TRUE(c.patch_grid);
  EXPECT_TRUE(c.streams);  // several streams in one graph: on since the GPU check of session 8
  EXPECT_EQ(c.min_gain_percent, 2.0);
  EXPECT_EQ(c.measure_windows, 0u);  // measured decisions off until checked on the GPU
  EXPECT_EQ(c.measure_iterations, 8u);
  EXPECT_EQ(c.allow_kernels, std::vector<std::string>{"*"});
  EXPECT_TRUE(c.deny_kernels.empty());
  EXPECT_EQ(c.cache_path, "");
  EXPECT_FALSE(c.strict);
  EXPECT_EQ(c.config_path, "");
  for (Source s : r.sources) EXPECT_EQ(s, Source::kDefault);
}

TEST(Config, EveryDefaultIsAValueItsOptionTakes) {
  for (const OptionSpec& o : kOptions) {
    Config c = default_config();
    std::string problem;
    EXPECT_TRUE(set_from_text(o, o.default_value, &c, &problem)) << o.key << ": " << problem;
    EXPECT_EQ(value_text(o, c), o.default_value) << o.key;
    EXPECT_GT(std::string(o.doc).size(), 20u) << o.key;
    EXPECT_EQ(find_option(o.key), &o);
    for (const char* c = o.key; *c; ++c) EXPECT_TRUE(std::islower(*c) || *c == '_') << o.key;
  }
}

// Each key: good values (as written, and as value_text then gives them back), and each kind of
// bad value, in the environment and in the file.
struct KeyCase {
  const char* key;
  std::vector<std::pair<std::string, std::string>> env_good;  // text -> value_text
  std::vector<std::string> env_bad;
  std::vector<std::pair<std::string, std::string>> file_good;  // JSON -> value_text
  std::vector<std::string> file_bad;                           // JSON
};

const std::vector<std::string> kNotAString = {"5", "null", "true", "[\"a\"]", "{}"};
const std::vector<std::string> kNotAFlag = {"1", "0", "\"1\"", "\"true\"", "null", "[]"};
const std::vector<std::string> kEnvNotAFlag = {"yes", "true", "2", " 1", "1 ", "01"};

std::vector<std::string> plus(std::vector<std::string> a, std::vector<std::string> b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const std::vector<KeyCase>& key_cases() {
  // Bad whole numbers every count shares: not digits, signs, blanks, decimals, overflow.
  const std::vector<std::string> env_not_count = {
      "x", "2x", " 4", "4 ", "-3", "+4", "1.5", "1e3", "0x10", "99999999999999999999"};
  const std::vector<std::string> json_not_count = {"2.5",  "-1",   "1e3", "\"5\"",
                                                   "true", "null", "[5]", "18446744073709551616"};
  const std::vector<std::string> pattern_env_bad = {",", "a,,b", "a,", ",a"};
  const std::vector<std::string> pattern_file_bad = {"\"a*\"", "[1]",  "[\"\"]", "[\"a\\u0000\"]",
                                                     "null",   "[[]]", "{}"};
  static const std::vector<KeyCase> cases = {
      {"mode",
       {{"graph", "graph"}, {"trace", "trace"}, {"off", "off"}},
       {"Trace", "turbo", " graph", "graph,trace"},
       {{"\"trace\"", "trace"}, {"\"off\"", "off"}},
       {"\"GRAPH\"", "1", "true", "null", "[\"graph\"]", "\"\""}},
      {"trace",
       {{"/tmp/x-%p.trace", "/tmp/x-%p.trace"}},
       {},
       {{"\"/tmp/t\"", "/tmp/t"}, {"\"\"", ""}},
       plus(kNotAString, {"\"a\\u0000b\""})},
      {"stats",
       {{"stderr", "stderr"}, {"/tmp/s-%p.json", "/tmp/s-%p.json"}},
       {},
       {{"\"stderr\"", "stderr"}},
       plus(kNotAString, {"\"a\\u0000b\""})},
      {"log_level",
       {{"error", "error"}, {"info", "info"}, {"debug", "debug"}},
       {"Debug", "1", "warn", " info", "info,debug"},
       {{"\"debug\"", "debug"}, {"\"info\"", "info"}},
       {"\"DEBUG\"", "1", "true", "null", "[\"info\"]", "\"\""}},
      {"min_repeats",
       {{"1", "1"}, {"1000", "1000"}, {"007", "7"}},
       plus(env_not_count, {"0", "1001"}),
       {{"5", "5"}},
       plus(json_not_count, {"0", "1001"})},
      {"first_chunk",
       {{"1", "1"}, {"128", "128"}},
       plus(env_not_count, {"0", "4097"}),
       {{"8", "8"}},
       plus(json_not_count, {"0", "4097"})},
      {"chunk_growth",
       {{"2", "2"}, {"64", "64"}},
       plus(env_not_count, {"0", "1", "65"}),
       {{"4", "4"}},
       plus(json_not_count, {"1", "65"})},
      {"max_chunk",
       {{"2", "2"}, {"4096", "4096"}},
       plus(env_not_count, {"0", "4097"}),
       {{"64", "64"}},
       plus(json_not_count, {"0", "4097"})},
      {"max_graphs",
       {{"1", "1"}, {"1000000", "1000000"}},
       plus(env_not_count, {"0", "1000001"}),
       {{"64", "64"}},
       plus(json_not_count, {"0", "1000001"})},
      {"max_sequences",
       {{"1", "1"}, {"1000000", "1000000"}},
       plus(env_not_count, {"0", "1000001"}),
       {{"10", "10"}},
       plus(json_not_count, {"0", "1000001"})},
      {"staging_mb",
       {{"0", "0"}, {"1024", "1024"}},
       plus(env_not_count, {"1025"}),
       {{"0", "0"}},
       plus(json_not_count, {"1025"})},
      {"stall_check_ms",
       {{"0", "0"}, {"2", "2"}, {"1000", "1000"}},
       plus(env_not_count, {"1001"}),
       {{"5", "5"}},
       plus(json_not_count, {"1001"})},
      {"pause_us",
       {{"0", "0"}, {"200", "200"}, {"1000000", "1000000"}},
       plus(env_not_count, {"1000001"}),
       {{"50", "50"}},
       plus(json_not_count, {"1000001"})},
      {"pause_gpu_us",
       {{"0", "0"}, {"100", "100"}, {"1000000", "1000000"}},
       plus(env_not_count, {"1000001"}),
       {{"300", "300"}},
       plus(json_not_count, {"1000001"})},
      {"pause_idle_ratio",
       {{"0", "0"}, {"2", "2"}, {"1000", "1000"}},
       plus(env_not_count, {"1001"}),
       {{"4", "4"}},
       plus(json_not_count, {"1001"})},
      {"tail_pause_us",
       {{"0", "0"}, {"20", "20"}, {"1000000", "1000000"}},
       plus(env_not_count, {"1000001"}),
       {{"40", "40"}},
       plus(json_not_count, {"1000001"})},
      {"restart_chunks", {{"0", "0"}, {"1", "1"}}, kEnvNotAFlag, {{"true", "1"}}, kNotAFlag},
      {"answer_queries", {{"0", "0"}, {"1", "1"}}, kEnvNotAFlag, {{"true", "1"}}, kNotAFlag},
      {"one_launch_graphs", {{"0", "0"}, {"1", "1"}}, kEnvNotAFlag, {{"true", "1"}}, kNotAFlag},
      {"early_head", {{"0", "0"}, {"1", "1"}}, kEnvNotAFlag, {{"true", "1"}}, kNotAFlag},
      {"patch_grid", {{"0", "0"}, {"1", "1"}}, kEnvNotAFlag, {{"false", "0"}}, kNotAFlag},
      {"streams", {{"0", "0"}, {"1", "1"}}, kEnvNotAFlag, {{"true", "1"}}, kNotAFlag},
      {"program_graphs", {{"0", "0"}, {"1", "1"}}, kEnvNotAFlag, {{"true", "1"}}, kNotAFlag},
      {"program_graph_launches",
       {{"1", "1"}, {"1000000", "1000000"}},
       plus(env_not_count, {"0", "1000001"}),
       {{"3", "3"}},
       plus(json_not_count, {"0", "1000001"})},
      {"min_gain_percent",
       {{"0", "0"}, {"2.5", "2.5"}, {"100", "100"}, {"05.50", "5.5"}},
       {"-1", "100.1", "1e2", "nan", "inf", ".5", "5.", "0x10", "2%", " 2", "1.2.3"},
       {{"2.5", "2.5"}, {"0", "0"}, {"100", "100"}},
       {"-0.5", "100.5", "101", "\"2\"", "true", "null", "[2]"}},
      {"measure_windows",
       {{"0", "0"}, {"1", "1"}, {"100", "100"}},
       plus(env_not_count, {"101"}),
       {{"5", "5"}, {"0", "0"}},
       plus(json_not_count, {"101"})},
      {"measure_iterations",
       {{"2", "2"}, {"10000", "10000"}},
       plus(env_not_count, {"0", "1", "10001"}),
       {{"20", "20"}},
       plus(json_not_count, {"1", "10001"})},
      {"allow_kernels",
       {{"*", "*"}, {"gemm*,*_kernel", "gemm*,*_kernel"}},
       pattern_env_bad,
       {{"[\"a*\", \"b\"]", "a*,b"}, {"[]", ""}},
       pattern_file_bad},
      {"deny_kernels",
       {{"*nccl*", "*nccl*"}, {"a,b,c", "a,b,c"}},
       pattern_env_bad,
       {{"[\"*softmax*\"]", "*softmax*"}},
       pattern_file_bad},
      {"cache",
       {{"/tmp/decisions.json", "/tmp/decisions.json"}},
       {},
       {{"\"/tmp/d.json\"", "/tmp/d.json"}},
       plus(kNotAString, {"\"a\\u0000b\""})},
      {"strict", {{"1", "1"}, {"0", "0"}}, kEnvNotAFlag, {{"true", "1"}}, kNotAFlag},
      // `config` names the file: its cases are the file tests below.
      {"config", {}, {}, {}, {}},
  };
  return cases;
}

TEST(ConfigKeys, EveryOptionHasCases) {
  ASSERT_EQ(key_cases().size(), size_t(kOptionCount));
  for (int i = 0; i < kOptionCount; ++i) EXPECT_STREQ(key_cases()[i].key, kOptions[i].key);
}

TEST(ConfigKeys, GoodEnvironmentValuesAreTaken) {
  for (const KeyCase& k : key_cases()) {
    for (const auto& [text, expect] : k.env_good) {
      ConfigResult r = parse_env({{"PYGRAPH_" + upper(k.key), text}});
      EXPECT_TRUE(r.errors.empty()) << k.key << "=" << text << ": " << r.errors[0];
      EXPECT_EQ(value(r, k.key), expect) << k.key << "=" << text;
      EXPECT_EQ(source(r, k.key), Source::kEnvironment) << k.key;
    }
  }
}

TEST(ConfigKeys, BadEnvironmentValuesAreOneErrorAndOffMode) {
  for (const KeyCase& k : key_cases()) {
    for (const std::string& text : k.env_bad) {
      const std::string name = "PYGRAPH_" + upper(k.key);
      ConfigResult r = parse_env({{name, text}});
      ASSERT_EQ(r.errors.size(), 1u) << name << "=" << text;
      EXPECT_EQ(r.errors[0].rfind(name + "=" + in_quotes(text) + " is not ", 0), 0u) << r.errors[0];
      EXPECT_NE(r.errors[0].find("; running in off mode (passthrough)"), std::string::npos);
      EXPECT_EQ(r.config.mode, Mode::kOff) << name << "=" << text;
      if (std::string(k.key) != "mode") {
        EXPECT_EQ(value(r, k.key), find_option(k.key)->default_value) << name << "=" << text;
        EXPECT_EQ(source(r, k.key), Source::kDefault) << name;
        EXPECT_EQ(source(r, "mode"), Source::kFallback) << name;
      }
    }
  }
}

TEST(ConfigKeys, GoodFileValuesAreTaken) {
  for (const KeyCase& k : key_cases()) {
    for (const auto& [json, expect] : k.file_good) {
      ConfigResult r = parse_file("{\"" + std::string(k.key) + "\": " + json + "}");
      EXPECT_TRUE(r.errors.empty()) << k.key << ": " << json << ": " << r.errors[0];
      EXPECT_TRUE(r.warnings.empty()) << k.key << ": " << json << ": " << r.warnings[0];
      EXPECT_EQ(value(r, k.key), expect) << k.key << ": " << json;
      EXPECT_EQ(source(r, k.key), Source::kFile) << k.key;
    }
  }
}

TEST(ConfigKeys, BadFileValuesNameFileKeyAndValue) {
  for (const KeyCase& k : key_cases()) {
    for (const std::string& json : k.file_bad) {
      ConfigResult r = parse_file("{\"" + std::string(k.key) + "\": " + json + "}");
      ASSERT_EQ(r.errors.size(), 1u) << k.key << ": " << json;
      const std::string where = std::string("/cfg.json: \"") + k.key + "\": ";
      EXPECT_EQ(r.errors[0].rfind(where, 0), 0u) << r.errors[0];
      EXPECT_NE(r.errors[0].find(" is not ", where.size()), std::string::npos) << r.errors[0];
      EXPECT_EQ(r.config.mode, Mode::kOff) << k.key << ": " << json;
      if (std::string(k.key) != "mode") {
        EXPECT_EQ(value(r, k.key), find_option(k.key)->default_value) << k.key << ": " << json;
      }
    }
  }
}

TEST(ConfigKeys, EnvironmentOverridesTheFile) {
  for (const KeyCase& k : key_cases()) {
    if (k.env_good.empty() || k.file_good.empty()) continue;
    const std::string name = "PYGRAPH_" + upper(k.key);
    const std::string file = "{\"" + std::string(k.key) + "\": " + k.file_good[0].first + "}";
    const auto& [text, expect] = k.env_good.back();
    ConfigResult r = parse_file(file, {{name, text}});
    EXPECT_TRUE(r.errors.empty()) << k.key;
    EXPECT_EQ(value(r, k.key), expect) << k.key;
    EXPECT_EQ(source(r, k.key), Source::kEnvironment) << k.key;
    // An empty variable is unset: the file's value stays.
    r = parse_file(file, {{name, ""}});
    EXPECT_EQ(value(r, k.key), k.file_good[0].second) << k.key;
    EXPECT_EQ(source(r, k.key), Source::kFile) << k.key;
    // A bad variable keeps the file's value (and the run passes through).
    if (!k.env_bad.empty() && std::string(k.key) != "mode") {
      r = parse_file(file, {{name, k.env_bad[0]}});
      EXPECT_EQ(r.errors.size(), 1u) << k.key;
      EXPECT_EQ(value(r, k.key), k.file_good[0].second) << k.key;
      EXPECT_EQ(source(r, k.key), Source::kFile) << k.key;
    }
  }
}

TEST(Config, TheFileAndTheEnvironmentTogether) {
  ConfigResult r = parse_file(R"({"mode": "trace", "first_chunk": 8, "deny_kernels": ["*nccl*"]})",
                              {{"PYGRAPH_FIRST_CHUNK", "4"}, {"PYGRAPH_LOG_LEVEL", "debug"}});
  EXPECT_TRUE(r.errors.empty());
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(r.config.mode, Mode::kTrace);
  EXPECT_EQ(r.config.first_chunk, 4u);
  EXPECT_EQ(r.config.log_level, LogLevel::kDebug);
  EXPECT_EQ(r.config.deny_kernels, std::vector<std::string>{"*nccl*"});
  EXPECT_EQ(r.config.config_path, "/cfg.json");
  EXPECT_EQ(source(r, "mode"), Source::kFile);
  EXPECT_EQ(source(r, "first_chunk"), Source::kEnvironment);
  EXPECT_EQ(source(r, "config"), Source::kEnvironment);
  EXPECT_EQ(source(r, "max_chunk"), Source::kDefault);
}

TEST(Config, UnknownModeIsOneLineAndPassthrough) {
  ConfigResult r = parse_env({{"PYGRAPH_MODE", "Trace"}, {"PYGRAPH_TRACE", "t"}});
  EXPECT_EQ(r.config.mode, Mode::kOff);
  EXPECT_EQ(r.config.trace_path, "");
  EXPECT_TRUE(r.warnings.empty());
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0],
            "PYGRAPH_MODE='Trace' is not one of: graph, trace, off; running in off mode "
            "(passthrough)");
}

TEST(Config, ExactErrorLines) {
  ConfigResult r = parse_env({{"PYGRAPH_MAX_GRAPHS", "0"}});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0],
            "PYGRAPH_MAX_GRAPHS='0' is not a whole number from 1 to 1000000; running in off mode "
            "(passthrough)");
  r = parse_file(R"({"first_chunk": 0})");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0],
            "/cfg.json: \"first_chunk\": 0 is not a whole number from 1 to 4096; running in off "
            "mode (passthrough)");
  // Values from outside stay on one line.
  r = parse_env({{"PYGRAPH_STRICT", "1\n2'"}});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].rfind("PYGRAPH_STRICT='1\\x0a2\\'' is not 0 or 1;", 0), 0u) << r.errors[0];
}

TEST(Config, SeveralErrorsOneLineEachTheLastSaysWhatHappens) {
  ConfigResult r =
      parse_file(R"({"min_repeats": 0, "staging_mb": "4"})", {{"PYGRAPH_PATCH_GRID", "yes"}});
  ASSERT_EQ(r.errors.size(), 3u);
  EXPECT_EQ(r.errors[0].find("passthrough"), std::string::npos);
  EXPECT_EQ(r.errors[1].find("passthrough"), std::string::npos);
  EXPECT_NE(r.errors[2].find("PYGRAPH_PATCH_GRID='yes'"), std::string::npos);
  EXPECT_NE(r.errors[2].find("; running in off mode (passthrough)"), std::string::npos);
}

TEST(Config, StrictSaysTheProcessStops) {
  ConfigResult r = parse_env({{"PYGRAPH_STRICT", "1"}, {"PYGRAPH_STAGING_MB", "lots"}});
  EXPECT_TRUE(r.config.strict);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0],
            "PYGRAPH_STAGING_MB='lots' is not a whole number from 0 to 1024; stopping the "
            "process (strict)");
  r = parse_file(R"({"strict": true, "mode": "fast"})");
  EXPECT_TRUE(r.config.strict);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("stopping the process (strict)"), std::string::npos);
}

TEST(Config, FirstChunkAtMostMaxChunk) {
  ConfigResult r = parse_file(R"({"max_chunk": 16})", {{"PYGRAPH_FIRST_CHUNK", "32"}});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0],
            "first_chunk 32 (PYGRAPH_FIRST_CHUNK) is larger than max_chunk 16 (/cfg.json); "
            "running in off mode (passthrough)");
  EXPECT_EQ(parse_env({{"PYGRAPH_FIRST_CHUNK", "129"}}).errors.size(), 1u);
  r = parse_env({{"PYGRAPH_FIRST_CHUNK", "16"}, {"PYGRAPH_MAX_CHUNK", "16"}});
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.config.mode, Mode::kGraph);
}

TEST(Config, UnknownKeysWarnWithTheClosestAndTheRestHolds) {
  ConfigResult r =
      parse_file(R"({"frist_chunk": 4, "PYGRAPH_MODE": "trace", "statz": "x"})",
                 {{"PYGRAPH_MIN_REPEAT", "3"}, {"PYGRAPH_log_level", "1"}, {"HOME", "/"}});
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.config.mode, Mode::kGraph);
  EXPECT_EQ(r.config.first_chunk, 2u);
  EXPECT_EQ(r.config.log_level, LogLevel::kError);
  ASSERT_EQ(r.warnings.size(), 5u);
  // The file's keys in the parser's (sorted) order, then the variables in the environment's.
  EXPECT_EQ(r.warnings[0],
            "/cfg.json: \"PYGRAPH_MODE\" is not a pygraph option (did you mean \"mode\"?); "
            "ignored");
  EXPECT_EQ(r.warnings[1],
            "/cfg.json: \"frist_chunk\" is not a pygraph option (did you mean \"first_chunk\"?); "
            "ignored");
  EXPECT_EQ(r.warnings[2],
            "/cfg.json: \"statz\" is not a pygraph option (did you mean \"stats\"?); ignored");
  EXPECT_EQ(r.warnings[3],
            "PYGRAPH_MIN_REPEAT is not a pygraph option (did you mean PYGRAPH_MIN_REPEATS?); "
            "ignored");
  EXPECT_EQ(r.warnings[4],
            "PYGRAPH_log_level is not a pygraph option (did you mean PYGRAPH_LOG_LEVEL?); "
            "ignored");
}

TEST(Config, ARetiredOptionSaysWhyItIsGoneAndTheRestHolds) {
  ConfigResult r = parse_file(R"({"programmatic_edges": true, "first_chunk": 4})",
                              {{"PYGRAPH_PROGRAMMATIC_EDGES", "1"}});
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.config.mode, Mode::kGraph);
  EXPECT_EQ(r.config.first_chunk, 4u);
  ASSERT_EQ(r.warnings.size(), 2u);
  const std::string why =
      " was removed: programmatic edges in graph mode's graphs gained nothing measured on the GPU "
      "(session 41, docs/design-graph-mode.md); kernel nodes keep full stream order; ignored";
  EXPECT_EQ(r.warnings[0], "/cfg.json: \"programmatic_edges\"" + why);
  EXPECT_EQ(r.warnings[1], "PYGRAPH_PROGRAMMATIC_EDGES" + why);
}

TEST(Config, TheFileCannotNameAFile) {
  ConfigResult r = parse_file(R"({"config": "/other.json"})");
  EXPECT_TRUE(r.errors.empty());
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0],
            "/cfg.json: \"config\" can only be set in the environment (PYGRAPH_CONFIG); ignored");
  EXPECT_EQ(r.config.config_path, "/cfg.json");
}

TEST(ConfigFile, MalformedIsOneErrorWithThePositionAndNoneOfItsValues) {
  ConfigResult r = parse_file("{\n  \"mode\": \"trace\",\n  \"first_chunk\": 8,\n}\n",
                              {{"PYGRAPH_MIN_REPEATS", "5"}});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0],
            "PYGRAPH_CONFIG='/cfg.json' is not valid JSON: line 4, column 1: syntax error while "
            "parsing object key - unexpected '}'; expected string literal; running in off mode "
            "(passthrough)");
  EXPECT_EQ(r.config.mode, Mode::kOff);
  EXPECT_EQ(r.config.first_chunk, 2u);
  EXPECT_EQ(r.config.min_repeats, 5u);  // the environment still counts
}

TEST(ConfigFile, EveryKindOfBadFile) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "is not valid JSON: line 1, column 1: "},
      {"{\"mode\": \"graph\"} {}", "is not valid JSON: line 1, column 19: "},
      {"{\"a\": 1e999}", "is not valid JSON: number overflow parsing '1e999'"},
      {"\xff{}", "is not valid JSON: line 1, column 1: "},
      {"[{\"mode\": \"off\"}]", "holds an array, not an object of options"},
      {"\"graph\"", "holds a string, not an object of options"},
      {"42", "holds a single value, not an object of options"},
  };
  for (const auto& [text, problem] : cases) {
    ConfigResult r = parse_file(text);
    ASSERT_EQ(r.errors.size(), 1u) << text;
    EXPECT_NE(r.errors[0].find("PYGRAPH_CONFIG='/cfg.json' " + problem), std::string::npos)
        << r.errors[0];
    EXPECT_EQ(r.errors[0].find('\n'), std::string::npos) << r.errors[0];
    EXPECT_EQ(r.config.mode, Mode::kOff);
  }
  ConfigResult r = parse_env({{"PYGRAPH_CONFIG", "/missing.json"}});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0],
            "cannot read PYGRAPH_CONFIG='/missing.json': No such file or directory; running in "
            "off mode (passthrough)");
  // An empty object is a good file: defaults.
  r = parse_file("{}");
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.config.mode, Mode::kGraph);
}

TEST(ConfigFile, AValueNestedDeepIsOneErrorNotACrash) {
  // The parser takes any depth; the message quotes the value's top level only (the serializer
  // recurses: a million levels overflowed the stack).
  const size_t depth = 1000000;
  ConfigResult r = parse_file("{\"deny_kernels\": " + std::string(depth, '[') +
                              std::string(depth, ']') + ", \"first_chunk\": [1, [2], {\"a\": 3}]}");
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_NE(r.errors[0].find("\"deny_kernels\": [[...]] "), std::string::npos) << r.errors[0];
  EXPECT_NE(r.errors[1].find("\"first_chunk\": [1,[...],{...}] "), std::string::npos)
      << r.errors[1];
}

TEST(ConfigFile, AValueCutShortIsCutBetweenCharacters) {
  // 97 or 98 ASCII letters, then two-byte characters: the quoted value's 100th byte is the first
  // or second of one. The messages stay UTF-8 (log lines, and the JSON of `pygraph run`'s
  // summary): a bad value's error, an unknown key's warning.
  for (const size_t ascii : {97u, 98u}) {
    std::string value(ascii, 'a');
    for (int i = 0; i < 10; ++i) value += "\xc3\xa9";  // é
    ConfigResult r = parse_file("{\"first_chunk\": \"" + value + "\", \"" + value + "\": 1}");
    ASSERT_EQ(r.errors.size(), 1u) << ascii;
    ASSERT_EQ(r.warnings.size(), 1u) << ascii;
    for (const std::string& m : {r.errors[0], r.warnings[0]}) {
      EXPECT_NO_THROW((void)nlohmann::json(m).dump()) << m;  // throws on bytes that are no UTF-8
      EXPECT_NE(m.find("..."), std::string::npos) << m;
    }
  }
}

TEST(Config, TraceInOffModeIsDroppedWithAWarning) {
  ConfigResult r = parse_env({{"PYGRAPH_MODE", "off"}, {"PYGRAPH_TRACE", "t"}});
  EXPECT_EQ(r.config.trace_path, "");
  EXPECT_TRUE(r.errors.empty());
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "PYGRAPH_TRACE is set but PYGRAPH_MODE is off; no trace is written");
  r = parse_file(R"({"trace": "t"})", {{"PYGRAPH_MODE", "off"}});
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0],
            "\"trace\" in /cfg.json is set but PYGRAPH_MODE is off; no trace is written");
}

TEST(Config, PathTemplatesTakeTheProcessId) {
  const std::string pid = std::to_string(getpid());
  EXPECT_EQ(with_pid("/tmp/x.trace"), "/tmp/x.trace");
  EXPECT_EQ(with_pid("/tmp/%p/x-%p.json"), "/tmp/" + pid + "/x-" + pid + ".json");
  EXPECT_EQ(with_pid("%"), "%");
}

}  // namespace
}  // namespace pygraph
