// Fuzz target: the trace reader (parse_trace), then `pygraph-analyze summary` over what it read.
// The input is a trace file's bytes, copied into a buffer of exactly that size so that
// AddressSanitizer catches any read past the input. Beyond not crashing, what the reader
// promises (trace_reader.h):
//  - kError says why in one line and returns nothing; exactly the inputs whose file header is
//    bad are refused (bad magic, cut header, version 0 or newer than kTraceVersion);
//  - otherwise it returns the records before the first bad one: a walk of the record headers
//    done here finds that many of each type, the message names that record's place and type
//    and the number of events read; kOk means every byte was read and an end record was seen;
//  - what it returns is consistent: events index every launch and op once, in seq order; graph
//    mode's events are in seq order; ids index their tables; enums hold values they name;
//    a version-1 trace holds no version-2 record;
//  - it is a function of the bytes (the same result twice), and a prefix of the input never
//    yields more of anything (a cut file reads a prefix of the records).
// Seeds (corpus/trace_reader/): traces of format 1 and 2 and cuts of them, written by
// trace_seeds (trace_seeds.cpp), and the golden format-1 traces of tests/e2e.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "summary.h"
#include "trace/trace_reader.h"

namespace {

using namespace pygraph;
using namespace pygraph::trace;

void require(bool ok, const char* what, const std::string& detail = "") {
  if (ok) return;
  std::fprintf(stderr, "invariant broken: %s %s\n", what, detail.c_str());
  std::abort();
}

// How many records of each type the reader returned, and how much it kept.
struct Counts {
  size_t functions = 0, function_slots = 0, callsites = 0, callsite_slots = 0, threads = 0,
         launches = 0, ops = 0, followed = 0, chunks = 0, replays = 0, flushes = 0, eager = 0,
         decisions = 0, ends = 0;
  bool operator==(const Counts&) const = default;
  bool at_most(const Counts& o) const {
    return functions <= o.functions && function_slots <= o.function_slots &&
           callsites <= o.callsites && callsite_slots <= o.callsite_slots && threads <= o.threads &&
           launches <= o.launches && ops <= o.ops && followed <= o.followed && chunks <= o.chunks &&
           replays <= o.replays && flushes <= o.flushes && eager <= o.eager &&
           decisions <= o.decisions && ends <= o.ends;
  }
};

Counts counts_of(const Trace& t) {
  Counts c;
  for (const TraceFunction& f : t.functions) c.functions += f.id != 0;
  c.function_slots = t.functions.size();
  for (const TraceCallSite& s : t.callsites) c.callsites += s.id != 0;
  c.callsite_slots = t.callsites.size();
  c.threads = t.threads.size();
  c.launches = t.launches.size();
  c.ops = t.ops.size();
  c.followed = t.engine.followed.size();
  c.chunks = t.engine.chunks.size();
  c.replays = t.engine.replays.size();
  c.flushes = t.engine.flushes.size();
  c.eager = t.engine.eager.size();
  c.decisions = t.engine.decisions.size();
  c.ends = t.has_end;
  return c;
}

// The record headers, walked independently of the reader: where each whole record starts and
// its type, up to the first header that is cut or impossible.
struct Walk {
  std::vector<size_t> offsets;
  std::vector<uint16_t> types;
  size_t stop = 0;  // offset of the first byte not in a whole record
};

Walk walk_records(const uint8_t* data, size_t size, size_t header_size) {
  Walk w;
  size_t off = header_size;
  while (size - off >= sizeof(RecordHeader)) {
    RecordHeader h;
    std::memcpy(&h, data + off, sizeof h);
    if (h.size < sizeof(RecordHeader) || h.size > size - off) break;
    w.offsets.push_back(off);
    w.types.push_back(h.type);
    off += h.size;
  }
  w.stop = off;
  return w;
}

// Records of each type among the first `n` of the walk: what the reader must have returned if
// it stopped at record n. Functions and call sites are counted as announcements (an id may be
// announced again), so only bounds hold for them.
bool matches_prefix(const Walk& w, size_t n, const Counts& c) {
  Counts want;
  size_t function_records = 0, callsite_records = 0;
  for (size_t i = 0; i < n; ++i) {
    switch (static_cast<RecordType>(w.types[i])) {
      case RecordType::kFunction:
        function_records++;
        break;
      case RecordType::kCallSite:
        callsite_records++;
        break;
      case RecordType::kLaunch:
        want.launches++;
        break;
      case RecordType::kOp:
        want.ops++;
        break;
      case RecordType::kEnd:
        want.ends = 1;
        break;
      case RecordType::kThread:
        want.threads++;
        break;
      case RecordType::kFollowed:
        want.followed++;
        break;
      case RecordType::kChunk:
        want.chunks++;
        break;
      case RecordType::kReplay:
        want.replays++;
        break;
      case RecordType::kFlush:
        want.flushes++;
        break;
      case RecordType::kEager:
        want.eager++;
        break;
      case RecordType::kDecision:
        want.decisions++;
        break;
      default:
        return false;  // the reader reads no record of an unknown type
    }
  }
  return c.launches == want.launches && c.ops == want.ops && c.ends == want.ends &&
         c.threads == want.threads && c.followed == want.followed && c.chunks == want.chunks &&
         c.replays == want.replays && c.flushes == want.flushes && c.eager == want.eager &&
         c.decisions == want.decisions && c.functions <= function_records &&
         (function_records == 0) == (c.functions == 0) && c.callsites <= callsite_records &&
         (callsite_records == 0) == (c.callsites == 0);
}

// The number after `key` in `text`, or -1.
long long number_after(const std::string& text, const std::string& key) {
  const size_t at = text.find(key);
  if (at == std::string::npos) return -1;
  const char* p = text.c_str() + at + key.size();
  if (*p < '0' || *p > '9') return -1;
  return std::strtoll(p, nullptr, 10);
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Why parse_trace must refuse this input, or "" when its file header is good.
std::string header_problem(const uint8_t* data, size_t size) {
  if (size < 8 || std::memcmp(data, kMagic, 8) != 0) return "not a pygraph trace (bad magic)";
  if (size < sizeof(FileHeader)) return "trace header is truncated";
  FileHeader h;
  std::memcpy(&h, data, sizeof h);
  if (h.version > kTraceVersion) return "newer";
  if (h.version == 0 || h.header_size < sizeof(FileHeader) || h.header_size > size) {
    return "corrupt trace header";
  }
  return "";
}

template <class V>
bool sorted_by_seq(const V& v) {
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i].seq < v[i - 1].seq) return false;
  }
  return true;
}

