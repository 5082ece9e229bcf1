#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the virtme-ng guest (see check-vm.sh):
#   vm-run.sh full|main|demo KVER NFENCE_KO BUILD TOP LIB
# LIB is (a copy of) scripts/lib.sh; NFENCE_INSMOD_EXTRA in the environment
# adds module parameters to the main load (the harness self-test's leak);
# NFENCE_GCOV_OUT, a directory, receives the module's gcov counters at the
# end (make coverage); NFENCE_KUNIT_KO, a second nfence.ko built with the
# KUnit suites, is loaded last and its suites' results counted.
#
# full: refused configurations; the main load (2 adapters): unload refused
# while a file, a mapping or a fence fd is held, the libnfence demos, every
# IGT subtest, every kselftest, kmemleak before and after unload; then one
# load per other adapter model (tests/expected-skips.txt says which subtests
# must run in each, and which may skip where); the kernel log must be free
# of splats. main: full without the other adapter models' loads (and
# without the fault injection and stress, which only a kernel with fault
# injection runs); the expected-skips check covers the loads that ran.
# demo: load, demos, unload, log.
#
# Every result is a "vm-check:", "pass:/skip:/fail:" or KTAP line; each
# suite closes with "NAME: N passed, N failed, N skipped[, N errors]" and
# the run with "vm-run: totals N passed, N failed, N skipped, N errors" (the
# sum of those suite lines, as the guest printed them) and "vm-run:
# complete". The host reads all of it from the guest's console, which has
# been seen to lose a few KiB under TCG (NUL bytes where a suite's end and
# the next one's start were): check-vm.sh holds its own sums against the
# totals.
set -u

mode=$1 kver=$2 ko=$3 build=$4 top=$5
# shellcheck source=scripts/lib.sh
. "$6"
# The host keeps the kernel console apart: everything of ours goes to stdout.
exec 2>&1
pass=0 fail=0 skip=0
expected=$top/tests/expected-skips.txt
# Every test result of every load, "LOAD STATUS SUITE:NAME", for the
# expected-skips check at the end.
results=/tmp/nfence-results
: >"$results"
# The name of every load made, one per line.
loads_run=/tmp/nfence-loads
: >"$loads_run"
# Every suite line printed, for the totals at the end.
summaries=/tmp/nfence-summaries
: >"$summaries"
# Each IGT binary's subtest list, listed once for every load (run-igt.sh).
rm -rf /tmp/nfence-igt-lists
mkdir -p /tmp/nfence-igt-lists
load=main

suite() { # "NAME: N passed, ..." line
	echo "$1"
	echo "$1" >>"$summaries"
}
# The end of the run: the vm suite's line, the totals of every suite line
# printed, and the end mark.
finish() {
	local line p=0 f=0 s=0 e=0 lp lf ls le
	suite "vm: $pass passed, $fail failed, $skip skipped"
	while read -r line; do
		read -r lp lf ls le < <(nfence_counts "$line")
		p=$((p + lp)) f=$((f + lf)) s=$((s + ls)) e=$((e + le))
	done <"$summaries"
	echo "vm-run: totals $p passed, $f failed, $s skipped, $e errors"
	echo "vm-run: complete"
}

