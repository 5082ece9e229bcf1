/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Helpers around the nfence ioctls.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <xf86drm.h>

#include "ioctl.h"

/* Attempts of the two-call protocol if the answer grows between calls. */
#define NF_QUERY_TRIES	4

int nf_ioctl(int fd, unsigned long request, void *arg)
{
	if (drmIoctl(fd, request, arg) == 0)
		return 0;
	return errno ? errno : EIO;
}

int nf_ioctl_once(int fd, unsigned long request, void *arg)
{
	if (ioctl(fd, request, arg) == 0)
		return 0;
	return errno ? errno : EIO;
}

NTSTATUS nf_query(int fd, uint32_t type, void **data, uint32_t *size)
{
	struct drm_nfence_query q;
	void *buf;
	int err = EINVAL;
	int i;

	for (i = 0; i < NF_QUERY_TRIES; i++) {
		memset(&q, 0, sizeof(q));
		q.type = type;
		err = nf_ioctl(fd, DRM_IOCTL_NFENCE_QUERY, &q);
		if (err)
			return NFenceStatusFromErrno(err);
		if (q.size == 0) {
			*data = NULL;
			*size = 0;
			return STATUS_SUCCESS;
		}

		buf = calloc(1, q.size);
		if (!buf)
			return STATUS_NO_MEMORY;
		q.data = (uintptr_t)buf;
		err = nf_ioctl(fd, DRM_IOCTL_NFENCE_QUERY, &q);
		if (!err) {
			*data = buf;
			*size = q.size;
			return STATUS_SUCCESS;
		}
		free(buf);
		/* EINVAL here means the answer outgrew the buffer: ask again. */
		if (err != EINVAL)
			break;
	}
	return NFenceStatusFromErrno(err);
}

NTSTATUS nf_query_fixed(int fd, uint32_t type, void *data, size_t size)
{
	uint32_t got;
	NTSTATUS st;
	void *buf;

	st = nf_query(fd, type, &buf, &got);
	if (!NT_SUCCESS(st))
		return st;
	memset(data, 0, size);
	if (got)
		memcpy(data, buf, got < size ? got : size);
	free(buf);
	return STATUS_SUCCESS;
}

bool nf_fd_is_other(int fd, const char *kind)
{
	char path[32], name[64];
	size_t len = strlen(kind);
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, name, sizeof(name));
	if (n < 0)
		return false;
	/* A name that fills the buffer is longer than any kind. */
	return (size_t)n != len || memcmp(name, kind, len);
}
