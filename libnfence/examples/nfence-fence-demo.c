/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * nfence-fence-demo: native GPU fences used from the CPU the way an
 * application would, with only the public libnfence API:
 *
 *  1. create a device on the first adapter with native fences
 *  2. create a shared fence and read CurrentValue through its CPU mapping
 *  3. block in a wait while a second thread signals
 *  4. wait with a timeout for a value nobody signals: STATUS_TIMEOUT
 *  5. wait asynchronously on an eventfd, then signal
 *  6. share the fence as an NT handle and fork: the child opens the fence
 *     on a device of its own and signals it, the parent waits
 *
 * Exit status: 0 if every step behaved, 1 otherwise.
 */
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nfence/d3dkmthk.h>

#define MS		UINT64_C(1000000)	/* ns */
#define MAX_ADAPTERS	16

static int failures;
static int step;

/* Report one step; returns @ok. */
static int check(int ok, const char *what)
{
	step++;
	printf("%s %d - %s\n", ok ? "ok" : "not ok", step, what);
	if (!ok)
		failures++;
	return ok;
}

/* A call that must return @want; prints the status otherwise. */
static int expect(NTSTATUS st, NTSTATUS want, const char *what)
{
	if (st != want)
		fprintf(stderr, "nfence-fence-demo: %s: NTSTATUS 0x%08" PRIX32
			", expected 0x%08" PRIX32 "\n", what, (uint32_t)st,
			(uint32_t)want);
	return check(st == want, what);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CurrentValue as the CPU sees it. */
static UINT64 read_fence(const VOID *cpu_va)
{
	return __atomic_load_n((const UINT64 *)cpu_va, __ATOMIC_ACQUIRE);
}

static NTSTATUS signal_fence(D3DKMT_HANDLE hDevice, D3DKMT_HANDLE hFence,
			     UINT64 value)
{
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s = {
		.hDevice = hDevice,
		.ObjectCount = 1,
		.ObjectHandleArray = &hFence,
		.FenceValueArray = &value,
	};

	return D3DKMTSignalSynchronizationObjectFromCpu(&s);
}

/* Wait for @value; @timeout_ns UINT64_MAX blocks without timeout. */
static NTSTATUS wait_fence(D3DKMT_HANDLE hDevice, D3DKMT_HANDLE hFence,
			   UINT64 value, UINT64 timeout_ns)
{
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = {
		.hDevice = hDevice,
		.ObjectCount = 1,
		.ObjectHandleArray = &hFence,
		.FenceValueArray = &value,
	};

	if (timeout_ns == UINT64_MAX)
		return D3DKMTWaitForSynchronizationObjectFromCpu(&w);
	return NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, timeout_ns,
								NULL);
}

/* The first adapter that has native fences, or -1. */
static int pick_adapter(const D3DKMT_ADAPTERINFO *adapters, ULONG n)
{
	D3DKMT_WDDM_3_1_CAPS caps;
	ULONG i;

	for (i = 0; i < n; i++) {
		D3DKMT_QUERYADAPTERINFO q = {
			.hAdapter = adapters[i].hAdapter,
			.Type = KMTQAITYPE_WDDM_3_1_CAPS,
			.pPrivateDriverData = &caps,
			.PrivateDriverDataSize = sizeof(caps),
		};

		if (D3DKMTQueryAdapterInfo(&q) == STATUS_SUCCESS &&
		    caps.NativeGpuFenceSupported)
			return (int)i;
	}
	return -1;
}

struct signaler {
	D3DKMT_HANDLE hDevice, hFence;
	UINT64 value;
	NTSTATUS status;
};

static void *signal_later(void *arg)
{
	struct signaler *s = arg;

	usleep(100 * 1000);
	s->status = signal_fence(s->hDevice, s->hFence, s->value);
	return NULL;
}

/*
 * The forked child: as another process would, open the adapter by LUID,
 * create a device, open the fence from the NT handle, signal it. Returns
 * the exit status.
 */
