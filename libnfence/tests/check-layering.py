#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# The layering of libnfence's sources: one arrow from file A to file B
# (a .c with the header of its name) where A includes B's header, or
# calls a function B defines (an undefined symbol of A's object that B's
# object defines, as nm reports them: calls through a pointer, such as a
# type's ops in the handle registry, are no arrow). Prints the files in
# layers, each above all it uses, and fails if the arrows close a circle.
#
#   check-layering.py SRCDIR OBJDIR [NM]
import os
import re
import subprocess
import sys


def includes(path):
    """The local headers @path includes, by name without .h."""
    with open(path, encoding="utf-8") as f:
        return re.findall(r'^#include "(\w+)\.h"', f.read(), re.M)


def symbols(nm, obj, flag):
    """The global symbols of @obj that nm lists with @flag."""
    out = subprocess.run([nm, flag, obj], check=True, capture_output=True,
                         text=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def main():
    src, obj = sys.argv[1], sys.argv[2]
    nm = sys.argv[3] if len(sys.argv) > 3 else "nm"
    files = sorted(f[:-2] for f in os.listdir(src) if f.endswith(".c"))
    defined = {f: symbols(nm, os.path.join(obj, f + ".o"),
                          "--defined-only") for f in files}
    owner = {s: f for f in files for s in defined[f]}

    arrows = {f: set() for f in files}
    for f in files:
        for h in includes(os.path.join(src, f + ".c")):
            arrows[f].add(h)
        for s in symbols(nm, os.path.join(obj, f + ".o"), "--undefined-only"):
            if s in owner:
                arrows[f].add(owner[s])
    # A header's own includes are its file's arrows.
    for f in files:
        header = os.path.join(src, f + ".h")
        if os.path.exists(header):
            arrows[f].update(includes(header))
    for f in files:
        arrows[f] = {t for t in arrows[f] if t in arrows and t != f}

    layer, visiting = {}, []

    def place(f):
        if f in visiting:
            circle = visiting[visiting.index(f):] + [f]
            sys.exit("check-layering: a circle: " +
                     " -> ".join(c + ".c" for c in circle))
        if f not in layer:
            visiting.append(f)
            layer[f] = 1 + max((place(t) for t in arrows[f]), default=0)
            visiting.pop()
        return layer[f]

    for f in files:
        place(f)
    for n in range(max(layer.values()), 0, -1):
        print(f"# layer {n}: " +
              " ".join(f + ".c" for f in files if layer[f] == n))
    print(f"# {len(files)} files, {sum(map(len, arrows.values()))} arrows, "
          f"no circle")


if __name__ == "__main__":
    main()
