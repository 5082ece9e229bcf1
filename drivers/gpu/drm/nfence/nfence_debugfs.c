// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <drm/drm_debugfs.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>

#include "nfence_adapter.h"
#include "nfence_cmp.h"
#include "nfence_debugfs.h"
#include "nfence_device.h"
#include "nfence_device_state.h"
#include "nfence_doorbell.h"
#include "nfence_fence.h"
#include "nfence_hwqueue.h"
#include "nfence_signal.h"

/**
 * DOC: debugfs
 *
 * Each adapter has, under /sys/kernel/debug/dri/<card minor>/:
 *
 * - nfence_adapter: configuration, LUID, live device and client counts,
 *   the physical doorbells DOORBELL_CONNECT bound (connect_binds) and the
 *   most that other connects bound while one waited (connect_most_ahead);
 * - nfence_segments: id, flags, size, CPU-visible size and use of each
 *   segment, one block of lines per segment, blocks separated by a blank line;
 * - nfence_cmp: CMP thread state, pid, wakeups, passes, commands run,
 *   contexts faulted and hangs detected, the doorbell rings taken, the
 *   times the CMP went quiet, its looks at the doorbells while spinning
 *   (spins) and its choices to poll them instead (polls), the longest
 *   pass and the longest hold of the CMP lock (by anyone) since the last
 *   reset, the most queues a pass looked at under one hold of it
 *   (longest_visits) and the most commands one engine ran in one pass
 *   (most_pass_commands);
 * - nfence_queues: one line per hardware queue: id, owner pid, device,
 *   context, engine, state, pending submissions, progress fence value;
 * - nfence_clients: one line per open file with its process, the number
 *   of its devices, fence handles and allocations, and the bytes of the
 *   system and local segments its allocations hold (the quotas' count);
 * - nfence_fences: one line per global fence: id, type, the CPU mmap offset
 *   and value offset of CurrentValue, CurrentValue, MonitoredValue, waiters;
 * - nfence_interrupts: the native fence interrupt path counters, and the
 *   most fences a scan (an interrupt without a payload) looked at under
 *   one hold of the fence table's lock since the last reset
 *   (longest_scan);
 * - nfence_device_error (write-only): "PID HANDLE" puts that device of that
 *   process in error, for tests of the device-lost paths;
 * - nfence_engine_f1 (write-only): "ENGINE" puts that engine in F1, as if
 *   it had been idle for f1_idle_ms, for tests of the doorbell paths;
 * - nfence_f1_hold: "hold" holds the F1 work (the transitions the CMP asks
 *   for after f1_idle_ms) before it looks at the engines, "step" lets its
 *   waiting run go once and returns when that run is done, "release" lets
 *   it go; reading says whether it is held ("hold: 1") and whether a run
 *   waits ("waiting: 1"). For tests of what happens between the CMP's ask
 *   and the transition (&struct nfence_f1_hold);
 * - nfence_cmp_reset_max (write-only): any write restarts from 0 the maxima
 *   of nfence_cmp (longest pass, lock hold, queue turns), nfence_interrupts
 *   (longest_scan) and nfence_adapter (connect_most_ahead); the reset's own
 *   hold of the CMP lock is the first hold counted after it.
 *
 * Every file is plain "key: value" text meant for tests and people alike.
 */

static struct nfence_adapter *node_to_adapter(struct seq_file *m)
{
	struct drm_info_node *node = m->private;

	return to_nfence_adapter(node->minor->dev);
}

static int nfence_debugfs_adapter(struct seq_file *m, void *unused)
{
	struct nfence_adapter *adapter = node_to_adapter(m);
	struct drm_printer p = drm_seq_file_printer(m);
	unsigned int clients = 0;
	struct nfence_file *nfile;

	nfence_gpu_print(&adapter->gpu, &p);
	mutex_lock(&adapter->clients_lock);
	list_for_each_entry(nfile, &adapter->clients, link)
		clients++;
	mutex_unlock(&adapter->clients_lock);
	drm_printf(&p, "clients: %u\n", clients);
	drm_printf(&p, "devices: %d\n", atomic_read(&adapter->num_devices));
	drm_printf(&p, "logging_level: %u\n", READ_ONCE(adapter->logging_level));
	nfence_doorbell_print(adapter, &p);
	return 0;
}