static int child(LUID luid, HANDLE hNtHandle, UINT64 expect_value,
		 UINT64 signal_value)
{
	D3DKMT_OPENADAPTERFROMLUID oa = { .AdapterLuid = luid };
	D3DKMT_OPENNATIVEFENCEFROMNTHANDLE of;
	D3DKMT_DESTROYSYNCHRONIZATIONOBJECT ds;
	D3DKMT_CREATEDEVICE cd;
	D3DKMT_DESTROYDEVICE dd;
	D3DKMT_CLOSEADAPTER ca;
	int bad = 0;

	if (D3DKMTOpenAdapterFromLuid(&oa) != STATUS_SUCCESS)
		return 1;
	memset(&cd, 0, sizeof(cd));
	cd.hAdapter = oa.hAdapter;
	if (D3DKMTCreateDevice(&cd) != STATUS_SUCCESS)
		return 1;

	memset(&of, 0, sizeof(of));
	of.hNtHandle = hNtHandle;
	of.hDevice = cd.hDevice;
	if (D3DKMTOpenNativeFenceFromNtHandle(&of) != STATUS_SUCCESS)
		return 1;
	if (!of.NativeFenceMapping.CurrentValueCpuVa ||
	    read_fence(of.NativeFenceMapping.CurrentValueCpuVa) != expect_value)
		bad = 1;
	if (signal_fence(cd.hDevice, of.hSyncObject, signal_value) !=
	    STATUS_SUCCESS)
		bad = 1;

	ds.hSyncObject = of.hSyncObject;
	bad |= D3DKMTDestroySynchronizationObject(&ds) != STATUS_SUCCESS;
	dd.hDevice = cd.hDevice;
	bad |= D3DKMTDestroyDevice(&dd) != STATUS_SUCCESS;
	ca.hAdapter = oa.hAdapter;
	bad |= D3DKMTCloseAdapter(&ca) != STATUS_SUCCESS;
	return bad;
}

