#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run-example.sh NAME BINARY MOCK_SO PATTERN...: run an example program
# (with the arguments in $EXAMPLE_ARGS, if any) against the fake driver
# (LD_PRELOAD of MOCK_SO) and check that its output matches every PATTERN
# (grep regexes) and that it has no "not ok" line, then that it fails when
# there is no adapter at all. Prints "ok NAME: ..." or the output and
# "not ok NAME".
set -u

name=$1
bin=$2
mock=$3
shift 3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

out=$(NFENCE_MOCK_DIR=$dir NFENCE_DRI_DIR=$dir LD_PRELOAD=$mock \
	timeout 60 "$bin" ${EXAMPLE_ARGS:-} 2>&1)
rc=$?
fail=0
[ $rc -eq 0 ] || { echo "# exit status $rc"; fail=1; }
for pattern in "$@"; do
	if ! printf '%s\n' "$out" | grep -q -- "$pattern"; then
		echo "# missing: $pattern"
		fail=1
	fi
done
if printf '%s\n' "$out" | grep -q "^not ok"; then
	fail=1
fi

# No adapter at all: a failure exit.
NFENCE_DRI_DIR=$dir/none "$bin" ${EXAMPLE_ARGS:-} > /dev/null 2>&1 && {
	echo "# exit status 0 without adapters"
	fail=1
}

if [ $fail -ne 0 ]; then
	printf '%s\n' "$out" | sed -e 's/^/# /'
	echo "not ok $name"
	exit 1
fi
echo "ok $name: $(printf '%s\n' "$out" | wc -l) lines checked"
