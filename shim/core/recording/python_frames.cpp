#include "recording/python_frames.h"

#include <dlfcn.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>

namespace pygraph {
namespace {

// The slice of the CPython C API we use, all present since Python 3.9.
struct PyApi {
  int (*is_initialized)();
  int (*gil_check)();
  void* (*this_thread_state)();           // PyGILState_GetThisThreadState: no GIL needed
  void* (*get_frame)();                   // PyEval_GetFrame: borrowed
  void* (*frame_get_code)(void*);         // PyFrame_GetCode: new reference
  void* (*frame_get_back)(void*);         // PyFrame_GetBack: new reference
  int (*frame_get_line)(void*);           // PyFrame_GetLineNumber
  void* (*get_attr)(void*, const char*);  // PyObject_GetAttrString: new reference
  const char* (*unicode_utf8)(void*);     // PyUnicode_AsUTF8: borrowed
  void (*incref)(void*);
  void (*decref)(void*);
  void (*err_clear)();
  int (*code_addr2line)(void*, int);  // PyCode_Addr2Line: reads the code object only
  const unsigned long* version;       // Py_Version (3.11+)
  const void* code_type;              // &PyCode_Type
  const void* unicode_type;           // &PyUnicode_Type
  bool ok = false;
};

// Where the interpreter keeps a thread's frames, for reading them while the thread has
// released the GIL (PyTorch releases it around every op, .item() included). Offsets are from
// CPython's own headers for x86-64/aarch64 (Include/cpython/pystate.h,
// Include/internal/pycore_frame.h, Include/cpython/code.h, unicodeobject.h); other versions get
// no Python frames when the GIL is released. Every read goes through safe_read(), so a wrong
// offset yields no frame, never a crash.
struct Layout {
  size_t tstate_cframe, cframe_current_frame;
  size_t frame_code, frame_previous, frame_instr, frame_owner;
  int owner_cstack;  // frames owned by the C stack are the interpreter's own; -1: none
  size_t code_filename, code_qualname;
  size_t ascii_data;  // sizeof(PyASCIIObject)
};
constexpr Layout kPy311 = {56, 8, 32, 48, 56, 69, -1, 112, 128, 48};
constexpr Layout kPy312 = {56, 0, 0, 8, 56, 70, 3, 112, 128, 40};

const PyApi& py() {
  static PyApi api = [] {
    PyApi a{};
    auto sym = [](const char* n) { return dlsym(RTLD_DEFAULT, n); };
    a.is_initialized = reinterpret_cast<int (*)()>(sym("Py_IsInitialized"));
    a.gil_check = reinterpret_cast<int (*)()>(sym("PyGILState_Check"));
    a.this_thread_state = reinterpret_cast<void* (*)()>(sym("PyGILState_GetThisThreadState"));
    a.get_frame = reinterpret_cast<void* (*)()>(sym("PyEval_GetFrame"));
    a.frame_get_code = reinterpret_cast<void* (*)(void*)>(sym("PyFrame_GetCode"));
    a.frame_get_back = reinterpret_cast<void* (*)(void*)>(sym("PyFrame_GetBack"));
    a.frame_get_line = reinterpret_cast<int (*)(void*)>(sym("PyFrame_GetLineNumber"));
    a.get_attr = reinterpret_cast<void* (*)(void*, const char*)>(sym("PyObject_GetAttrString"));
    a.unicode_utf8 = reinterpret_cast<const char* (*)(void*)>(sym("PyUnicode_AsUTF8"));
    a.incref = reinterpret_cast<void (*)(void*)>(sym("Py_IncRef"));
    a.decref = reinterpret_cast<void (*)(void*)>(sym("Py_DecRef"));
    a.err_clear = reinterpret_cast<void (*)()>(sym("PyErr_Clear"));
    a.code_addr2line = reinterpret_cast<int (*)(void*, int)>(sym("PyCode_Addr2Line"));
    a.version = static_cast<const unsigned long*>(sym("Py_Version"));
    a.code_type = sym("PyCode_Type");
    a.unicode_type = sym("PyUnicode_Type");
    a.ok = a.is_initialized && a.gil_check && a.get_frame && a.frame_get_code && a.frame_get_back &&
           a.frame_get_line && a.get_attr && a.unicode_utf8 && a.incref && a.decref && a.err_clear;
    return a;
  }();
  return api;
}

const Layout* layout() {
  const PyApi& a = py();
  if (!a.version || !a.this_thread_state || !a.code_addr2line || !a.code_type || !a.unicode_type) {
    return nullptr;
  }
  switch ((*a.version >> 16) & 0xffff) {
    case 0x030b:
      return &kPy311;
    case 0x030c:
      return &kPy312;
    default:
      return nullptr;
  }
}

// Copies memory of this process without faulting on a bad address (the kernel checks it).
bool safe_read(void* dst, uintptr_t src, size_t n) {
  if (src < 4096) return false;
  iovec local{dst, n}, remote{reinterpret_cast<void*>(src), n};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n);
}
uintptr_t read_ptr(uintptr_t at) {
  uintptr_t v = 0;
  return safe_read(&v, at, sizeof v) ? v : 0;
}

bool is_code(uintptr_t obj) {
  return obj && read_ptr(obj + 8) == reinterpret_cast<uintptr_t>(py().code_type);
}

// An ASCII str object's text; "?" for anything else.
std::string read_ascii(uintptr_t s, size_t data_offset) {
  if (!s || read_ptr(s + 8) != reinterpret_cast<uintptr_t>(py().unicode_type)) return "?";
  int64_t length = 0;
  uint32_t state = 0;
  if (!safe_read(&length, s + 16, 8) || !safe_read(&state, s + 32, 4)) return "?";
  const bool compact_ascii = ((state >> 5) & 1) && ((state >> 6) & 1);
  if (!compact_ascii || length < 0 || length > 4096) return "?";
  std::string out(static_cast<size_t>(length), '\0');
  if (length && !safe_read(out.data(), s + data_offset, out.size())) return "?";
  return out;
}

// The frames of the calling thread, read from the interpreter's structures (GIL not held).
int frames_without_gil(PyFrameKey* out, int max) {
  const Layout* l = layout();
  if (!l) return 0;
  const PyApi& a = py();
  auto tstate = reinterpret_cast<uintptr_t>(a.this_thread_state());
  if (!tstate) return 0;
  uintptr_t cframe = read_ptr(tstate + l->tstate_cframe);
  uintptr_t frame = cframe ? read_ptr(cframe + l->cframe_current_frame) : 0;
  uintptr_t code_start;  // offsetof(PyCodeObject, co_code_adaptive) == PyCode_Type.tp_basicsize
  int64_t basicsize = 0;
  if (!safe_read(&basicsize, reinterpret_cast<uintptr_t>(a.code_type) + 32, 8)) return 0;
  int n = 0;
  for (int steps = 0; frame && n < max && steps < 256; ++steps) {
    uintptr_t code = read_ptr(frame + l->frame_code);
    uint8_t owner = 0;
    safe_read(&owner, frame + l->frame_owner, 1);
    if (!is_code(code)) break;
    if (owner != l->owner_cstack) {
      code_start = code + static_cast<uintptr_t>(basicsize);
      uintptr_t instr = read_ptr(frame + l->frame_instr);
      int64_t lasti = instr >= code_start ? static_cast<int64_t>(instr - code_start) / 2 : -1;
      int line = lasti >= 0
                     ? a.code_addr2line(reinterpret_cast<void*>(code), static_cast<int>(lasti * 2))
                     : -1;
      out[n++] = PyFrameKey{reinterpret_cast<const void*>(code), line};
    }
    frame = read_ptr(frame + l->frame_previous);
  }
  return n;
}

std::string attr_text(const PyApi& a, void* obj, const char* name) {
  void* v = a.get_attr(obj, name);
  if (!v) {
    a.err_clear();  // leave no Python exception behind in the program's thread
    return "?";
  }
  const char* s = a.unicode_utf8(v);
  std::string out = s ? s : "?";
  a.decref(v);
  return out;
}

}  // namespace