static int nfence_debugfs_segments(struct seq_file *m, void *unused)
{
	struct nfence_adapter *adapter = node_to_adapter(m);
	struct drm_printer p = drm_seq_file_printer(m);
	int i;

	for (i = 0; i < NFENCE_NUM_SEGMENTS; i++) {
		if (i)
			drm_puts(&p, "\n");
		nfence_segment_print(&adapter->gpu.segments[i], &p);
	}
	return 0;
}

static int nfence_debugfs_cmp(struct seq_file *m, void *unused)
{
	struct nfence_adapter *adapter = node_to_adapter(m);
	struct drm_printer p = drm_seq_file_printer(m);

	nfence_cmp_print(&adapter->cmp, &p);
	return 0;
}

static int nfence_debugfs_queues(struct seq_file *m, void *unused)
{
	struct nfence_adapter *adapter = node_to_adapter(m);
	struct drm_printer p = drm_seq_file_printer(m);

	nfence_cmp_print_queues(&adapter->cmp, &p);
	return 0;
}

static int nfence_debugfs_clients(struct seq_file *m, void *unused)
{
	struct nfence_adapter *adapter = node_to_adapter(m);
	struct nfence_file *nfile;

	mutex_lock(&adapter->clients_lock);
	list_for_each_entry(nfile, &adapter->clients, link)
		seq_printf(m, "pid %d comm %s devices %u fences %u allocs %u sysmem %llu vram %llu\n",
			   nfile->tgid, nfile->comm,
			   READ_ONCE(nfence_file_table(nfile, NFENCE_OBJ_DEVICE)->count),
			   READ_ONCE(nfence_file_table(nfile, NFENCE_OBJ_FENCE)->count),
			   READ_ONCE(nfence_file_table(nfile, NFENCE_OBJ_ALLOC)->count),
			   nfence_segment_usage_read(nfile->seg_usage,
						     NFENCE_SEGMENT_ID_SYSTEM),
			   nfence_segment_usage_read(nfile->seg_usage,
						     NFENCE_SEGMENT_ID_LOCAL));
	mutex_unlock(&adapter->clients_lock);
	return 0;
}

static int nfence_debugfs_fences(struct seq_file *m, void *unused)
{
	struct drm_printer p = drm_seq_file_printer(m);

	nfence_fences_print(node_to_adapter(m), &p);
	return 0;
}

static int nfence_debugfs_interrupts(struct seq_file *m, void *unused)
{
	struct drm_printer p = drm_seq_file_printer(m);

	nfence_irq_stats_print(node_to_adapter(m), &p);
	return 0;
}

static const struct drm_info_list nfence_debugfs_list[] = {
	{ "nfence_adapter", nfence_debugfs_adapter, 0 },
	{ "nfence_segments", nfence_debugfs_segments, 0 },
	{ "nfence_cmp", nfence_debugfs_cmp, 0 },
	{ "nfence_queues", nfence_debugfs_queues, 0 },
	{ "nfence_clients", nfence_debugfs_clients, 0 },
	{ "nfence_fences", nfence_debugfs_fences, 0 },
	{ "nfence_interrupts", nfence_debugfs_interrupts, 0 },
};

/*
 * The device-lost event, for tests: what a GPU hang does to the device
 * (nfence_device_lost()). 0, or -ENOENT if @handle names no device of
 * @nfile.
 */
static int nfence_debugfs_device_lost(struct nfence_file *nfile, u32 handle)
{
	struct nfence_device *wdev = nfence_device_lookup(nfile, handle);

	if (!wdev)
		return -ENOENT;
	nfence_device_lost(&nfile->adapter->cmp, wdev,
			   DRM_NFENCE_DEVICE_ERROR_LOST);
	nfence_device_put(wdev);
	return 0;
}

/*
 * Test hook: "echo PID HANDLE > nfence_device_error" puts device HANDLE of
 * the file(s) process PID opened in error, as a device-lost event would.
 */
