#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run-igt.sh [-s SELECTION] [-x ALLOWED_SKIPS] BINDIR
#
# Run the nfence IGT tests the way igt_runner does, with a watchdog on
# every subtest and every result printed the moment the test reports it.
#
# BINDIR/tests.list (written by tests/igt/Makefile) names the binaries the
# build made. Each must be there and executable; any other executable in
# BINDIR is a stale binary and fails the run, so does a binary that lists no
# subtest. Each binary's subtests come from --list-subtests, and every
# listed subtest must end with a result.
#
# IGT_MODE=binary (default) runs each binary once with all its subtests
# (--run-subtest a,b,c), because under emulation starting a libigt process
# costs seconds; IGT_MODE=subtest runs every subtest in its own process.
# Either way the output is read line by line: "Starting subtest: X" starts
# X's watchdog, "Subtest X: RESULT (T s)" ends it. A subtest that reports
# nothing within its limit is killed with its process group and fails;
# the subtests after it run in a new process, as do those after a crash.
#
# Prints "pass: BIN@SUBTEST", "skip: ..." or "fail: ... (why)" per subtest,
# an "igt-time:" line per binary, a line saying how many subtests are the
# generated bad-handle matrix, and closes with exactly one line
#   igt: N passed, N failed, N skipped, N errors
# where errors count binaries that could not be run at all. Exits 1 if
# anything failed or erred, or if nothing ran.
#
# Options and environment:
#   -s FILE            run only the BIN@SUBTEST lines of FILE (globs allowed
#                      in SUBTEST); a line that matches nothing is an error
#   -x FILE            BIN@SUBTEST lines that may skip; any other skip fails,
#                      and so does a listed subtest that ran and did not skip
#   IGT_TIMEOUT        per-subtest watchdog in seconds (default 60);
#                      BINDIR/timeouts.txt ("BIN@SUBTEST SECONDS" lines)
#                      names the subtests that need longer
#   IGT_BINARY_TIMEOUT seconds for one binary's whole run (default 900)
#   IGT_RESULTS        directory for the logs (default a temp dir)
#   IGT_LIST_CACHE     a directory that keeps each binary's subtest list
#                      for later calls (reused while newer than the
#                      binary): a VM run's loads start the same binaries,
#                      and a process start costs seconds under emulation
#   IGT_VERBOSE=1      print the log of each failed subtest
#
# A line a test prints as "igt-report: TEXT" is passed on as TEXT, for what
# a passing subtest has to say too (nfence_faults lists the fault sites it
# reached this way).
set -u

selection='' allowed=''
while getopts s:x: opt; do
	case $opt in
	s) selection=$OPTARG ;;
	x) allowed=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -ne 1 ]; then
	echo "usage: $0 [-s SELECTION] [-x ALLOWED_SKIPS] BINDIR" >&2
	exit 2
fi
bindir=$1
timeout_s=${IGT_TIMEOUT:-60}
binary_timeout=${IGT_BINARY_TIMEOUT:-900}
results=${IGT_RESULTS:-$(mktemp -d "${TMPDIR:-/tmp}/nfence-igt.XXXXXX")}
mkdir -p "$results"

passed=0 failed=0 skipped=0 errors=0 matrix=0 total=0

error() {
	echo "error: $1"
	errors=$((errors + 1))
}

if [ ! -r "$bindir/tests.list" ]; then
	error "no $bindir/tests.list (build the tests: make igt)"
	echo "igt: 0 passed, 0 failed, 0 skipped, $errors errors"
	exit 1
fi
mapfile -t binaries < <(grep -v '^#' "$bindir/tests.list")

declare -A limit=() may_skip=()
if [ -r "$bindir/timeouts.txt" ]; then
	while read -r t s; do
		[ -n "$t" ] && [ "${t:0:1}" != "#" ] && limit[$t]=$s
	done <"$bindir/timeouts.txt"
fi
if [ -n "$allowed" ]; then
	while read -r t; do
		[ -n "$t" ] && may_skip[$t]=1
	done < <(grep -v '^#' "$allowed")
fi
declare -A selected_hits=()
selected=()
if [ -n "$selection" ]; then
	mapfile -t selected < <(grep -v '^#' "$selection" | grep .)
fi

