#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make coverage: which lines, functions and branches of drivers/gpu/drm/nfence
# the VM suite reaches, with the kernel's gcov and lcov.
#
#   scripts/coverage.sh            (after "make module KVER=coverage
#                                   KDIR=<debug kernel> NFENCE_GCOV=y")
#   scripts/coverage.sh --report   (only the report, from the counters of
#                                   the last VM run and KUnit tracefile)
#
# The debug kernel (scripts/debug-kernel.sh) has CONFIG_GCOV_KERNEL; the
# nfence.ko of $BUILD/kmod-coverage is built against it with NFENCE_GCOV=y
# (GCOV_PROFILE for every object). scripts/check-vm.sh debug runs the whole
# debug-kernel suite with that module (every load, the allocation-failure
# run, the stress); at its end the guest copies the counters, summed over
# every load, to $BUILD/coverage/gcda. They are put beside the module's
# .gcno files and read with lcov; the KUnit suites run on UML with gcov
# (scripts/kunit.sh with NFENCE_KUNIT_GCOV) and their counters are added.
# In $BUILD/coverage:
#   vm.info, kunit.info  the lcov tracefiles of each (SF: the repository's
#                        drivers/gpu/drm/nfence files)
#   nfence.info          both merged (lines, functions, branches)
#   html/index.html      genhtml's report
#   summary.txt          the lines below
#   unreached.txt        every function and every error return (a line
#                        that returns or sets -Exxx) no test reached
# and prints a line for each part ("coverage: vm: lines L% ...",
# "coverage: kunit: ..."), then, for both together,
#   coverage: lines L% (H of N), functions F% (H of N), branches B% (H of N)
#   coverage: goal: lines >= 90%: met|missed; functions 100%: met|missed
#   coverage: error returns reached: H of N (in ioctl handlers: H of N)
# The goals are a report, not a gate: the exit status is 0 when the report
# was made, whatever the numbers and whatever the suite's own result (its
# last line is printed, and its failures make the report's counters those
# of a partial run), and 1 when there was nothing to report.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
BUILD=${BUILD:-$top/build}
kmod=$BUILD/kmod-coverage
out=$BUILD/coverage
export BUILD

report_only=0
[ "${1:-}" = --report ] && report_only=1

if [ ! -r "$kmod/nfence.ko" ] || ! ls "$kmod"/*.gcno >/dev/null 2>&1; then
	echo "coverage: no gcov build in $kmod: make module KVER=coverage" \
		"KDIR=\$(scripts/debug-kernel.sh | tail -n1) NFENCE_GCOV=y" >&2
	exit 1
fi

if [ "$report_only" = 0 ]; then
	rm -rf "$out"
	mkdir -p "$out/gcda"
	rm -f "$kmod"/*.gcda
	# Instrumented and under KASAN: slower than the debug run.
	rc=0
	NFENCE_KO=$kmod/nfence.ko NFENCE_GCOV_OUT=$out/gcda \
		VM_TIMEOUT_DEBUG=${VM_TIMEOUT_COVERAGE:-3600} \
		scripts/check-vm.sh debug >"$out/check-vm.log" 2>&1 || rc=$?
	echo "coverage: the suite: $(tail -n1 "$out/check-vm.log") (exit $rc," \
		"log in $out/check-vm.log)"
fi
if ! ls "$out"/gcda/*.gcda >/dev/null 2>&1; then
	echo "coverage: the guest left no counters in $out/gcda" >&2
	exit 1
fi
cp "$out"/gcda/*.gcda "$kmod"/

# Every tracefile names the repository's sources, so that they merge and
# genhtml shows drivers/gpu/drm/nfence.
repo_paths() { # in out: SF paths of a copy -> the repository's
	sed -E "s#^SF:.*/(nfence_[a-z0-9_]+\.c)\$#SF:$top/drivers/gpu/drm/nfence/\1#" "$1" >"$2"
}
lcov -q --capture --directory "$kmod" --base-directory "$kmod" \
	--rc lcov_branch_coverage=1 --output-file "$out/vm.raw"
lcov -q --extract "$out/vm.raw" "$kmod/nfence_*.c" \
	--rc lcov_branch_coverage=1 --output-file "$out/vm.copy"
repo_paths "$out/vm.copy" "$out/vm.info"
# KUnit's suites, on UML with gcov (scripts/kunit.sh).
if [ "$report_only" = 0 ] || [ ! -e "$out/kunit.info" ]; then
	NFENCE_KUNIT_GCOV=$out/kunit.copy flock /tmp/nfence-kunit.lock \
		scripts/kunit.sh >"$out/kunit.log" 2>&1 || true
	echo "coverage: KUnit: $(tail -n1 "$out/kunit.log") (log in $out/kunit.log)"
	[ ! -e "$out/kunit.copy" ] || repo_paths "$out/kunit.copy" "$out/kunit.info"
fi
merge=(-a "$out/vm.info")
[ ! -e "$out/kunit.info" ] || merge+=(-a "$out/kunit.info")
lcov -q "${merge[@]}" --rc lcov_branch_coverage=1 --output-file "$out/nfence.info"
rm -f "$out/vm.raw" "$out/vm.copy" "$out/kunit.copy"
genhtml -q --branch-coverage --prefix "$top" --title "nfence.ko" \
	--output-directory "$out/html" "$out/nfence.info"

{
	for part in vm kunit; do
		[ ! -e "$out/$part.info" ] ||
			python3 "$top/scripts/coverage-report.py" --brief "$part" \
				"$out/$part.info" "$top"
	done
	python3 "$top/scripts/coverage-report.py" "$out/nfence.info" "$top" \
		"$out/unreached.txt"
} | tee "$out/summary.txt"
echo "coverage: report in $out/html/index.html, unreached in $out/unreached.txt"
