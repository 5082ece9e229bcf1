/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * The per-adapter cache of mapped fence pages. One lock for all adapters:
 * pages are mapped and unmapped only when fences are created, opened and
 * destroyed.
 */
#include <errno.h>
#include <pthread.h>
#include <search.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "fence_page.h"

static pthread_mutex_t nf_fence_page_lock = PTHREAD_MUTEX_INITIALIZER;

static void nf_fence_page_prefork(void)
{
	pthread_mutex_lock(&nf_fence_page_lock);
}

static void nf_fence_page_postfork(void)
{
	pthread_mutex_unlock(&nf_fence_page_lock);
}

__attribute__((constructor))
static void nf_fence_page_init(void)
{
	pthread_atfork(nf_fence_page_prefork, nf_fence_page_postfork,
		       nf_fence_page_postfork);
}

/* The order of nf_adapter.fence_pages: by mmap offset. */
static int nf_fence_page_cmp(const void *a, const void *b)
{
	const struct nf_fence_page *pa = a, *pb = b;

	return pa->offset < pb->offset ? -1 : pa->offset > pb->offset;
}

NTSTATUS nf_fence_page_get(struct nf_adapter *adapter, uint64_t offset,
			   struct nf_fence_page **out)
{
	struct nf_fence_page *page, key = { .offset = offset };
	NTSTATUS st = STATUS_SUCCESS;
	void **found;
	void *addr;

	/* mmap() takes an off_t; the kernel hands out page-aligned offsets. */
	if (offset > (uint64_t)INT64_MAX || offset % NF_FENCE_PAGE_SIZE)
		return STATUS_INVALID_PARAMETER;

	pthread_mutex_lock(&nf_fence_page_lock);
	found = tfind(&key, &adapter->fence_pages, nf_fence_page_cmp);
	if (found) {
		page = *found;
		page->refs++;
		goto out;
	}

	page = calloc(1, sizeof(*page));
	if (!page) {
		st = STATUS_NO_MEMORY;
		goto out;
	}
	addr = mmap(NULL, NF_FENCE_PAGE_SIZE, PROT_READ, MAP_SHARED,
		    adapter->fd, (off_t)offset);
	if (addr == MAP_FAILED) {
		st = NFenceStatusFromErrno(errno ? errno : ENOMEM);
		free(page);
		page = NULL;
		goto out;
	}
	page->offset = offset;
	page->addr = addr;
	page->refs = 1;
	if (!tsearch(page, &adapter->fence_pages, nf_fence_page_cmp)) {
		munmap(addr, NF_FENCE_PAGE_SIZE);
		free(page);
		page = NULL;
		st = STATUS_NO_MEMORY;
	}
out:
	pthread_mutex_unlock(&nf_fence_page_lock);
	*out = page;
	return st;
}

void nf_fence_page_put(struct nf_adapter *adapter, struct nf_fence_page *page)
{
	bool last;

	pthread_mutex_lock(&nf_fence_page_lock);
	last = --page->refs == 0;
	if (last)
		tdelete(page, &adapter->fence_pages, nf_fence_page_cmp);
	pthread_mutex_unlock(&nf_fence_page_lock);

	if (last) {
		munmap((void *)page->addr, NF_FENCE_PAGE_SIZE);
		free(page);
	}
}
