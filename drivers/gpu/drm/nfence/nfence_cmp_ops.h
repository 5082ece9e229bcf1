/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_CMP_OPS_H__
#define __NFENCE_CMP_OPS_H__

#include "nfence_cmp_types.h"

extern const struct nfence_cmp_ops nfence_driver_cmp_ops;

#endif /* __NFENCE_CMP_OPS_H__ */
