// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the command-stream decoder (nfence_cs.c).
 *
 * Commands are encoded byte by byte in little endian, as the ISA in
 * nfence_drm.h ("DOC: command stream") defines them, so the tests hold on
 * big-endian hosts too and never depend on the buffer's alignment.
 *
 * Copyright (C) 2026 The nfence authors
 */

#include <kunit/test.h>
#include <linux/bits.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/time64.h>
#include <asm/byteorder.h>

#include <drm/nfence_drm.h>

#include "../nfence_cs.h"

/* Distinct 8-byte aligned VAs and values with both 32-bit halves non-zero. */
#define CS_VA		0x00007f0123456788ull
#define CS_VA2		0x0000100000000010ull
#define CS_VALUE	0xfedcba9876543210ull
#define CS_WORK_NS	1234567891ull	/* odd: WORK's operand is no VA */

/* Room for any valid command, at any of 8 misalignments. */
#define CS_BUF_BYTES	(NFENCE_CS_MAX_CMD_BYTES + 8)

/* The header layout of the ISA, written out independently of the uapi. */
static u32 cs_header(u32 opcode, u32 flags, u32 words)
{
	return opcode | flags << 8 | words << 16;
}

static void cs_put32(u8 *p, u32 v)
{
	__le32 le = cpu_to_le32(v);

	memcpy(p, &le, sizeof(le));
}

static void cs_put64(u8 *p, u64 v)
{
	__le64 le = cpu_to_le64(v);

	memcpy(p, &le, sizeof(le));
}

/* Header, second word and 64-bit operands; returns the bytes written. */
static size_t cs_emit(u8 *p, u32 header, u32 word1, const u64 *ops, u32 nops)
{
	u32 i;

	cs_put32(p, header);
	cs_put32(p + 4, word1);
	for (i = 0; i < nops; i++)
		cs_put64(p + 8 + 8 * i, ops[i]);
	return 8 + 8 * nops;
}

/**
 * struct cs_valid - a valid command and what it decodes to
 * @name: parameter description
 * @opcode: the opcode
 * @bytes: the command's length (ISA: words * 4)
 * @nops: number of 64-bit operands after the two header words
 * @ops: the operands in ISA order
 * @va_ops: bit i set if @ops[i] is a GPU VA
 * @va: expected &nfence_cs_cmd.va
 * @va2: expected &nfence_cs_cmd.va2
 * @value: expected &nfence_cs_cmd.value
 */
struct cs_valid {
	const char *name;
	u32 opcode;
	u32 bytes;
	u32 nops;
	u64 ops[3];
	u32 va_ops;
	u64 va, va2, value;
};

static const struct cs_valid cs_valid_cases[] = {
	{
		.name = "NOP", .opcode = DRM_NFENCE_CS_NOP, .bytes = 8,
	}, {
		.name = "FENCE_WAIT", .opcode = DRM_NFENCE_CS_FENCE_WAIT,
		.bytes = 24, .nops = 2, .ops = { CS_VA, CS_VALUE },
		.va_ops = BIT(0), .va = CS_VA, .value = CS_VALUE,
	}, {
		.name = "FENCE_SIGNAL", .opcode = DRM_NFENCE_CS_FENCE_SIGNAL,
		.bytes = 32, .nops = 3, .ops = { CS_VA, CS_VA2, CS_VALUE },
		.va_ops = BIT(0) | BIT(1),
		.va = CS_VA, .va2 = CS_VA2, .value = CS_VALUE,
	}, {
		/* mv_va 0: no MonitoredValue check, accepted. */
		.name = "FENCE_SIGNAL_no_mv_va",
		.opcode = DRM_NFENCE_CS_FENCE_SIGNAL,
		.bytes = 32, .nops = 3, .ops = { CS_VA2, 0, U64_MAX },
		.va_ops = BIT(0), .va = CS_VA2, .value = U64_MAX,
	}, {
		.name = "WRITE64", .opcode = DRM_NFENCE_CS_WRITE64,
		.bytes = 24, .nops = 2, .ops = { CS_VA2, CS_VALUE },
		.va_ops = BIT(0), .va = CS_VA2, .value = CS_VALUE,
	}, {
		.name = "TIMESTAMP", .opcode = DRM_NFENCE_CS_TIMESTAMP,
		.bytes = 16, .nops = 1, .ops = { CS_VA },
		.va_ops = BIT(0), .va = CS_VA,
	}, {
		.name = "WORK", .opcode = DRM_NFENCE_CS_WORK,
		.bytes = 16, .nops = 1, .ops = { CS_WORK_NS },
		.value = CS_WORK_NS,
	},
};

