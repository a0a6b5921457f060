// Writes the trace reader fuzz target's seeds into DIR: small traces of format 2 and format 1
// made by the shim's own recorder, trace writer and graph mode's trace observer, on the driver
// stand-in (every record type, two threads, each kind of launch argument), and cuts of them.
// Usage: trace_seeds DIR   (build/fuzz/trace_seeds tests/fuzz/corpus/trace_reader)
#include <cuda.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "decisions/decision_policy.h"
#include "driver/driver_api.h"
#include "driver/launch_call.h"
#include "graph/engine_stats.h"
#include "recording/recorder.h"
#include "recording/trace_observer.h"
#include "standin.h"
#include "trace/trace_format.h"

namespace {

using namespace pygraph;

template <class T>
T entry(const char* name) {
  void* p = standin_entry_point(name);
  if (!p) {
    std::fprintf(stderr, "trace_seeds: the stand-in has no %s\n", name);
    std::exit(1);
  }
  return reinterpret_cast<T>(p);
}

void kernel(const unsigned*, const unsigned*, void**) {}

DriverApi standin_api() {
  DriverApi api;
  api.func_get_name = entry<decltype(api.func_get_name)>("cuFuncGetName");
  api.func_get_param_info = entry<decltype(api.func_get_param_info)>("cuFuncGetParamInfo");
  api.kernel_get_name = entry<decltype(api.kernel_get_name)>("cuKernelGetName");
  api.kernel_get_param_info = entry<decltype(api.kernel_get_param_info)>("cuKernelGetParamInfo");
  api.func_get_module = entry<decltype(api.func_get_module)>("cuFuncGetModule");
  api.kernel_get_library = entry<decltype(api.kernel_get_library)>("cuKernelGetLibrary");
  api.ctx_get_current = entry<decltype(api.ctx_get_current)>("cuCtxGetCurrent");
  api.pointer_get_attribute = entry<decltype(api.pointer_get_attribute)>("cuPointerGetAttribute");
  return api;
}

LaunchCall launch_of(CUfunction f, void** params, void** extra) {
  LaunchCall c{};
  c.op = Op::LaunchKernel;
  c.door = trace::Door::kProcAddr;
  c.function = f;
  c.grid[0] = 4;
  c.grid[1] = c.grid[2] = 1;
  c.block[0] = 128;
  c.block[1] = c.block[2] = 1;
  c.stream = reinterpret_cast<CUstream>(0x10);
  c.params = params;
  c.extra = extra;
  return c;
}

OpCall op_of(Op op, uint64_t ptr = 0, uint64_t bytes = 0) {
  OpCall c{op, trace::Door::kExport};
  c.stream = 0x10;
  c.ptr = ptr;
  c.bytes = bytes;
  return c;
}

// One small run: a trace of format 2, or (graph_mode false) one without graph mode's events
// and memop details, which is what a format-1 writer wrote.
std::string write_run(const std::string& path, bool graph_mode) {
  const DriverApi api = standin_api();
  Recorder recorder(&api, /*skip_own_frames=*/false);
  Config config;
  config.trace_path = path;
  std::string error;
  if (!recorder.start(config, &error)) {
    std::fprintf(stderr, "trace_seeds: %s: %s\n", path.c_str(), error.c_str());
    std::exit(1);
  }
  TraceObserver observer(&recorder);

  const size_t sizes[3] = {4, 8, 8};
  standin_register_kernel("seed_axpy", &kernel, 3, sizes);
  standin_register_kernel("seed_hidden", &kernel, 1, sizes);
  standin_hide_layout("seed_hidden");
  auto get_function = entry<decltype(&cuModuleGetFunction)>("cuModuleGetFunction");
  auto load_library = entry<decltype(&cuLibraryLoadData)>("cuLibraryLoadData");
  auto get_kernel = entry<decltype(&cuLibraryGetKernel)>("cuLibraryGetKernel");
  auto alloc = entry<decltype(&cuMemAlloc_v2)>("cuMemAlloc_v2");
  CUfunction axpy = nullptr, hidden = nullptr;
  CUlibrary library = nullptr;
  CUkernel axpy_kernel = nullptr;
  CUdeviceptr device = 0;
  if (get_function(&axpy, nullptr, "seed_axpy") != CUDA_SUCCESS ||
      get_function(&hidden, nullptr, "seed_hidden") != CUDA_SUCCESS ||
      load_library(&library, "image", nullptr, nullptr, 0, nullptr, nullptr, 0) != CUDA_SUCCESS ||
      get_kernel(&axpy_kernel, library, "seed_axpy") != CUDA_SUCCESS ||
      alloc(&device, 256) != CUDA_SUCCESS) {
    std::fprintf(stderr, "trace_seeds: the stand-in refused a setup call\n");
    std::exit(1);
  }

  float a = 2.0f;
  CUdeviceptr x = device, y = device + 128;
  void* params[3] = {&a, &x, &y};
  uint64_t t = 1000;
  auto step = [&](bool last) {
    // A launch with a known layout, one through a CUkernel with an attribute (cuLaunchKernelEx),
    // one through `extra`, one whose layout the driver keeps to itself.
    recorder.record_launch(launch_of(axpy, params, nullptr), t, t + 3, CUDA_SUCCESS);
    LaunchCall ex = launch_of(reinterpret_cast<CUfunction>(axpy_kernel), params, nullptr);
    ex.op = Op::LaunchKernelEx;
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attr.value.cooperative = 1;
    ex.attrs = &attr;
    ex.attr_count = 1;
    recorder.record_launch(ex, t + 4, t + 6, CUDA_SUCCESS);
    uint8_t packed[20] = {1, 2, 3, 4};
    size_t packed_size = sizeof packed;
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed, CU_LAUNCH_PARAM_BUFFER_SIZE,
                     &packed_size, CU_LAUNCH_PARAM_END};
    recorder.record_launch(launch_of(axpy, nullptr, extra), t + 7, t + 9, CUDA_SUCCESS);
    recorder.record_launch(launch_of(hidden, params, nullptr), t + 10, t + 11,
                           last ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS);
    if (graph_mode) {
      OpCall set = op_of(Op::MemsetD32Async, device, 32);
      set.memop = true;
      set.value = 0x3f800000;
      recorder.record_op(set, t + 12, t + 13, CUDA_SUCCESS);
      OpCall copy = op_of(Op::MemcpyHtoDAsync, device + 64, 16);
      copy.memop = true;
      copy.src = reinterpret_cast<uint64_t>(&a);
      recorder.record_op(copy, t + 14, t + 15, CUDA_SUCCESS);
    } else {
      recorder.record_op(op_of(Op::MemsetD32Async, device, 32), t + 12, t + 13, CUDA_SUCCESS);
    }
    recorder.record_op(op_of(Op::StreamSynchronize), t + 16, t + 20, CUDA_SUCCESS);
    t += 100;
  };
  step(false);
  if (graph_mode) {
    observer.followed(1, false, 7);
    observer.chunk_built(1, 0, 2, 2);
    observer.replayed(1, 2, 1);
    observer.eager(false, EagerReason::kShortChunk);
    observer.eager(true, EagerReason::kMismatch);
    observer.flushed(FlushCause::kOp, Op::StreamSynchronize, 3);
    observer.flushed(FlushCause::kStall, Op::kCount, 1);
    // Decisions: one measuring (no signature yet), one adopted from the cache with its
    // signature, so that the fuzzer starts from both shapes of record 12.
    SequencePolicy policy;
    observer.decided(1, "", policy, 7);
    policy.adopt(true, "cached");
    observer.decided(1, "k3:f1.f2.f1", policy, 7);
  }
  // A second thread: its own thread record, its records in a block of their own.
  std::thread([&] {
    recorder.record_launch(launch_of(axpy, params, nullptr), t, t + 2, CUDA_SUCCESS);
    recorder.record_op(op_of(Op::CtxSynchronize), t + 3, t + 5, CUDA_SUCCESS);
  }).join();
  step(true);
  recorder.record_op(op_of(Op::MemFree, device), t, t + 1, CUDA_SUCCESS);
  recorder.stop();

  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ::unlink(path.c_str());
  return bytes;
}

