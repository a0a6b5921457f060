#include "graph/pause_places.h"

namespace pygraph {

void PausePlaces::start(size_t length, bool wraps, uint64_t threshold_ns, uint64_t light_ns,
                        PauseCounts* counts) {
  counts_ = counts;
  learning_ = threshold_ns > 0 && length > (wraps ? 0 : 1);
  if (!learning_) return;
  threshold_ns_ = threshold_ns;
  light_ns_ = light_ns;
  wraps_ = wraps;
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
  weighing_ = count_ > 0 && light_ns_ > 0;
  if (counts_) {
    counts_->places += count_;
    if (weighing_) counts_->weighing += count_;
  }
  if (!weighing_) return;
  weight_.assign(pauses_.size(), 0);
  weight_samples_.assign(pauses_.size(), 0);
  requests_left_ = uint64_t(count_) * kWeighRounds;
  unweighed_ = count_;
}

bool PausePlaces::wants_weight(size_t start, size_t end) {
  if (!weighing_ || end >= pauses_.size() || !pauses_[end]) return false;
  // Each chunk that ends at a pause is a request, timed or not: weighing ends after kWeighRounds
  // rounds of the places even where some place is never timed (its chunks start at a fill).
  if (!requests_left_) {
    if (!in_flight_) finish_weighing();
    return false;
  }
  --requests_left_;
  const bool from_cut = start < pauses_.size() && (pauses_[start] || (start == 0 && !wraps_));
  if (from_cut && weight_samples_[end] < kSamples) {
    ++in_flight_;
    return true;
  }
  if (!requests_left_ && !in_flight_) finish_weighing();
  return false;
}

void PausePlaces::weighed(size_t end, uint64_t gpu_ns) {
  if (!weighing_ || !in_flight_) return;
  --in_flight_;
  if (end < pauses_.size() && gpu_ns != ~0ull && weight_samples_[end] < kSamples) {
    if (gpu_ns > weight_[end]) weight_[end] = gpu_ns;
    if (++weight_samples_[end] == kSamples) --unweighed_;
  }
  if (!unweighed_ || (!requests_left_ && !in_flight_)) finish_weighing();
}

void PausePlaces::finish_weighing() {
  // In the order of the places: the GPU time waiting at a place is what ran since the last pause
  // that cuts. A segment starts at a sync (nothing waits); in a loop, what waits at the end of
  // one period carries into the next, so the walk goes round three times and the last round's
  // choices stand (from the first pause the second round keeps on, every round is the same).
  weighing_ = false;
  const size_t weighed = count_;
  const int rounds = wraps_ ? 3 : 1;
  uint64_t waiting = 0;
  for (int round = 0; round < rounds; ++round) {
    const bool last = round + 1 == rounds;
    for (size_t i = 0; i < pauses_.size(); ++i) {
      if (!pauses_[i]) continue;  // only the last round drops, each place after it is read
      const uint64_t w = weight_samples_[i] ? weight_[i] : ~0ull;  // unmeasured: keeps cutting
      waiting = w > ~0ull - waiting ? ~0ull : waiting + w;
      const bool cuts = waiting >= light_ns_;
      if (cuts) waiting = 0;
      if (!last) continue;
      unweighed_kept_ += !weight_samples_[i];
      if (cuts) continue;
      pauses_[i] = 0;
      --count_;
      ++light_;
    }
  }
  if (!count_) pauses_.clear();
  weight_ = {};
  weight_samples_ = {};
  if (counts_) {
    counts_->places -= light_;
    counts_->light += light_;
    counts_->weighing -= weighed;
    counts_->unweighed += unweighed_kept_;
  }
}

}  // namespace pygraph
