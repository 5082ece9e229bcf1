/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * nfence-doorbell-demo: user-mode work submission (WDDM 3.2) as a UMD
 * would do it, with only the public libnfence API:
 *
 *  1. a device on the first adapter with user-mode submission
 *  2. a context on engine 0 and a UserModeSubmission hardware queue; a
 *     ring buffer, its control, command buffers and data (Lock2)
 *  3. D3DKMTCreateDoorbell: a doorbell, disconnected at first
 *  4. 200 command buffers, each writing its number to the data and
 *     signaling the queue's progress fence, appended to the ring and rung
 *     with NFenceRingSubmit(): no system call per submission while the
 *     scheduler watches; it connects, and notifies when the scheduler went
 *     quiet, as the WDDM pseudocode does
 *  5. with the dedicated doorbell model, one queue more than there are
 *     physical doorbells: the first queue's doorbell is taken
 *     (DISCONNECTED_RETRY), and its next submission reconnects and runs
 *  6. an F1 round trip, when the simulated GPU puts idle engines in F1
 *     (module parameter f1_idle_ms, not 0): the engine idles, its
 *     doorbells are disconnected (DISCONNECTED_RETRY), and the next
 *     submission reconnects, which brings it back to F0, and runs
 *
 * Exit status: 0 if every step behaved, 1 otherwise (also when no adapter
 * qualifies).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nfence/d3dkmthk.h>

#define MS		UINT64_C(1000000)	/* ns */
#define MAX_ADAPTERS	16
#define PAGE		4096u
#define CMD_SIZE	(64 * 1024u)
#define SLOT		64u			/* bytes per command buffer */
#define SUBMITS		200u
#define WAIT_NS		(10000 * MS)
#define MAX_EXTRA	64u			/* queues for step 5 */

static int failures;
static int step;

static int check(int ok, const char *what)
{
	step++;
	printf("%s %d - %s\n", ok ? "ok" : "not ok", step, what);
	if (!ok)
		failures++;
	return ok;
}

static int expect(NTSTATUS st, const char *what)
{
	if (st != STATUS_SUCCESS)
		fprintf(stderr, "nfence-doorbell-demo: %s: NTSTATUS 0x%08" PRIX32
			"\n", what, (uint32_t)st);
	return check(st == STATUS_SUCCESS, what);
}

static UINT64 read64(const volatile void *p)
{
	return __atomic_load_n((const UINT64 *)p, __ATOMIC_ACQUIRE);
}

/*
 * How long an idle engine with connected doorbells stays in F0 on this
 * machine: the simulated GPU's module parameter (not a D3DKMT query; a
 * real GPU decides it), 0 for never or when it cannot be read.
 */
static unsigned int f1_idle_ms(void)
{
	FILE *f = fopen("/sys/module/nfence/parameters/f1_idle_ms", "re");
	unsigned int ms = 0;

	if (f) {
		if (fscanf(f, "%u", &ms) != 1)
			ms = 0;
		fclose(f);
	}
	return ms;
}

/*
 * The ring control's read index, once it has reached @want or a second has
 * passed: the engine stores it after an entry's last command, the progress
 * fence signal included, so it may trail the progress value a moment.
 */
static UINT64 read_index(const VOID *control, UINT64 want)
{
	const volatile UINT64 *p =
		&((const NFENCE_RING_CONTROL *)control)->ReadIndex;

	for (int i = 0; i < 1000 && read64(p) < want; i++)
		usleep(1000);
	return read64(p);
}

/* A CPU-visible allocation and its Lock2 mapping. */
struct alloc {
	D3DKMT_HANDLE h;
	D3DGPU_VIRTUAL_ADDRESS va;
	VOID *cpu;
};

static NTSTATUS create_alloc(D3DKMT_HANDLE hDevice, UINT64 size,
			     struct alloc *a)
{
	NFENCE_ALLOCATION_DESC desc = {
		.Size = size,
		.SegmentId = NFENCE_SEGMENT_ID_SYSTEM,
	};
	D3DDDI_ALLOCATIONINFO2 info;
	D3DKMT_CREATEALLOCATION ca;
	D3DKMT_LOCK2 lock;
	NTSTATUS st;

