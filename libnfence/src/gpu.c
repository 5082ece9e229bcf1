/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * What allocations, contexts and hardware queues share: the lock of their
 * lists, lookups, and taking a device's list of them when it closes.
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

/* Under nf_gpu_lock: take the list at @head, with a reference each. */
struct nf_link *nf_gpu_take_list_locked(struct nf_link **head,
					size_t link_offset)
{
	struct nf_link *list, *l;

	list = *head;
	*head = NULL;
	for (l = list; l; l = l->next) {
		nf_object_get((struct nf_object *)((char *)l - link_offset));
		l->pprev = NULL;
	}
	return list;
}

struct nf_link *nf_gpu_close_list(struct nf_device *dev,
				  struct nf_link **head, size_t link_offset)
{
	struct nf_link *list;

	pthread_mutex_lock(&nf_gpu_lock);
	dev->gpu_closed = true;
	list = nf_gpu_take_list_locked(head, link_offset);
	pthread_mutex_unlock(&nf_gpu_lock);
	return list;
}

void nf_gpu_close_taken(struct nf_link *list, size_t link_offset,
			enum nf_handle_type type, nf_teardown_fn *teardown)
{
	struct nf_link *l, *next;
	struct nf_object *base, *obj;

	/* Unlisted, ->next is ours alone now. */
	for (l = list; l; l = next) {
		base = (struct nf_object *)((char *)l - link_offset);
		next = l->next;
		l->next = NULL;
		obj = nf_handle_remove(base->handle, type);
		if (obj) {
			teardown(obj);
			nf_object_put(obj);
		}
		nf_object_put(base);
	}
}
