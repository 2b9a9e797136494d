/* SPDX-License-Identifier: MIT */
/* load.c - placeholder for the saved-profile reader (being written). */
#include <stdio.h>

#include "calltrace/report.h"

int report_load_json(const char *path, struct profile **out, char *err, size_t errlen)
{
	*out = NULL;
	snprintf(err, errlen, "%s: cannot read saved profiles yet", path);
	return -1;
}
