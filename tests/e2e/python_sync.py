# Synchronizes through the stand-in driver from Python, for tests/e2e/python_test.cpp.
# ctypes.PyDLL keeps the GIL held during the call, as C extensions that do not release it do;
# the shim must then record this file and line as the call site.
import ctypes
import inspect
import sys

cuda = ctypes.PyDLL("libcuda.so.1")
if cuda.cuInit(0) != 0:
    sys.exit("cuInit failed")


def sync_here():
    print(inspect.currentframe().f_lineno + 1)
    return cuda.cuStreamSynchronize(None)


if sync_here() != 0:
    sys.exit("cuStreamSynchronize failed")
