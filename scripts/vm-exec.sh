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
	# In the guest: --guest LIB KO PARAMS PROGRAM [ARGS...]
	shift
	# shellcheck source=scripts/lib.sh
	. "$1"
	ko=$2 params=$3
	shift 3
	# The host keeps the kernel console apart: everything of ours to stdout.
	exec 2>&1
	echo "vm-exec: guest started"
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
	dmesg >/tmp/nfence-dmesg
	if nfence_splats /tmp/nfence-dmesg; then
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
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
BUILD=${BUILD:-$top/build}
VM_TIMEOUT=${VM_TIMEOUT:-900}
img=$(nfence_vm_image "$kver")
ko=$BUILD/kmod-$kver/nfence.ko
for f in "$img" "$ko" "$1"; do
	if [ ! -r "$f" ]; then
		echo "vm-exec: missing $f (make deps; make module lib KVER=$kver)" >&2
		exit 1
	fi
done
prog=$(readlink -f "$1")
shift

log=$BUILD/vm-exec-$kver.log
console=$BUILD/vm-exec-$kver.console.log
mkdir -p "$BUILD"
# The guest runs copies, so that editing the scripts during a run is safe.
runner=$BUILD/vm-exec-$kver.sh
cp "$0" "$runner"
cp "$top/scripts/lib.sh" "$BUILD/vm-exec-lib-$kver.sh"
# One command line for the guest, every word quoted.
cmd=$(printf '%q ' "$runner" --guest "$BUILD/vm-exec-lib-$kver.sh" "$ko" \
	"$params" "$prog" "$@")
echo "vm-exec: booting $kver (TCG) for $(basename "$prog"), log in $log"
rc=0
nfence_vng "$kver" "$VM_TIMEOUT" "$log" "$console" "$cmd" || rc=$?
if ! grep -q '^vm-exec: guest started' "$log"; then
	why=$(nfence_vm_start_failure "$console" "$rc")
	echo "vm-exec: infrastructure error: the guest never ran the program: $why" >&2
	exit 2
fi
status=$(sed -nE 's/^vm-exec: status ([0-9]+)\r?$/\1/p' "$log" | tail -n1)
if [ -z "$status" ]; then
	echo "vm-exec: the guest did not finish (status $rc); last lines of the console:" >&2
	tail -n 40 "$console" >&2
	exit 1
fi
exit "$status"
