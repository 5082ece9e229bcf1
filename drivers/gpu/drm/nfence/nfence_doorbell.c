// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/pm_runtime.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>
#include <drm/drm_vma_manager.h>
#include <drm/nfence_drm.h>

#include "nfence_adapter.h"
#include "nfence_alloc.h"
#include "nfence_cmp.h"
#include "nfence_cmp_doorbell.h"
#include "nfence_compat.h"
#include "nfence_context.h"
#include "nfence_device.h"
#include "nfence_doorbell.h"
#include "nfence_fence.h"
#include "nfence_hwqueue.h"
#include "nfence_mmap.h"

/**
 * DOC: doorbell objects
 *
 * A doorbell ties a user-mode queue (its &struct nfence_cmp_queue) to its
 * ring: the ring buffer and control allocations, which it pins, and three
 * GEM objects of one page each that the process maps: the doorbell, the
 * status word (read-only) and the last queued progress fence value. The
 * doorbell's page is inserted at fault time (VM_PFNMAP), under
 * &nfence_adapter.doorbell_lock: the queue's physical doorbell while
 * connected, the doorbell's own dummy page otherwise. Connecting and
 * disconnecting change the state and zap the mappings under that lock, so
 * a fault never maps a physical doorbell the ring no longer owns; the next
 * access faults the new page in. The physical doorbell pages belong to the
 * GPU, which outlives every mapping (each doorbell holds a reference on the
 * DRM device, and so does each of its pages).
 *
 * Connecting with every physical doorbell bound takes one from another
 * ring (nfence_cmp_doorbell_victim_locked()): that ring is unbound (status
 * DISCONNECTED_RETRY), its mappings are zapped, the CMP takes a last look
 * at the doorbell for it, and only then is the doorbell bound to the new
 * ring. A ring connected less than NFENCE_DOORBELL_GRACE_NS (1 ms) ago
 * that has not rung yet is not taken: the connect waits (interruptibly,
 * holding no lock) until one is past its grace. Without that, two
 * processes that keep ringing through one doorbell take it from each other
 * between each one's connect and its store, and neither ever rings.
 *
 * Connects that wait are served in the order they came
 * (&nfence_adapter.connect_queue, under &nfence_adapter.doorbell_lock):
 * only the first may take a doorbell, free or past its grace; a connect
 * that comes while others wait queues behind them, even if a doorbell is
 * free, and whoever leaves the queue (bound, failed or interrupted) lets
 * the next go. So a process that keeps every doorbell in its grace
 * (connecting its own doorbells in turn, never ringing) cannot starve the
 * others: ahead of a connect that waits, only the connects already
 * waiting when it came bind a doorbell, each within a grace of the one
 * before. The order is per connect, not per process: a process whose N
 * threads connect at once has N turns for another's one. A signal ends
 * the wait with -ERESTARTSYS, and the restarted ioctl queues at the end.
 * The ring must still ring within its grace once connected, or the next
 * connect waiting takes the doorbell back (its store lands on the dummy
 * page, its status says DISCONNECTED_RETRY, and it connects again, at the
 * end of the queue).
 *
 * A queue has at most one doorbell; destroying the queue, its context or
 * its device, or closing the file, destroys the doorbell first.
 *
 * When a file closes (normal process termination), its doorbells are
 * first disconnected, and the driver waits for each queue's progress fence
 * to reach the value the process last stored at the last queued value
 * page, as the WDDM 3.2 user-mode submission documentation has Dxgkrnl
 * do: work the process rang before it exited runs. This is the doorbell
 * part of the file's exit wait (nfence_file_drain() in nfence_submit.c,
 * which also waits for the kernel-mode queues), under its one deadline:
 * the adapter's TDR timeout, and NFENCE_FILE_DRAIN_MS (2 s) in any case,
 * for the file's doorbells and queues together: the value waited for is
 * the process's to write, and the close may run in another task. A queue
 * that is held (stopped: its context faulted or its device lost, which is
 * what happens to a killed process's queues; or its context suspended,
 * which only the process could have resumed) is not waited for, nor is
 * any once the adapter is unplugged.
 */

static struct nfence_doorbell *to_nfence_doorbell(struct drm_gem_object *obj)
{
	return container_of(obj, struct nfence_doorbell, base);
}

static struct nfence_doorbell_page *
to_nfence_doorbell_page(struct drm_gem_object *obj)
{
	return container_of(obj, struct nfence_doorbell_page, base);
}

static void nfence_doorbell_page_free(struct drm_gem_object *obj)
{
	struct nfence_doorbell_page *dp = to_nfence_doorbell_page(obj);
	struct drm_device *drm = obj->dev;

	drm_gem_object_release(obj);
	__free_page(dp->page);
	kfree(dp);
	nfence_adapter_put(to_nfence_adapter(drm));
}

static int nfence_doorbell_page_mmap(struct drm_gem_object *obj,
				     struct vm_area_struct *vma)
{
	struct nfence_doorbell_page *dp = to_nfence_doorbell_page(obj);

	if (vma->vm_end - vma->vm_start != PAGE_SIZE ||
	    is_cow_mapping(vma->vm_flags))
		return -EINVAL;
	/* The status is the CMP's to write, now and forever. */
	if (dp->read_only && (vma->vm_flags & VM_WRITE))
		return -EPERM;
	nfence_vm_flags_mod(vma, VM_DONTEXPAND | VM_DONTDUMP,
			    dp->read_only ? VM_MAYWRITE : 0);
	return vm_insert_page(vma, vma->vm_start, dp->page);
}

/* As for fence pages: back after a zap (unplug). */
static vm_fault_t nfence_doorbell_page_fault(struct vm_fault *vmf)
{
	struct nfence_doorbell_page *dp =
		to_nfence_doorbell_page(vmf->vma->vm_private_data);

	return nfence_vmf_insert_page(vmf, dp->page);
}

