// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>
#include <drm/nfence_drm.h>

#include "nfence_cmp.h"
#include "nfence_compat.h"
#include "nfence_alloc.h"
#include "nfence_caps.h"
#include "nfence_cmp_ops.h"
#include "nfence_context.h"
#include "nfence_debugfs.h"
#include "nfence_device.h"
#include "nfence_device_state.h"
#include "nfence_doorbell.h"
#include "nfence_drv.h"
#include "nfence_fence.h"
#include "nfence_hwqueue.h"
#include "nfence_logging.h"
#include "nfence_params.h"
#include "nfence_peer.h"
#include "nfence_pm.h"
#include "nfence_signal.h"
#include "nfence_submit.h"
#include "nfence_syncobj.h"
#include "nfence_wait.h"
#include "nfence_window.h"

/**
 * DOC: nfence
 *
 * nfence brings the WDDM 3.1/3.2 native GPU fence and user-mode work
 * submission model to Linux. It drives a simulated GPU (see nfence_gpu.c):
 * memory segments backed by kernel memory, engines, a timestamp clock and a
 * context management processor (CMP) that runs as a kernel thread.
 *
 * Each simulated adapter is a platform device "nfence.<index>" with one DRM
 * device, named "nfence", that has a render node. Module parameters choose
 * how many adapters there are and what each is built with (see "module
 * parameters": each adapter can be configured on its own).
 *
 * "WDDM" in the comments means what Microsoft's driver documentation says of
 * it: the pages "Native GPU fence object", "User-mode work submission",
 * "Context monitoring" and the D3DKMT reference (D3DKMTCreateNativeFence
 * and the rest), on learn.microsoft.com.
 */

/**
 * DOC: lock order
 *
 * Outer to inner; the one place it is written down (Documentation/ pulls it
 * from here):
 *
 * 1. &nfence_adapter.clients_lock (held by a demotion of fence storage,
 *    nfence_fence_vram_demote(), while it moves fence values out of VRAM:
 *    each file's &nfence_file.pool_lock to take a page off its pool,
 *    released before &nfence_adapter.maps_lock, which it holds for
 *    writing with &nfence_cmp.lock inside, under which it takes levels 4
 *    to 6; postclose takes it alone), then &nfence_file.async_lock (an
 *    unplug ends every file's waits and syncobj bindings) or
 *    &nfence_file.sched_lock (also the registry's lock: the close walks of
 *    DOC: object registry hold it while they close every kind of object,
 *    allocations and local fence handles included)
 * 2. &nfence_adapter.doorbell_lock (also taken by a doorbell page fault,
 *    under the mm's mmap lock; the i_mmap lock and the CPU page table
 *    locks of zapping a doorbell's mappings nest inside it, and so does
 *    the completion that lets the next waiting DOORBELL_CONNECT go, a
 *    wait queue of level 7);
 *    apart from it, &nfence_adapter.maps_lock (never both: read by the
 *    handle creates and closes that make or drop value maps, which take
 *    &nfence_file.pool_lock inside it; written by a demotion, above)
 * 3. &nfence_file.pool_lock, &nfence_cmp.lock (never both); apart from
 *    them, &nfence_fence_window.lock (a file's CPU window: taken by its
 *    page fault, under the mm's mmap lock, and by a handle's create and
 *    close; the CPU page table locks of inserting a page, and the i_mmap
 *    and page table locks of zapping one, nest inside it)
 * 4. &nfence_vm.lock, &nfence_segment.lock (never both: an allocation's
 *    free unmaps it from its address space, then gives its range back)
 * 5. &nfence_fence_page.lock, the xarray locks of the file's handle tables
 *    (&nfence_file.objects), of its page slots (&nfence_vm.slots) and of
 *    &nfence_adapter.fences, the bucket locks of the file's hash table of
 *    value maps (&nfence_file.value_maps, taken under its pool_lock);
 *    then
 *    &nfence_xgroup.lock (a cross-adapter fence's instances) inside them
 * 6. &nfence_waitlist.lock (a fence's waiters); never two at once. Or,
 *    never with one, &nfence_peer_bell.lock (a GPU's peer doorbell: taken
 *    by another adapter's engine under that adapter's &nfence_cmp.lock,
 *    and by its own CMP to empty it; DOC: peer signals)
 * 7. the scheduler's locks of waking a blocking wait's task
 *    (wake_up_process(), when the wait completes), the eventfd locks of
 *    completing an asynchronous one, the workqueue locks of queueing a
 *    completion's work item (a syncobj binding's too: its callback takes
 *    no other lock) or of the device's last reference, handed on by the
 *    CMP thread (nfence_adapter_put()), and wait queue locks (the CMP's,
 *    nfence_cmp_kick(); a struct completion's); apart from these levels,
 *    a foreign dma_fence's lock nests inside &nfence_file.async_lock
 *    (below)
 *
 * A syncobj binding's point is attached by a work item (nfence_syncobj.c)
 * holding none of these locks: drm_syncobj_add_point() takes the syncobj's
 * lock and wakes its waiters, and the work then takes
 * &nfence_file.async_lock alone. A DRM_IOCTL_NFENCE_SYNCOBJ_SIGNAL adds and
 * removes its callback on a foreign dma_fence under
 * &nfence_file.async_lock (the dma_fence's lock nests inside it); the
 * callback, under the dma_fence's lock, only queues a work item, which
 * signals the native fence holding none of these locks.
 *
 * The CMP thread runs commands holding &nfence_cmp.lock and takes 4-7
 * inside it (translating GPU VAs, signalling fences, raising the native
 * fence signaled interrupt). So nothing may take &nfence_cmp.lock while it
 * holds a lock of level 4 or deeper; waiter callbacks that must tell the
 * CMP something use atomics and nfence_cmp_kick(), which takes no lock of
 * levels 1-6.
 *
 * Runtime PM calls that may resume the adapter (pm_runtime_resume_and_get())
 * are made holding none of these locks: the runtime suspend and resume
 * callbacks (nfence_pm.c) take levels 2 and 3.
 */

