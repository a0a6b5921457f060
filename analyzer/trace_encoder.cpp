#include "trace_encoder.h"

#include <algorithm>
#include <cstring>

namespace pygraph::analyze {

using namespace trace;

TraceEncoder::TraceEncoder(const FileHeader& header) {
  FileHeader h = header;
  h.header_size = sizeof(FileHeader);
  put(h);
}

void TraceEncoder::begin(RecordType type, size_t payload) {
  RecordHeader h{};
  h.type = static_cast<uint16_t>(type);
  h.size = static_cast<uint32_t>(sizeof(RecordHeader) + payload);
  put(h);
  ++records_;
}

void TraceEncoder::thread(const ThreadRecord& r) {
  begin(RecordType::kThread, sizeof r);
  put(r);
}

void TraceEncoder::function(const TraceFunction& f) {
  FunctionRecord r{};
  r.id = f.id;
  r.name_len = static_cast<uint32_t>(f.name.size());
  r.param_count = f.params_known ? static_cast<uint32_t>(f.params.size()) : kParamsUnknown;
  r.flags = f.is_kernel_handle ? kFunctionIsKernelHandle : 0;
  r.handle = f.handle;
  const size_t params = f.params_known ? f.params.size() * sizeof(ParamLayout) : 0;
  begin(RecordType::kFunction, sizeof r + f.name.size() + params);
  put(r);
  put_bytes(f.name.data(), f.name.size());
  if (f.params_known) put_bytes(f.params.data(), params);
}

void TraceEncoder::callsite(const TraceCallSite& s) {
  size_t payload = sizeof(CallSiteRecord);
  for (const std::string& frame : s.frames) {
    payload += sizeof(uint16_t) + std::min<size_t>(frame.size(), UINT16_MAX);
  }
  begin(RecordType::kCallSite, payload);
  put(CallSiteRecord{s.id, static_cast<uint32_t>(s.frames.size())});
  for (const std::string& frame : s.frames) {
    // The reader took each frame from a 16-bit length, so it fits; a frame built elsewhere is
    // cut rather than left to overflow its length.
    const uint16_t len = static_cast<uint16_t>(std::min<size_t>(frame.size(), UINT16_MAX));
    put(len);
    put_bytes(frame.data(), len);
  }
}

void TraceEncoder::launch(const TraceLaunch& l) {
  LaunchRecord r{};
  r.seq = l.seq;
  r.ts_ns = l.ts_ns;
  r.dur_ns = l.dur_ns;
  r.tid = l.tid;
  r.door = static_cast<uint8_t>(l.door);
  r.flags = l.flags;
  r.op = static_cast<uint16_t>(l.op);
  r.attr_count = static_cast<uint16_t>(l.attrs.size());
  r.function_id = l.function_id;
  std::copy(l.grid, l.grid + 3, r.grid);
  std::copy(l.block, l.block + 3, r.block);
  r.shared_mem = l.shared_mem;
  r.result = l.result;
  r.stream = l.stream;
  r.arg_bytes = static_cast<uint32_t>(l.args.size());
  const size_t attrs = l.attrs.size() * sizeof(LaunchAttr);
  begin(RecordType::kLaunch, sizeof r + attrs + l.args.size());
  put(r);
  put_bytes(l.attrs.data(), attrs);
  put_bytes(l.args.data(), l.args.size());
}

void TraceEncoder::op(const TraceOp& o) {
  OpRecord r{};
  r.seq = o.seq;
  r.ts_ns = o.ts_ns;
  r.dur_ns = o.dur_ns;
  r.tid = o.tid;
  r.door = static_cast<uint8_t>(o.door);
  r.op = static_cast<uint16_t>(o.op);
  r.result = o.result;
  r.callsite_id = o.callsite_id;
  r.stream = o.stream;
  r.handle = o.handle;
  r.ptr = o.ptr;
  r.bytes = o.bytes;
  begin(RecordType::kOp, sizeof r + (o.has_detail ? sizeof(MemopDetail) : 0));
  put(r);
  if (o.has_detail) {
    MemopDetail d{};
    d.src = o.src;
    d.value = o.value;
    d.dst_kind = static_cast<uint8_t>(o.dst_kind);
    d.src_kind = static_cast<uint8_t>(o.src_kind);
    put(d);
  }
}

void TraceEncoder::followed(const TraceFollowed& e) {
  FollowedRecord r{};
  r.seq = e.seq;
  r.sequence = e.sequence;
  r.length = e.length;
  r.periodic = e.periodic ? 1 : 0;
  begin(RecordType::kFollowed, sizeof r);
  put(r);
}

void TraceEncoder::chunk(const TraceChunk& e) {
  ChunkRecord r{};
  r.seq = e.seq;
  r.sequence = e.sequence;
  r.start = e.start;
  r.end = e.end;
  r.nodes = e.nodes;
  begin(RecordType::kChunk, sizeof r);
  put(r);
}

void TraceEncoder::replay(const TraceReplay& e) {
  ReplayRecord r{};
  r.seq = e.seq;
  r.sequence = e.sequence;
  r.nodes = e.nodes;
  r.patched = e.patched;
  begin(RecordType::kReplay, sizeof r);
  put(r);
}

void TraceEncoder::flush(const TraceFlush& e) {
  FlushRecord r{};
  r.seq = e.seq;
  r.cause = e.cause;
  r.op = static_cast<uint16_t>(e.op);
  r.pending = e.pending;
  r.callsite_id = e.callsite_id;
  begin(RecordType::kFlush, sizeof r);
  put(r);
}

void TraceEncoder::eager(const TraceEager& e) {
  EagerRecord r{};
  r.seq = e.seq;
  r.reason = e.reason;
  r.memop = e.memop ? 1 : 0;
  r.count = e.count;
  begin(RecordType::kEager, sizeof r);
  put(r);
}

void TraceEncoder::decision(const TraceDecision& e) {
  DecisionRecord r{};
  r.seq = e.seq;
  r.sequence = e.sequence;
  r.verdict = static_cast<uint8_t>(e.verdict);
  r.source = static_cast<uint8_t>(e.source);
  r.signature_len = static_cast<uint16_t>(e.signature.size());
  r.eager_ns = e.eager_ns;
  r.graph_ns = e.graph_ns;
  r.launches = e.launches;
  begin(RecordType::kDecision, sizeof r + r.signature_len);
  put(r);
  put_bytes(e.signature.data(), r.signature_len);
}

void TraceEncoder::end(EndRecord r) {
  r.records = records_;
  begin(RecordType::kEnd, sizeof r);
  put(r);
}

}  // namespace pygraph::analyze
