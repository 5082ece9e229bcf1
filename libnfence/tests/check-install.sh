#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-install.sh O MOCK_SO: "make install" into a scratch DESTDIR with a
# PREFIX and LIBDIR of a packager's kind, then what a user of the install
# relies on:
#   - libnfence.so.0.x, its soname links, libnfence.a, the header, the
#     programs, libnfence.pc with PREFIX's paths (never DESTDIR's), the
#     man pages, "man D3DKMTCreateNativeFence" finding its group's page,
#     every page rendering without a groff warning;
#   - tests/install_prog.c built with nothing but
#     "pkg-config --cflags --libs libnfence" (PKG_CONFIG_PATH and
#     PKG_CONFIG_SYSROOT_DIR pointing into DESTDIR), run against the fake
#     driver, loading the installed library;
#   - references to libdxg's 74 entry points (tests/libdxg-entry-points.txt),
#     without libnfence's header, linked with "pkg-config --libs libnfence"
#     alone and bound at load;
#   - the installed nfence-info run on the installed library;
#   - the same program built against the build tree through
#     libnfence-uninstalled.pc (PKG_CONFIG_PATH=O), loading O's library.
# Run from libnfence/ (by tests/run-checks.sh). Prints "ok ..." lines, or
# "not ok ..." and exits 1 on the first failure.
set -u

O=$1
mock=$2
MAKE=${MAKE:-make}
CC=${CC:-cc}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
prefix=/opt/nfence
libdir=$prefix/lib/x86_64-linux-gnu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root

fail() {
	echo "not ok install: $*"
	exit 1
}
ok() { echo "ok install: $*"; }

if ! $MAKE -s O="$O" DESTDIR="$root" PREFIX="$prefix" LIBDIR="$libdir" \
	install >"$tmp/make.log" 2>&1; then
	sed 's/^/# /' "$tmp/make.log"
	fail "make install DESTDIR=... PREFIX=$prefix LIBDIR=$libdir"
fi
ok "make install DESTDIR=... PREFIX=$prefix LIBDIR=$libdir"

# The files, where PREFIX and LIBDIR say.
# The library's real name is the one the Makefile builds now (SHLIB), not
# whatever older version a build directory still holds.
real=$(basename "${SHLIB:?the library libnfence/Makefile built}")
for f in "$libdir/$real" "$libdir/libnfence.so.0" "$libdir/libnfence.so" \
	"$libdir/libnfence.a" "$libdir/pkgconfig/libnfence.pc" \
	"$prefix/include/nfence/d3dkmthk.h" "$prefix/bin/nfence-info" \
	"$prefix/bin/nfence-fence-demo" "$prefix/bin/nfence-pipeline-demo" \
	"$prefix/bin/nfence-doorbell-demo" "$prefix/bin/nfence-trace" \
	"$prefix/bin/nfence-wsl-compat" "$prefix/share/man/man3/libnfence.3"; do
	[ -e "$root$f" ] || fail "$f is not installed"
done
[ "$(readlink "$root$libdir/libnfence.so.0")" = "$real" ] ||
	fail "libnfence.so.0 does not link to $real"
[ "$(readlink "$root$libdir/libnfence.so")" = libnfence.so.0 ] ||
	fail "libnfence.so does not link to libnfence.so.0"
soname=$(readelf -d "$root$libdir/$real" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libnfence.so.0 ] || fail "the soname is '$soname', not libnfence.so.0"
pc=$root$libdir/pkgconfig/libnfence.pc
if grep -qF "$root" "$pc"; then
	sed 's/^/# /' "$pc"
	fail "libnfence.pc names the DESTDIR"
fi
ok "library, soname links, header, programs and libnfence.pc in place"

# The pkg-config answers, as a user of the installed tree gets them.
export PKG_CONFIG_PATH="$root$libdir/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$root"
grep -qx "prefix=$prefix" "$pc" || fail "libnfence.pc: prefix is not $prefix"
flags=$($PKG_CONFIG --cflags --libs libnfence) ||
	fail "pkg-config --cflags --libs libnfence (installed)"
echo "# installed: $flags"
case " $flags " in
*" -I$root$prefix/include "*" -L$root$libdir "*) ;;
*) fail "pkg-config libnfence: not -I$root$prefix/include and -L$root$libdir" ;;
esac
# shellcheck disable=SC2086 # the flags are a list of words
$CC -o "$tmp/prog" tests/install_prog.c $flags ||
	fail "install_prog.c built with the installed pkg-config flags"
