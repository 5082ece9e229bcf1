/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * The command encoder (NFENCE_CS): the simulated engines' commands, as the
 * uapi's DRM_NFENCE_CS_* macros define them, written little endian into a
 * caller's buffer. Errors are sticky (see d3dkmthk.h).
 */
#include <endian.h>
#include <stdbool.h>
#include <string.h>

#include <nfence/d3dkmthk.h>
#include "drm/nfence_drm.h"
#include "probes.h"
#include "syncobj.h"

/* The longest command, in 32-bit words. */
#define NF_CS_MAX_WORDS \
	(DRM_NFENCE_CS_FENCE_SIGNAL_WORDS + DRM_NFENCE_CS_LOG_WORDS)

static bool nf_cs_aligned(uint64_t va)
{
	return !(va % 8);
}

/*
 * nf_cs_emit_flags() - append the command @opcode with header @flags, of
 * @words 32-bit words with the @nops 64-bit operands @ops, unless the
 * encoder is in error or the command does not fit (which puts it in
 * error).
 */
static NTSTATUS nf_cs_emit_flags(NFENCE_CS *cs, uint32_t opcode,
				 uint32_t flags, uint32_t words,
				 const uint64_t *ops, unsigned int nops)
{
	uint32_t buf[NF_CS_MAX_WORDS];
	uint64_t op;
	unsigned int i;

	if (!cs)
		return STATUS_INVALID_PARAMETER;
	if (!NT_SUCCESS(cs->Status))
		return cs->Status;
	if (words * 4u > cs->Capacity - cs->Size) {
		cs->Status = STATUS_BUFFER_TOO_SMALL;
		return cs->Status;
	}

	buf[0] = htole32(DRM_NFENCE_CS_HEADER_FLAGS(opcode, flags, words));
	buf[1] = 0;
	for (i = 0; i < nops; i++) {
		op = htole64(ops[i]);
		memcpy(&buf[2 + 2 * i], &op, sizeof(op));
	}
	memcpy(cs->pBuffer + cs->Size, buf, words * 4u);
	cs->Size += words * 4u;
	return STATUS_SUCCESS;
}

/* nf_cs_emit() - nf_cs_emit_flags() without flags */
static NTSTATUS nf_cs_emit(NFENCE_CS *cs, uint32_t opcode, uint32_t words,
			   const uint64_t *ops, unsigned int nops)
{
	return nf_cs_emit_flags(cs, opcode, 0, words, ops, nops);
}

/* Put @cs in error with @st, unless it already is; returns its status. */
static NTSTATUS nf_cs_fail(NFENCE_CS *cs, NTSTATUS st)
{
	if (!cs)
		return STATUS_INVALID_PARAMETER;
	if (NT_SUCCESS(cs->Status))
		cs->Status = st;
	return cs->Status;
}

NTSTATUS NFenceCsInit(NFENCE_CS *pCs, VOID *pBuffer, UINT BufferSize,
		      D3DGPU_VIRTUAL_ADDRESS GpuVa)
{
	if (!pCs)
		return STATUS_INVALID_PARAMETER;
	memset(pCs, 0, sizeof(*pCs));
	if (!pBuffer || (uintptr_t)pBuffer % 8 || !nf_cs_aligned(GpuVa)) {
		/* No buffer: NFenceCsReset() cannot clear this. */
		pCs->Status = STATUS_INVALID_PARAMETER;
		return pCs->Status;
	}
	pCs->pBuffer = pBuffer;
	pCs->GpuVa = GpuVa;
	pCs->Capacity = BufferSize & ~7u;
	pCs->Status = STATUS_SUCCESS;
	return STATUS_SUCCESS;
}

VOID NFenceCsReset(NFENCE_CS *pCs)
{
	if (!pCs)
		return;
	pCs->Size = 0;
	/* A failed NFenceCsInit() left no buffer to write to. */
	if (pCs->pBuffer)
		pCs->Status = STATUS_SUCCESS;
}

NTSTATUS NFenceCsNop(NFENCE_CS *pCs)
{
	return nf_cs_emit(pCs, DRM_NFENCE_CS_NOP, DRM_NFENCE_CS_NOP_WORDS,
			  NULL, 0);
}

