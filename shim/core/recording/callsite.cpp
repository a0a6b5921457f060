#include "recording/callsite.h"

#include <cxxabi.h>
#include <dlfcn.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>

#include "recording/python_frames.h"

namespace pygraph {
namespace {

constexpr int kMaxNative = 24;
constexpr int kMaxPython = 3;
constexpr int kKeptNative = 16;

// A call site is identified by its raw native return addresses plus its Python frames.
struct Key {
  uintptr_t words[kMaxNative + 2 * kMaxPython];
  int n;
  bool operator==(const Key& o) const {
    return n == o.n && std::memcmp(words, o.words, n * sizeof(uintptr_t)) == 0;
  }
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < k.n; ++i) h = (h ^ k.words[i]) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

std::mutex g_mu;
std::unordered_map<Key, uint32_t, KeyHash>* g_sites = nullptr;  // never destroyed (exit races)

const void* own_module_base() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&own_module_base), &info) == 0) return nullptr;
  return info.dli_fbase;
}

const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

}  // namespace

std::string demangle(const char* symbol) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(symbol, nullptr, nullptr, &status);
  std::string out = (status == 0 && demangled) ? demangled : symbol;
  std::free(demangled);
  return out;
}

std::string symbolize_native(uintptr_t ip) {
  char buf[64];
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(ip), &info) == 0 || !info.dli_fname) {
    std::snprintf(buf, sizeof buf, "?+0x%zx", static_cast<size_t>(ip));
    return buf;
  }
  std::string out = base_name(info.dli_fname);
  if (info.dli_sname && info.dli_saddr) {
    out += "!";
    out += demangle(info.dli_sname);
    std::snprintf(buf, sizeof buf, "+0x%zx", static_cast<size_t>(ip - (uintptr_t)info.dli_saddr));
  } else {
    std::snprintf(buf, sizeof buf, "+0x%zx", static_cast<size_t>(ip - (uintptr_t)info.dli_fbase));
  }
  return out + buf;
}

uint32_t CallSiteTable::capture(bool* created, std::vector<std::string>* frames) {
  *created = false;
  // Taken before the lock: unwinding is the slow part and needs no shared state.
  void* ips[kMaxNative];
  int native = unw_backtrace(ips, kMaxNative);
  if (native < 0) native = 0;
  PyFrameKey py[kMaxPython];
  int pyn = python_frames(py, kMaxPython);

  Key key;
  key.n = 0;
  for (int i = 0; i < native; ++i) key.words[key.n++] = reinterpret_cast<uintptr_t>(ips[i]);
  for (int i = 0; i < pyn; ++i) {
    key.words[key.n++] = reinterpret_cast<uintptr_t>(py[i].code);
    key.words[key.n++] = static_cast<uintptr_t>(py[i].line);
  }

  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_sites) g_sites = new std::unordered_map<Key, uint32_t, KeyHash>;
  auto it = g_sites->find(key);
  if (it != g_sites->end()) return it->second;
  uint32_t id = static_cast<uint32_t>(g_sites->size() + 1);
  g_sites->emplace(key, id);

  *created = true;
  frames->clear();
  for (int i = 0; i < pyn; ++i) frames->push_back(python_frame_text(py[i]));
  const void* own = skip_own_module_ ? own_module_base() : nullptr;
  int first = 0;
  while (own && first < native) {
    Dl_info info;
    if (dladdr(ips[first], &info) == 0 || info.dli_fbase != own) break;
    ++first;
  }
  for (int i = first; i < native && i < first + kKeptNative; ++i) {
    // A return address points after the call; symbolize the call instruction itself.
    frames->push_back(symbolize_native(reinterpret_cast<uintptr_t>(ips[i]) - 1));
  }
  return id;
}

void CallSiteTable::reset_in_child() {
  new (&g_mu) std::mutex;
  if (g_sites) g_sites->clear();
}

void CallSiteTable::clear() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_sites) g_sites->clear();
}

}  // namespace pygraph
