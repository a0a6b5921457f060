#include "graph/pause_places.h"

namespace pygraph {

void PausePlaces::start(size_t length, bool wraps, uint64_t threshold_ns) {
  learning_ = threshold_ns > 0 && length > (wraps ? 0 : 1);
  if (!learning_) return;
  threshold_ns_ = threshold_ns;
  samples_.assign(length, 0);
  short_.assign(length, 0);
  if (!wraps) {
    samples_[0] = kSamples;  // judged: never a pause
    short_[0] = 1;
    judged_ = 1;
  }
  arrivals_left_ = uint64_t(length) * kRounds;
}

void PausePlaces::arrived(size_t place, uint64_t now_ns) {
  if (!learning_ || place >= samples_.size()) return;
  if (last_ns_ && place == next_place_ && samples_[place] < kSamples) {
    if (now_ns - last_ns_ < threshold_ns_) short_[place] = 1;
    if (++samples_[place] == kSamples && ++judged_ == samples_.size()) {
      finish();
      return;
    }
  }
  last_ns_ = now_ns;
  next_place_ = place + 1 == samples_.size() ? 0 : place + 1;
  if (--arrivals_left_ == 0) finish();
}

void PausePlaces::finish() {
  learning_ = false;
  pauses_.assign(samples_.size(), 0);
  count_ = 0;
  for (size_t i = 0; i < samples_.size(); ++i) {
    pauses_[i] = samples_[i] >= kSamples && !short_[i];
    count_ += pauses_[i];
  }
  if (!count_) pauses_.clear();  // no pause: before() answers from an empty vector
  samples_ = {};
  short_ = {};
}

}  // namespace pygraph
