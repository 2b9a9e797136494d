/* SPDX-License-Identifier: MIT */
/* eprof.c - placeholder for the eprof writer (being written). */
#include <errno.h>

#include "calltrace/report.h"

static int emit(const struct profile *p, const struct report_opts *ro, FILE *out)
{
	(void)p;
	(void)ro;
	(void)out;
	return -ENOSYS;
}

const struct report_ops report_eprof = { .name = "eprof", .emit = emit };
