// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/moduleparam.h>
#include <linux/slab.h>

/**
 * DOC: Harness self-test
 *
 * Built only with CONFIG_DRM_NFENCE_HARNESS_SELFTEST, to prove that the
 * test harness catches what it claims to catch. Loading the module with
 * harness_leak=1 allocates one object and forgets it: the VM runner's
 * kmemleak check must report it and fail the run. The KUnit suite
 * nfence_harness (tests/nfence_harness_test.c) WARNs once: kunit.sh must
 * fail on the kernel log. Documentation/testing.rst has the runs.
 */

static void *nfence_harness_leaked;

static int nfence_harness_leak_set(const char *val,
				   const struct kernel_param *kp)
{
	bool leak;
	int ret;

	ret = kstrtobool(val, &leak);
	if (ret)
		return ret;
	if (leak) {
		/* Allocated, then forgotten: nothing refers to it any more. */
		nfence_harness_leaked = kmalloc(128, GFP_KERNEL);
		if (!nfence_harness_leaked)
			return -ENOMEM;
		pr_info("nfence: harness_leak: leaking 128 bytes on purpose\n");
		nfence_harness_leaked = NULL;
	}
	return param_set_bool(val, kp);
}

static const struct kernel_param_ops nfence_harness_leak_ops = {
	.set = nfence_harness_leak_set,
	.get = param_get_bool,
};

static bool harness_leak;
module_param_cb(harness_leak, &nfence_harness_leak_ops, &harness_leak, 0444);
MODULE_PARM_DESC(harness_leak,
		 "Leak one allocation at load (harness self-test; default N)");
