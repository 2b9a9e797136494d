/* SPDX-License-Identifier: MIT */
/* e2e_util.h - helpers shared by the end-to-end runners check_e2e.c and check_real.c:
 * processes, files, the JSON report and its consistency checks, traced fixture runs.
 * Built into each runner with its CT_CALLTRACE and CT_FIXTURE_DIR. */
#ifndef CT_E2E_UTIL_H
#define CT_E2E_UTIL_H

#include <check.h>
#include <json-c/json.h>
#include <stddef.h>
#include <sys/types.h>

#ifndef CT_CALLTRACE
#error "CT_CALLTRACE (path of the calltrace executable) must be defined"
#endif
#ifndef CT_FIXTURE_DIR
#error "CT_FIXTURE_DIR (directory of the built fixtures) must be defined"
#endif

#define FIX(name) CT_FIXTURE_DIR "/" name
#define TEST_TIMEOUT 300

/* ------------------------------------------------------------------ processes */

struct buf {
	char *p;			/* NUL-terminated, may also contain NULs */
	size_t len, cap;
};

struct run {
	int status;			/* exit code, or 128+N if killed by signal N */
	struct buf out, err;
};

void buf_add(struct buf *b, const void *data, size_t len);
void run_free(struct run *r);
void run_argv(char *const argv[], const char *cwd, const char *in, size_t in_len,
	      struct run *r);
const char *err_head(struct run *r);
char *xstrdup(const char *s);
char *read_file(const char *path, size_t *len);
void write_file(const char *path, const void *data, size_t len, mode_t mode);

/* ------------------------------------------------------------------ JSON report */

long long jint(json_object *o, const char *key);
const char *jstr(json_object *o, const char *key);
json_object *json_load(const char *path);
json_object *jarr(json_object *o, const char *key);
int name_is(json_object *o, const char *name);
json_object *fn_find(json_object *root, const char *name);
long long list_calls(json_object *root, const char *owner, const char *key, const char *name);
long long fn_calls(json_object *root, const char *name);
long long edge_calls(json_object *root, const char *from, const char *to);
long long thread_path_calls(json_object *th, const char *path);
long long tree_path_calls(json_object *root, const char *path);

/* Calls per function, a function being a name in a module: after an exec, or with
 * several libraries, one name (main) can belong to several modules. A NULL module is
 * a module of its own (for tallies keyed by name alone). */
struct name_count {
	const char *name, *module;	/* borrowed from the report */
	long long n;
};

struct tally {
	struct name_count *v;
	size_t nr, cap;
};

void tally_add(struct tally *t, const char *name, const char *module, long long n);
long long tally_get_in(const struct tally *t, const char *name, const char *module);
long long tally_get(const struct tally *t, const char *name);
void tally_tree(struct tally *t, json_object *node);

void check_consistency(json_object *root);

struct count {
	const char *name;
	long long calls;
};

struct edge {
	const char *from, *to;
	long long calls;
};

#define END_COUNTS { NULL, 0 }
#define END_EDGES { NULL, NULL, 0 }

void expect_counts(json_object *root, const struct count *c, const struct edge *e);

/* ------------------------------------------------------------------ traced runs */

struct traced {
	struct run plain, traced;
	json_object *report;		/* owned */
};

void traced_free(struct traced *t);
void trace_fixture(const char *name, const char *const *opts, const char *const *args,
		   const char *in, size_t in_len, int want_status, struct traced *t);

/* ------------------------------------------------------------------ misc */

long long number_after(const char *text, const char *key);
TCase *tcase(Suite *s, const char *name);
int ptrace_permitted(void);

#endif /* CT_E2E_UTIL_H */
