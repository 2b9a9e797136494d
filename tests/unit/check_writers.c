/* SPDX-License-Identifier: MIT */
/* check_writers.c - unit tests of the cprof, eprof, flat and callgrind writers, of
 * the count-mode paths of fprof and json, and of json's latency objects. The demo
 * profile (sim_demo.c) replays the event stream of ../shared/docs/format-samples/tools/
 * gen_native_samples.py (the approach of check_report.c), so cprof, eprof and
 * callgrind must reproduce the shared native samples byte for byte (callgrind: but
 * for its creator: line, which names the version). The count-mode variant holds the
 * same calls in ct_thread edge tables, built with ctree_count().
 *
 * "check_writers --write-samples DIR" writes reports for the external readers of
 * tests/writers.cmake (callgrind_annotate, Erlang's file:consult) instead of running
 * the tests, with the figures callgrind_annotate must show. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "calltrace/erl.h"
#include "calltrace/profile.h"
#include "calltrace/report.h"

#include "sim_demo.h"
#include "unit_util.h"

#define GOLDEN_DIR CT_SOURCE_DIR "/tests/unit/golden/"
#define SAMPLES_DIR CT_SHARED_DIR "/docs/format-samples/"

/* ------------------------------------------------------------------ helpers */

static void assert_matches_file(const char *got, const char *path)
{
	char *want = read_file(path);

	assert_same_text(got, want, path);
	free(want);
}

/* Replace the value of the line starting with @key (up to its newline) by @val, in
 * place when it fits; returns @text (a new allocation when it grew). */
static char *set_line(char *text, const char *key, const char *val)
{
	char *at = strstr(text, key), *eol, *r;

	if (!at)
		return text;
	at += strlen(key);
	eol = at + strcspn(at, "\n");
	r = malloc(strlen(text) + strlen(val) + 1);
	memcpy(r, text, (size_t)(at - text));
	strcpy(r + (at - text), val);
	strcat(r, eol);
	free(text);
	return r;
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* ------------------------------------------------------------------ count mode */

struct conv {
	struct ct_thread *t;
	uint64_t ts;
};

static void copy_arc(const struct ct_arc *a, void *arg)
{
	struct conv *cv = arg;

	for (uint64_t i = 0; i < a->calls; i++)
		ctree_count(cv->t, a->caller, a->callee, cv->ts++);
}

/* The count-mode twin of @full: same functions and threads, the same calls on every
 * caller -> callee pair, recorded in edge tables; no tree, no times. */
static struct profile *count_profile(const struct profile *full)
{
	struct profile *p = profile_new();

	p->mode = CT_MODE_COUNT;
	for (size_t i = 0; i < full->nr_funcs; i++) {
		const struct ct_func *fn = &full->funcs[i];

		need(profile_add_func(p, fn->name, fn->module, fn->file, fn->line, fn->arity,
				      fn->addr) == (ct_func_id)i);
	}
	if (full->command)
		p->command = strdup(full->command);
	for (size_t i = 0; i < full->nr_threads; i++) {
		const struct ct_thread *ft = full->threads[i];
		struct conv cv = { .t = profile_add_thread(p, ft->pid, ft->tid), .ts = TS_BASE };

		cv.t->parent_pid = ft->parent_pid;
		cv.t->parent_tid = ft->parent_tid;
		cv.t->spawned_as = ft->spawned_as;
		cv.t->spawned_arg = ft->spawned_arg;
		profile_thread_arcs(full, ft, copy_arc, &cv);
	}
	return p;
}

/* ------------------------------------------------------------------ hostile names */

#define LONG_NAME_LEN 300

static const char *const odd_names[] = {
	"it's", "dq\"x", "back\\slash", "new\nline", "tab\there", "bad\xff\xfe utf8",
	"(12)paren", "caf\xc3\xa9", "\x01" "ctl\x7f", "maybe", "Upper", "",
	"name with spaces", "semi;colon",
};

static const char *const odd_modules[] = {
	"demo", "lib'q\n.so", "bad\xff.so", "[vdso]",
};

static const char *const odd_files[] = {
	"dir/with\nnl.c", NULL, "caf\xc3\xa9.c", "plain.c",
};

#define NR_ODD (sizeof(odd_names) / sizeof(odd_names[0]))

/* Two threads calling functions with every awkward name, module and file, a 300
 * character name and module, a recursive call and a suspend. */
static struct profile *names_profile(void)
{
	struct profile *p = profile_new();
	char long_name[LONG_NAME_LEN + 1];
	uint64_t ts = TS_BASE;
	ct_func_id fmain, flong, fmodlong, fsusp, ids[NR_ODD];

	memset(long_name, 'x', LONG_NAME_LEN);
	long_name[LONG_NAME_LEN] = '\0';
	fmain = profile_add_func(p, "main", "demo", "demo.c", 3, 0, 0);
	for (size_t i = 0; i < NR_ODD; i++)
		ids[i] = profile_add_func(p, odd_names[i], odd_modules[i % 4], odd_files[i % 4],
					  (int)i, (int)(i % 3), 0);
	flong = profile_add_func(p, long_name, "demo", NULL, 0, 1, 0);
	fmodlong = profile_add_func(p, "f", long_name, NULL, 0, 1, 0);
	fsusp = profile_add_func(p, "suspend", "", NULL, 0, 0, 0);
	p->command = strdup("./demo 'arg\nwith newline'");

	for (pid_t tid = 100; tid <= 101; tid++) {
		struct ct_thread *t = profile_add_thread(p, 100, tid);
		struct ct_node *m = ctree_enter(p, t, &t->root, fmain, ts++), *n, *r;

		for (size_t i = 0; i < NR_ODD; i++) {
			n = ctree_enter(p, t, m, ids[i], ts++);
			ctree_leave(p, t, n, 1000 * (i + 1), 1000 * (i + 1), ts++);
		}
		n = ctree_enter(p, t, m, flong, ts++);
		r = ctree_enter(p, t, n, flong, ts++);
		ctree_leave(p, t, r, 2000, 2000, ts++);
		ctree_leave(p, t, n, 5000, 3000, ts++);
		n = ctree_enter(p, t, m, fmodlong, ts++);
		ctree_leave(p, t, n, 7000, 7000, ts++);
		n = ctree_enter(p, t, m, fsusp, ts++);
		ctree_leave(p, t, n, 9000, 0, ts++);
		ctree_leave(p, t, m, 200000, 100000, ts++);
	}
	return p;
}

/* ------------------------------------------------------------------ cprof */

START_TEST(cprof_matches_sample)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	char *got;

	report_opts_init(&ro);
	got = render(p, "cprof", &ro);
	assert_matches_file(got, SAMPLES_DIR "native_cprof.txt");
	free(got);
	profile_free(p);
}
END_TEST