NTSTATUS NFenceCsFenceWaitUnlogged(NFENCE_CS *pCs,
				   D3DGPU_VIRTUAL_ADDRESS GpuVa, UINT64 Value)
{
	const uint64_t ops[] = { GpuVa, Value };

	if (!nf_cs_aligned(GpuVa))
		return nf_cs_fail(pCs, STATUS_INVALID_PARAMETER);
	return nf_cs_emit(pCs, DRM_NFENCE_CS_FENCE_WAIT,
			  DRM_NFENCE_CS_FENCE_WAIT_WORDS, ops, 2);
}

NTSTATUS NFenceCsFenceSignalUnlogged(NFENCE_CS *pCs,
				     D3DGPU_VIRTUAL_ADDRESS CurrentValueGpuVa,
				     D3DGPU_VIRTUAL_ADDRESS MonitoredValueGpuVa,
				     UINT64 Value)
{
	const uint64_t ops[] = {
		CurrentValueGpuVa, MonitoredValueGpuVa, Value,
	};

	if (!nf_cs_aligned(CurrentValueGpuVa) ||
	    !nf_cs_aligned(MonitoredValueGpuVa))
		return nf_cs_fail(pCs, STATUS_INVALID_PARAMETER);
	return nf_cs_emit(pCs, DRM_NFENCE_CS_FENCE_SIGNAL,
			  DRM_NFENCE_CS_FENCE_SIGNAL_WORDS, ops, 3);
}

NTSTATUS NFenceCsWaitNativeFenceUnlogged(NFENCE_CS *pCs,
					 const D3DDDI_NATIVEFENCEMAPPING *pMapping,
					 UINT64 Value)
{
	if (!pMapping)
		return nf_cs_fail(pCs, STATUS_INVALID_PARAMETER);
	return NFenceCsFenceWaitUnlogged(pCs, pMapping->CurrentValueGpuVa,
					 Value);
}

NTSTATUS NFenceCsSignalNativeFenceUnlogged(NFENCE_CS *pCs,
					   const D3DDDI_NATIVEFENCEMAPPING *pMapping,
					   UINT64 Value)
{
	if (!pMapping)
		return nf_cs_fail(pCs, STATUS_INVALID_PARAMETER);
	return NFenceCsFenceSignalUnlogged(pCs, pMapping->CurrentValueGpuVa,
					   pMapping->MonitoredValueGpuVa, Value);
}

NTSTATUS NFenceCsFenceWait(NFENCE_CS *pCs, D3DGPU_VIRTUAL_ADDRESS GpuVa,
			   UINT64 Value, D3DKMT_HANDLE hNativeFence)
{
	uint32_t kernel_handle = nf_syncobj_kernel_handle(hNativeFence);
	const uint64_t ops[] = {
		GpuVa, Value,
		(uint64_t)DRM_NFENCE_LOG_OP_WAIT_UNBLOCKED << 32 | kernel_handle,
	};
	NTSTATUS st;

	if (!nf_cs_aligned(GpuVa))
		return nf_cs_fail(pCs, STATUS_INVALID_PARAMETER);
	st = nf_cs_emit_flags(pCs, DRM_NFENCE_CS_FENCE_WAIT,
			      DRM_NFENCE_CS_FLAG_LOG,
			      DRM_NFENCE_CS_FENCE_WAIT_WORDS +
			      DRM_NFENCE_CS_LOG_WORDS, ops, 3);
	if (NT_SUCCESS(st))
		nf_probe_fence_queued(fence_wait_queued, hNativeFence,
				      kernel_handle, Value, GpuVa);
	return st;
}

