// Internal state of the driver stand-in, shared by its source files.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
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
struct Stream;

// An event's records are numbered; a record still queued is pending (on its stream) until its
// stream runs it. A wait or a sync names the number that was last recorded when it was issued.
struct Event {
  uint64_t recorded = 0;
  std::map<uint64_t, Stream*> pending;
  uint64_t gpu_ns = 0;  // State::gpu_ns when its latest record ran (cuEventElapsedTime)
};

enum class NodeKind { kKernel, kMemset, kMemcpy, kEventRecord, kEmpty, kChild };

struct Node {
  NodeKind kind = NodeKind::kKernel;
  Kernel* kernel = nullptr;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  std::vector<uint8_t> args;  // packed at Kernel::offsets
  CUDA_MEMSET_NODE_PARAMS memset{};
  CUdeviceptr copy_dst = 0;
  const void* copy_src = nullptr;
  size_t copy_bytes = 0;
  CUevent event = nullptr;  // kEventRecord: the handle, looked up when the graph is launched
  uint64_t number = 0;      // kEventRecord, in a launched copy: which record of the event
  // kEventRecord, in a launched copy: the event resolved at the launch (the program may destroy
  // it before the graph runs; asynchronous mode never frees an event's state).
  Event* launched = nullptr;
  std::vector<Node*> deps;  // in its graph: the nodes it depends on
  // kChild: the child graph's nodes, copied when the node was added, in an order their edges
  // allow (shared by copies of the node: never changed).
  std::shared_ptr<const std::vector<Node>> child;
};

struct Graph {
  std::vector<Node*> nodes;
};
struct GraphExec {
  std::vector<Node*> origin;  // the graph's nodes, to map node handles to positions
  std::vector<Node> nodes;
  std::vector<int> order;  // the order a launch runs the nodes in (set_order)
};

// Work queued on a stream in asynchronous mode (standin_async.cpp).
enum class OpKind { kNode, kRecord, kWait, kGraph, kHost };
struct Op {
  OpKind kind = OpKind::kNode;
  Node node;                                   // kNode
  std::shared_ptr<std::vector<uint8_t>> held;  // kNode: a pageable source, copied at the call
  Event* event = nullptr;                      // kRecord, kWait
  uint64_t number = 0;                         // kRecord, kWait: which record
  std::shared_ptr<GraphExec> graph;            // kGraph: the nodes as they were at the launch
  std::function<void()> host;                  // kHost
};

struct Stream {
  Graph* capture = nullptr;  // set while the stream captures
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  bool blocking = true;  // orders itself with the legacy stream (not CU_STREAM_NON_BLOCKING)
  std::deque<Op> queue;  // asynchronous mode: issued, not yet run
  Event marker;          // records that order it with the legacy stream
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
  // A simulated GPU clock for cuEventElapsedTime: each kernel that runs advances it by
  // kernel_ns (STANDIN_KERNEL_NS, 1000 by default; standin_set_kernel_ns).
  unsigned long long gpu_ns = 0;
  unsigned long long kernel_ns = 1000;
  unsigned long long graph_launches = 0;
  unsigned long long node_attributes = 0;  // set on kernel nodes
  unsigned long long child_nodes = 0;      // child graph nodes added
  long long graph_execs_live = 0;          // instantiated, not yet destroyed
  Stream legacy, per_thread;
  // Functions and kernels of unloaded modules and libraries, for reuse (most recent last).
  std::vector<Func*> free_funcs;
  std::vector<Kern*> free_kerns;
  std::vector<Context*> contexts;  // made by standin_context_create, never destroyed
  // Asynchronous mode (standin_async.cpp): created streams in creation order (destroyed ones
  // leave), and a count of ops queued, which the liveness thread watches.
  bool async = false;
  bool timer_progress = false;  // standin_set_timer_progress
  std::vector<Stream*> streams;
  unsigned long long queued = 0;
  // Events the stand-in made and that are not destroyed: any other handle (tests pass made-up
  // ones) is accepted and orders nothing.
  std::set<Event*> events;
  // Graphs made here and not destroyed: a child graph node of any other is refused, as a use
  // of a destroyed graph (the real driver's behaviour there is undefined).
  std::set<const void*> graphs;
};

State& state();
// Returns the failure injected for `name`, consuming one, or CUDA_SUCCESS.
CUresult injected(const char* name);
// The kernel a CUfunction or CUkernel handle launches; null for anything else, and for a
// function or kernel of an unloaded module or library.
Kernel* kernel_of(CUfunction f);
Stream* stream_of(CUstream s);
Event* event_of(CUevent e);    // null for a handle the stand-in did not make (or destroyed)
bool is_context(CUcontext c);  // one standin_context_create made
void run_kernel(Kernel* k, const unsigned grid[3], const unsigned block[3], void** params);
// Packs a launch's arguments (kernelParams or extra) into a node, with the real driver's rules
// (measured on an H100, driver 580): kernelParams with a non-empty extra is an invalid value; a
// buffer larger than the parameter block runs out of resources; a smaller one is taken (the rest
// is undefined there, zero here).
CUresult pack_args(Kernel* k, void** params, void** extra, std::vector<uint8_t>* out);
void run_node(const Node& n);
// Fixes the order in which launches of `e` run its nodes: in asynchronous mode adversarial (of
// the nodes whose dependencies have run, the last added first), else as added.
void set_order(GraphExec* e);

// Asynchronous mode (standin_async.cpp). Callers hold state().mu. `submit` runs the op at once
// when the mode is off, else queues it on `s`, behind the legacy stream's implicit ordering.
void submit(Stream* s, Op op);
void drain_stream(Stream* s);            // runs all work issued to s (and what it waits for)
void drain_event(Event* e, uint64_t n);  // runs until record n of e has run
void drain_all();                        // every stream, the most recently created first
bool is_pageable(const void* p);         // not device or pinned memory the stand-in knows

}  // namespace standin
