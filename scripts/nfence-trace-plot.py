#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Render a trace-event JSON file (nfence-trace's output) as a timeline
PNG with matplotlib (Debian's python3-matplotlib, hence /usr/bin/python3):
one row per track (thread) in the processes' and threads' sort order,
"X" slices as bars (zero-length ones as ticks), instants as triangles,
async waits as hatched bars, flows as arrows from the signal to the wait
it released (solid) and from a command libnfence queued to the log entry
the GPU wrote for it (dashed). Times in milliseconds from the first
event.

  nfence-trace-plot.py [--title TEXT] [--width INCHES] FILE.json OUT.png
"""
import argparse
import collections
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"work": "#4c72b0", "wait": "#dd8452", "signal": "#55a868",
          "cpu": "#c44e52", "async": "#8172b3", "other": "#937860",
          "queued": "#da8bc3"}


def color(ev):
    name = ev.get("name", "")
    if name.startswith("fence ") and " queued" in name:
        return COLORS["queued"]
    if name == "work":
        return COLORS["work"]
    if name.startswith("wait"):
        return COLORS["wait"]
    if name.startswith("signal") or "signal" in name:
        return COLORS["signal"]
    if ev.get("cat") == "cpu":
        return COLORS["cpu"]
    return COLORS["other"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("file")
    p.add_argument("png")
    p.add_argument("--title", default=None)
    p.add_argument("--width", type=float, default=12.0)
    opts = p.parse_args()
    with open(opts.file, encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]

    pnames, tnames = {}, {}
    psort, tsort = {}, {}
    for ev in events:
        if ev.get("ph") != "M":
            continue
        args = ev.get("args", {})
        key = (ev["pid"], ev["tid"])
        if ev["name"] == "process_name":
            pnames[ev["pid"]] = args["name"]
        elif ev["name"] == "thread_name":
            tnames[key] = args["name"]
        elif ev["name"] == "process_sort_index":
            psort[ev["pid"]] = args["sort_index"]
        elif ev["name"] == "thread_sort_index":
            tsort[key] = args["sort_index"]

    timed = [ev for ev in events if ev.get("ph") != "M"]
    if not timed:
        print("nfence-trace-plot: %s: no events" % opts.file)
        return 1
    t0 = min(ev["ts"] for ev in timed)
    tracks = sorted({(ev["pid"], ev["tid"]) for ev in timed},
                    key=lambda k: (psort.get(k[0], 1 << 30), k[0],
                                   tsort.get(k, 1 << 30), k[1]))
    row = {k: i for i, k in enumerate(tracks)}

    def ms(ts):
        return (ts - t0) / 1000.0

    height = max(2.5, 0.55 * len(tracks) + 1.2)
    fig, ax = plt.subplots(figsize=(opts.width, height), dpi=100)
    flows = collections.defaultdict(dict)
    asyncs = collections.defaultdict(dict)
    end_ms = 0.0
    for ev in timed:
        y = row[(ev["pid"], ev["tid"])]
        ph = ev["ph"]
        x = ms(ev["ts"])
        end_ms = max(end_ms, x)
        if ph == "X":
            w = ev["dur"] / 1000.0
            end_ms = max(end_ms, x + w)
            if w > 0:
                ax.broken_barh([(x, w)], (y - 0.35, 0.7),
                               facecolors=color(ev), edgecolor="black",
                               linewidth=0.5)
            else:
                ax.plot([x, x], [y - 0.4, y + 0.4], color=color(ev),
                        linewidth=2)
        elif ph in ("i", "I"):
            ax.plot(x, y + 0.25, marker="v", color=color(ev), markersize=6,
                    linestyle="none")
        elif ph in ("s", "f"):
            flows[(ev["cat"], ev["id"])][ph] = (x, y)
        elif ph in ("b", "e"):
            asyncs[(ev["cat"], ev["id"])][ph] = (x, y)
    for key, a in asyncs.items():
        if "b" in a and "e" in a:
            (x0, y), (x1, _) = a["b"], a["e"]
            ax.broken_barh([(x0, max(x1 - x0, 1e-6))], (y - 0.3, 0.6),
                           facecolors="none", edgecolor=COLORS["async"],
                           hatch="///", linewidth=0.8)
    for key, f in flows.items():
        if "s" in f and "f" in f:
            (x0, y0), (x1, y1) = f["s"], f["f"]
            queued = key[0] == "nfence.queued"
            ax.annotate("", xy=(x1, y1), xytext=(x0, y0),
                        arrowprops=dict(arrowstyle="->",
                                        color="#7f3f6f" if queued
                                        else "black",
                                        linewidth=1.0 if queued else 1.2,
                                        linestyle="--" if queued else "-",
                                        connectionstyle="arc3,rad=0.2"))
    labels = ["%s: %s" % (pnames.get(k[0], k[0]), tnames.get(k, k[1]))
              for k in tracks]
    ax.set_yticks(range(len(tracks)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_ylim(len(tracks) - 0.5, -0.5)
    ax.set_xlim(-0.02 * end_ms, end_ms * 1.02 + 1e-3)
    ax.set_xlabel("ms since the first event")
    ax.grid(axis="x", linestyle=":", linewidth=0.5)
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLORS[k])
               for k in ("work", "wait", "signal", "cpu", "queued")]
    handles.append(plt.Rectangle((0, 0), 1, 1, facecolor="none",
                                 edgecolor=COLORS["async"], hatch="///"))
    ax.legend(handles,
              ["GPU work", "GPU wait (observed to released)", "signal",
               "CPU wait", "wait/signal queued (libnfence)",
               "async CPU wait"],
              fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(opts.title or opts.file, fontsize=10)
    fig.tight_layout()
    fig.savefig(opts.png)
    print("nfence-trace-plot: %d tracks, %d flows -> %s" %
          (len(tracks), sum(1 for f in flows.values() if len(f) == 2),
           opts.png))
    return 0


if __name__ == "__main__":
    sys.exit(main())