NTSTATUS NFenceCsFenceSignal(NFENCE_CS *pCs,
			     D3DGPU_VIRTUAL_ADDRESS CurrentValueGpuVa,
			     D3DGPU_VIRTUAL_ADDRESS MonitoredValueGpuVa,
			     UINT64 Value, D3DKMT_HANDLE hNativeFence)
{
	uint32_t kernel_handle = nf_syncobj_kernel_handle(hNativeFence);
	const uint64_t ops[] = {
		CurrentValueGpuVa, MonitoredValueGpuVa, Value,
		(uint64_t)DRM_NFENCE_LOG_OP_SIGNAL_EXECUTED << 32 |
			kernel_handle,
	};
	NTSTATUS st;

	if (!nf_cs_aligned(CurrentValueGpuVa) ||
	    !nf_cs_aligned(MonitoredValueGpuVa))
		return nf_cs_fail(pCs, STATUS_INVALID_PARAMETER);
	st = nf_cs_emit_flags(pCs, DRM_NFENCE_CS_FENCE_SIGNAL,
			      DRM_NFENCE_CS_FLAG_LOG,
			      DRM_NFENCE_CS_FENCE_SIGNAL_WORDS +
			      DRM_NFENCE_CS_LOG_WORDS, ops, 4);
	if (NT_SUCCESS(st))
		nf_probe_fence_queued(fence_signal_queued, hNativeFence,
				      kernel_handle, Value, CurrentValueGpuVa);
	return st;
}

NTSTATUS NFenceCsWaitNativeFence(NFENCE_CS *pCs,
				 const D3DDDI_NATIVEFENCEMAPPING *pMapping,
				 UINT64 Value, D3DKMT_HANDLE hNativeFence)
{
	if (!pMapping)
		return nf_cs_fail(pCs, STATUS_INVALID_PARAMETER);
	return NFenceCsFenceWait(pCs, pMapping->CurrentValueGpuVa, Value,
				 hNativeFence);
}

NTSTATUS NFenceCsSignalNativeFence(NFENCE_CS *pCs,
				   const D3DDDI_NATIVEFENCEMAPPING *pMapping,
				   UINT64 Value, D3DKMT_HANDLE hNativeFence)
{
	if (!pMapping)
		return nf_cs_fail(pCs, STATUS_INVALID_PARAMETER);
	return NFenceCsFenceSignal(pCs, pMapping->CurrentValueGpuVa,
				   pMapping->MonitoredValueGpuVa, Value,
				   hNativeFence);
}

/* The 0.4 names of the logged forms. */
NTSTATUS NFenceCsFenceWaitLogged(NFENCE_CS *pCs, D3DGPU_VIRTUAL_ADDRESS GpuVa,
				 UINT64 Value, D3DKMT_HANDLE hNativeFence)
{
	return NFenceCsFenceWait(pCs, GpuVa, Value, hNativeFence);
}

NTSTATUS NFenceCsFenceSignalLogged(NFENCE_CS *pCs,
				   D3DGPU_VIRTUAL_ADDRESS CurrentValueGpuVa,
				   D3DGPU_VIRTUAL_ADDRESS MonitoredValueGpuVa,
				   UINT64 Value, D3DKMT_HANDLE hNativeFence)
{
	return NFenceCsFenceSignal(pCs, CurrentValueGpuVa, MonitoredValueGpuVa,
				   Value, hNativeFence);
}

NTSTATUS NFenceCsWaitNativeFenceLogged(NFENCE_CS *pCs,
				       const D3DDDI_NATIVEFENCEMAPPING *pMapping,
				       UINT64 Value, D3DKMT_HANDLE hNativeFence)
{
	return NFenceCsWaitNativeFence(pCs, pMapping, Value, hNativeFence);
}

NTSTATUS NFenceCsSignalNativeFenceLogged(NFENCE_CS *pCs,
					 const D3DDDI_NATIVEFENCEMAPPING *pMapping,
					 UINT64 Value, D3DKMT_HANDLE hNativeFence)
{
	return NFenceCsSignalNativeFence(pCs, pMapping, Value, hNativeFence);
}

/*
 * The LIBNFENCE_0.2 versions of NFenceCsFenceWait, NFenceCsFenceSignal,
 * NFenceCsWaitNativeFence and NFenceCsSignalNativeFence: the unlogged
 * commands, with the arguments programs built before 0.10 pass. A static
 * link gets the current ones.
 */