	desc.Flags.CpuVisible = 1;
	memset(&info, 0, sizeof(info));
	info.pPrivateDriverData = &desc;
	info.PrivateDriverDataSize = sizeof(desc);
	memset(&ca, 0, sizeof(ca));
	ca.hDevice = hDevice;
	ca.NumAllocations = 1;
	ca.pAllocationInfo2 = &info;
	st = D3DKMTCreateAllocation2(&ca);
	if (st != STATUS_SUCCESS)
		return st;
	a->h = info.hAllocation;
	a->va = info.GpuVirtualAddress;
	memset(&lock, 0, sizeof(lock));
	lock.hDevice = hDevice;
	lock.hAllocation = a->h;
	st = D3DKMTLock2(&lock);
	a->cpu = lock.pData;
	return st;
}

/* A user-mode queue with its ring, doorbell and ring writer. */
struct uqueue {
	D3DKMT_CREATEHWQUEUE queue;
	struct alloc ring, control;
	D3DKMT_CREATE_DOORBELL doorbell;
	NFENCE_RING writer;
	UINT64 submitted;
};

static NTSTATUS setup_queue(D3DKMT_HANDLE hDevice, D3DKMT_HANDLE hContext,
			    struct uqueue *u)
{
	NTSTATUS st;

	memset(u, 0, sizeof(*u));
	u->queue.hHwContext = hContext;
	u->queue.Flags.UserModeSubmission = 1;
	st = D3DKMTCreateHwQueue(&u->queue);
	if (st == STATUS_SUCCESS)
		st = create_alloc(hDevice, PAGE, &u->ring);
	if (st == STATUS_SUCCESS)
		st = create_alloc(hDevice, PAGE, &u->control);
	if (st != STATUS_SUCCESS)
		return st;
	u->doorbell.hHwQueue = u->queue.hHwQueue;
	u->doorbell.hRingBuffer = u->ring.h;
	u->doorbell.hRingBufferControl = u->control.h;
	st = D3DKMTCreateDoorbell(&u->doorbell);
	if (st != STATUS_SUCCESS)
		return st;
	return NFenceRingInit(&u->writer, &u->doorbell, u->ring.cpu, PAGE,
			      u->control.cpu);
}

/*
 * Encode, in command slot @slot, a write of @value to @data_va and the
 * queue's progress signal; then append it to the ring and ring.
 */
static NTSTATUS submit(struct uqueue *u, const struct alloc *cmds,
		       unsigned int slot, D3DGPU_VIRTUAL_ADDRESS data_va,
		       UINT64 value)
{
	UINT64 progress = u->submitted + 1;
	NFENCE_CS cs;
	NTSTATUS st;

	st = NFenceCsInit(&cs, (char *)cmds->cpu + slot * SLOT, SLOT,
			  cmds->va + slot * SLOT);
	if (st == STATUS_SUCCESS)
		st = NFenceCsWrite64(&cs, data_va, value);
	if (st == STATUS_SUCCESS)
		st = NFenceCsSignalHwQueueProgress(&cs, u->queue.hHwQueue,
						   progress);
	if (st == STATUS_SUCCESS)
		st = NFenceRingSubmit(&u->writer, NFenceCsGpuVa(&cs),
				      NFenceCsSize(&cs), progress);
	if (st == STATUS_SUCCESS)
		u->submitted = progress;
	return st;
}

static NTSTATUS wait_progress(D3DKMT_HANDLE hDevice, const struct uqueue *u)
{
	D3DKMT_HANDLE h = u->queue.hHwQueueProgressFence;
	UINT64 v = u->submitted;
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = {
		.hDevice = hDevice,
		.ObjectCount = 1,
		.ObjectHandleArray = &h,
		.FenceValueArray = &v,
	};

	return NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, WAIT_NS,
								NULL);
}

static UINT64 status_of(const struct uqueue *u)
{
	return read64(u->doorbell.DoorbellStatusCPUVirtualAddress);
}

/*
 * A submission to @u, whose doorbell was disconnected (@why): the ring
 * writer connects again, and the command buffer's write of @value to
 * @data reaches the CPU.
 */