START_TEST(cprof_count_mode_matches_sample)
{
	struct profile *full = demo_profile(), *p = count_profile(full);
	struct report_opts ro;
	char *got;

	report_opts_init(&ro);
	got = render(p, "cprof", &ro);
	assert_matches_file(got, SAMPLES_DIR "native_cprof.txt");
	free(got);
	profile_free(p);
	profile_free(full);
}
END_TEST

#define CPROF_HEAD "%% cprof-style call counts: {AllCallCount, [{Module, ModuleCallCount, " \
		   "[{{Module,Function,Arity}, CallCount}]}]}\n"

/* The limit leaves functions out, never modules, and modules keep their totals. */
START_TEST(cprof_limit)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	char *got;

	report_opts_init(&ro);
	ro.limit = 10;
	got = render(p, "cprof", &ro);
	assert_same_text(got, CPROF_HEAD
			 "{203,\n"
			 " [{demo,199,\n"
			 "        [{{demo,fib,1},177}]},\n"
			 "  {'libc.so.6',4,\n"
			 "               []}]}.\n", "cprof limit 10");
	free(got);
	ro.limit = 2;
	got = render(p, "cprof", &ro);
	ck_assert_ptr_nonnull(strstr(got, "{{demo,caller_b,1},3},\n"
					  "         {{demo,costly,1},2}]},\n"));
	ck_assert_ptr_null(strstr(got, "worker"));
	free(got);
	profile_free(p);
}
END_TEST

/* Limit 0 lists uncalled functions of listed modules; a module with no calls is
 * never listed. */
START_TEST(cprof_limit0)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	char *got;

	profile_add_func(p, "unused", "demo", NULL, 0, 2, 0);
	profile_add_func(p, "lonely", "other", NULL, 0, 0, 0);
	report_opts_init(&ro);
	ro.limit = 0;
	got = render(p, "cprof", &ro);
	ck_assert_ptr_nonnull(strstr(got, "         {{demo,main,0},1},\n"
					  "         {{demo,unused,2},0}]},\n"));
	ck_assert_ptr_null(strstr(got, "other"));
	ck_assert_ptr_null(strstr(got, "suspend"));
	ck_assert(!strncmp(got + strlen(CPROF_HEAD), "{203,\n", 6));
	free(got);
	ro.limit = 1;
	got = render(p, "cprof", &ro);
	ck_assert_ptr_null(strstr(got, "unused"));
	free(got);
	profile_free(p);
}
END_TEST

/* Ties: modules by descending name, functions by descending {M,F,A}. */
START_TEST(cprof_ties)
{
	struct profile *p = profile_new();
	struct ct_thread *t = profile_add_thread(p, 1, 1);
	ct_func_id a1 = profile_add_func(p, "a", "alpha", NULL, 0, 1, 0);
	ct_func_id z = profile_add_func(p, "z", "zeta", NULL, 0, 0, 0);
	ct_func_id a0 = profile_add_func(p, "a", "alpha", NULL, 0, 0, 0);
	ct_func_id b = profile_add_func(p, "b", "alpha", NULL, 0, 0, 0);
	struct report_opts ro;
	char *got;

	p->mode = CT_MODE_COUNT;
	ctree_count(t, CT_FUNC_UNDEFINED, a1, 1);
	ctree_count(t, CT_FUNC_UNDEFINED, a0, 2);
	ctree_count(t, CT_FUNC_UNDEFINED, b, 3);
	ctree_count(t, a0, z, 4);
	ctree_count(t, b, z, 5);
	ctree_count(t, a1, z, 6);
	report_opts_init(&ro);
	got = render(p, "cprof", &ro);
	assert_same_text(got, CPROF_HEAD
			 "{6,\n"
			 " [{zeta,3,\n"
			 "        [{{zeta,z,0},3}]},\n"
			 "  {alpha,3,\n"
			 "         [{{alpha,b,0},1},\n"
			 "          {{alpha,a,1},1},\n"
			 "          {{alpha,a,0},1}]}]}.\n", "cprof ties");
	free(got);
	profile_free(p);
}
END_TEST

START_TEST(cprof_empty)
{
	struct profile *p = profile_new();
	struct report_opts ro;
	char *got;

	report_opts_init(&ro);
	got = render(p, "cprof", &ro);
	assert_same_text(got, CPROF_HEAD "{0,\n []}.\n", "empty cprof");
	free(got);
	profile_free(p);
}
END_TEST

/* Awkward names stay inside their quotes: every line of the term ends in ',' or '.',
 * long names become strings. (tests/writers.cmake consults the same output.) */
START_TEST(cprof_odd_names)
{
	struct profile *p = names_profile();
	struct report_opts ro;
	char *got, *line, *save = NULL;
	size_t nr = 0;

	report_opts_init(&ro);
	got = render(p, "cprof", &ro);
	ck_assert_ptr_nonnull(strstr(got, "'new\\nline'"));
	ck_assert_ptr_nonnull(strstr(got, "'it\\'s'"));
	ck_assert_ptr_nonnull(strstr(got, "'back\\\\slash'"));
	ck_assert_ptr_nonnull(strstr(got, "'bad\\xFF\\xFE utf8'"));
	ck_assert_ptr_nonnull(strstr(got, "\"xxxxxxxxxx"));
	ck_assert_ptr_null(strstr(got, "suspend"));
	for (line = strtok_r(got, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t n = strlen(line);

		if (nr++ == 0)
			continue;
		ck_assert_msg(n && (line[n - 1] == ',' || line[n - 1] == '.'),
			      "line %zu: [%s]", nr, line);
	}
	/* comment, "{N,", and per module a header plus one line per function */
	ck_assert_uint_eq(nr, 2 + 5 + NR_ODD + 3);
	free(got);
	profile_free(p);
}
END_TEST

/* ------------------------------------------------------------------ eprof */

START_TEST(eprof_procs_matches_sample)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	char *got;

	report_opts_init(&ro);
	got = render(p, "eprof", &ro);
	assert_matches_file(got, SAMPLES_DIR "native_eprof_procs.txt");
	free(got);
	profile_free(p);
}
END_TEST

