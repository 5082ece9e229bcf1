#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Run libnfence's host checks (called by "make check"): every kselftest
# binary, the export list check, the check that the VM kselftest
# nfence_libnfence_test.c ($SELFTEST) calls every export, the check that
# the sources' include and call arrows close no circle, the check that
# Documentation/libnfence.rst's "Sources" table names every source file,
# the check that its "Entry points of WSL's D3DKMT" table names exactly
# libdxg's entry points (tests/libdxg-entry-points.txt), all exported,
# the check that the public header refuses 32-bit and big-endian targets,
# and nfence-info, nfence-fence-demo, nfence-pipeline-demo and a quick
# nfence-gpu-bench against the fake driver, and nfence-trace's converter
# on a capture recorded in a VM (run-trace.sh), the fork and close paths
# under valgrind (run-valgrind.sh), and an install into a scratch DESTDIR
# used through pkg-config (check-install.sh).
# Sums the kselftest totals and closes with
# "libnfence: N passed, N failed, N skipped".
set -u

pass=0 fail=0 skip=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

for t in $TESTS; do
	echo "== $t"
	"$O/tests/$t" >"$log" 2>&1
	rc=$?
	cat "$log"
	totals=$(grep '^# Totals: ' "$log" | tail -n 1)
	if [ -z "$totals" ]; then
		fail=$((fail + 1))
		continue
	fi
	p=$(echo "$totals" | sed -n 's/.* pass:\([0-9]*\).*/\1/p')
	f=$(echo "$totals" | sed -n 's/.* fail:\([0-9]*\).*/\1/p')
	e=$(echo "$totals" | sed -n 's/.*error:\([0-9]*\).*/\1/p')
	s=$(echo "$totals" | sed -n 's/.*skip:\([0-9]*\).*/\1/p')
	pass=$((pass + p)) fail=$((fail + f + e)) skip=$((skip + s))
	[ "$rc" -ne 0 ] && [ $((f + e)) -eq 0 ] && fail=$((fail + 1))
done

echo "== check-exports"
if sh tests/check-exports.sh "$SHLIB" libnfence.map include/nfence/d3dkmthk.h; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
fi

echo "== check-selftest-exports"
if sh tests/check-selftest-exports.sh libnfence.map \
	"${SELFTEST:-../tools/testing/selftests/drivers/gpu/nfence/nfence_libnfence_test.c}"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
fi

echo "== layering (include and call arrows of src/)"
if python3 tests/check-layering.py src "$O/obj"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
fi

echo "== source table (Documentation/libnfence.rst names src/'s files)"
if python3 tests/check-source-table.py src ../Documentation/libnfence.rst; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
fi

echo "== entry points (Documentation/libnfence.rst names libdxg's, all exported)"
if python3 tests/check-entry-points.py tests/libdxg-entry-points.txt \
	../Documentation/libnfence.rst "$SHLIB"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
fi

# header_refuses DESCRIPTION CC-FLAGS...: the header included alone with
# CC-FLAGS must stop at its #error (a layout it cannot give).
header_refuses() {
	what=$1
	shift
	if printf '#include <nfence/d3dkmthk.h>\n' |
		${CC:-cc} -fsyntax-only -Iinclude "$@" -x c - 2>"$log"; then
		echo "not ok: the header compiles for $what"
		return 1
	fi
	# gcc says "error: #error ...", clang "error: ..."; both quote it.
	if ! grep -q 'error: .*is for 64-bit little-endian (LP64) machines only' "$log"; then
		cat "$log"
		echo "not ok: the header fails for $what, but not at its #error"
		return 1
	fi
	echo "ok: the header refuses $what"
}

echo "== the header refuses 32-bit and big-endian targets"
if header_refuses "a target without __LP64__" -U__LP64__ &&
	header_refuses "a big-endian target" -U__BYTE_ORDER__ \
		-D__BYTE_ORDER__=__ORDER_BIG_ENDIAN__; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
fi

echo "== nfence-info (fake driver)"
if sh tests/run-nfence-info.sh "$INFO" "$O/tests/libmock-nfence.so"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
fi

echo "== nfence-fence-demo (fake driver)"
if sh tests/run-fence-demo.sh "$DEMO" "$O/tests/libmock-nfence.so"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
fi

echo "== nfence-pipeline-demo (fake driver)"
if sh tests/run-pipeline-demo.sh "$PIPELINE" "$O/tests/libmock-nfence.so"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
fi

echo "== nfence-wsl-compat (fake driver)"
if sh tests/run-wsl-compat.sh "$COMPAT" "$O/tests/libmock-nfence.so"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
fi

echo "== nfence-gpu-bench -q (fake driver)"
if sh tests/run-gpu-bench.sh "$BENCH" "$O/tests/libmock-nfence.so"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
fi

echo "== nfence-trace (sample capture, malformed captures, checker)"
if sh tests/run-trace.sh "$TRACE" ../scripts/nfence-trace-check.py; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
fi

echo "== valgrind (fork and close paths, fake driver)"
sh tests/run-valgrind.sh "$O/tests"
case $? in
0)	pass=$((pass + 1)) ;;
77)	skip=$((skip + 1)) ;;
*)	fail=$((fail + 1)) ;;
esac

echo "== install (DESTDIR, pkg-config, man pages, uninstalled .pc)"
if sh tests/check-install.sh "$O" "$O/tests/libmock-nfence.so"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
fi

echo "libnfence: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
