/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * nfence-trace: a timeline of nfence's trace events, for ui.perfetto.dev
 * or chrome://tracing.
 *
 *   nfence-trace record [-o CAPTURE] [--json OUT.json] [--umd-lib LIB]
 *                       -- CMD [ARGS...]
 *	As root: record every nfence event (a tracefs instance of its own,
 *	trace_clock mono) and libnfence's fence_wait_queued and
 *	fence_signal_queued probes (uprobes on LIB, by default the libnfence
 *	nfence-trace runs) while CMD runs, then save the capture (the
 *	instance's trace text, after a header naming each adapter's
 *	timestamp frequency) and/or convert the recording (its binary
 *	events, decoded by libtraceevent). Without -o and --json the
 *	capture goes to nfence-trace.txt. Exit status: CMD's, or 1 if
 *	recording or converting failed.
 *
 *   nfence-trace convert CAPTURE [-o OUT.json] [--frequency HZ]
 *	Convert a saved capture ("-": standard input) or a trace-cmd data
 *	file (trace-cmd record's trace.dat, decoded by libtracecmd and
 *	libtraceevent) into Chrome/Perfetto trace-event JSON (standard
 *	output without -o). --frequency gives the GPU timestamp frequency of
 *	adapters the capture's header does not name (a capture of tracefs
 *	made by hand, or any trace.dat). Exit status: 0, 1 for input that is
 *	not a capture of nfence events, 2 for bad usage.
 *
 * The JSON, the tracks and the choices behind them are in
 * Documentation/tracing.rst.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nfence-trace-core.h"

static const char usage_text[] =
	"usage: nfence-trace record [-o CAPTURE] [--json OUT.json] [--umd-lib LIB]\n"
	"                           -- CMD [ARGS...]\n"
	"       nfence-trace convert CAPTURE [-o OUT.json] [--frequency HZ]\n";

static int usage(void)
{
	fputs(usage_text, stderr);
	return 2;
}

static void summary(const char *what, const struct ntrace_stats *st,
		    const char *out)
{
	fprintf(stderr, "nfence-trace: %s: %lu events, %u adapters, %u "
		"tracks, %lu slices, %lu instants, %lu async waits, %lu "
		"flows (%lu GPU waits with no logged signal), %lu queued "
		"commands (%lu with their log entry), %lu lines ignored -> "
		"%s\n", what, st->events, st->adapters, st->tracks,
		st->slices, st->instants, st->async_waits, st->flows,
		st->unreleased, st->queued, st->queued_flows, st->ignored,
		out);
}

/* Run @argv and wait for it; its exit status as a shell gives it. */
static int run(char **argv)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
	int status;
	pid_t pid;

	/* ^C goes to the command; we stay to save what it did. */
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	pid = fork();
	if (pid < 0) {
		perror("nfence-trace: fork");
		return 1;
	}
	if (!pid) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		execvp(argv[0], argv);
		fprintf(stderr, "nfence-trace: %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			perror("nfence-trace: waitpid");
			return 1;
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

static int record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", required_argument, NULL, 'j' },
		{ "umd-lib", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *capture = NULL, *json = NULL, *umd_lib = NULL;
	struct ntrace_stats st;
	struct ntrace_rec r;
	unsigned int i, n;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "+o:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			capture = optarg;
			break;
		case 'j':
			json = optarg;
			break;
		case 'u':
			umd_lib = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage();
		}
	}
	if (optind >= argc)
		return usage();
	if (!capture && !json)
		capture = "nfence-trace.txt";

	if (ntrace_record_start(&r, umd_lib, "nfence-trace") < 0)
		return 1;
	for (i = 0, n = 0; i < r.num_adapters; i++)
		n += r.adapters[i].leveled;
	fprintf(stderr, "nfence-trace: logging level ALL on %u of %u "
		"adapters while recording\n", n, r.num_adapters);
	rc = run(&argv[optind]);
	if (ntrace_record_convert(&r, capture, json, "nfence-trace",
				  &st) < 0)
		return 1;
	if (capture)
		fprintf(stderr, "nfence-trace: capture saved in %s\n", capture);
	if (json)
		summary("(recorded)", &st, json);
	return rc;
}

static int convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "frequency", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *in_name, *out_name = NULL;
	struct ntrace_opts opts = { 0 };
	struct ntrace_stats st;
	FILE *in, *out;
	char *end;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			out_name = optarg;
			break;
		case 'f':
			errno = 0;
			opts.frequency = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end ||
			    !opts.frequency ||
			    opts.frequency > UINT64_C(100000000000)) {
				fprintf(stderr, "nfence-trace: --frequency %s: "
					"not a frequency in Hz (1 to 1e11)\n",
					optarg);
				return 2;
			}
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage();
		}
	}
	if (optind != argc - 1)
		return usage();
	in_name = argv[optind];
	if (!strcmp(in_name, "-")) {
		in = stdin;
		in_name = "(stdin)";
	} else {
		in = fopen(in_name, "re");
		if (!in) {
			fprintf(stderr, "nfence-trace: %s: %s\n", in_name,
				strerror(errno));
			return 1;
		}
	}
	out = out_name ? fopen(out_name, "we") : stdout;
	if (!out) {
		fprintf(stderr, "nfence-trace: %s: %s\n", out_name,
			strerror(errno));
		if (in != stdin)
			fclose(in);
		return 1;
	}
	if (in != stdin && ntrace_is_dat(in)) {
		fclose(in);
		in = NULL;
		ret = ntrace_convert_dat(in_name, out, &opts, &st);
	} else {
		ret = ntrace_convert(in, in_name, out, &opts, &st);
	}
	if (in && in != stdin)
		fclose(in);
	if ((out_name ? fclose(out) : fflush(out)) != 0 && !ret) {
		fprintf(stderr, "nfence-trace: %s: %s\n",
			out_name ? out_name : "(stdout)", strerror(errno));
		ret = -1;
	}
	if (ret < 0) {
		/* Leave no half-written JSON behind. */
		if (out_name)
			unlink(out_name);
		return 1;
	}
	summary(in_name, &st, out_name ? out_name : "(stdout)");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "record"))
		return record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "convert"))
		return convert(argc - 1, argv + 1);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage_text, stdout);
		return 0;
	}
	return usage();
}
