"""Tables, the summary line and the chart of the benchmark suite's results.json.

    python report.py RESULTS.json [MORE.json ...] --out DIR

merges results files (a later file's workload replaces an earlier one's, but for variants it did
not run: those keep their cells, merge_workload) and writes
DIR/results.json, DIR/table.md (the README's tables), DIR/table.txt and the charts (need
matplotlib; without it each is skipped with a message): DIR/speedup.png, DIR/processes.png
(cells run in several processes) and DIR/replays.png (launches a replay against the change
with the shim, issue 10's two targets). run.py calls the same functions.
"""
import argparse
import json
import math
import os
import statistics
import sys

VARIANTS = ("eager+shim", "cuda-graph", "graphed-callables", "compile", "compile+shim",
            "compile-ro", "compile-ro+shim")
COLORS = {"eager+shim": "#d62728", "cuda-graph": "#7f7f7f", "graphed-callables": "#bcbd22",
          "compile": "#1f77b4", "compile+shim": "#ff7f0e", "compile-ro": "#2ca02c",
          "compile-ro+shim": "#9467bd"}
# The summary line: (cell, against) pairs whose geomean speedup is tracked over time.
SUMMARY = (("eager+shim", "eager"), ("compile+shim", "compile"), ("compile-ro", "compile"),
           ("compile-ro+shim", "compile-ro"))


def shim_base(cell):
    """The variant a shim cell ("compile+shim", or "compile-ro+shim:ARM" of an --arm) runs, else
    None."""
    base, sep, arm = cell.partition("+shim")
    return base if sep and (not arm or arm.startswith(":")) else None


def deterministic(res):
    """Per variant run twice without the shim, whether both runs computed the same (run.py);
    results before session 42 said it for eager alone."""
    if "deterministic" in res:
        return res["deterministic"]
    if "baseline_deterministic" in res:
        return {"eager": res["baseline_deterministic"]}
    return {}


def pct(ch):
    if not ch:
        return "-"
    return f"{ch['median']:+.1f} % ({ch['q1']:+.1f} / {ch['q3']:+.1f})"


def speedup(cells, cell, base):
    """base time / cell time, from the median ratio of their chunk pairs."""
    c, b = cells.get(cell, {}), cells.get(base, {})
    if c.get("status") != "ok" or b.get("status") != "ok":
        return None
    ch = c.get("vs_eager") if base == "eager" else \
        c.get("vs_without_shim") if cell == base + "+shim" else None
    if ch is None:  # no pair figure for this combination: from the two medians
        return b["ms_per_iter"] / c["ms_per_iter"] if c["ms_per_iter"] else None
    return 1.0 / (1.0 + ch["median"] / 100.0)


def status(c):
    if c is None:
        return "-"
    if c.get("status") == "n/a":
        return "n/a"
    if c.get("status") != "ok":
        return "FAILED"
    return None


def cell_lines(name, res):
    """One progress line per cell, printed as each workload ends."""
    if res.get("error"):
        return [f"  {name}: ERROR {res['error']}"]
    lines = []
    for cell, c in res["cells"].items():
        s = status(c)
        if s:
            lines.append(f"  {name:<17} {cell:<18} {s}: {c.get('reason', '')}")
            continue
        parts = [f"{c['ms_per_iter']:.4f} ms"]
        if "host_ms_per_iter" in c:  # until the last step returned, before the closing sync
            parts[0] += f" (host {c['host_ms_per_iter']:.4f}"
            if "read_ms_per_iter" in c:  # of it, waiting in loss.item()
                parts[0] += f", in reads {c['read_ms_per_iter']:.4f}"
            parts[0] += ")"
        if "vs_variant" in c:
            parts.append(f"vs the first run {pct(c['vs_variant'])}")
        elif "vs_without_shim" in c:
            parts.append(f"vs no shim {pct(c['vs_without_shim'])}")
        elif "vs_eager" in c:
            parts.append(f"vs eager {pct(c['vs_eager'])}")
        if "shim" in c and c["shim"]:
            d = c["shim"]
            parts.append(f"cov {d['coverage_percent']:.1f} %, {per_replay(d, ' launches/replay')}, "
                         f"{d['patched_per_replay']:.1f} patched/replay")
            if d.get("pauses"):
                parts.append(pauses_text(d["pauses"], d["graphs"].get("pause_cuts", 0)))
            prog = d.get("programmatic") or {}
            if prog.get("edges"):  # results of the option removed in session 41
                parts.append(f"programmatic: {prog.get('allowed', 0)} nodes allow, "
                             f"{prog['edges']} edges, {prog.get('refused', 0)} refused")
            elif prog.get("allowed"):  # nodes that run later than on the stream could
                parts.append(f"programmatic: {prog['allowed']} nodes allow (dropped)")
        if "bitwise" in c:
            parts.append("bitwise equal" if c["bitwise"] else "RESULT DIFFERS")
        if (c.get("shim") or {}).get("last_graph_failure"):
            parts.append("GRAPH FAILURE: " + c["shim"]["last_graph_failure"])
        lines.append(f"  {name:<17} {cell:<18} " + "; ".join(parts))
    for variant, same in deterministic(res).items():
        lines.append(f"  {name:<17} {variant} run twice without the shim: "
                     f"{'same result' if same else 'DIFFERENT results'}")
    return lines


