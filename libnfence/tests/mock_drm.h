/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * A fake nfence driver for host tests. The test program defines ioctl(),
 * mmap() and close(), which take precedence over libc's for libdrm and
 * libnfence too: ioctls on the regular files registered here (fake render
 * nodes) behave as the kernel contract (.notes/kernel-contract.md) says,
 * and mmap() of them maps fence pages; every other file descriptor goes to
 * libc. Fence values live in a memfd shared with forked children, so a
 * child's signal reaches its parent's wait; a shared fence's NT handle is
 * a duplicate of a memfd standing for the fence, which readlink() of
 * /proc/self/fd (defined here too) names as the kernel's fence file.
 */
#ifndef _NFENCE_MOCK_DRM_H_
#define _NFENCE_MOCK_DRM_H_

#include <stdbool.h>
#include <stdint.h>

/* The module parameters one fake adapter reflects. */
struct mock_adapter {
	const char *driver_name;	/* "nfence", or another driver */
	uint32_t index;
	uint32_t luid_low, luid_high;
	uint32_t num_engines;
	uint32_t vram_mb, vram_visible_mb, sysmem_mb;
	/* per-file quotas in MiB, 0 for none (client_vram_mb, _sysmem_mb) */
	uint32_t client_vram_mb, client_sysmem_mb;
	bool native_fences, optimized_default_fence, user_mode_submission;
	bool no_64bit_atomics, peer_signals;
	uint32_t doorbell_model, num_doorbells;
	/* engines (a bit per ordinal) without user-mode submission */
	uint32_t no_ums_engines;
};

/* A fake adapter with the module's default parameters. */
struct mock_adapter mock_default_adapter(uint32_t index);

/* Create regular file @dir/@name and make it a node of @adapter. */
int mock_add_node(const char *dir, const char *name,
		  const struct mock_adapter *adapter);

/* Forget every fake node (the files stay). */
void mock_reset(void);

/* Number of open file descriptors of this process on fake nodes. */
unsigned int mock_open_files(void);

/* Live devices over all open files. */
unsigned int mock_live_devices(void);

/* Local fence handles over all open files. */
unsigned int mock_live_fences(void);

/* Live allocations, contexts and hardware queues over all open files. */
unsigned int mock_live_allocations(void);
unsigned int mock_live_contexts(void);
unsigned int mock_live_queues(void);

/* Queued submissions not yet run (blocked or suspended) over all queues. */
unsigned int mock_pending(void);

/* The kernel handle of the last fence handle made (create or open). */
uint32_t mock_last_fence_handle(void);

/* The flags of the last hardware queue created. */
uint32_t mock_last_hwqueue_flags(void);

/* The last syncobj bridge call the fake driver accepted (see mock_drm.c). */
struct mock_bridge_call {
	unsigned int nr;		/* DRM_NFENCE_SYNCOBJ_BIND or _SIGNAL */
	uint32_t device, fence;		/* kernel handles */
	uint64_t value;
	uint32_t syncobj;
	int32_t fd;
	uint64_t point;
	uint32_t flags;
};
struct mock_bridge_call mock_last_bridge_call(void);

/* Calls so far of nfence ioctl number @nr (DRM_NFENCE_*), any file. */
unsigned int mock_ioctl_calls(unsigned int nr);

/* Blocking fence waits a signal handler interrupted (returned EINTR). */
unsigned int mock_wait_interrupts(void);

/* Make the next nfence ioctl on any fake node fail with @err. */
void mock_fail_next(int err);

/*
 * Make the next LOGGING_LEVEL that sets a level fail with @err after
 * setting it, as the kernel does when a queue's new log buffers cannot be
 * made (ENOMEM, ENOSPC).
 */
void mock_fail_logging_buffers(int err);

/*
 * Whether FENCE_WINDOW exists (the default), from the next call on;
 * without it the call fails as on a kernel that does not know it.
 */
void mock_set_window(bool supported);

/*
 * How the next mmap() of a CPU window fails (mock_fail_window_map()), as
 * the kernel fails a mapping: MOCK_MAP_FAIL_KEEP for an error found before
 * anything changes (a MAP_FIXED range keeps what it held);
 * MOCK_MAP_FAIL_UNMAP for one of the driver's mmap, after a MAP_FIXED
 * range was unmapped; MOCK_MAP_FAIL_TAKEN as UNMAP, and then another
 * thread maps a page of its own at the address asked for.
 */
enum mock_map_fail {
	MOCK_MAP_OK,
	MOCK_MAP_FAIL_KEEP,
	MOCK_MAP_FAIL_UNMAP,
	MOCK_MAP_FAIL_TAKEN,
};

/* Make the next mmap() of a CPU window fail with @err, as @how says. */
void mock_fail_window_map(enum mock_map_fail how, int err);

/*
 * The page "another thread" mapped at the last MOCK_MAP_FAIL_TAKEN
 * (read-write, its first 8 bytes MOCK_TAKEN_MARK), NULL if none was
 * asked for or the address was not free. The caller unmaps it.
 */
#define MOCK_TAKEN_MARK		0x6f746865722d6d6dull
void *mock_window_taken(void);

#endif /* _NFENCE_MOCK_DRM_H_ */
