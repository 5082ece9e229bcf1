#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Static checks of the kernel code: checkpatch --strict on every driver,
# KUnit and uapi file; sparse (C=2) and W=1 builds against each kernel
# given, and on each build's objects the layering check of
# scripts/arch-numbers.py; that every mutant of tests/mutants.txt applies
# and has a well-formed run: field (scripts/mutants.sh --check-apply); the
# shell scripts' shellcheck; the documentation.
#
#   scripts/lint.sh KVER...
#
# Prints one line per check and "lint: N passed, N failed, 0 skipped".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${NFENCE_CACHE:-$HOME/.cache/nfence}
SRC=${NFENCE_KUNIT_SRC:-$CACHE/linux-source-6.12}
BUILD=${BUILD:-$top/build}
pass=0 fail=0

result() {
	echo "lint: $1: $2"
	if [ "$1" = pass ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}

checkpatch=$SRC/scripts/checkpatch.pl
files=$(cd "$top" && ls drivers/gpu/drm/nfence/*.[ch] tests/kunit/*.c \
	include/uapi/drm/nfence_drm.h)
if [ -x "$checkpatch" ] || [ -r "$checkpatch" ]; then
	for f in $files; do
		out=$(cd "$top" && perl "$checkpatch" --strict --no-tree --quiet \
			--show-types --ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG \
			-f "$f" 2>&1)
		if [ -z "$out" ]; then
			result pass "checkpatch --strict $f"
		else
			echo "$out"
			result fail "checkpatch --strict $f"
		fi
	done
else
	result fail "checkpatch.pl not found at $checkpatch (make deps)"
fi

for kver in "$@"; do
	kdir=/lib/modules/$kver/build
	work=$BUILD/lint-$kver
	rm -rf "$work"
	mkdir -p "$work"
	rsync -a --exclude=tests "$top/drivers/gpu/drm/nfence/" "$work/"
	log=$work/build.log
	if make -C "$kdir" M="$work" NFENCE_UAPI="$top/include/uapi" \
		CONFIG_DRM_NFENCE=m W=1 C=2 CHECK="sparse" modules >"$log" 2>&1; then
		# Only our files count: the kernel headers are not ours to fix.
		if grep -E "^$work/[^:]+:[0-9]+:[0-9]*:? ?(warning|error)" "$log"; then
			result fail "sparse + W=1 on $kver"
		else
			result pass "sparse + W=1 on $kver"
		fi
		# The layering (no circle, no arrow up) and architecture.rst's
		# numbers, measured on this build's objects.
		if python3 "$top/scripts/arch-numbers.py" \
			"$top/drivers/gpu/drm/nfence" "$work" --check \
			"$top/Documentation/architecture.rst"; then
			result pass "layering and architecture.rst's numbers ($kver)"
		else
			result fail "layering and architecture.rst's numbers ($kver)"
		fi
	else
		tail -n 30 "$log"
		result fail "build with sparse + W=1 on $kver"
	fi
done

# The mutation list stays true to the code and the tests: every mutant of
# tests/mutants.txt applies, and its run: field names known loads, tests
# and subtests (no build, no VM).
if out=$("$top/scripts/mutants.sh" --check-apply 2>&1); then
	result pass "mutants apply, run: fields check ($(echo "$out" | tail -n2 | paste -sd ';' | sed 's/;/; /'))"
else
	echo "$out"
	result fail "mutants apply, run: fields check (tests/mutants.txt)"
fi

# Shell scripts: warnings and errors (not style notes) fail.
if command -v shellcheck >/dev/null; then
	for f in "$top"/scripts/*.sh "$top"/.ci/run; do
		if (cd "$top" && shellcheck -x -S warning "${f#"$top"/}"); then
			result pass "shellcheck ${f#"$top"/}"
		else
			result fail "shellcheck ${f#"$top"/}"
		fi
	done
else
	result fail "shellcheck not found (make deps)"
fi

# Documentation: the kernel-doc it pulls must exist and render cleanly.
if command -v sphinx-build >/dev/null; then
	if out=$(BUILD="$BUILD" "$top/scripts/docs.sh" 2>&1); then
		result pass "docs (sphinx-build -W, kernel-doc)"
	else
		echo "$out"
		result fail "docs (sphinx-build -W, kernel-doc)"
	fi
else
	result fail "sphinx-build not found (make deps)"
fi

echo "lint: $pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
