/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_ADAPTER_H__
#define __NFENCE_ADAPTER_H__

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rhashtable-types.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <drm/drm_device.h>
#include <drm/drm_file.h>

#include "nfence_async.h"
#include "nfence_cmp_types.h"
#include "nfence_gpu.h"
#include "nfence_table.h"
#include "nfence_vm.h"

/*
 * The two structs every object of the driver hangs off: the adapter (one DRM
 * device) and the open file. They live in their own header so that the
 * object files (layer 2) and the ioctl table in nfence_drv.c (layer 4) both
 * depend on them without depending on each other.
 */

struct drm_file;
struct nfence_fence_window;
struct platform_device;
struct workqueue_struct;

/**
 * struct nfence_f1_hold - a test hook: hold the F1 work (debugfs nfence_f1_hold)
 *
 * While @on, &nfence_adapter.f1_work waits before it looks at the engines
 * the CMP asked F1 for, until debugfs lets it run once (a step) or lets
 * it go (a release), or for NFENCE_F1_HOLD_MS at most. A test holds it to
 * act between the CMP's ask and the driver's transition. Written with
 * WRITE_ONCE(), read with READ_ONCE(); one debugfs writer at a time.
 */
struct nfence_f1_hold {
	/** @wq: where the F1 work and the debugfs writer wait */
	wait_queue_head_t wq;
	/** @on: the F1 work is held */
	bool on;
	/** @waiting: the F1 work waits in the hold */
	bool waiting;
	/** @granted: the F1 work may run until its run number @granted */
	unsigned int granted;
	/** @done: the number of the F1 work's last held run, once done */
	unsigned int done;
};

/**
 * struct nfence_adapter - one simulated adapter: a DRM device
 *
 * Lifetime: allocated with devm_drm_dev_alloc() on its platform device,
 * freed when the last reference to @drm goes (open files hold one).
 */
struct nfence_adapter {
	/** @drm: the DRM device */
	struct drm_device drm;
	/** @pdev: the platform device it hangs off */
	struct platform_device *pdev;
	/** @gpu: the simulated GPU */
	struct nfence_gpu gpu;
	/** @cmp: its context management processor */
	struct nfence_cmp cmp;
	/**
	 * @doorbell_lock: serializes connecting, disconnecting and faulting
	 * in the CPU mappings of the adapter's doorbells
	 */
	struct mutex doorbell_lock;
	/**
	 * @connect_queue: the DOORBELL_CONNECTs waiting for a physical
	 * doorbell, in the order they came (&struct
	 * nfence_doorbell_waiter.link), under @doorbell_lock: only the first
	 * may take one
	 */
	struct list_head connect_queue;
	/**
	 * @connect_binds: physical doorbells DOORBELL_CONNECT bound, under
	 * @doorbell_lock
	 */
	u64 connect_binds;
	/**
	 * @connect_most_ahead: the most doorbells other connects bound while
	 * one DOORBELL_CONNECT waited for one, since the last reset (debugfs
	 * nfence_cmp_reset_max), under @doorbell_lock
	 */
	u64 connect_most_ahead;
	/** @f1_work: runs the F1 transitions the CMP asked for */
	struct work_struct f1_work;
	/** @f1_pending: engines waiting for @f1_work, a bitmap */
	unsigned long f1_pending;
	/** @f1_hold: the test hook that holds @f1_work (debugfs nfence_f1_hold) */
	struct nfence_f1_hold f1_hold;
	/** @clients_lock: protects @clients; see the lock order in nfence_drv.c */
	struct mutex clients_lock;
	/** @clients: open files, &struct nfence_file.link */
	struct list_head clients;
	/**
	 * @closing: files being closed, from the postclose that takes them
	 * off @clients until every handle of theirs is closed (their value
	 * maps gone); under @clients_lock
	 */
	struct list_head closing;
	/**
	 * @maps_lock: readers make and drop the value maps of every file
	 * of the adapter (&nfence_file.value_maps); a demotion of fence
	 * storage holds it for writing while it finds and moves them (DOC:
	 * demoting fence storage); see the lock order in nfence_drv.c
	 */
	struct rw_semaphore maps_lock;
	/**
	 * @logging_level: DRM_NFENCE_LOGGING_LEVEL_*; written under
	 * @clients_lock (nfence_logging.c), read anywhere
	 */
	u32 logging_level;
	/** @num_devices: live devices on all files of the adapter */
	atomic_t num_devices;
	/**
	 * @vram_shared_values: shared fence values in VRAM ranges of their
	 * own (nfence_vram_shared_count()): a demotion of fence storage
	 * looks for them only while there are some
	 */
	atomic_t vram_shared_values;
	/**
	 * @window_pages: mmap offset space the CPU windows of the adapter's
	 * files hold, in pages (nfence_window.c)
	 */
	atomic_long_t window_pages;
	/** @fences: global fences by id; its lock nests outside waitlist locks */
	struct xarray fences;
	/**
	 * @wait_wq: completes asynchronous waits, attaches syncobj points
	 */
	struct workqueue_struct *wait_wq;
	/**
	 * @put_work: drops the last reference on @drm when the CMP thread
	 * let go of it (DOC: the device's last reference)
	 */
	struct work_struct put_work;
};