void check_contents(const Trace& t) {
  require(t.header.version >= 1 && t.header.version <= kTraceVersion, "a version it knows");
  require(std::memcmp(t.header.magic, kMagic, 8) == 0, "the magic");

  // Events: every launch and op exactly once, in the program's order.
  require(t.events.size() == t.launches.size() + t.ops.size(), "an event per launch and op");
  std::vector<bool> seen_launch(t.launches.size()), seen_op(t.ops.size());
  uint64_t last = 0;
  for (const TraceEvent& e : t.events) {
    std::vector<bool>& seen = e.is_launch ? seen_launch : seen_op;
    require(e.index < seen.size() && !seen[e.index], "events index each record once");
    seen[e.index] = true;
    const uint64_t seq = e.is_launch ? t.launches[e.index].seq : t.ops[e.index].seq;
    require(seq >= last, "events in seq order");
    last = seq;
  }
  require(sorted_by_seq(t.engine.followed) && sorted_by_seq(t.engine.chunks) &&
              sorted_by_seq(t.engine.replays) && sorted_by_seq(t.engine.flushes) &&
              sorted_by_seq(t.engine.eager) && sorted_by_seq(t.engine.decisions),
          "graph mode's events in seq order");

  // Tables: slot id - 1 holds id or nothing; the last slot is used.
  for (size_t i = 0; i < t.functions.size(); ++i) {
    const TraceFunction& f = t.functions[i];
    require(f.id == 0 || f.id == i + 1, "a function in its slot");
    require((t.function(uint32_t(i + 1)) != nullptr) == (f.id != 0), "function() finds it");
    require(f.params_known || f.params.empty(), "no params when unknown");
  }
  require(t.functions.empty() || t.functions.back().id != 0, "no empty slot at the end");
  require(t.function(0) == nullptr, "no function 0");
  for (size_t i = 0; i < t.callsites.size(); ++i) {
    const TraceCallSite& s = t.callsites[i];
    require(s.id == 0 || s.id == i + 1, "a call site in its slot");
    require((t.callsite(uint32_t(i + 1)) != nullptr) == (s.id != 0), "callsite() finds it");
  }
  require(t.callsites.empty() || t.callsites.back().id != 0, "no empty slot at the end");
  require(t.callsite(0) == nullptr, "no call site 0");

  // Enums hold values they name.
  for (const TraceLaunch& l : t.launches) {
    require(l.door < Door::kCount && l.op < Op::kCount && l.attrs.size() <= 64, "a launch");
  }
  for (const TraceOp& o : t.ops) {
    require(o.door < Door::kCount && o.op < Op::kCount, "an op");
    require(o.dst_kind <= MemoryKind::kOther && o.src_kind <= MemoryKind::kOther, "kinds");
    require(o.has_detail || (o.src == 0 && o.value == 0 && o.dst_kind == MemoryKind::kUnknown &&
                             o.src_kind == MemoryKind::kUnknown),
            "no detail without one");
  }
  for (const TraceChunk& c : t.engine.chunks) require(c.start <= c.end, "a chunk");
  for (const TraceFlush& f : t.engine.flushes) require(f.op <= Op::kCount, "a flush's op");
  for (const TraceDecision& d : t.engine.decisions) {
    require(d.verdict < DecisionVerdict::kCount && d.source < DecisionSource::kCount, "a decision");
  }

  if (t.header.version < 2) {
    require(t.engine.empty(), "no graph-mode events in format 1");
    for (const TraceOp& o : t.ops) require(!o.has_detail, "no memop detail in format 1");
  }
}

