#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# nfence's release number and tarball (Documentation/installation.rst,
# "Releases"):
#
#   scripts/release.sh version      print the release number, MAJOR.MINOR.PATCH,
#                                   from the top-level VERSION file, the one
#                                   place it is written
#   scripts/release.sh check        check that every number derived from it
#                                   or written beside it agrees: the driver's
#                                   DRM version (nfence_drv.h, and what the
#                                   IGT test expects of it), libnfence's
#                                   version, soname and symbol map, the
#                                   Debian packages' version and library
#                                   package name, DKMS's version. One line
#                                   per check, then "release: N passed,
#                                   N failed, 0 skipped"; exits 1 on drift
#   scripts/release.sh dist [DIR]   check, then write DIR/nfence-VERSION.tar.xz
#                                   (default build/): the tracked files as
#                                   they are in the working tree (a git
#                                   checkout) or every file but build/ (an
#                                   unpacked tarball), under nfence-VERSION/,
#                                   with fixed owners, order and times
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}

version() {
	local v
	v=$(cat "$top/VERSION")
	if ! [[ $v =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
		echo "release: VERSION is '$v', not MAJOR.MINOR.PATCH" >&2
		return 1
	fi
	echo "$v"
}

# cdefine FILE NAME: the value of "#define NAME VALUE" in FILE.
cdefine() {
	awk -v n="$2" '$1 == "#define" && $2 == n { print $3; exit }' "$1"
}

check() {
	local v major minor pass=0 fail=0 got nodes bad lib
	result() {
		echo "release: $1: $2"
		if [ "$1" = pass ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
	}
	if ! v=$(version); then
		result fail "VERSION is MAJOR.MINOR.PATCH"
		echo "release: $pass passed, $fail failed, 0 skipped"
		return 1
	fi
	major=${v%%.*} minor=${v#*.} minor=${minor%%.*}
	result pass "VERSION is $v"

	# The DRM version is the release's MAJOR.MINOR: a patch release
	# changes neither the uapi nor the library's interface.
	got=$(cdefine "$top/drivers/gpu/drm/nfence/nfence_drv.h" DRIVER_MAJOR).$(cdefine "$top/drivers/gpu/drm/nfence/nfence_drv.h" DRIVER_MINOR)
	if [ "$got" = "$major.$minor" ]; then
		result pass "nfence_drv.h DRIVER_MAJOR.DRIVER_MINOR $got"
	else
		result fail "nfence_drv.h DRIVER_MAJOR.DRIVER_MINOR is $got, VERSION says $major.$minor"
	fi
	got=$(cdefine "$top/tests/igt/nfence_igt.h" NFENCE_DRIVER_MAJOR).$(cdefine "$top/tests/igt/nfence_igt.h" NFENCE_DRIVER_MINOR).$(cdefine "$top/tests/igt/nfence_igt.h" NFENCE_DRIVER_PATCHLEVEL)
	if [ "$got" = "$major.$minor.0" ]; then
		result pass "tests/igt/nfence_igt.h expects DRM version $got"
	else
		result fail "tests/igt/nfence_igt.h expects DRM version $got, VERSION says $major.$minor.0"
	fi

	# What libnfence's Makefile builds: its version and soname.
	lib=$(make -s --no-print-directory -C "$top/libnfence" version 2>&1) || true
	if [ "$lib" = "$v libnfence.so.$major" ]; then
		result pass "libnfence $v, soname libnfence.so.$major"
	else
		result fail "libnfence's Makefile builds '$lib', VERSION says '$v libnfence.so.$major'"
	fi
	# Every symbol version node is of the soname's major and none is
	# newer than the release: LIBNFENCE_M (M.0) or LIBNFENCE_M.N.
	nodes=$(sed -nE 's/^(LIBNFENCE_[0-9.]+) *\{.*/\1/p' "$top/libnfence/libnfence.map")
	bad=$(echo "$nodes" | awk -v M="$major" -v m="$minor" '{
		split(substr($1, 11), p, ".")
		if (p[1] != M || p[2] + 0 > m) print $1 }')
	if [ -z "$nodes" ]; then
		result fail "libnfence.map has no LIBNFENCE_ version node"
	elif [ -n "$bad" ]; then
		result fail "libnfence.map nodes $(echo "$bad" | tr '\n' ' ')are not of $major.0 to $major.$minor"
	else
		result pass "libnfence.map nodes $(echo "$nodes" | head -n1) to $(echo "$nodes" | tail -n1) within $major.$minor"
	fi

	# The packages: debian/changelog's newest entry (a native package, so
	# its version is the release's), the library package's name.
	got=$(cd "$top" && dpkg-parsechangelog -S Version 2>&1) || true
	if [ "$got" = "$v" ]; then
		result pass "debian/changelog $got"
	else
		result fail "debian/changelog's newest entry is '$got', VERSION says $v"
	fi
	if grep -qx "Package: libnfence$major" "$top/debian/control"; then
		result pass "debian/control has libnfence$major"
	else
		result fail "debian/control has no package libnfence$major (the soname's)"
	fi
	got=$("$top/scripts/dkms.sh" version)
	if [ "$got" = "$v" ]; then
		result pass "DKMS version $got"
	else
		result fail "scripts/dkms.sh version says $got, VERSION says $v"
	fi
	echo "release: $pass passed, $fail failed, 0 skipped"
	[ "$fail" -eq 0 ]
}

# files: the release's files, NUL-separated, relative to the top.
files() {
	if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		# Tracked files that exist (a deletion not yet committed is gone).
		git -C "$top" ls-files -z | while IFS= read -r -d '' f; do
			[ -e "$top/$f" ] || [ -L "$top/$f" ] && printf '%s\0' "$f"
		done
	else
		(cd "$top" && find . -path ./build -prune -o \( -type f -o -type l \) \
			-printf '%P\0')
	fi
}

dist() {
	local out=${1:-$BUILD} v name stamp
	v=$(version)
	name=nfence-$v
	check >/dev/null || { check; exit 1; }
	mkdir -p "$out"
	# The newest changelog entry's date: the same tree gives the same
	# tarball.
	stamp=$(cd "$top" && dpkg-parsechangelog -S Timestamp)
	files | tar -C "$top" --null -T - --transform "s,^,$name/," \
		--sort=name --mtime="@$stamp" --owner=0 --group=0 \
		--numeric-owner --format=gnu -cf - | xz -T1 >"$out/$name.tar.xz.tmp"
	mv "$out/$name.tar.xz.tmp" "$out/$name.tar.xz"
	if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$top" diff --quiet HEAD -- 2>/dev/null ||
			echo "release: the working tree differs from $(git -C "$top" rev-parse --short HEAD): the tarball has the changes"
	fi
	echo "release: $out/$name.tar.xz"
}

case ${1:-} in
version) version ;;
check) check ;;
dist) dist "${2:-}" ;;
*)
	echo "usage: release.sh version | check | dist [DIR]" >&2
	exit 2
	;;
esac
