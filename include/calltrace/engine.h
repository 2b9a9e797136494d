/* SPDX-License-Identifier: MIT */
/* engine.h - the tracing engine: spawns the program under ptrace, plants the
 * breakpoints, runs the one event loop and fills the profile. The only module that
 * calls ptrace and waitpid. */
#ifndef CALLTRACE_ENGINE_H
#define CALLTRACE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct profile;
struct sym_module;

struct engine_opts {
	pid_t pid;                   /* -p: attach to this process instead of spawning */
	double duration;             /* -d: stop recording after this many seconds (0: no) */
	bool follow_forks;           /* trace forked children too */
	const char **libs;           /* --lib globs on shared object base names */
	size_t nr_libs;
	bool record_all;             /* record every call from the start (attach without -f) */
	const char *path;            /* resolved program path */
	char **argv;                 /* program argv (argv[0] as the user gave it) */
	const char **patterns;       /* root function globs */
	size_t nr_patterns;
	bool pin;                    /* pin calltrace and the program to one CPU */
	bool clock_cpu;              /* --clock cpu: thread CPU time instead of wall */
	bool no_suspend;             /* do not split off-CPU time into 'suspend' */
	bool no_compensate;          /* report raw times: keep the cost of stops */
	bool status_line;            /* live status on stderr (a terminal), 4 times a second */
	bool count;                  /* count mode: entry breakpoints only (and the
	                                roots' exits), one stop per call */
	bool count_callers;          /* count mode: read each call's return address to
	                                count caller -> callee pairs (only when a report
	                                shows them: it costs a memory read per call) */
	bool no_detours;             /* plain int3 sites only: no detour blocks (the rip
	                                is then written at most stops) */
	struct sym_module *image;    /* the program's symbols, loaded while validating;
	                                the engine takes ownership */
};

struct engine_stats {
	uint64_t stops;              /* ptrace stops at calltrace's breakpoints */
	uint64_t calls;              /* traced function entries (recorded or not) */
	uint64_t recorded;           /* calls recorded in the profile */
	uint64_t nr_bps;             /* breakpoints planted */
	uint64_t nr_detoured;        /* ... of which in detour blocks (no rip write) */
	uint64_t rip_writes;         /* stops at which the thread's rip was written */
	uint64_t nr_refused;         /* functions left untraced (instruction not movable) */
	uint64_t stop_wall_ns;       /* calibrated cost of one stop, wall, as the thread sees it */
	uint64_t stop_cpu_ns;        /* calibrated CPU time one stop charges the thread */
	uint64_t handler_ns;         /* calltrace's own handling time per stop (calibration) */
	uint64_t stop_kernel_used_ns;   /* the kernel part subtracted per stop at the end */
	uint64_t stop_cost_trips;       /* round trips it was measured on (0: calibrated) */
};

/* Run the program to completion (or attach to eo->pid until it exits, the duration
 * ends or calltrace is told to stop), recording into @p. *@status receives
 * calltrace's exit status: the program's own, or 128+N if it died of signal N; 0 after
 * a detach. 0, or a negative errno if the program could not be started or attached
 * (a message was printed). */
int engine_run(const struct engine_opts *eo, struct profile *p, int *status,
	       struct engine_stats *stats);

/* Called from signal handlers: ask the loop to stop (the program is killed and the
 * report written). Async-signal-safe. */
void engine_request_stop(int sig);

#endif
