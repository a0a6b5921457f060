// Randomized differential testing on several streams, for the asynchronous stand-in
// (STANDIN_ASYNC=1): generated programs whose work is spread over three created streams, each
// blocking or not, and the legacy default stream (whose implicit order with the blocking
// streams the program's vector clocks follow), ordered by event records and waits (in half of
// the programs a new event per wait, destroyed right after it, as PyTorch's wait_stream does; in
// a third of the others one event for every wait, as NCCL does),
// printing a digest of everything the host read. Run
// without the shim and under it: the digests must be equal for every seed
// (tests/e2e/random_streams_test.cpp).
//
//   random_streams_program FIRST_SEED COUNT   ->  one line per seed: "<seed> <digest>"
//
// A program: a few device buffers and a body of random steps (launches of three kernels,
// memsets, device copies, copies from pageable memory, forks (side streams wait on the main one,
// as PyTorch's wait_stream), joins (the main stream waits on the sides), a wait of one stream on
// another, stream syncs, event syncs, event and stream query loops, host reads), repeated a random
// number of times; some programs have no sync in the body (a loop that only the end observes).
// The programs are race free: vector clocks of the streams and the host follow what the
// records, waits and syncs order, and before a step that would touch a buffer another stream
// may still use, the program records an event there and waits on it (the needed wait). With
// RANDOM_STREAMS_DROP_WAIT=1 the first needed wait of each program is left out (its clocks are
// kept as if it was there, so the program is otherwise the same): the asynchronous stand-in
// must then compute something else for many seeds, the synchronous one never.
// RANDOM_STREAMS_HOST_FUNC=1 first puts a host function on one stream: from then on no stream
// may join a chunk (graph_engine's taint, for the rest of the process), so records and waits on
// streams the chunk does not hold are issued in place, also as an occurrence's last entry.
// RANDOM_STREAMS_GPU_IDLE=1 lets the simulated GPU idle (standin_gpu_idle, 0.1 to 3 ms) before a
// quarter of the body's steps, the same ones each iteration, as while the host runs Python: the
// shim's timed rounds then see a GPU that keeps up, and split segments (pause_places.h).
// RANDOM_STREAMS_NONBLOCKING=1 makes every created stream non-blocking, RANDOM_STREAMS_NO_LEGACY=1
// puts no work on the legacy stream, RANDOM_STREAMS_NO_FRESH_EVENTS=1 reuses one event per stream.
// Query answers are not digested: when work finishes is timing, not a result (a shim may query
// its own events, which runs work earlier).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "random_support.h"
#include "runtime_bootstrap.h"
#include "standin.h"

