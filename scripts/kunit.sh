#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the nfence KUnit suites with kunit.py (UML) in a linux-source-6.12
# tree. The driver is dropped into drivers/gpu/drm/nfence of a hard-linked
# copy of the pristine tree, exactly as it would sit in-tree, and its
# Kconfig is sourced from drivers/gpu/drm. Tree and build directory are cached
# under ~/.cache/nfence/kunit, keyed by the source version and the
# .kunitconfig, so a warm run only rebuilds what changed.
#
# Prints "kunit: N passed, N failed, N skipped" and exits non-zero on failure.
#   scripts/kunit.sh --build-only   configure and build only (make check
#                                   builds ahead, in the background)
# Runs of this script take turns (a lock in the cache): the tree is shared.
# KUNIT_FILTER selects suites (default "nfence_*": every suite but the
# benchmarks, which are "nfencebench_*" and run with "make bench-waiters").
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
CACHE=${NFENCE_CACHE:-$HOME/.cache/nfence}
SRC=${NFENCE_KUNIT_SRC:-$CACHE/linux-source-6.12}
JOBS=${JOBS:-$(nproc)}
build_only=
if [ "${1:-}" = --build-only ]; then
	build_only=1
fi

if [ ! -e "$SRC/tools/testing/kunit/kunit.py" ]; then
	echo "kunit: no kernel source at $SRC (run 'make deps')" >&2
	exit 1
fi
src=$(readlink -f "$SRC")
key=$(basename "$src")-$(sha1sum "$top/tests/kunit/.kunitconfig" | cut -c1-12)
# NFENCE_HARNESS_SELFTEST=1: add the suite that WARNs on purpose (this run
# must fail); its own build directory, so the normal one stays warm.
extra=()
if [ -n "${NFENCE_HARNESS_SELFTEST:-}" ]; then
	extra=(--kconfig_add CONFIG_DRM_NFENCE_HARNESS_SELFTEST=y)
	key=$key-harness
fi
# "kunit2": drivers/gpu/drm/Kconfig sources the project's top-level Kconfig
# (the trees under tree-* source the driver's directly); a tree and build
# of their own, so checkouts of either layout can share the cache.
tree=$CACHE/kunit/tree2-$(basename "$src")
build=$CACHE/kunit/build2-$key

mkdir -p "$CACHE/kunit"
exec 9>"$CACHE/kunit/.lock"
flock 9
if [ ! -e "$tree/.nfence-tree" ]; then
	rm -rf "$tree"
	cp -al "$src" "$tree"
	# Hook the driver into drivers/gpu/drm as an in-tree driver would be,
	# through the top-level Kconfig (copied in below as Kconfig.nfence).
	# sed -i writes new files, so the hard links to the pristine tree break.
	sed -i '$a source "Kconfig.nfence"' "$tree/drivers/gpu/drm/Kconfig"
	sed -i '$a obj-$(CONFIG_DRM_NFENCE) += nfence/' \
		"$tree/drivers/gpu/drm/Makefile"
	touch "$tree/.nfence-tree"
fi

# Copy (not link) the driver, its tests and the uapi header in; --checksum
# keeps the timestamps of unchanged files so the build stays incremental.
# NFENCE_KUNIT_DRV: the driver's sources from there instead (a mutant's
# copy, scripts/mutants.sh), the tests still from tests/kunit.
rsync -a --no-times --checksum --delete --exclude=tests \
	"${NFENCE_KUNIT_DRV:-$top/drivers/gpu/drm/nfence}/" \
	"$tree/drivers/gpu/drm/nfence/"
rsync -a --no-times --checksum --delete \
	"$top/tests/kunit/" "$tree/drivers/gpu/drm/nfence/tests/"
rsync -a --no-times --checksum "$top/include/uapi/drm/nfence_drm.h" \
	"$tree/include/uapi/drm/nfence_drm.h"
rsync -a --no-times --checksum "$top/Kconfig" "$tree/Kconfig.nfence"

if [ -n "$build_only" ]; then
	cd "$tree"
	exec python3 tools/testing/kunit/kunit.py build \
		--kunitconfig=drivers/gpu/drm/nfence/tests/.kunitconfig \
		--build_dir="$build" --jobs="$JOBS" "${extra[@]}"
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
(cd "$tree" && python3 tools/testing/kunit/kunit.py run \
	--kunitconfig=drivers/gpu/drm/nfence/tests/.kunitconfig \
	--build_dir="$build" --jobs="$JOBS" --timeout=600 "${extra[@]}" \
	"${KUNIT_FILTER:-nfence_*}") 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e

