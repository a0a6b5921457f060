"""Without the shim: does a real program's graph run slower on the GPU as a child of another
graph? ResNet-50 inference at batch 64 (the suite's resnet50-b64), compiled by torch.compile,
captured by torch.cuda.graph, is launched four ways in alternating rounds, each launch timed by
CUDA events around it:
  own      the captured graph, instantiated as it is (what the program launches);
  child    a graph of one child graph node holding it (what graph mode replays);
  copy+own the input copy (a device-to-device cudaMemcpyAsync), then `own` (the step under
           reduce-overhead, whose copy is a kernel);
  graph    a graph of the copy's captured graph and the program's, both child nodes, the second
           after the first (graph mode's replay of that step).
Also counts the captured graph's node types and edge types, and the edge types of the copy a
child graph node holds (a programmatic edge, which stream capture makes of a launch that allows
programmatic serialization, might not survive the copy), and whether every way left the same
output (zeroed before each way's launches).
  own2, own3  `own` launched two or three times in a row (steps of a loop without a sync);
  two, three  a graph of two or three child nodes holding it, each after the one before (graph
           mode's replay of a chunk of two or three such steps: the suite's resnet18-b1 under
           reduce-overhead).
  plain    a clone of the captured graph whose programmatic edges are plain ones: what that
           step's kernels cost on the GPU without programmatic dependent launch, which graph mode
           drops (launch_attributes.h) when it records them. Session 38 asks this: the suite's
           resnet50-b64 compiled (GPU-bound) read 2.6-4.1 % slower with the shim in three whole
           suites, and its captured graph has 6 programmatic edges.
Session 31 asks this: in the suite the reduce-overhead step as one graph of ours ran about 0.3 %
slower on ResNet-50 b64 than the program's own launch, three times on two hosts, while
child_graph_cost.cu (300 small kernels) showed no such cost. Session 35 asks it of chunks of
several steps: resnet18-b1 under reduce-overhead read +1.5 to +3.2 % where its chunks held 2.5
to 2.7 steps, and -0.9 to -1.1 % where they held 2 (sessions 32-35).
Session 48 asks it of BERT b1 and timm b8 (efficientnet_b0, batch 8), whose reduce-overhead
steps, GPU-bound and one graph of ours a step, read +0.5 to -0.3 % and +0.1 to +0.4 % with the
shim over sessions 44-48; --block N launches each way N times back to back between its events,
as the suite's loop queues them, instead of once.
Session 50 asks whether one instantiation runs slower than another of the same graph: the suite's
resnet50-b64 under reduce-overhead read +0.8 % (quartiles +0.8 / +0.9, every chunk about 40 us a
step slower) in one process of session 50 and -0.1 to +0.3 % in three of session 49, while the
runs without the shim moved by up to 0.5 % between processes. --instances N adds ways own@2..N
and graph@2..N: the same graphs instantiated again (each process of the suite instantiates its
own), timed in the same rounds.
  python3 tests/gpu/child_graph_real.py [--model resnet50-b64|resnet18-b1|bert-b1|timm-b8]
                                        [--eager] [--rounds N] [--per-round N] [--block N]
                                        [--instances N] [--only own,graph]
Prints `way median p25 p75 (us a step)` lines, then the graph's counts.
"""
import argparse
import ctypes
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench",
                                "suite"))
import workloads  # noqa: E402

cu = ctypes.CDLL("libcuda.so.1")
_P, _PP = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
cu.cuGraphInstantiateWithFlags.argtypes = [_PP, _P, ctypes.c_ulonglong]
cu.cuGraphCreate.argtypes = [_PP, ctypes.c_uint]
cu.cuGraphAddChildGraphNode.argtypes = [_PP, _P, _PP, ctypes.c_size_t, _P]
cu.cuGraphChildGraphNodeGetGraph.argtypes = [_P, _PP]
cu.cuGraphLaunch.argtypes = [_P, _P]
cu.cuGraphGetNodes.argtypes = [_P, _PP, ctypes.POINTER(ctypes.c_size_t)]
cu.cuGraphNodeGetType.argtypes = [_P, ctypes.POINTER(ctypes.c_int)]
cu.cuGraphClone.argtypes = [_PP, _P]
cu.cuGraphAddDependencies_v2.argtypes = [_P, _PP, _PP, _P, ctypes.c_size_t]
cu.cuGraphRemoveDependencies_v2.argtypes = [_P, _PP, _PP, _P, ctypes.c_size_t]
cu.cuGraphGetEdges_v2.argtypes = [_P, _PP, _PP, _P, ctypes.POINTER(ctypes.c_size_t)]
EDGE_DATA = 8  # sizeof(CUgraphEdgeData): from_port, to_port, type, 5 reserved bytes