static ssize_t nfence_device_error_write(struct file *filp,
					 const char __user *ubuf, size_t len,
					 loff_t *ppos)
{
	struct nfence_adapter *adapter = filp->private_data;
	struct nfence_file *nfile;
	int pid, ret = -ENOENT;
	u32 handle;
	char buf[32];

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%d %u", &pid, &handle) != 2)
		return -EINVAL;

	mutex_lock(&adapter->clients_lock);
	list_for_each_entry(nfile, &adapter->clients, link) {
		if (nfile->tgid == pid && !nfence_debugfs_device_lost(nfile, handle)) {
			ret = 0;
			break;
		}
	}
	mutex_unlock(&adapter->clients_lock);
	return ret ? ret : len;
}

static const struct file_operations nfence_device_error_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = nfence_device_error_write,
};

/* Test hook: "echo ENGINE > nfence_engine_f1" puts ENGINE in F1. */
static ssize_t nfence_engine_f1_write(struct file *filp,
				      const char __user *ubuf, size_t len,
				      loff_t *ppos)
{
	struct nfence_adapter *adapter = filp->private_data;
	u32 engine;
	int ret;

	ret = kstrtou32_from_user(ubuf, len, 0, &engine);
	if (ret)
		return ret;
	if (engine >= adapter->gpu.cfg.num_engines)
		return -EINVAL;
	nfence_doorbell_engine_f1(adapter, engine);
	return len;
}

static const struct file_operations nfence_engine_f1_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = nfence_engine_f1_write,
};

static int nfence_f1_hold_show(struct seq_file *m, void *unused)
{
	struct drm_printer p = drm_seq_file_printer(m);

	nfence_doorbell_f1_hold_print(m->private, &p);
	return 0;
}

static int nfence_f1_hold_open(struct inode *inode, struct file *filp)
{
	return single_open(filp, nfence_f1_hold_show, inode->i_private);
}

/*
 * Test hook: "hold", "step" or "release" to nfence_f1_hold holds the F1
 * work, lets its waiting run go once (the write returns when it is done),
 * or lets it go.
 */
static ssize_t nfence_f1_hold_write(struct file *filp, const char __user *ubuf,
				    size_t len, loff_t *ppos)
{
	struct nfence_adapter *adapter =
		((struct seq_file *)filp->private_data)->private;
	char buf[16];
	int ret = 0;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sysfs_streq(buf, "hold"))
		nfence_doorbell_f1_hold(adapter, true);
	else if (sysfs_streq(buf, "release"))
		nfence_doorbell_f1_hold(adapter, false);
	else if (sysfs_streq(buf, "step"))
		ret = nfence_doorbell_f1_step(adapter);
	else
		ret = -EINVAL;
	return ret ? ret : len;
}

static const struct file_operations nfence_f1_hold_fops = {
	.owner = THIS_MODULE,
	.open = nfence_f1_hold_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = nfence_f1_hold_write,
};

/* "echo 1 > nfence_cmp_reset_max" restarts the CMP's maxima. */
static ssize_t nfence_cmp_reset_max_write(struct file *filp,
					  const char __user *ubuf, size_t len,
					  loff_t *ppos)
{
	struct nfence_adapter *adapter = filp->private_data;

	nfence_cmp_reset_max(&adapter->cmp);
	nfence_doorbell_reset_max(adapter);
	return len;
}

static const struct file_operations nfence_cmp_reset_max_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = nfence_cmp_reset_max_write,
};

/**
 * nfence_debugfs_init - create the debugfs files of an adapter
 * @minor: the DRM minor whose directory receives them
 */
void nfence_debugfs_init(struct drm_minor *minor)
{
	drm_debugfs_create_files(nfence_debugfs_list,
				 ARRAY_SIZE(nfence_debugfs_list),
				 minor->debugfs_root, minor);
	debugfs_create_file("nfence_device_error", 0200, minor->debugfs_root,
			    to_nfence_adapter(minor->dev),
			    &nfence_device_error_fops);
	debugfs_create_file("nfence_engine_f1", 0200, minor->debugfs_root,
			    to_nfence_adapter(minor->dev), &nfence_engine_f1_fops);
	debugfs_create_file("nfence_f1_hold", 0600, minor->debugfs_root,
			    to_nfence_adapter(minor->dev), &nfence_f1_hold_fops);
	debugfs_create_file("nfence_cmp_reset_max", 0200, minor->debugfs_root,
			    to_nfence_adapter(minor->dev),
			    &nfence_cmp_reset_max_fops);
}