def pauses_text(p, cuts):
    """A shim cell's pause places (harness.stats_delta's `pauses`) and `cuts`, its chunks cut
    at them; where a round was weighed, how long the GPU idled in one."""
    text = (f"pauses {p['places']} cut ({cuts} cuts), {p['light']} light, "
            f"{p['weighing']} weighing, {p['unweighed']} unweighed")
    if "tail_splits" in p:
        text += f", {p['tail_splits']} split"
    if "round_idle_us" in p:
        text += (f"; GPU idle {p['round_idle_us']:.0f} of "
                 f"{p['round_gpu_us'] + p['round_idle_us']:.0f} us a weighed round")
    if p.get("cuts"):  # of the first sequence with a whole weighed round (most launches first)
        text += "; cuts before places " + cut_places(p)
    return text


def cut_places(p):
    """The places of `pauses` p's `cuts` (its main sequence's), the first eight, its split (if
    any) and its restarts (session 45 on: the chunk after begins small; session 46 on, with its
    first size and pace: "restart 41 x1.91") marked."""
    split = p.get("split")  # 0 or absent: none
    sizes = p.get("restart_sizes") or []
    restarts = {c: (sizes[i] if i < len(sizes) else None)
                for i, c in enumerate(p.get("restarts") or ())}

    def restart_mark(c):
        how = restarts[c]
        if not isinstance(how, dict) or "first" not in how or "pace" not in how:
            return "restart"
        return f"restart {how['first']} x{how['pace']:.2f}"

    def place(c):
        marks = ((["split"] if split and c == split else []) +
                 ([restart_mark(c)] if c in restarts else []))
        return f"{c} ({', '.join(marks)})" if marks else str(c)

    places = [place(c) for c in p["cuts"][:8]]
    return ", ".join(places) + (", …" if len(p["cuts"]) > 8 else "")


def per_replay(d, unit=""):
    """Launches a replay; where the program's own graphs ran inside the replays, also the nodes a
    replay ran with theirs counted (the launches-a-replay target counts launches only)."""
    s = f"{d['launches_per_replay']:.1f}{unit}"
    if d.get("program_graphs", {}).get("nodes_replayed"):
        s += f" ({d['nodes_per_replay']:.0f} nodes)"
    return s


def top(d, n=2):
    return ", ".join(f"{k} {v}" for k, v in list(d.items())[:n]) or "-"


def base_of(res, cell, c):
    """The cell without the shim that shim cell `c` was compared with: its variant's current
    one, or, for a cell kept from an earlier process (an arm a later call did not repeat), that
    process's own."""
    base = shim_base(cell)
    current = res.get("cells", {}).get(base, {})
    run = c.get("run")
    if run is None or current.get("run", res.get("run")) == run:
        return current
    return next((b for b in res.get("earlier", {}).get(base, []) if b.get("run") == run), current)