START_TEST(eprof_total_matches_sample)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	char *got;

	report_opts_init(&ro);
	ro.totals = true;
	got = render(p, "eprof", &ro);
	assert_matches_file(got, SAMPLES_DIR "native_eprof_total.txt");
	free(got);
	ro.sort = REPORT_SORT_OWN;     /* own and acc both mean TIME */
	got = render(p, "eprof", &ro);
	assert_matches_file(got, SAMPLES_DIR "native_eprof_total.txt");
	free(got);
	profile_free(p);
}
END_TEST

/* sort calls: ascending CALLS, ties by ascending {M,F,A}. */
START_TEST(eprof_sort_calls)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	char *got;

	report_opts_init(&ro);
	ro.totals = true;
	ro.sort = REPORT_SORT_CALLS;
	got = render(p, "eprof", &ro);
	assert_same_text(got, "FUNCTION                      CALLS        %   TIME  [uS / CALLS]\n"
		"--------                      -----  -------   ----  [----------]\n"
		"demo:main/0                       1     8.38   2750  [   2750.00]\n"
		"demo:worker/1                     1     0.98    320  [    320.00]\n"
		"'libc.so.6':printf/0              1    15.85   5200  [   5200.00]\n"
		"'libc.so.6':pthread_create/0      1    42.68  14000  [  14000.00]\n"
		"'libc.so.6':pthread_join/0        1     3.05   1000  [   1000.00]\n"
		"'libc.so.6':start_thread/0        1     5.79   1900  [   1900.00]\n"
		"demo:costly/1                     2    10.52   3450  [   1725.00]\n"
		"demo:caller_b/1                   3     0.24     78  [     26.00]\n"
		"demo:caller_a/1                   4     0.32    106  [     26.50]\n"
		"demo:shared/1                     5     0.14     45  [      9.00]\n"
		"demo:cheap/1                      6     0.15     48  [      8.00]\n"
		"demo:fib/1                      177    11.90   3903  [     22.05]\n"
		"----------------------------  -----  -------  -----  [----------]\n"
		"Total:                          203  100.00%  32800  [    161.58]\n",
		"eprof sort calls");
	free(got);
	profile_free(p);
}
END_TEST

/* Count mode: same calls, TIME 0 everywhere, every share 0.00 (division by zero),
 * rows sorted by calls whatever ro->sort says. */
START_TEST(eprof_count_mode)
{
	struct profile *full = demo_profile(), *p = count_profile(full);
	struct report_opts ro;
	char *got;

	report_opts_init(&ro);
	got = render(p, "eprof", &ro);
	ck_assert_ptr_nonnull(strstr(got,
		"\n****** Process <4242.4243>    -- 0.00 % of profiled time *** \n"
		"FUNCTION                    CALLS        %  TIME  [uS / CALLS]\n"
		"--------                    -----  -------  ----  [----------]\n"
		"demo:costly/1                   1     0.00     0  [      0.00]\n"
		"demo:worker/1                   1     0.00     0  [      0.00]\n"
		"'libc.so.6':start_thread/0      1     0.00     0  [      0.00]\n"
		"demo:cheap/1                    5     0.00     0  [      0.00]\n"
		"--------------------------  -----  -------  ----  [----------]\n"
		"Total:                          8  100.00%     0  [      0.00]\n"));
	ck_assert_ptr_nonnull(strstr(got, "demo:fib/1                      177     0.00     0  "
					  "[      0.00]\n-----"));
	ck_assert_ptr_nonnull(strstr(got, "Total:                          195  100.00%     0  "
					  "[      0.00]\n"));
	ck_assert_ptr_null(strstr(got, "suspend"));
	free(got);
	profile_free(p);
	profile_free(full);
}
END_TEST

/* Every line of a table has the same width in characters, whatever the names. */
static void assert_tables_aligned(const char *text)
{
	char *copy = strdup(text), *line, *save = NULL;
	size_t width = 0, nr = 0;

	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t w = erl_text_width(line);

		if (!strncmp(line, "******", 6)) {
			width = 0;
			continue;
		}
		nr++;
		if (!width)
			width = w;
		ck_assert_msg(w == width, "misaligned line [%s]: %zu, not %zu", line, w, width);
		ck_assert_msg(line[strlen(line) - 1] == ']', "line [%s]", line);
	}
	ck_assert_uint_gt(nr, 4);
	free(copy);
}

START_TEST(eprof_odd_names)
{
	struct profile *p = names_profile();
	struct report_opts ro;
	char *got;

	report_opts_init(&ro);
	got = render(p, "eprof", &ro);
	assert_tables_aligned(got);
	ck_assert_ptr_nonnull(strstr(got, "\n'lib\\'q\\n.so':'dq\"x'/1  "));
	/* two blocks: empty line, header, 2 head lines, 17 rows, rule, total */
	ck_assert_uint_eq(count_lines(got), 2 * (1 + 1 + 2 + 17 + 2));
	free(got);
	ro.totals = true;
	got = render(p, "eprof", &ro);
	assert_tables_aligned(got);
	free(got);
	profile_free(p);
}
END_TEST

START_TEST(eprof_empty)
{
	struct profile *p = profile_new();
	struct report_opts ro;
	char *got;

	report_opts_init(&ro);
	ro.totals = true;
	got = render(p, "eprof", &ro);
	assert_same_text(got,
			 "FUNCTION  CALLS        %  TIME  [uS / CALLS]\n"
			 "--------  -----  -------  ----  [----------]\n"
			 "--------  -----  -------  ----  [----------]\n"
			 "Total:        0  100.00%     0  [      0.00]\n", "empty eprof");
	free(got);
	profile_free(p);
}
END_TEST

/* ------------------------------------------------------------------ callgrind */

/* The shared samples name their creator "calltrace (format sample)". */
static char *as_sample(char *text)
{
	return set_line(text, "creator: ", "calltrace (format sample)");
}

