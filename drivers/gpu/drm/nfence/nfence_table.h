/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_TABLE_H__
#define __NFENCE_TABLE_H__

#include <linux/types.h>
#include <linux/xarray.h>

/**
 * struct nfence_table - a per-file handle table
 *
 * Handles are allocated cyclically from 1, so that a destroyed handle is
 * not reused at once, and their number is bounded. @count is under the
 * xarray's lock.
 */
struct nfence_table {
	/** @xa: handle -> object */
	struct xarray xa;
	/** @next: cyclic allocation cursor */
	u32 next;
	/** @count: live handles */
	u32 count;
	/** @max: at most this many live handles */
	u32 max;
};

void nfence_table_init(struct nfence_table *t, u32 max);
int nfence_table_insert_locked(struct nfence_table *t, void *obj, u32 *handle);
void *nfence_table_erase_locked(struct nfence_table *t, u32 handle);

#endif /* __NFENCE_TABLE_H__ */