result() { # status name [detail]
	echo "vm-check: $1: $2${3:+ ($3)}"
	case $1 in
	pass) pass=$((pass + 1)) ;;
	skip) skip=$((skip + 1)) ;;
	*) fail=$((fail + 1)) ;;
	esac
}
check() { # name command...
	local name=$1 rc
	shift
	"$@"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		result pass "$name"
	else
		result fail "$name" "exit $rc"
	fi
}
# A program that could hang (a demo waiting for a fence that never comes):
# past SECONDS it is killed and fails, and the run goes on.
check_timed() { # name seconds command...
	local name=$1 secs=$2 rc
	shift 2
	timeout -k 10 "$secs" "$@"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		result pass "$name"
	elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		result fail "$name" "hung: killed after $secs s"
	else
		result fail "$name" "exit $rc"
	fi
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

# The memory cgroup warm-up (scripts/lib.sh says why).
nfence_memcg_warm_up

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
# The LUIDs of the loaded adapters, as debugfs prints them, sorted, one
# line.
adapter_luids() {
	grep -h '^luid:' /sys/kernel/debug/dri/*/nfence_adapter 2>/dev/null |
		awk '{ print $2 }' | sort -u | tr '\n' ' '
}

# kmemleak, where the kernel has it (the debug kernel; Debian's do not).
kmemleak=/sys/kernel/debug/kmemleak
# The address ranges nfence.ko had in each load: after rmmod a leaked
# object's backtrace shows raw addresses, not "[nfence]".
ranges=/tmp/nfence-ranges
: >"$ranges"
note_module_range() {
	grep '\[nfence\]' /proc/kallsyms | awk '{ print $1 }' | sort |
		sed -n '1p;$p' | tr '\n' ' ' >>"$ranges"
	echo >>"$ranges"
}
# kmemleak_check LABEL: report nfence's leaks, found by a frame in the
# module (by name while it is loaded, by address range after unload).
kmemleak_check() {
	local label=$1 out=/tmp/nfence-kmemleak-$1
	[ -e "$kmemleak" ] || return 0
	# kmemleak never reports an object younger than 5 s, and reports one
	# whose contents changed during a scan only on the next scan.
	sleep 6
	if ! echo scan >"$kmemleak" || ! echo scan >"$kmemleak"; then
		result fail "kmemleak scan ($label)" "the write to $kmemleak failed"
		return
	fi
	cat "$kmemleak" >"$out"
	awk -v ranges="$ranges" '
		BEGIN {
			n = 0
			while ((getline line < ranges) > 0) {
				split(line, r, " ")
				if (r[1] != "") { lo[n] = r[1]; hi[n] = r[2]; n++ }
			}
		}
		function ours(addr,   i) {
			addr = tolower(addr)
			for (i = 0; i < n; i++)
				if (length(addr) == length(lo[i]) &&
				    addr >= lo[i] && addr <= hi[i])
					return 1
			return 0
		}
		/^unreferenced object/ { if (keep) printf "%s", block; block = ""; keep = 0 }
		{ block = block $0 "\n" }
		/\[nfence\]/ { keep = 1 }
		# A frame of an unloaded module is a bare address, "0x..."
		# (6.12) or "[<...>]" (6.1).
		{
			line = $0
			while (match(line, /(0x|\[<)[0-9a-f]+/)) {
				a = substr(line, RSTART, RLENGTH)
				sub(/^(0x|\[<)/, "", a)
				if (ours(a)) keep = 1
				line = substr(line, RSTART + RLENGTH)
			}
		}
		END { if (keep) printf "%s", block }' "$out" >"$out.nfence"
	# Report each object once: what was listed is not listed again.
	echo clear >"$kmemleak"
	if [ -s "$out.nfence" ]; then
		cat "$out.nfence"
		result fail "kmemleak finds no nfence leak ($label)"
	else
		result pass "kmemleak finds no nfence leak ($label)"
	fi
}

# The IGT entries of tests/expected-skips.txt: those that may skip in LOAD,
# and those that must run, and pass, in LOAD.
allowed_skips() {
	nfence_allowed_skips "$expected" "$1"
}
runs_in() {
	awk -v l="$1" '!/^#/ && $3 == l && $2 ~ /^igt:/ { sub(/^igt:/, "", $2); print $2 }' "$expected"
}

# run_igt [-s SELECTION]: run-igt.sh for the current load on the IGT tests
# of the build (or those in IGT_DIR); its exit status counts, and its
# per-subtest results are kept for the final check.
run_igt() {
	local log=/tmp/nfence-igt-$load.log rc
	allowed_skips "$load" >"/tmp/nfence-allowed-$load"
	# Under emulation a process start (libigt pulls in cairo, glib, ...)
	# costs seconds: run-igt.sh runs each binary once with all its
	# subtests. IGT_MODE=subtest restores full isolation.
	IGT_VERBOSE=1 IGT_RESULTS=/tmp/nfence-igt-$load \
		IGT_LIST_CACHE=/tmp/nfence-igt-lists \
		"$build/run-igt-$kver.sh" -x "/tmp/nfence-allowed-$load" "$@" \
		"${IGT_DIR:-$build/tests/igt}" | tee "$log"
	rc=${PIPESTATUS[0]}
	grep -aE '^igt: [0-9]+ passed' "$log" | tail -n1 >>"$summaries"
	sed -nE "s/^(pass|skip|fail): ([^ ]+).*/$load \\1 igt:\\2/p" "$log" >>"$results"
	if [ "$rc" -ne 0 ] && ! grep -qE '^igt: .* ([1-9][0-9]*) (failed|errors)' "$log"; then
		result fail "run-igt.sh in load $load" "exit $rc with no failure counted"
	fi
}

# run_kselftests: every kselftest the build lists, each with its own status
# and its plan ("1..N") checked against what it reported.
run_kselftests() {
	local kp=0 kf=0 ks=0 ke=0 name t log rc plan n st
	if [ ! -r "$build/selftests/tests.list" ]; then
		suite "kselftest: 0 passed, 0 failed, 0 skipped, 1 errors (no $build/selftests/tests.list)"
		return
	fi
	for t in "$build"/selftests/*; do
		name=$(basename "$t")
		[ -f "$t" ] && [ -x "$t" ] || continue
		if ! grep -qxF "$name" "$build/selftests/tests.list" &&
		   ! grep -qxF "$name" "$build/selftests/helpers.list"; then
			echo "kselftest: $name: stale binary, not in tests.list"
			ke=$((ke + 1))
		fi
	done
	while read -r name; do
		t=$build/selftests/$name
		log=/tmp/nfence-ksft-$name.log
		if [ ! -x "$t" ]; then
			echo "kselftest: $name: missing or not executable"
			ke=$((ke + 1))
			continue
		fi
		set -o pipefail
		"$t" 2>&1 | tee "$log"
		rc=$?
		set +o pipefail
		plan=$(sed -nE 's/^1\.\.([0-9]+)$/\1/p' "$log" | head -n1)
		n=$(grep -cE '^(not )?ok [0-9]+ ' "$log")
		while read -r st rest; do
			echo "$load $st kselftest:$name.$rest" >>"$results"
		done < <(sed -nE 's/^ok [0-9]+ ([^ ]+) # SKIP.*/skip \1/p;
			s/^ok [0-9]+ ([^ ]+)$/pass \1/p;
			s/^not ok [0-9]+ ([^ ]+).*/fail \1/p' "$log")
		if ! read -r p f s e < <(nfence_ktap_totals "$log"); then
			echo "kselftest: $name printed no totals (exit $rc)"
			ke=$((ke + 1))
			continue
		fi
		if [ -z "$plan" ] || [ "$n" -ne "$plan" ]; then
			echo "kselftest: $name planned ${plan:-no} tests and reported $n"
			f=$((f + 1))
		fi
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && [ "$e" -eq 0 ]; then
			echo "kselftest: $name exited $rc with no failure counted"
			f=1
		fi
		kp=$((kp + p)) kf=$((kf + f)) ks=$((ks + s)) ke=$((ke + e))
	done < <(grep -v '^#' "$build/selftests/tests.list")
	suite "kselftest: $kp passed, $kf failed, $ks skipped, $ke errors"
}

# run_kunit LOG: the KUnit suites' results, from the KTAP they printed to
# the kernel log while nfence.ko (built with NFENCE_KUNIT=y) loaded: each
# case is a result, a skip must be listed in tests/expected-skips.txt (load
# "kunit"; none is: those of load "kunit-uml", scripts/kunit.sh's, need
# the second CPU this guest has), and every suite of tests/kunit (but
# the benchmarks and the harness self-test) must have run as many cases as
# its source lists.
run_kunit() {
	local log=$1 kp=0 kf=0 ks=0 st name f suite cases ran
	while read -r st name; do
		echo "$load $st kunit:$name" >>"$results"
		case $st in
		pass) kp=$((kp + 1)) ;;
		skip)
			ks=$((ks + 1))
			if ! grep -qE "^kunit[[:space:]]+kunit:${name#*.}[[:space:]]" "$expected"; then
				echo "kunit: unexpected skip of $name (tests/expected-skips.txt does not list it)"
				kf=$((kf + 1))
			fi
			;;
		*)
			echo "kunit: $name failed"
			kf=$((kf + 1))
			;;
		esac
	done < <(awk '
		/^    # Subtest: / { suite = $3; next }
		/^    ok [0-9]+ [^ ]+ # SKIP/ { print "skip", suite "." $3; next }
		/^    ok [0-9]+ [^ ]+$/ { print "pass", suite "." $3; next }
		/^    not ok [0-9]+ / { print "fail", suite "." $4 }' "$log")
	for f in "$top"/tests/kunit/*_test.c; do
		suite=$(sed -nE 's/^\t\.name = "([a-z0-9_]+)",$/\1/p' "$f" | tail -n1)
		[ "$suite" = nfence_harness ] && continue
		cases=$(grep -cE '^\s*KUNIT_CASE' "$f")
		ran=$(grep -cE "^$load [a-z]+ kunit:$suite\." "$results")
		if [ "$ran" -ne "$cases" ]; then
			echo "kunit: suite $suite (${f##*/}) ran $ran of its $cases cases"
			kf=$((kf + 1))
		fi
	done
	suite "kunit: $kp passed, $kf failed, $ks skipped"
}

