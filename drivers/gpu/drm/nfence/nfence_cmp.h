/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_CMP_H__
#define __NFENCE_CMP_H__

#include <linux/atomic.h>
#include <linux/types.h>
#include <linux/wait.h>

struct drm_printer;
struct nfence_gpu;
struct task_struct;

/**
 * struct nfence_cmp - the context management processor of one adapter
 *
 * A kernel thread that sleeps on @wq until someone kicks it, then makes
 * passes over the engines' runlists until a pass finds nothing to do.
 */
struct nfence_cmp {
	/** @gpu: the GPU this CMP belongs to */
	struct nfence_gpu *gpu;
	/** @thread: the CMP thread, NULL when stopped */
	struct task_struct *thread;
	/** @wq: where the thread sleeps while idle */
	wait_queue_head_t wq;
	/** @pending: NFENCE_CMP_* request bits */
	unsigned long pending;
	/** @busy: true while the thread is making passes */
	bool busy;
	/** @wakeups: times the thread woke up to work */
	atomic64_t wakeups;
	/** @passes: passes made over the runlists */
	atomic64_t passes;
};

int nfence_cmp_start(struct nfence_cmp *cmp, struct nfence_gpu *gpu,
		     const char *name);
void nfence_cmp_stop(struct nfence_cmp *cmp);
void nfence_cmp_kick(struct nfence_cmp *cmp);
pid_t nfence_cmp_pid(struct nfence_cmp *cmp);
void nfence_cmp_print(struct nfence_cmp *cmp, struct drm_printer *p);

#endif /* __NFENCE_CMP_H__ */
