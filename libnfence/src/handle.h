/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * The process-wide D3DKMT handle table, which is also the registry of the
 * library's objects.
 *
 * Handles. Every object a D3DKMT handle names embeds a struct nf_object.
 * Objects are reference counted: the table holds one reference while the
 * handle is open, each lookup takes another that the caller drops with
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
 *
 * Owners. Each object has the ops of its type (struct nf_object_ops) and
 * an owner, fixed when it is made: the device for an allocation, a context
 * and a sync object; the context for a hardware queue; the queue for its
 * doorbell and its progress fence; none for adapter and device handles.
 * The kernel destroys an object with its owner, and so does the registry:
 * it keeps each open object's open children itself, so no object names
 * the kinds of its children. An object is new until it joins the table
 * (nf_handle_insert()), open while its handle is in it, and closing from
 * the moment it leaves (nf_handle_remove()): a closing object takes no new
 * child, and nf_handle_insert() refuses a child of an owner that is not
 * open.
 *
 * Closing. nf_object_close() closes an object that left the table: its
 * type's teardown undoes it, destroying its kernel object unless its owner
 * is closing (the owner's kernel destruction destroys it, or already has);
 * then each child still in the table leaves it and is closed the same way,
 * recursively, with its owner's destruction standing for its own kernel
 * destroy. Whoever removes a handle closes its object, so of concurrent
 * closes of one object exactly one tears it down, and a child that its own
 * destroy call and its owner's close race for is torn down once, by the
 * first to take it out of the table.
 *
 * Lock order, outermost first:
 *   1. nf_allocation_lock (allocation.c): the CPU mappings, lock counts and
 *      pins of allocations;
 *   2. the registry lock (handle.c): the table, and every object's state,
 *      owner links and children.
 * The adapter list lock (adapter.c) and the fence page lock
 * (fence_page.c) are leaves: no other lock is taken under them, and they
 * are not taken under the two above. No lock is held across an object's
 * teardown or release, nor while nf_object_put() may drop a last
 * reference. The pthread_atfork() prepare handlers take the locks in this
 * order (handle.c says how). A context's submit_lock (context.h) is a
 * leaf too, held by a thread that holds a reference to the context and no
 * other lock, across one SUBMIT ioctl (which may wait for room in the
 * queue); fork() does not take it: a child has no handle, so it never
 * reaches a context of its parent's.
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

/*
 * struct nf_object_ops - what the registry knows of a type
 * @type: the type of the objects
 * @one_per_owner: an owner has at most one open child of @type; another
 *	is refused with STATUS_DEVICE_BUSY
 * @release: free the object once its last reference is dropped; its
 *	owner's reference is dropped after it. NULL: free() it (it starts
 *	with its struct nf_object).
 * @teardown: undo the object once it has left the table, or once it
 *	failed to join it: destroy its kernel object unless @owner_destroys
 *	(its owner's kernel destruction destroys it), then undo the library's
 *	side (CPU mappings, pins); return the status of the kernel's destroy,
 *	STATUS_SUCCESS if there was none to make. NULL: nothing to undo.
 */
struct nf_object_ops {
	enum nf_handle_type type;
	bool one_per_owner;
	void (*release)(struct nf_object *obj);
	NTSTATUS (*teardown)(struct nf_object *obj, bool owner_destroys);
};

/* enum nf_object_state - where an object stands with the table */
enum nf_object_state {
	NF_OBJECT_NEW,		/* not inserted yet, or refused */
	NF_OBJECT_OPEN,		/* its handle is in the table */
	NF_OBJECT_CLOSING,	/* left the table: no new child joins */
};

struct nf_object {
	const struct nf_object_ops *ops;
	struct nf_object *owner;	/* one reference, or NULL */
	D3DKMT_HANDLE handle;		/* 0 until inserted */
	atomic_uint refcount;
	/* under the registry lock: */
	enum nf_object_state state;
	bool owner_destroys;		/* see nf_object_ops.teardown */
	struct nf_object *hash_next;	/* the table's bucket */
	struct nf_object *children;	/* open children (sibling_*) */
	struct nf_object *sibling_next;	/* owner->children */
	struct nf_object **sibling_pprev; /* NULL if on no list */
};

/*
 * nf_object_init() - make @obj a new object of @ops' type with one
 * reference, the caller's; it takes a reference on @owner (NULL if none),
 * which it keeps until it is released.
 */
void nf_object_init(struct nf_object *obj, const struct nf_object_ops *ops,
		    struct nf_object *owner);
void nf_object_get(struct nf_object *obj);
void nf_object_put(struct nf_object *obj);

/*
 * nf_handle_insert() - give the new object @obj a handle: it joins the
 * table, which takes its own reference, and its owner's children.
 * Returns STATUS_SUCCESS and *@handle; or NF_STATUS_BAD_HANDLE if its
 * owner is not open (closing: it lost a race with the owner's close),
 * STATUS_DEVICE_BUSY as nf_object_ops.one_per_owner says,
 * STATUS_INSUFFICIENT_RESOURCES or STATUS_NO_MEMORY. On failure @obj is
 * torn down (told whether its owner's close destroys its kernel object)
 * and stays new; the caller drops its reference either way.
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
 * @match runs under the registry lock and must not call into this file.
 */
struct nf_object *nf_handle_find(enum nf_handle_type type,
				 bool (*match)(const struct nf_object *obj,
					       const void *data),
				 const void *data);

/* nf_object_is_open() - whether @obj's handle is (still) in the table */
bool nf_object_is_open(struct nf_object *obj);

/*
 * nf_handle_remove() - take the object @handle names out of the table if
 * it is of @type, and return it with the table's reference, now the
 * caller's, who closes it with nf_object_close(); NULL otherwise. The
 * object is closing from now on. Of concurrent removals of one handle
 * exactly one succeeds.
 */
struct nf_object *nf_handle_remove(D3DKMT_HANDLE handle,
				   enum nf_handle_type type);

/*
 * nf_object_close() - close @obj, which nf_handle_remove() returned: tear
 * it down, then close each of its children still in the table; drop the
 * reference nf_handle_remove() gave. Returns the status of @obj's
 * teardown.
 */
NTSTATUS nf_object_close(struct nf_object *obj);

/*
 * nf_handle_close() - nf_handle_remove() and nf_object_close(): the status
 * of the teardown, or NF_STATUS_BAD_HANDLE if @handle names no object of
 * @type.
 */
NTSTATUS nf_handle_close(D3DKMT_HANDLE handle, enum nf_handle_type type);

/*
 * nf_handle_set_next() - the index the handle counter continues from,
 * taken modulo NF_HANDLE_INDEXES (tests only)
 */
void nf_handle_set_next(unsigned int index);

/* nf_handle_count() - number of open handles (tests only) */
unsigned int nf_handle_count(void);

#endif /* _NFENCE_HANDLE_H_ */
