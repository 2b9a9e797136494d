/* SPDX-License-Identifier: MIT */
/* folded.c - placeholder for the folded writer (being written). */
#include <errno.h>

#include "calltrace/report.h"

static int emit(const struct profile *p, const struct report_opts *ro, FILE *out)
{
	(void)p;
	(void)ro;
	(void)out;
	return -ENOSYS;
}

const struct report_ops report_folded = { .name = "folded", .emit = emit };
