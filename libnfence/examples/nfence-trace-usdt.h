/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * nfence-trace's reader of libnfence's USDT probes: where the probes of
 * provider "libnfence" are in a library file, and the uprobe_events
 * definitions (tracefs) that record them as trace events of the group
 * NTRACE_USDT_GROUP. See Documentation/tracing.rst.
 */
#ifndef NFENCE_TRACE_USDT_H
#define NFENCE_TRACE_USDT_H

#include <stddef.h>
#include <stdint.h>

#define NTRACE_USDT_GROUP	"nfence_umd"
#define NTRACE_USDT_MAX		8	/* probes of libnfence read */

/* One probe, as a uprobe definition. */
struct ntrace_usdt {
	char event[64];		/* "nfence_fence_wait_queued" ... */
	uint64_t offset;	/* file offset of the probe's NOP */
	char fetch[256];	/* " handle=%r12:u32 kernel_handle=..." */
};

/*
 * ntrace_usdt_read() - the libnfence probes fence_wait_queued and
 * fence_signal_queued of the ELF file @path, each with its arguments
 * translated to uprobe fetch arguments named handle, kernel_handle, value
 * and va. Return: the number found (0: none, e.g. a library built with
 * NFENCE_NO_PROBES), or -1 with the reason in @why.
 */
int ntrace_usdt_read(const char *path, struct ntrace_usdt *out,
		     unsigned int max, char *why, size_t why_len);

/*
 * ntrace_usdt_arg() - one <sys/sdt.h> argument ("-4@%esi", "8@-16(%rbp)",
 * "4@$5") as a uprobe fetch argument ("%si:s32", "-16(%bp):u64", "\5:u32")
 * in @out. Return: 0, or -1 if it is not one this reader knows.
 */
int ntrace_usdt_arg(const char *sdt, char *out, size_t len);

/*
 * ntrace_usdt_library() - the file of the libnfence this process runs
 * (the probes a program linked against the same file fires), in @path.
 * Return: 0, or -1.
 */
int ntrace_usdt_library(char *path, size_t len);

#endif /* NFENCE_TRACE_USDT_H */
