// Loops whose arguments come back every m iterations: the multiple of the period to follow.
//
// A loop is followed as its period unrolled to a chunk's worth (period.h), a power of two of
// iterations, so that arguments that alternate every 2, 4, ... iterations (double buffers) are
// the same at each node on every replay and patch nothing. Arguments that come back every 3, 5,
// 6 or 7 iterations (a ring of three buffers, a schedule of scalars) differ at some node on
// every replay of such an unroll, and each replay patches them (0.4-0.7 us a node, NOTES.md).
// Unrolled to a multiple of m instead, each replay finds every node as it left it: issue 10 asks
// graph mode to prefer, among the candidate multiples, the one whose replays patch the fewest
// nodes.
//
// Learned once per loop from the first launches its chunks submit: what a node is patched for
// (patch_hash) of each launch, over kMaxIterations + 1 iterations in a row. The argument period
// is the least m such that every launch's hash came back m iterations later. Where none does (a
// counter among the arguments: every replay patches whatever the multiple), nothing changes.
// Called once per chunk submitted, never per launch; nothing is kept once learned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph/pending_work.h"

namespace pygraph {

// What a node is patched for, hashed: a kernel's argument bytes (`arena` holds them), grid and
// dynamic shared memory; a memop's addresses, size and value; an event record's event. Two
// launches of one token with equal hashes leave a node as it was.
uint64_t patch_hash(const Pending& p, const uint8_t* arena);

class ArgPeriod {
 public:
  static constexpr uint32_t kMaxIterations = 8;
  // Loops longer than this many launches a period are not learned (their unroll is 1 or 2
  // periods, and the hashes kept grow with the period).
  static constexpr size_t kMaxPeriod = 512;
  // Runs cut short (a gap, a sync and a resume) before learning gives up: a loop that never
  // runs 9 periods in a row would otherwise hash every launch it records for good.
  static constexpr uint32_t kMaxRestarts = 4;

  // A loop of `period` launches: learning starts, or starts over.
  void start(size_t period);
  // The launch at `ordinal` (counted along the loop, consecutive launches consecutive) had
  // `hash`. A gap shorter than a period (event ops issued where they were: the same at each
  // iteration) holds no launch to compare; a longer one, or going back, starts over. True when
  // learning ends with this launch.
  bool seen(uint64_t ordinal, uint64_t hash);
  bool learning() const { return learning_; }
  // Iterations after which the arguments came back: 1 where they never change, and where none
  // of 1..kMaxIterations fits (or nothing was learned).
  uint32_t iterations() const { return iterations_; }

 private:
  void conclude();

  size_t period_ = 0;
  bool learning_ = false;
  uint32_t iterations_ = 1;
  uint64_t next_ = 0;  // the ordinal expected next
  uint32_t restarts_ = 0;
  std::vector<uint64_t> hashes_;
};

}  // namespace pygraph
