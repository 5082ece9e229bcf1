/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * The IGT core interface the nfence tests use.
 *
 * Built with HAVE_IGT_HEADERS (the Makefile sets it when IGT_INCLUDE points
 * at an IGT source tree) this is just the real "igt.h". Otherwise it
 * declares the functions libigt.so.0 (IGT 1.27.1, as packaged by Debian,
 * which ships no headers) exports and that IGT's own macros expand to, and
 * defines those macros with the same shapes as IGT 1.27's lib/igt_core.h.
 * All of the test control flow (subtest selection, --list-subtests,
 * --run-subtest, SUCCESS/FAIL/SKIP bookkeeping, fork helpers, exit codes)
 * therefore runs inside the real libigt; this file only supplies the
 * glue that a compiler needs.
 *
 * Protocol (libigt symbol each macro ends up in):
 *  - igt_main: main() calls igt_subtest_init_parse_opts(), the body, then
 *    igt_exit() (exit status 0 pass, 77 all skipped, 98 failure).
 *  - igt_subtest(name): for-loop whose condition is
 *    __igt_run_subtest(name, __FILE__, __LINE__) && sigsetjmp(
 *    igt_subtest_jmpbuf, 1) == 0 and whose increment is igt_success().
 *    igt_success(), a failure or a skip end the subtest by a siglongjmp()
 *    back to igt_subtest_jmpbuf with a non-zero value, which ends the loop.
 *  - igt_fixture: same trick around __igt_fixture() and
 *    __igt_fixture_complete().
 *  - igt_assert*(): __igt_fail_assert() (noreturn).
 *  - igt_require*(), igt_skip_on*(): __igt_skip_check() (noreturn).
 *  - igt_describe(): igt_describe_f("%s", ...).
 *  - igt_fork(child, n): __igt_fork() returns true in the child, which runs
 *    the body and exit(0)s; false in the parent. igt_waitchildren() reaps
 *    them and fails the subtest if a child failed.
 *  - igt_info()/igt_debug()/igt_warn(): igt_log().
 *  - igt_set_timeout(): a watchdog alarm that fails the subtest.
 */
#ifndef IGT_NFENCE_CORE_H
#define IGT_NFENCE_CORE_H

#ifdef HAVE_IGT_HEADERS

#include "igt.h"

#else /* !HAVE_IGT_HEADERS */

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef __noreturn
#define __noreturn __attribute__((noreturn))
#endif

#define IGT_EXIT_SKIP		77
#define IGT_EXIT_SUCCESS	0
#define IGT_EXIT_INVALID	79
#define IGT_EXIT_FAILURE	98
#define IGT_EXIT_ABORT		112

#ifndef IGT_LOG_DOMAIN
#define IGT_LOG_DOMAIN (NULL)
#endif

enum igt_log_level {
	IGT_LOG_DEBUG,
	IGT_LOG_INFO,
	IGT_LOG_WARN,
	IGT_LOG_CRITICAL,
	IGT_LOG_NONE,
};

struct option;

typedef int (*igt_opt_handler_t)(int opt, int opt_index, void *data);

/* Exported by libigt.so.0 (IGT 1.27.1). */
extern jmp_buf igt_subtest_jmpbuf;
extern const char *__igt_test_description __attribute__((weak));

int igt_subtest_init_parse_opts(int *argc, char **argv,
				const char *extra_short_opts,
				const struct option *extra_long_opts,
				const char *help_str,
				igt_opt_handler_t extra_opt_handler,
				void *handler_data);
__noreturn void igt_exit(void);
bool igt_only_list_subtests(void);
const char *igt_subtest_name(void);

bool __igt_run_subtest(const char *subtest_name, const char *file,
		       const int line);
void igt_success(void);
__noreturn void igt_fail(int exitcode);
__noreturn void igt_skip(const char *f, ...)
	__attribute__((format(printf, 1, 2)));

bool __igt_fixture(void);
void __igt_fixture_complete(void);
__noreturn void __igt_fixture_end(void);

void __igt_subtest_group_save(int *save, int *desc);
void __igt_subtest_group_restore(int save, int desc);

