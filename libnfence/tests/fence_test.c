/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Native fences through the public API against the fake driver
 * (mock_drm.c): create, CPU mapping, share, open, destroy, CPU signal and
 * wait (blocking, timeout, interrupted, asynchronous), flag and status
 * mapping, handle types and lifetimes, fork, and what the syncobj bridge
 * calls pass to the kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nfence/d3dkmthk.h>
#include "drm/nfence_drm.h"

#include "mock_drm.h"
#include "test_helpers.h"
#include "kselftest_harness.h"

#define MS	1000000ull	/* ns */

/* Adapter 0 and 1 have native fences, adapter 2 has none. */
#define LUID0_LOW	0x1000u
#define NADAPTERS	3

FIXTURE(fence) {
	char dir[64];
	D3DKMT_ADAPTERINFO adapters[NADAPTERS];
	D3DKMT_HANDLE dev;	/* on adapter 0 */
	D3DKMT_HANDLE dev1;	/* on adapter 1 */
	D3DKMT_HANDLE dev2;	/* on adapter 2, without native fences */
};

FIXTURE_SETUP(fence)
{
	D3DKMT_ENUMADAPTERS2 e = { .NumAdapters = NADAPTERS };
	struct mock_adapter a[NADAPTERS];
	char name[32];
	int i;

	strcpy(self->dir, "/tmp/nfence-fence-test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	for (i = 0; i < NADAPTERS; i++) {
		a[i] = mock_default_adapter(i);
		snprintf(name, sizeof(name), "renderD%d", 128 + i);
		if (i == 2)
			a[i].native_fences = false;
		ASSERT_EQ(0, mock_add_node(self->dir, name, &a[i]));
	}
	ASSERT_EQ(0, setenv("NFENCE_DRI_DIR", self->dir, 1));

	e.pAdapters = self->adapters;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTEnumAdapters2(&e));
	ASSERT_EQ(NADAPTERS, e.NumAdapters);
	ASSERT_EQ(LUID0_LOW, self->adapters[0].AdapterLuid.LowPart);
	ASSERT_EQ(STATUS_SUCCESS, create_device(self->adapters[0].hAdapter,
						&self->dev));
	ASSERT_EQ(STATUS_SUCCESS, create_device(self->adapters[1].hAdapter,
						&self->dev1));
	ASSERT_EQ(STATUS_SUCCESS, create_device(self->adapters[2].hAdapter,
						&self->dev2));
}

FIXTURE_TEARDOWN(fence)
{
	D3DKMT_CLOSEADAPTER c;
	char cmd[128];
	int i;

	/* Devices a test destroyed already fail; that is fine. */
	destroy_device(self->dev);
	destroy_device(self->dev1);
	destroy_device(self->dev2);
	for (i = 0; i < NADAPTERS; i++) {
		c.hAdapter = self->adapters[i].hAdapter;
		EXPECT_EQ(STATUS_SUCCESS, D3DKMTCloseAdapter(&c));
	}
	EXPECT_EQ(0u, mock_live_fences());
	EXPECT_EQ(0u, mock_open_files());
	mock_reset();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
	EXPECT_EQ(0, system(cmd));
}

/* Create a fence; @cf is filled in with Microsoft's fields. */
static NTSTATUS create_fence_ex(D3DKMT_HANDLE dev, D3DDDI_NATIVEFENCE_TYPE type,
				UINT flags, UINT64 initial,
				D3DKMT_CREATENATIVEFENCE *cf)
{
	memset(cf, 0, sizeof(*cf));
	cf->hDevice = dev;
	cf->Info.InitialFenceValue = initial;
	cf->Info.Type = type;
	cf->Info.Flags.Value = flags;
	return D3DKMTCreateNativeFence(cf);
}

/* Create a DEFAULT fence; returns its handle, *@cpu its CPU view. */
static D3DKMT_HANDLE create_fence(struct __test_metadata *_metadata,
				  D3DKMT_HANDLE dev, UINT flags, UINT64 initial,
				  volatile UINT64 **cpu)
{
	D3DKMT_CREATENATIVEFENCE cf;

	EXPECT_EQ(STATUS_SUCCESS,
		  create_fence_ex(dev, D3DDDI_NATIVEFENCE_TYPE_DEFAULT, flags,
				  initial, &cf));
	if (cpu)
		*cpu = cf.Info.NativeFenceMapping.CurrentValueCpuVa;
	return cf.hSyncObject;
}

static NTSTATUS destroy_sync(D3DKMT_HANDLE h)
{
	D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { .hSyncObject = h };

	return D3DKMTDestroySynchronizationObject(&d);
}

static NTSTATUS signal_n(D3DKMT_HANDLE dev, UINT n, const D3DKMT_HANDLE *h,
			 const UINT64 *v)
{
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s = {
		.hDevice = dev,
		.ObjectCount = n,
		.ObjectHandleArray = h,
		.FenceValueArray = v,
	};

	return D3DKMTSignalSynchronizationObjectFromCpu(&s);
}

static NTSTATUS signal1(D3DKMT_HANDLE dev, D3DKMT_HANDLE h, UINT64 v)
{
	return signal_n(dev, 1, &h, &v);
}

/* Wait with the timeout extension; UINT64_MAX: the blocking D3DKMT call. */
static NTSTATUS wait_n(D3DKMT_HANDLE dev, UINT n, const D3DKMT_HANDLE *h,
		       const UINT64 *v, bool any, UINT64 timeout_ns,
		       UINT *first)
{
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = {
		.hDevice = dev,
		.ObjectCount = n,
		.ObjectHandleArray = h,
		.FenceValueArray = v,
	};

	w.Flags.WaitAny = any;
	if (timeout_ns == UINT64_MAX && !first)
		return D3DKMTWaitForSynchronizationObjectFromCpu(&w);
	return NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, timeout_ns,
								first);
}

static NTSTATUS wait1(D3DKMT_HANDLE dev, D3DKMT_HANDLE h, UINT64 v,
		      UINT64 timeout_ns)
{
	return wait_n(dev, 1, &h, &v, false, timeout_ns, NULL);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Is the page holding @p mapped in this process? */
static bool mapped(const volatile void *p)
{
	uintptr_t page = (uintptr_t)p & ~(uintptr_t)4095;
	unsigned char vec;

	return mincore((void *)page, 4096, &vec) == 0;
}

/*
 * Whether @p shows no fence any more: unmapped, or (a page of a CPU
 * window given back, which the fake driver maps PROT_NONE where the
 * kernel's window would raise SIGBUS) mapped without read access. Read
 * from /proc/self/maps, not by a faulting read, which valgrind reports.
 */
static bool shows_nothing(const volatile UINT64 *p)
{
	uintptr_t a = (uintptr_t)p;
	unsigned long lo, hi;
	bool readable = false;
	char line[512], r;
	FILE *f;

	if (!mapped(p))
		return true;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %c", &lo, &hi, &r) == 3 &&
		    a >= lo && a < hi)
			readable = r == 'r';
	fclose(f);
	return !readable;
}

static uintptr_t page_of(const volatile void *p)
{
	return (uintptr_t)p & ~(uintptr_t)4095;
}

TEST(flags_have_windows_bit_order)
{
	D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS f;
	D3DDDI_WAITFORSYNCHRONIZATIONOBJECTFROMCPU_FLAGS w;
	D3DDDICB_SIGNALFLAGS s;

#define BIT_IS(var, field, bit) do {				\
		memset(&var, 0, sizeof(var));			\
		var.field = 1;					\
		EXPECT_EQ(1u << (bit), var.Value) TH_LOG(#field); \
	} while (0)

	EXPECT_EQ(4u, sizeof(f));
	BIT_IS(f, Shared, 0);
	BIT_IS(f, NtSecuritySharing, 1);
	BIT_IS(f, CrossAdapter, 2);
	BIT_IS(f, TopOfPipeline, 3);
	BIT_IS(f, NoSignal, 4);
	BIT_IS(f, NoWait, 5);
	BIT_IS(f, NoSignalMaxValueOnTdr, 6);
	BIT_IS(f, NoGPUAccess, 7);
	BIT_IS(f, SignalByKmd, 8);
	BIT_IS(f, Reserved, 9);
	BIT_IS(f, D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS_RESERVED0, 31);
	BIT_IS(w, WaitAny, 0);
	BIT_IS(s, SignalAtSubmission, 0);
	BIT_IS(s, EnqueueCpuEvent, 1);
	BIT_IS(s, AllowFenceRewind, 2);
	BIT_IS(s, Reserved, 3);
	BIT_IS(s, DXGK_SIGNAL_FLAG_INTERNAL0, 31);
#undef BIT_IS
	EXPECT_EQ(64, D3DDDI_NATIVE_FENCE_PDD_SIZE);
	EXPECT_EQ(0, D3DDDI_NATIVEFENCE_TYPE_DEFAULT);
	EXPECT_EQ(1, D3DDDI_NATIVEFENCE_TYPE_INTRA_GPU);
}