# insmod_load NAME PARAMS: load the module for a named load.
insmod_load() {
	load=$1
	vm_time "load-$load"
	echo "$load" >>"$loads_run"
	echo "vm-load: $load ($2)"
	# shellcheck disable=SC2086 # PARAMS is a list of words
	if ! insmod "$ko" $2; then
		result fail "insmod nfence $2 (load $load)"
		return 1
	fi
	result pass "insmod nfence $2 (load $load)"
	note_module_range
}
rmmod_load() {
	check "rmmod nfence (load $load)" rmmod nfence
	check "no CMP thread after unload (load $load)" \
		bash -c "! pgrep '^nfence-cmp/' >/dev/null"
}

if [ "$mode" != demo ]; then
	# Invalid configurations are refused at load time.
	check_fails "insmod refuses num_adapters=0" insmod "$ko" num_adapters=0
	check_fails "insmod refuses num_adapters=9" insmod "$ko" num_adapters=9
	check_fails "insmod refuses num_engines=9" insmod "$ko" num_engines=9
	check_fails "insmod refuses vram_visible_mb > vram_mb" \
		insmod "$ko" vram_mb=16 vram_visible_mb=32
	check_fails "insmod refuses doorbell_model=3" insmod "$ko" doorbell_model=3
	check_fails "insmod refuses num_doorbells=0" insmod "$ko" num_doorbells=0
	check_fails "insmod refuses f1_idle_ms=60001" insmod "$ko" f1_idle_ms=60001
	check_fails "insmod refuses client_fences=8191" insmod "$ko" client_fences=8191
	check_fails "insmod refuses more values than adapters" \
		insmod "$ko" num_adapters=1 native_fences=1,0
	check_fails "insmod refuses adapter 1's num_engines=9" \
		insmod "$ko" num_adapters=2 num_engines=3,9
	check "no module left after refused loads" bash -c '! grep -q "^nfence " /proc/modules'

	# A plain insmod: every parameter shows the default architecture.rst
	# documents; a second plain load gives its adapter another LUID (24
	# random bits: the two agree once in 16 million runs).
	if check "insmod nfence with no parameters" insmod "$ko"; then
		check "after a plain insmod every parameter has its documented default" \
			python3 "$top/scripts/param-defaults-check.py" \
			"$top/Documentation/architecture.rst" \
			/sys/module/nfence/parameters
		luids1=$(adapter_luids)
		check "rmmod nfence (plain load)" rmmod nfence
		if check "insmod nfence with no parameters, again" insmod "$ko"; then
			luids2=$(adapter_luids)
			echo "vm: LUIDs of the two plain loads: ${luids1:-none} / ${luids2:-none}"
			check "a reload gives the adapter a new LUID" \
				test -n "$luids1" -a -n "$luids2" -a "$luids1" != "$luids2"
			check "rmmod nfence (second plain load)" rmmod nfence
		fi
	fi