static void cs_valid_desc(const struct cs_valid *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cs_valid, cs_valid_cases, cs_valid_desc);

static u32 cs_valid_header(const struct cs_valid *c)
{
	return cs_header(c->opcode, 0, c->bytes / 4);
}

static size_t cs_emit_valid(u8 *p, const struct cs_valid *c)
{
	return cs_emit(p, cs_valid_header(c), 0, c->ops, c->nops);
}

static void cs_expect_cmd(struct kunit *test, const struct cs_valid *c,
			  const struct nfence_cs_cmd *cmd)
{
	KUNIT_EXPECT_EQ(test, cmd->opcode, c->opcode);
	KUNIT_EXPECT_EQ(test, cmd->bytes, c->bytes);
	KUNIT_EXPECT_EQ(test, cmd->va, c->va);
	KUNIT_EXPECT_EQ(test, cmd->va2, c->va2);
	KUNIT_EXPECT_EQ(test, cmd->value, c->value);
}

/* Decode a command that must be rejected, with @want as the reason. */
static void cs_expect_reject(struct kunit *test, const void *buf, size_t len,
			     u32 want)
{
	struct nfence_cs_cmd cmd;
	u32 reason = DRM_NFENCE_FAULT_NONE;

	KUNIT_EXPECT_EQ(test, nfence_cs_decode(buf, len, &cmd, &reason),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, reason, want);
}

/* Each opcode decodes with its operands and its exact length. */
static void cs_decode_valid(struct kunit *test)
{
	const struct cs_valid *c = test->param_value;
	u8 buf[CS_BUF_BYTES] = {};
	struct nfence_cs_cmd cmd;
	u32 reason;

	KUNIT_ASSERT_EQ(test, cs_emit_valid(buf, c), c->bytes);
	KUNIT_EXPECT_EQ(test, DRM_NFENCE_CS_HEADER(c->opcode, c->bytes / 4),
			cs_valid_header(c));
	KUNIT_EXPECT_EQ(test, nfence_cs_cmd_bytes(cs_valid_header(c)),
			c->bytes);
	KUNIT_EXPECT_LE(test, c->bytes, NFENCE_CS_MAX_CMD_BYTES);

	/* Exactly the command's bytes, then with more behind it. */
	memset(&cmd, 0xa5, sizeof(cmd));
	reason = DRM_NFENCE_FAULT_BAD_COMMAND;
	KUNIT_EXPECT_EQ(test, nfence_cs_decode(buf, c->bytes, &cmd, &reason),
			(int)c->bytes);
	KUNIT_EXPECT_EQ(test, reason, DRM_NFENCE_FAULT_NONE);
	cs_expect_cmd(test, c, &cmd);

	memset(&cmd, 0xa5, sizeof(cmd));
	KUNIT_EXPECT_EQ(test, nfence_cs_decode(buf, sizeof(buf), &cmd, &reason),
			(int)c->bytes);
	cs_expect_cmd(test, c, &cmd);
}

/* A command at buf + 1 .. buf + 7 decodes as it does aligned. */
static void cs_decode_misaligned_buffer(struct kunit *test)
{
	const struct cs_valid *c = test->param_value;
	u8 buf[CS_BUF_BYTES];
	struct nfence_cs_cmd cmd;
	size_t off;
	u32 reason;

	for (off = 1; off < 8; off++) {
		memset(buf, 0, sizeof(buf));
		cs_emit_valid(buf + off, c);
		memset(&cmd, 0xa5, sizeof(cmd));
		KUNIT_EXPECT_EQ_MSG(test,
				    nfence_cs_decode(buf + off, c->bytes, &cmd,
						     &reason),
				    (int)c->bytes, "buf + %zu", off);
		KUNIT_EXPECT_EQ(test, reason, DRM_NFENCE_FAULT_NONE);
		cs_expect_cmd(test, c, &cmd);

		/* A bad command there is still found bad, for its reason. */
		cs_expect_reject(test, buf + off, c->bytes - 1,
				 DRM_NFENCE_FAULT_BAD_COMMAND);
		if (c->va_ops & BIT(0)) {
			cs_put64(buf + off + 8, c->ops[0] | 4);
			cs_expect_reject(test, buf + off, c->bytes,
					 DRM_NFENCE_FAULT_MISALIGNED);
		}
	}
}

