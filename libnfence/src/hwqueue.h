/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Hardware queues: a queue handle names a kernel queue of its context's
 * device on the adapter's file; the calls that take a queue find the
 * device through it. The context owns the queue, and the queue owns its
 * doorbell and its progress fence (handle.h): destroying a queue destroys
 * both, and destroying its context destroys it.
 */
#ifndef _NFENCE_HWQUEUE_H_
#define _NFENCE_HWQUEUE_H_

#include <stdbool.h>

#include "context.h"

/* A hardware queue handle (NF_HANDLE_HWQUEUE), owned by its context. */
struct nf_hwqueue {
	struct nf_object base;
	struct nf_context *context;	/* the owner */
	struct nf_device *device;	/* the context's */
	uint32_t kernel_handle;
	/* its progress fence's GPU VAs (CurrentValueCpuVa is not kept) */
	D3DDDI_NATIVEFENCEMAPPING progress;
	bool user_mode;			/* UserModeSubmission */
};

/*
 * nf_hwqueue_lookup() - the queue @handle names, with a new reference
 * (drop it with nf_object_put()); NULL if @handle names none.
 */
struct nf_hwqueue *nf_hwqueue_lookup(D3DKMT_HANDLE handle);

/*
 * nf_hwqueue_of_context() - the kernel handle of @ctx's own queue, a
 * kernel-mode queue for the context-level GPU waits and signals, in
 * *@kernel_handle, made on the first call. NF_STATUS_BAD_HANDLE once the
 * context is closing.
 */
NTSTATUS nf_hwqueue_of_context(struct nf_context *ctx, uint32_t *kernel_handle);

/*
 * nf_doorbell_ring_size() - the size in bytes (whole pages) of the ring
 * buffer allocation of the doorbell @handle names; 0 if @handle names no
 * doorbell open in this process.
 */
uint64_t nf_doorbell_ring_size(D3DKMT_HANDLE handle);

#endif /* _NFENCE_HWQUEUE_H_ */
