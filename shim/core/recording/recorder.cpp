#include "recording/recorder.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "driver/memop_call.h"
#include "driver/memory_kinds.h"
#include "driver/packed_args.h"
#include "trace/trace_writer.h"

namespace pygraph {
namespace {

using trace::RecordHeader;
using trace::RecordType;

uint32_t duration(uint64_t t0, uint64_t t1) {
  uint64_t d = t1 > t0 ? t1 - t0 : 0;
  return d > 0xffffffffull ? 0xffffffffu : static_cast<uint32_t>(d);
}

}  // namespace

bool Recorder::start(const Config& config, std::string* error) {
  if (config.trace_path.empty()) return true;
  functions_.clear();
  callsites_.clear();
  return trace_writer().open(config.trace_path, error);
}

void Recorder::stop() {
  trace_writer().close(unwrapped_.load());
}

uint32_t Recorder::announce_function(const FunctionInfo& f) {
  const uint32_t nparams = f.params_known ? static_cast<uint32_t>(f.params.size()) : 0;
  const uint32_t size = sizeof(RecordHeader) + sizeof(trace::FunctionRecord) +
                        static_cast<uint32_t>(f.name.size()) + nparams * sizeof(trace::ParamLayout);
  uint8_t* p = trace_writer().begin(RecordType::kFunction, size);
  if (!p) return f.id;
  trace::FunctionRecord r{};
  r.id = f.id;
  r.name_len = static_cast<uint32_t>(f.name.size());
  r.param_count = f.params_known ? nparams : trace::kParamsUnknown;
  r.flags = f.is_kernel_handle ? trace::kFunctionIsKernelHandle : 0;
  r.handle = f.handle;
  std::memcpy(p, &r, sizeof(r));
  p += sizeof(r);
  std::memcpy(p, f.name.data(), f.name.size());
  p += f.name.size();
  if (nparams) std::memcpy(p, f.params.data(), nparams * sizeof(trace::ParamLayout));
  trace_writer().commit();
  return f.id;
}

void Recorder::announce_new(const FunctionInfo* f) {
  if (f && trace_writer().is_open()) announce_function(*f);
}

void Recorder::record_launch(const LaunchCall& c, uint64_t t0, uint64_t t1, CUresult result) {
  launches_[static_cast<int>(c.door)].fetch_add(1, std::memory_order_relaxed);
  write_launch(c, t0, t1, result);
}

void Recorder::write_launch(const LaunchCall& c, uint64_t t0, uint64_t t1, CUresult result) {
  TraceWriter& w = trace_writer();
  if (!w.is_open()) return;

  const FunctionInfo* f = c.info ? c.info : function(c.function);

  uint8_t flags = 0;
  uint32_t arg_bytes = 0;
  PackedArgs packed;
  if (c.params && f && f->params_known) {
    arg_bytes = f->arg_bytes;
  } else if (!c.params && parse_extra(c.extra, &packed) == ExtraForm::kBuffer) {
    flags = trace::kLaunchArgsFromExtra;
    arg_bytes = static_cast<uint32_t>(std::min<size_t>(packed.size, 1u << 16));
  } else {
    flags = trace::kLaunchArgsUnknown;
  }
  const unsigned nattrs = std::min(c.attr_count, 64u);
  const uint32_t size = sizeof(RecordHeader) + sizeof(trace::LaunchRecord) +
                        nattrs * sizeof(trace::LaunchAttr) + arg_bytes;
  uint8_t* p = w.begin(RecordType::kLaunch, size);
  if (!p) return;

  trace::LaunchRecord r;
  r.seq = w.next_seq();
  r.ts_ns = t0;
  r.dur_ns = duration(t0, t1);
  r.tid = w.thread_id();
  r.door = static_cast<uint8_t>(c.door);
  r.flags = flags;
  r.op = static_cast<uint16_t>(c.op);
  r.attr_count = static_cast<uint16_t>(nattrs);
  r.function_id = f ? f->id : 0;
  std::copy(c.grid, c.grid + 3, r.grid);
  std::copy(c.block, c.block + 3, r.block);
  r.shared_mem = c.shared_mem;
  r.result = result;
  r.stream = reinterpret_cast<uint64_t>(c.stream);
  r.arg_bytes = arg_bytes;
  std::memcpy(p, &r, sizeof(r));
  p += sizeof(r);
  for (unsigned i = 0; i < nattrs; ++i) {
    trace::LaunchAttr a{};
    a.id = static_cast<uint32_t>(c.attrs[i].id);
    static_assert(sizeof(a.value) == sizeof(c.attrs[i].value));
    std::memcpy(a.value, &c.attrs[i].value, sizeof(a.value));
    std::memcpy(p, &a, sizeof(a));
    p += sizeof(a);
  }
  if (flags == 0) {
    f->pack_args(c.params, p);
  } else if (flags == trace::kLaunchArgsFromExtra) {
    std::memcpy(p, packed.data, arg_bytes);
  }
  w.commit();
}

void Recorder::record_op(const OpCall& c, uint64_t t0, uint64_t t1, CUresult result) {
  ops_.fetch_add(1, std::memory_order_relaxed);
  TraceWriter& w = trace_writer();
  if (!w.is_open()) return;

  const uint32_t callsite = op_observes_gpu(c.op) ? this->callsite() : 0;

  // Memops are asked about their memory here, off the launch path: the driver call costs about
  // what the memop's own record does, and only while a trace is written.
  trace::MemopDetail detail{};
  if (c.memop) {
    detail.src = c.src;
    detail.value = c.value;
    detail.dst_kind = static_cast<uint8_t>(memory_kind(c.ptr));
    if (memset_element_size(c.op) == 0) detail.src_kind = static_cast<uint8_t>(memory_kind(c.src));
  }
  const uint32_t size =
      sizeof(RecordHeader) + sizeof(trace::OpRecord) + (c.memop ? sizeof(trace::MemopDetail) : 0);
  uint8_t* p = w.begin(RecordType::kOp, size);
  if (!p) return;
  trace::OpRecord r{};
  r.seq = w.next_seq();
  r.ts_ns = t0;
  r.dur_ns = duration(t0, t1);
  r.tid = w.thread_id();
  r.door = static_cast<uint8_t>(c.door);
  r.op = static_cast<uint16_t>(c.op);
  r.result = result;
  r.callsite_id = callsite;
  r.stream = c.stream;
  r.handle = c.handle;
  r.ptr = c.ptr;
  r.bytes = c.bytes;
  std::memcpy(p, &r, sizeof(r));
  if (c.memop) std::memcpy(p + sizeof(r), &detail, sizeof(detail));
  w.commit();
}

uint32_t Recorder::callsite() {
  TraceWriter& w = trace_writer();
  if (!w.is_open()) return 0;
  bool created;
  std::vector<std::string> frames;
  const uint32_t id = callsites_.capture(&created, &frames);
  if (!created) return id;
  uint32_t size = sizeof(RecordHeader) + sizeof(trace::CallSiteRecord);
  for (auto& s : frames) {
    if (s.size() > 0xffff) s.resize(0xffff);
    size += 2 + static_cast<uint32_t>(s.size());
  }
  if (uint8_t* p = w.begin(RecordType::kCallSite, size)) {
    trace::CallSiteRecord r{id, static_cast<uint32_t>(frames.size())};
    std::memcpy(p, &r, sizeof(r));
    p += sizeof(r);
    for (const auto& s : frames) {
      uint16_t len = static_cast<uint16_t>(s.size());
      std::memcpy(p, &len, 2);
      std::memcpy(p + 2, s.data(), len);
      p += 2 + len;
    }
    w.commit();
  }
  return id;
}

trace::MemoryKind Recorder::memory_kind(uint64_t address) const {
  // The same question and reading as graph mode's (memory_kinds.h), asked every time: records
  // come from any thread, and trace mode keeps no state on this path.
  if (!driver_ || !driver_->pointer_get_attribute) return trace::MemoryKind::kUnknown;
  switch (ask_memory_kind(*driver_, address)) {
    case MemKind::kDevice:
      return trace::MemoryKind::kDevice;
    case MemKind::kPinned:
      return trace::MemoryKind::kPinned;
    case MemKind::kPageable:
      return trace::MemoryKind::kPageable;
    case MemKind::kOther:
      break;
  }
  return trace::MemoryKind::kOther;
}

void Recorder::reset_in_child() {
  trace_writer().reset_in_child();
  functions_.reset_in_child();
  callsites_.reset_in_child();
}

}  // namespace pygraph
