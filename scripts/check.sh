#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: every suite, summed into one closing line.
#
#   scripts/check.sh KVER...
#
# Steps: build for every kernel, libnfence host tests (with an install into
# a scratch DESTDIR), lint, the Debian packages (built, lintian, installed
# with apt in a throwaway root where DKMS builds the module for every
# kernel, a VM per kernel booted on it: modprobe of DKMS's module, the
# installed tools; then apt-get purge; this is make check's DKMS step too:
# make dkms-check, which builds the same DKMS tree, is not run), the VM
# suites on every kernel (IGT, kselftest, demo, dmesg check), the syncobj bridge with
# a virtio-gpu device (6.12), and on a KASAN + lockdep +
# kmemleak debug build of 6.12, KUnit. Each step ends with a
# "name: N passed, N failed, N skipped[, N errors]" line (scripts/lib.sh).
# A step that exits non-zero without counting anything counts as one
# error, as does a step that prints no result line at all: an error means
# the step could not test (no guest, a missing tool), a failure that a test
# ran and failed. Closes with a per-step table, the lines that name what
# failed (CI shows only the end of the output), and
#   N passed, N failed, N skipped, N errors
# and exits non-zero if anything failed or erred.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
BUILD=${BUILD:-$top/build}
mkdir -p "$BUILD"
kvers=("$@")
if [ "${#kvers[@]}" -eq 0 ]; then
	echo "check: no supported kernel with headers installed (make deps)" >&2
	exit 1
fi

P=0 F=0 S=0 E=0
summary=()
failures=()
re='^[A-Za-z0-9_.+~-]+: [0-9]+ passed, [0-9]+ failed'

step() { # name command...
	local name=$1 log rc line p=0 f=0 s=0 e=0 start=$SECONDS note=
	shift
	log=$BUILD/check-$name.log
	echo "=== $name: $*"
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	line=$(grep -E "$re" "$log" | tail -n1 | tr -d '\r')
	if [ -n "$line" ]; then
		read -r p f s e < <(nfence_counts "$line")
	elif ! read -r p f s e < <(nfence_ktap_totals "$log"); then
		# kselftest harness output (libnfence host tests) or nothing.
		e=1 note="no result line"
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && [ "$e" -eq 0 ]; then
		e=1 note="exit $rc with nothing counted"
	fi
	P=$((P + p)) F=$((F + f)) S=$((S + s)) E=$((E + e))
	if [ "$f" -ne 0 ] || [ "$e" -ne 0 ]; then
		# What failed, by name, for the closing lines: CI shows only
		# the end of the output.
		while IFS= read -r line; do
			failures+=("$name: $line")
		done < <(grep -E '^(vm-check: )?fail: |^not ok |: FAIL|^check-vm: FAIL' "$log" |
			tr -d '\r' | head -n 20)
	fi
	summary+=("$(printf '%-28s %4d passed %4d failed %4d skipped %2d errors %5ds %s' \
		"$name" "$p" "$f" "$s" "$e" $((SECONDS - start)) "$note")")
}

build_all() {
	local k
	for k in "${kvers[@]}"; do
		if ! make -s module KVER="$k"; then
			echo "build: 0 passed, 1 failed"
			return 1
		fi
	done
	if ! make -s lib igt selftests stress; then
		echo "build: 0 passed, 1 failed"
		return 1
	fi
	echo "build: ${#kvers[@]} passed, 0 failed"
}

step build build_all
step libnfence make -s check-host
step lint scripts/lint.sh "${kvers[@]}"
step deb scripts/deb.sh check "${kvers[@]}"
for k in "${kvers[@]}"; do
	step "vm-$k" scripts/check-vm.sh "$k"
done
step virtio-gpu scripts/virtio-gpu-check.sh "${kvers[@]}"
step vm-debug make -s check-debug
step kunit scripts/kunit.sh

echo
echo "=== summary"
printf '%s\n' "${summary[@]}"
if [ "${#failures[@]}" -ne 0 ]; then
	echo "=== what failed (first 20 lines of each failing step)"
	printf '%s\n' "${failures[@]}"
fi
echo "check: took $SECONDS s"
echo "$P passed, $F failed, $S skipped, $E errors"
[ "$F" -eq 0 ] && [ "$E" -eq 0 ]