fi

# Nothing from boot or from the refused loads counts against the suite.
[ -w "$kmemleak" ] && echo clear >"$kmemleak"

# The main load: one adapter for the demo; otherwise two, the first
# limiting the fence handles of a file to the fewest it may
# (nfence_fence@create-max-fences fills them), the second with no limit
# but memory, the default (nfence_fence@create-past-fewest-limit).
adapters=1
main_params="num_adapters=1"
if [ "$mode" != demo ]; then
	adapters=2
	main_params="num_adapters=2 client_fences=8192,0"
fi
if ! insmod_load main "$main_params ${NFENCE_INSMOD_EXTRA:-}"; then
	finish
	exit 1
fi
mapfile -t nodes < <(render_nodes)
check "$adapters render nodes" test "${#nodes[@]}" -eq "$adapters"
check "CMP threads running" bash -c "[ \$(pgrep -c '^nfence-cmp/') -eq $adapters ]"

if [ "$mode" != demo ]; then
	# Unload must be refused while a file, a fence's CPU mapping or a
	# shared fence fd is held (each alone), and work once it is dropped.
	exec 3<>"${nodes[0]}"
	check_fails "rmmod refused with an open render node" rmmod nfence
	check "module still loaded" nfence_loaded
	exec 3>&-
	hold=$build/selftests/nfence_hold
	check_timed "rmmod refused with only a fence mapping held" 60 \
		"$hold" mmap "${nodes[0]}" -- bash -c '! rmmod nfence 2>/dev/null'
	check_timed "rmmod refused with only a shared fence fd held" 60 \
		"$hold" fence-fd "${nodes[0]}" -- bash -c '! rmmod nfence 2>/dev/null'
	check "module still loaded" nfence_loaded
