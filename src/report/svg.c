/* SPDX-License-Identifier: MIT */
/* svg.c - placeholder for the svg writer (being written). */
#include <errno.h>

#include "calltrace/report.h"

static int emit(const struct profile *p, const struct report_opts *ro, FILE *out)
{
	(void)p;
	(void)ro;
	(void)out;
	return -ENOSYS;
}

const struct report_ops report_svg = { .name = "svg", .emit = emit };