/* The platform devices module load registered, bound or not. */
static struct platform_device *nfence_pdevs[NFENCE_MAX_ADAPTERS];

static int nfence_open(struct drm_device *drm, struct drm_file *file)
{
	struct nfence_adapter *adapter = to_nfence_adapter(drm);
	struct nfence_file *nfile;
	int ret;

	nfile = kzalloc(sizeof(*nfile), GFP_KERNEL_ACCOUNT);
	if (!nfile)
		return -ENOMEM;
	nfile->seg_usage = nfence_segment_usage_create();
	if (!nfile->seg_usage) {
		kfree(nfile);
		return -ENOMEM;
	}

	nfile->adapter = adapter;
	nfile->drm_file = file;
	nfile->tgid = task_tgid_nr(current);
	get_task_comm(nfile->comm, current);
	nfence_registry_init(&nfile->objects, &nfile->sched_lock);
	nfence_file_devices_init(nfile);
	ret = nfence_file_fences_init(nfile);
	if (ret) {
		nfence_segment_usage_put(nfile->seg_usage);
		kfree(nfile);
		return ret;
	}
	nfence_file_waits_init(nfile);
	nfence_file_bindings_init(nfile);
	nfence_file_allocs_init(nfile);
	nfence_file_sched_init(nfile);
	nfence_file_doorbells_init(nfile);
	file->driver_priv = nfile;

	mutex_lock(&adapter->clients_lock);
	list_add_tail(&nfile->link, &adapter->clients);
	mutex_unlock(&adapter->clients_lock);
	return 0;
}

/*
 * Whether @nfile goes with the process that opened it, killed by a signal
 * or crashed, rather than exiting or closing it. When that process drops
 * the last reference itself, the last fput() runs in its exiting task,
 * and only a fatal signal leaves its number in the low bits of
 * group_exit_code (exit() leaves its status shifted left by 8). Not seen
 * as killed, and so left alone as a normal close: a file whose last
 * reference another process holds (an fd inherited through fork() or
 * passed over a socket), or that another task drops (a reader of /proc
 * pinning the killed process's mm, which holds its mappings' files).
 */
static bool nfence_closed_by_killed_opener(struct nfence_file *nfile)
{
	return (current->flags & PF_EXITING) && current->tgid == nfile->tgid &&
	       (READ_ONCE(current->signal->flags) & SIGNAL_GROUP_EXIT) &&
	       (READ_ONCE(current->signal->group_exit_code) & 0x7f);
}

