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

# Defined dynamic symbols, minus the version node itself (type A) and
# the compatibility versions (NAME@VERSION, one @: checked last), with the
# @@VERSION suffix removed.
nm -D --defined-only "$lib" |
	awk '$2 != "A" && $3 ~ /@@/ { print $3 }' | sed -e 's/@.*//' |
	sort > "$tmp/lib"

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
nm -D --defined-only "$lib" | awk '$2 != "A" && $3 ~ /@@/ { print $3 }' |
	sort > "$tmp/libver"
if ! diff -u "$tmp/mapver" "$tmp/libver" > "$tmp/diff"; then
	echo "not ok check-exports: symbol versions differ from $map" \
	     "(- map, + library):"
	sed -e 's/^/# /' "$tmp/diff"
	exit 1
fi
# A compatibility version NAME@NODE (an old binary's NAME, kept by a
# .symver in the source) must be of a node the map has, and NAME must be
# exported at a later node too: the map defines what a new link gets.
nm -D --defined-only "$lib" |
	awk '$2 != "A" && $3 ~ /@/ && $3 !~ /@@/ { print $3 }' |
	sort > "$tmp/compat"
sed -e 's|/\*.*\*/||g' "$map" | awk '/{/ { print $1 }' > "$tmp/nodes"
while IFS=@ read -r name node; do
	if ! grep -qxF "$node" "$tmp/nodes"; then
		echo "not ok check-exports: $name@$node: no node $node in $map"
		exit 1
	fi
	cur=$(sed -n -e "s/^$name@@//p" "$tmp/mapver")
	if [ -z "$cur" ] ||
	   [ "$(grep -nxF "$node" "$tmp/nodes" | cut -d: -f1)" -ge \
	     "$(grep -nxF "$cur" "$tmp/nodes" | cut -d: -f1)" ]; then
		echo "not ok check-exports: $name@$node has no later default" \
		     "version in $map"
		exit 1
	fi
done < "$tmp/compat"
nodes=$(sed -e 's/.*@@//' "$tmp/mapver" | sort -u | tr '\n' ' ')
echo "ok check-exports: $(wc -l < "$tmp/lib") symbols," \
     "$(wc -l < "$tmp/compat") compatibility versions, versions ${nodes% }"
