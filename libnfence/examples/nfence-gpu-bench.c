/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * nfence-gpu-bench: what native GPU fences buy, measured in one run on the
 * first adapter with native fences and two engines, each result printed
 * with its ratio to a baseline measured in the same run:
 *
 *  a) engine-to-engine ping-pong. Native: queue A (engine 0) runs
 *     FENCE_SIGNAL(F1, i); FENCE_WAIT(F2, i) and queue B (engine 1)
 *     FENCE_WAIT(F1, i); FENCE_SIGNAL(F2, i) for i = 1..N, all on the GPU,
 *     unlogged (NFenceCs*Unlogged(): the fence commands alone, as measured
 *     since 0.2; the output says "native (unlogged)").
 *     Legacy (the baseline): the same round trips as a WDDM 2.x runtime
 *     makes them, with the calls it would use: two monitored fences
 *     (D3DKMTCreateSynchronizationObject2) signaled and waited for on the
 *     two engines' contexts (D3DKMTSignalSynchronizationObjectFromGpu /
 *     D3DKMTWaitForSynchronizationObjectFromGpu, one ioctl each), resolved
 *     by the kernel through the CPU. Round trips per second, the best of
 *     three runs each, and the ratio of the bests native / legacy (the
 *     goal is 10x or more). Like with like: WDDM 2.x monitored fences
 *     signaled by the GPU, as the native fences are: queues A and B
 *     without NativeProgressFence, each submission a one-NOP command
 *     buffer whose completion the GPU signals on the queue's monitored
 *     progress fence (a monitored fence interrupt each time), and each
 *     queue held by the kernel (SubmitWaitForSyncObjectsToHwQueue) until
 *     the other's progress fence reaches the round trip; the ratio native
 *     / monitored is printed too. The floor: the same round trips through
 *     plain GPU memory (WRITE64 and unlogged FENCE_WAIT on two values, no
 *     fence), what the simulated GPU itself does per round trip; the
 *     ratio native / floor says what the fence bookkeeping costs (the
 *     goal is 0.5x or more).
 *  b) CPU interrupts per 100,000 unlogged GPU signals (the "interrupts:"
 *     counter of debugfs nfence_interrupts): with no CPU waiter (the GPU checks
 *     MonitoredValue and suppresses the interrupt; the target is 0), and,
 *     as the baseline, with one CPU waiter per signal (the GPU does
 *     FENCE_WAIT(Fgo, i); FENCE_SIGNAL(F, i) while the CPU waits
 *     asynchronously for F >= i before it signals Fgo = i: about one
 *     interrupt per signal). Fewer signals than 100,000 may run (the time
 *     budget); the counts are then scaled, and the output says so.
 *  c) kernel-mode submission: one-NOP submissions per second, queued back
 *     to back, against the baseline of one submission at a time (submit,
 *     then wait for the progress fence), whose mean latency is printed too.
 *  d) user-mode submission (WDDM 3.2 doorbells) against kernel-mode
 *     submission, on engine 0 of the same device: a UserModeSubmission
 *     queue with its ring (RING_ENTRIES entries, as many as a kernel-mode
 *     queue holds), ring control and doorbell, fed by NFenceRingSubmit(),
 *     and the kernel-mode queue of a) to c) fed by
 *     D3DKMTSubmitCommandToHwQueue(). Latency: one one-NOP command buffer
 *     at a time, submitted, then the progress fence's CPU value spun on
 *     until it has the submission's value (the doorbell's command buffer
 *     signals the progress fence itself, after the NOP; the kernel signals
 *     it for the kernel-mode one). Rate: one-NOP submissions back to back
 *     (the doorbell path waits for room when the ring is full, the ioctl
 *     blocks when the queue is), then the last one awaited the same way.
 *     Each the best of three calibrated runs per side, and the ratios
 *     doorbell / kernel-mode: of mean latencies (the goal is 0.5x or less)
 *     and of rates (the goal is 3x or more). The doorbell's connects and
 *     notifies (its only system calls) are counted. Skipped, with the
 *     reason, when the adapter, engine 0 or the driver has no user-mode
 *     submission.
 *
 *  e) the native fence signaled interrupt's payloads (the module parameter
 *     interrupt_payload; "make bench-gpu" loads an adapter for each, with the
 *     signaled fences, no payload (a scan of every fence) and the
 *     optimized one naming the hardware queue, whose signal log the
 *     driver reads): on each native fence adapter, with 1, 64 and 4096
 *     fences that have a CPU waiter, the GPU signals one of them (a
 *     logged FENCE_SIGNAL naming it) for a CPU waiter that waits again
 *     each time, as in b). Per payload and count: the driver's time per
 *     interrupt (debugfs nfence_interrupts handler_ns / interrupts) and
 *     CPU wake-ups per GPU signal (woken / signals), and the ratio of the
 *     time per interrupt at 4096 fences to that at 1 fence (the goal for
 *     the optimized payload: it does not grow, 2x at most). Skipped, with
 *     the reason, without debugfs.
 *
 *  g) what the UMD pays to encode a wait and a signal on native fences
 *     (no GPU involved: the commands are written, never submitted),
 *     logged (NFenceCsWaitNativeFence(), NFenceCsSignalNativeFence(): the
 *     log payload, the handle lookup and libnfence's USDT probe, a NOP
 *     while nobody traces) against unlogged (NFenceCs*Unlogged()): ns per
 *     pair, the best of three calibrated runs each, and the ratio logged /
 *     unlogged. Built with NFENCE_NO_PROBES=1 the logged figure is the
 *     same path without the probes: the two builds' ratio is what the
 *     probes cost (Documentation/tracing.rst).
 *
 *  f) what a doorbell client costs the CMP: the CMP thread's CPU time (its
 *     utime + stime in /proc/PID/stat, PID from debugfs nfence_cmp) over
 *     10 s of wall time (1 s with -q) while the process rings a one-NOP
 *     command buffer through its doorbell TICK_HZ times a second, the
 *     work of each done long before the next (empty work), and while it
 *     only calls D3DKMTNotifyWorkSubmission() TICK_HZ times a second;
 *     printed as the ratio of CMP CPU time to wall time (1.00x: a whole
 *     CPU). Not a timed test: a measurement to compare builds with. Skipped,
 *     with the reason, without debugfs or user-mode submission.
 *
 *  h) a cross-adapter fence bounced between engine 0 of two adapters
 *     (A signals 2i - 1 and waits for 2i, B waits for 2i - 1 and signals
 *     2i, unlogged; the end polled from the CPU): GPU to GPU, both
 *     adapters with peer signals (the GPU rings the other GPU's peer
 *     doorbell; the seed's future GPU-to-GPU signal), against through the
 *     CPU, the partner without them (every signal interrupts and the
 *     driver passes it on). Round trips per second, the best of three
 *     calibrated runs each, the interrupts both adapters raise per round
 *     trip (the goal GPU to GPU: 0), and the ratio GPU-to-GPU / through
 *     the CPU (the goal: 1x or more). "make bench-gpu" loads adapters 3
 *     (peer signals) and 4 (none) for it, both with the payload of
 *     adapter 0; skipped, with the reason, without them.
 *
 * Every part is sized from a short calibration run to take about the time
 * budget (-t SECONDS, default 1.5) of wall time; -p LETTERS runs only
 * those parts (e.g. -p g). -q runs tiny fixed sizes
 * (a smoke test). debugfs is found from the adapter's render node
 * (/sys/kernel/debug/dri/<card minor>); -d DIR names the directory.
 *
 * Exit status: 0 if every call succeeded (whatever the numbers: a goal
 * not met is reported, not a failure, and so is a skipped d), 1
 * otherwise.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nfence/d3dkmthk.h>

#define MAX_ADAPTERS	16
#define CMD_SIZE	(1u << 20)	/* the largest submission */
#define CMD_SLICES	16u		/* submissions one command buffer holds */
#define WAIT_NS		(60ull * 1000000000ull)
#define SCALE		100000u		/* signals the interrupt counts are per */

/* Bytes per round trip: a FENCE_SIGNAL (32) and a FENCE_WAIT (24). */
#define PINGPONG_BYTES	56u
#define PINGPONG_SLICE	(CMD_SIZE / PINGPONG_BYTES)
#define PINGPONG_MAX	(CMD_SLICES * PINGPONG_SLICE)
#define SIGNAL_BYTES	32u
#define SIGNAL_SLICE	(CMD_SIZE / SIGNAL_BYTES)
/* e): a FENCE_WAIT (24) and a logged FENCE_SIGNAL (40) per round trip */
#define PAYLOAD_BYTES	64u
#define PAYLOAD_SLICE	(CMD_SIZE / PAYLOAD_BYTES)

/*
 * d): ring entries, as many as a kernel-mode queue holds before submission
 * blocks (the uapi's DRM_NFENCE_MAX_QUEUED), and the bytes of the command
 * buffer of each: a NOP (8) and the progress fence's FENCE_SIGNAL (32).
 */
#define RING_ENTRIES	256u
#define RING_BYTES	(RING_ENTRIES * (UINT)sizeof(NFENCE_RING_ENTRY))
#define RING_SLOT	64u
#define CONTROL_BYTES	4096u

static const char *prog = "nfence-gpu-bench";

/*
 * A queue and its command buffer: CMD_SLICES slices of CMD_SIZE bytes, so
 * that up to CMD_SLICES submissions can be pending at once.
 */
struct queue {
	D3DKMT_HANDLE hContext;
	D3DKMT_CREATEHWQUEUE hw;
	D3DKMT_HANDLE hCommands;
	D3DGPU_VIRTUAL_ADDRESS commands_va;
	BYTE *commands;
	UINT64 progress;		/* last HwQueueProgressFenceId */
	NFENCE_CS cs[CMD_SLICES];	/* an encoder per slice */
};

/*
 * A user-mode-submission queue (d) on its own context on engine 0: its
 * ring buffer, ring control and doorbell, and a command buffer of RING_SLOT
 * bytes per ring entry (entry i's command buffer is slot i).
 */
struct uqueue {
	D3DKMT_NFENCE_USERMODESUBMISSION_CAPS caps;
	D3DKMT_HANDLE hContext;
	D3DKMT_CREATEHWQUEUE hw;
	D3DKMT_HANDLE hRing, hControl, hCommands;
	D3DKMT_CREATE_DOORBELL doorbell;
	NFENCE_RING ring;		/* the ring writer */
	BYTE *commands;
	D3DGPU_VIRTUAL_ADDRESS commands_va;
	UINT64 progress;		/* last progress fence value rung */
};

struct bench {
	D3DKMT_HANDLE hAdapter, hDevice;
	D3DKMT_NFENCE_ADAPTER info;
	struct queue q[2];		/* engines 0 and 1 */
	struct queue mq[2];		/* the same, monitored progress fences */
	struct uqueue u;		/* d): engine 0, user-mode submission */
	char debugfs[PATH_MAX];		/* "" without debugfs */
	double budget;			/* seconds per measurement */
	bool quick;
};

/* A failed call: report it and leave (the kernel cleans up). */
static void fail(NTSTATUS st, const char *what)
{
	fprintf(stderr, "%s: %s: NTSTATUS 0x%08" PRIX32 "\n", prog, what,
		(uint32_t)st);
	exit(1);
}

static void ok(NTSTATUS st, const char *what)
{
	if (st != STATUS_SUCCESS)
		fail(st, what);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static UINT64 read64(const volatile void *p)
{
	return __atomic_load_n((const UINT64 *)p, __ATOMIC_ACQUIRE);
}

/* ---- debugfs -------------------------------------------------------- */

/* The value of "key: value" in @file of the debugfs directory; -1 if none. */
static long long debugfs_read(const struct bench *b, const char *file,
			      const char *key)
{
	char path[PATH_MAX + 64], line[256];
	size_t klen = strlen(key);
	long long v = -1;
	FILE *f;

	if (!b->debugfs[0])
		return -1;
	snprintf(path, sizeof(path), "%s/%s", b->debugfs, file);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':')
			v = strtoll(line + klen + 1, NULL, 10);
	fclose(f);
	return v;
}

static bool debugfs_usable(const char *dir)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/nfence_interrupts", dir);
	return access(path, R_OK) == 0;
}