static const struct vm_operations_struct nfence_doorbell_page_vm_ops = {
	.fault = nfence_doorbell_page_fault,
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

static const struct drm_gem_object_funcs nfence_doorbell_page_funcs = {
	.free = nfence_doorbell_page_free,
	.mmap = nfence_doorbell_page_mmap,
	.vm_ops = &nfence_doorbell_page_vm_ops,
};

/*
 * A page @nfile may mmap, its first word @first and the rest zero, set
 * before the file may map it.
 */
static struct nfence_doorbell_page *
nfence_doorbell_page_create(struct nfence_file *nfile, bool read_only,
			    u64 first)
{
	struct drm_device *drm = &nfile->adapter->drm;
	struct nfence_doorbell_page *dp;
	int ret;

	dp = kzalloc(sizeof(*dp), GFP_KERNEL_ACCOUNT);
	if (!dp)
		return ERR_PTR(-ENOMEM);
	dp->page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!dp->page) {
		kfree(dp);
		return ERR_PTR(-ENOMEM);
	}
	*(u64 *)page_address(dp->page) = first;
	dp->read_only = read_only;
	drm_dev_get(drm);
	dp->base.funcs = &nfence_doorbell_page_funcs;
	drm_gem_private_object_init(drm, &dp->base, PAGE_SIZE);
	ret = drm_gem_create_mmap_offset(&dp->base);
	if (!ret)
		ret = drm_vma_node_allow(&dp->base.vma_node, nfile->drm_file);
	if (ret) {
		drm_gem_object_put(&dp->base);
		return ERR_PTR(ret);
	}
	return dp;
}

/* A page of a destroyed doorbell: no new mapping, the old ones stay. */
static void nfence_doorbell_page_revoke(struct nfence_file *nfile,
					struct nfence_doorbell_page *dp)
{
	if (!IS_ERR_OR_NULL(dp))
		drm_vma_node_revoke(&dp->base.vma_node, nfile->drm_file);
}

static void nfence_doorbell_page_put(struct nfence_doorbell_page *dp)
{
	if (!IS_ERR_OR_NULL(dp))
		drm_gem_object_put(&dp->base);
}

static void nfence_doorbell_free(struct drm_gem_object *obj)
{
	struct nfence_doorbell *db = to_nfence_doorbell(obj);
	struct nfence_adapter *adapter = db->adapter;

	drm_gem_object_release(obj);
	/* The status page until now: connect may read it after a destroy. */
	nfence_doorbell_page_put(db->status);
	nfence_doorbell_page_put(db->last_queued);
	if (db->dummy)
		__free_page(db->dummy);
	kfree(db);
	nfence_adapter_put(adapter);
}

/* The page the doorbell's mappings show now. */
static struct page *nfence_doorbell_page(struct nfence_doorbell *db)
{
	lockdep_assert_held(&db->adapter->doorbell_lock);
	if (db->ring.slot >= 0)
		return db->adapter->gpu.doorbell_pages[db->ring.slot];
	return db->dummy;
}

static vm_fault_t nfence_doorbell_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct nfence_doorbell *db = to_nfence_doorbell(vma->vm_private_data);
	vm_fault_t ret;

	mutex_lock(&db->adapter->doorbell_lock);
	ret = vmf_insert_pfn(vma, vmf->address,
			     page_to_pfn(nfence_doorbell_page(db)));
	mutex_unlock(&db->adapter->doorbell_lock);
	return ret;
}

static int nfence_doorbell_mmap(struct drm_gem_object *obj,
				struct vm_area_struct *vma)
{
	/* Shared only: a private VM_PFNMAP mapping has no page to copy. */
	if (vma->vm_end - vma->vm_start != PAGE_SIZE ||
	    is_cow_mapping(vma->vm_flags))
		return -EINVAL;
	nfence_vm_flags_mod(vma, VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP, 0);
	return 0;
}

static const struct vm_operations_struct nfence_doorbell_vm_ops = {
	.fault = nfence_doorbell_fault,
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

static const struct drm_gem_object_funcs nfence_doorbell_funcs = {
	.free = nfence_doorbell_free,
	.mmap = nfence_doorbell_mmap,
	.vm_ops = &nfence_doorbell_vm_ops,
};

/* Move every CPU mapping of @db off the page it maps now. */
static void nfence_doorbell_zap(struct nfence_doorbell *db)
{
	lockdep_assert_held(&db->adapter->doorbell_lock);
	drm_vma_node_unmap(&db->base.vma_node,
			   db->adapter->drm.anon_inode->i_mapping);
}

static struct nfence_doorbell *to_ring_doorbell(struct nfence_cmp_ring *ring)
{
	return container_of(ring, struct nfence_doorbell, ring);
}

/* The pages and the mmap offsets of a new doorbell. */
static int nfence_doorbell_init(struct nfence_file *nfile,
				struct nfence_doorbell *db)
{
	struct nfence_adapter *adapter = nfile->adapter;
	u64 status;
	int ret;

	db->adapter = adapter;
	/*
	 * No physical doorbell (slot 0 is one) from the moment the file may
	 * map the doorbell, before the ring is attached or if it never is:
	 * a fault until then maps the dummy page.
	 */
	db->ring.slot = -1;
	drm_dev_get(&adapter->drm);
	db->base.funcs = &nfence_doorbell_funcs;
	drm_gem_private_object_init(&adapter->drm, &db->base, PAGE_SIZE);
	db->dummy = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!db->dummy)
		return -ENOMEM;
	/* Disconnected until attached, for a mapping made meanwhile too. */
	status = DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY;
	db->status = nfence_doorbell_page_create(nfile, true, status);
	if (IS_ERR(db->status))
		return PTR_ERR(db->status);
	db->last_queued = nfence_doorbell_page_create(nfile, false, 0);
	if (IS_ERR(db->last_queued))
		return PTR_ERR(db->last_queued);
	ret = drm_gem_create_mmap_offset(&db->base);
	if (ret)
		return ret;
	ret = drm_vma_node_allow(&db->base.vma_node, nfile->drm_file);
	if (!ret)
		db->mmap_allowed = true;
	return ret;
}

