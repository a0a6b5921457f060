#include "graph_engine.h"

#include <algorithm>
#include <cstring>

#include "flush_rules.h"
#include "launch_attributes.h"
#include "token.h"

namespace pygraph {
namespace {

// One address per thread: tells whether a launch comes from the thread that started the chunk
// without a system call.
const void* this_thread() {
  static thread_local char marker;
  return &marker;
}

}  // namespace

GraphEngine::GraphEngine(const DriverApi* api, EngineOptions options)
    : api_(api), options_(options), detector_(DetectorOptions{options.min_repeats, 2, 4096, 1024}) {
  options_.first_chunk = std::max<uint32_t>(options_.first_chunk, 1);
  options_.max_chunk = std::max(options_.max_chunk, options_.first_chunk);
  options_.min_repeats = std::max<uint32_t>(options_.min_repeats, 1);
}

GraphEngine::~GraphEngine() {
  destroy_graphs();
}

void GraphEngine::destroy_graphs() {
  for (auto& [id, plan] : plans_) {
    for (Chunk& c : plan.chunks) c.graph.destroy(*api_);
    plan.chunks.clear();
  }
  stats_.graphs_live = 0;
}

CUcontext GraphEngine::current_context() const {
  CUcontext ctx = nullptr;
  if (api_->ctx_get_current && api_->ctx_get_current(&ctx) != CUDA_SUCCESS) ctx = nullptr;
  return ctx;
}

EagerReason GraphEngine::unrecordable(const EngineLaunch& l) const {
  if (unloaded_) return EagerReason::kUnloaded;
  if (!l.params) return l.extra ? EagerReason::kPackedArgs : EagerReason::kUnknownLayout;
  if (!l.info || !l.info->params_known) return EagerReason::kUnknownLayout;
  if (is_per_thread_stream(normalized_stream(l.stream, l.per_thread))) {
    // Its meaning depends on the calling thread; a graph replay could run it on another's.
    return EagerReason::kPerThreadStream;
  }
  if (l.attr_count > kMaxRecordedAttrs) return EagerReason::kAttributes;
  for (uint32_t i = 0; i < l.attr_count; ++i) {
    if (attr_use(l.attrs[i].id) == AttrUse::kEager) return EagerReason::kAttributes;
  }
  return EagerReason::kCount;
}

uint64_t GraphEngine::token(const EngineLaunch& l) const {
  // Attributes the node carries are part of the shape: a node is never patched for them.
  uint64_t attrs = 0;
  for (uint32_t i = 0; i < l.attr_count; ++i) {
    if (attr_use(l.attrs[i].id) != AttrUse::kNode) continue;
    attrs =
        attr_hash_add(attrs, l.attrs[i].id, reinterpret_cast<const uint8_t*>(&l.attrs[i].value));
  }
  LaunchShape shape{l.info->id,
                    {l.block[0], l.block[1], l.block[2]},
                    normalized_stream(l.stream, l.per_thread),
                    static_cast<uint16_t>(l.op),
                    attrs};
  return launch_token(shape);
}

size_t GraphEngine::chunk_end() const {
  return std::min(chunk_start_ + chunk_size_, following_tokens_.size());
}

bool GraphEngine::start_following(uint64_t tok, bool periodic_only, uint32_t periodic_id) {
  // Of the found sequences that begin with this launch, the one seen last is the likeliest; a
  // true variant (the short last batch of an epoch) is a sequence of its own.
  const Sequence* best = nullptr;
  for (const Sequence& s : detector_.sequences()) {
    if (s.periodic != periodic_only || (periodic_only && s.id != periodic_id) ||
        s.occurrences < options_.min_repeats || s.tokens.size() < 2 || s.tokens[0] != tok) {
      continue;
    }
    auto plan = plans_.find(s.id);
    if (plan != plans_.end() && plan->second.disabled) continue;
    if (!best || s.last_end > best->last_end) best = &s;
  }
  if (!best) return false;
  following_id_ = best->id;
  plan_ = &plans_[best->id];
  following_tokens_.assign(best->tokens.begin(), best->tokens.end());
  position_ = 0;
  chunk_start_ = 0;
  chunk_size_ = options_.first_chunk;
  return true;
}

void GraphEngine::stop_following() {
  following_id_ = 0;
  plan_ = nullptr;
  following_tokens_.clear();
  position_ = 0;
  chunk_start_ = 0;
  chunk_size_ = 0;
}

void GraphEngine::record(const EngineLaunch& l) {
  const FunctionInfo& f = *l.info;
  const size_t offset = arena_.size();
  arena_.resize(offset + f.arg_bytes);
  f.pack_args(l.params, arena_.data() + offset);
  const size_t attrs_offset = attrs_.size();
  attrs_.insert(attrs_.end(), l.attrs, l.attrs + l.attr_count);
  pending_.push_back({l, static_cast<uint32_t>(offset), static_cast<uint32_t>(attrs_offset)});
  Pending& p = pending_.back();
  p.launch.params = nullptr;
  p.launch.extra = nullptr;
  p.launch.attrs = nullptr;
  ++position_;
  ++stats_.recorded;
}

CUresult GraphEngine::launch(const EngineLaunch& l) {
  ++stats_.launches;
  if (!capturing_.empty()) {
    // The program captures a graph itself: its launches belong to that capture, untouched.
    ++stats_.eager[static_cast<int>(EagerReason::kCapture)];
    return call_eagerly(l, l.params, l.extra, l.attrs);
  }
  const EagerReason reason = unrecordable(l);
  if (reason != EagerReason::kCount) {
    // It cannot be a node: what was recorded goes first, and the sequence ends here.
    const CUresult flushed = flush(FlushCause::kOp, l.op);
    end_segment(l.op);
    ++stats_.eager[static_cast<int>(reason)];
    const CUresult r = call_eagerly(l, l.params, l.extra, l.attrs);
    return flushed != CUDA_SUCCESS ? flushed : r;
  }

  CUresult result = CUDA_SUCCESS;
  const uint64_t tok = token(l);
  if (following_id_ &&
      !(position_ < following_tokens_.size() && following_tokens_[position_] == tok)) {
    // Not the launch the sequence has next: what was recorded goes first, as it came.
    ++stats_.mismatches;
    result = drain_eagerly(EagerReason::kMismatch);
    stop_following();
  }
  if (!following_id_) {
    if (at_segment_start_) {
      start_following(tok, false, 0);
    } else if (expected_period_) {
      start_following(tok, true, expected_period_);
    }
  }
  at_segment_start_ = false;
  expected_period_ = 0;
  const Sequence* done = detector_.push(tok);
  if (done && done->periodic && done->occurrences >= options_.min_repeats &&
      done->tokens.size() >= options_.min_period) {
    expected_period_ = done->id;  // the next launch may begin the next period
  }

  if (following_id_) {
    const uint64_t stream = normalized_stream(l.stream, l.per_thread);
    CUresult r = CUDA_SUCCESS;
    if (!pending_.empty() && stream != chunk_stream_) {
      r = flush(FlushCause::kStreamChange, l.op);  // one stream per chunk
    } else if (!pending_.empty() && this_thread() != chunk_thread_) {
      // Another thread continues the chunk: fine on the same context (PyTorch's backward
      // thread), a new chunk on another.
      if (current_context() != chunk_context_) r = flush(FlushCause::kContextChange, l.op);
      chunk_thread_ = this_thread();
    }
    if (r != CUDA_SUCCESS && result == CUDA_SUCCESS) result = r;
    if (following_id_) {
      if (pending_.empty()) {
        chunk_stream_ = stream;
        chunk_context_ = current_context();
        chunk_thread_ = this_thread();
      }
      record(l);
      if (position_ == chunk_end()) r = submit();
      return result != CUDA_SUCCESS ? result : r;
    }
  }
  const CUresult r = call_eagerly(l, l.params, l.extra, l.attrs);
  if (r != CUDA_SUCCESS) {
    // A failing launch is never recorded later: the segment ends at it.
    ++stats_.eager[static_cast<int>(EagerReason::kLaunchError)];
    end_segment(l.op);
  } else {
    ++stats_.eager[static_cast<int>(EagerReason::kNotRepeating)];
  }
  return result != CUDA_SUCCESS ? result : r;
}

CUresult GraphEngine::call_eagerly(const EngineLaunch& l, void** params, void** extra,
                                   const CUlaunchAttribute* attrs) {
  switch (l.op) {
    case Op::LaunchKernelEx: {
      CUlaunchConfig cfg{};
      cfg.gridDimX = l.grid[0];
      cfg.gridDimY = l.grid[1];
      cfg.gridDimZ = l.grid[2];
      cfg.blockDimX = l.block[0];
      cfg.blockDimY = l.block[1];
      cfg.blockDimZ = l.block[2];
      cfg.sharedMemBytes = l.shared_mem;
      cfg.hStream = l.stream;
      cfg.attrs = const_cast<CUlaunchAttribute*>(attrs);
      cfg.numAttrs = l.attr_count;
      return reinterpret_cast<CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**)>(
          l.eager)(&cfg, l.function, params, extra);
    }
    case Op::LaunchCooperativeKernel:
      return reinterpret_cast<CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                           unsigned, unsigned, unsigned, CUstream, void**)>(
          l.eager)(l.function, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
                   l.shared_mem, l.stream, params);
    default:
      return reinterpret_cast<CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                           unsigned, unsigned, unsigned, CUstream, void**, void**)>(
          l.eager)(l.function, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
                   l.shared_mem, l.stream, params, extra);
  }
}

