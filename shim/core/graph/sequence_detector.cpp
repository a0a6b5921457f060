#include "graph/sequence_detector.h"

#include <algorithm>
#include <iterator>

#include "graph/period.h"

namespace pygraph {
namespace {

constexpr uint32_t kNgram = 4;  // tokens that propose a period when seen again
constexpr size_t kNgramSlots = 1 << 14;
// Earlier sights of an n-gram looked at when a period is chosen: enough to reach past the
// blocks of a network's iteration (a block kernel sequence seen up to ~20 times a step).
constexpr uint32_t kChainHops = 32;
constexpr uint64_t kNoPosition = ~uint64_t(0);

uint64_t hash_tokens(const uint64_t* t, size_t n) {
  uint64_t h = 0x84222325cbf29ce4ull ^ n;
  for (size_t i = 0; i < n; ++i) {
    h ^= t[i];
    h *= 0x100000001b3ull;
    h ^= h >> 29;
  }
  return h ? h : 1;
}

size_t ring_size(uint32_t max_length) {
  size_t n = 1;
  while (n < 2 * static_cast<size_t>(max_length) + kNgram) n <<= 1;
  return n;
}

}  // namespace

SequenceDetector::SequenceDetector(DetectorOptions options)
    : options_(options),
      window_(ring_size(options.max_length), 0),
      ngram_key_(kNgramSlots, 0),
      ngram_pos_(kNgramSlots, 0),
      ngram_prev_(window_.size(), kNoPosition) {
  options_.min_length = std::max<uint32_t>(options_.min_length, 1);
  options_.min_repeats = std::max<uint32_t>(options_.min_repeats, 1);
  // A run is counted back within the window (repeated_back).
  options_.min_run = std::max<uint32_t>(std::min(options_.min_run, options_.max_length), 1);
}

uint64_t SequenceDetector::at(uint64_t position) const {
  return window_[position & (window_.size() - 1)];
}

void SequenceDetector::evict() {
  // Ids stay unique; the survivors keep their order, their indices shift and the indexes are
  // rebuilt (from the stored hashes: no token is read again).
  ++evictions_;
  const size_t drop = std::max<size_t>(1, sequences_.size() / 8);
  std::vector<uint64_t> ends;
  ends.reserve(sequences_.size());
  for (const Sequence& s : sequences_) ends.push_back(s.last_end);
  std::nth_element(ends.begin(), ends.begin() + (drop - 1), ends.end());
  const uint64_t cut = ends[drop - 1];  // the drop-th oldest last_end
  const uint32_t periodic_id = periodic_ != kNone ? sequences_[periodic_].id : 0;
  // Everything older than the cut goes, then of those that ended at the cut (a loop and a
  // segment can end at the same launch) only as many as are still needed.
  size_t ties = drop;
  for (const Sequence& s : sequences_) ties -= s.last_end < cut;
  sequences_.erase(std::remove_if(sequences_.begin(), sequences_.end(),
                                  [&](const Sequence& s) {
                                    if (s.last_end < cut) return true;
                                    if (s.last_end > cut || ties == 0) return false;
                                    --ties;
                                    return true;
                                  }),
                   sequences_.end());
  by_hash_.clear();
  by_id_.clear();
  periodic_ = kNone;
  for (size_t i = 0; i < sequences_.size(); ++i) {
    by_hash_[sequences_[i].hash] = static_cast<uint32_t>(i);
    by_id_[sequences_[i].id] = static_cast<uint32_t>(i);
    if (sequences_[i].id == periodic_id) periodic_ = i;
  }
  for (auto it = latest_by_first_.begin(); it != latest_by_first_.end();) {
    it = by_id_.count(it->second) ? std::next(it) : latest_by_first_.erase(it);
  }
}

const Sequence* SequenceDetector::find(uint32_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &sequences_[it->second];
}

const Sequence* SequenceDetector::latest_found_segment(uint64_t first_token) const {
  auto it = latest_by_first_.find(first_token);
  return it == latest_by_first_.end() ? nullptr : find(it->second);  // null once dropped
}

size_t SequenceDetector::find_or_add(const std::vector<uint64_t>& tokens, bool periodic,
                                     bool* added) {
  *added = false;
  const uint64_t h = hash_tokens(tokens.data(), tokens.size()) ^ periodic;
  auto it = by_hash_.find(h);
  if (it != by_hash_.end()) {
    // A hash collision with other tokens is not tracked: rare, and never wrong.
    return sequences_[it->second].tokens == tokens ? it->second : kNone;
  }
  if (sequences_.size() >= options_.max_sequences) evict();
  Sequence s;
  s.id = next_id_++;
  s.periodic = periodic;
  s.tokens = tokens;
  s.hash = h;
  sequences_.push_back(std::move(s));
  by_hash_[h] = static_cast<uint32_t>(sequences_.size() - 1);
  by_id_[sequences_.back().id] = static_cast<uint32_t>(sequences_.size() - 1);
  *added = true;
  return sequences_.size() - 1;
}

uint64_t SequenceDetector::repeated_back(uint64_t pos, uint64_t p, uint64_t cap) const {
  // Within the run and the window: the window holds 2 * max_length + kNgram tokens.
  cap = std::min<uint64_t>(cap, 2 * uint64_t(options_.max_length) - p);
  uint64_t m = 0;
  while (m < cap && pos >= run_start_ + p + m && at(pos - m) == at(pos - m - p)) ++m;
  return m;
}

void SequenceDetector::choose_period(uint64_t pos, uint64_t seen_at) {
  // Every earlier sight of the n-gram ending at `pos` proposes a period: its distance. The
  // nearest alone is not enough: in a loop whose iteration repeats a block inside it (the
  // blocks of a network's stage, each the same few kernels), the nearest sight is the previous
  // block, a period that breaks at the stage's end, and at the next stage's end again, so the
  // iteration itself was never proposed (timm's EfficientNet: periods of 17 launches found,
  // never its 270). The nearest distance at which a whole period already repeated wins: at a
  // block's end the blocks have not, the iteration has (once it ran twice), and in a plain loop
  // it is the loop's own period, not a multiple. A one-off launch inside a loop cannot make a
  // wrong distance win (that distance matches back only to the launch). No distance repeated
  // whole: the nearest, as a candidate to confirm. Only when no period is being followed, so
  // never on a loop's steady path; at most kChainHops sights, each compared over one period.
  // Every link was written by push() at its own position, in this run, to an earlier sight
  // there (a sight before the run is no sight): within max_length of `pos`, its window slot
  // still holds it.
  const uint64_t mask = window_.size() - 1;
  const uint64_t nearest = pos - seen_at;
  uint64_t nearest_matched = 0;
  for (uint64_t q = seen_at, hop = 0; q != kNoPosition && hop < kChainHops;
       q = ngram_prev_[q & mask], ++hop) {
    const uint64_t p = pos - q;
    if (p > options_.max_length) break;
    // Shorter than a sequence may be (one kernel again and again): a loop of its own only
    // after min_run launches of it in a row (DetectorOptions), and then this period, not a
    // multiple of it; before that no period at all. Counted on past one period only where it
    // can become the candidate.
    const bool short_period = p < options_.min_length;
    const uint64_t run = std::max<uint64_t>(options_.min_run, p);
    const uint64_t m = repeated_back(pos, p, short_period ? run : ~uint64_t(0));
    if (hop == 0) nearest_matched = m;
    if (m >= p) {
      period_ = !short_period || m >= run ? p : 0;
      matched_ = period_ ? m : 0;
      return;
    }
  }
  if (nearest >= options_.min_length && nearest <= options_.max_length) {
    period_ = nearest;
    matched_ = nearest_matched;
  }
}

const Sequence* SequenceDetector::push(uint64_t token) {
  const uint64_t pos = append(token);

  // Period bookkeeping: does this token continue the candidate period?
  if (period_ && pos >= run_start_ + period_ && at(pos - period_) == token) {
    ++matched_;
  } else {
    period_ = 0;
    matched_ = 0;
    periodic_ = kNone;
  }
  const uint64_t run = pos + 1 - run_start_;
  if (run >= kNgram) {
    uint64_t gram[kNgram];
    for (uint32_t k = 0; k < kNgram; ++k) gram[k] = at(pos + 1 - kNgram + k);
    const uint64_t g = hash_tokens(gram, kNgram);
    const size_t slot = g & (kNgramSlots - 1);
    const bool seen = ngram_key_[slot] == g && ngram_pos_[slot] >= run_start_ + kNgram - 1;
    // The earlier sight of this n-gram, chained, so that a candidate period can be chosen
    // among all the distances at which it was seen (below).
    ngram_prev_[pos & (window_.size() - 1)] = seen ? ngram_pos_[slot] : kNoPosition;
    if (!period_ && seen) choose_period(pos, ngram_pos_[slot]);
    ngram_key_[slot] = g;
    ngram_pos_[slot] = pos;
  }
  if (!period_ || matched_ < period_ || matched_ % period_ != 0) return nullptr;

  // A full period more: the last `period_` tokens are one occurrence.
  if (periodic_ == kNone) {
    // The last period, in its canonical rotation (period.h): the same loop found at another
    // launch is the same sequence. The next launch is at canonical index `periodic_phase_`.
    std::vector<uint64_t> last(period_), tokens(period_);
    for (uint64_t k = 0; k < period_; ++k) last[k] = at(pos + 1 - period_ + k);
    const size_t r = least_rotation(last.data(), last.size());
    for (uint64_t k = 0; k < period_; ++k) tokens[k] = last[(r + k) % period_];
    periodic_phase_ = static_cast<uint32_t>((period_ - r) % period_);
    bool added;
    periodic_ = find_or_add(tokens, true, &added);
    if (periodic_ == kNone) return nullptr;
    if (added) {
      // The periods repeated before this one (matched_ covers all but the first).
      sequences_[periodic_].occurrences = matched_ / period_;
      sequences_[periodic_].first_end = pos + 1 - matched_;
    }
  }
  Sequence& s = sequences_[periodic_];
  s.occurrences++;
  s.last_end = pos + 1;
  return &s;
}

const Sequence* SequenceDetector::boundary(uint64_t tag) {
  Sequence* found = nullptr;
  if (!segment_overflow_ && segment_.size() >= options_.min_length) {
    bool added;
    const size_t i = find_or_add(segment_, false, &added);
    if (i != kNone) {
      found = &sequences_[i];
      if (added) found->first_end = launches_;
      found->occurrences++;
      found->last_end = launches_;
      found->ended_by[tag]++;
      if (found->occurrences >= options_.min_repeats) {
        // The latest found segment with this first token is this one: its last_end is the
        // newest of them all.
        latest_by_first_[found->tokens[0]] = found->id;
      }
    }
  }
  segment_.clear();
  segment_overflow_ = false;
  run_start_ = launches_;
  period_ = 0;
  matched_ = 0;
  periodic_ = kNone;
  return found;
}

}  // namespace pygraph
