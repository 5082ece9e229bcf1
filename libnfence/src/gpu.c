/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Lookups of allocations, contexts and hardware queues.
 */
#include "gpu.h"

struct nf_allocation *nf_allocation_lookup(D3DKMT_HANDLE handle)
{
	return (struct nf_allocation *)nf_handle_lookup(handle,
							NF_HANDLE_ALLOCATION);
}

struct nf_context *nf_context_lookup(D3DKMT_HANDLE handle)
{
	return (struct nf_context *)nf_handle_lookup(handle, NF_HANDLE_CONTEXT);
}

struct nf_hwqueue *nf_hwqueue_lookup(D3DKMT_HANDLE handle)
{
	return (struct nf_hwqueue *)nf_handle_lookup(handle, NF_HANDLE_HWQUEUE);
}
