// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "nfence_peer.h"

/**
 * DOC: peer signals
 *
 * The seed's section 14.2 describes, as future work, a cross-adapter
 * signal delivered from one GPU to another without the CPU: the
 * signalling GPU writes to a doorbell memory the other GPU watches, with a
 * payload that tells it which fence was signaled, and the other GPU
 * re-checks its runlist. An adapter loaded with ``peer_signals`` (native
 * fence adapters only; %DRM_NFENCE_FENCE_CAP_PEER_SIGNALS in its native
 * fence capabilities) simulates that hardware.
 *
 * Its GPU has a *peer doorbell* (&struct nfence_peer_bell): a small array
 * of fence ids other GPUs write to, each id kept once until its CMP takes
 * it, at the start of every pass and between turns. For every
 * cross-adapter fence the driver keeps a *peer table*
 * (&struct nfence_peer_table): the instances on GPUs with a peer
 * doorbell, each with that doorbell and its fence id there, and a count
 * of the instances only the CPU can tell (on adapters without peer
 * signals, including WDDM 2.x monitored instances).
 *
 * A GPU signal of an instance on such a GPU (a FENCE_SIGNAL, or a queue's
 * progress fence) stores the value, then writes the fence's id into the
 * peer doorbell of every other instance's GPU and wakes that GPU's CMP;
 * the interrupt on the signalling adapter is raised only when its own
 * instance's MonitoredValue says a CPU waiter there is satisfied, or while
 * the table counts an instance only the CPU can tell (for a FENCE_SIGNAL
 * with a MonitoredValue operand: one without never interrupts, as on any
 * fence). The woken CMP looks at the values of the fences it finds ids
 * of; if one exceeds its MonitoredValue it raises its own native fence
 * signaled interrupt, without a payload (the ids name fences the GPU holds
 * no reference to: the driver's scan of its fences finds them), and its
 * pass gives every queue parked on a FENCE_WAIT a look, as any pass does. Instances on such
 * GPUs therefore keep real MonitoredValues (the bound of their own CPU
 * waiters), where instances without peer signals keep the seed's 0 and
 * interrupt on every signal. A doorbell that fills up before its CMP looks
 * remembers only that it overflowed; the CMP then raises the interrupt
 * without a payload, which checks every fence's waiters.
 *
 * A CMP that found ids in its peer doorbell while one of its queues is
 * parked on a FENCE_WAIT keeps looking, without sleeping, for
 * %NFENCE_CMP_SPIN_NS after (&nfence_cmp.peer_until_ns), as it spins
 * after a doorbell ring: two GPUs that bounce a fence keep each other's CMP
 * awake instead of paying a thread wake-up per hop. A real CMP watches its
 * doorbells in hardware; the simulation pays for the watch in CPU time,
 * only while ids keep coming and a queue waits. The doorbell is also
 * emptied while the adapter is in D3 (without the watch), so that its CPU
 * waiters do not wait for D0.
 *
 * CPU signals and AlwaysSignaled are unchanged: the driver passes them to
 * every other instance on the CPU (nfence_fence_propagate()). An adapter
 * that is unplugged stops watching its doorbell: writes to it are
 * dropped from then on.
 *
 * Locking: a doorbell's lock is innermost; a GPU takes another GPU's
 * doorbell lock under its own &nfence_cmp.lock and wakes that CMP's
 * thread under it (a wake_up(), no CMP lock). Tables are read under RCU
 * and changed under &nfence_xgroup.lock.
 */

/**
 * nfence_peer_bell_create - make the peer doorbell of a GPU
 *
 * Return: the doorbell with one reference, or NULL without memory.
 */
struct nfence_peer_bell *nfence_peer_bell_create(void)
{
	struct nfence_peer_bell *bell = kzalloc(sizeof(*bell), GFP_KERNEL);

	if (!bell)
		return NULL;
	kref_init(&bell->ref);
	spin_lock_init(&bell->lock);
	return bell;
}

static void nfence_peer_bell_release(struct kref *ref)
{
	kfree(container_of(ref, struct nfence_peer_bell, ref));
}

/**
 * nfence_peer_bell_put - drop a reference to a peer doorbell
 * @bell: the doorbell, or NULL
 */
void nfence_peer_bell_put(struct nfence_peer_bell *bell)
{
	if (bell)
		kref_put(&bell->ref, nfence_peer_bell_release);
}

/**
 * nfence_peer_bell_attach - set the CMP that watches a peer doorbell
 * @bell: the doorbell
 * @cmp: its GPU's CMP, whose thread runs; NULL once the thread is stopping
 * @wake: how to wake @cmp's thread (nfence_cmp_kick()), NULL with @cmp
 *
 * While no CMP is attached, writes to the doorbell are dropped: an adapter
 * whose CMP is gone has released its waiters already.
 */
void nfence_peer_bell_attach(struct nfence_peer_bell *bell,
			     struct nfence_cmp *cmp,
			     void (*wake)(struct nfence_cmp *cmp))
{
	spin_lock(&bell->lock);
	bell->cmp = cmp;
	bell->wake = wake;
	bell->count = 0;
	bell->writes = 0;
	bell->overflow = false;
	spin_unlock(&bell->lock);
}

/* Whether @bell holds @id already; its lock held. */
static bool nfence_peer_holds(const struct nfence_peer_bell *bell, u32 id)
{
	u32 i;

	for (i = 0; i < bell->count; i++)
		if (bell->ids[i] == id)
			return true;
	return false;
}