/* Every opcode past WORK is unknown, whatever the length word says. */
static void cs_reject_unknown_opcodes(struct kunit *test)
{
	static const u32 words[] = { 0, 2, 4, 6, 8 };
	u8 buf[NFENCE_CS_MAX_CMD_BYTES] = {};
	struct nfence_cs_cmd cmd;
	u32 opcode, header, reason;
	unsigned int i;
	int ret;

	for (opcode = DRM_NFENCE_CS_WORK + 1; opcode <= 0xff; opcode++) {
		for (i = 0; i < ARRAY_SIZE(words); i++) {
			header = cs_header(opcode, 0, words[i]);
			cs_put32(buf, header);
			reason = DRM_NFENCE_FAULT_NONE;
			ret = nfence_cs_decode(buf, sizeof(buf), &cmd, &reason);
			KUNIT_EXPECT_EQ_MSG(test, ret, -EINVAL,
					    "opcode %#x words %u", opcode,
					    words[i]);
			KUNIT_EXPECT_EQ_MSG(test, reason,
					    DRM_NFENCE_FAULT_BAD_COMMAND,
					    "opcode %#x words %u", opcode,
					    words[i]);
			KUNIT_EXPECT_EQ_MSG(test, nfence_cs_cmd_bytes(header), 0,
					    "opcode %#x words %u", opcode,
					    words[i]);
		}
	}
}

/*
 * Every length word but the opcode's own, 0 to 0xffff, is rejected, with the
 * buffer long enough for either length so that only the length word is bad.
 */
