#include "graph/pause_places.h"

#include <algorithm>

#include "graph/chunk_policy.h"

namespace pygraph {

namespace {

// Idle before a chunk: only where it followed the one before at once, less the few
// microseconds of two events back to back and a graph's launch.
uint64_t idle_before(const PausePlaces::Timed& t) {
  constexpr uint64_t kIdleFloorNs = 5'000;
  return t.idle_ns == ~0ull || t.idle_ns <= kIdleFloorNs ? 0 : t.idle_ns - kIdleFloorNs;
}

// The places whose mark is set, in order (cuts, restarts: for the stats).
template <class Mark>
std::vector<uint32_t> places_marked(const std::vector<Mark>& marks) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < marks.size(); ++i) {
    if (marks[i]) out.push_back(uint32_t(i));
  }
  return out;
}

}  // namespace

void PausePlaces::start(size_t length, bool wraps, uint64_t threshold_ns, uint64_t light_ns,
                        uint32_t idle_ratio, PauseCounts* counts, uint64_t tail_ns, bool restarts) {
  counts_ = counts;
  restarts_on_ = restarts;
  idle_ratio_ = idle_ratio;
  whole_rounds_.clear();
  restarts_.clear();
  // A segment's last place is its tail, learned from the lesser gap and weighed with its own
  // light mark (place 0 never is a pause). No threshold turns it off too: no pause at all.
  const bool tail = !wraps && tail_ns > 0 && threshold_ns > 0 && length > 1;
  tail_place_ = tail ? length - 1 : kNoTail;
  tail_gap_ns_ = tail ? std::min(threshold_ns, tail_ns) : 0;
  tail_light_ns_ = tail ? std::min(light_ns, tail_ns) : 0;
  learning_ = threshold_ns > 0 && length > (wraps ? 0 : 1);
  if (!learning_) return;
  threshold_ns_ = threshold_ns;
  light_ns_ = light_ns;
  wraps_ = wraps;
  length_ = length;
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
    if (now_ns - last_ns_ < threshold_at(place)) short_[place] = 1;
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
    pauses_[i] = samples_[i] >= kSamples && !short_[i] ? kPause : 0;
    count_ += pauses_[i] == kPause;
  }
  if (!count_) pauses_.clear();  // no pause: before() answers from an empty vector
  samples_ = {};
  short_ = {};
  // A segment is weighed for its split even where no pause was found.
  weighing_ = (count_ > 0 || (!wraps_ && idle_ratio_)) && light_ns_ > 0;
  if (counts_) {
    counts_->places += count_;
    if (weighing_) counts_->weighing += count_;
  }
  if (!weighing_) return;
  work_.assign(length_, 0);
  idle_.assign(length_, ~0ull);
  weight_samples_.assign(length_, 0);
  if (!wraps_ && idle_ratio_) {
    split_seen_.assign(length_, 0);
    split_fit_.assign(length_, 0);
  }
  if (!wraps_ && restarts_on_) {
    restart_samples_.assign(length_, RestartSample{});
  }
  timed_.reserve(64);
  unweighed_ = count_;
}

void PausePlaces::occurrence(bool recorded) {
  if (!weighing_) return;
  left();  // the one before did not end
  if (recorded && begun_ < kWeighRounds) {
    current_ = ++begun_;
    rounds_[current_] = Round{};
    next_start_ = 0;
  } else {
    ++round_counts_.unrecorded;
  }
  // Rounds begin only at occurrences recorded from their start: a loop taken up mid-period
  // after every sync, or measured in eager windows, may never give another. It ends with what
  // it has (what was never weighed keeps cutting).
  if (over() || ++occurrences_ > kWeighOccurrences) finish_weighing();
}

uint32_t PausePlaces::round(size_t start, size_t end) {
  if (!weighing_ || !current_) return 0;
  if (start < next_start_) {
    left();  // before where the last chunk ended: another occurrence
    return 0;
  }
  ++rounds_[current_].pending;
  next_start_ = end;
  return current_;
}

