// Randomized differential testing: generated CUDA driver programs on the stand-in, printing a
// digest of everything the host observed. Run once without the shim and once under it (any
// mode): the digests must be equal for every seed (tests/e2e/random_test.cpp). The stand-in runs
// work at submission, so work the shim holds back and does not submit before a host read, or
// submits out of order, changes a digest.
//
//   random_program FIRST_SEED COUNT   ->  one line per seed: "<seed> <digest>"
//
// A program: a few device buffers, two streams, and a body of random steps (launches of four
// kernels with random scalars and buffers, launches with packed arguments (`extra`) of a kernel
// whose layout the driver gives and of one whose layout it does not, async memsets of bytes and
// words, device copies (typed and unified), host-to-device copies from pageable memory (changed
// right after the call) and from pinned memory, device-to-host copies into pinned memory, event
// record/wait between the streams, temporary allocations freed again, a switch to the context
// already current, a launch in another context, a kernel of a module that is unloaded and loaded
// again (its function's handle comes back for it), a host buffer used as a pageable source and,
// once registered half-way, as a pinned bounce buffer (device to host, then back), and with
// RANDOM_PROGRAM_GRAPHS=1 in the environment launches of a graph of the program's own, captured
// once per program (reduce-overhead's shape: eager work around the program's graphs)), repeated a
// random number of times with small changes (an iteration counter argument, sometimes a different
// grid) so that sequences repeat as in training loops, and host reads (synchronous copies, stream
// and event syncs, queries) at random points. With RANDOM_PROGRAM_THREADS=1, a second thread
// runs the end of each iteration's body (from a random step on) while the first waits for it,
// as autograd's device thread takes over a training step's backward: two threads taking turns
// on the same streams and context.
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "random_support.h"
#include "runtime_bootstrap.h"
#include "standin.h"

