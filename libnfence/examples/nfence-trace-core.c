/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * nfence-trace's recorder and converter, shared with nfence-pipeline-demo
 * (--trace). Documentation/tracing.rst describes the capture, the JSON
 * and the choices made here.
 *
 * Recording, through libtracefs: a tracefs instance of our own
 * (instances/nfence-trace) with trace_clock "mono" (CLOCK_MONOTONIC, the
 * clock the simulated GPU's timestamps count from a per-adapter base),
 * the TGID column, every nfence event and libnfence's probes as uprobes;
 * its "trace" text is the capture, after header comment lines naming each
 * adapter's timestamp frequency.
 *
 * Converting: the events are parsed into an array (anything that is not a
 * well-formed nfence event line is skipped; an nfence event line with a
 * field missing or out of range is an error), each adapter's timestamp
 * base is inferred from the events that carry both clocks, every log
 * entry and WORK is placed once on the trace clock (a zero GPU timestamp
 * at its event's time), waits are matched to signals by those times, and
 * the JSON is written in the capture's order with the metadata first.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <trace-cmd.h>
#include <tracefs.h>

#include <nfence/d3dkmthk.h>

#include "nfence-trace-core.h"
#include "nfence-trace-usdt.h"

#define NS_PER_SEC		UINT64_C(1000000000)
/*
 * Adapters are processes whose pid no task can have: PID_MAX_LIMIT
 * (2^22) and up. Tasks keep their own pid (TGID) and tid.
 */
#define ADAPTER_PID_BASE	4194304
#define TID_INTERRUPTS		1	/* an adapter's interrupt track */
#define TID_SIGNALS		2	/* the fence values the GPU wrote */
#define TID_QUEUE_BASE		100	/* then one track per queue */
#define MAX_LINE		65536
#define BUFFER_KB		"4096"	/* per CPU, for the instance */
#define NTRACE_INSTANCE		"nfence-trace"

/* ------------------------------------------------------------------ */
/* Recording                                                           */
/* ------------------------------------------------------------------ */

/*
 * Set an instance file (trace_clock, buffer_size_kb): -1 (with errno) if it
 * could not be written whole.
 */
static int inst_write(struct ntrace_rec *r, const char *file,
		      const char *text)
{
	int n;

	errno = 0;
	n = tracefs_instance_file_write(r->inst, file, text);
	if (n == (int)strlen(text))
		return 0;
	if (!errno)
		errno = EIO;
	return -1;
}

/* The adapters' timestamp frequencies, for the capture's header. */
static void query_adapters(struct ntrace_rec *r)
{
	D3DKMT_ADAPTERINFO adapters[NTRACE_MAX_ADAPTERS];
	D3DKMT_ENUMADAPTERS2 ea = {
		.NumAdapters = NTRACE_MAX_ADAPTERS,
		.pAdapters = adapters,
	};
	ULONG i;

	r->num_adapters = 0;
	if (D3DKMTEnumAdapters2(&ea) != STATUS_SUCCESS)
		return;
	for (i = 0; i < ea.NumAdapters; i++) {
		D3DKMT_CLOSEADAPTER ca = { .hAdapter = adapters[i].hAdapter };
		D3DKMT_NFENCE_ADAPTER info;
		D3DKMT_QUERYADAPTERINFO q = {
			.hAdapter = adapters[i].hAdapter,
			.Type = KMTQAITYPE_NFENCE_ADAPTER,
			.pPrivateDriverData = &info,
			.PrivateDriverDataSize = sizeof(info),
		};

		if (D3DKMTQueryAdapterInfo(&q) == STATUS_SUCCESS &&
		    r->num_adapters < NTRACE_MAX_ADAPTERS) {
			r->adapters[r->num_adapters].index = info.AdapterIndex;
			r->adapters[r->num_adapters].frequency =
				info.TimestampFrequency;
			r->num_adapters++;
		}
		D3DKMTCloseAdapter(&ca);
	}
}

/* The slot of @r's adapter with trace index @index; NULL if none. */
static struct ntrace_adapter *rec_adapter(struct ntrace_rec *r,
					  unsigned int index)
{
	unsigned int i;

	for (i = 0; i < r->num_adapters; i++)
		if (r->adapters[i].index == index)
			return &r->adapters[i];
	return NULL;
}

/*
 * While recording, every adapter with log buffers is at logging level ALL
 * (NFenceSetLoggingLevel(), WDDM's detailed-logging switch): its
 * queues' logs are the larger ones, so the trace does not overrun them,
 * and UMDs that reconnect their doorbells see the level. @all false puts
 * back the level each had. Adapters without log buffers are left alone.
 * -1 (with errno) if a level could not be set, after undoing those set.
 */
static int set_log_level_all(struct ntrace_rec *r, bool all)
{
	D3DKMT_ADAPTERINFO adapters[NTRACE_MAX_ADAPTERS];
	D3DKMT_ENUMADAPTERS2 ea = {
		.NumAdapters = NTRACE_MAX_ADAPTERS,
		.pAdapters = adapters,
	};
	int ret = 0;
	ULONG i;

	if (D3DKMTEnumAdapters2(&ea) != STATUS_SUCCESS)
		return all ? 0 : -1;
	for (i = 0; i < ea.NumAdapters; i++) {
		D3DKMT_CLOSEADAPTER ca = { .hAdapter = adapters[i].hAdapter };
		NFENCE_SETLOGGINGLEVEL l = { .hAdapter = adapters[i].hAdapter };
		D3DKMT_NFENCE_ADAPTER info;
		D3DKMT_QUERYADAPTERINFO q = {
			.hAdapter = adapters[i].hAdapter,
			.Type = KMTQAITYPE_NFENCE_ADAPTER,
			.pPrivateDriverData = &info,
			.PrivateDriverDataSize = sizeof(info),
		};
		struct ntrace_adapter *a = NULL;
		NTSTATUS st;

		if (D3DKMTQueryAdapterInfo(&q) == STATUS_SUCCESS)
			a = rec_adapter(r, info.AdapterIndex);
		if (a && all) {
			l.LoggingLevel = D3DDDI_LOGGING_LEVEL_ALL;
			st = NFenceSetLoggingLevel(&l);
			/* Set even when a queue's buffers were not made. */
			if (st == STATUS_SUCCESS || st == STATUS_NO_MEMORY ||
			    st == STATUS_INSUFFICIENT_RESOURCES) {
				a->leveled = 1;
				a->previous = l.PreviousLevel;
			}
			if (st != STATUS_SUCCESS && st != STATUS_NOT_SUPPORTED &&
			    !ret) {
				errno = st == STATUS_ACCESS_DENIED ? EACCES :
					a->leveled ? ENOMEM : EIO;
				ret = -1;
			}
		} else if (a && a->leveled) {
			l.LoggingLevel = (D3DDDI_LOGGING_LEVEL)a->previous;
			if (NFenceSetLoggingLevel(&l) == STATUS_SUCCESS)
				a->leveled = 0;
			else
				ret = -1;
		}
		D3DKMTCloseAdapter(&ca);
	}
	if (ret < 0 && all)
		set_log_level_all(r, false);
	return ret;
}

/* Remove the uprobes of the library's probes, once disabled. */
static void remove_probes(struct ntrace_rec *r)
{
	while (r->num_probes) {
		struct tracefs_dynevent *p = r->probes[--r->num_probes];

		tracefs_dynevent_destroy(p, false);
		tracefs_dynevent_free(p);
	}
}

/*
 * Remove a definition of @p's event left by a recorder that died: no other
 * one runs (the instance is ours), so it is stale. By name, as the kernel
 * deletes a probe ("-:GROUP/EVENT"): none there is no error. The list that
 * tracefs_dynevent_get() parses is not used, as libtracefs 1.6.4
 * (bookworm's) reads past the end of it when no entry matches.
 */
static void remove_stale_probe(struct tracefs_dynevent *p)
{
	int err = errno;

	tracefs_dynevent_destroy(p, false);
	errno = err;
}

/*
 * Put a uprobe on each libnfence probe of @r->umd_lib and enable them in
 * the instance: the runtime's side of the timeline. Without them the
 * recording goes on (a warning says why).
 */
static void add_probes(struct ntrace_rec *r, const char *prog)
{
	struct ntrace_usdt probes[NTRACE_USDT_MAX];
	char why[256];
	int i, n;

	n = ntrace_usdt_read(r->umd_lib, probes, NTRACE_USDT_MAX, why,
			     sizeof(why));
	_Static_assert(sizeof(r->probes) / sizeof(r->probes[0]) ==
		       NTRACE_USDT_MAX, "a uprobe per probe");
	if (n <= 0) {
		fprintf(stderr, "%s: warning: %s: %s: no \"queued\" events "
			"will be recorded\n", prog, r->umd_lib,
			n < 0 ? why : "no libnfence probes (built with "
			"NFENCE_NO_PROBES?)");
		return;
	}
	for (i = 0; i < n; i++) {
		const char *fetch = probes[i].fetch;
		struct tracefs_dynevent *p;

		while (*fetch == ' ')
			fetch++;
		errno = 0;
		p = tracefs_uprobe_alloc(NTRACE_USDT_GROUP, probes[i].event,
					 r->umd_lib, probes[i].offset,
					 *fetch ? fetch : NULL);
		if (p)
			remove_stale_probe(p);
		if (!p || tracefs_dynevent_create(p) < 0) {
			fprintf(stderr, "%s: warning: cannot define the uprobe "
				"%s/%s: %s (a kernel without "
				"CONFIG_UPROBE_EVENTS, or the probes of another "
				"recorder): no \"queued\" events will be "
				"recorded\n", prog, NTRACE_USDT_GROUP,
				probes[i].event,
				errno ? strerror(errno) : "no memory");
			tracefs_dynevent_free(p);
			remove_probes(r);
			return;
		}
		r->probes[r->num_probes++] = p;
	}
	if (tracefs_event_enable(r->inst, NTRACE_USDT_GROUP, NULL) < 0) {
		fprintf(stderr, "%s: warning: cannot enable the %s events: "
			"%s\n", prog, NTRACE_USDT_GROUP, strerror(errno));
		/* Some may be enabled: a probe in use cannot be removed. */
		tracefs_event_disable(r->inst, NTRACE_USDT_GROUP, NULL);
		remove_probes(r);
	}
}

/* Stop the events, remove the instance and the uprobes. */
static void remove_instance(struct ntrace_rec *r)
{
	if (r->inst) {
		tracefs_event_disable(r->inst, "nfence", NULL);
		if (r->num_probes)
			tracefs_event_disable(r->inst, NTRACE_USDT_GROUP, NULL);
		tracefs_trace_off(r->inst);
		tracefs_instance_destroy(r->inst);
		tracefs_instance_free(r->inst);
		r->inst = NULL;
	}
	remove_probes(r);
}

void ntrace_record_cancel(struct ntrace_rec *r)
{
	set_log_level_all(r, false);
	remove_instance(r);
}

/* The instance of our own, empty and new: -1 after printing why not. */
static int create_instance(struct ntrace_rec *r, const char *prog)
{
	errno = 0;
	if (!tracefs_tracing_dir()) {
		fprintf(stderr, "%s: no tracefs (none mounted, and mounting it "
			"on /sys/kernel/tracing failed: %s); recording needs "
			"root\n", prog, errno ? strerror(errno) : "not found");
		return -1;
	}
	errno = 0;
	r->inst = tracefs_instance_create(NTRACE_INSTANCE);
	if (r->inst && !tracefs_instance_is_new(r->inst)) {
		/* Not ours to remove. */
		tracefs_instance_free(r->inst);
		r->inst = NULL;
		errno = EEXIST;
	}
	if (!r->inst) {
		fprintf(stderr, "%s: cannot create the tracefs instance %s: "
			"%s%s\n", prog, NTRACE_INSTANCE,
			errno ? strerror(errno) : "no memory",
			errno == EEXIST ? " (another nfence-trace is "
			"recording, or remove the leftover with rmdir)" : "");
		return -1;
	}
	return 0;
}

int ntrace_record_start(struct ntrace_rec *r, const char *umd_lib,
			const char *prog)
{
	char lib[PATH_MAX];

	memset(r, 0, sizeof(*r));
	if (umd_lib) {
		if (!realpath(umd_lib, lib) || strlen(lib) >= sizeof(r->umd_lib)) {
			fprintf(stderr, "%s: %s: %s\n", prog, umd_lib,
				strerror(errno ? errno : ENAMETOOLONG));
			return -1;
		}
		snprintf(r->umd_lib, sizeof(r->umd_lib), "%s", lib);
	} else if (ntrace_usdt_library(r->umd_lib, sizeof(r->umd_lib)) < 0) {
		fprintf(stderr, "%s: cannot tell which file libnfence is\n",
			prog);
		return -1;
	}
	if (create_instance(r, prog) < 0)
		return -1;
	if (!tracefs_dir_exists(r->inst, "events/nfence")) {
		fprintf(stderr, "%s: no nfence events in the tracefs instance "
			"(is nfence.ko loaded?)\n", prog);
		remove_instance(r);
		return -1;
	}
	if (inst_write(r, "trace_clock", "mono") < 0) {
		fprintf(stderr, "%s: trace_clock: cannot set mono: %s\n",
			prog, strerror(errno));
		remove_instance(r);
		return -1;
	}
	/* Nice to have: more room, and the process of each thread. */
	inst_write(r, "buffer_size_kb", BUFFER_KB);
	tracefs_option_enable(r->inst, TRACEFS_OPTION_RECORD_TGID);
	query_adapters(r);
	if (set_log_level_all(r, true) < 0) {
		fprintf(stderr, "%s: cannot set the logging level to ALL: %s\n",
			prog, strerror(errno));
		remove_instance(r);
		return -1;
	}
	add_probes(r, prog);
	if (tracefs_event_enable(r->inst, "nfence", NULL) < 0 ||
	    tracefs_trace_on(r->inst) < 0) {
		fprintf(stderr, "%s: cannot enable the nfence events: %s\n",
			prog, strerror(errno));
		set_log_level_all(r, false);
		remove_instance(r);
		return -1;
	}
	return 0;
}

/* Stop the events, and put the adapters' logging levels back. */
static void record_finish(struct ntrace_rec *r)
{
	tracefs_event_disable(r->inst, "nfence", NULL);
	if (r->num_probes)
		tracefs_event_disable(r->inst, NTRACE_USDT_GROUP, NULL);
	set_log_level_all(r, false);
}

/* The capture: the header lines, then the instance's "trace" text. */
static int save_capture(struct ntrace_rec *r, FILE *capture, const char *prog)
{
	char buf[65536];
	unsigned int i;
	int ret = 0;
	ssize_t n;
	int fd;

	fprintf(capture, "# nfence-trace capture: trace_clock=mono\n");
	for (i = 0; i < r->num_adapters; i++)
		fprintf(capture, "# nfence-trace: adapter=%u "
			"timestamp_frequency=%" PRIu64 "\n",
			r->adapters[i].index, r->adapters[i].frequency);
	fd = tracefs_instance_file_open(r->inst, "trace", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: the instance's trace: %s\n", prog,
			strerror(errno));
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (fwrite(buf, 1, n, capture) != (size_t)n)
			break;
	if (n < 0 || ferror(capture) || fflush(capture) == EOF) {
		fprintf(stderr, "%s: saving the instance's trace failed: %s\n",
			prog, strerror(errno));
		ret = -1;
	}
	close(fd);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Parsing a capture                                                   */
/* ------------------------------------------------------------------ */

enum ev_type {
	EV_SIGNAL,		/* nfence_fence_signal */
	EV_WAIT_BEGIN,		/* nfence_wait_begin */
	EV_WAIT_END,		/* nfence_wait_end */
	EV_INTERRUPT,		/* nfence_interrupt */
	EV_DOORBELL,		/* nfence_doorbell_ring */
	EV_LOG,			/* nfence_log_entry */
	EV_WORK,		/* nfence_work */
	EV_QUEUED,		/* libnfence's probes: nfence_fence_*_queued */
};

struct ev {
	enum ev_type type;
	uint64_t ts;		/* trace clock, ns */
	unsigned int task;	/* index in tasks[] */
	uint32_t adapter, engine, queue, fence, handle, count, fences, woken;
	uint64_t value, observed, gpu_ts, ns, write_index;
	uint32_t user_handle;	/* queued: the D3DKMT handle */
	uint64_t va;		/* queued: the GPU VA of the command */
	int result;
	bool async, gpu, signal_log;
	char payload[16];	/* the interrupt's */
	/* conversion state */
	/* Log entry, WORK: placed on the trace clock (ns), by place_events() */
	int64_t t_start, t_end;	/* a WORK's t_end is its start too */
	bool est_end;		/* gpu_ts 0: t_end is the event's own time */
	bool est_start;		/* wait: drawn from its end (a timestamp 0) */
	long match;		/* wait entry: the signal entry that released it */
	long next_flow;		/* signal entry's next wait in its list */
	long first_flow;	/* signal entry: first wait it released */
	unsigned long flow_id;
	long pair;		/* CPU wait begin: its end, -1 unfinished */
	long queued;		/* log entry: the queued event of its command */
	unsigned long queued_flow; /* ... and the flow's id */
	bool paired;		/* CPU wait end: has its begin */
};

struct task {
	int tid, tgid;		/* tgid -1: unknown */
	char comm[32];
	long open_wait;		/* blocking wait begun and not ended, or -1 */
	bool track;		/* has events on its own track */
};

struct adapter {
	uint32_t index;
	uint64_t frequency;	/* 0: unknown */
	bool used, has_base, irq_track, signal_track;
	int64_t base;		/* trace clock ns at GPU timestamp 0 */
};

struct queue {
	uint32_t adapter, id;
	long engine;		/* -1: not known (a doorbell ring only) */
	int tid;
};

struct conv {
	const char *name;
	unsigned long line;
	struct ev *evs;
	size_t nevs, evcap;
	struct task *tasks;
	size_t ntasks, taskcap;
	struct adapter adapters[NTRACE_MAX_ADAPTERS];
	unsigned int nadapters;
	struct queue *queues;
	size_t nqueues, queuecap;
	uint64_t last_ts;
	unsigned long lost;
	bool raw;		/* read from a recording's binary events */
	struct ntrace_stats st;
};

static int err(struct conv *c, const char *fmt, ...)
{
	va_list ap;

	if (c->line)
		fprintf(stderr, "nfence-trace: %s:%lu: ", c->name, c->line);
	else
		fprintf(stderr, "nfence-trace: %s: ", c->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *q;

	if (n < *cap)
		return p;
	ncap = *cap ? *cap * 2 : 64;
	if (ncap > SIZE_MAX / size)
		return NULL;
	q = realloc(p, ncap * size);
	if (q)
		*cap = ncap;
	return q;
}

/* A decimal (or 0x hex) number that ends at @end or a space. */
static int parse_num(const char *s, const char **end, uint64_t *v)
{
	unsigned int base = 10;
	uint64_t x = 0;
	const char *p = s;
	int digits = 0;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	for (;; p++) {
		unsigned int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (base == 16 && isxdigit((unsigned char)*p))
			d = (tolower((unsigned char)*p) - 'a') + 10;
		else
			break;
		if (x > (UINT64_MAX - d) / base)
			return -1;	/* overflow */
		x = x * base + d;
		digits++;
	}
	if (!digits)
		return -1;
	*v = x;
	*end = p;
	return 0;
}

/* The value of "key=" in @args (space-separated key=value), or NULL. */
static const char *arg(const char *args, const char *key)
{
	size_t len = strlen(key);
	const char *p = args;

	while (p && *p) {
		if (!strncmp(p, key, len) && p[len] == '=')
			return p + len + 1;
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	return NULL;
}

static int arg_u64(struct conv *c, const char *args, const char *key,
		   uint64_t *v)
{
	const char *s = arg(args, key), *end;

	if (!s)
		return err(c, "no %s= in \"%s\"", key, args);
	if (parse_num(s, &end, v) < 0 || (*end && *end != ' '))
		return err(c, "%s= is not a number in \"%s\"", key, args);
	return 0;
}

static int arg_u32(struct conv *c, const char *args, const char *key,
		   uint32_t *v)
{
	uint64_t x;

	if (arg_u64(c, args, key, &x) < 0)
		return -1;
	if (x > UINT32_MAX)
		return err(c, "%s=%" PRIu64 " is out of range", key, x);
	*v = (uint32_t)x;
	return 0;
}

static int arg_int(struct conv *c, const char *args, const char *key, int *v)
{
	const char *s = arg(args, key);
	char *end;
	long x;

	if (!s)
		return err(c, "no %s= in \"%s\"", key, args);
	errno = 0;
	x = strtol(s, &end, 10);
	if (end == s || (*end && *end != ' ') || errno || x < INT32_MIN ||
	    x > INT32_MAX)
		return err(c, "%s= is not a number in \"%s\"", key, args);
	*v = (int)x;
	return 0;
}

/* A word value: "key=word" equal to @word? -1 if no key. */
static int arg_is(const char *args, const char *key, const char *word)
{
	const char *s = arg(args, key);
	size_t len = strlen(word);

	if (!s)
		return -1;
	return !strncmp(s, word, len) && (s[len] == ' ' || !s[len]);
}

static struct adapter *adapter_get(struct conv *c, uint32_t index)
{
	unsigned int i;

	for (i = 0; i < c->nadapters; i++)
		if (c->adapters[i].index == index)
			return &c->adapters[i];
	if (c->nadapters == NTRACE_MAX_ADAPTERS || index >= 1u << 20)
		return NULL;
	memset(&c->adapters[c->nadapters], 0, sizeof(c->adapters[0]));
	c->adapters[c->nadapters].index = index;
	return &c->adapters[c->nadapters++];
}

static int adapter_use(struct conv *c, uint32_t index, struct adapter **a)
{
	*a = adapter_get(c, index);
	if (!*a)
		return err(c, "adapter=%" PRIu32 ": too many adapters or "
			   "index out of range", index);
	(*a)->used = true;
	return 0;
}

static long queue_get(struct conv *c, uint32_t adapter, uint32_t id,
		      long engine)
{
	struct queue *q;
	size_t i;

	for (i = 0; i < c->nqueues; i++) {
		q = &c->queues[i];
		if (q->adapter != adapter || q->id != id)
			continue;
		if (engine >= 0 && q->engine < 0)
			q->engine = engine;
		else if (engine >= 0 && q->engine != engine)
			return err(c, "queue %" PRIu32 " of adapter %" PRIu32
				   " on engines %ld and %ld", id, adapter,
				   q->engine, engine);
		return (long)i;
	}
	q = grow(c->queues, &c->queuecap, c->nqueues, sizeof(*q));
	if (!q)
		return err(c, "out of memory");
	c->queues = q;
	q = &c->queues[c->nqueues];
	q->adapter = adapter;
	q->id = id;
	q->engine = engine;
	q->tid = 0;
	return (long)c->nqueues++;
}

static long task_get(struct conv *c, const char *comm, size_t comm_len,
		     int tid, int tgid)
{
	struct task *t;
	size_t i;

	for (i = 0; i < c->ntasks; i++) {
		t = &c->tasks[i];
		if (t->tid == tid) {
			/* A later line may know the TGID (or a new comm). */
			if (tgid >= 0)
				t->tgid = tgid;
			return (long)i;
		}
	}
	t = grow(c->tasks, &c->taskcap, c->ntasks, sizeof(*t));
	if (!t)
		return err(c, "out of memory");
	c->tasks = t;
	t = &c->tasks[c->ntasks];
	t->tid = tid;
	t->tgid = tgid;
	if (comm_len >= sizeof(t->comm))
		comm_len = sizeof(t->comm) - 1;
	memcpy(t->comm, comm, comm_len);
	t->comm[comm_len] = '\0';
	t->open_wait = -1;
	t->track = false;
	return (long)c->ntasks++;
}

/* "# nfence-trace: adapter=N timestamp_frequency=F" header lines. */
static int parse_header(struct conv *c, const char *line)
{
	const char *args = line + strlen("# nfence-trace: ");
	struct adapter *a;
	uint64_t freq;
	uint32_t index = 0;

	if (arg_u32(c, args, "adapter", &index) < 0 ||
	    arg_u64(c, args, "timestamp_frequency", &freq) < 0)
		return -1;
	if (!freq || freq > NS_PER_SEC * 100)
		return err(c, "timestamp_frequency=%" PRIu64
			   " is out of range", freq);
	a = adapter_get(c, index);
	if (!a)
		return err(c, "adapter=%" PRIu32 " is out of range", index);
	a->frequency = freq;
	return 0;
}

/* "123.456789:" into ns; the trace's timestamps. */
static int parse_ts(const char *s, size_t len, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0;
	size_t i = 0, fdigits = 0;

	if (!len || s[len - 1] != ':')
		return -1;
	len--;
	for (; i < len && isdigit((unsigned char)s[i]); i++) {
		if (sec > (UINT64_C(1) << 62) / 10 / NS_PER_SEC)
			return -1;	/* past 2^62 ns: no trace clock */
		sec = sec * 10 + (uint64_t)(s[i] - '0');
	}
	if (!i || i == len || s[i] != '.')
		return -1;
	for (i++; i < len; i++, fdigits++) {
		if (!isdigit((unsigned char)s[i]) || fdigits == 9)
			return -1;
		frac = frac * 10 + (uint64_t)(s[i] - '0');
	}
	if (!fdigits)
		return -1;
	for (; fdigits < 9; fdigits++)
		frac *= 10;
	*ns = sec * NS_PER_SEC + frac;
	return 0;
}

/*
 * Split a trace line: "COMM-TID (TGID) [CPU] FLAGS TS: EVENT: ARGS", the
 * (TGID) and FLAGS columns optional. Return: 1 if it has that shape, 0 if
 * not.
 */
struct tline {
	const char *comm;
	size_t comm_len;
	int tid, tgid;
	uint64_t ts;
	const char *event;	/* "nfence_work" ... */
	size_t event_len;
	const char *args;
};

static int split_line(const char *line, struct tline *t)
{
	const char *p, *q, *end, *tok, *cpu_end;
	size_t len;

	for (p = strchr(line, '['); p; p = strchr(p + 1, '[')) {
		uint64_t v;

		/* "[CPU]" ... */
		if (parse_num(p + 1, &q, &v) < 0 || *q != ']' || q[1] != ' ')
			continue;
		cpu_end = q + 2;
		/* ... preceded by "COMM-TID" and maybe "(TGID)". */
		end = p;
		while (end > line && end[-1] == ' ')
			end--;
		t->tgid = -1;
		if (end > line && end[-1] == ')') {
			const char *open = end - 1;

			while (open > line && *open != '(')
				open--;
			if (*open != '(')
				continue;
			tok = open + 1;
			while (*tok == ' ')
				tok++;
			if (isdigit((unsigned char)*tok)) {
				if (parse_num(tok, &q, &v) < 0 || *q != ')' ||
				    v > INT32_MAX)
					continue;
				t->tgid = (int)v;
			}
			end = open;
			while (end > line && end[-1] == ' ')
				end--;
		}
		tok = end;
		while (tok > line && isdigit((unsigned char)tok[-1]))
			tok--;
		if (tok == end || tok == line || tok[-1] != '-' ||
		    parse_num(tok, &q, &v) < 0 || v > INT32_MAX)
			continue;
		t->tid = (int)v;
		t->comm = line;
		while (*t->comm == ' ')
			t->comm++;
		if (tok - 1 < t->comm)
			continue;
		t->comm_len = (size_t)(tok - 1 - t->comm);
		/* After "[CPU] ": maybe flags, then "TS:". */
		p = cpu_end;
		while (*p == ' ')
			p++;
		len = strcspn(p, " ");
		if (parse_ts(p, len, &t->ts) < 0) {
			p += len;
			while (*p == ' ')
				p++;
			len = strcspn(p, " ");
			if (parse_ts(p, len, &t->ts) < 0)
				return 0;
		}
		p += len;
		while (*p == ' ')
			p++;
		len = strcspn(p, " ");
		if (len < 2 || p[len - 1] != ':')
			return 0;
		t->event = p;
		t->event_len = len - 1;
		p += len;
		while (*p == ' ')
			p++;
		t->args = p;
		return 1;
	}
	return 0;
}

static bool event_is(const struct tline *t, const char *name)
{
	return t->event_len == strlen(name) &&
	       !strncmp(t->event, name, t->event_len);
}

static int ev_finish(struct conv *c, struct ev *e);

static void ev_init(struct ev *e, uint64_t ts)
{
	memset(e, 0, sizeof(*e));
	e->ts = ts;
	e->match = e->next_flow = e->first_flow = e->pair = e->queued = -1;
}

/* Parse one nfence event's fields into @e. 1: used, 0: not ours, -1. */
static int parse_event(struct conv *c, const struct tline *t, struct ev *e)
{
	const char *a = t->args;
	uint64_t async;
	int r;

	ev_init(e, t->ts);
	if (event_is(t, "nfence_fence_wait_queued") ||
	    event_is(t, "nfence_fence_signal_queued")) {
		/* libnfence's probes, through uprobes: no adapter. */
		e->type = EV_QUEUED;
		e->signal_log = event_is(t, "nfence_fence_signal_queued");
		if (arg_u32(c, a, "handle", &e->user_handle) < 0 ||
		    arg_u32(c, a, "kernel_handle", &e->handle) < 0 ||
		    arg_u64(c, a, "value", &e->value) < 0 ||
		    arg_u64(c, a, "va", &e->va) < 0)
			return -1;
	} else if (event_is(t, "nfence_fence_signal")) {
		e->type = EV_SIGNAL;
		if (arg_u32(c, a, "adapter", &e->adapter) < 0 ||
		    arg_u32(c, a, "fence", &e->fence) < 0 ||
		    arg_u64(c, a, "value", &e->value) < 0)
			return -1;
		r = arg_is(a, "from", "gpu");
		if (r < 0 || (!r && arg_is(a, "from", "cpu") != 1))
			return err(c, "from= is neither cpu nor gpu");
		e->gpu = r;
	} else if (event_is(t, "nfence_wait_begin")) {
		e->type = EV_WAIT_BEGIN;
		if (arg_u32(c, a, "adapter", &e->adapter) < 0 ||
		    arg_u32(c, a, "fence", &e->fence) < 0 ||
		    arg_u64(c, a, "value", &e->value) < 0 ||
		    arg_u32(c, a, "count", &e->count) < 0 ||
		    arg_u64(c, a, "async", &async) < 0)
			return -1;
		if (async > 1)
			return err(c, "async=%" PRIu64 " is not 0 or 1", async);
		e->async = async;
	} else if (event_is(t, "nfence_wait_end")) {
		e->type = EV_WAIT_END;
		if (arg_u32(c, a, "adapter", &e->adapter) < 0 ||
		    arg_u32(c, a, "fence", &e->fence) < 0 ||
		    arg_u64(c, a, "value", &e->value) < 0 ||
		    arg_int(c, a, "result", &e->result) < 0)
			return -1;
	} else if (event_is(t, "nfence_interrupt")) {
		const char *p = arg(a, "payload");
		size_t len;

		e->type = EV_INTERRUPT;
		if (arg_u32(c, a, "adapter", &e->adapter) < 0 ||
		    arg_u32(c, a, "fences", &e->fences) < 0 ||
		    arg_u32(c, a, "woken", &e->woken) < 0)
			return -1;
		if (!p)
			return err(c, "no payload= in \"%s\"", a);
		len = strcspn(p, " ");
		if (!len || len >= sizeof(e->payload))
			return err(c, "payload= is empty or too long");
		memcpy(e->payload, p, len);
	} else if (event_is(t, "nfence_doorbell_ring")) {
		e->type = EV_DOORBELL;
		if (arg_u32(c, a, "adapter", &e->adapter) < 0 ||
		    arg_u32(c, a, "queue", &e->queue) < 0 ||
		    arg_u64(c, a, "write_index", &e->write_index) < 0)
			return -1;
	} else if (event_is(t, "nfence_log_entry")) {
		e->type = EV_LOG;
		if (arg_u32(c, a, "adapter", &e->adapter) < 0 ||
		    arg_u32(c, a, "engine", &e->engine) < 0 ||
		    arg_u32(c, a, "queue", &e->queue) < 0 ||
		    arg_u32(c, a, "fence", &e->fence) < 0 ||
		    arg_u32(c, a, "handle", &e->handle) < 0 ||
		    arg_u64(c, a, "value", &e->value) < 0 ||
		    arg_u64(c, a, "observed_ts", &e->observed) < 0 ||
		    arg_u64(c, a, "gpu_ts", &e->gpu_ts) < 0)
			return -1;
		r = arg_is(a, "log", "signals");
		if (r < 0 || (!r && arg_is(a, "log", "waits") != 1))
			return err(c, "log= is neither signals nor waits");
		e->signal_log = r;
	} else if (event_is(t, "nfence_work")) {
		e->type = EV_WORK;
		if (arg_u32(c, a, "adapter", &e->adapter) < 0 ||
		    arg_u32(c, a, "engine", &e->engine) < 0 ||
		    arg_u32(c, a, "queue", &e->queue) < 0 ||
		    arg_u64(c, a, "gpu_ts", &e->gpu_ts) < 0 ||
		    arg_u64(c, a, "ns", &e->ns) < 0)
			return -1;
	} else {
		return 0;	/* another nfence event: a newer driver's */
	}
	return ev_finish(c, e);
}

/*
 * What every reader of events checks once an event's fields are in @e, and
 * the adapter and queue it names. 1, or -1 after saying why.
 */
static int ev_finish(struct conv *c, struct ev *e)
{
	struct adapter *ad;

	if (e->type == EV_QUEUED)
		return 1;	/* libnfence's probes: no adapter */
	/*
	 * Timestamps never go backwards, but either may be 0: an entry whose
	 * write was skipped (WDDM, 15.5).
	 */
	if (e->type == EV_LOG && !e->signal_log && e->gpu_ts &&
	    e->observed > e->gpu_ts)
		return err(c, "a wait observed (%" PRIu64 ") after its release "
			   "(%" PRIu64 ")", e->observed, e->gpu_ts);
	if (adapter_use(c, e->adapter, &ad) < 0)
		return -1;
	if (e->type == EV_LOG || e->type == EV_WORK) {
		if (e->engine >= 1u << 16)
			return err(c, "engine=%" PRIu32 " is out of range",
				   e->engine);
		if (queue_get(c, e->adapter, e->queue, e->engine) < 0)
			return -1;
	} else if (e->type == EV_DOORBELL) {
		if (queue_get(c, e->adapter, e->queue, -1) < 0)
			return -1;
	}
	return 1;
}

static int parse_line(struct conv *c, const char *line)
{
	struct tline t;
	struct ev *e;
	long task;
	int r;

	if (!strncmp(line, "# nfence-trace: ", 16))
		return parse_header(c, line);
	if (line[0] == '#')
		return 0;
	if (strstr(line, "[LOST ") && strstr(line, " EVENTS]")) {
		c->lost++;
		return 0;
	}
	if (!split_line(line, &t)) {
		/* An nfence event we cannot place is an error. */
		if (strstr(line, " nfence_"))
			return err(c, "not a trace event line: \"%.80s\"",
				   line);
		c->st.ignored += line[strspn(line, " \t\r")] != '\0';
		return 0;
	}
	if (t.event_len < 7 || strncmp(t.event, "nfence_", 7)) {
		c->st.ignored++;
		return 0;
	}
	e = grow(c->evs, &c->evcap, c->nevs, sizeof(*e));
	if (!e)
		return err(c, "out of memory");
	c->evs = e;
	e = &c->evs[c->nevs];
	r = parse_event(c, &t, e);
	if (r <= 0) {
		c->st.ignored += !r;
		return r;
	}
	task = task_get(c, t.comm, t.comm_len, t.tid, t.tgid);
	if (task < 0)
		return -1;
	e->task = (unsigned int)task;
	if (e->ts > c->last_ts)
		c->last_ts = e->ts;
	c->nevs++;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Reading a recording's events (libtraceevent)                        */
/* ------------------------------------------------------------------ */

/*
 * A recording is converted from its instance's binary events, read with
 * libtracefs and decoded with libtraceevent from the formats the kernel
 * gives for them (events/nfence/<event>/format, and the uprobes'): the
 * fields by name, the timestamps in nanoseconds. The text capture is
 * saved first (reading the raw buffers consumes them); a saved capture is
 * converted by the parser above.
 */
struct raw {
	struct conv *c;
	struct tep_handle *tep;
	struct trace_seq seq;
	int *tgids;		/* saved_tgids: pid -> tgid, pairs */
	size_t ntgids;
	int ret;
};

static int raw_u64(struct raw *rw, struct tep_event *ev,
		   struct tep_record *rec, const char *name, uint64_t *v)
{
	struct tep_format_field *f = tep_find_field(ev, name);
	unsigned long long x;

	if (!f || tep_read_number_field(f, rec->data, &x) < 0)
		return err(rw->c, "%s/%s has no field %s", ev->system,
			   ev->name, name);
	*v = x;
	return 0;
}

static int raw_u32(struct raw *rw, struct tep_event *ev,
		   struct tep_record *rec, const char *name, uint32_t *v)
{
	uint64_t x;

	if (raw_u64(rw, ev, rec, name, &x) < 0)
		return -1;
	if (x > UINT32_MAX)
		return err(rw->c, "%s=%" PRIu64 " is out of range", name, x);
	*v = (uint32_t)x;
	return 0;
}

/*
 * The interrupt's payload as the kernel's print format names it (its
 * __print_symbolic table): the word after "payload=" in the event's text.
 */
static int raw_payload(struct raw *rw, struct tep_event *ev,
		       struct tep_record *rec, struct ev *e)
{
	const char *p;
	size_t len;

	trace_seq_reset(&rw->seq);
	tep_print_event(rw->tep, &rw->seq, rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&rw->seq);
	p = arg(rw->seq.buffer, "payload");
	len = p ? strcspn(p, " ") : 0;
	if (!len || len >= sizeof(e->payload))
		return err(rw->c, "%s: no payload= in \"%s\"", ev->name,
			   rw->seq.buffer);
	memcpy(e->payload, p, len);
	return 0;
}

/* One record's fields into @e. 1: used, 0: not ours, -1. */
static int raw_event(struct raw *rw, struct tep_event *ev,
		     struct tep_record *rec, struct ev *e)
{
	const char *n = ev->name;
	uint64_t b = 0;
	int r = 0;

	ev_init(e, rec->ts);
	if (!strcmp(ev->system, NTRACE_USDT_GROUP)) {
		if (strcmp(n, "nfence_fence_wait_queued") &&
		    strcmp(n, "nfence_fence_signal_queued"))
			return 0;
		e->type = EV_QUEUED;
		e->signal_log = !strcmp(n, "nfence_fence_signal_queued");
		if (raw_u32(rw, ev, rec, "handle", &e->user_handle) < 0 ||
		    raw_u32(rw, ev, rec, "kernel_handle", &e->handle) < 0 ||
		    raw_u64(rw, ev, rec, "value", &e->value) < 0 ||
		    raw_u64(rw, ev, rec, "va", &e->va) < 0)
			return -1;
		return ev_finish(rw->c, e);
	}
	if (strcmp(ev->system, "nfence"))
		return 0;
	if (!strcmp(n, "nfence_fence_signal")) {
		e->type = EV_SIGNAL;
		r = raw_u64(rw, ev, rec, "gpu", &b);
		e->gpu = b != 0;
	} else if (!strcmp(n, "nfence_wait_begin")) {
		e->type = EV_WAIT_BEGIN;
		r = raw_u32(rw, ev, rec, "count", &e->count);
		if (!r)
			r = raw_u64(rw, ev, rec, "async", &b);
		e->async = b != 0;
	} else if (!strcmp(n, "nfence_wait_end")) {
		e->type = EV_WAIT_END;
		r = raw_u64(rw, ev, rec, "result", &b);
		e->result = (int32_t)(uint32_t)b;
	} else if (!strcmp(n, "nfence_interrupt")) {
		e->type = EV_INTERRUPT;
		if (raw_u32(rw, ev, rec, "fences", &e->fences) < 0 ||
		    raw_u32(rw, ev, rec, "woken", &e->woken) < 0 ||
		    raw_payload(rw, ev, rec, e) < 0)
			return -1;
	} else if (!strcmp(n, "nfence_doorbell_ring")) {
		e->type = EV_DOORBELL;
		if (raw_u32(rw, ev, rec, "queue", &e->queue) < 0 ||
		    raw_u64(rw, ev, rec, "write_index", &e->write_index) < 0)
			return -1;
	} else if (!strcmp(n, "nfence_log_entry")) {
		uint32_t type = 0;

		e->type = EV_LOG;
		if (raw_u32(rw, ev, rec, "engine", &e->engine) < 0 ||
		    raw_u32(rw, ev, rec, "queue", &e->queue) < 0 ||
		    raw_u32(rw, ev, rec, "type", &type) < 0 ||
		    raw_u32(rw, ev, rec, "handle", &e->handle) < 0 ||
		    raw_u64(rw, ev, rec, "observed_ts", &e->observed) < 0 ||
		    raw_u64(rw, ev, rec, "end_ts", &e->gpu_ts) < 0)
			return -1;
		if (type != DXGK_NATIVE_FENCE_LOG_TYPE_SIGNALS &&
		    type != DXGK_NATIVE_FENCE_LOG_TYPE_WAITS)
			return err(rw->c, "nfence_log_entry: type %" PRIu32
				   " is neither signals nor waits", type);
		e->signal_log = type == DXGK_NATIVE_FENCE_LOG_TYPE_SIGNALS;
	} else if (!strcmp(n, "nfence_work")) {
		e->type = EV_WORK;
		if (raw_u32(rw, ev, rec, "engine", &e->engine) < 0 ||
		    raw_u32(rw, ev, rec, "queue", &e->queue) < 0 ||
		    raw_u64(rw, ev, rec, "gpu_ts", &e->gpu_ts) < 0 ||
		    raw_u64(rw, ev, rec, "ns", &e->ns) < 0)
			return -1;
	} else {
		return 0;	/* another nfence event: a newer driver's */
	}
	if (r < 0 || raw_u32(rw, ev, rec, "adapter", &e->adapter) < 0)
		return -1;
	/* The fence and its value, for the events that name them. */
	if (e->type == EV_SIGNAL || e->type == EV_WAIT_BEGIN ||
	    e->type == EV_WAIT_END || e->type == EV_LOG) {
		if (raw_u32(rw, ev, rec, "fence", &e->fence) < 0 ||
		    raw_u64(rw, ev, rec, "value", &e->value) < 0)
			return -1;
	}
	return ev_finish(rw->c, e);
}

static int cmp_pid(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The process of thread @pid, from saved_tgids; -1 if unknown. */
static int raw_tgid(const struct raw *rw, int pid)
{
	const int *p = bsearch(&pid, rw->tgids, rw->ntgids, 2 * sizeof(int),
			       cmp_pid);

	return p ? p[1] : -1;
}

/* saved_tgids ("PID TGID" lines, record-tgid's table); none is no error. */
static void raw_load_tgids(struct raw *rw)
{
	char *text = tracefs_instance_file_read(NULL, "saved_tgids", NULL);
	size_t cap = 0;
	char *line, *save = NULL;
	int pid, tgid;

	for (line = text ? strtok_r(text, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		int *t;

		if (sscanf(line, "%d %d", &pid, &tgid) != 2)
			continue;
		t = grow(rw->tgids, &cap, rw->ntgids, 2 * sizeof(*t));
		if (!t)
			break;	/* the processes are a nicety */
		rw->tgids = t;
		rw->tgids[2 * rw->ntgids] = pid;
		rw->tgids[2 * rw->ntgids + 1] = tgid;
		rw->ntgids++;
	}
	free(text);
	/* The table is the kernel's (all threads since boot): by pid. */
	if (rw->tgids)
		qsort(rw->tgids, rw->ntgids, 2 * sizeof(int), cmp_pid);
}

static int raw_record(struct tep_event *ev, struct tep_record *rec,
		      int cpu, void *data)
{
	struct raw *rw = data;
	struct conv *c = rw->c;
	const char *comm;
	struct ev *e;
	long task;
	int pid, r;

	(void)cpu;
	if (rw->ret < 0)
		return 1;	/* an error stops the reading */
	c->st.lines++;
	if (rec->missed_events)
		c->lost++;
	e = grow(c->evs, &c->evcap, c->nevs, sizeof(*e));
	if (!e) {
		rw->ret = err(c, "out of memory");
		return 1;
	}
	c->evs = e;
	e = &c->evs[c->nevs];
	r = raw_event(rw, ev, rec, e);
	if (r < 0) {
		rw->ret = -1;
		return 1;
	}
	if (!r) {
		c->st.ignored++;
		return 0;
	}
	pid = tep_data_pid(rw->tep, rec);
	comm = tep_data_comm_from_pid(rw->tep, pid);
	task = task_get(c, comm, strlen(comm), pid, raw_tgid(rw, pid));
	if (task < 0) {
		rw->ret = -1;
		return 1;
	}
	e->task = (unsigned int)task;
	if (e->ts > c->last_ts)
		c->last_ts = e->ts;
	c->nevs++;
	return 0;
}

/*
 * The formats of the events of @system into @tep. 0, or -1 if the system
 * has no events (not there).
 */
static int raw_load_system(struct tep_handle *tep, const char *system)
{
	char **events = tracefs_system_events(NULL, system);
	char *format;
	int i, size;

	if (!events)
		return -1;
	for (i = 0; events[i]; i++) {
		format = tracefs_event_file_read(NULL, system, events[i],
						 "format", &size);
		/* One that fails to parse is missed when its records come. */
		if (format && size > 0)
			tep_parse_event(tep, format, size, system);
		free(format);
	}
	tracefs_list_free(events);
	return 0;
}

/*
 * A tep handle for the recording's events: the ring buffer's page header,
 * the formats of the nfence events and of the probes' group (if it is
 * there), and the saved command lines (threads' names, best effort).
 * This is what tracefs_local_events_system() makes, less /proc/kallsyms:
 * no nfence event prints a kernel symbol, and libtracefs 1.6.4 reads that
 * file with a copy per chunk, most of the time of a short recording in a
 * TCG guest.
 */
static struct tep_handle *raw_local_events(void)
{
	struct tep_handle *tep = tep_alloc();
	char *header;
	int size;

	if (!tep)
		return NULL;
	header = tracefs_instance_file_read(NULL, "events/header_page", &size);
	if (!header || size <= 0 ||
	    tep_parse_header_page(tep, header, size, sizeof(long)) < 0 ||
	    raw_load_system(tep, "nfence") < 0) {
		free(header);
		tep_free(tep);
		errno = ENOENT;
		return NULL;
	}
	free(header);
	raw_load_system(tep, NTRACE_USDT_GROUP);
	tracefs_load_cmdlines(NULL, tep);
	tep_set_long_size(tep, tep_get_header_page_size(tep));
	return tep;
}

/* The recording's events into @c, and its adapters' frequencies. */
static int raw_read(struct ntrace_rec *r, struct conv *c)
{
	struct raw rw = { .c = c };
	unsigned int i;

	for (i = 0; i < r->num_adapters; i++) {
		struct adapter *a = adapter_get(c, r->adapters[i].index);

		if (a)
			a->frequency = r->adapters[i].frequency;
	}
	/* After the recording: saved_cmdlines has its threads' names. */
	rw.tep = raw_local_events();
	if (!rw.tep)
		return err(c, "cannot read the nfence event formats: %s",
			   strerror(errno));
	trace_seq_init(&rw.seq);
	raw_load_tgids(&rw);
	if (tracefs_iterate_raw_events(rw.tep, r->inst, NULL, 0, raw_record,
				       &rw) < 0 && !rw.ret)
		rw.ret = err(c, "cannot read the instance's events: %s",
			     strerror(errno));
	trace_seq_destroy(&rw.seq);
	free(rw.tgids);
	tep_free(rw.tep);
	return rw.ret < 0 ? -1 : 0;
}

/*
 * A trace-cmd data file's record: its event, then as a recording's.
 * libtracecmd stops at a negative return (not at a positive one).
 */
static int dat_record(struct tracecmd_input *h, struct tep_record *rec,
		      int cpu, void *data)
{
	struct raw *rw = data;
	struct tep_event *ev = tep_find_event_by_record(rw->tep, rec);

	(void)h;
	if (!ev) {
		rw->c->st.lines++;
		rw->c->st.ignored++;
		return 0;
	}
	return raw_record(ev, rec, cpu, data) ? -1 : 0;
}

/*
 * The events of the trace-cmd data file @path into @c: its main buffer and
 * every instance's, in time order, decoded with the formats the file keeps
 * from the kernel that recorded it.
 */
static int dat_read(const char *path, struct conv *c)
{
	struct tracecmd_input *h, **handles;
	struct raw rw = { .c = c };
	int i, n;

	h = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS |
			  TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS);
	if (!h)
		return err(c, "not a trace-cmd data file libtracecmd can "
			   "read");
	n = tracecmd_buffer_instances(h);
	handles = calloc((size_t)(n > 0 ? n : 0) + 1, sizeof(*handles));
	if (!handles) {
		tracecmd_close(h);
		return err(c, "out of memory");
	}
	handles[0] = h;
	for (i = 0; i < n; i++) {
		handles[i + 1] = tracecmd_buffer_instance_handle(h, i);
		if (!handles[i + 1]) {
			rw.ret = err(c, "cannot read its buffer %s",
				     tracecmd_buffer_instance_name(h, i));
			n = i;
			goto out;
		}
	}
	rw.tep = tracecmd_get_tep(h);
	trace_seq_init(&rw.seq);
	if (tracecmd_iterate_events_multi(handles, n + 1, dat_record,
					  &rw) < 0 && !rw.ret)
		rw.ret = err(c, "cannot read its events");
	trace_seq_destroy(&rw.seq);
out:
	for (i = n; i > 0; i--)
		tracecmd_close(handles[i]);
	tracecmd_close(h);
	free(handles);
	return rw.ret < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* Converting                                                          */
/* ------------------------------------------------------------------ */

static int64_t ticks_ns(const struct adapter *a, uint64_t ticks)
{
	return (int64_t)((unsigned __int128)ticks * NS_PER_SEC / a->frequency);
}

static struct adapter *adapter_of(struct conv *c, uint32_t index)
{
	return adapter_get(c, index);	/* always known by now */
}

/*
 * Each adapter's timestamp base: the GPU timestamp of a log entry or a
 * WORK is read just before its event, so trace time - GPU time is at
 * least the base; the smallest difference is the closest (the trace's
 * text has microseconds: within about one). A GPU timestamp of 0 is no
 * time (WDDM, 15.5: an entry may have a zero timestamp) and takes no
 * part; an adapter with no other has no base and needs no frequency.
 */
static int infer_bases(struct conv *c, const struct ntrace_opts *opts)
{
	size_t i;

	for (i = 0; i < c->nevs; i++) {
		struct ev *e = &c->evs[i];
		struct adapter *a;
		int64_t d;

		if ((e->type != EV_LOG && e->type != EV_WORK) || !e->gpu_ts)
			continue;
		a = adapter_of(c, e->adapter);
		if (!a->frequency && opts && opts->frequency)
			a->frequency = opts->frequency;
		if (!a->frequency) {
			c->line = 0;
			return err(c, "adapter %" PRIu32 " has GPU timestamps "
				   "but no timestamp frequency (no "
				   "\"# nfence-trace: adapter=%" PRIu32
				   " timestamp_frequency=...\" line): give "
				   "--frequency HZ", a->index, a->index);
		}
		if ((unsigned __int128)e->gpu_ts * NS_PER_SEC / a->frequency >
		    (UINT64_C(1) << 62)) {
			c->line = 0;
			return err(c, "GPU timestamp %" PRIu64 " is out of "
				   "range", e->gpu_ts);
		}
		d = (int64_t)e->ts - ticks_ns(a, e->gpu_ts);
		if (!a->has_base || d < a->base) {
			a->base = d;
			a->has_base = true;
		}
	}
	return 0;
}

/*
 * Place every log entry and WORK on the trace clock, once, after the
 * bases: sorting, matching and the JSON all use these times. A GPU
 * timestamp is mapped with its adapter's base; one of 0 (no time,
 * WDDM, 15.5) is replaced by the entry's own event time, as the event
 * fires when the GPU writes the entry (est_end). A wait whose observed
 * time or release is unknown is drawn from its end, with no length
 * (est_start), never from GPU time 0.
 */
static void place_events(struct conv *c)
{
	size_t i;

	for (i = 0; i < c->nevs; i++) {
		struct ev *e = &c->evs[i];
		const struct adapter *a;

		if (e->type != EV_LOG && e->type != EV_WORK)
			continue;
		a = adapter_of(c, e->adapter);
		e->est_end = !e->gpu_ts;
		/* A nonzero gpu_ts gave its adapter a base. */
		e->t_end = e->est_end ? (int64_t)e->ts :
			   a->base + ticks_ns(a, e->gpu_ts);
		/* A WORK begins at its gpu_ts and lasts its ns. */
		e->t_start = e->t_end;
		if (e->type == EV_LOG && !e->signal_log) {
			e->est_start = e->est_end || !e->observed;
			if (!e->est_start)
				e->t_start = a->base + ticks_ns(a, e->observed);
		}
	}
}

/* Trace-clock nanoseconds to the JSON's microseconds. */
static double ns_us(int64_t ns)
{
	return (double)ns / 1e3;
}

static double trace_us(uint64_t ns)
{
	return (double)ns / 1e3;
}

static int cmp_signal(const void *pa, const void *pb, void *arg)
{
	const struct ev *evs = arg;
	const struct ev *a = &evs[*(const long *)pa];
	const struct ev *b = &evs[*(const long *)pb];

	if (a->adapter != b->adapter)
		return a->adapter < b->adapter ? -1 : 1;
	if (a->fence != b->fence)
		return a->fence < b->fence ? -1 : 1;
	if (a->t_end != b->t_end)
		return a->t_end < b->t_end ? -1 : 1;
	/* Equal times (repeated timestamps): the capture's order. */
	return *(const long *)pa < *(const long *)pb ? -1 : 1;
}

/*
 * Flows: a wait entry is released by the earliest signal entry of the
 * same adapter and fence with a value at least the wait's, written no
 * later than the wait's release (at the same time included), on the
 * placed times: a zero-timestamp signal is at its event's time, so it
 * releases no wait that ended before it. A wait that blocked (observed
 * before its release) was released by a signal written no earlier than
 * it was observed: the GPU then found the fence below the value, so an
 * earlier signal was another fence's whose id was reused, or the fence
 * went down since. Waits on no fence (fence=0) have none.
 */
static int match_flows(struct conv *c)
{
	size_t i, n = 0, lo, hi;
	long *sig;

	for (i = 0; i < c->nevs; i++)
		n += c->evs[i].type == EV_LOG && c->evs[i].signal_log &&
		     c->evs[i].fence;
	sig = malloc((n ? n : 1) * sizeof(*sig));
	if (!sig) {
		c->line = 0;
		return err(c, "out of memory");
	}
	n = 0;
	for (i = 0; i < c->nevs; i++)
		if (c->evs[i].type == EV_LOG && c->evs[i].signal_log &&
		    c->evs[i].fence)
			sig[n++] = (long)i;
	qsort_r(sig, n, sizeof(*sig), cmp_signal, c->evs);

	for (i = 0; i < c->nevs; i++) {
		struct ev *w = &c->evs[i], *s;
		bool blocked;
		size_t k;

		if (w->type != EV_LOG || w->signal_log)
			continue;
		if (!w->fence) {
			c->st.unreleased++;
			continue;
		}
		/* The first signal of (adapter, fence). */
		lo = 0;
		hi = n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			s = &c->evs[sig[mid]];
			if (s->adapter < w->adapter ||
			    (s->adapter == w->adapter && s->fence < w->fence))
				lo = mid + 1;
			else
				hi = mid;
		}
		blocked = !w->est_start && w->t_start < w->t_end;
		for (k = lo; k < n; k++) {
			s = &c->evs[sig[k]];
			if (s->adapter != w->adapter || s->fence != w->fence ||
			    s->t_end > w->t_end)
				break;
			if (s->value >= w->value &&
			    (!blocked || s->t_end >= w->t_start)) {
				w->match = sig[k];
				break;
			}
		}
		if (w->match < 0) {
			c->st.unreleased++;
			continue;
		}
		w->flow_id = ++c->st.flows;
		/* Append to the signal's list, in capture order. */
		s = &c->evs[w->match];
		if (s->first_flow < 0) {
			s->first_flow = (long)i;
		} else {
			long j = s->first_flow;

			while (c->evs[j].next_flow >= 0)
				j = c->evs[j].next_flow;
			c->evs[j].next_flow = (long)i;
		}
	}
	free(sig);
	return 0;
}

/* Key order of queued events and log entries, then time. */
static int cmp_queued(const void *pa, const void *pb, void *arg)
{
	const struct ev *evs = arg;
	const struct ev *a = &evs[*(const long *)pa];
	const struct ev *b = &evs[*(const long *)pb];
	int64_t ta, tb;

	if (a->signal_log != b->signal_log)
		return a->signal_log < b->signal_log ? -1 : 1;
	if (a->handle != b->handle)
		return a->handle < b->handle ? -1 : 1;
	if (a->value != b->value)
		return a->value < b->value ? -1 : 1;
	/* Queued events before log entries at one time. */
	ta = a->type == EV_QUEUED ? (int64_t)a->ts : a->t_end;
	tb = b->type == EV_QUEUED ? (int64_t)b->ts : b->t_end;
	if (ta != tb)
		return ta < tb ? -1 : 1;
	if (a->type != b->type)
		return a->type == EV_QUEUED ? -1 : 1;
	return *(const long *)pa < *(const long *)pb ? -1 : 1;
}

/*
 * The seed's FENCE_WAIT_QUEUED / FENCE_SIGNAL_QUEUED (libnfence's probes,
 * on the CPU) to the log entry their command wrote on the GPU: the same
 * log (waits, signals), the same handle (the kernel's, which the payload
 * carries and the entry shows) and value; first queued, first logged,
 * and a command is logged no earlier than it was queued. The probes name
 * no adapter or queue: see Documentation/tracing.rst for what that
 * confuses.
 */
static int match_queued(struct conv *c)
{
	size_t i, n = 0, k, q;
	long *idx;

	for (i = 0; i < c->nevs; i++)
		n += c->evs[i].type == EV_QUEUED || c->evs[i].type == EV_LOG;
	idx = malloc((n ? n : 1) * sizeof(*idx));
	if (!idx) {
		c->line = 0;
		return err(c, "out of memory");
	}
	n = 0;
	for (i = 0; i < c->nevs; i++)
		if (c->evs[i].type == EV_QUEUED || c->evs[i].type == EV_LOG)
			idx[n++] = (long)i;
	qsort_r(idx, n, sizeof(*idx), cmp_queued, c->evs);
	/* Per key, a FIFO of queued events: q is its oldest unmatched. */
	for (k = 0, q = 0; k < n; k++) {
		struct ev *e = &c->evs[idx[k]], *f;

		if (e->type == EV_QUEUED) {
			c->st.queued++;
			continue;
		}
		/* Skip queued events of earlier keys or already matched. */
		for (; q < k; q++) {
			f = &c->evs[idx[q]];
			if (f->type == EV_QUEUED && f->queued < 0 &&
			    f->signal_log == e->signal_log &&
			    f->handle == e->handle && f->value == e->value)
				break;
		}
		if (q == k)
			continue;
		f = &c->evs[idx[q]];
		f->queued = idx[k];	/* queued event: its entry */
		e->queued = idx[q];
		e->queued_flow = ++c->st.flows;
		c->st.queued_flows++;
		q++;
	}
	free(idx);
	return 0;
}

/* CPU waits: a blocking one ends in its task; async ones by fence. */
static void pair_waits(struct conv *c)
{
	size_t i;
	long j;

	for (i = 0; i < c->nevs; i++) {
		struct ev *e = &c->evs[i];
		struct task *t = &c->tasks[e->task];

		if (e->type == EV_WAIT_BEGIN && !e->async) {
			/* A begin while one is open: that one never ended. */
			t->open_wait = (long)i;
		} else if (e->type == EV_WAIT_END) {
			j = t->open_wait;
			if (j >= 0 && c->evs[j].adapter == e->adapter &&
			    c->evs[j].fence == e->fence &&
			    c->evs[j].value == e->value) {
				c->evs[j].pair = (long)i;
				e->paired = true;
				t->open_wait = -1;
				continue;
			}
			/* An async wait's end: the oldest open one. */
			for (j = 0; j < (long)i && !e->paired; j++) {
				struct ev *b = &c->evs[j];

				if (b->type == EV_WAIT_BEGIN && b->async &&
				    b->pair < 0 && b->adapter == e->adapter &&
				    b->fence == e->fence &&
				    b->value == e->value) {
					b->pair = (long)i;
					e->paired = true;
				}
			}
			/* Else the task's blocking wait, if on that adapter. */
			j = t->open_wait;
			if (!e->paired && j >= 0 &&
			    c->evs[j].adapter == e->adapter) {
				c->evs[j].pair = (long)i;
				e->paired = true;
				t->open_wait = -1;
			}
		}
	}
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else if (ch >= 0x80)
			fputc('?', f);	/* keep the JSON plain ASCII */
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

struct out {
	FILE *f;
	bool first;
};

/* Start one event object: ',\n{' and the common fields. */
static void ev_start(struct out *o, const char *ph, const char *name,
		     const char *cat, long pid, long tid)
{
	fprintf(o->f, "%s{\"ph\":\"%s\",\"name\":", o->first ? "" : ",\n",
		ph);
	o->first = false;
	json_str(o->f, name);
	if (cat)
		fprintf(o->f, ",\"cat\":\"%s\"", cat);
	fprintf(o->f, ",\"pid\":%ld,\"tid\":%ld", pid, tid);
}

static void meta(struct out *o, const char *what, long pid, long tid,
		 const char *name, long sort)
{
	ev_start(o, "M", what, NULL, pid, tid);
	fputs(",\"args\":{\"name\":", o->f);
	json_str(o->f, name);
	fputs("}}", o->f);
	if (sort >= 0) {
		ev_start(o, "M", !strcmp(what, "process_name") ?
			 "process_sort_index" : "thread_sort_index", NULL,
			 pid, tid);
		fprintf(o->f, ",\"args\":{\"sort_index\":%ld}}", sort);
	}
}

static long adapter_pid(uint32_t adapter)
{
	return ADAPTER_PID_BASE + (long)adapter;
}

static long task_pid(const struct task *t)
{
	return t->tgid > 0 ? t->tgid : t->tid;
}

static long queue_tid(struct conv *c, uint32_t adapter, uint32_t id)
{
	size_t i;

	for (i = 0; i < c->nqueues; i++)
		if (c->queues[i].adapter == adapter && c->queues[i].id == id)
			return c->queues[i].tid;
	return 0;	/* not reached: every queue was registered */
}

static int cmp_queue(const void *pa, const void *pb)
{
	const struct queue *a = pa, *b = pb;

	if (a->adapter != b->adapter)
		return a->adapter < b->adapter ? -1 : 1;
	if (a->engine != b->engine)
		return a->engine < b->engine ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static void write_metadata(struct conv *c, struct out *o)
{
	char name[96];
	unsigned int i;
	size_t k, j;
	uint32_t prev = UINT32_MAX;
	int tid = 0;

	/* Tracks of each adapter's queues, by engine then queue. */
	qsort(c->queues, c->nqueues, sizeof(*c->queues), cmp_queue);
	for (k = 0; k < c->nqueues; k++) {
		if (c->queues[k].adapter != prev)
			tid = TID_QUEUE_BASE;
		prev = c->queues[k].adapter;
		c->queues[k].tid = tid++;
	}
	for (i = 0; i < c->nadapters; i++) {
		struct adapter *a = &c->adapters[i];

		if (!a->used)
			continue;
		c->st.adapters++;
		snprintf(name, sizeof(name), "nfence adapter %" PRIu32
			 " (GPU)", a->index);
		meta(o, "process_name", adapter_pid(a->index), 0, name,
		     a->index);
		if (a->irq_track) {
			meta(o, "thread_name", adapter_pid(a->index),
			     TID_INTERRUPTS, "interrupts", 0);
			c->st.tracks++;
		}
		if (a->signal_track) {
			meta(o, "thread_name", adapter_pid(a->index),
			     TID_SIGNALS, "fence signals (CMP)", 1);
			c->st.tracks++;
		}
		for (k = 0; k < c->nqueues; k++) {
			struct queue *q = &c->queues[k];

			if (q->adapter != a->index)
				continue;
			if (q->engine >= 0)
				snprintf(name, sizeof(name), "engine %ld queue "
					 "%" PRIu32, q->engine, q->id);
			else
				snprintf(name, sizeof(name), "queue %" PRIu32,
					 q->id);
			meta(o, "thread_name", adapter_pid(a->index), q->tid,
			     name, q->tid);
			c->st.tracks++;
		}
	}
	/* Tasks with events on their own tracks: their processes first. */
	for (k = 0; k < c->ntasks; k++) {
		struct task *t = &c->tasks[k], *leader = t;
		bool seen = false;

		if (!t->track)
			continue;
		for (j = 0; j < k; j++)
			seen |= c->tasks[j].track &&
				task_pid(&c->tasks[j]) == task_pid(t);
		if (seen)
			continue;
		for (j = 0; j < c->ntasks; j++)
			if (c->tasks[j].tid == task_pid(t))
				leader = &c->tasks[j];
		snprintf(name, sizeof(name), "%s", leader->comm);
		meta(o, "process_name", task_pid(t), 0, name,
		     1000 + (long)k);
	}
	for (k = 0; k < c->ntasks; k++) {
		struct task *t = &c->tasks[k];

		if (!t->track)
			continue;
		snprintf(name, sizeof(name), "%s-%d", t->comm, t->tid);
		meta(o, "thread_name", task_pid(t), t->tid, name, -1);
		c->st.tracks++;
	}
}

/* Which tracks are used: before the metadata is written. */
static void mark_tracks(struct conv *c)
{
	size_t i;

	for (i = 0; i < c->nevs; i++) {
		struct ev *e = &c->evs[i];
		struct adapter *a;

		if (e->type == EV_QUEUED) {
			c->tasks[e->task].track = true;
			continue;
		}
		a = adapter_of(c, e->adapter);
		switch (e->type) {
		case EV_INTERRUPT:
			a->irq_track = true;
			break;
		case EV_SIGNAL:
			if (e->gpu)
				a->signal_track = true;
			else
				c->tasks[e->task].track = true;
			break;
		case EV_WAIT_BEGIN:
			c->tasks[e->task].track = true;
			break;
		default:
			break;
		}
	}
}

/* The arg of a slice placed at its event's time: its gpu_ts was 0. */
static const char *est_time(const struct ev *e)
{
	return e->est_end ? ",\"time\":\"trace\"" : "";
}

static void write_event(struct conv *c, struct out *o, size_t i)
{
	struct ev *e = &c->evs[i];
	struct task *t = &c->tasks[e->task];
	long apid = adapter_pid(e->adapter);
	char name[96];
	double ts, end;
	long j, tid;

	switch (e->type) {
	case EV_WORK:
		ts = ns_us(e->t_start);
		ev_start(o, "X", "work", "gpu", apid,
			 queue_tid(c, e->adapter, e->queue));
		fprintf(o->f, ",\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"ns\":%"
			PRIu64 ",\"gpu_ts\":%" PRIu64 "%s}}", ts,
			(double)e->ns / 1e3, e->ns, e->gpu_ts, est_time(e));
		c->st.slices++;
		break;
	case EV_LOG:
		tid = queue_tid(c, e->adapter, e->queue);
		if (e->signal_log) {
			/*
			 * A zero-length slice, not an instant: the flows to
			 * the waits it released need a slice to start from.
			 */
			ts = ns_us(e->t_end);
			snprintf(name, sizeof(name), "signal fence %" PRIu32,
				 e->fence);
			ev_start(o, "X", name, "gpu", apid, tid);
			fprintf(o->f, ",\"ts\":%.3f,\"dur\":0,\"args\":"
				"{\"value\":%" PRIu64 ",\"handle\":%" PRIu32
				",\"gpu_ts\":%" PRIu64 "%s}}", ts, e->value,
				e->handle, e->gpu_ts, est_time(e));
			c->st.slices++;
			if (e->queued >= 0) {
				ev_start(o, "f", "queued", "nfence.queued",
					 apid, tid);
				fprintf(o->f, ",\"id\":%lu,\"bp\":\"e\","
					"\"ts\":%.3f}", e->queued_flow, ts);
			}
			for (j = e->first_flow; j >= 0;
			     j = c->evs[j].next_flow) {
				ev_start(o, "s", "release", "nfence.flow", apid,
					 tid);
				fprintf(o->f, ",\"id\":%lu,\"ts\":%.3f}",
					c->evs[j].flow_id, ts);
			}
			break;
		}
		ts = ns_us(e->t_start);
		end = ns_us(e->t_end);
		snprintf(name, sizeof(name), "wait fence %" PRIu32, e->fence);
		ev_start(o, "X", name, "gpu", apid, tid);
		fprintf(o->f, ",\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"value\":%"
			PRIu64 ",\"handle\":%" PRIu32 ",\"observed_ts\":%"
			PRIu64 ",\"gpu_ts\":%" PRIu64 "%s%s}}", ts, end - ts,
			e->value, e->handle, e->observed, e->gpu_ts,
			est_time(e), e->est_start ? ",\"start\":\"unknown\"" :
			"");
		c->st.slices++;
		if (e->match >= 0) {
			/*
			 * Inside the wait, and not before its signal (which
			 * is no later than the wait's end).
			 */
			int64_t s = c->evs[e->match].t_end;

			ev_start(o, "f", "release", "nfence.flow", apid, tid);
			fprintf(o->f, ",\"id\":%lu,\"bp\":\"e\",\"ts\":%.3f}",
				e->flow_id,
				ns_us(s > e->t_start ? s : e->t_start));
		}
		if (e->queued >= 0) {
			/* At the release: when the wait was unblocked. */
			ev_start(o, "f", "queued", "nfence.queued", apid, tid);
			fprintf(o->f, ",\"id\":%lu,\"bp\":\"e\",\"ts\":%.3f}",
				e->queued_flow, end);
		}
		break;
	case EV_QUEUED:
		/*
		 * A zero-length slice on the task's track, for the flow to
		 * the command's log entry to start from.
		 */
		snprintf(name, sizeof(name), "fence %s queued (handle %#"
			 PRIx32 ")", e->signal_log ? "signal" : "wait",
			 e->user_handle);
		ts = trace_us(e->ts);
		ev_start(o, "X", name, "cpu", task_pid(t), t->tid);
		fprintf(o->f, ",\"ts\":%.3f,\"dur\":0,\"args\":{\"handle\":%"
			PRIu32 ",\"kernel_handle\":%" PRIu32 ",\"value\":%"
			PRIu64 ",\"va\":%" PRIu64 ",\"logged\":%s}}", ts,
			e->user_handle, e->handle, e->value, e->va,
			e->queued >= 0 ? "true" : "false");
		c->st.slices++;
		if (e->queued >= 0) {
			ev_start(o, "s", "queued", "nfence.queued",
				 task_pid(t), t->tid);
			fprintf(o->f, ",\"id\":%lu,\"ts\":%.3f}",
				c->evs[e->queued].queued_flow, ts);
		}
		break;
	case EV_SIGNAL:
		snprintf(name, sizeof(name), "%s signal fence %" PRIu32,
			 e->gpu ? "GPU" : "CPU", e->fence);
		if (e->gpu)
			ev_start(o, "i", name, "gpu", apid, TID_SIGNALS);
		else
			ev_start(o, "i", name, "cpu", task_pid(t), t->tid);
		fprintf(o->f, ",\"s\":\"t\",\"ts\":%.3f,\"args\":{\"adapter\":%"
			PRIu32 ",\"value\":%" PRIu64 "}}", trace_us(e->ts),
			e->adapter, e->value);
		c->st.instants++;
		break;
	case EV_INTERRUPT:
		snprintf(name, sizeof(name), "interrupt (%s)", e->payload);
		ev_start(o, "i", name, "gpu", apid, TID_INTERRUPTS);
		fprintf(o->f, ",\"s\":\"t\",\"ts\":%.3f,\"args\":{\"fences\":%"
			PRIu32 ",\"woken\":%" PRIu32 "}}", trace_us(e->ts),
			e->fences, e->woken);
		c->st.instants++;
		break;
	case EV_DOORBELL:
		ev_start(o, "i", "doorbell ring", "gpu", apid,
			 queue_tid(c, e->adapter, e->queue));
		fprintf(o->f, ",\"s\":\"t\",\"ts\":%.3f,\"args\":"
			"{\"write_index\":%" PRIu64 "}}", trace_us(e->ts),
			e->write_index);
		c->st.instants++;
		break;
	case EV_WAIT_BEGIN:
		snprintf(name, sizeof(name), "%s fence %" PRIu32 "%s",
			 e->async ? "async wait" : "CPU wait", e->fence,
			 e->count > 1 ? " (and more)" : "");
		ts = trace_us(e->ts);
		end = e->pair >= 0 ? trace_us(c->evs[e->pair].ts) :
		      trace_us(c->last_ts);
		if (end < ts)
			end = ts;
		if (e->async) {
			/* Async waits may overlap: async slices. */
			ev_start(o, "b", name, "nfence.async_wait",
				 task_pid(t), t->tid);
			fprintf(o->f, ",\"id\":%zu,\"ts\":%.3f,\"args\":"
				"{\"adapter\":%" PRIu32 ",\"value\":%" PRIu64
				",\"count\":%" PRIu32 "}}", i, ts, e->adapter,
				e->value, e->count);
			ev_start(o, "e", name, "nfence.async_wait",
				 task_pid(t), t->tid);
			fprintf(o->f, ",\"id\":%zu,\"ts\":%.3f,\"args\":"
				"{\"result\":", i, end);
			if (e->pair >= 0)
				fprintf(o->f, "%d}}", c->evs[e->pair].result);
			else
				fputs("\"unfinished\"}}", o->f);
			c->st.async_waits++;
			break;
		}
		ev_start(o, "X", name, "cpu", task_pid(t), t->tid);
		fprintf(o->f, ",\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"adapter\":%"
			PRIu32 ",\"value\":%" PRIu64 ",\"count\":%" PRIu32
			",\"result\":", ts, end - ts, e->adapter, e->value,
			e->count);
		if (e->pair >= 0)
			fprintf(o->f, "%d}}", c->evs[e->pair].result);
		else
			fputs("\"unfinished\"}}", o->f);
		c->st.slices++;
		break;
	case EV_WAIT_END:
		break;	/* written with its begin */
	}
}

static int write_json(struct conv *c, FILE *f)
{
	struct out o = { .f = f, .first = true };
	unsigned int i;
	size_t k;

	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":"
	      "\"nfence-trace\",\"capture\":", f);
	json_str(f, c->name);
	fputs(",\"adapters\":[", f);
	for (i = 0, k = 0; i < c->nadapters; i++) {
		const struct adapter *a = &c->adapters[i];

		if (!a->used)
			continue;
		fprintf(f, "%s{\"index\":%" PRIu32 ",\"timestamp_frequency\":%"
			PRIu64 ",\"timestamp_base_ns\":", k++ ? "," : "",
			a->index, a->frequency);
		if (a->has_base)
			fprintf(f, "%" PRId64 "}", a->base);
		else
			fputs("null}", f);
	}
	fputs("]},\n\"traceEvents\":[\n", f);
	mark_tracks(c);
	write_metadata(c, &o);
	for (k = 0; k < c->nevs; k++)
		write_event(c, &o, k);
	fputs("\n]}\n", f);
	return ferror(f) ? -1 : 0;
}

static void conv_free(struct conv *c)
{
	free(c->evs);
	free(c->tasks);
	free(c->queues);
}

/*
 * The events read into @c, converted into @json: free @c's arrays whatever
 * happens. 0, or -1 after saying why.
 */
static int convert_events(struct conv *c, FILE *json,
			  const struct ntrace_opts *opts,
			  struct ntrace_stats *stats)
{
	int ret = -1;

	c->line = 0;
	if (!c->nevs) {
		err(c, "no nfence event in %lu %s", c->st.lines,
		    c->raw ? "events" : "lines");
		goto out;
	}
	if (c->lost)
		fprintf(stderr, "nfence-trace: %s: warning: the trace lost "
			"events %lu times (a bigger buffer_size_kb helps)\n",
			c->name, c->lost);
	if (infer_bases(c, opts) < 0)
		goto out;
	place_events(c);
	if (match_flows(c) < 0 || match_queued(c) < 0)
		goto out;
	pair_waits(c);
	c->st.events = c->nevs;
	if (write_json(c, json) < 0) {
		err(c, "writing the JSON failed: %s", strerror(errno));
		goto out;
	}
	if (stats)
		*stats = c->st;
	ret = 0;
out:
	conv_free(c);
	return ret;
}

int ntrace_convert(FILE *capture, const char *name, FILE *json,
		   const struct ntrace_opts *opts, struct ntrace_stats *stats)
{
	struct conv c = { .name = name };
	size_t cap = 0;
	char *line = NULL;
	ssize_t len;

	while ((len = getline(&line, &cap, capture)) >= 0) {
		c.line++;
		c.st.lines++;
		if ((size_t)len != strlen(line)) {
			err(&c, "a NUL byte: not a text capture");
			goto fail;
		}
		if (len > MAX_LINE) {
			err(&c, "a line of %zd bytes: not a trace capture",
			    len);
			goto fail;
		}
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (parse_line(&c, line) < 0)
			goto fail;
	}
	if (ferror(capture)) {
		c.line = 0;
		err(&c, "read error: %s", strerror(errno));
		goto fail;
	}
	free(line);
	return convert_events(&c, json, opts, stats);
fail:
	free(line);
	conv_free(&c);
	return -1;
}

int ntrace_convert_dat(const char *path, FILE *json,
		       const struct ntrace_opts *opts,
		       struct ntrace_stats *stats)
{
	struct conv c = { .name = path, .raw = true };

	if (dat_read(path, &c) < 0) {
		conv_free(&c);
		return -1;
	}
	return convert_events(&c, json, opts, stats);
}

bool ntrace_is_dat(FILE *f)
{
	static const char magic[] = "\027\010\104tracing";
	char head[sizeof(magic) - 1];
	struct stat st;
	size_t n;

	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	n = fread(head, 1, sizeof(head), f);
	if (fseek(f, 0, SEEK_SET) < 0)
		return false;	/* a regular file seeks */
	clearerr(f);
	return n == sizeof(head) && !memcmp(head, magic, sizeof(head));
}

int ntrace_record_convert(struct ntrace_rec *r, const char *capture_path,
			  const char *json_path, const char *prog,
			  struct ntrace_stats *stats)
{
	struct conv c = { .name = "(recorded)", .raw = true };
	FILE *f;
	int ret = 0;

	record_finish(r);
	if (capture_path) {
		f = fopen(capture_path, "we");
		if (!f) {
			fprintf(stderr, "%s: %s: %s\n", prog, capture_path,
				strerror(errno));
			ret = -1;
			goto out;
		}
		ret = save_capture(r, f, prog);
		if (fclose(f) != 0 && !ret) {
			fprintf(stderr, "%s: %s: %s\n", prog, capture_path,
				strerror(errno));
			ret = -1;
		}
	}
	if (ret < 0 || !json_path)
		goto out;
	ret = -1;
	if (raw_read(r, &c) < 0) {
		conv_free(&c);
		goto out;
	}
	f = fopen(json_path, "we");
	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", prog, json_path,
			strerror(errno));
		conv_free(&c);
		goto out;
	}
	ret = convert_events(&c, f, NULL, stats);
	if (fclose(f) != 0 && !ret) {
		fprintf(stderr, "%s: %s: %s\n", prog, json_path,
			strerror(errno));
		ret = -1;
	}
	if (ret < 0)
		unlink(json_path);	/* no half-written JSON */
out:
	remove_instance(r);
	return ret;
}
