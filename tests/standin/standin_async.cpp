// Asynchronous mode of the driver stand-in (STANDIN_ASYNC=1 or standin_set_async): work issued
// to a stream is queued there and runs only when the program observes or orders it, so that a
// missing cross-stream dependency (an event record/wait the program or the shim lacks) computes
// something else. Deterministic: nothing runs on its own except through the liveness rule below.
//
// What runs when:
// - a stream synchronize runs that stream's queue; a stream's head that waits on an event first
//   runs the recording stream up to that record (and so on, recursively: a wait always names a
//   record issued before it, so this ends);
// - an event synchronize runs up to its last record; cuCtxSynchronize, frees, module unloads
//   and the stand-in's switch off run everything, the most recently created stream first;
// - queries: a stream or event with queued work answers CUDA_ERROR_NOT_READY and then runs it
//   (as if it finished right after), so a polling loop ends after one retry;
// - synchronous copies and memsets go through the legacy stream and run it; work on the legacy
//   stream waits for every blocking stream's earlier work and the reverse (implicit records of
//   each stream's `marker` and waits), as the driver orders them;
// - everything else runs as late as allowed: work of a stream nobody observes stays queued.
// Liveness: a program may wait for a kernel's write to pinned memory without any driver call
// (tests/e2e/poll_program.cpp); a background thread runs everything once nothing was queued for
// STANDIN_ASYNC_IDLE_MS (default 100, 0 for never). It only runs what is queued, in the same
// order as cuCtxSynchronize, so correct programs compute the same with or without it.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "standin_state.h"

namespace standin {

namespace {

void execute(Op& op) {
  switch (op.kind) {
    case OpKind::kNode:
      run_node(op.node);
      break;
    case OpKind::kRecord:
      op.event->pending.erase(op.number);
      op.event->gpu_ns = state().gpu_ns;
      break;
    case OpKind::kWait:
      break;  // run_head made sure the record ran
    case OpKind::kGraph:
      for (int i : op.graph->order) run_node(op.graph->nodes[i]);
      state().graph_launches++;
      break;
    case OpKind::kHost:
      op.host();
      break;
  }
}

// Queues a record of `e` on `s`; returns its number.
uint64_t record_on(Stream* s, Event* e) {
  Op op;
  op.kind = OpKind::kRecord;
  op.event = e;
  op.number = ++e->recorded;
  e->pending[op.number] = s;
  s->queue.push_back(std::move(op));
  return e->recorded;
}

void wait_on(Stream* s, Event* e, uint64_t number) {
  Op op;
  op.kind = OpKind::kWait;
  op.event = e;
  op.number = number;
  s->queue.push_back(std::move(op));
}

// Runs the head of s's queue, or first what its wait needs.
void run_head(Stream* s) {
  Op& head = s->queue.front();
  if (head.kind == OpKind::kWait && head.event->pending.count(head.number)) {
    drain_event(head.event, head.number);
    return;
  }
  Op op = std::move(head);
  s->queue.pop_front();
  execute(op);
}

bool anything_queued() {
  State& st = state();
  if (!st.legacy.queue.empty() || !st.per_thread.queue.empty()) return true;
  for (Stream* s : st.streams) {
    if (!s->queue.empty()) return true;
  }
  return false;
}

void liveness_loop(int idle_ms) {
  unsigned long long seen = ~0ull;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(idle_ms));
    std::lock_guard<std::recursive_mutex> g(state().mu);
    if (state().queued == seen && anything_queued()) drain_all();
    seen = state().queued;
  }
}

void start_liveness() {
  static bool started = false;
  if (started) return;
  started = true;
  const char* env = std::getenv("STANDIN_ASYNC_IDLE_MS");
  const int idle_ms = env ? std::atoi(env) : 100;
  if (idle_ms > 0) std::thread(liveness_loop, idle_ms).detach();
}

}  // namespace

void submit(Stream* s, Op op) {
  State& st = state();
  if (op.kind == OpKind::kRecord) op.number = ++op.event->recorded;
  if (!st.async) {
    execute(op);
    return;
  }
  start_liveness();
  if (s == &st.legacy) {
    for (Stream* t : st.streams) {
      if (t->blocking && !t->queue.empty()) wait_on(s, &t->marker, record_on(t, &t->marker));
    }
    if (!st.per_thread.queue.empty()) {
      wait_on(s, &st.per_thread.marker, record_on(&st.per_thread, &st.per_thread.marker));
    }
  } else if (s->blocking && !st.legacy.queue.empty()) {
    wait_on(s, &st.legacy.marker, record_on(&st.legacy, &st.legacy.marker));
  }
  if (op.kind == OpKind::kRecord) op.event->pending[op.number] = s;
  s->queue.push_back(std::move(op));
  st.queued++;
}

void drain_stream(Stream* s) {
  while (!s->queue.empty()) run_head(s);
}

void drain_event(Event* e, uint64_t n) {
  for (auto it = e->pending.find(n); it != e->pending.end(); it = e->pending.find(n)) {
    run_head(it->second);
  }
}

void drain_all() {
  State& st = state();
  for (size_t i = st.streams.size(); i-- > 0;) drain_stream(st.streams[i]);
  drain_stream(&st.per_thread);
  drain_stream(&st.legacy);
}

bool is_pageable(const void* p) {
  auto& all = state().allocations;
  const auto a = reinterpret_cast<uintptr_t>(p);
  auto it = all.upper_bound(a);
  if (it == all.begin()) return true;
  --it;
  return a >= it->first + std::max<size_t>(it->second.bytes, 1);
}

void set_order(GraphExec* e) {
  const size_t n = e->nodes.size();
  std::vector<std::vector<int>> deps(n);
  for (size_t i = 0; i < n; ++i) {
    for (Node* d : e->nodes[i].deps) {
      auto at = std::find(e->origin.begin(), e->origin.end(), d);
      if (at != e->origin.end()) deps[i].push_back(static_cast<int>(at - e->origin.begin()));
    }
  }
  e->order.clear();
  std::vector<bool> done(n, false);
  const bool adversarial = state().async;
  while (e->order.size() < n) {
    const size_t before = e->order.size();
    for (size_t k = 0; k < n; ++k) {
      const size_t i = adversarial ? n - 1 - k : k;
      if (done[i]) continue;
      bool ready = true;
      for (int d : deps[i]) ready = ready && done[d];
      if (!ready) continue;
      done[i] = true;
      e->order.push_back(static_cast<int>(i));
      break;
    }
    if (e->order.size() == before) {  // a cycle (the driver refuses those): the rest as added
      for (size_t i = 0; i < n; ++i) {
        if (!done[i]) e->order.push_back(static_cast<int>(i));
      }
    }
  }
}

}  // namespace standin

using namespace standin;

// The in-process switch; switching off first runs everything queued.
extern "C" __attribute__((visibility("default"))) void standin_set_async(int on) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  if (!on) drain_all();
  state().async = on != 0;
}

extern "C" __attribute__((visibility("default"))) void standin_set_timer_progress(int on) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  state().timer_progress = on != 0;
}

extern "C" __attribute__((visibility("default"))) int standin_async(void) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  return state().async;
}
