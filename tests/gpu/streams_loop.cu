// GPU check of several streams in one graph (PYGRAPH_STREAMS=1): a loop on two non-blocking
// streams ordered by events both ways, with the driver semantics that graph mode must keep:
// - a wait on a third stream and a host event sync on an event that a graph recorded (an event
//   record node) see the work before it, even while a slow kernel still runs on its stream;
// - events recorded with cudaEventRecordWithFlags (flags 0) as PyTorch records them;
// - events created and destroyed while the loop runs (an event record node then records an
//   event the graph has not seen before);
// - event queries and single-stream syncs in the middle of the loop;
// - one event recorded on each stream in turn, each record after a wait on the one before, as
//   NCCL relays its scratch event (two record nodes of one event in one graph), and a third
//   stream's wait on it after the graph went out, which must bind the later record.
// The kernels mix integers, so any lost or reordered launch changes the digests. Prints one
// digest per host read; tests/gpu/check.py compares them with a run without the shim.
//   streams_loop STEPS
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

// Spins for about `cycles` GPU clocks first, so that work behind it on the same stream
// finishes late: a wait that missed its event would read too early.
__global__ void spin_mix(uint32_t* x, const uint32_t* y, uint32_t k, long long cycles, int n) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 2654435761u + y[i] + k;
}
__global__ void mix(uint32_t* x, const uint32_t* y, uint32_t k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = (x[i] ^ (y[i] >> 3)) * 40503u + k;
}

#define CHECK(x)                                                                         \
  do {                                                                                   \
    cudaError_t r_ = (x);                                                                \
    if (r_ != cudaSuccess) {                                                             \
      std::fprintf(stderr, "streams_loop: %s failed: %s\n", #x, cudaGetErrorString(r_)); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

static uint64_t digest(const uint32_t* p, int n) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  const auto* b = reinterpret_cast<const uint8_t*>(p);
  for (size_t i = 0; i < n * sizeof(uint32_t); ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 200;
  const int n = 1 << 14, g = n / 256;
  const long long slow = 200000;  // ~0.1 ms at H100 clocks
  uint32_t *x, *y, *z, *w, *host;
  CHECK(cudaMalloc(&x, n * sizeof(uint32_t)));
  CHECK(cudaMalloc(&y, n * sizeof(uint32_t)));
  CHECK(cudaMalloc(&z, n * sizeof(uint32_t)));
  CHECK(cudaMalloc(&w, n * sizeof(uint32_t)));
  CHECK(cudaMallocHost(&host, n * sizeof(uint32_t)));
  cudaStream_t a, b, reader;
  CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking));
  CHECK(cudaMemsetAsync(x, 1, n * sizeof(uint32_t), a));
  CHECK(cudaMemsetAsync(y, 2, n * sizeof(uint32_t), a));
  CHECK(cudaMemsetAsync(z, 3, n * sizeof(uint32_t), a));
  CHECK(cudaMemsetAsync(w, 4, n * sizeof(uint32_t), a));
  CHECK(cudaStreamSynchronize(a));
  cudaEvent_t fork, join, done, scratch;
  CHECK(cudaEventCreateWithFlags(&scratch, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  int reads = 0;
  for (int step = 0; step < steps; ++step) {
    if (step % 25 == 24) {  // a new event for the fork: a record node the graph has not seen
      CHECK(cudaEventDestroy(fork));
      CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    }
    mix<<<g, 256, 0, a>>>(x, y, step, n);
    CHECK(cudaEventRecord(fork, a));
    CHECK(cudaStreamWaitEvent(b, fork, 0));
    spin_mix<<<g, 256, 0, b>>>(y, x, step * 3u, slow, n);  // b reads x after a wrote it
    mix<<<g, 256, 0, a>>>(z, x, 7u, n);                    // meanwhile on a: both read x
    mix<<<g, 256, 0, b>>>(y, y, 11u, n);
    CHECK(cudaEventRecordWithFlags(join, b, 0));  // PyTorch's way of recording
    CHECK(cudaStreamWaitEvent(a, join, 0));
    mix<<<g, 256, 0, a>>>(x, y, step + 5u, n);  // a reads y after b wrote it
    spin_mix<<<g, 256, 0, a>>>(x, z, 13u, slow, n);
    CHECK(cudaEventRecord(done, a));
    mix<<<g, 256, 0, b>>>(w, w, 17u, n);  // b goes on without a: no order between them
    CHECK(cudaEventRecord(scratch, a));   // NCCL's relay: a's work so far, then
    CHECK(cudaStreamWaitEvent(b, scratch, 0));
    spin_mix<<<g, 256, 0, b>>>(w, x, 19u, slow, n);  // b reads x after a wrote it
    CHECK(cudaEventRecord(scratch, b));              // the same event again, after the wait on it
    CHECK(cudaStreamWaitEvent(a, scratch, 0));       // a's next write of x after b read it
    if (step % 7 == 3) (void)cudaEventQuery(join);   // its answer varies; only the call matters
    if (step % 10 == 9) {
      // A third stream waits for `done` (recorded inside a graph in graph mode) and copies x
      // while the slow kernel may still run; then a host sync on the event, and on b alone.
      CHECK(cudaStreamWaitEvent(reader, done, 0));
      CHECK(cudaMemcpyAsync(host, x, n * sizeof(uint32_t), cudaMemcpyDeviceToHost, reader));
      CHECK(cudaEventSynchronize(done));
      CHECK(cudaStreamSynchronize(reader));
      std::printf("x %d %016llx\n", step, static_cast<unsigned long long>(digest(host, n)));
      // After the graph went out (the event sync above submits it): the relay event's latest
      // record is b's, behind b's slow relay kernel. A wait on it that bound the earlier record
      // (a's) would copy w while that kernel may still run.
      CHECK(cudaStreamWaitEvent(reader, scratch, 0));
      CHECK(cudaMemcpyAsync(host, w, n * sizeof(uint32_t), cudaMemcpyDeviceToHost, reader));
      CHECK(cudaStreamSynchronize(reader));
      std::printf("r %d %016llx\n", step, static_cast<unsigned long long>(digest(host, n)));
      CHECK(cudaStreamSynchronize(b));
      CHECK(cudaMemcpy(host, w, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
      std::printf("w %d %016llx\n", step, static_cast<unsigned long long>(digest(host, n)));
      ++reads;
    }
  }
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(host, x, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  std::printf("end x %016llx", static_cast<unsigned long long>(digest(host, n)));
  CHECK(cudaMemcpy(host, y, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  std::printf(" y %016llx reads %d\n", static_cast<unsigned long long>(digest(host, n)), reads);
  CHECK(cudaEventDestroy(fork));
  CHECK(cudaEventDestroy(join));
  CHECK(cudaEventDestroy(done));
  CHECK(cudaEventDestroy(scratch));
  return 0;
}