TEST_F(fence, create_default_and_read)
{
	D3DKMT_CREATENATIVEFENCE cf;
	volatile UINT64 *cpu;
	D3DDDI_NATIVEFENCEMAPPING *m = &cf.Info.NativeFenceMapping;
	int i;

	memset(&cf, 0, sizeof(cf));
	cf.hDevice = self->dev;
	cf.Info.InitialFenceValue = 0x123456789abcull;
	cf.Info.EngineAffinity = 1;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateNativeFence(&cf));
	EXPECT_NE(0u, cf.hSyncObject);
	EXPECT_NE(self->dev, cf.hSyncObject);
	ASSERT_NE(NULL, m->CurrentValueCpuVa);
	EXPECT_EQ(0u, (uintptr_t)m->CurrentValueCpuVa % 8);
	EXPECT_NE(0u, m->CurrentValueGpuVa);
	EXPECT_NE(0u, m->MonitoredValueGpuVa);
	EXPECT_NE(m->CurrentValueGpuVa, m->MonitoredValueGpuVa);
	for (i = 0; i < D3DDDI_NATIVE_FENCE_PDD_SIZE; i++)
		EXPECT_EQ(0, cf.PrivateDriverData[i]);
	EXPECT_EQ(1u, mock_live_fences());

	cpu = m->CurrentValueCpuVa;
	EXPECT_EQ(0x123456789abcull, *cpu);
	ASSERT_EQ(STATUS_SUCCESS, signal1(self->dev, cf.hSyncObject,
					  0x123456789abdull));
	EXPECT_EQ(0x123456789abdull, *cpu);

	ASSERT_EQ(STATUS_SUCCESS, destroy_sync(cf.hSyncObject));
	EXPECT_EQ(0u, mock_live_fences());
	EXPECT_FALSE(mapped(cpu));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_sync(cf.hSyncObject));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, signal1(self->dev, cf.hSyncObject, 1));
}

TEST_F(fence, create_intra_gpu_has_no_cpu_access)
{
	D3DKMT_CREATENATIVEFENCE cf;
	D3DKMT_HANDLE h;

	ASSERT_EQ(STATUS_SUCCESS,
		  create_fence_ex(self->dev, D3DDDI_NATIVEFENCE_TYPE_INTRA_GPU,
				  0, 3, &cf));
	h = cf.hSyncObject;
	EXPECT_EQ(NULL, cf.Info.NativeFenceMapping.CurrentValueCpuVa);
	EXPECT_NE(0u, cf.Info.NativeFenceMapping.CurrentValueGpuVa);
	EXPECT_NE(0u, cf.Info.NativeFenceMapping.MonitoredValueGpuVa);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, signal1(self->dev, h, 4));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, wait1(self->dev, h, 1, 0));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(h));
}

TEST_F(fence, create_errors)
{
	D3DKMT_CREATENATIVEFENCE cf;
	const D3DDDI_NATIVEFENCE_TYPE def = D3DDDI_NATIVEFENCE_TYPE_DEFAULT;
	static const struct {
		UINT flags;
		NTSTATUS st;
	} bad[] = {
		{ 1u << 1, STATUS_INVALID_PARAMETER },	/* NtSecurity, !Shared */
		{ 1u << 2, STATUS_INVALID_PARAMETER },	/* CrossAdapter, !Shared */
		{ 1u << 3, STATUS_NOT_SUPPORTED },	/* TopOfPipeline */
		{ 3u << 4, STATUS_INVALID_PARAMETER },	/* NoSignal|NoWait */
		{ 1u << 6, STATUS_NOT_SUPPORTED },	/* NoSignalMaxValueOnTdr */
		{ 1u << 7, STATUS_NOT_SUPPORTED },	/* NoGPUAccess */
		{ 1u << 8, STATUS_INVALID_PARAMETER },	/* SignalByKmd */
		{ 1u << 9, STATUS_INVALID_PARAMETER },	/* Reserved */
		{ 1u << 30, STATUS_INVALID_PARAMETER },	/* Reserved */
		{ 1u << 31, STATUS_INVALID_PARAMETER },	/* RESERVED0 */
		{ (1u << 8) | (1u << 3), STATUS_INVALID_PARAMETER },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(bad[i].st, create_fence_ex(self->dev, def,
						     bad[i].flags, 0, &cf))
			TH_LOG("flags 0x%x", bad[i].flags);
		EXPECT_EQ(0u, cf.hSyncObject);
	}

	/*
	 * Physical adapters it does not have (it is one), engine masks
	 * included: the adapter has 3 engines.
	 */
	memset(&cf, 0, sizeof(cf));
	cf.hDevice = self->dev;
	cf.Info.EngineAffinity = 2;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateNativeFence(&cf));
	cf.Info.EngineAffinity = 0x7;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateNativeFence(&cf));
	cf.Info.EngineAffinity = 0;
	cf.Flags.Value = 2;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateNativeFence(&cf));

	/* No native fences on adapter 2. */
	EXPECT_EQ(STATUS_NOT_SUPPORTED,
		  create_fence_ex(self->dev2, def, 0, 0, &cf));

	/* Not a device. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_fence_ex(self->adapters[0].hAdapter, def, 0, 0, &cf));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, create_fence_ex(0, def, 0, 0, &cf));

	/* Kernel errors are mapped. */
	mock_fail_next(ENOSPC);
	EXPECT_EQ(STATUS_INSUFFICIENT_RESOURCES,
		  create_fence_ex(self->dev, def, 0, 0, &cf));
	mock_fail_next(ENOMEM);
	EXPECT_EQ(STATUS_NO_MEMORY, create_fence_ex(self->dev, def, 0, 0, &cf));
	EXPECT_EQ(0u, cf.hSyncObject);
	EXPECT_EQ(0u, mock_live_fences());
}

TEST_F(fence, handle_types)
{
	D3DKMT_HANDLE h = create_fence(_metadata, self->dev, 0, 0, NULL);
	D3DKMT_HANDLE dev = self->dev, ad = self->adapters[0].hAdapter;
	D3DKMT_CREATENATIVEFENCE cf;
	HANDLE nt = NULL;

	/* A device or adapter handle is no sync object. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_sync(dev));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_sync(ad));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, signal1(dev, dev, 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, wait1(dev, ad, 0, 0));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTShareObjects(1, &dev, NULL, 0,
							    &nt));
	EXPECT_EQ(NULL, nt);

	/* A sync object is no device. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, signal1(h, h, 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, wait1(h, h, 0, 0));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_fence_ex(h, D3DDDI_NATIVEFENCE_TYPE_DEFAULT, 0, 0,
				  &cf));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_device(h));

	/* A sync object of another adapter is not one of this device's. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, signal1(self->dev1, h, 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, wait1(self->dev1, h, 0, 0));

	/* All of that left the fence alone. */
	EXPECT_EQ(STATUS_SUCCESS, signal1(dev, h, 1));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(h));
}

TEST_F(fence, pages_are_shared_and_unmapped_with_last_fence)
{
	volatile UINT64 *a, *b, *c, *s;
	D3DKMT_HANDLE ha, hb, hc, hs;

	ha = create_fence(_metadata, self->dev, 0, 1, &a);
	hb = create_fence(_metadata, self->dev, 0, 2, &b);
	hs = create_fence(_metadata, self->dev, 3, 4, &s);	/* shared */
	hc = create_fence(_metadata, self->dev1, 0, 3, &c);	/* adapter 1 */
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, c);
	ASSERT_NE(NULL, s);

	/* Non-shared fences of a file share a page; a shared one does not. */
	EXPECT_NE(a, b);
	EXPECT_EQ(page_of(a), page_of(b));
	EXPECT_NE(page_of(a), page_of(s));
	EXPECT_NE(page_of(a), page_of(c));
	EXPECT_EQ(1u, *a);
	EXPECT_EQ(2u, *b);
	EXPECT_EQ(3u, *c);
	EXPECT_EQ(4u, *s);

	/* The page stays while a fence uses it. */
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(ha));
	EXPECT_TRUE(mapped(b));
	EXPECT_EQ(2u, *b);
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(hb));
	EXPECT_FALSE(mapped(b));
	EXPECT_TRUE(mapped(s));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(hs));
	/* A page of the adapter's window: it stays, showing nothing. */
	EXPECT_TRUE(mapped(s));
	EXPECT_TRUE(shows_nothing(s));
	EXPECT_EQ(3u, *c);
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(hc));
	EXPECT_FALSE(mapped(c));
}

TEST_F(fence, signal_never_lowers)
{
	volatile UINT64 *a, *b;
	D3DKMT_HANDLE h[2];
	UINT64 v[2];

	h[0] = create_fence(_metadata, self->dev, 0, 10, &a);
	h[1] = create_fence(_metadata, self->dev, 0, 0, &b);

	EXPECT_EQ(STATUS_SUCCESS, signal1(self->dev, h[0], 5));
	EXPECT_EQ(10u, *a);
	EXPECT_EQ(STATUS_SUCCESS, signal1(self->dev, h[0], 10));
	EXPECT_EQ(10u, *a);
	v[0] = 20;
	v[1] = UINT64_MAX;
	EXPECT_EQ(STATUS_SUCCESS, signal_n(self->dev, 2, h, v));
	EXPECT_EQ(20u, *a);
	EXPECT_EQ(UINT64_MAX, *b);

	/* One bad handle: nothing is signaled. */
	v[0] = 30;
	h[1] = self->dev;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, signal_n(self->dev, 2, h, v));
	EXPECT_EQ(20u, *a);

	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(h[0]));
	EXPECT_EQ(STATUS_SUCCESS,
		  destroy_sync(create_fence(_metadata, self->dev, 0, 0, NULL)));
}