/*
 * The adapter's debugfs directory: /sys/kernel/debug/dri/<N> with N the
 * minor of its card node (from the render node's sysfs device), else the
 * directory whose nfence_adapter has our adapter index.
 */
static void find_debugfs(struct bench *b)
{
	char path[PATH_MAX], dir[PATH_MAX];
	struct dirent *de;
	struct stat st;
	unsigned int n;
	DIR *d;
	int fd = NFenceGetAdapterFd(b->hAdapter);

	b->debugfs[0] = '\0';
	if (fd >= 0 && !fstat(fd, &st) && S_ISCHR(st.st_mode)) {
		snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/device/drm",
			 major(st.st_rdev), minor(st.st_rdev));
		d = opendir(path);
		while (d && (de = readdir(d))) {
			if (sscanf(de->d_name, "card%u", &n) != 1)
				continue;
			snprintf(dir, sizeof(dir), "/sys/kernel/debug/dri/%u", n);
			if (debugfs_usable(dir)) {
				snprintf(b->debugfs, sizeof(b->debugfs), "%s",
					 dir);
				break;
			}
		}
		if (d)
			closedir(d);
	}
	if (b->debugfs[0])
		return;
	d = opendir("/sys/kernel/debug/dri");
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(b->debugfs, sizeof(b->debugfs),
			 "/sys/kernel/debug/dri/%.64s", de->d_name);
		if (debugfs_usable(b->debugfs) &&
		    debugfs_read(b, "nfence_adapter", "index") ==
		    (long long)b->info.AdapterIndex)
			break;
		b->debugfs[0] = '\0';
	}
	if (d)
		closedir(d);
}

/* ---- setup ---------------------------------------------------------- */

static void setup_queue(struct bench *b, struct queue *q, UINT node,
			bool native)
{
	NFENCE_ALLOCATION_DESC desc = {
		.Size = (UINT64)CMD_SLICES * CMD_SIZE,
		.SegmentId = NFENCE_SEGMENT_ID_SYSTEM,
	};
	D3DKMT_CREATECONTEXTVIRTUAL cc;
	D3DDDI_ALLOCATIONINFO2 info;
	D3DKMT_CREATEALLOCATION ca;
	D3DKMT_LOCK2 lock;

	memset(&cc, 0, sizeof(cc));
	cc.hDevice = b->hDevice;
	cc.NodeOrdinal = node;
	ok(D3DKMTCreateContextVirtual(&cc), "create context");
	q->hContext = cc.hContext;

	memset(&q->hw, 0, sizeof(q->hw));
	q->hw.hHwContext = q->hContext;
	q->hw.Flags.NativeProgressFence = native;
	ok(D3DKMTCreateHwQueue(&q->hw), "create hardware queue");

	desc.Flags.CpuVisible = 1;
	memset(&info, 0, sizeof(info));
	info.pPrivateDriverData = &desc;
	info.PrivateDriverDataSize = sizeof(desc);
	memset(&ca, 0, sizeof(ca));
	ca.hDevice = b->hDevice;
	ca.NumAllocations = 1;
	ca.pAllocationInfo2 = &info;
	ok(D3DKMTCreateAllocation2(&ca), "create command buffer");
	q->hCommands = info.hAllocation;
	q->commands_va = info.GpuVirtualAddress;

	memset(&lock, 0, sizeof(lock));
	lock.hDevice = b->hDevice;
	lock.hAllocation = q->hCommands;
	ok(D3DKMTLock2(&lock), "lock command buffer");
	q->commands = lock.pData;
}

/*
 * The encoder of slice @i of @q's command buffer, emptied to be written
 * again (the GPU must be done with what it held).
 */
static NFENCE_CS *slice(struct queue *q, unsigned int i)
{
	ok(NFenceCsInit(&q->cs[i], q->commands + (size_t)i * CMD_SIZE,
			CMD_SIZE, q->commands_va + (UINT64)i * CMD_SIZE),
	   "init encoder");
	return &q->cs[i];
}

/*
 * Open the first adapter with native fences and, for @index -1, two
 * engines; else the one whose AdapterIndex is @index.
 */
static void open_adapter_at(struct bench *b, long index)
{
	D3DKMT_ADAPTERINFO adapters[MAX_ADAPTERS];
	D3DKMT_ENUMADAPTERS2 ea = { .NumAdapters = MAX_ADAPTERS,
				    .pAdapters = adapters };
	D3DKMT_CREATEDEVICE cd;
	ULONG i;

	ok(D3DKMTEnumAdapters2(&ea), "enumerate adapters");
	for (i = 0; i < ea.NumAdapters; i++) {
		D3DKMT_QUERYADAPTERINFO q = {
			.hAdapter = adapters[i].hAdapter,
			.Type = KMTQAITYPE_NFENCE_ADAPTER,
			.pPrivateDriverData = &b->info,
			.PrivateDriverDataSize = sizeof(b->info),
		};
		D3DKMT_CLOSEADAPTER c = { .hAdapter = adapters[i].hAdapter };

		/* Keep the first that qualifies open, close the others. */
		if (!b->hAdapter && D3DKMTQueryAdapterInfo(&q) == STATUS_SUCCESS &&
		    b->info.Flags.NativeGpuFence &&
		    (index < 0 ? b->info.NumEngines >= 2 :
		     b->info.AdapterIndex == (UINT)index))
			b->hAdapter = adapters[i].hAdapter;
		else
			D3DKMTCloseAdapter(&c);
	}
	if (!b->hAdapter && index < 0) {
		fprintf(stderr, "%s: no adapter with native fences and two "
			"engines\n", prog);
		exit(1);
	}
	if (!b->hAdapter) {
		fprintf(stderr, "%s: adapter %ld has no native fences\n", prog,
			index);
		exit(1);
	}
	memset(&cd, 0, sizeof(cd));
	cd.hAdapter = b->hAdapter;
	ok(D3DKMTCreateDevice(&cd), "create device");
	b->hDevice = cd.hDevice;
}

/* ---- helpers -------------------------------------------------------- */

static D3DKMT_HANDLE create_fence(struct bench *b,
				  D3DDDI_NATIVEFENCEMAPPING *mapping)
{
	D3DKMT_CREATENATIVEFENCE cf;

	memset(&cf, 0, sizeof(cf));
	cf.hDevice = b->hDevice;
	cf.Info.Type = D3DDDI_NATIVEFENCE_TYPE_DEFAULT;
	ok(D3DKMTCreateNativeFence(&cf), "create native fence");
	*mapping = cf.Info.NativeFenceMapping;
	return cf.hSyncObject;
}

static void destroy_fence(D3DKMT_HANDLE h)
{
	D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { .hSyncObject = h };

	ok(D3DKMTDestroySynchronizationObject(&d), "destroy native fence");
}

/* Block until @h reaches @value (a CPU waiter: one interrupt, maybe). */
static void wait_fence(struct bench *b, D3DKMT_HANDLE h, UINT64 value)
{
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = {
		.hDevice = b->hDevice,
		.ObjectCount = 1,
		.ObjectHandleArray = &h,
		.FenceValueArray = &value,
	};
	NTSTATUS st;

	st = NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, WAIT_NS,
							      NULL);
	if (st == STATUS_TIMEOUT)
		fprintf(stderr, "%s: the GPU made no progress in %llu s\n",
			prog, WAIT_NS / 1000000000ull);
	ok(st, "CPU wait");
}

static void signal_fence(struct bench *b, D3DKMT_HANDLE h, UINT64 value)
{
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s = {
		.hDevice = b->hDevice,
		.ObjectCount = 1,
		.ObjectHandleArray = &h,
		.FenceValueArray = &value,
	};

	ok(D3DKMTSignalSynchronizationObjectFromCpu(&s), "CPU signal");
}

/* Poll a CPU-visible value until it reaches @value, without a waiter. */
static void poll_value(const volatile void *cpu_va, UINT64 value)
{
	struct timespec ts = { .tv_nsec = 100000 };
	double deadline = now() + (double)(WAIT_NS / 1000000000ull);

	while (read64(cpu_va) < value) {
		if (now() > deadline)
			fail(STATUS_TIMEOUT, "poll a fence value");
		nanosleep(&ts, NULL);
	}
}

/*
 * Spin on a CPU-visible value until it reaches @value: no waiter and no
 * sleep granularity, for latencies. Yields the CPU at every look, so that
 * a CMP thread woken on this CPU runs at once.
 */
static void spin_value(const volatile void *cpu_va, UINT64 value)
{
	double deadline = 0;
	unsigned long looks = 0;

	while (read64(cpu_va) < value) {
		if (++looks % 4096 == 0) {
			if (!deadline)
				deadline = now() +
					   (double)(WAIT_NS / 1000000000ull);
			else if (now() > deadline)
				fail(STATUS_TIMEOUT, "spin on a fence value");
		}
		sched_yield();
	}
}