void igt_describe_f(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

__noreturn void __igt_fail_assert(const char *domain, const char *file,
				  const int line, const char *func,
				  const char *assertion, const char *format,
				  ...)
	__attribute__((format(printf, 6, 7)));
__noreturn void __igt_skip_check(const char *file, const int line,
				 const char *func, const char *check,
				 const char *format, ...)
	__attribute__((format(printf, 5, 6)));

bool __igt_fork(void);
int __igt_waitchildren(void);
void igt_waitchildren(void);
void igt_waitchildren_timeout(int seconds, const char *reason);
void igt_drop_root(void);

/*
 * alarm(seconds) with a SIGALRM handler (no SA_RESTART) that fails the
 * running subtest with "Timed out: op"; 0 cancels. The handler calls
 * igt_fail(), which in a thread other than the main one only ends that
 * thread, so threads that may block should block SIGALRM.
 */
void igt_set_timeout(unsigned int seconds, const char *op);
void igt_reset_timeout(void);

/* Run at exit, and from the handlers of fatal signals (sig, or 0). */
typedef void (*igt_exit_handler_t)(int sig);
void igt_install_exit_handler(igt_exit_handler_t fn);

void igt_log(const char *domain, enum igt_log_level level,
	     const char *format, ...)
	__attribute__((format(printf, 3, 4)));

/* Macros, shaped as in IGT 1.27 lib/igt_core.h. */

#define IGT_TEST_DESCRIPTION(str) const char *__igt_test_description = str

#define __igt_tokencat2(x, y) x ## y
#define igt_tokencat(x, y) __igt_tokencat2(x, y)
#define igt_unique(prefix) igt_tokencat(prefix, __LINE__)

#define igt_main_args(short_opts, long_opts, help_str, opt_handler, \
		      handler_data) \
	static void __igt_main_args(void); \
	int main(int argc, char **argv) \
	{ \
		igt_subtest_init_parse_opts(&argc, argv, short_opts, \
					    long_opts, help_str, \
					    opt_handler, handler_data); \
		__igt_main_args(); \
		igt_exit(); \
	} \
	static void __igt_main_args(void)

#define igt_main igt_main_args(NULL, NULL, NULL, NULL, NULL)

#define igt_fixture \
	for (volatile int igt_unique(__tmpint) = 0; \
	     igt_unique(__tmpint) < 1 && \
	     (__igt_fixture() && \
	      (sigsetjmp(igt_subtest_jmpbuf, 1) == 0)); \
	     igt_unique(__tmpint)++, \
	     __igt_fixture_complete())

#define igt_subtest(name) \
	for (; __igt_run_subtest((name), __FILE__, __LINE__) && \
	       (sigsetjmp(igt_subtest_jmpbuf, 1) == 0); \
	     igt_success())

#define __igt_subtest_f(tmp, format...) \
	for (char tmp[256]; \
	     snprintf(tmp, sizeof(tmp), format), \
	     __igt_run_subtest(tmp, __FILE__, __LINE__) && \
	     (sigsetjmp(igt_subtest_jmpbuf, 1) == 0); \
	     igt_success())

#define igt_subtest_f(f...) \
	__igt_subtest_f(igt_unique(__tmpchar), f)

#define igt_subtest_group \
	for (int igt_unique(__tmpint) = 0, \
		 igt_unique(__save_s) = 0, \
		 igt_unique(__desc) = 0; \
	     igt_unique(__tmpint) < 1 && \
	     (__igt_subtest_group_save(&igt_unique(__save_s), \
				       &igt_unique(__desc)), true); \
	     igt_unique(__tmpint)++, \
	     __igt_subtest_group_restore(igt_unique(__save_s), \
					 igt_unique(__desc)))

#define igt_describe(dsc) igt_describe_f("%s", dsc)

#define igt_debug(f...) igt_log(IGT_LOG_DOMAIN, IGT_LOG_DEBUG, f)
#define igt_info(f...) igt_log(IGT_LOG_DOMAIN, IGT_LOG_INFO, f)
#define igt_warn(f...) igt_log(IGT_LOG_DOMAIN, IGT_LOG_WARN, f)
#define igt_critical(f...) igt_log(IGT_LOG_DOMAIN, IGT_LOG_CRITICAL, f)

