/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_FENCE_H__
#define __NFENCE_FENCE_H__

#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/kernel.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/rcupdate.h>
#include <linux/rhashtable-types.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include <drm/drm_gem.h>
#include <drm/nfence_drm.h>

#include "nfence_gpu.h"
#include "nfence_table.h"
#include "nfence_vm.h"
#include "nfence_waitlist.h"

struct drm_printer;
struct nfence_adapter;
struct nfence_device;
struct nfence_file;
struct nfence_peer_table;

#define NFENCE_FENCE_SLOTS	(PAGE_SIZE / NFENCE_FENCE_VALUE_STRIDE)

/**
 * struct nfence_fence_page - a page of fence values (a GEM object)
 *
 * CurrentValue pages in system memory are CPU-mappable read-only through
 * the GEM mmap offset; MonitoredValue pages and pages of VRAM never get
 * one. A pool page packs the values of the non-shared fences of one file
 * at %NFENCE_FENCE_VALUE_STRIDE; a shared fence has a page of its own (or
 * a VRAM range per value).
 */
struct nfence_fence_page {
	/** @base: the GEM object; its reference count is the page's */
	struct drm_gem_object base;
	/** @page: the memory */
	struct page *page;
	/** @vaddr: kernel address of @page (its VRAM address for VRAM) */
	void *vaddr;
	/**
	 * @vram: a VRAM pool page: its VRAM range, charged to the file whose
	 * pool made it and freed with the page; NULL in system memory
	 */
	struct nfence_segment_node *vram;
	/**
	 * @demoted: a VRAM pool page whose values were moved to system
	 * memory (&nfence_file.pools %NFENCE_POOL_DEMOTED)
	 */
	bool demoted;
	/** @lock: protects @used and @fences */
	spinlock_t lock;
	/** @used: allocated slots */
	DECLARE_BITMAP(used, NFENCE_FENCE_SLOTS);
	/**
	 * @fences: pool pages (CurrentValue, and MonitoredValue in VRAM):
	 * the fence of each used slot, once the fence is complete
	 */
	struct nfence_fence *fences[NFENCE_FENCE_SLOTS];
	/**
	 * @link: entry in the owning file's pool (&nfence_file.pools) until
	 * the file closes, or a VRAM page is given back empty
	 */
	struct list_head link;
	/** @map: pool pages: the page in the owning file's GPU VA space */
	struct nfence_vm_mapping map;
};

/**
 * struct nfence_fence_slot - where one value lives
 */
struct nfence_fence_slot {
	/**
	 * @page: the page holding the value (a pool page, maybe of VRAM, or a
	 * page of its own), or NULL for a VRAM range of its own (@vram)
	 */
	struct nfence_fence_page *page;
	/** @offset: byte offset of the value in @page */
	u32 offset;
	/**
	 * @vram: the VRAM range of its own holding the value, allocated
	 * only for a shared fence's value placed in VRAM (NULL with @page)
	 */
	struct nfence_segment_node *vram;
	/**
	 * @value: kernel address of the value. It changes only when a
	 * demotion moves the value out of VRAM (DOC: demoting fence storage),
	 * under &nfence_cmp.lock, &nfence_adapter.maps_lock and the fence's
	 * waitlist lock, and the old storage stays for an RCU grace period
	 * after. Read it with nfence_slot_value(), with rcu_dereference()
	 * under rcu_read_lock(), or nfence_fence_read() for CurrentValue.
	 */
	u64 __rcu *value;
};

/**
 * struct nfence_xgroup - the instances of one cross-adapter fence
 *
 * A cross-adapter fence has one global object (instance) on its creator's
 * adapter and one more per FENCE_OPEN on any other adapter (two opens on
 * one adapter make two instances); all share one CurrentValue page in
 * system memory, each has its own MonitoredValue. On an adapter without
 * peer signals that is 0 for good, so every signal interrupts and the
 * driver passes it on to the other instances (the NotificationOnly of
 * WDDM); on one with them, the GPU tells the other GPUs itself (DOC: peer
 * signals) and MonitoredValue is the bound of the instance's CPU waiters.
 *
 * Lifetime: kref-counted by its instances.
 */
