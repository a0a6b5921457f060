// Writes what the trace reader returned back in the trace format (docs/trace-format.md,
// trace/trace_format.h), record by record, so that `trim` can cut a trace into a smaller one
// that the reader and every subcommand take like the original. The shim's own writer
// (trace/trace_writer.h) is built for the hot path of a live process; this one serves offline
// tools and keeps every field the reader returns, argument bytes and memop details included.
#pragma once

#include <cstdint>
#include <string>

#include "trace/trace_reader.h"

namespace pygraph::analyze {

class TraceEncoder {
 public:
  // Starts the file with `header`; its header_size becomes this format's own.
  explicit TraceEncoder(const trace::FileHeader& header);

  void thread(const trace::ThreadRecord& r);
  void function(const TraceFunction& f);
  void callsite(const TraceCallSite& s);
  void launch(const TraceLaunch& l);
  void op(const TraceOp& o);  // with its MemopDetail when it has one
  void followed(const TraceFollowed& e);
  void chunk(const TraceChunk& e);
  void replay(const TraceReplay& e);
  void flush(const TraceFlush& e);
  void eager(const TraceEager& e);
  void decision(const TraceDecision& e);
  // The end record; its `records` is set to the records written before it.
  void end(trace::EndRecord r);

  const std::string& bytes() const { return out_; }
  uint64_t records() const { return records_; }

 private:
  // Appends a record header for a record of `payload` bytes after it.
  void begin(trace::RecordType type, size_t payload);
  // Appends the header and fixed part `r` of a record whose variable part, `tail` bytes, the
  // caller appends next.
  template <class R>
  void record(trace::RecordType type, const R& r, size_t tail = 0) {
    begin(type, sizeof r + tail);
    put(r);
  }
  template <class T>
  void put(const T& v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void put_bytes(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }

  std::string out_;
  uint64_t records_ = 0;
};

}  // namespace pygraph::analyze
