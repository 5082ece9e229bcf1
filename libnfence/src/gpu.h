/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * GPU objects: allocations, contexts and hardware queues. Each is a handle
 * of the process-wide table naming a kernel object of its device on the
 * adapter's file; the kernel names them per device, and the D3DKMT calls
 * that omit hDevice find the device through the object.
 *
 * Lifetimes follow the kernel's: destroying a device destroys its
 * allocations and contexts, destroying a context destroys its queues, and
 * destroying a queue closes its progress fence. To mirror that, each device
 * lists its allocations and contexts and each context its queues, under
 * one lock (nf_gpu_lock). As for sync objects (fence.h), whoever removes an
 * object's handle from the table tears it down; the kernel object is
 * destroyed by the one who also took it off its parent's list, or else by
 * the parent's destruction, already under way.
 *
 * Lock order: nf_gpu_lock, then the handle table's lock. nf_gpu_lock is
 * never held while taking the sync object or fence page locks.
 */
#ifndef _NFENCE_GPU_H_
#define _NFENCE_GPU_H_

#include <pthread.h>
#include <stdbool.h>

#include "device.h"
#include "fence.h"

/* Intrusive list link; pprev NULL when off a list. Under nf_gpu_lock. */
struct nf_link {
	struct nf_link *next;
	struct nf_link **pprev;
};

#define nf_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

static inline void nf_link_add(struct nf_link **head, struct nf_link *link)
{
	link->next = *head;
	if (link->next)
		link->next->pprev = &link->next;
	link->pprev = head;
	*head = link;
}

/* Take @link off its list; true if it was on one. */
static inline bool nf_link_del(struct nf_link *link)
{
	if (!link->pprev)
		return false;
	*link->pprev = link->next;
	if (link->next)
		link->next->pprev = link->pprev;
	link->next = NULL;
	link->pprev = NULL;
	return true;
}

/* Every list and flag this header says is under it. */
extern pthread_mutex_t nf_gpu_lock;

/* An allocation handle (NF_HANDLE_ALLOCATION). */
struct nf_allocation {
	struct nf_object base;
	struct nf_device *device;	/* one reference */
	uint32_t kernel_handle;
	uint64_t gpu_va;
	uint64_t size;			/* page rounded */
	uint32_t segment_id, placed_segment_id;
	uint32_t flags;			/* NFENCE_ALLOCATION_FLAGS.Value */
	/* under nf_gpu_lock: */
	struct nf_link link;		/* nf_device.allocations */
	bool dead;			/* torn down: no new CPU mapping */
	unsigned int pins;		/* doorbells using it: no destroy */
	unsigned int lock_count;	/* D3DKMTLock2() locks */
	void *cpu_va;			/* the mapping while lock_count > 0 */
	size_t map_size;		/* its size */
};

/* A context handle (NF_HANDLE_CONTEXT). */
struct nf_context {
	struct nf_object base;
	struct nf_device *device;	/* one reference */
	uint32_t kernel_handle;
	uint32_t engine;
	uint32_t queue_flags;		/* DRM_NFENCE_HWQUEUE_* for every queue */
	/* under nf_gpu_lock: */
	struct nf_link link;		/* nf_device.contexts */
	struct nf_link *queues;		/* nf_hwqueue.link */
	bool destroyed;			/* no new queue joins */
	/*
	 * The kernel handle of the context's own queue, which only the
	 * context-level GPU waits and signals feed; 0 until the first. The
	 * kernel destroys it with the context.
	 */
	uint32_t sync_queue;
};

/* A hardware queue handle (NF_HANDLE_HWQUEUE). */
struct nf_hwqueue {
	struct nf_object base;
	struct nf_context *context;	/* one reference */
	struct nf_device *device;	/* the context's */
	uint32_t kernel_handle;
	struct nf_syncobj *progress;	/* one reference */
	bool user_mode;			/* UserModeSubmission */
	/* under nf_gpu_lock: */
	struct nf_link link;		/* nf_context.queues */
	struct nf_doorbell *doorbell;	/* its doorbell, or NULL */
};

/* NF_DB_PAGES: a doorbell's CPU mappings: doorbell, secondary, status, last queued */
#define NF_DB_PAGES	4

