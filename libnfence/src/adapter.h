/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Adapters. A process has at most one struct nf_adapter per adapter LUID:
 * the open render node file every handle and device of that adapter uses,
 * so kernel handles made through one D3DKMT adapter handle are valid with
 * any other handle of the same adapter, as per-process state is on Windows.
 * It lives while adapter handles or devices reference it.
 */
#ifndef _NFENCE_ADAPTER_H_
#define _NFENCE_ADAPTER_H_

#include "fence_window.h"
#include "handle.h"
#include "ioctl.h"

struct nf_fence_page;

struct nf_adapter {
	int refs;			/* under the adapter list lock */
	int fd;				/* the render node file, owned */
	struct drm_nfence_query_adapter info; /* as read at open */
	struct nf_adapter *next;	/* adapter list */
	/*
	 * the tsearch() tree of the fence pages mapped from @fd (struct
	 * nf_fence_page), under the lock of fence_page.c
	 */
	void *fence_pages;
	/*
	 * the CPU window of @fd, mapped for the adapter's life before any
	 * fence exists on it; no mapping without one
	 */
	struct nf_fence_window window;
};

/* An adapter handle (NF_HANDLE_ADAPTER). */
struct nf_adapter_handle {
	struct nf_object base;
	struct nf_adapter *adapter;	/* one reference */
};

void nf_adapter_get(struct nf_adapter *adapter);
void nf_adapter_put(struct nf_adapter *adapter);

/*
 * nf_adapter_lookup() - the adapter behind adapter handle @handle, with a
 * new reference; NULL if @handle is not an open adapter handle.
 */
struct nf_adapter *nf_adapter_lookup(D3DKMT_HANDLE handle);

#endif /* _NFENCE_ADAPTER_H_ */
