/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_ENGINE_H__
#define __NFENCE_ENGINE_H__

#include <linux/list.h>
#include <linux/types.h>

struct nfence_cmp;
struct nfence_cmp_engine;
struct nfence_cmp_queue;
struct nfence_fence;

/**
 * enum nfence_run_result - how a turn of a queue on its engine ended
 * @NFENCE_RUN_IDLE: nothing left to run
 * @NFENCE_RUN_YIELD: the command budget ran out; more to run
 * @NFENCE_RUN_BLOCKED: parked on a FENCE_WAIT or held at a legacy entry
 * @NFENCE_RUN_BUSY: a WORK command now occupies the engine
 * @NFENCE_RUN_FAULT: the queue's context faulted
 */
enum nfence_run_result {
	NFENCE_RUN_IDLE,
	NFENCE_RUN_YIELD,
	NFENCE_RUN_BLOCKED,
	NFENCE_RUN_BUSY,
	NFENCE_RUN_FAULT,
};

/* Commands a queue may run in one turn before the next queue's turn. */
#define NFENCE_ENGINE_BUDGET	1024

int nfence_engine_run(struct nfence_cmp *cmp, struct nfence_cmp_engine *e,
		      struct nfence_cmp_queue *q, u64 now, unsigned int max,
		      unsigned int *ran, struct list_head *dropped);
void nfence_engine_flush(struct nfence_cmp *cmp);
void nfence_engine_peer_wakes(struct nfence_cmp *cmp);
void nfence_engine_queue_unpark_locked(struct nfence_cmp *cmp,
				       struct nfence_cmp_queue *q);
void nfence_engine_raise_queue_irq(struct nfence_cmp *cmp,
				   struct nfence_cmp_engine *e);
void nfence_engine_signal_fence(struct nfence_cmp *cmp,
				struct nfence_cmp_queue *q,
				struct nfence_fence *fence, u64 value);

#endif /* __NFENCE_ENGINE_H__ */