void PausePlaces::weighed(const Timed& t) {
  if (!weighing_ || !t.round || t.round > kWeighRounds || !rounds_[t.round].pending) return;
  Round& r = rounds_[t.round];
  --r.pending;
  if (t.gpu_ns == ~0ull) r.spoiled = r.untimed = true;
  if (!r.spoiled) timed_.push_back(t);
  settle(t.round);
}

void PausePlaces::close(bool whole) {
  if (!weighing_ || !current_) return;
  const uint32_t round = current_;
  current_ = 0;
  if (!whole && next_start_ == 0 && round == begun_) {
    // Left before any chunk of it went out: a loop that ends where its period begins (DDP's
    // step loop at each `.item()`, session 28) began a round it never timed. It says nothing
    // and takes no round: the next occurrence begins this one again.
    --begun_;
    ++round_counts_.unrecorded;
    return;
  }
  (whole ? rounds_[round].whole : rounds_[round].spoiled) = true;
  settle(round);
}

void PausePlaces::settle(uint32_t round) {
  Round& r = rounds_[round];
  if (r.pending || (!r.whole && !r.spoiled)) return;  // more to come
  if (!r.counted) {
    r.counted = true;
    ++(!r.spoiled ? round_counts_.whole : r.untimed ? round_counts_.untimed : round_counts_.left);
  }
  if (!r.spoiled) take(round);
  timed_.erase(std::remove_if(timed_.begin(), timed_.end(),
                              [round](const Timed& t) { return t.round == round; }),
               timed_.end());
  // A segment's split, and a loop's idle time, are weighed on kSamples whole rounds too (a
  // loop's unrolled round may give every place its samples alone).
  const bool rounds_weighed = !idle_ratio_ || (wraps_ ? loop_rounds_ >= kSamples
                                                      : !split_fits_ || split_rounds_ >= kSamples);
  if ((!unweighed_ && rounds_weighed) || over()) finish_weighing();
}

bool PausePlaces::over() const {
  if (begun_ < kWeighRounds || current_) return false;
  for (const Round& r : rounds_) {
    if (r.pending) return false;
  }
  return true;
}

void PausePlaces::take(uint32_t round) {
  // The round's chunks in the order of their positions (answers come in any order: an eager
  // chunk at once, a timed one when its events completed).
  auto first = std::stable_partition(timed_.begin(), timed_.end(),
                                     [round](const Timed& t) { return t.round == round; });
  std::sort(timed_.begin(), first,
            [](const Timed& a, const Timed& b) { return a.start < b.start; });
  const size_t chunks = size_t(first - timed_.begin());
  if (chunks) whole_rounds_.emplace_back(timed_.begin(), first);
  if (!wraps_ && idle_ratio_) split_sample(timed_.data(), chunks);
  if (!wraps_ && restarts_on_) restart_sample(timed_.data(), chunks);
  // The GPU's idle time in the round (where measured: the gap before its first chunk is not,
  // and counts nothing), and its work. A segment's is spent down chunk by chunk below; a loop
  // is weighed on its whole rounds (finish_weighing).
  uint64_t idle_after = 0, work = 0;
  for (size_t k = 0; k < chunks; ++k) {
    idle_after += idle_before(timed_[k]);
    work += timed_[k].gpu_ns;
  }
  round_counts_.gpu_ns += work;
  round_counts_.idle_ns += idle_after;
  if (wraps_) {
    loop_idle_ = std::min(loop_idle_, idle_after);
    loop_work_ = std::max(loop_work_, work);
    ++loop_rounds_;
  }
  // The work since the last pause: a loop's first pause waits for the end of the period too,
  // so its chunks are walked twice and the second walk counts.
  const int walks = wraps_ ? 2 : 1;
  uint64_t since = 0;
  for (int walk = 0; walk < walks; ++walk) {
    for (size_t k = 0; k < chunks; ++k) {
      const Timed& t = timed_[k];
      since += t.gpu_ns;
      if (!wraps_) idle_after -= idle_before(t);  // the chunks after this one's
      const size_t place = t.end % length_;
      if ((!wraps_ && t.end >= length_) || pauses_.empty() || !pauses_[place]) continue;
      if (walk + 1 == walks && weight_samples_[place] < kSamples) {
        // The GPU's idle time after the chunk that follows the pause (whose gap is the pause
        // itself). A loop's is weighed over its whole rounds instead (finish_weighing).
        const bool next = k + 1 < chunks && timed_[k + 1].start == t.end;
        const uint64_t later = wraps_ ? 0 : idle_after - (next ? idle_before(timed_[k + 1]) : 0);
        if (since > work_[place]) work_[place] = since;
        if (later < idle_[place]) idle_[place] = later;
        if (++weight_samples_[place] == kSamples) --unweighed_;
      }
      since = 0;
    }
  }
}

