# Synchronizes through the stand-in driver from Python, for tests/e2e/python_test.cpp.
# ctypes.PyDLL keeps the GIL held during the call, as C extensions that do not release it do;
# ctypes.CDLL releases it, as PyTorch does around its ops. The shim must name this file and
# line as the call site either way.
import ctypes
import inspect
import sys

held = ctypes.PyDLL("libcuda.so.1")
released = ctypes.CDLL("libcuda.so.1")
if held.cuInit(0) != 0:
    sys.exit("cuInit failed")


def sync_holding_gil():
    print(inspect.currentframe().f_lineno + 1)
    return held.cuStreamSynchronize(None)


def sync_without_gil():
    print(inspect.currentframe().f_lineno + 1)
    return released.cuCtxSynchronize()


if sync_holding_gil() != 0 or sync_without_gil() != 0:
    sys.exit("synchronize failed")