START_TEST(callgrind_matches_sample)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	char *got;

	report_opts_init(&ro);
	got = render(p, "callgrind", &ro);
	ck_assert_ptr_nonnull(strstr(got, "\ncreator: calltrace " CALLTRACE_VERSION "\n"));
	got = as_sample(got);
	assert_matches_file(got, SAMPLES_DIR "callgrind.out.native");
	free(got);
	profile_free(p);
}
END_TEST

/* A temporary directory for files the writers create. Caller frees. */
static char *temp_dir(void)
{
	char *d = strdup("/tmp/check_writers.XXXXXX");

	ck_assert_ptr_nonnull(mkdtemp(d));
	return d;
}

START_TEST(callgrind_per_thread)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	char *dir = temp_dir(), path[4096], part[4200], *got;

	snprintf(path, sizeof(path), "%s/callgrind.out", dir);
	report_opts_init(&ro);
	ro.per_thread = true;
	ro.output = path;
	got = as_sample(render(p, "callgrind", &ro));
	assert_matches_file(got, SAMPLES_DIR "callgrind.out.native");   /* the stream: merged */
	free(got);
	snprintf(part, sizeof(part), "%s.4243", path);
	got = as_sample(read_file(part));
	assert_matches_file(got, SAMPLES_DIR "callgrind.out.native.4243");
	free(got);
	unlink(part);
	snprintf(part, sizeof(part), "%s.4242", path);
	got = read_file(part);
	ck_assert_ptr_nonnull(strstr(got, "\nthread: 4242\npart: 1\n"));
	ck_assert_ptr_nonnull(strstr(got, "fn=(1) [thread 4242.4242]\n"));
	ck_assert_ptr_null(strstr(got, "4243"));
	free(got);
	unlink(part);
	rmdir(dir);
	free(dir);
	profile_free(p);
}
END_TEST

START_TEST(callgrind_per_thread_needs_output)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	report_opts_init(&ro);
	ro.per_thread = true;
	ck_assert_int_eq(report_callgrind.emit(p, &ro, f), -EINVAL);
	fclose(f);
	ck_assert_uint_eq(len, 0);
	free(buf);
	profile_free(p);
}
END_TEST

START_TEST(callgrind_unwritable_part)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	report_opts_init(&ro);
	ro.per_thread = true;
	ro.output = "/nonexistent-dir/callgrind.out";
	ck_assert_int_eq(report_callgrind.emit(p, &ro, f), -ENOENT);
	fclose(f);
	free(buf);
	profile_free(p);
}
END_TEST

/* Check a Callgrind file line by line: known header keys, position lines with
 * well-formed compressed names, calls= followed by a cost line, numeric cost lines,
 * no control bytes or invalid UTF-8; summary: == totals: == the self costs' sum. */
static void check_callgrind(const char *text)
{
	char *copy = strdup(text), *line, *save = NULL;
	static const char *const keys[] = {
		"version: ", "creator: ", "pid: ", "cmd: ", "thread: ", "part: ", "desc: ",
		"positions: ", "events: ", "summary: ", "totals: ",
	};
	uint64_t self = 0, summary = UINT64_MAX, totals = UINT64_MAX;
	bool after_calls = false;
	size_t n = strlen(text);

	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len = erl_utf8_decode(text + i, n - i, &cp);

		ck_assert_msg(len && (cp >= 0x20 || cp == '\n') && cp != 0x7f,
			      "bad byte 0x%02x at %zu", (unsigned char)text[i], i);
		i += len;
	}
	ck_assert(!strncmp(text, "# callgrind format\nversion: 1\n", 30));
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *eq = strchr(line, '=');
		bool known = line[0] == '#';
		uint64_t a, b;
		char rest;

		for (size_t k = 0; !known && k < sizeof(keys) / sizeof(keys[0]); k++)
			known = !strncmp(line, keys[k], strlen(keys[k]));
		if (!strncmp(line, "summary: ", 9))
			summary = strtoull(line + 9, NULL, 10);
		if (!strncmp(line, "totals: ", 8))
			totals = strtoull(line + 8, NULL, 10);
		if (known) {
			ck_assert(!after_calls);
			continue;
		}
		if (!strncmp(line, "calls=", 6)) {
			ck_assert_int_eq(sscanf(line, "calls=%" SCNu64 " %" SCNu64 "%c", &a, &b,
						&rest), 2);
			after_calls = true;
			continue;
		}
		if (eq && strspn(line, "obflcifne") == (size_t)(eq - line)) {
			static const char *const pos[] = { "ob", "fl", "fn", "cob", "cfi", "cfn" };
			bool ok = false;
			unsigned id;
			int used = 0;

			for (size_t k = 0; k < 6; k++)
				ok |= strlen(pos[k]) == (size_t)(eq - line) &&
				      !strncmp(line, pos[k], strlen(pos[k]));
			ck_assert_msg(ok, "line [%s]", line);
			ck_assert_msg(sscanf(eq + 1, "(%u)%n", &id, &used) == 1 && used > 0,
				      "line [%s]", line);
			if (eq[1 + used]) {
				const char *name = eq + 1 + used + 1;

				ck_assert_msg(eq[1 + used] == ' ' && *name, "line [%s]", line);
				ck_assert_msg(!(name[0] == '(' && name[1] >= '0' && name[1] <= '9'),
					      "line [%s]", line);
			}
			ck_assert(!after_calls);
			continue;
		}
		ck_assert_msg(sscanf(line, "%" SCNu64 " %" SCNu64 "%c", &a, &b, &rest) == 2,
			      "line [%s]", line);
		if (!after_calls)
			self += b;
		after_calls = false;
	}
	ck_assert_uint_eq(summary, self);
	ck_assert_uint_eq(totals, self);
	free(copy);
}

START_TEST(callgrind_sample_is_well_formed)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	char *got;

	report_opts_init(&ro);
	got = render(p, "callgrind", &ro);
	check_callgrind(got);
	free(got);
	profile_free(p);
}
END_TEST

static uint64_t total_calls(const struct profile *p)
{
	uint64_t n = 0;

	for (size_t i = 0; i < p->nr_threads; i++)
		for (size_t k = 0; k < p->threads[i]->nr_edges; k++)
			n += p->threads[i]->edges[k].calls;
	return n;
}

