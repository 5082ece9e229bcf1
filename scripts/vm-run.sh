#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the virtme-ng guest (see check-vm.sh):
#   vm-run.sh full|demo KVER NFENCE_KO BUILD TOP LIB
# LIB is (a copy of) scripts/lib.sh.
#
# full: module parameter checks, unload-while-open, the libnfence demo, the
# IGT tests, the kselftests, a second load with another configuration, unload;
# then the kernel log must be free of splats. demo: load, demo, unload, log.
set -u

mode=$1 kver=$2 ko=$3 build=$4 top=$5
# shellcheck source=scripts/lib.sh
. "$6"
# The host keeps the kernel console apart: everything of ours goes to stdout.
exec 2>&1
pass=0 fail=0 skip=0

result() { # status name [detail]
	echo "vm-check: $1: $2${3:+ ($3)}"
	case $1 in
	pass) pass=$((pass + 1)) ;;
	skip) skip=$((skip + 1)) ;;
	*) fail=$((fail + 1)) ;;
	esac
}
check() { # name command...
	local name=$1
	shift
	if "$@"; then result pass "$name"; else result fail "$name"; fi
}
check_fails() { # name command... (the command must fail)
	local name=$1
	shift
	if "$@" 2>/dev/null; then result fail "$name"; else result pass "$name"; fi
}

echo "vm-run: kernel $(uname -r), $(nproc) cpus"
# Where the guest's time goes: "vm-time: <stage> <seconds since boot>s".
vm_time() { echo "vm-time: $1 $(cut -d. -f1 /proc/uptime)s"; }
vm_time start
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
dmesg -C
# Where the tests start in the console log the host keeps. From here on the
# console shows warnings and worse only (every splat, not IGT's per-subtest
# info lines, which cost time on an emulated serial port); dmesg has it all.
echo "<5>nfence-vm-run: start" >/dev/kmsg
dmesg -n 5
for dep in $(modinfo -F depends "$ko" | tr ',' ' '); do
	modprobe "$dep"
done

nfence_loaded() { grep -q '^nfence ' /proc/modules; }
render_nodes() {
	local d
	for d in /sys/class/drm/renderD*; do
		[ "$(basename "$(readlink -f "$d/device/subsystem")")" = platform ] &&
			case $(basename "$(readlink -f "$d/device")") in
			nfence.*) echo "/dev/dri/$(basename "$d")" ;;
			esac
	done
}

if [ "$mode" = full ]; then
	# Invalid configurations are refused at load time.
	check_fails "insmod refuses num_adapters=0" insmod "$ko" num_adapters=0
	check_fails "insmod refuses num_adapters=9" insmod "$ko" num_adapters=9
	check_fails "insmod refuses num_engines=9" insmod "$ko" num_engines=9
	check_fails "insmod refuses vram_visible_mb > vram_mb" \
		insmod "$ko" vram_mb=16 vram_visible_mb=32
	check_fails "insmod refuses doorbell_model=3" insmod "$ko" doorbell_model=3
	check_fails "insmod refuses num_doorbells=0" insmod "$ko" num_doorbells=0
	check "no module left after refused loads" bash -c '! grep -q "^nfence " /proc/modules'
fi

adapters=1
[ "$mode" = full ] && adapters=2
if ! insmod "$ko" num_adapters=$adapters; then
	result fail "insmod nfence num_adapters=$adapters"
	echo "vm: $pass passed, $fail failed, $skip skipped"
	echo "vm-run: complete"
	exit 1
fi
result pass "insmod nfence num_adapters=$adapters"
mapfile -t nodes < <(render_nodes)
check "$adapters render nodes" test "${#nodes[@]}" -eq "$adapters"
check "CMP threads running" bash -c "[ \$(pgrep -c '^nfence-cmp/') -eq $adapters ]"

if [ "$mode" = full ]; then
	# Unload must be refused while a file is open, and work after close.
	exec 3<>"${nodes[0]}"
	check_fails "rmmod refused with an open render node" rmmod nfence
	check "module still loaded" nfence_loaded
	exec 3>&-
fi

check "libnfence demo (nfence-info)" "$build/libnfence/nfence-info"
check "libnfence fence demo (nfence-fence-demo)" \
	"$build/libnfence/nfence-fence-demo"
check "libnfence pipeline demo (nfence-pipeline-demo)" \
	"$build/libnfence/nfence-pipeline-demo"