/*
 * The ring buffer and control of a new doorbell, pinned and checked. The
 * doorbell is mappable by then: visible to KUnit, which stubs it to look
 * at the doorbell in that state.
 */
NFENCE_VISIBLE_IF_KUNIT int
nfence_doorbell_pin(struct nfence_file *nfile, struct nfence_doorbell *db,
		    const struct drm_nfence_doorbell_create *args)
{
	struct nfence_alloc *ring, *control = NULL;

	NFENCE_KUNIT_STUB(nfence_doorbell_pin, nfile, db, args);

	ring = nfence_alloc_pin(nfile, args->device, args->ring_alloc);
	if (!ring)
		return -ENOENT;
	db->ring_alloc = ring;
	if (args->ring_control_alloc) {
		control = nfence_alloc_pin(nfile, args->device,
					   args->ring_control_alloc);
		if (!control)
			return -ENOENT;
		db->control_alloc = control;
	}
	/* Allocations are whole pages: any ring and control are large enough. */
	BUILD_BUG_ON(sizeof(struct drm_nfence_ring_entry) > PAGE_SIZE ||
		     sizeof(struct drm_nfence_ring_control) > PAGE_SIZE);
	/* The global model finds write indexes in the ring controls. */
	if (!control && db->adapter->gpu.cfg.doorbell_model ==
			DRM_NFENCE_DOORBELL_GLOBAL)
		return -EINVAL;

	db->ring.ring_va = ring->map.start;
	db->ring.num_entries = min_t(u64, ring->base.size /
				     sizeof(struct drm_nfence_ring_entry),
				     U32_MAX);
	db->ring.control_va = control ? control->map.start : 0;
	db->ring.status = page_address(db->status->page);
	return 0;
}

/* Undo nfence_doorbell_create() up to the pin; drops the table's reference. */
static void nfence_doorbell_put(struct nfence_file *nfile,
				struct nfence_doorbell *db)
{
	nfence_alloc_unpin(nfile, db->ring_alloc);
	nfence_alloc_unpin(nfile, db->control_alloc);
	db->ring_alloc = NULL;
	db->control_alloc = NULL;
	/* Mappings made stay; no new one can be. */
	nfence_doorbell_page_revoke(nfile, db->status);
	nfence_doorbell_page_revoke(nfile, db->last_queued);
	if (db->mmap_allowed)
		drm_vma_node_revoke(&db->base.vma_node, nfile->drm_file);
	drm_gem_object_put(&db->base);
}

static const struct nfence_object_ops nfence_doorbell_obj_ops;

/**
 * nfence_doorbell_create - create a doorbell for a user-mode queue
 * @nfile: the file, whose &nfence_file.sched_lock is held
 * @hwq: the queue's CMP state; the queue was created with
 *	USER_MODE_SUBMISSION and is alive
 * @owner: the queue, which owns the doorbell and closes it (DOC: object
 *	registry)
 * @args: the ioctl's arguments, checked but for the allocations; @handle
 *	and @mmap_offset are filled in
 *
 * Return: 0, or -errno as &struct drm_nfence_doorbell_create documents.
 */
static int nfence_doorbell_create(struct nfence_file *nfile,
				  struct nfence_cmp_queue *hwq,
				  struct nfence_object *owner,
				  struct drm_nfence_doorbell_create *args)
{
	struct nfence_table *table = nfence_file_table(nfile,
						       NFENCE_OBJ_DOORBELL);
	struct nfence_cmp *cmp = &nfile->adapter->cmp;
	struct nfence_doorbell *db;
	u32 handle;
	int ret;

	lockdep_assert_held(&nfile->sched_lock);
	db = kzalloc(sizeof(*db), GFP_KERNEL_ACCOUNT);
	if (!db)
		return -ENOMEM;
	db->obj.ops = &nfence_doorbell_obj_ops;
	db->obj.owner = owner;
	ret = nfence_doorbell_init(nfile, db);
	if (!ret)
		ret = nfence_doorbell_pin(nfile, db, args);
	if (ret)
		goto err;

	nfence_cmp_lock(cmp);
	if (hwq->ring)
		ret = -EBUSY;
	else if (hwq->state == NFENCE_QUEUE_FAULTED ||
		 hwq->state == NFENCE_QUEUE_LOST)
		ret = -EIO;
	else
		nfence_cmp_ring_attach_locked(cmp, hwq, &db->ring);
	nfence_cmp_unlock(cmp);
	if (ret)
		goto err;
	db->hwq = hwq;

	nfence_table_lock(table);
	ret = nfence_table_insert_locked(table, &db->obj, &handle);
	if (!ret) {
		args->handle = handle;
		args->doorbell_offset =
			drm_vma_node_offset_addr(&db->base.vma_node);
		args->status_offset =
			drm_vma_node_offset_addr(&db->status->base.vma_node);
		args->last_queued_offset =
			drm_vma_node_offset_addr(&db->last_queued->base.vma_node);
	}
	nfence_table_unlock(table);
	if (!ret)
		return 0;

	nfence_cmp_lock(cmp);
	nfence_cmp_ring_detach_locked(cmp, hwq);
	nfence_cmp_unlock(cmp);
err:
	nfence_doorbell_put(nfile, db);
	return ret;
}

#define NFENCE_DOORBELL_FLAGS \
	(DRM_NFENCE_DOORBELL_SECONDARY_CPU_VA | DRM_NFENCE_DOORBELL_RESIZE_RING)

/**
 * nfence_doorbell_create_ioctl - DRM_IOCTL_NFENCE_DOORBELL_CREATE
 * @drm: the DRM device
 * @data: &struct drm_nfence_doorbell_create
 * @file: the caller's file
 *
 * Return: 0, or -errno as the uapi documents.
 */
int nfence_doorbell_create_ioctl(struct drm_device *drm, void *data,
				 struct drm_file *file)
{
	struct drm_nfence_doorbell_create *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_hwqueue *q;
	int ret, idx;

