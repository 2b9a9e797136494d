/* SPDX-License-Identifier: MIT */
/* callgrind.c - placeholder for the callgrind writer (being written). */
#include <errno.h>

#include "calltrace/report.h"

static int emit(const struct profile *p, const struct report_opts *ro, FILE *out)
{
	(void)p;
	(void)ro;
	(void)out;
	return -ENOSYS;
}

const struct report_ops report_callgrind = { .name = "callgrind", .emit = emit };
