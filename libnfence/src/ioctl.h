/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Helpers around the nfence ioctls.
 */
#ifndef _NFENCE_IOCTL_H_
#define _NFENCE_IOCTL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nfence/d3dkmthk.h>
#include "drm/nfence_drm.h"

/*
 * nf_ioctl() - drmIoctl(), returning 0 or a positive errno. drmIoctl()
 * restarts on EINTR and EAGAIN; an ioctl that must see those (an
 * interruptible wait) uses nf_ioctl_once().
 */
int nf_ioctl(int fd, unsigned long request, void *arg);

/* nf_ioctl_once() - one ioctl(), returning 0 or a positive errno */
int nf_ioctl_once(int fd, unsigned long request, void *arg);

/* nf_ioctl_status() - nf_ioctl() with its result mapped to an NTSTATUS */
static inline NTSTATUS nf_ioctl_status(int fd, unsigned long request,
				       void *arg)
{
	return NFenceStatusFromErrno(nf_ioctl(fd, request, arg));
}

/*
 * nf_query() - DRM_IOCTL_NFENCE_QUERY with the two-call protocol. On
 * success *@data is a malloc()ed buffer of *@size bytes (NULL if 0) that the
 * caller frees.
 */
NTSTATUS nf_query(int fd, uint32_t type, void **data, uint32_t *size);

/*
 * nf_query_fixed() - nf_query() into a fixed-size kernel struct of @size
 * bytes: a shorter answer (an older kernel) is zero-extended, extra bytes
 * (a newer kernel) are dropped.
 */
NTSTATUS nf_query_fixed(int fd, uint32_t type, void *data, size_t size);

/*
 * What readlink() of /proc/self/fd/N says of the files an ioctl takes as
 * NT handles or events: a fence's fd (FENCE_SHARE's, an anonymous inode
 * the kernel names "nfence-fence"), and an eventfd.
 */
#define NF_FD_KIND_FENCE	"anon_inode:nfence-fence"
#define NF_FD_KIND_EVENTFD	"anon_inode:[eventfd]"

/*
 * nf_fd_is_other() - whether @fd is an open file of another kind than
 * @kind (one of NF_FD_KIND_*). False when /proc/self/fd cannot tell (the
 * fd is not open, /proc is not mounted): the kernel's answer stands.
 * Used where the kernel answers EINVAL both for a file of the wrong kind
 * and for other arguments, to tell which the NT handle is.
 */
bool nf_fd_is_other(int fd, const char *kind);

#endif /* _NFENCE_IOCTL_H_ */