/* Submit the commands of @cs (a slice of @q's) to @q. */
static void submit(struct queue *q, const NFENCE_CS *cs)
{
	D3DKMT_SUBMITCOMMANDTOHWQUEUE s;

	ok(NFenceCsStatus(cs), "encode commands");
	memset(&s, 0, sizeof(s));
	s.hHwQueue = q->hw.hHwQueue;
	s.HwQueueProgressFenceId = ++q->progress;
	s.CommandBuffer = NFenceCsGpuVa(cs);
	s.CommandLength = NFenceCsSize(cs);
	ok(D3DKMTSubmitCommandToHwQueue(&s), "submit commands");
}

/* Wait, polling, until @q has run everything submitted. */
static void queue_idle(struct queue *q)
{
	poll_value(q->hw.HwQueueProgressFenceCPUVirtualAddress, q->progress);
}

static void queue_wait(struct queue *q, D3DKMT_HANDLE fence, UINT64 value)
{
	D3DKMT_SUBMITWAITFORSYNCOBJECTSTOHWQUEUE w = {
		.hHwQueue = q->hw.hHwQueue,
		.ObjectCount = 1,
		.ObjectHandleArray = &fence,
		.FenceValueArray = &value,
	};

	ok(D3DKMTSubmitWaitForSyncObjectsToHwQueue(&w), "queue a wait");
}

/*
 * Size @fn to take @target seconds: runs of growing size (at least
 * doubled, at most @max), each sized from the best rate seen so far, until
 * one takes at least half of @target at no less than half that best rate.
 * The first run (of @first) is a warm-up: a phase's first run may stall on
 * emulated CPU wake-ups, and a stalled run is not a measure. At most
 * eight runs. *@n is the size. -q only runs @first once.
 */
static void calibrated(struct bench *b,
		       double (*fn)(struct bench *, unsigned long),
		       unsigned long first, unsigned long max, double target,
		       unsigned long *n)
{
	double t, rate, best, want;
	int runs;

	*n = first;
	t = fn(b, first);
	if (b->quick)
		return;
	best = t > 0 ? first / t : (double)max / target;
	for (runs = 1; ; runs++) {
		t = fn(b, *n);
		rate = t > 0 ? *n / t : (double)max / target;
		if (rate > best)
			best = rate;
		if (*n >= max || runs == 8 ||
		    (t >= target / 2 && rate >= best / 2))
			return;
		want = best * target;
		if (t < target / 2 && want < 2.0 * *n)
			want = 2.0 * *n;
		*n = want > (double)max ? max : (unsigned long)want;
	}
}

static double ratio(double a, double base)
{
	return base > 0 ? a / base : 0;
}

/* ---- a) ping-pong --------------------------------------------------- */

static D3DKMT_HANDLE create_mapped(struct bench *b, UINT64 size,
				   const char *what, D3DGPU_VIRTUAL_ADDRESS *va,
				   void **cpu);

/* @n native round trips between queues 0 and 1; returns seconds. */
static double pingpong_native(struct bench *b, unsigned long n)
{
	D3DDDI_NATIVEFENCEMAPPING m1, m2;
	D3DKMT_HANDLE f1, f2;
	struct queue *qa = &b->q[0], *qb = &b->q[1];
	unsigned long i;
	double t0, t;

	unsigned int s, slices = (n + PINGPONG_SLICE - 1) / PINGPONG_SLICE;
	unsigned long end;

	f1 = create_fence(b, &m1);
	f2 = create_fence(b, &m2);
	/* Encode every slice first: only submission is timed. */
	for (s = 0, i = 1; s < slices; s++) {
		NFENCE_CS *ping = slice(qa, s), *pong = slice(qb, s);

		end = i + PINGPONG_SLICE < n + 1 ? i + PINGPONG_SLICE : n + 1;
		for (; i < end; i++) {
			NFenceCsSignalNativeFenceUnlogged(ping, &m1, i);
			NFenceCsWaitNativeFenceUnlogged(ping, &m2, i);
			NFenceCsWaitNativeFenceUnlogged(pong, &m1, i);
			NFenceCsSignalNativeFenceUnlogged(pong, &m2, i);
		}
	}
	t0 = now();
	for (s = 0; s < slices; s++) {
		submit(qb, &qb->cs[s]);
		submit(qa, &qa->cs[s]);
	}
	wait_fence(b, f2, n);
	t = now() - t0;
	queue_idle(qa);
	queue_idle(qb);
	destroy_fence(f1);
	destroy_fence(f2);
	return t;
}

/*
 * The floor of a): @n round trips through plain GPU memory, no fence.
 * Queue A runs WRITE64(X, i); FENCE_WAIT(Y, i) and queue B
 * FENCE_WAIT(X, i); WRITE64(Y, i): the same engine work, submissions and
 * CMP re-checks as the native ping-pong, without what a native fence adds
 * (the MonitoredValue read and interrupt check of FENCE_SIGNAL, the
 * fence's bookkeeping). X and Y are in one CPU-visible system memory
 * allocation, in cache lines of their own; the end is found by polling Y
 * from the CPU (no waiter, no interrupt). Returns seconds.
 */
static double pingpong_floor(struct bench *b, unsigned long n)
{
	struct queue *qa = &b->q[0], *qb = &b->q[1];
	volatile UINT64 *x, *y;
	D3DGPU_VIRTUAL_ADDRESS va;
	D3DKMT_DESTROYALLOCATION2 da;
	D3DKMT_HANDLE h;
	unsigned long i, end;
	unsigned int s, slices = (n + PINGPONG_SLICE - 1) / PINGPONG_SLICE;
	void *cpu;
	double t0, t;

	h = create_mapped(b, 4096, "ping-pong floor values", &va, &cpu);
	x = cpu;
	y = (volatile UINT64 *)((BYTE *)cpu + 64);
	*x = 0;
	*y = 0;
	for (s = 0, i = 1; s < slices; s++) {
		NFENCE_CS *ping = slice(qa, s), *pong = slice(qb, s);

		end = i + PINGPONG_SLICE < n + 1 ? i + PINGPONG_SLICE : n + 1;
		for (; i < end; i++) {
			NFenceCsWrite64(ping, va, i);
			NFenceCsFenceWaitUnlogged(ping, va + 64, i);
			NFenceCsFenceWaitUnlogged(pong, va, i);
			NFenceCsWrite64(pong, va + 64, i);
		}
	}
	t0 = now();
	for (s = 0; s < slices; s++) {
		submit(qb, &qb->cs[s]);
		submit(qa, &qa->cs[s]);
	}
	poll_value(y, n);
	t = now() - t0;
	queue_idle(qa);
	queue_idle(qb);
	memset(&da, 0, sizeof(da));
	da.hDevice = b->hDevice;
	da.AllocationCount = 1;
	da.phAllocationList = &h;
	ok(D3DKMTDestroyAllocation2(&da), "destroy ping-pong floor values");
	return t;
}

/* A WDDM 2.x monitored fence (D3DKMTCreateSynchronizationObject2). */
static D3DKMT_HANDLE create_monitored(struct bench *b)
{
	D3DKMT_CREATESYNCHRONIZATIONOBJECT2 c;

	memset(&c, 0, sizeof(c));
	c.hDevice = b->hDevice;
	c.Info.Type = D3DDDI_MONITORED_FENCE;
	ok(D3DKMTCreateSynchronizationObject2(&c), "create monitored fence");
	return c.hSyncObject;
}

static void context_signal(struct queue *q, D3DKMT_HANDLE fence,
			   UINT64 value)
{
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU s = {
		.hContext = q->hContext,
		.ObjectCount = 1,
		.ObjectHandleArray = &fence,
		.MonitoredFenceValueArray = &value,
	};

	ok(D3DKMTSignalSynchronizationObjectFromGpu(&s), "signal from GPU");
}

static void context_wait(struct queue *q, D3DKMT_HANDLE fence, UINT64 value)
{
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU w = {
		.hContext = q->hContext,
		.ObjectCount = 1,
		.ObjectHandleArray = &fence,
		.MonitoredFenceValueArray = &value,
	};

	ok(D3DKMTWaitForSynchronizationObjectFromGpu(&w), "wait from GPU");
}

/*
 * @n round trips as a WDDM 2.x runtime makes them: monitored fences,
 * context-level GPU signals and waits; returns seconds.
 */
static double pingpong_legacy(struct bench *b, unsigned long n)
{
	struct queue *qa = &b->q[0], *qb = &b->q[1];
	D3DKMT_HANDLE f1, f2;
	unsigned long i;
	double t0, t;

	f1 = create_monitored(b);
	f2 = create_monitored(b);
	t0 = now();
	/* Interleaved, so that neither queue waits for room forever. */
	for (i = 1; i <= n; i++) {
		context_signal(qa, f1, i);
		context_wait(qa, f2, i);
		context_wait(qb, f1, i);
		context_signal(qb, f2, i);
	}
	wait_fence(b, f2, n);
	t = now() - t0;
	destroy_fence(f1);
	destroy_fence(f2);
	return t;
}

/*
 * @n round trips through WDDM 2.x monitored fences signaled by the GPU:
 * each queue's one-NOP submissions signal its monitored progress fence,
 * and the kernel holds each queue until the other's has reached the
 * round trip. Returns seconds.
 */
static double pingpong_monitored(struct bench *b, unsigned long n)
{
	struct queue *qa = &b->mq[0], *qb = &b->mq[1];
	UINT64 base_a = qa->progress, base_b = qb->progress;
	NFENCE_CS *nop_a = slice(qa, 0), *nop_b = slice(qb, 0);
	unsigned long i;
	double t0, t;

	NFenceCsNop(nop_a);
	NFenceCsNop(nop_b);
	t0 = now();
	/* Interleaved, so that neither queue waits for room forever. */
	for (i = 1; i <= n; i++) {
		submit(qa, nop_a);
		queue_wait(qa, qb->hw.hHwQueueProgressFence, base_b + i);
		queue_wait(qb, qa->hw.hHwQueueProgressFence, base_a + i);
		submit(qb, nop_b);
	}
	wait_fence(b, qb->hw.hHwQueueProgressFence, qb->progress);
	t = now() - t0;
	queue_idle(qa);
	return t;
}

#define RUNS	3

/*
 * Size @fn for a third of the budget, then run it RUNS times: every rate
 * in @rate, the size in *@n; returns the best. Under emulation one run can
 * stall on CPU wake-ups (the legacy path most), so the best is the fair
 * figure for each side, and the ratio of the bests is conservative.
 */