def shim_rows(doc):
    """Every "+shim" cell: its figures against the same variant without the shim."""
    rows = []
    for name, res in doc["workloads"].items():
        cells = res.get("cells", {})
        if res.get("error"):
            rows.append([name, "-", "", "ERROR: " + res["error"][:80]] + [""] * 8)
        for cell, c in cells.items():
            if shim_base(cell) is None:
                continue
            s = status(c)
            if s:
                rows.append([name, cell, "", f"{s}: {c.get('reason', '')[:90]}"] + [""] * 8)
                continue
            d = c.get("shim") or {}
            base = base_of(res, cell, c)
            mem = "-"
            if c.get("peak_gpu_mb") and base.get("peak_gpu_mb"):
                mem = f"{c['peak_gpu_mb'] - base['peak_gpu_mb']:+.0f} MB"
            elif c.get("torch_peak_reserved_mb") is not None and base.get("torch_peak_reserved_mb"):
                mem = f"{c['torch_peak_reserved_mb'] - base['torch_peak_reserved_mb']:+.0f} MB (torch)"
            bit = {True: "equal", False: "DIFFERS"}.get(c.get("bitwise"), "-")
            if c.get("bitwise") is False and deterministic(res).get(shim_base(cell)) is False:
                bit += " (baseline too)"
            rows.append([
                name + (f" ({res['nproc']} rank{'s' * (res['nproc'] > 1)})" if "nproc" in res else ""),
                cell, f"{res.get('chunks', '?')} × {res.get('steps_per_chunk', '?')}",
                f"{base.get('ms_per_iter', 0):.3f} → {c['ms_per_iter']:.3f}",
                pct(c.get("vs_without_shim")),
                f"{d.get('launches_per_iter', 0):.1f}" if d else "-",
                f"{d['coverage_percent']:.1f} %" if d else "-",
                per_replay(d) if d else "-",
                f"{d['patched_per_replay']:.1f}" if d else "-",
                top(d.get("eager_launches_by_reason", {})) if d else "-",
                top(d.get("flushes/by_reason", {})) if d else "-",
                bit + "; " + mem,
            ])
    head = ["workload", "cell", "chunks × iters", "ms/iter without → with", "change (quartiles)", "launches/iter",
            "coverage", "launches/replay", "patched/replay", "eager launches (top)",
            "flushes (top)", "bitwise; peak mem"]
    return head, rows


def rerun_rows(doc):
    """Every "VARIANT-rerun" cell (run.py --reruns; eager's in training workloads): a second
    process without the shim against the first, in the same lockstep. Its change is no shim's:
    it is what a shim cell's change may hold of the processes themselves. Its result against
    the first's says whether two processes of the variant compute the same bits, which a shim
    cell's bitwise check takes for granted (where a digest is missing: "-")."""
    rows = []
    for name, res in doc["workloads"].items():
        cells = res.get("cells", {})
        for cell, c in cells.items():
            if not cell.endswith("-rerun") or "vs_variant" not in c:
                continue
            first = cells[cell[:-len("-rerun")]]
            same = "-" if not (c.get("digest") and first.get("digest")) else \
                "same" if c["digest"] == first["digest"] else "DIFFERENT"
            rows.append([name, cell, f"{first['ms_per_iter']:.3f} → {c['ms_per_iter']:.3f}",
                         pct(c["vs_variant"]), same])
    return ["workload", "cell (no shim, twice)", "ms/iter first → second", "change (quartiles)",
            "result"], rows


def read_rows(doc):
    """Cells whose steps read on the host (loss.item(): harness.run_chunks' read_ms): the time
    the host waited there a step, without and with the shim. Work the shim still held when the
    read came runs while the host waits, where without it the GPU had run it earlier (session 43:
    96-138 us against 31-33 before the segment's last gap cut)."""
    rows = []
    for name, res in doc["workloads"].items():
        cells = res.get("cells", {})
        for cell, c in cells.items():
            if shim_base(cell) is None or "read_ms_per_iter" not in c or status(c):
                continue
            base = base_of(res, cell, c)
            if "read_ms_per_iter" not in base:
                continue
            rows.append([name, cell, f"{base['ms_per_iter']:.3f} → {c['ms_per_iter']:.3f}",
                         f"{base['read_ms_per_iter'] * 1e3:.1f} → {c['read_ms_per_iter'] * 1e3:.1f}",
                         f"{(c['read_ms_per_iter'] - base['read_ms_per_iter']) * 1e3:+.1f}"])
    return ["workload", "cell", "ms/iter without → with", "µs a step in reads without → with",
            "difference (µs)"], rows


# Issue 10's targets for every shim cell at the default settings (not an --arm's): coverage,
# launches a replay where a step has enough launches, bitwise equal, not slower.
TARGET_COVERAGE = 95.0
TARGET_PER_REPLAY, TARGET_PER_REPLAY_FROM = 32.0, 50.0


