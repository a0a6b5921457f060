#include "options/option_table.h"

#include <cctype>

namespace pygraph {
namespace {

// Ranges are what the engine can take, not what is sensible: the defaults are the measured
// choices (docs/design-graph-mode.md). The `doc` lines are Markdown; they become
// config/README.md's table (scripts/update-config-docs.sh).
const OptionSpec kTable[] = {
    {"mode", &Config::mode, "graph", 0, 0,
     "`graph`: launch sequences that repeat run as CUDA graphs (changed arguments patched before "
     "each replay), results bitwise identical; also recorded when `trace` is set. `trace`: "
     "passthrough, and every launch and op is recorded to `trace`. `off`: pure passthrough; the "
     "driver's own entry points are handed out, so nothing of pygraph runs on the launch path "
     "(programs linked with `-lcuda`: one jump).",
     false},
    {"trace", &Config::trace_path, "", 0, 0,
     "Binary trace to write (`docs/trace-format.md`); `%p` becomes the process id. If another "
     "live process already writes that path (a parent, when children inherit the shim), this "
     "process writes `PATH.<pid>` instead. Unwritable: one line on stderr, no trace. Ignored, "
     "with a warning, in `off` mode.",
     false},
    {"stats", &Config::stats_path, "", 0, 0,
     "JSON summary written at exit (`docs/stats-format.md`): launches per door, coverage, graphs "
     "built, evicted and replayed, patched nodes, flushes and eager launches by reason. A path "
     "(`%p` becomes the process id) or `stderr`. Unwritable: one line on stderr.",
     false},
    {"log_level", &Config::log_level, "error", 0, 0,
     "What pygraph writes to stderr, one line each. `error`: problems only (a bad "
     "configuration, a file it cannot write, no driver). `info`: also the mode and where the "
     "configuration came from at start, each graph the driver refused (its sequence then runs "
     "eagerly), and at exit what `pygraph run` prints (coverage, graphs, replays, the top "
     "reasons for eager launches). `debug`: also diagnostics: the configuration and where each "
     "value came from, the trace path, launch counts per door at exit, entry points handed out "
     "unwrapped; and pygraph's own driver calls, counted and timed, in the stats "
     "(`driver_calls`).",
     false},
    {"min_repeats", &Config::min_repeats, "2", 1, 1000,
     "Graph mode: how many times a sequence runs eagerly before its next occurrences are "
     "recorded and replayed.",
     false},
    {"first_chunk", &Config::first_chunk, "2", 1, 4096,
     "Graph mode: launches (and memsets/copies) recorded before the first graph of an occurrence "
     "goes to the GPU; later chunks grow by `chunk_growth` up to `max_chunk`. Smaller: the GPU "
     "starts earlier in each iteration; larger: fewer graph launches. At most `max_chunk`.",
     false},
    {"chunk_growth", &Config::chunk_growth, "2", 2, 64,
     "Graph mode: each next chunk of an occurrence is this many times the one before, up to "
     "`max_chunk` (2: 2, 4, 8, ...; 4: 2, 8, 32, ...). Larger: fewer graph launches per step; "
     "smaller: the last chunk of a step that ends in a sync, which the GPU runs after the CPU "
     "is done, stays short.",
     false},
    {"max_chunk", &Config::max_chunk, "128", 1, 4096,
     "Graph mode: launches (and memsets/copies) in the largest chunk graph; loops without syncs "
     "are followed as multiples of their period up to it.",
     false},
    {"max_graphs", &Config::max_graphs, "1024", 1, 1000000,
     "Graph mode: instantiated graphs kept; beyond it the least recently replayed sequence's "
     "graphs are destroyed (where the sequence being replayed holds them all, its least "
     "recently replayed graph, unless replayed in its last two occurrences).",
     false},
    {"max_sequences", &Config::max_sequences, "1024", 1, 1000000,
     "Graph mode: repeating sequences the detector keeps track of; when full, the least "
     "recently seen eighth is dropped, with the graphs of those that were followed.",
     false},
    {"staging_mb", &Config::staging_mb, "4", 0, 1024,
     "Graph mode: pinned host memory holding snapshots of deferred copies from pageable host "
     "memory (a copy larger than a quarter of it, or one that finds no free space, goes out "
     "eagerly). `0`: such copies always go out eagerly.",
     false},
    {"stall_check_ms", &Config::stall_check_ms, "2", 0, 1000,
     "Graph mode: how often a background thread checks for recorded work that nothing submits "
     "(a program that waits for a kernel's result without any CUDA call, spinning on mapped "
     "memory); while nothing is recorded at its checks they come up to 8 times less often. "
     "`0`: no such thread, and a program that waits that way waits for good.",
     false},
    {"pause_us", &Config::pause_us, "200", 0, 1000000,
     "Graph mode: a place in a sequence where the program paused at least this long on the "
     "host (microseconds, between two of its launches) in each of its first recorded "
     "occurrences ends a chunk there: the work before it goes to the GPU at once instead of "
     "waiting out the pause for the chunk to fill (GPT-2 training under reduce-overhead: its "
     "optimizer's kernels waited for the next step's forward). `0`: chunks end only when "
     "full (no pause is learned, nor the last gap of `tail_pause_us`).",
     false},
    {"pause_gpu_us", &Config::pause_gpu_us, "100", 0, 1000000,
     "Graph mode: a pause (`pause_us`) ends a chunk only where the work waiting there takes at "
     "least this long on the GPU (microseconds, summed since the last pause that ends one, or "
     "since a split sequence's split; measured with timing events around the replays of a few "
     "occurrences). A pause costs the "
     "GPU only the time of the work that waits it out, and a cut costs a graph launch and "
     "smaller graphs. `0`: every pause ends a chunk.",
     false},
    {"pause_idle_ratio", &Config::pause_idle_ratio, "2", 0, 1000,
     "Graph mode: in a sequence between syncs, a pause does not end a chunk where the GPU "
     "idles at least this many times as long as the work waiting there later in the "
     "occurrence (measured with the same timing events): that work catches up before the "
     "occurrence ends, as in a step whose host work far outlasts its GPU work. With the same "
     "ratio such a sequence is split: where the GPU idled, from one of its chunks on, at least "
     "this many times as long as the work of the chunks before it, those go out as one chunk "
     "(GPT-2 decoding a token: 113 launches a graph instead of 34). Loops are not weighed so. "
     "`0`: idle time is not weighed, and no sequence is split.",
     false},
    {"tail_pause_us", &Config::tail_pause_us, "20", 0, 1000000,
     "Graph mode: in a sequence between syncs, the place before its last entry (after which "
     "the host waits for the GPU: a sync, the copy of `loss.item()`) ends a chunk where the "
     "program paused there at least this long on the host (or `pause_us`, if less) and at "
     "least this much GPU work (microseconds; or `pause_gpu_us`, if less) waits there, "
     "weighed as pauses are. That work then runs while the host finishes its step instead of "
     "while it waits in the sync (mlp-dropout-item on an H200: 96-138 microseconds a step in "
     "`loss.item()` against 31-33 without pygraph; 40-43 against 35-36 with this cut). `0`: "
     "the last place is weighed like any other; `pause_us` 0 turns it off too.",
     false},
    {"restart_chunks", &Config::restart_chunks, "0", 0, 0,
     "Graph mode: `1`: in a sequence between syncs, a chunk that begins at a place where chunks "
     "end early (a pause, a split's cut) begins small and grows again, where in each weighed "
     "occurrence the GPU idled before it while the host recorded it (counted up to the chunk's "
     "own GPU time, which is the most a restart brings forward), by at least `pause_gpu_us` "
     "more than it idled later. It begins with the launches the host recorded "
     "while the GPU still had work (at least `first_chunk`, at most `max_chunk`), and the chunks "
     "after it grow at "
     "the pace the GPU ran that work (between 1 and `chunk_growth` times), so the GPU gets it "
     "before it drains instead of after a whole chunk. It costs graph launches. Off by "
     "default, since it wins only where the host is slow: on an H200 (session 46) ResNet-50 "
     "batch 64 compiled was faster with it in each of 6 processes where a restart was chosen "
     "(0.05 to 0.20 ms a step of 4.8; launches a replay 44 to 38). Over the whole suite "
     "(sessions 47 and 48) no other cell won in both runs, and GPT-2 decoding compiled "
     "restarts to 17-19 launches a replay (34-45 without) for no gain.",
     false},
    {"answer_queries", &Config::answer_queries, "0", 0, 0,
     "Graph mode: `1`: a query of work that pygraph still defers (`cuEventQuery` of an event "
     "whose latest record a chunk holds, `cuStreamQuery` of a stream whose own work it holds, "
     "from the chunk's thread and context) is answered \"not ready\" without submitting that "
     "work, which is the true answer, and the chunk goes on; asked again with nothing recorded "
     "since, or for the 8th time in a row so, the work goes out and the driver answers. "
     "PyTorch's caching allocator asks so at each allocation once a tensor was used on another "
     "stream (`record_stream`), and each submission ends a chunk there (the benchmark's "
     "two-streams loop: one graph a step). `0`: such a query submits the work first. Off "
     "by default: in the suite (session 48, H200) two-streams replayed 90 launches a graph "
     "instead of 27, as fast eager and slower compiled (-0.9 and -7.3 % against -8.5 and "
     "-10.5 % in two processes), its larger graphs patching nodes the smaller ones did not.",
     false},
    {"one_launch_graphs", &Config::one_launch_graphs, "0", 0, 0,
     "Graph mode: `1`: a chunk of one kernel launch (cut short by a pause, a flush or the "
     "program's own graph launch) is replayed as a graph of one node, its arguments patched. "
     "`0`: it goes out as the program made it. Without pygraph, one such graph and its patch "
     "took 1.6 microseconds of host time against 3.9 for the launch on an H200 (break_even's `raw` "
     "rows). Over the benchmark suite (session 30, H200) it raised GPT-2 decode's coverage to "
     "100 % but left host-read and host-tensors compiled slower by their quartiles: off by "
     "default.",
     false},
    {"early_head", &Config::early_head, "1", 0, 0,
     "Graph mode: `1`: at a segment's start (after a sync, where the GPU is idle), the launches "
     "before the program's own graph launch (the input copy kernel of a reduce-overhead step; "
     "not a single copy or memset, which alone is no graph) go out at once, as a graph of their "
     "own (of one node too), while the program prepares that launch; the program's graph then "
     "goes out as the program launched it. `0`: they wait in the chunk and go out with the "
     "program's graph as one graph of ours, and the GPU waits for that launch call. On the four "
     "GPU-bound reduce-overhead workloads of the suite (session 51, H200, 3 processes each), the "
     "shim's median change went from +0.2..+0.5 % with `0` to -0.3..+0.0 % with `1`.",
     false},
    {"patch_grid", &Config::patch_grid, "1", 0, 0,
     "Graph mode: `1`: a launch's grid and dynamic shared memory are patched before a replay like "
     "its arguments. `0`: they are part of the launch's shape, so a launch with another grid "
     "starts another sequence variant (`docs/design-graph-mode.md` has the measurement).",
     false},
    {"streams", &Config::streams, "1", 0, 0,
     "Graph mode: `1`: event records and waits between the program's streams become graph "
     "nodes and edges, so a step on several streams is one graph (side streams forked and "
     "joined at its launch). `0`: an event record or another stream submits the chunk.",
     false},
    {"program_graphs", &Config::program_graphs, "1", 0, 0,
     "Graph mode: `1`: the program's own graph launches (torch.compile's reduce-overhead "
     "mode, CUDA graphs it made itself) join the chunk as child graphs, run from a copy made "
     "when the program instantiated the graph, where that copy is exactly what the launch "
     "would run, each counted as its nodes in the chunk's size (`docs/design-graph-mode.md`). "
     "`0`: each such launch submits the chunk.",
     false},
    {"program_graph_launches", &Config::program_graph_launches, "16", 1, 1000000,
     "Graph mode, with program_graphs on: a graph of the program's joins chunks from this "
     "launch of it on. A chunk graph holding a copy of it instantiates all of its nodes again, "
     "which only many replays pay back (GPT-2 decode under reduce-overhead, one graph per KV "
     "length each launched once per 64 tokens, ran 23 % slower with `1`).",
     false},
    {"min_gain_percent", &Config::min_gain_percent, "2", 0, 100,
     "Graph mode, with measure_windows > 0: a sequence keeps its graphs only if its replayed "
     "iterations are at least this many percent faster than its eager ones (by the median "
     "window pair), and faster in two thirds of the pairs unless it is a graph verdict "
     "measured again.",
     false},
    {"measure_windows", &Config::measure_windows, "0", 0, 100,
     "Graph mode: pairs of measurement windows (one replayed, one eager) that decide whether a "
     "sequence's graphs pay, twice as many where the first disagree (some won by graphs, some "
     "lost); 0: every sequence is graphed, unmeasured (the default: measuring costs part of "
     "the gain while it runs; README, Configuration).",
     false},
    {"measure_iterations", &Config::measure_iterations, "8", 2, 10000,
     "Graph mode, with measure_windows > 0: occurrences of the sequence in one measurement "
     "window (the first of each is not counted).",
     false},
    {"allow_kernels", &Config::allow_kernels, "*", 0, 0,
     "Graph mode: glob patterns (fnmatch) of kernel names; a sequence with a kernel that matches "
     "none of them runs eagerly (decided `config` in the stats), measured or not.",
     false},
    {"deny_kernels", &Config::deny_kernels, "", 0, 0,
     "Graph mode: glob patterns (fnmatch) of kernel names; a sequence with a kernel that matches "
     "one runs eagerly (deny wins over allow), measured or not.",
     false},
    {"cache", &Config::cache_path, "", 0, 0,
     "Graph mode, with measure_windows > 0: the file of measured decisions kept across runs "
     "and shared by the processes that use it; a sequence decided there for this GPU, driver "
     "and pygraph version is not measured again. Empty: "
     "`$XDG_CACHE_HOME/pygraph/decisions.json`, else `~/.cache/pygraph/decisions.json`.",
     false},
    {"strict", &Config::strict, "0", 0, 0,
     "`1`: a configuration error (bad value, unreadable or malformed file) ends the process at "
     "its first CUDA call, with the error and exit status 78, instead of running in off mode.",
     false},
    {"config", &Config::config_path, "", 0, 0,
     "The JSON file to read options from (keys as in this table); variables override it. "
     "Environment only.",
     true},
};

}  // namespace

const std::span<const OptionSpec> kOptions(kTable);
const int kOptionCount = static_cast<int>(std::size(kTable));

const OptionSpec* find_option(const std::string& key) {
  for (const OptionSpec& o : kOptions) {
    if (key == o.key) return &o;
  }
  return nullptr;
}

int option_index(const OptionSpec& option) {
  return static_cast<int>(&option - kOptions.data());
}

std::string env_name(const OptionSpec& option) {
  std::string name = "PYGRAPH_";
  for (const char* c = option.key; *c; ++c) {
    name += static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
  }
  return name;
}

}  // namespace pygraph