struct nfence_xgroup {
	/** @ref: one reference per instance */
	struct kref ref;
	/**
	 * @lock: protects @instances, @num_instances, @num_peers,
	 * @cpu_instances, @scanned and the writes of @peers; nests inside
	 * xarray locks
	 */
	spinlock_t lock;
	/** @instances: &struct nfence_fence.xlink of every instance */
	struct list_head instances;
	/**
	 * @peers: the GPUs' peer table (DOC: peer signals), NULL until an
	 * instance on an adapter with peer signals joins; written under
	 * @lock, read under RCU
	 */
	struct nfence_peer_table __rcu *peers;
	/** @num_peers: live entries of @peers */
	u32 num_peers;
	/** @cpu_instances: instances on adapters without peer signals */
	u32 cpu_instances;
	/**
	 * @num_instances: entries of @instances, at most
	 * %DRM_NFENCE_MAX_FENCE_INSTANCES
	 */
	u32 num_instances;
	/**
	 * @scanned: the number of the scan (of any adapter) that last passed
	 * the group's signal on (nfence_fence_propagate_scan())
	 */
	u64 scanned;
	/**
	 * @handles: local handles and shared fds of every instance, the
	 * holders that can still signal the fence: when it drops to zero
	 * every instance is orphaned
	 */
	atomic_t handles;
};

/**
 * struct nfence_fence - a native fence: the global object
 *
 * Lifetime: kref-counted; references are held by local handles, shared fds
 * and in-flight waits. @handles counts only local handles and fds, the
 * holders that can still signal it: when it drops to zero the fence can
 * never change again and its waiters are released with -ENOENT. Those of
 * an instance of a cross-adapter fence count in its group's instead
 * (&nfence_xgroup.handles), which holds them for every instance.
 */
struct nfence_fence {
	/** @ref: reference count */
	struct kref ref;
	/** @adapter: the adapter; the fence holds a reference on its DRM device */
	struct nfence_adapter *adapter;
	/** @id: adapter-wide id (debugfs) */
	u32 id;
	/** @type: &enum drm_nfence_fence_type */
	u32 type;
	/** @flags: DRM_NFENCE_FENCE_* creation flags */
	u32 flags;
	/**
	 * @handles: local handles and shared fds (unused by an instance of a
	 * cross-adapter fence, which counts them in its group)
	 */
	atomic_t handles;
	/** @orphaned: set once nobody can signal it (@handles reached zero) */
	bool orphaned;
	/** @always_signaled: the creating device is in error (AlwaysSignaled) */
	bool always_signaled;
	/**
	 * @xpeer: an instance with an entry in its group's peer table
	 * (under &nfence_xgroup.lock)
	 */
	bool xpeer;
	/**
	 * @xcpu: an instance counted in &nfence_xgroup.cpu_instances (under
	 * &nfence_xgroup.lock)
	 */
	bool xcpu;
	/**
	 * @monitored: a WDDM 2.x monitored fence (a queue's progress fence
	 * without NativeProgressFence): no MonitoredValue in its mappings,
	 * and every GPU signal raises the monitored fence signaled interrupt
	 */
	bool monitored;
	/** @cv: CurrentValue */
	struct nfence_fence_slot cv;
	/** @mv: MonitoredValue */
	struct nfence_fence_slot mv;
	/** @waiters: CPU waiters; owns MonitoredValue (or @cpu_mv) */
	struct nfence_waitlist waiters;
	/** @xgroup: cross-adapter fences: the instances on every adapter */
	struct nfence_xgroup *xgroup;
	/** @xlink: entry in &nfence_xgroup.instances */
	struct list_head xlink;
	/**
	 * @cpu_mv: monitored fences and cross-adapter instances on adapters
	 * without peer signals: the waiters' bound; MV stays 0
	 */
	u64 cpu_mv;
};