static void cs_reject_bad_length(struct kunit *test)
{
	const struct cs_valid *c = test->param_value;
	const size_t size = 0xffff * 4;
	struct nfence_cs_cmd cmd;
	u32 words, header, reason;
	unsigned int bad = 0;
	size_t len;
	u8 *buf;
	int ret;

	buf = kunit_kzalloc(test, size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	cs_emit_valid(buf, c);

	for (words = 0; words <= 0xffff; words++) {
		if (words == c->bytes / 4)
			continue;
		header = cs_header(c->opcode, 0, words);
		cs_put32(buf, header);
		len = max_t(size_t, words * 4, c->bytes);
		reason = DRM_NFENCE_FAULT_NONE;
		ret = nfence_cs_decode(buf, len, &cmd, &reason);
		if (ret != -EINVAL || reason != DRM_NFENCE_FAULT_BAD_COMMAND ||
		    nfence_cs_cmd_bytes(header)) {
			/* Report the first few, not 65535 lines. */
			if (bad++ < 4)
				KUNIT_FAIL(test,
					   "words %u: ret %d reason %u bytes %u",
					   words, ret, reason,
					   nfence_cs_cmd_bytes(header));
		}
	}
	KUNIT_EXPECT_EQ(test, bad, 0);

	/* The lengths next to the right one, spelled out. */
	cs_put32(buf, cs_header(c->opcode, 0, c->bytes / 4 - 1));
	cs_expect_reject(test, buf, c->bytes, DRM_NFENCE_FAULT_BAD_COMMAND);
	cs_put32(buf, cs_header(c->opcode, 0, c->bytes / 4 + 1));
	cs_expect_reject(test, buf, c->bytes + 4, DRM_NFENCE_FAULT_BAD_COMMAND);
	cs_put32(buf, cs_header(c->opcode, 0, c->bytes / 4 + 2));
	cs_expect_reject(test, buf, c->bytes + 8, DRM_NFENCE_FAULT_BAD_COMMAND);
}

/* Each of the eight flag bits, and all of them, makes the command bad. */
static void cs_reject_flags(struct kunit *test)
{
	const struct cs_valid *c = test->param_value;
	u8 buf[NFENCE_CS_MAX_CMD_BYTES] = {};
	u32 bit, header;

	cs_emit_valid(buf, c);
	for (bit = 0; bit < 8; bit++) {
		header = cs_header(c->opcode, BIT(bit), c->bytes / 4);
		cs_put32(buf, header);
		KUNIT_EXPECT_EQ_MSG(test, nfence_cs_cmd_bytes(header), 0,
				    "flag bit %u", bit);
		cs_expect_reject(test, buf, c->bytes,
				 DRM_NFENCE_FAULT_BAD_COMMAND);
	}
	header = cs_header(c->opcode, 0xff, c->bytes / 4);
	cs_put32(buf, header);
	KUNIT_EXPECT_EQ(test, nfence_cs_cmd_bytes(header), 0);
	cs_expect_reject(test, buf, c->bytes, DRM_NFENCE_FAULT_BAD_COMMAND);
}

/*
 * The log payload: FENCE_WAIT and FENCE_SIGNAL with flag bit 0 and two
 * more words carry hNativeFence and the operation, which must be theirs;
 * nothing else takes the flag, and no other flag bit exists.
 */
static void cs_decode_log(struct kunit *test)
{
	const u64 wait_ops[] = {
		CS_VA, CS_VALUE, (u64)DRM_NFENCE_LOG_OP_WAIT_UNBLOCKED << 32 | 0xabcd,
	};
	const u64 signal_ops[] = {
		CS_VA, CS_VA2, CS_VALUE,
		(u64)DRM_NFENCE_LOG_OP_SIGNAL_EXECUTED << 32 | 0x1234,
	};
	u8 buf[NFENCE_CS_MAX_CMD_BYTES] = {};
	struct nfence_cs_cmd cmd;
	u32 reason, bit;
	size_t len;

	len = cs_emit(buf, cs_header(DRM_NFENCE_CS_FENCE_WAIT, 1, 8), 0,
		      wait_ops, 3);
	KUNIT_EXPECT_EQ(test, len, 32);
	KUNIT_EXPECT_EQ(test, nfence_cs_decode(buf, len, &cmd, &reason), 32);
	KUNIT_EXPECT_TRUE(test, cmd.log);
	KUNIT_EXPECT_EQ(test, cmd.log_handle, 0xabcd);
	KUNIT_EXPECT_EQ(test, cmd.log_op, DRM_NFENCE_LOG_OP_WAIT_UNBLOCKED);
	KUNIT_EXPECT_EQ(test, cmd.va, CS_VA);
	KUNIT_EXPECT_EQ(test, cmd.value, CS_VALUE);

	len = cs_emit(buf, cs_header(DRM_NFENCE_CS_FENCE_SIGNAL, 1, 10), 0,
		      signal_ops, 4);
	KUNIT_EXPECT_EQ(test, nfence_cs_decode(buf, len, &cmd, &reason), 40);
	KUNIT_EXPECT_TRUE(test, cmd.log);
	KUNIT_EXPECT_EQ(test, cmd.log_handle, 0x1234);
	KUNIT_EXPECT_EQ(test, cmd.log_op, DRM_NFENCE_LOG_OP_SIGNAL_EXECUTED);
	KUNIT_EXPECT_EQ(test, cmd.va2, CS_VA2);
	/* Without the flag, no payload. */
	len = cs_emit(buf, cs_header(DRM_NFENCE_CS_FENCE_SIGNAL, 0, 8), 0,
		      signal_ops, 3);
	KUNIT_EXPECT_EQ(test, nfence_cs_decode(buf, len, &cmd, &reason), 32);
	KUNIT_EXPECT_FALSE(test, cmd.log);

	/* The other operation, or one that does not exist. */
	len = cs_emit(buf, cs_header(DRM_NFENCE_CS_FENCE_WAIT, 1, 8), 0,
		      signal_ops + 1, 3);
	cs_expect_reject(test, buf, len, DRM_NFENCE_FAULT_BAD_COMMAND);
	len = cs_emit(buf, cs_header(DRM_NFENCE_CS_FENCE_SIGNAL, 1, 10), 0,
		      (const u64[]){ CS_VA, CS_VA2, CS_VALUE, 7ull << 32 }, 4);
	cs_expect_reject(test, buf, len, DRM_NFENCE_FAULT_BAD_COMMAND);
	/* The flag elsewhere, at either length; the other flag bits. */
	KUNIT_EXPECT_EQ(test, nfence_cs_cmd_bytes(cs_header(DRM_NFENCE_CS_NOP, 1,
							    2)), 0);
	KUNIT_EXPECT_EQ(test, nfence_cs_cmd_bytes(cs_header(DRM_NFENCE_CS_NOP, 1,
							    4)), 0);
	KUNIT_EXPECT_EQ(test,
			nfence_cs_cmd_bytes(cs_header(DRM_NFENCE_CS_WRITE64, 1, 8)),
			0);
	for (bit = 1; bit < 8; bit++)
		KUNIT_EXPECT_EQ(test,
				nfence_cs_cmd_bytes(cs_header(DRM_NFENCE_CS_FENCE_WAIT,
							      BIT(bit) | 1, 8)),
				0);
}

/* Each bit of the second word, which must be zero. */
static void cs_reject_second_word(struct kunit *test)
{
	const struct cs_valid *c = test->param_value;
	u8 buf[NFENCE_CS_MAX_CMD_BYTES] = {};
	u32 bit;

	for (bit = 0; bit < 32; bit++) {
		cs_emit(buf, cs_valid_header(c), BIT(bit), c->ops, c->nops);
		cs_expect_reject(test, buf, c->bytes,
				 DRM_NFENCE_FAULT_BAD_COMMAND);
	}
	cs_emit(buf, cs_valid_header(c), U32_MAX, c->ops, c->nops);
	cs_expect_reject(test, buf, c->bytes, DRM_NFENCE_FAULT_BAD_COMMAND);
}

/* A command cut short anywhere, 0 to bytes - 1, is bad. */
static void cs_reject_truncated(struct kunit *test)
{
	const struct cs_valid *c = test->param_value;
	u8 buf[NFENCE_CS_MAX_CMD_BYTES] = {};
	struct nfence_cs_cmd cmd;
	u32 reason;
	size_t len;
	int ret;

	cs_emit_valid(buf, c);
	for (len = 0; len < c->bytes; len++) {
		reason = DRM_NFENCE_FAULT_NONE;
		ret = nfence_cs_decode(buf, len, &cmd, &reason);
		KUNIT_EXPECT_EQ_MSG(test, ret, -EINVAL, "len %zu", len);
		KUNIT_EXPECT_EQ_MSG(test, reason, DRM_NFENCE_FAULT_BAD_COMMAND,
				    "len %zu", len);
	}
}

/**
 * struct cs_va_case - one VA operand of one command
 * @name: parameter description
 * @cmd: the command
 * @op: index of the VA in &cs_valid.ops
 */
struct cs_va_case {
	const char *name;
	const struct cs_valid *cmd;
	u32 op;
};

static const struct cs_va_case cs_va_cases[] = {
	{ "FENCE_WAIT_va", &cs_valid_cases[1], 0 },
	{ "FENCE_SIGNAL_cv_va", &cs_valid_cases[2], 0 },
	{ "FENCE_SIGNAL_mv_va", &cs_valid_cases[2], 1 },
	{ "FENCE_SIGNAL_no_mv_va_cv_va", &cs_valid_cases[3], 0 },
	{ "WRITE64_va", &cs_valid_cases[4], 0 },
	{ "TIMESTAMP_va", &cs_valid_cases[5], 0 },
};

static void cs_va_desc(const struct cs_va_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cs_va, cs_va_cases, cs_va_desc);

/* A VA operand off by 1..7 bytes is MISALIGNED; high bits are fine. */
static void cs_reject_misaligned_va(struct kunit *test)
{
	const struct cs_va_case *v = test->param_value;
	const struct cs_valid *c = v->cmd;
	u8 buf[NFENCE_CS_MAX_CMD_BYTES] = {};
	struct nfence_cs_cmd cmd;
	u64 ops[3];
	u32 low, reason;

	KUNIT_ASSERT_TRUE(test, c->va_ops & BIT(v->op));
	for (low = 1; low < 8; low++) {
		memcpy(ops, c->ops, sizeof(ops));
		ops[v->op] |= low;
		cs_emit(buf, cs_valid_header(c), 0, ops, c->nops);
		reason = DRM_NFENCE_FAULT_NONE;
		KUNIT_EXPECT_EQ_MSG(test,
				    nfence_cs_decode(buf, c->bytes, &cmd,
						     &reason),
				    -EINVAL, "low bits %u", low);
		KUNIT_EXPECT_EQ_MSG(test, reason, DRM_NFENCE_FAULT_MISALIGNED,
				    "low bits %u", low);
	}

	/* The top of the address space, aligned, decodes. */
	memcpy(ops, c->ops, sizeof(ops));
	ops[v->op] = U64_MAX & ~7ull;
	cs_emit(buf, cs_valid_header(c), 0, ops, c->nops);
	KUNIT_EXPECT_EQ(test, nfence_cs_decode(buf, c->bytes, &cmd, &reason),
			(int)c->bytes);
	KUNIT_EXPECT_EQ(test, v->op ? cmd.va2 : cmd.va, U64_MAX & ~7ull);
}

/* WORK: 0 .. DRM_NFENCE_CS_MAX_WORK_NS, any alignment, nothing more. */
static void cs_work_limit(struct kunit *test)
{
	static const u64 ok[] = {
		0, 1, 7, DRM_NFENCE_CS_MAX_WORK_NS - 1,
		DRM_NFENCE_CS_MAX_WORK_NS,
	};
	static const u64 bad[] = {
		DRM_NFENCE_CS_MAX_WORK_NS + 1, DRM_NFENCE_CS_MAX_WORK_NS + 8,
		BIT_ULL(63), U64_MAX,
	};
	u32 header = cs_header(DRM_NFENCE_CS_WORK, 0, 4);
	u8 buf[16];
	struct nfence_cs_cmd cmd;
	unsigned int i;
	u32 reason;

	KUNIT_EXPECT_EQ(test, DRM_NFENCE_CS_MAX_WORK_NS, 60ull * NSEC_PER_SEC);
	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		cs_emit(buf, header, 0, &ok[i], 1);
		KUNIT_EXPECT_EQ_MSG(test,
				    nfence_cs_decode(buf, sizeof(buf), &cmd,
						     &reason),
				    16, "WORK %llu", ok[i]);
		KUNIT_EXPECT_EQ(test, cmd.value, ok[i]);
		KUNIT_EXPECT_EQ(test, cmd.opcode, DRM_NFENCE_CS_WORK);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		cs_emit(buf, header, 0, &bad[i], 1);
		reason = DRM_NFENCE_FAULT_NONE;
		KUNIT_EXPECT_EQ_MSG(test,
				    nfence_cs_decode(buf, sizeof(buf), &cmd,
						     &reason),
				    -EINVAL, "WORK %llu", bad[i]);
		KUNIT_EXPECT_EQ_MSG(test, reason, DRM_NFENCE_FAULT_BAD_COMMAND,
				    "WORK %llu", bad[i]);
	}
}

