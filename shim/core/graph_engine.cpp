#include "graph_engine.h"

#include <algorithm>
#include <cstring>

#include "ops.h"
#include "token.h"

namespace pygraph {

GraphEngine::GraphEngine(const DriverApi* api, EngineOptions options)
    : api_(api), options_(options), detector_(DetectorOptions{options.min_repeats, 2, 4096, 1024}) {
  options_.first_chunk = std::max<uint32_t>(options_.first_chunk, 1);
  options_.max_chunk = std::max(options_.max_chunk, options_.first_chunk);
}

GraphEngine::~GraphEngine() {
  for (auto& [id, plan] : plans_) {
    for (auto& c : plan.chunks) c.destroy(*api_);
  }
}

uint64_t GraphEngine::token(const EngineLaunch& l) const {
  LaunchShape shape{l.function ? l.function->id : 0,
                    {l.block[0], l.block[1], l.block[2]},
                    reinterpret_cast<uint64_t>(l.stream),
                    static_cast<uint16_t>(Op::LaunchKernel),
                    0};
  return launch_token(shape);
}

size_t GraphEngine::chunk_end(size_t start) const {
  // Chunks grow: first_chunk, 2x, 4x, ... up to max_chunk, so the GPU gets work early in a
  // replay and long sequences still go out in few graph launches.
  size_t begin = 0, size = options_.first_chunk;
  while (begin + size <= start) {
    begin += size;
    size = std::min<size_t>(size * 2, options_.max_chunk);
  }
  return std::min(begin + size, following_tokens_.size());
}

bool GraphEngine::start_following(uint64_t first_token) {
  // Of the found segments that begin with this launch, the one seen last is the likeliest.
  const Sequence* best = nullptr;
  for (const Sequence& s : detector_.sequences()) {
    if (s.periodic || s.occurrences < options_.min_repeats || s.tokens.empty() ||
        s.tokens[0] != first_token) {
      continue;
    }
    auto plan = plans_.find(s.id);
    if (plan != plans_.end() && plan->second.disabled) continue;
    if (!best || s.last_end > best->last_end) best = &s;
  }
  if (!best) return false;
  following_id_ = best->id;
  following_tokens_ = best->tokens;
  position_ = 0;
  chunk_start_ = 0;
  chunk_index_ = 0;
  return true;
}

void GraphEngine::record(const EngineLaunch& l) {
  const FunctionInfo& f = *l.function;
  const size_t offset = arena_.size();
  arena_.resize(offset + f.arg_bytes);  // capacity is kept across chunks: no steady allocation
  std::memset(arena_.data() + offset, 0, f.arg_bytes);
  for (size_t i = 0; i < f.params.size(); ++i) {
    std::memcpy(arena_.data() + offset + f.params[i].offset, l.params[i], f.params[i].size);
  }
  pending_.push_back({l, offset});
  pending_.back().launch.params = nullptr;  // the program's pointers are not ours to keep
  ++position_;
  ++stats_.recorded;
}

CUresult GraphEngine::launch(const EngineLaunch& l) {
  ++stats_.launches;
  const uint64_t tok = token(l);
  const bool recordable = l.function && l.function->params_known && l.params;
  CUresult result = CUDA_SUCCESS;

  if (following_id_ && !(recordable && position_ < following_tokens_.size() &&
                         following_tokens_[position_] == tok)) {
    // Not the launch the sequence has next: what was recorded goes first, as it came.
    ++stats_.mismatches;
    result = drain_eagerly();
    stop_following();
  } else if (!following_id_ && at_segment_start_ && recordable) {
    start_following(tok);
  }
  at_segment_start_ = false;
  detector_.push(tok);

  if (following_id_) {
    record(l);
    if (position_ == chunk_end(chunk_start_)) return submit_chunk();
    return CUDA_SUCCESS;
  }
  const CUresult r = l.eager(reinterpret_cast<CUfunction>(l.function ? l.function->handle : 0),
                             l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
                             l.shared_mem, l.stream, l.params, nullptr);
  return result != CUDA_SUCCESS ? result : r;
}

CUresult GraphEngine::launch_eagerly(const Pending& p) {
  const EngineLaunch& l = p.launch;
  const FunctionInfo& f = *l.function;
  param_ptrs_.resize(f.params.size());  // keeps its capacity: no steady allocation
  for (size_t i = 0; i < f.params.size(); ++i) {
    param_ptrs_[i] = arena_.data() + p.args_offset + f.params[i].offset;
  }
  return l.eager(reinterpret_cast<CUfunction>(f.handle), l.grid[0], l.grid[1], l.grid[2],
                 l.block[0], l.block[1], l.block[2], l.shared_mem, l.stream, param_ptrs_.data(),
                 nullptr);
}

CUresult GraphEngine::drain_eagerly() {
  CUresult first_error = CUDA_SUCCESS;
  for (const Pending& p : pending_) {
    const CUresult r = launch_eagerly(p);
    if (r != CUDA_SUCCESS && first_error == CUDA_SUCCESS) first_error = r;
  }
  pending_.clear();
  arena_.clear();
  return first_error;
}

CUresult GraphEngine::submit_chunk() {
  Plan& plan = plans_[following_id_];
  if (plan.chunks.size() <= chunk_index_) plan.chunks.resize(chunk_index_ + 1);
  ChunkGraph& graph = plan.chunks[chunk_index_];

  scratch_.clear();
  for (const Pending& p : pending_) {
    const EngineLaunch& l = p.launch;
    scratch_.push_back({l.function,
                        {l.grid[0], l.grid[1], l.grid[2]},
                        {l.block[0], l.block[1], l.block[2]},
                        l.shared_mem,
                        arena_.data() + p.args_offset});
  }
  CUresult r = CUDA_SUCCESS;
  if (!graph.usable()) {
    r = graph.build(*api_, scratch_.data(), scratch_.size());
    if (r == CUDA_SUCCESS) ++stats_.graphs_built;
  }
  uint32_t patched = 0;
  if (r == CUDA_SUCCESS) {
    r = graph.replay(*api_, scratch_.data(), scratch_.size(), pending_.front().launch.stream,
                     &patched);
  }
  if (r != CUDA_SUCCESS) {
    // The graph could not carry this chunk: the launches go out as the program made them, and
    // this sequence stays eager from now on.
    ++stats_.graph_failures;
    graph.destroy(*api_);
    plan.disabled = true;
    const CUresult eager = drain_eagerly();
    stop_following();
    return eager;
  }
  ++stats_.replays;
  stats_.replayed += scratch_.size();
  stats_.patched_nodes += patched;
  pending_.clear();
  arena_.clear();
  chunk_start_ = position_;
  ++chunk_index_;
  if (position_ == following_tokens_.size()) stop_following();  // sequence complete
  return CUDA_SUCCESS;
}

CUresult GraphEngine::flush() {
  if (pending_.empty()) {
    // Between chunks, an op that must not be reordered ends the sequence's run: the rest of
    // the segment goes out eagerly (memsets and copies as graph nodes come next).
    if (following_id_) stop_following();
    return CUDA_SUCCESS;
  }
  ++stats_.flushes;
  const CUresult r = drain_eagerly();
  stop_following();
  return r;
}

void GraphEngine::boundary(uint64_t tag) {
  flush();
  detector_.boundary(tag);
  at_segment_start_ = true;
}

void GraphEngine::stop_following() {
  following_id_ = 0;
  following_tokens_.clear();
  position_ = 0;
  chunk_start_ = 0;
  chunk_index_ = 0;
}

}  // namespace pygraph
