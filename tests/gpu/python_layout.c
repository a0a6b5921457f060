/* Prints the CPython structure offsets that shim/core/python_frames.cpp relies on (its Layout
   table), compiled against the headers of the Python at hand:
     cc -I"$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \
        tests/gpu/python_layout.c -o python_layout && ./python_layout
   scripts/gpu-check.sh runs it so that a new Python version's layout can be checked. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <stddef.h>
#include <stdio.h>

int main(void) {
#if PY_VERSION_HEX >= 0x030d0000
  printf("python %s: not supported by python_frames.cpp's no-GIL path\n", PY_VERSION);
#else
#if PY_VERSION_HEX >= 0x030c0000
  const int cstack = FRAME_OWNED_BY_CSTACK;
#else
  const int cstack = -1;
#endif
  printf("python %s layout: {%zu, %zu, %zu, %zu, %zu, %zu, %d, %zu, %zu, %zu}\n", PY_VERSION,
         offsetof(PyThreadState, cframe), offsetof(_PyCFrame, current_frame),
         offsetof(_PyInterpreterFrame, f_code), offsetof(_PyInterpreterFrame, previous),
         offsetof(_PyInterpreterFrame, prev_instr), offsetof(_PyInterpreterFrame, owner), cstack,
         offsetof(PyCodeObject, co_filename), offsetof(PyCodeObject, co_qualname),
         sizeof(PyASCIIObject));
#endif
  return 0;
}
