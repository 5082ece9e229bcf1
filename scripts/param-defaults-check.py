#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare the module parameters of a loaded nfence with the defaults that
Documentation/architecture.rst's parameter table gives.

  param-defaults-check.py ARCHITECTURE.rst PARAMETERS-DIR

Run right after a plain "insmod nfence.ko" (no parameters), with
PARAMETERS-DIR /sys/module/nfence/parameters. The table is the simple
reStructuredText table whose header row is "parameter default meaning":
each row whose first column is ``name`` gives that parameter's default in
its second column. Every parameter of the table must have a file in
PARAMETERS-DIR holding exactly its default (a per-adapter parameter with
its one default value), and every file there must be in the table. Prints
one line per parameter ("ok NAME = VALUE" or "MISMATCH NAME: ...") and
exits 0 if every one matches, 1 otherwise, 2 on bad usage or a table that
cannot be found.
"""
import os
import re
import sys

ROW = re.compile(r"^``([a-z0-9_]+)``\s+(\S+)\s")


def table_defaults(path):
    """The (name, default) rows of the parameter table, in order."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        if line.split()[:3] == ["parameter", "default", "meaning"]:
            break
    else:
        return None
    rows = []
    # Past the header's closing rule, up to the table's last rule.
    for line in lines[i + 2:]:
        if line.startswith("==="):
            break
        m = ROW.match(line)
        if m:
            rows.append((m.group(1), m.group(2)))
    return rows


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    doc, params = argv[1], argv[2]
    rows = table_defaults(doc)
    if not rows:
        print(f"param-defaults-check: no parameter table in {doc}",
              file=sys.stderr)
        return 2
    bad = 0
    documented = set()
    for name, default in rows:
        documented.add(name)
        path = os.path.join(params, name)
        try:
            with open(path, encoding="ascii") as f:
                value = f.read().strip()
        except OSError as e:
            print(f"MISMATCH {name}: documented default {default}, "
                  f"no {path}: {e.strerror}")
            bad += 1
            continue
        if value != default:
            print(f"MISMATCH {name}: documented default {default}, "
                  f"the module shows {value}")
            bad += 1
        else:
            print(f"ok {name} = {value}")
    for name in sorted(set(os.listdir(params)) - documented):
        print(f"MISMATCH {name}: a module parameter the table lacks")
        bad += 1
    print(f"param-defaults-check: {len(rows)} documented, {bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