/**
 * DOC: process termination
 *
 * As on Windows, a process that ends abnormally (a fatal signal: kill -9,
 * a crash) has its devices put in error when its file goes, before
 * anything is torn down: every fence its devices created becomes
 * AlwaysSignaled, for every holder in every process and on every adapter
 * (its CPU waiters are released, GPU waits on it pass, cross-adapter
 * instances follow), and its queues stop: the work they held is dropped,
 * nothing is waited for. A process that exits or closes its file normally
 * has the work its queues hold run first, kernel-mode submissions and
 * doorbell rings alike, within a bounded exit wait (see DOC: kernel-mode
 * submission); its shared fences stay usable and unsignaled in
 * the processes that opened them, but for the signals that work makes.
 */
static void nfence_file_killed(struct nfence_file *nfile)
{
	struct nfence_object *obj;
	unsigned long handle;

	/* postclose: nobody else uses the file's tables any more. */
	nfence_table_for_each(nfence_file_table(nfile, NFENCE_OBJ_DEVICE),
			      handle, obj)
		nfence_device_lost(&nfile->adapter->cmp,
				   container_of(obj, struct nfence_device, obj),
				   DRM_NFENCE_DEVICE_ERROR_LOST);
}

static void nfence_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct nfence_adapter *adapter = to_nfence_adapter(drm);
	struct nfence_file *nfile = to_nfence_file(file);

	/*
	 * Off the list of open files; a demotion of fence storage still
	 * moves its maps of shared fences' values until its handles are
	 * closed (DOC: demoting fence storage).
	 */
	mutex_lock(&adapter->clients_lock);
	list_move_tail(&nfile->link, &adapter->closing);
	mutex_unlock(&adapter->clients_lock);

	if (nfence_closed_by_killed_opener(nfile)) {
		nfence_file_killed(nfile);
		/* A killed process's bindings and signals act no more. */
		nfence_file_bindings_fini(nfile);
	}

	/* Its asynchronous waits: the process waits for nothing now. */
	nfence_file_waits_cancel(nfile);
	/*
	 * The exit wait: what the queues hold runs first, while the file's
	 * syncobj bindings and pending signals still act on what it does;
	 * those still pending end after it.
	 */
	nfence_file_drain(nfile);
	nfence_file_bindings_fini(nfile);
	nfence_file_waits_fini(nfile);
	/* Every object, in the registry's order: doorbells, queues first. */
	nfence_registry_close_all(&nfile->objects);
	mutex_lock(&adapter->clients_lock);
	list_del(&nfile->link);
	mutex_unlock(&adapter->clients_lock);
	nfence_file_fences_fini(nfile);
	nfence_file_window_fini(nfile);
	nfence_registry_fini(&nfile->objects);
	/* Allocations still mapped keep theirs charged until they go. */
	nfence_segment_usage_put(nfile->seg_usage);
	kfree(nfile);
	file->driver_priv = NULL;
}

static const struct drm_ioctl_desc nfence_ioctls[] = {
	DRM_IOCTL_DEF_DRV(NFENCE_QUERY, nfence_query_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_DEVICE_CREATE, nfence_device_create_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_DEVICE_DESTROY, nfence_device_destroy_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_FENCE_CREATE, nfence_fence_create_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_FENCE_DESTROY, nfence_fence_destroy_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_FENCE_SHARE, nfence_fence_share_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_FENCE_OPEN, nfence_fence_open_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_FENCE_WAIT, nfence_fence_wait_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_FENCE_SIGNAL, nfence_fence_signal_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_ALLOC_CREATE, nfence_alloc_create_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_ALLOC_DESTROY, nfence_alloc_destroy_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_ALLOC_LOCK, nfence_alloc_lock_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_CONTEXT_CREATE, nfence_context_create_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_CONTEXT_DESTROY, nfence_context_destroy_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_CONTEXT_CONTROL, nfence_context_control_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_HWQUEUE_CREATE, nfence_hwqueue_create_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_HWQUEUE_DESTROY, nfence_hwqueue_destroy_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_SUBMIT, nfence_submit_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_SUBMIT_WAIT, nfence_submit_wait_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_SUBMIT_SIGNAL, nfence_submit_signal_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_DOORBELL_CREATE, nfence_doorbell_create_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_DOORBELL_CONNECT,
			  nfence_doorbell_connect_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_DOORBELL_DESTROY,
			  nfence_doorbell_destroy_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_DOORBELL_NOTIFY, nfence_doorbell_notify_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_LOG_READ, nfence_log_read_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_LOGGING_LEVEL, nfence_logging_level_ioctl,
			  DRM_ROOT_ONLY | DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_DEVICE_CONTROL, nfence_device_control_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_SYNCOBJ_BIND, nfence_syncobj_bind_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_SYNCOBJ_SIGNAL, nfence_syncobj_signal_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NFENCE_FENCE_WINDOW, nfence_window_ioctl,
			  DRM_RENDER_ALLOW),
};

