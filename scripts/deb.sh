#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# nfence's Debian packages (Documentation/installation.rst, "Debian
# packages"):
#
#   scripts/deb.sh build            make deb: the release tarball (make dist)
#                                   unpacked in build/deb and built there
#                                   with dpkg-buildpackage -us -uc -b; the
#                                   .debs land in build/deb, lintian's
#                                   verdict in build/deb/lintian.txt. Fails
#                                   on a lintian error, and on a lintian
#                                   warning that the packaging notes do not
#                                   give a reason for
#   scripts/deb.sh symbols MAP      libnfence0's symbols file, from the
#                                   version script MAP (debian/rules)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}

# symbols MAP: every symbol of each version node LIBNFENCE_M.N with M.N as
# the version that introduced it (LIBNFENCE_M, a soname's first node, is
# M.0; libnfence's first version was 0.1, so LIBNFENCE_0 is 0.1), and the
# node's own symbol, as dpkg-gensymbols lists it.
symbols() {
	local map=$1 major
	major=$("$top/scripts/release.sh" version)
	major=${major%%.*}
	echo "libnfence.so.$major libnfence$major #MINVER#"
	echo "* Build-Depends-Package: libnfence-dev"
	sed -e 's|/\*.*\*/||g' "$map" | awk '
		/^[ \t]*(\/\*|\*)/ { next }
		$2 == "{" && $1 ~ /^LIBNFENCE_/ {
			node = $1
			n = split(substr(node, 11), v, ".")
			ver = n > 1 ? v[1] "." v[2] : (v[1] == 0 ? "0.1" : v[1] ".0")
			printf " %s@%s %s\n", node, node, ver
			next
		}
		/global:/ { exported = 1; next }
		/local:/ || /^}/ { exported = 0; next }
		exported && NF { sub(/;$/, "", $1); printf " %s@%s %s\n", $1, node, ver }'
}

# lintian_unexplained REPORT: every lintian warning tag of REPORT must be named
# (``tag``) in the packaging notes, which give its reason; prints those
# that are not.
lintian_unexplained() {
	local t
	awk '$1 == "W:" { print $3 }' "$1" | sort -u | while read -r t; do
		grep -qF "\`\`$t\`\`" "$top/Documentation/installation.rst" || echo "$t"
	done
}

# build: the packages from the release tarball, then lintian.
build() {
	local v work src log changes bad
	v=$("$top/scripts/release.sh" version)
	work=$BUILD/deb
	src=$work/nfence-$v
	log=$work/dpkg-buildpackage.log
	rm -rf "$work"
	mkdir -p "$work"
	"$top/scripts/release.sh" dist "$work" || return 1
	tar -C "$work" -xJf "$work/nfence-$v.tar.xz"
	echo "deb: dpkg-buildpackage -us -uc -b in $src, log in $log"
	if ! (cd "$src" && dpkg-buildpackage -us -uc -b -Jauto) >"$log" 2>&1; then
		tail -n 40 "$log"
		echo "deb: dpkg-buildpackage failed"
		return 1
	fi
	grep -E '^(dpkg-gensymbols|dh_missing|dpkg-shlibdeps): (warning|error)' "$log" && {
		echo "deb: dpkg-buildpackage warned (above)"
		return 1
	}
	changes=$work/nfence_${v}_$(dpkg-architecture -qDEB_HOST_ARCH).changes
	lintian --fail-on error --display-info "$changes" >"$work/lintian.txt" 2>&1 || {
		cat "$work/lintian.txt"
		echo "deb: lintian found errors"
		return 1
	}
	cat "$work/lintian.txt"
	bad=$(lintian_unexplained "$work/lintian.txt")
	if [ -n "$bad" ]; then
		echo "deb: lintian warnings with no reason in Documentation/installation.rst:" \
			"$(echo "$bad" | tr '\n' ' ')"
		return 1
	fi
	ls "$work"/*.deb
}

case ${1:-} in
symbols) symbols "${2:?usage: deb.sh symbols MAP}" ;;
build) build ;;
*)
	echo "usage: deb.sh build | symbols MAP" >&2
	exit 2
	;;
esac
