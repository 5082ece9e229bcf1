#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the virtme-ng guest for "scripts/mutants.sh --batch":
#   mutants-guest.sh PLAN BUILD TOP LIB
# LIB is (a copy of) scripts/lib.sh. PLAN has one job a line,
#   NAME|KO|LOAD|PARAMS|ITEM...
# (ITEMs separated by spaces, as in tests/mutants.txt's "run:" field:
# igt:BIN@SUB[,SUB...], kselftest:BIN[@FIXTURE.TEST[,...]], demo:NAME).
# For each job, in order: clear the kernel log, insmod KO PARAMS, run the
# ITEMs up to the first that fails, rmmod (given RMMOD_TIMEOUT seconds,
# default 60), check that no CMP thread is left and that the kernel log has
# no splat (scripts/lib.sh's pattern). One line per job:
#   batch-start: NAME
#   batch-result: NAME SECONDS survived
#   batch-result: NAME SECONDS killed by WHY
# WHY is the first of: the item that failed (run-igt.sh's "fail: ..." or
# "error: ..." line, the kselftest's "not ok ..." line, the demo's exit),
# an insmod that failed, the first splat line ("kernel: ..."), an rmmod
# that failed or hung, a CMP thread left after rmmod. When the guest cannot
# go on (nfence still loaded, a CMP thread left, an oops, a BUG or a panic
# in the log) it prints "batch-reboot: after NAME" and exits 3: the host
# boots a new guest for the jobs after NAME. After the last job it prints
# "batch: complete".
set -u

plan=$1 build=$2 top=$3
# shellcheck source=scripts/lib.sh
. "$4"
exec 2>&1
RMMOD_TIMEOUT=${RMMOD_TIMEOUT:-60}
expected=$top/tests/expected-skips.txt
echo "batch: kernel $(uname -r), $(nproc) cpus"
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
nfence_memcg_warm_up
# The console (the host's log of a guest that dies) shows warnings and
# worse only; dmesg has it all.
dmesg -n 5
ko1=$(head -n1 "$plan" | cut -d'|' -f2)
for dep in $(modinfo -F depends "$ko1" | tr ',' ' '); do
	modprobe "$dep"
done

# The first result line of a log matching PATTERN, or nothing.
first_line() { grep -m1 -E "$1" "$2" | tr -d '\r'; }

