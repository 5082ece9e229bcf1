/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * The fake driver of mock_drm.c as an LD_PRELOAD library, to run unchanged
 * programs (nfence-info) against it: at load, if NFENCE_MOCK_DIR names a
 * directory, two fake adapters are created there (renderD128 with index 1,
 * renderD129 with index 0). Point NFENCE_DRI_DIR at the same directory.
 */
#include <stdlib.h>

#include "mock_drm.h"

__attribute__((constructor))
static void mock_preload_init(void)
{
	const char *dir = getenv("NFENCE_MOCK_DIR");
	struct mock_adapter a1 = mock_default_adapter(1);
	struct mock_adapter a0 = mock_default_adapter(0);

	if (!dir)
		return;
	a1.doorbell_model = 2;	/* DRM_NFENCE_DOORBELL_GLOBAL */
	a1.num_doorbells = 1;
	if (mock_add_node(dir, "renderD128", &a1) ||
	    mock_add_node(dir, "renderD129", &a0))
		abort();
}