TEST_F(fence, wait_status)
{
	D3DKMT_HANDLE h[2];
	UINT64 v[2];
	UINT first;
	uint64_t t0;

	h[0] = create_fence(_metadata, self->dev, 0, 10, NULL);
	h[1] = create_fence(_metadata, self->dev, 0, 0, NULL);

	/* Satisfied: at once, blocking or not. */
	EXPECT_EQ(STATUS_SUCCESS, wait1(self->dev, h[0], 10, UINT64_MAX));
	EXPECT_EQ(STATUS_SUCCESS, wait1(self->dev, h[0], 3, 0));
	EXPECT_EQ(STATUS_SUCCESS, wait1(self->dev, h[0], 10, UINT64_MAX - 1));

	/* Not satisfied: STATUS_TIMEOUT, a success code, after the timeout. */
	EXPECT_EQ(STATUS_TIMEOUT, wait1(self->dev, h[0], 11, 0));
	EXPECT_TRUE(NT_SUCCESS(STATUS_TIMEOUT));
	t0 = now_ns();
	EXPECT_EQ(STATUS_TIMEOUT, wait1(self->dev, h[0], 11, 50 * MS));
	EXPECT_LE(50 * MS, now_ns() - t0);
	EXPECT_GT(2000 * MS, now_ns() - t0);

	/* All vs. any, and the first satisfied index. */
	v[0] = 100;
	v[1] = 0;
	EXPECT_EQ(STATUS_TIMEOUT, wait_n(self->dev, 2, h, v, false, 0, NULL));
	first = 77;
	EXPECT_EQ(STATUS_SUCCESS, wait_n(self->dev, 2, h, v, true, 0, &first));
	EXPECT_EQ(1u, first);
	v[0] = 5;
	first = 77;
	EXPECT_EQ(STATUS_SUCCESS, wait_n(self->dev, 2, h, v, true, 0, &first));
	EXPECT_EQ(0u, first);
	first = 77;
	EXPECT_EQ(STATUS_SUCCESS, wait_n(self->dev, 2, h, v, false, 0, &first));
	EXPECT_EQ(0u, first);
	first = 77;
	v[1] = 1;
	EXPECT_EQ(STATUS_TIMEOUT, wait_n(self->dev, 2, h, v, false, 0, &first));
	EXPECT_EQ(77u, first);

	/* Kernel errors are mapped. */
	mock_fail_next(EFAULT);
	EXPECT_EQ(STATUS_ACCESS_VIOLATION, wait1(self->dev, h[0], 1, 0));

	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(h[0]));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(h[1]));
}

struct signaler {
	D3DKMT_HANDLE dev, h;
	UINT64 value;
	unsigned int delay_ms;
	NTSTATUS st;
};

static void *signal_later(void *p)
{
	struct signaler *s = p;

	usleep(s->delay_ms * 1000);
	s->st = signal1(s->dev, s->h, s->value);
	return NULL;
}

TEST_F(fence, blocking_wait_until_signal)
{
	struct signaler s = { .dev = self->dev, .value = 7, .delay_ms = 50 };
	volatile UINT64 *cpu;
	pthread_t th;
	uint64_t t0;

	s.h = create_fence(_metadata, self->dev, 0, 0, &cpu);
	t0 = now_ns();
	ASSERT_EQ(0, pthread_create(&th, NULL, signal_later, &s));
	EXPECT_EQ(STATUS_SUCCESS, wait1(self->dev, s.h, 7, UINT64_MAX));
	EXPECT_LE(40 * MS, now_ns() - t0);
	EXPECT_EQ(7u, *cpu);
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(STATUS_SUCCESS, s.st);
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(s.h));
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/* SIGALRM without SA_RESTART every @ms ms (0: off). */
static void alarm_every(unsigned int ms)
{
	struct itimerval it = {
		.it_interval = { .tv_usec = ms * 1000 },
		.it_value = { .tv_usec = ms * 1000 },
	};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

TEST_F(fence, interrupted_wait_resumes_with_same_deadline)
{
	struct signaler s = { .dev = self->dev, .value = 2, .delay_ms = 120 };
	D3DKMT_HANDLE h = create_fence(_metadata, self->dev, 0, 0, NULL);
	pthread_t th;
	uint64_t t0, dt;

	/* A timed wait ends at its deadline, neither before nor much after. */
	alarms = 0;
	alarm_every(20);
	t0 = now_ns();
	EXPECT_EQ(STATUS_TIMEOUT, wait1(self->dev, h, 1, 150 * MS));
	dt = now_ns() - t0;
	alarm_every(0);
	EXPECT_LE(150 * MS, dt);
	EXPECT_GT(1000 * MS, dt);
	EXPECT_LE(2, alarms);
	EXPECT_LE(2u, mock_wait_interrupts());

	/* A blocking wait survives the interruptions until the signal. */
	s.h = h;
	alarms = 0;
	alarm_every(20);
	ASSERT_EQ(0, pthread_create(&th, NULL, signal_later, &s));
	EXPECT_EQ(STATUS_SUCCESS, wait1(self->dev, h, 2, UINT64_MAX));
	alarm_every(0);
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(STATUS_SUCCESS, s.st);
	EXPECT_LE(1, alarms);
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(h));
}

static bool readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

TEST_F(fence, async_wait_signals_eventfd)
{
	D3DKMT_HANDLE h = create_fence(_metadata, self->dev, 0, 1, NULL);
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = {
		.hDevice = self->dev,
		.ObjectCount = 1,
		.ObjectHandleArray = &h,
	};
	D3DKMT_CREATENATIVEFENCE cf;
	UINT64 v = 5, count = 0;
	D3DKMT_HANDLE shared;
	UINT first = 77;
	int efd, pfd[2];
	HANDLE nt;

	w.FenceValueArray = &v;
	efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, efd);
	w.hAsyncEvent = (HANDLE)(intptr_t)efd;

	/* Returns at once; the eventfd fires on the signal. */
	EXPECT_EQ(STATUS_SUCCESS,
		  NFenceWaitForSynchronizationObjectFromCpuTimeout(&w,
								   UINT64_MAX,
								   &first));
	EXPECT_EQ(77u, first);
	EXPECT_FALSE(readable(efd, 20));
	EXPECT_EQ(STATUS_SUCCESS, signal1(self->dev, h, 4));
	EXPECT_FALSE(readable(efd, 20));
	EXPECT_EQ(STATUS_SUCCESS, signal1(self->dev, h, 5));
	EXPECT_TRUE(readable(efd, 1000));
	EXPECT_EQ(8, read(efd, &count, sizeof(count)));
	EXPECT_EQ(1u, count);

	/* Already satisfied: fires at once. */
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTWaitForSynchronizationObjectFromCpu(&w));
	EXPECT_TRUE(readable(efd, 1000));
	EXPECT_EQ(8, read(efd, &count, sizeof(count)));

	/*
	 * A file that is not an eventfd (a pipe, a fence's NT handle) or no
	 * open file: a bad event handle.
	 */
	ASSERT_EQ(0, pipe2(pfd, O_CLOEXEC));
	w.hAsyncEvent = (HANDLE)(intptr_t)pfd[0];
	EXPECT_EQ(STATUS_INVALID_HANDLE,
		  D3DKMTWaitForSynchronizationObjectFromCpu(&w));
	shared = create_fence(_metadata, self->dev, 3, 0, NULL);
	ASSERT_EQ(STATUS_SUCCESS,
		  D3DKMTShareObjects(1, &shared, NULL, 0, &nt));
	w.hAsyncEvent = nt;
	EXPECT_EQ(STATUS_INVALID_HANDLE,
		  D3DKMTWaitForSynchronizationObjectFromCpu(&w));
	close(pfd[0]);
	close(pfd[1]);
	w.hAsyncEvent = (HANDLE)(intptr_t)pfd[0];
	EXPECT_EQ(STATUS_INVALID_HANDLE,
		  D3DKMTWaitForSynchronizationObjectFromCpu(&w));

	/* The kernel's other EINVAL (an INTRA_GPU fence) stays a bad argument. */
	ASSERT_EQ(STATUS_SUCCESS,
		  create_fence_ex(self->dev, D3DDDI_NATIVEFENCE_TYPE_INTRA_GPU,
				  0, 0, &cf));
	w.ObjectHandleArray = &cf.hSyncObject;
	w.hAsyncEvent = (HANDLE)(intptr_t)efd;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTWaitForSynchronizationObjectFromCpu(&w));
	EXPECT_FALSE(readable(efd, 20));

	close(efd);
	close((int)(intptr_t)nt);
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(cf.hSyncObject));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(shared));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(h));
}

static NTSTATUS open_fence(D3DKMT_HANDLE dev, HANDLE nt, UINT flags,
			   D3DKMT_OPENNATIVEFENCEFROMNTHANDLE *o)
{
	memset(o, 0, sizeof(*o));
	o->hNtHandle = nt;
	o->hDevice = dev;
	o->Flags.Value = flags;
	return D3DKMTOpenNativeFenceFromNtHandle(o);
}

