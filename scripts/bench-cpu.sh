#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# "make bench-cpu": nfence-cpu-bench in a VM on each kernel given, in that
# order, then one plot of every run:
#
#   scripts/bench-cpu.sh KVER... [-- BENCH_ARGS...]
#
# Each run's results, taken from the "csv: " lines of its output, go to
# $BUILD/cpu-bench-KVER.csv; the plot of them all to $BUILD/cpu-bench.png
# (scripts/nfence-cpu-bench-plot.py, with Debian's /usr/bin/python3). Exits non-zero if a run failed; the
# plot is made of the runs that produced results.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
kvers=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	kvers+=("$1")
	shift
done
[ $# -gt 0 ] && shift
[ ${#kvers[@]} -gt 0 ] || { echo "usage: bench-cpu.sh KVER... [-- ARGS...]" >&2; exit 2; }

rc=0
csvs=()
for kver in "${kvers[@]}"; do
	"$top/scripts/vm-exec.sh" "$kver" "$BUILD/libnfence/nfence-cpu-bench" \
		-o - "$@" || rc=1
	csv=$BUILD/cpu-bench-$kver.csv
	sed -nE 's/^csv: (.*[^\r])\r?$/\1/p' "$BUILD/vm-exec-$kver.log" >"$csv"
	if [ "$(wc -l <"$csv")" -gt 1 ]; then
		csvs+=("$csv")
		echo "bench-cpu: $kver: results in $csv"
	fi
done
if [ ${#csvs[@]} -gt 0 ]; then
	"$top/scripts/nfence-cpu-bench-plot.py" -o "$BUILD/cpu-bench.png" \
		"${csvs[@]}"
	echo "bench-cpu: plot in $BUILD/cpu-bench.png"
fi
exit "$rc"