namespace {

constexpr const char* kProgram = "random_streams_program";
using random_support::Digest;

constexpr int kStreams = 4;  // stream 3 is the legacy default stream
constexpr int kBuffers = 5;
constexpr int kLen = 64;  // ints per buffer

void host_noop(void*) {}

int* ints(void* p) {
  return reinterpret_cast<int*>(*static_cast<CUdeviceptr*>(p));
}
// Wrapping arithmetic in unsigned: a signed overflow is undefined behaviour.
void k_add(const unsigned*, const unsigned*, void** p) {  // y[i] += a + i
  int a = *static_cast<int*>(p[0]);
  int* y = ints(p[1]);
  for (int i = 0; i < kLen; ++i) y[i] = int(unsigned(y[i]) + unsigned(a) + unsigned(i));
}
void k_mix(const unsigned*, const unsigned*, void** p) {  // y[i] = y[i] * 3 + x[i] - a
  int a = *static_cast<int*>(p[0]);
  const int* x = ints(p[1]);
  int* y = ints(p[2]);
  for (int i = 0; i < kLen; ++i) y[i] = int(unsigned(y[i]) * 3u + unsigned(x[i]) - unsigned(a));
}
void k_shift(const unsigned*, const unsigned*, void** p) {  // y[i] = y[(i + s) % n] ^ s
  int s = *static_cast<int*>(p[0]) & 15;
  int* y = ints(p[1]);
  int tmp[kLen];
  for (int i = 0; i < kLen; ++i) tmp[i] = y[(i + s) % kLen] ^ s;
  std::memcpy(y, tmp, sizeof tmp);
}

using random_support::Api;

enum StepKind {
  kAdd,
  kMix,
  kShift,
  kMemset,
  kCopyDD,
  kCopyHD,  // from pageable memory, changed right after the call
  kFork,    // every side stream waits on the main one
  kJoin,    // the main stream waits on every side one
  kWaitOne,
  kWork,  // the kinds above are work or ordering; below, host observations
  kStreamSync = kWork,
  kEventSync,
  kEventQueryLoop,
  kStreamQuery,
  kRead,
  kKinds
};

struct Step {
  StepKind kind;
  int stream, other, a, b, scalar;
  unsigned long long idle_ns = 0;  // the GPU idles this long before the step
};

// Happens-before bookkeeping: a vector clock per stream and for the host, and per buffer its
// last write and the reads since.
struct Clock {
  int c[kStreams] = {};
  void join(const Clock& o) {
    for (int i = 0; i < kStreams; ++i) c[i] = std::max(c[i], o.c[i]);
  }
};
struct BufferUse {
  int writer = -1, written = 0;  // stream and its clock at the last write
  int read[kStreams] = {};       // each stream's clock at its last read since
};

struct Program {
  const Api& cu;
  unsigned seed;
  bool drop_first_needed_wait;
  CUstream st[kStreams];
  CUevent ev[kStreams];  // ev[t]: recorded on stream t
  Clock clock[kStreams], event_clock[kStreams], host;
  BufferUse use[kBuffers];
  CUdeviceptr buf[kBuffers];
  bool dropped = false;

