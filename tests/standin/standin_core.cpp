// Kernels, memory, streams, events and launches of the driver stand-in.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "standin_state.h"

#define API extern "C" __attribute__((visibility("default"))) CUresult

namespace standin {

namespace {

// STANDIN_INJECT="name:count:result,...": failures injected from the start, for programs run
// under the shim in end-to-end tests (standin_inject_failure is the in-process way).
void inject_from_environment(State* s) {
  const char* spec = std::getenv("STANDIN_INJECT");
  if (!spec) return;
  std::string all(spec);
  size_t at = 0;
  while (at < all.size()) {
    size_t end = all.find(',', at);
    if (end == std::string::npos) end = all.size();
    const std::string item = all.substr(at, end - at);
    const size_t c1 = item.find(':'), c2 = item.rfind(':');
    if (c1 != std::string::npos && c2 > c1) {
      s->failures[item.substr(0, c1)] = {std::atoi(item.substr(c1 + 1, c2 - c1 - 1).c_str()),
                                         static_cast<CUresult>(std::atoi(item.c_str() + c2 + 1))};
    }
    at = end + 1;
  }
}

}  // namespace

State& state() {
  static State* s = [] {
    State* st = new State;
    inject_from_environment(st);
    const char* async = std::getenv("STANDIN_ASYNC");
    st->async = async && std::atoi(async) != 0;
    if (const char* ns = std::getenv("STANDIN_KERNEL_NS"))
      st->kernel_ns = std::strtoull(ns, nullptr, 10);
    return st;
  }();
  return *s;
}

CUresult injected(const char* name) {
  State& s = state();
  std::lock_guard<std::recursive_mutex> g(s.mu);
  auto it = s.failures.find(name);
  if (it == s.failures.end() || it->second.first <= 0) return CUDA_SUCCESS;
  it->second.first--;
  return it->second.second;
}

Kernel* kernel_of(CUfunction f) {
  if (!f) return nullptr;
  uint32_t magic;
  std::memcpy(&magic, f, sizeof magic);
  if (magic == kFuncMagic) {
    const Func* fn = reinterpret_cast<Func*>(f);
    return fn->module && fn->module->loaded ? fn->kernel : nullptr;
  }
  if (magic == kKernMagic) {
    const Kern* k = reinterpret_cast<Kern*>(f);
    return k->library && k->library->loaded ? k->kernel : nullptr;
  }
  return nullptr;
}

Event* event_of(CUevent e) {
  return state().events.count(reinterpret_cast<Event*>(e)) ? reinterpret_cast<Event*>(e) : nullptr;
}

Stream* stream_of(CUstream s) {
  if (s == nullptr || s == CU_STREAM_LEGACY) return &state().legacy;
  if (s == CU_STREAM_PER_THREAD) return &state().per_thread;
  return reinterpret_cast<Stream*>(s);
}

void run_kernel(Kernel* k, const unsigned grid[3], const unsigned block[3], void** params) {
  k->fn(grid, block, params);
  state().kernels_executed++;
  state().gpu_ns += state().kernel_ns;
}

CUresult pack_args(Kernel* k, void** params, void** extra, std::vector<uint8_t>* out) {
  out->assign(k->arg_bytes, 0);
  const bool has_extra = extra && extra[0] != CU_LAUNCH_PARAM_END;
  if (params) {
    if (has_extra) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < k->sizes.size(); ++i) {
      std::memcpy(out->data() + k->offsets[i], params[i], k->sizes[i]);
    }
    return CUDA_SUCCESS;
  }
  if (!has_extra) return k->sizes.empty() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  const void* buf = nullptr;
  const size_t* size = nullptr;
  for (int i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
      buf = extra[i + 1];
    } else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
      size = static_cast<const size_t*>(extra[i + 1]);
    } else {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  if (!buf || !size) return CUDA_ERROR_INVALID_VALUE;
  if (*size > k->arg_bytes) return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  std::memcpy(out->data(), buf, *size);
  return CUDA_SUCCESS;
}