fi

check_timed "libnfence demo (nfence-info)" 60 "$build/libnfence/nfence-info"
check_timed "libnfence fence demo (nfence-fence-demo)" 120 \
	"$build/libnfence/nfence-fence-demo"
check_timed "libnfence pipeline demo (nfence-pipeline-demo)" 120 \
	"$build/libnfence/nfence-pipeline-demo"
check_timed "libnfence doorbell demo (nfence-doorbell-demo)" 120 \
	"$build/libnfence/nfence-doorbell-demo"
# The WSL-style C++ program (issue 18): its report is checked line by line.
check_timed "nfence-wsl-compat, its report checked (run-wsl-compat.sh)" 120 \
	env ADAPTERS="$adapters" sh "$top/libnfence/tests/run-wsl-compat.sh" \
	"$build/libnfence/nfence-wsl-compat"
# nfence-trace (Documentation/tracing.rst): the pipeline demo with logged
# fence commands recorded, then the demo's own --trace; each JSON checked
# against the trace-event rules, with the demo's one engine-to-engine
# flow, its three commands queued by libnfence (its probes, through
# uprobes) each with a flow to its log entry that goes from the CPU to
# the GPU forward in time, and its nine slices (WORK, GPU wait, two
# signals, two CPU waits, three queued commands). A kernel without
# uprobe events (the debug kernel's configuration) gets the documented
# fallback instead: a warning from each recorder, and the same trace
# without the queued commands (one flow, six slices).
trace_dir=$(mktemp -d)
uprobes=/sys/kernel/tracing/uprobe_events
[ -e "$uprobes" ] || uprobes=/sys/kernel/debug/tracing/uprobe_events
if [ -e "$uprobes" ]; then
	trace_want="--flows 4 --slices 9 --cat-flows nfence.queued=3 --cross-flows nfence.queued"
else
	trace_want="--flows 1 --slices 6 --cat-flows nfence.queued=0"
fi
check_timed "nfence-trace record of the pipeline demo" 120 \
	"$build/libnfence/nfence-trace" record -o "$trace_dir/pipeline.txt" \
	--json "$trace_dir/record.json" -- \
	"$build/libnfence/nfence-pipeline-demo" --logged \
	2>"$trace_dir/record.err"
check_timed "nfence-pipeline-demo --trace" 120 \
	"$build/libnfence/nfence-pipeline-demo" --trace "$trace_dir/demo.json" \
	2>"$trace_dir/demo.err"
cat "$trace_dir/record.err" "$trace_dir/demo.err"
# shellcheck disable=SC2086 # $trace_want is a list of options
check "nfence-trace: both are valid trace-event JSON" \
	python3 "$top/scripts/nfence-trace-check.py" $trace_want \
	--cat-flows nfence.flow=1 \
	--min-tracks 4 "$trace_dir/record.json" "$trace_dir/demo.json"
# record converts the recording's binary events (libtraceevent); the
# capture it saved converts through the text parser: both must give the
# same trace.
check "nfence-trace: the saved capture converts to the trace the recording gave" \
	sh -c '"$1" convert "$2" -o "$3" &&
	       a=$(python3 "$4" "$5" | sed "s/.*json: //") &&
	       b=$(python3 "$4" "$3" | sed "s/.*json: //") &&
	       echo "recorded: $a; converted: $b" && [ -n "$a" ] && [ "$a" = "$b" ]' \
	sh "$build/libnfence/nfence-trace" "$trace_dir/pipeline.txt" \
	"$trace_dir/converted.json" "$top/scripts/nfence-trace-check.py" \
	"$trace_dir/record.json"
# trace-cmd's own recording converts too (its trace.dat, read through
# libtracecmd): the kernel's events only (trace-cmd defines no uprobes), so
# the fallback's 1 flow and 6 slices, and the timestamp frequency given
# (100 MHz, architecture.rst).
check_timed "trace-cmd record of the pipeline demo" 120 \
	trace-cmd record -q -C mono -e nfence -o "$trace_dir/trace.dat" \
	"$build/libnfence/nfence-pipeline-demo" --logged
check "nfence-trace convert of trace-cmd's trace.dat" \
	sh -c '"$1" convert "$2" --frequency 100000000 -o "$3" &&
	       python3 "$4" --flows 1 --slices 6 --cat-flows nfence.queued=0 \
		--cat-flows nfence.flow=1 --min-tracks 4 "$3"' \
	sh "$build/libnfence/nfence-trace" "$trace_dir/trace.dat" \
	"$trace_dir/dat.json" "$top/scripts/nfence-trace-check.py"
