#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The syncobj bridge against another driver's DRM file:
#
#   scripts/virtio-gpu-check.sh KVER...
#
# Boots each KVER whose virtio-gpu driver has timeline syncobjs (6.8 and
# later: the 6.12 LTS; Debian's 6.1 has none, and is left out) with a
# virtio-gpu device (scripts/vm-exec.sh --virtio-gpu) and runs
# nfence_syncobj@virtio-gpu there: a syncobj bound to a native fence,
# waited on through virtio-gpu's file, and a sync_file from virtio-gpu's
# syncobj signaling a native fence. The main VM run has no such device,
# where the subtest skips (tests/expected-skips.txt). Ends with
#   virtio-gpu: N passed, N failed, N skipped, N errors
# A skip here is an error: the device was given, so a skip means the
# guest did not see it.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
bin=$BUILD/tests/igt/nfence_syncobj
p=0 f=0 e=0

for kver in "$@"; do
	case $kver in
	6.[0-7].* | [0-5].*) continue ;;
	esac
	log=$BUILD/vm-exec-$kver.log
	"$top/scripts/vm-exec.sh" --virtio-gpu "$kver" "$bin" \
		--run-subtest virtio-gpu
	rc=$?
	result=$(sed -nE 's/^Subtest virtio-gpu: ([A-Z]+).*/\1/p' "$log" |
		tail -n1)
	case $result in
	SUCCESS)
		if [ "$rc" -eq 0 ]; then
			echo "pass: virtio-gpu on $kver"
			p=$((p + 1))
		else
			# The subtest passed, the run did not (a splat, rmmod).
			echo "fail: virtio-gpu on $kver: vm-exec status $rc"
			f=$((f + 1))
		fi
		;;
	FAIL | CRASH | TIMEOUT)
		echo "fail: virtio-gpu on $kver: $result"
		f=$((f + 1))
		;;
	SKIP)
		echo "error: virtio-gpu on $kver skipped: the guest has no" \
			"virtio-gpu node with timeline syncobjs"
		e=$((e + 1))
		;;
	*)
		echo "error: virtio-gpu on $kver: no result (vm-exec status $rc)"
		e=$((e + 1))
		;;
	esac
done
if [ $((p + f + e)) -eq 0 ]; then
	echo "virtio-gpu: no kernel with virtio-gpu timeline syncobjs among: $*"
	e=1
fi
echo "virtio-gpu: $p passed, $f failed, 0 skipped, $e errors"
[ $((f + e)) -eq 0 ]
