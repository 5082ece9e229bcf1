/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * The handle table and object registry (handle.h): a chained hash table
 * keyed by handle, and each object's list of open children, under one
 * mutex.
 */
#include <pthread.h>
#include <stdlib.h>

#include "handle.h"

#define NF_HASH_MIN_BUCKETS	64u

static pthread_mutex_t nf_handle_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nf_object **nf_buckets;	/* nf_nbuckets entries */
static unsigned int nf_nbuckets;	/* a power of two, or 0 */
static unsigned int nf_nobjects;
static unsigned int nf_next_index;	/* below NF_HANDLE_INDEXES */
/*
 * In a forked child, the table it inherited (see nf_handle_child()):
 * volatile, as nothing reads it and the store must not be optimized away.
 */
static struct nf_object **volatile nf_inherited_buckets;

/*
 * A fork()ed child must not inherit a lock held by another thread.
 *
 * The registry lock is the innermost lock of libnfence (handle.h's lock
 * order). The prepare handlers of pthread_atfork() run in reverse order of
 * registration, so this one is registered first, by a constructor with a
 * priority, to take the registry lock last; the other locks' handlers are
 * registered by constructors without one, which run later.
 */
static void nf_handle_prefork(void)
{
	pthread_mutex_lock(&nf_handle_lock);
}

static void nf_handle_postfork(void)
{
	pthread_mutex_unlock(&nf_handle_lock);
}

/*
 * D3DKMT handles do not survive fork(), as in WSL: the child starts with an
 * empty table, so every handle it inherited names nothing there
 * (NF_STATUS_BAD_HANDLE) and no call reaches the parent's kernel objects
 * through the files the child shares with it. The parent's objects are
 * left as they are, never released: their release would act on the
 * parent's kernel objects. They stay reachable from nf_inherited_buckets
 * (a grandchild keeps only its parent's). The counter goes on, so the
 * child's handles differ from every inherited one until it wraps.
 */
static void nf_handle_child(void)
{
	nf_inherited_buckets = nf_buckets;
	nf_buckets = NULL;
	nf_nbuckets = 0;
	nf_nobjects = 0;
	pthread_mutex_unlock(&nf_handle_lock);
}

__attribute__((constructor(101)))
static void nf_handle_init(void)
{
	pthread_atfork(nf_handle_prefork, nf_handle_postfork, nf_handle_child);
}

/* Leave nothing behind for leak checkers when every handle is closed. */
__attribute__((destructor))
static void nf_handle_fini(void)
{
	pthread_mutex_lock(&nf_handle_lock);
	if (!nf_nobjects) {
		free(nf_buckets);
		nf_buckets = NULL;
		nf_nbuckets = 0;
	}
	pthread_mutex_unlock(&nf_handle_lock);
}

/* True if @handle has the encoding of handle.h: base bits, low bits 0. */
static bool nf_handle_wellformed(D3DKMT_HANDLE handle)
{
	return (handle & (NF_HANDLE_BASE | ((1u << NF_HANDLE_SHIFT) - 1))) ==
	       NF_HANDLE_BASE;
}

static D3DKMT_HANDLE nf_handle_of(unsigned int index)
{
	return NF_HANDLE_BASE | index << NF_HANDLE_SHIFT;
}

static unsigned int nf_hash(D3DKMT_HANDLE handle, unsigned int nbuckets)
{
	unsigned int index = (handle & ~NF_HANDLE_BASE) >> NF_HANDLE_SHIFT;

	/* Fibonacci hashing; indexes are mostly sequential anyway. */
	return (unsigned int)((index * 2654435769u) >> 8) & (nbuckets - 1);
}

void nf_object_init(struct nf_object *obj, const struct nf_object_ops *ops,
		    struct nf_object *owner)
{
	obj->ops = ops;
	obj->owner = owner;
	if (owner)
		nf_object_get(owner);
	obj->handle = 0;
	atomic_init(&obj->refcount, 1);
	obj->state = NF_OBJECT_NEW;
	obj->owner_destroys = false;
	obj->hash_next = NULL;
	obj->children = NULL;
	obj->sibling_next = NULL;
	obj->sibling_pprev = NULL;
}

void nf_object_get(struct nf_object *obj)
{
	atomic_fetch_add_explicit(&obj->refcount, 1, memory_order_relaxed);
}