void run_node(const Node& n) {
  switch (n.kind) {
    case NodeKind::kKernel: {
      std::vector<void*> ptrs;
      auto* base = const_cast<uint8_t*>(n.args.data());
      for (size_t off : n.kernel->offsets) ptrs.push_back(base + off);
      run_kernel(n.kernel, n.grid, n.block, ptrs.data());
      break;
    }
    case NodeKind::kMemset: {
      const auto& m = n.memset;
      for (size_t row = 0; row < m.height; ++row) {
        auto* dst = reinterpret_cast<uint8_t*>(m.dst + row * m.pitch);
        for (size_t i = 0; i < m.width; ++i) {
          std::memcpy(dst + i * m.elementSize, &m.value, m.elementSize);
        }
      }
      break;
    }
    case NodeKind::kMemcpy:
      std::memmove(reinterpret_cast<void*>(n.copy_dst), n.copy_src, n.copy_bytes);
      break;
    case NodeKind::kEventRecord:
      if (Event* ev = n.launched ? n.launched : event_of(n.event)) {
        ev->pending.erase(n.number);
        ev->gpu_ns = state().gpu_ns;
      }
      break;
    case NodeKind::kEmpty:
      break;
    case NodeKind::kChild:
      for (const Node& c : *n.child) run_node(c);
      break;
  }
}

namespace {

// A node captured on s: every capture is a chain, each node after the previous one.
void capture(Stream* s, const Node& n) {
  Node* node = new Node(n);
  if (!s->capture->nodes.empty()) node->deps.push_back(s->capture->nodes.back());
  s->capture->nodes.push_back(node);
}

void submit_node(Stream* s, const Node& n) {
  Op op;
  op.node = n;
  submit(s, std::move(op));
}

// Kernel launch common to every launch entry point: captured, queued or run at once.
CUresult launch(CUfunction f, const unsigned grid[3], const unsigned block[3], CUstream hs,
                void** params, void** extra) {
  if (CUresult r = injected("cuLaunchKernel")) return r;
  Kernel* k = kernel_of(f);
  if (!k) return CUDA_ERROR_INVALID_HANDLE;
  Node n;
  n.kernel = k;
  std::memcpy(n.grid, grid, sizeof n.grid);
  std::memcpy(n.block, block, sizeof n.block);
  if (CUresult r = pack_args(k, params, extra, &n.args)) return r;
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Stream* s = stream_of(hs);
  if (s->capture) {
    capture(s, n);
  } else {
    submit_node(s, n);
  }
  return CUDA_SUCCESS;
}

CUresult sync_stream(CUstream hs) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Stream* s = stream_of(hs);
  if (s->capture) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  drain_stream(s);
  return CUDA_SUCCESS;
}

// Queued work answers "not ready" once and then runs (standin_async.cpp says why).
CUresult query_stream(CUstream hs) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Stream* s = stream_of(hs);
  if (s->capture) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (s->queue.empty()) return CUDA_SUCCESS;
  drain_stream(s);
  return CUDA_ERROR_NOT_READY;
}

// `sync`: a synchronous copy (the legacy stream's, run before the call returns). A pageable
// source is read at the call and a pageable destination written before it returns, as the
// driver stages them.
CUresult copy(CUstream hs, void* dst, const void* src, size_t bytes, bool sync) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Stream* s = stream_of(hs);
  Node n;
  n.kind = NodeKind::kMemcpy;
  n.copy_dst = reinterpret_cast<CUdeviceptr>(dst);
  n.copy_src = src;
  n.copy_bytes = bytes;
  if (s->capture) {
    capture(s, n);
    return CUDA_SUCCESS;
  }
  Op op;
  op.node = n;
  if (state().async && is_pageable(src)) {
    auto* b = static_cast<const uint8_t*>(src);
    op.held = std::make_shared<std::vector<uint8_t>>(b, b + bytes);
    op.node.copy_src = op.held->data();
  }
  submit(s, std::move(op));
  if (sync || is_pageable(dst)) drain_stream(s);
  return CUDA_SUCCESS;
}