static double best_of_runs(struct bench *b,
			   double (*fn)(struct bench *, unsigned long),
			   unsigned long first, unsigned long max,
			   unsigned long *n, double rate[RUNS])
{
	double t, best = 0;
	int k;

	calibrated(b, fn, first, max, b->budget / RUNS, n);
	for (k = 0; k < RUNS; k++) {
		t = fn(b, *n);
		rate[k] = *n / t;
		if (rate[k] > best)
			best = rate[k];
	}
	return best;
}

/* best_of_runs(), with every rate printed. */
static double best_rate(struct bench *b, const char *what,
			double (*fn)(struct bench *, unsigned long),
			unsigned long first, unsigned long max)
{
	double rate[RUNS], best;
	unsigned long n;

	best = best_of_runs(b, fn, first, max, &n, rate);
	printf("ping-pong %s: %d runs of %lu round trips: %.0f, %.0f, %.0f "
	       "round trips/s; best %.0f\n", what, RUNS, n, rate[0], rate[1],
	       rate[2], best);
	return best;
}

static void bench_pingpong(struct bench *b)
{
	double rn, rl, rm, rf;

	rn = best_rate(b, "native (unlogged)", pingpong_native, b->quick ? 50 : 1000,
		       PINGPONG_MAX);
	rf = best_rate(b, "floor (plain GPU memory: WRITE64 and FENCE_WAIT, no fence)",
		       pingpong_floor, b->quick ? 50 : 1000, PINGPONG_MAX);
	rl = best_rate(b,
		       "legacy (WDDM 2.x monitored fences, context GPU waits/signals)",
		       pingpong_legacy, b->quick ? 20 : 100, 10000000);
	rm = best_rate(b, "monitored (GPU-signaled WDDM 2.x progress fences)",
		       pingpong_monitored, b->quick ? 20 : 100, 10000000);
	printf("ping-pong ratio native/legacy: %.1fx (goal >= 10x: %s)\n",
	       ratio(rn, rl), ratio(rn, rl) >= 10 ? "met" : "missed");
	printf("ping-pong ratio native/monitored: %.1fx\n", ratio(rn, rm));
	printf("ping-pong ratio native/floor: %.2fx (goal >= 0.5x: %s)\n",
	       ratio(rn, rf), ratio(rn, rf) >= 0.5 ? "met" : "missed");
}

/* ---- b) interrupts -------------------------------------------------- */

struct counters {
	long long signals, interrupts, suppressed;
};

static void read_counters(const struct bench *b, struct counters *c)
{
	c->signals = debugfs_read(b, "nfence_interrupts", "signals");
	c->interrupts = debugfs_read(b, "nfence_interrupts", "interrupts");
	c->suppressed = debugfs_read(b, "nfence_interrupts", "suppressed");
}

static void print_interrupts(const char *what, const struct counters *c0,
			     const struct counters *c1, unsigned long signals,
			     double t, double *per)
{
	long long irqs = c1->interrupts - c0->interrupts;

	*per = -1;
	if (c0->interrupts < 0 || c1->interrupts < 0) {
		printf("interrupts, %s: %lu GPU signals in %.3f s; "
		       "interrupts: n/a (no debugfs nfence_interrupts)\n",
		       what, signals, t);
		return;
	}
	*per = (double)irqs * SCALE / (double)signals;
	printf("interrupts, %s: %lld in %lu GPU signals (%.3f s): %.1f per "
	       "%u signals%s; signals +%lld, suppressed +%lld\n", what, irqs,
	       signals, t, *per, SCALE,
	       signals == SCALE ? "" : " (scaled)",
	       c1->signals - c0->signals, c1->suppressed - c0->suppressed);
}

/* @n GPU signals of a fence nobody waits for. */
static void interrupts_no_waiter(struct bench *b, unsigned long total,
				 double *per)
{
	D3DDDI_NATIVEFENCEMAPPING m;
	struct counters c0, c1;
	struct queue *q = &b->q[0];
	unsigned long i = 0, k;
	unsigned int s = 0;
	NFENCE_CS *cs;
	D3DKMT_HANDLE f;
	double t0, t;

	f = create_fence(b, &m);
	read_counters(b, &c0);
	t0 = now();
	while (i < total) {
		/* The slices in turn; one is free again once 16 are queued. */
		if (s == CMD_SLICES) {
			queue_idle(q);
			s = 0;
		}
		cs = slice(q, s++);
		for (k = 0; k < SIGNAL_SLICE && i < total; k++)
			NFenceCsSignalNativeFenceUnlogged(cs, &m, ++i);
		submit(q, cs);
	}
	/* Poll: a CPU waiter would be an interrupt of our own. */
	queue_idle(q);
	t = now() - t0;
	read_counters(b, &c1);
	if (read64(m.CurrentValueCpuVa) != total)
		fail(STATUS_UNSUCCESSFUL, "the fence did not reach the count");
	print_interrupts("no CPU waiter (unlogged signals)", &c0, &c1, total, t, per);
	destroy_fence(f);
}

/* Up to @max GPU signals, each with a CPU waiter; for the time budget. */
static void interrupts_one_waiter(struct bench *b, unsigned long max,
				  double *per)
{
	D3DDDI_NATIVEFENCEMAPPING m, mgo;
	struct counters c0, c1;
	struct queue *q = &b->q[1];
	D3DKMT_HANDLE f, fgo;
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w;
	unsigned long i, n = 0;
	UINT64 value, count;
	NFENCE_CS *cs;
	double t0, t;
	int efd;

	f = create_fence(b, &m);
	fgo = create_fence(b, &mgo);
	cs = slice(q, 0);
	for (i = 1; i <= max; i++) {
		NFenceCsWaitNativeFenceUnlogged(cs, &mgo, i);
		NFenceCsSignalNativeFenceUnlogged(cs, &m, i);
	}
	submit(q, cs);
	efd = eventfd(0, EFD_CLOEXEC);
	if (efd < 0)
		fail(STATUS_INSUFFICIENT_RESOURCES, "eventfd");
	memset(&w, 0, sizeof(w));
	w.hDevice = b->hDevice;
	w.ObjectCount = 1;
	w.ObjectHandleArray = &f;
	w.FenceValueArray = &value;
	w.hAsyncEvent = (HANDLE)(intptr_t)efd;

	read_counters(b, &c0);
	t0 = now();
	while (n < max && (b->quick || n < 16 || now() - t0 < b->budget)) {
		value = ++n;
		/* The waiter first, so that the GPU's signal must tell it. */
		ok(D3DKMTWaitForSynchronizationObjectFromCpu(&w),
		   "asynchronous CPU wait");
		signal_fence(b, fgo, n);
		if (read(efd, &count, sizeof(count)) != sizeof(count))
			fail(STATUS_UNSUCCESSFUL, "read eventfd");
	}
	t = now() - t0;
	read_counters(b, &c1);
	/* Release the rest of the queue, with nobody waiting. */
	signal_fence(b, fgo, max);
	queue_idle(q);
	close(efd);
	print_interrupts("one CPU waiter per signal (unlogged)", &c0, &c1, n, t, per);
	destroy_fence(f);
	destroy_fence(fgo);
}

static void bench_interrupts(struct bench *b)
{
	double none, one;

	interrupts_no_waiter(b, b->quick ? 1000 : SCALE, &none);
	interrupts_one_waiter(b, b->quick ? 100 : PINGPONG_SLICE, &one);
	if (none >= 0 && one > 0)
		printf("interrupts ratio no-waiter/one-waiter: %.4f "
		       "(target 0: %s)\n", ratio(none, one),
		       none == 0 ? "met" : "missed");
}

/* ---- c) submission -------------------------------------------------- */

static void bench_submission(struct bench *b)
{
	struct timespec nap = { .tv_nsec = 50000 };
	struct queue *q = &b->q[0];
	NFENCE_CS *cs;
	unsigned long n = 0, rt = 0, rp = 0;
	double t0, tq, trt, tp, rq, rrt, rp_rate;
	UINT64 first;

	/* One NOP at the start of the buffer, submitted again and again. */
	queue_idle(q);
	cs = slice(q, 0);
	NFenceCsNop(cs);

	first = q->progress;
	t0 = now();
	do {
		submit(q, cs);
		n++;
	} while (b->quick ? n < 200 : (n % 64 || now() - t0 < b->budget));
	wait_fence(b, q->hw.hHwQueueProgressFence, q->progress);
	tq = now() - t0;
	if (q->progress - first != n)
		fail(STATUS_UNSUCCESSFUL, "count submissions");
	rq = n / tq;
	printf("submission, queued back to back: %lu one-NOP submissions in "
	       "%.3f s: %.0f submissions/s\n", n, tq, rq);

	t0 = now();
	do {
		submit(q, cs);
		wait_fence(b, q->hw.hHwQueueProgressFence, q->progress);
		rt++;
	} while (b->quick ? rt < 50 : now() - t0 < b->budget);
	trt = now() - t0;
	rrt = rt / trt;
	printf("submission, one at a time (submit, wait for progress): %lu in "
	       "%.3f s: %.0f round trips/s, mean latency %.1f us\n", rt, trt,
	       rrt, trt / rt * 1e6);

	/* The same, polling the progress fence: no waiter, no interrupt. */
	t0 = now();
	do {
		submit(q, cs);
		while (read64(q->hw.HwQueueProgressFenceCPUVirtualAddress) <
		       q->progress)
			nanosleep(&nap, NULL);
		rp++;
	} while (b->quick ? rp < 50 : now() - t0 < b->budget);
	tp = now() - t0;
	rp_rate = rp / tp;
	printf("submission, one at a time, polling the progress fence every "
	       "50 us: %lu in %.3f s: %.0f round trips/s, mean latency %.1f "
	       "us\n", rp, tp, rp_rate, tp / rp * 1e6);
	printf("submission ratio queued/one-at-a-time: %.1fx\n",
	       ratio(rq, rrt));
}

/* ---- d) doorbells --------------------------------------------------- */

/* A locked CPU-visible allocation of @size bytes; returns its handle. */
static D3DKMT_HANDLE create_mapped(struct bench *b, UINT64 size,
				   const char *what, D3DGPU_VIRTUAL_ADDRESS *va,
				   void **cpu)
{
	NFENCE_ALLOCATION_DESC desc = {
		.Size = size,
		.SegmentId = NFENCE_SEGMENT_ID_SYSTEM,
	};
	D3DDDI_ALLOCATIONINFO2 info;
	D3DKMT_CREATEALLOCATION ca;
	D3DKMT_LOCK2 lock;
	char msg[96];

	desc.Flags.CpuVisible = 1;
	memset(&info, 0, sizeof(info));
	info.pPrivateDriverData = &desc;
	info.PrivateDriverDataSize = sizeof(desc);
	memset(&ca, 0, sizeof(ca));
	ca.hDevice = b->hDevice;
	ca.NumAllocations = 1;
	ca.pAllocationInfo2 = &info;
	snprintf(msg, sizeof(msg), "create %s", what);
	ok(D3DKMTCreateAllocation2(&ca), msg);
	if (va)
		*va = info.GpuVirtualAddress;

	memset(&lock, 0, sizeof(lock));
	lock.hDevice = b->hDevice;
	lock.hAllocation = info.hAllocation;
	snprintf(msg, sizeof(msg), "lock %s", what);
	ok(D3DKMTLock2(&lock), msg);
	*cpu = lock.pData;
	return info.hAllocation;
}