/*
 * With stdin closed, the kernel's fd for a new NT handle would be 0: the
 * NULL handle, "none". The handle is another, close-on-exec descriptor,
 * which opens the fence, and descriptor 0 stays free.
 */
TEST_F(fence, nt_handle_is_never_null)
{
	D3DKMT_OPENNATIVEFENCEFROMNTHANDLE o;
	D3DKMT_HANDLE shared;
	int saved, fd;
	HANDLE nt;

	shared = create_fence(_metadata, self->dev, 3, 0, NULL);
	/* A first share makes whatever the fake driver keeps open. */
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTShareObjects(1, &shared, NULL, 0, &nt));
	close((int)(intptr_t)nt);
	saved = fcntl(0, F_DUPFD_CLOEXEC, 3);
	ASSERT_LE(0, saved);
	close(0);

	EXPECT_EQ(STATUS_SUCCESS, D3DKMTShareObjects(1, &shared, NULL, 0, &nt));
	fd = (int)(intptr_t)nt;
	EXPECT_LT(0, fd);
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD));
	EXPECT_EQ(-1, fcntl(0, F_GETFD));
	ASSERT_EQ(0, dup2(saved, 0));
	close(saved);
	ASSERT_EQ(STATUS_SUCCESS, open_fence(self->dev, nt, 0, &o));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(o.hSyncObject));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(shared));
	if (fd > 0)
		close(fd);
}

/*
 * An NT handle's fd value passed as a sync object destroys nothing: no fd
 * value is a D3DKMT handle. Were handles small integers (they were 1, 2,
 * 3, ...), the fd value is made that of a live fence, by dup2() to a free
 * descriptor of that number, so that such a handle scheme would destroy
 * it.
 */
TEST_F(fence, nt_handle_fd_is_not_a_sync_object)
{
	D3DKMT_HANDLE h[16], shared;
	D3DKMT_OPENNATIVEFENCEFROMNTHANDLE o;
	unsigned int i, n, live;
	HANDLE nt;
	int fd, value = -1;

	shared = create_fence(_metadata, self->dev, 3, 0, NULL);
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTShareObjects(1, &shared, NULL, 0, &nt));
	fd = (int)(intptr_t)nt;
	for (n = 0; n < ARRAY_SIZE(h); n++) {
		h[n] = create_fence(_metadata, self->dev, 0, 0, NULL);
		ASSERT_NE(0u, h[n]);
		/* Every handle has Windows' format, so is no fd's value. */
		EXPECT_EQ(0xc0000000u, h[n] & 0xc000003fu);
		if (value < 0 && h[n] < 1024 && fcntl((int)h[n], F_GETFD) < 0) {
			ASSERT_EQ((int)h[n], dup2(fd, (int)h[n]));
			value = (int)h[n];
		}
	}
	if (value < 0)
		value = fd;
	live = mock_live_fences();

	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_sync((D3DKMT_HANDLE)value));
	EXPECT_EQ(live, mock_live_fences());
	for (i = 0; i < n; i++)
		EXPECT_EQ(STATUS_SUCCESS, signal1(self->dev, h[i], 1))
			TH_LOG("fence %u destroyed", i);
	/* The fd is still the fence's NT handle. */
	ASSERT_EQ(STATUS_SUCCESS,
		  open_fence(self->dev, (HANDLE)(intptr_t)value, 0, &o));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(o.hSyncObject));

	for (i = 0; i < n; i++)
		EXPECT_EQ(STATUS_SUCCESS, destroy_sync(h[i]));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(shared));
	if (value != fd)
		close(value);
	close(fd);
}

TEST_F(fence, share_and_open)
{
	D3DKMT_OPENNATIVEFENCEFROMNTHANDLE o, ons, onw;
	D3DKMT_HANDLE h, hplain, hshared_only, dev2;
	volatile UINT64 *cpu, *ocpu;
	HANDLE nt = NULL, nt2 = NULL;
	int fd, node, efd, pfd[2];

	h = create_fence(_metadata, self->dev, 3, 11, &cpu);
	hplain = create_fence(_metadata, self->dev, 0, 0, NULL);
	hshared_only = create_fence(_metadata, self->dev, 1, 0, NULL);

	/* Only Shared + NtSecuritySharing fences become NT handles. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTShareObjects(1, &hplain, NULL, 0, &nt));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTShareObjects(1, &hshared_only, NULL, 0, &nt));
	EXPECT_EQ(NULL, nt);
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTShareObjects(2, &h, NULL, 0, &nt));
	EXPECT_EQ(NULL, nt);

	ASSERT_EQ(STATUS_SUCCESS, D3DKMTShareObjects(1, &h, NULL, 0, &nt));
	fd = (int)(intptr_t)nt;
	ASSERT_LT(0, fd);
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTShareObjects(1, &h, NULL, 0, &nt2));
	EXPECT_NE(nt, nt2);
	close((int)(intptr_t)nt2);

	/* Open on another device of the adapter; values are shared. */
	ASSERT_EQ(STATUS_SUCCESS, create_device(self->adapters[0].hAdapter,
						&dev2));
	ASSERT_EQ(STATUS_SUCCESS, open_fence(dev2, nt, 0, &o));
	EXPECT_NE(0u, o.hSyncObject);
	EXPECT_NE(h, o.hSyncObject);
	ocpu = o.NativeFenceMapping.CurrentValueCpuVa;
	ASSERT_NE(NULL, ocpu);
	EXPECT_NE(0u, o.NativeFenceMapping.CurrentValueGpuVa);
	EXPECT_EQ(11u, *ocpu);
	EXPECT_EQ(STATUS_SUCCESS, signal1(dev2, o.hSyncObject, 12));
	EXPECT_EQ(12u, *cpu);
	EXPECT_EQ(STATUS_SUCCESS, wait1(self->dev, h, 12, 0));
	/*
	 * Not through another device, even of the same adapter: the kernel
	 * names a fence by device and handle.
	 */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, wait1(self->dev, o.hSyncObject, 12, 0));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, signal1(self->dev, o.hSyncObject, 12));

	/* NoSignal / NoWait handles; Shared bits are ignored on open. */
	ASSERT_EQ(STATUS_SUCCESS, open_fence(self->dev, nt, 1u << 4, &ons));
	ASSERT_EQ(STATUS_SUCCESS, open_fence(self->dev, nt, 3u | 1u << 5,
					     &onw));
	EXPECT_EQ(STATUS_ACCESS_DENIED, signal1(self->dev, ons.hSyncObject, 13));
	EXPECT_EQ(STATUS_SUCCESS, wait1(self->dev, ons.hSyncObject, 12, 0));
	EXPECT_EQ(STATUS_ACCESS_DENIED, wait1(self->dev, onw.hSyncObject, 1, 0));
	EXPECT_EQ(STATUS_SUCCESS, signal1(self->dev, onw.hSyncObject, 13));
	EXPECT_EQ(13u, *ocpu);

	/* Bad opens. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  open_fence(self->dev, nt, 3u << 4, &o));	/* both */
	EXPECT_EQ(STATUS_NOT_SUPPORTED,
		  open_fence(self->dev, nt, 1u << 2, &o));	/* CrossAdapter */
	EXPECT_EQ(STATUS_NOT_SUPPORTED,
		  open_fence(self->dev, nt, 1u << 6, &o));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  open_fence(self->dev1, nt, 0, &o));		/* adapter 1 */
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  open_fence(self->adapters[0].hAdapter, nt, 0, &o));
	EXPECT_EQ(STATUS_INVALID_HANDLE, open_fence(self->dev, NULL, 0, &o));
	/* An open file that is no fence (a pipe, a render node, an eventfd). */
	ASSERT_EQ(0, pipe2(pfd, O_CLOEXEC));
	EXPECT_EQ(STATUS_INVALID_HANDLE,
		  open_fence(self->dev, (HANDLE)(intptr_t)pfd[0], 0, &o));
	node = NFenceGetAdapterFd(self->adapters[0].hAdapter);
	ASSERT_LE(0, node);
	EXPECT_EQ(STATUS_INVALID_HANDLE,
		  open_fence(self->dev, (HANDLE)(intptr_t)node, 0, &o));
	efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, efd);
	EXPECT_EQ(STATUS_INVALID_HANDLE,
		  open_fence(self->dev, (HANDLE)(intptr_t)efd, 0, &o));
	close(efd);
	close(pfd[0]);
	close(pfd[1]);
	EXPECT_EQ(STATUS_INVALID_HANDLE,
		  open_fence(self->dev, (HANDLE)(intptr_t)pfd[0], 0, &o));
	memset(&o, 0, sizeof(o));
	o.hNtHandle = nt;
	o.hDevice = self->dev;
	o.EngineAffinity = 1u << 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTOpenNativeFenceFromNtHandle(&o));
	EXPECT_EQ(0u, o.hSyncObject);

	/* The NT handle keeps the fence: reopen after every handle is gone. */
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(h));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(ons.hSyncObject));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(onw.hSyncObject));
	EXPECT_EQ(STATUS_SUCCESS, destroy_device(dev2));  /* closes o */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_sync(o.hSyncObject));
	ASSERT_EQ(STATUS_SUCCESS, open_fence(self->dev, nt, 0, &o));
	ocpu = o.NativeFenceMapping.CurrentValueCpuVa;
	EXPECT_EQ(13u, *ocpu);
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(o.hSyncObject));
	EXPECT_EQ(0, close(fd));

	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(hplain));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(hshared_only));
}