CUresult GraphEngine::launch_pending_eagerly(const Pending& p) {
  const FunctionInfo& f = *p.launch.info;
  param_ptrs_.resize(f.params.size());  // keeps its capacity: no steady allocation
  for (size_t i = 0; i < f.params.size(); ++i) {
    param_ptrs_[i] = arena_.data() + p.args_offset + f.params[i].offset;
  }
  return call_eagerly(p.launch, param_ptrs_.data(), nullptr, attrs_.data() + p.attrs_offset);
}

namespace {

// Recorded work goes out in the context it was recorded in, whichever thread submits it.
class ContextScope {
 public:
  ContextScope(const DriverApi& api, CUcontext want, CUcontext current) : api_(api) {
    pushed_ = want && want != current && api.ctx_push_current && api.ctx_pop_current &&
              api.ctx_push_current(want) == CUDA_SUCCESS;
  }
  ~ContextScope() {
    CUcontext popped;
    if (pushed_) api_.ctx_pop_current(&popped);
  }

 private:
  const DriverApi& api_;
  bool pushed_;
};

}  // namespace

CUresult GraphEngine::drain_eagerly(EagerReason reason) {
  if (pending_.empty()) return CUDA_SUCCESS;
  ContextScope scope(*api_, chunk_context_, current_context());
  CUresult first_error = CUDA_SUCCESS;
  for (const Pending& p : pending_) {
    const CUresult r = launch_pending_eagerly(p);
    if (r != CUDA_SUCCESS && first_error == CUDA_SUCCESS) first_error = r;
  }
  stats_.eager[static_cast<int>(reason)] += pending_.size();
  pending_.clear();
  arena_.clear();
  attrs_.clear();
  return first_error;
}

