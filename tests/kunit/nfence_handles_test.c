// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the lifetimes of native fence handles (nfence_fence.c),
 * the seed's "global and local handles for shared fences": the global
 * object (&struct nfence_fence), the local handles of each file, the shared
 * fds, and which of them keep what alive.
 *
 * Every test registers adapters of its own with nfence_adapter_create() and
 * opens DRM files on their render nodes with mock_drm_getfile(), so that the
 * driver's open and postclose run as they do for a process. The ioctl
 * handlers are called through drm_ioctl_kernel() with their arguments in
 * kernel memory. Shared fds land in the test thread's file table; the test
 * closes them, and the DRM files, with __fput_sync(), because a kernel
 * thread's last fput() is otherwise left to a work item and each step's
 * effect is checked right after it.
 *
 * What may be gone is never dereferenced: a global fence is alive while its
 * adapter's fence table holds it; its storage is back when the VRAM it took
 * is free again, its pool slot is clear, or the mmap offset of its page is
 * gone from the DRM device.
 *
 * Copyright (C) 2026 The nfence authors
 */

#ifdef NFENCE_HAVE_KUNIT_STATIC_STUB
#include <kunit/static_stub.h>
#endif
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kref.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/xarray.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>
#include <drm/drm_vma_manager.h>
#include <drm/nfence_drm.h>

#include "../nfence_alloc.h"
#include "../nfence_caps.h"
#include "../nfence_cmp.h"
#include "../nfence_context.h"
#include "../nfence_device.h"
#include "../nfence_device_state.h"
#include "../nfence_doorbell.h"
#include "../nfence_drv.h"
#include "../nfence_fence.h"
#include "../nfence_signal.h"
#include "../nfence_hwqueue.h"
#include "../nfence_log.h"
#include "../nfence_logging.h"
#include "../nfence_segment.h"
#include "../nfence_vm.h"
#include "../nfence_wait.h"
#include "../nfence_waitlist.h"
#include "../nfence_window.h"

#include "nfence_kunit_fence.h"

#define HND_ADAPTERS	2
#define HND_FILES	4
#define HND_FDS		8

/* A fence that can be shared as an fd. */
#define HND_NT		(DRM_NFENCE_FENCE_SHARED | \
			 DRM_NFENCE_FENCE_NT_SECURITY_SHARING)
#define HND_CROSS	(HND_NT | DRM_NFENCE_FENCE_CROSS_ADAPTER)
#define HND_DEFAULT	DRM_NFENCE_FENCE_TYPE_DEFAULT
#define HND_INTRA	DRM_NFENCE_FENCE_TYPE_INTRA_GPU

/*
 * Adapter 0 keeps the MonitoredValue of DEFAULT fences in VRAM (the
 * optimized DEFAULT fence), adapter 1 in system memory pages.
 */
static const struct nfence_gpu_config hnd_cfg = {
	.num_engines = 2,
	.vram_size = SZ_4M,
	.vram_visible_size = SZ_1M,
	.sysmem_size = SZ_16M,
	.native_fence = true,
	.optimized_default_fence = true,
	.user_mode_submission = true,
	.doorbell_model = DRM_NFENCE_DOORBELL_DEDICATED,
	.num_doorbells = 4,
	.tdr_timeout_ms = 2000,
};

/* Platform device ids: past the module's own adapters, never reused. */
static u32 hnd_next_index = 8;

/**
 * struct hnd_race - what a race test runs inside a handle insert
 * @file: the file whose device it hits
 * @wdev: the device handle
 * @destroy: destroy the device; else put it in error
 * @ctx: if not 0, fault this context of the device instead
 * @ran: it ran
 */
struct hnd_race {
	unsigned int file;
	u32 wdev;
	bool destroy;
	u32 ctx;
	bool ran;
};

/* A CPU waiter that counts its releases, as a FENCE_WAIT entry would. */
struct hnd_waiter {
	struct nfence_waiter w;
	unsigned int fired;
};

/**
 * struct hnd_demote - what the demotion window tests run in the window
 * @fence: the fence whose MonitoredValue (or CurrentValue) page moves
 * @old_cv: its CurrentValue's storage before the move
 * @old_mv: its MonitoredValue's storage before the move
 * @hw: the CPU waiter queued in the window
 * @ran: the window was reached
 * @queued: @hw was queued, not released at once
 * @missed: the signal made in the window did not release @hw
 */
struct hnd_demote {
	struct nfence_fence *fence;
	u64 *old_cv;
	u64 *old_mv;
	struct hnd_waiter hw;
	bool ran;
	bool queued;
	bool missed;
};

/**
 * struct hnd_db_peek - a new doorbell as nfence_doorbell_pin() finds it
 * @ran: the stub ran
 * @mappable: its file may map it already
 * @slot: the physical doorbell its mappings would show (-1: none)
 */
struct hnd_db_peek {
	bool ran;
	bool mappable;
	int slot;
};

/**
 * struct hnd_fix - what a test runs on
 * @test: the test
 * @adapter: the adapters; NULL once the test destroyed one
 * @drm_refs: each adapter's DRM device references after creation
 * @file: open DRM files; NULL once closed
 * @nfiles: entries of @file used
 * @fd: shared fds in the thread's file table; -1 once closed
 * @nfds: entries of @fd used
 * @race: the race test's action (hnd_insert_raced())
 * @demote: the demotion window test's state (hnd_demote_window())
 * @db_peek: what hnd_doorbell_pin_peek() saw
 * @lookups: handle look-ups counted by hnd_find_counted()
 * @graces: grace periods counted by hnd_grace_counted()
 * @walks: runlist walks counted by hnd_walk_counted()
 * @kicks: CMP kicks counted by hnd_kick_counted()
 */
struct hnd_fix {
	struct kunit *test;
	struct nfence_adapter *adapter[HND_ADAPTERS];
	unsigned int drm_refs[HND_ADAPTERS];
	struct file *file[HND_FILES];
	unsigned int nfiles;
	int fd[HND_FDS];
	unsigned int nfds;
	struct hnd_race race;
	struct hnd_demote demote;
	struct hnd_db_peek db_peek;
	unsigned int lookups;
	unsigned int graces;
	unsigned int walks;
	unsigned int kicks;
};

static void hnd_waiter_done(struct nfence_waiter *w)
{
	container_of(w, struct hnd_waiter, w)->fired++;
}

/* Queue @hw on @fence for @value; true if it was released at once. */
static bool hnd_wait_on(struct nfence_fence *fence, struct hnd_waiter *hw,
			u64 value)
{
	memset(hw, 0, sizeof(*hw));
	RB_CLEAR_NODE(&hw->w.node);
	hw->w.value = value;
	hw->w.done = hnd_waiter_done;
	/* As every CPU waiter is queued: the scans look for its mark. */
	return nfence_fence_add_waiter(fence, &hw->w);
}

/* ---- Files, fds and ioctls ---- */

static unsigned int hnd_open(struct hnd_fix *f, unsigned int adapter)
{
	struct file *filp;

	KUNIT_ASSERT_LT(f->test, f->nfiles, HND_FILES);
	filp = mock_drm_getfile(f->adapter[adapter]->drm.render, O_RDWR);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(f->test, filp);
	f->file[f->nfiles] = filp;
	return f->nfiles++;
}

/* The last reference to the DRM file: drm_release() and postclose now. */
static void hnd_close(struct hnd_fix *f, unsigned int file)
{
	struct file *filp = f->file[file];

	f->file[file] = NULL;
	__fput_sync(filp);
}

static struct drm_file *hnd_drm_file(struct hnd_fix *f, unsigned int file)
{
	return f->file[file]->private_data;
}

static struct nfence_file *hnd_nfile(struct hnd_fix *f, unsigned int file)
{
	return to_nfence_file(hnd_drm_file(f, file));
}

/* Track an fd the thread's table holds; the exit function closes it. */
static unsigned int hnd_track_fd(struct hnd_fix *f, int fd)
{
	KUNIT_ASSERT_LT(f->test, f->nfds, HND_FDS);
	KUNIT_ASSERT_GE(f->test, fd, 0);
	f->fd[f->nfds] = fd;
	return f->nfds++;
}

/* close(2) on the fd; its file's release runs before this returns. */
static void hnd_close_fd(struct hnd_fix *f, unsigned int slot)
{
	int fd = f->fd[slot];
	struct file *filp;

	f->fd[slot] = -1;
	filp = fget(fd);
	KUNIT_ASSERT_NOT_NULL(f->test, filp);
	close_fd(fd);
	__fput_sync(filp);
}

static int hnd_ioctl(struct hnd_fix *f, unsigned int file, drm_ioctl_t *func,
		     void *args)
{
	return drm_ioctl_kernel(f->file[file], func, args, DRM_RENDER_ALLOW);
}

static u32 hnd_device(struct hnd_fix *f, unsigned int file)
{
	struct drm_nfence_device_create args = {};

	KUNIT_ASSERT_EQ(f->test, hnd_ioctl(f, file, nfence_device_create_ioctl,
					   &args), 0);
	KUNIT_ASSERT_NE(f->test, args.handle, 0);
	return args.handle;
}

static int hnd_device_destroy(struct hnd_fix *f, unsigned int file, u32 wdev)
{
	struct drm_nfence_device_destroy args = { .handle = wdev };

	return hnd_ioctl(f, file, nfence_device_destroy_ioctl, &args);
}

static u32 hnd_create(struct hnd_fix *f, unsigned int file, u32 wdev, u32 type,
		      u32 flags, u64 initial,
		      struct drm_nfence_fence_mapping *mapping)
{
	struct drm_nfence_fence_create args = {
		.device = wdev,
		.type = type,
		.flags = flags,
		.initial_value = initial,
	};

	KUNIT_ASSERT_EQ(f->test, hnd_ioctl(f, file, nfence_fence_create_ioctl,
					   &args), 0);
	KUNIT_ASSERT_NE(f->test, args.handle, 0);
	if (mapping)
		*mapping = args.mapping;
	return args.handle;
}

static int hnd_destroy(struct hnd_fix *f, unsigned int file, u32 handle)
{
	struct drm_nfence_fence_destroy args = { .handle = handle };

	return hnd_ioctl(f, file, nfence_fence_destroy_ioctl, &args);
}

/* FENCE_SHARE; returns the fixture's slot of the new fd. */
static unsigned int hnd_share(struct hnd_fix *f, unsigned int file,
			      u32 handle)
{
	struct drm_nfence_fence_share args = { .handle = handle };

	KUNIT_ASSERT_EQ(f->test, hnd_ioctl(f, file, nfence_fence_share_ioctl,
					   &args), 0);
	return hnd_track_fd(f, args.fd);
}

/* FENCE_OPEN of @fd with the handle flags @flags. */
static int hnd_try_open_flags(struct hnd_fix *f, unsigned int file, u32 wdev,
			      int fd, u32 flags, u32 *handle,
			      struct drm_nfence_fence_mapping *mapping)
{
	struct drm_nfence_fence_open args = {
		.fd = fd,
		.device = wdev,
		.flags = flags,
	};
	int ret;

	ret = hnd_ioctl(f, file, nfence_fence_open_ioctl, &args);
	if (!ret) {
		*handle = args.handle;
		if (mapping)
			*mapping = args.mapping;
	}
	return ret;
}

static int hnd_try_open(struct hnd_fix *f, unsigned int file, u32 wdev, int fd,
			u32 *handle, struct drm_nfence_fence_mapping *mapping)
{
	return hnd_try_open_flags(f, file, wdev, fd, 0, handle, mapping);
}

/* FENCE_OPEN of the fd in fixture slot @slot, with the handle flags @flags. */
static u32 hnd_open_fd_flags(struct hnd_fix *f, unsigned int file, u32 wdev,
			     unsigned int slot, u32 flags,
			     struct drm_nfence_fence_mapping *mapping)
{
	u32 handle = 0;

	KUNIT_ASSERT_EQ(f->test, hnd_try_open_flags(f, file, wdev, f->fd[slot],
						    flags, &handle, mapping),
			0);
	KUNIT_ASSERT_NE(f->test, handle, 0);
	return handle;
}

/* FENCE_OPEN of the fd in fixture slot @slot. */
static u32 hnd_open_fd(struct hnd_fix *f, unsigned int file, u32 wdev,
		       unsigned int slot,
		       struct drm_nfence_fence_mapping *mapping)
{
	return hnd_open_fd_flags(f, file, wdev, slot, 0, mapping);
}

/* ---- What the driver holds ---- */

static struct nfence_table *hnd_table(struct hnd_fix *f, unsigned int file,
				      enum nfence_object_type type)
{
	return nfence_file_table(hnd_nfile(f, file), type);
}

static struct nfence_hwqueue *hnd_hwqueue(struct hnd_fix *f, unsigned int file,
					  u32 handle)
{
	struct nfence_table *table = hnd_table(f, file, NFENCE_OBJ_HWQUEUE);
	struct nfence_object *obj;

	nfence_table_lock(table);
	obj = nfence_table_find_locked(table, handle);
	nfence_table_unlock(table);
	return obj ? container_of(obj, struct nfence_hwqueue, obj) : NULL;
}

static struct nfence_fence_local *hnd_local(struct hnd_fix *f,
					    unsigned int file, u32 handle)
{
	struct nfence_file *nfile = hnd_nfile(f, file);
	struct nfence_fence_local *local;

	struct nfence_table *table = nfence_file_table(nfile, NFENCE_OBJ_FENCE);
	struct nfence_object *obj;

	nfence_table_lock(table);
	obj = nfence_table_find_locked(table, handle);
	local = obj ? container_of(obj, struct nfence_fence_local, obj) : NULL;
	nfence_table_unlock(table);
	return local;
}

static struct nfence_fence *hnd_fence(struct hnd_fix *f, unsigned int file,
				      u32 handle)
{
	struct nfence_fence_local *local = hnd_local(f, file, handle);

	KUNIT_ASSERT_NOT_NULL(f->test, local);
	return local->fence;
}

/* Whether @fence is in @adapter's fence table; @fence is not touched. */
static bool hnd_live(struct nfence_adapter *adapter, struct nfence_fence *fence)
{
	struct nfence_fence *entry;
	unsigned long id;
	bool live = false;

	xa_lock(&adapter->fences);
	xa_for_each(&adapter->fences, id, entry)
		live |= entry == fence;
	xa_unlock(&adapter->fences);
	return live;
}

static unsigned int hnd_num_fences(struct nfence_adapter *adapter)
{
	struct nfence_fence *entry;
	unsigned int n = 0;
	unsigned long id;

	xa_lock(&adapter->fences);
	xa_for_each(&adapter->fences, id, entry)
		n++;
	xa_unlock(&adapter->fences);
	return n;
}

static u64 hnd_vram(struct nfence_adapter *adapter)
{
	return nfence_segment_used(nfence_gpu_segment(&adapter->gpu,
						      NFENCE_SEGMENT_ID_LOCAL));
}

/* Whether a GEM object of @adapter has the mmap offset @offset. */
static bool hnd_offset_live(struct nfence_adapter *adapter, u64 offset)
{
	struct drm_vma_offset_manager *mgr = adapter->drm.vma_offset_manager;
	struct drm_vma_offset_node *node;

	drm_vma_offset_lock_lookup(mgr);
	node = drm_vma_offset_exact_lookup_locked(mgr, offset >> PAGE_SHIFT, 1);
	drm_vma_offset_unlock_lookup(mgr);
	return node;
}

/* Whether @file may mmap @fence's CurrentValue page. */
static bool hnd_mmap_allowed(struct hnd_fix *f, unsigned int file,
			     struct nfence_fence *fence)
{
	return drm_vma_node_is_allowed(&fence->cv.page->base.vma_node,
				       hnd_drm_file(f, file));
}

static void *hnd_translate(struct hnd_fix *f, unsigned int file, u64 va,
			   bool write)
{
	return nfence_vm_translate(&hnd_nfile(f, file)->vm, va, sizeof(u64),
				   write);
}

static unsigned int hnd_count(struct list_head *list)
{
	struct list_head *pos;
	unsigned int n = 0;

	list_for_each(pos, list)
		n++;
	return n;
}

/* ---- Fixture ---- */

static int hnd_init(struct kunit *test)
{
	struct nfence_gpu_config cfg = hnd_cfg;
	struct nfence_adapter *adapter;
	struct hnd_fix *f;
	unsigned int i;

	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f);
	f->test = test;
	for (i = 0; i < HND_FDS; i++)
		f->fd[i] = -1;
	test->priv = f;

	for (i = 0; i < HND_ADAPTERS; i++) {
		cfg.optimized_default_fence = i == 0;
		adapter = nfence_adapter_create(hnd_next_index++, &cfg);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, adapter);
		f->adapter[i] = adapter;
		f->drm_refs[i] = kref_read(&adapter->drm.ref);
	}
	return 0;
}

/*
 * Close what the test left open, then check that nothing is left behind:
 * no fence, no device, no reference to the DRM device but the adapter's.
 */
static void hnd_exit(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_adapter *adapter;
	unsigned int i;

	if (!f)
		return;
	for (i = 0; i < f->nfds; i++)
		if (f->fd[i] >= 0)
			hnd_close_fd(f, i);
	for (i = 0; i < f->nfiles; i++)
		if (f->file[i])
			hnd_close(f, i);
	for (i = 0; i < HND_ADAPTERS; i++) {
		adapter = f->adapter[i];
		if (!adapter)
			continue;
		KUNIT_EXPECT_EQ(test, hnd_num_fences(adapter), 0);
		KUNIT_EXPECT_EQ(test, atomic_read(&adapter->num_devices), 0);
		KUNIT_EXPECT_EQ(test, kref_read(&adapter->drm.ref),
				f->drm_refs[i]);
		nfence_adapter_destroy(adapter);
	}
}

/* ---- Tests ---- */

/*
 * A non-shared DEFAULT fence: create makes the global object and one local
 * handle; destroy takes both, and gives back the pool slot of CurrentValue
 * and the VRAM pool page of MonitoredValue, which it alone used.
 */