	if (args->flags & ~NFENCE_DOORBELL_FLAGS)
		return -EINVAL;
	q = nfence_hwqueue_lookup(nfile, args->device, args->hwqueue);
	if (!q)
		return -ENOENT;
	if (!(q->flags & DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION)) {
		ret = -EINVAL;
		goto out;
	}
	if (args->flags & DRM_NFENCE_DOORBELL_RESIZE_RING) {
		ret = -EOPNOTSUPP;
		goto out;
	}
	if (!drm_dev_enter(drm, &idx)) {
		ret = -ENODEV;
		goto out;
	}
	mutex_lock(&nfile->sched_lock);
	if (q->dead)
		ret = -ENOENT;
	else if (READ_ONCE(q->ctx->device->error))
		ret = -EIO;
	else
		ret = nfence_doorbell_create(nfile, &q->hw, &q->obj, args);
	mutex_unlock(&nfile->sched_lock);
	drm_dev_exit(idx);
out:
	nfence_hwqueue_put(q);
	return ret;
}

/*
 * &nfence_object_ops.close: destroy @db, whose handle is out of the table,
 * with the file's sched_lock held: unbind it, move its mappings to its
 * dummy page, and take its ring from its queue.
 */
static void nfence_doorbell_obj_close(struct nfence_registry *reg,
				      struct nfence_object *obj)
{
	struct nfence_doorbell *db = container_of(obj, struct nfence_doorbell,
						  obj);
	struct nfence_file *nfile = nfence_registry_file(reg);
	struct nfence_adapter *adapter = db->adapter;
	struct nfence_cmp *cmp = &adapter->cmp;

	lockdep_assert_held(&nfile->sched_lock);
	mutex_lock(&adapter->doorbell_lock);
	nfence_cmp_lock(cmp);
	nfence_cmp_doorbell_unbind_locked(cmp, db->hwq,
					  DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT);
	nfence_cmp_ring_detach_locked(cmp, db->hwq);
	nfence_cmp_unlock(cmp);
	db->closed = true;
	db->hwq = NULL;
	/* Before anyone can bind the physical doorbell again. */
	nfence_doorbell_zap(db);
	mutex_unlock(&adapter->doorbell_lock);
	nfence_doorbell_put(nfile, db);
}

/* &nfence_object_ops.get: a lookup's reference. */
static bool nfence_doorbell_obj_get(struct nfence_object *obj)
{
	drm_gem_object_get(&container_of(obj, struct nfence_doorbell,
					 obj)->base);
	return true;
}

static const struct nfence_object_ops nfence_doorbell_obj_ops = {
	.get = nfence_doorbell_obj_get,
	.close = nfence_doorbell_obj_close,
};

/* Look up a doorbell of @device with a reference; NULL if none. */
static struct nfence_doorbell *nfence_doorbell_lookup(struct nfence_file *nfile,
						      u32 device, u32 handle)
{
	struct nfence_object *obj;

	obj = nfence_table_lookup_owned(nfence_file_table(nfile,
							  NFENCE_OBJ_DOORBELL),
					handle, device);
	return obj ? container_of(obj, struct nfence_doorbell, obj) : NULL;
}

/*
 * A connect bound a physical doorbell: count it, and, if it waited, the
 * doorbells other connects bound since it started waiting (@mark: the
 * count then).
 */
static void nfence_doorbell_bound_locked(struct nfence_adapter *adapter,
					 bool waited, u64 mark)
{
	lockdep_assert_held(&adapter->doorbell_lock);
	if (waited)
		adapter->connect_most_ahead = max(adapter->connect_most_ahead,
						  adapter->connect_binds - mark);
	adapter->connect_binds++;
}

/**
 * nfence_doorbell_print - the doorbell connects' counts, for debugfs
 * @adapter: the adapter
 * @p: where to print
 */
void nfence_doorbell_print(struct nfence_adapter *adapter,
			   struct drm_printer *p)
{
	mutex_lock(&adapter->doorbell_lock);
	drm_printf(p, "connect_binds: %llu\n", adapter->connect_binds);
	drm_printf(p, "connect_most_ahead: %llu\n",
		   adapter->connect_most_ahead);
	mutex_unlock(&adapter->doorbell_lock);
}

/**
 * nfence_doorbell_reset_max - restart the doorbell connects' most ahead
 * @adapter: the adapter
 */
void nfence_doorbell_reset_max(struct nfence_adapter *adapter)
{
	mutex_lock(&adapter->doorbell_lock);
	adapter->connect_most_ahead = 0;
	mutex_unlock(&adapter->doorbell_lock);
}

/*
 * A DOORBELL_CONNECT that waits for a physical doorbell, on
 * &nfence_adapter.connect_queue (see DOC: doorbell objects).
 */
struct nfence_doorbell_waiter {
	/* in the queue, under doorbell_lock; empty when not in it */
	struct list_head link;
	/* completed when it becomes the first (the one leaving wakes it) */
	struct completion turn;
};

/*
 * Whether the connect of @w may take a physical doorbell now: no other
 * connect waits, or @w is the first waiting. Otherwise @w waits behind
 * the others (it joins the queue if it is not in it yet).
 */
static bool nfence_doorbell_turn_locked(struct nfence_adapter *adapter,
					struct nfence_doorbell_waiter *w)
{
	struct list_head *queue = &adapter->connect_queue;

	lockdep_assert_held(&adapter->doorbell_lock);
	if (list_empty(queue))
		return true;
	if (list_empty(&w->link))
		list_add_tail(&w->link, queue);
	return list_first_entry(queue, struct nfence_doorbell_waiter,
				link) == w;
}

/* @w leaves the queue (if in it); the first one after it may go. */
static void nfence_doorbell_leave_locked(struct nfence_adapter *adapter,
					 struct nfence_doorbell_waiter *w)
{
	struct list_head *queue = &adapter->connect_queue;
	bool first;

