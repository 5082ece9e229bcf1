#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run one program in a virtme-ng guest (TCG) with nfence.ko loaded:
#
#   scripts/vm-exec.sh [--insmod "PARAMS"] KVER PROGRAM [ARGS...]
#
# Boots /boot/vmlinuz-KVER (or the debug kernel for KVER=debug, as
# check-vm.sh does), mounts debugfs, loads build/kmod-KVER/nfence.ko with
# PARAMS (default none), runs PROGRAM ARGS (the guest sees the host's
# filesystem), unloads the module and checks the kernel log for splats.
# The guest's output is shown and kept in $BUILD/vm-exec-KVER.log. Exits
# with the program's status, or non-zero if the module would not load or
# unload, the kernel log has a splat, or the guest did not finish.
#
# "make bench-gpu" runs nfence-gpu-bench this way. A boot and a short
# program take one to three minutes under TCG.
set -euo pipefail

if [ "${1:-}" = --guest ]; then
	# In the guest: --guest KO PARAMS PROGRAM [ARGS...]
	shift
	ko=$1 params=$2
	shift 2
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	dmesg -C
	for dep in $(modinfo -F depends "$ko" | tr ',' ' '); do
		modprobe "$dep"
	done
	# shellcheck disable=SC2086 # PARAMS is a list of words
	if ! insmod "$ko" $params; then
		echo "vm-exec: insmod $ko $params failed"
		echo "vm-exec: status 1"
		exit 1
	fi
	echo "vm-exec: $(uname -r), $(nproc) cpus, nfence loaded${params:+ ($params)}"
	set +e
	"$@"
	rc=$?
	set -e
	if ! rmmod nfence; then
		echo "vm-exec: rmmod nfence failed"
		[ "$rc" -ne 0 ] || rc=1
	fi
	if dmesg | grep -E -i 'WARNING:|BUG:|Oops|Call Trace|lockdep|possible circular|KASAN|UBSAN|refcount_t|memory leak|general protection|INFO: task .* blocked'; then
		echo "vm-exec: kernel log has a splat (above)"
		[ "$rc" -ne 0 ] || rc=1
	fi
	echo "vm-exec: status $rc"
	exit "$rc"
fi

params=
if [ "${1:-}" = --insmod ]; then
	params=$2
	shift 2
fi
kver=${1:?usage: vm-exec.sh [--insmod PARAMS] KVER PROGRAM [ARGS...]}
shift
[ $# -ge 1 ] || { echo "usage: vm-exec.sh [--insmod PARAMS] KVER PROGRAM [ARGS...]" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
VM_TIMEOUT=${VM_TIMEOUT:-900}
img=/boot/vmlinuz-$kver
ko=$BUILD/kmod-$kver/nfence.ko
if [ "$kver" = debug ]; then
	img=$("$top/scripts/debug-kernel.sh" | tail -n1)/arch/x86/boot/bzImage
fi
for f in "$img" "$ko" "$1"; do
	if [ ! -r "$f" ]; then
		echo "vm-exec: missing $f (make deps; make module lib KVER=$kver)" >&2
		exit 1
	fi
done
prog=$(readlink -f "$1")
shift

log=$BUILD/vm-exec-$kver.log
mkdir -p "$BUILD"
# The guest runs a copy, so that editing the script during a run is safe.
runner=$BUILD/vm-exec-$kver.sh
cp "$0" "$runner"
# One command line for the guest, every word quoted.
cmd=$(printf '%q ' "$runner" --guest "$ko" "$params" "$prog" "$@")
echo "vm-exec: booting $kver (TCG) for $(basename "$prog"), log in $log"
set +e
timeout --kill-after=30 "$VM_TIMEOUT" \
	vng --run "$img" --disable-kvm --cpus 2 --memory 2G --cwd "$top" \
	--exec "$cmd" </dev/null 2>&1 | tee "$log"
set -e
status=$(sed -nE 's/^vm-exec: status ([0-9]+)\r?$/\1/p' "$log" | tail -n1)
if [ -z "$status" ]; then
	echo "vm-exec: the guest did not finish" >&2
	exit 1
fi
exit "$status"