def target_misses(res, c, cell, by_nodes=False):
    """The targets one default shim cell (`cell` of workload result `res`) misses, each as
    (target, figure); a cell that did not run misses them all. A "not slower" miss names the
    change of its variant's rerun (A/A), where one ran. `by_nodes`: launches a replay counts
    the nodes of the program's own graphs that ran in the replays (the reading the issue's
    author may choose), not each such graph as one launch."""
    s = status(c)
    if s:
        return [("runs", s)]
    out = []
    d = c.get("shim") or {}
    per_iter = d.get("launches_per_iter", 0)

    def counted(s):
        return s.get("nodes_per_replay", 0) if by_nodes and \
            s.get("program_graphs", {}).get("nodes_replayed") else s.get("launches_per_replay", 0)

    # As "not slower": a cell run in several processes misses where at least half of them do
    # (a tie too), and the figure lists each process's (session 47: gpt2-decode compiled read
    # 19.7 launches a replay in its first process, 34.2 in its last).
    shims = process_shims(res, cell)
    coverage = [s.get("coverage_percent", 0) for s in shims]
    if d and misses_in(coverage, lambda v: v < TARGET_COVERAGE):
        out.append((f"coverage >= {TARGET_COVERAGE:g} %",
                    f"{d['coverage_percent']:.1f} % of {per_iter:.0f} a step" +
                    each_process(coverage, "%")))
    per_replay_seq = [counted(s) for s in shims if
                      s.get("launches_per_iter", 0) >= TARGET_PER_REPLAY_FROM]
    if d and per_iter >= TARGET_PER_REPLAY_FROM and \
            misses_in(per_replay_seq, lambda v: v < TARGET_PER_REPLAY):
        out.append((f"launches/replay >= {TARGET_PER_REPLAY:g}",
                    f"{per_replay(d)} of {per_iter:.0f} a step" + cuts_text(d.get("pauses")) +
                    each_process(per_replay_seq, "")))
    if c.get("bitwise") is False and deterministic(res).get(shim_base(cell)) is not False:
        out.append(("bitwise equal", "DIFFERS"))
    ch = c.get("vs_without_shim")
    seq = processes(res, cell)
    if slower(changes(res, cell)):
        aa = res.get("cells", {}).get(f"{shim_base(cell)}-rerun", {}).get("vs_variant")
        out.append(("not slower (lower quartile <= 0 in over half of its processes)",
                    pct(ch) + (f"; no shim twice: {pct(aa)}" if aa else "") +
                    (f"; {processes_text(seq)}" if seq else "")))
    return out


def process_runs(res, cell):
    """`cell` as each process that ran it with the workload's shape left it, first to last
    (the current one last, {} where there is none)."""
    return res.get("earlier", {}).get(cell, []) + [res.get("cells", {}).get(cell) or {}]


def process_shims(res, cell):
    """The shim's steady-state figures of `cell` in each process that ran it with the
    workload's shape, first to last (the current one last; processes())."""
    return [c["shim"] for c in process_runs(res, cell) if not status(c) and c.get("shim")]


def misses_in(values, misses):
    """Whether a target is missed by one figure a process (`values`): in at least half of them
    (a tie counts), as slower() judges the change."""
    return bool(values) and 2 * sum(map(misses, values)) >= len(values)


def each_process(values, unit):
    """The figure of each process, where there were several."""
    if len(values) < 2:
        return ""
    return f"; {len(values)} processes: " + ", ".join(f"{v:.1f}{unit}" for v in values)


def cuts_text(p):
    """Where a cell's main sequence now ends its chunks before they are full (its split, pauses
    and tail, harness.stats_delta's `pauses`): why it replays as many graphs a step as it does.
    Empty where none is known."""
    return "; cut before " + cut_places(p) if p and p.get("cuts") else ""


def slower(seq):
    """Whether a shim cell counts as slower by its changes `seq` (changes()): where the lower
    quartile is above 0 in at least half of its processes (in its one process, where it ran in
    one). Two processes of one program differ by up to a few percent with the lower quartile
    above 0 (the A/A reruns), so one process's verdict is checked by others where the budget
    allows (run.py --repeat, --confirm); a tie still counts as slower."""
    return bool(seq) and 2 * slower_in(seq) >= len(seq)


def slower_in(seq):
    """In how many of the changes `seq` the lower quartile is above 0 (that process slower)."""
    return sum(ch["q1"] > 0 for ch in seq)


def target_rows(doc):
    """Every miss of issue 10's targets, and how many default shim cells meet them all (and
    how many would, the program's own graphs counted by their nodes, where that differs)."""
    rows, cells_seen, cells_met, met_by_nodes = [], 0, 0, 0
    for name, res in doc["workloads"].items():
        for cell, c in res.get("cells", {}).items():
            if shim_base(cell) is None or ":" in cell or status(c) == "n/a":
                continue
            cells_seen += 1
            misses = target_misses(res, c, cell)
            cells_met += not misses
            met_by_nodes += not target_misses(res, c, cell, by_nodes=True)
            rows += [[name, cell, target, figure] for target, figure in misses]
    line = f"issue 10's targets: {cells_met} of {cells_seen} shim cells meet every one"
    if met_by_nodes != cells_met:
        line += f" ({met_by_nodes} with the program's graphs counted by their nodes)"
    return ["workload", "cell", "target missed", "figure"], rows, line


