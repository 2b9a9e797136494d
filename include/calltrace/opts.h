/* SPDX-License-Identifier: MIT */
/* opts.h - the command line, parsed into struct opts. All syntax checks live here;
 * checks that need the file system (the program, the -o path) are in target.c. */
#ifndef CALLTRACE_OPTS_H
#define CALLTRACE_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "calltrace/report.h"

struct opts {
	const char **patterns;     /* -f: root function globs; default "main" */
	size_t nr_patterns;
	bool patterns_given;       /* -f was given (attach records everything otherwise) */
	const char **libs;         /* --lib: shared objects to trace (globs) */
	size_t nr_libs;
	bool follow_forks;         /* --follow-forks */
	pid_t pid;                 /* -p PID: attach */
	double duration;           /* -d SECONDS, 0 = until the program exits */
	const char **formats;      /* --format names, in order; default "fprof" */
	size_t nr_formats;
	const char *output;        /* -o FILE or NULL for stderr */
	bool count;                /* -c: call-count mode */
	bool no_pin;               /* --no-pin: leave CPU placement to the scheduler */
	bool no_detours;           /* --no-detours: int3 at every site */
	bool clock_cpu;            /* --clock cpu */
	bool no_suspend;           /* --no-suspend */
	bool raw_times;            /* --raw-times: no compensation for the cost of stops */
	bool quiet;                /* --quiet: no live status line */
	bool stats;                /* --stats: print stops and calls on stderr at the end */
	struct report_opts report; /* --sort, --cols, --no-callers, --totals, --no-details */
	bool sort_given;           /* --sort was given (flat defaults to own otherwise) */
	const char *report_file;   /* 'calltrace report FILE': re-render a saved profile */
	char **argv;               /* PROGRAM and its arguments (borrowed from main's argv) */
	int argc;
};

enum opts_result {
	OPTS_RUN,                  /* trace opts.argv */
	OPTS_EXIT_OK,              /* --help or --version printed: exit 0 */
	OPTS_ERROR,                /* message in err: exit 125 */
};

/* Parse @argv: 'calltrace [OPTIONS] PROGRAM [ARGS]' or 'calltrace report [OPTIONS] FILE'
 * (report mode is chosen when argv[1] is "report"). On OPTS_ERROR, @err holds one line (no "calltrace: " prefix, no newline).
 * Caller owns the arrays in @o: opts_fini(). */
enum opts_result opts_parse(struct opts *o, int argc, char **argv, char *err, size_t errlen);
void opts_fini(struct opts *o);

/* The --help text. */
void opts_usage(FILE *out);

#endif
