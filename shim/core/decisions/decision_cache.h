// Where graphs paid off, kept across runs: a JSON file of decisions, one per sequence signature,
// so that the next run applies them at once instead of measuring again (warm start).
//
// The file is shared: torchrun's ranks, or several jobs of one user, read and write it at the
// same time. A save takes an exclusive lock on PATH.lock, reads the file again, merges (for each
// signature the newer entry wins), writes a temporary file and renames it over PATH, so readers
// see the old file or the new one, never half of one, and no writer's entries are lost.
//
// A corrupt, truncated or foreign-version file is set aside (renamed to PATH.bad-<pid>) with one
// warning, and rewritten by the next save. A path that names no regular file (a folder, a
// device, a pipe) is left as it is, with one warning: nothing is read from it or saved to it.
// A path that is a symbolic link acts on the file it points to, the link kept. Entries made on
// another GPU, driver or shim version
// are not trusted: find() reports them as stale, the sequence is measured again, and the new
// entry overwrites the old.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace pygraph {

// What a decision was made on.
struct DecisionEnvironment {
  std::string gpu;     // device name, e.g. "NVIDIA H100 80GB HBM3"
  std::string driver;  // driver version, e.g. "13000"
  std::string shim;    // pygraph version
  bool operator==(const DecisionEnvironment&) const = default;
};

struct Decision {
  std::string verdict;  // "graph" or "eager"
  std::string why;      // one line: the figures that decided
  double eager_us = 0;  // median iteration time over the eager windows
  double graph_us = 0;  // median iteration time over the graph windows
  uint32_t windows = 0;
  uint32_t launches = 0;  // in the sequence
  DecisionEnvironment env;
  int64_t updated = 0;  // unix seconds
};

class DecisionCache {
 public:
  enum class Lookup { kMissing, kFound, kStale };

  explicit DecisionCache(std::string path) : path_(std::move(path)) {}

  // Reads the file. A missing file is an empty cache; a bad one is set aside, and a path that
  // names no regular file left alone (save() then writes nothing), each with one warning
  // appended to `warnings`. Returns the number of entries read.
  size_t load(std::vector<std::string>* warnings);

  // The decision for a signature, if one was made in this environment.
  Lookup find(const std::string& signature, const DecisionEnvironment& env,
              const Decision** out) const;

  // Records a decision; save() writes it.
  void put(const std::string& signature, const Decision& d);

  // Merges this process's decisions into the file (see above). False, with `error` set, when the
  // file could not be written; the cache in memory stays as it was.
  bool save(std::string* error);

  const std::string& path() const { return path_; }
  size_t size() const { return entries_.size(); }

 private:
  std::string path_;
  bool left_alone_ = false;                  // load() found no regular file at path_
  std::map<std::string, Decision> entries_;  // all known
  std::map<std::string, Decision> mine_;     // put by this process, not yet saved
};

// The cache file's text as save() writes it: the schema and every entry, by signature.
std::string decisions_text(const std::map<std::string, Decision>& entries);

// Reads a cache file's text into `out` (entries as decisions_text writes them; any other entry
// is dropped, not trusted). False, with `why` set, for text that is no such document: not JSON,
// truncated, or another schema.
bool parse_decisions(const std::string& text, std::map<std::string, Decision>* out,
                     std::string* why);

// The cache file: PYGRAPH_CACHE if set (a file path), else $XDG_CACHE_HOME/pygraph/decisions.json,
// else $HOME/.cache/pygraph/decisions.json; "" when none of them is set.
std::string default_decision_cache_path(const char* (*getenv_fn)(const char*));

}  // namespace pygraph
