#include "graph/stream_fork.h"

#include <algorithm>

namespace pygraph {

void StreamFork::clear() {
  streams_.clear();
  records_.clear();
  node_stream_.clear();
  dep_start_.clear();
  deps_.clear();
  shape_ = 0;
  chain_ = true;
  chain_nodes_ = 0;
}

void StreamFork::unchain() {
  if (!chain_) return;
  chain_ = false;
  const uint32_t n = chain_nodes_;
  chain_nodes_ = 0;
  if (!streams_.empty()) streams_[0].last = kNone;
  for (uint32_t i = 0; i < n; ++i) add_node(0);
}

uint32_t StreamFork::ordinal(uint64_t stream) const {
  for (size_t i = 0; i < streams_.size(); ++i) {
    if (streams_[i].id == stream) return static_cast<uint32_t>(i);
  }
  return kNone;
}

uint32_t StreamFork::record_of(uint64_t event) const {
  for (const Record& r : records_) {
    if (r.event == event) return r.node;
  }
  return kNone;
}

uint32_t StreamFork::join(uint64_t stream) {
  uint32_t o = ordinal(stream);
  if (o != kNone) return o;
  streams_.push_back(Stream{stream, kNone, {}});
  return static_cast<uint32_t>(streams_.size() - 1);
}

void StreamFork::mix(uint64_t v) {
  shape_ = (shape_ ^ v) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
}

uint32_t StreamFork::node_slow(uint64_t stream) {
  if (chain_) {
    if (streams_.empty()) streams_.push_back(Stream{stream, kNone, {}});
    if (streams_[0].id == stream) {
      streams_[0].last = chain_nodes_;
      return chain_nodes_++;
    }
    unchain();
  }
  return add_node(join(stream));
}

uint32_t StreamFork::add_node(uint32_t o) {
  Stream& s = streams_[o];
  const uint32_t index = static_cast<uint32_t>(node_stream_.size());
  node_stream_.push_back(o);
  dep_start_.push_back(static_cast<uint32_t>(deps_.size()));
  mix(0x6e6f6465ull + o);
  if (s.last != kNone) deps_.push_back(s.last);
  for (uint32_t w : s.waits) {
    // A record on the same stream after `last` is ordered behind it anyway; kept: harmless.
    if (std::find(deps_.begin() + dep_start_.back(), deps_.end(), w) == deps_.end()) {
      deps_.push_back(w);
    }
  }
  for (size_t i = dep_start_.back(); i < deps_.size(); ++i) mix(deps_[i]);
  s.last = index;
  s.waits.clear();
  return index;
}

uint32_t StreamFork::record(uint64_t stream, uint64_t event) {
  unchain();
  const uint32_t n = node(stream);
  mix(0x7265636full);
  forget_event(event);
  records_.push_back(Record{event, n});
  return n;
}

bool StreamFork::record_follows(uint64_t stream, uint64_t event) const {
  const uint32_t r = record_of(event);
  const uint32_t o = ordinal(stream);
  if (r == kNone || o == kNone) return false;  // (a record left the chain: deps() are kept)
  // Back from what the record would depend on, through earlier nodes only (an edge always
  // points back), down to `r` at the earliest.
  walk_.clear();
  seen_.assign(nodes() - r, 0);
  if (streams_[o].last != kNone) walk_.push_back(streams_[o].last);
  walk_.insert(walk_.end(), streams_[o].waits.begin(), streams_[o].waits.end());
  while (!walk_.empty()) {
    const uint32_t n = walk_.back();
    walk_.pop_back();
    if (n == r) return true;
    if (n < r || seen_[n - r]) continue;
    seen_[n - r] = 1;
    size_t count = 0;
    const uint32_t* d = deps(n, &count);
    walk_.insert(walk_.end(), d, d + count);
  }
  return false;
}

void StreamFork::wait(uint64_t stream, uint64_t event) {
  const uint32_t r = record_of(event);
  if (r == kNone) return;  // the caller checked holds_event
  unchain();
  const uint32_t o = join(stream);
  streams_[o].waits.push_back(r);
  mix(0x77616974ull + (uint64_t(o) << 32) + r);
}

void StreamFork::forget_event(uint64_t event) {
  records_.erase(std::remove_if(records_.begin(), records_.end(),
                                [&](const Record& r) { return r.event == event; }),
                 records_.end());
}

const uint32_t* StreamFork::deps(size_t i, size_t* count) const {
  if (chain_) {
    *count = i ? 1 : 0;
    chain_dep_ = static_cast<uint32_t>(i - 1);
    return &chain_dep_;
  }
  const size_t end = i + 1 < dep_start_.size() ? dep_start_[i + 1] : deps_.size();
  *count = end - dep_start_[i];
  return deps_.data() + dep_start_[i];
}

}  // namespace pygraph
