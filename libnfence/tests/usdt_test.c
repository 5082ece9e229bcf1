/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * nfence-trace's reader of libnfence's USDT probes
 * (examples/nfence-trace-usdt.c): the <sys/sdt.h> operands it turns into
 * uprobe fetch arguments, and the two probes it finds in the libnfence
 * this test runs, each at a NOP of the file with four arguments. No
 * driver and no tracefs needed: recording them is the VM's check.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <nfence/d3dkmthk.h>

#include "kselftest_harness.h"
#include "../examples/nfence-trace-usdt.h"

static const char *arg(const char *sdt)
{
	static char out[64];

	if (ntrace_usdt_arg(sdt, out, sizeof(out)) < 0)
		return "(refused)";
	return out;
}

TEST(sdt_operands_become_fetch_args)
{
	EXPECT_STREQ("%r12:u32", arg("4@%r12d"));
	EXPECT_STREQ("%ax:u32", arg("4@%eax"));
	EXPECT_STREQ("%ax:u64", arg("8@%rax"));
	EXPECT_STREQ("%si:s32", arg("-4@%esi"));
	EXPECT_STREQ("%si:u8", arg("1@%sil"));
	EXPECT_STREQ("%dx:u8", arg("1@%dl"));
	EXPECT_STREQ("%bp:u64", arg("8@%rbp"));
	EXPECT_STREQ("%r8:u16", arg("2@%r8w"));
	EXPECT_STREQ("%r15:s64", arg("-8@%r15"));
	EXPECT_STREQ("-16(%bp):u64", arg("8@-16(%rbp)"));
	EXPECT_STREQ("+0(%sp):u32", arg("4@(%rsp)"));
	EXPECT_STREQ("+40(%r13):u64", arg("8@40(%r13)"));
	EXPECT_STREQ("\\5:u32", arg("4@$5"));
	EXPECT_STREQ("\\-1:s64", arg("-8@$-1"));
	/* What the reader does not know is refused, not guessed. */
	EXPECT_STREQ("(refused)", arg("8%rax"));
	EXPECT_STREQ("(refused)", arg("3@%eax"));
	EXPECT_STREQ("(refused)", arg("4@%ah"));
	EXPECT_STREQ("(refused)", arg("4@%r16d"));
	EXPECT_STREQ("(refused)", arg("4@%xmm0"));
	EXPECT_STREQ("(refused)", arg("8@-16(%rbp"));
	EXPECT_STREQ("(refused)", arg("8@8(%rax,%rbx,2)"));
}

TEST(the_library_has_both_probes_at_nops)
{
	struct ntrace_usdt p[NTRACE_USDT_MAX];
	char path[PATH_MAX], why[256];
	bool wait = false, signal = false;
	unsigned char byte;
	int n, i, fd;

	/* A call into libnfence: the program is linked against it. */
	ASSERT_EQ(STATUS_INVALID_PARAMETER, NFenceCsStatus(NULL));
	ASSERT_EQ(0, ntrace_usdt_library(path, sizeof(path)));
	ASSERT_NE(NULL, strstr(path, "libnfence.so"));
	n = ntrace_usdt_read(path, p, NTRACE_USDT_MAX, why, sizeof(why));
	ASSERT_EQ(2, n) TH_LOG("%s: %s", path, n < 0 ? why : "");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	for (i = 0; i < n; i++) {
		wait |= !strcmp(p[i].event, "nfence_fence_wait_queued");
		signal |= !strcmp(p[i].event, "nfence_fence_signal_queued");
		/* <sys/sdt.h> puts a one-byte NOP at the probe. */
		ASSERT_EQ(1, pread(fd, &byte, 1, (off_t)p[i].offset));
		EXPECT_EQ(0x90, byte);
		EXPECT_NE(NULL, strstr(p[i].fetch, " handle=%"));
		EXPECT_NE(NULL, strstr(p[i].fetch, " kernel_handle="));
		EXPECT_NE(NULL, strstr(p[i].fetch, " value="));
		EXPECT_NE(NULL, strstr(p[i].fetch, " va="));
		EXPECT_NE(NULL, strstr(p[i].fetch, ":u32 kernel_handle="));
	}
	close(fd);
	EXPECT_TRUE(wait);
	EXPECT_TRUE(signal);
	/* Too little room is an error, not a short list. */
	EXPECT_EQ(-1, ntrace_usdt_read(path, p, 1, why, sizeof(why)));
}

TEST(files_without_probes)
{
	struct ntrace_usdt p[NTRACE_USDT_MAX];
	char why[256];

	/* An ELF file with no libnfence probe: none. */
	EXPECT_EQ(0, ntrace_usdt_read("/proc/self/exe", p, NTRACE_USDT_MAX,
				      why, sizeof(why)));
	EXPECT_EQ(-1, ntrace_usdt_read("/dev/null", p, NTRACE_USDT_MAX, why,
				       sizeof(why)));
	EXPECT_EQ(-1, ntrace_usdt_read("/nonexistent", p, NTRACE_USDT_MAX,
				       why, sizeof(why)));
	EXPECT_STREQ("No such file or directory", why);
}

TEST_HARNESS_MAIN
