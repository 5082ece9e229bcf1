#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make coverage: which lines, functions and branches of drivers/gpu/drm/nfence
# the VM suite and the KUnit suites reach, with the kernel's gcov and lcov.
#
#   scripts/coverage.sh            (after "make module KVER=coverage
#                                   KDIR=<debug kernel> NFENCE_GCOV=y" and
#                                   the same with KVER=coverage-kunit
#                                   NFENCE_KUNIT=y; make coverage does both)
#   scripts/coverage.sh --report   (only the report, from the counters of
#                                   the last run)
#
# The debug kernel (scripts/debug-kernel.sh) has CONFIG_GCOV_KERNEL; the
# nfence.ko of $BUILD/kmod-coverage is built against it with NFENCE_GCOV=y
# (GCOV_PROFILE for every object). scripts/check-vm.sh debug runs the whole
# debug-kernel suite with that module (every load, the allocation-failure
# run, the stress); at its end the guest copies the counters, summed over
# every load, to $BUILD/coverage/gcda. They are put beside the module's
# .gcno files and read with lcov. The KUnit suites run in the same guest,
# last: $BUILD/kmod-coverage-kunit/nfence.ko has them built in (the debug
# kernel has CONFIG_KUNIT), so they run while it loads; its counters come
# out of its own build directory and are merged with the suite's. (UML,
# KUnit's usual home, built with gcov does not link with gcc 12: libgcov's
# mangle_path clashes with the kernel's.) In $BUILD/coverage:
#   nfence.info          the lcov tracefile (lines, functions, branches;
#                        SF: the repository's drivers/gpu/drm/nfence files),
#                        the VM suite's and KUnit's counts added
#   vm.info, kunit.info  the same, of each alone
#   html/index.html      genhtml's report
#   summary.txt          the lines below
#   unreached.txt        every function no test reached (called, or
#                        inlined into a caller that ran), and every error
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
kmodk=$BUILD/kmod-coverage-kunit
out=$BUILD/coverage
export BUILD

report_only=0
[ "${1:-}" = --report ] && report_only=1

for d in "$kmod" "$kmodk"; do
	if [ ! -r "$d/nfence.ko" ] || ! ls "$d"/*.gcno >/dev/null 2>&1; then
		echo "coverage: no gcov build in $d: make coverage" >&2
		exit 1
	fi
done

if [ "$report_only" = 0 ]; then
	rm -rf "$out"
	mkdir -p "$out/gcda"
	rm -f "$kmod"/*.gcda "$kmodk"/*.gcda
	# Instrumented and under KASAN: slower than the debug run.
	rc=0
	NFENCE_KO=$kmod/nfence.ko NFENCE_KUNIT_KO=$kmodk/nfence.ko \
		NFENCE_GCOV_OUT=$out/gcda \
		VM_TIMEOUT_DEBUG=${VM_TIMEOUT_COVERAGE:-3600} \
		scripts/check-vm.sh debug >"$out/check-vm.log" 2>&1 || rc=$?
	echo "coverage: the suite: $(tail -n1 "$out/check-vm.log") (exit $rc," \
		"log in $out/check-vm.log)"
fi
# tracefile NAME KMOD: the driver's lines of one module build's counters
# (the guest put them in gcda/<build directory>) as $out/NAME.info, naming
# the repository's sources instead of the build's copies, so that genhtml
# shows drivers/gpu/drm/nfence.
tracefile() {
	local name=$1 d=$2
	if ! ls "$out/gcda/${d##*/}"/*.gcda >/dev/null 2>&1; then
		echo "coverage: the guest left no counters of ${d##*/} in $out/gcda" >&2
		return 1
	fi
	# (Called where set -e is off: each step says if it failed.)
	cp "$out/gcda/${d##*/}"/*.gcda "$d"/ || return 1
	lcov -q --capture --directory "$d" --base-directory "$d" \
		--rc lcov_branch_coverage=1 --output-file "$out/raw.info" ||
		return 1
	lcov -q --extract "$out/raw.info" "$d/nfence_*.c" \
		--rc lcov_branch_coverage=1 --output-file "$out/copy.info" ||
		return 1
	sed -E "s#^SF:.*/(nfence_[a-z0-9_]+\.c)\$#SF:$top/drivers/gpu/drm/nfence/\1#" \
		"$out/copy.info" >"$out/$name.info" || return 1
	rm -f "$out/raw.info" "$out/copy.info"
}
tracefile vm "$kmod" || exit 1
if tracefile kunit "$kmodk"; then
	lcov -q -a "$out/vm.info" -a "$out/kunit.info" \
		--rc lcov_branch_coverage=1 --output-file "$out/nfence.info"
else
	echo "coverage: the report counts the VM suite only" >&2
	cp "$out/vm.info" "$out/nfence.info"
fi
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
	# What each part reaches alone.
	for n in vm kunit; do
		[ -e "$out/$n.info" ] || continue
		echo "coverage: $n alone: $(lcov --summary "$out/$n.info" 2>&1 |
			sed -nE 's/^ *lines\.+: //p')"
	done
} | tee "$out/summary.txt"
echo "coverage: report in $out/html/index.html, unreached in $out/unreached.txt"