  bool blocking[kStreams] = {};
  bool fresh_events = false;
  // NCCL's way: one event for every wait, recorded on one stream and then on another, each
  // record after a wait on the one before (so a chunk can hold several records of it).
  bool shared_event = false;
  CUevent scratch = nullptr;
  // The legacy stream's implicit synchronization, before any op on s.
  void implicit(int s) {
    if (s == kStreams - 1) {
      for (int b = 0; b < kStreams - 1; ++b)
        if (blocking[b]) clock[s].join(clock[b]);
    } else if (blocking[s]) {
      clock[s].join(clock[kStreams - 1]);
    }
  }
  // Stream s waits on the work issued to t so far.
  void wait(int s, int t, bool needed) {
    if (s == t) return;
    implicit(t);
    implicit(s);
    event_clock[t] = clock[t];
    clock[s].join(event_clock[t]);
    if (needed && drop_first_needed_wait && !dropped) {
      dropped = true;
      return;
    }
    if (fresh_events) {  // PyTorch's wait_stream: a new event each time, destroyed at once
      CUevent e;
      OK(cu.event_create(&e, 0));
      OK(cu.event_record(e, st[t]));
      OK(cu.wait_event(st[s], e, 0));
      OK(cu.event_destroy(e));
    } else {
      const CUevent e = shared_event ? scratch : ev[t];
      OK(cu.event_record(e, st[t]));
      OK(cu.wait_event(st[s], e, 0));
    }
  }
  // Makes stream s ordered after what its access to buffer b conflicts with.
  void order_access(int s, int b, bool write) {
    const BufferUse& u = use[b];
    if (u.writer >= 0 && clock[s].c[u.writer] < u.written) wait(s, u.writer, true);
    if (!write) return;
    for (int t = 0; t < kStreams; ++t) {
      if (clock[s].c[t] < u.read[t]) wait(s, t, true);
    }
  }
  // Before work on s reading `x` (or -1) and writing `y`; after it, `done`.
  void before(int s, int x, int y) {
    implicit(s);
    clock[s].join(host);  // the host saw that finish before issuing this
    if (x >= 0) order_access(s, x, false);
    order_access(s, y, true);
  }
  void done(int s, int x, int y) {
    const int now = ++clock[s].c[s];
    if (x >= 0) use[x].read[s] = now;
    use[y] = BufferUse{};
    use[y].writer = s;
    use[y].written = now;
  }
  void observed(int s) { host.join(clock[s]); }
};

uint64_t run_seed(const Api& cu, CUfunction fn[3], unsigned seed, bool drop) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  Program p{cu, seed, drop, {}, {}, {}, {}, {}, {}, {}};
  for (int s = 0; s < kStreams; ++s) {
    if (s == kStreams - 1) {
      p.st[s] = nullptr;  // the legacy default stream
      p.blocking[s] = true;
    } else {
      p.blocking[s] = pick(2) == 0;
      if (std::getenv("RANDOM_STREAMS_NONBLOCKING")) p.blocking[s] = false;
      OK(cu.stream_create(&p.st[s], p.blocking[s] ? 0 : CU_STREAM_NON_BLOCKING));
    }
    OK(cu.event_create(&p.ev[s], 0));
  }
  p.fresh_events = pick(2) == 0;
  if (std::getenv("RANDOM_STREAMS_NO_FRESH_EVENTS")) p.fresh_events = false;
  p.shared_event = !p.fresh_events && seed % 3 == 0;  // not a pick: the programs stay the same
  OK(cu.event_create(&p.scratch, 0));
  int legacy_weight = pick(3);  // 0: no work on the legacy stream
  if (std::getenv("RANDOM_STREAMS_NO_LEGACY")) legacy_weight = 0;
  for (int b = 0; b < kBuffers; ++b) {
    OK(cu.alloc(&p.buf[b], kLen * sizeof(int)));
    p.before(0, -1, b);
    OK(cu.memset_async(p.buf[b], unsigned(b * 7 + 1), kLen, p.st[0]));
    p.done(0, -1, b);
  }
  if (std::getenv("RANDOM_STREAMS_HOST_FUNC")) {
    // A host function that does nothing (after the buffers' memsets, ordered as any work).
    OK(cu.launch_host_func(p.st[seed % (kStreams - 1)], &host_noop, nullptr));
  }
  const bool observes = pick(3) != 0;  // else a loop that only the end observes
  std::vector<Step> body(3 + pick(20));
  for (auto& s : body) {
    const int kinds = observes ? kKinds : kWork;
    s = Step{StepKind(pick(kinds)), pick(kStreams), pick(kStreams),
             pick(kBuffers),        pick(kBuffers), pick(1000) - 500};
    if (s.stream == kStreams - 1 && pick(4) >= legacy_weight) s.stream = pick(kStreams - 1);
    if (s.other == kStreams - 1 && pick(4) >= legacy_weight) s.other = pick(kStreams - 1);
  }
  const bool gpu_idles = std::getenv("RANDOM_STREAMS_GPU_IDLE") != nullptr;
  if (gpu_idles) {
    for (auto& s : body) s.idle_ns = pick(4) == 0 ? 100'000ull * unsigned(1 + pick(30)) : 0;
  }

