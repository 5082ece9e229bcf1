// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/align.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <asm/byteorder.h>

#include <drm/nfence_drm.h>

#include "nfence_cs.h"

/**
 * DOC: command stream decoding
 *
 * The same decoder checks a kernel-mode submission when it is submitted and
 * decodes every command when the CMP runs it, because the CPU may rewrite
 * the buffer in between. Decoding is pure: it needs no adapter and takes no
 * lock, so KUnit tests it directly. Whether a VA is mapped is not its
 * business; the engine finds that out when it translates the address.
 */

/**
 * nfence_cs_cmd_bytes - length of the command a header starts
 * @header: the command's first 32-bit word
 *
 * Return: the command's length in bytes, or 0 if the opcode is unknown,
 * a reserved flag is set or the length is not the opcode's.
 */
u32 nfence_cs_cmd_bytes(u32 header)
{
	static const u8 words[] = {
		[DRM_NFENCE_CS_NOP] = DRM_NFENCE_CS_NOP_WORDS,
		[DRM_NFENCE_CS_FENCE_WAIT] = DRM_NFENCE_CS_FENCE_WAIT_WORDS,
		[DRM_NFENCE_CS_FENCE_SIGNAL] = DRM_NFENCE_CS_FENCE_SIGNAL_WORDS,
		[DRM_NFENCE_CS_WRITE64] = DRM_NFENCE_CS_WRITE64_WORDS,
		[DRM_NFENCE_CS_TIMESTAMP] = DRM_NFENCE_CS_TIMESTAMP_WORDS,
		[DRM_NFENCE_CS_WORK] = DRM_NFENCE_CS_WORK_WORDS,
	};
	u32 opcode = DRM_NFENCE_CS_OPCODE(header);
	u32 flags = DRM_NFENCE_CS_FLAGS(header), n;

	if (opcode >= ARRAY_SIZE(words))
		return 0;
	n = words[opcode];
	if (flags == DRM_NFENCE_CS_FLAG_LOG &&
	    (opcode == DRM_NFENCE_CS_FENCE_WAIT ||
	     opcode == DRM_NFENCE_CS_FENCE_SIGNAL))
		n += DRM_NFENCE_CS_LOG_WORDS;
	else if (flags)
		return 0;
	if (DRM_NFENCE_CS_WORDS(header) != n)
		return 0;
	return n * sizeof(u32);
}

/* Commands come from byte buffers of any alignment. */
static u32 nfence_cs_u32(const u8 *p)
{
	__le32 v;

	memcpy(&v, p, sizeof(v));
	return le32_to_cpu(v);
}

static u64 nfence_cs_u64(const u8 *p, u32 index)
{
	__le64 v;

	memcpy(&v, p + 8 + 8 * index, sizeof(v));
	return le64_to_cpu(v);
}

/* Take a log payload into @cmd; false unless it names operation @op. */
static bool nfence_cs_log(struct nfence_cs_cmd *cmd, u64 payload, u32 op)
{
	cmd->log_handle = lower_32_bits(payload);
	cmd->log_op = upper_32_bits(payload);
	return cmd->log_op == op;
}

/**
 * nfence_cs_decode - decode the command at the start of a buffer
 * @buf: the commands
 * @len: bytes available at @buf
 * @cmd: out: the command; also filled in when an operand is misaligned,
 *	so that the caller can tell which one
 * @reason: out on error: &enum drm_nfence_fault_reason
 *
 * Return: bytes the command takes (> 0), or -EINVAL for an invalid or
 * truncated command or a misaligned VA operand.
 */
int nfence_cs_decode(const void *buf, size_t len, struct nfence_cs_cmd *cmd,
		     u32 *reason)
{
	const u8 *p = buf;
	u32 header, bytes;

	*reason = DRM_NFENCE_FAULT_BAD_COMMAND;
	if (len < 8)
		return -EINVAL;
	header = nfence_cs_u32(p);
	bytes = nfence_cs_cmd_bytes(header);
	if (!bytes || bytes > len || nfence_cs_u32(p + 4))
		return -EINVAL;

	memset(cmd, 0, sizeof(*cmd));
	cmd->opcode = DRM_NFENCE_CS_OPCODE(header);
	cmd->bytes = bytes;
	cmd->log = DRM_NFENCE_CS_FLAGS(header) & DRM_NFENCE_CS_FLAG_LOG;
	switch (cmd->opcode) {
	case DRM_NFENCE_CS_FENCE_WAIT:
	case DRM_NFENCE_CS_WRITE64:
		cmd->va = nfence_cs_u64(p, 0);
		cmd->value = nfence_cs_u64(p, 1);
		if (cmd->log && !nfence_cs_log(cmd, nfence_cs_u64(p, 2),
					       DRM_NFENCE_LOG_OP_WAIT_UNBLOCKED))
			return -EINVAL;
		break;
	case DRM_NFENCE_CS_FENCE_SIGNAL:
		cmd->va = nfence_cs_u64(p, 0);
		cmd->va2 = nfence_cs_u64(p, 1);
		cmd->value = nfence_cs_u64(p, 2);
		if (cmd->log && !nfence_cs_log(cmd, nfence_cs_u64(p, 3),
					       DRM_NFENCE_LOG_OP_SIGNAL_EXECUTED))
			return -EINVAL;
		break;
	case DRM_NFENCE_CS_TIMESTAMP:
		cmd->va = nfence_cs_u64(p, 0);
		break;
	case DRM_NFENCE_CS_WORK:
		cmd->value = nfence_cs_u64(p, 0);
		if (cmd->value > DRM_NFENCE_CS_MAX_WORK_NS)
			return -EINVAL;
		break;
	default:
		break;
	}

	if (!IS_ALIGNED(cmd->va, 8) || !IS_ALIGNED(cmd->va2, 8)) {
		*reason = DRM_NFENCE_FAULT_MISALIGNED;
		return -EINVAL;
	}
	*reason = DRM_NFENCE_FAULT_NONE;
	return bytes;
}

/**
 * nfence_cs_validate - check every command of a buffer
 * @buf: the commands
 * @len: bytes at @buf
 * @bad_offset: out on error: offset of the first invalid command
 * @reason: out on error: &enum drm_nfence_fault_reason
 *
 * Return: 0 if the buffer is a whole number of valid commands, -EINVAL
 * otherwise.
 */
int nfence_cs_validate(const void *buf, size_t len, size_t *bad_offset,
		       u32 *reason)
{
	struct nfence_cs_cmd cmd;
	size_t off = 0;
	int ret;

	while (off < len) {
		ret = nfence_cs_decode(buf + off, len - off, &cmd, reason);
		if (ret < 0) {
			*bad_offset = off;
			return ret;
		}
		off += ret;
	}
	return 0;
}