# Stale binaries: executables here that the build did not list. No
# process per file: under the debug kernel each costs a tenth of a second.
declare -A listed=()
for name in "${binaries[@]}"; do
	listed[$name]=1
done
for f in "$bindir"/*; do
	name=${f##*/}
	case $name in
	*.o | *.so | *.sh | *.txt | *.list) continue ;;
	esac
	[ -f "$f" ] && [ -x "$f" ] || continue
	if [ -z "${listed[$name]:-}" ]; then
		error "$name: stale binary, not in $bindir/tests.list"
	fi
done

# The generated bad-handle matrix: one subtest per object and per way a
# handle can be wrong (nfence_bad_name()).
is_matrix() {
	[[ $1 =~ -(handle|device|context|hwqueue|fence)-(zero|unknown|destroyed|other-device|other-fd|wrong-kind)$ ]]
}

report() { # bin sub result [why]
	local id=$1@$2 res=$3 why=${4:-}
	if [ "$res" = SKIP ] && [ -z "${may_skip[$id]:-}" ]; then
		res=FAIL why="unexpected skip; tests/expected-skips.txt does not list it"
	elif [ "$res" != SKIP ] && [ -n "${may_skip[$id]:-}" ] &&
	     [ "$res" = SUCCESS ]; then
		res=FAIL why="passed, but tests/expected-skips.txt says it skips here: update the list"
	fi
	total=$((total + 1))
	is_matrix "$2" && matrix=$((matrix + 1))
	case $res in
	SUCCESS)
		echo "pass: $id"
		passed=$((passed + 1))
		;;
	SKIP)
		echo "skip: $id"
		skipped=$((skipped + 1))
		;;
	*)
		echo "fail: $id (${why:-$res})"
		failed=$((failed + 1))
		if [ "${IGT_VERBOSE:-0}" = 1 ]; then
			sed 's/^/    /' "$results/$1@$2.log" 2>/dev/null
		fi
		;;
	esac
}

