/* Cost of the clocks the shim could read on its hot path, on the machine at hand:
   clock_gettime(CLOCK_MONOTONIC) (a vDSO call when the kernel's clocksource allows, a system
   call otherwise) and the x86 time-stamp counter. Prints ns per read, median of repetitions. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}
static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(void) {
  enum { kReads = 200000, kReps = 11 };
  double mono[kReps], tsc[kReps];
  volatile uint64_t sink = 0;
  for (int r = 0; r < kReps; ++r) {
    double t0 = now();
    for (int i = 0; i < kReads; ++i) {
      struct timespec t;
      clock_gettime(CLOCK_MONOTONIC, &t);
      sink += t.tv_nsec;
    }
    mono[r] = (now() - t0) / kReads;
#if defined(__x86_64__)
    t0 = now();
    for (int i = 0; i < kReads; ++i) sink += __rdtsc();
    tsc[r] = (now() - t0) / kReads;
#else
    tsc[r] = 0;
#endif
  }
  qsort(mono, kReps, sizeof(double), cmp);
  qsort(tsc, kReps, sizeof(double), cmp);
  printf("clock_gettime_ns %.1f\nrdtsc_ns %.1f\n", mono[kReps / 2], tsc[kReps / 2]);
  return 0;
}