  Digest d;
  std::vector<int> host(kLen);
  // With the GPU idling, enough iterations for a segment to be learned, weighed and split.
  const int iterations = gpu_idles ? 12 + pick(12) : 1 + pick(10);
  for (int it = 0; it < iterations; ++it) {
    for (const Step& s : body) {
      const int si = s.stream;
      CUstream st = p.st[si];
      int scalar = s.scalar + it;
      const int xb = s.a, yb = s.b;
      CUdeviceptr x = p.buf[xb], y = p.buf[yb];
      if (s.idle_ns) standin_gpu_idle(s.idle_ns);
      switch (s.kind) {
        case kAdd:
        case kShift: {
          p.before(si, -1, yb);
          void* args[] = {&scalar, &y};
          OK(cu.launch(fn[s.kind == kAdd ? 0 : 2], 1, 1, 1, 32, 1, 1, 0, st, args, nullptr));
          p.done(si, -1, yb);
          break;
        }
        case kMix:
        case kCopyDD:
          if (xb == yb) break;
          p.before(si, xb, yb);
          if (s.kind == kMix) {
            void* args[] = {&scalar, &x, &y};
            OK(cu.launch(fn[1], 1, 1, 1, 32, 1, 1, 0, st, args, nullptr));
          } else {
            OK(cu.copy_dd_async(y, x, kLen * sizeof(int), st));
          }
          p.done(si, xb, yb);
          break;
        case kMemset:
          p.before(si, -1, yb);
          OK(cu.memset_async(y, unsigned(scalar), kLen / 2, st));
          p.done(si, -1, yb);
          break;
        case kCopyHD: {
          p.before(si, -1, yb);
          std::vector<int> src(kLen, scalar);
          OK(cu.copy_hd_async(y, src.data(), kLen * sizeof(int), st));
          std::fill(src.begin(), src.end(), -1);
          p.done(si, -1, yb);
          break;
        }
        case kFork:
          for (int t = 1; t < kStreams - 1; ++t) p.wait(t, 0, false);
          break;
        case kJoin:
          for (int t = 1; t < kStreams - 1; ++t) p.wait(0, t, false);
          break;
        case kWaitOne:
          p.wait(si, s.other, false);
          break;
        case kStreamSync:
          OK(cu.stream_sync(st));
          p.observed(si);
          break;
        case kEventSync:
          p.implicit(si);
          p.event_clock[si] = p.clock[si];
          OK(cu.event_record(p.ev[si], st));
          OK(cu.event_sync(p.ev[si]));
          p.observed(si);
          break;
        case kEventQueryLoop: {
          p.implicit(si);
          p.event_clock[si] = p.clock[si];
          OK(cu.event_record(p.ev[si], st));
          CUresult r;
          while ((r = cu.event_query(p.ev[si])) == CUDA_ERROR_NOT_READY) {
          }
          OK(r);
          p.observed(si);
          break;
        }
        case kStreamQuery: {
          const CUresult r = cu.stream_query(st);  // not digested, and no clock: timing
          if (r != CUDA_ERROR_NOT_READY) OK(r);
          break;
        }
        case kRead: {
          // The host waits for the buffer's last writer, then reads it synchronously.
          const int w = p.use[yb].writer;
          if (w >= 0 && p.host.c[w] < p.use[yb].written) {
            OK(cu.stream_sync(p.st[w]));
            p.observed(w);
          }
          OK(cu.copy_dh(host.data(), y, kLen * sizeof(int)));
          d.add(host.data(), kLen * sizeof(int));
          break;
        }
        case kKinds:
          break;
      }
    }
  }
  OK(cu.ctx_sync(nullptr));
  for (int b = 0; b < kBuffers; ++b) {
    OK(cu.copy_dh(host.data(), p.buf[b], kLen * sizeof(int)));
    d.add(host.data(), kLen * sizeof(int));
    OK(cu.free(p.buf[b]));
  }
  for (int s = 0; s < kStreams; ++s) {
    OK(cu.event_destroy(p.ev[s]));
    if (p.st[s]) OK(cu.stream_destroy(p.st[s]));
  }
  OK(cu.event_destroy(p.scratch));
  return d.h;
}

}  // namespace

int main(int argc, char** argv) {
  static const size_t s1[2] = {4, 8}, s2[3] = {4, 8, 8};
  const random_support::Kernel kernels[3] = {
      {"add", &k_add, 2, s1}, {"mix", &k_mix, 3, s2}, {"shift", &k_shift, 2, s1}};
  // The mutation the test uses to show the asynchronous stand-in catches a missing wait.
  const char* drop_env = std::getenv("RANDOM_STREAMS_DROP_WAIT");
  const bool drop = drop_env && std::atoi(drop_env) != 0;
  Api cu;
  CUfunction fn[3];
  return random_support::run_seeds(
      argc, argv, kProgram, kernels, 3, fn, &cu,
      [&](const Api& api, unsigned seed) { return run_seed(api, fn, seed, drop); });
}