	lockdep_assert_held(&adapter->doorbell_lock);
	if (list_empty(&w->link))
		return;
	first = list_first_entry(queue, struct nfence_doorbell_waiter,
				 link) == w;
	list_del_init(&w->link);
	if (first && !list_empty(queue))
		complete(&list_first_entry(queue, struct nfence_doorbell_waiter,
					   link)->turn);
}

/*
 * Wait, holding no lock, for @wait_ns (the first connect waiting, for a
 * grace to end), or until @w is the first (0). Returns -ERESTARTSYS on a
 * signal.
 */
static int nfence_doorbell_wait(struct nfence_doorbell_waiter *w,
				u64 wait_ns)
{
	ktime_t expires = ns_to_ktime(wait_ns);

	if (!wait_ns)
		return wait_for_completion_interruptible(&w->turn);
	set_current_state(TASK_INTERRUPTIBLE);
	schedule_hrtimeout(&expires, HRTIMER_MODE_REL);
	return signal_pending(current) ? -ERESTARTSYS : 0;
}

/*
 * Connect @db (see DOC: doorbell objects): a free physical doorbell, or
 * one taken from the ring rung least recently. When every ring is in its
 * grace after a connect (nfence_cmp_doorbell_victim_locked()), wait for
 * the first to leave it, holding no lock, and try again; connects that
 * wait are served in the order they came, and a connect that comes while
 * others wait waits behind them. A signal ends the wait with -ERESTARTSYS
 * (the ioctl restarts, at the end of the queue).
 */
static int nfence_doorbell_connect(struct nfence_doorbell *db, u32 *status,
				   u32 *level)
{
	struct nfence_adapter *adapter = db->adapter;
	struct nfence_cmp *cmp = &adapter->cmp;
	struct nfence_doorbell_waiter w;
	struct nfence_cmp_queue *victim;
	bool wait, waited = false;
	LIST_HEAD(dropped);
	u64 wait_ns, mark = 0;
	int slot, ret;

	INIT_LIST_HEAD(&w.link);
	init_completion(&w.turn);
again:
	victim = NULL;
	slot = -1;
	ret = 0;
	wait = false;
	wait_ns = 0;
	mutex_lock(&adapter->doorbell_lock);
	nfence_cmp_lock(cmp);
	if (db->closed) {
		ret = -ENOENT;
	} else if (READ_ONCE(*db->ring.status) ==
		   DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT) {
		ret = -EIO;
	} else if (db->ring.slot >= 0) {
		nfence_cmp_watch_locked(cmp);
	} else {
		/* A connect brings the engine back from F1. */
		nfence_cmp_engine_f0_locked(cmp, db->hwq->engine);
		wait = !nfence_doorbell_turn_locked(adapter, &w);
		if (!wait)
			slot = nfence_cmp_doorbell_free_slot_locked(cmp);
		if (!wait && slot < 0) {
			victim = nfence_cmp_doorbell_victim_locked(cmp,
								   ktime_get_ns(),
								   &wait_ns);
			slot = victim ? victim->ring->slot : -1;
		}
		if (victim)
			nfence_cmp_doorbell_unbind_locked(cmp, victim,
							  DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY);
	}
	nfence_cmp_unlock(cmp);

	if (wait || wait_ns) {
		if (!waited) {
			waited = true;
			mark = adapter->connect_binds;
		}
		/* The first waiting: later connects wait behind it. */
		if (list_empty(&w.link))
			list_add_tail(&w.link, &adapter->connect_queue);
		mutex_unlock(&adapter->doorbell_lock);
		ret = nfence_doorbell_wait(&w, wait_ns);
		if (!ret)
			goto again;
		mutex_lock(&adapter->doorbell_lock);
		nfence_doorbell_leave_locked(adapter, &w);
		mutex_unlock(&adapter->doorbell_lock);
		return ret;
	}

	if (slot >= 0) {
		/* The victim's mappings leave the doorbell before it is reused. */
		if (victim)
			nfence_doorbell_zap(to_ring_doorbell(victim->ring));
		nfence_cmp_lock(cmp);
		if (victim)
			nfence_cmp_doorbell_take_locked(cmp, victim, slot,
							&dropped);
		/* It may have stopped while the lock was dropped. */
		if (nfence_cmp_queue_stopped(db->hwq)) {
			ret = -EIO;
		} else {
			nfence_cmp_doorbell_bind_locked(cmp, db->hwq, slot);
			nfence_cmp_watch_locked(cmp);
			nfence_doorbell_bound_locked(adapter, waited, mark);
		}
		nfence_cmp_unlock(cmp);
		/* Its own mappings leave the dummy page. */
		if (!ret)
			nfence_doorbell_zap(db);
	}
	*status = READ_ONCE(*db->ring.status);
	/* D3DDDI_DOORBELLSTATUS_STORAGE's LoggingLevel, its second word. */
	*level = READ_ONCE(adapter->logging_level);
	WRITE_ONCE(db->ring.status[1], *level);
	nfence_doorbell_leave_locked(adapter, &w);
	mutex_unlock(&adapter->doorbell_lock);

	if (!list_empty(&dropped))
		cmp->ops->entries_drop(&dropped);
	/* A victim's last look may have found a ring to run, -EIO or not. */
	if (!ret || victim)
		nfence_cmp_kick(cmp);
	return ret;
}

/* For nfence_cmp_walk_queues_locked(): the engines going to F1 (or D3). */
struct nfence_doorbell_f1 {
	unsigned long engines;
	struct list_head doorbells;
};

/* List @hw's doorbell if it is connected on an engine going to F1. */
static void nfence_doorbell_f1_queue(struct nfence_cmp_queue *hw, void *data)
{
	struct nfence_doorbell_f1 *f1 = data;
	struct nfence_doorbell *db;

	if (!(f1->engines & BIT(hw->engine)) || !hw->ring ||
	    hw->ring->slot < 0)
		return;
	db = to_ring_doorbell(hw->ring);
	db->f1_slot = hw->ring->slot;
	list_add_tail(&db->f1_link, &f1->doorbells);
}

