/* SPDX-License-Identifier: MIT */
/* unit_util.h - helpers shared by the unit runners: files, rendering a report into a
 * string, comparing texts line by line, and picking JSON output apart. */
#ifndef CT_UNIT_UTIL_H
#define CT_UNIT_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#include <json-c/json.h>

struct profile;
struct report_opts;

/* The profile builders also run outside a test (--write-samples), where Check's
 * assertions cannot be used. */
#define need(cond)                                                                   \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #cond); \
			abort();                                                     \
		}                                                                    \
	} while (0)

char *read_file(const char *path);
char *render(const struct profile *p, const char *name, const struct report_opts *ro);
void assert_same_text(const char *got, const char *want, const char *what);

json_object *parse(const char *text);
json_object *get(json_object *o, const char *key);
json_object *find_named(json_object *arr, const char *name);

#endif /* CT_UNIT_UTIL_H */
