#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run-fence-demo.sh NFENCE_FENCE_DEMO MOCK_SO: run the nfence-fence-demo
# example against the fake driver and check that every step passed.
exec sh "$(dirname "$0")/run-example.sh" nfence-fence-demo "$1" "$2" \
	"^ok .* - CurrentValue reads InitialFenceValue through the CPU VA" \
	"^ok .* - blocking wait until the thread signals 2" \
	"^ok .* - wait for 3 with a 100 ms timeout returns STATUS_TIMEOUT" \
	"^ok .* - eventfd fired after the signal" \
	"^ok .* - child opened the fence from the NT handle and signaled" \
	"^nfence-fence-demo: [0-9]* steps, 0 failed"
