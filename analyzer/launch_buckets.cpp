#include "launch_buckets.h"

#include <algorithm>
#include <map>

#include "sequence_walk.h"

namespace pygraph::analyze {
namespace {

// The smallest of 1, 2, 5 x 10^k nanoseconds (1 us at least) that is >= ns.
uint64_t round_width(uint64_t ns) {
  for (uint64_t decade = 1000; decade <= UINT64_MAX / 50; decade *= 10) {
    for (uint64_t m : {1, 2, 5}) {
      if (m * decade >= ns) return m * decade;
    }
  }
  return ns;  // a corrupt timestamp centuries away: no round width needed
}

uint64_t since_start(const Trace& t, uint64_t mono_ns) {
  return mono_ns > t.header.start_mono_ns ? mono_ns - t.header.start_mono_ns : 0;
}

uint64_t trace_duration(const Trace& t) {
  uint64_t end = t.has_end ? t.end.dur_ns : 0;
  for (const auto& l : t.launches) end = std::max(end, since_start(t, l.ts_ns + l.dur_ns));
  for (const auto& o : t.ops) end = std::max(end, since_start(t, o.ts_ns + o.dur_ns));
  return std::max<uint64_t>(end, 1);
}

}  // namespace

bool bucket_launches(const Trace& t, const DetectorOptions& options, uint64_t bucket_ns,
                     LaunchBuckets* out) {
  LaunchBuckets& b = *out;
  b.duration_ns = trace_duration(t);
  b.bucket_ns = bucket_ns ? bucket_ns : round_width((b.duration_ns + 99) / 100);
  const uint64_t n = b.duration_ns / b.bucket_ns + (b.duration_ns % b.bucket_ns != 0);
  if (n > kMaxBuckets) return false;
  b.buckets.assign(n, Bucket{});
  const SequenceWalk w = walk_sequences(t, options);
  b.min_repeats = w.detector.options().min_repeats;
  b.launches = w.launches;
  b.graphable = w.graphable_launches;

  // A record before the trace's start (a clock that went back) counts in the first bucket.
  auto bucket_of = [&](uint64_t mono_ns) -> Bucket& {
    return b.buckets[std::min<uint64_t>(since_start(t, mono_ns) / b.bucket_ns, n - 1)];
  };
  std::map<std::pair<uint16_t, uint32_t>, uint32_t> site_of;  // (op, call site) -> first seen
  for (size_t i = 0; i < t.events.size(); ++i) {
    const TraceEvent& e = t.events[i];
    if (e.is_launch) {
      Bucket& k = bucket_of(t.launches[e.index].ts_ns);
      ++(w.in_graph[i] ? k.graphable : k.eager);
      continue;
    }
    const TraceOp& o = t.ops[e.index];
    if (!op_ends_sequence(o)) continue;
    ++bucket_of(o.ts_ns).boundaries;
    auto [it, added] = site_of.emplace(std::make_pair(static_cast<uint16_t>(o.op), o.callsite_id),
                                       static_cast<uint32_t>(b.sites.size()));
    if (added) {
      BoundarySite s{o.op, {}, 0};
      if (const TraceCallSite* cs = t.callsite(o.callsite_id)) s.frames = cs->frames;
      b.sites.push_back(std::move(s));
    }
    ++b.sites[it->second].count;
    b.marks.push_back({since_start(t, o.ts_ns), it->second});
  }
  // Most frequent first (ties: first seen first); marks follow their site's new place.
  std::vector<uint32_t> order(b.sites.size()), rank(b.sites.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t x, uint32_t y) { return b.sites[x].count > b.sites[y].count; });
  std::vector<BoundarySite> ranked;
  for (uint32_t r = 0; r < order.size(); ++r) {
    rank[order[r]] = r;
    ranked.push_back(std::move(b.sites[order[r]]));
  }
  b.sites = std::move(ranked);
  for (auto& m : b.marks) m.site = rank[m.site];
  return true;
}

nlohmann::json buckets_json(const Trace& t, const LaunchBuckets& b) {
  using nlohmann::json;
  json buckets = json::array();
  for (size_t i = 0; i < b.buckets.size(); ++i) {
    const Bucket& k = b.buckets[i];
    buckets.push_back({{"start_ms", i * b.bucket_ns / 1e6},
                       {"graphable", k.graphable},
                       {"eager", k.eager},
                       {"boundaries", k.boundaries}});
  }
  json sites = json::array();
  for (const auto& s : b.sites) {
    sites.push_back({{"op", op_info(s.op).name}, {"count", s.count}, {"frames", s.frames}});
  }
  return {{"pid", t.header.pid},
          {"complete", t.has_end},
          {"duration_ms", b.duration_ns / 1e6},
          {"bucket_ms", b.bucket_ns / 1e6},
          {"min_repeats", b.min_repeats},
          {"launches", b.launches},
          {"graphable_launches", b.graphable},
          {"graphable_percent", b.launches ? 100.0 * b.graphable / b.launches : 0.0},
          {"boundaries", b.marks.size()},
          {"buckets", buckets},
          {"boundary_sites", sites}};
}

}  // namespace pygraph::analyze