void PausePlaces::finish_weighing() {
  // In the order of the places: the GPU time waiting at a place is what ran since the last pause
  // that cuts. A segment starts at a sync (nothing waits); in a loop, what waits at the end of
  // one period carries into the next, so the walk goes round three times and the last round's
  // choices stand (from the first pause the second round keeps on, every round is the same).
  weighing_ = false;
  // Rounds still open or waiting for their times say nothing now: counted as left.
  for (uint32_t id = 1; id <= begun_ && id <= kWeighRounds; ++id) {
    if (!rounds_[id].counted) {
      rounds_[id].counted = true;
      ++round_counts_.left;
    }
  }
  const size_t weighed = count_;
  const std::vector<uint8_t> learned = split_rounds_ ? pauses_ : std::vector<uint8_t>{};
  const int rounds = wraps_ ? 3 : 1;
  uint64_t waiting = 0;
  // A loop whose GPU idles at least idle_ratio times its work in every whole round keeps up
  // with the host however its work is cut: held back at a pause, the work runs in time the
  // GPU idles anyway, and nothing waits for the loop's end but a sync, where what is pending
  // goes out (at most a chunk). No pause cuts there: the chunks fill. Per place, as a segment
  // weighs it, the work held back would grow from one period to the next in the walk, which
  // its rounds no longer settle.
  const bool loop_keeps_up = wraps_ && idle_ratio_ && loop_rounds_ >= kSamples &&
                             loop_idle_ != ~0ull && loop_work_ <= loop_idle_ / idle_ratio_;
  for (int round = 0; round < rounds && count_; ++round) {
    const bool last = round + 1 == rounds;
    for (size_t i = 0; i < pauses_.size(); ++i) {
      if (!pauses_[i]) continue;  // only the last round drops, each place after it is read
      const bool measured = weight_samples_[i] > 0;
      const uint64_t w = measured ? work_[i] : ~0ull;  // unmeasured: keeps cutting
      waiting = w > ~0ull - waiting ? ~0ull : waiting + w;
      const bool cuts = cuts_for(i, waiting, loop_keeps_up);
      if (cuts) waiting = 0;
      if (!last) continue;
      unweighed_kept_ += !measured && cuts;
      if (cuts) continue;
      pauses_[i] = 0;
      --count_;
      ++light_;
    }
  }
  choose_split(learned);
  split_work_ = {};
  if (!count_ && !split_) pauses_.clear();
  choose_restarts();
  work_ = {};
  idle_ = {};
  weight_samples_ = {};
  timed_ = {};
  if (counts_) {
    counts_->places -= light_;
    counts_->light += light_;
    counts_->weighing -= weighed;
    counts_->unweighed += unweighed_kept_;
  }
}

// The split counts a place's whole rounds in a byte.
static_assert(PausePlaces::kWeighRounds < 256);

void PausePlaces::split_sample(const Timed* chunks, size_t n) {
  // The round's chunks cover the occurrence, in order: each chunk's start after the first is a
  // place the occurrence could split at. It fits where the GPU's idle time before that chunk and
  // the ones after it is at least idle_ratio times the work of the chunks before it.
  bool covers = n >= 2 && chunks[0].start == 0 && chunks[n - 1].end == length_;
  for (size_t k = 0; k + 1 < n && covers; ++k) covers = chunks[k].end == chunks[k + 1].start;
  ++split_rounds_;
  if (!covers) {
    split_fits_ = false;
    return;
  }
  uint64_t idle_after = 0;
  for (size_t k = 1; k < n; ++k) idle_after += idle_before(chunks[k]);
  std::vector<WorkBefore>& work = split_work_.emplace_back();
  work.reserve(n + 1);
  work.push_back({0, 0});
  uint64_t before = chunks[0].gpu_ns;
  for (size_t k = 1; k < n; ++k) {
    const size_t at = chunks[k].start;
    work.push_back({uint32_t(at), before});
    ++split_seen_[at];
    // Idle time measured (a chunk chained to the one before it), and enough of it.
    split_fit_[at] += idle_after && before <= idle_after / idle_ratio_;
    idle_after -= idle_before(chunks[k]);
    before += chunks[k].gpu_ns;
  }
  work.push_back({uint32_t(length_), before});
}

