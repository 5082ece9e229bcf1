/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Contexts: a context handle names a kernel context of its device on the
 * adapter's file (the kernel names contexts per device). The device owns
 * it, and it owns its hardware queues (handle.h): destroying a context
 * destroys its queues, and destroying its device destroys it.
 */
#ifndef _NFENCE_CONTEXT_H_
#define _NFENCE_CONTEXT_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "device.h"

/* A context handle (NF_HANDLE_CONTEXT), owned by its device. */
struct nf_context {
	struct nf_object base;
	struct nf_device *device;	/* the owner */
	uint32_t kernel_handle;
	uint32_t engine;
	uint32_t queue_flags;		/* DRM_NFENCE_HWQUEUE_* for every queue */
	/*
	 * The kernel handle of the context's own queue (hwqueue.c), which
	 * only the context-level GPU waits and signals feed; 0 until the
	 * first. The kernel destroys it with the context.
	 */
	atomic_uint sync_queue;
	/*
	 * D3DKMTSubmitCommand() on that queue (submit.c): the progress value
	 * of its last command buffer, which the kernel wants the next one's
	 * to exceed. submit_lock keeps the value and the queue's order in
	 * step across the SUBMIT ioctl; it is a leaf (handle.h).
	 */
	pthread_mutex_t submit_lock;
	uint64_t submit_progress;
};

/*
 * nf_context_lookup() - the context @handle names, with a new reference
 * (drop it with nf_object_put()); NULL if @handle names none.
 */
struct nf_context *nf_context_lookup(D3DKMT_HANDLE handle);

#endif /* _NFENCE_CONTEXT_H_ */
