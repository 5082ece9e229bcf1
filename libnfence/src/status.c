/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * The one errno -> NTSTATUS mapping of libnfence. The table in
 * d3dkmthk.h (NFenceStatusFromErrno) documents it; keep both in sync.
 *
 * Choices worth knowing:
 * - ENOSPC is STATUS_INSUFFICIENT_RESOURCES: the kernel uses it for
 *   exhausted object limits (devices per file, doorbells), not only for
 *   video memory, so the generic code fits better than
 *   STATUS_GRAPHICS_NO_VIDEO_MEMORY.
 * - ETIME/ETIMEDOUT are STATUS_TIMEOUT, a success code as on Windows.
 * - ENOENT is STATUS_INVALID_PARAMETER: the kernel returns it for handles
 *   that name no object of the right kind, its own names of the objects
 *   D3DKMT handles name, and Windows answers STATUS_INVALID_PARAMETER to a
 *   D3DKMT handle that names nothing. EBADF, the kernel's answer to a bad
 *   file descriptor (an NT handle), stays STATUS_INVALID_HANDLE.
 * - EIO joins ENODEV/ENXIO as STATUS_DEVICE_REMOVED: nfence reports a
 *   lost device with it.
 */
#include <errno.h>
#include <limits.h>

#include <nfence/d3dkmthk.h>

NTSTATUS NFenceStatusFromErrno(int err)
{
	if (err < 0) {
		if (err == INT_MIN)
			return STATUS_UNSUCCESSFUL;
		err = -err;
	}

	switch (err) {
	case 0:
		return STATUS_SUCCESS;
	case EINVAL:
	case ERANGE:
	case EOVERFLOW:
	case E2BIG:
	case ENOENT:
		return STATUS_INVALID_PARAMETER;
	case EBADF:
		return STATUS_INVALID_HANDLE;
	case ENOMEM:
		return STATUS_NO_MEMORY;
	case ENOSPC:
	case EMFILE:
	case ENFILE:
	case ENOBUFS:
		return STATUS_INSUFFICIENT_RESOURCES;
	case EOPNOTSUPP:
#if ENOTSUP != EOPNOTSUPP
	case ENOTSUP:
#endif
	case ENOTTY:
	case ENOSYS:
		return STATUS_NOT_SUPPORTED;
	case ETIME:
	case ETIMEDOUT:
		return STATUS_TIMEOUT;
	case ENODEV:
	case ENXIO:
	case EIO:
		return STATUS_DEVICE_REMOVED;
	case EFAULT:
		return STATUS_ACCESS_VIOLATION;
	case EACCES:
	case EPERM:
		return STATUS_ACCESS_DENIED;
	case EBUSY:
		return STATUS_DEVICE_BUSY;
	case EAGAIN:
#if EWOULDBLOCK != EAGAIN
	case EWOULDBLOCK:
#endif
		return STATUS_GRAPHICS_TRY_AGAIN_LATER;
	case ECANCELED:
		return STATUS_CANCELLED;
	default:
		return STATUS_UNSUCCESSFUL;
	}
}