// Where each record starts.
std::vector<size_t> records(const std::string& b) {
  std::vector<size_t> at;
  for (size_t off = sizeof(trace::FileHeader); off + sizeof(trace::RecordHeader) <= b.size();) {
    trace::RecordHeader h;
    std::memcpy(&h, b.data() + off, sizeof h);
    at.push_back(off);
    off += h.size;
  }
  return at;
}

// The first record of this type.
size_t first(const std::string& b, trace::RecordType type) {
  for (size_t off : records(b)) {
    trace::RecordHeader h;
    std::memcpy(&h, b.data() + off, sizeof h);
    if (h.type == static_cast<uint16_t>(type)) return off;
  }
  std::fprintf(stderr, "trace_seeds: no record of type %d\n", static_cast<int>(type));
  std::exit(1);
}

std::string with_version(std::string b, uint32_t version) {
  std::memcpy(&b[offsetof(trace::FileHeader, version)], &version, sizeof version);
  return b;
}

void put(const std::string& dir, const char* name, const std::string& bytes) {
  std::ofstream(dir + "/" + name, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: trace_seeds DIR\n");
    return 1;
  }
  const std::string dir = argv[1];
  std::filesystem::create_directories(dir);
  const std::string scratch = dir + "/.writing-" + std::to_string(::getpid()) + ".trace";
  const std::string v2 = write_run(scratch, /*graph_mode=*/true);
  const std::string v1 = with_version(write_run(scratch, /*graph_mode=*/false), 1);
  const size_t end2 = records(v2).back(), end1 = records(v1).back();
  const size_t launch = first(v2, trace::RecordType::kLaunch) + 8;  // past its header
  const size_t followed = first(v2, trace::RecordType::kFollowed);

  put(dir, "v2.trace", v2);
  put(dir, "v1.trace", v1);
  put(dir, "v2-no-end.trace", v2.substr(0, end2));  // killed: every record, no end
  put(dir, "v1-no-end.trace", v1.substr(0, end1));
  put(dir, "v2-cut-in-record.trace", v2.substr(0, launch + 30));
  put(dir, "v2-cut-in-record-header.trace", v2.substr(0, followed + 5));
  put(dir, "v1-cut-in-end.trace", v1.substr(0, end1 + 20));
  put(dir, "cut-in-file-header.trace", v2.substr(0, sizeof(trace::FileHeader) - 9));
  put(dir, "newer-version.trace", with_version(v2.substr(0, followed), trace::kTraceVersion + 1));
  std::printf("trace_seeds: wrote 9 traces to %s (format 2: %zu bytes, format 1: %zu bytes)\n",
              dir.c_str(), v2.size(), v1.size());
  return 0;
}
