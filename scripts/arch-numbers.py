#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The driver's layering, measured: the units of drivers/gpu/drm/nfence (a
# .c with the header of its name, or a header alone), the arrows between
# them, whether they close a circle, which arrows run from a lower floor
# of Documentation/architecture.rst ("Layers") to a higher one, and the
# sizes that page quotes (the longest ioctl handlers, the fields of
# struct nfence_file, the longest files).
#
# An arrow runs from unit A to unit B where A's .c or .h includes B's
# header, or A's object calls (or reads) a symbol B's object defines, as
# nm lists them; a call through a pointer (struct nfence_cmp_ops) is no
# arrow. A circle, an arrow running up, or an ioctl handler longer than
# the page allows fails the check.
#
#   arch-numbers.py SRCDIR OBJDIR            print the table (reST)
#   arch-numbers.py SRCDIR OBJDIR --check DOC
#                      fail unless DOC holds that table between its
#                      ".. arch-numbers" markers, and on a circle, an
#                      arrow running up or a handler too long
#   arch-numbers.py SRCDIR OBJDIR --update DOC
#                      rewrite the table in DOC
import os
import re
import subprocess
import sys

# The floors of Documentation/architecture.rst, "Layers".
FLOORS = {
    0: "cs vm segment waitlist table async compat mmap trace peer",
    1: "gpu cmp_types cmp cmp_doorbell engine log",
    2: "adapter device window fence fence_demote signal alloc context wait "
       "hwqueue doorbell syncobj device_state logging cmp_ops submit",
    3: "caps pm",
    4: "params drv debugfs harness",
}
FLOOR = {u: n for n, units in FLOORS.items() for u in units.split()}

# The page's limit on an ioctl handler, its first line to its closing brace.
HANDLER_LINES = 50

BEGIN = ".. arch-numbers-begin"
END = ".. arch-numbers-end"


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def includes(path):
    """The nfence headers @path includes, as unit names."""
    return re.findall(r'^#include "nfence_(\w+)\.h"', read(path), re.M)