CUresult set(CUstream hs, CUdeviceptr dst, unsigned value, unsigned elem, size_t count, bool sync) {
  Node n;
  n.kind = NodeKind::kMemset;
  n.memset.dst = dst;
  n.memset.value = value;
  n.memset.elementSize = elem;
  n.memset.width = count;
  n.memset.height = 1;
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Stream* s = stream_of(hs);
  if (s->capture) {
    capture(s, n);
    return CUDA_SUCCESS;
  }
  submit_node(s, n);
  if (sync) drain_stream(s);
  return CUDA_SUCCESS;
}

void* allocate(size_t bytes, CUmemorytype type) {
  // Fresh memory is poisoned so that reading what was never written shows.
  void* p = std::malloc(bytes ? bytes : 1);
  if (p) std::memset(p, 0xcd, bytes);
  std::lock_guard<std::recursive_mutex> g(state().mu);
  state().allocations[reinterpret_cast<uintptr_t>(p)] = {bytes, type, true};
  return p;
}

// Frees run everything first: queued work may still use the memory.
CUresult release(uintptr_t p) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  drain_all();
  auto it = state().allocations.find(p);
  if (it == state().allocations.end() || !it->second.owned) return CUDA_ERROR_INVALID_VALUE;
  state().allocations.erase(it);
  std::free(reinterpret_cast<void*>(p));
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace standin

using namespace standin;

// ---- test API -------------------------------------------------------------------------------

extern "C" __attribute__((visibility("default"))) void standin_register_kernel(
    const char* name, standin_kernel_fn fn, int param_count, const size_t* param_sizes) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Kernel& k = state().kernels[name];
  k.name = name;
  k.fn = fn;
  k.layout_hidden = false;
  k.sizes.assign(param_sizes, param_sizes + param_count);
  k.offsets.clear();
  size_t off = 0;
  for (size_t s : k.sizes) {
    size_t align = s >= 8 ? 8 : (s >= 4 ? 4 : (s >= 2 ? 2 : 1));
    off = (off + align - 1) / align * align;
    k.offsets.push_back(off);
    off += s;
  }
  k.arg_bytes = off;
}

extern "C" __attribute__((visibility("default"))) void standin_set_kernel_ns(
    unsigned long long ns) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  state().kernel_ns = ns;
}
extern "C" __attribute__((visibility("default"))) void standin_gpu_idle(unsigned long long ns) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  state().gpu_ns += ns;
}
extern "C" __attribute__((visibility("default"))) unsigned long long standin_kernels_executed(
    void) {
  return state().kernels_executed;
}
extern "C" __attribute__((visibility("default"))) unsigned long long standin_child_nodes(void) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  return state().child_nodes;
}
extern "C" __attribute__((visibility("default"))) unsigned long long standin_event_records(
    CUevent e) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  const Event* ev = event_of(e);
  return ev ? ev->recorded : 0;
}
extern "C" __attribute__((visibility("default"))) unsigned long long standin_graph_launches(void) {
  return state().graph_launches;
}

extern "C" __attribute__((visibility("default"))) unsigned long long standin_node_attributes(void) {
  return state().node_attributes;
}

extern "C" __attribute__((visibility("default"))) long long standin_graph_execs_live(void) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  return state().graph_execs_live;
}

extern "C" __attribute__((visibility("default"))) void standin_inject_failure(const char* name,
                                                                              int count,
                                                                              CUresult result) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  state().failures[name] = {count, result};
}

// ---- initialization, modules, functions ---------------------------------------------------

