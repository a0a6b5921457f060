#include "graph/own_events.h"

#include <utility>

namespace pygraph {

OwnEvents::Context* OwnEvents::of(CUcontext ctx) {
  for (Context& c : contexts_) {
    if (c.ctx == ctx) return &c;
  }
  if (!api_->event_create) return nullptr;
  Context c{ctx, nullptr, {}};
  if (api_->event_create(&c.fork, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) return nullptr;
  contexts_.push_back(std::move(c));
  return &contexts_.back();
}

CUevent OwnEvents::add_spare(Context* c) {
  CUevent e = nullptr;
  if (c->spares.size() >= kMaxSpares ||
      api_->event_create(&e, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
    return nullptr;
  }
  c->spares.push_back(e);
  return e;
}

}  // namespace pygraph
