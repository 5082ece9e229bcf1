/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_CS_H__
#define __NFENCE_CS_H__

#include <linux/types.h>

#include <drm/nfence_drm.h>

/* Longest command, in bytes (FENCE_SIGNAL). */
#define NFENCE_CS_MAX_CMD_BYTES	\
	((DRM_NFENCE_CS_FENCE_SIGNAL_WORDS + DRM_NFENCE_CS_LOG_WORDS) * 4)

/**
 * struct nfence_cs_cmd - one decoded command
 *
 * Operands by opcode: FENCE_WAIT @va, @value; FENCE_SIGNAL @va (CurrentValue),
 * @va2 (MonitoredValue, 0 for none), @value; WRITE64 @va, @value; TIMESTAMP
 * @va; WORK @value (nanoseconds). Unused operands are 0.
 */
struct nfence_cs_cmd {
	/** @opcode: &enum drm_nfence_cs_opcode */
	u32 opcode;
	/** @bytes: length of the command in bytes */
	u32 bytes;
	/** @va: first GPU VA operand */
	u64 va;
	/** @va2: second GPU VA operand */
	u64 va2;
	/** @value: value or duration operand */
	u64 value;
	/** @log: FENCE_WAIT/FENCE_SIGNAL with a log payload */
	bool log;
	/** @log_handle: the payload's hNativeFence */
	u32 log_handle;
	/** @log_op: the payload's DRM_NFENCE_LOG_OP_* */
	u32 log_op;
};

u32 nfence_cs_cmd_bytes(u32 header);
int nfence_cs_decode(const void *buf, size_t len, struct nfence_cs_cmd *cmd,
		     u32 *reason);
int nfence_cs_validate(const void *buf, size_t len, size_t *bad_offset,
		       u32 *reason);

#endif /* __NFENCE_CS_H__ */