static void hnd_create_destroy(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_adapter *a = f->adapter[0];
	struct drm_nfence_fence_mapping m;
	struct nfence_fence_local *local;
	struct nfence_fence_page *fp;
	struct nfence_fence *fence;
	struct nfence_device *wdev;
	unsigned int fa, slot;
	u64 vram;
	u32 da, h;

	fa = hnd_open(f, 0);
	da = hnd_device(f, fa);
	vram = hnd_vram(a);

	h = hnd_create(f, fa, da, HND_DEFAULT, 0, 5, &m);
	local = hnd_local(f, fa, h);
	KUNIT_ASSERT_NOT_NULL(test, local);
	KUNIT_EXPECT_EQ(test, local->obj.handle, h);
	KUNIT_EXPECT_TRUE(test, local->creator);
	KUNIT_EXPECT_FALSE(test, local->progress);
	wdev = local->device;
	KUNIT_EXPECT_EQ(test, wdev->obj.handle, da);
	/* The file's table and the handle. */
	KUNIT_EXPECT_EQ(test, kref_read(&wdev->ref), 2);
	KUNIT_EXPECT_EQ(test, hnd_table(f, fa, NFENCE_OBJ_FENCE)->count, 1);

	fence = local->fence;
	KUNIT_EXPECT_TRUE(test, hnd_live(a, fence));
	KUNIT_EXPECT_NE(test, fence->id, 0);
	KUNIT_EXPECT_EQ(test, kref_read(&fence->ref), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&fence->handles), 1);
	KUNIT_EXPECT_EQ(test, nfence_fence_read(fence), 5);
	KUNIT_EXPECT_EQ(test, kref_read(&a->drm.ref), f->drm_refs[0] + 2);

	/* CurrentValue: a slot of the file's pool page, mapped in its VA space. */
	fp = fence->cv.page;
	KUNIT_ASSERT_NOT_NULL(test, fp);
	slot = fence->cv.offset / NFENCE_FENCE_VALUE_STRIDE;
	KUNIT_EXPECT_TRUE(test, test_bit(slot, fp->used));
	KUNIT_EXPECT_PTR_EQ(test, fp->fences[slot], fence);
	KUNIT_EXPECT_EQ(test, kref_read(&fp->base.refcount), 2);
	KUNIT_EXPECT_PTR_EQ(test, hnd_translate(f, fa, m.current_value_gpu_va,
						true), nfence_kunit_value(&fence->cv));
	/* MonitoredValue: a VRAM pool page, read-only for the GPU. */
	KUNIT_ASSERT_NOT_NULL(test, fence->mv.page);
	KUNIT_EXPECT_NOT_NULL(test, fence->mv.page->vram);
	KUNIT_EXPECT_NULL(test, fence->mv.vram);
	KUNIT_EXPECT_EQ(test, hnd_vram(a), vram + PAGE_SIZE);
	KUNIT_EXPECT_PTR_EQ(test, hnd_translate(f, fa, m.monitored_value_gpu_va,
						false), nfence_kunit_value(&fence->mv));
	KUNIT_EXPECT_NULL(test, hnd_translate(f, fa, m.monitored_value_gpu_va,
					      true));

	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fa, h), 0);
	KUNIT_EXPECT_NULL(test, hnd_local(f, fa, h));
	KUNIT_EXPECT_EQ(test, hnd_table(f, fa, NFENCE_OBJ_FENCE)->count, 0);
	KUNIT_EXPECT_FALSE(test, hnd_live(a, fence));
	KUNIT_EXPECT_FALSE(test, test_bit(slot, fp->used));
	KUNIT_EXPECT_NULL(test, fp->fences[slot]);
	/* Only the pool holds the page now. */
	KUNIT_EXPECT_EQ(test, kref_read(&fp->base.refcount), 1);
	KUNIT_EXPECT_EQ(test, hnd_vram(a), vram);
	KUNIT_EXPECT_EQ(test, kref_read(&wdev->ref), 1);
	KUNIT_EXPECT_EQ(test, kref_read(&a->drm.ref), f->drm_refs[0] + 1);

	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fa, h), -ENOENT);
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fa, 0), -ENOENT);

	/* The slot is free again: the next fence of the file takes it. */
	h = hnd_create(f, fa, da, HND_DEFAULT, 0, 0, NULL);
	fence = hnd_fence(f, fa, h);
	KUNIT_EXPECT_PTR_EQ(test, fence->cv.page, fp);
	KUNIT_EXPECT_EQ(test, fence->cv.offset,
			slot * NFENCE_FENCE_VALUE_STRIDE);
}

/* The holes of @adapter's VRAM segment. */
static unsigned int hnd_vram_holes(struct nfence_adapter *adapter)
{
	struct nfence_segment *vram = nfence_gpu_segment(&adapter->gpu,
							 NFENCE_SEGMENT_ID_LOCAL);
	struct drm_mm_node *node;
	unsigned int n = 0;
	u64 start, end;

	mutex_lock(&vram->lock);
	drm_mm_for_each_hole(node, &vram->mm, start, end)
		n += end > start;
	mutex_unlock(&vram->lock);
	return n;
}

/*
 * MonitoredValues in VRAM are packed into the file's VRAM pool pages, 64
 * to a page-sized range: fences leave no hole in VRAM that the next
 * allocation would have to walk past, and the cost of creating a fence
 * does not grow with the fences alive. A destroyed fence's slot is taken
 * again; a page goes back to VRAM when its last fence is destroyed.
 */
static void hnd_vram_values_packed(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_adapter *a = f->adapter[0];
	struct nfence_fence_page *first;
	unsigned int fa, holes, i;
	u32 da, h[NFENCE_FENCE_SLOTS + 1];
	u64 vram;
	u32 mv;

	fa = hnd_open(f, 0);
	da = hnd_device(f, fa);
	vram = hnd_vram(a);
	holes = hnd_vram_holes(a);

	for (i = 0; i < ARRAY_SIZE(h); i++) {
		h[i] = hnd_create(f, fa, da, HND_DEFAULT, 0, 0, NULL);
		KUNIT_ASSERT_NOT_NULL(test, hnd_fence(f, fa, h[i])->mv.page);
		KUNIT_EXPECT_NULL(test, hnd_fence(f, fa, h[i])->mv.vram);
	}
	/* 64 in the first page, the 65th in a second one. */
	first = hnd_fence(f, fa, h[0])->mv.page;
	KUNIT_EXPECT_NOT_NULL(test, first->vram);
	for (i = 0; i < NFENCE_FENCE_SLOTS; i++)
		KUNIT_EXPECT_PTR_EQ(test, hnd_fence(f, fa, h[i])->mv.page, first);
	KUNIT_EXPECT_PTR_NE(test, hnd_fence(f, fa, h[i])->mv.page, first);
	KUNIT_EXPECT_EQ(test, hnd_count(&hnd_nfile(f, fa)->pools[NFENCE_POOL_VRAM_MV]),
			2);
	KUNIT_EXPECT_EQ(test, hnd_vram(a), vram + 2 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, hnd_vram_holes(a), holes);

	/* The second page's only fence: its page goes back to VRAM. */
	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fa, h[NFENCE_FENCE_SLOTS]), 0);
	KUNIT_EXPECT_EQ(test, hnd_vram(a), vram + PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, hnd_count(&hnd_nfile(f, fa)->pools[NFENCE_POOL_VRAM_MV]),
			1);

	/* A slot freed in the middle, taken by the next fence. */
	mv = hnd_fence(f, fa, h[32])->mv.offset;
	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fa, h[32]), 0);
	KUNIT_EXPECT_EQ(test, hnd_vram(a), vram + PAGE_SIZE);
	h[32] = hnd_create(f, fa, da, HND_DEFAULT, 0, 0, NULL);
	KUNIT_EXPECT_PTR_EQ(test, hnd_fence(f, fa, h[32])->mv.page, first);
	KUNIT_EXPECT_EQ(test, hnd_fence(f, fa, h[32])->mv.offset, mv);
	KUNIT_EXPECT_EQ(test, hnd_vram(a), vram + PAGE_SIZE);
	for (i = 0; i < NFENCE_FENCE_SLOTS; i++)
		KUNIT_EXPECT_EQ(test, hnd_destroy(f, fa, h[i]), 0);
	/* Back with its last fence. */
	KUNIT_EXPECT_EQ(test, hnd_vram(a), vram);
	KUNIT_EXPECT_TRUE(test,
			  list_empty(&hnd_nfile(f, fa)->pools[NFENCE_POOL_VRAM_MV]));
	KUNIT_EXPECT_EQ(test, hnd_vram_holes(a), holes);
}

/* Whether a fence page has a CPU mmap offset. */
static bool hnd_page_mappable(struct nfence_fence_page *fp)
{
	return fp && drm_mm_node_allocated(&fp->base.vma_node.vm_node);
}

/*
 * What a fence and a handle carry for each value: a segment node only for
 * a shared fence's value in VRAM, a value map only for a value outside the
 * file's pool pages (system memory or VRAM), and a read-only map only for
 * NO_SIGNAL handles (one per file and value, which they share), through
 * which the GPU reads CurrentValue and cannot write it. A MonitoredValue page, pool or shared,
 * and a VRAM page never get a CPU mmap offset.
 */
static void hnd_slot_placement(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct drm_nfence_fence_mapping ms, mn, mr;
	struct drm_nfence_fence_open open = {
		.flags = DRM_NFENCE_FENCE_NO_SIGNAL,
	};
	struct nfence_fence_local *local, *ln;
	struct nfence_fence *fence;
	unsigned int fa, fb, s;
	u32 da, db, h, hi, hp, hs, hr;

	/*
	 * Adapter 0 has the optimized DEFAULT fence: MonitoredValue in a
	 * VRAM pool page, mapped with the page.
	 */
	fa = hnd_open(f, 0);
	da = hnd_device(f, fa);
	h = hnd_create(f, fa, da, HND_DEFAULT, 0, 0, NULL);
	local = hnd_local(f, fa, h);
	KUNIT_ASSERT_NOT_NULL(test, local);
	fence = local->fence;
	KUNIT_EXPECT_NOT_NULL(test, fence->cv.page);
	KUNIT_EXPECT_NULL(test, fence->cv.vram);
	KUNIT_ASSERT_NOT_NULL(test, fence->mv.page);
	KUNIT_ASSERT_NOT_NULL(test, fence->mv.page->vram);
	KUNIT_EXPECT_NULL(test, fence->mv.vram);
	KUNIT_EXPECT_PTR_EQ(test, (void *)nfence_kunit_value(&fence->mv),
			    nfence_segment_node_vaddr(fence->mv.page->vram) +
			    fence->mv.offset);
	KUNIT_EXPECT_FALSE(test, hnd_page_mappable(fence->mv.page));
	KUNIT_EXPECT_NULL(test, local->cv_vmap);
	KUNIT_EXPECT_NULL(test, local->mv_vmap);

	/*
	 * INTRA_GPU: both values in VRAM pool pages, CurrentValue's writable
	 * by the GPU, neither CPU-mappable; no value maps.
	 */
	hi = hnd_create(f, fa, da, HND_INTRA, 0, 0, &ms);
	local = hnd_local(f, fa, hi);
	KUNIT_ASSERT_NOT_NULL(test, local);
	KUNIT_ASSERT_NOT_NULL(test, local->fence->cv.page);
	KUNIT_EXPECT_NOT_NULL(test, local->fence->cv.page->vram);
	KUNIT_EXPECT_FALSE(test, hnd_page_mappable(local->fence->cv.page));
	KUNIT_EXPECT_NULL(test, local->fence->cv.vram);
	KUNIT_ASSERT_NOT_NULL(test, local->fence->mv.page);
	KUNIT_EXPECT_PTR_EQ(test, local->fence->mv.page, fence->mv.page);
	KUNIT_EXPECT_NULL(test, local->cv_vmap);
	KUNIT_EXPECT_NULL(test, local->mv_vmap);
	KUNIT_EXPECT_PTR_EQ(test, hnd_translate(f, fa, ms.current_value_gpu_va,
						true), nfence_kunit_value(&local->fence->cv));
	KUNIT_EXPECT_NULL(test, hnd_translate(f, fa, ms.monitored_value_gpu_va,
					      true));

	/* A shared INTRA_GPU fence: VRAM ranges of its own, value maps. */
	hs = hnd_create(f, fa, da, HND_INTRA, HND_NT, 0, NULL);
	local = hnd_local(f, fa, hs);
	KUNIT_ASSERT_NOT_NULL(test, local);
	KUNIT_EXPECT_NULL(test, local->fence->cv.page);
	KUNIT_EXPECT_NOT_NULL(test, local->fence->cv.vram);
	KUNIT_EXPECT_NOT_NULL(test, local->fence->mv.vram);
	KUNIT_EXPECT_NOT_NULL(test, local->cv_vmap);
	KUNIT_EXPECT_NOT_NULL(test, local->mv_vmap);
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fa, hs), 0);

	/* Adapter 1: both values in the file's pool pages, no node, no map. */
	fb = hnd_open(f, 1);
	db = hnd_device(f, fb);
	hp = hnd_create(f, fb, db, HND_DEFAULT, 0, 0, NULL);
	local = hnd_local(f, fb, hp);
	KUNIT_ASSERT_NOT_NULL(test, local);
	KUNIT_EXPECT_NOT_NULL(test, local->fence->cv.page);
	KUNIT_EXPECT_NOT_NULL(test, local->fence->mv.page);
	KUNIT_EXPECT_NULL(test, local->fence->cv.vram);
	KUNIT_EXPECT_NULL(test, local->fence->mv.vram);
	KUNIT_EXPECT_NULL(test, local->cv_vmap);
	KUNIT_EXPECT_NULL(test, local->mv_vmap);
	/* Only the CurrentValue page has a CPU mmap offset. */
	KUNIT_EXPECT_TRUE(test, hnd_page_mappable(local->fence->cv.page));
	KUNIT_EXPECT_FALSE(test, hnd_page_mappable(local->fence->mv.page));

	/*
	 * A shared fence there has pages of its own (value maps); a
	 * NO_SIGNAL handle on it, in the same file, maps CurrentValue
	 * through a read-only map of its own and shares the MonitoredValue
	 * map.
	 */
	hs = hnd_create(f, fb, db, HND_DEFAULT, HND_NT, 4, &ms);
	local = hnd_local(f, fb, hs);
	KUNIT_ASSERT_NOT_NULL(test, local);
	KUNIT_EXPECT_NULL(test, local->fence->mv.vram);
	KUNIT_EXPECT_NOT_NULL(test, local->fence->mv.page);
	KUNIT_EXPECT_TRUE(test, hnd_page_mappable(local->fence->cv.page));
	KUNIT_EXPECT_FALSE(test, hnd_page_mappable(local->fence->mv.page));
	KUNIT_EXPECT_NOT_NULL(test, local->cv_vmap);
	s = hnd_share(f, fb, hs);
	open.fd = f->fd[s];
	open.device = db;
	KUNIT_ASSERT_EQ(test, hnd_ioctl(f, fb, nfence_fence_open_ioctl, &open),
			0);
	mn = open.mapping;
	ln = hnd_local(f, fb, open.handle);
	KUNIT_ASSERT_NOT_NULL(test, ln);
	KUNIT_ASSERT_NOT_NULL(test, ln->cv_vmap);
	KUNIT_EXPECT_PTR_NE(test, ln->cv_vmap, local->cv_vmap);
	KUNIT_EXPECT_PTR_EQ(test, ln->mv_vmap, local->mv_vmap);
	KUNIT_EXPECT_NE(test, mn.current_value_gpu_va, ms.current_value_gpu_va);
	KUNIT_EXPECT_EQ(test, mn.monitored_value_gpu_va,
			ms.monitored_value_gpu_va);
	KUNIT_EXPECT_PTR_EQ(test, hnd_translate(f, fb, mn.current_value_gpu_va,
						false), nfence_kunit_value(&local->fence->cv));
	KUNIT_EXPECT_NULL(test, hnd_translate(f, fb, mn.current_value_gpu_va,
					      true));
	KUNIT_EXPECT_PTR_EQ(test, hnd_translate(f, fb, ms.current_value_gpu_va,
						true), nfence_kunit_value(&local->fence->cv));

	/* A second NO_SIGNAL handle shares the file's read-only map. */
	hr = hnd_open_fd_flags(f, fb, db, s, DRM_NFENCE_FENCE_NO_SIGNAL, &mr);
	KUNIT_EXPECT_PTR_EQ(test, hnd_local(f, fb, hr)->cv_vmap, ln->cv_vmap);
	KUNIT_EXPECT_EQ(test, mr.current_value_gpu_va, mn.current_value_gpu_va);
	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fb, open.handle), 0);
	KUNIT_EXPECT_PTR_EQ(test, hnd_translate(f, fb, mn.current_value_gpu_va,
						false), nfence_kunit_value(&local->fence->cv));

	/* The read-only map goes with the last of them; the creator's stays. */
	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fb, hr), 0);
	KUNIT_EXPECT_NULL(test, hnd_translate(f, fb, mn.current_value_gpu_va,
					      false));
	KUNIT_EXPECT_PTR_EQ(test, hnd_translate(f, fb, ms.current_value_gpu_va,
						false), nfence_kunit_value(&local->fence->cv));
	hnd_close_fd(f, s);
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fb, hs), 0);
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fb, hp), 0);
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fa, hi), 0);
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fa, h), 0);
}

static u64 hnd_charged(struct nfence_segment_usage *usage)
{
	return nfence_segment_usage_read(usage, NFENCE_SEGMENT_ID_LOCAL);
}

/*
 * Fence values in VRAM are charged to the quota of the file that made the
 * fence, and uncharged once, when the storage is freed: a shared fence's
 * value by itself, a non-shared fence's with its VRAM pool page, whole
 * when the page is made and given back with its last value. A shared
 * INTRA_GPU fence opened by a second file keeps its charge on the first
 * after that file is closed, until the second drops it. Past the quota
 * the values that find no free slot in a VRAM pool page go to system
 * memory, charging nothing: an INTRA_GPU fence's CurrentValue to a page
 * of its own that the GPU may write and the CPU cannot map, its
 * MonitoredValue, like an optimized DEFAULT fence's, to a pool page that
 * the GPU only reads.
 */
