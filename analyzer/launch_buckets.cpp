#include "launch_buckets.h"

#include <algorithm>
#include <map>

#include "graph_mode_events.h"

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

}  // namespace

bool bucket_launches(const Trace& t, const EngineOptions& options, uint64_t bucket_ns,
                     LaunchBuckets* out) {
  LaunchBuckets& b = *out;
  b.duration_ns = trace_duration_ns(t);
  b.bucket_ns = bucket_ns ? bucket_ns : round_width((b.duration_ns + 99) / 100);
  const uint64_t n = b.duration_ns / b.bucket_ns + (b.duration_ns % b.bucket_ns != 0);
  if (n > kMaxBuckets) return false;
  b.buckets.assign(n, Bucket{});
  const GraphEvents g = graph_mode_events(t, options);
  b.simulated = g.simulated;

  // A record before the trace's start (a clock that went back) counts in the first bucket.
  auto index_of = [&](size_t at) {
    return std::min<uint64_t>(call_place(t, at).t_ns / b.bucket_ns, n - 1);
  };
  std::vector<uint64_t> made(n);  // launches the program made in each bucket
  for (size_t i = 0; i < t.events.size(); ++i) {
    if (t.events[i].is_launch) ++made[index_of(i)];
  }
  b.launches = t.launches.size();

  std::map<std::tuple<uint8_t, uint16_t, uint32_t>, uint32_t> site_of;  // first seen
  for (const GraphEvent& e : g.events) {
    if (e.kind == GraphEventKind::kEager && !e.memop) {
      b.buckets[index_of(e.at)].eager += e.count;
      continue;
    }
    if (e.kind != GraphEventKind::kFlush) continue;
    ++b.buckets[index_of(e.at)].flushes;
    const auto key = std::make_tuple(uint8_t(e.cause), uint16_t(e.op), e.callsite_id);
    auto [it, added] = site_of.emplace(key, static_cast<uint32_t>(b.sites.size()));
    if (added) {
      FlushSite s{e.cause, e.op, {}, 0};
      if (const TraceCallSite* cs = t.callsite(e.callsite_id)) s.frames = cs->frames;
      b.sites.push_back(std::move(s));
    }
    ++b.sites[it->second].count;
    b.marks.push_back({call_place(t, e.at).t_ns, e.cause, it->second});
  }
  // In graphs: the launches made in a bucket less those that went out eagerly in it. Recorded
  // launches a mismatch or short chunk sends out later went out after they were made: the
  // excess comes off the buckets before, latest first.
  for (size_t i = 0; i < n; ++i) {
    Bucket& k = b.buckets[i];
    if (k.eager <= made[i]) {
      k.in_graphs = made[i] - k.eager;
    } else {
      uint64_t excess = k.eager - made[i];
      for (size_t j = i; j-- > 0 && excess;) {
        const uint64_t take = std::min(excess, b.buckets[j].in_graphs);
        b.buckets[j].in_graphs -= take;
        excess -= take;
      }
    }
  }
  for (const Bucket& k : b.buckets) {
    b.in_graphs += k.in_graphs;
    b.eager += k.eager;
  }

  // Most frequent first (ties: first seen first); marks follow their site's new place.
  std::vector<uint32_t> order(b.sites.size()), rank(b.sites.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t x, uint32_t y) { return b.sites[x].count > b.sites[y].count; });
  std::vector<FlushSite> ranked;
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
                       {"in_graphs", k.in_graphs},
                       {"eager", k.eager},
                       {"flushes", k.flushes}});
  }
  json sites = json::array();
  std::map<std::string, uint64_t> by_cause;
  for (const auto& s : b.sites) {
    json site = {{"cause", flush_cause_name(s.cause)}, {"count", s.count}};
    if (s.cause == FlushCause::kOp) {
      site["op"] = op_info(s.op).name;
      site["frames"] = s.frames;
    }
    sites.push_back(site);
    by_cause[flush_cause_name(s.cause)] += s.count;
  }
  return {{"pid", t.header.pid},
          {"complete", t.has_end},
          {"graph_mode", b.simulated ? "simulated" : "recorded"},
          {"duration_ms", b.duration_ns / 1e6},
          {"bucket_ms", b.bucket_ns / 1e6},
          {"launches", b.launches},
          {"in_graphs", b.in_graphs},
          {"eager", b.eager},
          {"coverage_percent", b.launches ? 100.0 * b.in_graphs / b.launches : 0.0},
          {"flushes", b.marks.size()},
          {"flushes_by_cause", by_cause},
          {"buckets", buckets},
          {"flush_sites", sites}};
}

}  // namespace pygraph::analyze
