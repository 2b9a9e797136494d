/* SPDX-License-Identifier: MIT */
/* unit_util.c - helpers shared by the unit runners (see unit_util.h). They fail the
 * running Check test; they are not for use outside one. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "calltrace/profile.h"
#include "calltrace/report.h"

#include "unit_util.h"

/* The whole file @path, NUL-terminated. Caller frees. */
char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	ck_assert_msg(f != NULL, "cannot open %s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The report @name of @p with options @ro (NULL: the defaults). Caller frees. */
char *render(const struct profile *p, const char *name, const struct report_opts *ro)
{
	const struct report_ops *ops = report_find(name);
	struct report_opts defaults;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	ck_assert_msg(ops != NULL, "no writer %s", name);
	if (!ro) {
		report_opts_init(&defaults);
		ro = &defaults;
	}
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(ops->emit(p, ro, f), 0);
	fclose(f);
	return buf;
}

/* Fail with the first differing line (1-based) of @got and @want. */
void assert_same_text(const char *got, const char *want, const char *what)
{
	const char *g = got, *w = want;
	int line = 1;

	while (*g && *g == *w) {
		if (*g == '\n')
			line++;
		g++;
		w++;
	}
	if (!*g && !*w)
		return;
	while (g > got && g[-1] != '\n')
		g--;
	while (w > want && w[-1] != '\n')
		w--;
	ck_abort_msg("%s differs at line %d:\n got: [%.*s]\nwant: [%.*s]", what, line,
		     (int)strcspn(g, "\n"), g, (int)strcspn(w, "\n"), w);
}

/* @text parsed; fails the test if it is not JSON. Caller puts. */
json_object *parse(const char *text)
{
	json_object *o = json_tokener_parse(text);

	ck_assert_msg(o != NULL, "output is not JSON:\n%s", text);
	return o;
}

/* Borrowed member @key of @o; fails the test if absent. */
json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	ck_assert_msg(json_object_object_get_ex(o, key, &v), "no key %s", key);
	return v;
}

/* Borrowed entry of @arr whose "name" is @name; fails the test if there is none. */
json_object *find_named(json_object *arr, const char *name)
{
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *e = json_object_array_get_idx(arr, i);

		if (!strcmp(json_object_get_string(get(e, "name")), name))
			return e;
	}
	ck_abort_msg("no entry named %s", name);
	return NULL;
}
