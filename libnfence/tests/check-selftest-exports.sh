#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-selftest-exports.sh MAP TEST: every global symbol of the version
# script MAP (libnfence.map) must be called in the C source TEST (the VM
# kselftest nfence_libnfence_test.c), that is appear there as NAME( outside
# comments and string literals. Prints "ok check-selftest-exports: ..." or
# the names it misses and "not ok ...".
set -eu

map=$1
test=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -r "$test" ]; then
	echo "not ok check-selftest-exports: no $test"
	exit 1
fi

# Names between "global:" and "local:", comments stripped (as check-exports.sh).
sed -e 's|/\*.*\*/||g' "$map" |
	awk '/global:/ { on = 1; next } /local:|}/ { on = 0 } on' |
	tr -d ' \t;' | grep -v '^$' | sort -u > "$tmp/map"
if [ ! -s "$tmp/map" ]; then
	echo "not ok check-selftest-exports: no exported name in $map"
	exit 1
fi

# The source without comments, and with string and character literals
# emptied, so that a name in a comment or a message does not count.
awk '
{
	out = ""
	n = length($0)
	i = 1
	while (i <= n) {
		c = substr($0, i, 1)
		c2 = substr($0, i, 2)
		if (incomment) {
			if (c2 == "*/") {
				incomment = 0
				i += 2
			} else {
				i++
			}
			continue
		}
		if (quote != "") {
			if (c == "\\") {
				i += 2
				continue
			}
			if (c == quote) {
				out = out c
				quote = ""
			}
			i++
			continue
		}
		if (c2 == "/*") {
			incomment = 1
			out = out " "
			i += 2
			continue
		}
		if (c2 == "//")
			break
		if (c == "\"" || c == "\047")
			quote = c
		out = out c
		i++
	}
	print out
}' "$test" > "$tmp/code"

missing=
count=0
while read -r name; do
	count=$((count + 1))
	if ! grep -Eq "(^|[^A-Za-z0-9_])$name[[:space:]]*\(" "$tmp/code"; then
		missing="$missing $name"
	fi
done < "$tmp/map"

if [ -n "$missing" ]; then
	echo "not ok check-selftest-exports: $(basename "$test") does not call" \
	     "$(echo $missing | wc -w) of the $count names $map exports:"
	for name in $missing; do
		echo "# $name"
	done
	exit 1
fi
echo "ok check-selftest-exports: $(basename "$test") calls all $count exports"