// The reader's answer for these bytes, checked against the walk of their records.
void check(const uint8_t* data, size_t size, const Trace& t, const ReadResult& r) {
  require(r.status == ReadStatus::kOk || r.status == ReadStatus::kIncomplete ||
              r.status == ReadStatus::kError,
          "a status");
  require((r.status == ReadStatus::kOk) == r.message.empty(), "a message unless ok");
  for (char c : r.message) {
    require(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f, "one printable line", r.message);
  }

  const std::string refused = header_problem(data, size);
  require((r.status == ReadStatus::kError) == !refused.empty(), "refused iff the header is bad",
          r.message);
  if (r.status == ReadStatus::kError) {
    if (refused == "newer") {
      require(r.message.find("is newer than this analyzer supports (" +
                             std::to_string(kTraceVersion) + ")") != std::string::npos,
              "newer says so", r.message);
    } else {
      require(r.message == refused, "the header's problem", r.message);
    }
    require(counts_of(t) == Counts{} && t.events.empty(), "nothing returned with an error");
    return;
  }

  check_contents(t);
  const Walk w = walk_records(data, size, t.header.header_size);
  const Counts c = counts_of(t);
  const long long events = static_cast<long long>(t.events.size());
  if (r.status == ReadStatus::kOk) {
    require(w.stop == size && t.has_end, "ok: every byte read and an end seen");
    require(matches_prefix(w, w.offsets.size(), c), "ok: every record returned");
    return;
  }
  // Incomplete: either every record was read and the end is missing, or the reader stopped at
  // the record (or cut header) it names.
  if (r.message.rfind("trace has no end record", 0) == 0) {
    require(w.stop == size && !t.has_end, "no end: every byte read, none seen", r.message);
    require(matches_prefix(w, w.offsets.size(), c), "no end: every record returned");
    require(ends_with(r.message, "; " + std::to_string(events) + " events were read"),
            "no end: the events read", r.message);
    return;
  }
  require(ends_with(r.message, "; " + std::to_string(events) + " events before it were read"),
          "the events read before the problem", r.message);
  const long long at = number_after(r.message, " at byte ");
  require(at >= 0, "the problem's place", r.message);
  const size_t off = static_cast<size_t>(at);
  if (r.message.rfind("corrupt record of type ", 0) == 0) {
    // A whole record the reader could not take: the walk has it, of that type.
    size_t i = 0;
    while (i < w.offsets.size() && w.offsets[i] < off) ++i;
    require(i < w.offsets.size() && w.offsets[i] == off, "a record starts there", r.message);
    require(number_after(r.message, "of type ") == w.types[i], "its type", r.message);
    require(matches_prefix(w, i, c), "the records before it returned", r.message);
  } else {
    // A cut or impossible record header: where the walk stopped too.
    require(off == w.stop && off < size, "where the records stop", r.message);
    require(matches_prefix(w, w.offsets.size(), c), "every record before it returned");
    const bool cut_header = r.message.rfind("trace truncated at byte ", 0) == 0 &&
                            r.message.find("(partial record header)") != std::string::npos;
    const bool cut_record = r.message.rfind("trace truncated at byte ", 0) == 0 &&
                            r.message.find(" left)") != std::string::npos;
    const bool corrupt = r.message.rfind("corrupt record at byte ", 0) == 0;
    require(cut_header == (size - off < sizeof(RecordHeader)), "a cut header", r.message);
    require(cut_header || cut_record || corrupt, "a known problem", r.message);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t size) {
  // Exactly `size` bytes on the heap: one byte more read is a heap-buffer-overflow.
  std::unique_ptr<uint8_t[]> data(new uint8_t[size]);
  if (size) std::memcpy(data.get(), input, size);

  Trace t;
  const ReadResult r = parse_trace(data.get(), size, &t);
  check(data.get(), size, t, r);

  Trace again;
  const ReadResult r2 = parse_trace(data.get(), size, &again);
  require(r2.status == r.status && r2.message == r.message && counts_of(again) == counts_of(t),
          "the same result twice");

  // A prefix (cut at a place the input chooses) reads no more of anything.
  if (size > 0) {
    const size_t cut = size - 1 - (size > 1 ? data[size - 1] % size : 0);
    Trace part;
    const ReadResult rp = parse_trace(data.get(), cut, &part);
    require(counts_of(part).at_most(counts_of(t)), "a prefix reads no more",
            std::to_string(cut) + " of " + std::to_string(size));
    require(r.status != ReadStatus::kError || rp.status == ReadStatus::kError,
            "a prefix of a refused input is refused");
  }

  // What `pygraph-analyze summary` does with it (its text and its JSON).
  if (r.status != ReadStatus::kError) {
    const nlohmann::json s = analyze::summarize(t, analyze::SummaryOptions{});
    require(!analyze::summary_text(s).empty(), "a summary");
    require(!s.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).empty(), "JSON");
  }
  return 0;
}
