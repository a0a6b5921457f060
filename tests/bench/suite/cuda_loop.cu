// The benchmark suite's CUDA C++ workloads (workloads.py: cuda-loop, cuda-one-kernel): a loop of
// small kernels launched with <<<>>> through the CUDA runtime, never synchronizing inside the
// timed part, run with and without libpygraph.so side by side. It speaks the worker protocol of
// tests/gpu/harness.py (run_chunks), as the Python workers do.
//
//   nvcc -O2 -o cuda_loop tests/bench/suite/cuda_loop.cu
//   cuda_loop --steps S [--shape loop|one] [--chunks C --warmup W --warm-chunks N --go FIFO
//             --done FIFO --core K --stats-prefix PREFIX --result PATH]
//
// One iteration of `--shape loop` (the default) is 12 launches of 4 kernels over three float
// buffers of 16384 elements (64 blocks of 256 threads). Each iteration's scalars derive from its
// counter, so graph mode must patch nodes on every replay; each kernel reads buffers others
// write, so the result (its digest) depends on every launch running in order, with the right
// arguments. One iteration of `--shape one` is one launch of one kernel, its counter an
// argument: the plain benchmark loop, a period of one launch whose every node is patched.
#include <cuda_runtime.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

namespace {

constexpr int kBlocks = 64, kThreads = 256, kN = kBlocks * kThreads;

__global__ void axpy(float* y, const float* x, float a) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kN) y[i] += a * x[i];
}
__global__ void scale_add(float* y, const float* x, float s) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kN) y[i] = s * y[i] + (1.0f - s) * x[i];
}
__global__ void clamp(float* y, float lim) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kN) y[i] = fminf(fmaxf(y[i], -lim), lim);
}
// The counter itself is an argument too: a small input that keeps the values from settling.
__global__ void mix(float* y, const float* p, const float* q, float t, int it) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kN) y[i] = t * p[i] + (1.0f - t) * q[i] - 0.25f * y[i] + 0.001f * ((i + it) & 15);
}

[[noreturn]] void fail(const char* what, const char* why) {
  std::fprintf(stderr, "cuda_loop: %s: %s\n", what, why);
  std::exit(1);
}

void check(cudaError_t r, const char* what) {
  if (r != cudaSuccess) fail(what, cudaGetErrorString(r));
}

// One iteration. The kernel order A B C D A C B D B A D C has no shorter period and no four
// launches in a row that come again within it, so the shim sees a 12-launch period (it graphs
// periods of 8 launches or more; 4 kernels in a fixed round would be a period of 4). The
// scalars stay in ranges that keep the values bounded and the clamps active.
void iteration(int it, float* x, float* y, float* z, cudaStream_t s) {
  const float a = 0.125f + (it % 17) / 64.0f, sc = 0.5f + (it % 5) * 0.1f;
  const float t = 0.25f + (it % 3) * 0.25f, lim = 0.04f + (it % 11) * 0.004f;
  axpy<<<kBlocks, kThreads, 0, s>>>(y, x, a);
  scale_add<<<kBlocks, kThreads, 0, s>>>(z, y, sc);
  clamp<<<kBlocks, kThreads, 0, s>>>(y, lim);
  mix<<<kBlocks, kThreads, 0, s>>>(x, y, z, t, it);
  axpy<<<kBlocks, kThreads, 0, s>>>(z, x, -a);
  clamp<<<kBlocks, kThreads, 0, s>>>(z, lim);
  scale_add<<<kBlocks, kThreads, 0, s>>>(x, z, sc);
  mix<<<kBlocks, kThreads, 0, s>>>(y, z, x, t, it);
  scale_add<<<kBlocks, kThreads, 0, s>>>(y, x, sc);
  axpy<<<kBlocks, kThreads, 0, s>>>(x, y, a);
  mix<<<kBlocks, kThreads, 0, s>>>(z, x, y, t, it);
  clamp<<<kBlocks, kThreads, 0, s>>>(x, lim);
}

// One iteration of `--shape one`: y mixes x and z and itself, and the counter (the values never
// settle, so a launch lost or run twice shows in the digest).
void one_kernel(int it, float* x, float* y, float* z, cudaStream_t s) {
  mix<<<kBlocks, kThreads, 0, s>>>(y, x, z, 0.25f + (it % 3) * 0.25f, it);
}

// The iterations `--shape` chooses from, and their launches.
struct Shape {
  const char* name;
  void (*step)(int, float*, float*, float*, cudaStream_t);
  int launches;
};
constexpr Shape kShapes[] = {{"loop", &iteration, 12}, {"one", &one_kernel, 1}};

