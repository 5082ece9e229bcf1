/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Small D3DKMT wrappers shared by the libnfence host tests.
 */
#ifndef NFENCE_TEST_HELPERS_H
#define NFENCE_TEST_HELPERS_H

#include <nfence/d3dkmthk.h>

static inline NTSTATUS create_device(D3DKMT_HANDLE hAdapter,
				     D3DKMT_HANDLE *hDevice)
{
	D3DKMT_CREATEDEVICE c = { .hAdapter = hAdapter };
	NTSTATUS st = D3DKMTCreateDevice(&c);

	*hDevice = c.hDevice;
	return st;
}

static inline NTSTATUS destroy_device(D3DKMT_HANDLE h)
{
	D3DKMT_DESTROYDEVICE d = { .hDevice = h };

	return D3DKMTDestroyDevice(&d);
}

#endif /* NFENCE_TEST_HELPERS_H */
