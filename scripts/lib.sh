# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shared by the test scripts (sourced, never run): the kernel-log splat
# pattern, result-line parsing and the one way to boot a guest.
#
# Result lines: every suite closes with
#   NAME: N passed, N failed, N skipped[, N errors]
# "failed" counts tests that ran and failed; "errors" counts runs that could
# not produce results at all (no guest, a runner that died, a missing
# binary). Both fail "make check"; the summary keeps them apart.

# A kernel log line that means a checker fired. Case-sensitive on purpose:
# lockdep's boot banner says "MAX_LOCKDEP_KEYS", kmemleak's says "Kernel
# memory leak detector initialized"; neither is a report. What each part
# catches:
#   WARNING: / BUG: / Oops / general protection / Kernel panic / Call Trace:
#     WARN*(), BUG*(), oopses; also every lockdep report ("WARNING: possible
#     circular locking dependency", "inconsistent lock state", ...), KASAN
#     ("BUG: KASAN: ..."), sleeping in atomic context, soft lockups
#     ("BUG: soft lockup") and workqueue lockups
#   INFO: trying to register non-static key   lockdep, uninitialised lock
#   INFO: task ... blocked                    the hung-task detector
#   detected stall                            RCU stalls
#   UBSAN:                                    undefined behaviour
#   ODEBUG:                                   debug objects
#   corruption                                DEBUG_LIST, slab freelists
#   refcount_t:                               refcount saturation
#   suspected memory leak                     kmemleak's own summary
NFENCE_SPLAT_RE='WARNING:|BUG:|Oops|general protection|Kernel panic|Call Trace:|INFO: trying to register non-static key|INFO: task .* blocked|detected stall|UBSAN:|ODEBUG:|corruption|refcount_t:|suspected memory leak'

# nfence_splats [FILE]: print the splat lines of a kernel log (FILE, or
# standard input); true if any.
nfence_splats() {
	grep -E "$NFENCE_SPLAT_RE" "${1:--}"
}

# nfence_strip_fault_reports: the kernel log of an allocation-failure run
# without what the injected failures print, which is not a splat there:
# "FAULT_INJECTION: forcing a failure." and the allocator's own "page
# allocation failure" and "vmalloc error" reports, each up to the end of
# its stack dump. Only for the log of such a run: anywhere else an
# allocation failure report is a finding.
nfence_strip_fault_reports() {
	awk '/FAULT_INJECTION: forcing a failure|page allocation failure:|vmalloc error:/ { skip = 1; next }
		skip { if (/<\/TASK>/) skip = 0; next }
		{ print }'
}

# nfence_counts LINE: the "N passed, N failed[, N skipped][, N errors]" of a
# result line as "P F S E" (absent fields are 0).
nfence_counts() {
	local line=$1 n p=0 f=0 s=0 e=0
	for n in passed failed skipped errors error; do
		if [[ $line =~ ([0-9]+)\ $n ]]; then
			case $n in
			passed) p=${BASH_REMATCH[1]} ;;
			failed) f=${BASH_REMATCH[1]} ;;
			skipped) s=${BASH_REMATCH[1]} ;;
			*) e=${BASH_REMATCH[1]} ;;
			esac
		fi
	done
	echo "$p $f $s $e"
}

# nfence_ktap_totals FILE: the "# Totals: pass:P fail:F xfail:X xpass:Y
# skip:S error:E" line of a kselftest harness run as "P F S E", where F
# counts fail and xpass and E counts error; nothing if there is none.
nfence_ktap_totals() {
	local line
	line=$(grep -aE '^# Totals: ' "$1" | tail -n1)
	[ -n "$line" ] || return 1
	echo "$line" | sed -nE \
		's/.*pass:([0-9]+) fail:([0-9]+) xfail:[0-9]+ xpass:([0-9]+) skip:([0-9]+) error:([0-9]+).*/\1 \2 \3 \4 \5/p' |
		awk '{ print $1, $2 + $3, $4, $5 }'
}

# nfence_modprobe_dkms PARAMS: (in a guest, as root) "modprobe nfence
# PARAMS", which must load its dependencies (drm & co) itself, from
# modules.dep, and take nfence from /lib/modules/KVER/updates/dkms, where
# DKMS installs it. Says what was loaded before and after; false, with the
# reason, if nfence was loaded already, would not load or came from
# elsewhere.
nfence_modprobe_dkms() {
	local mods before path
	mods=/lib/modules/$(uname -r)
	before=$(cut -d' ' -f1 /proc/modules | tr '\n' ' ')
	echo "loaded before modprobe: ${before:-nothing}"
	case " $before " in
	*" nfence "*)
		echo "nfence loaded before modprobe"
		return 1
		;;
	esac
	# shellcheck disable=SC2086 # PARAMS is a list of words
	if ! modprobe nfence $1; then
		echo "modprobe nfence $1 failed"
		return 1
	fi
	path=$(modinfo -n nfence)
	echo "modprobe nfence took $path, loaded:" \
		"$(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"
	case $path in
	"$mods/updates/dkms/"*) ;;
	*)
		echo "modprobe took $path, not the one in updates/dkms"
		return 1
		;;
	esac
}

# nfence_vm_image KVER: the kernel image to boot, "debug" for the
# KASAN + lockdep + kmemleak build of scripts/debug-kernel.sh.
nfence_vm_image() {
	if [ "$1" = debug ]; then
		echo "$("$(dirname "${BASH_SOURCE[0]}")/debug-kernel.sh" | tail -n1)/arch/x86/boot/bzImage"
	else
		echo "/boot/vmlinuz-$1"
	fi
}