CUresult GraphEngine::flush(FlushCause cause, Op op) {
  if (pending_.empty()) return CUDA_SUCCESS;
  ++stats_.flushes_by_cause[static_cast<int>(cause)];
  if (cause == FlushCause::kOp && op < Op::kCount) ++stats_.flushes_by_op[static_cast<int>(op)];
  return submit();
}

CUresult GraphEngine::flush_all(FlushCause cause) {
  return flush(cause, Op::kCount);
}

void GraphEngine::evict_least_recent() {
  Plan* victim = nullptr;
  for (auto& [id, plan] : plans_) {
    if (&plan == plan_ || plan.chunks.empty()) continue;
    if (!victim || plan.last_used < victim->last_used) victim = &plan;
  }
  if (!victim) return;  // only the sequence being replayed holds graphs: keep them
  for (Chunk& c : victim->chunks) {
    if (c.graph.usable()) {
      ++stats_.graphs_evicted;
      --stats_.graphs_live;
    }
    c.graph.destroy(*api_);
  }
  victim->chunks.clear();
}

ChunkGraph* GraphEngine::chunk_graph(Plan& plan, uint32_t start, uint32_t end, bool* fresh) {
  for (Chunk& c : plan.chunks) {
    if (c.start == start && c.end == end) {
      *fresh = !c.graph.usable();
      return &c.graph;
    }
  }
  if (stats_.graphs_live >= options_.max_graphs) evict_least_recent();
  plan.chunks.push_back(Chunk{start, end, {}});
  *fresh = true;
  return &plan.chunks.back().graph;
}