static const char *doorbell_model(D3DKMT_NFENCE_DOORBELL_MODEL model)
{
	switch (model) {
	case D3DKMT_NFENCE_DOORBELL_MODEL_DEDICATED:
		return "dedicated";
	case D3DKMT_NFENCE_DOORBELL_MODEL_GLOBAL:
		return "global";
	default:
		return "no";
	}
}

/* Whether engine 0 of the adapter takes user-mode submission. */
static bool engine0_user_mode(struct bench *b)
{
	size_t size = D3DKMT_NFENCE_ENGINES_SIZE(b->info.NumEngines);
	D3DKMT_NFENCE_ENGINES *engines = calloc(1, size);
	D3DKMT_QUERYADAPTERINFO q = {
		.hAdapter = b->hAdapter,
		.Type = KMTQAITYPE_NFENCE_ENGINES,
		.pPrivateDriverData = engines,
		.PrivateDriverDataSize = (UINT)size,
	};
	bool yes;

	if (!engines)
		fail(STATUS_INSUFFICIENT_RESOURCES, "engine list");
	ok(D3DKMTQueryAdapterInfo(&q), "query engines");
	yes = engines->NumEngines > 0 &&
	      engines->Engines[0].Flags.UserModeSubmissionSupported;
	free(engines);
	return yes;
}

/*
 * Set up b->u: a context on engine 0, its UserModeSubmission queue, the
 * ring buffer, ring control and command buffers, and the doorbell
 * (created disconnected: the first NFenceRingSubmit() connects it).
 * Returns false, with the reason in @why, when the adapter, engine 0 or
 * the driver (STATUS_NOT_SUPPORTED for the queue) has no user-mode
 * submission; any other error fails the run.
 */
static bool setup_uqueue(struct bench *b, char *why, size_t len)
{
	struct uqueue *u = &b->u;
	D3DKMT_QUERYADAPTERINFO qa = {
		.hAdapter = b->hAdapter,
		.Type = KMTQAITYPE_NFENCE_USERMODESUBMISSION_CAPS,
		.pPrivateDriverData = &u->caps,
		.PrivateDriverDataSize = sizeof(u->caps),
	};
	D3DKMT_CREATECONTEXTVIRTUAL cc;
	void *ring, *control, *commands;
	NTSTATUS st;

	memset(u, 0, sizeof(*u));
	if (!b->info.Flags.UserModeSubmission) {
		snprintf(why, len, "the adapter reports no user-mode "
			 "submission");
		return false;
	}
	ok(D3DKMTQueryAdapterInfo(&qa), "query user-mode submission caps");
	if (u->caps.DoorbellModel == D3DKMT_NFENCE_DOORBELL_MODEL_NONE) {
		snprintf(why, len, "the adapter reports no doorbell model");
		return false;
	}
	if (!engine0_user_mode(b)) {
		snprintf(why, len, "engine 0 has no user-mode submission");
		return false;
	}

	memset(&cc, 0, sizeof(cc));
	cc.hDevice = b->hDevice;
	cc.NodeOrdinal = 0;
	ok(D3DKMTCreateContextVirtual(&cc), "create user-mode context");
	u->hContext = cc.hContext;

	u->hw.hHwContext = u->hContext;
	u->hw.Flags.UserModeSubmission = 1;
	/* A native progress fence, as the kernel-mode queue's. */
	u->hw.Flags.NativeProgressFence = 1;
	st = D3DKMTCreateHwQueue(&u->hw);
	if (st == STATUS_NOT_SUPPORTED) {
		D3DKMT_DESTROYCONTEXT dc = { .hContext = u->hContext };

		ok(D3DKMTDestroyContext(&dc), "destroy user-mode context");
		snprintf(why, len, "the driver has no user-mode queue on "
			 "engine 0 (NTSTATUS 0x%08" PRIX32 ")", (uint32_t)st);
		memset(u, 0, sizeof(*u));
		return false;
	}
	ok(st, "create user-mode hardware queue");

	u->hRing = create_mapped(b, RING_BYTES, "ring buffer", NULL, &ring);
	u->hControl = create_mapped(b, CONTROL_BYTES, "ring control", NULL,
				    &control);
	u->hCommands = create_mapped(b, (UINT64)RING_ENTRIES * RING_SLOT,
				     "doorbell command buffers",
				     &u->commands_va, &commands);
	u->commands = commands;

	u->doorbell.hHwQueue = u->hw.hHwQueue;
	u->doorbell.hRingBuffer = u->hRing;
	u->doorbell.hRingBufferControl = u->hControl;
	ok(D3DKMTCreateDoorbell(&u->doorbell), "create doorbell");
	ok(NFenceRingInit(&u->ring, &u->doorbell, ring, RING_BYTES, control),
	   "init ring writer");
	return true;
}

/* Destroy b->u once everything rung has run: nothing is dropped. */
static void teardown_uqueue(struct bench *b)
{
	struct uqueue *u = &b->u;
	D3DKMT_HANDLE allocs[3] = { u->hRing, u->hControl, u->hCommands };
	D3DKMT_DESTROY_DOORBELL ddb = { .hDoorbell = u->doorbell.hDoorbell };
	D3DKMT_DESTROYHWQUEUE dq = { .hHwQueue = u->hw.hHwQueue };
	D3DKMT_DESTROYALLOCATION2 da = {
		.hDevice = b->hDevice,
		.phAllocationList = allocs,
		.AllocationCount = 3,
	};
	D3DKMT_DESTROYCONTEXT dc = { .hContext = u->hContext };

	poll_value(u->hw.HwQueueProgressFenceCPUVirtualAddress, u->progress);
	/* The doorbell pins the ring allocations: it goes first. */
	ok(D3DKMTDestroyDoorbell(&ddb), "destroy doorbell");
	ok(D3DKMTDestroyHwQueue(&dq), "destroy user-mode hardware queue");
	ok(D3DKMTDestroyAllocation2(&da), "destroy ring and command buffers");
	ok(D3DKMTDestroyContext(&dc), "destroy user-mode context");
	memset(u, 0, sizeof(*u));
}

/*
 * Write the next one-NOP command buffer of @u, ending with the signal of
 * its progress fence value, and ring it (NFenceRingSubmit() notifies on
 * CONNECTED_NOTIFY_KMD and connects and rings again on DISCONNECTED_RETRY).
 * When the ring is full, first spin until the engine has finished the
 * oldest entry, whose command slot this one reuses.
 */
static void ring_submit(struct uqueue *u)
{
	UINT64 value = u->progress + 1;
	UINT64 slot = u->ring.WriteIndex % u->ring.NumEntries;
	NFENCE_CS cs;

	if (u->ring.WriteIndex >= u->ring.NumEntries)
		spin_value(&u->ring.pControl->ReadIndex,
			   u->ring.WriteIndex - u->ring.NumEntries + 1);
	ok(NFenceCsInit(&cs, u->commands + slot * RING_SLOT, RING_SLOT,
			u->commands_va + slot * RING_SLOT), "init encoder");
	NFenceCsNop(&cs);
	NFenceCsSignalHwQueueProgress(&cs, u->hw.hHwQueue, value);
	ok(NFenceCsStatus(&cs), "encode commands");
	ok(NFenceRingSubmit(&u->ring, NFenceCsGpuVa(&cs), NFenceCsSize(&cs),
			    value), "ring the doorbell");
	u->progress = value;
}

/* The kernel-mode queue's slice 0, emptied, with one NOP. */
static NFENCE_CS *kernel_nop(struct queue *q)
{
	NFENCE_CS *cs;

	queue_idle(q);
	cs = slice(q, 0);
	NFenceCsNop(cs);
	return cs;
}

/* @n one-NOP round trips through D3DKMTSubmitCommandToHwQueue; seconds. */
static double latency_kernel(struct bench *b, unsigned long n)
{
	struct queue *q = &b->q[0];
	NFENCE_CS *cs = kernel_nop(q);
	unsigned long i;
	double t0 = now();

	for (i = 0; i < n; i++) {
		submit(q, cs);
		spin_value(q->hw.HwQueueProgressFenceCPUVirtualAddress,
			   q->progress);
	}
	return now() - t0;
}

/* @n one-NOP round trips through the doorbell; seconds. */
static double latency_doorbell(struct bench *b, unsigned long n)
{
	struct uqueue *u = &b->u;
	unsigned long i;
	double t0 = now();

	for (i = 0; i < n; i++) {
		ring_submit(u);
		spin_value(u->hw.HwQueueProgressFenceCPUVirtualAddress,
			   u->progress);
	}
	return now() - t0;
}

/* @n one-NOP submissions back to back through the ioctl; seconds. */
static double rate_kernel(struct bench *b, unsigned long n)
{
	struct queue *q = &b->q[0];
	NFENCE_CS *cs = kernel_nop(q);
	unsigned long i;
	double t0 = now();

	/* The ioctl blocks while the queue holds all it can. */
	for (i = 0; i < n; i++)
		submit(q, cs);
	spin_value(q->hw.HwQueueProgressFenceCPUVirtualAddress, q->progress);
	return now() - t0;
}

/* @n one-NOP submissions back to back through the doorbell; seconds. */
static double rate_doorbell(struct bench *b, unsigned long n)
{
	struct uqueue *u = &b->u;
	unsigned long i;
	double t0 = now();

	for (i = 0; i < n; i++)
		ring_submit(u);
	spin_value(u->hw.HwQueueProgressFenceCPUVirtualAddress, u->progress);
	return now() - t0;
}

/* best_of_runs() of a doorbell measurement, with its system calls. */
static double doorbell_runs(struct bench *b,
			    double (*fn)(struct bench *, unsigned long),
			    unsigned long first, unsigned long max,
			    unsigned long *n, double rate[RUNS], char *calls,
			    size_t len)
{
	struct uqueue *u = &b->u;
	UINT64 connects = u->ring.Connects, notifies = u->ring.Notifies;
	UINT64 submitted = u->progress;
	double best;

	best = best_of_runs(b, fn, first, max, n, rate);
	snprintf(calls, len, "; %" PRIu64 " connects, %" PRIu64 " notifies "
		 "in %" PRIu64 " submissions", u->ring.Connects - connects,
		 u->ring.Notifies - notifies, u->progress - submitted);
	return best;
}