/* Every valid command once, in table order; returns the bytes written. */
static size_t cs_emit_all_valid(u8 *p)
{
	size_t off = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cs_valid_cases); i++)
		off += cs_emit_valid(p + off, &cs_valid_cases[i]);
	return off;
}

#define CS_ALL_VALID_BYTES	(8 + 24 + 32 + 32 + 24 + 16 + 16)

/* A stream of valid commands validates, aligned or not; so does nothing. */
static void cs_validate_ok(struct kunit *test)
{
	u8 buf[3 * CS_ALL_VALID_BYTES + 1] = {};
	size_t bad_offset = 12345, len, off;
	const struct cs_valid *c;
	struct nfence_cs_cmd cmd;
	unsigned int i;
	u32 reason;
	int ret;

	len = cs_emit_all_valid(buf);
	KUNIT_ASSERT_EQ(test, len, CS_ALL_VALID_BYTES);
	len += cs_emit_all_valid(buf + len);
	len += cs_emit_all_valid(buf + len);
	KUNIT_EXPECT_EQ(test, nfence_cs_validate(buf, len, &bad_offset, &reason),
			0);
	KUNIT_EXPECT_EQ(test, bad_offset, 12345);
	KUNIT_EXPECT_EQ(test, nfence_cs_validate(buf, 0, &bad_offset, &reason),
			0);
	/* One NOP, a whole number of commands. */
	KUNIT_EXPECT_EQ(test, nfence_cs_validate(buf, 8, &bad_offset, &reason),
			0);

	/* Walking the stream by the decoder's lengths visits every command. */
	for (off = 0, i = 0; off < len; off += ret, i++) {
		c = &cs_valid_cases[i % ARRAY_SIZE(cs_valid_cases)];
		ret = nfence_cs_decode(buf + off, len - off, &cmd, &reason);
		KUNIT_ASSERT_EQ_MSG(test, ret, (int)c->bytes, "offset %zu", off);
		cs_expect_cmd(test, c, &cmd);
	}
	KUNIT_EXPECT_EQ(test, off, len);
	KUNIT_EXPECT_EQ(test, i, 3 * ARRAY_SIZE(cs_valid_cases));

	memmove(buf + 1, buf, len);
	KUNIT_EXPECT_EQ(test,
			nfence_cs_validate(buf + 1, len, &bad_offset, &reason),
			0);
}

