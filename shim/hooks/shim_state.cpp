#include "shim_state.h"

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "../core/decisions/decision_store.h"
#include "../core/driver/driver_call_counts.h"
#include "../core/graph/engine_config.h"
#include "../core/graph/stats_summary.h"
#include "../core/log.h"
#include "../core/options/option_docs.h"
#include "../core/options/option_table.h"
#include "../core/recording/trace_observer.h"
#include "entry_points.h"
#include "stall_watchdog.h"

namespace pygraph::hooks {

std::atomic<int> g_init_state{0};
Mode g_mode = Mode::kOff;
EngineMutex g_engine_mutex;
constinit thread_local bool t_in_hook __attribute__((tls_model("initial-exec"))) = false;
std::atomic<Recorder*> g_recorder{nullptr};
// Never destroyed: other libraries' exit handlers may still launch after ours ran.
GraphEngine* g_engine = nullptr;

// Hidden: read by the dlsym trampoline (door_dlsym.cpp).
extern "C" {
__attribute__((visibility("hidden"))) void* pygraph_real_dlsym = nullptr;
}

namespace {

DriverApi g_driver_api;
void* g_driver = nullptr;
pthread_t g_init_thread;
Config g_config;
// Decisions kept across runs, while measuring (decision_cache.h); saved at exit. Never destroyed,
// like the engine that holds the store.
DecisionCache* g_cache = nullptr;
DecisionStore* g_store = nullptr;
// Sequences listed in the stats' "decisions" (most launches first).
constexpr size_t kStatsSequences = 50;

Recorder& recorder_instance() {
  // Never destroyed: other libraries' exit handlers may still call the driver after ours.
  static Recorder* r = new Recorder(&g_driver_api, /*skip_own_frames=*/true);
  g_recorder.store(r, std::memory_order_release);
  return *r;
}

__attribute__((no_sanitize("address", "thread"))) void resolve_real_dlsym() {
  if (pygraph_real_dlsym) return;
  // dlsym is versioned in glibc: GLIBC_2.34 since libdl moved into libc, GLIBC_2.2.5 before.
  void* p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
  if (!p) p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
  __atomic_store_n(&pygraph_real_dlsym, p, __ATOMIC_RELEASE);
}

template <class T>
void load(T* out, const char* name) {
  *out = reinterpret_cast<T>(real_dlsym(g_driver, name));
}

// The config in effect, or, before the shim is ready, the one it will read (its warnings are
// left for shim_init to report).
Config current_config() {
  if (shim_ready()) return g_config;
  return parse_config(process_config_sources()).config;
}

// The counters as they stand now. Under the engine lock, so that a snapshot taken while other
// threads launch is consistent (graph mode counts door launches under it too); not when this
// thread is inside a wrapper, which may hold the lock already (the lock is not recursive): a
// kernel or profiler callback run by the driver inside a launch, or an exit handler that runs
// after graph_mode_at_exit.
std::string stats_document() {
  if (!shim_ready()) {
    return stats_json(EngineStats{}, DoorCounts{}, mode_name(current_config().mode));
  }
  EngineStats stats;
  DoorCounts doors;
  std::vector<SequenceStat> sequences;
  auto read = [&] {
    if (g_engine) stats = g_engine->stats();
    if (g_engine) sequences = g_engine->sequence_stats(kStatsSequences);
    const Recorder& r = recorder_instance();
    doors = {r.launches(Door::kExport), r.launches(Door::kDlsym), r.launches(Door::kProcAddr)};
  };
  if (t_in_hook) {
    read();
  } else {
    EngineLock lock;
    read();
  }
  return stats_json(stats, doors, mode_name(g_mode), sequences, driver_call_counts());
}

// What decisions are made on: the current device's name, the driver's version, this shim's.
// Asked for at the first lookup, when the program has initialized the driver.
DecisionEnvironment decision_environment() {
  DecisionEnvironment env;
  CUdevice device = 0;
  if (g_driver_api.ctx_get_device && g_driver_api.ctx_get_device(&device) != CUDA_SUCCESS) {
    device = 0;
  }
  char name[256] = "";
  if (!g_driver_api.device_get_name ||
      g_driver_api.device_get_name(name, sizeof name, device) != CUDA_SUCCESS) {
    name[0] = '\0';
  }
  env.gpu = name;
  int version = 0;
  if (g_driver_api.driver_get_version) g_driver_api.driver_get_version(&version);
  env.driver = std::to_string(version);
  env.shim = PYGRAPH_VERSION;
  return env;
}

// The decision cache, when measuring: read now (a bad file is set aside with one warning).
DecisionStore* open_decision_store(const Config& config) {
  if (config.measure_windows == 0) return nullptr;
  const std::string path =
      config.cache_path.empty()
          ? default_decision_cache_path([](const char* n) -> const char* { return std::getenv(n); })
          : config.cache_path;
  if (path.empty()) return nullptr;  // neither PYGRAPH_CACHE, XDG_CACHE_HOME nor HOME
  g_cache = new DecisionCache(path);
  std::vector<std::string> warnings;
  g_cache->load(&warnings);
  for (const auto& w : warnings) log_error("%s", w.c_str());
  return new CacheDecisionStore(g_cache, &decision_environment);
}

// After the stats: this run's verdicts merged into the file.
void save_decisions() {
  if (!g_cache) return;
  std::string error;
  if (!g_cache->save(&error)) {
    log_error("cannot save decisions to PYGRAPH_CACHE='%s': %s", g_cache->path().c_str(),
              error.c_str());
  }
}

// "defaults", or the file and how many options it and the environment set (PYGRAPH_CONFIG,
// which names the file, aside: the one environment-only option).
std::string config_origin(const ConfigResult& parsed) {
  int file = 0, env = 0;
  for (size_t i = 0; i < parsed.sources.size() && i < kOptions.size(); ++i) {
    if (kOptions[i].env_only) continue;
    file += parsed.sources[i] == Source::kFile;
    env += parsed.sources[i] == Source::kEnvironment;
  }
  std::string out;
  if (!parsed.config.config_path.empty()) {
    out = parsed.config.config_path + " (" + std::to_string(file) + " options)";
  }
  if (env) out += (out.empty() ? "" : ", ") + std::to_string(env) + " from the environment";
  return out.empty() ? "defaults" : out;
}

void write_stats() {
  if (!g_config.stats_path.empty()) write_stats_now(g_config.stats_path, "PYGRAPH_STATS=");
}

// At exit, before any library's destructors: deferred work goes to the GPU (a program may end
// without a sync and still expect its kernels to run), then the stats are written.
void graph_mode_at_exit() {
  if (g_init_state.load() != 2) return;
  if (g_engine) {
    // From here on this thread's calls pass straight through: exit handlers that run after this
    // one must not have launches deferred that nothing would submit.
    t_in_hook = true;
    EngineLock lock;
    g_engine->flush_all(FlushCause::kExit);
    stop_stall_watchdog();
  }
  write_stats();
  if (g_engine) {
    EngineLock lock;
    save_decisions();
  }
  if (g_config.log_level >= LogLevel::kInfo) {
    log_info("%s", stats_summary_line(stats_document()).c_str());
  }
}

// Fork: the parent's deferred work goes out first, so that the child inherits no half-submitted
// stream state; the lock is held across fork so the child's copy of the engine is consistent.
// Whether atfork_prepare took the lock: parent and child release exactly what it took, even if
// another thread finished initializing meanwhile.
bool g_fork_locked = false;

void atfork_prepare() {
  if (g_init_state.load() != 2 || !g_engine) return;
  g_engine_mutex.lock();
  g_fork_locked = true;
  // Until the fork is over (atfork_parent, atfork_child) this thread's driver calls, and a
  // stats snapshot another library's fork handler may ask for, must not take the lock it holds.
  t_in_hook = true;
  g_engine->flush_all(FlushCause::kFork);
}

void atfork_parent() {
  if (g_fork_locked) {
    g_fork_locked = false;
    t_in_hook = false;
    g_engine_mutex.unlock();
  }
}

void atfork_child() {
  // The child gets a trace of its own (or none) and a fresh engine: start over at its next CUDA
  // call. The parent's graphs are not the child's to use or destroy.
  if (g_fork_locked) {
    g_fork_locked = false;
    t_in_hook = false;
    g_engine_mutex.reset();
  }
  stall_watchdog_forked();
  if (g_init_state.load() == 2) {
    g_engine = nullptr;
    recorder_instance().reset_in_child();
    g_init_state.store(0);
  }
}

__attribute__((constructor(101))) void early_init() {
  resolve_real_dlsym();
}

__attribute__((destructor)) void at_exit() {
  if (g_init_state.load() == 2) {
    recorder_instance().stop();
    log_debug("%llu launches (export %llu, dlsym %llu, cuGetProcAddress %llu), %llu other ops",
              static_cast<unsigned long long>(recorder_instance().launches(Door::kExport) +
                                              recorder_instance().launches(Door::kDlsym) +
                                              recorder_instance().launches(Door::kProcAddr)),
              static_cast<unsigned long long>(recorder_instance().launches(Door::kExport)),
              static_cast<unsigned long long>(recorder_instance().launches(Door::kDlsym)),
              static_cast<unsigned long long>(recorder_instance().launches(Door::kProcAddr)),
              static_cast<unsigned long long>(recorder_instance().ops()));
  }
}

}  // namespace

Recorder& shim_recorder_slow() {
  return recorder_instance();
}

const DriverApi& shim_driver_api() {
  return g_driver_api;
}

void* driver_handle() {
  return g_driver;
}

__attribute__((no_sanitize("address", "thread"))) void* real_dlsym(void* handle, const char* name) {
  resolve_real_dlsym();
  auto fn = reinterpret_cast<void* (*)(void*, const char*)>(pygraph_real_dlsym);
  return fn ? fn(handle, name) : nullptr;
}

bool write_stats_now(const std::string& destination, const char* what) {
  const std::string json = stats_document();
  if (destination == "stderr") return std::fputs(json.c_str(), stderr) >= 0;
  const std::string path = with_pid(destination);
  FILE* f = std::fopen(path.c_str(), "w");
  const bool written = f && std::fputs(json.c_str(), f) >= 0;
  if ((f && std::fclose(f) != 0) || !written) {
    log_error("cannot write %s'%s': %s", what, path.c_str(), std::strerror(errno));
    return false;
  }
  return true;
}

std::string stats_destination() {
  return current_config().stats_path;
}

bool shim_init() {
  int expected = 0;
  if (!g_init_state.compare_exchange_strong(expected, 1)) {
    // Another thread initializes: wait for it; a re-entrant call from inside init gets false.
    if (expected == 1 && pthread_equal(g_init_thread, pthread_self())) return false;
    while (g_init_state.load(std::memory_order_acquire) == 1) sched_yield();
    return g_init_state.load() == 2;
  }
  g_init_thread = pthread_self();

  const ConfigResult parsed = parse_config(process_config_sources());
  const Config& config = parsed.config;
  set_log_level(config.log_level);
  for (const auto& w : parsed.warnings) log_error("%s", w.c_str());
  for (const auto& e : parsed.errors) log_error("%s", e.c_str());
  if (config.log_level >= LogLevel::kInfo) {
    log_info("%s mode; configuration: %s", mode_name(config.mode), config_origin(parsed).c_str());
  }
  if (config.log_level >= LogLevel::kDebug) {
    // What `pygraph config` would show, for runs under plain LD_PRELOAD.
    const std::string listing = config_listing(parsed);
    for (size_t at = 0, end; (end = listing.find('\n', at)) != std::string::npos; at = end + 1) {
      log_debug("config: %s", listing.substr(at, end - at).c_str());
    }
  }
  if (!parsed.errors.empty() && config.strict) {
    // Asked for: no run with a configuration other than the one written. _exit, not exit: other
    // libraries' exit handlers would call the driver into an uninitialized shim.
    std::fflush(nullptr);
    _exit(kStrictExitStatus);
  }

  // The driver is already loaded when a CUDA call reaches us; take its handle without loading.
  g_driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!g_driver) g_driver = dlopen("libcuda.so.1", RTLD_NOW);
  if (!g_driver) {
    log_error("no CUDA driver (libcuda.so.1) could be loaded: %s", dlerror());
    g_init_state.store(0);
    return false;
  }
#define PYGRAPH_LOAD_ENTRY(field, symbol) load(&g_driver_api.field, symbol);
  PYGRAPH_DRIVER_API_ENTRIES(PYGRAPH_LOAD_ENTRY)
#undef PYGRAPH_LOAD_ENTRY
  for (int r = 0; r < kRowCount; ++r) {
    g_real[r][static_cast<int>(Door::kExport)].store(real_dlsym(g_driver, kRows[r].symbol));
  }
  // Debug: pygraph's own driver calls counted and timed, in the stats (before any is made).
  if (config.log_level >= LogLevel::kDebug) count_driver_calls(&g_driver_api);
  g_mode = config.mode;
  g_config = config;
  configure_stall_watchdog(config.stall_check_ms);
  if (g_mode == Mode::kGraph && !g_engine) {
    EngineOptions options = engine_options(config);
    if (!g_store) g_store = open_decision_store(config);
    options.store = g_store;
    g_engine = new GraphEngine(&g_driver_api, options);
  }

  std::string error;
  if (g_mode != Mode::kOff && !recorder_instance().start(config, &error)) {
    log_error("cannot write PYGRAPH_TRACE='%s': %s; running without a trace",
              config.trace_path.c_str(), error.c_str());
  }
  if (g_engine) {
    // Graph mode's events go into the trace only when one is written: without it the engine
    // has no observer and pays one null check on its slow paths.
    static TraceObserver* observer = new TraceObserver(&recorder_instance());
    g_engine->set_observer(recorder_instance().tracing() ? observer : nullptr);
  }
  static bool handlers_registered = false;
  if (!handlers_registered) {
    handlers_registered = true;
    pthread_atfork(&atfork_prepare, &atfork_parent, &atfork_child);
    std::atexit(&graph_mode_at_exit);
  }
  log_debug("mode %s, trace %s", mode_name(g_mode),
            recorder_instance().tracing() ? config.trace_path.c_str() : "(none)");
  g_init_state.store(2, std::memory_order_release);
  return true;
}

}  // namespace pygraph::hooks
