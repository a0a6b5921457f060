#include "decisions/decision_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "file_text.h"
#include "json_text.h"

namespace pygraph {
namespace {

constexpr const char* kSchema = "pygraph-decisions/1";

using nlohmann::json;

json to_json(const Decision& d) {
  return {{"verdict", d.verdict},   {"why", d.why},           {"eager_us", d.eager_us},
          {"graph_us", d.graph_us}, {"windows", d.windows},   {"launches", d.launches},
          {"gpu", d.env.gpu},       {"driver", d.env.driver}, {"shim", d.env.shim},
          {"updated", d.updated}};
}

// nlohmann turns a float or a negative number into an integer with a plain cast: undefined
// where the value does not fit, a wrap where it is negative. A count is taken only where the
// file holds an integer that fits.
bool get_count(const json& j, const char* key, uint32_t* out) {
  const json& v = j.at(key);
  if (!v.is_number_unsigned() || v.get<uint64_t>() > UINT32_MAX) return false;
  *out = static_cast<uint32_t>(v.get<uint64_t>());
  return true;
}

bool get_time(const json& j, const char* key, int64_t* out) {
  const json& v = j.at(key);
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX)) {
    return false;
  }
  *out = v.get<int64_t>();
  return true;
}

// An entry as written by to_json; false for anything else (a file edited by hand, or another
// schema's entry): such an entry is dropped, not trusted.
bool from_json(const json& j, Decision* d) {
  if (!j.is_object()) return false;
  try {
    d->verdict = j.at("verdict").get<std::string>();
    if (d->verdict != "graph" && d->verdict != "eager") return false;
    d->why = j.value("why", "");
    d->eager_us = j.at("eager_us").get<double>();
    d->graph_us = j.at("graph_us").get<double>();
    d->env.gpu = j.at("gpu").get<std::string>();
    d->env.driver = j.at("driver").get<std::string>();
    d->env.shim = j.at("shim").get<std::string>();
    return get_count(j, "windows", &d->windows) && get_count(j, "launches", &d->launches) &&
           get_time(j, "updated", &d->updated);
  } catch (const json::exception&) {
    return false;
  }
}

// kNotAFile: the path names a folder, a device or a pipe. It is neither read nor set aside
// (renaming someone's folder out of the way would be worse than a cache that does nothing).
enum class ReadResult { kMissing, kRead, kBad, kNotAFile };

// Reads a cache file into `out`; otherwise `why` says what was wrong.
ReadResult read_file(const std::string& path, std::map<std::string, Decision>* out,
                     std::string* why) {
  std::string text;
  switch (read_file_text(path, &text, why)) {
    case FileText::kMissing:
      return ReadResult::kMissing;
    case FileText::kNotAFile:
      *why = "not a regular file";
      return ReadResult::kNotAFile;
    case FileText::kFailed:
      return ReadResult::kBad;
    case FileText::kRead:
      break;
  }
  return parse_decisions(text, out, why) ? ReadResult::kRead : ReadResult::kBad;
}

// The file a path names: where it is a symbolic link (a cache shared through a link), its
// target, so that the lock, the rename of a save and a bad file's setting aside act on the
// file and leave the link in place. A link to nothing yet names the file it will point to
// (its target, read one level deep).
std::string file_behind(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
  if (char* real = ::realpath(path.c_str(), nullptr)) {
    std::string target = real;
    std::free(real);
    return target;
  }
  char buf[4096];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  if (n <= 0) return path;
  const std::string target(buf, static_cast<size_t>(n));
  const size_t slash = path.rfind('/');
  if (target[0] == '/' || slash == std::string::npos) return target;
  return path.substr(0, slash + 1) + target;
}

// Whether something other than a regular file is at the path (what read_file refuses).
bool not_a_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
}

// A bad file is kept for inspection, out of the way of the next save.
void set_aside(const std::string& path) {
  const std::string aside = path + ".bad-" + std::to_string(::getpid());
  std::rename(path.c_str(), aside.c_str());
}