namespace {

constexpr const char* kProgram = "random_program";
using random_support::Digest;

constexpr int kBuffers = 4;
constexpr int kLen = 256;  // ints per buffer

// Kernels: they use grid.x so that a grid change is visible in the results. Their arithmetic
// wraps in unsigned (a signed overflow is undefined behaviour; the bits are the same).
void k_add(const unsigned g[3], const unsigned*, void** p) {  // y[i] += a * (i % grid)
  int a = *static_cast<int*>(p[0]);
  auto* y = reinterpret_cast<int*>(*static_cast<CUdeviceptr*>(p[1]));
  for (int i = 0; i < kLen; ++i) y[i] = int(unsigned(y[i]) + unsigned(a) * (i % g[0] + 1));
}
void k_mix(const unsigned*, const unsigned*, void** p) {  // y[i] = y[i] * 3 + x[i] - a
  int a = *static_cast<int*>(p[0]);
  auto* x = reinterpret_cast<int*>(*static_cast<CUdeviceptr*>(p[1]));
  auto* y = reinterpret_cast<int*>(*static_cast<CUdeviceptr*>(p[2]));
  for (int i = 0; i < kLen; ++i) y[i] = int(unsigned(y[i]) * 3u + unsigned(x[i]) - unsigned(a));
}
void k_shift(const unsigned*, const unsigned*, void** p) {  // y[i] = y[(i + s) % n]
  int s = *static_cast<int*>(p[0]) & 31;
  auto* y = reinterpret_cast<int*>(*static_cast<CUdeviceptr*>(p[1]));
  int tmp[kLen];
  for (int i = 0; i < kLen; ++i) tmp[i] = y[(i + s) % kLen];
  std::memcpy(y, tmp, sizeof tmp);
}
void k_step(const unsigned*, const unsigned*, void** p) {  // y[0] ^= iteration * 2654435761
  long long it = *static_cast<long long*>(p[0]);
  auto* y = reinterpret_cast<int*>(*static_cast<CUdeviceptr*>(p[1]));
  y[it % kLen] ^= int(it * 2654435761u);
}

using random_support::Api;

enum StepKind {
  kAdd,
  kMix,
  kShift,
  kStep,
  kMemset,
  kMemset8,
  kCopyDD,
  kCopyUnified,
  kCopyHD,
  kCopyPinnedHD,
  kCopyDHPinned,
  kRecordWait,
  kTemp,
  kPackedAdd,     // add with its arguments in an `extra` block (layout known; with an odd scalar,
                  // of a kernel whose parameters go on past the block, as NCCL's do)
  kPackedShift,   // shift likewise, through a handle whose layout the driver does not give
  kCtxSame,       // cuCtxSetCurrent to the context already current
  kCtxOther,      // an add launched while another context is current, then back
  kReloadedMix,   // mix through a function of the module that kReload unloads
  kReload,        // that module unloaded and loaded again
  kBounce,        // host buffer: a pageable source, then (registered) a round trip through it
  kProgramGraph,  // the program's own graph (three launches on fixed buffers), where enabled
  kKinds
};

// Kernels beyond the four plain ones: their handles and the module kReload replaces.
struct Extra {
  CUfunction add;           // fn[0]'s kernel, for packed launches
  CUfunction add_tail;      // add, whose parameters have 16 bytes more than the block
  CUfunction shift_opaque;  // k_shift, layout hidden
  CUfunction mix;           // k_mix, of `module`
  CUmodule module;
  CUcontext other;
};

// The packed block of (int, CUdeviceptr) as the kernels lay it out: 16 bytes.
struct IntPtrBlock {
  int a;
  int pad;
  CUdeviceptr y;
};

CUresult launch_packed(const Api& cu, CUfunction f, unsigned grid, CUstream st, int a,
                       CUdeviceptr y) {
  IntPtrBlock block{a, 0, y};
  size_t size = sizeof block;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &block, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  const CUresult r = cu.launch(f, grid, 1, 1, 32, 1, 1, 0, st, nullptr, extra);
  std::memset(&block, 0x5a, sizeof block);  // the driver has read it
  return r;
}

struct Step {
  StepKind kind;
  int stream, a, b, scalar;
  unsigned grid;
};

// RANDOM_PROGRAM_GRAPHS=1: the programs launch graphs of their own (kProgramGraph).
const bool kProgramGraphs = [] {
  const char* v = std::getenv("RANDOM_PROGRAM_GRAPHS");
  return v && std::strcmp(v, "1") == 0;
}();

// RANDOM_PROGRAM_HEADS=1, with RANDOM_PROGRAM_GRAPHS=1: every body begins as a reduce-overhead
// step does, with a launch and then the program's graph, and the program's graph runs on the
// first stream wherever the body launches it (so it stays takeable): the shape of the early_head
// option (chunk_policy.h, early heads).
const bool kHeads = [] {
  const char* v = std::getenv("RANDOM_PROGRAM_HEADS");
  return kProgramGraphs && v && std::strcmp(v, "1") == 0;
}();

// RANDOM_PROGRAM_THREADS=1: each iteration's body ends on a second thread (Turns).
const bool kThreads = [] {
  const char* v = std::getenv("RANDOM_PROGRAM_THREADS");
  return v && std::strcmp(v, "1") == 0;
}();

// RANDOM_PROGRAM_PROGRAMMATIC=1: the kMix launches go through cuLaunchKernelEx with programmatic
// stream serialization allowed in most iterations.
const bool kProgrammatic = [] {
  const char* v = std::getenv("RANDOM_PROGRAM_PROGRAMMATIC");
  return v && std::strcmp(v, "1") == 0;
}();

// A second thread that runs what it is handed while the handing thread waits: one thread runs
// at a time, so the program's order of calls (and its random numbers) stays that of one thread.
class Turns {
 public:
  explicit Turns(CUcontext ctx, const Api& cu)
      : thread_([this, ctx, &cu] {
          if (ctx) cu.ctx_set(ctx);  // the context current where the program began
          std::unique_lock<std::mutex> l(mu_);
          for (;;) {
            cv_.wait(l, [this] { return job_ || quit_; });
            if (!job_) return;
            job_();
            job_ = nullptr;
            cv_.notify_all();
          }
        }) {}
  ~Turns() {
    {
      std::lock_guard<std::mutex> l(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  // Runs `job` on the second thread and returns when it is done.
  void run(std::function<void()> job) {
    std::unique_lock<std::mutex> l(mu_);
    job_ = std::move(job);
    cv_.notify_all();
    cv_.wait(l, [this] { return !job_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool quit_ = false;
  std::thread thread_;  // last: started once the members it uses are
};

uint64_t run_seed(const Api& cu, CUfunction fn[4], Extra* ex, unsigned seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  CUstream streams[2] = {nullptr, nullptr};
  OK(cu.stream_create(&streams[1], 0));
  CUevent event;
  OK(cu.event_create(&event, 0));
  CUdeviceptr buf[kBuffers];
  std::vector<int> host(kLen);
  // Pinned buffers: a source the program fills once (it may not write it while copies from it
  // are in flight), and a destination it reads only after a synchronization.
  int *pinned_in, *pinned_out;
  OK(cu.alloc_host(reinterpret_cast<void**>(&pinned_in), kLen * sizeof(int)));
  OK(cu.alloc_host(reinterpret_cast<void**>(&pinned_out), kLen * sizeof(int)));
  for (int i = 0; i < kLen; ++i) pinned_in[i] = int(seed * 31 + i);
  std::memset(pinned_out, 0, kLen * sizeof(int));
  for (int b = 0; b < kBuffers; ++b) {
    OK(cu.alloc(&buf[b], kLen * sizeof(int)));
    OK(cu.memset_async(buf[b], unsigned(b * 7 + 1), kLen, nullptr));
  }
  // The program's graph: three launches captured on the second stream, their arguments fixed
  // at capture as static buffers are, instantiated as PyTorch does.
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  if (kProgramGraphs) {
    int fixed = int(seed % 97) - 48;
    void* add[] = {&fixed, &buf[0]};
    void* mix[] = {&fixed, &buf[1], &buf[2]};
    void* shift[] = {&fixed, &buf[2]};
    OK(cu.begin_capture(streams[1], CU_STREAM_CAPTURE_MODE_RELAXED));
    OK(cu.launch(fn[0], 2, 1, 1, 32, 1, 1, 0, streams[1], add, nullptr));
    OK(cu.launch(fn[1], 1, 1, 1, 32, 1, 1, 0, streams[1], mix, nullptr));
    OK(cu.launch(fn[2], 1, 1, 1, 32, 1, 1, 0, streams[1], shift, nullptr));
    OK(cu.end_capture(streams[1], &graph));
    OK(cu.graph_instantiate(&exec, graph,
                            CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
                                CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY));
  }
  // Pageable until registered half-way through the iterations; from then on the GPU alone
  // writes it (a round trip in stream order), the host never.
  std::vector<int> bounce(kLen, 0);
  bool registered = false;
  std::vector<Step> body(4 + pick(24));
  for (auto& s : body) {
    s = Step{StepKind(pick(kKinds)), pick(4) == 0 ? 1 : 0, pick(kBuffers),
             pick(kBuffers),         pick(1000) - 500,     unsigned(1 + pick(3))};
  }
  if (kHeads) {  // after the draws: every other program's body stays as it was
    body[0].kind = kAdd;
    body[0].stream = 0;
    body[1].kind = kProgramGraph;
    for (auto& s : body) s.stream = s.kind == kProgramGraph ? 0 : s.stream;
  }
  Digest d;
  const int iterations = 1 + pick(12);
  auto run_step = [&](const Step& s, int it) {
    CUstream st = streams[s.stream];
    int scalar = s.scalar;
    CUdeviceptr x = buf[s.a], y = buf[s.b];
    long long iteration = it;
    unsigned grid = pick(16) == 0 ? s.grid + 1 : s.grid;  // sometimes another grid
    switch (s.kind) {
      case kAdd: {
        void* p[] = {&scalar, &y};
        OK(cu.launch(fn[0], grid, 1, 1, 32, 1, 1, 0, st, p, nullptr));
        break;
      }
      case kMix: {
        void* p[] = {&scalar, &x, &y};
        if (kProgrammatic) {
          // As cuBLAS's Hopper GEMMs launch: programmatic stream serialization allowed, in four
          // iterations of five (another shape in the fifth).
          CUlaunchAttribute attr{};
          attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
          attr.value.programmaticStreamSerializationAllowed = (s.scalar + it) % 5 != 0;
          CUlaunchConfig c{};
          c.gridDimX = grid;
          c.gridDimY = c.gridDimZ = 1;
          c.blockDimX = 32;
          c.blockDimY = c.blockDimZ = 1;
          c.hStream = st;
          c.attrs = &attr;
          c.numAttrs = 1;
          OK(cu.launch_ex(&c, fn[1], p, nullptr));
        } else {
          OK(cu.launch(fn[1], grid, 1, 1, 32, 1, 1, 0, st, p, nullptr));
        }
        break;
      }
      case kShift: {
        void* p[] = {&scalar, &y};
        OK(cu.launch(fn[2], 1, 1, 1, 32, 1, 1, 0, st, p, nullptr));
        break;
      }
      case kStep: {
        void* p[] = {&iteration, &y};
        OK(cu.launch(fn[3], 1, 1, 1, 32, 1, 1, 0, st, p, nullptr));
        break;
      }
      case kMemset:
        OK(cu.memset_async(y, unsigned(scalar + it), kLen / 2, st));
        break;
      case kMemset8:
        OK(cu.memset8_async(y + 4 * (s.a + 1), static_cast<unsigned char>(scalar + it),
                            4 * (kLen / 4), st));
        break;
      case kCopyDD:
        if (s.a != s.b) OK(cu.copy_dd_async(y, x, kLen * sizeof(int), st));
        break;
      case kCopyUnified:
        if (s.a != s.b) OK(cu.copy_async(y, x, (kLen / 2 + it) * sizeof(int), st));
        break;
      case kCopyPinnedHD:
        OK(cu.copy_hd_async(y, pinned_in + it % 8, (kLen - 8) * sizeof(int), st));
        break;
      case kCopyDHPinned:
        OK(cu.copy_dh_async(pinned_out, y, kLen * sizeof(int), st));
        break;
      case kCopyHD: {
        // Pageable source, changed right after the call: the copy must take the old values.
        std::vector<int> src(kLen, scalar ^ it);
        OK(cu.copy_hd_async(y, src.data(), kLen * sizeof(int), st));
        std::fill(src.begin(), src.end(), -1);
        break;
      }
      case kRecordWait:
        OK(cu.event_record(event, streams[s.stream]));
        OK(cu.wait_event(streams[1 - s.stream], event, 0));
        break;
      case kTemp: {
        CUdeviceptr t;
        OK(cu.alloc(&t, kLen * sizeof(int)));
        OK(cu.copy_dd_async(t, x, kLen * sizeof(int), st));
        void* p[] = {&scalar, &t, &y};
        OK(cu.launch(fn[1], 1, 1, 1, 32, 1, 1, 0, st, p, nullptr));
        OK(cu.free(t));
        break;
      }
      case kPackedAdd:
        OK(launch_packed(cu, scalar % 2 ? ex->add_tail : ex->add, grid, st, scalar, y));
        break;
      case kPackedShift:
        OK(launch_packed(cu, ex->shift_opaque, 1, st, scalar, y));
        break;
      case kCtxSame: {
        CUcontext current;
        OK(cu.ctx_get(&current));
        OK(cu.ctx_set(current));
        break;
      }
      case kCtxOther: {
        CUcontext current;
        OK(cu.ctx_get(&current));
        OK(cu.ctx_set(ex->other));
        void* p[] = {&scalar, &y};
        OK(cu.launch(fn[0], grid, 1, 1, 32, 1, 1, 0, st, p, nullptr));
        OK(cu.ctx_set(current));
        break;
      }
      case kReloadedMix: {
        void* p[] = {&scalar, &x, &y};
        OK(cu.launch(ex->mix, grid, 1, 1, 32, 1, 1, 0, st, p, nullptr));
        break;
      }
      case kReload:
        OK(cu.module_unload(ex->module));
        OK(cu.module_load(&ex->module, "reloaded"));
        OK(cu.get_function(&ex->mix, ex->module, "mix"));
        break;
      case kBounce:
        if (!registered && it >= iterations / 2 && it > 0) {
          OK(cu.host_register(bounce.data(), kLen * sizeof(int), 0));
          registered = true;
        }
        if (registered) {
          OK(cu.copy_dh_async(bounce.data(), x, kLen * sizeof(int), st));
          OK(cu.copy_hd_async(y, bounce.data(), kLen * sizeof(int), st));
        } else {
          std::fill(bounce.begin(), bounce.end(), scalar ^ (it * 7));
          OK(cu.copy_hd_async(y, bounce.data(), kLen * sizeof(int), st));
          std::fill(bounce.begin(), bounce.end(), -1);
        }
        break;
      case kProgramGraph:
        if (exec) OK(cu.graph_launch(exec, st));
        break;
      case kKinds:
        break;
    }
    // Host observations at random points, as loss.item() or a check would.
    switch (pick(24)) {
      case 0:
        OK(cu.copy_dh(host.data(), y, kLen * sizeof(int)));
        d.add(host.data(), kLen * sizeof(int));
        break;
      case 1:
        OK(cu.stream_sync(st));
        break;
      case 2:
        OK(cu.event_record(event, st));
        OK(cu.event_sync(event));
        break;
      case 3:
        // Not digested: when work finishes is timing, not a result. A shim reads its own
        // events (timings, staging), and on the asynchronous stand-in that may run work
        // earlier than the program's own calls would (as random_streams_program).
        (void)cu.stream_query(st);
        break;
      default:
        break;
    }
  };
  CUcontext begun = nullptr;
  OK(cu.ctx_get(&begun));
  std::unique_ptr<Turns> turns(kThreads ? new Turns(begun, cu) : nullptr);
  for (int it = 0; it < iterations; ++it) {
    // Where the second thread takes over this iteration (the body's end: none of it).
    const size_t handover = turns ? size_t(pick(int(body.size()) + 1)) : body.size();
    for (size_t i = 0; i < handover; ++i) run_step(body[i], it);
    if (handover < body.size()) {
      turns->run([&] {
        for (size_t i = handover; i < body.size(); ++i) run_step(body[i], it);
      });
    }
  }
  turns.reset();
  OK(cu.ctx_sync(nullptr));
  if (exec) {
    OK(cu.graph_exec_destroy(exec));
    OK(cu.graph_destroy(graph));
  }
  d.add(pinned_out, kLen * sizeof(int));
  if (registered) OK(cu.host_unregister(bounce.data()));
  OK(cu.free_host(pinned_in));
  OK(cu.free_host(pinned_out));
  for (int b = 0; b < kBuffers; ++b) {
    OK(cu.copy_dh(host.data(), buf[b], kLen * sizeof(int)));
    d.add(host.data(), kLen * sizeof(int));
    OK(cu.free(buf[b]));
  }
  OK(cu.event_destroy(event));
  OK(cu.stream_destroy(streams[1]));
  return d.h;
}

}  // namespace

int main(int argc, char** argv) {
  static const size_t s1[2] = {4, 8}, s2[3] = {4, 8, 8}, s3[2] = {8, 8};
  const random_support::Kernel kernels[4] = {{"add", &k_add, 2, s1},
                                             {"mix", &k_mix, 3, s2},
                                             {"shift", &k_shift, 2, s1},
                                             {"step", &k_step, 2, s3}};
  // A kernel whose parameter layout the driver does not give (packed arguments through extra),
  // one whose parameters go on past the packed block it is launched with,
  // a context to switch to, and a module loaded and unloaded as the programs run.
  standin_register_kernel("shift_opaque", &k_shift, 2, s1);
  standin_hide_layout("shift_opaque");
  static const size_t tail[3] = {4, 8, 16};
  standin_register_kernel("add_tail", &k_add, 3, tail);
  Api cu;
  CUfunction fn[4];
  Extra ex{};
  bool extra_ready = false;
  return random_support::run_seeds(
      argc, argv, kProgram, kernels, 4, fn, &cu, [&](const Api& api, unsigned seed) -> uint64_t {
        if (!extra_ready) {
          ex.add = fn[0];
          ex.other = standin_context_create();
          if (api.get_function(&ex.shift_opaque, nullptr, "shift_opaque") != CUDA_SUCCESS ||
              api.get_function(&ex.add_tail, nullptr, "add_tail") != CUDA_SUCCESS ||
              api.module_load(&ex.module, "reloaded") != CUDA_SUCCESS ||
              api.get_function(&ex.mix, ex.module, "mix") != CUDA_SUCCESS) {
            std::fprintf(stderr, "%s: cannot set up kernels and modules\n", kProgram);
            std::exit(1);
          }
          extra_ready = true;
        }
        return run_seed(api, fn, &ex, seed);
      });
}