int main(void)
{
	D3DKMT_ADAPTERINFO adapters[MAX_ADAPTERS];
	D3DKMT_ENUMADAPTERS2 ea = { .NumAdapters = MAX_ADAPTERS,
				    .pAdapters = adapters };
	D3DKMT_CREATEDEVICE cd;
	D3DKMT_CREATENATIVEFENCE cf;
	D3DKMT_DESTROYSYNCHRONIZATIONOBJECT ds;
	D3DKMT_DESTROYDEVICE dd;
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w;
	struct signaler sig;
	struct pollfd pfd;
	D3DKMT_HANDLE hDevice, hFence;
	HANDLE hNtHandle = NULL;
	const VOID *cpu_va;
	UINT64 value, count;
	uint64_t t0, dt;
	pthread_t thread;
	ULONG i;
	int a, status, efd;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);

	/* 1. A device on an adapter with native fences. */
	if (!expect(D3DKMTEnumAdapters2(&ea), STATUS_SUCCESS,
		    "enumerate adapters"))
		return 1;
	a = pick_adapter(adapters, ea.NumAdapters);
	if (!check(a >= 0, "an adapter supports native fences"))
		goto close_adapters;
	memset(&cd, 0, sizeof(cd));
	cd.hAdapter = adapters[a].hAdapter;
	if (!expect(D3DKMTCreateDevice(&cd), STATUS_SUCCESS, "create device"))
		goto close_adapters;
	hDevice = cd.hDevice;

	/* 2. A shared fence; its CPU view reads the initial value. */
	memset(&cf, 0, sizeof(cf));
	cf.hDevice = hDevice;
	cf.Info.InitialFenceValue = 1;
	cf.Info.Type = D3DDDI_NATIVEFENCE_TYPE_DEFAULT;
	cf.Info.Flags.Shared = 1;
	cf.Info.Flags.NtSecuritySharing = 1;
	if (!expect(D3DKMTCreateNativeFence(&cf), STATUS_SUCCESS,
		    "create shared native fence"))
		goto destroy_device;
	hFence = cf.hSyncObject;
	cpu_va = cf.Info.NativeFenceMapping.CurrentValueCpuVa;
	printf("# fence %u: CurrentValueCpuVa %p, CurrentValueGpuVa 0x%" PRIx64
	       ", MonitoredValueGpuVa 0x%" PRIx64 "\n", hFence, cpu_va,
	       cf.Info.NativeFenceMapping.CurrentValueGpuVa,
	       cf.Info.NativeFenceMapping.MonitoredValueGpuVa);
	if (!check(cpu_va && read_fence(cpu_va) == 1,
		   "CurrentValue reads InitialFenceValue through the CPU VA"))
		goto destroy_fence;

	/* 3. A blocking wait, satisfied by a signal from another thread. */
	sig = (struct signaler){ .hDevice = hDevice, .hFence = hFence,
				 .value = 2 };
	t0 = now_ns();
	if (!check(!pthread_create(&thread, NULL, signal_later, &sig),
		   "start signaling thread"))
		goto destroy_fence;
	expect(wait_fence(hDevice, hFence, 2, UINT64_MAX), STATUS_SUCCESS,
	       "blocking wait until the thread signals 2");
	dt = now_ns() - t0;
	pthread_join(thread, NULL);
	expect(sig.status, STATUS_SUCCESS, "thread signaled 2");
	printf("# blocking wait took %" PRIu64 " ms\n", dt / MS);
	check(read_fence(cpu_va) == 2, "CurrentValue reads 2 after the wait");

	/* 4. Nobody signals 3: the timed wait times out. */
	t0 = now_ns();
	expect(wait_fence(hDevice, hFence, 3, 100 * MS), STATUS_TIMEOUT,
	       "wait for 3 with a 100 ms timeout returns STATUS_TIMEOUT");
	dt = now_ns() - t0;
	check(dt >= 100 * MS, "the timed wait lasted its timeout");

	/* 5. An asynchronous wait completes through an eventfd. */
	efd = eventfd(0, EFD_CLOEXEC);
	if (check(efd >= 0, "create eventfd")) {
		value = 3;
		memset(&w, 0, sizeof(w));
		w.hDevice = hDevice;
		w.ObjectCount = 1;
		w.ObjectHandleArray = &hFence;
		w.FenceValueArray = &value;
		w.hAsyncEvent = (HANDLE)(intptr_t)efd;
		expect(D3DKMTWaitForSynchronizationObjectFromCpu(&w),
		       STATUS_SUCCESS, "asynchronous wait for 3");
		pfd.fd = efd;
		pfd.events = POLLIN;
		check(poll(&pfd, 1, 50) == 0, "eventfd quiet before the signal");
		expect(signal_fence(hDevice, hFence, 3), STATUS_SUCCESS,
		       "signal 3");
		check(poll(&pfd, 1, 5000) == 1 &&
		      read(efd, &count, sizeof(count)) == sizeof(count) &&
		      count == 1, "eventfd fired after the signal");
		close(efd);
	}

	/* 6. Share; a forked child opens the fence and signals 4. */
	if (!expect(D3DKMTShareObjects(1, &hFence, NULL, 0, &hNtHandle),
		    STATUS_SUCCESS, "share the fence as an NT handle"))
		goto destroy_fence;
	pid = fork();
	if (pid == 0)
		_exit(child(adapters[a].AdapterLuid, hNtHandle, 3, 4));
	if (check(pid > 0, "fork")) {
		expect(wait_fence(hDevice, hFence, 4, 10000 * MS),
		       STATUS_SUCCESS, "wait until the child signals 4");
		check(read_fence(cpu_va) == 4,
		      "CurrentValue reads 4 after the child's signal");
		check(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0,
		      "child opened the fence from the NT handle and signaled");
	}
	close((int)(intptr_t)hNtHandle);

destroy_fence:
	ds.hSyncObject = hFence;
	expect(D3DKMTDestroySynchronizationObject(&ds), STATUS_SUCCESS,
	       "destroy the fence");
destroy_device:
	dd.hDevice = hDevice;
	expect(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS, "destroy device");
close_adapters:
	for (i = 0; i < ea.NumAdapters; i++) {
		D3DKMT_CLOSEADAPTER ca = { .hAdapter = adapters[i].hAdapter };

		D3DKMTCloseAdapter(&ca);
	}
	printf("nfence-fence-demo: %d steps, %d failed\n", step, failures);
	return failures ? 1 : 0;
}
