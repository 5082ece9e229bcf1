#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (once) a 6.12 LTS debug kernel from linux-source-6.12 with
# virtme-ng's defconfig plus scripts/debug-kernel.config (KASAN, lockdep,
# kmemleak, ...) for the VM suite. The build lives under
# ~/.cache/nfence/debug-kernel/<source version>-<config hash> and is reused
# while neither changes. Prints the build directory (the KDIR for nfence.ko
# and the kernel tree vng boots) on its last line. Runs take turns (a lock
# next to the build), so a second run waits for a build in progress and
# reuses it.
#
#   scripts/debug-kernel.sh --series   prints the source's VERSION.PATCHLEVEL
#                                      (6.12) and builds nothing
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${NFENCE_CACHE:-$HOME/.cache/nfence}
SRC=$(readlink -f "${NFENCE_KUNIT_SRC:-$CACHE/linux-source-6.12}")
JOBS=${JOBS:-$(nproc)}
frag=$top/scripts/debug-kernel.config

if [ "${1:-}" = --series ]; then
	sed -nE 's/^(VERSION|PATCHLEVEL) = ([0-9]+)$/\2/p' "$SRC/Makefile" |
		paste -sd.
	exit
fi

key=$(basename "$SRC")-$(sha1sum <"$frag" | cut -c1-12)
out=$CACHE/debug-kernel/$key

mkdir -p "$out"
exec 9>"$out.lock"
flock 9
if [ ! -e "$out/.nfence-built" ] || [ ! -e "$out/Module.symvers" ]; then
	start=$SECONDS
	echo "debug-kernel: configuring $out" >&2
	[ -e "$out/.config" ] ||
	(cd "$SRC" && virtme-configkernel --defconfig --custom "$frag" \
		O="$out") >&2
	# virtme's defconfig may disable what the fragment asks for: merge again.
	(cd "$SRC" && scripts/kconfig/merge_config.sh -m -O "$out" \
		"$out/.config" "$frag") >&2
	make -C "$SRC" O="$out" olddefconfig >&2
	# Every line of the fragment must have stuck (an option that needs
	# another one, or is only visible with EXPERT, is silently dropped).
	while IFS= read -r line; do
		case $line in
		CONFIG_*=n) want="# ${line%=n} is not set" ;;
		CONFIG_*) want=$line ;;
		*) continue ;;
		esac
		if ! grep -qxF "$want" "$out/.config" &&
		   ! { [ "${line#*=}" = n ] && ! grep -q "^${line%=n}=" "$out/.config"; }; then
			echo "debug-kernel: $line did not stick" >&2
			exit 1
		fi
	done <"$frag"
	echo "debug-kernel: building with $JOBS jobs, log in $out/build.log" >&2
	if ! make -C "$SRC" O="$out" -j"$JOBS" bzImage modules \
		>"$out/build.log" 2>&1; then
		tail -n 40 "$out/build.log" >&2
		exit 1
	fi
	touch "$out/.nfence-built"
	echo "debug-kernel: built in $((SECONDS - start)) s" >&2
fi
echo "$out"