def variant_rows(doc):
    """Speedup over eager of every variant, per workload."""
    rows = []
    for name, res in doc["workloads"].items():
        cells = res.get("cells", {})
        e = cells.get("eager", {})
        # A cell left out (--variants) is "-", not a failure.
        row = [name, f"{e['ms_per_iter']:.3f}" if e.get("status") == "ok"
               else status(cells.get("eager")) or "-"]
        for v in VARIANTS:
            s = status(cells.get(v))
            if s:
                row.append(s)
                continue
            x = speedup(cells, v, "eager")
            row.append(f"{x:.2f}×" if x else "-")
        rows.append(row)
    return ["workload", "eager ms"] + list(VARIANTS), rows


def summary(doc):
    """Geomean speedups of the tracked pairs over the workloads where both cells ran."""
    out = {}
    for cell, base in SUMMARY:
        xs = [speedup(r.get("cells", {}), cell, base) for r in doc["workloads"].values()]
        xs = [x for x in xs if x]
        out[f"{cell} over {base}"] = (math.exp(sum(map(math.log, xs)) / len(xs)), len(xs)) \
            if xs else (None, 0)
    return out


def summary_line(doc):
    return "; ".join(f"{k}: {v:.3f}× ({n} workloads)" if v else f"{k}: -"
                     for k, (v, n) in summary(doc).items())


def markdown(head, rows):
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def text(head, rows):
    width = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    fmt = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, width)).rstrip()
    return "\n".join([fmt(head)] + [fmt(r) for r in rows])


def header(doc):
    runs = doc.get("runs", [])
    seen = []
    for r in runs:
        s = (f"{r.get('gpu', '?')}, driver {r.get('driver', '?')}, torch {r.get('torch', '?')} "
             f"(CUDA {r.get('cuda', '?')}), commit {r.get('commit', '?') or '?'}")
        # Runs before session 37 kept CUBLAS_WORKSPACE_CONFIG set, and torch 2.11 paid for it
        # at every cuBLAS call (workloads.cublas_config_read_once): not comparable with later.
        if r.get("cublas_config", "kept") == "kept":
            s += ", CUBLAS_WORKSPACE_CONFIG kept"
        if r.get("pin", "all") != "all":  # harness.pin_mode: the main thread alone pinned
            s += f", pinned: {r['pin']} thread"
        if s not in seen:
            seen.append(s)
    dates = sorted(r.get("date", "")[:10] for r in runs)
    return f"{', '.join(seen)}; {dates[0] if dates else '?'}"


def table(doc):
    """The short table printed last by run.py."""
    h1, r1 = shim_rows(doc)
    keep = [0, 1, 3, 4, 6, 7, 11]
    h1 = [h1[i] for i in keep]
    r1 = [[r[i] for i in keep] for r in r1]
    th, tr, tline = target_rows(doc)
    misses = [tline + (":" if tr else "")] + ([text(th, tr)] if tr else [])
    rh, rr = rerun_rows(doc)
    reruns = [text(rh, rr), ""] if rr else []
    wh, wr = read_rows(doc)
    reruns += [text(wh, wr), ""] if wr else []
    ph, pr = process_rows(doc)
    reruns += [text(ph, pr), ""] if pr else []
    oh, orows = outlier_rows(doc)
    reruns += [text(oh, orows), ""] if orows else []
    return "\n".join([header(doc), "", text(h1, r1), ""] + reruns +
                     [text(*variant_rows(doc)), "", "geomean speedup: " + summary_line(doc), ""] +
                     misses)


