/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * CPU mappings of fence pages. The kernel packs the CurrentValues of up to
 * 64 non-shared fences of a file into one page, so each adapter keeps a
 * cache of the pages it mapped from its render node file, keyed by mmap
 * offset and reference counted by the fences using them: a page is mapped
 * once, when its first fence appears, and unmapped with its last fence.
 * The cache is a search tree (tsearch()), so that a process holding a
 * hundred thousand shared fences, each in a page of its own, does not
 * walk them all on each create or open. A shared fence's page is not
 * mapped on its own when the adapter's file has a CPU window
 * (fence_window.h).
 */
#ifndef _NFENCE_FENCE_PAGE_H_
#define _NFENCE_FENCE_PAGE_H_

#include "adapter.h"

/* NF_FENCE_PAGE_SIZE - bytes of a fence page mapping (the uapi's 4096) */
#define NF_FENCE_PAGE_SIZE	4096u

struct nf_fence_page {
	uint64_t offset;		/* mmap offset on the adapter's file */
	const void *addr;		/* the read-only mapping */
	unsigned int refs;		/* fences using the page */
};

/*
 * nf_fence_page_get() - the mapping of the page at mmap offset @offset of
 * @adapter's file, mapped now if no fence uses it yet, with a new
 * reference. Returns STATUS_SUCCESS or the status of mmap()'s errno.
 */
NTSTATUS nf_fence_page_get(struct nf_adapter *adapter, uint64_t offset,
			   struct nf_fence_page **page);

/*
 * nf_fence_page_put() - drop a reference from nf_fence_page_get(); the
 * last one unmaps the page. @adapter must be the adapter it came from.
 */
void nf_fence_page_put(struct nf_adapter *adapter, struct nf_fence_page *page);

#endif /* _NFENCE_FENCE_PAGE_H_ */