# run_items LOAD ITEM...: run the items (their output to ours); sets why to
# why the first that fails failed, leaves it empty if all passed.
run_items() {
	local load=$1 item bin subs s sel log rc line args parts
	shift
	sel=/tmp/nfence-batch-select
	: >"$sel"
	for item in "$@"; do
		case $item in
		igt:*@*)
			bin=${item#igt:}
			subs=${bin#*@}
			bin=${bin%%@*}
			# Split on commas only: a subtest may be a glob.
			IFS=, read -r -a parts <<<"$subs"
			for s in "${parts[@]}"; do echo "$bin@$s" >>"$sel"; done
			;;
		esac
	done
	if [ -s "$sel" ]; then
		log=/tmp/nfence-batch-igt.log
		nfence_allowed_skips "$expected" "$load" >/tmp/nfence-batch-allowed
		IGT_VERBOSE=1 IGT_RESULTS=/tmp/nfence-batch-igt \
			"$build/mutants-run-igt.sh" -s "$sel" \
			-x /tmp/nfence-batch-allowed "$build/tests/igt" | tee "$log"
		rc=${PIPESTATUS[0]}
		line=$(first_line '^(fail|error): ' "$log")
		if [ -n "$line" ]; then
			why=$line
			return
		elif [ "$rc" -ne 0 ]; then
			why="run-igt.sh exit $rc"
			return
		fi
	fi
	for item in "$@"; do
		case $item in
		kselftest:*)
			bin=${item#kselftest:}
			subs=
			case $bin in
			*@*)
				subs=${bin#*@}
				bin=${bin%%@*}
				;;
			esac
			args=()
			IFS=, read -r -a parts <<<"$subs"
			for s in "${parts[@]}"; do
				[ -n "$s" ] && args+=(-r "$s")
			done
			log=/tmp/nfence-batch-ksft.log
			timeout -k 10 600 "$build/selftests/$bin" "${args[@]}" 2>&1 | tee "$log"
			rc=${PIPESTATUS[0]}
			line=$(first_line '^not ok |^ok .* # SKIP' "$log")
			if [ -n "$line" ]; then
				why="kselftest $bin: $line"
				return
			elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
				why="kselftest $bin: hung: killed after 600 s"
				return
			elif [ "$rc" -ne 0 ]; then
				why="kselftest $bin: exit $rc"
				return
			elif ! grep -qE '^ok ' "$log"; then
				why="kselftest $bin: ran no test"
				return
			fi
			;;
		demo:*)
			bin=${item#demo:}
			if [ "$bin" = nfence-wsl-compat ]; then
				# Its report is checked line by line (vm-run.sh).
				args=(sh "$top/libnfence/tests/run-wsl-compat.sh"
					"$build/libnfence/$bin")
			else
				args=("$build/libnfence/$bin")
			fi
			timeout -k 10 120 "${args[@]}"
			rc=$?
			if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
				why="demo $bin: hung: killed after 120 s"
				return
			elif [ "$rc" -ne 0 ]; then
				why="demo $bin: exit $rc"
				return
			fi
			;;
		esac
	done
}

# unload LOAD: rmmod within RMMOD_TIMEOUT seconds; sets gone to why it
# failed, leaves it empty if the module is gone and no CMP thread is left.
unload() {
	local load=$1 pid
	gone=
	rmmod nfence &
	pid=$!
	for _ in $(seq 1 "$RMMOD_TIMEOUT"); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 1
	done
	if kill -0 "$pid" 2>/dev/null; then
		gone="rmmod nfence (load $load) hung: not done after $RMMOD_TIMEOUT s"
		return
	fi
	if ! wait "$pid"; then
		gone="rmmod nfence (load $load) failed"
	elif grep -q '^nfence ' /proc/modules; then
		gone="nfence still loaded after rmmod (load $load)"
	elif pgrep '^nfence-cmp/' >/dev/null; then
		gone="a CMP thread outlives rmmod (load $load)"
	fi
}

while IFS='|' read -r -u 3 name ko load params items; do
	echo "batch-start: $name"
	start=$SECONDS
	dmesg -C
	# Where this job starts in the console log the host keeps.
	echo "<4>nfence-batch: start $name" >/dev/kmsg
	why='' stuck=0
	echo "batch-load: $load ($params)"
	# shellcheck disable=SC2086 # PARAMS is a list of words
	if ! insmod "$ko" $params; then
		why="insmod nfence $params (load $load) failed"
	else
		# Split on blanks only: an item may hold a glob.
		read -r -a item_list <<<"$items"
		run_items "$load" "${item_list[@]}"
	fi
	# Unloaded whatever the tests did; a module that will not go, or a
	# CMP thread left (even after a failed insmod), is a finding and
	# leaves a guest the next job cannot use.
	gone=''
	if grep -q '^nfence ' /proc/modules; then
		unload "$load"
	elif pgrep '^nfence-cmp/' >/dev/null; then
		gone="a CMP thread is left with nfence not loaded (load $load)"
	fi
	if [ -n "$gone" ]; then
		why=${why:-$gone}
		stuck=1
	fi
	dmesg >/tmp/nfence-batch-dmesg
	if line=$(nfence_splats /tmp/nfence-batch-dmesg | head -n1) && [ -n "$line" ]; then
		why=${why:-"kernel: $line"}
		grep -E -B4 -A16 "$NFENCE_SPLAT_RE" /tmp/nfence-batch-dmesg | head -n 60
		if grep -qE 'Oops|BUG:|general protection|Kernel panic' /tmp/nfence-batch-dmesg; then
			stuck=1
		fi
	fi
	if [ -n "$why" ]; then
		echo "batch-result: $name $((SECONDS - start)) killed by $why"
	else
		echo "batch-result: $name $((SECONDS - start)) survived"
	fi
	if [ "$stuck" -eq 1 ]; then
		echo "batch-reboot: after $name"
		exit 3
	fi
done 3<"$plan"
echo "batch: complete"