/* What nfence_doorbell_disconnect_engines() does to the engines' power. */
enum nfence_doorbell_power {
	/* nothing: D3, a new logging level */
	NFENCE_DOORBELL_POWER_KEEP,
	/* F1, whatever the engines do (debugfs nfence_engine_f1) */
	NFENCE_DOORBELL_POWER_F1,
	/* F1 for those whose CMP ask still stands (the F1 work) */
	NFENCE_DOORBELL_POWER_F1_ASKED,
};

/*
 * Disconnect (DISCONNECTED_RETRY) every connected doorbell of the queues
 * on @engines, with a last look at each physical doorbell, and put those
 * engines in F1 as @power says. With %NFENCE_DOORBELL_POWER_F1_ASKED an
 * engine whose ask nfence_cmp_engine_f1_due_locked() cancels is left
 * alone, checked under the locks the disconnect takes: a connect (which
 * takes &nfence_adapter.doorbell_lock) or a submission (&nfence_cmp.lock)
 * comes before the check or after the F1.
 */
static void nfence_doorbell_disconnect_engines(struct nfence_adapter *adapter,
					       unsigned long engines,
					       enum nfence_doorbell_power power)
{
	struct nfence_doorbell_f1 list = { .engines = engines };
	struct nfence_cmp *cmp = &adapter->cmp;
	struct nfence_doorbell *db, *next;
	LIST_HEAD(dropped);
	u32 engine;

	INIT_LIST_HEAD(&list.doorbells);
	mutex_lock(&adapter->doorbell_lock);
	nfence_cmp_lock(cmp);
	if (power == NFENCE_DOORBELL_POWER_F1_ASKED)
		for_each_set_bit(engine, &engines, NFENCE_MAX_ENGINES)
			if (!nfence_cmp_engine_f1_due_locked(cmp, engine))
				__clear_bit(engine, &list.engines);
	nfence_cmp_walk_queues_locked(cmp, nfence_doorbell_f1_queue, &list);
	list_for_each_entry(db, &list.doorbells, f1_link)
		nfence_cmp_doorbell_unbind_locked(cmp, db->hwq,
						  DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY);
	if (power != NFENCE_DOORBELL_POWER_KEEP)
		for_each_set_bit(engine, &list.engines, NFENCE_MAX_ENGINES)
			nfence_cmp_engine_f1_locked(cmp, engine);
	nfence_cmp_unlock(cmp);
	/* Nobody binds a doorbell meanwhile: that takes doorbell_lock. */
	list_for_each_entry(db, &list.doorbells, f1_link)
		nfence_doorbell_zap(db);
	nfence_cmp_lock(cmp);
	list_for_each_entry_safe(db, next, &list.doorbells, f1_link) {
		nfence_cmp_doorbell_take_locked(cmp, db->hwq, db->f1_slot,
						&dropped);
		list_del(&db->f1_link);
	}
	nfence_cmp_unlock(cmp);
	mutex_unlock(&adapter->doorbell_lock);
	if (!list_empty(&dropped))
		cmp->ops->entries_drop(&dropped);
}

/**
 * nfence_doorbell_engine_f1 - put an engine in F1
 * @adapter: the adapter
 * @engine: the engine
 *
 * As Dxgkrnl does on WDDM's TRANSITION_TO_F1 engine state change:
 * every doorbell of the engine's queues is disconnected
 * (DISCONNECTED_RETRY, its mappings back on its dummy page), with a last
 * look at each physical doorbell, and the engine is in F1 until a connect
 * or a submission brings it back.
 */
void nfence_doorbell_engine_f1(struct nfence_adapter *adapter, u32 engine)
{
	nfence_doorbell_disconnect_engines(adapter, BIT(engine),
					   NFENCE_DOORBELL_POWER_F1);
	nfence_cmp_kick(&adapter->cmp);
}

/**
 * nfence_doorbell_adapter_d3 - disconnect every doorbell for D3
 * @adapter: the adapter, going from D0 to D3 (nfence_cmp_d3_enter() done)
 *
 * As Dxgkrnl does on a D0 to D3 transition: every connected doorbell of
 * the adapter is disconnected (DISCONNECTED_RETRY, its mappings back on
 * its dummy page), with a last look at each physical doorbell, whose
 * finds nfence_cmp_d3_commit() then sees.
 */
void nfence_doorbell_adapter_d3(struct nfence_adapter *adapter)
{
	nfence_doorbell_disconnect_engines(adapter, ~0ul,
					   NFENCE_DOORBELL_POWER_KEEP);
}

/**
 * nfence_doorbell_disconnect_all - disconnect every doorbell of an adapter
 * @adapter: the adapter
 *
 * For a new logging level: every connected doorbell is disconnected
 * (DISCONNECTED_RETRY, its mappings back on its dummy page), with a last
 * look at each physical doorbell, so that its process connects again and
 * reads the new level. Work already rung runs.
 */
void nfence_doorbell_disconnect_all(struct nfence_adapter *adapter)
{
	nfence_doorbell_disconnect_engines(adapter, ~0ul,
					   NFENCE_DOORBELL_POWER_KEEP);
	nfence_cmp_kick(&adapter->cmp);
}

/* NFENCE_F1_HOLD_MS: the longest the test hook holds the F1 work */
#define NFENCE_F1_HOLD_MS	30000

/*
 * The test hook (struct nfence_f1_hold): wait while the F1 work is held.
 * Returns the number of the run the hold let go, 0 if it was not held.
 */
static unsigned int nfence_doorbell_f1_hold_wait(struct nfence_adapter *adapter)
{
	struct nfence_f1_hold *h = &adapter->f1_hold;
	unsigned int run;

	if (!READ_ONCE(h->on))
		return 0;
	run = READ_ONCE(h->done) + 1;
	WRITE_ONCE(h->waiting, true);
	wake_up_all(&h->wq);
	wait_event_timeout(h->wq, !READ_ONCE(h->on) ||
			   (int)(READ_ONCE(h->granted) - run) >= 0,
			   msecs_to_jiffies(NFENCE_F1_HOLD_MS));
	WRITE_ONCE(h->waiting, false);
	return run;
}