def pyplot(what):
    """matplotlib's pyplot, drawing to files, or None after one line saying that `what` is not
    drawn (matplotlib is not installed)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"report: no matplotlib, no {what}", file=sys.stderr)
        return None
    return plt


def chart(doc, path):
    plt = pyplot("chart")
    if plt is None:
        return False
    names = list(doc["workloads"])
    fig, ax = plt.subplots(figsize=(max(10, 1.0 * len(names) + 3), 5.5))
    width = 0.8 / len(VARIANTS)
    for k, v in enumerate(VARIANTS):
        xs, ys, fails = [], [], []
        for i, n in enumerate(names):
            cells = doc["workloads"][n].get("cells", {})
            x = i + (k - len(VARIANTS) / 2 + 0.5) * width
            s = speedup(cells, v, "eager") if v in cells else None
            if s:
                xs.append(x)
                ys.append(s)
            elif cells.get(v, {}).get("status") == "failed":
                fails.append(x)
        ax.bar(xs, ys, width, label=v, color=COLORS[v])
        if fails:
            ax.plot(fails, [1.0] * len(fails), "x", color=COLORS[v], markersize=7)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log", base=2)
    ax.set_ylabel("speedup over eager (log scale)")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=35, ha="right")
    ax.set_title(f"pygraph benchmark suite: {header(doc)}\nx: failed; no bar: does not apply",
                 fontsize=9)
    ax.legend(fontsize=8, ncol=4, loc="upper left")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def process_points(doc):
    """Every cell that ran in several processes (process_rows): (label, its changes first to
    last, whether it counts as slower over them: slower())."""
    return [(f"{name} {cell}", seq, slower(seq)) for name, cell, seq in multi_process_cells(doc)]


def process_chart(doc, path):
    """The picture of process_rows: each process's change with the shim (median, quartile bar),
    one row a cell, red where that process was slower; the label says the verdict over all of
    them. Nothing is written where no cell ran in several processes."""
    points = process_points(doc)
    plt = pyplot("process chart") if points else None
    if plt is None:
        return False
    fig, ax = plt.subplots(figsize=(11, 1.6 + 0.45 * len(points)))
    for y, (_, seq, _) in enumerate(points):
        n = len(seq)
        for k, ch in enumerate(seq):
            yy = y + (k - (n - 1) / 2) * min(0.15, 0.6 / n)  # processes apart, first on top
            color = "tab:red" if ch["q1"] > 0 else "tab:blue"
            ax.plot([ch["q1"], ch["q3"]], [yy, yy], color=color, linewidth=1.5, alpha=0.6)
            ax.plot([ch["median"]], [yy], "o", color=color, markersize=4)
    ax.axvline(0.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(points)))
    ax.set_yticklabels([f"{label}: {slower_in(seq)} of {len(seq)} slower, "
                        f"{'slower' if s else 'not slower'}" for label, seq, s in points],
                       fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("change with the shim (%): median of chunk pairs, bar from q1 to q3")
    ax.set_title(f"Cells run in several processes, each process a point (red: slower in it, "
                 f"q1 > 0);\na cell is slower where at least half of its processes are. "
                 f"{header(doc)}", fontsize=7, wrap=True)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def replay_points(doc):
    """Issue 10's two targets side by side: for every shim cell, one point a process that ran it
    (earlier processes of its shape, then the current one): (label, launches a replay in steady
    state, its change against the variant without the shim, whether the launches-a-replay
    target applies: TARGET_PER_REPLAY_FROM launches a step or more). A process without both
    figures (failed, no stats, no graph replayed) is left out."""
    points = []
    for name, res in doc["workloads"].items():
        for cell in res.get("cells", {}):
            if shim_base(cell) is None:
                continue
            for c in process_runs(res, cell):
                d = c.get("shim") or {}
                per, ch = d.get("launches_per_replay"), c.get("vs_without_shim")
                if not status(c) and per and ch:
                    applies = d.get("launches_per_iter", 0) >= TARGET_PER_REPLAY_FROM
                    points.append((f"{name} {cell}", per, ch, applies))
    return points


def replay_chart(doc, path):
    """The picture of replay_points: launches a replay across (log scale), the change with the
    shim up (median, quartile bar), the lines of the targets (32 launches a replay; not
    slower). A cell where the launches-a-replay target applies in any of its processes has a
    colour and its label at its processes' median; the others are hollow grey points,
    unlabelled (the tables name them). Nothing is written where no cell has both figures."""
    points = replay_points(doc)
    plt = pyplot("replay chart") if points else None
    if plt is None:
        return False
    from matplotlib.ticker import FuncFormatter
    labels = list(dict.fromkeys(label for label, _, _, _ in points))
    fig, ax = plt.subplots(figsize=(11, 6.5))
    cmap = plt.get_cmap("tab10")
    k = 0
    for label in labels:
        mine = [(per, ch, applies) for lab, per, ch, applies in points if lab == label]
        applies = any(a for _, _, a in mine)
        if applies:
            color, marker = cmap(k % 10), "os^Dv"[k // 10 % 5]  # a cell apart from its neighbours
            k += 1
        else:
            color, marker = "0.6", "o"
        for per, ch, _ in mine:
            ax.plot([per, per], [ch["q1"], ch["q3"]], color=color, linewidth=1.2, alpha=0.6)
            ax.plot([per], [ch["median"]], marker, color=color, markersize=4,
                    markerfacecolor=color if applies else "none")
        if applies:
            x = statistics.median(per for per, _, _ in mine)
            y = statistics.median(ch["median"] for _, ch, _ in mine)
            ax.annotate(f"{label} ({len(mine)})", (x, y), fontsize=6, color=color,
                        xytext=(4, 2), textcoords="offset points")
    ax.axvline(TARGET_PER_REPLAY, color="gray", linestyle="--", linewidth=0.8)
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel(f"launches a graph replay in steady state (log scale; a program's graph "
                  f"counts as one launch; target: at least {TARGET_PER_REPLAY:g}, dashed)")
    ax.set_ylabel("change with the shim (%): median, bar q1 to q3; target: not above 0")
    ax.set_title(f"Launches a replay against the time they buy: each process a point, (n) "
                 f"processes a cell; hollow grey: under {TARGET_PER_REPLAY_FROM:g} launches a "
                 f"step, where that target does not apply.\n{header(doc)}", fontsize=8,
                 wrap=True)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def write_all(doc, out):
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(doc, f, indent=1)
    th, tr, tline = target_rows(doc)
    rh, rr = rerun_rows(doc)
    parts = [f"Measured on {header(doc)}.", markdown(*shim_rows(doc))]
    parts += [markdown(rh, rr)] if rr else []
    wh, wr = read_rows(doc)
    parts += [markdown(wh, wr)] if wr else []
    ph, pr = process_rows(doc)
    parts += [markdown(ph, pr)] if pr else []
    oh, orows = outlier_rows(doc)
    parts += ["Weighed chunks whose GPU time disagreed between rounds:",
              markdown(oh, orows)] if orows else []
    parts += [markdown(*variant_rows(doc)), "Geomean speedup: " + summary_line(doc),
              tline.capitalize() + (":" if tr else ".")]
    parts += [markdown(th, tr)] if tr else []
    md = "\n\n".join(parts)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(md + "\n")
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write(table(doc) + "\n")
    chart(doc, os.path.join(out, "speedup.png"))
    process_chart(doc, os.path.join(out, "processes.png"))
    replay_chart(doc, os.path.join(out, "replays.png"))


def variant_of(cell):
    """The variant a cell runs: "compile-ro" for compile-ro, compile-ro+shim, compile-ro+shim:ARM
    and compile-ro-rerun."""
    return cell.split("+")[0].removesuffix("-rerun")


def merge_workload(old, new):
    """A workload's result `new` over an earlier one `old`: the variants `new` ran replace
    theirs; a variant it did not run (--variants) keeps its earlier cells, each naming its run,
    where both ran the same shape (chunks and iterations a chunk). Else `new` replaces `old`.
    A cell that ran in both is not lost: the earlier process's is kept under "earlier" (cell ->
    its processes, first to last; process_rows), so that a cell run in several processes
    (run.py --repeat, or calls one after the other) shows how far processes differ."""
    if not old or new.get("error") or old.get("error") or \
            (old.get("chunks"), old.get("steps_per_chunk")) != \
            (new.get("chunks"), new.get("steps_per_chunk")):
        return new
    ran = {variant_of(c) for c, v in new.get("cells", {}).items() if v.get("status") != "n/a"}
    earlier = {c: list(v) for c, v in old.get("earlier", {}).items()}
    cells = {}  # in the earlier order, the new cells in their variant's place
    for c, v in old.get("cells", {}).items():
        stamped = dict(v, run=v.get("run", old.get("run", 0)))
        if variant_of(c) not in ran:
            cells[c] = stamped
        elif c in new["cells"]:
            cells[c] = new["cells"][c]
            if not status(v):
                earlier.setdefault(c, []).append(stamped)
        else:  # an arm the later run did not repeat: kept, with the process it ran in
            cells[c] = stamped
    cells.update((c, v) for c, v in new["cells"].items() if c not in cells)
    # `new`'s own earlier processes (a file of several: run.py --repeat) come after `old`'s.
    for c, v in new.get("earlier", {}).items():
        earlier.setdefault(c, []).extend(v)
    merged = dict(new, cells=cells)
    # A variant left out keeps what its two runs without the shim said.
    det = dict(deterministic(new))
    det.update((v, same) for v, same in deterministic(old).items() if v not in ran)
    merged.pop("baseline_deterministic", None)
    if det:
        merged["deterministic"] = det
    if earlier:
        merged["earlier"] = earlier
    return merged


def change_of(cell, c):
    """The change a cell is judged by: a shim cell's against its variant without the shim, a
    rerun's against the first process; else None."""
    if shim_base(cell) is not None:
        return c.get("vs_without_shim")
    return c.get("vs_variant") if cell.endswith("-rerun") else None


