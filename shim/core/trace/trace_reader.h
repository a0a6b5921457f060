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
};

// One entry per launch or op, in the global order the program made them.
struct TraceEvent {
  bool is_launch;
  uint32_t index;  // into Trace::launches or Trace::ops
};

struct Trace {
  trace::FileHeader header{};
  std::vector<TraceFunction> functions;  // index = id - 1
  std::vector<TraceCallSite> callsites;  // index = id - 1
  std::vector<trace::ThreadRecord> threads;
  std::vector<TraceLaunch> launches;
  std::vector<TraceOp> ops;
  std::vector<TraceEvent> events;
  bool has_end = false;
  trace::EndRecord end{};

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