static void bench_doorbell(struct bench *b)
{
	static const char *kmd = "kernel-mode (D3DKMTSubmitCommandToHwQueue)";
	static const char *umd = "doorbell (NFenceRingSubmit)";
	double rate[RUNS], lk, ld, rk, rd, rl, rr;
	unsigned long n;
	char why[128], calls[128];

	if (!setup_uqueue(b, why, sizeof(why))) {
		printf("doorbell: skipped: %s\n", why);
		return;
	}
	printf("doorbell: user-mode queue on engine 0 (%s doorbell model, %u "
	       "physical doorbells), ring of %u entries; baseline: the "
	       "kernel-mode queue on engine 0\n",
	       doorbell_model(b->u.caps.DoorbellModel),
	       b->u.caps.NumPhysicalDoorbells, b->u.ring.NumEntries);

	/* Latency: the best rate of round trips is the least mean latency. */
	lk = best_of_runs(b, latency_kernel, b->quick ? 50 : 100, 10000000,
			  &n, rate);
	printf("doorbell latency, %s: %d runs of %lu round trips: %.0f, %.0f, "
	       "%.0f round trips/s; best %.0f, mean latency %.1f us\n", kmd,
	       RUNS, n, rate[0], rate[1], rate[2], lk, 1e6 / lk);
	ld = doorbell_runs(b, latency_doorbell, b->quick ? 50 : 100,
			   10000000, &n, rate, calls, sizeof(calls));
	printf("doorbell latency, %s: %d runs of %lu round trips: %.0f, %.0f, "
	       "%.0f round trips/s; best %.0f, mean latency %.1f us%s\n", umd,
	       RUNS, n, rate[0], rate[1], rate[2], ld, 1e6 / ld, calls);

	/* Rate: back to back, then the last one awaited. */
	rk = best_of_runs(b, rate_kernel, b->quick ? 200 : 1000, 100000000,
			  &n, rate);
	printf("doorbell rate, %s: %d runs of %lu one-NOP submissions: %.0f, "
	       "%.0f, %.0f submissions/s; best %.0f\n", kmd, RUNS, n, rate[0],
	       rate[1], rate[2], rk);
	rd = doorbell_runs(b, rate_doorbell, b->quick ? 200 : 1000, 100000000,
			   &n, rate, calls, sizeof(calls));
	printf("doorbell rate, %s: %d runs of %lu one-NOP submissions: %.0f, "
	       "%.0f, %.0f submissions/s; best %.0f%s\n", umd, RUNS, n,
	       rate[0], rate[1], rate[2], rd, calls);

	teardown_uqueue(b);

	/* Mean latencies: doorbell / kernel = kernel rate / doorbell rate. */
	rl = ratio(1e6 / ld, 1e6 / lk);
	rr = ratio(rd, rk);
	printf("doorbell latency ratio doorbell/kernel: %.2fx (goal <= 0.5x: "
	       "%s)\n", rl, rl <= 0.5 ? "met" : "missed");
	printf("doorbell rate ratio doorbell/kernel: %.1fx (goal >= 3x: %s)\n",
	       rr, rr >= 3 ? "met" : "missed");
}

/* ---- e) interrupt payloads ----------------------------------------- */

static const char *const payload_names[] = {
	"signaled fences", "none (scan)", "hardware queue (optimized)",
};

/*
 * Adapter @index's interrupt_payload module parameter (one value per
 * adapter, the last repeating), -1 if it cannot be read.
 */
static int module_payload(UINT index)
{
	char buf[256], *p = buf, *end;
	long v = -1;
	UINT i = 0;
	FILE *f;

	f = fopen("/sys/module/nfence/parameters/interrupt_payload", "re");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	for (;;) {
		long x = strtol(p, &end, 10);

		if (end == p)
			break;
		v = x;
		if (i++ == index || *end != ',')
			break;
		p = end + 1;
	}
	return v >= 0 && v < (long)(sizeof(payload_names) /
				    sizeof(payload_names[0])) ? (int)v : -1;
}

/* The interrupt counters of e). */
struct payload_counters {
	long long signals, interrupts, woken, handler_ns;
};

static void read_payload_counters(const struct bench *b,
				  struct payload_counters *c)
{
	c->signals = debugfs_read(b, "nfence_interrupts", "signals");
	c->interrupts = debugfs_read(b, "nfence_interrupts", "interrupts");
	c->woken = debugfs_read(b, "nfence_interrupts", "woken");
	c->handler_ns = debugfs_read(b, "nfence_interrupts", "handler_ns");
}

/*
 * -W INDEX:COUNT (the idle_waiters() child): COUNT fences on adapter
 * INDEX, each with an asynchronous CPU wait that nothing satisfies; says
 * so with a byte on stdout, then holds them until stdin closes.
 */
static int idle_waiters_main(const char *arg)
{
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w;
	D3DDDI_NATIVEFENCEMAPPING m;
	UINT64 never = 1ull << 62;
	unsigned int index, count;
	struct bench ib;
	D3DKMT_HANDLE h;
	char c = 0;
	int efd;

	if (sscanf(arg, "%u:%u", &index, &count) != 2)
		return 2;
	memset(&ib, 0, sizeof(ib));
	open_adapter_at(&ib, index);
	efd = eventfd(0, EFD_CLOEXEC);
	if (efd < 0)
		fail(STATUS_INSUFFICIENT_RESOURCES, "eventfd");
	memset(&w, 0, sizeof(w));
	w.hDevice = ib.hDevice;
	w.ObjectCount = 1;
	w.ObjectHandleArray = &h;
	w.FenceValueArray = &never;
	w.hAsyncEvent = (HANDLE)(intptr_t)efd;
	for (unsigned int i = 0; i < count; i++) {
		h = create_fence(&ib, &m);
		ok(D3DKMTWaitForSynchronizationObjectFromCpu(&w),
		   "asynchronous CPU wait that nothing satisfies");
	}
	if (write(1, &c, 1) != 1 || read(0, &c, 1) < 0)
		return 1;
	return 0;
}

/*
 * A process with @count fences on adapter @index that have a CPU waiter
 * nothing satisfies (idle_waiters_main(), this program run again with
 * -W), until *@done (its stdin) is closed. A process of its own, not a
 * fork: libnfence gives a process one file per adapter, which may have
 * DRM_NFENCE_MAX_ASYNC_WAITS (4096) waits pending, and the wait that
 * payload_run() arms again at each round trip is counted until the
 * kernel reaps its completion.
 */
static pid_t idle_waiters(UINT index, unsigned int count, int *done)
{
	int ready[2], quit[2];
	char arg[32], c;
	pid_t pid;

	*done = -1;
	if (!count)
		return 0;
	/* Close-on-exec: the child must not hold the end it waits on. */
	if (pipe2(ready, O_CLOEXEC) || pipe2(quit, O_CLOEXEC))
		fail(STATUS_INSUFFICIENT_RESOURCES, "pipe");
	snprintf(arg, sizeof(arg), "%u:%u", index, count);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		fail(STATUS_INSUFFICIENT_RESOURCES, "fork");
	if (!pid) {
		if (dup2(quit[0], 0) < 0 || dup2(ready[1], 1) < 0)
			_exit(1);
		execl("/proc/self/exe", prog, "-W", arg, (char *)NULL);
		_exit(127);
	}
	close(ready[1]);
	close(quit[0]);
	if (read(ready[0], &c, 1) != 1)
		fail(STATUS_UNSUCCESSFUL, "idle waiters");
	close(ready[0]);
	*done = quit[1];
	return pid;
}

/* End the idle_waiters() child. */
static void idle_waiters_end(pid_t pid, int done)
{
	int status;

	if (!pid)
		return;
	close(done);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		fail(STATUS_UNSUCCESSFUL, "idle waiters exit");
}

/*
 * On adapter @index, freshly opened: @fences - 1 fences with a CPU waiter
 * that nothing satisfies (idle_waiters()),
 * and one that the GPU signals, logged, up to PAYLOAD_SLICE times, each
 * time for a CPU waiter armed before the GPU may signal. Returns the
 * driver's nanoseconds per interrupt, -1 without the counters.
 */
static double payload_run(const struct bench *parent, UINT index,
			  unsigned int fences, int payload)
{
	struct payload_counters c0, c1;
	D3DDDI_NATIVEFENCEMAPPING m, mgo;
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w;
	unsigned long i, n = 0, max = parent->quick ? 50 : PAYLOAD_SLICE;
	D3DKMT_HANDLE f, fgo;
	UINT64 value, count;
	pid_t idle_pid;
	int idle_done;
	struct bench b;
	D3DKMT_DESTROYDEVICE dd;
	D3DKMT_CLOSEADAPTER ca;
	NFENCE_CS *cs;
	double t0, t, per_irq;
	int efd;

	memset(&b, 0, sizeof(b));
	b.quick = parent->quick;
	b.budget = parent->budget / 3;
	open_adapter_at(&b, index);
	find_debugfs(&b);
	setup_queue(&b, &b.q[0], 0, true);
	idle_pid = idle_waiters(index, fences - 1, &idle_done);

	efd = eventfd(0, EFD_CLOEXEC);
	if (efd < 0)
		fail(STATUS_INSUFFICIENT_RESOURCES, "eventfd");
	memset(&w, 0, sizeof(w));
	w.hDevice = b.hDevice;
	w.ObjectCount = 1;

	f = create_fence(&b, &m);
	fgo = create_fence(&b, &mgo);
	cs = slice(&b.q[0], 0);
	for (i = 1; i <= max; i++) {
		NFenceCsWaitNativeFenceUnlogged(cs, &mgo, i);
		NFenceCsSignalNativeFence(cs, &m, i, f);
	}
	submit(&b.q[0], cs);
	w.ObjectHandleArray = &f;
	w.FenceValueArray = &value;
	w.hAsyncEvent = (HANDLE)(intptr_t)efd;

	read_payload_counters(&b, &c0);
	t0 = now();
	while (n < max && (b.quick || n < 16 || now() - t0 < b.budget)) {
		value = ++n;
		ok(D3DKMTWaitForSynchronizationObjectFromCpu(&w),
		   "asynchronous CPU wait");
		signal_fence(&b, fgo, n);
		if (read(efd, &count, sizeof(count)) != sizeof(count))
			fail(STATUS_UNSUCCESSFUL, "read eventfd");
	}
	t = now() - t0;
	read_payload_counters(&b, &c1);
	signal_fence(&b, fgo, max);
	queue_idle(&b.q[0]);

	per_irq = -1;
	if (c0.handler_ns >= 0 && c1.interrupts > c0.interrupts) {
		long long irqs = c1.interrupts - c0.interrupts;

		per_irq = (double)(c1.handler_ns - c0.handler_ns) /
			  (double)irqs;
		printf("payload %d %-27s %4u fences with waiters: %7.1f us "
		       "per interrupt, %.2f CPU wake-ups per GPU signal "
		       "(%lld interrupts, %lu round trips, %.0f/s)\n",
		       payload, payload_names[payload], fences, per_irq / 1000,
		       (double)(c1.woken - c0.woken) / (double)n, irqs, n,
		       n / t);
	}
	close(efd);
	idle_waiters_end(idle_pid, idle_done);
	/* The device and the adapter's file take the waits with them. */
	dd.hDevice = b.hDevice;
	ok(D3DKMTDestroyDevice(&dd), "destroy device");
	ca.hAdapter = b.hAdapter;
	ok(D3DKMTCloseAdapter(&ca), "close adapter");
	return per_irq;
}

