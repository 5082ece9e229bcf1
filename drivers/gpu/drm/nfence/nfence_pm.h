/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_PM_H__
#define __NFENCE_PM_H__

#include <linux/pm.h>

struct nfence_adapter;

extern const struct dev_pm_ops nfence_pm_ops;

int nfence_pm_init(struct nfence_adapter *adapter);

#endif /* __NFENCE_PM_H__ */
