#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# nfence under DKMS (Documentation/installation.rst):
#
#   scripts/dkms.sh version         print VERSION
#   scripts/dkms.sh source DIR      stage the DKMS source tree in DIR
#   scripts/dkms.sh install         (root) put it in /usr/src/nfence-VERSION,
#                                   dkms add, dkms install for every kernel
#                                   with headers; AUTOINSTALL rebuilds it for
#                                   each kernel installed later
#   scripts/dkms.sh check [--no-vm] KVER...
#                                   make dkms-check: dkms add + build for each
#                                   KVER in a scratch DKMS tree (nothing is
#                                   installed on this machine), each module
#                                   checked (vermagic, depends); then the
#                                   last KVER's module in a VM, loaded by
#                                   modprobe from /lib/modules/KVER/updates/dkms
#                                   (vm-exec.sh --modprobe), nfence-info run;
#                                   --no-vm leaves the VM out (and says so)
#
# VERSION is the release's (scripts/release.sh version: the top-level VERSION
# file). check prints one line per check and "dkms: N passed, N failed,
# 0 skipped".
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
drv=$top/drivers/gpu/drm/nfence

version() {
	"$top/scripts/release.sh" version
}

# stage DIR: the files DKMS builds from, laid out as in the repository.
stage() {
	local dir=$1 ver
	ver=$(version)
	rm -rf "$dir"
	mkdir -p "$dir/drivers/gpu/drm/nfence" "$dir/include/uapi/drm"
	rsync -a --exclude=tests --exclude='*.o' --exclude='*.ko' \
		--exclude='.*.cmd' --exclude='*.mod*' --exclude=Module.symvers \
		--exclude=modules.order "$drv/" "$dir/drivers/gpu/drm/nfence/"
	cp "$top/include/uapi/drm/nfence_drm.h" "$dir/include/uapi/drm/"
	cp "$top/Kconfig" "$dir/Kconfig"
	sed "s/#MODULE_VERSION#/$ver/" "$top/dkms.conf.in" >"$dir/dkms.conf"
}

case ${1:-} in
version)
	version
	;;
source)
	stage "${2:?usage: dkms.sh source DIR}"
	echo "dkms: source tree in $2"
	;;
install)
	ver=$(version)
	if [ "$(id -u)" -ne 0 ]; then
		echo "dkms: install needs root" >&2
		exit 1
	fi
	command -v dkms >/dev/null || { echo "dkms: no dkms (apt-get install dkms)" >&2; exit 1; }
	if dkms status -m nfence -v "$ver" | grep -q .; then
		dkms remove -m nfence -v "$ver" --all
	fi
	stage "/usr/src/nfence-$ver"
	dkms add -m nfence -v "$ver"
	for d in /lib/modules/*/build; do
		[ -d "$d" ] || continue
		k=$(basename "$(dirname "$d")")
		dkms install -m nfence -v "$ver" -k "$k"
	done
	dkms status -m nfence
	;;
check)
	shift
	vm=1
	if [ "${1:-}" = --no-vm ]; then
		vm=0
		shift
	fi
	ver=$(version)
	pass=0 fail=0 errors=0
	result() {
		echo "dkms: $1: $2"
		if [ "$1" = pass ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
	}
	if ! command -v dkms >/dev/null; then
		result fail "no dkms (make deps)"
		echo "dkms: $pass passed, $fail failed, 0 skipped"
		exit 1
	fi
	if [ $# -eq 0 ]; then
		echo "dkms: no kernel to build for (make deps)" >&2
		exit 1
	fi
	work=$BUILD/dkms-check
	rm -rf "$work"
	mkdir -p "$work/tree" "$work/install"
	stage "$work/src/nfence-$ver"
	trees=(--dkmstree "$work/tree" --sourcetree "$work/src"
		--installtree "$work/install")
	# dkms signs what it builds, with a key it makes when there is none:
	# a scratch key, so the check leaves /var/lib/dkms alone.
	export mok_signing_key=$work/mok.key mok_certificate=$work/mok.pub
	if dkms add -m nfence -v "$ver" "${trees[@]}" >"$work/add.log" 2>&1; then
		result pass "dkms add nfence/$ver"
	else
		cat "$work/add.log"
		result fail "dkms add nfence/$ver"
	fi
	ko=
	for k in "$@"; do
		start=$SECONDS
		if ! dkms build -m nfence -v "$ver" -k "$k" "${trees[@]}" \
			>"$work/build-$k.log" 2>&1; then
			cat "$work/build-$k.log"
			find "$work/tree/nfence/$ver/build" -name make.log -exec tail -n 40 {} \; 2>/dev/null
			result fail "dkms build nfence/$ver for $k"
			continue
		fi
		ko=$(find "$work/tree/nfence/$ver/$k" -name 'nfence.ko*' | head -n1)
		magic=$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)
		deps=$(modinfo -F depends "$ko" 2>/dev/null)
		if [ -z "$ko" ] || [ "$magic" != "$k" ]; then
			result fail "dkms build nfence/$ver for $k: module '${ko:-none}', vermagic '$magic'"
		elif ! echo ",$deps," | grep -q ',drm,'; then
			result fail "dkms build nfence/$ver for $k: depends '$deps' lacks drm"
		else
			result pass "dkms build nfence/$ver for $k ($((SECONDS - start)) s, depends $deps)"
		fi
	done
	# The last kernel's module in a VM, loaded the way an installed one
	# is: modprobe, which loads drm & co from modules.dep.
	k=${*: -1}
	ko=$(find "$work/tree/nfence/$ver/$k" -name 'nfence.ko*' 2>/dev/null | head -n1)
	if [ "$vm" = 0 ]; then
		echo "dkms: --no-vm: the module is not loaded in a VM"
	elif [ -z "$ko" ]; then
		result fail "modprobe nfence on $k in a VM: no module built"
	elif [ ! -x "$BUILD/libnfence/nfence-info" ]; then
		result fail "modprobe nfence on $k in a VM: no $BUILD/libnfence/nfence-info (make lib)"
	else
		rc=0
		"$top/scripts/vm-exec.sh" --modprobe "$ko" "$k" \
			"$BUILD/libnfence/nfence-info" || rc=$?
		if [ "$rc" -eq 0 ]; then
			result pass "modprobe nfence (DKMS-built) on $k in a VM, nfence-info"
		elif [ "$rc" -eq 2 ]; then
			echo "dkms: error: modprobe nfence on $k in a VM: the guest never ran"
			errors=$((errors + 1))
		else
			result fail "modprobe nfence (DKMS-built) on $k in a VM, nfence-info (exit $rc)"
		fi
	fi
	echo "dkms: $pass passed, $fail failed, 0 skipped, $errors errors"
	[ "$fail" -eq 0 ] && [ "$errors" -eq 0 ]
	;;
*)
	echo "usage: dkms.sh version | source DIR | install | check KVER..." >&2
	exit 2
	;;
esac
