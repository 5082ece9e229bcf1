/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * The CPU window of an adapter's file (DRM_IOCTL_NFENCE_FENCE_WINDOW): one
 * read-only mapping through which the kernel shows the CurrentValue page
 * of every shared fence handle the file creates or opens afterwards, a
 * page of the window each. Without it, each such page is mapped on its own
 * (fence_page.h), a VMA of kernel memory per shared fence.
 */
#ifndef _NFENCE_FENCE_WINDOW_H_
#define _NFENCE_FENCE_WINDOW_H_

#include <stdint.h>

#include <nfence/d3dkmthk.h>

struct nf_fence_window {
	const char *addr;		/* the mapping, NULL without a window */
	uint64_t offset;		/* its mmap offset */
	uint64_t size;			/* its size in bytes */
};

/*
 * nf_fence_window_open() - give the file @fd a window and map it into
 * *@w, before any fence exists on the file. A kernel without the ioctl,
 * or a process whose address space has no room, gets no window
 * (@w->addr NULL), and every page is then mapped on its own. Returns
 * STATUS_SUCCESS, or the status of a window the kernel made but mmap()
 * refused (the file is then of no use for shared fences); on failure the
 * address space reserved for the window is given back.
 */
NTSTATUS nf_fence_window_open(int fd, struct nf_fence_window *w);

/* nf_fence_window_close() - unmap @w, if it is mapped */
void nf_fence_window_close(struct nf_fence_window *w);

/*
 * nf_fence_window_addr() - the address of the page at mmap offset @offset
 * of the window's file when that page is in @w, else NULL
 */
const void *nf_fence_window_addr(const struct nf_fence_window *w,
				 uint64_t offset);

#endif /* _NFENCE_FENCE_WINDOW_H_ */
