#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run-pipeline-demo.sh NFENCE_PIPELINE_DEMO MOCK_SO: run the
# nfence-pipeline-demo example against the fake driver and check that
# every step passed.
exec sh "$(dirname "$0")/run-example.sh" nfence-pipeline-demo "$1" "$2" \
	"^ok .* - engine 1 waits for fence A" \
	"^ok .* - CPU wait for fence B" \
	"^ok .* - engine 1's payload reached the CPU" \
	"^ok .* - timestamps in pipeline order" \
	"^ok .* - engine 0's WORK took its time" \
	"^nfence-pipeline-demo: [0-9]* steps, 0 failed"
