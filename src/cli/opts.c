/* SPDX-License-Identifier: MIT */
/* opts.c - command-line parsing. Every syntax error becomes one line naming the
 * option, the problem and the way out; the caller prints it and exits 125 before
 * anything is started. Parsing stops at the first non-option (the program), so the
 * program's own arguments are never taken for calltrace's. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calltrace/opts.h"
#include "calltrace/util.h"

enum {
	OPT_FORMAT = 256,
	OPT_NO_PIN,
	OPT_COLS,
	OPT_NO_CALLERS,
	OPT_TOTALS,
	OPT_NO_DETAILS,
	OPT_VERSION,
	OPT_STATS,
	OPT_LIB,
	OPT_FOLLOW_FORKS,
	OPT_LIMIT,
	OPT_PER_THREAD,
	OPT_CLOCK,
	OPT_NO_SUSPEND,
	OPT_RAW_TIMES,
	OPT_QUIET,
	OPT_NO_DETOURS,
};

static const struct option long_opts[] = {
	{ "function", required_argument, NULL, 'f' },
	{ "count", no_argument, NULL, 'c' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "output", required_argument, NULL, 'o' },
	{ "sort", required_argument, NULL, 's' },
	{ "cols", required_argument, NULL, OPT_COLS },
	{ "no-callers", no_argument, NULL, OPT_NO_CALLERS },
	{ "totals", no_argument, NULL, OPT_TOTALS },
	{ "no-details", no_argument, NULL, OPT_NO_DETAILS },
	{ "no-pin", no_argument, NULL, OPT_NO_PIN },
	{ "no-detours", no_argument, NULL, OPT_NO_DETOURS },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "lib", required_argument, NULL, OPT_LIB },
	{ "follow-forks", no_argument, NULL, OPT_FOLLOW_FORKS },
	{ "pid", required_argument, NULL, 'p' },
	{ "duration", required_argument, NULL, 'd' },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
	{ "clock", required_argument, NULL, OPT_CLOCK },
	{ "no-suspend", no_argument, NULL, OPT_NO_SUSPEND },
	{ "raw-times", no_argument, NULL, OPT_RAW_TIMES },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

void opts_usage(FILE *out)
{
	fputs("Usage: calltrace [OPTIONS] [--] PROGRAM [ARGS...]\n"
	      "       calltrace report FILE [OPTIONS]   re-render a profile saved with --format json\n"
	      "Run PROGRAM under ptrace and report every call of its functions beneath the\n"
	      "root functions: call counts, own (OWN) and accumulated (ACC) time per\n"
	      "function and per call path.\n"
	      "\n"
	      "  -f, --function PATTERN  root functions (glob, repeatable; default main)\n"
	      "  -c, --count             call-count mode: entry breakpoints only\n"
	      "      --lib PATTERN       also trace shared objects whose file name matches\n"
	      "                          (glob, repeatable), e.g. 'libz.so*'\n"
	      "      --follow-forks      trace forked children too (default: they run\n"
	      "                          untraced and unharmed)\n"
	      "  -p, --pid PID           attach to a running process (all threads); detach\n"
	      "                          on SIGINT/SIGTERM, after -d, or when it exits\n"
	      "  -d, --duration SECONDS  stop recording after SECONDS and write the report\n"
	      "                          (the program is detached and keeps running)\n"
	      "      --format NAME       report format: fprof (default; cprof with -c), cprof,\n"
	      "                          eprof, flat, json, callgrind, folded, svg; repeatable\n"
	      "                          or comma-separated (several need -o)\n"
	      "  -o, --output FILE       write the report to FILE (default: stderr); with\n"
	      "                          several formats, FILE.<format> for each\n"
	      "  -s, --sort acc|own|calls  sort key (fprof: acc or own, default acc; eprof:\n"
	      "                          time or calls; flat: default own)\n"
	      "      --cols N            fprof: line width (default 80)\n"
	      "      --no-callers        fprof: one flat line per function\n"
	      "      --totals            fprof: merged paragraphs in the totals section;\n"
	      "                          eprof: one table for all threads\n"
	      "      --no-details        fprof: omit the per-thread sections\n"
	      "      --limit N           cprof: leave out functions called fewer than N times\n"
	      "      --per-thread        callgrind: one file per thread (FILE.TID)\n"
	      "      --clock wall|cpu    time calls by the wall clock (default) or by the\n"
	      "                          thread's own CPU time\n"
	      "      --no-suspend        wall clock: keep off-CPU time in OWN instead of the\n"
	      "                          'suspend' pseudo-function (one clock read less per stop)\n"
	      "      --raw-times         do not subtract the calibrated cost of ptrace stops\n"
	      "      --no-pin            do not pin calltrace and the program to one CPU\n"
	      "      --no-detours        int3 at every site, no detour blocks (slower: a\n"
	      "                          register write at most stops)\n"
	      "      --stats             print calls, stops and breakpoints on stderr\n"
	      "  -q, --quiet             no live status line (shown on stderr when it is a\n"
	      "                          terminal: elapsed time, calls, calls/s, threads)\n"
	      "  -h, --help              this text\n"
	      "      --version           calltrace's version\n"
	      "\n"
	      "Exit status: the program's own; 128+N if it died of signal N; 125 if\n"
	      "calltrace failed, 126 if PROGRAM cannot be executed, 127 if not found.\n",
	      out);
}

/* The message for an option getopt rejected: @arg is the argument it stopped at. */
static void unknown_option(const char *arg, char *err, size_t errlen)
{
	if (arg[0] == '-' && arg[1] == '-') {
		const char *eq = strchr(arg, '=');
		size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);

		for (const struct option *lo = long_opts; eq && lo->name; lo++) {
			if (strlen(lo->name) == len && !strncmp(lo->name, arg + 2, len) &&
			    lo->has_arg == no_argument) {
				snprintf(err, errlen, "option '--%s' takes no argument ('%s'); see calltrace --help",
					 lo->name, arg);
				return;
			}
		}
		snprintf(err, errlen, "unknown option '%s'; see calltrace --help", arg);
		return;
	}
	if (optopt > 0 && optopt < 128)
		snprintf(err, errlen, "unknown option '-%c'; see calltrace --help", optopt);
	else
		snprintf(err, errlen, "unknown option '%s'; see calltrace --help", arg);
}