/**
 * enum nfence_pool_kind - the pools of a file's non-shared fence values
 * @NFENCE_POOL_CV: CurrentValues in system memory, CPU-mappable
 * @NFENCE_POOL_MV: MonitoredValues in system memory, kernel-only
 * @NFENCE_POOL_VRAM_CV: INTRA_GPU CurrentValues in invisible VRAM
 * @NFENCE_POOL_VRAM_MV: MonitoredValues in invisible VRAM
 * @NFENCE_POOL_DEMOTED: VRAM pages whose values were moved to system
 *	memory (DOC: demoting fence storage); no new value goes there
 * @NFENCE_POOL_KINDS: the number of kinds
 *
 * Each pool's pages are mapped once into the file's GPU VA space,
 * CurrentValue pages writable, MonitoredValue pages read-only.
 */
enum nfence_pool_kind {
	NFENCE_POOL_CV,
	NFENCE_POOL_MV,
	NFENCE_POOL_VRAM_CV,
	NFENCE_POOL_VRAM_MV,
	NFENCE_POOL_DEMOTED,
	NFENCE_POOL_KINDS,
};

/**
 * struct nfence_file - per open file state (&drm_file.driver_priv)
 *
 * Lifetime: from open to postclose; everything it holds dies with it.
 */
struct nfence_file {
	/** @adapter: the adapter the file was opened on */
	struct nfence_adapter *adapter;
	/** @link: entry in &nfence_adapter.clients */
	struct list_head link;
	/**
	 * @objects: the handle tables of its devices, local fences,
	 * allocations, contexts, queues and doorbells (see DOC: object
	 * registry); its lock is @sched_lock
	 */
	struct nfence_registry objects;
	/** @drm_file: the DRM file */
	struct drm_file *drm_file;
	/** @pool_lock: protects @pools and @value_maps */
	struct mutex pool_lock;
	/**
	 * @value_maps: storage key -> &struct nfence_value_map (a hash
	 * table: the keys of a file's shared fences are far apart); changed
	 * under @pool_lock with &nfence_adapter.maps_lock held for reading,
	 * so a holder of maps_lock for writing may look up without @pool_lock
	 */
	struct rhashtable value_maps;
	/**
	 * @pools: the pages of non-shared fences' values, by
	 * &enum nfence_pool_kind
	 */
	struct list_head pools[NFENCE_POOL_KINDS];
	/** @vm: the file's GPU virtual address space */
	struct nfence_vm vm;
	/**
	 * @window: its CPU window onto shared fences' CurrentValue pages,
	 * NULL until %DRM_IOCTL_NFENCE_FENCE_WINDOW (nfence_window.c); set
	 * once
	 */
	struct nfence_fence_window *window;
	/**
	 * @async_lock: protects @blocked_waits and the entries of @waits,
	 * @bindings and @dma_signals (DOC: bounded asynchronous lists)
	 */
	struct mutex async_lock;
	/** @blocked_waits: blocking waits asleep, for unplug to wake */
	struct list_head blocked_waits;
	/**
	 * @waits: pending asynchronous waits (nfence_wait.c), which
	 * %DRM_NFENCE_MAX_ASYNC_WAITS bounds: a wait stops counting when it
	 * completes, before its eventfd is signaled, not when the completion
	 * work takes it off the list
	 */
	struct nfence_async_list waits;
	/**
	 * @bindings: syncobj bindings whose point is not attached yet
	 * (nfence_syncobj.c), which %DRM_NFENCE_MAX_SYNCOBJ_BINDINGS bounds;
	 * the work attaches the points of those decided
	 */
	struct nfence_async_list bindings;
	/**
	 * @dma_signals: pending DRM_IOCTL_NFENCE_SYNCOBJ_SIGNALs whose
	 * dma_fence has not signaled yet (nfence_syncobj.c), which
	 * %DRM_NFENCE_MAX_SYNCOBJ_SIGNALS bounds; the work signals the fences
	 * of those whose dma_fence signaled
	 */
	struct nfence_async_list dma_signals;
	/**
	 * @sched_lock: serializes creating and destroying contexts, queues
	 * and doorbells, and the close walks of @objects
	 */
	struct mutex sched_lock;
	/** @seg_usage: what its allocations hold of each segment (quotas) */
	struct nfence_segment_usage *seg_usage;
	/** @tgid: thread group id of the opener */
	pid_t tgid;
	/** @comm: command name of the opener */
	char comm[TASK_COMM_LEN];
};

static inline struct nfence_adapter *to_nfence_adapter(struct drm_device *drm)
{
	return container_of(drm, struct nfence_adapter, drm);
}

static inline struct nfence_file *to_nfence_file(struct drm_file *file)
{
	return file->driver_priv;
}

/* The file whose registry @reg is. */
static inline struct nfence_file *
nfence_registry_file(struct nfence_registry *reg)
{
	return container_of(reg, struct nfence_file, objects);
}

/* The handle table of one kind of object of @nfile. */
static inline struct nfence_table *
nfence_file_table(struct nfence_file *nfile, enum nfence_object_type type)
{
	return nfence_registry_table(&nfile->objects, type);
}

/* nfence_adapter.c */
int nfence_adapters_init(void);
void nfence_adapters_fini(void);
int nfence_adapter_track(struct nfence_adapter *adapter);
void nfence_adapter_put(struct nfence_adapter *adapter);

#endif /* __NFENCE_ADAPTER_H__ */