/**
 * nfence_peer_ring - a GPU writes a fence id to another GPU's peer doorbell
 * @bell: the other GPU's doorbell
 * @id: the fence's id on that GPU
 *
 * Records @id, unless the doorbell holds it already (the CMP will look at
 * that fence anyway), or the overflow when it is full, and wakes the CMP
 * that watches it. Two GPUs that run a ping-pong in lockstep, each seeing
 * the other's value in memory within one turn, write one id many times
 * between two looks. The caller's stores to the fence are ordered before
 * this by a full barrier, and the doorbell's lock orders this before the
 * CMP's look.
 *
 * Context: process context (the doorbell's lock is a plain spinlock, which
 * the CMP's thread takes too, so not from an interrupt of any kind); wakes
 * the CMP's thread.
 * Return: true if a CMP watches the doorbell.
 */
bool nfence_peer_ring(struct nfence_peer_bell *bell, u32 id)
{
	struct nfence_cmp *cmp;

	spin_lock(&bell->lock);
	cmp = bell->cmp;
	if (cmp) {
		bell->writes++;
		if (!nfence_peer_holds(bell, id)) {
			if (bell->count < NFENCE_PEER_BELL_IDS)
				bell->ids[bell->count++] = id;
			else
				bell->overflow = true;
		}
		bell->wake(cmp);
	}
	spin_unlock(&bell->lock);
	return cmp;
}

/**
 * nfence_peer_drain - a CMP takes what its peer doorbell holds
 * @bell: the doorbell
 * @ids: out: %NFENCE_PEER_BELL_IDS entries, the ids written, each once
 * @writes: out: the writes, repeated ids included
 * @overflow: out: whether more distinct ids were written than it holds
 *
 * Followed by a full barrier: the fence values the CMP reads next are at
 * least those the writers stored before they rang.
 *
 * Return: the number of ids in @ids.
 */
u32 nfence_peer_drain(struct nfence_peer_bell *bell, u32 *ids, u32 *writes,
		      bool *overflow)
{
	u32 n;

	spin_lock(&bell->lock);
	n = bell->count;
	memcpy(ids, bell->ids, n * sizeof(*ids));
	*writes = bell->writes;
	*overflow = bell->overflow;
	bell->count = 0;
	bell->writes = 0;
	bell->overflow = false;
	spin_unlock(&bell->lock);
	/* The writers' value stores (before their ring) before our loads. */
	smp_mb();
	return n;
}

/**
 * nfence_peer_table_alloc - allocate a peer table
 * @size: entries it can hold
 *
 * Return: an empty table, or NULL without memory.
 */
struct nfence_peer_table *nfence_peer_table_alloc(u32 size)
{
	struct nfence_peer_table *table;

	table = kzalloc(struct_size(table, peer, size), GFP_KERNEL_ACCOUNT);
	if (table)
		table->size = size;
	return table;
}

/**
 * nfence_peer_table_free - free a table no GPU can see
 * @table: a table never published, or NULL
 */
void nfence_peer_table_free(struct nfence_peer_table *table)
{
	u32 i;

	if (!table)
		return;
	for (i = 0; i < table->count; i++)
		nfence_peer_bell_put(table->peer[i].bell);
	kfree(table);
}

/**
 * nfence_peer_table_fill - build the table that replaces another
 * @table: a new table, with room for @old's live entries and one more
 * @old: the table it replaces, or NULL
 * @bell: the joining instance's peer doorbell
 * @id: the joining instance's fence id
 *
 * Copies @old's count of CPU-only instances and its live entries (each
 * with a reference to its doorbell), then adds @bell and @id.
 *
 * Context: &nfence_xgroup.lock held.
 */
void nfence_peer_table_fill(struct nfence_peer_table *table,
			    const struct nfence_peer_table *old,
			    struct nfence_peer_bell *bell, u32 id)
{
	u32 i;

	table->count = 0;
	if (old) {
		table->cpu_instances = old->cpu_instances;
		for (i = 0; i < old->count; i++) {
			if (!old->peer[i].id)
				continue;
			kref_get(&old->peer[i].bell->ref);
			table->peer[table->count++] = old->peer[i];
		}
	}
	kref_get(&bell->ref);
	table->peer[table->count].bell = bell;
	table->peer[table->count].id = id;
	table->count++;
}

/**
 * nfence_peer_table_remove - an instance leaves its fence's peer table
 * @table: the published table
 * @bell: the instance's peer doorbell
 * @id: the instance's fence id
 *
 * Its entry's id becomes 0, which GPUs skip; a GPU that read the id
 * before rings a fence that is gone, which the woken CMP does not find
 * (or finds another fence by that id, and only looks at it).
 *
 * Context: &nfence_xgroup.lock held.
 */
void nfence_peer_table_remove(struct nfence_peer_table *table,
			      const struct nfence_peer_bell *bell, u32 id)
{
	u32 i;

	for (i = 0; i < table->count; i++) {
		if (table->peer[i].bell == bell && table->peer[i].id == id) {
			WRITE_ONCE(table->peer[i].id, 0);
			return;
		}
	}
}

static void nfence_peer_table_free_rcu(struct rcu_head *rcu)
{
	nfence_peer_table_free(container_of(rcu, struct nfence_peer_table,
					    rcu));
}

/**
 * nfence_peer_table_retire - free a replaced table after its readers
 * @table: the table, unpublished, or NULL
 */
void nfence_peer_table_retire(struct nfence_peer_table *table)
{
	if (table)
		call_rcu(&table->rcu, nfence_peer_table_free_rcu);
}
