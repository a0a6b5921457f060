#include "shim_state.h"

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "../core/log.h"
#include "entry_points.h"

namespace pygraph::hooks {

std::atomic<int> g_init_state{0};
Mode g_mode = Mode::kOff;
thread_local bool t_in_hook __attribute__((tls_model("initial-exec"))) = false;

// Hidden: read by the dlsym trampoline (door_dlsym.cpp).
extern "C" {
__attribute__((visibility("hidden"))) void* pygraph_real_dlsym = nullptr;
}

namespace {

DriverApi g_driver_api;
void* g_driver = nullptr;
pthread_t g_init_thread;

Recorder& recorder_instance() {
  // Never destroyed: other libraries' exit handlers may still call the driver after ours.
  static Recorder* r = new Recorder(&g_driver_api, /*skip_own_frames=*/true);
  return *r;
}

void resolve_real_dlsym() {
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

void atfork_child() {
  // The child gets a trace of its own (or none): start over at its next CUDA call.
  if (g_init_state.load() == 2) {
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

const char* env(const char* name) {
  return std::getenv(name);
}

}  // namespace

Recorder& shim_recorder() {
  return recorder_instance();
}

void* driver_handle() {
  return g_driver;
}

void* real_dlsym(void* handle, const char* name) {
  resolve_real_dlsym();
  auto fn = reinterpret_cast<void* (*)(void*, const char*)>(pygraph_real_dlsym);
  return fn ? fn(handle, name) : nullptr;
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

  std::vector<std::string> warnings;
  Config config = parse_config(&env, &warnings);
  set_debug_logging(config.debug);
  for (const auto& w : warnings) log_error("%s", w.c_str());

  // The driver is already loaded when a CUDA call reaches us; take its handle without loading.
  g_driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!g_driver) g_driver = dlopen("libcuda.so.1", RTLD_NOW);
  if (!g_driver) {
    log_error("no CUDA driver (libcuda.so.1) could be loaded: %s", dlerror());
    g_init_state.store(0);
    return false;
  }
  load(&g_driver_api.func_get_name, "cuFuncGetName");
  load(&g_driver_api.func_get_param_info, "cuFuncGetParamInfo");
  load(&g_driver_api.kernel_get_name, "cuKernelGetName");
  load(&g_driver_api.kernel_get_param_info, "cuKernelGetParamInfo");
  for (int r = 0; r < kRowCount; ++r) {
    g_real[r][static_cast<int>(Door::kExport)].store(real_dlsym(g_driver, kRows[r].symbol));
  }
  g_mode = config.mode;

  std::string error;
  if (g_mode != Mode::kOff && !recorder_instance().start(config, &error)) {
    log_error("cannot write PYGRAPH_TRACE='%s': %s; running without a trace",
              config.trace_path.c_str(), error.c_str());
  }
  static bool atfork_registered = false;
  if (!atfork_registered) {
    atfork_registered = true;
    pthread_atfork(nullptr, nullptr, &atfork_child);
  }
  log_debug("mode %s, trace %s", mode_name(g_mode),
            recorder_instance().tracing() ? config.trace_path.c_str() : "(none)");
  g_init_state.store(2, std::memory_order_release);
  return true;
}

}  // namespace pygraph::hooks