API cuInit(unsigned int) {
  return CUDA_SUCCESS;
}
API cuDriverGetVersion(int* v) {
  if (!v) return CUDA_ERROR_INVALID_VALUE;
  *v = 13000;
  return CUDA_SUCCESS;
}
API cuDeviceGet(CUdevice* d, int ordinal) {
  if (!d || ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *d = 0;
  return CUDA_SUCCESS;
}
API cuCtxGetDevice(CUdevice* d) {
  if (!d) return CUDA_ERROR_INVALID_VALUE;
  *d = 0;
  return CUDA_SUCCESS;
}
// STANDIN_GPU_NAME: another device name, so that tests can make cached decisions stale.
API cuDeviceGetName(char* name, int length, CUdevice d) {
  if (!name || length <= 0 || d != 0) return CUDA_ERROR_INVALID_VALUE;
  const char* env = std::getenv("STANDIN_GPU_NAME");
  std::snprintf(name, size_t(length), "%s", env && *env ? env : "Stand-in GPU");
  return CUDA_SUCCESS;
}
API cuDeviceGetCount(int* n) {
  if (!n) return CUDA_ERROR_INVALID_VALUE;
  *n = 1;
  return CUDA_SUCCESS;
}

// ---- launches -------------------------------------------------------------------------------

API cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned, CUstream s, void** params, void** extra) {
  const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  return launch(f, grid, block, s, params, extra);
}
API cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned smem, CUstream s, void** params,
                        void** extra) {
  return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, smem, s ? s : CU_STREAM_PER_THREAD, params,
                        extra);
}
API cuLaunchKernelEx(const CUlaunchConfig* c, CUfunction f, void** params, void** extra) {
  if (!c) return CUDA_ERROR_INVALID_VALUE;
  const unsigned grid[3] = {c->gridDimX, c->gridDimY, c->gridDimZ};
  const unsigned block[3] = {c->blockDimX, c->blockDimY, c->blockDimZ};
  return launch(f, grid, block, c->hStream, params, extra);
}
API cuLaunchKernelEx_ptsz(const CUlaunchConfig* c, CUfunction f, void** params, void** extra) {
  return cuLaunchKernelEx(c, f, params, extra);
}
API cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned, CUstream s, void** params) {
  const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  return launch(f, grid, block, s, params, nullptr);
}
API cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                   unsigned by, unsigned bz, unsigned smem, CUstream s,
                                   void** params) {
  return cuLaunchCooperativeKernel(f, gx, gy, gz, bx, by, bz, smem, s, params);
}
API cuLaunchHostFunc(CUstream s, CUhostFn fn, void* data) {
  if (!fn) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::recursive_mutex> g(state().mu);
  if (stream_of(s)->capture) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  Op op;
  op.kind = OpKind::kHost;
  op.host = [fn, data] { fn(data); };
  submit(stream_of(s), std::move(op));
  return CUDA_SUCCESS;
}
API cuLaunchHostFunc_ptsz(CUstream s, CUhostFn fn, void* data) {
  return cuLaunchHostFunc(s, fn, data);
}
API cuStreamAddCallback(CUstream s, CUstreamCallback cb, void* data, unsigned int flags) {
  if (!cb || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Op op;
  op.kind = OpKind::kHost;
  op.host = [cb, s, data] { cb(s, CUDA_SUCCESS, data); };
  submit(stream_of(s), std::move(op));
  return CUDA_SUCCESS;
}
API cuStreamAddCallback_ptsz(CUstream s, CUstreamCallback cb, void* data, unsigned int flags) {
  return cuStreamAddCallback(s, cb, data, flags);
}

// ---- streams, events, synchronization ---------------------------------------------------------

API cuStreamCreate(CUstream* s, unsigned int flags) {
  if (!s) return CUDA_ERROR_INVALID_VALUE;
  auto* st = new Stream;
  st->blocking = !(flags & CU_STREAM_NON_BLOCKING);
  std::lock_guard<std::recursive_mutex> g(state().mu);
  state().streams.push_back(st);
  *s = reinterpret_cast<CUstream>(st);
  return CUDA_SUCCESS;
}
API cuStreamGetFlags(CUstream s, unsigned int* flags) {
  if (!flags) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::recursive_mutex> g(state().mu);
  *flags = stream_of(s)->blocking ? 0u : unsigned(CU_STREAM_NON_BLOCKING);
  return CUDA_SUCCESS;
}
// Runs the stream's work first. In asynchronous mode the stream is not freed: waits queued on
// other streams may still name its marker.
API cuStreamDestroy_v2(CUstream s) {
  if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard<std::recursive_mutex> g(state().mu);
  auto* st = reinterpret_cast<Stream*>(s);
  drain_stream(st);
  auto& all = state().streams;
  all.erase(std::remove(all.begin(), all.end(), st), all.end());
  if (!state().async) delete st;
  return CUDA_SUCCESS;
}
API cuStreamSynchronize(CUstream s) {
  return sync_stream(s);
}
API cuStreamSynchronize_ptsz(CUstream s) {
  return sync_stream(s);
}
API cuStreamQuery(CUstream s) {
  return query_stream(s);
}
API cuStreamQuery_ptsz(CUstream s) {
  return query_stream(s);
}
// The stream's later work waits for the event's last record issued before this call.
API cuStreamWaitEvent(CUstream s, CUevent e, unsigned int) {
  if (!e) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Stream* st = stream_of(s);
  if (st->capture) return CUDA_SUCCESS;
  Op op;
  op.kind = OpKind::kWait;
  op.event = event_of(e);
  if (!op.event) return CUDA_SUCCESS;  // not one of ours: orders nothing, as before
  op.number = op.event->recorded;
  submit(st, std::move(op));
  return CUDA_SUCCESS;
}
API cuStreamWaitEvent_ptsz(CUstream s, CUevent e, unsigned int f) {
  return cuStreamWaitEvent(s, e, f);
}
API cuEventCreate(CUevent* e, unsigned int) {
  if (CUresult r = injected("cuEventCreate")) return r;
  if (!e) return CUDA_ERROR_INVALID_VALUE;
  auto* ev = new Event;
  std::lock_guard<std::recursive_mutex> g(state().mu);
  state().events.insert(ev);
  *e = reinterpret_cast<CUevent>(ev);
  return CUDA_SUCCESS;
}
// In asynchronous mode the event is not freed: queued records and waits may still name it.
API cuEventDestroy_v2(CUevent e) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Event* ev = event_of(e);
  if (!ev) return CUDA_SUCCESS;
  state().events.erase(ev);
  if (!state().async) delete ev;
  return CUDA_SUCCESS;
}
API cuEventRecord(CUevent e, CUstream s) {
  if (CUresult r = injected("cuEventRecord")) return r;
  if (!e) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Event* ev = event_of(e);
  if (!ev) return CUDA_SUCCESS;  // a handle the stand-in did not make: nothing to record
  Stream* st = stream_of(s);
  if (st->capture) {
    ++ev->recorded;
    return CUDA_SUCCESS;
  }
  Op op;
  op.kind = OpKind::kRecord;
  op.event = ev;
  submit(st, std::move(op));
  return CUDA_SUCCESS;
}
API cuEventRecord_ptsz(CUevent e, CUstream s) {
  return cuEventRecord(e, s);
}
API cuEventRecordWithFlags(CUevent e, CUstream s, unsigned int) {
  return cuEventRecord(e, s);
}
API cuEventRecordWithFlags_ptsz(CUevent e, CUstream s, unsigned int) {
  return cuEventRecord(e, s);
}
API cuEventSynchronize(CUevent e) {
  if (!e) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard<std::recursive_mutex> g(state().mu);
  if (Event* ev = event_of(e)) drain_event(ev, ev->recorded);
  return CUDA_SUCCESS;
}
namespace {
// Whether the event's latest record is still queued (asynchronous mode).
bool record_pending(const Event* ev) {
  return ev && ev->pending.count(ev->recorded);
}
// Whether it was: it runs now, so that a caller told "not ready" once makes progress.
bool ran_pending_record(Event* ev) {
  if (!record_pending(ev)) return false;
  drain_event(ev, ev->recorded);
  return true;
}
}  // namespace