/**
 * struct cs_bad_case - an invalid command in the middle of valid ones
 * @name: parameter description
 * @header: its header
 * @word1: its second word
 * @nops: its 64-bit operands
 * @ops: the operands
 * @reason: the fault reason it must get
 */
struct cs_bad_case {
	const char *name;
	u32 header;
	u32 word1;
	u32 nops;
	u64 ops[3];
	u32 reason;
};

static const struct cs_bad_case cs_bad_cases[] = {
	{
		.name = "unknown_opcode",
		.header = 0x06 | 2 << 16,
		.reason = DRM_NFENCE_FAULT_BAD_COMMAND,
	}, {
		.name = "unknown_opcode_ff",
		.header = 0xff | 4 << 16, .nops = 1, .ops = { CS_VA },
		.reason = DRM_NFENCE_FAULT_BAD_COMMAND,
	}, {
		.name = "flag",
		.header = DRM_NFENCE_CS_WRITE64 | BIT(8) | 6 << 16,
		.nops = 2, .ops = { CS_VA, CS_VALUE },
		.reason = DRM_NFENCE_FAULT_BAD_COMMAND,
	}, {
		.name = "length_too_short",
		.header = DRM_NFENCE_CS_FENCE_SIGNAL | 6 << 16,
		.nops = 3, .ops = { CS_VA, CS_VA2, CS_VALUE },
		.reason = DRM_NFENCE_FAULT_BAD_COMMAND,
	}, {
		.name = "length_too_long",
		.header = DRM_NFENCE_CS_TIMESTAMP | 6 << 16,
		.nops = 2, .ops = { CS_VA, 0 },
		.reason = DRM_NFENCE_FAULT_BAD_COMMAND,
	}, {
		.name = "second_word",
		.header = DRM_NFENCE_CS_NOP | 2 << 16, .word1 = 1,
		.reason = DRM_NFENCE_FAULT_BAD_COMMAND,
	}, {
		.name = "work_over_max",
		.header = DRM_NFENCE_CS_WORK | 4 << 16,
		.nops = 1, .ops = { DRM_NFENCE_CS_MAX_WORK_NS + 1 },
		.reason = DRM_NFENCE_FAULT_BAD_COMMAND,
	}, {
		.name = "misaligned_va",
		.header = DRM_NFENCE_CS_FENCE_WAIT | 6 << 16,
		.nops = 2, .ops = { CS_VA + 4, CS_VALUE },
		.reason = DRM_NFENCE_FAULT_MISALIGNED,
	}, {
		.name = "misaligned_mv_va",
		.header = DRM_NFENCE_CS_FENCE_SIGNAL | 8 << 16,
		.nops = 3, .ops = { CS_VA, CS_VA2 + 1, CS_VALUE },
		.reason = DRM_NFENCE_FAULT_MISALIGNED,
	},
};

