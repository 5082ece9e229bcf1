#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run-nfence-info.sh NFENCE_INFO MOCK_SO: run the nfence-info example
# against the fake driver (two adapters) and check what it reports.
set -u

info=$1
mock=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

out=$(NFENCE_MOCK_DIR=$dir NFENCE_DRI_DIR=$dir LD_PRELOAD=$mock "$info" 2>&1)
rc=$?
fail=0
expect() {
	if ! printf '%s\n' "$out" | grep -q -- "$1"; then
		echo "# missing: $1"
		fail=1
	fi
}
[ $rc -eq 0 ] || { echo "# exit status $rc"; fail=1; }
expect "^2 nfence adapter(s)"
expect "^adapter luid 00000000:00001000"
expect "^adapter luid 00000000:00001001"
expect "NativeGpuFenceSupported: 1"
expect "segment 2: local cpu-visible, 64 MiB, cpu-visible 16 MiB"
expect "node 2: copy, user-mode submission"
expect "value stride 64, value bits 64, max log entries 4096"
expect "doorbell 4096 B, model dedicated, 16 physical doorbells"
expect "doorbell 4096 B, model global, 1 physical doorbells"
expect "timestamp: gpu [0-9]* ticks @ 100000000 Hz"
expect "created and destroyed"

# No adapter at all: a failure exit.
NFENCE_DRI_DIR=$dir/none "$info" > /dev/null 2>&1 && {
	echo "# exit status 0 without adapters"
	fail=1
}

if [ $fail -ne 0 ]; then
	printf '%s\n' "$out" | sed -e 's/^/# /'
	echo "not ok nfence-info"
	exit 1
fi
echo "ok nfence-info: 2 fake adapters reported"
