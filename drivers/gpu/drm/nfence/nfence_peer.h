/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_PEER_H__
#define __NFENCE_PEER_H__

#include <linux/kref.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct nfence_cmp;

/* Fence ids one peer doorbell holds between two looks of its CMP. */
#define NFENCE_PEER_BELL_IDS	32

/**
 * struct nfence_peer_bell - the peer doorbell of a GPU
 *
 * The memory other GPUs write to for a GPU-to-GPU signal: the id, on this
 * GPU, of the fence they signaled. A GPU has one when its adapter has
 * peer signals (&nfence_gpu_config.peer_signals).
 *
 * Lifetime: kref-counted by its GPU and by every &struct nfence_peer_table
 * that names it, so a table read under RCU never points at freed memory
 * even after the adapter is gone.
 */
struct nfence_peer_bell {
	/** @ref: the GPU's reference and one per table entry naming it */
	struct kref ref;
	/** @lock: protects every other member */
	spinlock_t lock;
	/** @cmp: the CMP that looks at it, NULL while none runs */
	struct nfence_cmp *cmp;
	/** @wake: wakes @cmp's thread */
	void (*wake)(struct nfence_cmp *cmp);
	/** @count: distinct ids written since the CMP's last look */
	u32 count;
	/** @writes: writes since the CMP's last look, repeated ids included */
	u32 writes;
	/** @overflow: more than %NFENCE_PEER_BELL_IDS distinct ids were written */
	bool overflow;
	/** @ids: the ids written, @count of them, each once */
	u32 ids[NFENCE_PEER_BELL_IDS];
};

/**
 * struct nfence_peer - one instance of a cross-adapter fence, as peers see it
 */
struct nfence_peer {
	/** @bell: the peer doorbell of the instance's GPU (a reference) */
	struct nfence_peer_bell *bell;
	/** @id: the instance's fence id there; 0 once the instance is gone */
	u32 id;
};

/**
 * struct nfence_peer_table - the GPU's table of a cross-adapter fence's peers
 *
 * What the driver programs for the GPUs of a cross-adapter fence's
 * instances: every instance on a GPU with a peer doorbell, and whether the
 * fence also has instances only the CPU can tell (on a GPU without one).
 * GPUs read it under RCU; the driver replaces it when an instance joins,
 * clears an entry's id when one leaves and updates @cpu_instances in place.
 */
struct nfence_peer_table {
	/** @rcu: frees it after the readers of the table it replaced */
	struct rcu_head rcu;
	/**
	 * @cpu_instances: instances without a peer doorbell: while there
	 * is one, every GPU signal of the fence raises the interrupt
	 */
	u32 cpu_instances;
	/** @count: entries in use */
	u32 count;
	/** @size: entries allocated */
	u32 size;
	/** @peer: the entries */
	struct nfence_peer peer[];
};

struct nfence_peer_bell *nfence_peer_bell_create(void);
void nfence_peer_bell_put(struct nfence_peer_bell *bell);
void nfence_peer_bell_attach(struct nfence_peer_bell *bell,
			     struct nfence_cmp *cmp,
			     void (*wake)(struct nfence_cmp *cmp));
bool nfence_peer_ring(struct nfence_peer_bell *bell, u32 id);
u32 nfence_peer_drain(struct nfence_peer_bell *bell, u32 *ids, u32 *writes,
		      bool *overflow);

struct nfence_peer_table *nfence_peer_table_alloc(u32 size);
void nfence_peer_table_free(struct nfence_peer_table *table);
void nfence_peer_table_fill(struct nfence_peer_table *table,
			    const struct nfence_peer_table *old,
			    struct nfence_peer_bell *bell, u32 id);
void nfence_peer_table_remove(struct nfence_peer_table *table,
			      const struct nfence_peer_bell *bell, u32 id);
void nfence_peer_table_retire(struct nfence_peer_table *table);

#endif /* __NFENCE_PEER_H__ */
