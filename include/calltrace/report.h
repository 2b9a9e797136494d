/* SPDX-License-Identifier: MIT */
/* report.h - report writers. Each format is one file in src/report/ behind the ops
 * table below; writers only read the profile (profile.h) and never see ptrace, libdw
 * or capstone. */
#ifndef CALLTRACE_REPORT_H
#define CALLTRACE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct profile;

enum report_sort { REPORT_SORT_ACC, REPORT_SORT_OWN, REPORT_SORT_CALLS };

struct report_opts {
	enum report_sort sort;   /* fprof: acc (default) or own; fprof has no calls key,
	                            so REPORT_SORT_CALLS sorts (and is printed) as acc */
	bool callers;            /* fprof: paragraphs (true) or flat lines */
	bool totals;             /* fprof: merged paragraphs in the totals section;
	                            eprof: one table for all threads (eprof's 'total') */
	bool details;            /* fprof: per-thread sections */
	int cols;                /* fprof: line width, default 80; values below 23 are
	                            raised to 23 as fprof does, 0 or less means 80 */
	unsigned long limit;     /* cprof: functions called fewer times are left out of
	                            their module's list (default 1, as cprof) */
	bool per_thread;         /* callgrind: one file per thread (FILE.TID) */
	const char *output;      /* the report's path, or NULL for stderr (writers that
	                            write several files derive their names from it) */
};

/* Defaults: sort acc, callers true, totals false, details true, cols 80. */
void report_opts_init(struct report_opts *ro);

struct report_ops {
	const char *name;        /* value accepted by --format */
	enum report_sort default_sort;   /* the sort key when --sort is not given */
	bool shows_callers;      /* shows caller -> callee pairs: in count mode, the
	                            engine then reads each call's return address */
	/* Write the report. 0, or -errno if writing failed. */
	int (*emit)(const struct profile *p, const struct report_opts *ro, FILE *out);
};

/* The writer for @name, or NULL if there is none. */
const struct report_ops *report_find(const char *name);

/* Comma-separated list of known format names ("fprof, json"), for messages. Static
 * storage. */
const char *report_names(void);

/* Writers. All are deterministic: the same profile gives the same bytes, whatever the
 * order in which the tree's nodes were created.
 *  fprof: formats.md section 1, byte for byte (src/report/fprof.c).
 *  json:  the object of design-brief.md section 4; the exact shape is documented at
 *         the top of src/report/json.c. */

extern const struct report_ops report_fprof;
extern const struct report_ops report_json;
extern const struct report_ops report_cprof;
extern const struct report_ops report_eprof;
extern const struct report_ops report_flat;
extern const struct report_ops report_callgrind;
extern const struct report_ops report_folded;
extern const struct report_ops report_svg;

/* Read a profile saved with --format json (the saved form of a run) back into *@out
 * (caller owns: profile_free). 0, or -1 with one line in @err naming the problem
 * (not JSON, truncated, wrong shape, unknown version). */
int report_load_json(const char *path, struct profile **out, char *err, size_t errlen);

#endif
