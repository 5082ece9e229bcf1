#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run-wsl-compat.sh NFENCE_WSL_COMPAT [MOCK_SO]: run the WSL-style C++
# program and check what it reports, not only its exit status: against
# the fake driver (LD_PRELOAD of MOCK_SO, run-example.sh) on the host, or,
# without MOCK_SO, on the real driver: the VM's main load, ADAPTERS
# adapters with native fences (2 when not set; the demo's load has 1).
set -u

# What both drivers answer.
set -- "$@" \
	"^adapter 0: render 1 software 1 display 0$" \
	"^adapter 0: physical adapters 1$" \
	"^adapter 0: vendor 0xffff device 0x4e46$" \
	"^adapter 0: hardware scheduling supported 1 enabled 1$" \
	"^adapter 0: native fences 1$" \
	"^adapter 0: driver \"nfence .*\"$" \
	"^adapter 0: node 0 type [0-9]* \"..*\"$" \
	"^ok D3DKMTOpenAdapterFromLuid on another thread$" \
	"^ok monitored fence: the queue waits for the CPU$" \
	"^monitored fence: value 4$" \
	"^ok native fence: the GPU signal waits behind the queue$" \
	"^ok native fence: CPU wait for the GPU's 11$" \
	"^native fence: value 12$" \
	"^ok device state: active$" \
	"^clock: GPU frequency 100000000 Hz$" \
	"^ok clock calibration predicts the GPU's TIMESTAMP$" \
	"^ok D3DKMTCreateSyncFile is refused$" \
	"^ok context: the GPU signal waits behind the context's GPU wait$" \
	"^context: monitored fence value 6$" \
	"^ok D3DKMTCreateContext: no WDDM 1.x buffers$" \
	"^ok D3DKMTSignalSynchronizationObjectFromGpu2 on both contexts$" \
	"^broadcast: monitored fence value 7$" \
	"^ok D3DKMTOpenSyncObjectFromNtHandle2$" \
	"^ok shared monitored fence: one value behind both handles$" \
	"^ok D3DKMTQueryVideoMemoryInfo (NON_LOCAL)$" \
	"^ok NON_LOCAL: the command buffer counts, within the budget$" \
	"^ok D3DKMTQueryVideoMemoryInfo (LOCAL)$" \
	"^ok LOCAL: usage within the budget$" \
	"^ok D3DKMTUnlock2$" \
	"^ok D3DKMTDestroyAllocation2$" \
	"^ok D3DKMTEnumAdapters2 counts the adapters D3DKMTEnumAdapters3 did$" \
	"^ok: 0 failed checks$"

bin=$1
shift
case ${1:-} in
*.so)
	mock=$1
	shift
	exec sh "$(dirname "$0")/run-example.sh" nfence-wsl-compat "$bin" \
		"$mock" "$@"
	;;
esac

adapters=${ADAPTERS:-2}
[ "$adapters" -ge 2 ] && set -- "$@" "^adapter 1: native fences 1$"
out=$(timeout 120 "$bin" 2>&1)
rc=$?
fail=0
[ $rc -eq 0 ] || { echo "# exit status $rc"; fail=1; }
# The real driver has drm_syncobj and device errors (the fake one does not).
for pattern in "^adapters: $adapters$" \
	"^ok device marked as error: stopped$" \
	"^ok syncobj: point 1 absent before the value$" \
	"^ok syncobj: point 1 appears when the GPU signals 13$" \
	"^syncobj: native fence value 14$" "$@"; do
	if ! printf '%s\n' "$out" | grep -q -- "$pattern"; then
		echo "# missing: $pattern"
		fail=1
	fi
done
if printf '%s\n' "$out" | grep -q "^not ok"; then
	fail=1
fi
if [ $fail -ne 0 ]; then
	printf '%s\n' "$out" | sed 's/^/# /'
	echo "not ok nfence-wsl-compat"
	exit 1
fi
echo "ok nfence-wsl-compat: $(printf '%s\n' "$out" | grep -c '^ok') checks"
