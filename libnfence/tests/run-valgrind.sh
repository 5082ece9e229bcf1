#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The host tests of the paths that close objects (destroying a device, a
# context, a queue; destroys racing creates; the registry's own) and of
# fork(), run under valgrind's memcheck against the fake driver: no
# invalid access and no leak, a forked child's included (its inherited
# objects stay reachable, src/handle.c). Exits 77 if valgrind is not
# installed.
#
#   run-valgrind.sh TESTDIR
set -u

dir=$1
if ! command -v valgrind >/dev/null 2>&1; then
	echo "# SKIP: valgrind is not installed"
	exit 77
fi

rc=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# run TEST [ARGS...]: one kselftest binary of $dir under memcheck
run() {
	t=$1
	shift
	if valgrind -q --leak-check=full \
		--errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
		"$dir/$t" "$@" >"$log" 2>&1 &&
	   grep -q '^# Totals: pass:[1-9][0-9]* fail:0 ' "$log"; then
		echo "ok valgrind: $t $*"
	else
		cat "$log"
		echo "not ok valgrind: $t $*"
		rc=1
	fi
}

run gpu_test -t fork_child_gets_no_handle -t device_destroy_closes_everything \
	-t destroy_device_races_gpu_objects \
	-t context_destroy_closes_its_queues -t queue_and_progress_fence \
	-t queue_arguments -t allocations_all_or_nothing
run fence_test -t fork_child_opens_and_signals \
	-t destroy_device_closes_its_sync_objects \
	-t destroy_device_races_create -t concurrent_fences
run mock_test -t device_lifecycle -t concurrent_devices
run handle_test -f registry -t owner_close_races_children
exit $rc
