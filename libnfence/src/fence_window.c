/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 */
#include <errno.h>
#include <sys/mman.h>

#include "fence_window.h"
#include "ioctl.h"

/* NF_WINDOW_PAGE - the uapi's page of 4096 bytes */
#define NF_WINDOW_PAGE		4096u

/*
 * The window libnfence asks for: 64 MiB of address space, a page of it
 * for each of 16,384 shared fence handles at once (beyond that, handles
 * get pages mapped on their own). Only the pages read are ever populated,
 * but the address space is taken, per adapter, by every process that
 * opens one; and the kernel's budget of windows per adapter (a quarter of
 * the DRM device's mmap offset space) then serves 4,096 processes. A
 * process whose address space cannot take that much gets the largest
 * power of two down to NF_WINDOW_MIN_PAGES that fits.
 */
#define NF_WINDOW_PAGES		(1u << 14)
#define NF_WINDOW_MIN_PAGES	64u

_Static_assert(NF_WINDOW_PAGES <= DRM_NFENCE_FENCE_WINDOW_MAX_PAGES,
	       "libnfence's window is larger than the kernel's largest");

NTSTATUS nf_fence_window_open(int fd, struct nf_fence_window *w)
{
	struct drm_nfence_fence_window args = { 0 };
	uint32_t pages = NF_WINDOW_PAGES;
	void *addr = MAP_FAILED, *win;
	size_t size = 0;

	w->addr = NULL;
	/* Reserve the address range first: the window then fits in it. */
	for (; pages >= NF_WINDOW_MIN_PAGES; pages /= 2) {
		size = (size_t)pages * NF_WINDOW_PAGE;
		addr = mmap(NULL, size, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (addr != MAP_FAILED)
			break;
	}
	if (addr == MAP_FAILED)
		return STATUS_SUCCESS;

	args.pages = pages;
	if (nf_ioctl(fd, DRM_IOCTL_NFENCE_FENCE_WINDOW, &args)) {
		/* None made (an older kernel, memory): a mapping per page. */
		munmap(addr, size);
		return STATUS_SUCCESS;
	}
	if (args.mmap_offset > (uint64_t)INT64_MAX) {
		munmap(addr, size);
		return STATUS_UNSUCCESSFUL;
	}
	/*
	 * The window goes where the reservation was, given back first. Not
	 * with MAP_FIXED over it: a MAP_FIXED mmap() that fails leaves the
	 * reservation in place or the range unmapped, depending on where it
	 * failed, and in the second case another thread may have mapped
	 * something there since, which nothing tells apart from the
	 * reservation. An mmap() without MAP_FIXED leaves nothing when it
	 * fails. The address is a hint: if another thread takes part of
	 * the range first, the window goes wherever it fits.
	 */
	munmap(addr, size);
	win = mmap(addr, size, PROT_READ, MAP_SHARED, fd,
		   (off_t)args.mmap_offset);
	if (win == MAP_FAILED)
		return NFenceStatusFromErrno(errno ? errno : ENOMEM);
	w->addr = win;
	w->offset = args.mmap_offset;
	w->size = size;
	return STATUS_SUCCESS;
}

void nf_fence_window_close(struct nf_fence_window *w)
{
	if (w->addr)
		munmap((void *)w->addr, w->size);
	w->addr = NULL;
}

const void *nf_fence_window_addr(const struct nf_fence_window *w,
				 uint64_t offset)
{
	if (!w->addr || offset < w->offset || offset - w->offset >= w->size ||
	    offset % NF_WINDOW_PAGE)
		return NULL;
	return w->addr + (offset - w->offset);
}