// pygraph_write_stats exists only when libpygraph.so is preloaded (shim/include/pygraph.h).
// Called right after a synchronize, when the shim holds nothing deferred; a failure is the
// shim's to report (it prints the cause), the benchmark goes on without that snapshot.
void write_stats(const std::string& prefix, const char* name) {
  using Fn = int (*)(const char*);
  static const Fn fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "pygraph_write_stats"));
  if (fn && !prefix.empty()) fn((prefix + name).c_str());
}

// Every thread of the process onto one CPU (on_core), or onto every CPU but that one, the
// driver's threads too: sched_setaffinity(0) would move only this one. A cell times its chunks on
// the timing core and leaves it between them, so that the threads of the cells waiting for
// their turn never run there. A thread that ended meanwhile is no error.
void pin_all_threads(int core, bool on_core) {
  if (core < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (on_core) {
    CPU_SET(core, &set);
  } else {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < n && c < CPU_SETSIZE; ++c) {
      if (c != core) CPU_SET(c, &set);
    }
    if (CPU_COUNT(&set) == 0) return;  // one CPU: nowhere else to go
  }
  DIR* d = opendir("/proc/self/task");
  if (!d) fail("/proc/self/task", std::strerror(errno));
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') sched_setaffinity(std::atoi(e->d_name), sizeof(set), &set);
  }
  closedir(d);
}

// Onto the timing core for a chunk, as harness.pin_for_chunk: every thread, or with
// BENCH_PIN=main this one alone (sched_setaffinity(0) moves only the caller) and every other
// off it.
void pin_for_chunk(int core, bool main_only) {
  if (!main_only) return pin_all_threads(core, true);
  pin_all_threads(core, false);
  if (core < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  sched_setaffinity(0, sizeof(set), &set);
}

void put_byte(int fd, char c) {
  ssize_t n;
  while ((n = write(fd, &c, 1)) < 0 && errno == EINTR) {
  }
  if (n != 1) fail("write to --done", std::strerror(errno));
}

void get_byte(int fd) {
  char c;
  ssize_t n;
  while ((n = read(fd, &c, 1)) < 0 && errno == EINTR) {
  }
  if (n != 1) fail("read from --go", n == 0 ? "end of file" : std::strerror(errno));
}

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: cuda_loop --steps S [--shape loop|one] [--chunks C] [--warmup W] "
               "[--warm-chunks N] "
               "[--go FIFO --done FIFO] "
               "[--core K] [--stats-prefix PREFIX] [--result PATH]\n");
  std::exit(2);
}

int to_int(const char* s, int min) {
  char* end;
  errno = 0;
  const long v = std::strtol(s, &end, 10);
  if (errno || end == s || *end || v < min || v > 1000000000) usage();
  return static_cast<int>(v);
}

}  // namespace

