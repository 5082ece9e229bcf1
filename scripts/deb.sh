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
#   scripts/deb.sh check KVER...    make check's step (root): the version
#                                   check, build, apt-get install in a
#                                   throwaway root where DKMS builds the
#                                   module for every KVER, per KVER one VM
#                                   booted on that root (guest below), then
#                                   apt-get purge there and what must be
#                                   gone; "deb: N passed, N failed, 0
#                                   skipped, N errors"
#   scripts/deb.sh symbols MAP      libnfence0's symbols file, from the
#                                   version script MAP (debian/rules)
#   scripts/deb.sh guest            in the VM (vm-exec.sh --no-load), as
#                                   root, on the root the packages were
#                                   installed in: modprobe of DKMS's module,
#                                   the installed tools, rmmod; "deb-guest:
#                                   ok ..." or "deb-guest: not ok ..." per
#                                   check
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
PACKAGES=(nfence-dkms libnfence0 libnfence-dev nfence-tools)

# symbols MAP: every symbol of each version node LIBNFENCE_M.N with M.N as
# the version that introduced it (LIBNFENCE_M, a soname's first node, is
# M.0; libnfence's first version was 0.1, so LIBNFENCE_0 is 0.1), and the
# node's own symbol, as dpkg-gensymbols lists it; and the older versions
# of a name that the source keeps with a symver attribute.
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
	# The older versions of a name the map gives a newer node, kept by
	# a symver attribute in the source (NF_CS_COMPAT(name, "LIBNFENCE_N")).
	sed -nE 's/^[A-Z_]+_COMPAT\(([A-Za-z0-9_]+), "(LIBNFENCE_([0-9]+)\.([0-9]+))"\)$/ \1@\2 \3.\4/p' \
		"$top"/libnfence/src/*.c
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

# guest: in the VM, as root, on the root the packages were installed in:
# what needs the kernel. Each check prints "deb-guest: ok WHAT" or
# "deb-guest: not ok WHAT"; exits 1 if any was not ok. nfence is unloaded
# again at the end (vm-exec.sh then checks the kernel log).
guest() {
	local bad=0 v prog multiarch
	# shellcheck source=scripts/lib.sh
	. "$top/scripts/lib.sh"
	v=$("$top/scripts/release.sh" version)
	multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
	ok() { echo "deb-guest: ok $*"; }
	notok() { echo "deb-guest: not ok $*"; bad=1; }

	if nfence_modprobe_dkms ""; then
		ok "modprobe nfence took the module DKMS installed"
	else
		notok "modprobe nfence"
		return 1
	fi
	# The tools as a user runs them: from PATH, on the packaged library.
	prog=$(readlink -f "$(command -v nfence-info)")
	if [ "$prog" = /usr/bin/nfence-info ] &&
		ldd "$prog" | grep -qE "libnfence.so.0 => (/usr)?/lib/$multiarch/libnfence.so.0 "; then
		ok "nfence-info is /usr/bin's, on /usr/lib/$multiarch/libnfence.so.0"
	else
		notok "nfence-info is '$prog': $(ldd "$prog" 2>&1 | grep nfence)"
	fi
	for prog in nfence-info nfence-fence-demo "$BUILD/deb/install_prog"; do
		if timeout 300 "$prog"; then
			ok "$(basename "$prog")"
		else
			notok "$(basename "$prog") (exit $?)"
		fi
	done
	if rmmod nfence; then
		ok "rmmod nfence"
	else
		notok "rmmod nfence"
	fi
	echo "deb-guest: nfence $v on $(uname -r): $([ "$bad" = 0 ] && echo ok || echo not ok)"
	return "$bad"
}

# check KVER...: make check's step (see the top). In a mount namespace of
# its own: the throwaway root and everything mounted for it go with it.
check() {
	local v pass=0 fail=0 errors=0 ns root debs=() k rc log n start left installed
	if [ "$(id -u)" -ne 0 ]; then
		echo "deb: error: the install check needs root (a mount namespace)"
		echo "deb: 0 passed, 0 failed, 0 skipped, 1 errors"
		return 1
	fi
	if [ $# -eq 0 ]; then
		echo "deb: no kernel to boot (make deps)" >&2
		return 1
	fi
	if [ -z "${NFENCE_DEB_NS:-}" ]; then
		NFENCE_DEB_NS=1 exec unshare --mount --propagation private \
			"$top/scripts/deb.sh" check "$@"
	fi
	result() {
		echo "deb: $1: $2"
		if [ "$1" = pass ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
	}
	check_that() { # WHAT COMMAND...: one result from COMMAND's status
		local what=$1
		shift
		if "$@"; then result pass "$what"; else result fail "$what"; fi
	}
	summary() {
		echo "deb: $pass passed, $fail failed, 0 skipped, $errors errors"
		[ "$fail" -eq 0 ] && [ "$errors" -eq 0 ]
	}
	# in_root COMMAND...: COMMAND in the throwaway root, with /proc and
	# /dev there while it runs (not while a guest boots on the root).
	in_root() {
		local rc=0
		mount -t proc proc "$root/proc"
		mount --rbind /dev "$root/dev"
		chroot "$root" env DEBIAN_FRONTEND=noninteractive "$@" || rc=$?
		umount -R "$root/dev"
		umount "$root/proc"
		return "$rc"
	}
	# installed_module_ok KVER: the module modprobe would take for KVER
	# is DKMS's, built for KVER, and needs drm.
	installed_module_ok() {
		local k=$1 path magic deps
		path=$(in_root modinfo -k "$k" -n nfence 2>/dev/null) || path=
		magic=$(in_root modinfo -k "$k" -F vermagic nfence 2>/dev/null | cut -d' ' -f1) || magic=
		deps=$(in_root modinfo -k "$k" -F depends nfence 2>/dev/null) || deps=
		echo "deb: $k: ${path:-no module}, vermagic '$magic', depends '$deps'"
		case $path in
		/lib/modules/"$k"/updates/dkms/* | /usr/lib/modules/"$k"/updates/dkms/*) ;;
		*) return 1 ;;
		esac
		[ "$magic" = "$k" ] && echo ",$deps," | grep -q ',drm,'
	}
	# root_apt VERB ARGS...: apt-get VERB ARGS... in the root, timed and
	# logged, as one result.
	root_apt() {
		local verb=$1 start=$SECONDS log=$BUILD/deb/$1.log
		shift
		if in_root apt-get "$verb" -y -q -o Dpkg::Use-Pty=0 "$@" >"$log" 2>&1; then
			result pass "apt-get $verb ${PACKAGES[*]} ($((SECONDS - start)) s, log in $log)"
		else
			tail -n 40 "$log"
			result fail "apt-get $verb ${PACKAGES[*]} (log in $log)"
			return 1
		fi
	}

	check_that "the release's numbers agree" "$top/scripts/release.sh" check
	v=$("$top/scripts/release.sh" version)
	start=$SECONDS
	if ! build; then
		result fail "dpkg-buildpackage and lintian"
		summary
		return 1
	fi
	result pass "dpkg-buildpackage and lintian ($((SECONDS - start)) s)"
	for k in "${PACKAGES[@]}"; do
		debs+=("$(ls "$BUILD/deb/${k}_${v}_"*.deb)")
	done

	# The throwaway root: the host's, under an overlay whose upper layer
	# is a tmpfs, with the top directory bound in at its own path.
	ns=$BUILD/deb/ns
	root=$ns/root
	mkdir -p "$ns"
	mount -t tmpfs nfence-deb "$ns"
	mkdir -p "$ns/up" "$ns/work" "$root"
	mount -t overlay overlay -o "lowerdir=/,upperdir=$ns/up,workdir=$ns/work" "$root"
	mount --bind "$top" "$root$top"

	installed=1
	root_apt install "${debs[@]}" || installed=0
	# What make dkms-check asks of a DKMS build, asked of the installed
	# module: make check has no DKMS step of its own, this is it.
	for k in "$@"; do
		check_that "DKMS built and installed nfence/$v for $k" \
			eval "in_root dkms status -m nfence -v $v -k $k | grep -q ': installed'"
		check_that "$k's installed nfence: vermagic $k, depends on drm" \
			installed_module_ok "$k"
	done
	# libnfence-dev as a user's build uses it; the program runs in the VMs.
	check_that "a program built with pkg-config libnfence and the installed header" \
		in_root sh -c "cc -o '$BUILD/deb/install_prog' '$top/libnfence/tests/install_prog.c' \
			\$(pkg-config --cflags --libs libnfence)"
	check_that "man D3DKMTCreateNativeFence finds libnfence-dev's page" \
		eval "in_root man -w D3DKMTCreateNativeFence | grep -q '^/usr/share/man/man3/libnfence'"

	# One VM per kernel, booted on that root.
	for k in "$@"; do
		if [ "$installed" = 0 ]; then
			result fail "$k VM: not booted, the install failed"
			continue
		fi
		rc=0
		start=$SECONDS
		NFENCE_VM_ROOT=$root "$top/scripts/vm-exec.sh" --no-load "$k" \
			"$top/scripts/deb.sh" guest || rc=$?
		echo "deb: the $k VM took $((SECONDS - start)) s"
		log=$BUILD/vm-exec-$k.log
		if [ "$rc" -eq 2 ]; then
			echo "deb: error: the $k guest never ran"
			errors=$((errors + 1))
			continue
		fi
		n=$(grep -c '^deb-guest: ok ' "$log" || true)
		pass=$((pass + n))
		n=$(grep -c '^deb-guest: not ok ' "$log" || true)
		fail=$((fail + n))
		if [ "$rc" -ne 0 ] && [ "$n" -eq 0 ]; then
			result fail "$k guest (exit $rc: the kernel log, or nfence left loaded)"
		fi
	done

	# Removal: DKMS takes the module out of every kernel's tree, and
	# nothing of nfence stays behind.
	root_apt purge "${PACKAGES[@]}" || true
	left=$(cd "$root" && find usr/lib/modules usr/src var/lib/dkms usr/bin usr/include \
		"usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)" usr/share/doc \
		usr/share/man/man3 \( -name 'nfence*' -o -name 'libnfence*' \
		-o -name 'D3DKMT*' \) -print 2>/dev/null)
	check_that "nothing of nfence left in /usr/lib/modules, /usr/src, /var/lib/dkms or the packages' directories${left:+: $(echo "$left" | tr '\n' ' ')}" \
		test -z "$left"
	for k in "$@"; do
		check_that "$k's modules.dep without nfence, modinfo finds none" \
			eval "! grep -q nfence '$root/usr/lib/modules/$k/modules.dep' &&
				! in_root modinfo -k '$k' nfence >/dev/null 2>&1"
	done
	check_that "dpkg knows none of the packages" \
		eval "! in_root dpkg-query -W -f='\${db:Status-Abbrev}\n' ${PACKAGES[*]} 2>/dev/null | grep -qv '^un'"
	summary
}

case ${1:-} in
symbols) symbols "${2:?usage: deb.sh symbols MAP}" ;;
build) build ;;
check)
	shift
	check "$@"
	;;
guest) guest ;;
*)
	echo "usage: deb.sh build | check KVER... | symbols MAP | guest" >&2
	exit 2
	;;
esac