if [ "$mode" = full ]; then
	# Under emulation a process start (libigt pulls in cairo, glib, ...)
	# costs seconds: run each IGT binary once with all its subtests rather
	# than once per subtest. IGT_MODE=subtest restores full isolation.
	vm_time igt
	IGT_MODE=${IGT_MODE:-binary} IGT_REQUIRE_PASS=1 IGT_VERBOSE=1 \
		"$build/run-igt-$kver.sh" "$build/tests/igt"
	vm_time kselftest
	# Every kselftest binary; their KTAP totals are summed.
	kp=0 kf=0 ks=0
	ksft_log=$(mktemp)
	for t in "$build"/selftests/*; do
		[ -x "$t" ] || continue
		"$t" 2>&1 | tee "$ksft_log"
		totals=$(grep -E '^# Totals: ' "$ksft_log" | tail -n1)
		if [ -z "$totals" ]; then
			echo "kselftest: $(basename "$t") printed no totals"
			kf=$((kf + 1))
			continue
		fi
		kp=$((kp + $(echo "$totals" | sed -nE 's/.* pass:([0-9]+).*/\1/p')))
		kf=$((kf + $(echo "$totals" | sed -nE 's/.* fail:([0-9]+).*/\1/p')))
		kf=$((kf + $(echo "$totals" | sed -nE 's/.*error:([0-9]+).*/\1/p')))
		ks=$((ks + $(echo "$totals" | sed -nE 's/.*skip:([0-9]+).*/\1/p')))
	done
	rm -f "$ksft_log"
	echo "kselftest: $kp passed, $kf failed, $ks skipped"
	vm_time other-configurations
fi

check "rmmod nfence" rmmod nfence
check "no CMP thread after unload" bash -c "! pgrep '^nfence-cmp/' >/dev/null"

if [ "$mode" = full ]; then
	# A second adapter model: no native fences, no doorbells, 32-bit
	# atomics, the most engines, VRAM with no CPU-visible part.
	conf="num_engines=8 native_fences=0 optimized_default_fence=0 user_mode_submission=0 no_64bit_atomics=1 vram_mb=8 vram_visible_mb=0"
	if insmod "$ko" $conf; then
		result pass "insmod nfence $conf"
		check "libnfence demo on a WDDM 2.x-style adapter" \
			"$build/libnfence/nfence-info"
		check "IGT nfence_query on a WDDM 2.x-style adapter" \
			"$build/tests/igt/nfence_query"
		# The paths only this adapter model has; one subtest per
		# run, so that a skip (exit 77) counts as a failure.
		check "IGT NATIVE_PROGRESS_FENCE refused without native fences" \
			"$build/tests/igt/nfence_queue" --run-subtest \
			hwqueue-create-native-progress-unsupported
		check "IGT monitored progress fence without native fences" \
			"$build/tests/igt/nfence_queue" --run-subtest \
			hwqueue-monitored-progress
		check "IGT CPU_VISIBLE VRAM refused without visible VRAM" \
			"$build/tests/igt/nfence_alloc" --run-subtest \
			create-cpu-visible-no-visible-vram
		check "rmmod nfence (second configuration)" rmmod nfence
	else
		result fail "insmod nfence $conf"
	fi
fi

if [ "$mode" = full ]; then
	# A GPU with native fences but only 32-bit atomics: the UINT_MAX/2
	# window of the context-monitoring seed, and the GPU's half stores
	# completed by the driver.
	conf="no_64bit_atomics=1"
	if insmod "$ko" $conf; then
		result pass "insmod nfence $conf"
		check "IGT 32-bit fence value window" \
			"$build/tests/igt/nfence_wait" --run-subtest 'value-32bit-*'
		check "IGT 32-bit GPU: carries, waits across 2^32, window" \
			"$build/tests/igt/nfence_sched" --run-subtest 'gpu32-*'
		check "rmmod nfence (32-bit atomics)" rmmod nfence
	else
		result fail "insmod nfence $conf"
	fi
fi

vm_time log-check
# The kernel log must show no splat of any kind.
dmesg >/tmp/nfence-dmesg
if nfence_splats /tmp/nfence-dmesg >/tmp/nfence-splat; then
	cat /tmp/nfence-splat
	result fail "kernel log free of WARN/BUG/Oops/lockdep/KASAN/refcount/leak"
else
	result pass "kernel log free of WARN/BUG/Oops/lockdep/KASAN/refcount/leak"
fi
if [ -e /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak
	if grep -q nfence /sys/kernel/debug/kmemleak; then
		result fail "kmemleak finds no nfence leak"
	else
		result pass "kmemleak finds no nfence leak"
	fi
fi

echo "vm: $pass passed, $fail failed, $skip skipped"
echo "vm-run: complete"
