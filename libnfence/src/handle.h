/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * The process-wide D3DKMT handle table.
 *
 * Every object a D3DKMT handle names embeds a struct nf_object. Objects
 * are reference counted: the table holds one reference while the handle is
 * open, each lookup takes another that the caller drops with
 * nf_object_put().
 *
 * Handles look like Windows' local handles: NF_HANDLE_BASE (bits 30 and
 * 31) ORed with a 24-bit index shifted left by NF_HANDLE_SHIFT, so the low
 * 6 bits are zero and handles made one after the other are 0x40 apart. A
 * file descriptor is a non-negative int, below 0x80000000, so no file
 * descriptor's value is ever a handle. The index comes from a counter that
 * skips indexes still open, so a closed handle is not handed out again
 * until 2^24 handles later. A handle is the library's name for an object,
 * not the kernel's: each object keeps the handle the kernel gave it on its
 * adapter's file (the kernel's are small integers per file), and the table
 * maps the one to the object that holds the other. A forked child starts
 * with an empty table: no handle survives fork() (handle.c).
 */
#ifndef _NFENCE_HANDLE_H_
#define _NFENCE_HANDLE_H_

#include <stdatomic.h>
#include <stdbool.h>

#include <nfence/d3dkmthk.h>

/* enum nf_handle_type - kinds of objects in the handle table */
enum nf_handle_type {
	NF_HANDLE_ADAPTER = 1,	/* struct nf_adapter_handle */
	NF_HANDLE_DEVICE,	/* struct nf_device */
	NF_HANDLE_SYNCOBJ,	/* struct nf_syncobj (native fences) */
	NF_HANDLE_ALLOCATION,	/* struct nf_allocation */
	NF_HANDLE_CONTEXT,	/* struct nf_context */
	NF_HANDLE_HWQUEUE,	/* struct nf_hwqueue */
	NF_HANDLE_DOORBELL,	/* struct nf_doorbell */
	NF_HANDLE_TYPE_MAX,
};

/*
 * NF_STATUS_BAD_HANDLE - the status of a call given a D3DKMT handle that
 * names nothing it can use (0, closed, of another kind or another device,
 * another process's, a file descriptor's value): STATUS_INVALID_PARAMETER,
 * as Windows returns. STATUS_INVALID_HANDLE is for bad NT handles (file
 * descriptors) only.
 */
#define NF_STATUS_BAD_HANDLE	STATUS_INVALID_PARAMETER

/* The encoding of a handle: NF_HANDLE_BASE | index << NF_HANDLE_SHIFT. */
#define NF_HANDLE_BASE		0xC0000000u
#define NF_HANDLE_SHIFT		6
#define NF_HANDLE_INDEX_BITS	24
#define NF_HANDLE_INDEXES	(1u << NF_HANDLE_INDEX_BITS)

/* NF_HANDLE_MAX_OPEN - open handles per process: all but one index */
#define NF_HANDLE_MAX_OPEN	(NF_HANDLE_INDEXES - 1)

struct nf_object;

/* nf_release_fn - frees an object once its last reference is dropped */
typedef void (*nf_release_fn)(struct nf_object *obj);

struct nf_object {
	enum nf_handle_type type;
	D3DKMT_HANDLE handle;		/* 0 while not in the table */
	atomic_uint refcount;
	nf_release_fn release;
	struct nf_object *hash_next;	/* under the table lock */
};

void nf_object_init(struct nf_object *obj, enum nf_handle_type type,
		    nf_release_fn release);
void nf_object_get(struct nf_object *obj);
void nf_object_put(struct nf_object *obj);

/*
 * nf_handle_insert() - give @obj a handle; the table takes its own
 * reference. Returns STATUS_SUCCESS, or STATUS_NO_MEMORY /
 * STATUS_INSUFFICIENT_RESOURCES with @obj untouched.
 */
NTSTATUS nf_handle_insert(struct nf_object *obj, D3DKMT_HANDLE *handle);

/*
 * nf_handle_lookup() - the object @handle names if it is of @type, with a
 * new reference; NULL otherwise.
 */
struct nf_object *nf_handle_lookup(D3DKMT_HANDLE handle,
				   enum nf_handle_type type);

/*
 * nf_handle_find() - an open object of @type for which @match(obj, @data)
 * is true, with a new reference; NULL if none. Looks at every handle (for
 * the rare reverse lookups: a kernel handle back to the D3DKMT one);
 * @match runs under the table lock and must not call into this file.
 */
struct nf_object *nf_handle_find(enum nf_handle_type type,
				 bool (*match)(const struct nf_object *obj,
					       const void *data),
				 const void *data);

/*
 * nf_handle_remove() - close @handle if it names an object of @type and
 * return the object with the table's reference, now the caller's; NULL
 * otherwise. Of concurrent removals of one handle exactly one succeeds.
 */
struct nf_object *nf_handle_remove(D3DKMT_HANDLE handle,
				   enum nf_handle_type type);

/*
 * nf_handle_set_next() - the index the handle counter continues from,
 * taken modulo NF_HANDLE_INDEXES (tests only)
 */
void nf_handle_set_next(unsigned int index);

/* nf_handle_count() - number of open handles (tests only) */
unsigned int nf_handle_count(void);

#endif /* _NFENCE_HANDLE_H_ */
