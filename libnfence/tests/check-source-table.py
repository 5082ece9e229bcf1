#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# Documentation/libnfence.rst's "Sources" table names every .c file of
# libnfence/src once, and no other: fails listing the files the table
# misses, names twice or names but src/ does not have.
#
#   check-source-table.py SRCDIR RST
import os
import re
import sys


def table_files(rst):
    """The file names of the first column of the "Sources" table."""
    with open(rst, encoding="utf-8") as f:
        lines = f.read().splitlines()
    try:
        start = lines.index("Sources")
    except ValueError:
        sys.exit(f"check-source-table: {rst}: no \"Sources\" section")
    # The table: from its first rule to its third (top, header, bottom).
    rules, names = 0, []
    for line in lines[start + 2:]:
        if re.fullmatch(r"=+( +=+)+", line):
            rules += 1
            if rules == 3:
                return names
            continue
        m = re.match(r"``(\w+\.c)``", line)
        if rules == 2 and m:
            names.append(m.group(1))
    sys.exit(f"check-source-table: {rst}: the \"Sources\" table does not "
             "end")


def main():
    src, rst = sys.argv[1], sys.argv[2]
    files = {f for f in os.listdir(src) if f.endswith(".c")}
    names = table_files(rst)
    errors = []
    for f in sorted(files - set(names)):
        errors.append(f"src/{f} is not in the table")
    for f in sorted(set(names) - files):
        errors.append(f"the table names {f}, which src/ does not have")
    for f in sorted({n for n in names if names.count(n) > 1}):
        errors.append(f"the table names {f} twice")
    if errors:
        sys.exit("\n".join(f"check-source-table: {rst}: {e}"
                           for e in errors))
    print(f"ok check-source-table: {len(names)} files, as in src/")


if __name__ == "__main__":
    main()
