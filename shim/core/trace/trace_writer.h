// Buffered, fork-safe writer of pygraph traces.
//
// Each thread appends records to its own chunk with no lock and no system call; full chunks go
// onto a lock-free list that a background thread writes out. At exit the remaining chunks,
// including the partly filled chunks of every thread, are written, followed by an EndRecord.
// A process killed on the way loses at most the chunks not yet written; what is on disk is
// whole chunks of whole records, except for a write cut short, which the reader reports.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "trace/trace_format.h"

namespace pygraph {

// Whether a trace is open (TraceWriter::is_open): a constant-initialized global, so that the
// launch path reads it without a call or a guard.
extern std::atomic<bool> g_trace_active;

class TraceWriter {
 public:
  // Opens the trace file named by `path_template` ("%p" becomes the pid). If another live
  // process already writes that path (a parent whose children inherited the shim), the file
  // gets a ".<pid>" suffix instead. Returns false and sets *error on failure.
  bool open(const std::string& path_template, std::string* error);
  bool is_open() const { return g_trace_active.load(std::memory_order_acquire); }
  const std::string& path() const;

  // Hot path. Reserves a record of `size` bytes (header included) in the calling thread's chunk
  // and returns a pointer to its payload, or nullptr when the trace is not open or no memory is
  // left (the record is counted as dropped). Every successful begin must be followed by commit()
  // on the same thread before the next begin.
  uint8_t* begin(trace::RecordType type, uint32_t size);
  void commit();

  // Global order of records across threads.
  uint64_t next_seq();
  // Small trace-local id of the calling thread; announces the thread on first use.
  uint16_t thread_id();

  // Writes everything buffered and the EndRecord, then closes. Later records are dropped.
  void close(uint64_t unwrapped_entry_points);

  // In a forked child: forgets the parent's file, buffers and writer thread without writing
  // anything, so the parent's trace stays intact. The child may open() again.
  void reset_in_child();

  uint64_t dropped() const;
};

TraceWriter& trace_writer();

// CLOCK_MONOTONIC in nanoseconds (vDSO: no system call).
uint64_t now_ns();

}  // namespace pygraph