/* Count mode: events calls, self and inclusive costs are call counts. */
START_TEST(callgrind_count_mode)
{
	struct profile *full = demo_profile(), *p = count_profile(full);
	struct report_opts ro;
	char *got, want[64];

	report_opts_init(&ro);
	got = render(p, "callgrind", &ro);
	check_callgrind(got);
	ck_assert_ptr_nonnull(strstr(got, "\npositions: line\nevents: calls\n"));
	snprintf(want, sizeof(want), "\nsummary: %" PRIu64 "\n", total_calls(p));
	ck_assert_ptr_nonnull(strstr(got, want));
	ck_assert_uint_eq(total_calls(p), 204);   /* 203 counted by cprof, and suspend */
	ck_assert_ptr_nonnull(strstr(got, "fn=(10) fib\n5 177\ncfn=(10)\ncalls=176 5\n5 176\n"));
	ck_assert_ptr_nonnull(strstr(got, "fn=(1) [thread 4242.4242]\n0 0\ncob=(2) demo\n"
					  "cfi=(2) demo.c\ncfn=(2) main\ncalls=1 25\n0 1\n"));
	free(got);
	profile_free(p);
	profile_free(full);
}
END_TEST

START_TEST(callgrind_odd_names)
{
	struct profile *p = names_profile(), *c = count_profile(p);
	struct report_opts ro;
	char *got;

	report_opts_init(&ro);
	got = render(p, "callgrind", &ro);
	check_callgrind(got);
	ck_assert_ptr_nonnull(strstr(got, "\ncmd: ./demo 'arg?with newline'\n"));
	ck_assert_ptr_nonnull(strstr(got, " new?line\n"));
	ck_assert_ptr_nonnull(strstr(got, " bad?? utf8\n"));
	ck_assert_ptr_nonnull(strstr(got, " ?12)paren\n"));
	ck_assert_ptr_nonnull(strstr(got, " caf\xc3\xa9\n"));
	ck_assert_ptr_nonnull(strstr(got, " dir/with?nl.c\n"));
	ck_assert_ptr_nonnull(strstr(got, " [kernel]\n"));
	free(got);
	got = render(c, "callgrind", &ro);
	check_callgrind(got);
	free(got);
	profile_free(c);
	profile_free(p);
}
END_TEST

/* Recursion: the recursive edge carries 0, the outer call the whole ACC. */
START_TEST(callgrind_recursive_root)
{
	struct profile *p = profile_new();
	struct ct_thread *t = profile_add_thread(p, 7, 8);
	ct_func_id a = profile_add_func(p, "a", "prog", "a.c", 1, 0, 0);
	ct_func_id b = profile_add_func(p, "b", "prog", "a.c", 2, 0, 0);
	struct ct_node *n1 = ctree_enter(p, t, &t->root, a, 10);
	struct ct_node *n2 = ctree_enter(p, t, n1, b, 11);
	struct ct_node *n3 = ctree_enter(p, t, n2, a, 12);
	struct report_opts ro;
	char *got;

	ctree_leave(p, t, n3, 100, 100, 112);
	ctree_leave(p, t, n2, 300, 200, 311);
	ctree_leave(p, t, n1, 1000, 700, 1010);
	p->command = strdup("/usr/bin/prog --flag");
	report_opts_init(&ro);
	got = render(p, "callgrind", &ro);
	check_callgrind(got);
	ck_assert_ptr_nonnull(strstr(got,
		"ob=(1) [calltrace]\nfl=(1) ???\nfn=(1) [thread 7.8]\n0 0\n"
		"cob=(2) prog\ncfi=(2) a.c\ncfn=(2) a\ncalls=1 1\n0 1000\n\n"
		"ob=(2)\nfl=(2)\nfn=(2)\n1 800\ncfn=(3) b\ncalls=1 2\n1 300\n\n"
		"ob=(2)\nfl=(2)\nfn=(3)\n2 200\ncfn=(2)\ncalls=1 1\n2 0\n\n"
		"totals: 1000\n"));
	free(got);
	profile_free(p);
}
END_TEST

/* ------------------------------------------------------------------ flat */

static void check_golden(const struct profile *p, const char *format,
			 const struct report_opts *ro, const char *golden)
{
	char path[4096], *got = render(p, format, ro);

	snprintf(path, sizeof(path), GOLDEN_DIR "%s", golden);
	assert_matches_file(got, path);
	free(got);
}

/* Reviewed by hand: own-time order, running cum%, per-call times, latency columns
 * from the histograms, suspend without a module. */
START_TEST(flat_demo_golden)
{
	struct profile *p = demo_profile();
	struct report_opts ro;

	report_opts_init(&ro);
	ro.sort = REPORT_SORT_OWN;
	check_golden(p, "flat", &ro, "flat_demo.txt");
	profile_free(p);
}
END_TEST

START_TEST(flat_count_golden)
{
	struct profile *full = demo_profile(), *p = count_profile(full);
	struct report_opts ro;

	report_opts_init(&ro);
	ro.sort = REPORT_SORT_CALLS;
	check_golden(p, "flat", &ro, "flat_count.txt");
	profile_free(p);
	profile_free(full);
}
END_TEST

/* The name column of the first row under each sort key. */
static void assert_first_row(const struct profile *p, enum report_sort sort, const char *name)
{
	struct report_opts ro;
	char *got, *row;

	report_opts_init(&ro);
	ro.sort = sort;
	got = render(p, "flat", &ro);
	row = strstr(got, "function\n");
	ck_assert_ptr_nonnull(row);
	row += strlen("function\n");
	row[strcspn(row, "\n")] = '\0';
	ck_assert_msg(strstr(row, name) != NULL, "first row [%s], want %s", row, name);
	free(got);
}

START_TEST(flat_sort_keys)
{
	struct profile *p = demo_profile();

	assert_first_row(p, REPORT_SORT_OWN, "  pthread_create [libc.so.6]");
	assert_first_row(p, REPORT_SORT_ACC, "  main [demo] demo.c:25");
	assert_first_row(p, REPORT_SORT_CALLS, "  fib [demo] demo.c:5");
	profile_free(p);
}
END_TEST

