#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The summary of make coverage (scripts/coverage.sh), from lcov's tracefile.

    coverage-report.py TRACEFILE TOP UNREACHED_OUT

Prints the totals of lines, functions and branches of the driver's files,
the goals (lines >= 90%, every function) as met or missed, and how many of
the driver's error returns ran; writes to UNREACHED_OUT every function and
every error return that no test reached, as paths relative to TOP (the
repository, whose files the tracefile names).

An error return is a line whose code returns or assigns a negative errno
constant (-EINVAL, ERR_PTR(-ENOMEM), ret = -EFAULT, ...). Only those with
a counter of their own can be judged: at -O2 gcc often gives several
identical "return -EINVAL;" one block, counted under none of their lines,
so the summary says how many have no counter. "In ioctl handlers" counts
those whose function ends in _ioctl.
"""

import os
import re
import sys

ERRNO = re.compile(r"-E[A-Z][A-Z0-9]*\b")
RETURNISH = re.compile(r"\breturn\b|[^=!<>]=[^=]")
GOAL_LINES = 90.0


class Source:
    """One SF record of the tracefile."""

    def __init__(self, path):
        self.path = path
        self.lines = {}         # line -> count
        self.funcs = {}         # name -> start line
        self.func_hits = {}     # name -> count
        self.branches = []      # taken counts (None: never evaluated)


def parse(tracefile):
    sources = []
    cur = None
    with open(tracefile) as f:
        for raw in f:
            tag, _, val = raw.rstrip("\n").partition(":")
            if tag == "SF":
                cur = Source(val)
                sources.append(cur)
            elif tag == "DA":
                line, count = val.split(",")[:2]
                cur.lines[int(line)] = int(count)
            elif tag == "FN":
                line, name = val.split(",", 1)
                cur.funcs[name] = int(line)
            elif tag == "FNDA":
                count, name = val.split(",", 1)
                cur.func_hits[name] = int(count)
            elif tag == "BRDA":
                taken = val.split(",")[3]
                cur.branches.append(None if taken == "-" else int(taken))
    return sources


def pct(hit, total):
    return 100.0 * hit / total if total else 100.0


def enclosing(src, line):
    best, best_line = "?", 0
    for name, start in src.funcs.items():
        if best_line < start <= line:
            best, best_line = name, start
    return best


def main():
    tracefile, top, unreached_out = sys.argv[1:4]
    sources = parse(tracefile)
    if not sources:
        print("coverage: the tracefile has no source file", file=sys.stderr)
        return 1
    lines = [0, 0]
    funcs = [0, 0]
    branches = [0, 0]
    errs = [0, 0]
    uncounted = 0
    ioctl_errs = [0, 0]
    dead_funcs = []
    dead_errs = []
    for src in sorted(sources, key=lambda s: s.path):
        rel = os.path.relpath(src.path, top)
        lines[0] += sum(1 for c in src.lines.values() if c)
        lines[1] += len(src.lines)
        funcs[0] += sum(1 for n in src.funcs if src.func_hits.get(n, 0))
        funcs[1] += len(src.funcs)
        branches[0] += sum(1 for t in src.branches if t)
        branches[1] += len(src.branches)
        for name, start in sorted(src.funcs.items(), key=lambda i: i[1]):
            if not src.func_hits.get(name, 0):
                dead_funcs.append(f"{rel}:{start} {name}")
        with open(src.path) as f:
            text = f.read().split("\n")
        for line, code in enumerate(text, 1):
            code = code.strip()
            if code.startswith(("*", "/*", "//")):
                continue
            if not ERRNO.search(code) or not RETURNISH.search(code):
                continue
            if line not in src.lines:
                uncounted += 1
                continue
            count = src.lines[line]
            func = enclosing(src, line)
            in_ioctl = func.endswith("_ioctl")
            errs[1] += 1
            ioctl_errs[1] += in_ioctl
            if count:
                errs[0] += 1
                ioctl_errs[0] += in_ioctl
            else:
                dead_errs.append(f"{rel}:{line} {func}: {code}")

    line_pct = pct(*lines)
    print("coverage: lines %.1f%% (%d of %d), functions %.1f%% (%d of %d), "
          "branches %.1f%% (%d of %d)" %
          (line_pct, lines[0], lines[1], pct(*funcs), funcs[0], funcs[1],
           pct(*branches), branches[0], branches[1]))
    print("coverage: goal: lines >= %d%%: %s; functions 100%%: %s" %
          (GOAL_LINES, "met" if line_pct >= GOAL_LINES else "missed",
           "met" if funcs[0] == funcs[1] else "missed"))
    print("coverage: error returns reached: %d of %d (in ioctl handlers: "
          "%d of %d); %d more have no counter of their own" %
          (errs[0], errs[1], ioctl_errs[0], ioctl_errs[1], uncounted))
    with open(unreached_out, "w") as f:
        f.write("# Functions no test called (file:line name)\n")
        f.writelines(x + "\n" for x in dead_funcs)
        f.write("\n# Error returns no test reached "
                "(file:line function: code)\n")
        f.writelines(x + "\n" for x in dead_errs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
