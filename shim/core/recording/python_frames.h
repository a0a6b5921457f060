// The innermost Python frames of the calling thread, in a process that runs a Python
// interpreter. The CPython C API is looked up at run time, so the shim neither links libpython
// nor does anything in processes without it. A thread holding the GIL is read through the C API;
// a thread that released it (PyTorch does, around .item() and every op) is read from the
// interpreter's frame structures with fault-safe reads, on CPython 3.11 and 3.12.
#pragma once

#include <cstdint>
#include <string>

namespace pygraph {

struct PyFrameKey {
  const void* code;  // PyCodeObject*; kept alive once seen, so the address stays unique
  int line;
};

// Fills up to `max` frames, innermost first; returns how many (0 outside Python).
int python_frames(PyFrameKey* out, int max);

// "py:FILE:LINE FUNC" for a frame returned by python_frames() on this thread.
std::string python_frame_text(const PyFrameKey& frame);

}  // namespace pygraph