static void cs_bad_desc(const struct cs_bad_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cs_bad, cs_bad_cases, cs_bad_desc);

/*
 * valid commands, the bad one, valid commands, an unknown opcode: the first
 * bad command is reported, at its offset, for its reason. Then the bad
 * command alone at offset 0.
 */
static void cs_validate_bad_middle(struct kunit *test)
{
	const struct cs_bad_case *b = test->param_value;
	u8 buf[2 * CS_ALL_VALID_BYTES + 64] = {};
	size_t at, len, bad_offset;
	u32 reason;

	at = cs_emit_all_valid(buf);
	len = at + cs_emit(buf + at, b->header, b->word1, b->ops, b->nops);
	len += cs_emit_all_valid(buf + len);
	len += cs_emit(buf + len, cs_header(0x80, 0, 2), 0, NULL, 0);

	bad_offset = 0;
	reason = DRM_NFENCE_FAULT_NONE;
	KUNIT_EXPECT_EQ(test, nfence_cs_validate(buf, len, &bad_offset, &reason),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, bad_offset, at);
	KUNIT_EXPECT_EQ(test, reason, b->reason);

	/* From a misaligned start, the offset is relative to it. */
	memmove(buf + 3, buf, len);
	bad_offset = 0;
	reason = DRM_NFENCE_FAULT_NONE;
	KUNIT_EXPECT_EQ(test,
			nfence_cs_validate(buf + 3, len, &bad_offset, &reason),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, bad_offset, at);
	KUNIT_EXPECT_EQ(test, reason, b->reason);

	len = cs_emit(buf, b->header, b->word1, b->ops, b->nops);
	len += cs_emit_all_valid(buf + len);
	bad_offset = 12345;
	reason = DRM_NFENCE_FAULT_NONE;
	KUNIT_EXPECT_EQ(test, nfence_cs_validate(buf, len, &bad_offset, &reason),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, bad_offset, 0);
	KUNIT_EXPECT_EQ(test, reason, b->reason);
}