/* The held run @run of the F1 work is done (0: it was not held). */
static void nfence_doorbell_f1_hold_done(struct nfence_adapter *adapter,
					 unsigned int run)
{
	if (!run)
		return;
	WRITE_ONCE(adapter->f1_hold.done, run);
	wake_up_all(&adapter->f1_hold.wq);
}

/**
 * nfence_doorbell_f1_hold - hold or let go the F1 work (a test hook)
 * @adapter: the adapter
 * @on: hold it from its next run on; false lets a waiting run go, and
 *	every later one
 *
 * See &struct nfence_f1_hold.
 */
void nfence_doorbell_f1_hold(struct nfence_adapter *adapter, bool on)
{
	WRITE_ONCE(adapter->f1_hold.on, on);
	if (!on)
		wake_up_all(&adapter->f1_hold.wq);
}

/**
 * nfence_doorbell_f1_step - let the held F1 work run once (a test hook)
 * @adapter: the adapter, whose F1 work is held and waiting
 *
 * Return: 0 once that run is done (and the next one is held), -EAGAIN if
 * no run waits in the hold, -ETIMEDOUT if the run did not end in
 * NFENCE_F1_HOLD_MS.
 */
int nfence_doorbell_f1_step(struct nfence_adapter *adapter)
{
	struct nfence_f1_hold *h = &adapter->f1_hold;
	unsigned int run;

	if (!READ_ONCE(h->on) || !READ_ONCE(h->waiting))
		return -EAGAIN;
	run = READ_ONCE(h->done) + 1;
	WRITE_ONCE(h->granted, run);
	wake_up_all(&h->wq);
	if (!wait_event_timeout(h->wq, (int)(READ_ONCE(h->done) - run) >= 0,
				msecs_to_jiffies(NFENCE_F1_HOLD_MS)))
		return -ETIMEDOUT;
	return 0;
}

/**
 * nfence_doorbell_f1_hold_print - the test hook's state, for debugfs
 * @adapter: the adapter
 * @p: where to print
 */
void nfence_doorbell_f1_hold_print(struct nfence_adapter *adapter,
				   struct drm_printer *p)
{
	drm_printf(p, "hold: %d\n", READ_ONCE(adapter->f1_hold.on));
	drm_printf(p, "waiting: %d\n", READ_ONCE(adapter->f1_hold.waiting));
}

static void nfence_doorbell_f1_work(struct work_struct *work)
{
	struct nfence_adapter *adapter =
		container_of(work, struct nfence_adapter, f1_work);
	unsigned long engines = 0;
	unsigned int run;
	u32 engine;

	run = nfence_doorbell_f1_hold_wait(adapter);
	for (engine = 0; engine < NFENCE_MAX_ENGINES; engine++)
		if (test_and_clear_bit(engine, &adapter->f1_pending))
			__set_bit(engine, &engines);
	if (engines)
		nfence_doorbell_disconnect_engines(adapter, engines,
						   NFENCE_DOORBELL_POWER_F1_ASKED);
	/* An ask cancelled is asked again: the CMP looks at the engine. */
	nfence_cmp_kick(&adapter->cmp);
	nfence_doorbell_f1_hold_done(adapter, run);
}

/**
 * nfence_doorbell_engine_idle - &nfence_cmp_ops.engine_idle
 * @cmp: the CMP of an adapter
 * @engine: the engine, idle with connected doorbells
 *
 * Queues the F1 transition: the CMP thread may not take
 * &nfence_adapter.doorbell_lock. The transition happens only if nothing
 * made the engine active meanwhile (nfence_cmp_engine_f1_due_locked()).
 */
void nfence_doorbell_engine_idle(struct nfence_cmp *cmp, u32 engine)
{
	struct nfence_adapter *adapter =
		container_of(cmp, struct nfence_adapter, cmp);

	set_bit(engine, &adapter->f1_pending);
	queue_work(system_wq, &adapter->f1_work);
}

/**
 * nfence_doorbell_adapter_init - set up an adapter's doorbell state
 * @adapter: the adapter
 */
void nfence_doorbell_adapter_init(struct nfence_adapter *adapter)
{
	INIT_LIST_HEAD(&adapter->connect_queue);
	adapter->connect_binds = 0;
	adapter->connect_most_ahead = 0;
	INIT_WORK(&adapter->f1_work, nfence_doorbell_f1_work);
	adapter->f1_pending = 0;
	init_waitqueue_head(&adapter->f1_hold.wq);
	adapter->f1_hold.on = false;
	adapter->f1_hold.waiting = false;
	adapter->f1_hold.granted = 0;
	adapter->f1_hold.done = 0;
}

/**
 * nfence_doorbell_adapter_fini - wait for a queued F1 transition
 * @adapter: the adapter, whose CMP thread has ended (so nothing queues the
 *	F1 work again: the thread's last ask may have queued it after every
 *	file closed)
 *
 * &nfence_cmp_ops.stopped, before the CMP's lock, which the work takes,
 * is destroyed.
 */
void nfence_doorbell_adapter_fini(struct nfence_adapter *adapter)
{
	nfence_doorbell_f1_hold(adapter, false);
	cancel_work_sync(&adapter->f1_work);
}

/**
 * nfence_doorbell_connect_ioctl - DRM_IOCTL_NFENCE_DOORBELL_CONNECT
 * @drm: the DRM device
 * @data: &struct drm_nfence_doorbell_connect
 * @file: the caller's file
 *
 * Return: 0, or -errno as the uapi documents.
 */
int nfence_doorbell_connect_ioctl(struct drm_device *drm, void *data,
				  struct drm_file *file)
{
	struct drm_nfence_doorbell_connect *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_doorbell *db;
	int ret, idx;