# The suite's workloads whose compiled graphs this measures: the model and its input, built as
# the suite builds them (tests/bench/suite/workloads.py).
MODELS = {
    "resnet50-b64": lambda: workloads.vision_model("resnet50", 64),
    "resnet18-b1": lambda: workloads.vision_model("resnet18", 1),
    "bert-b1": workloads.bert_model,
    "timm-b8": workloads.timm_model,
}


def ck(r, what):
    if r != 0:
        raise RuntimeError(f"{what}: CUresult {r}")


def instantiate(graph):
    ex = ctypes.c_void_p()
    ck(cu.cuGraphInstantiateWithFlags(ctypes.byref(ex), ctypes.c_void_p(graph),
                                      ctypes.c_ulonglong(0)), "cuGraphInstantiateWithFlags")
    return ex


def wrapper(children):
    """A graph of child graph nodes, each after the one before; the graph and its nodes."""
    g = ctypes.c_void_p()
    ck(cu.cuGraphCreate(ctypes.byref(g), 0), "cuGraphCreate")
    nodes = []
    for child in children:
        node = ctypes.c_void_p()
        deps = (ctypes.c_void_p * 1)(nodes[-1]) if nodes else None
        ck(cu.cuGraphAddChildGraphNode(ctypes.byref(node), g, deps, 1 if nodes else 0,
                                       ctypes.c_void_p(child)), "cuGraphAddChildGraphNode")
        nodes.append(node.value)
    return g.value, nodes


def child_of(node):
    """The graph a child graph node holds (its copy of the graph it was given)."""
    g = ctypes.c_void_p()
    ck(cu.cuGraphChildGraphNodeGetGraph(ctypes.c_void_p(node), ctypes.byref(g)),
       "cuGraphChildGraphNodeGetGraph")
    return g.value


def edges_of(graph):
    """Every edge of `graph`: its from and to nodes and its CUgraphEdgeData bytes."""
    m = ctypes.c_size_t(0)
    ck(cu.cuGraphGetEdges_v2(ctypes.c_void_p(graph), None, None, None, ctypes.byref(m)), "edges")
    frm, to = (ctypes.c_void_p * m.value)(), (ctypes.c_void_p * m.value)()
    data = (ctypes.c_ubyte * (EDGE_DATA * m.value))()
    ck(cu.cuGraphGetEdges_v2(ctypes.c_void_p(graph), frm, to, data, ctypes.byref(m)), "edges")
    return [(frm[i], to[i], bytes(data[EDGE_DATA * i:EDGE_DATA * (i + 1)]))
            for i in range(m.value)]


def counts(graph):
    n = ctypes.c_size_t(0)
    ck(cu.cuGraphGetNodes(ctypes.c_void_p(graph), None, ctypes.byref(n)), "cuGraphGetNodes")
    nodes = (ctypes.c_void_p * n.value)()
    ck(cu.cuGraphGetNodes(ctypes.c_void_p(graph), nodes, ctypes.byref(n)), "cuGraphGetNodes")
    types = {}
    for node in nodes:
        t = ctypes.c_int()
        ck(cu.cuGraphNodeGetType(ctypes.c_void_p(node), ctypes.byref(t)), "cuGraphNodeGetType")
        types[t.value] = types.get(t.value, 0) + 1
    edges = {}
    for _, _, data in edges_of(graph):
        edges[data[2]] = edges.get(data[2], 0) + 1
    return types, edges


