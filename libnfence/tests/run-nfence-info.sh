#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run-nfence-info.sh NFENCE_INFO MOCK_SO: run the nfence-info example
# against the fake driver (two adapters) and check what it reports.
exec sh "$(dirname "$0")/run-example.sh" nfence-info "$1" "$2" \
	"^2 nfence adapter(s)" \
	"^adapter luid 00000000:00001000" \
	"^adapter luid 00000000:00001001" \
	"NativeGpuFenceSupported: 1" \
	"segment 2: local cpu-visible, 64 MiB, cpu-visible 16 MiB" \
	"node 2: copy, user-mode submission" \
	"value stride 64, value bits 64, max log entries 84" \
	"doorbell 4096 B, model dedicated, 16 physical doorbells" \
	"doorbell 4096 B, model global, 1 physical doorbells" \
	"timestamp: gpu [0-9]* ticks @ 100000000 Hz" \
	"created and destroyed"
