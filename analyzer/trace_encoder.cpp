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
  record(RecordType::kThread, r);
}

void TraceEncoder::function(const TraceFunction& f) {
  const size_t params = f.params_known ? f.params.size() * sizeof(ParamLayout) : 0;
  record(RecordType::kFunction,
         FunctionRecord{.id = f.id,
                        .name_len = static_cast<uint32_t>(f.name.size()),
                        .param_count = f.params_known ? static_cast<uint32_t>(f.params.size())
                                                      : kParamsUnknown,
                        .flags = f.is_kernel_handle ? kFunctionIsKernelHandle : 0,
                        .handle = f.handle},
         f.name.size() + params);
  put_bytes(f.name.data(), f.name.size());
  if (f.params_known) put_bytes(f.params.data(), params);
}

void TraceEncoder::callsite(const TraceCallSite& s) {
  size_t frames = 0;
  for (const std::string& frame : s.frames) {
    frames += sizeof(uint16_t) + std::min<size_t>(frame.size(), UINT16_MAX);
  }
  record(RecordType::kCallSite, CallSiteRecord{s.id, static_cast<uint32_t>(s.frames.size())},
         frames);
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
  record(RecordType::kLaunch, r, attrs + l.args.size());
  put_bytes(l.attrs.data(), attrs);
  put_bytes(l.args.data(), l.args.size());
}

void TraceEncoder::op(const TraceOp& o) {
  record(RecordType::kOp,
         OpRecord{.seq = o.seq,
                  .ts_ns = o.ts_ns,
                  .dur_ns = o.dur_ns,
                  .tid = o.tid,
                  .door = static_cast<uint8_t>(o.door),
                  .reserved = 0,
                  .op = static_cast<uint16_t>(o.op),
                  .reserved2 = 0,
                  .result = o.result,
                  .callsite_id = o.callsite_id,
                  .stream = o.stream,
                  .handle = o.handle,
                  .ptr = o.ptr,
                  .bytes = o.bytes},
         o.has_detail ? sizeof(MemopDetail) : 0);
  if (o.has_detail) {
    put(MemopDetail{.src = o.src,
                    .value = o.value,
                    .dst_kind = static_cast<uint8_t>(o.dst_kind),
                    .src_kind = static_cast<uint8_t>(o.src_kind),
                    .reserved = 0});
  }
}

// Graph mode's events: fixed-size records, field for field.
void TraceEncoder::followed(const TraceFollowed& e) {
  record(RecordType::kFollowed, FollowedRecord{.seq = e.seq,
                                               .sequence = e.sequence,
                                               .length = e.length,
                                               .periodic = static_cast<uint8_t>(e.periodic ? 1 : 0),
                                               .reserved = {}});
}

void TraceEncoder::chunk(const TraceChunk& e) {
  record(
      RecordType::kChunk,
      ChunkRecord{
          .seq = e.seq, .sequence = e.sequence, .start = e.start, .end = e.end, .nodes = e.nodes});
}

void TraceEncoder::replay(const TraceReplay& e) {
  record(RecordType::kReplay, ReplayRecord{.seq = e.seq,
                                           .sequence = e.sequence,
                                           .nodes = e.nodes,
                                           .patched = e.patched,
                                           .reserved = 0});
}

void TraceEncoder::flush(const TraceFlush& e) {
  record(RecordType::kFlush, FlushRecord{.seq = e.seq,
                                         .cause = e.cause,
                                         .reserved = 0,
                                         .op = static_cast<uint16_t>(e.op),
                                         .pending = e.pending,
                                         .callsite_id = e.callsite_id,
                                         .reserved2 = 0});
}

void TraceEncoder::eager(const TraceEager& e) {
  record(RecordType::kEager, EagerRecord{.seq = e.seq,
                                         .reason = e.reason,
                                         .memop = static_cast<uint8_t>(e.memop ? 1 : 0),
                                         .reserved = 0,
                                         .count = e.count});
}

void TraceEncoder::decision(const TraceDecision& e) {
  const auto len = static_cast<uint16_t>(e.signature.size());
  record(RecordType::kDecision,
         DecisionRecord{.seq = e.seq,
                        .sequence = e.sequence,
                        .verdict = static_cast<uint8_t>(e.verdict),
                        .source = static_cast<uint8_t>(e.source),
                        .signature_len = len,
                        .eager_ns = e.eager_ns,
                        .graph_ns = e.graph_ns,
                        .launches = e.launches,
                        .reserved = 0},
         len);
  put_bytes(e.signature.data(), len);
}

void TraceEncoder::end(EndRecord r) {
  r.records = records_;
  record(RecordType::kEnd, r);
}

}  // namespace pygraph::analyze