/*
 * As the kernel: a CrossAdapter native fence opens as a native fence on
 * every adapter with native fences, and as a monitored fence on one
 * without (D3DKMTOpenSyncObjectFromNtHandle2), sharing CurrentValue.
 */
TEST_F(fence, cross_adapter_open)
{
	struct signaler s = { .dev = self->dev, .value = 9, .delay_ms = 50 };
	struct signaler m = { .dev = self->dev2, .value = 11, .delay_ms = 50 };
	D3DKMT_OPENNATIVEFENCEFROMNTHANDLE o, o2;
	D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 om;
	volatile UINT64 *cpu, *ocpu, *mcpu;
	unsigned int opens, live;
	HANDLE nt = NULL;
	pthread_t th;

	/* Shared | NtSecuritySharing | CrossAdapter */
	s.h = create_fence(_metadata, self->dev, 7, 5, &cpu);
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTShareObjects(1, &s.h, NULL, 0, &nt));

	/* Adapter 1's instance shares CurrentValue with adapter 0's. */
	ASSERT_EQ(STATUS_SUCCESS, open_fence(self->dev1, nt, 0, &o));
	EXPECT_NE(0u, o.hSyncObject);
	ocpu = o.NativeFenceMapping.CurrentValueCpuVa;
	ASSERT_NE(NULL, ocpu);
	EXPECT_NE(0u, o.NativeFenceMapping.CurrentValueGpuVa);
	EXPECT_EQ(5u, *ocpu);
	EXPECT_EQ(STATUS_SUCCESS, signal1(self->dev1, o.hSyncObject, 6));
	EXPECT_EQ(6u, *cpu);
	EXPECT_EQ(STATUS_SUCCESS, signal1(self->dev, s.h, 8));
	EXPECT_EQ(8u, *ocpu);

	/* A waiter on adapter 1 is released by a signal on adapter 0. */
	ASSERT_EQ(0, pthread_create(&th, NULL, signal_later, &s));
	EXPECT_EQ(STATUS_SUCCESS, wait1(self->dev1, o.hSyncObject, 9, 5000 * MS));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(STATUS_SUCCESS, s.st);

	/*
	 * No native fence handle on an adapter without native fences: the
	 * library refuses before any ioctl, and nothing is created.
	 */
	opens = mock_ioctl_calls(DRM_NFENCE_FENCE_OPEN);
	live = mock_live_fences();
	EXPECT_EQ(STATUS_NOT_SUPPORTED, open_fence(self->dev2, nt, 0, &o2));
	EXPECT_EQ(0u, o2.hSyncObject);
	EXPECT_EQ(opens, mock_ioctl_calls(DRM_NFENCE_FENCE_OPEN));
	EXPECT_EQ(live, mock_live_fences());

	/* There it opens as a monitored fence sharing CurrentValue. */
	memset(&om, 0, sizeof(om));
	om.hNtHandle = nt;
	om.hDevice = self->dev2;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTOpenSyncObjectFromNtHandle2(&om));
	EXPECT_NE(0u, om.hSyncObject);
	mcpu = om.MonitoredFence.FenceValueCPUVirtualAddress;
	ASSERT_NE(NULL, mcpu);
	EXPECT_NE(0u, om.MonitoredFence.FenceValueGPUVirtualAddress);
	EXPECT_EQ(9u, *mcpu);
	EXPECT_EQ(STATUS_SUCCESS, signal1(self->dev2, om.hSyncObject, 10));
	EXPECT_EQ(10u, *cpu);
	EXPECT_EQ(10u, *ocpu);

	/* A CPU waiter on adapter 0 is released by a signal on adapter 2 ... */
	m.h = om.hSyncObject;
	ASSERT_EQ(0, pthread_create(&th, NULL, signal_later, &m));
	EXPECT_EQ(STATUS_SUCCESS, wait1(self->dev, s.h, 11, 5000 * MS));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(STATUS_SUCCESS, m.st);
	EXPECT_EQ(11u, *cpu);

	/* ... and one on adapter 2 by a signal on adapter 0. */
	s.value = 12;
	ASSERT_EQ(0, pthread_create(&th, NULL, signal_later, &s));
	EXPECT_EQ(STATUS_SUCCESS, wait1(self->dev2, om.hSyncObject, 12,
					5000 * MS));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(STATUS_SUCCESS, s.st);
	EXPECT_EQ(12u, *mcpu);

	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(om.hSyncObject));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(o.hSyncObject));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(s.h));
	EXPECT_EQ(0, close((int)(intptr_t)nt));
}

/*
 * Shared fences are read through the adapter's CPU window: one mapping,
 * a page of it per handle (created or opened), the page given back with
 * the handle and given to the next one.
 */
TEST_F(fence, shared_fences_share_one_window)
{
	D3DKMT_OPENNATIVEFENCEFROMNTHANDLE o;
	volatile UINT64 *s[4], *again;
	D3DKMT_HANDLE h[4], ha;
	HANDLE nt;
	int i;

	for (i = 0; i < 4; i++) {
		h[i] = create_fence(_metadata, self->dev, 3, 10 + i, &s[i]);
		ASSERT_NE(NULL, s[i]);
		EXPECT_EQ(10u + i, *s[i]);
	}
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTShareObjects(1, &h[0], NULL, 0, &nt));
	ASSERT_EQ(STATUS_SUCCESS, open_fence(self->dev, nt, 0, &o));
	/* Consecutive pages of one window, the open's a page of its own. */
	for (i = 1; i < 4; i++)
		EXPECT_EQ(page_of(s[0]) + 4096u * i, page_of(s[i]));
	EXPECT_EQ(page_of(s[0]) + 4096u * 4,
		  page_of(o.NativeFenceMapping.CurrentValueCpuVa));
	EXPECT_EQ(10u, *(volatile UINT64 *)o.NativeFenceMapping.CurrentValueCpuVa);
	EXPECT_EQ(STATUS_SUCCESS, signal1(self->dev, h[0], 20));
	EXPECT_EQ(20u, *(volatile UINT64 *)o.NativeFenceMapping.CurrentValueCpuVa);

	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(h[1]));
	EXPECT_TRUE(shows_nothing(s[1]));
	ha = create_fence(_metadata, self->dev, 3, 30, &again);
	EXPECT_EQ(page_of(s[1]), page_of(again));
	EXPECT_EQ(30u, *again);

	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(ha));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(o.hSyncObject));
	for (i = 0; i < 4; i++)
		if (i != 1)
			EXPECT_EQ(STATUS_SUCCESS, destroy_sync(h[i]));
	close((int)(intptr_t)nt);
}

/* The process's address space in pages (/proc/self/statm's first field). */
static unsigned long vm_pages(void)
{
	unsigned long size = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f) {
		if (fscanf(f, "%lu", &size) != 1)
			size = 0;
		fclose(f);
	}
	return size;
}

/*
 * Open a new adapter (index @index, node @node) with the window on or off,
 * make two shared fences on it, check their pages, and close everything:
 * the process's address space is back where it was (the window, or the
 * pages, unmapped with the adapter).
 */
static void open_use_close(struct __test_metadata *_metadata,
			   const char *dir, const char *node,
			   unsigned int index, bool window)
{
	struct mock_adapter a = mock_default_adapter(index);
	D3DKMT_OPENADAPTERFROMLUID oa = { 0 };
	D3DKMT_CLOSEADAPTER ca = { 0 };
	volatile UINT64 *s, *t;
	D3DKMT_HANDLE dev, hs, ht;
	unsigned long before;

	ASSERT_EQ(0, mock_add_node(dir, node, &a));
	before = vm_pages();
	ASSERT_NE(0ul, before);
	mock_set_window(window);
	oa.AdapterLuid.LowPart = a.luid_low;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTOpenAdapterFromLuid(&oa));
	mock_set_window(true);
	/* With a window, the adapter holds address space from its open. */
	if (window)
		EXPECT_LT(before, vm_pages());
	ASSERT_EQ(STATUS_SUCCESS, create_device(oa.hAdapter, &dev));
	hs = create_fence(_metadata, dev, 3, 5, &s);
	ht = create_fence(_metadata, dev, 3, 6, &t);
	ASSERT_NE(NULL, s);
	ASSERT_NE(NULL, t);
	EXPECT_EQ(5u, *s);
	EXPECT_EQ(6u, *t);
	if (window) {
		EXPECT_EQ(page_of(s) + 4096u, page_of(t));
	} else {
		EXPECT_NE(page_of(s), page_of(t));
	}
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(hs));
	EXPECT_TRUE(shows_nothing(s));
	/* A page mapped on its own goes with its last handle. */
	if (!window)
		EXPECT_FALSE(mapped(s));
	EXPECT_EQ(6u, *t);
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(ht));
	EXPECT_EQ(STATUS_SUCCESS, destroy_device(dev));
	ca.hAdapter = oa.hAdapter;
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTCloseAdapter(&ca));
	EXPECT_EQ(before, vm_pages());
}

/*
 * On a kernel without FENCE_WINDOW each shared fence's page is mapped on
 * its own, and unmapped with its last handle.
 */
