// SPDX-License-Identifier: MIT
/*
 * A user's program, built by tests/check-install.sh with nothing but
 * "cc install_prog.c $(pkg-config --cflags --libs libnfence)" against an
 * installed (DESTDIR) or uninstalled libnfence, and run against the fake
 * driver: enumerate, create a device and a native fence, signal it from
 * the CPU and read the value back through its CPU mapping.
 */
#include <stdio.h>
#include <string.h>

#include <nfence/d3dkmthk.h>

#define MAX_ADAPTERS 8

int main(void)
{
	D3DKMT_ADAPTERINFO adapters[MAX_ADAPTERS];
	D3DKMT_ENUMADAPTERS2 ea = { .NumAdapters = MAX_ADAPTERS,
				    .pAdapters = adapters };
	D3DKMT_CREATEDEVICE cd;
	D3DKMT_CREATENATIVEFENCE cf;
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s;
	D3DKMT_DESTROYSYNCHRONIZATIONOBJECT ds;
	D3DKMT_DESTROYDEVICE dd;
	UINT64 value = 7;
	ULONG i;
	int ok;

	if (D3DKMTEnumAdapters2(&ea) != STATUS_SUCCESS || ea.NumAdapters == 0) {
		fprintf(stderr, "install_prog: no nfence adapter\n");
		return 1;
	}
	memset(&cd, 0, sizeof(cd));
	cd.hAdapter = adapters[0].hAdapter;
	if (D3DKMTCreateDevice(&cd) != STATUS_SUCCESS) {
		fprintf(stderr, "install_prog: D3DKMTCreateDevice failed\n");
		return 1;
	}
	memset(&cf, 0, sizeof(cf));
	cf.hDevice = cd.hDevice;
	cf.Info.InitialFenceValue = 1;
	cf.Info.Type = D3DDDI_NATIVEFENCE_TYPE_DEFAULT;
	if (D3DKMTCreateNativeFence(&cf) != STATUS_SUCCESS) {
		fprintf(stderr, "install_prog: D3DKMTCreateNativeFence failed\n");
		return 1;
	}
	memset(&s, 0, sizeof(s));
	s.hDevice = cd.hDevice;
	s.ObjectCount = 1;
	s.ObjectHandleArray = &cf.hSyncObject;
	s.FenceValueArray = &value;
	ok = D3DKMTSignalSynchronizationObjectFromCpu(&s) == STATUS_SUCCESS &&
	     *(volatile const UINT64 *)cf.Info.NativeFenceMapping.CurrentValueCpuVa == 7;
	ds.hSyncObject = cf.hSyncObject;
	D3DKMTDestroySynchronizationObject(&ds);
	dd.hDevice = cd.hDevice;
	D3DKMTDestroyDevice(&dd);
	for (i = 0; i < ea.NumAdapters; i++) {
		D3DKMT_CLOSEADAPTER ca = { .hAdapter = adapters[i].hAdapter };

		D3DKMTCloseAdapter(&ca);
	}
	printf("install_prog: %lu adapters, fence signaled to 7: %s\n",
	       (unsigned long)ea.NumAdapters, ok ? "ok" : "FAILED");
	return ok ? 0 : 1;
}
