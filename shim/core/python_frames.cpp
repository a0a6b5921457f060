#include "python_frames.h"

#include <dlfcn.h>

#include <atomic>
#include <mutex>

namespace pygraph {
namespace {

// The slice of the CPython C API we use, all present since Python 3.9.
struct PyApi {
  int (*is_initialized)();
  int (*gil_check)();
  void* (*get_frame)();                 // PyEval_GetFrame: borrowed
  void* (*frame_get_code)(void*);       // PyFrame_GetCode: new reference
  void* (*frame_get_back)(void*);       // PyFrame_GetBack: new reference
  int (*frame_get_line)(void*);         // PyFrame_GetLineNumber
  void* (*get_attr)(void*, const char*);  // PyObject_GetAttrString: new reference
  const char* (*unicode_utf8)(void*);   // PyUnicode_AsUTF8: borrowed
  void (*incref)(void*);
  void (*decref)(void*);
  void (*err_clear)();
  bool ok = false;
};

const PyApi& py() {
  static PyApi api = [] {
    PyApi a{};
    auto sym = [](const char* n) { return dlsym(RTLD_DEFAULT, n); };
    a.is_initialized = reinterpret_cast<int (*)()>(sym("Py_IsInitialized"));
    a.gil_check = reinterpret_cast<int (*)()>(sym("PyGILState_Check"));
    a.get_frame = reinterpret_cast<void* (*)()>(sym("PyEval_GetFrame"));
    a.frame_get_code = reinterpret_cast<void* (*)(void*)>(sym("PyFrame_GetCode"));
    a.frame_get_back = reinterpret_cast<void* (*)(void*)>(sym("PyFrame_GetBack"));
    a.frame_get_line = reinterpret_cast<int (*)(void*)>(sym("PyFrame_GetLineNumber"));
    a.get_attr = reinterpret_cast<void* (*)(void*, const char*)>(sym("PyObject_GetAttrString"));
    a.unicode_utf8 = reinterpret_cast<const char* (*)(void*)>(sym("PyUnicode_AsUTF8"));
    a.incref = reinterpret_cast<void (*)(void*)>(sym("Py_IncRef"));
    a.decref = reinterpret_cast<void (*)(void*)>(sym("Py_DecRef"));
    a.err_clear = reinterpret_cast<void (*)()>(sym("PyErr_Clear"));
    a.ok = a.is_initialized && a.gil_check && a.get_frame && a.frame_get_code &&
           a.frame_get_back && a.frame_get_line && a.get_attr && a.unicode_utf8 && a.incref &&
           a.decref && a.err_clear;
    return a;
  }();
  return api;
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
  // Without the GIL the interpreter's frames may change under us: report none.
  if (!a.ok || !a.is_initialized() || !a.gil_check()) return 0;
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
  void* code = const_cast<void*>(f.code);
  std::string name = attr_text(a, code, "co_qualname");
  if (name == "?") name = attr_text(a, code, "co_name");
  return "py:" + attr_text(a, code, "co_filename") + ":" + std::to_string(f.line) + " " + name;
}

}  // namespace pygraph
