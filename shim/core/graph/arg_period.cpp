#include "graph/arg_period.h"

#include "graph/token.h"

namespace pygraph {

uint64_t patch_hash(const Pending& p, const uint8_t* arena) {
  using token_detail::mix;
  uint64_t h = mix(0, static_cast<uint64_t>(p.kind));
  switch (p.kind) {
    case NodeKind::kKernel: {
      const EngineLaunch& l = p.launch;
      const size_t n = p.packed_size ? p.packed_size : (l.info ? l.info->arg_bytes : 0);
      h = bytes_hash_add(h, arena + p.args_offset, n);
      h = mix(h, (uint64_t(l.grid[0]) << 32) | l.grid[1]);
      return mix(h, (uint64_t(l.grid[2]) << 32) | l.shared_mem);
    }
    case NodeKind::kEventRecord:
      return mix(h, reinterpret_cast<uint64_t>(p.event.event));
    case NodeKind::kChildGraph:
    case NodeKind::kEventWait:
      return h;  // never patched (a wait is an edge)
    default:     // memsets and copies
      h = mix(h, p.memop.dst);
      h = mix(h, p.memop.src);
      h = mix(h, p.memop.count);
      return mix(h, p.memop.value);
  }
}

void ArgPeriod::start(size_t period) {
  period_ = period;
  learning_ = period > 0 && period <= kMaxPeriod;
  iterations_ = 1;
  next_ = 0;
  restarts_ = 0;
  hashes_ = {};  // reserved at the first launch seen: many loops are never recorded
}

bool ArgPeriod::seen(uint64_t ordinal, uint64_t hash) {
  if (!learning_) return false;
  if (!hashes_.empty() && (ordinal < next_ || ordinal - next_ >= period_)) {
    hashes_.clear();
    if (++restarts_ > kMaxRestarts) {
      learning_ = false;  // given up: the unroll stays
      hashes_ = {};
      return false;
    }
  }
  if (hashes_.capacity() == 0) hashes_.reserve(period_ * (kMaxIterations + 1));
  if (!hashes_.empty()) hashes_.insert(hashes_.end(), ordinal - next_, 0);  // holes alike
  next_ = ordinal + 1;
  hashes_.push_back(hash);
  if (hashes_.size() < period_ * (kMaxIterations + 1)) return false;
  conclude();
  return true;
}

void ArgPeriod::conclude() {
  learning_ = false;
  const size_t n = period_ * (kMaxIterations + 1);
  for (uint32_t m = 1; m <= kMaxIterations; ++m) {
    const size_t lag = m * period_;
    bool back = true;
    for (size_t t = lag; t < n && back; ++t) back = hashes_[t] == hashes_[t - lag];
    if (back) {
      iterations_ = m;
      break;
    }
  }
  hashes_ = {};  // nothing kept once learned
}

}  // namespace pygraph
