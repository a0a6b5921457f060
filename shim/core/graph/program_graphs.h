// The program's own executable graphs, as graph mode learns them when the program instantiates
// them, so that a launch of one can join the current chunk as a child graph node instead of
// cutting it (torch.compile's reduce-overhead mode launches its graphs between short stretches
// of eager work, which otherwise become graphs of one or two launches, or none).
//
// A child graph node runs a copy of a graph: the copy is made at instantiation, since that is
// what the executable graph runs (the program may change or destroy its source graph right
// after, as PyTorch does). A graph is taken only while the copy is exactly what a launch of the
// executable graph would run:
//  - its nodes are kernels, copies, sets and empty nodes: a host node would run late, an event
//    node or a memory node would act outside the stream's order as the program sees it;
//  - it was instantiated with no flags but auto-free, upload and node priority (PyTorch passes
//    auto-free and node priority). A device launch would differ in a child graph. A chunk graph
//    holding a child whose graph runs at its nodes' priorities is instantiated so too
//    (graph_chunk.cpp): the program's nodes keep theirs; the chunk's own nodes then run at the
//    default priority instead of the stream's, which changes no order within the chunk, whose
//    nodes are one chain;
//  - the program never changed it (cuGraphExec*SetParams, cuGraphExecUpdate, cuGraphNodeSetEnabled:
//    from then on it is never taken again);
//  - it is launched on one stream only: the driver orders each launch of an executable graph
//    after its previous launches, which for a copy inside another graph only the stream's own
//    order guarantees.
// And only from its program_graph_launches-th launch on (an option, 16 by default): a chunk graph
// holding a copy instantiates all of its nodes again (a few ms for a model's graph), which only
// many replays pay back. A program that launches each of its graphs a few times (PyTorch's decode
// loop under reduce-overhead: one graph per KV length, each launched once per 64 tokens) keeps
// launching them itself (measured on an H200: taken at once, GPT-2 decode built 319 chunk graphs in
// 192 steps and ran 23 % slower). Each instantiation gets a new id, part of the launch's token, so
// a handle the driver hands out again for another graph is never taken for the old one.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <unordered_map>

#include "driver/driver_api.h"

namespace pygraph {

class ProgramGraphs {
 public:
  struct Entry {
    uint32_t id = 0;
    CUgraph copy = nullptr;  // null: never taken (why_not says why)
    CUcontext context = nullptr;
    uint64_t home = 0;            // normalized stream of its first launch; 0: none yet
    CUstream home_raw = nullptr;  // as the program passed it
    bool taken = false;           // a launch of it went into a chunk
    uint32_t launches = 0;        // seen, up to the option's count
    bool node_priority = false;   // instantiated to run at its nodes' own priorities
    // Kernels, copies and sets only (no host, event, wait or memory node), instantiated with
    // flags a child node keeps: a launch of it never waits for the host, taken or not
    // (GraphEngine::may_join).
    bool plain = false;
    uint32_t weight = 1;  // its kernel, copy and set nodes: what it weighs in a chunk
    const char* why_not = nullptr;
  };

  // `takeable` counts the entries whose launches may be taken now (those with a copy): the
  // engine's stats.
  ProgramGraphs(const DriverApi* api, uint64_t* takeable) : api_(api), takeable_(takeable) {}
  ProgramGraphs(const ProgramGraphs&) = delete;
  ProgramGraphs& operator=(const ProgramGraphs&) = delete;

  // The program instantiated `graph` as `exec` in `ctx` with these flags.
  void instantiated(CUgraphExec exec, CUgraph graph, unsigned long long flags, CUcontext ctx);
  // Null for a graph instantiated where pygraph did not see it.
  Entry* find(CUgraphExec exec) {
    auto it = map_.find(reinterpret_cast<uint64_t>(exec));
    return it == map_.end() ? nullptr : &it->second;
  }
  // Never taken again (the program changed it, or launched it on a second stream).
  void refuse(Entry& e, const char* why);
  void forget(CUgraphExec exec);
  void forget_all();  // a context ended: its executable graphs are gone with it

 private:
  // Why a launch of `graph`, instantiated with `flags`, may not be taken; null: it may. Fills
  // e.plain and e.weight from its nodes.
  const char* inspect(CUgraph graph, unsigned long long flags, Entry* e) const;
  void drop_copy(Entry& e);

  const DriverApi* api_;
  std::unordered_map<uint64_t, Entry> map_;
  uint32_t next_id_ = 1;
  uint64_t* takeable_;
};

}  // namespace pygraph
