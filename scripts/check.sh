#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: every suite, summed into one closing line.
#
#   scripts/check.sh KVER...
#
# Steps: build for every kernel, libnfence host tests, lint, the VM suites on
# every kernel (IGT, kselftest, demo, dmesg check) and on a KASAN + lockdep +
# kmemleak debug build of 6.12, KUnit. Each step ends with
# a "name: N passed, N failed[, N skipped]" line; a step that fails without
# counting a failure counts as one. Exits non-zero if anything failed.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
BUILD=${BUILD:-$top/build}
mkdir -p "$BUILD"
kvers=("$@")
if [ "${#kvers[@]}" -eq 0 ]; then
	echo "check: no supported kernel with headers installed (make deps)" >&2
	exit 1
fi

P=0 F=0 S=0
summary=()
re='^[A-Za-z0-9_.+~-]+: ([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?$'

step() { # name command...
	local name=$1 log rc line p=0 f=0 s=0 start=$SECONDS
	shift
	log=$BUILD/check-$name.log
	echo "=== $name: $*"
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	line=$(grep -E "$re" "$log" | tail -n1 | tr -d '\r')
	if [ -z "$line" ]; then
		# kselftest harness output (libnfence host tests).
		line=$(grep -E '^# Totals: ' "$log" | tail -n1)
		if [ -n "$line" ]; then
			p=$(echo "$line" | sed -nE 's/.* pass:([0-9]+).*/\1/p')
			f=$(( $(echo "$line" | sed -nE 's/.* fail:([0-9]+).*/\1/p') +
			      $(echo "$line" | sed -nE 's/.*error:([0-9]+).*/\1/p') ))
			s=$(echo "$line" | sed -nE 's/.*skip:([0-9]+).*/\1/p')
		fi
	elif [[ $line =~ $re ]]; then
		p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]} s=${BASH_REMATCH[4]:-0}
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	P=$((P + p)) F=$((F + f)) S=$((S + s))
	summary+=("$(printf '%-28s %4d passed %4d failed %4d skipped %5ds' \
		"$name" "$p" "$f" "$s" $((SECONDS - start)))")
}

build_all() {
	local k
	for k in "${kvers[@]}"; do
		make -s module KVER="$k" || return 1
	done
	make -s lib igt selftests || return 1
	echo "build: ${#kvers[@]} passed, 0 failed"
}

step build build_all
step libnfence make -s check-host
step lint scripts/lint.sh "${kvers[@]}"
for k in "${kvers[@]}"; do
	step "vm-$k" scripts/check-vm.sh "$k"
done
step vm-debug make -s check-debug
step kunit scripts/kunit.sh

echo
echo "=== summary"
printf '%s\n' "${summary[@]}"
echo "check: took $SECONDS s"
echo "$P passed, $F failed, $S skipped"
[ "$F" -eq 0 ]