DEFINE_DRM_GEM_FOPS(nfence_fops);

static const struct drm_driver nfence_drm_driver = {
	.driver_features = DRIVER_GEM | DRIVER_RENDER | DRIVER_SYNCOBJ |
			   DRIVER_SYNCOBJ_TIMELINE,
	.open = nfence_open,
	.postclose = nfence_postclose,
	.ioctls = nfence_ioctls,
	.num_ioctls = ARRAY_SIZE(nfence_ioctls),
	.fops = &nfence_fops,
	.debugfs_init = nfence_debugfs_init,
	.name = DRIVER_NAME,
	.desc = DRIVER_DESC,
	NFENCE_DRIVER_DATE
	.major = DRIVER_MAJOR,
	.minor = DRIVER_MINOR,
};

static void nfence_gpu_release(struct drm_device *drm, void *data)
{
	struct nfence_adapter *adapter = data;

	/* Other GPUs no longer wake the CMP (DOC: peer signals). */
	if (adapter->gpu.bell)
		nfence_peer_bell_attach(adapter->gpu.bell, NULL, NULL);
	/* And then the F1 work (nfence_doorbell_adapter_fini()). */
	nfence_cmp_stop(&adapter->cmp);
	nfence_gpu_fini(&adapter->gpu);
	/* Every fence held a reference on the device: none is left. */
	WARN_ON(!xa_empty(&adapter->fences));
	xa_destroy(&adapter->fences);
	destroy_workqueue(adapter->wait_wq);
}

/*
 * Build the adapter of a platform device being probed, not registered yet:
 * its DRM device (released with the device's devres when it is unbound)
 * and its GPU (released with the DRM device, which open files may keep
 * past unbind).
 */
static struct nfence_adapter *
nfence_adapter_init(struct platform_device *pdev,
		    const struct nfence_gpu_config *cfg)
{
	struct nfence_adapter *adapter;
	u32 index = pdev->id;
	char name[16];
	int ret;

	adapter = devm_drm_dev_alloc(&pdev->dev, &nfence_drm_driver,
				     struct nfence_adapter, drm);
	if (IS_ERR(adapter))
		return adapter;
	ret = nfence_adapter_track(adapter);
	if (ret)
		return ERR_PTR(ret);
	adapter->pdev = pdev;
	INIT_LIST_HEAD(&adapter->clients);
	INIT_LIST_HEAD(&adapter->closing);
	init_rwsem(&adapter->maps_lock);
	nfence_doorbell_adapter_init(adapter);
	atomic_set(&adapter->num_devices, 0);
	atomic_set(&adapter->vram_shared_values, 0);
	ret = drmm_mutex_init(&adapter->drm, &adapter->doorbell_lock);
	if (!ret)
		ret = drmm_mutex_init(&adapter->drm, &adapter->clients_lock);
	if (ret)
		return ERR_PTR(ret);

	xa_init_flags(&adapter->fences, XA_FLAGS_ALLOC1);
	adapter->wait_wq = alloc_workqueue("nfence-wait/%u", WQ_UNBOUND, 0,
					   index);
	if (!adapter->wait_wq)
		return ERR_PTR(-ENOMEM);

	snprintf(name, sizeof(name), "%u", index);
	ret = nfence_gpu_init(&adapter->gpu, cfg, index);
	if (ret) {
		destroy_workqueue(adapter->wait_wq);
		return ERR_PTR(ret);
	}
	ret = nfence_cmp_start(&adapter->cmp, &adapter->gpu,
			       &nfence_driver_cmp_ops, name);
	if (ret) {
		nfence_gpu_fini(&adapter->gpu);
		destroy_workqueue(adapter->wait_wq);
		return ERR_PTR(ret);
	}
	if (adapter->gpu.bell)
		nfence_peer_bell_attach(adapter->gpu.bell, &adapter->cmp,
					nfence_cmp_kick);
	/* The GPU lives as long as the DRM device: open files may outlive unbind. */
	ret = drmm_add_action_or_reset(&adapter->drm, nfence_gpu_release,
				       adapter);
	if (ret)
		return ERR_PTR(ret);
	return adapter;
}