static void hnd_vram_values_charged(struct kunit *test)
{
	const u64 value = NFENCE_FENCE_VALUE_STRIDE;
	struct hnd_fix *f = test->priv;
	struct nfence_adapter *a = f->adapter[0];
	struct nfence_segment *seg;
	struct nfence_segment_usage *ua, *ub;
	struct drm_nfence_fence_create args = {
		.type = HND_INTRA,
		.initial_value = 1,
	};
	struct nfence_fence_page *vram_mv;
	struct nfence_fence *demoted;
	unsigned int fa, fb, s, i;
	u32 da, db, hi, hb, hd, hmore[NFENCE_FENCE_SLOTS];
	u64 vram;

	seg = nfence_gpu_segment(&a->gpu, NFENCE_SEGMENT_ID_LOCAL);
	fa = hnd_open(f, 0);
	fb = hnd_open(f, 0);
	da = hnd_device(f, fa);
	db = hnd_device(f, fb);
	ua = hnd_nfile(f, fa)->seg_usage;
	ub = hnd_nfile(f, fb)->seg_usage;
	/* The test's: A's file goes, its usage stays readable. */
	kref_get(&ua->ref);
	vram = hnd_vram(a);

	/*
	 * Both values of a shared INTRA_GPU fence, by value; the
	 * MonitoredValue of a DEFAULT one, with the VRAM pool page it opens.
	 */
	hi = hnd_create(f, fa, da, HND_INTRA, HND_NT, 1, NULL);
	KUNIT_EXPECT_EQ(test, hnd_charged(ua), 2 * value);
	hd = hnd_create(f, fa, da, HND_DEFAULT, 0, 1, NULL);
	vram_mv = hnd_fence(f, fa, hd)->mv.page;
	KUNIT_ASSERT_NOT_NULL(test, vram_mv);
	KUNIT_EXPECT_NOT_NULL(test, vram_mv->vram);
	KUNIT_EXPECT_EQ(test, hnd_charged(ua), 2 * value + PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, hnd_vram(a), vram + 2 * value + PAGE_SIZE);

	/*
	 * At its quota: a non-shared INTRA_GPU fence finds no room for a
	 * CurrentValue page (demoted), and a free slot for MonitoredValue.
	 */
	WRITE_ONCE(seg->client_quota, 2 * value + PAGE_SIZE);
	args.device = da;
	KUNIT_ASSERT_EQ(test, hnd_ioctl(f, fa, nfence_fence_create_ioctl,
					&args), 0);
	demoted = hnd_fence(f, fa, args.handle);
	KUNIT_ASSERT_NOT_NULL(test, demoted->cv.page);
	KUNIT_EXPECT_NULL(test, demoted->cv.page->vram);
	KUNIT_EXPECT_NULL(test, demoted->cv.vram);
	KUNIT_EXPECT_FALSE(test, hnd_page_mappable(demoted->cv.page));
	KUNIT_EXPECT_PTR_EQ(test, demoted->mv.page, vram_mv);
	KUNIT_EXPECT_EQ(test, args.mapping.cpu_mmap_offset, 0);
	KUNIT_EXPECT_PTR_EQ(test,
			    hnd_translate(f, fa,
					  args.mapping.current_value_gpu_va,
					  true), nfence_kunit_value(&demoted->cv));
	KUNIT_EXPECT_EQ(test, hnd_charged(ua), 2 * value + PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fa, args.handle), 0);

	/*
	 * DEFAULT fences fill the page's free slots, charging nothing; the
	 * next one's MonitoredValue is demoted to the system memory pool.
	 */
	for (i = 0; i < NFENCE_FENCE_SLOTS; i++) {
		hmore[i] = hnd_create(f, fa, da, HND_DEFAULT, 0, 1, NULL);
		demoted = hnd_fence(f, fa, hmore[i]);
		KUNIT_ASSERT_NOT_NULL(test, demoted->mv.page);
		if (i < NFENCE_FENCE_SLOTS - 1)
			KUNIT_EXPECT_PTR_EQ(test, demoted->mv.page, vram_mv);
	}
	KUNIT_EXPECT_NULL(test, demoted->mv.page->vram);
	KUNIT_EXPECT_NULL(test, demoted->mv.vram);
	KUNIT_EXPECT_PTR_EQ(test,
			    hnd_translate(f, fa, hnd_local(f, fa, hmore[i - 1])->
					  mapping.monitored_value_gpu_va, false),
			    nfence_kunit_value(&demoted->mv));
	KUNIT_EXPECT_NULL(test,
			  hnd_translate(f, fa, hnd_local(f, fa, hmore[i - 1])->
					mapping.monitored_value_gpu_va, true));
	KUNIT_EXPECT_EQ(test, hnd_charged(ua), 2 * value + PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, hnd_vram(a), vram + 2 * value + PAGE_SIZE);
	for (i = 0; i < NFENCE_FENCE_SLOTS; i++)
		KUNIT_EXPECT_EQ(test, hnd_destroy(f, fa, hmore[i]), 0);

	/* B has a quota of its own: two pool pages, back at the destroy. */
	WRITE_ONCE(seg->client_quota, 2 * PAGE_SIZE);
	args.device = db;
	KUNIT_EXPECT_EQ(test, hnd_ioctl(f, fb, nfence_fence_create_ioctl,
					&args), 0);
	KUNIT_EXPECT_EQ(test, hnd_charged(ub), 2 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fb, args.handle), 0);
	KUNIT_EXPECT_EQ(test, hnd_charged(ub), 0);
	WRITE_ONCE(seg->client_quota, 0);

	/*
	 * Shared, opened by B, A closed: still A's, until B drops it; A's
	 * pool page went with its file.
	 */
	s = hnd_share(f, fa, hi);
	hb = hnd_open_fd(f, fb, db, s, NULL);
	hnd_close_fd(f, s);
	hnd_close(f, fa);
	KUNIT_EXPECT_EQ(test, hnd_charged(ua), 2 * value);
	KUNIT_EXPECT_EQ(test, hnd_charged(ub), 0);
	KUNIT_EXPECT_EQ(test, hnd_vram(a), vram + 2 * value);
	/* The test's and the two charged values'. */
	KUNIT_EXPECT_EQ(test, kref_read(&ua->ref), 3);
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fb, hb), 0);
	KUNIT_EXPECT_EQ(test, hnd_charged(ua), 0);
	KUNIT_EXPECT_EQ(test, hnd_vram(a), vram);
	/* Only the test's reference is left. */
	KUNIT_EXPECT_EQ(test, kref_read(&ua->ref), 1);
	nfence_segment_usage_put(ua);
}

/*
 * Handles are per file, never 0 and cyclic: a destroyed handle is not
 * handed out again at once, and the cursor skips 0 and live handles when
 * it wraps.
 */
static void hnd_per_file_cyclic(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_fence *fa1, *fa2;
	unsigned int fa, fb;
	u32 da, db, h1, h2, h3, hb, flags;

	fa = hnd_open(f, 0);
	fb = hnd_open(f, 0);
	da = hnd_device(f, fa);
	db = hnd_device(f, fb);

	h1 = hnd_create(f, fa, da, HND_DEFAULT, 0, 0, NULL);
	h2 = hnd_create(f, fa, da, HND_DEFAULT, 0, 0, NULL);
	KUNIT_EXPECT_NE(test, h1, h2);
	fa1 = hnd_fence(f, fa, h1);
	fa2 = hnd_fence(f, fa, h2);

	/* The other file counts from the start, for fences of its own. */
	hb = hnd_create(f, fb, db, HND_DEFAULT, 0, 0, NULL);
	KUNIT_EXPECT_EQ(test, hb, h1);
	KUNIT_EXPECT_PTR_NE(test, hnd_fence(f, fb, hb), fa1);

	/* A's handle h2 names nothing in B: B cannot reach or close it. */
	KUNIT_EXPECT_NULL(test, hnd_local(f, fb, h2));
	KUNIT_EXPECT_NULL(test, nfence_fence_get(hnd_nfile(f, fb), h2, db,
						 &flags));
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fb, h2), -ENOENT);
	KUNIT_EXPECT_PTR_EQ(test, hnd_fence(f, fa, h2), fa2);
	KUNIT_EXPECT_EQ(test, kref_read(&fa2->ref), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&fa2->handles), 1);

	/* Not reused at once. */
	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fa, h1), 0);
	h3 = hnd_create(f, fa, da, HND_DEFAULT, 0, 0, NULL);
	KUNIT_EXPECT_NE(test, h3, h1);
	KUNIT_EXPECT_EQ(test, h3, h2 + 1);

	/* As if 2^32 handles had been handed out: the cursor wraps past 0. */
	hnd_table(f, fa, NFENCE_OBJ_FENCE)->next = U32_MAX;
	KUNIT_EXPECT_EQ(test, hnd_create(f, fa, da, HND_DEFAULT, 0, 0, NULL),
			U32_MAX);
	KUNIT_EXPECT_EQ(test, hnd_create(f, fa, da, HND_DEFAULT, 0, 0, NULL),
			h1);
	KUNIT_EXPECT_NULL(test, hnd_local(f, fa, 0));
	/* h2 and h3 are live: the next one comes after them. */
	KUNIT_EXPECT_EQ(test, hnd_create(f, fa, da, HND_DEFAULT, 0, 0, NULL),
			h3 + 1);
	KUNIT_EXPECT_EQ(test, hnd_table(f, fa, NFENCE_OBJ_FENCE)->count, 5);
}

/*
 * Share gives an fd holding the global object; opening it in another file
 * gives a new local handle, with mappings of that file, to the same object.
 * Failed shares and opens take nothing; the fd keeps the object after every
 * local handle is gone.
 */
static void hnd_share_open(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_adapter *a = f->adapter[0];
	struct drm_nfence_fence_mapping ma, mb, mb2;
	struct drm_nfence_fence_share share = {};
	struct nfence_fence_local *lb;
	struct nfence_fence *fence, *plain;
	unsigned int fa, fb, fc, s, s2, sdrm;
	u32 da, db, dc, ha, hb, hb2, hn, h;
	struct file *filp;
	u64 vram;
	int fd;

	fa = hnd_open(f, 0);
	fb = hnd_open(f, 0);
	fc = hnd_open(f, 1);
	da = hnd_device(f, fa);
	db = hnd_device(f, fb);
	dc = hnd_device(f, fc);
	vram = hnd_vram(a);

	ha = hnd_create(f, fa, da, HND_DEFAULT, HND_NT, 3, &ma);
	fence = hnd_fence(f, fa, ha);
	/* Pages of its own: not from the file's pool. */
	KUNIT_EXPECT_EQ(test, ma.cpu_value_offset, 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&hnd_nfile(f, fa)->pools[NFENCE_POOL_CV]));
	KUNIT_EXPECT_TRUE(test, hnd_mmap_allowed(f, fa, fence));
	KUNIT_EXPECT_FALSE(test, hnd_mmap_allowed(f, fb, fence));

	/* Each share is a new fd, holding a reference and a handle. */
	s = hnd_share(f, fa, ha);
	KUNIT_EXPECT_EQ(test, kref_read(&fence->ref), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&fence->handles), 2);
	filp = fget(f->fd[s]);
	KUNIT_ASSERT_NOT_NULL(test, filp);
	KUNIT_EXPECT_PTR_EQ(test, filp->private_data, (void *)fence);
	fput(filp);
	s2 = hnd_share(f, fa, ha);
	KUNIT_EXPECT_NE(test, f->fd[s2], f->fd[s]);
	KUNIT_EXPECT_EQ(test, kref_read(&fence->ref), 3);
	hnd_close_fd(f, s2);
	KUNIT_EXPECT_EQ(test, kref_read(&fence->ref), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&fence->handles), 2);

	/* Open in another file: a new handle and new mappings, same object. */
	hb = hnd_open_fd(f, fb, db, s, &mb);
	lb = hnd_local(f, fb, hb);
	KUNIT_ASSERT_NOT_NULL(test, lb);
	KUNIT_EXPECT_PTR_EQ(test, lb->fence, fence);
	KUNIT_EXPECT_FALSE(test, lb->creator);
	KUNIT_EXPECT_EQ(test, lb->device->obj.handle, db);
	KUNIT_EXPECT_EQ(test, kref_read(&fence->ref), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&fence->handles), 3);
	KUNIT_EXPECT_EQ(test, hnd_num_fences(a), 1);
	KUNIT_EXPECT_EQ(test, mb.cpu_mmap_offset, ma.cpu_mmap_offset);
	KUNIT_EXPECT_TRUE(test, hnd_mmap_allowed(f, fb, fence));
	KUNIT_EXPECT_PTR_EQ(test, hnd_translate(f, fb, mb.current_value_gpu_va,
						true), nfence_kunit_value(&fence->cv));
	KUNIT_EXPECT_PTR_EQ(test, hnd_translate(f, fa, ma.current_value_gpu_va,
						true), nfence_kunit_value(&fence->cv));
	KUNIT_EXPECT_PTR_EQ(test, hnd_translate(f, fb, mb.monitored_value_gpu_va,
						false), nfence_kunit_value(&fence->mv));
	KUNIT_EXPECT_NULL(test, hnd_translate(f, fb, mb.monitored_value_gpu_va,
					      true));

	/*
	 * A second handle in the same file (the seed: another device of the
	 * same process) shares the file's mappings: the same GPU VAs.
	 */
	hb2 = hnd_open_fd(f, fb, db, s, &mb2);
	KUNIT_EXPECT_NE(test, hb2, hb);
	KUNIT_EXPECT_EQ(test, mb2.current_value_gpu_va, mb.current_value_gpu_va);
	KUNIT_EXPECT_EQ(test, mb2.monitored_value_gpu_va,
			mb.monitored_value_gpu_va);
	KUNIT_EXPECT_PTR_EQ(test, hnd_local(f, fb, hb2)->cv_vmap, lb->cv_vmap);
	KUNIT_EXPECT_EQ(test, kref_read(&fence->ref), 4);
	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fb, hb2), 0);
	/* hb's mapping and mmap permission stay. */
	KUNIT_EXPECT_PTR_EQ(test, hnd_translate(f, fb, mb.current_value_gpu_va,
						false), nfence_kunit_value(&fence->cv));
	KUNIT_EXPECT_TRUE(test, hnd_mmap_allowed(f, fb, fence));
	KUNIT_EXPECT_EQ(test, kref_read(&fence->ref), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&fence->handles), 3);

	/* Failures take nothing. */
	hn = hnd_create(f, fa, da, HND_DEFAULT, DRM_NFENCE_FENCE_SHARED, 0,
			NULL);
	plain = hnd_fence(f, fa, hn);
	share.handle = hn;
	KUNIT_EXPECT_EQ(test, hnd_ioctl(f, fa, nfence_fence_share_ioctl,
					&share), -EINVAL);
	KUNIT_EXPECT_EQ(test, kref_read(&plain->ref), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&plain->handles), 1);
	share.handle = ha;
	share.flags = 1;
	KUNIT_EXPECT_EQ(test, hnd_ioctl(f, fa, nfence_fence_share_ioctl,
					&share), -EINVAL);
	KUNIT_EXPECT_EQ(test, hnd_try_open(f, fb, db + 100, f->fd[s], &h, NULL),
			-ENOENT);
	/* Another adapter, and the fence is not CROSS_ADAPTER. */
	KUNIT_EXPECT_EQ(test, hnd_try_open(f, fc, dc, f->fd[s], &h, NULL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, hnd_num_fences(f->adapter[1]), 0);
	/* An fd that is no fence fd: the DRM file itself. */
	sdrm = hnd_track_fd(f, get_unused_fd_flags(O_CLOEXEC));
	fd_install(f->fd[sdrm], get_file(f->file[fb]));
	KUNIT_EXPECT_EQ(test, hnd_try_open(f, fb, db, f->fd[sdrm], &h, NULL),
			-EINVAL);
	hnd_close_fd(f, sdrm);
	KUNIT_EXPECT_EQ(test, kref_read(&fence->ref), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&fence->handles), 3);
	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fa, hn), 0);

	/* The fd outlives every local handle; their mappings go with them. */
	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fa, ha), 0);
	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fb, hb), 0);
	KUNIT_EXPECT_TRUE(test, hnd_live(a, fence));
	KUNIT_EXPECT_EQ(test, kref_read(&fence->ref), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&fence->handles), 1);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(fence->orphaned));
	KUNIT_EXPECT_FALSE(test, hnd_mmap_allowed(f, fa, fence));
	KUNIT_EXPECT_FALSE(test, hnd_mmap_allowed(f, fb, fence));
	KUNIT_EXPECT_NULL(test, hnd_translate(f, fb, mb.current_value_gpu_va,
					      false));
	KUNIT_EXPECT_TRUE(test, hnd_offset_live(a, ma.cpu_mmap_offset));

	/* ... and opens again, with the value it had. */
	hb = hnd_open_fd(f, fb, db, s, NULL);
	KUNIT_EXPECT_EQ(test, nfence_fence_read(hnd_fence(f, fb, hb)), 3);
	KUNIT_EXPECT_EQ(test, kref_read(&fence->ref), 2);
	fd = f->fd[s];
	hnd_close_fd(f, s);
	KUNIT_EXPECT_EQ(test, kref_read(&fence->ref), 1);
	KUNIT_EXPECT_EQ(test, hnd_try_open(f, fb, db, fd, &h, NULL), -EBADF);
	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fb, hb), 0);
	KUNIT_EXPECT_FALSE(test, hnd_live(a, fence));
	KUNIT_EXPECT_FALSE(test, hnd_offset_live(a, ma.cpu_mmap_offset));
	KUNIT_EXPECT_EQ(test, hnd_vram(a), vram);
}

/* The four holders of hnd_last_reference(), in the order they let go. */
enum hnd_holder {
	HND_LOCAL,	/* FENCE_DESTROY of the creator's handle */
	HND_FD,		/* close of the shared fd */
	HND_DEVICE,	/* DEVICE_DESTROY of the device of a handle */
	HND_FILE,	/* close of a file holding a handle */
	HND_HOLDERS
};

static const char * const hnd_holder_names[] = {
	[HND_LOCAL] = "destroy",
	[HND_FD] = "fd",
	[HND_DEVICE] = "device",
	[HND_FILE] = "file",
};

/* 4! orders, numbered in the factorial number system. */
#define HND_ORDERS	24

static void hnd_order(unsigned int n, unsigned int order[HND_HOLDERS])
{
	unsigned int left[HND_HOLDERS] = { 0, 1, 2, 3 };
	unsigned int i, k, radix = HND_ORDERS;

	for (i = 0; i < HND_HOLDERS; i++) {
		radix /= HND_HOLDERS - i;
		k = n / radix;
		n %= radix;
		order[i] = left[k];
		memmove(&left[k], &left[k + 1],
			(HND_HOLDERS - 1 - k) * sizeof(left[0]));
	}
}

static const unsigned int hnd_order_ids[HND_ORDERS] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
	12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
};

static const void *hnd_order_gen(const void *prev, char *desc)
{
	const unsigned int *id = prev ? (const unsigned int *)prev + 1 :
				 hnd_order_ids;
	unsigned int order[HND_HOLDERS];

	if (id >= hnd_order_ids + HND_ORDERS)
		return NULL;
	hnd_order(*id, order);
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s, %s, %s, %s",
		 hnd_holder_names[order[0]], hnd_holder_names[order[1]],
		 hnd_holder_names[order[2]], hnd_holder_names[order[3]]);
	return id;
}

/*
 * A shared fence held by four holders of every kind: the creator's local
 * handle, the fd, a handle of a device of another file, a handle in a third
 * file. Whatever the order they let go in, the global object lives, with
 * one reference and one handle count per holder left, until the last one,
 * and then it goes with its storage and its DRM device reference.
 */
static void hnd_last_reference(struct kunit *test)
{
	const unsigned int *id = test->param_value;
	struct hnd_fix *f = test->priv;
	struct nfence_adapter *a = f->adapter[0];
	unsigned int order[HND_HOLDERS], left, i, fa, fb, fc, s, drm_refs;
	struct drm_nfence_fence_mapping ma, mb;
	struct nfence_fence *fence;
	u32 da, db, dc, ha, hb;
	u64 vram;

	fa = hnd_open(f, 0);
	fb = hnd_open(f, 0);
	fc = hnd_open(f, 0);
	da = hnd_device(f, fa);
	db = hnd_device(f, fb);
	dc = hnd_device(f, fc);
	vram = hnd_vram(a);
	drm_refs = kref_read(&a->drm.ref);

	ha = hnd_create(f, fa, da, HND_DEFAULT, HND_NT, 7, &ma);
	fence = hnd_fence(f, fa, ha);
	s = hnd_share(f, fa, ha);
	hb = hnd_open_fd(f, fb, db, s, &mb);
	hnd_open_fd(f, fc, dc, s, NULL);
	KUNIT_ASSERT_EQ(test, kref_read(&fence->ref), HND_HOLDERS);
	KUNIT_ASSERT_EQ(test, atomic_read(&fence->handles), HND_HOLDERS);
	KUNIT_EXPECT_EQ(test, kref_read(&a->drm.ref), drm_refs + 1);
	KUNIT_EXPECT_GT(test, hnd_vram(a), vram);

	hnd_order(*id, order);
	for (i = 0; i < HND_HOLDERS; i++) {
		left = HND_HOLDERS - 1 - i;
		switch (order[i]) {
		case HND_LOCAL:
			KUNIT_ASSERT_EQ(test, hnd_destroy(f, fa, ha), 0);
			KUNIT_EXPECT_NULL(test, hnd_local(f, fa, ha));
			break;
		case HND_FD:
			hnd_close_fd(f, s);
			break;
		case HND_DEVICE:
			KUNIT_ASSERT_EQ(test, hnd_device_destroy(f, fb, db), 0);
			KUNIT_EXPECT_NULL(test, hnd_local(f, fb, hb));
			KUNIT_EXPECT_EQ(test, hnd_table(f, fb, NFENCE_OBJ_FENCE)->count, 0);
			KUNIT_EXPECT_NULL(test,
					  hnd_translate(f, fb,
							mb.current_value_gpu_va,
							false));
			break;
		case HND_FILE:
			hnd_close(f, fc);
			drm_refs--;
			break;
		}
		if (!left)
			break;
		KUNIT_ASSERT_TRUE_MSG(test, hnd_live(a, fence),
				      "freed with %u holders left", left);
		/* A closed handle's file may no longer mmap the page. */
		if (order[i] == HND_LOCAL)
			KUNIT_EXPECT_FALSE(test, hnd_mmap_allowed(f, fa, fence));
		if (order[i] == HND_DEVICE)
			KUNIT_EXPECT_FALSE(test, hnd_mmap_allowed(f, fb, fence));
		KUNIT_EXPECT_EQ(test, kref_read(&fence->ref), left);
		KUNIT_EXPECT_EQ(test, atomic_read(&fence->handles), left);
		KUNIT_EXPECT_FALSE(test, READ_ONCE(fence->orphaned));
		KUNIT_EXPECT_EQ(test, nfence_fence_read(fence), 7);
		KUNIT_EXPECT_TRUE(test, hnd_offset_live(a, ma.cpu_mmap_offset));
		KUNIT_EXPECT_EQ(test, kref_read(&a->drm.ref), drm_refs + 1);
	}
	KUNIT_EXPECT_FALSE(test, hnd_live(a, fence));
	KUNIT_EXPECT_EQ(test, hnd_num_fences(a), 0);
	KUNIT_EXPECT_FALSE(test, hnd_offset_live(a, ma.cpu_mmap_offset));
	KUNIT_EXPECT_EQ(test, hnd_vram(a), vram);
	KUNIT_EXPECT_EQ(test, kref_read(&a->drm.ref), drm_refs);
}

