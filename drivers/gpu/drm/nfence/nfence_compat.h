/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_COMPAT_H__
#define __NFENCE_COMPAT_H__

/*
 * The few things that differ between the kernels nfence supports (Debian's
 * 6.1, the 6.12 LTS, and newer trees for KUnit). The driver's Makefile probes
 * the kernel headers for each feature and defines NFENCE_HAVE_*; the logic
 * only uses what this header defines and never tests kernel versions.
 */

/* struct drm_driver.date went away in 6.14; older cores dereference it. */
#ifdef NFENCE_HAVE_DRIVER_DATE
#define NFENCE_DRIVER_DATE	.date = DRIVER_DATE,
#else
#define NFENCE_DRIVER_DATE
#endif

#endif /* __NFENCE_COMPAT_H__ */
