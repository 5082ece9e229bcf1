#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Plot nfence-cpu-bench results (the CSV of "make bench-cpu", one file per
kernel) with matplotlib (Debian's python3-matplotlib): the wake latency of
each mechanism (microseconds per ping-pong round trip, threads and
processes), the fan-out time (one signal, N blocked threads) and the cost
per operation against the number of waiters outstanding.

  nfence-cpu-bench-plot.py -o OUT.png FILE.csv...
"""
import argparse
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    rows = {"kernel": path}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["part"] == "machine" and r["name"] == "kernel":
                rows["kernel"] = r["param"]
            rows.setdefault(r["part"], []).append(r)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("csv", nargs="+")
    args = ap.parse_args()
    runs = [load(p) for p in args.csv]

    fig, axes = plt.subplots(1, 3, figsize=(17, 5.5))
    ax = axes[0]
    mechs = ["native", "native+poll", "futex", "futex+ioctl", "syncobj",
             "eventfd"]
    bars = [(run, mode) for run in runs for mode in ("threads", "processes")]
    width = 0.8 / max(len(bars), 1)
    for i, (run, mode) in enumerate(bars):
        vals = {r["name"]: float(r["value"]) for r in run.get("wake", [])
                if r["param"] == mode}
        ys = [1e6 / vals[m] if vals.get(m) else 0 for m in mechs]
        ax.bar([x + i * width for x in range(len(mechs))], ys, width,
               label="%s, %s" % (run["kernel"], mode))
    ax.set_xticks([x + width * (len(bars) - 1) / 2 for x in range(len(mechs))])
    ax.set_xticklabels(mechs)
    ax.set_yscale("log")
    ax.set_ylabel("us per round trip (lower is better)")
    ax.set_title("1) wake latency: CPU ping-pong")
    ax.legend(fontsize=7)

    ax = axes[1]
    for run in runs:
        series = {}
        for r in run.get("fanout", []):
            series.setdefault(r["name"], []).append(
                (int(r["param"]), float(r["value"])))
        for name, pts in sorted(series.items()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                    label="%s, %s" % (run["kernel"], name))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("threads blocked")
    ax.set_ylabel("us until the last runs (best)")
    ax.set_title("3) fan-out: one signal")
    ax.legend(fontsize=7)

    ax = axes[2]
    for run in runs:
        series = {}
        for r in run.get("scaling", []):
            layout, count = r["param"].rsplit(" ", 1)
            key = "%s, %s" % (r["name"], layout)
            series.setdefault(key, []).append((int(count), float(r["value"])))
        for name, pts in sorted(series.items()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                    label="%s, %s" % (run["kernel"], name))
    ax.set_xscale("log")
    ax.set_xlabel("waiters outstanding")
    ax.set_ylabel("ns per operation")
    ax.set_ylim(bottom=0)
    ax.set_title("2) waiter scaling (native)")
    ax.legend(fontsize=6)

    fig.tight_layout()
    fig.savefig(args.output, dpi=90)
    return 0


if __name__ == "__main__":
    sys.exit(main())