/*
 * The last handle (local or fd) releases the CPU waiters: the fence can
 * never change again. A wait's own reference keeps the object until the
 * wait lets go of it. Once with the fd last, once with a handle of another
 * file last, closed with its file.
 */
static void hnd_orphan_releases_waiters(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_adapter *a = f->adapter[0];
	struct nfence_fence *fence, *held;
	struct hnd_waiter w, late;
	unsigned int fa, fb, s;
	u32 da, db, ha, flags;
	u64 vram;

	fa = hnd_open(f, 0);
	fb = hnd_open(f, 0);
	da = hnd_device(f, fa);
	db = hnd_device(f, fb);
	vram = hnd_vram(a);

	ha = hnd_create(f, fa, da, HND_DEFAULT, HND_NT, 0, NULL);
	fence = hnd_fence(f, fa, ha);
	s = hnd_share(f, fa, ha);
	/* What FENCE_WAIT takes: a reference through the handle, a waiter. */
	held = nfence_fence_get(hnd_nfile(f, fa), ha, da, &flags);
	KUNIT_ASSERT_PTR_EQ(test, held, fence);
	KUNIT_ASSERT_FALSE(test, hnd_wait_on(fence, &w, 10));
	KUNIT_EXPECT_EQ(test, *nfence_kunit_value(&fence->mv), 9);
	KUNIT_EXPECT_EQ(test, kref_read(&fence->ref), 3);

	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fa, ha), 0);
	KUNIT_EXPECT_EQ(test, w.fired, 0);
	KUNIT_EXPECT_EQ(test, nfence_waitlist_count(&fence->waiters), 1);
	KUNIT_EXPECT_EQ(test, *nfence_kunit_value(&fence->mv), 9);

	hnd_close_fd(f, s);
	KUNIT_EXPECT_EQ(test, w.fired, 1);
	KUNIT_EXPECT_FALSE(test, w.w.queued);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(fence->orphaned));
	KUNIT_EXPECT_EQ(test, atomic_read(&fence->handles), 0);
	KUNIT_EXPECT_EQ(test, nfence_waitlist_count(&fence->waiters), 0);
	KUNIT_EXPECT_EQ(test, *nfence_kunit_value(&fence->mv), U64_MAX);
	/* Released, not reached. */
	KUNIT_EXPECT_FALSE(test, nfence_fence_reached(fence, 10));
	/* The wait's reference keeps the object. */
	KUNIT_EXPECT_TRUE(test, hnd_live(a, fence));
	KUNIT_EXPECT_EQ(test, kref_read(&fence->ref), 1);
	/* A wait that comes late is released at once. */
	KUNIT_EXPECT_TRUE(test, hnd_wait_on(fence, &late, 20));
	KUNIT_EXPECT_EQ(test, late.fired, 1);
	nfence_fence_put(held);
	KUNIT_EXPECT_FALSE(test, hnd_live(a, fence));
	KUNIT_EXPECT_EQ(test, hnd_vram(a), vram);

	/* Again, the last holder a handle in another file, which closes. */
	ha = hnd_create(f, fa, da, HND_DEFAULT, HND_NT, 0, NULL);
	fence = hnd_fence(f, fa, ha);
	s = hnd_share(f, fa, ha);
	hnd_open_fd(f, fb, db, s, NULL);
	held = nfence_fence_get(hnd_nfile(f, fa), ha, da, &flags);
	KUNIT_ASSERT_PTR_EQ(test, held, fence);
	KUNIT_ASSERT_FALSE(test, hnd_wait_on(fence, &w, 1));
	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fa, ha), 0);
	hnd_close_fd(f, s);
	KUNIT_EXPECT_EQ(test, w.fired, 0);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(fence->orphaned));
	hnd_close(f, fb);
	KUNIT_EXPECT_EQ(test, w.fired, 1);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(fence->orphaned));
	KUNIT_EXPECT_EQ(test, kref_read(&fence->ref), 1);
	nfence_fence_put(held);
	KUNIT_EXPECT_FALSE(test, hnd_live(a, fence));
	KUNIT_EXPECT_EQ(test, hnd_vram(a), vram);
}

/*
 * Destroying a device closes its fence handles, and only its own: its
 * non-shared and INTRA_GPU fences go with their storage, a shared one lives
 * on through its fd. Nothing can join the dead device.
 */
static void hnd_device_destroy_closes(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_adapter *a = f->adapter[0];
	struct nfence_fence *shared, *other, *def, *intra, *late;
	struct drm_nfence_fence_mapping m;
	struct nfence_fence_page *fp;
	struct nfence_device *wdev;
	u32 d1, d2, hs, ho, hd, hi, h;
	unsigned int fa, s, slot;
	u64 vram_kept;

	fa = hnd_open(f, 0);
	d1 = hnd_device(f, fa);
	d2 = hnd_device(f, fa);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->num_devices), 2);

	hs = hnd_create(f, fa, d1, HND_DEFAULT, HND_NT, 0, NULL);
	shared = hnd_fence(f, fa, hs);
	s = hnd_share(f, fa, hs);
	ho = hnd_create(f, fa, d2, HND_DEFAULT, 0, 0, NULL);
	other = hnd_fence(f, fa, ho);
	vram_kept = hnd_vram(a);
	hd = hnd_create(f, fa, d1, HND_DEFAULT, 0, 0, NULL);
	def = hnd_fence(f, fa, hd);
	hi = hnd_create(f, fa, d1, HND_INTRA, 0, 0, NULL);
	intra = hnd_fence(f, fa, hi);
	/* In a VRAM pool page of its own kind: more VRAM, given back below. */
	KUNIT_ASSERT_NOT_NULL(test, intra->cv.page);
	KUNIT_EXPECT_NOT_NULL(test, intra->cv.page->vram);
	KUNIT_EXPECT_GT(test, hnd_vram(a), vram_kept);
	fp = def->cv.page;
	KUNIT_ASSERT_NOT_NULL(test, fp);
	slot = def->cv.offset / NFENCE_FENCE_VALUE_STRIDE;

	/* Our own reference, to look at the device once it is destroyed. */
	wdev = nfence_device_lookup(hnd_nfile(f, fa), d1);
	KUNIT_ASSERT_NOT_NULL(test, wdev);
	/* The table, three handles and ours. */
	KUNIT_EXPECT_EQ(test, kref_read(&wdev->ref), 5);

	KUNIT_ASSERT_EQ(test, hnd_device_destroy(f, fa, d1), 0);
	KUNIT_EXPECT_TRUE(test, wdev->dead);
	KUNIT_EXPECT_EQ(test, kref_read(&wdev->ref), 1);
	KUNIT_EXPECT_NULL(test, hnd_local(f, fa, hs));
	KUNIT_EXPECT_NULL(test, hnd_local(f, fa, hd));
	KUNIT_EXPECT_NULL(test, hnd_local(f, fa, hi));
	KUNIT_EXPECT_PTR_EQ(test, hnd_fence(f, fa, ho), other);
	KUNIT_EXPECT_EQ(test, hnd_table(f, fa, NFENCE_OBJ_FENCE)->count, 1);
	KUNIT_EXPECT_EQ(test, kref_read(&other->ref), 1);

	KUNIT_EXPECT_FALSE(test, hnd_live(a, def));
	KUNIT_EXPECT_FALSE(test, hnd_live(a, intra));
	KUNIT_EXPECT_FALSE(test, test_bit(slot, fp->used));
	KUNIT_EXPECT_EQ(test, hnd_vram(a), vram_kept);
	KUNIT_EXPECT_TRUE(test, hnd_live(a, shared));
	KUNIT_EXPECT_EQ(test, kref_read(&shared->ref), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&shared->handles), 1);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(shared->orphaned));

	/*
	 * Nothing joins the dead device, and the failures take nothing. A
	 * create that looked the device up before the destroy cannot publish
	 * a handle after it.
	 */
	late = nfence_fence_create_progress(hnd_nfile(f, fa), wdev, false, &h,
					    &m);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(late), -ENOENT);
	if (!IS_ERR(late)) {
		nfence_fence_close_progress(hnd_nfile(f, fa), h);
		nfence_fence_put(late);
	}
	KUNIT_EXPECT_EQ(test, kref_read(&wdev->ref), 1);
	KUNIT_EXPECT_EQ(test, hnd_num_fences(a), 2);
	KUNIT_EXPECT_EQ(test, hnd_try_open(f, fa, d1, f->fd[s], &h, NULL),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, kref_read(&shared->ref), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&shared->handles), 1);
	KUNIT_EXPECT_EQ(test, hnd_device_destroy(f, fa, d1), -ENOENT);
	KUNIT_EXPECT_EQ(test, hnd_table(f, fa, NFENCE_OBJ_FENCE)->count, 1);
	/* The other device opens the fd. */
	h = hnd_open_fd(f, fa, d2, s, NULL);
	KUNIT_EXPECT_PTR_EQ(test, hnd_fence(f, fa, h), shared);

	nfence_device_put(wdev);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->num_devices), 1);
}

/*
 * Closing a file closes its handles and gives back its pool pages; a shared
 * fence another file holds lives on and still works there.
 */
static void hnd_file_close(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_adapter *a = f->adapter[1];
	struct drm_nfence_fence_mapping mp, ms, mb;
	struct nfence_fence *plain[3], *shared;
	unsigned int fa, fb, s, i, drm_refs;
	u32 da, db, hs;

	fa = hnd_open(f, 1);
	fb = hnd_open(f, 1);
	da = hnd_device(f, fa);
	db = hnd_device(f, fb);

	/* Adapter 1: both values of non-shared fences in pool pages. */
	for (i = 0; i < ARRAY_SIZE(plain); i++) {
		plain[i] = hnd_fence(f, fa, hnd_create(f, fa, da, HND_DEFAULT, 0,
						       i, &mp));
		KUNIT_EXPECT_NOT_NULL(test, plain[i]->mv.page);
	}
	KUNIT_EXPECT_EQ(test, hnd_count(&hnd_nfile(f, fa)->pools[NFENCE_POOL_CV]), 1);
	KUNIT_EXPECT_EQ(test, hnd_count(&hnd_nfile(f, fa)->pools[NFENCE_POOL_MV]), 1);
	KUNIT_EXPECT_TRUE(test, hnd_offset_live(a, mp.cpu_mmap_offset));

	hs = hnd_create(f, fa, da, HND_DEFAULT, HND_NT, 0, &ms);
	shared = hnd_fence(f, fa, hs);
	s = hnd_share(f, fa, hs);
	hnd_open_fd(f, fb, db, s, &mb);
	hnd_close_fd(f, s);
	KUNIT_EXPECT_EQ(test, kref_read(&shared->ref), 2);
	drm_refs = kref_read(&a->drm.ref);

	hnd_close(f, fa);
	for (i = 0; i < ARRAY_SIZE(plain); i++)
		KUNIT_EXPECT_FALSE(test, hnd_live(a, plain[i]));
	/* The pool page is gone with the file. */
	KUNIT_EXPECT_FALSE(test, hnd_offset_live(a, mp.cpu_mmap_offset));
	/* The file's reference and three fences'. */
	KUNIT_EXPECT_EQ(test, kref_read(&a->drm.ref), drm_refs - 4);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->num_devices), 1);

	KUNIT_EXPECT_EQ(test, hnd_num_fences(a), 1);
	KUNIT_EXPECT_TRUE(test, hnd_live(a, shared));
	KUNIT_EXPECT_EQ(test, kref_read(&shared->ref), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&shared->handles), 1);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(shared->orphaned));
	KUNIT_EXPECT_TRUE(test, hnd_offset_live(a, ms.cpu_mmap_offset));
	KUNIT_EXPECT_PTR_EQ(test, hnd_translate(f, fb, mb.current_value_gpu_va,
						true), nfence_kunit_value(&shared->cv));
	nfence_fence_signal(shared, 4);
	KUNIT_EXPECT_EQ(test, nfence_fence_read(shared), 4);

	hnd_close(f, fb);
	KUNIT_EXPECT_FALSE(test, hnd_live(a, shared));
	KUNIT_EXPECT_FALSE(test, hnd_offset_live(a, ms.cpu_mmap_offset));
	KUNIT_EXPECT_EQ(test, kref_read(&a->drm.ref), f->drm_refs[1]);
}

/* CONTEXT_CREATE on engine 0 of @wdev; returns the context's handle. */
static u32 hnd_context(struct hnd_fix *f, unsigned int file, u32 wdev)
{
	struct drm_nfence_context_create cc = { .device = wdev };

	KUNIT_ASSERT_EQ(f->test, hnd_ioctl(f, file,
					   nfence_context_create_ioctl, &cc),
			0);
	return cc.handle;
}

static u32 hnd_queue(struct hnd_fix *f, unsigned int file, u32 wdev, u32 ctx,
		     u32 *progress)
{
	struct drm_nfence_hwqueue_create args = {
		.device = wdev,
		.context = ctx,
		.flags = DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE,
	};

	KUNIT_ASSERT_EQ(f->test, hnd_ioctl(f, file, nfence_hwqueue_create_ioctl,
					   &args), 0);
	KUNIT_ASSERT_NE(f->test, args.progress_fence, 0);
	*progress = args.progress_fence;
	return args.handle;
}

/*
 * A queue's progress fence is a fence handle of the file that FENCE_DESTROY
 * refuses (-EBUSY); it goes with its queue, destroyed by itself or with its
 * device.
 */
static void hnd_progress_fence(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_adapter *a = f->adapter[0];
	struct drm_nfence_hwqueue_destroy qd = {};
	struct nfence_fence_local *local;
	struct nfence_fence *fence;
	struct nfence_hwqueue *q;
	unsigned int fa;
	u32 da, ctx, qh, ph;

	fa = hnd_open(f, 0);
	da = hnd_device(f, fa);
	ctx = hnd_context(f, fa, da);

	qh = hnd_queue(f, fa, da, ctx, &ph);
	local = hnd_local(f, fa, ph);
	KUNIT_ASSERT_NOT_NULL(test, local);
	KUNIT_EXPECT_TRUE(test, local->progress);
	fence = local->fence;
	q = hnd_hwqueue(f, fa, qh);
	KUNIT_ASSERT_NOT_NULL(test, q);
	KUNIT_EXPECT_PTR_EQ(test, q->hw.progress, fence);
	KUNIT_EXPECT_EQ(test, q->progress_handle, ph);
	/* The handle's reference and the queue's. */
	KUNIT_EXPECT_EQ(test, kref_read(&fence->ref), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&fence->handles), 1);

	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fa, ph), -EBUSY);
	KUNIT_EXPECT_PTR_EQ(test, hnd_local(f, fa, ph), local);
	KUNIT_EXPECT_EQ(test, hnd_table(f, fa, NFENCE_OBJ_FENCE)->count, 1);
	KUNIT_EXPECT_EQ(test, kref_read(&fence->ref), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&fence->handles), 1);

	qd.device = da;
	qd.handle = qh;
	KUNIT_ASSERT_EQ(test, hnd_ioctl(f, fa, nfence_hwqueue_destroy_ioctl,
					&qd), 0);
	KUNIT_EXPECT_NULL(test, hnd_local(f, fa, ph));
	KUNIT_EXPECT_EQ(test, hnd_table(f, fa, NFENCE_OBJ_FENCE)->count, 0);
	KUNIT_EXPECT_FALSE(test, hnd_live(a, fence));

	/* With the device: queue, then progress fence handle, then fence. */
	qh = hnd_queue(f, fa, da, ctx, &ph);
	fence = hnd_fence(f, fa, ph);
	KUNIT_EXPECT_TRUE(test, hnd_live(a, fence));
	KUNIT_ASSERT_EQ(test, hnd_device_destroy(f, fa, da), 0);
	KUNIT_EXPECT_NULL(test, hnd_hwqueue(f, fa, qh));
	KUNIT_EXPECT_NULL(test, hnd_local(f, fa, ph));
	KUNIT_EXPECT_FALSE(test, hnd_live(a, fence));
	KUNIT_EXPECT_EQ(test, hnd_num_fences(a), 0);
}

/*
 * The optimized interrupt reads a queue's signal log, whose entry names a
 * fence handle that was closed after the GPU logged the signal, while the
 * fence lives on through another handle with a waiter the signal
 * satisfies: the interrupt scans (as for an overrun) and wakes it, instead
 * of skipping the entry.
 */
static void hnd_irq_log_closed_handle(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_adapter *a = f->adapter[0];
	struct drm_nfence_log_entry e = {
		.fence_value = 1,
		.operation = DRM_NFENCE_LOG_OP_SIGNAL_EXECUTED,
	};
	struct nfence_irq_stats *stats = &a->gpu.irq_stats;
	struct nfence_fence *fence;
	struct nfence_hwqueue *q;
	/* Not on the stack: a failed assert leaves it for the exit's flush. */
	struct hnd_waiter *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	s64 overruns, unnamed;
	unsigned int fa, s;
	bool scanned = false;
	u32 da, qh, ph, h2;
	u64 woken;

	fa = hnd_open(f, 0);
	da = hnd_device(f, fa);
	qh = hnd_queue(f, fa, da, hnd_context(f, fa, da), &ph);
	q = hnd_hwqueue(f, fa, qh);
	KUNIT_ASSERT_NOT_NULL(test, q);
	KUNIT_ASSERT_NOT_NULL(test, q->hw.logs);

	e.fence_handle = hnd_create(f, fa, da, HND_DEFAULT, HND_NT, 0, NULL);
	fence = hnd_fence(f, fa, e.fence_handle);
	s = hnd_share(f, fa, e.fence_handle);
	h2 = hnd_open_fd(f, fa, da, s, NULL);
	hnd_close_fd(f, s);
	KUNIT_ASSERT_NOT_NULL(test, w);
	KUNIT_ASSERT_FALSE(test, hnd_wait_on(fence, w, 1));

	/* The GPU signals 1 and logs it under the first handle... */
	nfence_cmp_lock(&a->cmp);
	*nfence_kunit_value(&fence->cv) = 1;
	nfence_log_append(&q->hw.logs[NFENCE_LOG_SIGNALS], &e);
	nfence_cmp_unlock(&a->cmp);
	/* ...which is closed before the interrupt reads the log. */
	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fa, e.fence_handle), 0);
	KUNIT_EXPECT_EQ(test, w->fired, 0);

	overruns = atomic64_read(&stats->overruns);
	unnamed = atomic64_read(&stats->unnamed);
	nfence_cmp_lock(&a->cmp);
	woken = nfence_logging_read_signals(a, &q->hw, &scanned);
	nfence_cmp_unlock(&a->cmp);
	KUNIT_EXPECT_EQ(test, w->fired, 1);
	KUNIT_EXPECT_FALSE(test, w->w.queued);
	KUNIT_EXPECT_EQ(test, woken, 1);
	KUNIT_EXPECT_TRUE(test, scanned);
	/* Counted as what it is, not as an overrun. */
	KUNIT_EXPECT_EQ(test, atomic64_read(&stats->unnamed), unnamed + 1);
	KUNIT_EXPECT_EQ(test, atomic64_read(&stats->overruns), overruns);

	/* Released either way before the waiter goes out of scope. */
	nfence_cmp_lock(&a->cmp);
	nfence_interrupt(a, &fence, 1);
	nfence_cmp_unlock(&a->cmp);
	KUNIT_EXPECT_EQ(test, w->fired, 1);
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fa, h2), 0);
}

