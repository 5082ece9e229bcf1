#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the supported kernel versions installed here with headers and an
# image: Debian's 6.1 and the 6.12 LTS (newest of each series).
set -u
for series in 6.1 6.12; do
	ls -d /lib/modules/"$series".*/build 2>/dev/null |
		sed 's|/lib/modules/||; s|/build$||' |
		while read -r v; do
			[ -e "/boot/vmlinuz-$v" ] && echo "$v"
		done | sort -V | tail -n1
done | tr '\n' ' ' | sed 's/ $//'
echo