API cuEventQuery(CUevent e) {
  // Without asynchronous mode work runs at submission, so a recorded event is always complete;
  // tests inject CUDA_ERROR_NOT_READY to stand for work still in flight. With it, a pending
  // record answers "not ready" once and then runs.
  if (CUresult r = injected("cuEventQuery")) return r;
  if (!e) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard<std::recursive_mutex> g(state().mu);
  return ran_pending_record(event_of(e)) ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}
// The simulated GPU time between the two events' latest records (State::gpu_ns). In
// asynchronous mode a pending record answers "not ready", and runs only with
// standin_set_timer_progress: else the program's syncs run it (standin.h says why).
API cuEventElapsedTime_v2(float* ms, CUevent start, CUevent end) {
  if (CUresult r = injected("cuEventElapsedTime")) return r;
  if (!ms || !start || !end) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Event* a = event_of(start);
  Event* b = event_of(end);
  if (!a || !b || !a->recorded || !b->recorded) return CUDA_ERROR_INVALID_HANDLE;
  if (state().timer_progress) {
    const bool a_pending = ran_pending_record(a);
    if (ran_pending_record(b) || a_pending) return CUDA_ERROR_NOT_READY;
  } else if (record_pending(a) || record_pending(b)) {
    return CUDA_ERROR_NOT_READY;
  }
  *ms = float(double(b->gpu_ns) - double(a->gpu_ns)) / 1e6f;
  return CUDA_SUCCESS;
}
// The name drivers before 12.8 export (cuda.h maps it to _v2); the engine loads this one.
#undef cuEventElapsedTime
API cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  return cuEventElapsedTime_v2(ms, start, end);
}
API cuCtxSynchronize(void) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  drain_all();
  return CUDA_SUCCESS;
}
// Null (the current context) or a context the stand-in made. A caller handed the wrong ABI
// passes garbage here and gets an error.
API cuCtxSynchronize_v2(CUcontext ctx) {
  if (ctx && !is_context(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
  return cuCtxSynchronize();
}
// Stream memory operations run the stream's queued work first and then act at once.
API cuStreamWaitValue32_v2(CUstream s, CUdeviceptr addr, cuuint32_t value, unsigned int flags) {
  {
    std::lock_guard<std::recursive_mutex> g(state().mu);
    drain_stream(stream_of(s));
  }
  // Work runs at submission, so the value must already be there (>= for the default GEQ).
  auto v = *reinterpret_cast<volatile cuuint32_t*>(addr);
  if (flags == CU_STREAM_WAIT_VALUE_EQ) return v == value ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
  return static_cast<int32_t>(v - value) >= 0 ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}
API cuStreamWaitValue32_v2_ptsz(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned int f) {
  return cuStreamWaitValue32_v2(s, a, v, f);
}
API cuStreamWriteValue32_v2(CUstream s, CUdeviceptr addr, cuuint32_t value, unsigned int) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  drain_stream(stream_of(s));
  *reinterpret_cast<volatile cuuint32_t*>(addr) = value;
  return CUDA_SUCCESS;
}
API cuStreamWriteValue32_v2_ptsz(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned int f) {
  return cuStreamWriteValue32_v2(s, a, v, f);
}

// ---- memory ---------------------------------------------------------------------------------

API cuMemAlloc_v2(CUdeviceptr* p, size_t bytes) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  *p = reinterpret_cast<CUdeviceptr>(allocate(bytes, CU_MEMORYTYPE_DEVICE));
  return CUDA_SUCCESS;
}
API cuMemFree_v2(CUdeviceptr p) {
  return release(p);
}
API cuMemAllocAsync(CUdeviceptr* p, size_t bytes, CUstream) {
  return cuMemAlloc_v2(p, bytes);
}
API cuMemAllocAsync_ptsz(CUdeviceptr* p, size_t bytes, CUstream s) {
  return cuMemAllocAsync(p, bytes, s);
}
API cuMemFreeAsync(CUdeviceptr p, CUstream) {
  return release(p);
}
API cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream) {
  return release(p);
}
API cuMemAllocHost_v2(void** p, size_t bytes) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  *p = allocate(bytes, CU_MEMORYTYPE_HOST);
  return CUDA_SUCCESS;
}
API cuMemHostAlloc(void** p, size_t bytes, unsigned int) {
  return cuMemAllocHost_v2(p, bytes);
}
API cuMemFreeHost(void* p) {
  return release(reinterpret_cast<uintptr_t>(p));
}
API cuMemHostRegister_v2(void* p, size_t bytes, unsigned int) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::recursive_mutex> g(state().mu);
  state().allocations[reinterpret_cast<uintptr_t>(p)] = {bytes, CU_MEMORYTYPE_HOST, false};
  return CUDA_SUCCESS;
}
API cuMemHostUnregister(void* p) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  drain_all();
  auto it = state().allocations.find(reinterpret_cast<uintptr_t>(p));
  if (it == state().allocations.end() || it->second.owned) return CUDA_ERROR_INVALID_VALUE;
  state().allocations.erase(it);
  return CUDA_SUCCESS;
}
// Only the memory type is known: device for cuMemAlloc'd memory, host for pinned or registered
// memory; any other address is not the driver's (pageable), as the real driver reports.
API cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  if (!data) return CUDA_ERROR_INVALID_VALUE;
  if (attribute != CU_POINTER_ATTRIBUTE_MEMORY_TYPE) return CUDA_ERROR_NOT_SUPPORTED;
  std::lock_guard<std::recursive_mutex> g(state().mu);
  auto& all = state().allocations;
  auto it = all.upper_bound(static_cast<uintptr_t>(ptr));
  if (it == all.begin()) return CUDA_ERROR_INVALID_VALUE;
  --it;
  if (ptr >= it->first + std::max<size_t>(it->second.bytes, 1)) return CUDA_ERROR_INVALID_VALUE;
  *static_cast<unsigned int*>(data) = it->second.type;
  return CUDA_SUCCESS;
}

