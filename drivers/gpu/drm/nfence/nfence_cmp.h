/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_CMP_H__
#define __NFENCE_CMP_H__

#include <linux/mutex.h>
#include <linux/timekeeping.h>
#include <linux/types.h>

#include "nfence_cmp_types.h"

/**
 * nfence_cmp_lock - take &nfence_cmp.lock
 * @cmp: the CMP
 *
 * Every holder goes through nfence_cmp_lock() and nfence_cmp_unlock(), which
 * keep &nfence_cmp.max_hold_ns: how long the lock can keep other clients'
 * submissions and teardown waiting (see DOC: context management processor).
 */
static inline void nfence_cmp_lock(struct nfence_cmp *cmp)
{
	mutex_lock(&cmp->lock);
	cmp->locked_ns = ktime_get_ns();
}

/**
 * nfence_cmp_unlock - release &nfence_cmp.lock, taken by nfence_cmp_lock()
 * @cmp: the CMP
 */
static inline void nfence_cmp_unlock(struct nfence_cmp *cmp)
{
	u64 held = ktime_get_ns() - cmp->locked_ns;

	if (held > cmp->max_hold_ns)
		WRITE_ONCE(cmp->max_hold_ns, held);
	mutex_unlock(&cmp->lock);
}

void nfence_cmp_init(struct nfence_cmp *cmp, struct nfence_gpu *gpu,
		     const struct nfence_cmp_ops *ops);
void nfence_cmp_reset_max(struct nfence_cmp *cmp);
int nfence_cmp_start(struct nfence_cmp *cmp, struct nfence_gpu *gpu,
		     const struct nfence_cmp_ops *ops, const char *name);
void nfence_cmp_stop(struct nfence_cmp *cmp);
bool nfence_cmp_current(struct nfence_cmp *cmp);
void nfence_cmp_kick(struct nfence_cmp *cmp);
void nfence_cmp_kick_waiters(struct nfence_cmp *cmp);
void nfence_cmp_queue_init(struct nfence_cmp_queue *q);
void nfence_cmp_queue_add_locked(struct nfence_cmp *cmp,
				 struct nfence_cmp_queue *q);
void nfence_cmp_queue_remove_locked(struct nfence_cmp *cmp,
				    struct nfence_cmp_queue *q);
void nfence_cmp_queue_push_locked(struct nfence_cmp *cmp,
				  struct nfence_cmp_queue *q,
				  struct nfence_cmp_entry *entry);
void nfence_cmp_queue_stop_locked(struct nfence_cmp *cmp,
				  struct nfence_cmp_queue *q, u32 state,
				  struct list_head *dropped);
void nfence_cmp_walk_queues_locked(struct nfence_cmp *cmp,
				   nfence_cmp_queue_fn_t fn, void *data);
bool nfence_cmp_engine_f1_due_locked(struct nfence_cmp *cmp, u32 engine);
void nfence_cmp_engine_f1_locked(struct nfence_cmp *cmp, u32 engine);
void nfence_cmp_engine_f0_locked(struct nfence_cmp *cmp, u32 engine);
int nfence_cmp_d3_enter(struct nfence_cmp *cmp);
int nfence_cmp_d3_commit(struct nfence_cmp *cmp);
void nfence_cmp_d3_exit(struct nfence_cmp *cmp);
pid_t nfence_cmp_pid(struct nfence_cmp *cmp);
void nfence_cmp_print(struct nfence_cmp *cmp, struct drm_printer *p);
void nfence_cmp_print_queues(struct nfence_cmp *cmp, struct drm_printer *p);

#if IS_ENABLED(CONFIG_DRM_NFENCE_KUNIT_TEST)
bool nfence_cmp_run_pass(struct nfence_cmp *cmp, u64 *deadline);
bool nfence_cmp_idle_locked(struct nfence_cmp *cmp);
bool nfence_cmp_engine_idle_locked(struct nfence_cmp *cmp,
				   struct nfence_cmp_engine *e);
#endif

#endif /* __NFENCE_CMP_H__ */