/*
 * A cross-adapter fence opened on the other adapter: an instance there, a
 * global object of that adapter over the same CurrentValue page, in one
 * group with the original. A signal of one releases the waiters of the
 * other. Same adapter, same object.
 */
static void hnd_cross_setup(struct hnd_fix *f, unsigned int *fa,
			    unsigned int *fb, u32 *ha, u32 *hb,
			    unsigned int *s, struct nfence_fence **fx,
			    struct nfence_fence **fy)
{
	struct kunit *test = f->test;
	struct nfence_xgroup *xg;
	struct hnd_waiter w;
	u32 da, db, dc, hc;
	unsigned int fc;
	int pages;

	*fa = hnd_open(f, 0);
	*fb = hnd_open(f, 1);
	fc = hnd_open(f, 0);
	da = hnd_device(f, *fa);
	db = hnd_device(f, *fb);
	dc = hnd_device(f, fc);

	*ha = hnd_create(f, *fa, da, HND_DEFAULT, HND_CROSS, 4, NULL);
	*fx = hnd_fence(f, *fa, *ha);
	xg = (*fx)->xgroup;
	KUNIT_ASSERT_NOT_NULL(test, xg);
	KUNIT_EXPECT_EQ(test, kref_read(&xg->ref), 1);
	KUNIT_EXPECT_TRUE(test, list_is_singular(&xg->instances));
	pages = page_count((*fx)->cv.page->page);

	*s = hnd_share(f, *fa, *ha);
	*hb = hnd_open_fd(f, *fb, db, *s, NULL);
	*fy = hnd_fence(f, *fb, *hb);
	KUNIT_EXPECT_PTR_NE(test, *fy, *fx);
	KUNIT_EXPECT_PTR_EQ(test, (*fy)->adapter, f->adapter[1]);
	KUNIT_EXPECT_TRUE(test, hnd_live(f->adapter[1], *fy));
	KUNIT_EXPECT_FALSE(test, hnd_live(f->adapter[0], *fy));
	KUNIT_EXPECT_TRUE(test, hnd_live(f->adapter[0], *fx));
	KUNIT_EXPECT_PTR_EQ(test, (*fy)->xgroup, xg);
	KUNIT_EXPECT_EQ(test, kref_read(&xg->ref), 2);
	KUNIT_EXPECT_EQ(test, hnd_count(&xg->instances), 2);
	KUNIT_EXPECT_PTR_EQ(test, (*fy)->cv.page->page, (*fx)->cv.page->page);
	KUNIT_EXPECT_EQ(test, page_count((*fx)->cv.page->page), pages + 1);
	KUNIT_EXPECT_EQ(test, nfence_fence_read(*fy), 4);
	/* MonitoredValue 0 for good: every signal interrupts. */
	KUNIT_EXPECT_EQ(test, *nfence_kunit_value(&(*fx)->mv), 0);
	KUNIT_EXPECT_EQ(test, *nfence_kunit_value(&(*fy)->mv), 0);
	KUNIT_EXPECT_EQ(test, kref_read(&(*fx)->ref), 2);
	KUNIT_EXPECT_EQ(test, kref_read(&(*fy)->ref), 1);
	/* The creator's handle, the fd and the instance's handle. */
	KUNIT_EXPECT_EQ(test, atomic_read(&xg->handles), 3);

	/* On the fence's own adapter the fd opens the fence itself. */
	hc = hnd_open_fd(f, fc, dc, *s, NULL);
	KUNIT_EXPECT_PTR_EQ(test, hnd_fence(f, fc, hc), *fx);
	hnd_close(f, fc);
	KUNIT_EXPECT_EQ(test, kref_read(&(*fx)->ref), 2);

	/* A signal on adapter 0 releases adapter 1's waiters. */
	KUNIT_ASSERT_FALSE(test, hnd_wait_on(*fy, &w, 6));
	nfence_fence_signal(*fx, 6);
	KUNIT_EXPECT_EQ(test, w.fired, 1);
	KUNIT_EXPECT_EQ(test, nfence_fence_read(*fy), 6);
}

/*
 * @survivor is the only instance left in @xg, and the shared CurrentValue
 * page lost the reference of the instance that died (it had @pages).
 */
static void hnd_expect_alone(struct kunit *test, struct nfence_xgroup *xg,
			     struct nfence_fence *survivor, struct page *page,
			     int pages)
{
	KUNIT_EXPECT_EQ(test, kref_read(&xg->ref), 1);
	KUNIT_EXPECT_TRUE(test, list_is_singular(&xg->instances));
	KUNIT_EXPECT_PTR_EQ(test, list_first_entry(&xg->instances,
						   struct nfence_fence, xlink),
			    survivor);
	KUNIT_EXPECT_EQ(test, page_count(page), pages - 1);
}

/* The original goes first; the instance keeps the page and works on. */
static void hnd_cross_creator_first(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_fence *fx, *fy;
	struct nfence_xgroup *xg;
	unsigned int fa, fb, s;
	struct hnd_waiter w;
	struct page *page;
	u32 ha, hb;
	int pages;

	hnd_cross_setup(f, &fa, &fb, &ha, &hb, &s, &fx, &fy);
	xg = fy->xgroup;
	page = fy->cv.page->page;
	pages = page_count(page);
	KUNIT_ASSERT_FALSE(test, hnd_wait_on(fy, &w, 10));

	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fa, ha), 0);
	hnd_close_fd(f, s);
	KUNIT_EXPECT_FALSE(test, hnd_live(f->adapter[0], fx));
	KUNIT_EXPECT_EQ(test, hnd_num_fences(f->adapter[0]), 0);
	/* The instance is not orphaned by the original's death. */
	KUNIT_EXPECT_EQ(test, w.fired, 0);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(fy->orphaned));
	hnd_expect_alone(test, xg, fy, page, pages);

	KUNIT_EXPECT_EQ(test, nfence_fence_read(fy), 6);
	nfence_fence_signal(fy, 10);
	KUNIT_EXPECT_EQ(test, w.fired, 1);
	KUNIT_EXPECT_EQ(test, nfence_fence_read(fy), 10);
	KUNIT_EXPECT_EQ(test, nfence_fence_propagate(fy), 0);

	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fb, hb), 0);
	KUNIT_EXPECT_FALSE(test, hnd_live(f->adapter[1], fy));
	KUNIT_EXPECT_EQ(test, hnd_num_fences(f->adapter[1]), 0);
}

/*
 * The instance loses its last handle while a wait on it (which holds a
 * reference) is queued: the fence can still be signaled through adapter
 * 0's handle and fd, so the wait stays until it is, and ends reached.
 * Only the group's last handle or fd orphans the instances.
 */
static void hnd_cross_instance_handle_gone(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct hnd_waiter w, late;
	struct nfence_fence *fx, *fy;
	unsigned int fa, fb, s;
	u32 ha, hb;

	hnd_cross_setup(f, &fa, &fb, &ha, &hb, &s, &fx, &fy);
	kref_get(&fy->ref);
	KUNIT_ASSERT_FALSE(test, hnd_wait_on(fy, &w, 10));

	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fb, hb), 0);
	KUNIT_EXPECT_EQ(test, w.fired, 0);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(fy->orphaned));
	nfence_fence_signal(fx, 10);
	KUNIT_EXPECT_EQ(test, w.fired, 1);
	KUNIT_EXPECT_TRUE(test, w.w.reached);

	/* The creator's handle, then the fd: nobody can signal it now. */
	KUNIT_ASSERT_FALSE(test, hnd_wait_on(fy, &late, 20));
	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fa, ha), 0);
	KUNIT_EXPECT_EQ(test, late.fired, 0);
	hnd_close_fd(f, s);
	KUNIT_EXPECT_EQ(test, late.fired, 1);
	KUNIT_EXPECT_FALSE(test, late.w.reached);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(fy->orphaned));
	nfence_fence_put(fy);
}

#ifdef NFENCE_HAVE_KUNIT_STATIC_STUB
/* nfence_cmp_kick(), counted; the CMPs of these adapters need none. */
static void hnd_kick_counted(struct nfence_cmp *cmp)
{
	struct kunit *test = kunit_get_current_test();

	((struct hnd_fix *)test->priv)->kicks++;
}

/*
 * A scan (an interrupt without a payload) takes every instance on its
 * adapter, since they keep their mark. It passes a group's signal on once:
 * 32 instances of one fence on adapter 1 cost it 32 looks and one pass to
 * adapter 0's instance, not a pass from each instance to every other (32
 * times 32, which a client opening the fd thousands of times made a
 * minutes-long hold of the CMP). Every waiter is still released.
 */
static void hnd_cross_scan_once_per_group(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct hnd_waiter wx, wy, wz;
	struct nfence_fence *fx, *fy;
	unsigned int fa, fb, s, i;
	u32 ha, hb, d, h = 0;

	hnd_cross_setup(f, &fa, &fb, &ha, &hb, &s, &fx, &fy);
	d = hnd_device(f, fb);
	for (i = 0; i < 31; i++)
		h = hnd_open_fd(f, fb, d, s, NULL);
	KUNIT_EXPECT_EQ(test, fx->xgroup->num_instances, 33);
	KUNIT_ASSERT_FALSE(test, hnd_wait_on(fx, &wx, 10));
	KUNIT_ASSERT_FALSE(test, hnd_wait_on(fy, &wy, 10));
	KUNIT_ASSERT_FALSE(test, hnd_wait_on(hnd_fence(f, fb, h), &wz, 10));

	/* A GPU store that named no fence: adapter 1 scans. */
	WRITE_ONCE(*nfence_kunit_value(&fy->cv), 10);
	f->kicks = 0;
	kunit_activate_static_stub(test, nfence_cmp_kick, hnd_kick_counted);
	nfence_interrupt(f->adapter[1], NULL, 0);
	kunit_deactivate_static_stub(test, nfence_cmp_kick);

	KUNIT_EXPECT_EQ(test, f->kicks, 2);
	KUNIT_EXPECT_EQ(test, wx.fired, 1);
	KUNIT_EXPECT_EQ(test, wy.fired, 1);
	KUNIT_EXPECT_EQ(test, wz.fired, 1);
}
#endif

/*
 * A cross-adapter fence has at most DRM_NFENCE_MAX_FENCE_INSTANCES
 * instances at once (each signal is passed on to every one): an open on
 * another adapter past that fails with -ENOSPC and makes nothing, and one
 * closed makes room for one.
 */
static void hnd_cross_instance_limit(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_fence *fx, *fy;
	unsigned int fa, fb, s, i;
	u32 ha, hb, d, h = 0;
	int fences;

	hnd_cross_setup(f, &fa, &fb, &ha, &hb, &s, &fx, &fy);
	d = hnd_device(f, fb);
	for (i = 2; i < DRM_NFENCE_MAX_FENCE_INSTANCES; i++)
		h = hnd_open_fd(f, fb, d, s, NULL);
	KUNIT_EXPECT_EQ(test, fx->xgroup->num_instances,
			DRM_NFENCE_MAX_FENCE_INSTANCES);
	fences = hnd_num_fences(f->adapter[1]);
	KUNIT_EXPECT_EQ(test, hnd_try_open(f, fb, d, f->fd[s], &h, NULL),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, hnd_num_fences(f->adapter[1]), fences);
	/* Its own adapter makes no instance: still opens. */
	KUNIT_EXPECT_EQ(test, hnd_try_open(f, fa, hnd_device(f, fa), f->fd[s],
					   &h, NULL), 0);
	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fb, hb), 0);
	KUNIT_EXPECT_EQ(test, hnd_try_open(f, fb, d, f->fd[s], &h, NULL), 0);
	KUNIT_EXPECT_EQ(test, fx->xgroup->num_instances,
			DRM_NFENCE_MAX_FENCE_INSTANCES);
}

/* The instance goes first; the original is alone in its group again. */
static void hnd_cross_instance_first(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_fence *fx, *fy;
	struct nfence_xgroup *xg;
	unsigned int fa, fb, s;
	struct hnd_waiter w;
	struct page *page;
	u32 ha, hb;
	int pages;

	hnd_cross_setup(f, &fa, &fb, &ha, &hb, &s, &fx, &fy);
	xg = fx->xgroup;
	page = fx->cv.page->page;
	pages = page_count(page);
	KUNIT_ASSERT_FALSE(test, hnd_wait_on(fx, &w, 10));

	hnd_close(f, fb);
	KUNIT_EXPECT_FALSE(test, hnd_live(f->adapter[1], fy));
	KUNIT_EXPECT_EQ(test, hnd_num_fences(f->adapter[1]), 0);
	KUNIT_EXPECT_EQ(test, w.fired, 0);
	hnd_expect_alone(test, xg, fx, page, pages);
	KUNIT_EXPECT_EQ(test, kref_read(&fx->ref), 2);

	nfence_fence_signal(fx, 10);
	KUNIT_EXPECT_EQ(test, w.fired, 1);
	KUNIT_EXPECT_EQ(test, nfence_fence_propagate(fx), 0);

	hnd_close_fd(f, s);
	KUNIT_EXPECT_TRUE(test, hnd_live(f->adapter[0], fx));
	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fa, ha), 0);
	KUNIT_EXPECT_FALSE(test, hnd_live(f->adapter[0], fx));
}

/**
 * struct hnd_release - where the release of an adapter's DRM device ran
 * @done: completed by the release
 * @task: the task it ran on
 */
struct hnd_release {
	struct completion done;
	struct task_struct *task;
};

/* A managed action of the DRM device: it runs as the device is released. */
static void hnd_release_seen(struct drm_device *drm, void *data)
{
	struct hnd_release *r = data;

	r->task = current;
	complete(&r->done);
}

/*
 * Watch @a's release. Not test-managed: a release that never comes must
 * not write to freed memory later, so the caller frees it once done.
 */
static struct hnd_release *hnd_watch_release(struct kunit *test,
					     struct nfence_adapter *a)
{
	struct hnd_release *r = kzalloc(sizeof(*r), GFP_KERNEL);
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, r);
	init_completion(&r->done);
	ret = drmm_add_action(&a->drm, hnd_release_seen, r);
	if (ret)
		kfree(r);
	KUNIT_ASSERT_EQ(test, ret, 0);
	return r;
}

/* Wait for the release @r watches; false (@r left allocated) if none came. */
static bool hnd_released(struct hnd_release *r, struct task_struct **task)
{
	if (!wait_for_completion_timeout(&r->done, 10 * HZ))
		return false;
	*task = r->task;
	kfree(r);
	return true;
}

/*
 * An ioctl of @f's file @file that passed drm_ioctl()'s unplug check just
 * before @a was unplugged: its handler, called directly, must enter the
 * device itself and fail with -ENODEV.
 */
static int hnd_late_ioctl(struct hnd_fix *f, unsigned int file,
			  struct nfence_adapter *a, drm_ioctl_t *func,
			  void *args)
{
	return func(&a->drm, args, f->file[file]->private_data);
}

/*
 * A fence holds its adapter's DRM device: after the adapter is unplugged
 * and its files are closed, a shared fd keeps the fence, and the fence
 * holds the last reference to the device. The unplug lost the fence's
 * device: the fence is AlwaysSignaled. The last close, off the CMP
 * thread, releases the device itself.
 */
static void hnd_adapter_unplug(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_adapter *a = f->adapter[0];
	struct drm_nfence_fence_create create = {};
	struct drm_nfence_context_create cc = { .engine = 0 };
	struct drm_nfence_device_create dc = {};
	struct drm_nfence_alloc_create ac = {
		.size = PAGE_SIZE,
		.segment_id = NFENCE_SEGMENT_ID_SYSTEM,
	};
	struct drm_nfence_query qa = {
		.type = DRM_NFENCE_QUERY_ADAPTER,
		.size = U32_MAX,
	};
	struct drm_nfence_device_control ctl = {
		.op = DRM_NFENCE_DEVICE_OP_QUERY,
	};
	struct drm_nfence_hwqueue_create hc = {};
	struct drm_nfence_hwqueue_create uq = {
		.flags = DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION,
	};
	struct drm_nfence_doorbell_create db = {};
	struct drm_nfence_fence_open fo = {};
	struct drm_nfence_logging_level ll = {};
	struct drm_nfence_context_create cl = { .engine = 0 };
	struct drm_nfence_fence_window fw = { .pages = 1 };
	const struct {
		drm_ioctl_t *func;
		void *args;
		/* the handle it would return, which must stay 0 */
		u32 *handle;
	} late[] = {
		{ nfence_device_create_ioctl, &dc, &dc.handle },
		{ nfence_alloc_create_ioctl, &ac, &ac.handle },
		{ nfence_query_ioctl, &qa, NULL },
		{ nfence_context_create_ioctl, &cl, &cl.handle },
		{ nfence_device_control_ioctl, &ctl, NULL },
		{ nfence_hwqueue_create_ioctl, &hc, &hc.handle },
		{ nfence_fence_open_ioctl, &fo, &fo.handle },
		{ nfence_logging_level_ioctl, &ll, NULL },
		{ nfence_doorbell_create_ioctl, &db, &db.handle },
		{ nfence_window_ioctl, &fw, NULL },
	};
	struct nfence_fence *shared, *plain;
	unsigned int fa, s, drm_refs, i;
	struct hnd_release *release;
	struct task_struct *task;
	u32 da, hs, hp;

	fa = hnd_open(f, 0);
	da = hnd_device(f, fa);
	hs = hnd_create(f, fa, da, HND_DEFAULT, HND_NT, 2, NULL);
	shared = hnd_fence(f, fa, hs);
	s = hnd_share(f, fa, hs);
	hp = hnd_create(f, fa, da, HND_DEFAULT, 0, 0, NULL);
	plain = hnd_fence(f, fa, hp);
	cc.device = da;
	KUNIT_ASSERT_EQ(test, hnd_ioctl(f, fa, nfence_context_create_ioctl,
					&cc), 0);
	uq.device = da;
	uq.context = cc.handle;
	KUNIT_ASSERT_EQ(test, hnd_ioctl(f, fa, nfence_hwqueue_create_ioctl,
					&uq), 0);
	/* The late calls' arguments, valid but for the unplug. */
	ac.device = da;
	cl.device = da;
	ctl.device = da;
	hc.device = da;
	hc.context = cc.handle;
	fo.fd = f->fd[s];
	fo.device = da;
	db.device = da;
	db.hwqueue = uq.handle;
	drm_refs = kref_read(&a->drm.ref);

	f->adapter[0] = NULL;
	nfence_adapter_destroy(a);
	KUNIT_EXPECT_TRUE(test, drm_dev_is_unplugged(&a->drm));
	KUNIT_EXPECT_EQ(test, kref_read(&a->drm.ref), drm_refs - 1);
	create.device = da;
	KUNIT_EXPECT_EQ(test, hnd_ioctl(f, fa, nfence_fence_create_ioctl,
					&create), -ENODEV);
	/*
	 * A FENCE_CREATE that passed drm_ioctl()'s unplug check just before
	 * the unbind reaches the handler: it enters the device itself.
	 */
	KUNIT_EXPECT_EQ(test, nfence_fence_create_ioctl(&a->drm, &create,
							f->file[fa]->private_data),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, create.handle, 0);
	KUNIT_EXPECT_TRUE(test, hnd_live(a, plain));
	/* So must every other handler, with otherwise valid arguments. */
	for (i = 0; i < ARRAY_SIZE(late); i++) {
		KUNIT_EXPECT_EQ_MSG(test, hnd_late_ioctl(f, fa, a, late[i].func,
							 late[i].args),
				    -ENODEV, "late ioctl %u", i);
		if (late[i].handle)
			KUNIT_EXPECT_EQ_MSG(test, *late[i].handle, 0,
					    "late ioctl %u", i);
	}
	KUNIT_EXPECT_EQ(test, qa.size, U32_MAX);
	KUNIT_EXPECT_EQ(test, fw.mmap_offset, 0);
	KUNIT_EXPECT_NULL(test, hnd_nfile(f, fa)->window);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->num_devices), 1);

	hnd_close(f, fa);
	KUNIT_EXPECT_FALSE(test, hnd_live(a, plain));
	KUNIT_EXPECT_TRUE(test, hnd_live(a, shared));
	KUNIT_EXPECT_EQ(test, kref_read(&shared->ref), 1);
	KUNIT_EXPECT_EQ(test, nfence_fence_read(shared),
			NFENCE_ALWAYS_SIGNALED_VALUE);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->num_devices), 0);
	/* The fence's reference is the last. */
	KUNIT_EXPECT_EQ(test, kref_read(&a->drm.ref), 1);

	/* Dropped off the CMP thread: the release runs in the close. */
	release = hnd_watch_release(test, a);
	hnd_close_fd(f, s);
	KUNIT_EXPECT_TRUE(test, completion_done(&release->done));
	KUNIT_ASSERT_TRUE(test, hnd_released(release, &task));
	KUNIT_EXPECT_PTR_EQ(test, task, current);
}