/*
 * The adapter whose AdapterIndex is @index: its info in *@info and, with
 * @caps, its native fence capabilities in *@caps; false if there is none.
 */
static bool adapter_at(UINT index, D3DKMT_NFENCE_ADAPTER *info,
		       D3DKMT_NFENCE_NATIVE_FENCE_CAPS *caps)
{
	D3DKMT_ADAPTERINFO adapters[MAX_ADAPTERS];
	D3DKMT_ENUMADAPTERS2 ea = { .NumAdapters = MAX_ADAPTERS,
				    .pAdapters = adapters };
	bool found = false;
	ULONG i;

	ok(D3DKMTEnumAdapters2(&ea), "enumerate adapters");
	for (i = 0; i < ea.NumAdapters; i++) {
		D3DKMT_QUERYADAPTERINFO q = {
			.hAdapter = adapters[i].hAdapter,
			.Type = KMTQAITYPE_NFENCE_ADAPTER,
			.pPrivateDriverData = info,
			.PrivateDriverDataSize = sizeof(*info),
		};
		D3DKMT_CLOSEADAPTER c = { .hAdapter = adapters[i].hAdapter };

		if (!found && D3DKMTQueryAdapterInfo(&q) == STATUS_SUCCESS &&
		    info->AdapterIndex == index) {
			found = true;
			if (caps) {
				q.Type = KMTQAITYPE_NFENCE_NATIVE_FENCE_CAPS;
				q.pPrivateDriverData = caps;
				q.PrivateDriverDataSize = sizeof(*caps);
				ok(D3DKMTQueryAdapterInfo(&q),
				   "query fence caps");
			}
		}
		D3DKMTCloseAdapter(&c);
	}
	return found;
}

static void bench_payloads(struct bench *b)
{
	static const unsigned int counts[] = { 1, 64, 4096 };
	unsigned int done = 0;
	double per[3];
	UINT i;
	bool any = false;

	if (!b->debugfs[0]) {
		printf("payloads: skipped: no debugfs nfence_interrupts\n");
		return;
	}
	for (i = 0; i < MAX_ADAPTERS; i++) {
		D3DKMT_NFENCE_ADAPTER info;
		int payload;

		payload = adapter_at(i, &info, NULL) &&
			  info.Flags.NativeGpuFence ? module_payload(i) : -1;
		/* One adapter per payload (h) loads more with payload 0). */
		if (payload < 0 || (done & (1u << payload)))
			continue;
		done |= 1u << payload;
		any = true;
		for (unsigned int k = 0; k < 3; k++)
			per[k] = payload_run(b, info.AdapterIndex, counts[k],
					     payload);
		if (per[0] > 0 && per[2] > 0)
			printf("payload %d %-27s time per interrupt 4096/1 "
			       "fences: %.2fx%s\n", payload,
			       payload_names[payload], ratio(per[2], per[0]),
			       payload == 2 ? (ratio(per[2], per[0]) <= 2 ?
					       " (goal 2x at most: met)" :
					       " (goal 2x at most: missed)") :
			       "");
	}
	if (!any)
		printf("payloads: skipped: no native fence adapter with a "
		       "readable interrupt_payload\n");
}

/* ---- f) the CMP's CPU time under a periodic client ------------------ */

/* f): rings (or notifies) per second, and seconds per measurement */
#define TICK_HZ		2500u
#define TICK_SECONDS	10.0

