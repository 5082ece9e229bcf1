#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make docs: Documentation/ as HTML in $BUILD/docs/html, with the driver's
# and the uapi's kernel-doc pulled in by the kernel's kernel-doc extension
# (Documentation/conf.py). Fails on any Sphinx warning and on any warning
# kernel-doc prints (a ":doc:" section that does not exist, a member
# without its description), which Sphinx itself lets through.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
sphinx-build -E -W --keep-going -q -b html -d "$BUILD/docs/doctrees" \
	"$top/Documentation" "$BUILD/docs/html" >"$log" 2>&1 || status=$?
cat "$log"
if [ "$status" -ne 0 ] || grep -qiE 'warning|error' "$log"; then
	echo "docs: failed (see above)" >&2
	exit 1
fi
echo "docs: $BUILD/docs/html/index.html"