CUresult GraphEngine::submit() {
  if (pending_.empty()) return CUDA_SUCCESS;
  // The next chunk of this occurrence is twice as large, up to max_chunk: the GPU gets work early
  // in a replay, and long sequences still go out in few graph launches.
  const size_t start = chunk_start_;
  chunk_start_ = position_;
  chunk_size_ = std::min<size_t>(chunk_size_ * 2, options_.max_chunk);
  if (pending_.size() < 2 || !plan_ || plan_->disabled) {
    // One launch gains nothing from a graph of one node.
    const CUresult r = drain_eagerly(EagerReason::kShortChunk);
    if (following_id_ && position_ == following_tokens_.size()) stop_following();
    return r;
  }

  scratch_.clear();
  for (const Pending& p : pending_) {
    const EngineLaunch& l = p.launch;
    RecordedLaunch rl{l.info,
                      {l.grid[0], l.grid[1], l.grid[2]},
                      {l.block[0], l.block[1], l.block[2]},
                      l.shared_mem,
                      arena_.data() + p.args_offset};
    rl.attrs = attrs_.data() + p.attrs_offset;
    rl.attr_count = l.attr_count;
    rl.cooperative = l.op == Op::LaunchCooperativeKernel;
    scratch_.push_back(rl);
  }
  bool fresh = false;
  ChunkGraph* graph =
      chunk_graph(*plan_, static_cast<uint32_t>(start), static_cast<uint32_t>(position_), &fresh);
  CUresult r = CUDA_SUCCESS;
  uint32_t patched = 0;
  {
    ContextScope scope(*api_, chunk_context_, current_context());
    if (fresh) {
      r = graph->build(*api_, scratch_.data(), scratch_.size());
      if (r == CUDA_SUCCESS) {
        ++stats_.graphs_built;
        ++stats_.graphs_live;
      }
    }
    if (r == CUDA_SUCCESS) {
      r = graph->replay(*api_, scratch_.data(), scratch_.size(), pending_.front().launch.stream,
                        &patched);
    }
  }
  if (r != CUDA_SUCCESS) {
    // The graph could not carry this chunk: the launches go out as the program made them, and
    // this sequence stays eager from now on.
    ++stats_.graph_failures;
    for (Chunk& c : plan_->chunks) {
      if (c.graph.usable()) --stats_.graphs_live;
      c.graph.destroy(*api_);
    }
    plan_->chunks.clear();
    plan_->disabled = true;
    const CUresult eager = drain_eagerly(EagerReason::kGraphFailure);
    stop_following();
    return eager;
  }
  ++stats_.replays;
  stats_.replayed += scratch_.size();
  stats_.patched_nodes += patched;
  plan_->last_used = ++clock_;
  pending_.clear();
  arena_.clear();
  attrs_.clear();
  if (position_ == following_tokens_.size()) stop_following();  // the occurrence is complete
  return CUDA_SUCCESS;
}

CUresult GraphEngine::before_op(Op op, CUstream stream, bool per_thread) {
  CUresult r = CUDA_SUCCESS;
  switch (flush_rule(op)) {
    case FlushRule::kNone:
      break;
    case FlushRule::kStream:
      if (!pending_.empty() && stream_sees(normalized_stream(stream, per_thread), chunk_stream_)) {
        r = flush(FlushCause::kOp, op);
      }
      break;
    case FlushRule::kAll:
      r = flush(FlushCause::kOp, op);
      break;
    case FlushRule::kCapture:
      r = flush(FlushCause::kOp, op);
      end_segment(op);
      break;
    case FlushRule::kUnload:
      // Graphs may hold the module's kernels, and a later module may reuse their handles: graph
      // mode ends here for this process (rare: frameworks keep their modules loaded).
      r = flush(FlushCause::kOp, op);
      stop_following();
      destroy_graphs();
      unloaded_ = true;
      break;
  }
  return r;
}

void GraphEngine::after_op(Op op, CUstream stream, bool per_thread, CUresult result) {
  const uint64_t s = normalized_stream(stream, per_thread);
  if ((op == Op::StreamBeginCapture || op == Op::StreamBeginCaptureToGraph) &&
      result == CUDA_SUCCESS) {
    capturing_.push_back(s);
  } else if (op == Op::StreamEndCapture) {
    auto it = std::find(capturing_.begin(), capturing_.end(), s);
    if (it != capturing_.end()) capturing_.erase(it);
  }
  if (op_is_boundary(op)) end_segment(op);
}

void GraphEngine::end_segment(Op op) {
  flush(FlushCause::kOp, op);
  stop_following();
  detector_.boundary(static_cast<uint64_t>(op) + 1);  // tags are nonzero
  at_segment_start_ = true;
  expected_period_ = 0;
}

}  // namespace pygraph