/* utime + stime of thread @pid (/proc/PID/stat), in seconds; -1 if unknown. */
static double thread_cpu_seconds(long long pid)
{
	unsigned long long utime, stime;
	char path[64], buf[1024], *p;
	size_t len;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%lld/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	/* Fields 14 and 15; the name (field 2) may hold spaces. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%llu %llu", &utime, &stime) != 2)
		return -1;
	return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

enum tick_kind { TICK_RING, TICK_NOTIFY };

static const char *const tick_names[] = {
	[TICK_RING] = "rings a one-NOP command buffer",
	[TICK_NOTIFY] = "calls D3DKMTNotifyWorkSubmission",
};

/*
 * For @secs, one @kind every 1/TICK_HZ s (absolute deadlines, so a late
 * one does not shift the others): the CMP's CPU time / wall time, or -1
 * if /proc cannot say. @ticks and @rings (debugfs, the CMP's count) are
 * what happened.
 */
static double cmp_cpu_ratio(struct bench *b, long long pid,
			    enum tick_kind kind, double secs,
			    unsigned long *ticks, long long *rings)
{
	D3DKMT_NOTIFY_WORK_SUBMISSION notify = {
		.hDoorbell = b->u.doorbell.hDoorbell,
	};
	long long rings0 = debugfs_read(b, "nfence_cmp", "rings");
	double cpu0, cpu1, t0, t1;
	struct timespec next;
	unsigned long n;

	cpu0 = thread_cpu_seconds(pid);
	t0 = now();
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (n = 0; now() - t0 < secs; n++) {
		if (kind == TICK_RING)
			ring_submit(&b->u);
		else
			ok(D3DKMTNotifyWorkSubmission(&notify), "notify");
		next.tv_nsec += 1000000000 / TICK_HZ;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	t1 = now();
	cpu1 = thread_cpu_seconds(pid);
	*ticks = n;
	*rings = debugfs_read(b, "nfence_cmp", "rings") - rings0;
	poll_value(b->u.hw.HwQueueProgressFenceCPUVirtualAddress,
		   b->u.progress);
	if (cpu0 < 0 || cpu1 < 0)
		return -1;
	return (cpu1 - cpu0) / (t1 - t0);
}

static void bench_cmp_cpu(struct bench *b)
{
	long long pid = debugfs_read(b, "nfence_cmp", "pid"), rings;
	double secs = b->quick ? 1.0 : TICK_SECONDS, r;
	unsigned long ticks;
	char why[128];

	if (pid <= 0) {
		printf("cmp cpu: skipped: no CMP pid in debugfs nfence_cmp\n");
		return;
	}
	if (!setup_uqueue(b, why, sizeof(why))) {
		printf("cmp cpu: skipped: %s\n", why);
		return;
	}
	/* Connected (the first ring connects), then idle for a while. */
	ring_submit(&b->u);
	poll_value(b->u.hw.HwQueueProgressFenceCPUVirtualAddress,
		   b->u.progress);
	for (int k = TICK_RING; k <= TICK_NOTIFY; k++) {
		r = cmp_cpu_ratio(b, pid, k, secs, &ticks, &rings);
		printf("cmp cpu, a process that %s %u times a second: %lu in "
		       "%.1f s, %lld rings taken; CMP thread CPU time / wall "
		       "time: %.2fx\n", tick_names[k], TICK_HZ, ticks, secs,
		       rings, r);
	}
	teardown_uqueue(b);
}

static void usage(void)
{
	fprintf(stderr, "usage: %s [-q] [-t SECONDS] [-p PARTS] "
		"[-d DEBUGFS_DIR]\n",
		prog);
	exit(2);
}

/* ---- g) encoding ---------------------------------------------------- */

static D3DDDI_NATIVEFENCEMAPPING enc_m1, enc_m2;
static D3DKMT_HANDLE enc_f1, enc_f2;

/* @n waits and signals encoded, slice after slice; returns seconds. */
static double encode_pairs(struct bench *b, unsigned long n, bool logged)
{
	NFENCE_CS *cs = slice(&b->q[0], 0);
	unsigned long i;
	double t0 = now();

	for (i = 1; i <= n; i++) {
		if (NFenceCsSize(cs) + 2 * PAYLOAD_BYTES > CMD_SIZE)
			NFenceCsReset(cs);
		if (logged) {
			NFenceCsWaitNativeFence(cs, &enc_m1, i, enc_f1);
			NFenceCsSignalNativeFence(cs, &enc_m2, i, enc_f2);
		} else {
			NFenceCsWaitNativeFenceUnlogged(cs, &enc_m1, i);
			NFenceCsSignalNativeFenceUnlogged(cs, &enc_m2, i);
		}
	}
	ok(NFenceCsStatus(cs), "encode");
	return now() - t0;
}

static double encode_logged(struct bench *b, unsigned long n)
{
	return encode_pairs(b, n, true);
}

static double encode_unlogged(struct bench *b, unsigned long n)
{
	return encode_pairs(b, n, false);
}

/* The best rate of three calibrated runs of @fn, printed as ns per pair. */
static double best_encoding(struct bench *b, const char *what,
			    double (*fn)(struct bench *, unsigned long))
{
	double rate[RUNS], best;
	unsigned long n;

	best = best_of_runs(b, fn, b->quick ? 1000 : 100000, 1ul << 30, &n,
			    rate);
	printf("encoding, %s: 3 runs of %lu wait+signal pairs: %.1f, %.1f, "
	       "%.1f ns per pair; best %.1f\n", what, n, 1e9 / rate[0],
	       1e9 / rate[1], 1e9 / rate[2], 1e9 / best);
	return best;
}

static void bench_encoding(struct bench *b)
{
	double rl, ru;

	enc_f1 = create_fence(b, &enc_m1);
	enc_f2 = create_fence(b, &enc_m2);
	rl = best_encoding(b, "logged (probes as built)", encode_logged);
	ru = best_encoding(b, "unlogged", encode_unlogged);
	printf("encoding ratio logged/unlogged: %.2fx (time per pair)\n",
	       ratio(ru, rl));
	destroy_fence(enc_f1);
	destroy_fence(enc_f2);
}

/* ---- h) cross-adapter ping-pong: GPU to GPU against through the CPU -- */

/*
 * h): the adapter @b pairs with, its queue on engine 0, and the instance
 * there of the cross-adapter fence the two bounce.
 */
struct partner {
	struct bench b;
	D3DKMT_HANDLE fence, peer_fence;
	D3DDDI_NATIVEFENCEMAPPING m, peer_m;
};

/* Adapter @index has native fences; *@peer: and peer signals. */
static bool has_native_adapter(UINT index, bool *peer)
{
	D3DKMT_NFENCE_NATIVE_FENCE_CAPS caps;
	D3DKMT_NFENCE_ADAPTER info;

	if (!adapter_at(index, &info, &caps) || !info.Flags.NativeGpuFence)
		return false;
	*peer = caps.Flags.SupportPeerSignals;
	return true;
}

/*
 * Open adapter @index for h): a device, a queue on engine 0, and a
 * cross-adapter fence created on @b's device and opened on it.
 */
static void partner_open(struct bench *b, struct partner *p, UINT index)
{
	D3DKMT_OPENNATIVEFENCEFROMNTHANDLE of;
	D3DKMT_CREATENATIVEFENCE cf;
	HANDLE nt = NULL;

	memset(p, 0, sizeof(*p));
	p->b.budget = b->budget;
	p->b.quick = b->quick;
	open_adapter_at(&p->b, index);
	find_debugfs(&p->b);
	setup_queue(&p->b, &p->b.q[0], 0, true);

	memset(&cf, 0, sizeof(cf));
	cf.hDevice = b->hDevice;
	cf.Info.Type = D3DDDI_NATIVEFENCE_TYPE_DEFAULT;
	cf.Info.Flags.Shared = 1;
	cf.Info.Flags.NtSecuritySharing = 1;
	cf.Info.Flags.CrossAdapter = 1;
	ok(D3DKMTCreateNativeFence(&cf), "create cross-adapter fence");
	p->fence = cf.hSyncObject;
	p->m = cf.Info.NativeFenceMapping;
	ok(D3DKMTShareObjects(1, &p->fence, NULL, 0, &nt),
	   "share cross-adapter fence");
	memset(&of, 0, sizeof(of));
	of.hNtHandle = nt;
	of.hDevice = p->b.hDevice;
	ok(D3DKMTOpenNativeFenceFromNtHandle(&of),
	   "open cross-adapter fence on the other adapter");
	close((int)(intptr_t)nt);
	p->peer_fence = of.hSyncObject;
	p->peer_m = of.NativeFenceMapping;
}

static void partner_close(struct partner *p)
{
	D3DKMT_DESTROYDEVICE dd = { .hDevice = p->b.hDevice };
	D3DKMT_CLOSEADAPTER ca = { .hAdapter = p->b.hAdapter };

	destroy_fence(p->fence);
	ok(D3DKMTDestroyDevice(&dd), "destroy device");
	ok(D3DKMTCloseAdapter(&ca), "close adapter");
}

/* h) runs through calibrated(), which passes the bench: the pair at hand. */
static struct partner *xpair;

/*
 * @n round trips between engine 0 of @b's adapter and engine 0 of the
 * partner's, through one cross-adapter fence: A signals 2i - 1 and waits
 * for 2i, B waits for 2i - 1 and signals 2i, unlogged. The end is found by
 * polling CurrentValue from the CPU (no waiter). Returns seconds.
 */
static double pingpong_xadapter(struct bench *b, unsigned long n)
{
	struct partner *p = xpair;
	struct queue *qa = &b->q[0], *qb = &p->b.q[0];
	unsigned int s, slices = (n + PINGPONG_SLICE - 1) / PINGPONG_SLICE;
	UINT64 base = read64(p->m.CurrentValueCpuVa), v;
	unsigned long i, end;
	double t0, t;

	for (s = 0, i = 1; s < slices; s++) {
		NFENCE_CS *ping = slice(qa, s), *pong = slice(qb, s);

		end = i + PINGPONG_SLICE < n + 1 ? i + PINGPONG_SLICE : n + 1;
		for (; i < end; i++) {
			v = base + 2 * i;
			NFenceCsSignalNativeFenceUnlogged(ping, &p->m, v - 1);
			NFenceCsWaitNativeFenceUnlogged(ping, &p->m, v);
			NFenceCsWaitNativeFenceUnlogged(pong, &p->peer_m, v - 1);
			NFenceCsSignalNativeFenceUnlogged(pong, &p->peer_m, v);
		}
	}
	t0 = now();
	for (s = 0; s < slices; s++) {
		submit(qb, &qb->cs[s]);
		submit(qa, &qa->cs[s]);
	}
	poll_value(p->m.CurrentValueCpuVa, base + 2 * n);
	t = now() - t0;
	queue_idle(qa);
	queue_idle(qb);
	return t;
}

/*
 * One side of h): the best rate; *@irqs the interrupts both adapters
 * raised per round trip in one more run of the same size (-1 without
 * debugfs).
 */
static double xadapter_run(struct bench *b, struct partner *p,
			   const char *what, double *irqs)
{
	double rate[RUNS], best;
	long long i0, i1;
	unsigned long n;

	xpair = p;
	best = best_of_runs(b, pingpong_xadapter, b->quick ? 20 : 200,
			    PINGPONG_MAX, &n, rate);
	printf("xadapter %s: %d runs of %lu round trips: %.0f, %.0f, %.0f "
	       "round trips/s; best %.0f\n", what, RUNS, n, rate[0], rate[1],
	       rate[2], best);
	i0 = debugfs_read(b, "nfence_interrupts", "interrupts");
	i1 = debugfs_read(&p->b, "nfence_interrupts", "interrupts");
	pingpong_xadapter(b, n);
	*irqs = -1;
	if (i0 >= 0 && i1 >= 0)
		*irqs = (double)(debugfs_read(b, "nfence_interrupts",
					      "interrupts") - i0 +
				 debugfs_read(&p->b, "nfence_interrupts",
					      "interrupts") - i1) / (double)n;
	return best;
}

static void bench_xadapter(struct bench *b)
{
	UINT own = b->info.AdapterIndex, i;
	long gpu = -1, cpu = -1;
	double rg, rc, ig, ic;
	struct partner p;
	bool peer;
	char what[128];

	if (!has_native_adapter(own, &peer) || !peer) {
		printf("xadapter: skipped: adapter %u has no peer signals "
		       "(module parameter peer_signals)\n", own);
		return;
	}
	/* A partner with peer signals, and one like it without them. */
	for (i = 0; i < MAX_ADAPTERS; i++)
		if (i != own && has_native_adapter(i, &peer) && peer) {
			gpu = i;
			break;
		}
	for (i = 0; gpu >= 0 && i < MAX_ADAPTERS; i++) {
		if (i == own || !has_native_adapter(i, &peer) || peer)
			continue;
		/* The first, or the first with the same interrupt payload. */
		if (cpu < 0 || (module_payload(i) == module_payload(gpu) &&
				module_payload(cpu) != module_payload(gpu)))
			cpu = i;
	}
	if (gpu < 0 || cpu < 0) {
		printf("xadapter: skipped: needs another native fence "
		       "adapter with peer signals and one without\n");
		return;
	}

	partner_open(b, &p, gpu);
	snprintf(what, sizeof(what), "GPU to GPU (adapters %u and %ld, "
		 "peer signals)", own, gpu);
	rg = xadapter_run(b, &p, what, &ig);
	partner_close(&p);
	partner_open(b, &p, cpu);
	snprintf(what, sizeof(what), "through the CPU (adapters %u and "
		 "%ld, %ld without peer signals)", own, cpu, cpu);
	rc = xadapter_run(b, &p, what, &ic);
	partner_close(&p);

	if (ig >= 0 && ic >= 0)
		printf("xadapter interrupts per round trip: GPU to GPU %.2f "
		       "(goal 0: %s), through the CPU %.2f\n", ig,
		       ig == 0 ? "met" : "missed", ic);
	printf("xadapter ratio GPU-to-GPU/through-CPU: %.2fx (goal >= 1x: "
	       "%s)\n", ratio(rg, rc), ratio(rg, rc) >= 1 ? "met" : "missed");
}

int main(int argc, char **argv)
{
	struct bench b;
	const char *dir = NULL, *parts = "abcdefgh";
	D3DKMT_DESTROYDEVICE dd;
	D3DKMT_CLOSEADAPTER ca;
	int opt;

	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&b, 0, sizeof(b));
	b.budget = 1.5;
	while ((opt = getopt(argc, argv, "qt:d:p:W:")) != -1) {
		switch (opt) {
		case 'W':
			return idle_waiters_main(optarg);
		case 'q':
			b.quick = true;
			break;
		case 't':
			b.budget = strtod(optarg, NULL);
			if (b.budget <= 0)
				usage();
			break;
		case 'd':
			dir = optarg;
			break;
		case 'p':
			parts = optarg;
			if (strspn(parts, "abcdefgh") != strlen(parts))
				usage();
			break;
		default:
			usage();
		}
	}

	open_adapter_at(&b, -1);
	if (dir)
		snprintf(b.debugfs, sizeof(b.debugfs), "%s", dir);
	else
		find_debugfs(&b);
	setup_queue(&b, &b.q[0], 0, true);
	setup_queue(&b, &b.q[1], 1, true);
	setup_queue(&b, &b.mq[0], 0, false);
	setup_queue(&b, &b.mq[1], 1, false);
	printf("%s: adapter %u, engines 0 and 1, %s%s, %.1f s per "
	       "measurement%s\n", prog, b.info.AdapterIndex,
	       b.debugfs[0] ? "debugfs " : "no debugfs",
	       b.debugfs, b.budget, b.quick ? " (quick)" : "");

	if (strchr(parts, 'a'))
		bench_pingpong(&b);
	if (strchr(parts, 'b'))
		bench_interrupts(&b);
	if (strchr(parts, 'c'))
		bench_submission(&b);
	if (strchr(parts, 'd'))
		bench_doorbell(&b);
	if (strchr(parts, 'e'))
		bench_payloads(&b);
	if (strchr(parts, 'f'))
		bench_cmp_cpu(&b);
	if (strchr(parts, 'g'))
		bench_encoding(&b);
	if (strchr(parts, 'h'))
		bench_xadapter(&b);

	/* Destroying the device destroys everything it holds. */
	dd.hDevice = b.hDevice;
	ok(D3DKMTDestroyDevice(&dd), "destroy device");
	ca.hAdapter = b.hAdapter;
	ok(D3DKMTCloseAdapter(&ca), "close adapter");
	printf("%s: done\n", prog);
	return 0;
}
