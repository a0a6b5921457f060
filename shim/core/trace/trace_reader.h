// Reads pygraph traces back: the one parser the analyzer and the tests share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "driver/ops.h"
#include "trace/trace_format.h"

namespace pygraph {

struct TraceFunction {
  uint32_t id = 0;
  std::string name;
  uint64_t handle = 0;
  bool is_kernel_handle = false;
  bool params_known = false;
  std::vector<trace::ParamLayout> params;
};

struct TraceCallSite {
  uint32_t id = 0;
  std::vector<std::string> frames;  // Python frames first ("py:..."), then native
};

struct TraceLaunch {
  uint64_t seq = 0, ts_ns = 0;
  uint32_t dur_ns = 0;
  uint16_t tid = 0;
  trace::Door door = trace::Door::kExport;
  uint8_t flags = 0;
  Op op = Op::LaunchKernel;
  uint32_t function_id = 0;
  uint32_t grid[3] = {}, block[3] = {};
  uint32_t shared_mem = 0;
  int32_t result = 0;
  uint64_t stream = 0;
  std::vector<trace::LaunchAttr> attrs;
  std::vector<uint8_t> args;
};

struct TraceOp {
  uint64_t seq = 0, ts_ns = 0;
  uint32_t dur_ns = 0;
  uint16_t tid = 0;
  trace::Door door = trace::Door::kExport;
  Op op = Op::StreamSynchronize;
  int32_t result = 0;
  uint32_t callsite_id = 0;
  uint64_t stream = 0, handle = 0, ptr = 0, bytes = 0;
  // Version 2, async memsets and 1-D copies only (has_detail): what graph mode was given.
  bool has_detail = false;
  uint64_t src = 0;
  uint32_t value = 0;
  trace::MemoryKind dst_kind = trace::MemoryKind::kUnknown, src_kind = trace::MemoryKind::kUnknown;
};

// Graph mode's own events (version 2), in the order of their seq.
struct TraceFollowed {
  uint64_t seq = 0;
  uint32_t sequence = 0, length = 0;
  bool periodic = false;
};
struct TraceChunk {
  uint64_t seq = 0;
  uint32_t sequence = 0, start = 0, end = 0, nodes = 0;
};
struct TraceReplay {
  uint64_t seq = 0;
  uint32_t sequence = 0, nodes = 0, patched = 0;
};
struct TraceFlush {
  uint64_t seq = 0;
  uint8_t cause = 0;  // FlushCause
  Op op = Op::kCount;
  uint32_t pending = 0, callsite_id = 0;
};
struct TraceEager {
  uint64_t seq = 0;
  uint8_t reason = 0;  // EagerReason
  bool memop = false;
  uint32_t count = 0;
};
struct TraceDecision {
  uint64_t seq = 0;
  uint32_t sequence = 0, launches = 0;
  trace::DecisionVerdict verdict = trace::DecisionVerdict::kMeasuring;
  trace::DecisionSource source = trace::DecisionSource::kMeasured;
  double eager_ns = 0, graph_ns = 0;  // 0: not measured (cached, config)
  std::string signature;              // "" while not known
  // What graphs gain over eager launches, as the policy computes it (negative: slower).
  double gain_percent() const { return eager_ns > 0 ? 100.0 * (1.0 - graph_ns / eager_ns) : 0; }
};
struct TraceEngineEvents {
  std::vector<TraceFollowed> followed;
  std::vector<TraceChunk> chunks;
  std::vector<TraceReplay> replays;
  std::vector<TraceFlush> flushes;
  std::vector<TraceEager> eager;
  std::vector<TraceDecision> decisions;
  bool empty() const {
    return followed.empty() && chunks.empty() && replays.empty() && flushes.empty() &&
           eager.empty() && decisions.empty();
  }
};

// One entry per launch or op, in the global order the program made them.
struct TraceEvent {
  bool is_launch;
  uint32_t index;  // into Trace::launches or Trace::ops
};

struct Trace {
  // The file's packed structs, aligned here so that their fields can be bound by reference
  // (as nlohmann::json's assignment does): packed, `end` after a bool was at an odd address.
  alignas(8) trace::FileHeader header{};
  std::vector<TraceFunction> functions;  // index = id - 1
  std::vector<TraceCallSite> callsites;  // index = id - 1
  std::vector<trace::ThreadRecord> threads;
  std::vector<TraceLaunch> launches;
  std::vector<TraceOp> ops;
  std::vector<TraceEvent> events;
  TraceEngineEvents engine;  // empty unless graph mode wrote the trace
  bool has_end = false;
  alignas(8) trace::EndRecord end{};

  const TraceFunction* function(uint32_t id) const;
  const TraceCallSite* callsite(uint32_t id) const;
};

enum class ReadStatus {
  kOk,          // the whole trace, ended by an EndRecord
  kIncomplete,  // readable records, but the process died or the file was cut: see message
  kError,       // nothing usable: see message
};

struct ReadResult {
  ReadStatus status = ReadStatus::kError;
  std::string message;  // one line, for kIncomplete and kError
};

ReadResult read_trace(const std::string& path, Trace* out);
ReadResult parse_trace(const uint8_t* data, size_t size, Trace* out);

}  // namespace pygraph