def changes(res, cell):
    """The changes `cell` is judged by: one a process that ran it (processes()), or its one
    change; [] where it has none (failed, or no baseline)."""
    seq = processes(res, cell)
    if seq:
        return seq
    ch = change_of(cell, res.get("cells", {}).get(cell) or {})
    return [ch] if ch else []


def processes(res, cell):
    """The changes of `cell` in every process that ran it with the workload's shape, first to
    last (the current one last), where there were several; else []."""
    current = res.get("cells", {}).get(cell)
    if not current or status(current):
        return []
    seq = [change_of(cell, c) for c in process_runs(res, cell)]
    seq = [ch for ch in seq if ch]
    return seq if len(seq) > 1 else []


def processes_text(seq):
    """Several processes' changes: the median of their medians and how many were slower by
    their quartiles."""
    mid = statistics.median(ch["median"] for ch in seq)
    return f"{len(seq)} processes: median {mid:+.1f} %, slower in {slower_in(seq)}"


def kernels_text(res, cell):
    """Whether the processes of a shim cell ran the same kernels: the signature of their main
    sequence (most launches; harness.stats_delta) compared, first to last; "" where fewer than
    two have one. Only the main one: the lesser two are often warm-up sequences, which vary
    between processes running the same steps."""
    sigs = [(c.get("shim") or {}).get("signatures") for c in process_runs(res, cell)]
    known = [(i + 1, s[0]) for i, s in enumerate(sigs) if s and s[0]]
    if len(known) < 2:
        return ""
    other = [str(i) for i, s in known if s != known[0][1]]
    return ("same main sequence in each" if not other
            else "another main sequence in process " + ", ".join(other))


