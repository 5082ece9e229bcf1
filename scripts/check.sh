#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: every suite, summed into one closing line.
#
#   scripts/check.sh KVER...
#
# Steps: build for every kernel, libnfence host tests (with an install into
# a scratch DESTDIR), the Debian packages (built, lintian, installed
# with apt in a throwaway root where DKMS builds the module for every
# kernel, a VM per kernel booted on it: modprobe of DKMS's module, the
# installed tools; then apt-get purge; this is make check's DKMS step too:
# make dkms-check, which builds the same DKMS tree, is not run), the VM
# suites on every kernel (IGT, kselftest, demo, dmesg check; the other
# adapter models' loads once per kernel series), the syncobj bridge with
# a virtio-gpu device (6.12), and on a KASAN + lockdep +
# kmemleak debug build of 6.12 (the KUnit suites too, built into a second
# nfence.ko), KUnit (UML), lint (run in the background, see below). Each step ends with a
# "name: N passed, N failed, N skipped[, N errors]" line (scripts/lib.sh).
# A step that exits non-zero without counting anything counts as one
# error, as does a step that prints no result line at all: an error means
# the step could not test (no guest, a missing tool), a failure that a test
# ran and failed. Closes with a per-step table, the lines that name what
# failed (CI shows only the end of the output), and
#   N passed, N failed, N skipped, N errors
# and exits non-zero if anything failed or erred.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
BUILD=${BUILD:-$top/build}
mkdir -p "$BUILD"
kvers=("$@")
if [ "${#kvers[@]}" -eq 0 ]; then
	echo "check: no supported kernel with headers installed (make deps)" >&2
	exit 1
fi

P=0 F=0 S=0 E=0
summary=()
failures=()
re='^[A-Za-z0-9_.+~-]+: [0-9]+ passed, [0-9]+ failed'

step() { # name command...
	local name=$1 log rc line p=0 f=0 s=0 e=0 start=$SECONDS note=
	shift
	log=$BUILD/check-$name.log
	echo "=== $name: $*"
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	# -a: a guest's console can bring NUL bytes (check-vm.sh).
	line=$(grep -aE "$re" "$log" | tail -n1 | tr -d '\r')
	if [ -n "$line" ]; then
		read -r p f s e < <(nfence_counts "$line")
	elif ! read -r p f s e < <(nfence_ktap_totals "$log"); then
		# kselftest harness output (libnfence host tests) or nothing.
		e=1 note="no result line"
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && [ "$e" -eq 0 ]; then
		e=1 note="exit $rc with nothing counted"
	fi
	P=$((P + p)) F=$((F + f)) S=$((S + s)) E=$((E + e))
	if [ "$f" -ne 0 ] || [ "$e" -ne 0 ]; then
		# What failed, by name, for the closing lines: CI shows only
		# the end of the output.
		while IFS= read -r line; do
			failures+=("$name: $line")
		done < <(grep -aE '^([A-Za-z0-9_.+-]+: )?(fail: |not ok )|: FAIL|^check-vm: FAIL' "$log" |
			tr -d '\r' | head -n 20)
	fi
	summary+=("$(printf '%-28s %4d passed %4d failed %4d skipped %2d errors %5ds %s' \
		"$name" "$p" "$f" "$s" "$e" $((SECONDS - start)) "$note")")
}

build_all() {
	local k
	for k in "${kvers[@]}"; do
		if ! make -s module KVER="$k"; then
			echo "build: 0 passed, 1 failed"
			return 1
		fi
	done
	if ! make -s lib igt selftests stress; then
		echo "build: 0 passed, 1 failed"
		return 1
	fi
	echo "build: ${#kvers[@]} passed, 0 failed"
}

# Background work at idle CPU priority (SCHED_IDLE, nice 19): a TCG guest
# keeps about one of the two cores busy, and these take what the other
# steps leave. In this order, because the VM steps wait for the first: the
# debug kernel, KUnit's UML kernel (their steps wait for them through the
# locks debug-kernel.sh and kunit.sh take, and redo, and report, a build
# that failed here), then lint, whose step only collects its result.
# NFENCE_BACKGROUND=0 runs all of it in the steps instead.
bg_pid=
bg_lint=$BUILD/check-lint-background.log
if [ "${NFENCE_BACKGROUND:-1}" != 0 ]; then
	rm -f "$bg_lint" "$bg_lint.rc"
	(
		chrt --idle -p 0 "$BASHPID" >/dev/null
		renice -n 19 -p "$BASHPID" >/dev/null
		start=$SECONDS
		scripts/debug-kernel.sh >/dev/null 2>"$BUILD/check-debug-kernel.log" &&
			echo "background: debug kernel ready after $((SECONDS - start)) s"
		scripts/kunit.sh --build-only >"$BUILD/check-kunit-build.log" 2>&1 &&
			echo "background: KUnit kernel ready after $((SECONDS - start)) s"
		rc=0
		scripts/lint.sh "${kvers[@]}" >"$bg_lint" 2>&1 || rc=$?
		echo "$rc" >"$bg_lint.rc"
		echo "background: lint done after $((SECONDS - start)) s"
	) >"$BUILD/check-background.log" 2>&1 &
	bg_pid=$!
fi

# lint_result: lint's output and status, from the background run.
lint_result() {
	wait "$bg_pid"
	cat "$bg_lint"
	return "$(cat "$bg_lint.rc" 2>/dev/null || echo 1)"
}

step build build_all
step libnfence make -s check-host
step deb scripts/deb.sh check "${kvers[@]}"
# The other adapter models' loads run once per kernel series: the debug
# kernel runs them on its series, the Debian kernel of that series runs
# the main load only (the few compat helpers, nfence_compat.h, are all on
# the main load's paths).
debug_series=$(scripts/debug-kernel.sh --series)
for k in "${kvers[@]}"; do
	case $k in
	"$debug_series".*) step "vm-$k" scripts/check-vm.sh --main "$k" ;;
	*) step "vm-$k" scripts/check-vm.sh "$k" ;;
	esac
done
step virtio-gpu scripts/virtio-gpu-check.sh "${kvers[@]}"
step vm-debug make -s check-debug
step kunit scripts/kunit.sh
if [ -n "$bg_pid" ]; then
	step lint lint_result
	cat "$BUILD/check-background.log"
else
	step lint scripts/lint.sh "${kvers[@]}"
fi

echo
echo "=== summary"
printf '%s\n' "${summary[@]}"
if [ "${#failures[@]}" -ne 0 ]; then
	echo "=== what failed (first 20 lines of each failing step)"
	printf '%s\n' "${failures[@]}"
fi
echo "check: took $SECONDS s"
echo "$P passed, $F failed, $S skipped, $E errors"
[ "$F" -eq 0 ] && [ "$E" -eq 0 ]
