// Fuzz target: `pygraph-analyze trim` (analyzer/trim.h) over whatever the trace reader returns.
// The input is a trace file's bytes; its last two bytes also choose the window (how many
// launches to skip and to keep), as the reader's target chooses its cut. Beyond not crashing,
// what trim promises:
//  - the cut is a trace the reader takes whole: never refused, no corrupt or cut record, an end
//    record exactly when the input had one;
//  - it holds the window's launches and calls (their number and seqs, in order), graph mode's
//    events it counted, and descriptions for the kernels and call sites of the window that the
//    input described, and no others;
//  - cutting the cut again, whole, gives the same bytes (when the input's calls have distinct
//    seqs: the reader's order of calls with equal seqs is its own).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "trace/trace_reader.h"
#include "trim.h"

namespace {

using namespace pygraph;

void require(bool ok, const char* what, const std::string& detail = "") {
  if (ok) return;
  std::fprintf(stderr, "invariant broken: %s %s\n", what, detail.c_str());
  std::abort();
}

uint64_t seq_of(const Trace& t, const TraceEvent& e) {
  return e.is_launch ? t.launches[e.index].seq : t.ops[e.index].seq;
}

size_t engine_events(const Trace& t) {
  const TraceEngineEvents& e = t.engine;
  return e.followed.size() + e.chunks.size() + e.replays.size() + e.flushes.size() +
         e.eager.size() + e.decisions.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t size) {
  std::unique_ptr<uint8_t[]> data(new uint8_t[size]);
  if (size) std::memcpy(data.get(), input, size);
  Trace t;
  if (parse_trace(data.get(), size, &t).status == ReadStatus::kError) return 0;

  // The window: any skip up to every launch (the command refuses that one; the function must
  // not), a count or everything.
  const uint64_t total = t.launches.size();
  analyze::TrimWindow w;
  const uint8_t a = data[size - 1], b = data[size - 2];
  w.skip = a % (total + 1);
  if (b & 1) w.launches = 1 + (b >> 1) % (total + 1);
  const analyze::Trimmed cut = analyze::trim_trace(t, w);

  Trace c;
  const ReadResult r =
      parse_trace(reinterpret_cast<const uint8_t*>(cut.bytes.data()), cut.bytes.size(), &c);
  require(r.status != ReadStatus::kError, "the cut is read", r.message);
  require(r.status == (t.has_end ? ReadStatus::kOk : ReadStatus::kIncomplete), "read whole",
          r.message);
  require(c.has_end == t.has_end && cut.complete == t.has_end, "an end as the input had");
  require(c.header.version == t.header.version && c.header.pid == t.header.pid, "the header");

  // The window's calls in the input's order: launches skip+1 to skip+launches, other calls
  // after launch skip (from the start when it is 0) and before launch skip+launches+1.
  std::vector<uint64_t> want_seqs;
  uint64_t launches = 0;
  size_t described = 0, ops = 0, sited = 0;
  for (const TraceEvent& e : t.events) {
    launches += e.is_launch;
    const bool in = launches >= w.skip && launches - w.skip <= w.launches &&
                    (!e.is_launch || launches > w.skip);
    if (!in) continue;
    want_seqs.push_back(seq_of(t, e));
    if (e.is_launch) {
      described += t.function(t.launches[e.index].function_id) != nullptr;
    } else {
      ++ops;
      sited += t.callsite(t.ops[e.index].callsite_id) != nullptr;
    }
  }
  const uint64_t kept = w.skip >= total ? 0 : std::min(w.launches, total - w.skip);
  require(c.launches.size() == kept && cut.launches == kept, "the window's launches");
  require(c.ops.size() == ops && cut.ops == ops, "the window's other calls");
  require(c.events.size() == want_seqs.size(), "the window's calls");
  for (size_t i = 0; i < want_seqs.size(); ++i) {
    require(seq_of(c, c.events[i]) == want_seqs[i], "the window's calls in order");
  }
  require(engine_events(c) == cut.engine_events, "graph mode's events counted");
  require(engine_events(c) <= engine_events(t), "no more graph-mode events than the input");

  size_t c_described = 0, c_sited = 0, c_functions = 0;
  for (const TraceLaunch& l : c.launches) c_described += c.function(l.function_id) != nullptr;
  for (const TraceOp& o : c.ops) c_sited += c.callsite(o.callsite_id) != nullptr;
  for (const TraceFunction& f : c.functions) c_functions += f.id != 0;
  require(c_described == described, "kernels described as in the input");
  require(c_sited == sited, "call sites described as in the input");
  require(c_functions == cut.functions, "kernel descriptions counted");
  // Only what the window uses is described.
  std::vector<bool> function_used(c.functions.size() + 1), callsite_used(c.callsites.size() + 1);
  for (const TraceLaunch& l : c.launches) {
    if (l.function_id < function_used.size()) function_used[l.function_id] = true;
  }
  for (const TraceOp& o : c.ops) {
    if (o.callsite_id < callsite_used.size()) callsite_used[o.callsite_id] = true;
  }
  for (const TraceFlush& f : c.engine.flushes) {
    if (f.callsite_id < callsite_used.size()) callsite_used[f.callsite_id] = true;
  }
  for (const TraceFunction& f : c.functions) {
    require(f.id == 0 || function_used[f.id], "a kernel described is used");
  }
  for (const TraceCallSite& s : c.callsites) {
    require(s.id == 0 || callsite_used[s.id], "a call site described is used");
  }

  bool distinct = true;
  for (size_t i = 1; i < t.events.size(); ++i) {
    distinct = distinct && seq_of(t, t.events[i - 1]) != seq_of(t, t.events[i]);
  }
  if (distinct) {
    const analyze::Trimmed again = analyze::trim_trace(c, analyze::TrimWindow{});
    require(again.bytes == cut.bytes, "a whole cut of the cut is the cut");
  }
  return 0;
}