static void push(const char ***arr, size_t *nr, size_t *cap, const char *s)
{
	xgrow(arr, cap, *nr + 1, sizeof(**arr));
	(*arr)[(*nr)++] = s;
}

static int add_formats(struct opts *o, size_t *cap, char *list, char *err, size_t errlen)
{
	char *save = NULL;

	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!report_find(tok)) {
			snprintf(err, errlen, "--format %s: unknown format; known formats: %s",
				 tok, report_names());
			return -1;
		}
		push(&o->formats, &o->nr_formats, cap, tok);
	}
	return 0;
}

enum opts_result opts_parse(struct opts *o, int argc, char **argv, char *err, size_t errlen)
{
	size_t cap_pat = 0, cap_fmt = 0, cap_lib = 0;
	char *end;
	long v;
	int c;

	bool report_mode = argc > 1 && !strcmp(argv[1], "report");

	memset(o, 0, sizeof(*o));
	report_opts_init(&o->report);
	opterr = 0;
	if (report_mode) {
		/* 'report FILE [OPTIONS]': options may follow the file */
		argc--;
		argv++;
	}
	optind = 0;       /* glibc: 0 reinitialises getopt (1 would keep its state) */
	/* tracing: stop at the program ('+'), its arguments are its own; report: the file
	 * may come anywhere ('-' returns it as option 1, whatever POSIXLY_CORRECT says) */
	while ((c = getopt_long(argc, argv, report_mode ? "-:f:co:s:hp:d:q" : "+:f:co:s:hp:d:q",
				long_opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!*optarg) {
				snprintf(err, errlen, "-f: empty pattern; give a function name or glob such as 'parse_*'");
				return OPTS_ERROR;
			}
			push(&o->patterns, &o->nr_patterns, &cap_pat, optarg);
			o->patterns_given = true;
			break;
		case OPT_LIB:
			if (!*optarg) {
				snprintf(err, errlen, "--lib: empty pattern; give a library file name or glob such as 'libz.so*'");
				return OPTS_ERROR;
			}
			push(&o->libs, &o->nr_libs, &cap_lib, optarg);
			break;
		case OPT_FOLLOW_FORKS:
			o->follow_forks = true;
			break;
		case 'p':
			v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v <= 0 || v > 4194304) {
				snprintf(err, errlen, "-p %s: not a process id; give a pid such as 4242", optarg);
				return OPTS_ERROR;
			}
			o->pid = (pid_t)v;
			break;
		case 'd': {
			double d = strtod(optarg, &end);

			if (*end || end == optarg || !(d > 0) || d > 1e7) {
				snprintf(err, errlen, "-d %s: not a duration; give seconds such as 10 or 0.5", optarg);
				return OPTS_ERROR;
			}
			o->duration = d;
			break;
		}
		case OPT_LIMIT:
			v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 0) {
				snprintf(err, errlen, "--limit %s: not a count; give a number such as 10", optarg);
				return OPTS_ERROR;
			}
			o->report.limit = (unsigned long)v;
			break;
		case OPT_PER_THREAD:
			o->report.per_thread = true;
			break;
		case OPT_CLOCK:
			if (!strcmp(optarg, "cpu")) {
				o->clock_cpu = true;
			} else if (!strcmp(optarg, "wall")) {
				o->clock_cpu = false;
			} else {
				snprintf(err, errlen, "--clock %s: unknown clock; use wall or cpu", optarg);
				return OPTS_ERROR;
			}
			break;
		case OPT_NO_SUSPEND:
			o->no_suspend = true;
			break;
		case OPT_RAW_TIMES:
			o->raw_times = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'c':
			o->count = true;
			break;
		case OPT_FORMAT:
			if (add_formats(o, &cap_fmt, optarg, err, errlen) < 0)
				return OPTS_ERROR;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 's':
			o->sort_given = true;
			if (!strcmp(optarg, "acc")) {
				o->report.sort = REPORT_SORT_ACC;
			} else if (!strcmp(optarg, "own")) {
				o->report.sort = REPORT_SORT_OWN;
			} else if (!strcmp(optarg, "calls")) {
				o->report.sort = REPORT_SORT_CALLS;
			} else {
				snprintf(err, errlen, "--sort %s: unknown sort key; use acc, own or calls", optarg);
				return OPTS_ERROR;
			}
			break;
		case OPT_COLS:
			v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 1 || v > 10000) {
				snprintf(err, errlen, "--cols %s: not a width; give a number from 1 to 10000", optarg);
				return OPTS_ERROR;
			}
			o->report.cols = (int)v;
			break;
		case OPT_NO_CALLERS:
			o->report.callers = false;
			break;
		case OPT_TOTALS:
			o->report.totals = true;
			break;
		case OPT_NO_DETAILS:
			o->report.details = false;
			break;
		case OPT_NO_DETOURS:
			o->no_detours = true;
			break;
		case OPT_NO_PIN:
			o->no_pin = true;
			break;
		case OPT_STATS:
			o->stats = true;
			break;
		case 'h':
			opts_usage(stdout);
			return OPTS_EXIT_OK;
		case OPT_VERSION:
			printf("calltrace %s\n", CALLTRACE_VERSION);
			return OPTS_EXIT_OK;
		case ':':
			snprintf(err, errlen, "%s: missing argument; see calltrace --help",
				 argv[optind - 1]);
			return OPTS_ERROR;
		case 1:
			/* report mode: the saved profile (a second one is an error below) */
			if (o->report_file) {
				snprintf(err, errlen, "report: '%s': one saved profile at a time; usage: calltrace report FILE [--format NAME]",
					 optarg);
				return OPTS_ERROR;
			}
			o->report_file = optarg;
			break;
		default:
			unknown_option(argv[optind - 1], err, errlen);
			return OPTS_ERROR;
		}
	}
	if (report_mode) {
		/* after "--", names are not returned as option 1 */
		for (; optind < argc; optind++) {
			if (o->report_file) {
				snprintf(err, errlen, "report: '%s': one saved profile at a time; usage: calltrace report FILE [--format NAME]",
					 argv[optind]);
				return OPTS_ERROR;
			}
			o->report_file = argv[optind];
		}
		if (!o->report_file) {
			snprintf(err, errlen, "report: no profile given; usage: calltrace report FILE [--format NAME] [-o OUT]");
			return OPTS_ERROR;
		}
		if (o->nr_patterns || o->count) {
			snprintf(err, errlen, "report: -f and -c apply when tracing, not to a saved profile");
			return OPTS_ERROR;
		}
	} else if (o->pid) {
		if (optind < argc) {
			snprintf(err, errlen, "-p %d: attach or run a program, not both ('%s' given too)",
				 o->pid, argv[optind]);
			return OPTS_ERROR;
		}
	} else if (optind >= argc) {
		snprintf(err, errlen, "no program given; usage: calltrace [OPTIONS] PROGRAM [ARGS...]");
		return OPTS_ERROR;
	}

	if (!o->nr_patterns)
		push(&o->patterns, &o->nr_patterns, &cap_pat, "main");
	if (!o->nr_formats)
		push(&o->formats, &o->nr_formats, &cap_fmt, o->count ? "cprof" : "fprof");
	if (o->nr_formats > 1 && !o->output) {
		snprintf(err, errlen, "--format: %zu formats need -o FILE (written as FILE.<format>)",
			 o->nr_formats);
		return OPTS_ERROR;
	}
	o->argv = argv + optind;
	o->argc = argc - optind;
	return OPTS_RUN;
}

void opts_fini(struct opts *o)
{
	free(o->libs);
	free(o->patterns);
	free(o->formats);
	o->patterns = NULL;
	o->formats = NULL;
}
