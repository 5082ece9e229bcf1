/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_DRV_H__
#define __NFENCE_DRV_H__

#include "nfence_adapter.h"

#define DRIVER_NAME	"nfence"
#define DRIVER_DESC	"WDDM native fence model over a simulated GPU"
#define DRIVER_DATE	"20261121"
#define DRIVER_MAJOR	0
#define DRIVER_MINOR	10

/* nfence_drv.c */
struct nfence_adapter *
nfence_adapter_create(u32 index, const struct nfence_gpu_config *cfg);
void nfence_adapter_destroy(struct nfence_adapter *adapter);

#endif /* __NFENCE_DRV_H__ */
