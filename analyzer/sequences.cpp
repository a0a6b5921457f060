#include "sequences.h"

#include <algorithm>
#include <sstream>
#include <unordered_map>

#include "sequence_walk.h"

namespace pygraph::analyze {
namespace {

using nlohmann::json;

std::string kernel_name(const Trace& t, uint32_t id) {
  const TraceFunction* f = t.function(id);
  return f && !f->name.empty() ? f->name : "(function " + std::to_string(id) + ")";
}

}  // namespace

json find_sequences(const Trace& t, const DetectorOptions& options, int top) {
  SequenceWalk w = walk_sequences(t, options);
  const SequenceDetector& d = w.detector;
  auto& tokens = w.tokens;
  auto memops_in = [&](const Sequence& s) {
    uint64_t n = 0;
    for (uint64_t tok : s.tokens) n += tokens[tok].memop;
    return n;
  };
  std::vector<const Sequence*> found;
  for (const Sequence& s : d.sequences()) {
    if (s.occurrences >= options.min_repeats) found.push_back(&s);
  }
  std::stable_sort(found.begin(), found.end(), [](const Sequence* a, const Sequence* b) {
    return a->occurrences * a->tokens.size() > b->occurrences * b->tokens.size();
  });

  json out;
  out["launches"] = w.launches;
  out["memops"] = w.memops;
  out["min_repeats"] = options.min_repeats;
  out["graphable_launches"] = w.graphable_launches;
  out["graphable_percent"] = w.launches ? 100.0 * w.graphable_launches / w.launches : 0.0;
  out["graphable_memops"] = w.graphable_memops;
  out["sequences_found"] = found.size();
  json list = json::array();
  for (const Sequence* s : found) {
    if (top >= 0 && list.size() >= static_cast<size_t>(top)) break;
    json kernels = json::array();
    for (size_t i = 0; i < s->tokens.size() && i < 3; ++i) {
      const TokenInfo& info = tokens[s->tokens[i]];
      kernels.push_back(info.memop ? op_info(static_cast<Op>(info.id)).name
                                   : kernel_name(t, info.id));
    }
    std::vector<std::pair<uint64_t, uint64_t>> ends(s->ended_by.begin(), s->ended_by.end());
    std::sort(ends.begin(), ends.end(), [](auto& a, auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    json ended = json::array();
    for (const auto& [tag, count] : ends) {
      const uint16_t op = static_cast<uint16_t>(tag >> 32);
      json frames = json::array();
      if (tag == 0) {
        ended.push_back({{"op", "end of trace"}, {"count", count}, {"frames", frames}});
        continue;
      }
      if (const TraceCallSite* cs = t.callsite(static_cast<uint32_t>(tag))) frames = cs->frames;
      ended.push_back(
          {{"op", op < static_cast<uint16_t>(Op::kCount) ? op_info(static_cast<Op>(op)).name : "?"},
           {"count", count},
           {"frames", frames}});
    }
    list.push_back({{"id", s->id},
                    {"kind", s->periodic ? "period" : "segment"},
                    {"length", s->tokens.size()},
                    {"memops", memops_in(*s)},
                    {"occurrences", s->occurrences},
                    {"first_kernels", kernels},
                    {"ended_by", ended}});
  }
  out["sequences"] = list;
  return out;
}

const char* const kSequencesUsage =
    "usage: pygraph-analyze sequences [--json] [--top N] [--min-repeats N] TRACE\n"
    "\n"
    "The launch sequences (with the memsets and copies graph mode holds as nodes) that repeat\n"
    "between syncs and other boundaries, found by graph mode's own detector, what ends each\n"
    "(op and call site), and a what-if: how many launches graphs of those segments could carry.\n"
    "Loops without boundaries are not followed here: `simulate` runs graph mode's engine.\n"
    "\n"
    "options:\n"
    "  --json            the same as JSON\n"
    "  --top N           sequences listed (default 20)\n"
    "  --min-repeats N   occurrences before a sequence counts as found (default 2)\n"
    "\n"
    "example:\n"
    "  PYGRAPH_MODE=trace PYGRAPH_TRACE=run.trace LD_PRELOAD=build/libpygraph.so python train.py\n"
    "  pygraph-analyze sequences --top 3 run.trace\n";

std::string sequences_text(const json& r) {
  std::ostringstream out;
  const uint64_t memops = r["memops"];
  out << "Repeating launch sequences in " << r["launches"] << " launches";
  if (memops) out << " and " << memops << " memsets/copies";
  out << " (found at " << r["min_repeats"] << " occurrences): " << r["sequences_found"] << "\n";
  for (const auto& s : r["sequences"]) {
    const uint64_t m = s["memops"], len = s["length"].get<uint64_t>() - m, occ = s["occurrences"];
    out << "\n  #" << s["id"] << "  " << s["kind"].get<std::string>() << " of " << len
        << (len == 1 ? " launch" : " launches");  // a loop of one kernel
    if (m) out << " + " << m << " memsets/copies";
    out << " x " << occ << " = " << len * occ << " launches";
    if (m) out << " + " << m * occ << " memsets/copies";
    out << "\n";
    for (const auto& k : s["first_kernels"]) out << "      " << k.get<std::string>() << "\n";
    if (s["length"].get<uint64_t>() > 3) out << "      ...\n";
    for (const auto& e : s["ended_by"]) {
      out << "    ended " << e["count"] << "x by " << e["op"].get<std::string>();
      if (!e["frames"].empty()) out << " at " << e["frames"][0].get<std::string>();
      out << "\n";
      for (size_t i = 1; i < e["frames"].size() && i < 3; ++i) {
        out << "        from " << e["frames"][i].get<std::string>() << "\n";
      }
    }
  }
  char pct[32];
  std::snprintf(pct, sizeof pct, "%.1f", r["graphable_percent"].get<double>());
  out << "\nWhat-if: replaying each repeated segment or loop as a graph from occurrence "
      << r["min_repeats"].get<uint32_t>() + 1 << " on would carry " << r["graphable_launches"]
      << " of " << r["launches"] << " launches (" << pct << "%)";
  if (memops) out << " and " << r["graphable_memops"] << " of " << memops << " memsets/copies";
  out << ".\n";
  return out.str();
}

}  // namespace pygraph::analyze
