#include "trace/trace_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace pygraph {
namespace {

using namespace trace;

// Bounds-checked cursor over one record's payload.
class Cursor {
 public:
  Cursor(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}
  template <class T>
  bool get(T* out) {
    if (static_cast<size_t>(end_ - p_) < sizeof(T)) return false;
    std::memcpy(out, p_, sizeof(T));
    p_ += sizeof(T);
    return true;
  }
  bool bytes(size_t n, const uint8_t** out) {
    if (static_cast<size_t>(end_ - p_) < n) return false;
    *out = p_;
    p_ += n;
    return true;
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// Function and call-site ids count up from 1, each announced by a record of its own, so a file
// of `size` bytes holds no id above the number of such records that fit in it (a writer that
// dropped records leaves gaps, never that many). The tables indexed by id stay proportional to
// the file: one damaged id of millions would otherwise cost gigabytes of empty slots.
uint32_t id_bound(size_t size, size_t min_record_bytes) {
  return static_cast<uint32_t>(std::min<size_t>(size / min_record_bytes, 1u << 24));
}

bool parse_function(Cursor& c, uint32_t max_id, Trace* t) {
  FunctionRecord r;
  const uint8_t* name;
  if (!c.get(&r) || !c.bytes(r.name_len, &name)) return false;
  TraceFunction f;
  f.id = r.id;
  f.name.assign(reinterpret_cast<const char*>(name), r.name_len);
  f.handle = r.handle;
  f.is_kernel_handle = (r.flags & kFunctionIsKernelHandle) != 0;
  f.params_known = r.param_count != kParamsUnknown;
  if (f.params_known) {
    if (r.param_count > 65536) return false;
    f.params.resize(r.param_count);
    for (auto& p : f.params) {
      if (!c.get(&p)) return false;
    }
  }
  if (r.id == 0 || r.id > max_id) return false;
  if (t->functions.size() < r.id) t->functions.resize(r.id);
  t->functions[r.id - 1] = std::move(f);
  return true;
}

bool parse_callsite(Cursor& c, uint32_t max_id, Trace* t) {
  CallSiteRecord r;
  if (!c.get(&r) || r.id == 0 || r.id > max_id || r.frame_count > 1024) return false;
  TraceCallSite s;
  s.id = r.id;
  for (uint32_t i = 0; i < r.frame_count; ++i) {
    uint16_t len;
    const uint8_t* text;
    if (!c.get(&len) || !c.bytes(len, &text)) return false;
    s.frames.emplace_back(reinterpret_cast<const char*>(text), len);
  }
  if (t->callsites.size() < r.id) t->callsites.resize(r.id);
  t->callsites[r.id - 1] = std::move(s);
  return true;
}

bool valid_op(uint16_t op) {
  return op < static_cast<uint16_t>(Op::kCount);
}
bool valid_door(uint8_t d) {
  return d < static_cast<uint8_t>(Door::kCount);
}

bool parse_launch(Cursor& c, Trace* t) {
  LaunchRecord r;
  if (!c.get(&r) || !valid_op(r.op) || !valid_door(r.door) || r.attr_count > 64) return false;
  TraceLaunch l;
  l.seq = r.seq;
  l.ts_ns = r.ts_ns;
  l.dur_ns = r.dur_ns;
  l.tid = r.tid;
  l.door = static_cast<Door>(r.door);
  l.flags = r.flags;
  l.op = static_cast<Op>(r.op);
  l.function_id = r.function_id;
  std::copy(r.grid, r.grid + 3, l.grid);
  std::copy(r.block, r.block + 3, l.block);
  l.shared_mem = r.shared_mem;
  l.result = r.result;
  l.stream = r.stream;
  l.attrs.resize(r.attr_count);
  for (auto& a : l.attrs) {
    if (!c.get(&a)) return false;
  }
  const uint8_t* args;
  if (!c.bytes(r.arg_bytes, &args)) return false;
  l.args.assign(args, args + r.arg_bytes);
  t->launches.push_back(std::move(l));
  return true;
}

bool valid_kind(uint8_t k) {
  return k <= static_cast<uint8_t>(MemoryKind::kOther);
}

bool parse_op(Cursor& c, size_t size, uint32_t version, Trace* t) {
  OpRecord r;
  if (!c.get(&r) || !valid_op(r.op) || !valid_door(r.door)) return false;
  // Version 2 appends a MemopDetail to memops; the record's size says whether it is there.
  MemopDetail d{};
  const bool has_detail = size == sizeof(OpRecord) + sizeof(MemopDetail);
  if (has_detail &&
      (version < 2 || !c.get(&d) || !valid_kind(d.dst_kind) || !valid_kind(d.src_kind))) {
    return false;
  }
  if (!has_detail && size != sizeof(OpRecord)) return false;
  TraceOp o;
  o.seq = r.seq;
  o.ts_ns = r.ts_ns;
  o.dur_ns = r.dur_ns;
  o.tid = r.tid;
  o.door = static_cast<Door>(r.door);
  o.op = static_cast<Op>(r.op);
  o.result = r.result;
  o.callsite_id = r.callsite_id;
  o.stream = r.stream;
  o.handle = r.handle;
  o.ptr = r.ptr;
  o.bytes = r.bytes;
  o.has_detail = has_detail;
  o.src = d.src;
  o.value = d.value;
  o.dst_kind = static_cast<MemoryKind>(d.dst_kind);
  o.src_kind = static_cast<MemoryKind>(d.src_kind);
  t->ops.push_back(o);
  return true;
}

// Graph mode's events: fixed-size records of version 2 and later.
template <class R>
bool get_exact(Cursor& c, size_t size, uint32_t version, R* r) {
  return version >= 2 && size == sizeof(R) && c.get(r);
}

bool parse_engine_event(RecordType type, Cursor& c, size_t size, uint32_t version, Trace* t) {
  TraceEngineEvents& e = t->engine;
  switch (type) {
    case RecordType::kFollowed: {
      FollowedRecord r;
      if (!get_exact(c, size, version, &r) || r.periodic > 1) return false;
      e.followed.push_back({r.seq, r.sequence, r.length, r.periodic == 1});
      return true;
    }
    case RecordType::kChunk: {
      ChunkRecord r;
      if (!get_exact(c, size, version, &r) || r.start > r.end) return false;
      e.chunks.push_back({r.seq, r.sequence, r.start, r.end, r.nodes});
      return true;
    }
    case RecordType::kReplay: {
      ReplayRecord r;
      if (!get_exact(c, size, version, &r)) return false;
      e.replays.push_back({r.seq, r.sequence, r.nodes, r.patched});
      return true;
    }
    case RecordType::kFlush: {
      FlushRecord r;
      if (!get_exact(c, size, version, &r) || r.op > static_cast<uint16_t>(Op::kCount)) {
        return false;
      }
      e.flushes.push_back({r.seq, r.cause, static_cast<Op>(r.op), r.pending, r.callsite_id});
      return true;
    }
    case RecordType::kEager: {
      EagerRecord r;
      if (!get_exact(c, size, version, &r) || r.memop > 1) return false;
      e.eager.push_back({r.seq, r.reason, r.memop == 1, r.count});
      return true;
    }
    case RecordType::kDecision: {
      DecisionRecord r;
      if (version < 2 || size < sizeof(r) || !c.get(&r) || size != sizeof(r) + r.signature_len ||
          r.verdict >= static_cast<uint8_t>(DecisionVerdict::kCount) ||
          r.source >= static_cast<uint8_t>(DecisionSource::kCount)) {
        return false;
      }
      TraceDecision d;
      d.seq = r.seq;
      d.sequence = r.sequence;
      d.launches = r.launches;
      d.verdict = static_cast<DecisionVerdict>(r.verdict);
      d.source = static_cast<DecisionSource>(r.source);
      d.eager_ns = r.eager_ns;
      d.graph_ns = r.graph_ns;
      const uint8_t* text = nullptr;
      if (!c.bytes(r.signature_len, &text)) return false;
      d.signature.assign(reinterpret_cast<const char*>(text), r.signature_len);
      e.decisions.push_back(std::move(d));
      return true;
    }
    default:
      return false;
  }
}

std::string offset_text(size_t off) {
  return "byte " + std::to_string(off);
}

}  // namespace

const TraceFunction* Trace::function(uint32_t id) const {
  if (id == 0 || id > functions.size() || functions[id - 1].id != id) return nullptr;
  return &functions[id - 1];
}

const TraceCallSite* Trace::callsite(uint32_t id) const {
  if (id == 0 || id > callsites.size() || callsites[id - 1].id != id) return nullptr;
  return &callsites[id - 1];
}

ReadResult parse_trace(const uint8_t* data, size_t size, Trace* t) {
  ReadResult res;
  *t = Trace{};
  if (size < 8 || std::memcmp(data, kMagic, 8) != 0) {
    res.message = "not a pygraph trace (bad magic)";
    return res;
  }
  if (size < sizeof(FileHeader)) {
    res.message = "trace header is truncated";
    return res;
  }
  std::memcpy(&t->header, data, sizeof(FileHeader));
  if (t->header.version > kTraceVersion) {
    res.message = "trace format version " + std::to_string(t->header.version) +
                  " is newer than this analyzer supports (" + std::to_string(kTraceVersion) +
                  "); use the pygraph-analyze of the pygraph that wrote it";
    return res;
  }
  if (t->header.version == 0 || t->header.header_size < sizeof(FileHeader) ||
      t->header.header_size > size) {
    res.message = "corrupt trace header";
    return res;
  }
  size_t off = t->header.header_size;
  const uint32_t max_function_id = id_bound(size, sizeof(RecordHeader) + sizeof(FunctionRecord));
  const uint32_t max_callsite_id = id_bound(size, sizeof(RecordHeader) + sizeof(CallSiteRecord));
  std::string problem;
  while (off < size) {
    if (size - off < sizeof(RecordHeader)) {
      problem = "trace truncated at " + offset_text(off) + " (partial record header)";
      break;
    }
    RecordHeader h;
    std::memcpy(&h, data + off, sizeof(h));
    if (h.size < sizeof(RecordHeader)) {
      problem = "corrupt record at " + offset_text(off);
      break;
    }
    if (h.size > size - off) {
      problem = "trace truncated at " + offset_text(off) + " (record of " + std::to_string(h.size) +
                " bytes, " + std::to_string(size - off) + " left)";
      break;
    }
    Cursor c(data + off + sizeof(h), h.size - sizeof(h));
    bool ok = true;
    switch (static_cast<RecordType>(h.type)) {
      case RecordType::kFunction:
        ok = parse_function(c, max_function_id, t);
        break;
      case RecordType::kCallSite:
        ok = parse_callsite(c, max_callsite_id, t);
        break;
      case RecordType::kLaunch:
        ok = parse_launch(c, t);
        break;
      case RecordType::kOp:
        ok = parse_op(c, h.size - sizeof(h), t->header.version, t);
        break;
      case RecordType::kFollowed:
      case RecordType::kChunk:
      case RecordType::kReplay:
      case RecordType::kFlush:
      case RecordType::kEager:
      case RecordType::kDecision:
        ok = parse_engine_event(static_cast<RecordType>(h.type), c, h.size - sizeof(h),
                                t->header.version, t);
        break;
      case RecordType::kThread: {
        ThreadRecord r;
        ok = c.get(&r);
        if (ok) t->threads.push_back(r);
        break;
      }
      case RecordType::kEnd: {
        // Into a copy: a corrupt end record after a good one must not unsay it (the fuzzer's
        // find, session 26).
        EndRecord end;
        ok = c.get(&end);
        if (ok) {
          t->end = end;
          t->has_end = true;
        }
        break;
      }
      default:
        ok = false;
    }
    if (!ok) {
      problem = "corrupt record of type " + std::to_string(h.type) + " at " + offset_text(off);
      break;
    }
    off += h.size;
  }

  t->events.reserve(t->launches.size() + t->ops.size());
  for (uint32_t i = 0; i < t->launches.size(); ++i) t->events.push_back({true, i});
  for (uint32_t i = 0; i < t->ops.size(); ++i) t->events.push_back({false, i});
  auto seq = [t](const TraceEvent& e) {
    return e.is_launch ? t->launches[e.index].seq : t->ops[e.index].seq;
  };
  std::sort(t->events.begin(), t->events.end(),
            [&](const TraceEvent& a, const TraceEvent& b) { return seq(a) < seq(b); });

  // Threads write in blocks: each kind of engine event is put back in the program's order.
  auto by_seq = [](auto& v) {
    std::stable_sort(v.begin(), v.end(),
                     [](const auto& a, const auto& b) { return a.seq < b.seq; });
  };
  by_seq(t->engine.followed);
  by_seq(t->engine.chunks);
  by_seq(t->engine.replays);
  by_seq(t->engine.flushes);
  by_seq(t->engine.eager);
  by_seq(t->engine.decisions);

  if (!problem.empty()) {
    res.status = ReadStatus::kIncomplete;
    res.message = problem + "; " + std::to_string(t->events.size()) + " events before it were read";
  } else if (!t->has_end) {
    res.status = ReadStatus::kIncomplete;
    res.message =
        "trace has no end record: the process did not exit normally (killed or "
        "crashed); " +
        std::to_string(t->events.size()) + " events were read";
  } else {
    res.status = ReadStatus::kOk;
  }
  return res;
}

ReadResult read_trace(const std::string& path, Trace* out) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    ReadResult r;
    r.message = path + " is not a regular file";
    return r;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ReadResult r;
    r.message = "cannot open " + path + ": " + std::strerror(errno);
    return r;
  }
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    ReadResult r;
    r.message = "cannot read " + path;
    return r;
  }
  return parse_trace(data.data(), data.size(), out);
}

}  // namespace pygraph