/* A doorbell handle (NF_HANDLE_DOORBELL). */
struct nf_doorbell {
	struct nf_object base;
	struct nf_hwqueue *queue;	/* one reference */
	struct nf_allocation *ring;	/* pinned */
	struct nf_allocation *control;	/* pinned, or NULL */
	uint32_t kernel_handle;
	void *pages[NF_DB_PAGES];	/* CPU mappings (doorbell.c), or NULL */
};

/*
 * nf_*_lookup() - the object @handle names, with a new reference (drop it
 * with nf_object_put()); NULL if @handle names no object of that kind.
 */
struct nf_allocation *nf_allocation_lookup(D3DKMT_HANDLE handle);
struct nf_context *nf_context_lookup(D3DKMT_HANDLE handle);
struct nf_hwqueue *nf_hwqueue_lookup(D3DKMT_HANDLE handle);

/*
 * nf_allocation_teardown(), nf_context_teardown(), nf_hwqueue_teardown() -
 * tear down the object @obj (an allocation, a context, a queue: its
 * struct nf_object) whose handle the caller removed from the table (the
 * table's reference is still the caller's to drop): take it off its
 * parent's list and, if it was on it, destroy the kernel object; then undo
 * the library's side: an allocation's CPU mapping, a context's queues, a
 * queue's progress fence. Return the status of the kernel's destroy
 * (STATUS_SUCCESS if there was none to make).
 */
typedef NTSTATUS nf_teardown_fn(struct nf_object *obj);
nf_teardown_fn nf_allocation_teardown;
nf_teardown_fn nf_context_teardown;
nf_teardown_fn nf_hwqueue_teardown;

/*
 * nf_allocation_pin() - the allocation @handle names if it is one of
 * @dev's and alive, with a new reference and a pin: until
 * nf_allocation_unpin(), D3DKMTDestroyAllocation2() refuses it with
 * STATUS_DEVICE_BUSY (destroying its device still destroys it).
 */
struct nf_allocation *nf_allocation_pin(const struct nf_device *dev,
					D3DKMT_HANDLE handle);
void nf_allocation_unpin(struct nf_allocation *alloc);

/*
 * nf_hwqueue_close_doorbell() - the queue @queue is being torn down and
 * the kernel destroys its doorbell with it: close the doorbell's handle
 * and undo its CPU mappings and pins.
 */
void nf_hwqueue_close_doorbell(struct nf_hwqueue *queue);

/*
 * nf_gpu_close_list() - mark @dev closed, so that no allocation or context
 * joins it any more, and take every object off its list @head (the
 * objects' struct nf_link at @link_offset), with a reference each. Returns
 * the first: the objects stay chained through link.next, their pprev NULL
 * (so their own destroy skips the kernel: the device's destruction does
 * it), and ->next is the caller's alone. nf_gpu_take_list_locked() does
 * the same for a list of another parent (a context's queues), under
 * nf_gpu_lock and without marking anything closed.
 */
struct nf_link *nf_gpu_close_list(struct nf_device *dev,
				  struct nf_link **head, size_t link_offset);
struct nf_link *nf_gpu_take_list_locked(struct nf_link **head,
					size_t link_offset);

/*
 * nf_gpu_close_taken() - for each object of @list (from nf_gpu_close_list()
 * or nf_gpu_take_list_locked()): if its handle of kind @type is still in
 * the table, remove it and @teardown the object; then drop the list's
 * reference.
 */
void nf_gpu_close_taken(struct nf_link *list, size_t link_offset,
			enum nf_handle_type type, nf_teardown_fn *teardown);

/*
 * nf_context_sync_queue() - the kernel handle of @ctx's own queue (for the
 * context-level GPU waits and signals) in *@kernel_handle, made on the
 * first call. STATUS_INVALID_HANDLE once the context is being destroyed.
 */
NTSTATUS nf_context_sync_queue(struct nf_context *ctx, uint32_t *kernel_handle);

/*
 * nf_device_close_allocations(), nf_device_close_contexts() - close the
 * handles of @dev's allocations (unmapping what is locked), contexts and
 * their queues. Called by D3DKMTDestroyDevice() once the device handle is
 * removed; the kernel destroys their objects with the device.
 */
void nf_device_close_allocations(struct nf_device *dev);
void nf_device_close_contexts(struct nf_device *dev);

#endif /* _NFENCE_GPU_H_ */
