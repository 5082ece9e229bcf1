#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install everything nfence needs on a Debian 12 (bookworm) machine:
# the 6.1 kernel (bookworm) and the 6.12 LTS kernel (bookworm-backports)
# with headers, linux-source-6.12 (KUnit, kselftest harness, checkpatch),
# qemu + virtme-ng (from trixie, architecture all), libdrm, the IGT library,
# <sys/sdt.h> (systemtap-sdt-dev: libnfence's USDT probes),
# sparse and matplotlib (nfence-trace-plot.py, nfence-cpu-bench-plot.py),
# dkms (make dkms-check, make dkms-install), man-db (libnfence's install
# check reads its man pages), debhelper, dh-dkms and lintian (make deb,
# the Debian packages), and lcov (make coverage). Idempotent: a second run only checks and exits.
set -euo pipefail

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
APT="$SUDO apt-get -y -q -o Dpkg::Use-Pty=0"

CACHE=${NFENCE_CACHE:-$HOME/.cache/nfence}
mkdir -p "$CACHE"

have_pkgs() {
	dpkg-query -W -f='${Status}\n' "$@" 2>/dev/null |
		grep -c "install ok installed" | grep -qx "$#"
}

# missing_pkgs PKG...: those of PKG... that are not installed. Only they
# are given to apt-get: an installed package is left at whatever version
# and suite it came from (the linux-*-amd64 metapackages may come from
# bookworm-backports, and naming them again would let apt reach for
# trixie's, which bookworm cannot install).
missing_pkgs() {
	local installed
	# dpkg-query fails when dpkg has never heard of one of them (a fresh
	# image knows few packages): that one is missing, the rest is listed.
	installed=$(dpkg-query -W -f='${db:Status-Status} ${Package}\n' "$@" \
		2>/dev/null | awk '$1 == "installed" { print $2 }' || true)
	printf '%s\n' "$@" | grep -vxF -e "$installed" -e '' || true
}

# install_missing [APT-OPTION...] -- PKG...: apt-get install those of
# PKG... that are not installed, updating the lists once if that fails.
install_missing() {
	local opts=() missing
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	mapfile -t missing < <(missing_pkgs "$@")
	[ "${#missing[@]}" -gt 0 ] || return 0
	$APT install --no-install-recommends "${opts[@]}" "${missing[@]}" ||
		{ $APT update &&
		  $APT install --no-install-recommends "${opts[@]}" "${missing[@]}"; }
}

# Packages from bookworm proper.
BOOKWORM_PKGS=(
	build-essential bc bison flex libelf-dev libssl-dev kmod cpio
	rsync xz-utils file
	linux-image-amd64 linux-headers-amd64
	qemu-system-x86 qemu-utils busybox-static
	libdrm-dev libdrm2 pkg-config intel-gpu-tools systemtap-sdt-dev
	libtracefs-dev libtraceevent-dev libtracecmd-dev trace-cmd
	sparse shellcheck udev iproute2
	dkms man-db
	debhelper dh-dkms lintian
	lcov valgrind
)
# Python and the Python modules the scripts and virtme-ng use, from the
# suite the installed python3 comes from (below).
PY_PKGS=(
	python3 python3-sphinx python3-matplotlib python3-requests
	python3-argcomplete python3-pkg-resources
)
# The 6.12 LTS from bookworm-backports.
BPO_PKGS=(linux-source-6.12)

sources_changed=0
add_source() { # name suite
	local f=/etc/apt/sources.list.d/nfence-$1.sources
	[ -e "$f" ] && return 0
	$SUDO tee "$f" >/dev/null <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: $2
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	sources_changed=1
}
add_source bookworm-backports bookworm-backports
add_source trixie trixie
# trixie is only used for virtme-ng (arch: all); never upgrade from it.
if [ ! -e /etc/apt/preferences.d/nfence-trixie ]; then
	$SUDO tee /etc/apt/preferences.d/nfence-trixie >/dev/null <<'PIN'