void nf_object_put(struct nf_object *obj)
{
	struct nf_object *owner;

	/* An owner's last reference may go with its child's: no recursion. */
	while (obj && atomic_fetch_sub_explicit(&obj->refcount, 1,
						memory_order_acq_rel) == 1) {
		owner = obj->owner;
		if (obj->ops->release)
			obj->ops->release(obj);
		else
			free(obj);
		obj = owner;
	}
}

/* Called with the lock held. */
static struct nf_object *nf_find(D3DKMT_HANDLE handle)
{
	struct nf_object *obj;

	if (!nf_nbuckets)
		return NULL;
	for (obj = nf_buckets[nf_hash(handle, nf_nbuckets)]; obj;
	     obj = obj->hash_next)
		if (obj->handle == handle)
			return obj;
	return NULL;
}

/* Called with the lock held; keeps the load factor at most 1. */
static int nf_grow(void)
{
	unsigned int n = nf_nbuckets ? nf_nbuckets * 2 : NF_HASH_MIN_BUCKETS;
	struct nf_object **b;
	unsigned int i;

	if (nf_nobjects < nf_nbuckets)
		return 0;
	b = calloc(n, sizeof(*b));
	if (!b)
		return -1;
	for (i = 0; i < nf_nbuckets; i++) {
		struct nf_object *obj = nf_buckets[i], *next;

		for (; obj; obj = next) {
			unsigned int h = nf_hash(obj->handle, n);

			next = obj->hash_next;
			obj->hash_next = b[h];
			b[h] = obj;
		}
	}
	free(nf_buckets);
	nf_buckets = b;
	nf_nbuckets = n;
	return 0;
}

/* Whether @owner has an open child of @type. Called with the lock held. */
static bool nf_has_child(const struct nf_object *owner,
			 enum nf_handle_type type)
{
	const struct nf_object *child;

	for (child = owner->children; child; child = child->sibling_next)
		if (child->ops->type == type)
			return true;
	return false;
}

/*
 * Check that @obj may join the table. Called with the lock held; on
 * failure *@owner_destroys says whether its owner's close destroys it.
 */
static NTSTATUS nf_may_insert(const struct nf_object *obj,
			      bool *owner_destroys)
{
	const struct nf_object *owner = obj->owner;

	if (owner && owner->state != NF_OBJECT_OPEN) {
		*owner_destroys = owner->state == NF_OBJECT_CLOSING;
		return NF_STATUS_BAD_HANDLE;
	}
	if (owner && obj->ops->one_per_owner && nf_has_child(owner,
							     obj->ops->type))
		return STATUS_DEVICE_BUSY;
	if (nf_nobjects >= NF_HANDLE_MAX_OPEN)
		return STATUS_INSUFFICIENT_RESOURCES;
	if (nf_grow())
		return STATUS_NO_MEMORY;
	return STATUS_SUCCESS;
}

NTSTATUS nf_handle_insert(struct nf_object *obj, D3DKMT_HANDLE *handle)
{
	struct nf_object *owner = obj->owner;
	bool owner_destroys = false;
	D3DKMT_HANDLE h = 0;
	unsigned int b;
	NTSTATUS st;

	pthread_mutex_lock(&nf_handle_lock);
	st = nf_may_insert(obj, &owner_destroys);
	if (NT_SUCCESS(st)) {
		/* Ends: fewer than NF_HANDLE_INDEXES handles are open. */
		do {
			h = nf_handle_of(nf_next_index);
			nf_next_index = (nf_next_index + 1) % NF_HANDLE_INDEXES;
		} while (nf_find(h));

		obj->handle = h;
		obj->state = NF_OBJECT_OPEN;
		nf_object_get(obj);
		b = nf_hash(h, nf_nbuckets);
		obj->hash_next = nf_buckets[b];
		nf_buckets[b] = obj;
		nf_nobjects++;
		if (owner) {
			obj->sibling_next = owner->children;
			if (obj->sibling_next)
				obj->sibling_next->sibling_pprev =
					&obj->sibling_next;
			obj->sibling_pprev = &owner->children;
			owner->children = obj;
		}
	}
	pthread_mutex_unlock(&nf_handle_lock);

	if (!NT_SUCCESS(st)) {
		if (obj->ops->teardown)
			obj->ops->teardown(obj, owner_destroys);
		return st;
	}
	*handle = h;
	return STATUS_SUCCESS;
}

