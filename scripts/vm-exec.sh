#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run one program in a virtme-ng guest (TCG) with nfence.ko loaded:
#
#   scripts/vm-exec.sh [--insmod "PARAMS"] [--modprobe KO | --no-load]
#                      [--virtio-gpu] KVER PROGRAM [ARGS...]
#
# Boots /boot/vmlinuz-KVER (or the debug kernel for KVER=debug, as
# check-vm.sh does), mounts debugfs, loads build/kmod-KVER/nfence.ko with
# PARAMS (default none), runs PROGRAM ARGS (the guest sees the host's
# filesystem), unloads the module and checks the kernel log for splats.
# The guest's output is shown and kept in $BUILD/vm-exec-KVER.log. Exits
# with the program's status, or non-zero if the module would not load or
# unload, the kernel log has a splat, or the guest did not finish.
#
# --modprobe KO loads KO (a DKMS-built nfence.ko[.xz]) the way an installed
# module is loaded instead: KO goes to /lib/modules/KVER/updates/dkms (in
# an overlay the guest mounts there, so the host's tree is not written),
# depmod, then "modprobe nfence PARAMS", which must load its dependencies
# (drm & co) itself and take the module from updates/dkms.
#
# --no-load loads nothing: PROGRAM loads nfence and unloads it (the
# installed packages' check, scripts/deb.sh, which boots with
# NFENCE_VM_ROOT, scripts/lib.sh); nfence still loaded after it fails the
# run.
#
# --virtio-gpu gives the guest a virtio-gpu device too (another DRM
# driver, for the syncobj bridge's test: scripts/virtio-gpu-check.sh).
#
# "make bench-gpu" runs nfence-gpu-bench this way; "make dkms-check" runs
# nfence-info with --modprobe. A boot and a short
# program take one to three minutes under TCG.
set -euo pipefail

if [ "${1:-}" = --guest ]; then
	# In the guest: --guest LIB KO PARAMS LOADER PROGRAM [ARGS...]
	shift
	# shellcheck source=scripts/lib.sh
	. "$1"
	ko=$2 params=$3 loader=$4
	shift 4
	# The host keeps the kernel console apart: everything of ours to stdout.
	exec 2>&1
	echo "vm-exec: guest started"
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	dmesg -C
	case $loader in
	modprobe)
		# Installed as DKMS installs it, in an overlay of the tree
		# whose upper layer is a tmpfs of its own (virtme-ng's /tmp is
		# an overlay, which cannot hold an upper layer), so the host's
		# tree is never written whatever virtme-ng mounts.
		mods=/lib/modules/$(uname -r)
		ovl=$(mktemp -d)
		mount -t tmpfs nfence-mods "$ovl"
		mkdir -p "$ovl/up" "$ovl/work"
		if ! mount -t overlay overlay -o \
			"lowerdir=$mods,upperdir=$ovl/up,workdir=$ovl/work" "$mods"; then
			echo "vm-exec: cannot mount an overlay on $mods"
			echo "vm-exec: status 1"
			exit 1
		fi
		mkdir -p "$mods/updates/dkms"
		cp "$ko" "$mods/updates/dkms/"
		depmod -a
		if ! nfence_modprobe_dkms "$params"; then
			echo "vm-exec: status 1"
			exit 1
		fi
		;;
	insmod)
		for dep in $(modinfo -F depends "$ko" | tr ',' ' '); do
			modprobe "$dep"
		done
		# shellcheck disable=SC2086 # PARAMS is a list of words
		if ! insmod "$ko" $params; then
			echo "vm-exec: insmod $ko $params failed"
			echo "vm-exec: status 1"
			exit 1
		fi
		;;
	esac
	if [ "$loader" = none ]; then
		echo "vm-exec: $(uname -r), $(nproc) cpus, nothing loaded: $(basename "$1") loads nfence"
	else
		echo "vm-exec: $(uname -r), $(nproc) cpus, nfence loaded${params:+ ($params)}"
	fi
	set +e
	"$@"
	rc=$?
	set -e
	if [ "$loader" = none ]; then
		if grep -q '^nfence ' /proc/modules; then
			echo "vm-exec: $(basename "$1") left nfence loaded"
			rmmod nfence || true
			[ "$rc" -ne 0 ] || rc=1
		fi
	elif ! rmmod nfence; then
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

params='' loader=insmod ko=''
usage="usage: vm-exec.sh [--insmod PARAMS] [--modprobe KO | --no-load] [--virtio-gpu] KVER PROGRAM [ARGS...]"
while :; do
	case ${1:-} in
	--insmod) params=$2; shift 2 ;;
	--modprobe) loader=modprobe ko=$(readlink -f "$2"); shift 2 ;;
	--no-load) loader=none ko=none; shift ;;
	--virtio-gpu) export NFENCE_VM_QEMU_OPTS="-device virtio-gpu-pci"; shift ;;
	*) break ;;
	esac
done
kver=${1:?$usage}
shift
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
BUILD=${BUILD:-$top/build}
VM_TIMEOUT=${VM_TIMEOUT:-900}
img=$(nfence_vm_image "$kver")
[ -n "$ko" ] || ko=$BUILD/kmod-$kver/nfence.ko
for f in "$img" "$ko" "$1"; do
	if [ "$f" != none ] && [ ! -r "$f" ]; then
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
	"$params" "$loader" "$prog" "$@")
# A guest that never started (nothing of nfence loaded yet) is booted once
# more, as check-vm.sh does (Documentation/testing.rst).
for attempt in 1 2; do
	echo "vm-exec: booting $kver (TCG) for $(basename "$prog"), log in $log"
	rc=0
	nfence_vng "$kver" "$VM_TIMEOUT" "$log" "$console" "$cmd" || rc=$?
	grep -q '^vm-exec: guest started' "$log" && break
	why=$(nfence_vm_start_failure "$console" "$rc")
	if [ "$attempt" = 1 ]; then
		echo "vm-exec: the guest never started ($why); booting it once more" >&2
		mv "$console" "$console.1"
		continue
	fi
	echo "vm-exec: infrastructure error: the guest never ran the program, twice: $why" >&2
	exit 2
done
status=$(sed -nE 's/^vm-exec: status ([0-9]+)\r?$/\1/p' "$log" | tail -n1)
if [ -z "$status" ]; then
	echo "vm-exec: the guest did not finish (status $rc); last lines of the console:" >&2
	tail -n 40 "$console" >&2
	exit 1
fi
exit "$status"