/* A function entered but never left has no histogram: its latency columns are '-'. */
START_TEST(flat_no_histogram)
{
	struct profile *p = profile_new();
	struct ct_thread *t = profile_add_thread(p, 1, 1);
	ct_func_id f = profile_add_func(p, "open_ended", "prog", NULL, 0, 0, 0);
	struct report_opts ro;
	char *got;

	ctree_enter(p, t, &t->root, f, 5);
	report_opts_init(&ro);
	got = render(p, "flat", &ro);
	ck_assert_ptr_nonnull(strstr(got, "\n 0.000  0.00  0.00      1      0.00      0.00    -"
					  "    -    -    -    -  open_ended [prog]\n"));
	ck_assert_ptr_nonnull(strstr(got, "total own time 0.000 ms, 1 functions, 1 calls"));
	free(got);
	profile_free(p);
}
END_TEST

START_TEST(flat_odd_names)
{
	struct profile *p = names_profile();
	struct report_opts ro;
	char *got;

	report_opts_init(&ro);
	got = render(p, "flat", &ro);
	/* header, empty line, column heads, 18 functions (suspend included) */
	ck_assert_uint_eq(count_lines(got), 3 + 18);
	ck_assert_ptr_nonnull(strstr(got, "  new?line [[vdso]] plain.c:3\n"));
	ck_assert_ptr_nonnull(strstr(got, "  bad?? utf8 [lib'q?.so]\n"));
	for (const char *s = got; *s; s++)
		ck_assert((unsigned char)*s >= 0x20 || *s == '\n');
	free(got);
	profile_free(p);
}
END_TEST

/* ------------------------------------------------------------------ fprof, count mode */

/* Reviewed by hand: the CNT of native_fprof.txt, every time 0.000 but the totals'
 * ACC (the traced span), no initial_calls line. */
START_TEST(fprof_count_golden)
{
	struct profile *full = demo_profile(), *p = count_profile(full);
	struct report_opts ro;

	report_opts_init(&ro);
	check_golden(p, "fprof", &ro, "fprof_count.txt");
	profile_free(p);
	profile_free(full);
}
END_TEST

/* ------------------------------------------------------------------ json */

static bool is_null(json_object *o)
{
	return json_object_get_type(o) == json_type_null;
}

START_TEST(json_latency)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	json_object *root, *funcs, *lat, *th;
	char *text;
	uint64_t p50, p95, p99;

	report_opts_init(&ro);
	text = render(p, "json", &ro);
	root = parse(text);
	funcs = get(root, "functions");
	lat = get(find_named(funcs, "fib"), "latency");
	ck_assert_uint_eq(json_object_get_uint64(get(lat, "count")), 177);
	ck_assert_uint_eq(json_object_get_uint64(get(lat, "min_ns")), 18037);
	ck_assert_uint_eq(json_object_get_uint64(get(lat, "max_ns")), 3903061);
	p50 = json_object_get_uint64(get(lat, "p50_ns"));
	p95 = json_object_get_uint64(get(lat, "p95_ns"));
	p99 = json_object_get_uint64(get(lat, "p99_ns"));
	ck_assert(18037 <= p50 && p50 <= p95 && p95 <= p99 && p99 <= 3903061);
	ck_assert_uint_eq(p50, ct_hist_quantile(p->funcs[F_FIB].hist, 0.5));
	ck_assert_uint_eq(p99, ct_hist_quantile(p->funcs[F_FIB].hist, 0.99));
	lat = get(find_named(funcs, "suspend"), "latency");
	ck_assert_uint_eq(json_object_get_uint64(get(lat, "count")), 1);
	lat = get(find_named(funcs, "costly"), "latency");
	ck_assert_uint_eq(json_object_get_uint64(get(lat, "count")), 2);
	ck_assert_uint_eq(json_object_get_uint64(get(lat, "min_ns")), 1700037);
	ck_assert_uint_eq(json_object_get_uint64(get(lat, "max_ns")), 1750037);
	th = json_object_array_get_idx(get(root, "threads"), 0);
	ck_assert(!is_null(get(th, "tree")));
	ck_assert(is_null(get(th, "edges")));
	json_object_put(root);
	free(text);
	profile_free(p);
}
END_TEST

/* Drop the keys added after the first full-mode layout ("latency", "edges",
 * "stop_cost"). */
static void strip_new_keys(json_object *o)
{
	if (json_object_is_type(o, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(o); i++)
			strip_new_keys(json_object_array_get_idx(o, i));
		return;
	}
	if (!json_object_is_type(o, json_type_object))
		return;
	json_object_object_del(o, "latency");
	json_object_object_del(o, "edges");
	json_object_object_del(o, "stop_cost");
	json_object_object_foreach(o, key, val) {
		(void)key;
		strip_new_keys(val);
	}
}

/* Full mode is the saved layout of before plus "latency" and "edges": null. The
 * golden file was written by the json writer before these were added. */
START_TEST(json_full_mode_unchanged)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	json_object *got, *want;
	char *text, *old;

	report_opts_init(&ro);
	text = render(p, "json", &ro);
	got = parse(text);
	strip_new_keys(got);
	old = read_file(GOLDEN_DIR "json_demo_v1.json");
	want = parse(old);
	ck_assert_msg(json_object_equal(got, want), "full-mode JSON changed");
	json_object_put(got);
	json_object_put(want);
	free(old);
	free(text);
	profile_free(p);
}
END_TEST

