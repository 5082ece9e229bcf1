/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * libnfence's USDT probes (provider "libnfence"), the runtime's side of the
 * seed's native fence timeline (section 15.2, "CPU Timestamps of fence
 * queued operations"): a logged encoder fires fence_wait_queued or
 * fence_signal_queued when it has written its command, with
 *
 *	arg1: the D3DKMT handle the caller named (u32)
 *	arg2: the kernel's handle the log payload carries, which the GPU's
 *	      log entry and the nfence_log_entry trace event show (u32)
 *	arg3: the fence value (u64)
 *	arg4: the GPU VA the command waits on or signals (u64)
 *
 * A probe is a NOP in the code and a note (.note.stapsdt) in the ELF file
 * until a tool (nfence-trace, perf, bpftrace, SystemTap) puts a uprobe on
 * it. Building without <sys/sdt.h> (Debian's systemtap-sdt-dev) takes
 * NFENCE_NO_PROBES=1 (make lib NFENCE_NO_PROBES=1): the probes are then
 * gone and nfence-trace draws no "queued" events.
 */
#ifndef _NFENCE_PROBES_H_
#define _NFENCE_PROBES_H_

#ifdef NFENCE_NO_PROBES
#define nf_probe_fence_queued(name, handle, kernel_handle, value, va) \
	do { } while (0)
#else
#include <sys/sdt.h>

#define nf_probe_fence_queued(name, handle, kernel_handle, value, va)	\
	DTRACE_PROBE4(libnfence, name, (uint32_t)(handle),		\
		      (uint32_t)(kernel_handle), (uint64_t)(value),	\
		      (uint64_t)(va))
#endif

#endif /* _NFENCE_PROBES_H_ */
