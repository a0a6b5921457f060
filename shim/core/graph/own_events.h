// Graph mode's own events, per context, created at first use and kept for the context's life:
//  - one for forks and joins: a chunk's graph on L waits for its side streams' earlier work and
//    their later work waits for the graph (stream_fork.h); copies drained eagerly on side streams
//    are fenced behind it; and a graph's record node whose event the program destroys is pointed
//    at it until its next replay (the driver refuses to repoint a node from a destroyed event);
//  - spares: each stands in for one event the program destroys while a pending record or wait
//    names it, so that the chunk still orders what the program asked for.
// Not thread-safe: the engine's lock covers it.
#pragma once

#include <cuda.h>

#include <vector>

#include "driver/driver_api.h"

namespace pygraph {

class OwnEvents {
 public:
  explicit OwnEvents(const DriverApi* api) : api_(api) {}

  // The fork event of `ctx` (which must be current when it is first asked); null: none (no
  // event_create, or it failed).
  CUevent fork(CUcontext ctx) {
    Context* c = of(ctx);
    return c ? c->fork : nullptr;
  }

  // A spare of `ctx` for which `named(CUevent)` is false (no pending node names it: a wait takes
  // the latest record made before it, so two destroyed events sharing one would let a wait see
  // the other's record), else a new one, at most kMaxSpares; null: none.
  template <class Named>
  CUevent spare(CUcontext ctx, Named named) {
    Context* c = of(ctx);
    if (!c) return nullptr;
    for (CUevent e : c->spares) {
      if (!named(e)) return e;
    }
    return add_spare(c);
  }

  // A context ends: its events go with it (another context's leak: a few).
  void forget() { contexts_.clear(); }

  static constexpr size_t kMaxSpares = 64;

 private:
  struct Context {
    CUcontext ctx;
    CUevent fork;
    std::vector<CUevent> spares;
  };
  Context* of(CUcontext ctx);  // created with its fork event at first use
  CUevent add_spare(Context* c);

  const DriverApi* api_;
  std::vector<Context> contexts_;
};

}  // namespace pygraph