/*
 * What unplugging does to the devices of a file that is still open: each
 * goes through the device-lost path, so that its fences become
 * AlwaysSignaled for every holder and its queues and doorbells stop.
 * Called with &nfence_adapter.clients_lock held, which keeps postclose
 * from tearing the file down meanwhile.
 */
static void nfence_file_devices_unplugged(struct nfence_file *nfile)
{
	struct nfence_device *wdev;
	struct nfence_object *obj;
	unsigned long handle;

	nfence_table_for_each(nfence_file_table(nfile, NFENCE_OBJ_DEVICE),
			      handle, obj) {
		/* A DEVICE_DESTROY in flight may be freeing it: take a ref. */
		wdev = nfence_device_lookup(nfile, handle);
		if (!wdev)
			continue;
		nfence_device_lost(&nfile->adapter->cmp, wdev,
				   DRM_NFENCE_DEVICE_ERROR_LOST);
		nfence_device_put(wdev);
	}
}

/**
 * DOC: unplug
 *
 * Each adapter is a platform device "nfence.<index>" bound to the platform
 * driver "nfence", so it can be unbound and bound again through
 * /sys/bus/platform/drivers/nfence/{unbind,bind} with files still open
 * (module exit unbinds every adapter the same way). Unbinding unplugs the
 * DRM device (drm_dev_unplug()): its nodes go, and from then on every
 * ioctl and mmap on a file still open fails with -ENODEV, in DRM core or
 * in the driver's
 * drm_dev_enter() sections (which creating ioctls, submissions and waits
 * are in, so that none straddles the unplug). Then every blocked and
 * asynchronous wait of the files still open returns -ENODEV, and each of
 * their devices is lost as on a GPU hang: the fences they created and
 * still hold become AlwaysSignaled for every holder (other processes,
 * other adapters), queues leave the runlists with their work dropped,
 * doorbells go DISCONNECTED_ABORT. (A fence whose creating handle was
 * destroyed before the unplug belongs to no device any more and is left
 * as it is, as on a GPU hang.) drm_dev_unplug() zaps
 * every CPU mapping; the fault handlers put the same pages back (fence
 * values, allocations, doorbell status: kernel memory that the mapping
 * keeps alive), so mappings stay valid until unmapped. The simulated GPU
 * goes when the last file and the last fence let go of the DRM device.
 * Binding again makes a new adapter (a new DRM device, a new LUID) with
 * the same configuration.
 */
static void nfence_adapter_unplug(struct nfence_adapter *adapter)
{
	struct nfence_file *nfile;

	drm_dev_unplug(&adapter->drm);
	/*
	 * Other GPUs no longer ring it (DOC: peer signals): an unplugged
	 * adapter has no waiter left to tell, and its CMP thread need not be
	 * kept at work (a scan there that drops the device's last reference
	 * hands it on: DOC: the device's last reference).
	 */
	if (adapter->gpu.bell)
		nfence_peer_bell_attach(adapter->gpu.bell, NULL, NULL);
	/* Every drm_dev_enter() section is over: no new wait, device, queue. */
	mutex_lock(&adapter->clients_lock);
	/* Every wait first, so that none ends seeing a fence signaled. */
	list_for_each_entry(nfile, &adapter->clients, link) {
		nfence_file_waits_abort(nfile, -ENODEV);
		nfence_file_bindings_abort(nfile, -ENODEV);
	}
	list_for_each_entry(nfile, &adapter->clients, link)
		nfence_file_devices_unplugged(nfile);
	mutex_unlock(&adapter->clients_lock);
}

static int nfence_probe(struct platform_device *pdev)
{
	const struct nfence_gpu_config *cfg = dev_get_platdata(&pdev->dev);
	struct nfence_adapter *adapter;
	int ret;

	/* Platform data is a configuration only on our own devices. */
	if (strcmp(pdev->name, DRIVER_NAME) || !cfg || pdev->id < 0)
		return -ENODEV;
	adapter = nfence_adapter_init(pdev, cfg);
	if (IS_ERR(adapter))
		return PTR_ERR(adapter);
	platform_set_drvdata(pdev, adapter);
	/* Active before user space can submit anything. */
	ret = nfence_pm_init(adapter);
	if (!ret)
		ret = drm_dev_register(&adapter->drm, 0);
	if (ret)
		platform_set_drvdata(pdev, NULL);
	return ret;
}

static void nfence_remove(struct platform_device *pdev)
{
	nfence_adapter_unplug(platform_get_drvdata(pdev));
}

