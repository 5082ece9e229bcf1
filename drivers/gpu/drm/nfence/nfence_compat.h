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

/*
 * struct platform_driver.remove returns void since 6.11; before that the
 * void callback was .remove_new (6.3, and Debian's 6.1).
 */
#if defined(NFENCE_HAVE_PLATFORM_REMOVE_VOID)
#define NFENCE_PLATFORM_REMOVE(fn)	.remove = fn,
#elif defined(NFENCE_HAVE_PLATFORM_REMOVE_NEW)
#define NFENCE_PLATFORM_REMOVE(fn)	.remove_new = fn,
#else
#error "nfence needs a void platform_driver remove callback (6.3+, Debian 6.1)"
#endif

/*
 * NFENCE_KUNIT_STUB(fn, args...): at the top of @fn, lets a KUnit test
 * replace it (kunit_activate_static_stub()), to force an interleaving at
 * that point. Nothing outside KUnit builds, or before 6.2, which has no
 * static stubs.
 */
#if IS_ENABLED(CONFIG_DRM_NFENCE_KUNIT_TEST) && \
	defined(NFENCE_HAVE_KUNIT_STATIC_STUB)
#include <kunit/static_stub.h>
#define NFENCE_KUNIT_STUB(fn, args...)	KUNIT_STATIC_STUB_REDIRECT(fn, ##args)
#else
#define NFENCE_KUNIT_STUB(fn, args...)	((void)(fn))
#endif

/*
 * NFENCE_VISIBLE_IF_KUNIT: a function that is static, but visible to the
 * KUnit suites (to stub it) in a KUnit build; declared in its header
 * under IS_ENABLED(CONFIG_DRM_NFENCE_KUNIT_TEST). The kernel's own
 * VISIBLE_IF_KUNIT is newer than 6.1.
 */
#if IS_ENABLED(CONFIG_DRM_NFENCE_KUNIT_TEST)
#define NFENCE_VISIBLE_IF_KUNIT
#else
#define NFENCE_VISIBLE_IF_KUNIT static
#endif

#include <linux/eventfd.h>
#include <linux/mm.h>

/* eventfd_signal() lost its count argument in 6.8. */
static inline void nfence_eventfd_signal(struct eventfd_ctx *ctx)
{
#ifdef NFENCE_HAVE_EVENTFD_SIGNAL_1ARG
	eventfd_signal(ctx);
#else
	eventfd_signal(ctx, 1);
#endif
}

/* vma->vm_flags became read-only behind vm_flags_*() in 6.3. */
static inline void nfence_vm_flags_mod(struct vm_area_struct *vma,
				       unsigned long set, unsigned long clear)
{
#ifdef NFENCE_HAVE_VM_FLAGS_MOD
	vm_flags_mod(vma, set, clear);
#else
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
#endif
}

#endif /* __NFENCE_COMPAT_H__ */