static void resubmit(D3DKMT_HANDLE hDevice, struct uqueue *u,
		     const struct alloc *cmds, unsigned int slot,
		     const struct alloc *data, UINT64 value, const char *why)
{
	UINT64 connects = u->writer.Connects;
	char what[160];

	snprintf(what, sizeof(what), "submit to the queue %s", why);
	expect(submit(u, cmds, slot, data->va, value), what);
	check(u->writer.Connects == connects + 1,
	      "the ring writer connected again");
	expect(wait_progress(hDevice, u), "and its work ran");
	check(read64(data->cpu) == value, "its write reached the CPU");
}

/* The first adapter with user-mode submission, or -1. */
static int pick_adapter(const D3DKMT_ADAPTERINFO *adapters, ULONG n,
			D3DKMT_NFENCE_USERMODESUBMISSION_CAPS *caps)
{
	ULONG i;

	for (i = 0; i < n; i++) {
		D3DKMT_QUERYADAPTERINFO q = {
			.hAdapter = adapters[i].hAdapter,
			.Type = KMTQAITYPE_NFENCE_USERMODESUBMISSION_CAPS,
			.pPrivateDriverData = caps,
			.PrivateDriverDataSize = sizeof(*caps),
		};

		if (D3DKMTQueryAdapterInfo(&q) == STATUS_SUCCESS &&
		    caps->DoorbellModel != D3DKMT_NFENCE_DOORBELL_MODEL_NONE)
			return (int)i;
	}
	return -1;
}

int main(void)
{
	D3DKMT_ADAPTERINFO adapters[MAX_ADAPTERS];
	D3DKMT_ENUMADAPTERS2 ea = { .NumAdapters = MAX_ADAPTERS,
				    .pAdapters = adapters };
	D3DKMT_NFENCE_USERMODESUBMISSION_CAPS caps;
	struct uqueue *extra = NULL, main_q;
	D3DKMT_CREATECONTEXTVIRTUAL cc;
	struct alloc cmds = { 0 }, data = { 0 };
	D3DKMT_HANDLE hDevice = 0;
	D3DKMT_CREATEDEVICE cd;
	unsigned int i, n_extra = 0, slot = 0, idle_ms;
	ULONG k;
	int a;

	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&main_q, 0, sizeof(main_q));

	/* 1. */
	if (!expect(D3DKMTEnumAdapters2(&ea), "enumerate adapters"))
		return 1;
	a = pick_adapter(adapters, ea.NumAdapters, &caps);
	if (!check(a >= 0, "an adapter has user-mode submission"))
		goto close_adapters;
	printf("# doorbell model %u, %u physical doorbells of %u bytes\n",
	       (unsigned int)caps.DoorbellModel, caps.NumPhysicalDoorbells,
	       caps.DoorbellSize);
	memset(&cd, 0, sizeof(cd));
	cd.hAdapter = adapters[a].hAdapter;
	if (!expect(D3DKMTCreateDevice(&cd), "create device"))
		goto close_adapters;
	hDevice = cd.hDevice;

	/* 2-3. */
	memset(&cc, 0, sizeof(cc));
	cc.hDevice = hDevice;
	cc.NodeOrdinal = 0;
	if (!expect(D3DKMTCreateContextVirtual(&cc), "context on engine 0") ||
	    !expect(create_alloc(hDevice, CMD_SIZE, &cmds), "command buffers") ||
	    !expect(create_alloc(hDevice, PAGE, &data), "data allocation") ||
	    !expect(setup_queue(hDevice, cc.hContext, &main_q),
		    "user-mode queue, ring, control and doorbell"))
		goto destroy;
	check(status_of(&main_q) == D3DDDI_DOORBELLSTATUS_DISCONNECTED_RETRY,
	      "a new doorbell is disconnected (DISCONNECTED_RETRY)");

	/* 4. */
	for (i = 0; i < SUBMITS; i++) {
		if (submit(&main_q, &cmds, slot++ % (CMD_SIZE / SLOT / 2),
			   data.va, i + 1) != STATUS_SUCCESS)
			break;
	}
	check(i == SUBMITS, "200 submissions through the doorbell");
	expect(wait_progress(hDevice, &main_q),
	       "the progress fence reached the last submission");
	check(read64(data.cpu) == SUBMITS, "the last command buffer's write "
	      "reached the CPU");
	check(read_index(main_q.control.cpu, SUBMITS) == SUBMITS,
	      "the engine's read index followed");
	printf("# %u submissions: %" PRIu64 " connects, %" PRIu64
	       " notifies, no other system call\n", SUBMITS,
	       main_q.writer.Connects, main_q.writer.Notifies);

	/* 5. */
	if (caps.DoorbellModel != D3DKMT_NFENCE_DOORBELL_MODEL_DEDICATED ||
	    caps.NumPhysicalDoorbells > MAX_EXTRA) {
		printf("# no doorbell to take with this model\n");
		goto f1;
	}
	n_extra = caps.NumPhysicalDoorbells;
	extra = calloc(n_extra, sizeof(*extra));
	if (!check(extra != NULL, "memory for the other queues"))
		goto destroy;
	for (i = 0; i < n_extra; i++) {
		if (setup_queue(hDevice, cc.hContext, &extra[i]) !=
			STATUS_SUCCESS ||
		    submit(&extra[i], &cmds, CMD_SIZE / SLOT / 2 + i,
			   data.va + 8 * (i + 1), i) != STATUS_SUCCESS)
			break;
	}
	check(i == n_extra, "as many other queues as physical doorbells, "
	      "each rung once");
	check(status_of(&main_q) ==
	      D3DDDI_DOORBELLSTATUS_DISCONNECTED_RETRY,
	      "the least recently rung doorbell was taken "
	      "(DISCONNECTED_RETRY)");
	resubmit(hDevice, &main_q, &cmds, slot++ % (CMD_SIZE / SLOT / 2),
		 &data, SUBMITS + 1, "that lost it");

	/* 6. */