/*
 * The object @handle names if it is of @type, after @act on it under the
 * lock; NULL if none.
 */
static struct nf_object *nf_handle_act(D3DKMT_HANDLE handle,
				       enum nf_handle_type type,
				       void (*act)(struct nf_object *obj))
{
	struct nf_object *obj;

	if (!nf_handle_wellformed(handle))
		return NULL;
	pthread_mutex_lock(&nf_handle_lock);
	obj = nf_find(handle);
	if (obj && obj->ops->type == type)
		act(obj);
	else
		obj = NULL;
	pthread_mutex_unlock(&nf_handle_lock);
	return obj;
}

struct nf_object *nf_handle_lookup(D3DKMT_HANDLE handle,
				   enum nf_handle_type type)
{
	return nf_handle_act(handle, type, nf_object_get);
}

struct nf_object *nf_handle_find(enum nf_handle_type type,
				 bool (*match)(const struct nf_object *obj,
					       const void *data),
				 const void *data)
{
	struct nf_object *obj = NULL;
	unsigned int b;

	pthread_mutex_lock(&nf_handle_lock);
	for (b = 0; b < nf_nbuckets && !obj; b++)
		for (obj = nf_buckets[b]; obj; obj = obj->hash_next)
			if (obj->ops->type == type && match(obj, data))
				break;
	if (obj)
		nf_object_get(obj);
	pthread_mutex_unlock(&nf_handle_lock);
	return obj;
}

bool nf_object_is_open(struct nf_object *obj)
{
	bool open;

	pthread_mutex_lock(&nf_handle_lock);
	open = obj->state == NF_OBJECT_OPEN;
	pthread_mutex_unlock(&nf_handle_lock);
	return open;
}

/*
 * Take the open object @obj out of the table and off its owner's children:
 * it is closing, and its owner's close destroys its kernel object if the
 * owner is closing too. Called with the lock held.
 */
static void nf_leave(struct nf_object *obj)
{
	struct nf_object **link;

	link = &nf_buckets[nf_hash(obj->handle, nf_nbuckets)];
	while (*link != obj)
		link = &(*link)->hash_next;
	*link = obj->hash_next;
	obj->hash_next = NULL;
	nf_nobjects--;

	if (obj->sibling_pprev) {
		*obj->sibling_pprev = obj->sibling_next;
		if (obj->sibling_next)
			obj->sibling_next->sibling_pprev = obj->sibling_pprev;
		obj->sibling_next = NULL;
		obj->sibling_pprev = NULL;
	}
	obj->state = NF_OBJECT_CLOSING;
	obj->owner_destroys = obj->owner &&
			      obj->owner->state == NF_OBJECT_CLOSING;
}

struct nf_object *nf_handle_remove(D3DKMT_HANDLE handle,
				   enum nf_handle_type type)
{
	return nf_handle_act(handle, type, nf_leave);
}

NTSTATUS nf_object_close(struct nf_object *obj)
{
	struct nf_object *child;
	NTSTATUS st = STATUS_SUCCESS;

	if (obj->ops->teardown)
		st = obj->ops->teardown(obj, obj->owner_destroys);

	/* Closing: no child joins any more, and each leaves one at a time. */
	for (;;) {
		pthread_mutex_lock(&nf_handle_lock);
		child = obj->children;
		if (child)
			nf_leave(child);
		pthread_mutex_unlock(&nf_handle_lock);
		if (!child)
			break;
		nf_object_close(child);
	}
	nf_object_put(obj);
	return st;
}

NTSTATUS nf_handle_close(D3DKMT_HANDLE handle, enum nf_handle_type type)
{
	struct nf_object *obj = nf_handle_remove(handle, type);

	if (!obj)
		return NF_STATUS_BAD_HANDLE;
	return nf_object_close(obj);
}

void nf_handle_set_next(unsigned int index)
{
	pthread_mutex_lock(&nf_handle_lock);
	nf_next_index = index % NF_HANDLE_INDEXES;
	pthread_mutex_unlock(&nf_handle_lock);
}

unsigned int nf_handle_count(void)
{
	unsigned int n;

	pthread_mutex_lock(&nf_handle_lock);
	n = nf_nobjects;
	pthread_mutex_unlock(&nf_handle_lock);
	return n;
}