bool make_parent_dirs(const std::string& path) {
  for (size_t at = path.find('/', 1); at != std::string::npos; at = path.find('/', at + 1)) {
    const std::string dir = path.substr(0, at);
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  return true;
}

// An exclusive lock on PATH.lock for the lifetime of the object.
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ >= 0) {
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace

std::string decisions_text(const std::map<std::string, Decision>& entries) {
  json all = json::object();
  for (const auto& [signature, d] : entries) all[signature] = to_json(d);
  return json_text(json{{"schema", kSchema}, {"entries", all}}, 1) + "\n";
}

bool parse_decisions(const std::string& text, std::map<std::string, Decision>* out,
                     std::string* why) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    *why = "not valid JSON (corrupt or truncated)";
    return false;
  }
  // value() throws where "schema" holds another type than a string: asked only of a string.
  const auto schema = j.is_object() ? j.find("schema") : j.end();
  if (!j.is_object() || schema == j.end() || !schema->is_string() ||
      schema->get<std::string>() != kSchema || !j.contains("entries") ||
      !j["entries"].is_object()) {
    *why = "not a " + std::string(kSchema) + " document (another version?)";
    return false;
  }
  for (const auto& [signature, entry] : j["entries"].items()) {
    Decision d;
    if (from_json(entry, &d)) (*out)[signature] = d;
  }
  return true;
}

size_t DecisionCache::load(std::vector<std::string>* warnings) {
  const std::string file = file_behind(path_);
  std::string why;
  std::map<std::string, Decision> read;
  switch (read_file(file, &read, &why)) {
    case ReadResult::kMissing:
      break;
    case ReadResult::kBad: {
      FileLock lock(file);
      // Another process may have replaced it meanwhile: set aside only what is still bad.
      read.clear();
      if (read_file(file, &read, &why) == ReadResult::kBad) {
        set_aside(file);
        warnings->push_back("decision cache '" + path_ + "': " + why + "; set aside as " + file +
                            ".bad-" + std::to_string(::getpid()) + ", starting empty");
      }
      break;
    }
    case ReadResult::kNotAFile:
      left_alone_ = true;
      warnings->push_back("decision cache '" + path_ + "': " + why +
                          "; left as it is: no decision is read from it or saved to it");
      break;
    case ReadResult::kRead:
      break;
  }
  for (auto& [signature, d] : read) entries_[signature] = d;
  return read.size();
}

DecisionCache::Lookup DecisionCache::find(const std::string& signature,
                                          const DecisionEnvironment& env,
                                          const Decision** out) const {
  auto it = entries_.find(signature);
  if (it == entries_.end()) return Lookup::kMissing;
  if (!(it->second.env == env)) return Lookup::kStale;
  *out = &it->second;
  return Lookup::kFound;
}

void DecisionCache::put(const std::string& signature, const Decision& d) {
  Decision stamped = d;
  if (!stamped.updated) stamped.updated = static_cast<int64_t>(std::time(nullptr));
  entries_[signature] = stamped;
  mine_[signature] = stamped;
}

bool DecisionCache::save(std::string* error) {
  // A path load() found no file at was said so then, once: nothing is written next to it.
  if (mine_.empty() || left_alone_) return true;
  const std::string file = file_behind(path_);
  if (not_a_file(file)) {
    *error = "cannot write '" + path_ + "': not a regular file";
    return false;
  }
  if (!make_parent_dirs(file)) {
    *error = "cannot create the folder of '" + path_ + "': " + std::strerror(errno);
    return false;
  }
  FileLock lock(file);
  if (!lock.held()) {
    *error = "cannot lock '" + file + ".lock': " + std::strerror(errno);
    return false;
  }
  // What others saved since we loaded, then ours over it where ours is newer.
  std::map<std::string, Decision> merged;
  std::string why;
  switch (read_file(file, &merged, &why)) {
    case ReadResult::kBad:
      merged.clear();  // rewritten below
      break;
    case ReadResult::kNotAFile:  // put there since the check above
      *error = "cannot write '" + path_ + "': " + why;
      return false;
    default:
      break;
  }
  for (const auto& [signature, d] : mine_) {
    auto it = merged.find(signature);
    if (it == merged.end() || it->second.updated <= d.updated) merged[signature] = d;
  }
  const std::string text = decisions_text(merged);
  const std::string temp = file + ".tmp-" + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool ok = fd >= 0;
  for (size_t done = 0; ok && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  if (fd >= 0 && ::close(fd) != 0) ok = false;
  ok = ok && std::rename(temp.c_str(), file.c_str()) == 0;
  if (!ok) {
    *error = "cannot write '" + path_ + "': " + std::strerror(errno);
    ::unlink(temp.c_str());
    return false;
  }
  entries_ = merged;
  mine_.clear();
  return true;
}

std::string default_decision_cache_path(const char* (*getenv_fn)(const char*)) {
  const char* v = getenv_fn("PYGRAPH_CACHE");
  if (v && *v) return v;
  v = getenv_fn("XDG_CACHE_HOME");
  if (v && *v) return std::string(v) + "/pygraph/decisions.json";
  v = getenv_fn("HOME");
  if (v && *v) return std::string(v) + "/.cache/pygraph/decisions.json";
  return "";
}

}  // namespace pygraph