// Virtual memory management: an address range is reserved host memory; mapping is bookkeeping.
API cuMemAddressReserve(CUdeviceptr* p, size_t size, size_t, CUdeviceptr, unsigned long long) {
  return cuMemAlloc_v2(p, size);
}
API cuMemAddressFree(CUdeviceptr p, size_t) {
  return release(p);
}
API cuMemCreate(CUmemGenericAllocationHandle* h, size_t size, const CUmemAllocationProp*,
                unsigned long long) {
  if (!h) return CUDA_ERROR_INVALID_VALUE;
  *h = static_cast<CUmemGenericAllocationHandle>(size | (1ull << 63));
  return CUDA_SUCCESS;
}
API cuMemRelease(CUmemGenericAllocationHandle h) {
  return h ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
API cuMemMap(CUdeviceptr p, size_t, size_t, CUmemGenericAllocationHandle h, unsigned long long) {
  return p && h ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
API cuMemUnmap(CUdeviceptr p, size_t) {
  return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// ---- copies and sets ------------------------------------------------------------------------

#define DPTR(x) reinterpret_cast<void*>(x)
API cuMemcpyHtoD_v2(CUdeviceptr d, const void* s, size_t n) {
  return copy(nullptr, DPTR(d), s, n, true);
}
API cuMemcpyDtoH_v2(void* d, CUdeviceptr s, size_t n) {
  return copy(nullptr, d, DPTR(s), n, true);
}
API cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) {
  return copy(nullptr, DPTR(d), DPTR(s), n, true);
}
API cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n) {
  return copy(nullptr, DPTR(d), DPTR(s), n, true);
}
API cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void* s, size_t n, CUstream st) {
  return copy(st, DPTR(d), s, n, false);
}
API cuMemcpyDtoHAsync_v2(void* d, CUdeviceptr s, size_t n, CUstream st) {
  return copy(st, d, DPTR(s), n, false);
}
API cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
  return copy(st, DPTR(d), DPTR(s), n, false);
}
API cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
  return copy(st, DPTR(d), DPTR(s), n, false);
}
API cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr d, const void* s, size_t n, CUstream st) {
  return copy(st, DPTR(d), s, n, false);
}
API cuMemcpyDtoHAsync_v2_ptsz(void* d, CUdeviceptr s, size_t n, CUstream st) {
  return copy(st, d, DPTR(s), n, false);
}
API cuMemcpyAsync_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
  return copy(st, DPTR(d), DPTR(s), n, false);
}
API cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) {
  return set(nullptr, d, v, 1, n, true);
}
API cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n) {
  return set(nullptr, d, v, 4, n, true);
}
API cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
  return set(s, d, v, 1, n, false);
}
API cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s) {
  return set(s, d, v, 4, n, false);
}
API cuMemsetD8Async_ptsz(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
  return set(s, d, v, 1, n, false);
}
API cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int v, size_t n, CUstream s) {
  return set(s, d, v, 4, n, false);
}