#ifdef NFENCE_HAVE_KUNIT_STATIC_STUB
/* nfence_cmp_current(), stubbed: the test thread plays a CMP thread. */
static bool hnd_on_cmp_thread(struct nfence_cmp *cmp)
{
	return true;
}

/*
 * The CMP thread never releases its own adapter: the release stops that
 * thread (DOC: the device's last reference). After an unplug and the
 * close of every file, a shared fence's fd holds the device's last
 * reference, and the CMP may hold the fence meanwhile (a scan of every
 * watched fence); here the test thread, playing the CMP, drops two
 * fences, each holding a reference. The first put is an ordinary one; the
 * last is handed on, and the release runs on another thread, in time.
 */
static void hnd_cmp_last_reference(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_adapter *a = f->adapter[0];
	struct hnd_release *release;
	struct task_struct *task;
	unsigned int fa, s[2], i;
	u32 da, h;

	fa = hnd_open(f, 0);
	da = hnd_device(f, fa);
	for (i = 0; i < ARRAY_SIZE(s); i++) {
		h = hnd_create(f, fa, da, HND_DEFAULT, HND_NT, 2, NULL);
		s[i] = hnd_share(f, fa, h);
	}
	release = hnd_watch_release(test, a);
	f->adapter[0] = NULL;
	nfence_adapter_destroy(a);
	hnd_close(f, fa);
	/* One reference for each fence. */
	KUNIT_ASSERT_EQ(test, kref_read(&a->drm.ref), 2);

	kunit_activate_static_stub(test, nfence_cmp_current,
				   hnd_on_cmp_thread);
	/* Not the last: dropped in place, nothing released. */
	hnd_close_fd(f, s[0]);
	KUNIT_EXPECT_EQ(test, kref_read(&a->drm.ref), 1);
	KUNIT_EXPECT_FALSE(test, completion_done(&release->done));
	/* The last: handed on. */
	hnd_close_fd(f, s[1]);
	kunit_deactivate_static_stub(test, nfence_cmp_current);
	KUNIT_ASSERT_TRUE(test, hnd_released(release, &task));
	KUNIT_EXPECT_PTR_NE(test, task, current);
}
#endif

/*
 * A CPU window (nfence_window.c) of 2 pages: the first two shared
 * handles take pages 0 and 1 (mmap offsets the window's), with no mmap
 * permission of their pages' own; the third finds it full and gets its
 * page's offset and permission; a non-shared fence keeps its pool page.
 * A destroyed handle's page is given to the next, and a file closed with
 * handles in its window lets every page go.
 */
static void hnd_window_pages(struct kunit *test)
{
	struct drm_nfence_fence_window fw = { .pages = 2 };
	struct drm_nfence_fence_mapping m[3], mp, again;
	struct hnd_fix *f = test->priv;
	struct nfence_fence_local *l;
	unsigned int fa, i;
	u32 da, h[3], hp;

	fa = hnd_open(f, 0);
	da = hnd_device(f, fa);
	KUNIT_ASSERT_EQ(test, hnd_ioctl(f, fa, nfence_window_ioctl, &fw), 0);
	KUNIT_EXPECT_NE(test, fw.mmap_offset, 0);
	KUNIT_EXPECT_EQ(test, hnd_ioctl(f, fa, nfence_window_ioctl, &fw),
			-EEXIST);

	for (i = 0; i < 3; i++)
		h[i] = hnd_create(f, fa, da, HND_DEFAULT, HND_NT, i, &m[i]);
	for (i = 0; i < 2; i++) {
		l = hnd_local(f, fa, h[i]);
		KUNIT_EXPECT_TRUE(test, l->in_window);
		KUNIT_EXPECT_FALSE(test, l->mmap_allowed);
		KUNIT_EXPECT_EQ(test, l->window_index, i);
		KUNIT_EXPECT_EQ(test, m[i].cpu_mmap_offset,
				fw.mmap_offset + i * PAGE_SIZE);
	}
	l = hnd_local(f, fa, h[2]);
	KUNIT_EXPECT_FALSE(test, l->in_window);
	KUNIT_EXPECT_TRUE(test, l->mmap_allowed);
	KUNIT_EXPECT_EQ(test, m[2].cpu_mmap_offset,
			drm_vma_node_offset_addr(&l->fence->cv.page->base.vma_node));
	hp = hnd_create(f, fa, da, HND_DEFAULT, 0, 9, &mp);
	l = hnd_local(f, fa, hp);
	KUNIT_EXPECT_FALSE(test, l->in_window);
	KUNIT_EXPECT_FALSE(test, l->mmap_allowed);

	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fa, h[0]), 0);
	h[0] = hnd_create(f, fa, da, HND_DEFAULT, HND_NT, 7, &again);
	KUNIT_EXPECT_EQ(test, again.cpu_mmap_offset, m[0].cpu_mmap_offset);
	KUNIT_EXPECT_TRUE(test, hnd_local(f, fa, h[0])->in_window);

	/* Closed with two pages given: nothing left behind (kmemleak). */
	hnd_close(f, fa);
}

/*
 * Two instances of a cross-adapter fence opened in one file of another
 * adapter share CurrentValue: one value map, at one GPU VA, whose fence is
 * an instance with a handle. When that instance's handle goes, the map
 * takes the other's; with the last handle the map goes.
 */
static void hnd_cross_value_map(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct drm_nfence_fence_mapping m1, m2;
	struct nfence_fence_local *l1, *l2;
	struct nfence_value_map *vmap;
	struct nfence_fence *fx, *fy, *fz;
	unsigned int fa, fb, s;
	u32 ha, hb, hb2, db;

	hnd_cross_setup(f, &fa, &fb, &ha, &hb, &s, &fx, &fy);
	db = hnd_local(f, fb, hb)->device->obj.handle;
	hb2 = hnd_open_fd(f, fb, db, s, &m2);
	fz = hnd_fence(f, fb, hb2);
	KUNIT_EXPECT_PTR_NE(test, fz, fy);
	l1 = hnd_local(f, fb, hb);
	l2 = hnd_local(f, fb, hb2);
	m1 = l1->mapping;
	vmap = l1->cv_vmap;
	KUNIT_ASSERT_NOT_NULL(test, vmap);
	KUNIT_EXPECT_PTR_EQ(test, l2->cv_vmap, vmap);
	KUNIT_EXPECT_EQ(test, m2.current_value_gpu_va, m1.current_value_gpu_va);
	/* MonitoredValues of their own. */
	KUNIT_EXPECT_NE(test, m2.monitored_value_gpu_va,
			m1.monitored_value_gpu_va);
	KUNIT_EXPECT_PTR_EQ(test, vmap->fence, fy);

	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fb, hb), 0);
	KUNIT_EXPECT_PTR_EQ(test, vmap->fence, fz);
	KUNIT_EXPECT_PTR_EQ(test, hnd_translate(f, fb, m2.current_value_gpu_va,
						true), nfence_kunit_value(&fz->cv));
	KUNIT_ASSERT_EQ(test, hnd_destroy(f, fb, hb2), 0);
	KUNIT_EXPECT_NULL(test, hnd_translate(f, fb, m2.current_value_gpu_va,
					      false));
	KUNIT_EXPECT_EQ(test,
			atomic_read(&hnd_nfile(f, fb)->value_maps.nelems), 0);
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fa, ha), 0);
}

/* Whether @fp is on @list (a file's pool). */
static bool hnd_on_list(struct nfence_fence_page *fp, struct list_head *list)
{
	struct nfence_fence_page *each;

	list_for_each_entry(each, list, link)
		if (each == fp)
			return true;
	return false;
}

/*
 * A NO_SIGNAL handle's read-only map of its INTRA_GPU fence's CurrentValue,
 * a value of a VRAM pool page, moves with the page: the same GPU VA then
 * reads the value from its new storage and still cannot write it.
 */
static void hnd_demote_no_signal(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct drm_nfence_fence_mapping m;
	struct nfence_fence_page *fp;
	struct nfence_fence *fence;
	struct nfence_file *nfile;
	unsigned int fa = hnd_open(f, 0);
	u64 *old;
	u32 h;

	h = hnd_create(f, fa, hnd_device(f, fa), HND_INTRA,
		       DRM_NFENCE_FENCE_NO_SIGNAL, 3, &m);
	fence = hnd_fence(f, fa, h);
	fp = fence->cv.page;
	KUNIT_ASSERT_NOT_NULL(test, fp);
	KUNIT_ASSERT_NOT_NULL(test, fp->vram);
	nfile = hnd_nfile(f, fa);
	old = nfence_kunit_value(&fence->cv);
	KUNIT_EXPECT_PTR_EQ(test, hnd_translate(f, fa, m.current_value_gpu_va,
						false), old);
	KUNIT_EXPECT_NULL(test, hnd_translate(f, fa, m.current_value_gpu_va,
					      true));

	KUNIT_EXPECT_GE(test, nfence_fence_vram_demote(f->adapter[0], nfile), 1);
	KUNIT_EXPECT_NULL(test, fp->vram);
	KUNIT_EXPECT_TRUE(test, hnd_on_list(fp, &nfile->pools[NFENCE_POOL_DEMOTED]));
	KUNIT_EXPECT_PTR_NE(test, nfence_kunit_value(&fence->cv), old);
	KUNIT_EXPECT_PTR_EQ(test, hnd_translate(f, fa, m.current_value_gpu_va,
						false), nfence_kunit_value(&fence->cv));
	KUNIT_EXPECT_NULL(test, hnd_translate(f, fa, m.current_value_gpu_va,
					      true));
	KUNIT_EXPECT_EQ(test, nfence_fence_read(fence), 3);
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fa, h), 0);
}

/* Every GPU VA of @m in @file reaches @fence's values, as each should. */
static void hnd_expect_maps(struct kunit *test, unsigned int file,
			    const struct drm_nfence_fence_mapping *m,
			    struct nfence_fence *fence, bool no_signal)
{
	struct hnd_fix *f = test->priv;

	KUNIT_EXPECT_PTR_EQ(test, hnd_translate(f, file, m->current_value_gpu_va,
						false), nfence_kunit_value(&fence->cv));
	if (no_signal)
		KUNIT_EXPECT_NULL(test, hnd_translate(f, file,
						      m->current_value_gpu_va,
						      true));
	else
		KUNIT_EXPECT_PTR_EQ(test,
				    hnd_translate(f, file,
						  m->current_value_gpu_va, true),
				    nfence_kunit_value(&fence->cv));
	KUNIT_EXPECT_PTR_EQ(test, hnd_translate(f, file,
						m->monitored_value_gpu_va,
						false), nfence_kunit_value(&fence->mv));
	KUNIT_EXPECT_NULL(test, hnd_translate(f, file,
					      m->monitored_value_gpu_va, true));
}

/*
 * A shared INTRA_GPU fence's values, VRAM ranges of their own, leave VRAM
 * with their maps in every file: the creator's, another file's and that
 * file's NO_SIGNAL handle's keep their GPU VAs and reach the new storage,
 * pages of their own that the CPU cannot map. A demotion for a file moves
 * only the values charged to it (the creator's); with no file, every
 * one. The values (MonitoredValue kept for a CPU waiter) and the VRAM
 * they gave back follow.
 */
static void hnd_demote_shared(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_adapter *a = f->adapter[0];
	struct drm_nfence_fence_mapping ma, mb, mr;
	unsigned int fa = hnd_open(f, 0), fb = hnd_open(f, 0), s;
	u32 db = hnd_device(f, fb), ha, hb, hr;
	struct nfence_fence *fence;
	struct hnd_waiter hw;
	u64 *cv, *mv, vram;
	int i;

	ha = hnd_create(f, fa, hnd_device(f, fa), HND_INTRA, HND_NT, 5, &ma);
	fence = hnd_fence(f, fa, ha);
	KUNIT_ASSERT_NOT_NULL(test, fence->cv.vram);
	KUNIT_ASSERT_NOT_NULL(test, fence->mv.vram);
	/* A CPU waiter for 7: MonitoredValue 6. */
	KUNIT_ASSERT_FALSE(test, hnd_wait_on(fence, &hw, 7));
	KUNIT_EXPECT_EQ(test, READ_ONCE(*nfence_kunit_value(&fence->mv)), 6);
	s = hnd_share(f, fa, ha);
	hb = hnd_open_fd(f, fb, db, s, &mb);
	hr = hnd_open_fd_flags(f, fb, db, s, DRM_NFENCE_FENCE_NO_SIGNAL, &mr);
	KUNIT_EXPECT_NE(test, mr.current_value_gpu_va, mb.current_value_gpu_va);
	hnd_expect_maps(test, fa, &ma, fence, false);
	hnd_expect_maps(test, fb, &mb, fence, false);
	hnd_expect_maps(test, fb, &mr, fence, true);
	cv = nfence_kunit_value(&fence->cv);
	mv = nfence_kunit_value(&fence->mv);
	vram = hnd_vram(a);

	/* Not charged to the second file: nothing of it moves for that one. */
	nfence_fence_vram_demote(a, hnd_nfile(f, fb));
	KUNIT_EXPECT_PTR_EQ(test, nfence_kunit_value(&fence->cv), cv);
	KUNIT_EXPECT_NOT_NULL(test, fence->cv.vram);
	KUNIT_EXPECT_EQ(test, hnd_vram(a), vram);

	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_GE(test, nfence_fence_vram_demote(a, i ?
						NULL : hnd_nfile(f, fa)),
				i ? 0 : 1);
		KUNIT_EXPECT_NULL(test, fence->cv.vram);
		KUNIT_EXPECT_NULL(test, fence->mv.vram);
		KUNIT_ASSERT_NOT_NULL(test, fence->cv.page);
		KUNIT_ASSERT_NOT_NULL(test, fence->mv.page);
		KUNIT_EXPECT_FALSE(test, hnd_page_mappable(fence->cv.page));
		KUNIT_EXPECT_PTR_NE(test, nfence_kunit_value(&fence->cv), cv);
		KUNIT_EXPECT_PTR_NE(test, nfence_kunit_value(&fence->mv), mv);
		KUNIT_EXPECT_EQ(test, nfence_fence_read(fence), 5);
		KUNIT_EXPECT_EQ(test, READ_ONCE(*nfence_kunit_value(&fence->mv)), 6);
		KUNIT_EXPECT_TRUE(test, hw.w.queued);
		KUNIT_EXPECT_EQ(test, hw.fired, 0);
		KUNIT_EXPECT_EQ(test, hnd_vram(a),
				vram - 2 * NFENCE_FENCE_VALUE_STRIDE);
		KUNIT_EXPECT_EQ(test, hnd_charged(hnd_nfile(f, fa)->seg_usage),
				0);
		hnd_expect_maps(test, fa, &ma, fence, false);
		hnd_expect_maps(test, fb, &mb, fence, false);
		hnd_expect_maps(test, fb, &mr, fence, true);
	}

	nfence_waitlist_remove(&fence->waiters, &hw.w);
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fa, ha), 0);
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fb, hr), 0);
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fb, hb), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&hnd_nfile(f, fb)->value_maps.nelems),
			0);
}

/*
 * A file being closed is off the adapter's list of open files, and still
 * has its handles (and their maps) until its registry closes them: a
 * demotion meanwhile moves its maps as well. The second file is put on
 * the closing list as its postclose puts it, across the demotion.
 */
static void hnd_demote_closing_file(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_adapter *a = f->adapter[0];
	struct drm_nfence_fence_mapping ma, mb;
	unsigned int fa = hnd_open(f, 0), fb = hnd_open(f, 0), s;
	struct nfence_file *closing = hnd_nfile(f, fb);
	struct nfence_fence *fence;
	u32 ha, hb;

	ha = hnd_create(f, fa, hnd_device(f, fa), HND_INTRA, HND_NT, 5, &ma);
	fence = hnd_fence(f, fa, ha);
	KUNIT_ASSERT_NOT_NULL(test, fence->cv.vram);
	s = hnd_share(f, fa, ha);
	hb = hnd_open_fd(f, fb, hnd_device(f, fb), s, &mb);

	mutex_lock(&a->clients_lock);
	list_move_tail(&closing->link, &a->closing);
	mutex_unlock(&a->clients_lock);
	KUNIT_EXPECT_GE(test, nfence_fence_vram_demote(a, NULL), 1);
	mutex_lock(&a->clients_lock);
	list_move_tail(&closing->link, &a->clients);
	mutex_unlock(&a->clients_lock);

	KUNIT_EXPECT_NULL(test, fence->cv.vram);
	hnd_expect_maps(test, fa, &ma, fence, false);
	hnd_expect_maps(test, fb, &mb, fence, false);
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fb, hb), 0);
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fa, ha), 0);
}

/**
 * struct hnd_mapper - a FENCE_CREATE made by a thread of its own
 * @f: the fixture
 * @file: the file
 * @wdev: the device
 * @ret: the ioctl's result
 * @handle: the new handle
 * @done: the ioctl returned
 */
struct hnd_mapper {
	struct hnd_fix *f;
	unsigned int file;
	u32 wdev;
	int ret;
	u32 handle;
	struct completion done;
};

