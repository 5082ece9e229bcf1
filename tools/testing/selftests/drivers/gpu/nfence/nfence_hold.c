// SPDX-License-Identifier: GPL-2.0
/*
 * nfence_hold: keep one reference to nfence alive, with no render node
 * open, while a command runs. The VM runner uses it to check that the
 * module cannot be unloaded while only that reference exists:
 *
 *   nfence_hold mmap NODE -- CMD [ARGS...]
 *	a DEFAULT native fence's CPU mapping of CurrentValue
 *   nfence_hold fence-fd NODE -- CMD [ARGS...]
 *	a shared native fence's fd (its NT handle)
 *
 * Opens NODE, creates a device and a fence, takes the reference, closes
 * every other file of the driver, runs CMD, drops the reference and exits
 * with CMD's status (125 if the setup failed).
 *
 * A helper for the runner (TEST_GEN_PROGS_EXTENDED), not a test itself.
 *
 * Copyright (C) 2026 The nfence authors
 */

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <drm/nfence_drm.h>

#define SETUP_FAILED 125

static int die(const char *what)
{
	fprintf(stderr, "nfence_hold: %s: %s\n", what, strerror(errno));
	exit(SETUP_FAILED);
}

int main(int argc, char **argv)
{
	struct drm_nfence_device_create dev = { 0 };
	struct drm_nfence_fence_create fence = {
		.type = DRM_NFENCE_FENCE_TYPE_DEFAULT,
	};
	struct drm_nfence_fence_share share = { 0 };
	void *map = MAP_FAILED;
	int fd, held = -1, status;
	bool mapping;
	pid_t pid;

	if (argc < 5 || strcmp(argv[3], "--") ||
	    (strcmp(argv[1], "mmap") && strcmp(argv[1], "fence-fd"))) {
		fprintf(stderr, "usage: %s mmap|fence-fd NODE -- CMD [ARGS...]\n",
			argv[0]);
		return SETUP_FAILED;
	}
	mapping = !strcmp(argv[1], "mmap");

	fd = open(argv[2], O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die(argv[2]);
	if (ioctl(fd, DRM_IOCTL_NFENCE_DEVICE_CREATE, &dev))
		die("DEVICE_CREATE");
	fence.device = dev.handle;
	if (!mapping)
		fence.flags = DRM_NFENCE_FENCE_SHARED |
			      DRM_NFENCE_FENCE_NT_SECURITY_SHARING;
	if (ioctl(fd, DRM_IOCTL_NFENCE_FENCE_CREATE, &fence))
		die("FENCE_CREATE");

	if (mapping) {
		map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd,
			   fence.mapping.cpu_mmap_offset);
		if (map == MAP_FAILED)
			die("mmap");
	} else {
		share.handle = fence.handle;
		if (ioctl(fd, DRM_IOCTL_NFENCE_FENCE_SHARE, &share))
			die("FENCE_SHARE");
		held = share.fd;
	}
	/* From here on the mapping or the fence fd is all that is left. */
	close(fd);

	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		execvp(argv[4], &argv[4]);
		fprintf(stderr, "nfence_hold: %s: %s\n", argv[4],
			strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid");

	if (map != MAP_FAILED)
		munmap(map, 4096);
	if (held >= 0)
		close(held);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
