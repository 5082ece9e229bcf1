#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run-igt.sh BINDIR: run every subtest of every IGT binary in BINDIR the
# way igt_runner does: list the subtests (--list-subtests), run each in its
# own process (--run-subtest NAME) under a timeout, and classify it by exit
# status: 0 pass, 77 skip, anything else (98 failure, 79 invalid, 112
# abort, 124 timeout, a signal) fail.
#
# Prints "pass: BIN@SUBTEST" / "skip: ..." / "fail: ... (exit N)" per
# subtest and closes with exactly one line
#   igt: N passed, N failed, N skipped
# Exits 1 if anything failed or if no subtest ran at all.
#
# Environment: IGT_TIMEOUT (seconds per subtest, default 120),
# IGT_RESULTS (directory for per-subtest logs, default a temp dir),
# IGT_VERBOSE=1 (print the log of failed subtests), IGT_REQUIRE_PASS=1
# (also exit 1 when no subtest passed, e.g. all skipped because the driver
# is not loaded), IGT_MODE=binary (run each binary once with all its
# subtests and read the "Subtest NAME: RESULT" lines; much faster where
# starting a process is slow, as on a KASAN kernel under emulation; a
# subtest with no result line, e.g. after the binary died, is a failure).

set -u

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: $0 BINDIR" >&2
	exit 2
fi

bindir=$1
timeout_s=${IGT_TIMEOUT:-120}
results=${IGT_RESULTS:-}
if [ -z "$results" ]; then
	results=$(mktemp -d "${TMPDIR:-/tmp}/nfence-igt.XXXXXX")
fi
mkdir -p "$results"

passed=0
failed=0
skipped=0

for bin in "$bindir"/*; do
	if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then
		continue
	fi
	name=$(basename "$bin")
	case $name in
	*.o | *.so | *.sh) continue ;;
	esac

	start=$SECONDS
	if ! subtests=$("$bin" --list-subtests 2>"$results/$name.list.err"); then
		echo "fail: $name (--list-subtests failed)"
		failed=$((failed + 1))
		continue
	fi

	if [ "${IGT_MODE:-subtest}" = binary ]; then
		log="$results/$name.log"
		n=$(echo "$subtests" | wc -w)
		timeout --kill-after=10 $((timeout_s * n)) "$bin" >"$log" 2>&1 </dev/null
		for sub in $subtests; do
			res=$(sed -nE "s/^Subtest $sub: ([A-Z]+).*/\1/p" "$log" | tail -n1)
			case $res in
			SUCCESS)
				echo "pass: $name@$sub"
				passed=$((passed + 1))
				;;
			SKIP)
				echo "skip: $name@$sub"
				skipped=$((skipped + 1))
				;;
			*)
				echo "fail: $name@$sub (${res:-no result})"
				failed=$((failed + 1))
				;;
			esac
		done
		# Where the time goes: the binary's subtests, its wall time (with
		# the process starts, which cost seconds under emulation) and its
		# slowest subtests.
		sed -nE 's/^Subtest ([^:]+): [A-Z]+ \(([0-9.]+)s\)/\2 \1/p' "$log" |
			sort -rn | awk -v b="$name" -v w=$((SECONDS - start)) \
				'{ t += $1 } NR <= 3 { s = s " " $2 "=" $1 "s" }
				END { if (NR) printf "igt-time: %s %.1fs (wall %ds), slowest:%s\n", b, t, w, s }'
		if [ "${IGT_VERBOSE:-0}" = 1 ] && grep -qE '^Subtest .*: (FAIL|CRASH|TIMEOUT)' "$log"; then
			sed 's/^/    /' "$log"
		fi
		continue
	fi

	for sub in $subtests; do
		log="$results/$name@$sub.log"
		timeout --kill-after=10 "$timeout_s" \
			"$bin" --run-subtest "$sub" >"$log" 2>&1 </dev/null
		rc=$?
		case $rc in
		0)
			echo "pass: $name@$sub"
			passed=$((passed + 1))
			;;
		77)
			echo "skip: $name@$sub"
			skipped=$((skipped + 1))
			;;
		*)
			case $rc in
			124 | 137) why="timeout after ${timeout_s}s" ;;
			*) why="exit $rc" ;;
			esac
			echo "fail: $name@$sub ($why)"
			failed=$((failed + 1))
			if [ "${IGT_VERBOSE:-0}" = 1 ]; then
				sed 's/^/    /' "$log"
			fi
			;;
		esac
	done
done

echo "igt: $passed passed, $failed failed, $skipped skipped"

if [ "$failed" -ne 0 ] || [ $((passed + failed + skipped)) -eq 0 ]; then
	exit 1
fi
if [ "${IGT_REQUIRE_PASS:-0}" = 1 ] && [ "$passed" -eq 0 ]; then
	exit 1
fi
exit 0