/* A NO_SIGNAL INTRA_GPU fence: its handle maps CurrentValue read-only. */
static int hnd_mapper_fn(void *data)
{
	struct hnd_mapper *m = data;
	struct drm_nfence_fence_create args = {
		.device = m->wdev,
		.type = HND_INTRA,
		.flags = DRM_NFENCE_FENCE_NO_SIGNAL,
		.initial_value = 1,
	};

	m->ret = hnd_ioctl(m->f, m->file, nfence_fence_create_ioctl, &args);
	m->handle = args.handle;
	complete(&m->done);
	return 0;
}

/*
 * A handle that maps a value waits while a demotion holds the adapter's
 * maps lock (DOC: demoting fence storage): with the lock held for writing,
 * a FENCE_CREATE of a NO_SIGNAL handle does not return; it does once the
 * lock goes.
 */
static void hnd_demote_maps_wait(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_adapter *a = f->adapter[0];
	struct hnd_mapper m = { .f = f };
	struct task_struct *task;
	unsigned long left;

	m.file = hnd_open(f, 0);
	m.wdev = hnd_device(f, m.file);
	init_completion(&m.done);
	down_write(&a->maps_lock);
	task = kthread_run(hnd_mapper_fn, &m, "hnd-mapper");
	if (IS_ERR(task)) {
		up_write(&a->maps_lock);
		KUNIT_FAIL(test, "no thread: %ld", PTR_ERR(task));
		return;
	}
	left = wait_for_completion_timeout(&m.done, HZ / 5);
	KUNIT_EXPECT_EQ(test, left, 0);
	up_write(&a->maps_lock);
	if (!left)
		wait_for_completion(&m.done);
	KUNIT_ASSERT_EQ(test, m.ret, 0);
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, m.file, m.handle), 0);
}

#ifdef NFENCE_HAVE_KUNIT_STATIC_STUB
/* ---- Races forced inside the handle insert ---- */

/* Fault the context @handle of @wdev on @file, as a GPU fault would. */
static void hnd_context_fault(struct hnd_fix *f, unsigned int file, u32 wdev,
			      u32 handle)
{
	struct nfence_file *nfile = hnd_nfile(f, file);
	struct nfence_cmp *cmp = &nfile->adapter->cmp;
	struct nfence_context *ctx;
	LIST_HEAD(dropped);

	ctx = nfence_context_lookup(nfile, wdev, handle);
	KUNIT_ASSERT_NOT_NULL(f->test, ctx);
	nfence_cmp_lock(cmp);
	nfence_hwqueue_context_fault_locked(ctx, SZ_4K, DRM_NFENCE_FAULT_PAGE,
					    &dropped);
	nfence_cmp_unlock(cmp);
	if (!list_empty(&dropped))
		cmp->ops->entries_drop(&dropped);
	nfence_context_put(ctx);
}

/*
 * nfence_table_insert_locked(), with the test's race run in the window
 * where the real one may drop the table's lock to allocate: the device is
 * destroyed or put in error, or a context of it faults, after the ioctl
 * looked it up and before the new handle is published.
 */
static int hnd_insert_raced(struct nfence_table *t, struct nfence_object *obj,
			    u32 *handle)
{
	struct kunit *test = kunit_get_current_test();
	struct hnd_fix *f = test->priv;
	struct hnd_race *r = &f->race;
	struct nfence_device *wdev;

	kunit_deactivate_static_stub(test, nfence_table_insert_locked);
	xa_unlock(&t->xa);
	if (r->ctx) {
		hnd_context_fault(f, r->file, r->wdev, r->ctx);
	} else if (r->destroy) {
		KUNIT_EXPECT_EQ(test, hnd_device_destroy(f, r->file, r->wdev),
				0);
	} else {
		wdev = nfence_device_lookup(hnd_nfile(f, r->file), r->wdev);
		KUNIT_EXPECT_NOT_NULL(test, wdev);
		if (wdev) {
			nfence_device_lost(&hnd_nfile(f, r->file)->adapter->cmp,
					   wdev, DRM_NFENCE_DEVICE_ERROR_LOST);
			nfence_device_put(wdev);
		}
	}
	r->ran = true;
	xa_lock(&t->xa);
	return nfence_table_insert_locked(t, obj, handle);
}

static void hnd_race_arm(struct hnd_fix *f, unsigned int file, u32 wdev,
			 bool destroy)
{
	f->race = (struct hnd_race){
		.file = file, .wdev = wdev, .destroy = destroy,
	};
	kunit_activate_static_stub(f->test, nfence_table_insert_locked,
				   hnd_insert_raced);
}

/*
 * Issue 17 point 2: a fence created while its device goes into error. The
 * device's fence scan runs after the create looked the device up and
 * before the handle is published; the fence must still be AlwaysSignaled,
 * as every fence of a device in error is.
 */
static void hnd_race_create_vs_error(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_fence *fence;
	struct hnd_waiter hw;
	unsigned int fa;
	u32 d, h;

	fa = hnd_open(f, 0);
	d = hnd_device(f, fa);
	hnd_race_arm(f, fa, d, false);
	h = hnd_create(f, fa, d, HND_DEFAULT, 0, 5, NULL);
	KUNIT_ASSERT_TRUE(test, f->race.ran);
	fence = hnd_fence(f, fa, h);
	KUNIT_ASSERT_NOT_NULL(test, fence);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(fence->always_signaled));
	KUNIT_EXPECT_EQ(test, READ_ONCE(*nfence_kunit_value(&fence->cv)),
			NFENCE_ALWAYS_SIGNALED_VALUE);
	/* Any value is reached: a waiter is released at once. */
	KUNIT_EXPECT_TRUE(test, hnd_wait_on(fence, &hw, U64_MAX));
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fa, h), 0);
}

/*
 * Issue 17 point 3: a fence created while its device is destroyed. The
 * destroy's scan of the device's handles runs before the new handle is
 * published: the create must fail with -ENOENT and leave nothing behind,
 * not a handle tied to a destroyed device.
 */
static void hnd_race_create_vs_destroy(struct kunit *test)
{
	struct drm_nfence_fence_create args = {
		.type = HND_DEFAULT,
		.initial_value = 1,
	};
	struct hnd_fix *f = test->priv;
	struct nfence_adapter *a = f->adapter[0];
	unsigned int fa;

	fa = hnd_open(f, 0);
	args.device = hnd_device(f, fa);
	hnd_race_arm(f, fa, args.device, true);
	KUNIT_EXPECT_EQ(test, hnd_ioctl(f, fa, nfence_fence_create_ioctl,
					&args), -ENOENT);
	KUNIT_EXPECT_TRUE(test, f->race.ran);
	KUNIT_EXPECT_EQ(test, hnd_table(f, fa, NFENCE_OBJ_FENCE)->count, 0);
	KUNIT_EXPECT_EQ(test, hnd_num_fences(a), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->num_devices), 0);
}

/*
 * A queue created while its context faults (@fault) or its device is lost,
 * after HWQUEUE_CREATE checked both and before the queue is on its
 * context's list, which the stop walks: the queue must come out stopped
 * (FAULTED, or LOST), its progress fence AlwaysSignaled, as if it had been
 * there for the stop, not a live queue of a dead context.
 */
static void hnd_race_queue_vs_stop(struct kunit *test, bool fault)
{
	struct drm_nfence_context_create cc = {};
	struct hnd_fix *f = test->priv;
	struct nfence_hwqueue *q;
	unsigned int fa;
	bool always;
	u32 qh, ph;

	fa = hnd_open(f, 0);
	cc.device = hnd_device(f, fa);
	KUNIT_ASSERT_EQ(test, hnd_ioctl(f, fa, nfence_context_create_ioctl,
					&cc), 0);
	hnd_race_arm(f, fa, cc.device, false);
	if (fault)
		f->race.ctx = cc.handle;
	qh = hnd_queue(f, fa, cc.device, cc.handle, &ph);
	KUNIT_ASSERT_TRUE(test, f->race.ran);
	q = hnd_hwqueue(f, fa, qh);
	KUNIT_ASSERT_NOT_NULL(test, q);
	always = READ_ONCE(q->hw.progress->always_signaled);
	KUNIT_EXPECT_EQ(test, q->hw.state,
			fault ? NFENCE_QUEUE_FAULTED : NFENCE_QUEUE_LOST);
	KUNIT_EXPECT_TRUE(test, always);
}

static void hnd_race_queue_vs_fault(struct kunit *test)
{
	hnd_race_queue_vs_stop(test, true);
}

static void hnd_race_queue_vs_lost(struct kunit *test)
{
	hnd_race_queue_vs_stop(test, false);
}

/* The same for an allocation (nfence_alloc.c). */
static void hnd_race_alloc_vs_destroy(struct kunit *test)
{
	struct drm_nfence_alloc_create args = {
		.size = SZ_64K,
		.segment_id = NFENCE_SEGMENT_ID_SYSTEM,
	};
	struct hnd_fix *f = test->priv;
	struct nfence_adapter *a = f->adapter[0];
	struct nfence_segment *sys;
	unsigned int fa;

	sys = nfence_gpu_segment(&a->gpu, NFENCE_SEGMENT_ID_SYSTEM);
	fa = hnd_open(f, 0);
	args.device = hnd_device(f, fa);
	hnd_race_arm(f, fa, args.device, true);
	KUNIT_EXPECT_EQ(test, hnd_ioctl(f, fa, nfence_alloc_create_ioctl,
					&args), -ENOENT);
	KUNIT_EXPECT_TRUE(test, f->race.ran);
	KUNIT_EXPECT_EQ(test, hnd_table(f, fa, NFENCE_OBJ_ALLOC)->count, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->num_devices), 0);
	KUNIT_EXPECT_EQ(test, nfence_segment_used(sys), 0);
}

/*
 * The demotion tests' start: a new file on adapter 0 and a fence of @type
 * in it whose CurrentValue (@cv) or MonitoredValue is in a VRAM pool page
 * (returned); &hnd_demote.fence set, the file and handle in *@file and
 * *@handle.
 */
static struct nfence_fence_page *hnd_vram_fence(struct hnd_fix *f, u32 type,
						u64 initial, bool cv,
						unsigned int *file, u32 *handle)
{
	struct nfence_fence_page *fp;
	unsigned int fa = hnd_open(f, 0);
	u32 da = hnd_device(f, fa);

	*handle = hnd_create(f, fa, da, type, 0, initial, NULL);
	f->demote.fence = hnd_fence(f, fa, *handle);
	fp = cv ? f->demote.fence->cv.page : f->demote.fence->mv.page;
	KUNIT_ASSERT_NOT_NULL(f->test, fp);
	KUNIT_ASSERT_NOT_NULL(f->test, fp->vram);
	*file = fa;
	return fp;
}

/*
 * Demote the VRAM storage of @file, on adapter 0, with @moved run in the
 * window after each page's move (nfence_demote_moved()).
 */
static void hnd_demote_in_window(struct hnd_fix *f, unsigned int file,
				 void (*moved)(struct nfence_fence_page *fp))
{
	/* The macro type-checks &its argument: a function, not a pointer. */
	kunit_activate_static_stub(f->test, nfence_demote_moved, *moved);
	KUNIT_EXPECT_GE(f->test, nfence_fence_vram_demote(f->adapter[0],
							  hnd_nfile(f, file)),
			1);
	kunit_deactivate_static_stub(f->test, nfence_demote_moved);
}

/* A CPU signal's interrupt check that read MonitoredValue before the move. */
static bool hnd_needs_irq_stale(struct nfence_fence *fence)
{
	struct hnd_fix *f = kunit_get_current_test()->priv;

	return READ_ONCE(*nfence_kunit_value(&fence->cv)) > READ_ONCE(*f->demote.old_mv);
}

/*
 * Between the move of the page and the grace period after it: a CPU waiter
 * bounds the new MonitoredValue, then a CPU signal whose check read the old
 * storage (it loaded the pointer before the move) lets it sleep on.
 */
static void hnd_demote_window(struct nfence_fence_page *fp)
{
	struct kunit *test = kunit_get_current_test();
	struct hnd_fix *f = test->priv;
	struct hnd_demote *d = &f->demote;

	if (d->fence->mv.page != fp)
		return;
	d->ran = true;
	KUNIT_EXPECT_PTR_NE(test, nfence_kunit_value(&d->fence->mv), d->old_mv);
	d->queued = !hnd_wait_on(d->fence, &d->hw, 1);
	/* A signal to 1 needs the interrupt: 1 is above MonitoredValue 0. */
	KUNIT_EXPECT_EQ(test, READ_ONCE(*nfence_kunit_value(&d->fence->mv)), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(*d->old_mv), U64_MAX);
	kunit_activate_static_stub(test, nfence_fence_signal_needs_irq,
				   hnd_needs_irq_stale);
	nfence_fence_signal(d->fence, 1);
	kunit_deactivate_static_stub(test, nfence_fence_signal_needs_irq);
	d->missed = !d->hw.fired;
}

/*
 * A CPU signal racing the demotion of its fence's MonitoredValue: its
 * check read the old storage, a waiter bound the new one in between, and
 * the signal raised no interrupt. The demotion's look at the waiters
 * after the grace period releases the waiter (DOC: demoting fence
 * storage).
 */
static void hnd_demote_signal_window(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct hnd_demote *d = &f->demote;
	struct nfence_fence_page *fp;
	unsigned int fa;
	u32 h;

	fp = hnd_vram_fence(f, HND_DEFAULT, 0, false, &fa, &h);
	d->old_mv = nfence_kunit_value(&d->fence->mv);

	hnd_demote_in_window(f, fa, hnd_demote_window);

	KUNIT_ASSERT_TRUE(test, d->ran);
	KUNIT_EXPECT_NULL(test, fp->vram);
	KUNIT_EXPECT_TRUE(test, d->queued);
	/* The window is real: the signal did not release the waiter... */
	KUNIT_EXPECT_TRUE(test, d->missed);
	/* ...and the look after the grace period did. */
	KUNIT_EXPECT_EQ(test, d->hw.fired, 1);
	KUNIT_EXPECT_FALSE(test, d->hw.w.queued);
	if (d->hw.w.queued)
		nfence_waitlist_remove(&d->fence->waiters, &d->hw.w);
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fa, h), 0);
}

#endif /* NFENCE_HAVE_KUNIT_STATIC_STUB */

/* The GPU signals @fence to @value and logs it in @log under @handle. */
static void hnd_gpu_signal_logged(struct nfence_log *log,
				  struct nfence_fence *fence, u32 handle,
				  u64 value)
{
	struct drm_nfence_log_entry e = {
		.fence_value = value,
		.fence_handle = handle,
		.operation = DRM_NFENCE_LOG_OP_SIGNAL_EXECUTED,
		.end_gpu_timestamp = value,
	};

	WRITE_ONCE(*nfence_kunit_value(&fence->cv), value);
	nfence_log_append(log, &e);
}

/*
 * The optimized interrupt's reader (nfence_interrupt_log()): it wakes the
 * waiters of the fences its new entries name, and only those; when the
 * log overran since it last read, it scans every fence with waiters
 * instead, once per interrupt, which also finds a fence whose signal's
 * entry was lost.
 */
static void hnd_interrupt_log_overrun(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_adapter *a = f->adapter[0];
	struct nfence_irq_stats *st = &a->gpu.irq_stats;
	struct nfence_fence *fx, *fy, *fp;
	struct hnd_waiter wx, wy, wp, wy2;
	struct nfence_file *nfile;
	struct nfence_log log = {};
	u64 cursor = 0, overruns, entries;
	bool scanned = false;
	unsigned int fa, woken, i;
	u32 da, hx, hy, hp;

	fa = hnd_open(f, 0);
	da = hnd_device(f, fa);
	nfile = hnd_nfile(f, fa);
	hx = hnd_create(f, fa, da, HND_DEFAULT, 0, 0, NULL);
	hy = hnd_create(f, fa, da, HND_DEFAULT, 0, 0, NULL);
	hp = hnd_create(f, fa, da, HND_DEFAULT, 0, 0, NULL);
	fx = hnd_fence(f, fa, hx);
	fy = hnd_fence(f, fa, hy);
	fp = hnd_fence(f, fa, hp);
	KUNIT_ASSERT_EQ(test, nfence_log_init(&log, DRM_NFENCE_LOG_TYPE_SIGNALS,
					      DRM_NFENCE_LOG_ENTRIES), 0);
	KUNIT_ASSERT_FALSE(test, hnd_wait_on(fx, &wx, 5));
	KUNIT_ASSERT_FALSE(test, hnd_wait_on(fy, &wy, 5));
	KUNIT_ASSERT_FALSE(test, hnd_wait_on(fp, &wp, 1));
	overruns = atomic64_read(&st->overruns);
	entries = atomic64_read(&st->log_entries);

	/* Y reached 5 without an entry: the log names X only. */
	WRITE_ONCE(*nfence_kunit_value(&fy->cv), 5);
	hnd_gpu_signal_logged(&log, fx, hx, 5);
	nfence_cmp_lock(&a->cmp);
	woken = nfence_interrupt_log(a, nfile, &log, &cursor, fp, &scanned);
	nfence_cmp_unlock(&a->cmp);
	KUNIT_EXPECT_FALSE(test, scanned);
	KUNIT_EXPECT_EQ(test, woken, 1);
	KUNIT_EXPECT_EQ(test, wx.fired, 1);
	KUNIT_EXPECT_EQ(test, wy.fired, 0);
	KUNIT_EXPECT_EQ(test, cursor, 1);
	KUNIT_EXPECT_EQ(test, atomic64_read(&st->log_entries), entries + 1);
	KUNIT_EXPECT_EQ(test, atomic64_read(&st->overruns), overruns);

	/*
	 * More entries than the log holds since the last read: an overrun.
	 * The scan of every fence with waiters finds Y, whose entry was never
	 * written; the progress fence is looked at as always.
	 */
	for (i = 0; i < DRM_NFENCE_LOG_ENTRIES + 1; i++)
		hnd_gpu_signal_logged(&log, fx, hx, 6 + i);
	WRITE_ONCE(*nfence_kunit_value(&fp->cv), 1);
	nfence_cmp_lock(&a->cmp);
	woken = nfence_interrupt_log(a, nfile, &log, &cursor, fp, &scanned);
	nfence_cmp_unlock(&a->cmp);
	KUNIT_EXPECT_TRUE(test, scanned);
	KUNIT_EXPECT_EQ(test, woken, 2);
	KUNIT_EXPECT_EQ(test, wy.fired, 1);
	KUNIT_EXPECT_EQ(test, wp.fired, 1);
	KUNIT_EXPECT_EQ(test, cursor, DRM_NFENCE_LOG_ENTRIES + 2);
	KUNIT_EXPECT_EQ(test, atomic64_read(&st->overruns), overruns + 1);

	/* Nothing new: nothing read, nobody woken. */
	scanned = false;
	nfence_cmp_lock(&a->cmp);
	woken = nfence_interrupt_log(a, nfile, &log, &cursor, fp, &scanned);
	nfence_cmp_unlock(&a->cmp);
	KUNIT_EXPECT_EQ(test, woken, 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&st->overruns), overruns + 1);

	/*
	 * An overrun found by an interrupt that made the scan already (for
	 * another queue of its engine): counted, not scanned a second time.
	 */
	KUNIT_ASSERT_FALSE(test, hnd_wait_on(fy, &wy2, 7));
	WRITE_ONCE(*nfence_kunit_value(&fy->cv), 7);
	for (i = 0; i < DRM_NFENCE_LOG_ENTRIES + 1; i++)
		hnd_gpu_signal_logged(&log, fx, hx, 100 + i);
	scanned = true;
	nfence_cmp_lock(&a->cmp);
	woken = nfence_interrupt_log(a, nfile, &log, &cursor, fp, &scanned);
	nfence_cmp_unlock(&a->cmp);
	KUNIT_EXPECT_EQ(test, woken, 0);
	KUNIT_EXPECT_EQ(test, wy2.fired, 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&st->overruns), overruns + 2);
	/* No scan really ran here: a later one finds the waiter. */
	nfence_interrupt(a, NULL, 0);
	KUNIT_EXPECT_EQ(test, wy2.fired, 1);
	nfence_log_fini(&log);
}