if [ -e "$uprobes" ]; then
	# Both recorders removed the uprobes they put on libnfence's probes.
	check "nfence-trace: no nfence_umd uprobe left in $uprobes" \
		sh -c '[ -r "$1" ] && ! grep -q nfence_umd "$1"' sh "$uprobes"
	# A definition left by a recorder that died (here on another file)
	# is replaced: the queued commands are recorded, and nothing stays.
	check "nfence-trace: a leftover nfence_umd uprobe defined" \
		sh -c 'echo "p:nfence_umd/nfence_fence_wait_queued /bin/true:0x0" >>"$1"' \
		sh "$uprobes"
	check_timed "nfence-trace record over a leftover uprobe" 120 \
		"$build/libnfence/nfence-trace" record -o "$trace_dir/stale.txt" \
		--json "$trace_dir/stale.json" -- \
		"$build/libnfence/nfence-pipeline-demo" --logged
	check "nfence-trace: the leftover replaced, the queued commands recorded" \
		python3 "$top/scripts/nfence-trace-check.py" \
		--cat-flows nfence.queued=3 "$trace_dir/stale.json"
	check "nfence-trace: no nfence_umd uprobe left after it" \
		sh -c '! grep -q nfence_umd "$1"' sh "$uprobes"
	# Defining and removing the uprobes goes through libtracefs, whose
	# bookworm release has read past its own lists: one short recording
	# under valgrind, which fails on any invalid access (the recording's
	# heap layout decides whether such a read crashes without it).
	check_timed "nfence-trace record under valgrind: no invalid memory access" 120 \
		valgrind -q --error-exitcode=9 "$build/libnfence/nfence-trace" \
		record -o "$trace_dir/valgrind.txt" -- true
	check "nfence-trace: no nfence_umd uprobe left after the valgrind run" \
		sh -c '! grep -q nfence_umd "$1"' sh "$uprobes"
else
	check "nfence-trace: without uprobe events, both recorders say no queued events are recorded" \
		sh -c 'grep -q "no \"queued\" events will be recorded" "$1" &&
		       grep -q "no \"queued\" events will be recorded" "$2"' \
		sh "$trace_dir/record.err" "$trace_dir/demo.err"
fi
# record sets every adapter's logging level (debugfs nfence_adapter) to
# ALL (1) while its command runs and puts back what was there; a second
# recorder meanwhile finds the instance taken and fails, and the first
# exits with its command's status.
levels() {
	grep -h '^logging_level:' /sys/kernel/debug/dri/*/nfence_adapter |
		awk '{ print $2 }' | tr '\n' ' '
}
levels_before=$(levels)
check_timed "nfence-trace record: its command runs" 60 \
	"$build/libnfence/nfence-trace" record -o "$trace_dir/levels.txt" -- \
	sh -c 'grep -h "^logging_level:" /sys/kernel/debug/dri/*/nfence_adapter >"$1"' \
	sh "$trace_dir/levels-during"
echo "vm: logging levels before, during and after nfence-trace record:" \
	"$levels_before/ $(awk '{ print $2 }' "$trace_dir/levels-during" | tr '\n' ' ')/ $(levels)"
check "nfence-trace record: logging level ALL on every adapter while it records" \
	sh -c '[ "$(wc -l <"$1")" -ge "$2" ] && ! grep -qv "^logging_level: 1$" "$1"' \
	sh "$trace_dir/levels-during" "${#nodes[@]}"
check "nfence-trace record: the logging levels put back afterwards" \
	test "$(levels)" = "$levels_before"
check_fails "nfence-trace record: a recorder inside a recorder fails, and so does the outer one" \
	"$build/libnfence/nfence-trace" record -o "$trace_dir/outer.txt" -- \
	sh -c '"$1" record -o "$2" -- true 2>"$3"' sh \
	"$build/libnfence/nfence-trace" "$trace_dir/inner.txt" \
	"$trace_dir/inner.err"
check "nfence-trace record: the second recorder says the instance exists" \
	grep -q "File exists" "$trace_dir/inner.err"
rm -rf "$trace_dir"

if [ "$mode" != demo ]; then
	vm_time igt
	run_igt
	vm_time kselftest
	run_kselftests
	vm_time kmemleak
	kmemleak_check "main, loaded"
fi

rmmod_load
if [ "$mode" != demo ]; then
	kmemleak_check "main, after unload"
fi

if [ "$mode" = full ]; then
	vm_time other-loads
	# The other adapter models, each with the IGT binaries (or
	# BINARY@SUBTEST globs) run in it ("-" for none) and its module
	# parameters. The subtests that
	# tests/expected-skips.txt says run in a load run there too, and must
	# pass there.
	while IFS='|' read -r name whole params; do
		insmod_load "$name" "$params" || continue
		sel=/tmp/nfence-select-$name
		runs_in "$name" >"$sel"
		for b in $whole; do
			case $b in
			-) ;;
			*@*) echo "$b" >>"$sel" ;;
			*) echo "$b@*" >>"$sel" ;;
			esac
		done
		if [ "$name" = wddm2x ] || [ "$name" = mixed ]; then
			check_timed "libnfence demo with a WDDM 2.x-style adapter ($name)" \
				60 "$build/libnfence/nfence-info"
		fi
		if [ "$name" = f1idle ]; then
			check_timed "libnfence doorbell demo with an F1 round trip" \
				120 "$build/libnfence/nfence-doorbell-demo"
		fi
		if [ -s "$sel" ]; then
			run_igt -s "$sel"
		fi
		rmmod_load
	done <<'LOADS'
