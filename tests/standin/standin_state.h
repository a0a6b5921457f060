// Internal state of the driver stand-in, shared by its source files.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "standin.h"

namespace standin {

struct Kernel {
  std::string name;
  standin_kernel_fn fn = nullptr;
  std::vector<size_t> sizes;
  std::vector<size_t> offsets;  // natural alignment, as nvcc lays out parameters
  size_t arg_bytes = 0;
  bool layout_hidden = false;  // standin_hide_layout
};

constexpr uint32_t kFuncMagic = 0x46554e43;  // "FUNC"
constexpr uint32_t kKernMagic = 0x4b45524e;  // "KERN"

struct Func;
struct Kern;

// A module or a library. Never freed, so that a stale handle stays safe to look at; unloading
// marks it and hands its function and kernel objects back for reuse, as the driver may reuse
// handles: the next module's functions get the unloaded ones' handles (most recent first).
struct Module {
  bool library = false;
  bool loaded = true;
  Module* context_module = nullptr;  // a library's module in the (only) context
  std::vector<Func*> funcs;
  std::vector<Kern*> kerns;
};

struct Func {
  uint32_t magic = kFuncMagic;
  Kernel* kernel = nullptr;
  Module* module = nullptr;  // null once unloaded (until the handle is reused)
};
struct Kern {
  uint32_t magic = kKernMagic;
  Kernel* kernel = nullptr;
  Module* library = nullptr;  // null once unloaded (until the handle is reused)
  Func func;                  // what cuKernelGetFunction returns
};

struct Context {};

struct Graph;

struct Stream {
  Graph* capture = nullptr;  // set while the stream captures
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
};

enum class NodeKind { kKernel, kMemset, kMemcpy };

struct Node {
  NodeKind kind = NodeKind::kKernel;
  Kernel* kernel = nullptr;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  std::vector<uint8_t> args;  // packed at Kernel::offsets
  CUDA_MEMSET_NODE_PARAMS memset{};
  CUdeviceptr copy_dst = 0;
  const void* copy_src = nullptr;
  size_t copy_bytes = 0;
};

struct Graph {
  std::vector<Node*> nodes;
};
struct GraphExec {
  std::vector<Node*> origin;  // the graph's nodes, to map node handles to positions
  std::vector<Node> nodes;
};

struct State {
  std::recursive_mutex mu;
  std::map<std::string, Kernel> kernels;
  // Device and pinned host memory by start address: cuPointerGetAttribute knows these, and
  // any other address is pageable host memory.
  struct Allocation {
    size_t bytes;
    CUmemorytype type;
    bool owned;  // allocated here (not registered), freed by release()
  };
  std::map<uintptr_t, Allocation> allocations;
  std::map<std::string, std::pair<int, CUresult>> failures;
  unsigned long long kernels_executed = 0;
  unsigned long long graph_launches = 0;
  unsigned long long node_attributes = 0;  // set on kernel nodes
  long long graph_execs_live = 0;          // instantiated, not yet destroyed
  Stream legacy, per_thread;
  // Functions and kernels of unloaded modules and libraries, for reuse (most recent last).
  std::vector<Func*> free_funcs;
  std::vector<Kern*> free_kerns;
  std::vector<Context*> contexts;  // made by standin_context_create, never destroyed
};

State& state();
// Returns the failure injected for `name`, consuming one, or CUDA_SUCCESS.
CUresult injected(const char* name);
// The kernel a CUfunction or CUkernel handle launches; null for anything else, and for a
// function or kernel of an unloaded module or library.
Kernel* kernel_of(CUfunction f);
Stream* stream_of(CUstream s);
bool is_context(CUcontext c);  // one standin_context_create made
void run_kernel(Kernel* k, const unsigned grid[3], const unsigned block[3], void** params);
// Packs a launch's arguments (kernelParams or extra) into a node, with the real driver's rules
// (measured on an H100, driver 580): kernelParams with a non-empty extra is an invalid value; a
// buffer larger than the parameter block runs out of resources; a smaller one is taken (the rest
// is undefined there, zero here).
CUresult pack_args(Kernel* k, void** params, void** extra, std::vector<uint8_t>* out);
void run_node(const Node& n);

}  // namespace standin
