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

bool parse_function(Cursor& c, Trace* t) {
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
  if (r.id == 0 || r.id > (1u << 24)) return false;
  if (t->functions.size() < r.id) t->functions.resize(r.id);
  t->functions[r.id - 1] = std::move(f);
  return true;
}

bool parse_callsite(Cursor& c, Trace* t) {
  CallSiteRecord r;
  if (!c.get(&r) || r.id == 0 || r.id > (1u << 24) || r.frame_count > 1024) return false;
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

bool parse_op(Cursor& c, Trace* t) {
  OpRecord r;
  if (!c.get(&r) || !valid_op(r.op) || !valid_door(r.door)) return false;
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
  t->ops.push_back(o);
  return true;
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
        ok = parse_function(c, t);
        break;
      case RecordType::kCallSite:
        ok = parse_callsite(c, t);
        break;
      case RecordType::kLaunch:
        ok = parse_launch(c, t);
        break;
      case RecordType::kOp:
        ok = parse_op(c, t);
        break;
      case RecordType::kThread: {
        ThreadRecord r;
        ok = c.get(&r);
        if (ok) t->threads.push_back(r);
        break;
      }
      case RecordType::kEnd:
        ok = c.get(&t->end);
        t->has_end = ok;
        break;
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
