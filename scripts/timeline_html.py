#!/usr/bin/env python3
"""Draws a timeline written by `pygraph-analyze export --perfetto` as a self-contained HTML page.

Perfetto's UI needs the network and recent Chromium has no chrome://tracing, so this page is the
offline way to look at a timeline, and to check in headless Chromium that the JSON draws the
tracks it should (docs/timeline-and-plot.md): one row per thread and per stream, in the order
and with the names of the metadata events; complete events (`X`) as boxes (launches coloured
per kernel, boundaries red, other calls grey), instants (`i`) as ticks, global instants as a
line across. Nothing is fetched: the events are embedded in the page.

    scripts/timeline_html.py run.json run.html [--from-ms A] [--to-ms B] [--title T]
    chromium --headless --screenshot=run.png --window-size=1280,520 run.html
"""

import argparse
import json
import sys

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>%(title)s</title>
<style>
  body { margin: 0; font: 12px sans-serif; background: #fff; }
  #head { padding: 6px 10px; }
  #head b { font-size: 14px; }
  .key { display: inline-block; width: 10px; height: 10px; margin: 0 3px 0 12px; }
</style></head>
<body>
<div id="head"><b>%(title)s</b> <span id="info"></span><br>
  <span class="key" style="background:hsl(200,60%%,55%%)"></span>launch (hue per kernel)
  <span class="key" style="background:#d62728"></span>boundary (sync, query, blocking copy...)
  <span class="key" style="background:#999"></span>other driver call
  <span class="key" style="background:#333;width:2px"></span>mark on a stream
</div>
<canvas id="c"></canvas>
<script>
const data = %(data)s;
const range = %(range)s;
const LABEL = 300, ROW = 30, TOP = 30, RIGHT = 16;
const events = data.traceEvents;
// Rows: one per (pid, tid), ordered and named by the metadata events.
const procs = {}, rows = {};
for (const e of events) {
  if (e.ph !== "M") continue;
  const p = procs[e.pid] || (procs[e.pid] = {name: "pid " + e.pid, sort: 0});
  if (e.name === "process_name") p.name = e.args.name;
  if (e.name === "process_sort_index") p.sort = e.args.sort_index;
  const key = e.pid + "/" + e.tid;
  if (e.name === "thread_name" || e.name === "thread_sort_index") {
    const r = rows[key] || (rows[key] = {pid: e.pid, tid: e.tid, name: "tid " + e.tid, sort: 0, ev: []});
    if (e.name === "thread_name") r.name = e.args.name;
    else r.sort = e.args.sort_index;
  }
}
let t0 = Infinity, t1 = -Infinity;
const globals = [];
for (const e of events) {
  if (e.ph !== "X" && e.ph !== "i") continue;
  if (e.ph === "i" && e.s === "g") { globals.push(e); continue; }
  const key = e.pid + "/" + e.tid;
  const r = rows[key] || (rows[key] = {pid: e.pid, tid: e.tid, name: "tid " + e.tid, sort: 0, ev: []});
  r.ev.push(e);
  t0 = Math.min(t0, e.ts);
  t1 = Math.max(t1, e.ts + (e.dur || 0));
}
if (range.from !== null) t0 = range.from * 1000;
if (range.to !== null) t1 = range.to * 1000;
const order = Object.values(rows).filter(r => r.ev.length).sort((a, b) =>
  (procs[a.pid] ? procs[a.pid].sort : 0) - (procs[b.pid] ? procs[b.pid].sort : 0) ||
  a.pid - b.pid || a.sort - b.sort);
const canvas = document.getElementById("c");
const width = window.innerWidth;
canvas.width = width;
canvas.height = TOP + order.length * ROW + 40;
const g = canvas.getContext("2d");
const span = Math.max(t1 - t0, 1e-3);
const x = ts => LABEL + (ts - t0) / span * (width - LABEL - RIGHT);
function hue(name) {
  let h = 0;
  for (let i = 0; i < name.length; ++i) h = (h * 31 + name.charCodeAt(i)) >>> 0;
  return h %% 360;
}
// Time axis: about ten ticks of 1, 2 or 5 x 10^k ms.
const ms = span / 1000;
let step = Math.pow(10, Math.floor(Math.log10(ms / 10)));
for (const m of [1, 2, 5, 10]) { if (ms / (step * m) <= 10) { step *= m; break; } }
g.font = "11px sans-serif";
g.fillStyle = "#444";
g.strokeStyle = "#e5e5e5";
for (let t = Math.ceil(t0 / 1000 / step) * step; t <= t1 / 1000; t += step) {
  const px = x(t * 1000);
  g.beginPath(); g.moveTo(px, TOP - 6); g.lineTo(px, canvas.height - 30); g.stroke();
  g.fillText(+t.toFixed(6) + " ms", px + 2, TOP - 10);
}
let shown = 0;
order.forEach((r, i) => {
  const y = TOP + i * ROW;
  g.fillStyle = i %% 2 ? "#fafafa" : "#f0f0f0";
  g.fillRect(0, y, width, ROW);
  g.fillStyle = "#222";
  const proc = procs[r.pid] ? procs[r.pid].name : "pid " + r.pid;
  g.fillText(proc.slice(0, 46), 6, y + 12);
  g.fillText("  " + r.name, 6, y + 25);
  g.save();
  g.beginPath(); g.rect(LABEL, y, width - LABEL, ROW); g.clip();
  for (const e of r.ev) {
    if (e.ts + (e.dur || 0) < t0 || e.ts > t1) continue;
    ++shown;
    const boundary = (e.cat || "").startsWith("boundary");
    if (e.ph === "X") {
      g.fillStyle = boundary ? "#d62728" : e.cat === "launch" ? "hsl(" + hue(e.name) + ",60%%,55%%)" : "#999";
      const w = Math.max(x(e.ts + e.dur) - x(e.ts), boundary ? 3 : 1);
      g.fillRect(x(e.ts), y + (boundary ? 2 : 5), w, ROW - (boundary ? 4 : 10));
    } else {
      g.fillStyle = boundary ? "#d62728" : "#333";
      g.fillRect(x(e.ts), y + 6, 1, ROW - 12);
    }
  }
  g.restore();
});
g.strokeStyle = "#000";
for (const e of globals) {
  const px = x(e.ts);
  g.setLineDash([4, 3]); g.beginPath(); g.moveTo(px, TOP); g.lineTo(px, canvas.height - 30); g.stroke();
  g.fillStyle = "#000";
  g.textAlign = px > width / 2 ? "right" : "left";  // the label stays on the page
  g.fillText(e.name, px + (px > width / 2 ? -3 : 3), canvas.height - 18);
  g.textAlign = "left";
}
document.getElementById("info").textContent =
  shown + " events on " + order.length + " tracks, " + (t0 / 1000).toFixed(3) + " to " +
  (t1 / 1000).toFixed(3) + " ms" + (data.otherData && data.otherData.trace ? " of " + data.otherData.trace : "");
</script></body></html>
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("timeline", help="the JSON written by pygraph-analyze export --perfetto")
    parser.add_argument("out", help="the HTML page to write")
    parser.add_argument("--from-ms", type=float, default=None, help="start of the view")
    parser.add_argument("--to-ms", type=float, default=None, help="end of the view")
    parser.add_argument("--title", default=None)
    args = parser.parse_args()
    try:
        with open(args.timeline, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"timeline_html: {args.timeline}: {e}")
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        sys.exit(f"timeline_html: {args.timeline}: no traceEvents array")
    # "</" would end the script element early.
    embedded = json.dumps(data).replace("</", "<\\/")
    page = PAGE % {
        "title": (args.title or args.timeline).replace("<", "&lt;"),
        "data": embedded,
        "range": json.dumps({"from": args.from_ms, "to": args.to_ms}),
    }
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(page)


if __name__ == "__main__":
    main()