void PausePlaces::restart_sample(const Timed* chunks, size_t n) {
  // Each chunk after the first: what the GPU idled before it while the host recorded it, up to
  // the chunk's own GPU time, less what it idled after it. Begun small, the chunk's work ends
  // earlier by at most that work: where the host records slower than the GPU runs (GPT-2
  // decoding a token compiled, session 47: 240 us of work recorded in 925 us, the GPU idle
  // throughout), the rest of the recording is idle no restart fills. Chunks of a round follow
  // in order; one after a gap in the round (a flush) says nothing of its start.
  uint64_t idle_after = 0;
  for (size_t k = 1; k < n; ++k) idle_after += idle_before(chunks[k]);
  for (size_t k = 1; k < n; ++k) {
    const Timed& t = chunks[k];
    const uint64_t idle = idle_before(t);
    idle_after -= idle;
    if (t.start >= length_ || chunks[k - 1].end != t.start) continue;
    const uint64_t recording = t.record_ns == ~0ull ? 0 : t.record_ns;
    const uint64_t avoidable = std::min({idle, recording, t.gpu_ns});
    const uint64_t gain = avoidable > idle_after ? avoidable - idle_after : 0;
    RestartSample& s = restart_samples_[t.start];
    s.gain = std::min(s.gain, gain);
    ++s.seen;                  // once a round: at most kWeighRounds
    if (!recording) continue;  // no gain either: never chosen
    // Its size: the entries the host recorded while the GPU still ran the work before the cut
    // (it drained `idle` before the chunk's launch, the recording's end). Its pace: the GPU
    // time its entries brought per ns of recording; the chunks after a restart grow by that
    // (where it is under the engine's growth), each recorded in about the GPU time of the one
    // before. The least of the rounds: a smaller start and a slower growth idle the GPU less.
    const uint64_t entries = t.end - t.start;
    const uint64_t busy = recording > idle ? recording - idle : 0;
    const uint64_t first = entries * busy / recording;
    const uint64_t pace = std::min<uint64_t>(t.gpu_ns * ChunkCursor::kPaceOne / recording, ~0u - 1);
    s.first = std::min(s.first, uint32_t(first));
    s.pace = std::min(s.pace, uint32_t(pace));
  }
}

void PausePlaces::choose_restarts() {
  const std::vector<RestartSample> samples = std::move(restart_samples_);
  restart_samples_ = {};
  if (wraps_ || pauses_.empty() || samples.empty()) return;
  size_t chosen = 0;
  // The split's own place too: the chunks before it went out whole, the GPU may drain there.
  // Not the tail's: the chunk after it is the last entry alone, however it begins.
  for (size_t i = 1; i < length_; ++i) {
    // Seen in a round, a place's gain is a measured one (no longer ~0).
    const RestartSample& s = samples[i];
    if (!pauses_[i] || i == tail_place_ || s.seen < kSamples || s.gain < light_at(i)) continue;
    if (restarts_.empty()) restarts_.assign(length_, Restart{});
    restarts_[i] = Restart{std::max<uint32_t>(s.first, 1), s.pace};
    ++chosen;
  }
  if (counts_) counts_->restarts += chosen;
}

std::vector<uint32_t> PausePlaces::restart_places() const {
  return places_marked(restarts_);
}

std::vector<PausePlaces::Restart> PausePlaces::restart_sizes() const {
  std::vector<Restart> out;
  for (uint32_t place : restart_places()) out.push_back(restarts_[place]);
  return out;
}