wddm2x|nfence_query nfence_queue@hwqueue-monitored-progress nfence_queue@hwqueue-create-user-mode-submission nfence_fence@monitored-*|num_engines=8 native_fences=0 optimized_default_fence=0 user_mode_submission=0 no_64bit_atomics=1 vram_mb=8 vram_visible_mb=0
gpu32|nfence_submit@gpu-signal-lower nfence_submit@gpu-signal-lower-released|no_64bit_atomics=1
adapters8|nfence_basic nfence_device|num_adapters=8
engines1|nfence_sched|num_engines=1
notdr|-|tdr_timeout_ms=0
doorbells1|nfence_doorbell|num_doorbells=1
globaldb|nfence_doorbell|doorbell_model=2
f1idle|nfence_doorbell@f1-idle nfence_doorbell@f1-window-*|f1_idle_ms=100
quota|nfence_alloc@client-quota nfence_alloc@client-quota-fences nfence_query@segment-usage*|client_vram_mb=8 client_sysmem_mb=16
mixed|nfence_query|num_adapters=2 native_fences=1,0 user_mode_submission=1,0 num_engines=3,8 vram_visible_mb=16,0 no_64bit_atomics=0,1
irqpayload|nfence_log nfence_wait nfence_xadapter nfence_sched@stress-* nfence_exit@bound-point-published-at-exit nfence_exit@blocked-work-released-by-syncobj|num_adapters=3 interrupt_payload=2,1,0
peer|nfence_query@native-fence-caps nfence_xadapter@peer-* nfence_unplug@unbind-peer-signals|num_adapters=3 peer_signals=1,1,0
LOADS

	# On a kernel with fault injection (the debug kernel): every
	# allocation nfence makes on the paths a process drives fails once,
	# one at a time (nfence_faults), then the random-ioctl stress with
	# kills. Both must leave no leak and a module that unloads. The
	# failure reports the first provokes carry stack dumps: the console
	# takes none of them, and the kernel-log check below skips exactly
	# those, in that run's log only. Both load their adapters with
	# peer_signals, so that cross-adapter fences take the peer tables'
	# paths (their allocation failures, joins and leaves under kills).
	if [ -e /proc/self/fail-nth ]; then
		vm_time faults
		if insmod_load faults num_adapters=2 peer_signals=1; then
			# The log so far is kept whole; this run's without
			# what the injected failures print.
			dmesg >>/tmp/nfence-dmesg-kept
			dmesg -C
			dmesg -n 1
			IGT_DIR=$build/tests/igt/faults run_igt
			dmesg -n 5
			dmesg | nfence_strip_fault_reports >>/tmp/nfence-dmesg-kept
			dmesg -C
			rmmod_load
			kmemleak_check "faults, after unload"
		fi
		vm_time stress
		if insmod_load stress num_adapters=2 peer_signals=1; then
			check_timed "random-ioctl stress: 2 adapters, 8 processes x 4 threads, 60 s, kills" \
				600 "$build/tests/stress/nfence_stress" -a 2 -p 8 -t 4 -d 60
			rmmod_load
			kmemleak_check "stress, after unload"
		fi
	fi
fi