# run_set BIN SUBTEST...: run the subtests in as few processes as a hang or
# a crash allows, reporting each.
run_set() {
	local bin=$1 name
	shift
	name=$(basename "$bin")
	local -a pending=("$@")
	local -A done_=()
	while [ "${#pending[@]}" -gt 0 ]; do
		local fifo cur='' cur_start=0 cur_limit=0 line sub res t pid fd chunk partial
		local start=$SECONDS progress=0 killed=
		fifo=$(mktemp -u "$results/fifo.XXXXXX")
		mkfifo "$fifo"
		setsid "$bin" --run-subtest "$(IFS=,; echo "${pending[*]}")" \
			>"$fifo" 2>&1 </dev/null &
		pid=$!
		exec {fd}<"$fifo"
		rm -f "$fifo"
		partial=
		while :; do
			# A line can arrive in pieces (the binary's stdout is a
			# full buffer into the fifo): a read that times out keeps
			# what it got, and the next one goes on from there.
			if IFS= read -r -t 1 -u "$fd" chunk; then
				line=$partial$chunk
				partial=
				echo "$line" >>"$results/$name.log"
				[ -n "$cur" ] && echo "$line" >>"$results/$name@$cur.log"
				case $line in
				"igt-report: "*)
					# What a test reports for the log
					# (e.g. the fault sites it reached).
					echo "${line#igt-report: }"
					;;
				"Starting subtest: "*)
					cur=${line#Starting subtest: }
					cur_start=$SECONDS
					cur_limit=${limit[$name@$cur]:-$timeout_s}
					echo "$line" >"$results/$name@$cur.log"
					;;
				"Subtest "*": "*)
					sub=${line#Subtest }
					sub=${sub%%: *}
					res=${line#Subtest "$sub": }
					res=${res%% *}
					if [ -z "${done_[$sub]:-}" ]; then
						done_[$sub]=1
						progress=1
						report "$name" "$sub" "$res"
					fi
					cur=
					;;
				esac
			elif [ $? -gt 128 ]; then
				partial=$partial$chunk
				# No line for a second: the watchdogs.
				if [ -n "$cur" ] &&
				   [ $((SECONDS - cur_start)) -ge "$cur_limit" ]; then
					killed="watchdog: no result after ${cur_limit}s"
				elif [ $((SECONDS - start)) -ge "$binary_timeout" ]; then
					killed="binary timeout: ${binary_timeout}s"
				fi
				if [ -n "$killed" ]; then
					kill -KILL -- "-$pid" 2>/dev/null
					break
				fi
			else
				# EOF: the process is gone (a last line without
				# a newline is only output, never a result).
				[ -n "$partial$chunk" ] &&
					echo "$partial$chunk" >>"$results/$name.log"
				break
			fi
		done
		exec {fd}<&-
		wait "$pid" 2>/dev/null
		t=$?
		if [ -n "$cur" ] && [ -z "${done_[$cur]:-}" ]; then
			done_[$cur]=1
			progress=1
			report "$name" "$cur" FAIL "${killed:-the process died (exit $t)}"
		fi
		local -a rest=()
		for sub in "${pending[@]}"; do
			[ -z "${done_[$sub]:-}" ] && rest+=("$sub")
		done
		pending=("${rest[@]}")
		if [ "$progress" = 0 ]; then
			# The process ended without a word on any of them.
			for sub in "${pending[@]}"; do
				report "$name" "$sub" FAIL "no result (exit $t)"
			done
			pending=()
		fi
	done
}

for name in "${binaries[@]}"; do
	bin=$bindir/$name
	if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then
		error "$name: missing or not executable ($bin)"
		continue
	fi
	if [ "${#selected[@]}" -gt 0 ]; then
		# Listing costs a process start: only binaries a pattern names.
		wanted=
		for pat in "${selected[@]}"; do
			# shellcheck disable=SC2053 # glob match on purpose
			[[ $name == ${pat%%@*} ]] && wanted=1 && break
		done
		[ -n "$wanted" ] || continue
	fi
	start=$SECONDS
	cache=${IGT_LIST_CACHE:+$IGT_LIST_CACHE/${bin//\//_}.list}
	if [ -n "$cache" ] && [ -s "$cache" ] && [ "$cache" -nt "$bin" ]; then
		mapfile -t subs <"$cache"
	else
		if ! subtests=$("$bin" --list-subtests 2>"$results/$name.list.err"); then
			error "$name: --list-subtests failed: $(head -c 300 "$results/$name.list.err")"
			continue
		fi
		if [ -z "$subtests" ]; then
			error "$name: lists no subtest"
			continue
		fi
		mapfile -t subs < <(echo "$subtests")
		if [ -n "$cache" ]; then
			printf '%s\n' "${subs[@]}" >"$cache"
		fi
	fi
	if [ "${#selected[@]}" -gt 0 ]; then
		want=()
		for sub in "${subs[@]}"; do
			# Every pattern that names the subtest counts as a hit
			# (an exact name and a glob may both name it); it runs
			# once.
			hit=
			for pat in "${selected[@]}"; do
				# shellcheck disable=SC2053 # glob match on purpose
				if [[ $name@$sub == $pat ]]; then
					selected_hits[$pat]=1
					hit=1
				fi
			done
			[ -z "$hit" ] || want+=("$sub")
		done
		subs=("${want[@]}")
		[ "${#subs[@]}" -gt 0 ] || continue
	fi
	: >"$results/$name.log"
	if [ "${IGT_MODE:-binary}" = subtest ]; then
		for sub in "${subs[@]}"; do
			run_set "$bin" "$sub"
		done
	else
		run_set "$bin" "${subs[@]}"
	fi
	# Where the time goes: the binary's subtests, its wall time (with the
	# process starts, which cost seconds under emulation) and its slowest
	# subtests.
	sed -nE 's/^Subtest ([^:]+): [A-Z]+ \(([0-9.]+)s\)/\2 \1/p' "$results/$name.log" |
		sort -rn | awk -v b="$name" -v w=$((SECONDS - start)) \
			'{ t += $1 } NR <= 3 { s = s " " $2 "=" $1 "s" }
			END { if (NR) printf "igt-time: %s %.1fs (wall %ds), slowest:%s\n", b, t, w, s }'
done

for pat in "${selected[@]}"; do
	[ -n "${selected_hits[$pat]:-}" ] || error "selection $pat matches no subtest"
done

echo "igt: $total subtests: $matrix in the generated bad-handle matrix, $((total - matrix)) others"
echo "igt: $passed passed, $failed failed, $skipped skipped, $errors errors"
if [ "$failed" -ne 0 ] || [ "$errors" -ne 0 ] || [ "$total" -eq 0 ]; then
	exit 1
fi
exit 0
