/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Fence storage for the KUnit suites that look at a fence's values
 * directly (nfence_handles_test.c, nfence_cmp_ops_test.c).
 *
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_KUNIT_FENCE_H__
#define __NFENCE_KUNIT_FENCE_H__

#include <linux/rcupdate.h>

#include "../nfence_fence.h"

/*
 * The kernel address of @slot's value, for a test: either nothing demotes
 * the fence meanwhile, or the test looks at the address itself (before and
 * after a move), or it reads the old storage on purpose inside the move's
 * grace period. The driver's own code goes through nfence_slot_value() or
 * nfence_fence_read(), which say why the address holds.
 */
static inline u64 *nfence_kunit_value(struct nfence_fence_slot *slot)
{
	return rcu_dereference_protected(slot->value, true);
}

#endif /* __NFENCE_KUNIT_FENCE_H__ */
