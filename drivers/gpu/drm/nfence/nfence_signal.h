/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_SIGNAL_H__
#define __NFENCE_SIGNAL_H__

#include <linux/types.h>

struct drm_device;
struct drm_file;
struct drm_printer;
struct nfence_adapter;
struct nfence_device;
struct nfence_fence;
struct nfence_file;
struct nfence_log;
struct nfence_waiter;

void nfence_fence_signal(struct nfence_fence *fence, u64 value);
int nfence_fence_signal_ioctl(struct drm_device *drm, void *data,
			      struct drm_file *file);
bool nfence_fence_value_allowed(struct nfence_fence *fence, u64 value);
struct nfence_fence *nfence_fence_arg_get(struct nfence_file *nfile,
					  u32 device, u32 handle,
					  u32 forbidden, u64 value);
bool nfence_fence_add_waiter(struct nfence_fence *fence,
			     struct nfence_waiter *w);
void nfence_interrupt(struct nfence_adapter *adapter,
		      struct nfence_fence **fences, unsigned int count);
void nfence_interrupt_monitored(struct nfence_fence *fence);
void nfence_interrupt_carry(struct nfence_adapter *adapter,
			    struct nfence_fence *fence, u64 value);
unsigned int nfence_interrupt_log(struct nfence_adapter *adapter,
				  struct nfence_file *nfile,
				  struct nfence_log *log, u64 *cursor,
				  struct nfence_fence *progress, bool *scanned_all);
u64 nfence_interrupt_queue_start(struct nfence_adapter *adapter,
				 bool engine_wide);
void nfence_interrupt_queue_done(struct nfence_adapter *adapter,
				 bool engine_wide, unsigned int queues,
				 unsigned int woken, u64 start);
void nfence_device_fences_error(struct nfence_device *wdev);
void nfence_fence_set_always_signaled(struct nfence_fence *fence);
void nfence_fence_settle(struct nfence_fence *fence);
void nfence_irq_stats_print(struct nfence_adapter *adapter,
			    struct drm_printer *p);

#if IS_ENABLED(CONFIG_DRM_NFENCE_KUNIT_TEST)
bool nfence_fence_signal_needs_irq(struct nfence_fence *fence);
void nfence_interrupt_carry_checked(struct nfence_fence *fence);
#endif

#endif /* __NFENCE_SIGNAL_H__ */