/**
 * struct nfence_value_map - a fence value mapped into a file's GPU VA space
 *
 * One per file and value storage (a CurrentValue or a MonitoredValue that
 * is not in one of the file's pool pages), shared by every handle of the
 * file that maps it: a fence opened on another device of the same process
 * gets the same GPU VAs, as WDDM says (libnfence opens each adapter
 * once per process). The NO_SIGNAL handles of a file map CurrentValue
 * read-only through one more, of that storage and that file. In
 * &nfence_file.value_maps; a demotion of the storage points it at the
 * new place (DOC: demoting fence storage).
 */
struct nfence_value_map {
	/** @key: the storage, and read-only or not (nfence_value_map_key()) */
	unsigned long key;
	/** @hnode: entry in &nfence_file.value_maps */
	struct rhash_head hnode;
	/** @users: the handles using it (their cv_link or mv_link) */
	struct list_head users;
	/**
	 * @fence: CurrentValue maps: a user's fence, for &nfence_vm_mapping.
	 * fence_at; changed under the address space's lock as well
	 */
	struct nfence_fence *fence;
	/** @map: the mapping */
	struct nfence_vm_mapping map;
};

/**
 * struct nfence_fence_local - a local handle to a fence in one file
 */
struct nfence_fence_local {
	/** @fence: the global fence (a reference) */
	struct nfence_fence *fence;
	/** @device: the device the handle belongs to (a reference) */
	struct nfence_device *device;
	/**
	 * @obj: its handle, kind and owner (its device) in the file's registry
	 */
	struct nfence_object obj;
	/** @flags: DRM_NFENCE_FENCE_NO_SIGNAL / NO_WAIT of this handle */
	u32 flags;
	/** @engine_affinity: physical adapters where its GPU VAs are mapped */
	u32 engine_affinity;
	/** @mapping: what the ioctl returned */
	struct drm_nfence_fence_mapping mapping;
	/**
	 * @cv_vmap: the file's map of CurrentValue (its read-only one for a
	 * NO_SIGNAL handle), NULL for a pool page's writable one
	 */
	struct nfence_value_map *cv_vmap;
	/** @cv_link: entry in @cv_vmap's users */
	struct list_head cv_link;
	/** @mv_vmap: the file's map of MonitoredValue, NULL for a pool page's */
	struct nfence_value_map *mv_vmap;
	/** @mv_link: entry in @mv_vmap's users */
	struct list_head mv_link;
	/** @mmap_allowed: this file may mmap the fence's own CurrentValue page */
	bool mmap_allowed;
	/** @in_window: CurrentValue's page is shown at @window_index */
	bool in_window;
	/** @creator: this handle created the fence (its device is the parent) */
	bool creator;
	/**
	 * @dev_link: entry in &nfence_device.fences while it is the creator's
	 * handle and the device is not in error (empty otherwise)
	 */
	struct list_head dev_link;
	/** @progress: a hardware queue's progress fence, closed with the queue */
	bool progress;
	/** @window_index: its page of the file's CPU window, if @in_window */
	u32 window_index;
};

/* CurrentValue of an AlwaysSignaled fence, from WDDM. */
#define NFENCE_ALWAYS_SIGNALED_VALUE	0xFFFFFFFFull

/*
 * NFENCE_FENCE_WATCHED: the mark, in &nfence_adapter.fences, of a fence the
 * scan of every fence must look at: it may have CPU waiters, or it is an
 * instance of a cross-adapter fence (XA_MARK_0 tracks free ids)
 */
#define NFENCE_FENCE_WATCHED	XA_MARK_1

bool nfence_slot_in_vram(const struct nfence_fence_slot *slot);