	if (args->flags || args->pad)
		return -EINVAL;
	db = nfence_doorbell_lookup(nfile, args->device, args->handle);
	if (!db)
		return -ENOENT;
	if (drm_dev_enter(drm, &idx)) {
		/* A connect wakes the adapter from D3, as on Windows. */
		ret = pm_runtime_resume_and_get(drm->dev);
		if (!ret) {
			ret = nfence_doorbell_connect(db, &args->status,
						      &args->logging_level);
			pm_runtime_mark_last_busy(drm->dev);
			pm_runtime_put_autosuspend(drm->dev);
		}
		drm_dev_exit(idx);
	} else {
		ret = -ENODEV;
	}
	drm_gem_object_put(&db->base);
	return ret;
}

/**
 * nfence_doorbell_destroy_ioctl - DRM_IOCTL_NFENCE_DOORBELL_DESTROY
 * @drm: the DRM device
 * @data: &struct drm_nfence_doorbell_destroy
 * @file: the caller's file
 *
 * Return: 0, or -ENOENT if the handle names no doorbell of the device.
 */
int nfence_doorbell_destroy_ioctl(struct drm_device *drm, void *data,
				  struct drm_file *file)
{
	struct drm_nfence_doorbell_destroy *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_object *obj;

	mutex_lock(&nfile->sched_lock);
	obj = nfence_table_remove_owned(nfence_file_table(nfile,
							  NFENCE_OBJ_DOORBELL),
					args->handle, args->device);
	if (obj)
		nfence_registry_close_locked(&nfile->objects, obj);
	mutex_unlock(&nfile->sched_lock);
	return obj ? 0 : -ENOENT;
}

/**
 * nfence_doorbell_notify_ioctl - DRM_IOCTL_NFENCE_DOORBELL_NOTIFY
 * @drm: the DRM device
 * @data: &struct drm_nfence_doorbell_notify
 * @file: the caller's file
 *
 * Return: 0, or -errno as the uapi documents.
 */
int nfence_doorbell_notify_ioctl(struct drm_device *drm, void *data,
				 struct drm_file *file)
{
	struct nfence_adapter *adapter = to_nfence_adapter(drm);
	struct drm_nfence_doorbell_notify *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_cmp *cmp = &adapter->cmp;
	struct nfence_doorbell *db;
	int ret, idx;

	if (args->flags || args->pad)
		return -EINVAL;
	db = nfence_doorbell_lookup(nfile, args->device, args->handle);
	if (!db)
		return -ENOENT;
	if (!drm_dev_enter(drm, &idx)) {
		ret = -ENODEV;
		goto out;
	}
	/* Work was rung: the adapter is (or goes back) in D0 to take it. */
	ret = pm_runtime_resume_and_get(drm->dev);
	if (!ret) {
		nfence_cmp_lock(cmp);
		nfence_cmp_watch_locked(cmp);
		nfence_cmp_unlock(cmp);
		nfence_cmp_kick(cmp);
		pm_runtime_mark_last_busy(drm->dev);
		pm_runtime_put_autosuspend(drm->dev);
	}
	drm_dev_exit(idx);
out:
	drm_gem_object_put(&db->base);
	return ret;
}

/* Disconnect @db for good: unbind, zap, a last look at its doorbell. */
static void nfence_doorbell_disconnect(struct nfence_doorbell *db)
{
	struct nfence_adapter *adapter = db->adapter;
	struct nfence_cmp *cmp = &adapter->cmp;
	LIST_HEAD(dropped);
	int slot;

	mutex_lock(&adapter->doorbell_lock);
	nfence_cmp_lock(cmp);
	slot = db->ring.slot;
	nfence_cmp_doorbell_unbind_locked(cmp, db->hwq,
					  DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY);
	nfence_cmp_unlock(cmp);
	if (slot >= 0) {
		nfence_doorbell_zap(db);
		nfence_cmp_lock(cmp);
		nfence_cmp_doorbell_take_locked(cmp, db->hwq, slot, &dropped);
		nfence_cmp_unlock(cmp);
	}
	mutex_unlock(&adapter->doorbell_lock);
	if (!list_empty(&dropped))
		cmp->ops->entries_drop(&dropped);
	nfence_cmp_kick(cmp);
}

/* Whether @db's queue has run to @last, or is held (not running again). */
static bool nfence_doorbell_drained(struct nfence_doorbell *db, u64 last)
{
	struct nfence_cmp *cmp = &db->adapter->cmp;
	bool held;

	nfence_cmp_lock(cmp);
	held = nfence_cmp_queue_held(db->hwq);
	nfence_cmp_unlock(cmp);
	return held || nfence_fence_read(db->hwq->progress) >= last;
}

/**
 * nfence_file_doorbells_drain - the exit wait of a closing file's doorbells
 * @nfile: the file, in postclose (nothing else uses its tables)
 * @deadline: when the file's exit wait ends, in jiffies
 *
 * See DOC: doorbell objects.
 */
void nfence_file_doorbells_drain(struct nfence_file *nfile,
				 unsigned long deadline)
{
	struct nfence_table *table = nfence_file_table(nfile,
						       NFENCE_OBJ_DOORBELL);
	struct drm_device *drm = &nfile->adapter->drm;
	struct nfence_doorbell *db;
	struct nfence_object *obj;
	unsigned long handle;
	u64 last;

	nfence_table_for_each(table, handle, obj)
		nfence_doorbell_disconnect(container_of(obj,
							struct nfence_doorbell,
							obj));
	nfence_table_for_each(table, handle, obj) {
		db = container_of(obj, struct nfence_doorbell, obj);
		last = READ_ONCE(*(u64 *)page_address(db->last_queued->page));
		while (!nfence_doorbell_drained(db, last) &&
		       time_before(jiffies, deadline) &&
		       !drm_dev_is_unplugged(drm))
			usleep_range(500, 1000);
	}
}

/**
 * nfence_file_doorbells_init - set up the doorbell table of a new file
 * @nfile: the file
 */
void nfence_file_doorbells_init(struct nfence_file *nfile)
{
	nfence_table_init(nfence_file_table(nfile, NFENCE_OBJ_DOORBELL),
			  DRM_NFENCE_MAX_HWQUEUES_PER_FILE);
}