def plain_clone(graph):
    """A clone of `graph` in which every edge that is not plain (a programmatic one: its type or
    its ports not 0) is replaced by a plain edge between the same nodes: full completion of the
    upstream kernel before the downstream one starts, as graph mode's chunks order them. Returns
    the clone and how many edges changed."""
    g = ctypes.c_void_p()
    ck(cu.cuGraphClone(ctypes.byref(g), ctypes.c_void_p(graph)), "cuGraphClone")
    changed = 0
    for frm, to, data in edges_of(g.value):
        if not any(data[:3]):
            continue
        f, t = (ctypes.c_void_p * 1)(frm), (ctypes.c_void_p * 1)(to)
        d = (ctypes.c_ubyte * EDGE_DATA).from_buffer_copy(data)
        ck(cu.cuGraphRemoveDependencies_v2(g, f, t, ctypes.cast(d, _P), 1),
           "cuGraphRemoveDependencies_v2")
        ck(cu.cuGraphAddDependencies_v2(g, f, t, None, 1), "cuGraphAddDependencies_v2")
        changed += 1
    return g.value, changed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--eager", action="store_true", help="capture the eager model, not compiled")
    ap.add_argument("--model", choices=sorted(MODELS), default="resnet50-b64")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--per-round", type=int, default=12)
    ap.add_argument("--block", type=int, default=1,
                    help="steps of a way back to back between its two events (the suite's "
                    "GPU-bound loop, where one launch queues behind the last)")
    ap.add_argument("--instances", type=int, default=1,
                    help="instantiate `own` and `graph` this many times each, every instance a "
                    "way of its own")
    ap.add_argument("--only", default="",
                    help="comma-separated ways to time (the instances of a named way included)")
    a = ap.parse_args()
    torch.manual_seed(0)
    model, source = MODELS[a.model]()
    model = model.eval()
    fwd = model if a.eager else torch.compile(model)
    x = torch.empty_like(source)

    def body():
        with torch.no_grad():
            return fwd(x)

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            x.copy_(source)
            body()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph(keep_graph=True)
    with torch.cuda.graph(g):
        out = body()
    gc = torch.cuda.CUDAGraph(keep_graph=True)
    with torch.cuda.graph(gc, pool=g.pool()):
        x.copy_(source)
    raw, raw_copy = g.raw_cuda_graph(), gc.raw_cuda_graph()
    stream = torch.cuda.current_stream()
    h = ctypes.c_void_p(stream.cuda_stream)
    own = instantiate(raw)
    lone, lone_nodes = wrapper([raw])
    child = instantiate(lone)
    both = instantiate(wrapper([raw_copy, raw])[0])
    pair = instantiate(wrapper([raw, raw])[0])
    chain = instantiate(wrapper([raw, raw, raw])[0])
    try:
        plain_graph, plain_edges = plain_clone(raw)
        plain = instantiate(plain_graph)
    except (RuntimeError, ctypes.ArgumentError) as e:  # the other ways still measure
        plain, plain_edges = None, "error:" + str(e).replace(" ", "_")

    def launch(ex):
        ck(cu.cuGraphLaunch(ex, h), "cuGraphLaunch")

    ways = {
        "own": lambda: launch(own),
        "child": lambda: launch(child),
        "copy+own": lambda: (x.copy_(source), launch(own)),
        "graph": lambda: launch(both),
        "own2": lambda: (launch(own), launch(own)),
        "two": lambda: launch(pair),
        "own3": lambda: (launch(own), launch(own), launch(own)),
        "three": lambda: launch(chain),
    }
    if plain is not None:
        ways["plain"] = lambda: launch(plain)
    for k in range(2, a.instances + 1):
        again_own, again_both = instantiate(raw), instantiate(wrapper([raw_copy, raw])[0])
        ways[f"own@{k}"] = lambda ex=again_own: launch(ex)
        ways[f"graph@{k}"] = lambda ex=again_both: launch(ex)
    if a.only:
        keep = a.only.split(",")
        ways = {w: f for w, f in ways.items() if w.split("@")[0] in keep}
    # Steps a way's launch holds: its times are per step.
    steps = {"own2": 2, "two": 2, "own3": 3, "three": 3}
    times = {w: [] for w in ways}
    results = {}
    for r in range(a.rounds + 1):
        for w, step in (ways.items() if r % 2 else reversed(list(ways.items()))):
            if not r:
                out.zero_()  # what each way computes, not what the way before it left
            evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                   for _ in range(a.per_round)]
            for e0, e1 in evs:
                e0.record(stream)
                for _ in range(a.block):
                    step()
                e1.record(stream)
            torch.cuda.synchronize()
            if r:  # round 0 warms every way up (the first launch uploads the graph)
                per = 1000 / (steps.get(w, 1) * a.block)
                times[w] += [e0.elapsed_time(e1) * per for e0, e1 in evs]
            else:
                results[w] = _bytes(out)
    for w, t in times.items():
        q = statistics.quantiles(t, n=4)
        print(f"{w} {statistics.median(t):.1f} {q[0]:.1f} {q[2]:.1f}")
    same = all(v == results[next(iter(results))] for v in results.values())
    types, edges = counts(raw)
    _, child_edges = counts(child_of(lone_nodes[0]))
    print("node_types " + " ".join(f"{k}:{v}" for k, v in sorted(types.items())))
    print("edge_types " + (" ".join(f"{k}:{v}" for k, v in sorted(edges.items())) or "-"))
    print("child_edge_types " +
          (" ".join(f"{k}:{v}" for k, v in sorted(child_edges.items())) or "-"))
    print(f"plain_edges {plain_edges}")
    print(f"outputs_equal {int(same)}")


def _bytes(t):
    return t.detach().contiguous().cpu().numpy().tobytes()


if __name__ == "__main__":
    main()