out=$(NFENCE_MOCK_DIR=$tmp NFENCE_DRI_DIR=$tmp LD_PRELOAD=$mock \
	LD_LIBRARY_PATH=$root$libdir LD_DEBUG=libs timeout 60 "$tmp/prog" 2>"$tmp/ld.log") ||
	fail "install_prog (installed) exited $?: $out"
grep -q "calling init: $root$libdir/libnfence.so.0" "$tmp/ld.log" ||
	fail "install_prog did not load the installed libnfence.so.0"
echo "# $out"
ok "a program built with pkg-config --cflags --libs libnfence (installed) runs"

# A program written for WSL keeps Microsoft's headers and takes only
# "pkg-config --libs libnfence" (Documentation/libnfence.rst, "Building a
# WSL program against libnfence"): references to libdxg's 74 entry points,
# declared by name without libnfence's header, link, and bind at load.
libs=$($PKG_CONFIG --libs libnfence) || fail "pkg-config --libs libnfence"
{
	sed -n 's/^\(D3DKMT[A-Za-z0-9]*\)$/extern void \1(void);/p' \
		tests/libdxg-entry-points.txt
	echo 'void (*const entry[])(void) = {'
	sed -n 's/^\(D3DKMT[A-Za-z0-9]*\)$/\t\1,/p' tests/libdxg-entry-points.txt
	echo '};'
	echo 'int main(void) { return sizeof(entry) / sizeof(entry[0]) != 74; }'
} >"$tmp/wsl.c"
# shellcheck disable=SC2086 # the flags are a list of words
$CC -o "$tmp/wsl" "$tmp/wsl.c" $libs ||
	fail "libdxg's entry points do not link with pkg-config --libs libnfence"
LD_BIND_NOW=1 LD_LIBRARY_PATH=$root$libdir "$tmp/wsl" ||
	fail "libdxg's entry points do not bind to the installed library"
ok "libdxg's 74 entry points link with pkg-config --libs libnfence alone"

# The installed program, on the installed library.
NFENCE_MOCK_DIR=$tmp NFENCE_DRI_DIR=$tmp LD_PRELOAD=$mock \
	LD_LIBRARY_PATH=$root$libdir timeout 60 "$root$prefix/bin/nfence-info" \
	>"$tmp/info.log" 2>&1 || fail "the installed nfence-info exited $?"
grep -q '^2 nfence adapter(s)' "$tmp/info.log" ||
	fail "the installed nfence-info did not list the 2 fake adapters"
ok "the installed nfence-info runs"

# The man pages: the call's name finds its group's page; none warns.
mandir=$root$prefix/share/man
page=$(man -M "$mandir" -w D3DKMTCreateNativeFence 2>&1) ||
	fail "man D3DKMTCreateNativeFence: $page"
man -M "$mandir" -P cat D3DKMTCreateNativeFence 2>/dev/null |
	grep -q 'D3DKMTCreateNativeFence()' ||
	fail "man D3DKMTCreateNativeFence does not describe it"
for f in "$mandir"/man3/*.3; do
	warn=$(cd "$mandir" && MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null)
	[ -z "$warn" ] || fail "man page $(basename "$f"): $warn"
done
ok "man D3DKMTCreateNativeFence, $(ls "$mandir/man3" | wc -l) pages without warnings"

# The build tree, through libnfence-uninstalled.pc.
unset PKG_CONFIG_SYSROOT_DIR
export PKG_CONFIG_PATH="$O"
flags=$($PKG_CONFIG --cflags --libs libnfence) ||
	fail "pkg-config --cflags --libs libnfence (uninstalled)"
echo "# uninstalled: $flags"
case " $flags " in
*" -L$O "*) ;;
*) fail "PKG_CONFIG_PATH=$O: pkg-config libnfence did not take libnfence-uninstalled.pc" ;;
esac
# shellcheck disable=SC2086 # the flags are a list of words
$CC -o "$tmp/prog-uninstalled" tests/install_prog.c $flags ||
	fail "install_prog.c built with the uninstalled pkg-config flags"
out=$(NFENCE_MOCK_DIR=$tmp NFENCE_DRI_DIR=$tmp LD_PRELOAD=$mock \
	LD_LIBRARY_PATH=$O LD_DEBUG=libs timeout 60 "$tmp/prog-uninstalled" 2>"$tmp/ld.log") ||
	fail "install_prog (uninstalled) exited $?: $out"
grep -q "calling init: $O/libnfence.so.0" "$tmp/ld.log" ||
	fail "install_prog did not load $O/libnfence.so.0"
ok "a program built with pkg-config --cflags --libs libnfence (uninstalled) runs"