START_TEST(json_count_mode_edges)
{
	struct profile *full = demo_profile(), *p = count_profile(full);
	struct report_opts ro;
	json_object *root, *funcs, *f, *callers, *ths, *edges, *e;
	char *text;
	bool found = false;

	report_opts_init(&ro);
	text = render(p, "json", &ro);
	root = parse(text);
	ck_assert_str_eq(json_object_get_string(get(root, "mode")), "count");
	funcs = get(root, "functions");
	ck_assert_int_eq((int)json_object_array_length(funcs), NR_DEMO_FUNCS);
	f = find_named(funcs, "fib");
	ck_assert_int_eq(json_object_get_int(get(f, "calls")), 177);
	ck_assert(is_null(get(f, "own_ns")) && is_null(get(f, "acc_ns")));
	ck_assert(is_null(get(f, "latency")));
	callers = get(f, "callers");
	ck_assert_int_eq((int)json_object_array_length(callers), 2);
	ck_assert_int_eq(json_object_get_int(get(find_named(callers, "fib"), "calls")), 176);
	ck_assert(is_null(get(find_named(callers, "fib"), "acc_ns")));
	f = find_named(funcs, "main");
	ck_assert_int_eq(json_object_get_int(get(f, "calls")), 1);
	ck_assert_int_eq((int)json_object_array_length(get(f, "callers")), 0);
	ck_assert_int_eq((int)json_object_array_length(get(f, "callees")), 8);
	ck_assert_int_eq(json_object_get_int(get(find_named(funcs, "cheap"), "calls")), 6);

	ths = get(root, "threads");
	ck_assert_int_eq(json_object_get_int(get(json_object_array_get_idx(ths, 0), "tid")), 4242);
	ck_assert(is_null(get(json_object_array_get_idx(ths, 0), "tree")));
	edges = get(json_object_array_get_idx(ths, 0), "edges");
	ck_assert_int_eq((int)json_object_array_length(edges), 15);
	e = json_object_array_get_idx(edges, 0);
	ck_assert_str_eq(json_object_get_string(get(get(e, "caller"), "name")), "fib");
	ck_assert_str_eq(json_object_get_string(get(get(e, "callee"), "name")), "fib");
	ck_assert_int_eq(json_object_get_int(get(e, "calls")), 176);
	for (size_t i = 0; i < json_object_array_length(edges); i++) {
		e = json_object_array_get_idx(edges, i);
		if (strcmp(json_object_get_string(get(get(e, "caller"), "name")), "undefined"))
			continue;
		ck_assert_str_eq(json_object_get_string(get(get(e, "caller"), "module")), "");
		ck_assert_str_eq(json_object_get_string(get(get(e, "callee"), "name")), "main");
		ck_assert_str_eq(json_object_get_string(get(get(e, "callee"), "module")), "demo");
		ck_assert_int_eq(json_object_get_int(get(e, "calls")), 1);
		found = true;
	}
	ck_assert(found);
	edges = get(json_object_array_get_idx(ths, 1), "edges");
	ck_assert_int_eq((int)json_object_array_length(edges), 4);
	json_object_put(root);
	free(text);
	profile_free(p);
	profile_free(full);
}
END_TEST

/* In count mode a caller seen only as a caller is still a function of the list. */
START_TEST(json_count_mode_caller_only)
{
	struct profile *p = profile_new();
	struct ct_thread *t = profile_add_thread(p, 1, 2);
	ct_func_id a = profile_add_func(p, "outer", "prog", NULL, 0, 0, 0);
	ct_func_id b = profile_add_func(p, "inner", "prog", NULL, 0, 0, 0);
	struct report_opts ro;
	json_object *root, *f;
	char *text;

	p->mode = CT_MODE_COUNT;
	ctree_count(t, a, b, 1);
	ctree_count(t, a, b, 2);
	report_opts_init(&ro);
	text = render(p, "json", &ro);
	root = parse(text);
	f = find_named(get(root, "functions"), "outer");
	ck_assert_int_eq(json_object_get_int(get(f, "calls")), 0);
	ck_assert_int_eq(json_object_get_int(get(find_named(get(f, "callees"), "inner"), "calls")),
			 2);
	json_object_put(root);
	free(text);
	profile_free(p);
}
END_TEST

/* ------------------------------------------------------------------ sample writer */

static int write_one(const char *dir, const char *name, const struct profile *p,
		     const char *format, struct report_opts *ro)
{
	char path[4096];
	const struct report_ops *ops = report_find(format);
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || !ops) {
		fprintf(stderr, "check_writers: %s: %s\n", path, strerror(errno));
		return 1;
	}
	ro->output = path;
	rc = ops->emit(p, ro, f);
	ro->output = NULL;
	if (fclose(f) != 0 || rc < 0) {
		fprintf(stderr, "check_writers: %s: write failed (%d)\n", path, rc);
		return 1;
	}
	return 0;
}

/* What callgrind_annotate --inclusive=yes --tree=calling must show for the threads
 * @ths of @p, worked out from the profile's arcs by fprof's rules (not by the
 * writer): "T total", "F inclusive key" per function, "C calls key > key" per edge,
 * keys as callgrind_annotate prints them: "file:function [object]". */
struct expect {
	const struct profile *p;
	size_t nf, root;
	uint64_t *inc, *self, *calls;   /* calls: (nf + threads) x nf */
};

static void expect_arc(const struct ct_arc *a, void *arg)
{
	struct expect *x = arg;
	size_t caller = a->caller == CT_FUNC_UNDEFINED ? x->root : a->caller;
	bool count = x->p->mode == CT_MODE_COUNT;
	bool pseudo = !x->p->funcs[a->callee].module[0];
	uint64_t inc = count ? a->calls : a->acc_ns;

	x->calls[caller * x->nf + a->callee] += a->calls;
	x->inc[a->callee] += inc;
	if (caller == x->root)
		x->inc[x->root] += inc;
	x->self[a->callee] += count ? a->calls : pseudo ? a->acc_ns : a->own_ns;
}

static void expect_key(const struct expect *x, struct ct_thread *const *ths, size_t node,
		       char *buf, size_t n)
{
	const struct ct_func *fn;

	if (node >= x->nf) {
		snprintf(buf, n, "???:[thread %d.%d] [[calltrace]]", (int)ths[node - x->nf]->pid,
			 (int)ths[node - x->nf]->tid);
		return;
	}
	fn = &x->p->funcs[node];
	snprintf(buf, n, "%s:%s [%s]", fn->file ? fn->file : "???", fn->name,
		 fn->module[0] ? fn->module : "[kernel]");
}

static int write_expected(const char *dir, const char *name, const struct profile *p,
			  struct ct_thread *const *ths, size_t nr)
{
	struct expect x = { .p = p, .nf = p->nr_funcs };
	size_t nodes = p->nr_funcs + nr;
	uint64_t total = 0;
	char path[4096], ka[1024], kb[1024];
	FILE *f;