static struct platform_driver nfence_platform_driver = {
	.probe = nfence_probe,
	NFENCE_PLATFORM_REMOVE(nfence_remove)
	.driver = {
		.name = DRIVER_NAME,
		.pm = pm_ptr(&nfence_pm_ops),
		/* nfence_adapter_create() reads the adapter right after. */
		.probe_type = PROBE_FORCE_SYNCHRONOUS,
	},
};

/**
 * nfence_adapter_create - register and bind one simulated adapter
 * @index: adapter index: the id of its platform device and of its GPU
 * @cfg: what the adapter is built with (copied as the device's platform
 *	data, which a later bind uses again)
 *
 * What module load does for each adapter. The KUnit suites make adapters of
 * their own with it, to open files on and to unplug.
 *
 * Return: the adapter, its DRM device registered, or an ERR_PTR (-ENODEV if
 * the probe failed; the kernel log says why).
 */
struct nfence_adapter *
nfence_adapter_create(u32 index, const struct nfence_gpu_config *cfg)
{
	struct platform_device *pdev;
	struct nfence_adapter *adapter;

	pdev = platform_device_register_data(NULL, DRIVER_NAME, index, cfg,
					     sizeof(*cfg));
	if (IS_ERR(pdev))
		return ERR_CAST(pdev);
	/*
	 * Probed synchronously; the driver core clears drvdata on failure
	 * and on unbind, under the device lock.
	 */
	device_lock(&pdev->dev);
	adapter = platform_get_drvdata(pdev);
	device_unlock(&pdev->dev);
	if (!adapter) {
		platform_device_unregister(pdev);
		return ERR_PTR(-ENODEV);
	}
	return adapter;
}

/**
 * nfence_adapter_destroy - unbind and unregister an adapter
 * @adapter: an adapter from nfence_adapter_create(), still bound
 *
 * Unbinding unplugs it (see "unplug"). The DRM device, and with it the
 * GPU, lives on until the last open file and the last fence let go of it.
 */
void nfence_adapter_destroy(struct nfence_adapter *adapter)
{
	platform_device_unregister(adapter->pdev);
}

static void nfence_unregister_adapters(void)
{
	int i;

	for (i = NFENCE_MAX_ADAPTERS - 1; i >= 0; i--) {
		/* Bound or not (a user may have unbound it): it goes. */
		if (nfence_pdevs[i])
			platform_device_unregister(nfence_pdevs[i]);
		nfence_pdevs[i] = NULL;
	}
}

/*
 * Undo nfence_init() once the platform driver is registered: at module
 * exit, and when registering an adapter fails (adapters registered before
 * it were open to clients, who may have made peer tables meanwhile).
 */
static void nfence_unload(void)
{
	nfence_unregister_adapters();
	platform_driver_unregister(&nfence_platform_driver);
	/* A CMP thread may hold an unplugged adapter's last fence. */
	nfence_adapters_fini();
	/* Peer tables are freed after a grace period (DOC: peer signals). */
	rcu_barrier();
	nfence_fence_caches_fini();
}

static int __init nfence_init(void)
{
	static struct nfence_gpu_config cfgs[NFENCE_MAX_ADAPTERS] __initdata;
	int i, num, ret;

	num = nfence_params_read(cfgs);
	if (num < 0)
		return num;

	ret = nfence_fence_caches_init();
	if (ret)
		return ret;
	ret = nfence_adapters_init();
	if (ret) {
		nfence_fence_caches_fini();
		return ret;
	}
	ret = platform_driver_register(&nfence_platform_driver);
	if (ret) {
		nfence_adapters_fini();
		nfence_fence_caches_fini();
		return ret;
	}
	/*
	 * As for any driver, a device that fails to probe stays unbound
	 * (the kernel log says why) and the module stays loaded. The
	 * platform data is a copy: a later bind builds the same adapter.
	 */
	for (i = 0; i < num; i++) {
		struct platform_device *pdev;

		pdev = platform_device_register_data(NULL, DRIVER_NAME, i,
						     &cfgs[i], sizeof(cfgs[i]));
		if (IS_ERR(pdev)) {
			nfence_unload();
			return PTR_ERR(pdev);
		}
		nfence_pdevs[i] = pdev;
	}
	return 0;
}

static void __exit nfence_exit(void)
{
	nfence_unload();
}

module_init(nfence_init);
module_exit(nfence_exit);

MODULE_AUTHOR("The nfence authors");
MODULE_DESCRIPTION(DRIVER_DESC);
MODULE_LICENSE("GPL");