TEST_F(fence, shared_fences_without_window)
{
	/* The fake driver maps its memory of fence values on first use. */
	EXPECT_EQ(STATUS_SUCCESS,
		  destroy_sync(create_fence(_metadata, self->dev, 0, 1, NULL)));
	open_use_close(_metadata, self->dir, "renderD135", 7, false);
}

/* The adapter's window goes with the adapter's last handle. */
TEST_F(fence, adapter_close_gives_back_its_window)
{
	EXPECT_EQ(STATUS_SUCCESS,
		  destroy_sync(create_fence(_metadata, self->dev, 0, 1, NULL)));
	open_use_close(_metadata, self->dir, "renderD136", 8, true);
}

/*
 * A window the kernel made but mmap() refused (an unplug in between): the
 * adapter does not open, with the mmap's status, and the address space
 * reserved for the window is given back, whether the failed mmap() left
 * the range as it was or unmapped it; a page another thread mapped in
 * the range meanwhile is not the library's, and stays. Then the adapter
 * opens with its window.
 */
TEST_F(fence, failed_window_map_gives_back_its_reservation)
{
	static const enum mock_map_fail how[] = {
		MOCK_MAP_FAIL_KEEP, MOCK_MAP_FAIL_UNMAP, MOCK_MAP_FAIL_TAKEN,
	};
	struct mock_adapter a = mock_default_adapter(9);
	D3DKMT_OPENADAPTERFROMLUID oa = { 0 };
	D3DKMT_CLOSEADAPTER ca = { 0 };
	volatile UINT64 *taken;
	unsigned long before;
	unsigned int i;

	ASSERT_EQ(0, mock_add_node(self->dir, "renderD137", &a));
	oa.AdapterLuid.LowPart = a.luid_low;
	for (i = 0; i < ARRAY_SIZE(how); i++) {
		before = vm_pages();
		ASSERT_NE(0ul, before);
		mock_fail_window_map(how[i], ENODEV);
		EXPECT_EQ(STATUS_DEVICE_REMOVED,
			  D3DKMTOpenAdapterFromLuid(&oa));
		mock_fail_window_map(MOCK_MAP_OK, 0);
		taken = mock_window_taken();
		if (how[i] != MOCK_MAP_FAIL_TAKEN) {
			EXPECT_EQ(before, vm_pages()) {
				TH_LOG("failure %u: %ld pages left mapped", i,
				       (long)(vm_pages() - before));
			}
			continue;
		}
		ASSERT_NE(NULL, taken);
		ASSERT_TRUE(mapped(taken));
		EXPECT_EQ(MOCK_TAKEN_MARK, *taken);
		EXPECT_EQ(before + 1, vm_pages());
		EXPECT_EQ(0, munmap((void *)taken, 4096));
	}
	EXPECT_EQ(3u, mock_open_files());

	before = vm_pages();
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTOpenAdapterFromLuid(&oa));
	EXPECT_LT(before, vm_pages());
	ca.hAdapter = oa.hAdapter;
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTCloseAdapter(&ca));
}

TEST_F(fence, destroy_device_closes_its_sync_objects)
{
	D3DKMT_OPENNATIVEFENCEFROMNTHANDLE o;
	volatile UINT64 *a, *s, *k;
	D3DKMT_HANDLE ha, hs, hk;
	HANDLE nt;

	ha = create_fence(_metadata, self->dev, 0, 1, &a);
	hs = create_fence(_metadata, self->dev, 3, 2, &s);
	hk = create_fence(_metadata, self->dev1, 0, 3, &k);
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTShareObjects(1, &hs, NULL, 0, &nt));
	ASSERT_EQ(STATUS_SUCCESS, open_fence(self->dev, nt, 0, &o));
	EXPECT_EQ(4u, mock_live_fences());

	ASSERT_EQ(STATUS_SUCCESS, destroy_device(self->dev));
	EXPECT_EQ(1u, mock_live_fences());
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_sync(ha));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_sync(hs));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_sync(o.hSyncObject));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTShareObjects(1, &hs, NULL, 0, &nt));
	EXPECT_FALSE(mapped(a));
	EXPECT_TRUE(shows_nothing(s));

	/* Other devices' sync objects are untouched. */
	EXPECT_EQ(3u, *k);
	EXPECT_EQ(STATUS_SUCCESS, signal1(self->dev1, hk, 4));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(hk));
	close((int)(intptr_t)nt);
}

TEST_F(fence, fork_child_opens_and_signals)
{
	volatile UINT64 *cpu;
	D3DKMT_HANDLE h;
	HANDLE nt;
	pid_t pid;
	int status;

	h = create_fence(_metadata, self->dev, 3, 0, &cpu);
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTShareObjects(1, &h, NULL, 0, &nt));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		D3DKMT_OPENADAPTERFROMLUID oa = {
			.AdapterLuid = self->adapters[0].AdapterLuid,
		};
		D3DKMT_OPENNATIVEFENCEFROMNTHANDLE o;
		D3DKMT_CLOSEADAPTER ca;
		D3DKMT_HANDLE dev;
		int bad = 0;

		usleep(50000);
		bad |= D3DKMTOpenAdapterFromLuid(&oa) != STATUS_SUCCESS;
		bad |= create_device(oa.hAdapter, &dev) != STATUS_SUCCESS;
		bad |= open_fence(dev, nt, 0, &o) != STATUS_SUCCESS;
		bad |= signal1(dev, o.hSyncObject, 9) != STATUS_SUCCESS;
		bad |= destroy_sync(o.hSyncObject) != STATUS_SUCCESS;
		bad |= destroy_device(dev) != STATUS_SUCCESS;
		ca.hAdapter = oa.hAdapter;
		bad |= D3DKMTCloseAdapter(&ca) != STATUS_SUCCESS;
		_exit(bad);
	}
	EXPECT_EQ(STATUS_SUCCESS, wait1(self->dev, h, 9, 5000 * MS));
	EXPECT_EQ(9u, *cpu);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(h));
	close((int)(intptr_t)nt);
}

#define THREADS		8
#define ROUNDS		100

static D3DKMT_HANDLE thread_dev;

static void *fence_thread(void *p)
{
	int *failures = p;
	D3DKMT_CREATENATIVEFENCE cf;
	D3DKMT_HANDLE h[4];
	UINT64 v[4] = { 1, 2, 3, 4 };
	volatile UINT64 *cpu[4];
	int r, i;

	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < 4; i++) {
			if (create_fence_ex(thread_dev,
					    D3DDDI_NATIVEFENCE_TYPE_DEFAULT,
					    i == 3 ? 3 : 0, 0, &cf))
				(*failures)++;
			h[i] = cf.hSyncObject;
			cpu[i] = cf.Info.NativeFenceMapping.CurrentValueCpuVa;
		}
		if (signal_n(thread_dev, 4, h, v) ||
		    wait_n(thread_dev, 4, h, v, false, 0, NULL))
			(*failures)++;
		for (i = 0; i < 4; i++) {
			if (!cpu[i] || *cpu[i] != v[i])
				(*failures)++;
			if (destroy_sync(h[i]))
				(*failures)++;
		}
	}
	return NULL;
}

TEST_F(fence, concurrent_fences)
{
	pthread_t th[THREADS];
	int failures[THREADS] = { 0 };
	int i;

	thread_dev = self->dev;
	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, fence_thread,
					    &failures[i]));
	for (i = 0; i < THREADS; i++) {
		ASSERT_EQ(0, pthread_join(th[i], NULL));
		EXPECT_EQ(0, failures[i]);
	}
	EXPECT_EQ(0u, mock_live_fences());
}

static void *create_until_gone(void *p)
{
	D3DKMT_CREATENATIVEFENCE cf;
	D3DKMT_HANDLE ring[8] = { 0 };
	int *created = p;
	NTSTATUS st;
	int i;

	/*
	 * Create and destroy until the device is gone: destroys race the
	 * device's, the survivors die with it.
	 */
	for (i = 0; i < 2000; i++) {
		st = create_fence_ex(thread_dev, D3DDDI_NATIVEFENCE_TYPE_DEFAULT,
				     i % 3 ? 0 : 3, 0, &cf);
		if (st != STATUS_SUCCESS) {
			if (!i)	/* let the main thread go on */
				__atomic_store_n(created, -1, __ATOMIC_RELAXED);
			break;
		}
		__atomic_add_fetch(created, 1, __ATOMIC_RELAXED);
		if (ring[i % 8])
			destroy_sync(ring[i % 8]);
		ring[i % 8] = cf.hSyncObject;
	}
	return NULL;
}

TEST_F(fence, destroy_device_races_create)
{
	pthread_t th[4];
	int created[4] = { 0 };
	int i;

	thread_dev = self->dev;
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, create_until_gone,
					    &created[i]));
	/* Once every thread is under way. */
	for (i = 0; i < 4; i++)
		while (!__atomic_load_n(&created[i], __ATOMIC_RELAXED))
			usleep(100);
	EXPECT_EQ(STATUS_SUCCESS, destroy_device(self->dev));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_join(th[i], NULL));
	EXPECT_EQ(0u, mock_live_fences());
}

