/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */

#ifndef NFENCE_PARAMS_H
#define NFENCE_PARAMS_H

struct nfence_gpu_config;

/* The most adapters one module load registers. */
#define NFENCE_MAX_ADAPTERS	8

int nfence_params_read(struct nfence_gpu_config *cfgs);

#endif /* NFENCE_PARAMS_H */