#define igt_assert(expr) \
	do { \
		if (!(expr)) \
			__igt_fail_assert(IGT_LOG_DOMAIN, __FILE__, __LINE__, \
					  __func__, #expr, NULL); \
	} while (0)

#define igt_assert_f(expr, f...) \
	do { \
		if (!(expr)) \
			__igt_fail_assert(IGT_LOG_DOMAIN, __FILE__, __LINE__, \
					  __func__, #expr, f); \
	} while (0)

#define igt_fail_on(expr) igt_assert(!(expr))
#define igt_fail_on_f(expr, f...) igt_assert_f(!(expr), f)

#define igt_assert_cmpint(n1, cmp, ncmp, n2) \
	do { \
		int __n1 = (n1), __n2 = (n2); \
		if (!(__n1 cmp __n2)) \
			__igt_fail_assert(IGT_LOG_DOMAIN, __FILE__, \
					  __LINE__, __func__, \
					  #n1 " " #cmp " " #n2, \
					  "error: %d " #ncmp " %d\n", \
					  __n1, __n2); \
	} while (0)

#define igt_assert_cmpuint(n1, cmp, ncmp, n2) \
	do { \
		uint32_t __n1 = (n1), __n2 = (n2); \
		if (!(__n1 cmp __n2)) \
			__igt_fail_assert(IGT_LOG_DOMAIN, __FILE__, \
					  __LINE__, __func__, \
					  #n1 " " #cmp " " #n2, \
					  "error: %#x " #ncmp " %#x\n", \
					  __n1, __n2); \
	} while (0)

#define igt_assert_cmps64(n1, cmp, ncmp, n2) \
	do { \
		int64_t __n1 = (n1), __n2 = (n2); \
		if (!(__n1 cmp __n2)) \
			__igt_fail_assert(IGT_LOG_DOMAIN, __FILE__, \
					  __LINE__, __func__, \
					  #n1 " " #cmp " " #n2, \
					  "error: %" PRId64 " " #ncmp " %" \
					  PRId64 "\n", __n1, __n2); \
	} while (0)

#define igt_assert_cmpu64(n1, cmp, ncmp, n2) \
	do { \
		uint64_t __n1 = (n1), __n2 = (n2); \
		if (!(__n1 cmp __n2)) \
			__igt_fail_assert(IGT_LOG_DOMAIN, __FILE__, \
					  __LINE__, __func__, \
					  #n1 " " #cmp " " #n2, \
					  "error: %#" PRIx64 " " #ncmp " %#" \
					  PRIx64 "\n", __n1, __n2); \
	} while (0)

#define igt_assert_eq(n1, n2) igt_assert_cmpint(n1, ==, !=, n2)
#define igt_assert_eq_u32(n1, n2) igt_assert_cmpuint(n1, ==, !=, n2)
#define igt_assert_eq_s64(n1, n2) igt_assert_cmps64(n1, ==, !=, n2)
#define igt_assert_eq_u64(n1, n2) igt_assert_cmpu64(n1, ==, !=, n2)
#define igt_assert_neq(n1, n2) igt_assert_cmpint(n1, !=, ==, n2)
#define igt_assert_neq_u32(n1, n2) igt_assert_cmpuint(n1, !=, ==, n2)
#define igt_assert_neq_u64(n1, n2) igt_assert_cmpu64(n1, !=, ==, n2)
#define igt_assert_lte(n1, n2) igt_assert_cmpint(n1, <=, >, n2)
#define igt_assert_lte_u64(n1, n2) igt_assert_cmpu64(n1, <=, >, n2)
#define igt_assert_lte_s64(n1, n2) igt_assert_cmps64(n1, <=, >, n2)
#define igt_assert_lt(n1, n2) igt_assert_cmpint(n1, <, >=, n2)
#define igt_assert_lt_u64(n1, n2) igt_assert_cmpu64(n1, <, >=, n2)
#define igt_assert_lt_s64(n1, n2) igt_assert_cmps64(n1, <, >=, n2)

#define igt_assert_fd(fd) \
	igt_assert_f((fd) >= 0, "file descriptor " #fd " failed\n")

#define igt_require(expr) \
	do { \
		if (!(expr)) \
			__igt_skip_check(__FILE__, __LINE__, __func__, \
					 #expr, NULL); \
		else \
			igt_debug("Test requirement passed: %s\n", #expr); \
	} while (0)

#define igt_skip_on(expr) \
	do { \
		if ((expr)) \
			__igt_skip_check(__FILE__, __LINE__, __func__, \
					 "!(" #expr ")", NULL); \
		else \
			igt_debug("Test requirement passed: !(%s)\n", #expr); \
	} while (0)

#define igt_require_f(expr, f...) \
	do { \
		if (!(expr)) \
			__igt_skip_check(__FILE__, __LINE__, __func__, \
					 #expr, f); \
		else \
			igt_debug("Test requirement passed: %s\n", #expr); \
	} while (0)

#define igt_skip_on_f(expr, f...) \
	do { \
		if ((expr)) \
			__igt_skip_check(__FILE__, __LINE__, __func__, \
					 "!(" #expr ")", f); \
		else \
			igt_debug("Test requirement passed: !(%s)\n", #expr); \
	} while (0)

/*
 * The body runs in each of num_children children, which exit(0) after it
 * (or with IGT_EXIT_FAILURE from a failed igt_assert); the parent must
 * collect them with igt_waitchildren(). Only allowed inside a subtest.
 */
#define igt_fork(child, num_children) \
	for (int child = 0; child < (num_children); child++) \
		for (; __igt_fork(); exit(0))

#endif /* HAVE_IGT_HEADERS */

#endif /* IGT_NFENCE_CORE_H */