/* The argument of a D3DDDI_MONITORED_FENCE create. */
static void fill_monitored(D3DKMT_HANDLE dev, UINT flags, UINT64 initial,
			   D3DKMT_CREATESYNCHRONIZATIONOBJECT2 *c)
{
	memset(c, 0, sizeof(*c));
	c->hDevice = dev;
	c->Info.Type = D3DDDI_MONITORED_FENCE;
	c->Info.Flags.Value = flags;
	c->Info.MonitoredFence.InitialFenceValue = initial;
}

/* D3DKMTCreateSynchronizationObject2 with a D3DDDI_MONITORED_FENCE. */
static NTSTATUS create_monitored(D3DKMT_HANDLE dev, UINT flags, UINT64 initial,
				 D3DKMT_CREATESYNCHRONIZATIONOBJECT2 *c)
{
	fill_monitored(dev, flags, initial, c);
	return D3DKMTCreateSynchronizationObject2(c);
}

/*
 * The syncobj bridge calls reach the kernel with the kernel's handles of
 * the device and the fence, and the caller's values, point, syncobj and
 * sync_file as given; a fence of another device reaches no ioctl.
 */
TEST_F(fence, syncobj_bridge_passes_kernel_handles)
{
	D3DKMT_HANDLE h, other, gone;
	struct mock_bridge_call call;
	unsigned int binds, signals;
	uint32_t k;

	ASSERT_EQ(STATUS_SUCCESS, create_device(self->adapters[0].hAdapter,
						&gone));
	h = create_fence(_metadata, self->dev, 0, 0, NULL);
	k = mock_last_fence_handle();
	other = create_fence(_metadata, self->dev1, 0, 0, NULL);

	ASSERT_EQ(STATUS_SUCCESS, NFenceBindSyncobjPoint(self->dev, h, 7, 3, 4));
	call = mock_last_bridge_call();
	EXPECT_EQ(DRM_NFENCE_SYNCOBJ_BIND, call.nr);
	EXPECT_EQ(k, call.fence);
	EXPECT_EQ(7u, call.value);
	EXPECT_EQ(3u, call.syncobj);
	EXPECT_EQ(4u, call.point);

	ASSERT_EQ(STATUS_SUCCESS,
		  NFenceSignalFromSyncobjPoint(self->dev, h, 9, 5, 0));
	call = mock_last_bridge_call();
	EXPECT_EQ(DRM_NFENCE_SYNCOBJ_SIGNAL, call.nr);
	EXPECT_EQ(k, call.fence);
	EXPECT_EQ(9u, call.value);
	EXPECT_EQ(5u, call.syncobj);
	EXPECT_EQ(0u, call.point);
	EXPECT_EQ(0, call.fd);
	EXPECT_EQ(0u, call.flags);

	ASSERT_EQ(STATUS_SUCCESS, NFenceSignalFromSyncFile(self->dev, h, 10, 6));
	call = mock_last_bridge_call();
	EXPECT_EQ(DRM_NFENCE_SYNCOBJ_SIGNAL, call.nr);
	EXPECT_EQ(k, call.fence);
	EXPECT_EQ(10u, call.value);
	EXPECT_EQ(0u, call.syncobj);
	EXPECT_EQ(0u, call.point);
	EXPECT_EQ(6, call.fd);
	EXPECT_EQ(DRM_NFENCE_SYNCOBJ_SIGNAL_SYNC_FILE, call.flags);

	/* Another device's fence, or a destroyed device: no ioctl at all. */
	ASSERT_EQ(STATUS_SUCCESS, destroy_device(gone));
	binds = mock_ioctl_calls(DRM_NFENCE_SYNCOBJ_BIND);
	signals = mock_ioctl_calls(DRM_NFENCE_SYNCOBJ_SIGNAL);
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceBindSyncobjPoint(self->dev, other, 1, 1, 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceSignalFromSyncobjPoint(self->dev, other, 1, 1, 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceSignalFromSyncFile(self->dev, other, 1, 6));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceBindSyncobjPoint(gone, h, 1, 1, 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceSignalFromSyncFile(gone, h, 1, 6));
	EXPECT_EQ(binds, mock_ioctl_calls(DRM_NFENCE_SYNCOBJ_BIND));
	EXPECT_EQ(signals, mock_ioctl_calls(DRM_NFENCE_SYNCOBJ_SIGNAL));

	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(h));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(other));
}

/*
 * A monitored fence is a sync object like a native fence: CPU view, GPU
 * VA, signal and wait, destroy; on an adapter without native fences too.
 */
TEST_F(fence, monitored_create_signal_wait)
{
	D3DKMT_CREATESYNCHRONIZATIONOBJECT2 c;
	volatile UINT64 *cpu;
	D3DKMT_HANDLE devs[2] = { self->dev, self->dev2 };
	int i;

	for (i = 0; i < 2; i++) {
		fill_monitored(devs[i], 0, 7, &c);
		c.Info.SharedHandle = 0xa5a5a5a5u;
		ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateSynchronizationObject2(&c));
		EXPECT_NE(0u, c.hSyncObject);
		/* No global share handle: sharing is through NT handles. */
		EXPECT_EQ(0u, c.Info.SharedHandle);
		cpu = c.Info.MonitoredFence.FenceValueCPUVirtualAddress;
		ASSERT_NE(NULL, cpu);
		EXPECT_NE(0u, c.Info.MonitoredFence.FenceValueGPUVirtualAddress);
		EXPECT_EQ(7ull, *cpu);
		EXPECT_EQ(STATUS_SUCCESS, wait1(devs[i], c.hSyncObject, 7, 0));
		EXPECT_EQ(STATUS_TIMEOUT, wait1(devs[i], c.hSyncObject, 8, 0));
		EXPECT_EQ(STATUS_SUCCESS, signal1(devs[i], c.hSyncObject, 9));
		EXPECT_EQ(9ull, *cpu);
		EXPECT_EQ(STATUS_SUCCESS, wait1(devs[i], c.hSyncObject, 8, 0));
		EXPECT_EQ(1u, mock_live_fences());
		EXPECT_EQ(STATUS_SUCCESS, destroy_sync(c.hSyncObject));
		EXPECT_EQ(0u, mock_live_fences());
	}
}

TEST_F(fence, monitored_create_errors)
{
	D3DKMT_CREATESYNCHRONIZATIONOBJECT2 c, before;
	static const struct {
		int type;
		NTSTATUS st;
	} types[] = {
		{ 0, STATUS_INVALID_PARAMETER },
		{ D3DDDI_SYNCHRONIZATION_MUTEX, STATUS_NOT_SUPPORTED },
		{ D3DDDI_SEMAPHORE, STATUS_NOT_SUPPORTED },
		{ D3DDDI_FENCE, STATUS_NOT_SUPPORTED },
		{ D3DDDI_CPU_NOTIFICATION, STATUS_NOT_SUPPORTED },
		{ D3DDDI_PERIODIC_MONITORED_FENCE, STATUS_NOT_SUPPORTED },
		{ 7, STATUS_INVALID_PARAMETER },
		{ -1, STATUS_INVALID_PARAMETER },
	};
	static const struct {
		UINT flags;
		NTSTATUS st;
	} bad[] = {
		{ 1u << 1, STATUS_INVALID_PARAMETER },	/* NtSecurity, !Shared */
		{ 1u << 2, STATUS_INVALID_PARAMETER },	/* CrossAdapter, !Shared */
		{ 3u << 1, STATUS_INVALID_PARAMETER },	/* ditto, NtSecurity */
		{ 1u << 3, STATUS_NOT_SUPPORTED },	/* TopOfPipeline */
		{ 3u << 4, STATUS_INVALID_PARAMETER },	/* NoSignal|NoWait */
		{ 1u << 6, STATUS_NOT_SUPPORTED },	/* NoSignalMaxValueOnTdr */
		{ 1u << 7, STATUS_NOT_SUPPORTED },	/* NoGPUAccess */
		{ 1u << 8, STATUS_INVALID_PARAMETER },	/* SignalByKmd */
		{ 1u << 31, STATUS_INVALID_PARAMETER },	/* RESERVED0 */
	};
	size_t i;

	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTCreateSynchronizationObject2(NULL));
	for (i = 0; i < ARRAY_SIZE(types); i++) {
		fill_monitored(self->dev, 0, 1, &c);
		c.Info.Type = (D3DDDI_SYNCHRONIZATIONOBJECT_TYPE)types[i].type;
		before = c;
		EXPECT_EQ(types[i].st, D3DKMTCreateSynchronizationObject2(&c))
			TH_LOG("type %d", types[i].type);
		EXPECT_EQ(0, memcmp(&c, &before, sizeof(c)));
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(bad[i].st, create_monitored(self->dev, bad[i].flags, 0,
						      &c))
			TH_LOG("flags 0x%x", bad[i].flags);
		EXPECT_EQ(0u, c.hSyncObject);
	}
	/*
	 * Shared | CrossAdapter is a valid monitored fence, with or without
	 * native fences on the adapter.
	 */
	for (i = 0; i < 2; i++) {
		D3DKMT_HANDLE d = i ? self->dev2 : self->dev;

		EXPECT_EQ(STATUS_SUCCESS,
			  create_monitored(d, (1u << 0) | (1u << 2), 0, &c))
			TH_LOG("adapter %s", i ? "2" : "0");
		EXPECT_NE(0u, c.hSyncObject);
		EXPECT_EQ(STATUS_SUCCESS, destroy_sync(c.hSyncObject));
	}
	/* EngineAffinity: physical adapters, one here. */
	fill_monitored(self->dev, 0, 0, &c);
	c.Info.MonitoredFence.EngineAffinity = 2;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTCreateSynchronizationObject2(&c));
	EXPECT_EQ(0u, c.hSyncObject);
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_monitored(self->adapters[0].hAdapter, 0, 0, &c));
	EXPECT_EQ(0u, mock_live_fences());
}

