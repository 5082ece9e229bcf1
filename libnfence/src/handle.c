/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * The handle table: a chained hash table keyed by handle, under one mutex.
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
 * A fork()ed child must not inherit the lock held by another thread.
 *
 * The handle lock is the innermost lock of libnfence: other code may take
 * it while holding its own lock (fence.c inserts handles under the sync
 * object lock), never the reverse. The prepare handlers of pthread_atfork()
 * run in reverse order of registration, so this one is registered first,
 * by a constructor with a priority, to take the handle lock last.
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

void nf_object_init(struct nf_object *obj, enum nf_handle_type type,
		    nf_release_fn release)
{
	obj->type = type;
	obj->handle = 0;
	atomic_init(&obj->refcount, 1);
	obj->release = release;
	obj->hash_next = NULL;
}

void nf_object_get(struct nf_object *obj)
{
	atomic_fetch_add_explicit(&obj->refcount, 1, memory_order_relaxed);
}

void nf_object_put(struct nf_object *obj)
{
	if (!obj)
		return;
	if (atomic_fetch_sub_explicit(&obj->refcount, 1,
				      memory_order_acq_rel) == 1)
		obj->release(obj);
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

NTSTATUS nf_handle_insert(struct nf_object *obj, D3DKMT_HANDLE *handle)
{
	D3DKMT_HANDLE h;
	unsigned int b;

	pthread_mutex_lock(&nf_handle_lock);
	if (nf_nobjects >= NF_HANDLE_MAX_OPEN) {
		pthread_mutex_unlock(&nf_handle_lock);
		return STATUS_INSUFFICIENT_RESOURCES;
	}
	if (nf_grow()) {
		pthread_mutex_unlock(&nf_handle_lock);
		return STATUS_NO_MEMORY;
	}
	/* Ends: fewer than NF_HANDLE_INDEXES handles are open. */
	do {
		h = nf_handle_of(nf_next_index);
		nf_next_index = (nf_next_index + 1) % NF_HANDLE_INDEXES;
	} while (nf_find(h));

	obj->handle = h;
	nf_object_get(obj);
	b = nf_hash(h, nf_nbuckets);
	obj->hash_next = nf_buckets[b];
	nf_buckets[b] = obj;
	nf_nobjects++;
	pthread_mutex_unlock(&nf_handle_lock);

	*handle = h;
	return STATUS_SUCCESS;
}

struct nf_object *nf_handle_lookup(D3DKMT_HANDLE handle,
				   enum nf_handle_type type)
{
	struct nf_object *obj;

	if (!nf_handle_wellformed(handle))
		return NULL;
	pthread_mutex_lock(&nf_handle_lock);
	obj = nf_find(handle);
	if (obj && obj->type == type)
		nf_object_get(obj);
	else
		obj = NULL;
	pthread_mutex_unlock(&nf_handle_lock);
	return obj;
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
			if (obj->type == type && match(obj, data))
				break;
	if (obj)
		nf_object_get(obj);
	pthread_mutex_unlock(&nf_handle_lock);
	return obj;
}

struct nf_object *nf_handle_remove(D3DKMT_HANDLE handle,
				   enum nf_handle_type type)
{
	struct nf_object **link, *obj = NULL;

	if (!nf_handle_wellformed(handle))
		return NULL;
	pthread_mutex_lock(&nf_handle_lock);
	if (nf_nbuckets) {
		link = &nf_buckets[nf_hash(handle, nf_nbuckets)];
		for (; *link; link = &(*link)->hash_next) {
			if ((*link)->handle != handle)
				continue;
			if ((*link)->type == type) {
				obj = *link;
				*link = obj->hash_next;
				obj->hash_next = NULL;
				nf_nobjects--;
			}
			break;
		}
	}
	pthread_mutex_unlock(&nf_handle_lock);
	return obj;
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