# NFENCE_KUNIT_KO, an nfence.ko built with NFENCE_KUNIT=y (make coverage):
# its KUnit suites run while it loads, under this kernel's checkers (and,
# built with gcov, counted with the rest). The benchmark suites
# ("nfencebench_*") stay out, as in scripts/kunit.sh.
if [ -n "${NFENCE_KUNIT_KO:-}" ]; then
	vm_time kunit
	dmesg >>/tmp/nfence-dmesg-kept
	dmesg -C
	main_ko=$ko
	ko=$NFENCE_KUNIT_KO
	# (printf: a newline would be part of the glob)
	if ! printf 'nfence_*' >/sys/module/kunit/parameters/filter_glob; then
		result fail "kunit: set kunit.filter_glob" \
			"a kernel with CONFIG_KUNIT: the debug kernel"
	elif insmod_load kunit ""; then
		dmesg --notime >/tmp/nfence-kunit.log
		run_kunit /tmp/nfence-kunit.log
		rmmod_load
		kmemleak_check "kunit, after unload"
	fi
	ko=$main_ko
fi

if [ "$mode" != demo ]; then
	# Every expected skip happened where the list says, and the test
	# passed in the load the list says it runs in: the list cannot rot.
	# Of the loads this run made (main mode makes one). Looked up in
	# arrays, not with a grep per line: under the debug kernel every
	# process costs a tenth of a second.
	declare -A ran=() seen=()
	while read -r l; do
		ran[$l]=1
	done <"$loads_run"
	while read -r l st t; do
		seen["$l $st $t"]=1
	done <"$results"
	while read -r l t r _; do
		case $l in '' | '#'*) continue ;; esac
		case $t in kunit:* | host:*) continue ;; esac
		if [ -n "${ran[$l]:-}" ] && [ -z "${seen["$l skip $t"]:-}" ]; then
			result fail "expected skip of $t in load $l" \
				"it did not skip there: update tests/expected-skips.txt"
		fi
		if [ "$r" != - ] && [ -n "${ran[$r]:-}" ] &&
		   [ -z "${seen["$r pass $t"]:-}" ]; then
			result fail "$t passes in load $r" \
				"tests/expected-skips.txt says it runs there"
		fi
	done <"$expected"
	# Any other skip fails; run-igt.sh already counts unlisted IGT skips,
	# run_kunit unlisted KUnit skips.
	while read -r l st t; do
		case $t in igt:* | kunit:*) continue ;; esac
		if [ "$st" = skip ] && ! grep -qE "^${l}[[:space:]]+${t}[[:space:]]" "$expected"; then
			result fail "unexpected skip of $t in load $l" \
				"tests/expected-skips.txt does not list it"
		fi
	done <"$results"
fi

# make coverage (scripts/coverage.sh): NFENCE_GCOV_OUT names a directory
# the guest may write; an nfence.ko built with NFENCE_GCOV=y left its gcov
# counters under /sys/kernel/debug/gcov, summed over every load (the
# kernel keeps an unloaded module's counters and adds a reload's to them),
# and they are copied there for lcov.
if [ -n "${NFENCE_GCOV_OUT:-}" ]; then
	vm_time gcov
	# One directory per module build (the suite's, the KUnit one's), named
	# after it: $NFENCE_GCOV_OUT/kmod-coverage/nfence_drv.gcda, ...
	copied=0
	while read -r gcda; do
		dir=$NFENCE_GCOV_OUT/$(basename "${gcda%/*}")
		mkdir -p "$dir"
		for f in "${gcda%/*}"/*.gcda; do
			cat "$f" >"$dir/${f##*/}" && copied=$((copied + 1))
		done
	done < <(find /sys/kernel/debug/gcov -name nfence_drv.gcda 2>/dev/null)
	if [ "$copied" -gt 0 ]; then
		result pass "gcov: the counters of $copied objects copied to $NFENCE_GCOV_OUT"
	else
		result fail "gcov: no nfence counters under /sys/kernel/debug/gcov" \
			"a kernel with CONFIG_GCOV_KERNEL and nfence.ko built with NFENCE_GCOV=y"
	fi
fi

vm_time log-check
# The kernel log must show no splat of any kind.
touch /tmp/nfence-dmesg-kept
{ cat /tmp/nfence-dmesg-kept; dmesg; } >/tmp/nfence-dmesg
if nfence_splats /tmp/nfence-dmesg >/tmp/nfence-splat; then
	# The first splats in context.
	grep -E -B4 -A16 "$NFENCE_SPLAT_RE" /tmp/nfence-dmesg | head -n 120
	result fail "kernel log free of WARN/BUG/Oops/lockdep/KASAN/refcount/leak"
else
	result pass "kernel log free of WARN/BUG/Oops/lockdep/KASAN/refcount/leak"
fi

finish
