/* SPDX-License-Identifier: MIT */
/* report.c - the table of report writers and their shared options. Adding a format is
 * one file in src/report/ plus one line in the table below. */
#include <stddef.h>
#include <string.h>

#include "calltrace/report.h"

static const struct report_ops *const writers[] = {
	&report_fprof,
	&report_json,
	&report_cprof,
	&report_eprof,
	&report_flat,
	&report_callgrind,
	&report_folded,
	&report_svg,
};

#define NR_WRITERS (sizeof(writers) / sizeof(writers[0]))

void report_opts_init(struct report_opts *ro)
{
	ro->sort = REPORT_SORT_ACC;
	ro->callers = true;
	ro->totals = false;
	ro->details = true;
	ro->cols = 80;
	ro->limit = 1;
	ro->per_thread = false;
	ro->output = NULL;
}

const struct report_ops *report_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < NR_WRITERS; i++)
		if (!strcmp(writers[i]->name, name))
			return writers[i];
	return NULL;
}

const char *report_names(void)
{
	static char names[256];

	if (!names[0]) {
		for (size_t i = 0; i < NR_WRITERS; i++) {
			if (i)
				strncat(names, ", ", sizeof(names) - strlen(names) - 1);
			strncat(names, writers[i]->name, sizeof(names) - strlen(names) - 1);
		}
	}
	return names;
}
