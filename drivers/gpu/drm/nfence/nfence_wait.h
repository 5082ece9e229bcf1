/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_WAIT_H__
#define __NFENCE_WAIT_H__

#include <linux/atomic.h>
#include <linux/types.h>

struct drm_device;
struct drm_file;
struct drm_printer;
struct nfence_adapter;
struct nfence_fence;
struct nfence_file;

/**
 * struct nfence_irq_stats - what the native fence interrupt path saw
 */
struct nfence_irq_stats {
	/** @signals: fence signals (CPU and GPU) */
	atomic64_t signals;
	/**
	 * @interrupts: interrupts raised: signals that made CurrentValue
	 * exceed MonitoredValue, and carries
	 */
	atomic64_t interrupts;
	/** @suppressed: signals that did not (no interrupt raised) */
	atomic64_t suppressed;
	/** @woken: CPU waiters satisfied */
	atomic64_t woken;
	/** @spurious: interrupts that satisfied no waiter, carries excepted */
	atomic64_t spurious;
	/**
	 * @carries: values a GPU without 64-bit atomics could not store
	 * (their high half changed) and the interrupt path stored
	 * (nfence_interrupt_carry())
	 */
	atomic64_t carries;
};

void nfence_fence_signal(struct nfence_fence *fence, u64 value);
bool nfence_fence_value_allowed(struct nfence_fence *fence, u64 value);
void nfence_interrupt(struct nfence_adapter *adapter,
		      struct nfence_fence **fences, unsigned int count);
void nfence_interrupt_carry(struct nfence_adapter *adapter,
			    struct nfence_fence *fence, u64 value);
void nfence_fence_release_waiters(struct nfence_fence *fence);
void nfence_fence_set_always_signaled(struct nfence_fence *fence);
void nfence_irq_stats_print(struct nfence_adapter *adapter,
			    struct drm_printer *p);

void nfence_file_waits_init(struct nfence_file *nfile);
void nfence_file_waits_fini(struct nfence_file *nfile);
int nfence_fence_wait_ioctl(struct drm_device *drm, void *data,
			    struct drm_file *file);
int nfence_fence_signal_ioctl(struct drm_device *drm, void *data,
			      struct drm_file *file);

#endif /* __NFENCE_WAIT_H__ */