/* Valid commands and then any command cut short: the tail is reported. */
static void cs_validate_truncated_tail(struct kunit *test)
{
	const struct cs_valid *c = test->param_value;
	u8 buf[CS_ALL_VALID_BYTES + NFENCE_CS_MAX_CMD_BYTES] = {};
	size_t at, cut, bad_offset;
	u32 reason;
	int ret;

	at = cs_emit_all_valid(buf);
	cs_emit_valid(buf + at, c);
	KUNIT_EXPECT_EQ(test,
			nfence_cs_validate(buf, at + c->bytes, &bad_offset,
					   &reason),
			0);
	for (cut = 1; cut < c->bytes; cut++) {
		bad_offset = 0;
		reason = DRM_NFENCE_FAULT_NONE;
		ret = nfence_cs_validate(buf, at + cut, &bad_offset, &reason);
		KUNIT_EXPECT_EQ_MSG(test, ret, -EINVAL, "tail of %zu bytes",
				    cut);
		KUNIT_EXPECT_EQ_MSG(test, bad_offset, at, "tail of %zu bytes",
				    cut);
		KUNIT_EXPECT_EQ_MSG(test, reason, DRM_NFENCE_FAULT_BAD_COMMAND,
				    "tail of %zu bytes", cut);
	}
}

static struct kunit_case nfence_cs_cases[] = {
	KUNIT_CASE_PARAM(cs_decode_valid, cs_valid_gen_params),
	KUNIT_CASE_PARAM(cs_decode_misaligned_buffer, cs_valid_gen_params),
	KUNIT_CASE(cs_reject_unknown_opcodes),
	KUNIT_CASE_PARAM(cs_reject_bad_length, cs_valid_gen_params),
	KUNIT_CASE_PARAM(cs_reject_flags, cs_valid_gen_params),
	KUNIT_CASE_PARAM(cs_reject_second_word, cs_valid_gen_params),
	KUNIT_CASE_PARAM(cs_reject_truncated, cs_valid_gen_params),
	KUNIT_CASE_PARAM(cs_reject_misaligned_va, cs_va_gen_params),
	KUNIT_CASE(cs_work_limit),
	KUNIT_CASE(cs_decode_log),
	KUNIT_CASE(cs_validate_ok),
	KUNIT_CASE_PARAM(cs_validate_bad_middle, cs_bad_gen_params),
	KUNIT_CASE_PARAM(cs_validate_truncated_tail, cs_valid_gen_params),
	{}
};

static struct kunit_suite nfence_cs_suite = {
	.name = "nfence_cs",
	.test_cases = nfence_cs_cases,
};

kunit_test_suite(nfence_cs_suite);
