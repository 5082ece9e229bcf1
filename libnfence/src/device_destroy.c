/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * D3DKMTDestroyDevice over DRM_IOCTL_NFENCE_DEVICE_DESTROY (device.c's
 * teardown), which closes everything the device owns.
 */
#include "device.h"

NTSTATUS D3DKMTDestroyDevice(const D3DKMT_DESTROYDEVICE *pDestroyDevice)
{
	if (!pDestroyDevice)
		return STATUS_INVALID_PARAMETER;
	/*
	 * The kernel destroys the device's allocations, contexts, queues and
	 * fences with it; the registry closes their handles.
	 */
	return nf_handle_close(pDestroyDevice->hDevice, NF_HANDLE_DEVICE);
}
