#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run-gpu-bench.sh NFENCE_GPU_BENCH MOCK_SO: a quick run (-q) of the
# nfence-gpu-bench example against the fake driver, which has no debugfs:
# every part must run and report, whatever the numbers.
EXAMPLE_ARGS=-q exec sh "$(dirname "$0")/run-example.sh" nfence-gpu-bench \
	"$1" "$2" \
	"^ping-pong native (unlogged): 3 runs of 50 round trips: .*; best [0-9]" \
	"^ping-pong legacy (WDDM 2.x monitored fences, context GPU waits/signals): 3 runs of 20 round trips" \
	"^ping-pong ratio native/legacy: " \
	"^interrupts, no CPU waiter (unlogged signals): 1000 GPU signals in .* n/a" \
	"^interrupts, one CPU waiter per signal (unlogged): 100 GPU signals in" \
	"^submission, queued back to back: 200 one-NOP submissions" \
	"^submission, one at a time .*: 50 in .* mean latency" \
	"^encoding, logged (probes as built): 3 runs of 1000 wait+signal pairs: .*; best [0-9]" \
	"^encoding, unlogged: 3 runs of 1000 wait+signal pairs: .*; best [0-9]" \
	"^encoding ratio logged/unlogged: [0-9.]*x" \
	"^nfence-gpu-bench: done"