/**
 * nfence_slot_value - the kernel address of a value that cannot move
 * @slot: the value's slot
 * @held: true when the caller holds a lock that the move of the value
 *	holds throughout: lockdep_is_held() of &nfence_cmp.lock,
 *	&nfence_adapter.maps_lock or the fence's waitlist lock (a macro, so
 *	that it is evaluated only where PROVE_RCU checks it)
 *
 * For a caller that uses the address past a read (stores to it, hands it
 * to the engines or to a GPU mapping): it must hold one of those locks, or
 * know the value is out of VRAM, where nothing moves it again. A caller
 * that only reads the value reads it under rcu_read_lock() instead, as
 * nfence_fence_read() does: the old storage outlives the move by a grace
 * period. PROVE_RCU checks that one of these holds.
 *
 * Return: @slot's current &nfence_fence_slot.value.
 */
#define nfence_slot_value(slot, held) ({				\
	struct nfence_fence_slot *__slot = (slot);			\
									\
	rcu_dereference_check(__slot->value,				\
			      (held) || !nfence_slot_in_vram(__slot));	\
})

u64 nfence_fence_read(struct nfence_fence *fence);

/**
 * nfence_fence_reached - whether a fence has reached a value
 * @fence: the fence
 * @value: the value
 *
 * Context: any; CurrentValue is read under RCU (nfence_fence_read()).
 * Return: true if CurrentValue >= @value or the fence is AlwaysSignaled.
 */
static inline bool nfence_fence_reached(struct nfence_fence *fence, u64 value)
{
	return READ_ONCE(fence->always_signaled) ||
	       nfence_fence_read(fence) >= value;
}

int nfence_fence_caches_init(void);
void nfence_fence_caches_fini(void);
int nfence_file_fences_init(struct nfence_file *nfile);
void nfence_file_fences_fini(struct nfence_file *nfile);

struct nfence_fence *nfence_fence_get(struct nfence_file *nfile, u32 handle,
				      u32 device, u32 *local_flags);
void nfence_fence_put(struct nfence_fence *fence);
unsigned int nfence_fence_propagate(struct nfence_fence *fence);
unsigned int nfence_fence_propagate_scan(struct nfence_fence *fence, u64 pass);
void nfence_instance_set_always_signaled(struct nfence_fence *fence);
struct nfence_fence *nfence_fence_create_progress(struct nfence_file *nfile,
						  struct nfence_device *wdev,
						  bool native, u32 *handle,
						  struct drm_nfence_fence_mapping *mapping);
void nfence_fence_close_progress(struct nfence_file *nfile, u32 handle);
void nfence_fence_pools_trim(struct nfence_file *nfile);
unsigned int nfence_fence_vram_demote(struct nfence_adapter *adapter,
				      struct nfence_file *nfile);
unsigned long nfence_value_map_key(const struct nfence_fence *fence,
				   const struct nfence_fence_slot *slot);
void nfence_value_maps_move(struct nfence_adapter *adapter,
			    struct nfence_file *nfile, unsigned long key,
			    u64 *to);
struct nfence_fence_page *nfence_fence_page_alone(struct nfence_adapter *adapter);
void nfence_fences_print(struct nfence_adapter *adapter,
			 struct drm_printer *p);

int nfence_fence_create_ioctl(struct drm_device *drm, void *data,
			      struct drm_file *file);
int nfence_fence_destroy_ioctl(struct drm_device *drm, void *data,
			       struct drm_file *file);
int nfence_fence_share_ioctl(struct drm_device *drm, void *data,
			     struct drm_file *file);
int nfence_fence_open_ioctl(struct drm_device *drm, void *data,
			    struct drm_file *file);

void nfence_vram_shared_count(struct nfence_adapter *adapter,
			      struct nfence_segment_node *node, int n);

#if IS_ENABLED(CONFIG_DRM_NFENCE_KUNIT_TEST)
void nfence_demote_moved(struct nfence_fence_page *fp);
void nfence_demote_grace(void);
unsigned int nfence_demote_shared(struct nfence_adapter *adapter,
				  struct nfence_segment_usage *usage);
#endif

#endif /* __NFENCE_FENCE_H__ */
