#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-exports.sh LIB MAP [HEADER]: the dynamic symbols LIB defines must be
# exactly the global symbols of the version script MAP, nothing more, nothing
# less, each with the version of the node MAP lists it in; and, given HEADER,
# exactly the functions it declares NFENCE_EXPORT.
set -eu

lib=$1
map=$2
header=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Names between "global:" and "local:", comments stripped.
sed -e 's|/\*.*\*/||g' "$map" |
	awk '/global:/ { on = 1; next } /local:|}/ { on = 0 } on' |
	tr -d ' \t;' | grep -v '^$' | sort > "$tmp/map"

# Defined dynamic symbols, minus the version node itself (type A),
# with the @@VERSION suffix removed.
nm -D --defined-only "$lib" |
	awk '$2 != "A" { print $3 }' | sed -e 's/@.*//' | sort > "$tmp/lib"

if ! diff -u "$tmp/map" "$tmp/lib" > "$tmp/diff"; then
	echo "not ok check-exports: $lib exports differ from $map" \
	     "(- map only, + library only):"
	sed -e 's/^/# /' "$tmp/diff"
	exit 1
fi
if [ -n "$header" ]; then
	sed -n -e 's/^NFENCE_EXPORT .*[ *]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p' \
		"$header" | sort > "$tmp/header"
	if ! diff -u "$tmp/map" "$tmp/header" > "$tmp/diff"; then
		echo "not ok check-exports: $header declares other functions" \
		     "than $map exports (- map only, + header only):"
		sed -e 's/^/# /' "$tmp/diff"
		exit 1
	fi
fi
# Every export must carry the version of its node in the map.
sed -e 's|/\*.*\*/||g' "$map" |
	awk '/{/ { node = $1; next }
	     /global:/ { on = 1; next } /local:|}/ { on = 0 }
	     on { gsub(/[ \t;]/, ""); if ($0 != "") print $0 "@@" node }' |
	sort > "$tmp/mapver"
nm -D --defined-only "$lib" | awk '$2 != "A" { print $3 }' |
	sort > "$tmp/libver"
if ! diff -u "$tmp/mapver" "$tmp/libver" > "$tmp/diff"; then
	echo "not ok check-exports: symbol versions differ from $map" \
	     "(- map, + library):"
	sed -e 's/^/# /' "$tmp/diff"
	exit 1
fi
nodes=$(sed -e 's/.*@@//' "$tmp/mapver" | sort -u | tr '\n' ' ')
echo "ok check-exports: $(wc -l < "$tmp/lib") symbols, versions ${nodes% }"
