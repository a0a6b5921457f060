#include "graph/engine_config.h"

namespace pygraph {

EngineOptions engine_options(const Config& config) {
  EngineOptions options;
  options.min_repeats = config.min_repeats;
  options.max_graphs = config.max_graphs;
  options.max_sequences = config.max_sequences;
  options.first_chunk = config.first_chunk;
  options.max_chunk = config.max_chunk;
  options.chunk_growth = config.chunk_growth;
  options.staging_bytes = size_t(config.staging_mb) << 20;
  options.patch_grid = config.patch_grid;
  options.one_launch_graphs = config.one_launch_graphs;
  options.early_head = config.early_head;
  options.multi_stream = config.streams;
  options.program_graphs = config.program_graphs;
  options.program_graph_launches = config.program_graph_launches;
  options.pause_ns = uint64_t(config.pause_us) * 1000;
  options.pause_gpu_ns = uint64_t(config.pause_gpu_us) * 1000;
  options.pause_idle_ratio = config.pause_idle_ratio;
  options.tail_pause_ns = uint64_t(config.tail_pause_us) * 1000;
  options.restart_chunks = config.restart_chunks;
  options.answer_queries = config.answer_queries;
  options.measure = config.measure_windows > 0;
  options.policy.pairs = config.measure_windows;
  options.policy.window = config.measure_iterations;
  options.policy.min_gain_percent = config.min_gain_percent;
  options.allow_kernels = config.allow_kernels;
  options.deny_kernels = config.deny_kernels;
  return options;
}

}  // namespace pygraph
