// A stream-ordered memory operation as the hooks hand it to graph mode's engine: an async memset
// of 1-, 2- or 4-byte elements, or an async 1-D copy. Inside a repeating sequence it becomes a
// memset or memcpy node of the chunk it falls in, like a kernel launch becomes a kernel node:
// PyTorch zeroes buffers with cuMemsetD8Async dozens of times per step (BERT: 60), and a memop
// that cut the chunk each time would leave graphs of a few launches.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

#include "driver/ops.h"

namespace pygraph {

struct MemopCall {
  Op op;            // one of those engine_memop() accepts
  void* eager;      // the driver entry point the program called, with the ABI of `op`
  bool per_thread;  // reached through a per-thread-default-stream entry point
  CUstream stream;  // as the program passed it
  uint64_t dst;
  uint64_t src;    // copies: the source address (device or host)
  size_t count;    // memsets: elements; copies: bytes
  uint32_t value;  // memsets: the element value
};

// The ops graph mode can hold as nodes. Synchronous memops make the host wait and stay
// boundaries; 2-D/3-D, peer and array copies stay eager (flush_rules.h).
constexpr bool engine_memop(Op op) {
  switch (op) {
    case Op::MemsetD8Async:
    case Op::MemsetD16Async:
    case Op::MemsetD32Async:
    case Op::MemcpyHtoDAsync:
    case Op::MemcpyDtoHAsync:
    case Op::MemcpyDtoDAsync:
    case Op::MemcpyAsync:
      return true;
    default:
      return false;
  }
}

// Bytes per element of a memset op; 0 for copies.
constexpr uint32_t memset_element_size(Op op) {
  switch (op) {
    case Op::MemsetD8Async:
      return 1;
    case Op::MemsetD16Async:
      return 2;
    case Op::MemsetD32Async:
      return 4;
    default:
      return 0;
  }
}

}  // namespace pygraph
