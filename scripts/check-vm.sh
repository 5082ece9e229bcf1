#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a kernel under virtme-ng (TCG: KVM does not work on these machines),
# load the freshly built nfence.ko and run the suites in it (scripts/vm-run.sh).
#
#   scripts/check-vm.sh [--demo|--main] KVER
#   scripts/check-vm.sh [--demo|--main] debug
#
# --main runs everything but the other adapter models' loads (make check
# runs those once per kernel series, scripts/check.sh); --demo only loads
# the module and runs the demos.
#
# KVER is an installed Debian kernel (/boot/vmlinuz-KVER, nfence.ko from
# build/kmod-KVER). "debug" is the KASAN + lockdep + kmemleak kernel of
# scripts/debug-kernel.sh (nfence.ko from build/kmod-debug).
#
# The guest sees the host filesystem, so it runs the binaries in $BUILD
# directly. Its output is in $BUILD/vm-KVER.log, the kernel console in
# $BUILD/vm-KVER.console.log. Closes with
#   vm-KVER: N passed, N failed, N skipped, N errors
# and exits 0 when all passed, 1 when a test failed (including a guest that
# died or hung during the tests, or a kernel log with a splat), 2 when the
# guest never started the tests (an infrastructure error: the reason and the
# console's last lines are printed).
set -euo pipefail

mode=full
case ${1:-} in
--demo | --main)
	mode=${1#--}
	shift
	;;
esac
kver=${1:?usage: check-vm.sh [--demo|--main] KVER}
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
BUILD=${BUILD:-$top/build}
VM_TIMEOUT=${VM_TIMEOUT:-1500}
# NFENCE_KO: test that nfence.ko instead (scripts/mutants.sh).
ko=${NFENCE_KO:-$BUILD/kmod-$kver/nfence.ko}
img=$(nfence_vm_image "$kver")
if [ "$kver" = debug ]; then
	# KASAN and lockdep make everything several times slower.
	VM_TIMEOUT=${VM_TIMEOUT_DEBUG:-2400}
fi

for f in "$img" "$ko"; do
	if [ ! -r "$f" ]; then
		echo "check-vm: missing $f (make deps; make module KVER=$kver)" >&2
		echo "vm-$kver: 0 passed, 0 failed, 0 skipped, 1 errors"
		exit 2
	fi
done

log=$BUILD/vm-$kver.log
console=$BUILD/vm-$kver.console.log
mkdir -p "$BUILD"
# The guest runs copies, so that editing the scripts during a run is safe.
runner=$BUILD/vm-run-$kver.sh
cp "$top/scripts/vm-run.sh" "$runner"
cp "$top/scripts/lib.sh" "$BUILD/vm-lib-$kver.sh"
cp "$top/tests/igt/run-igt.sh" "$BUILD/run-igt-$kver.sh"

# NFENCE_HARNESS_SELFTEST=1: nfence.ko was built with the harness
# self-test; the main load leaks on purpose and this run must fail.
env=
if [ -n "${NFENCE_HARNESS_SELFTEST:-}" ]; then
	env="NFENCE_INSMOD_EXTRA=harness_leak=1 "
fi
# NFENCE_GCOV_OUT: a host directory that receives nfence.ko's gcov
# counters at the end of the run (scripts/coverage.sh); the guest may
# write it.
if [ -n "${NFENCE_GCOV_OUT:-}" ]; then
	env="${env}NFENCE_GCOV_OUT=$NFENCE_GCOV_OUT "
	export NFENCE_VM_RWDIR=$NFENCE_GCOV_OUT
fi

# NFENCE_KUNIT_KO: an nfence.ko built with its KUnit suites (NFENCE_KUNIT=y,
# for the debug kernel), loaded after the suite to run them.
if [ -n "${NFENCE_KUNIT_KO:-}" ]; then
	env="${env}NFENCE_KUNIT_KO=$NFENCE_KUNIT_KO "
fi

# A guest that never reaches the tests did not run any of nfence (the
# module is loaded after "vm-run: kernel"): booted again once, since TCG
# sometimes panics a booting kernel (Documentation/testing.rst). The first
# attempt's console stays in $console.1.
for attempt in 1 2; do
	echo "check-vm: booting $kver (TCG), log in $log, console in $console"
	start=$SECONDS
	rc=0
	nfence_vng "$kver" "$VM_TIMEOUT" "$log" "$console" \
		"$env$runner $mode $kver $ko $BUILD $top $BUILD/vm-lib-$kver.sh" || rc=$?
	echo "check-vm: guest exited with status $rc after $((SECONDS - start)) s"
	grep -aq '^vm-run: kernel' "$log" && break
	why=$(nfence_vm_start_failure "$console" "$rc")
	if [ "$attempt" = 1 ]; then
		echo "check-vm: the guest never started the tests ($why); booting it once more" >&2
		mv "$console" "$console.1"
		continue
	fi
	echo "check-vm: infrastructure error: the guest never started the tests, twice: $why" >&2
	echo "vm-$kver: 0 passed, 0 failed, 0 skipped, 1 errors"
	exit 2
done

total_pass=0 total_fail=0 total_skip=0 total_err=0
while read -r line; do
	read -r p f s e < <(nfence_counts "$line")
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + s))
	total_err=$((total_err + e))
done < <(grep -aE '^(igt|kselftest|kunit|vm): [0-9]+ passed' "$log" | tr -d '\r')

# The guest's totals of the suite lines it printed: the console may have
# lost some of them (vm-run.sh), and the guest's own count is the result.
guest=$(grep -aE '^vm-run: totals [0-9]+ passed' "$log" | tail -n1 | tr -d '\r')
if [ -n "$guest" ]; then
	read -r gp gf gs ge < <(nfence_counts "$guest")
	if [ "$gp $gf $gs $ge" != "$total_pass $total_fail $total_skip $total_err" ]; then
		echo "check-vm: the console lost part of the guest's output ($(tr -cd '\000' <"$log" | wc -c) NUL bytes in $log): read $total_pass passed, $total_fail failed, $total_skip skipped, $total_err errors; the guest counted $gp, $gf, $gs, $ge, which count" >&2
		total_pass=$gp total_fail=$gf total_skip=$gs total_err=$ge
	fi
elif grep -aq '^vm-run: complete' "$log"; then
	echo "check-vm: FAIL: the guest's totals line did not come through" >&2
	total_err=$((total_err + 1))
fi

if ! grep -aq '^vm-run: complete' "$log"; then
	# The tests started and did not finish: a hang, an oops or a panic
	# in the middle of them is a test failure, not an infrastructure one.
	echo "check-vm: FAIL: the guest stopped during the tests (status $rc); last lines of the console:" >&2
	sed -n '/nfence-vm-run: start/,$p' "$console" | nfence_splats - >&2 || true
	tail -n 40 "$console" >&2
	total_fail=$((total_fail + 1))
fi
echo "vm-$kver: $total_pass passed, $total_fail failed, $total_skip skipped, $total_err errors"
if [ "$total_err" -ne 0 ]; then
	exit 2
fi
[ "$total_fail" -eq 0 ]