def process_rows(doc):
    """Every cell that ran in several processes of one shape: each process's change (median),
    first to last, the median of them, in how many the cell was slower by its quartiles, and
    whether its processes ran the same main sequence (kernels_text)."""
    rows = []
    for name, cell, seq in multi_process_cells(doc):
        together = processes_text(seq)
        kernels = kernels_text(doc["workloads"][name], cell)
        rows.append([name, cell, ", ".join(f"{ch['median']:+.1f}" for ch in seq),
                     together + ("; " + kernels if kernels else "")])
    return ["workload", "cell", "change in each process (%, first to last)", "together"], rows


# A chunk of a weighed round whose GPU time in one round is at least this many times, and this
# many µs more than, its least in another (the same chunk of the same sequence of one process):
# the GPU ran something else meanwhile, not the chunk's kernels (session 47: the first chunk of
# a step, 2 launches, read 150-793 µs in rounds weighed beside nine other processes, about 20
# elsewhere).
OUTLIER_RATIO, OUTLIER_US = 3.0, 100.0


def round_outliers(pauses):
    """The chunks of a process's weighed rounds (`pauses`: last_round, earlier_rounds) whose GPU
    time disagrees between rounds: [(start, end, [GPU µs in each round])]."""
    rounds = list(pauses.get("earlier_rounds") or [])
    if pauses.get("last_round"):
        rounds.append(pauses["last_round"])
    times = {}
    for r in rounds:
        for t in r:
            times.setdefault((t["start"], t["end"]), []).append(t["gpu_us"])
    out = []
    for (a, b), us in sorted(times.items()):
        if len(us) > 1 and max(us) >= OUTLIER_RATIO * min(us) and max(us) - min(us) >= OUTLIER_US:
            out.append((a, b, us))
    return out


def outlier_rows(doc):
    """Every shim cell's weighed chunks whose GPU time disagreed between rounds, per process:
    one such round can decide a split or a cut (pause_places.h keeps the largest work)."""
    rows = []
    for name, res in doc["workloads"].items():
        for cell in res.get("cells", {}):
            if shim_base(cell) is None:
                continue
            for k, shim in enumerate(process_shims(res, cell)):
                for a, b, us in round_outliers(shim.get("pauses") or {}):
                    rows.append([name, cell, str(k + 1), f"[{a}, {b})",
                                 ", ".join(f"{u:.0f}" for u in us)])
    return ["workload", "cell", "process", "chunk", "GPU µs in each weighed round"], rows


def multi_process_cells(doc):
    """(workload, cell, its changes first to last: processes()) of every cell that ran in
    several processes of one shape."""
    for name, res in doc["workloads"].items():
        for cell in res.get("cells", {}):
            seq = processes(res, cell)
            if seq:
                yield name, cell, seq


def merge(paths):
    doc = {"schema": "pygraph-bench/1", "workloads": {}, "runs": []}
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        offset = len(doc["runs"])
        doc["runs"] += d.get("runs", [])
        shift = lambda v: dict(v, run=v["run"] + offset) if "run" in v else v
        for name, res in d["workloads"].items():
            res = dict(res, run=res.get("run", 0) + offset,
                       cells={c: shift(v) for c, v in res.get("cells", {}).items()})
            if "earlier" in res:
                res["earlier"] = {c: [shift(v) for v in lst] for c, lst in res["earlier"].items()}
            doc["workloads"][name] = merge_workload(doc["workloads"].get(name), res)
    return doc


def main():
    p = argparse.ArgumentParser(description="merge benchmark results; tables and chart")
    p.add_argument("results", nargs="+")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    doc = merge(a.results)
    write_all(doc, a.out)
    print(table(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