int main(int argc, char** argv) {
  // The defaults of harness.add_worker_args.
  int chunks = 12, steps = -1, warmup = 10, warm_chunks = 0, core = -1;
  std::string go_path, done_path, prefix, result_path;
  const Shape* shape = &kShapes[0];
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage();
    const char* v = argv[i + 1];
    if (flag == "--chunks") {
      chunks = to_int(v, 1);
    } else if (flag == "--steps") {
      steps = to_int(v, 1);
    } else if (flag == "--shape") {
      shape = std::find_if(std::begin(kShapes), std::end(kShapes),
                           [v](const Shape& k) { return std::strcmp(k.name, v) == 0; });
      if (shape == std::end(kShapes)) usage();
    } else if (flag == "--warmup") {
      warmup = to_int(v, 0);
    } else if (flag == "--warm-chunks") {
      warm_chunks = to_int(v, 0);
    } else if (flag == "--core") {
      core = to_int(v, -1);
    } else if (flag == "--go") {
      go_path = v;
    } else if (flag == "--done") {
      done_path = v;
    } else if (flag == "--stats-prefix") {
      prefix = v;
    } else if (flag == "--result") {
      result_path = v;
    } else {
      usage();
    }
  }
  if (steps < 0 || go_path.empty() != done_path.empty()) usage();
  // The iteration counter is a kernel argument (int): it must not overflow.
  const long long iterations = warmup + static_cast<long long>(warm_chunks + chunks) * steps;
  if (iterations > 2147483647) usage();
  // How a chunk pins (harness.pin_mode): checked before the warm-up, not after it.
  const char* pin = std::getenv("BENCH_PIN");
  const bool main_only = pin && std::strcmp(pin, "main") == 0;
  if (pin && *pin && !main_only && std::strcmp(pin, "all") != 0) fail("BENCH_PIN", "all or main");

  // 1. Buffers, initialised without zeros (a kernel that did not run shows in the digest), and
  // the warm-up.
  std::vector<float> host(3 * kN);
  for (int i = 0; i < kN; ++i) {
    host[i] = std::sin(i + 1.0f);
    host[kN + i] = std::cos(0.5f * i + 0.25f);
    host[2 * kN + i] = std::sin(0.3f * i + 2.0f);
  }
  float* buf;
  cudaStream_t s;
  check(cudaMalloc(&buf, host.size() * sizeof(float)), "cudaMalloc");
  check(cudaMemcpy(buf, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice),
        "cudaMemcpy to the device");
  check(cudaStreamCreate(&s), "cudaStreamCreate");
  float *x = buf, *y = buf + kN, *z = buf + 2 * kN;
  int it = 0;
  for (; it < warmup; ++it) shape->step(it, x, y, z, s);
  check(cudaGetLastError(), "a warm-up launch");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the warm-up");

  // 2-3. Off the timing core, ready. O_RDWR: opening a FIFO so never blocks, whoever comes
  // first.
  pin_all_threads(core, false);
  int go = -1, done = -1;
  if (!go_path.empty()) {
    if ((go = open(go_path.c_str(), O_RDWR)) < 0) fail(go_path.c_str(), std::strerror(errno));
    if ((done = open(done_path.c_str(), O_RDWR)) < 0) fail(done_path.c_str(), std::strerror(errno));
    put_byte(done, 'r');
  }

  // 4-5. The chunks, each started by the driver of the lockstep (without FIFOs: back to back):
  // the ready snapshot, the untimed ones (--warm-chunks), the warm snapshot, the timed ones.
  std::vector<double> chunk_ms;
  for (int c = -warm_chunks; c < chunks; ++c) {
    if (c == -warm_chunks && c < 0) write_stats(prefix, "ready.json");  // after the warm-up
    if (c == 0) write_stats(prefix, "warm.json");  // after the last sync before timing
    if (go >= 0) get_byte(go);
    pin_for_chunk(core, main_only);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize before a chunk");
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < steps; ++k, ++it) shape->step(it, x, y, z, s);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after a chunk");
    const auto t1 = std::chrono::steady_clock::now();
    // Checked after the timing: one call per chunk, not per launch.
    check(cudaGetLastError(), "a launch in a chunk");
    pin_all_threads(core, false);
    if (done >= 0) put_byte(done, 'c');
    if (c >= 0)
      chunk_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count() / steps);
  }

  // 6-7. Snapshot, then the result: FNV-1a 64 over the three buffers' bytes.
  write_stats(prefix, "end.json");
  check(cudaMemcpy(host.data(), buf, host.size() * sizeof(float), cudaMemcpyDeviceToHost),
        "cudaMemcpy to the host");
  check(cudaStreamDestroy(s), "cudaStreamDestroy");
  check(cudaFree(buf), "cudaFree");
  uint64_t h = 14695981039346656037ull;
  const auto* b = reinterpret_cast<const unsigned char*>(host.data());
  for (size_t i = 0; i < host.size() * sizeof(float); ++i) h = (h ^ b[i]) * 1099511628211ull;

  if (result_path.empty()) {  // a plain run: the times, as worker.py prints them
    for (size_t c = 0; c < chunk_ms.size(); ++c) std::printf(c ? " %.4f" : "%.4f", chunk_ms[c]);
    std::printf("\n");
    return 0;
  }
  FILE* f = std::fopen(result_path.c_str(), "w");
  if (!f) fail(result_path.c_str(), std::strerror(errno));
  std::fprintf(f, "{\"chunk_ms\": [");
  for (size_t c = 0; c < chunk_ms.size(); ++c) std::fprintf(f, c ? ", %.9g" : "%.9g", chunk_ms[c]);
  std::fprintf(f, "], \"digest\": \"%016llx\", \"iters\": %lld, \"launches_per_iter\": %d}\n",
               static_cast<unsigned long long>(h),
               static_cast<long long>(warmup) + static_cast<long long>(chunks) * steps,
               shape->launches);
  if (std::fclose(f) != 0) fail(result_path.c_str(), std::strerror(errno));
  return 0;
}
