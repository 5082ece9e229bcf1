/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_CMP_DOORBELL_H__
#define __NFENCE_CMP_DOORBELL_H__

#include <linux/list.h>
#include <linux/types.h>

#include "nfence_cmp_types.h"

/*
 * NFENCE_DOORBELL_GRACE_NS: how long a ring just connected keeps its
 * physical doorbell from other connects if it does not ring
 */
#define NFENCE_DOORBELL_GRACE_NS	(1 * NSEC_PER_MSEC)

void nfence_cmp_ring_attach_locked(struct nfence_cmp *cmp,
				   struct nfence_cmp_queue *q,
				   struct nfence_cmp_ring *ring);
void nfence_cmp_ring_detach_locked(struct nfence_cmp *cmp,
				   struct nfence_cmp_queue *q);
void nfence_cmp_ring_stop_locked(struct nfence_cmp_queue *q);
int nfence_cmp_doorbell_free_slot_locked(struct nfence_cmp *cmp);
struct nfence_cmp_queue *nfence_cmp_doorbell_victim_locked(struct nfence_cmp *cmp,
							   u64 now,
							   u64 *wait_ns);
void nfence_cmp_doorbell_unbind_locked(struct nfence_cmp *cmp,
				       struct nfence_cmp_queue *q, u32 status);
void nfence_cmp_doorbell_bind_locked(struct nfence_cmp *cmp,
				     struct nfence_cmp_queue *q, u32 slot);
void nfence_cmp_doorbell_take_locked(struct nfence_cmp *cmp,
				     struct nfence_cmp_queue *q, u32 slot,
				     struct list_head *dropped);
void nfence_cmp_watch_locked(struct nfence_cmp *cmp);
bool nfence_cmp_doorbell_look_locked(struct nfence_cmp *cmp, u64 now,
				     struct list_head *dropped);
bool nfence_cmp_doorbell_idle_locked(struct nfence_cmp *cmp, u64 *deadline,
				     struct list_head *dropped);

#endif /* __NFENCE_CMP_DOORBELL_H__ */