def symbols(obj, flag):
    out = subprocess.run(["nm", flag, obj], check=True, capture_output=True,
                         text=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def functions(src):
    """(lines, name) of every function of @src, from its definition's
    first line to its closing brace at column 0."""
    out, name, start = [], None, 0
    for n, line in enumerate(read(src).splitlines(), 1):
        m = re.match(r'^(?:static\s+)?[a-z_].*?\b(\w+)\(', line)
        if name is None and m and not line.endswith(";"):
            name, start = m.group(1), n
        elif name is not None and line == "}":
            out.append((n - start + 1, name))
            name = None
        elif name is not None and line.endswith(";") and line[0] != "\t" \
                and line[0] != " " and "(" not in line and n == start + 1:
            name = None
    return out


def struct_fields(header, struct):
    """The members of @struct in @header (one declaration per line)."""
    body = re.search(r'^struct ' + struct + r' \{\n(.*?)^\};', read(header),
                     re.M | re.S).group(1)
    body = re.sub(r'/\*.*?\*/', '', body, flags=re.S)
    return len([l for l in body.splitlines() if l.strip().endswith(";")])


def measure(src, obj):
    cfiles = sorted(f[len("nfence_"):-2] for f in os.listdir(src)
                    if f.startswith("nfence_") and f.endswith(".c"))
    headers = sorted(f[len("nfence_"):-2] for f in os.listdir(src)
                     if f.startswith("nfence_") and f.endswith(".h"))
    units = sorted(set(cfiles) | set(headers))
    # A file the configuration leaves out (the harness) has no object.
    cfiles = [u for u in cfiles
              if os.path.exists(os.path.join(obj, f"nfence_{u}.o"))]
    defined = {u: symbols(os.path.join(obj, f"nfence_{u}.o"),
                          "--defined-only") for u in cfiles}
    owner = {s: u for u in cfiles for s in defined[u]}
    arrows = {u: set() for u in units}
    for u in units:
        for ext in (".c", ".h"):
            path = os.path.join(src, f"nfence_{u}{ext}")
            if os.path.exists(path):
                arrows[u].update(includes(path))
        if u in cfiles:
            for s in symbols(os.path.join(obj, f"nfence_{u}.o"),
                             "--undefined-only"):
                if s in owner:
                    arrows[u].add(owner[s])
        arrows[u] = {t for t in arrows[u] if t in arrows and t != u}

    problems = [f"nfence_{u}: no floor in arch-numbers.py's FLOORS"
                for u in units if u not in FLOOR]
    up = sorted((a, b) for a in units for b in arrows[a]
                if FLOOR.get(b, 0) > FLOOR.get(a, 0))
    problems += [f"arrow running up: nfence_{a} -> nfence_{b}"
                 for a, b in up]
    # Circles.
    state, stack = {}, []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for t in sorted(arrows[u]):
            if state.get(t) == 1:
                circle = stack[stack.index(t):] + [t]
                problems.append("circle: " + " -> ".join(
                    "nfence_" + c for c in circle))
            elif t not in state:
                visit(t)
        stack.pop()
        state[u] = 2

    for u in units:
        if u not in state:
            visit(u)

    handlers = sorted(((n, f) for u in cfiles
                       for n, f in functions(os.path.join(src,
                                                          f"nfence_{u}.c"))
                       if f.endswith("_ioctl")), reverse=True)
    problems += [f"ioctl handler {f}(): {n} lines, more than "
                 f"{HANDLER_LINES}" for n, f in handlers if n > HANDLER_LINES]
    sizes = sorted(((len(read(os.path.join(src, f"nfence_{u}.c"))
                         .splitlines()), u) for u in cfiles), reverse=True)
    nfile = struct_fields(os.path.join(src, "nfence_adapter.h"),
                          "nfence_file")
    same = sum(1 for a in units for b in arrows[a]
               if FLOOR.get(a) == FLOOR.get(b))
    total = sum(len(a) for a in arrows.values())
    circles = len([p for p in problems if p.startswith("circle")])

    rows = [
        ("units (a ``.c`` with its header, or a header)", str(len(units))),
        ("arrows between units (includes and calls)", str(total)),
        ("of them within one floor", str(same)),
        ("arrows running from a lower floor to a higher", str(len(up))),
        ("circles", str(circles)),
        ("fields of ``struct nfence_file``", str(nfile)),
    ]
    rows += [(f"ioctl handler ``{f}()``, lines", str(n))
             for n, f in handlers[:5]]
    rows += [(f"file ``nfence_{u}.c``, lines", str(n)) for n, u in sizes[:3]]
    w = max(len(r[0]) for r in rows)
    rule = "=" * w + "  " + "=" * 5
    table = [rule] + [r[0].ljust(w) + "  " + r[1] for r in rows] + [rule]
    return "\n".join(table) + "\n", problems


def main():
    src, obj = sys.argv[1], sys.argv[2]
    mode = sys.argv[3] if len(sys.argv) > 3 else None
    table, problems = measure(src, obj)
    if mode is None:
        sys.stdout.write(table)
        for p in problems:
            print("arch-numbers: " + p, file=sys.stderr)
        sys.exit(1 if problems else 0)
    doc = sys.argv[4]
    text = read(doc)
    m = re.search(re.escape(BEGIN) + r'\n\n(.*?)' + re.escape(END), text,
                  re.S)
    table += "\n"
    if not m:
        sys.exit(f"arch-numbers: {doc} has no {BEGIN} ... {END} block")
    if mode == "--update":
        with open(doc, "w", encoding="utf-8") as f:
            f.write(text[:m.start(1)] + table + text[m.end(1):])
    elif m.group(1) != table:
        print(f"arch-numbers: {doc} does not say what the code measures "
              f"(make arch-numbers rewrites it); the code:\n{table}",
              file=sys.stderr)
        problems.append("stale table")
    for p in problems:
        print("arch-numbers: " + p, file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