# nfence_vng KVER TIMEOUT OUT CONSOLE CMD: boot KVER under TCG with the host
# filesystem and run CMD (a shell command line) as root in the top
# directory. The guest's stdout goes to OUT and to our stdout; the kernel
# console (every boot message, virtme-init's steps, any splat) to CONSOLE
# alone. Returns vng's status (the guest command's, 124 on timeout, 255
# when virtme-init gave up before running CMD). NFENCE_VM_ROOT, if set, is
# the directory the guest gets as its root instead of the host's (one that
# holds the top directory at the same path: scripts/deb.sh). NFENCE_VM_RWDIR,
# if set, is a host directory the guest may write, at the same path
# (scripts/coverage.sh; given as GUEST=HOST, since virtme-ng checks a bare
# path relative to its working directory).
nfence_vng() {
	local kver=$1 limit=$2 out=$3 console=$4 cmd=$5 img kopt rc
	local top root=${NFENCE_VM_ROOT:-}
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	img=$(nfence_vm_image "$kver")
	# Console at info level: virtme-init logs its steps at that level.
	# tsc=reliable: under TCG the TSC drifts against the HPET, and the
	# clocksource watchdog then marks it unstable mid-run, which flips
	# sched_clock's static key; TCG has been seen to trip over that text
	# patching on the other vCPU ("Oops: int3" in sched_clock_cpu or
	# kmem_cache_alloc, a panic that is no bug of nfence's). The guest's
	# TSC is the host's clock, so there is nothing for the watchdog to
	# catch.
	# no_timer_check: the IO-APIC timer check counts ticks against a
	# busy loop, and under TCG on a loaded host it finds too few and
	# panics ("IO-APIC + timer doesn't work!"), as seen while a kernel
	# built beside the VM; virtual machines' images skip it the same way.
	# trace_event=sched:sched_process_exec: the first trace event enabled
	# registers the tracer's task-name recorder on the scheduler's
	# tracepoints (sched_switch, sched_wakeup), and the last one disabled
	# unregisters it; each flip patches those hot sites with int3 while
	# the other vCPU runs them, and TCG has been seen to trip over that
	# too ("Oops: int3" in ttwu_do_activate from a timer softirq, as
	# nfence-trace record began). One event enabled from boot, at the top
	# level, keeps the recorder registered for the whole run, so tracing
	# in the guest never patches them.
	kopt="loglevel=7 tsc=reliable no_timer_check"
	kopt="$kopt trace_event=sched:sched_process_exec"
	if [ "$kver" = debug ]; then
		# The debug kernel has 9p built in and boots without an
		# initramfs, so these root mount options are the ones used. The
		# root is read-only in the guest and the host changes nothing
		# under it during a run, so the guest may cache it: without
		# caching every exec and every page of every library is a 9p
		# round trip, which is what made udev, and with it virtme-init,
		# time out on this kernel. msize is the virtio transport's
		# largest.
		kopt="$kopt rootflags=version=9p2000.L,trans=virtio,access=any,cache=loose,msize=512000"
	fi
	set +e
	timeout --kill-after=30 "$limit" \
		vng --run "$img" --disable-kvm --cpus 2 --memory 2G \
		${NFENCE_VM_QEMU_OPTS:+"--qemu-opts=$NFENCE_VM_QEMU_OPTS"} \
		${root:+--root "$root"} --verbose --append "$kopt" \
		${NFENCE_VM_RWDIR:+--rwdir "$NFENCE_VM_RWDIR=$NFENCE_VM_RWDIR"} \
		--cwd "$root$top" --exec "$cmd" \
		</dev/null 2>"$console" | tee "$out"
	rc=${PIPESTATUS[0]}
	set -e
	return "$rc"
}

# nfence_vm_start_failure CONSOLE RC: why a guest did not reach its command,
# from its console log, with the console's last lines.
nfence_vm_start_failure() {
	local console=$1 rc=$2 why
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		why="timed out"
	elif grep -q 'cannot find script I/O ports' "$console"; then
		why="virtme-init found no script ports (udev did not create /dev/virtio-ports/virtme.* in time)"
	elif grep -q 'Kernel panic' "$console"; then
		why="the kernel panicked during boot"
	elif ! grep -q 'Run .* as init process' "$console"; then
		why="the kernel never started init"
	else
		why="virtme-init stopped (exit $rc)"
	fi
	echo "$why"
	echo "--- last 40 lines of the console ($console) ---" >&2
	tail -n 40 "$console" >&2
	echo "---" >&2
}

# nfence_memcg_warm_up: (in a guest, as root, before any test) make the
# guest's first memory cgroup. The first one that accounts kernel memory
# enables the kernel's memcg_kmem_online_key, and the text patching of that
# static key has made TCG's other vCPU trip ("Oops: int3" in
# kmem_cache_alloc_lru_noprof, a panic that is no bug of nfence's) when
# nfence_fence@kernel-memory-charged made it mid-run; made while nothing
# else runs, it does not.
nfence_memcg_warm_up() {
	local cg=/sys/fs/cgroup

	[ -e $cg/cgroup.controllers ] || mount -t cgroup2 none $cg || return 0
	grep -qw memory $cg/cgroup.controllers || return 0
	echo +memory >$cg/cgroup.subtree_control
	mkdir $cg/nfence-warm-up && rmdir $cg/nfence-warm-up
}

# nfence_allowed_skips EXPECTED LOAD: the IGT subtests (BIN@SUBTEST) that
# tests/expected-skips.txt (EXPECTED) lets skip in LOAD.
nfence_allowed_skips() {
	awk -v l="$2" '!/^#/ && $1 == l && $2 ~ /^igt:/ { sub(/^igt:/, "", $2); print $2 }' "$1"
}