/* Shared through an NT handle, opened on another device of its adapter. */
TEST_F(fence, monitored_share_and_open)
{
	D3DKMT_CREATESYNCHRONIZATIONOBJECT2 c;
	D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 o;
	D3DKMT_OPENNATIVEFENCEFROMNTHANDLE on;
	D3DKMT_HANDLE dev0b;
	HANDLE nt = NULL;

	ASSERT_EQ(STATUS_SUCCESS, create_monitored(self->dev, 3, 5, &c));
	ASSERT_EQ(STATUS_SUCCESS,
		  D3DKMTShareObjects(1, &c.hSyncObject, NULL, 0, &nt));
	ASSERT_EQ(STATUS_SUCCESS, create_device(self->adapters[0].hAdapter,
						&dev0b));

	memset(&o, 0, sizeof(o));
	o.hNtHandle = nt;
	o.hDevice = dev0b;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTOpenSyncObjectFromNtHandle2(&o));
	EXPECT_NE(0u, o.hSyncObject);
	EXPECT_NE(c.hSyncObject, o.hSyncObject);
	ASSERT_NE(NULL, o.MonitoredFence.FenceValueCPUVirtualAddress);
	EXPECT_NE(0u, o.MonitoredFence.FenceValueGPUVirtualAddress);
	EXPECT_EQ(5ull, *(volatile UINT64 *)
			o.MonitoredFence.FenceValueCPUVirtualAddress);
	EXPECT_EQ(STATUS_SUCCESS, signal1(dev0b, o.hSyncObject, 6));
	EXPECT_EQ(6ull, *(volatile UINT64 *)
			c.Info.MonitoredFence.FenceValueCPUVirtualAddress);

	/* Through the native call, on its own adapter: still monitored. */
	ASSERT_EQ(STATUS_SUCCESS, open_fence(dev0b, nt, 0, &on));
	EXPECT_EQ(6ull, *(volatile UINT64 *)
			on.NativeFenceMapping.CurrentValueCpuVa);
	EXPECT_NE(0u, on.NativeFenceMapping.CurrentValueGpuVa);
	EXPECT_EQ(0u, on.NativeFenceMapping.MonitoredValueGpuVa);
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(on.hSyncObject));

	/* Errors: nothing written. */
	memset(&o, 0, sizeof(o));
	o.hDevice = dev0b;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTOpenSyncObjectFromNtHandle2(NULL));
	EXPECT_EQ(STATUS_INVALID_HANDLE, D3DKMTOpenSyncObjectFromNtHandle2(&o));
	/* The adapter's render node is no fence. */
	o.hNtHandle = (HANDLE)(intptr_t)NFenceGetAdapterFd(self->adapters[0].hAdapter);
	EXPECT_EQ(STATUS_INVALID_HANDLE, D3DKMTOpenSyncObjectFromNtHandle2(&o));
	o.hNtHandle = nt;
	o.Flags.CrossAdapter = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTOpenSyncObjectFromNtHandle2(&o));
	o.Flags.Value = 3u << 4;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTOpenSyncObjectFromNtHandle2(&o));
	o.Flags.Value = 0;
	o.MonitoredFence.EngineAffinity = 4;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTOpenSyncObjectFromNtHandle2(&o));
	EXPECT_EQ(0u, o.hSyncObject);
	EXPECT_EQ(NULL, o.MonitoredFence.FenceValueCPUVirtualAddress);
	close((int)(intptr_t)nt);
	EXPECT_EQ(STATUS_SUCCESS, destroy_device(dev0b));
}

/*
 * A CrossAdapter monitored fence of an adapter without native fences
 * opens as a native fence (with a MonitoredValue of its own) on the
 * adapters with native fences, sharing CurrentValue both ways; on its own
 * adapter it opens only as the monitored fence it is.
 */
TEST_F(fence, monitored_cross_adapter_open)
{
	struct signaler s2 = { .dev = self->dev2, .value = 9, .delay_ms = 50 };
	struct signaler s0 = { .dev = self->dev, .value = 10, .delay_ms = 50 };
	D3DKMT_CREATESYNCHRONIZATIONOBJECT2 c, local;
	D3DKMT_OPENNATIVEFENCEFROMNTHANDLE o, o1, o2;
	D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 om;
	volatile UINT64 *cpu, *ocpu;
	unsigned int opens;
	HANDLE nt = NULL, ntl = NULL;
	D3DKMT_HANDLE dev2b;
	pthread_t th;

	/* Shared | NtSecuritySharing | CrossAdapter, on adapter 2. */
	ASSERT_EQ(STATUS_SUCCESS, create_monitored(self->dev2, 7, 5, &c));
	cpu = c.Info.MonitoredFence.FenceValueCPUVirtualAddress;
	ASSERT_NE(NULL, cpu);
	ASSERT_EQ(STATUS_SUCCESS,
		  D3DKMTShareObjects(1, &c.hSyncObject, NULL, 0, &nt));

	/* On its own adapter: a monitored fence, never a native one. */
	opens = mock_ioctl_calls(DRM_NFENCE_FENCE_OPEN);
	EXPECT_EQ(STATUS_NOT_SUPPORTED, open_fence(self->dev2, nt, 0, &o2));
	EXPECT_EQ(0u, o2.hSyncObject);
	EXPECT_EQ(opens, mock_ioctl_calls(DRM_NFENCE_FENCE_OPEN));
	ASSERT_EQ(STATUS_SUCCESS, create_device(self->adapters[2].hAdapter,
						&dev2b));
	memset(&om, 0, sizeof(om));
	om.hNtHandle = nt;
	om.hDevice = dev2b;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTOpenSyncObjectFromNtHandle2(&om));
	EXPECT_EQ(5u, *(volatile UINT64 *)
			om.MonitoredFence.FenceValueCPUVirtualAddress);
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(om.hSyncObject));
	EXPECT_EQ(STATUS_SUCCESS, destroy_device(dev2b));

	/* A native fence on adapter 0, with a MonitoredValue of its own. */
	ASSERT_EQ(STATUS_SUCCESS, open_fence(self->dev, nt, 0, &o));
	EXPECT_NE(0u, o.hSyncObject);
	ocpu = o.NativeFenceMapping.CurrentValueCpuVa;
	ASSERT_NE(NULL, ocpu);
	EXPECT_NE(0u, o.NativeFenceMapping.CurrentValueGpuVa);
	EXPECT_NE(0u, o.NativeFenceMapping.MonitoredValueGpuVa);
	EXPECT_NE(o.NativeFenceMapping.CurrentValueGpuVa,
		  o.NativeFenceMapping.MonitoredValueGpuVa);
	EXPECT_EQ(5u, *ocpu);

	/* Values shared both ways. */
	EXPECT_EQ(STATUS_SUCCESS, signal1(self->dev, o.hSyncObject, 6));
	EXPECT_EQ(6u, *cpu);
	EXPECT_EQ(STATUS_SUCCESS, signal1(self->dev2, c.hSyncObject, 8));
	EXPECT_EQ(8u, *ocpu);

	/* CPU waiters released both ways. */
	s2.h = c.hSyncObject;
	ASSERT_EQ(0, pthread_create(&th, NULL, signal_later, &s2));
	EXPECT_EQ(STATUS_SUCCESS, wait1(self->dev, o.hSyncObject, 9,
					5000 * MS));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(STATUS_SUCCESS, s2.st);
	s0.h = o.hSyncObject;
	ASSERT_EQ(0, pthread_create(&th, NULL, signal_later, &s0));
	EXPECT_EQ(STATUS_SUCCESS, wait1(self->dev2, c.hSyncObject, 10,
					5000 * MS));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(STATUS_SUCCESS, s0.st);
	EXPECT_EQ(10u, *cpu);

	/* And on adapter 1, another adapter with native fences. */
	ASSERT_EQ(STATUS_SUCCESS, open_fence(self->dev1, nt, 0, &o1));
	EXPECT_NE(0u, o1.NativeFenceMapping.MonitoredValueGpuVa);
	EXPECT_EQ(10u, *(volatile UINT64 *)
			o1.NativeFenceMapping.CurrentValueCpuVa);

	/* A monitored fence without CrossAdapter stays on its adapter. */
	ASSERT_EQ(STATUS_SUCCESS, create_monitored(self->dev2, 3, 0, &local));
	ASSERT_EQ(STATUS_SUCCESS,
		  D3DKMTShareObjects(1, &local.hSyncObject, NULL, 0, &ntl));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, open_fence(self->dev, ntl, 0, &o2));
	EXPECT_EQ(0u, o2.hSyncObject);

	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(o1.hSyncObject));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(o.hSyncObject));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(c.hSyncObject));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(local.hSyncObject));
	EXPECT_EQ(0, close((int)(intptr_t)nt));
	EXPECT_EQ(0, close((int)(intptr_t)ntl));
}

TEST_HARNESS_MAIN
