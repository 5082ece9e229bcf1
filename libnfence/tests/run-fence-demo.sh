#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run-fence-demo.sh NFENCE_FENCE_DEMO MOCK_SO: run the nfence-fence-demo
# example against the fake driver and check that every step passed.
set -u

demo=$1
mock=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

out=$(NFENCE_MOCK_DIR=$dir NFENCE_DRI_DIR=$dir LD_PRELOAD=$mock \
	timeout 60 "$demo" 2>&1)
rc=$?
fail=0
expect() {
	if ! printf '%s\n' "$out" | grep -q -- "$1"; then
		echo "# missing: $1"
		fail=1
	fi
}
[ $rc -eq 0 ] || { echo "# exit status $rc"; fail=1; }
expect "^ok .* - CurrentValue reads InitialFenceValue through the CPU VA"
expect "^ok .* - blocking wait until the thread signals 2"
expect "^ok .* - wait for 3 with a 100 ms timeout returns STATUS_TIMEOUT"
expect "^ok .* - eventfd fired after the signal"
expect "^ok .* - child opened the fence from the NT handle and signaled"
expect "^nfence-fence-demo: [0-9]* steps, 0 failed"
if printf '%s\n' "$out" | grep -q "^not ok"; then
	fail=1
fi

# No adapter at all: a failure exit.
NFENCE_DRI_DIR=$dir/none "$demo" > /dev/null 2>&1 && {
	echo "# exit status 0 without adapters"
	fail=1
}

if [ $fail -ne 0 ]; then
	printf '%s\n' "$out" | sed -e 's/^/# /'
	echo "not ok nfence-fence-demo"
	exit 1
fi
echo "ok nfence-fence-demo: $(printf '%s\n' "$out" | grep -c '^ok') steps"
