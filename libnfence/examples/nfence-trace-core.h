/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * The part of nfence-trace that nfence-pipeline-demo --trace shares:
 * recording nfence's trace events in a tracefs instance of its own
 * (through libtracefs), and
 * converting a capture (the instance's "trace" text) into Chrome/Perfetto
 * trace-event JSON. See Documentation/tracing.rst.
 */
#ifndef NFENCE_TRACE_CORE_H
#define NFENCE_TRACE_CORE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define NTRACE_MAX_ADAPTERS	64	/* the driver has at most 8 */

/* An adapter being recorded. */
struct ntrace_adapter {
	unsigned int index;		/* the trace events' adapter= */
	uint64_t frequency;		/* GPU timestamp ticks per second */
	int leveled;			/* its logging level was set to ALL */
	unsigned int previous;		/* ... and was this before */
};

struct tracefs_instance;
struct tracefs_dynevent;

/* A recording: the tracefs instance and what it learned of the adapters. */
struct ntrace_rec {
	struct tracefs_instance *inst;	/* ours (libtracefs), or NULL */
	char umd_lib[PATH_MAX];		/* libnfence file whose probes we trace */
	unsigned int num_probes;	/* its uprobes we defined */
	struct tracefs_dynevent *probes[8];
	unsigned int num_adapters;
	struct ntrace_adapter adapters[NTRACE_MAX_ADAPTERS];
};

/* What a conversion produced. */
struct ntrace_stats {
	unsigned long lines;		/* lines read */
	unsigned long events;		/* nfence events used */
	unsigned long ignored;		/* other lines and events skipped */
	unsigned int adapters;		/* adapter processes */
	unsigned int tracks;		/* thread tracks */
	unsigned long slices;		/* "X" events */
	unsigned long instants;		/* "i" events */
	unsigned long async_waits;	/* "b"/"e" pairs */
	unsigned long flows;		/* "s"/"f" pairs */
	unsigned long unreleased;	/* GPU waits with no logged signal */
	unsigned long queued;		/* libnfence's "queued" probe events */
	unsigned long queued_flows;	/* ... with a flow to their log entry */
};

/* Conversion options. */
struct ntrace_opts {
	uint64_t frequency;	/* ticks/s for adapters the capture does not
				 * name; 0: none (an error if needed) */
};

/*
 * ntrace_record_start() - create the tracefs instance and start recording
 * @r: the recording, filled in
 * @umd_lib: the libnfence file whose USDT probes (the runtime's "fence
 *	wait/signal queued" events) to record; NULL: the one this process
 *	runs
 * @prog: name for messages
 *
 * Needs root. The probes are recorded through uprobes (dynamic events,
 * group nfence_umd) removed at the end; a library without probes or a
 * kernel without uprobe events only costs those events (a warning).
 * Return: 0, or -1 after printing why (nothing left behind).
 */
int ntrace_record_start(struct ntrace_rec *r, const char *umd_lib,
			const char *prog);

/*
 * ntrace_convert() - convert a capture into trace-event JSON
 * @capture: the capture, read from its current position to the end
 * @name: its name, for messages
 * @json: where the JSON goes
 * @opts: options, or NULL
 * @stats: filled in on success, may be NULL
 *
 * Return: 0, or -1 after printing "name:line: why" on stderr (malformed
 * input, no nfence event, an adapter without timestamp frequency, an I/O
 * error or no memory).
 */
int ntrace_convert(FILE *capture, const char *name, FILE *json,
		   const struct ntrace_opts *opts, struct ntrace_stats *stats);

/*
 * ntrace_is_dat() - whether @f is a regular file that starts as trace-cmd's
 * data files (trace.dat) do; @f is back at its start. Anything else (a
 * pipe included) is read as a text capture, and is not touched.
 */
bool ntrace_is_dat(FILE *f);

/*
 * ntrace_convert_dat() - ntrace_convert() of a trace-cmd data file
 * @path: the file (trace-cmd record's trace.dat)
 * @json: where the JSON goes
 * @opts: options, or NULL: --frequency gives every adapter's, since such a
 *	file names none
 * @stats: filled in on success, may be NULL
 *
 * The events are read with libtracecmd and decoded with libtraceevent from
 * the formats the file keeps. Return: 0, or -1 after printing why.
 */
int ntrace_convert_dat(const char *path, FILE *json,
		       const struct ntrace_opts *opts,
		       struct ntrace_stats *stats);

/* ntrace_record_cancel() - stop recording, drop it, remove the instance */
void ntrace_record_cancel(struct ntrace_rec *r);

/*
 * ntrace_record_convert() - stop recording: save the capture into the file
 * @capture_path (if not NULL), convert the recording's binary events
 * (decoded by libtraceevent) into the file @json_path (if not NULL),
 * remove the instance. Return: 0 or -1 after printing why.
 */
int ntrace_record_convert(struct ntrace_rec *r, const char *capture_path,
			  const char *json_path, const char *prog,
			  struct ntrace_stats *stats);

#endif /* NFENCE_TRACE_CORE_H */
