"""The analyzer's what-if against graph mode on the benchmark suite: for every workload run with
--traces, `pygraph-analyze simulate` on its trace-mode cell's trace, next to the coverage that
graph mode's own stats report for the eager+shim cell of the same run (whole run, warm-up
included, as the trace is). Target (issue 12): within 5 points on every workload.

    python simulate_check.py --out DIR --analyzer BUILD/pygraph-analyze

DIR is run.py's --out (results.json and cells/). Writes DIR/simulate.json and prints a table;
exits 1 if a workload misses the target, 0 otherwise (also when no workload has a trace).
"""
import argparse
import glob
import json
import os
import subprocess
import sys

TARGET_POINTS = 5.0


def simulate(analyzer, trace):
    """Predicted coverage (%) of one trace, or (None, why)."""
    try:
        p = subprocess.run([analyzer, "simulate", "--json", trace], capture_output=True,
                           text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{type(e).__name__}: {e}"[:160]
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1][:160]
    try:
        return float(json.loads(p.stdout)["coverage_percent"]), ""
    except (ValueError, KeyError, TypeError) as e:
        return None, f"unreadable output: {e}"[:160]


def busiest_trace(cells_dir, name):
    """The cell's trace, or where its program started others (torchrun's ranks write
    NAME.eager_trace.trace.<pid> beside the launcher's, which holds no launch), the largest."""
    first = os.path.join(cells_dir, f"{name}.eager_trace.trace")
    family = [first] if os.path.exists(first) else []
    family += glob.glob(glob.escape(first) + ".*")
    return max(family, key=os.path.getsize) if family else None


def rows(doc, cells_dir, analyzer):
    out = []
    for name, res in doc.get("workloads", {}).items():
        trace = busiest_trace(cells_dir, name)
        if trace is None:
            continue
        shim = res.get("cells", {}).get("eager+shim", {})
        measured = shim.get("shim_whole_run_coverage")
        predicted, why = simulate(analyzer, trace)
        row = {"workload": name, "predicted": predicted, "measured": measured}
        if predicted is None or measured is None:
            row["ok"] = False
            row["why"] = why or "no whole-run stats of the eager+shim cell"
        else:
            row["difference"] = predicted - measured
            row["ok"] = abs(row["difference"]) <= TARGET_POINTS
        out.append(row)
    return out


def table(rs):
    lines = [f"{'workload':<17} {'simulate':>9} {'graph mode':>11} {'difference':>11}  result"]
    for r in rs:
        if "difference" in r:
            lines.append(f"{r['workload']:<17} {r['predicted']:>8.1f}% {r['measured']:>10.1f}% "
                         f"{r['difference']:>+10.1f}   {'PASS' if r['ok'] else 'FAIL'}")
        else:
            lines.append(f"{r['workload']:<17} FAIL: {r['why']}")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="run.py's --out: results.json and cells/")
    p.add_argument("--analyzer", required=True, help="pygraph-analyze")
    a = p.parse_args()
    path = os.path.join(a.out, "results.json")
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"simulate_check: {path}: {e}", file=sys.stderr)
        return 2
    rs = rows(doc, os.path.join(a.out, "cells"), a.analyzer)
    with open(os.path.join(a.out, "simulate.json"), "w") as f:
        json.dump({"target_points": TARGET_POINTS, "workloads": rs}, f, indent=1)
    if not rs:
        print("simulate_check: no trace-mode cells (run the suite with --traces)")
        return 0
    print(f"simulate vs graph mode, whole-run coverage (target: within {TARGET_POINTS:g} points)")
    print(table(rs))
    return 0 if all(r["ok"] for r in rs) else 1


if __name__ == "__main__":
    sys.exit(main())