int python_frames(PyFrameKey* out, int max) {
  const PyApi& a = py();
  if (!a.ok || !a.is_initialized()) return 0;
  if (!a.gil_check()) return frames_without_gil(out, max);
  void* frame = a.get_frame();
  if (!frame) return 0;
  a.incref(frame);
  int n = 0;
  while (frame && n < max) {
    void* code = a.frame_get_code(frame);
    // The reference to the code object is kept on purpose: a freed code object's address could
    // be reused by another and merge two call sites.
    out[n++] = PyFrameKey{code, a.frame_get_line(frame)};
    void* back = a.frame_get_back(frame);
    a.decref(frame);
    frame = back;
  }
  if (frame) a.decref(frame);
  return n;
}

std::string python_frame_text(const PyFrameKey& f) {
  const PyApi& a = py();
  if (!a.ok || !f.code) return "py:?";
  std::string file, name;
  if (a.gil_check()) {
    void* code = const_cast<void*>(f.code);
    name = attr_text(a, code, "co_qualname");
    if (name == "?") name = attr_text(a, code, "co_name");
    file = attr_text(a, code, "co_filename");
  } else if (const Layout* l = layout()) {
    // The frame is still live (its thread is inside this call), so its code object is too.
    auto code = reinterpret_cast<uintptr_t>(f.code);
    file = read_ascii(read_ptr(code + l->code_filename), l->ascii_data);
    name = read_ascii(read_ptr(code + l->code_qualname), l->ascii_data);
  } else {
    return "py:?";
  }
  return "py:" + file + ":" + std::to_string(f.line) + " " + name;
}

}  // namespace pygraph