#ifdef NFENCE_HAVE_KUNIT_STATIC_STUB
/*
 * Between the move of an INTRA_GPU fence's CurrentValue and the grace
 * period after it: the CPU's reads (nfence_fence_read(), and
 * nfence_fence_reached() of the waits and the argument checks) find the
 * value in its new storage, and the old storage, not given back yet,
 * still holds it for a reader that loaded its address before the move.
 */
static void hnd_demote_read_check(struct nfence_fence_page *fp)
{
	struct kunit *test = kunit_get_current_test();
	struct hnd_fix *f = test->priv;
	struct hnd_demote *d = &f->demote;

	if (d->fence->cv.page != fp)
		return;
	d->ran = true;
	KUNIT_EXPECT_PTR_NE(test, nfence_kunit_value(&d->fence->cv), d->old_cv);
	KUNIT_EXPECT_EQ(test, READ_ONCE(*d->old_cv), 3);
	KUNIT_EXPECT_EQ(test, nfence_fence_read(d->fence), 3);
	KUNIT_EXPECT_TRUE(test, nfence_fence_reached(d->fence, 3));
	KUNIT_EXPECT_FALSE(test, nfence_fence_reached(d->fence, 4));
}

/* The CPU's reads of a CurrentValue that leaves VRAM, inside the window. */
static void hnd_demote_read_window(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct hnd_demote *d = &f->demote;
	struct nfence_fence_page *fp;
	unsigned int fa;
	u32 h;

	fp = hnd_vram_fence(f, HND_INTRA, 3, true, &fa, &h);
	d->old_cv = nfence_kunit_value(&d->fence->cv);

	hnd_demote_in_window(f, fa, hnd_demote_read_check);

	KUNIT_ASSERT_TRUE(test, d->ran);
	KUNIT_EXPECT_NULL(test, fp->vram);
	KUNIT_EXPECT_EQ(test, nfence_fence_read(d->fence), 3);
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fa, h), 0);
}
#endif

#ifdef NFENCE_HAVE_KUNIT_STATIC_STUB
/*
 * nfence_doorbell_pin(), after a look at the new doorbell, which its file
 * may map from then on.
 */
static int hnd_doorbell_pin_peek(struct nfence_file *nfile,
				 struct nfence_doorbell *db,
				 const struct drm_nfence_doorbell_create *args)
{
	struct kunit *test = kunit_get_current_test();
	struct hnd_db_peek *peek = &((struct hnd_fix *)test->priv)->db_peek;

	kunit_deactivate_static_stub(test, nfence_doorbell_pin);
	mutex_lock(&db->adapter->doorbell_lock);
	peek->ran = true;
	peek->mappable = db->mmap_allowed;
	peek->slot = db->ring.slot;
	mutex_unlock(&db->adapter->doorbell_lock);
	return nfence_doorbell_pin(nfile, db, args);
}

/* DOORBELL_CREATE of @args, looked at by hnd_doorbell_pin_peek(). */
static int hnd_doorbell_create_peek(struct hnd_fix *f, unsigned int file,
				    struct drm_nfence_doorbell_create *args)
{
	struct hnd_db_peek *peek = &f->db_peek;
	int ret;

	*peek = (struct hnd_db_peek){ .slot = INT_MAX };
	kunit_activate_static_stub(f->test, nfence_doorbell_pin,
				   hnd_doorbell_pin_peek);
	ret = hnd_ioctl(f, file, nfence_doorbell_create_ioctl, args);
	KUNIT_EXPECT_TRUE(f->test, peek->ran);
	KUNIT_EXPECT_TRUE(f->test, peek->mappable);
	KUNIT_EXPECT_EQ(f->test, peek->slot, -1);
	return ret;
}

/* nfence_demote_grace(), counted. */
static void hnd_grace_counted(void)
{
	struct kunit *test = kunit_get_current_test();

	((struct hnd_fix *)test->priv)->graces++;
	synchronize_rcu();
}

/*
 * A demotion waits for a grace period per batch of 16 pool pages, not per
 * page: it holds the adapter's clients_lock all along, which every open
 * and close of a file of the adapter waits for.
 */
static void hnd_demote_batched(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	unsigned int fa = hnd_open(f, 0), i, moved;
	u32 d = hnd_device(f, fa);

	/* 17 pages' worth of VRAM slots, each value of its own. */
	for (i = 0; i < 17 * 64; i++)
		hnd_create(f, fa, d, HND_INTRA, 0, i, NULL);
	f->graces = 0;
	kunit_activate_static_stub(test, nfence_demote_grace,
				   hnd_grace_counted);
	moved = nfence_fence_vram_demote(f->adapter[0], hnd_nfile(f, fa));
	kunit_deactivate_static_stub(test, nfence_demote_grace);
	KUNIT_EXPECT_GT(test, moved, 16);
	KUNIT_EXPECT_EQ(test, f->graces, DIV_ROUND_UP(moved, 16));
	hnd_close(f, fa);
	KUNIT_EXPECT_EQ(test, hnd_num_fences(f->adapter[0]), 0);
}

/* nfence_table_find_locked(), counted. */
static struct nfence_object *hnd_find_counted(struct nfence_table *t,
					      u32 handle)
{
	struct kunit *test = kunit_get_current_test();

	((struct hnd_fix *)test->priv)->lookups++;
	lockdep_assert_held(&t->xa.xa_lock);
	return xa_load(&t->xa, handle);
}

/*
 * A device that goes into error finds the fences it created on a list of
 * its own, not in its file's handle table, which it would walk holding the
 * CMP lock that every client's work waits for: a device with one fence,
 * in a file with many, looks up no handle. Its fence becomes
 * AlwaysSignaled; the other device's do not.
 */
static void hnd_device_error_own_fences(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_device *wdev, *other;
	struct nfence_table *table;
	struct nfence_fence *mine;
	u32 d1, d2, h[32], h2;
	unsigned int fa, i;

	fa = hnd_open(f, 0);
	d1 = hnd_device(f, fa);
	for (i = 0; i < ARRAY_SIZE(h); i++)
		h[i] = hnd_create(f, fa, d1, HND_DEFAULT, 0, 0, NULL);
	d2 = hnd_device(f, fa);
	h2 = hnd_create(f, fa, d2, HND_DEFAULT, 0, 0, NULL);
	mine = hnd_fence(f, fa, h2);
	wdev = nfence_device_lookup(hnd_nfile(f, fa), d2);
	KUNIT_ASSERT_NOT_NULL(test, wdev);
	other = nfence_device_lookup(hnd_nfile(f, fa), d1);
	KUNIT_ASSERT_NOT_NULL(test, other);
	table = hnd_table(f, fa, NFENCE_OBJ_FENCE);
	nfence_table_lock(table);
	KUNIT_EXPECT_EQ(test, list_count_nodes(&wdev->fences), 1);
	KUNIT_EXPECT_EQ(test, list_count_nodes(&other->fences), ARRAY_SIZE(h));
	nfence_table_unlock(table);

	f->lookups = 0;
	kunit_activate_static_stub(test, nfence_table_find_locked,
				   hnd_find_counted);
	nfence_device_lost(&f->adapter[0]->cmp, wdev,
			   DRM_NFENCE_DEVICE_ERROR_LOST);
	kunit_deactivate_static_stub(test, nfence_table_find_locked);

	/* Its own list emptied, the other device's untouched. */
	KUNIT_EXPECT_EQ(test, f->lookups, 0);
	nfence_table_lock(table);
	KUNIT_EXPECT_TRUE(test, list_empty(&wdev->fences));
	KUNIT_EXPECT_EQ(test, list_count_nodes(&other->fences), ARRAY_SIZE(h));
	nfence_table_unlock(table);
	nfence_device_put(other);
	nfence_device_put(wdev);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(mine->always_signaled));
	KUNIT_EXPECT_EQ(test, nfence_fence_read(mine),
			NFENCE_ALWAYS_SIGNALED_VALUE);
	for (i = 0; i < ARRAY_SIZE(h); i++)
		KUNIT_EXPECT_FALSE(test,
				   READ_ONCE(hnd_fence(f, fa, h[i])->always_signaled));
	/* A fence it creates from now on is born so, on no list. */
	h2 = hnd_create(f, fa, d2, HND_DEFAULT, 0, 0, NULL);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(hnd_fence(f, fa, h2)->always_signaled));
	wdev = nfence_device_lookup(hnd_nfile(f, fa), d2);
	KUNIT_ASSERT_NOT_NULL(test, wdev);
	KUNIT_EXPECT_TRUE(test, list_empty(&wdev->fences));
	nfence_device_put(wdev);
}

/* nfence_demote_shared(), counted; it moves nothing. */
static unsigned int hnd_demote_counted(struct nfence_adapter *adapter,
				       struct nfence_segment_usage *usage)
{
	struct kunit *test = kunit_get_current_test();

	((struct hnd_fix *)test->priv)->walks++;
	return 0;
}

/*
 * A VRAM allocation that finds no room demotes fence storage first
 * (nfence_fence_vram_demote()): the file's own, then every file's. Its
 * walk of the adapter's fences for shared values in VRAM happens only
 * while there are such values, charged to the file it demotes for or to
 * any: a client at its quota allocating in a loop costs nobody a walk of
 * every fence under clients_lock. The counts follow a shared value into
 * VRAM and out of it, freed or moved by a demotion.
 */
static void hnd_demote_walks_only_for_shared_vram(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_adapter *a = f->adapter[0];
	struct nfence_segment_usage *ub;
	unsigned int fa, fb;
	int base;
	u32 da, db, hs;

	fa = hnd_open(f, 0);
	fb = hnd_open(f, 0);
	da = hnd_device(f, fa);
	db = hnd_device(f, fb);
	ub = hnd_nfile(f, fb)->seg_usage;
	base = atomic_read(&a->vram_shared_values);

	/* A non-shared fence's values are in A's VRAM pool: no walk. */
	hnd_create(f, fa, da, HND_INTRA, 0, 1, NULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->vram_shared_values), base);
	kunit_activate_static_stub(test, nfence_demote_shared,
				   hnd_demote_counted);
	f->walks = 0;
	nfence_fence_vram_demote(a, hnd_nfile(f, fa));
	KUNIT_EXPECT_EQ(test, f->walks, 0);
	if (!base) {
		nfence_fence_vram_demote(a, NULL);
		KUNIT_EXPECT_EQ(test, f->walks, 0);
	}

	/* B's shared fence: both values in VRAM ranges of their own. */
	hs = hnd_create(f, fb, db, HND_INTRA, HND_NT, 1, NULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->vram_shared_values), base + 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&ub->fence_values), 2);
	f->walks = 0;
	nfence_fence_vram_demote(a, hnd_nfile(f, fa));
	KUNIT_EXPECT_EQ(test, f->walks, 0);
	nfence_fence_vram_demote(a, hnd_nfile(f, fb));
	KUNIT_EXPECT_EQ(test, f->walks, 1);
	nfence_fence_vram_demote(a, NULL);
	KUNIT_EXPECT_EQ(test, f->walks, 2);

	/* Freed with its last handle: no walk for B any more. */
	KUNIT_EXPECT_EQ(test, hnd_destroy(f, fb, hs), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->vram_shared_values), base);
	KUNIT_EXPECT_EQ(test, atomic_read(&ub->fence_values), 0);
	nfence_fence_vram_demote(a, hnd_nfile(f, fb));
	KUNIT_EXPECT_EQ(test, f->walks, 2);
	kunit_deactivate_static_stub(test, nfence_demote_shared);

	/* Moved by a demotion: out of VRAM, out of the counts. */
	hs = hnd_create(f, fb, db, HND_INTRA, HND_NT, 1, NULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&ub->fence_values), 2);
	KUNIT_EXPECT_EQ(test, nfence_fence_vram_demote(a, hnd_nfile(f, fb)),
			1);
	KUNIT_EXPECT_NULL(test, hnd_fence(f, fb, hs)->cv.vram);
	KUNIT_EXPECT_NULL(test, hnd_fence(f, fb, hs)->mv.vram);
	KUNIT_EXPECT_EQ(test, atomic_read(&ub->fence_values), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->vram_shared_values), base);
}

/* nfence_cmp_walk_queues_locked(), counted (there are no queues). */
static void hnd_walk_counted(struct nfence_cmp *cmp, nfence_cmp_queue_fn_t fn,
			     void *data)
{
	struct kunit *test = kunit_get_current_test();

	((struct hnd_fix *)test->priv)->walks++;
	lockdep_assert_held(&cmp->lock);
}

/*
 * A device already in error has no queue left to stop: putting it in
 * error again (DEVICE_CONTROL's MARK_ERROR, which any client may repeat)
 * walks none of the adapter's runlists under the CMP lock, which every
 * client's work waits for. The first cause stays.
 */
static void hnd_device_error_again_walks_nothing(struct kunit *test)
{
	struct hnd_fix *f = test->priv;
	struct nfence_device *wdev;
	unsigned int fa;
	u32 d;

	fa = hnd_open(f, 0);
	d = hnd_device(f, fa);
	wdev = nfence_device_lookup(hnd_nfile(f, fa), d);
	KUNIT_ASSERT_NOT_NULL(test, wdev);

	f->walks = 0;
	kunit_activate_static_stub(test, nfence_cmp_walk_queues_locked,
				   hnd_walk_counted);
	nfence_device_lost(&f->adapter[0]->cmp, wdev,
			   DRM_NFENCE_DEVICE_ERROR_LOST);
	KUNIT_EXPECT_EQ(test, f->walks, 1);
	nfence_device_lost(&f->adapter[0]->cmp, wdev,
			   DRM_NFENCE_DEVICE_ERROR_MARKED);
	nfence_device_lost(&f->adapter[0]->cmp, wdev,
			   DRM_NFENCE_DEVICE_ERROR_HANG);
	kunit_deactivate_static_stub(test, nfence_cmp_walk_queues_locked);

	KUNIT_EXPECT_EQ(test, f->walks, 1);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(wdev->error));
	KUNIT_EXPECT_EQ(test, wdev->error_cause, DRM_NFENCE_DEVICE_ERROR_LOST);
	nfence_device_put(wdev);
}

/*
 * A new doorbell is mappable by its file before its ring is attached to
 * its queue, and a mapping made then stays if the create fails: a fault in
 * that window must map the doorbell's dummy page, never a physical
 * doorbell. Slot 0, which a zeroed doorbell would name, is one that
 * another queue may own: its write index would be readable and writable
 * by another process.
 */
static void hnd_doorbell_new_maps_dummy(struct kunit *test)
{
	struct drm_nfence_alloc_create ac = {
		.size = PAGE_SIZE,
		.segment_id = NFENCE_SEGMENT_ID_SYSTEM,
	};
	struct drm_nfence_hwqueue_create uq = {
		.flags = DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION,
	};
	struct drm_nfence_doorbell_create db = {};
	struct hnd_fix *f = test->priv;
	unsigned int fa;
	u32 d;

	fa = hnd_open(f, 0);
	d = hnd_device(f, fa);
	ac.device = d;
	KUNIT_ASSERT_EQ(test, hnd_ioctl(f, fa, nfence_alloc_create_ioctl, &ac),
			0);
	uq.device = d;
	uq.context = hnd_context(f, fa, d);
	KUNIT_ASSERT_EQ(test, hnd_ioctl(f, fa, nfence_hwqueue_create_ioctl,
					&uq), 0);
	db.device = d;
	db.hwqueue = uq.handle;
	db.ring_alloc = ac.handle;

	/* A create that fails once the doorbell is mappable: no control. */
	db.ring_control_alloc = U32_MAX;
	KUNIT_EXPECT_EQ(test, hnd_doorbell_create_peek(f, fa, &db), -ENOENT);
	KUNIT_EXPECT_EQ(test, hnd_table(f, fa, NFENCE_OBJ_DOORBELL)->count, 0);

	/* One that succeeds: its ring starts disconnected all the same. */
	db.ring_control_alloc = 0;
	KUNIT_EXPECT_EQ(test, hnd_doorbell_create_peek(f, fa, &db), 0);
	KUNIT_EXPECT_EQ(test, hnd_table(f, fa, NFENCE_OBJ_DOORBELL)->count, 1);
}
#endif

static struct kunit_case nfence_handles_cases[] = {
	KUNIT_CASE(hnd_create_destroy),
	KUNIT_CASE(hnd_vram_values_packed),
	KUNIT_CASE(hnd_slot_placement),
	KUNIT_CASE(hnd_vram_values_charged),
	KUNIT_CASE(hnd_demote_walks_only_for_shared_vram),
	KUNIT_CASE(hnd_per_file_cyclic),
	KUNIT_CASE(hnd_share_open),
	KUNIT_CASE_PARAM(hnd_last_reference, hnd_order_gen),
	KUNIT_CASE(hnd_orphan_releases_waiters),
	KUNIT_CASE(hnd_interrupt_log_overrun),
	KUNIT_CASE(hnd_device_destroy_closes),
	KUNIT_CASE(hnd_file_close),
	KUNIT_CASE(hnd_progress_fence),
	KUNIT_CASE(hnd_cross_creator_first),
	KUNIT_CASE(hnd_cross_instance_first),
	KUNIT_CASE(hnd_cross_instance_handle_gone),
	KUNIT_CASE(hnd_cross_instance_limit),
	KUNIT_CASE(hnd_cross_value_map),
	KUNIT_CASE(hnd_demote_no_signal),
	KUNIT_CASE(hnd_demote_shared),
	KUNIT_CASE(hnd_demote_closing_file),
	KUNIT_CASE(hnd_demote_maps_wait),
	KUNIT_CASE(hnd_irq_log_closed_handle),
#ifdef NFENCE_HAVE_KUNIT_STATIC_STUB
	KUNIT_CASE(hnd_race_create_vs_error),
	KUNIT_CASE(hnd_race_create_vs_destroy),
	KUNIT_CASE(hnd_race_alloc_vs_destroy),
	KUNIT_CASE(hnd_race_queue_vs_fault),
	KUNIT_CASE(hnd_race_queue_vs_lost),
	KUNIT_CASE(hnd_demote_signal_window),
	KUNIT_CASE(hnd_demote_read_window),
#endif
	KUNIT_CASE(hnd_adapter_unplug),
#ifdef NFENCE_HAVE_KUNIT_STATIC_STUB
	KUNIT_CASE(hnd_cmp_last_reference),
	KUNIT_CASE(hnd_doorbell_new_maps_dummy),
	KUNIT_CASE(hnd_device_error_own_fences),
	KUNIT_CASE(hnd_device_error_again_walks_nothing),
	KUNIT_CASE(hnd_cross_scan_once_per_group),
	KUNIT_CASE(hnd_demote_batched),
#endif
	KUNIT_CASE(hnd_window_pages),
	{}
};

static struct kunit_suite nfence_handles_suite = {
	.name = "nfence_handles",
	.init = hnd_init,
	.exit = hnd_exit,
	.test_cases = nfence_handles_cases,
};

kunit_test_suite(nfence_handles_suite);