# kunit.py's closing line: "Testing complete. Ran N tests: passed: P,
# failed: F, skipped: S, errors: E" (fields absent when zero).
line=$(grep -E 'Testing complete\. Ran [0-9]+ tests' "$log" | tail -n1 || true)
field() { echo "$line" | grep -oE "$1: [0-9]+" | grep -oE '[0-9]+' || echo 0; }
passed=$(field passed)
failed=$(( $(field failed) + $(field crashed) + $(field errors) ))
skipped=$(field skipped)
if [ -z "$line" ] || [ "$passed" -eq 0 ]; then
	failed=$((failed + 1))
	echo "kunit: kunit.py did not report any test run" >&2
fi
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
	failed=1
fi
# Every suite of tests/kunit (but the benchmarks, and the harness
# self-test unless asked for) ran, with as many cases as its source lists:
# a suite left out of the build, or a case dropped from its table, fails.
if [ -z "${KUNIT_FILTER:-}" ]; then
	for f in "$top"/tests/kunit/*_test.c; do
		suite=$(sed -nE 's/^\t\.name = "([a-z0-9_]+)",$/\1/p' "$f" | tail -n1)
		if [ "$suite" = nfence_harness ] && [ -z "${NFENCE_HARNESS_SELFTEST:-}" ]; then
			continue
		fi
		cases=$(grep -cE '^\s*KUNIT_CASE' "$f")
		if ! grep -qE "=+ $suite \($cases subtests\) =+" "$log"; then
			echo "kunit: suite $suite ($(basename "$f")) did not run its $cases cases" >&2
			failed=$((failed + 1))
		fi
	done
fi
# The configuration came through the top-level Kconfig: kconfig read it
# (auto.conf.cmd lists every Kconfig file it parsed) and the driver's
# symbol is set. A Kconfig that does not parse fails kunit.py itself.
if ! grep -qsE '^[[:space:]]Kconfig\.nfence( \\)?$' "$build/include/config/auto.conf.cmd" ||
   ! grep -qs '^CONFIG_DRM_NFENCE=y$' "$build/.config"; then
	echo "kunit: the configuration did not come through the top-level Kconfig" \
		"(Kconfig.nfence not read, or CONFIG_DRM_NFENCE not set)" >&2
	failed=$((failed + 1))
fi
# A skipped case must be listed in tests/expected-skips.txt (load
# "kunit-uml": UML runs one CPU), and, when every suite ran, a listed one
# must have skipped.
while read -r name; do
	if ! grep -qE "^kunit-uml[[:space:]]+kunit:${name}[[:space:]]" "$top/tests/expected-skips.txt"; then
		echo "kunit: unexpected skip of $name (tests/expected-skips.txt does not list it)" >&2
		failed=$((failed + 1))
	fi
done < <(sed -nE 's/.*\[SKIPPED\] ([^ ]+).*/\1/p' "$log")
if [ -z "${KUNIT_FILTER:-}" ]; then
	while read -r name; do
		if ! grep -qE "\[SKIPPED\] $name( |$)" "$log"; then
			echo "kunit: expected skip of $name did not happen (update tests/expected-skips.txt)" >&2
			failed=$((failed + 1))
		fi
	done < <(awk '$1 == "kunit-uml" { sub(/^kunit:/, "", $2); print $2 }' \
		"$top/tests/expected-skips.txt")
fi
# A test can pass while the kernel under it complains: any checker's report
# in the UML kernel's log (lockdep, a WARN, sleeping in atomic context,
# debug objects, list corruption) fails the run.
if [ ! -e "$build/test.log" ]; then
	echo "kunit: no kernel log at $build/test.log" >&2
	failed=$((failed + 1))
elif nfence_splats "$build/test.log" >&2; then
	echo "kunit: the kernel log above has a splat" >&2
	failed=$((failed + 1))
fi
# KUNIT_SHOW: a pattern of raw kernel log lines to print (benchmark results).
if [ -n "${KUNIT_SHOW:-}" ] && [ -e "$build/test.log" ]; then
	grep -E "$KUNIT_SHOW" "$build/test.log" | sed 's/^.*\] *//; s/^ *# *//'
fi
echo "kunit: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