#define NF_CS_COMPAT(name, ver) \
	__attribute__((used, visibility("default"), symver(#name "@" ver)))

NF_CS_COMPAT(NFenceCsFenceWait, "LIBNFENCE_0.2")
NTSTATUS nf_cs_fence_wait_0_2(NFENCE_CS *pCs, D3DGPU_VIRTUAL_ADDRESS GpuVa,
			      UINT64 Value);
NTSTATUS nf_cs_fence_wait_0_2(NFENCE_CS *pCs, D3DGPU_VIRTUAL_ADDRESS GpuVa,
			      UINT64 Value)
{
	return NFenceCsFenceWaitUnlogged(pCs, GpuVa, Value);
}

NF_CS_COMPAT(NFenceCsFenceSignal, "LIBNFENCE_0.2")
NTSTATUS nf_cs_fence_signal_0_2(NFENCE_CS *pCs, D3DGPU_VIRTUAL_ADDRESS cv,
				D3DGPU_VIRTUAL_ADDRESS mv, UINT64 Value);
NTSTATUS nf_cs_fence_signal_0_2(NFENCE_CS *pCs, D3DGPU_VIRTUAL_ADDRESS cv,
				D3DGPU_VIRTUAL_ADDRESS mv, UINT64 Value)
{
	return NFenceCsFenceSignalUnlogged(pCs, cv, mv, Value);
}

NF_CS_COMPAT(NFenceCsWaitNativeFence, "LIBNFENCE_0.2")
NTSTATUS nf_cs_wait_native_fence_0_2(NFENCE_CS *pCs,
				     const D3DDDI_NATIVEFENCEMAPPING *pMapping,
				     UINT64 Value);
NTSTATUS nf_cs_wait_native_fence_0_2(NFENCE_CS *pCs,
				     const D3DDDI_NATIVEFENCEMAPPING *pMapping,
				     UINT64 Value)
{
	return NFenceCsWaitNativeFenceUnlogged(pCs, pMapping, Value);
}

NF_CS_COMPAT(NFenceCsSignalNativeFence, "LIBNFENCE_0.2")
NTSTATUS nf_cs_signal_native_fence_0_2(NFENCE_CS *pCs,
				       const D3DDDI_NATIVEFENCEMAPPING *pMapping,
				       UINT64 Value);
NTSTATUS nf_cs_signal_native_fence_0_2(NFENCE_CS *pCs,
				       const D3DDDI_NATIVEFENCEMAPPING *pMapping,
				       UINT64 Value)
{
	return NFenceCsSignalNativeFenceUnlogged(pCs, pMapping, Value);
}

NTSTATUS NFenceCsWrite64(NFENCE_CS *pCs, D3DGPU_VIRTUAL_ADDRESS GpuVa,
			 UINT64 Value)
{
	const uint64_t ops[] = { GpuVa, Value };

	if (!nf_cs_aligned(GpuVa))
		return nf_cs_fail(pCs, STATUS_INVALID_PARAMETER);
	return nf_cs_emit(pCs, DRM_NFENCE_CS_WRITE64,
			  DRM_NFENCE_CS_WRITE64_WORDS, ops, 2);
}

NTSTATUS NFenceCsTimestamp(NFENCE_CS *pCs, D3DGPU_VIRTUAL_ADDRESS GpuVa)
{
	const uint64_t ops[] = { GpuVa };

	if (!nf_cs_aligned(GpuVa))
		return nf_cs_fail(pCs, STATUS_INVALID_PARAMETER);
	return nf_cs_emit(pCs, DRM_NFENCE_CS_TIMESTAMP,
			  DRM_NFENCE_CS_TIMESTAMP_WORDS, ops, 1);
}

NTSTATUS NFenceCsWork(NFENCE_CS *pCs, UINT64 DurationNs)
{
	const uint64_t ops[] = { DurationNs };

	if (DurationNs > DRM_NFENCE_CS_MAX_WORK_NS)
		return nf_cs_fail(pCs, STATUS_INVALID_PARAMETER);
	return nf_cs_emit(pCs, DRM_NFENCE_CS_WORK, DRM_NFENCE_CS_WORK_WORDS,
			  ops, 1);
}

UINT NFenceCsSize(const NFENCE_CS *pCs)
{
	return pCs ? pCs->Size : 0;
}

D3DGPU_VIRTUAL_ADDRESS NFenceCsGpuVa(const NFENCE_CS *pCs)
{
	return pCs ? pCs->GpuVa : 0;
}

NTSTATUS NFenceCsStatus(const NFENCE_CS *pCs)
{
	return pCs ? pCs->Status : STATUS_INVALID_PARAMETER;
}