f1:
	idle_ms = f1_idle_ms();
	if (!idle_ms) {
		printf("# engines stay in F0 (f1_idle_ms is 0)\n");
		goto destroy;
	}
	for (i = 0; i < idle_ms + 5000 &&
	     status_of(&main_q) != D3DDDI_DOORBELLSTATUS_DISCONNECTED_RETRY;
	     i += 10)
		usleep(10000);
	check(status_of(&main_q) == D3DDDI_DOORBELLSTATUS_DISCONNECTED_RETRY,
	      "after f1_idle_ms of idling the engine went to F1 and "
	      "disconnected its doorbells (DISCONNECTED_RETRY)");
	/* Its connect brings the engine back to F0. */
	resubmit(hDevice, &main_q, &cmds, slot++ % (CMD_SIZE / SLOT / 2),
		 &data, SUBMITS + 2, "of the engine in F1");

destroy:
	for (i = 0; extra && i < n_extra; i++) {
		if (extra[i].doorbell.hDoorbell) {
			D3DKMT_DESTROY_DOORBELL d = {
				.hDoorbell = extra[i].doorbell.hDoorbell,
			};

			expect(D3DKMTDestroyDoorbell(&d), "destroy a doorbell");
		}
	}
	free(extra);
	if (main_q.doorbell.hDoorbell) {
		D3DKMT_DESTROY_DOORBELL d = {
			.hDoorbell = main_q.doorbell.hDoorbell,
		};

		expect(D3DKMTDestroyDoorbell(&d), "destroy the doorbell");
	}
	/* The device takes its contexts, queues and allocations with it. */
	if (hDevice) {
		D3DKMT_DESTROYDEVICE dd = { .hDevice = hDevice };

		expect(D3DKMTDestroyDevice(&dd), "destroy device");
	}
close_adapters:
	for (k = 0; k < ea.NumAdapters; k++) {
		D3DKMT_CLOSEADAPTER ca = { .hAdapter = adapters[k].hAdapter };

		D3DKMTCloseAdapter(&ca);
	}
	printf("nfence-doorbell-demo: %d steps, %d failed\n", step, failures);
	return failures ? 1 : 0;
}
