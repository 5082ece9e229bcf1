#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a kernel under virtme-ng (TCG: KVM does not work on these machines),
# load the freshly built nfence.ko and run the suites in it (scripts/vm-run.sh).
#
#   scripts/check-vm.sh [--demo] KVER
#   scripts/check-vm.sh [--demo] debug
#
# KVER is an installed Debian kernel (/boot/vmlinuz-KVER, nfence.ko from
# build/kmod-KVER). "debug" is the KASAN + lockdep + kmemleak kernel of
# scripts/debug-kernel.sh (nfence.ko from build/kmod-debug).
#
# The guest sees the host filesystem, so it runs the binaries in $BUILD
# directly. Prints the guest's per-suite lines and a closing
# "vm-KVER: N passed, N failed, N skipped"; exits non-zero on any failure,
# on a guest that did not finish, or on a kernel log with a splat.
set -euo pipefail

mode=full
if [ "${1:-}" = --demo ]; then
	mode=demo
	shift
fi
kver=${1:?usage: check-vm.sh [--demo] KVER}
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
VM_TIMEOUT=${VM_TIMEOUT:-1500}
img=/boot/vmlinuz-$kver
ko=$BUILD/kmod-$kver/nfence.ko
if [ "$kver" = debug ]; then
	img=$("$top/scripts/debug-kernel.sh" | tail -n1)/arch/x86/boot/bzImage
	# KASAN and lockdep make everything several times slower.
	VM_TIMEOUT=${VM_TIMEOUT_DEBUG:-2400}
fi

for f in "$img" "$ko"; do
	if [ ! -r "$f" ]; then
		echo "check-vm: missing $f (make deps; make module KVER=$kver)" >&2
		exit 1
	fi
done

log=$BUILD/vm-$kver.log
mkdir -p "$BUILD"
# The guest runs a copy, so that editing the script during a run is safe.
runner=$BUILD/vm-run-$kver.sh
cp "$top/scripts/vm-run.sh" "$runner"
boot() {
	echo "check-vm: booting $kver (TCG), log in $log"
	set +e
	timeout --kill-after=30 "$VM_TIMEOUT" \
		vng --run "$img" --disable-kvm --cpus 2 --memory 2G \
		--cwd "$top" --exec "$runner $mode $kver $ko $BUILD $top" \
		</dev/null 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	set -e
}
boot
# A guest that never reached the runner (seen under TCG on a loaded
# machine: virtme's boot gave up before running anything, no output at
# all) is an infrastructure failure, not a test result: boot once more.
if ! grep -q '^vm-run: kernel' "$log"; then
	echo "check-vm: the guest never started the tests (exit $rc); retrying once" >&2
	boot
fi

total_pass=0 total_fail=0 total_skip=0
while read -r p f s; do
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + ${s:-0}))
done < <(sed -nE 's/^(igt|kselftest|vm): ([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?\r?$/\2 \3 \5/p' "$log")

if ! grep -q '^vm-run: complete' "$log"; then
	echo "check-vm: the guest did not complete (exit $rc)" >&2
	total_fail=$((total_fail + 1))
fi
echo "vm-$kver: $total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
