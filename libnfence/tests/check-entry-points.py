#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# Documentation/libnfence.rst's "Entry points of WSL's D3DKMT" section has
# two tables: the first names exactly the entry points of WSL's libdxg
# that LIST (libdxg-entry-points.txt) lists, once each; the second, the
# WDDM 3.1/3.2 calls libdxg lacks, names none of them. Every row answers
# "implemented", "refused" or "needs driver", and LIB (libnfence.so)
# exports every name of both tables. Fails listing what disagrees.
#
#   check-entry-points.py LIST RST LIB [NM]
import re
import subprocess
import sys

SECTION = "Entry points of WSL's D3DKMT"
ANSWERS = ("implemented", "refused", "needs driver")
RULE = re.compile(r"=+( +=+)+")
ROW = re.compile(r"``(\w+)``\s+(implemented|refused|needs driver)?(\s|$)")


def listed(path):
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f
                if line.strip() and not line.startswith("#")]


def tables(rst, errors):
    """The rows (name, answer) of the section's tables, table by table."""
    with open(rst, encoding="utf-8") as f:
        lines = f.read().splitlines()
    try:
        start = lines.index(SECTION)
    except ValueError:
        sys.exit(f"check-entry-points: {rst}: no \"{SECTION}\" section")
    found, rows, rules = [], None, 0
    for n, line in enumerate(lines[start + 2:], start + 3):
        # The next heading (a title over a line of = or -) ends it.
        if rules == 0 and n < len(lines) and line.strip() and \
                re.fullmatch(r"([=-])\1{2,}", lines[n]):
            break
        if RULE.fullmatch(line):
            rules += 1
            if rules == 1:
                rows = []
            elif rules == 3:
                found.append(rows)
                rows, rules = None, 0
            continue
        if rules == 2 and line.strip():
            m = ROW.match(line)
            if not m:
                errors.append(f"line {n}: not an entry point row: {line}")
            elif not m.group(2):
                errors.append(f"line {n}: {m.group(1)}: the answer is none "
                              f"of {', '.join(ANSWERS)}")
            else:
                rows.append((m.group(1), m.group(2)))
    return found


def exported(lib, nm):
    out = subprocess.run([nm, "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    return {f.split()[-1].split("@")[0] for f in out.splitlines()
            if len(f.split()) >= 3 and f.split()[1] != "A"}


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: check-entry-points.py LIST RST LIB [NM]")
    names, rst, lib = listed(sys.argv[1]), sys.argv[2], sys.argv[3]
    nm = sys.argv[4] if len(sys.argv) > 4 else "nm"
    errors = []
    for d in sorted({n for n in names if names.count(n) > 1}):
        errors.append(f"{sys.argv[1]} lists {d} twice")
    found = tables(rst, errors)
    if len(found) != 2:
        sys.exit(f"check-entry-points: {rst}: \"{SECTION}\" has "
                 f"{len(found)} tables, not 2 (libdxg's, then the calls "
                 "it lacks)")
    wsl = [n for n, _ in found[0]]
    more = [n for n, _ in found[1]]
    for n in sorted(set(names) - set(wsl)):
        errors.append(f"the table misses {n}")
    for n in sorted(set(wsl) - set(names)):
        errors.append(f"the table names {n}, which libdxg does not export")
    for n in sorted({n for n in wsl + more if (wsl + more).count(n) > 1}):
        errors.append(f"the tables name {n} twice")
    for n in sorted(set(more) & set(names)):
        errors.append(f"{n} is libdxg's, but in the table of the calls "
                      "it lacks")
    exports = exported(lib, nm)
    for n in sorted(set(wsl + more) - exports):
        errors.append(f"{lib} does not export {n}")
    if errors:
        sys.exit("\n".join(f"check-entry-points: {e}" for e in errors))
    counts = {a: sum(1 for _, x in found[0] if x == a) for a in ANSWERS}
    print(f"ok check-entry-points: libdxg's {len(wsl)} entry points "
          f"({', '.join(f'{v} {k}' for k, v in counts.items())}) and "
          f"{len(more)} more, all exported")


if __name__ == "__main__":
    main()