Package: *
Pin: release n=trixie
Pin-Priority: 100
PIN
fi

stamp=$CACHE/apt-updated
if [ "$sources_changed" = 1 ] || [ ! -e "$stamp" ] ||
   [ -n "$(find "$stamp" -mmin +1440 2>/dev/null)" ]; then
	$APT update
	touch "$stamp"
fi

install_missing -- "${BOOKWORM_PKGS[@]}"

# A machine whose python3 was upgraded to trixie's (3.12 or later) cannot
# take bookworm's Python modules, which need a python3 older than 3.12:
# there they come from trixie too. Anywhere else, from bookworm.
py_opts=()
py_ver=$(dpkg-query -W -f='${Version}' python3 2>/dev/null || true)
if [ -n "$py_ver" ] && dpkg --compare-versions "$py_ver" ge 3.12; then
	py_opts=(-t trixie)
fi
install_missing "${py_opts[@]}" -- "${PY_PKGS[@]}"

# 6.12 kernel image + headers from backports (pulled by version so that the
# bookworm 6.1 metapackage stays installed as well).
bpo_ver=$(apt-cache policy linux-image-amd64 -t bookworm-backports 2>/dev/null |
	awk '/bookworm-backports/ {print prev} {prev=$1}' | head -n1 || true)
bpo_abi=$(apt-cache depends -t bookworm-backports linux-headers-amd64 2>/dev/null |
	awk '/Depends: linux-headers-6\.12/ {print $2; exit}')
if [ -z "$bpo_abi" ]; then
	bpo_abi=$(apt-cache search --names-only '^linux-headers-6\.12\.[0-9.]*\+bpo-amd64$' |
		awk '{print $1}' | sort -V | tail -n1)
fi
bpo_abi=${bpo_abi#linux-headers-}
if [ -z "$bpo_abi" ]; then
	echo "deps: cannot find the 6.12 kernel in bookworm-backports" >&2
	exit 1
fi
if ! have_pkgs "linux-image-$bpo_abi" "linux-headers-$bpo_abi" "${BPO_PKGS[@]}"; then
	$APT install --no-install-recommends -t bookworm-backports \
		"linux-image-$bpo_abi" "linux-headers-$bpo_abi" "${BPO_PKGS[@]}"
fi
: "${bpo_ver:=}"

# virtme-ng is not in bookworm; trixie's is architecture: all and its
# dependencies (python3 modules, file, kmod) are installed above. Its .deb
# is installed alone: "apt-get install -t trixie virtme-ng" would take
# every dependency it still lacks from trixie, python3 and libc6 with them.
if ! command -v vng >/dev/null; then
	tmp=$(mktemp -d)
	chmod a+rx "$tmp"
	(cd "$tmp" && apt-get download virtme-ng/trixie)
	$APT install --no-install-recommends "$tmp"/virtme-ng_*.deb
	rm -rf "$tmp"
fi

# Kernel images must be readable by qemu for an unprivileged user too.
$SUDO chmod a+r /boot/vmlinuz-* 2>/dev/null || true

echo "deps: packages ok (kernels: $(ls /lib/modules | tr '\n' ' '))"

# An extracted linux-source-6.12 tree: kunit.py, kselftest_harness.h and
# checkpatch.pl come from it. Keyed by the package version.
src_tar=$(ls /usr/src/linux-source-6.12*.tar.xz 2>/dev/null | head -n1)
if [ -n "$src_tar" ]; then
	src_ver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
	src_dir=$CACHE/src/linux-source-6.12-$src_ver
	if [ ! -e "$src_dir/.nfence-extracted" ]; then
		rm -rf "$src_dir" && mkdir -p "$src_dir"
		tar -xJf "$src_tar" -C "$src_dir" --strip-components=1
		touch "$src_dir/.nfence-extracted"
	fi
	ln -sfn "$src_dir" "$CACHE/linux-source-6.12"
fi
echo "deps: source tree $CACHE/linux-source-6.12"
