#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make coverage: which lines, functions and branches of drivers/gpu/drm/nfence
# the VM suite reaches, with the kernel's gcov and lcov.
#
#   scripts/coverage.sh            (after "make module KVER=coverage
#                                   KDIR=<debug kernel> NFENCE_GCOV=y")
#   scripts/coverage.sh --report   (only the report, from the counters of
#                                   the last run)
#
# The debug kernel (scripts/debug-kernel.sh) has CONFIG_GCOV_KERNEL; the
# nfence.ko of $BUILD/kmod-coverage is built against it with NFENCE_GCOV=y
# (GCOV_PROFILE for every object). scripts/check-vm.sh debug runs the whole
# debug-kernel suite with that module (every load, the allocation-failure
# run, the stress); at its end the guest copies the counters, summed over
# every load, to $BUILD/coverage/gcda. They are put beside the module's
# .gcno files and read with lcov. KUnit's suites are not counted: UML
# built with gcov does not link with gcc 12 (libgcov's mangle_path clashes
# with the kernel's), and the debug kernel has no KUnit to run them as a
# module. In $BUILD/coverage:
#   nfence.info          the lcov tracefile (lines, functions, branches;
#                        SF: the repository's drivers/gpu/drm/nfence files)
#   html/index.html      genhtml's report
#   summary.txt          the lines below
#   unreached.txt        every function no test called, and every error
#                        return (a line that returns or sets -Exxx) not
#                        known to be reached: not reached, no evidence,
#                        undecided (scripts/coverage-report.py says how
#                        each is judged)
# and prints
#   coverage: lines L% (H of N), functions F% (H of N), branches B% (H of N)
#   coverage: goal: lines >= 90%: met|missed; functions 100%: met|missed;
#             every error return of an ioctl handler: met|missed
#   coverage: error returns: R reached, N not reached, E no evidence,
#             U undecided (and the same for ioctl handlers), the rules used
#   coverage: validate: how often the rules agree with real counters
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

lcov -q --capture --directory "$kmod" --base-directory "$kmod" \
	--rc lcov_branch_coverage=1 --output-file "$out/raw.info"
lcov -q --extract "$out/raw.info" "$kmod/nfence_*.c" \
	--rc lcov_branch_coverage=1 --output-file "$out/copy.info"
# The repository's sources instead of the build's copies, so that genhtml
# shows drivers/gpu/drm/nfence.
sed -E "s#^SF:.*/(nfence_[a-z0-9_]+\.c)\$#SF:$top/drivers/gpu/drm/nfence/\1#" \
	"$out/copy.info" >"$out/nfence.info"
rm -f "$out/raw.info" "$out/copy.info"
genhtml -q --branch-coverage --prefix "$top" --title "nfence.ko" \
	--output-directory "$out/html" "$out/nfence.info"

{
	python3 "$top/scripts/coverage-report.py" "$out/nfence.info" "$top" \
		"$out/unreached.txt"
	# How far the branch and flow rules can be trusted on this run:
	# checked on the error returns whose counters say it (never fails
	# the report).
	python3 "$top/scripts/coverage-report.py" --validate \
		"$out/nfence.info" || true
} | tee "$out/summary.txt"
echo "coverage: report in $out/html/index.html, unreached in $out/unreached.txt"