void PausePlaces::choose_split(const std::vector<uint8_t>& learned) {
  const uint32_t rounds = split_rounds_;
  std::vector<uint8_t> seen = std::move(split_seen_), fit = std::move(split_fit_);
  if (wraps_ || rounds < kSamples || !split_fits_) return;
  // The latest place that fits in every whole round, after which the chunks ended at the same
  // places in every round.
  size_t split = 0;
  for (size_t at = length_; at-- > 2 && !split;) {
    if (seen[at] && seen[at] != rounds) return;  // the chunks after it ended where they would
    if (fit[at] == rounds) split = at;
  }
  // A split that merges no chunk changes nothing.
  bool merges = false;
  for (size_t i = 1; i < split && !merges; ++i) merges = seen[i];
  if (!split || !merges) return;
  // Whole up to it (the pauses before it cut no more), then the chunks as they ended in the
  // rounds: at the pauses that still cut and at the other places chunks ended, less the pauses
  // dropped as light.
  split_ = split;
  if (pauses_.empty()) pauses_.assign(length_, 0);
  size_t merged = 0;
  for (size_t i = 0; i < split; ++i) {
    merged += pauses_[i] == kPause;
    pauses_[i] = 0;
  }
  // The split itself cuts, also where a pause dropped as light was.
  if (!pauses_[split]) pauses_[split] = kSplitCut;
  for (size_t i = split + 1; i < length_; ++i) {
    const bool dropped = i < learned.size() && learned[i] && !pauses_[i];
    if (!pauses_[i] && seen[i] && !dropped) pauses_[i] = kSplitCut;
  }
  count_ -= merged;
  if (counts_) {
    counts_->places -= merged;
    ++counts_->tail_splits;
  }
  reweigh_after_split(learned);
}

void PausePlaces::reweigh_after_split(const std::vector<uint8_t>& learned) {
  // As finish_weighing weighs them, but what waits at a pause after the split ran since the
  // split or the last cut after it: the chunks up to those places went out there. A pause
  // dropped before may cut now (the pause that cut before it no longer does), one that cut may
  // be dropped.
  size_t cut = split_;
  for (size_t i = split_ + 1; i < length_; ++i) {
    const bool pause = i < learned.size() && learned[i];
    if (!pause) {
      if (pauses_[i]) cut = i;  // where the rounds' chunks ended: a cut
      continue;
    }
    const bool cuts = cuts_for(i, weight_samples_[i] ? work_between(cut, i) : ~0ull, false);
    if (cuts) cut = i;
    if (cuts == (pauses_[i] == kPause)) continue;
    pauses_[i] = cuts ? kPause : 0;
    if (cuts) {
      ++count_;
      --light_;
    } else {
      --count_;
      ++light_;
    }
  }
}

std::vector<uint32_t> PausePlaces::cut_places() const {
  return places_marked(pauses_);
}

bool PausePlaces::cuts_for(size_t place, uint64_t waiting, bool keeps_up) const {
  // The GPU idles long enough later on to catch up with the work held back here. (At the tail
  // nothing comes later: the host waits for this work next.)
  const bool absorbed = keeps_up || (weight_samples_[place] > 0 && idle_ratio_ &&
                                     waiting <= idle_[place] / idle_ratio_);
  return waiting >= light_at(place) && !absorbed;
}

uint64_t PausePlaces::work_between(size_t from, size_t to) const {
  if (split_work_.empty()) return ~0ull;
  uint64_t most = 0;
  auto at = [](const std::vector<WorkBefore>& w, size_t place) -> const WorkBefore* {
    auto it = std::lower_bound(w.begin(), w.end(), place,
                               [](const WorkBefore& b, size_t p) { return b.place < p; });
    return it != w.end() && it->place == place ? &*it : nullptr;
  };
  for (const std::vector<WorkBefore>& w : split_work_) {
    const WorkBefore *a = at(w, from), *b = at(w, to);
    if (!a || !b) return ~0ull;  // no chunk ended there in this round
    most = std::max(most, b->gpu_ns - a->gpu_ns);
  }
  return most;
}

}  // namespace pygraph