	x.inc = calloc(nodes, sizeof(*x.inc));
	x.self = calloc(nodes, sizeof(*x.self));
	x.calls = calloc(nodes * x.nf, sizeof(*x.calls));
	for (size_t k = 0; k < nr; k++) {
		x.root = x.nf + k;
		profile_thread_arcs(p, ths[k], expect_arc, &x);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return 1;
	for (size_t i = 0; i < nodes; i++)
		total += x.self[i];
	fprintf(f, "T %" PRIu64 "\n", total);
	for (size_t i = 0; i < nodes; i++) {
		if (!x.inc[i])
			continue;
		expect_key(&x, ths, i, ka, sizeof(ka));
		fprintf(f, "F %" PRIu64 " %s\n", x.inc[i], ka);
	}
	for (size_t i = 0; i < nodes; i++) {
		for (size_t j = 0; j < x.nf; j++) {
			if (!x.calls[i * x.nf + j])
				continue;
			expect_key(&x, ths, i, ka, sizeof(ka));
			expect_key(&x, ths, j, kb, sizeof(kb));
			fprintf(f, "C %" PRIu64 " %s > %s\n", x.calls[i * x.nf + j], ka, kb);
		}
	}
	free(x.inc);
	free(x.self);
	free(x.calls);
	return fclose(f) != 0;
}

/* Reports for tests/writers.cmake: cprof_*.txt for file:consult; callgrind.out.* for
 * callgrind_annotate, each with a .expected file when its figures are known (the
 * per-thread parts of callgrind.out.pt included); flat and eprof text to look at. */
static int write_samples(const char *dir)
{
	struct profile *demo = demo_profile(), *count = count_profile(demo);
	struct profile *names = names_profile(), *ncount = count_profile(names);
	struct profile *empty = profile_new();
	struct report_opts ro;
	int bad = 0;

	report_opts_init(&ro);
	bad |= write_one(dir, "cprof_demo.txt", demo, "cprof", &ro);
	bad |= write_one(dir, "cprof_count.txt", count, "cprof", &ro);
	bad |= write_one(dir, "cprof_names.txt", names, "cprof", &ro);
	bad |= write_one(dir, "cprof_names_count.txt", ncount, "cprof", &ro);
	bad |= write_one(dir, "cprof_empty.txt", empty, "cprof", &ro);
	ro.limit = 0;
	bad |= write_one(dir, "cprof_limit0.txt", demo, "cprof", &ro);
	ro.limit = 10;
	bad |= write_one(dir, "cprof_limit10.txt", demo, "cprof", &ro);

	report_opts_init(&ro);
	bad |= write_one(dir, "callgrind.out.demo", demo, "callgrind", &ro);
	bad |= write_expected(dir, "callgrind.out.demo.expected", demo, demo->threads,
			      demo->nr_threads);
	bad |= write_one(dir, "callgrind.out.count", count, "callgrind", &ro);
	bad |= write_expected(dir, "callgrind.out.count.expected", count, count->threads,
			      count->nr_threads);
	bad |= write_one(dir, "callgrind.out.names", names, "callgrind", &ro);
	bad |= write_one(dir, "callgrind.out.names_count", ncount, "callgrind", &ro);
	ro.per_thread = true;
	bad |= write_one(dir, "callgrind.out.pt", demo, "callgrind", &ro);
	bad |= write_expected(dir, "callgrind.out.pt.expected", demo, demo->threads,
			      demo->nr_threads);
	for (size_t i = 0; i < demo->nr_threads; i++) {
		char name[64];

		snprintf(name, sizeof(name), "callgrind.out.pt.%d.expected",
			 (int)demo->threads[i]->tid);
		bad |= write_expected(dir, name, demo, &demo->threads[i], 1);
	}

	report_opts_init(&ro);
	ro.sort = REPORT_SORT_OWN;
	bad |= write_one(dir, "demo.flat", demo, "flat", &ro);
	bad |= write_one(dir, "names.flat", names, "flat", &ro);
	ro.sort = REPORT_SORT_CALLS;
	bad |= write_one(dir, "count.flat", count, "flat", &ro);
	report_opts_init(&ro);
	bad |= write_one(dir, "count.fprof", count, "fprof", &ro);
	bad |= write_one(dir, "names.eprof", names, "eprof", &ro);
	bad |= write_one(dir, "count.eprof", count, "eprof", &ro);

	profile_free(empty);
	profile_free(ncount);
	profile_free(names);
	profile_free(count);
	profile_free(demo);
	return bad;
}

/* ------------------------------------------------------------------ runner */

static Suite *writers_suite(void)
{
	Suite *s = suite_create("writers");
	struct {
		const char *name;
		const TTest *test;
	} cases[] = {
		{ "cprof_sample", cprof_matches_sample },
		{ "cprof_count_sample", cprof_count_mode_matches_sample },
		{ "cprof_limit", cprof_limit },
		{ "cprof_limit0", cprof_limit0 },
		{ "cprof_ties", cprof_ties },
		{ "cprof_empty", cprof_empty },
		{ "cprof_odd_names", cprof_odd_names },
		{ "eprof_procs_sample", eprof_procs_matches_sample },
		{ "eprof_total_sample", eprof_total_matches_sample },
		{ "eprof_sort_calls", eprof_sort_calls },
		{ "eprof_count_mode", eprof_count_mode },
		{ "eprof_odd_names", eprof_odd_names },
		{ "eprof_empty", eprof_empty },
		{ "callgrind_sample", callgrind_matches_sample },
		{ "callgrind_per_thread", callgrind_per_thread },
		{ "callgrind_per_thread_needs_output", callgrind_per_thread_needs_output },
		{ "callgrind_unwritable_part", callgrind_unwritable_part },
		{ "callgrind_well_formed", callgrind_sample_is_well_formed },
		{ "callgrind_count_mode", callgrind_count_mode },
		{ "callgrind_odd_names", callgrind_odd_names },
		{ "callgrind_recursive_root", callgrind_recursive_root },
		{ "flat_demo_golden", flat_demo_golden },
		{ "flat_count_golden", flat_count_golden },
		{ "flat_sort_keys", flat_sort_keys },
		{ "flat_no_histogram", flat_no_histogram },
		{ "flat_odd_names", flat_odd_names },
		{ "fprof_count_golden", fprof_count_golden },
		{ "json_latency", json_latency },
		{ "json_full_mode_unchanged", json_full_mode_unchanged },
		{ "json_count_mode_edges", json_count_mode_edges },
		{ "json_count_mode_caller_only", json_count_mode_caller_only },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		TCase *tc = tcase_create(cases[i].name);

		tcase_add_test(tc, cases[i].test);
		suite_add_tcase(s, tc);
	}
	return s;
}

int main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	if (argc == 3 && !strcmp(argv[1], "--write-samples"))
		return write_samples(argv[2]);
	sr = srunner_create(writers_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
