/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * What allocations, contexts and hardware queues share: the lock of their
 * lists, lookups, and closing them all with their device.
 */
#include "gpu.h"

pthread_mutex_t nf_gpu_lock = PTHREAD_MUTEX_INITIALIZER;

static void nf_gpu_prefork(void)
{
	pthread_mutex_lock(&nf_gpu_lock);
}

static void nf_gpu_postfork(void)
{
	pthread_mutex_unlock(&nf_gpu_lock);
}

__attribute__((constructor))
static void nf_gpu_init(void)
{
	pthread_atfork(nf_gpu_prefork, nf_gpu_postfork, nf_gpu_postfork);
}

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

/*
 * Take every object off list @head, with a reference each, and return the
 * first; the objects stay chained through link.next, their pprev NULL (so
 * their own destroy skips the kernel: the device's destruction does it).
 * Called with nf_gpu_lock held.
 */
static struct nf_link *nf_take_list(struct nf_link **head, size_t link_offset)
{
	struct nf_link *list = *head, *l;

	*head = NULL;
	for (l = list; l; l = l->next) {
		nf_object_get((struct nf_object *)((char *)l - link_offset));
		l->pprev = NULL;
	}
	return list;
}

void nf_device_close_gpu(struct nf_device *dev)
{
	struct nf_link *allocs, *ctxs, *l, *next;
	struct nf_object *obj;

	pthread_mutex_lock(&nf_gpu_lock);
	dev->gpu_closed = true;
	allocs = nf_take_list(&dev->allocations,
			      offsetof(struct nf_allocation, link));
	ctxs = nf_take_list(&dev->contexts, offsetof(struct nf_context, link));
	pthread_mutex_unlock(&nf_gpu_lock);

	/* Unlisted, ->next is ours alone now. */
	for (l = allocs; l; l = next) {
		struct nf_allocation *alloc =
			nf_container_of(l, struct nf_allocation, link);

		next = l->next;
		l->next = NULL;
		obj = nf_handle_remove(alloc->base.handle,
				       NF_HANDLE_ALLOCATION);
		if (obj) {
			nf_allocation_teardown(alloc);
			nf_object_put(obj);
		}
		nf_object_put(&alloc->base);
	}
	for (l = ctxs; l; l = next) {
		struct nf_context *ctx =
			nf_container_of(l, struct nf_context, link);

		next = l->next;
		l->next = NULL;
		obj = nf_handle_remove(ctx->base.handle, NF_HANDLE_CONTEXT);
		if (obj) {
			nf_context_teardown(ctx);
			nf_object_put(obj);
		}
		nf_object_put(&ctx->base);
	}
}
