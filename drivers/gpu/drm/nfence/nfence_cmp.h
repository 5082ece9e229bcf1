/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_CMP_H__
#define __NFENCE_CMP_H__

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/wait.h>

/* Engines (WDDM nodes) an adapter may have. */
#define NFENCE_MAX_ENGINES	8

struct drm_printer;
struct nfence_device;
struct nfence_gpu;
struct nfence_hwqueue;
struct task_struct;

/**
 * struct nfence_cmp_engine - what the CMP knows of one engine
 */
struct nfence_cmp_engine {
	/** @runlist: the engine's hardware queues, round-robin order */
	struct list_head runlist;
	/** @busy: the queue whose WORK command occupies the engine, or NULL */
	struct nfence_hwqueue *busy;
	/** @busy_until_ns: when that WORK command ends (CLOCK_MONOTONIC) */
	u64 busy_until_ns;
	/** @num_queues: entries in @runlist */
	u32 num_queues;
};

/**
 * struct nfence_cmp - the context management processor of one adapter
 *
 * A kernel thread that sleeps on @wq until someone kicks it or a WORK
 * command ends, then makes passes over the engines' runlists until a pass
 * finds nothing to do.
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
	/** @lock: protects @engines, the queues' scheduling state, @next_id */
	struct mutex lock;
	/** @engines: per-engine state */
	struct nfence_cmp_engine engines[NFENCE_MAX_ENGINES];
	/** @next_id: id of the next queue */
	u32 next_id;
	/** @tdr_ns: TDR timeout in ns, 0 for none */
	u64 tdr_ns;
	/** @wakeups: times the thread woke up to work */
	atomic64_t wakeups;
	/** @passes: passes made over the runlists */
	atomic64_t passes;
	/** @commands: commands executed */
	atomic64_t commands;
	/** @faults: contexts faulted */
	atomic64_t faults;
	/** @hangs: hangs detected (TDR) */
	atomic64_t hangs;
};

void nfence_cmp_init(struct nfence_cmp *cmp, struct nfence_gpu *gpu);
int nfence_cmp_start(struct nfence_cmp *cmp, struct nfence_gpu *gpu,
		     const char *name);
void nfence_cmp_stop(struct nfence_cmp *cmp);
void nfence_cmp_kick(struct nfence_cmp *cmp);
void nfence_cmp_device_lost(struct nfence_cmp *cmp, struct nfence_device *dev);
void nfence_cmp_device_lost_locked(struct nfence_cmp *cmp,
				   struct nfence_device *dev,
				   struct list_head *dropped);
pid_t nfence_cmp_pid(struct nfence_cmp *cmp);
void nfence_cmp_print(struct nfence_cmp *cmp, struct drm_printer *p);
void nfence_cmp_print_queues(struct nfence_cmp *cmp, struct drm_printer *p);

#endif /* __NFENCE_CMP_H__ */
