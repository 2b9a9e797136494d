/* SPDX-License-Identifier: MIT */
/* check_report.c - unit tests of the report writers (report.c, erl.c, fprof.c, json.c)
 * on profiles built with ctree_enter()/ctree_leave() and injected times. The demo
 * profile (sim_demo.c) replays the event stream of ../shared/docs/format-samples/tools/
 * gen_native_samples.py, so the fprof writer must reproduce the shared native samples
 * byte for byte (copies in tests/unit/golden/).
 *
 * "check_report --write-samples DIR" writes the fprof reports to DIR instead of
 * running the tests: tests/report.cmake feeds them to Erlang's file:consult. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "calltrace/erl.h"
#include "calltrace/profile.h"
#include "calltrace/report.h"

#include "sim_demo.h"
#include "unit_util.h"

#define GOLDEN_DIR CT_SOURCE_DIR "/tests/unit/golden/"
#define SAMPLES_DIR CT_SHARED_DIR "/docs/format-samples/"

/* ------------------------------------------------------------------ edge-case profile */

#define LONG_NAME_LEN 300

/* Callees of main in native_fprof_edgecases.txt: module, name, arity, cnt, acc, own
 * (µs). The 300-character name is filled in at run time. */
static const struct {
	const char *module, *name;
	int arity;
	uint64_t cnt, acc, own;
} edge_rows[] = {
	{ "libstdc++.so.6", "std::vector<int, std::allocator<int> >::push_back(int const&)", 0,
	  3, 120000, 119000 },
	{ "demo", "operator<<(std::ostream&, Foo const&)", 2, 1, 5, 5 },
	{ "demo.c", "fib", 1, 1, 4, 4 },
	{ "demo", "it's", 0, 1, 3, 3 },
	{ "demo", "back\\slash", 0, 1, 2, 2 },
	{ "demo", "caf\xc3\xa9_\xc3\xbcn\xc3\xaf" "code", 1, 1, 1, 1 },
	{ "demo", NULL, 0, 1, 1, 1 },
	{ "[vdso]", "__vdso_clock_gettime", 2, 1, 1, 1 },
	{ "/opt/example/lib/libfoo.so", "0x1b20", 0, 1, 1, 1 },
	{ "demo", "maybe", 0, 1, 1, 1 },
	{ "demo", "end", 0, 1, 1, 1 },
	{ "", "suspend", 0, 2, 1113552, 0 },
};

/* Names the shared sample does not cover; rows of 1 call, 1 µs each. */
static const char *const extra_names[] = {
	"new\nline", "tab\there", "bad\xff\xfe utf8", "else", "Upper", "_under", "a@b",
	"ok_name9", "quote\"d", "\x01" "ctl\x7f",
};

static void add_calls(struct profile *p, struct ct_thread *t, struct ct_node *parent,
		      ct_func_id f, uint64_t cnt, uint64_t acc_us, uint64_t own_us, uint64_t *ts)
{
	struct ct_node *n = NULL;

	for (uint64_t i = 0; i < cnt; i++)
		n = ctree_enter(p, t, parent, f, (*ts)++);
	ctree_leave(p, t, n, acc_us * 1000, own_us * 1000, (*ts)++);
}

static struct profile *edge_profile(bool with_extras)
{
	struct profile *p = profile_new();
	struct ct_thread *t = profile_add_thread(p, 4242, 4242);
	ct_func_id fmain = profile_add_func(p, "main", "demo", "demo.c", 25, 0, 0);
	char long_name[LONG_NAME_LEN + 1];
	uint64_t ts = TS_BASE;
	struct ct_node *m;

	memset(long_name, 'x', LONG_NAME_LEN);
	long_name[LONG_NAME_LEN] = '\0';
	m = ctree_enter(p, t, &t->root, fmain, ts++);
	for (size_t i = 0; i < sizeof(edge_rows) / sizeof(edge_rows[0]); i++) {
		const char *name = edge_rows[i].name ? edge_rows[i].name : long_name;
		ct_func_id f = profile_add_func(p, name, edge_rows[i].module, NULL, 0,
						edge_rows[i].arity, 0);

		add_calls(p, t, m, f, edge_rows[i].cnt, edge_rows[i].acc, edge_rows[i].own, &ts);
	}
	if (with_extras) {
		for (size_t i = 0; i < sizeof(extra_names) / sizeof(extra_names[0]); i++) {
			ct_func_id f = profile_add_func(p, extra_names[i], "edge", NULL, 0, 0, 0);

			add_calls(p, t, m, f, 1, 1, 1, &ts);
		}
	}
	/* main: ACC 1234.567 ms, OWN 1 ms, as in the sample */
	ctree_leave(p, t, m, 1234567000ull, 1000000ull, ts + 1234567000ull);
	return p;
}

/* ------------------------------------------------------------------ fprof golden */

static void check_golden(const struct report_opts *ro, const char *golden)
{
	struct profile *p = demo_profile();
	char *got = render(p, "fprof", ro);
	char path[4096];
	char *want;

	snprintf(path, sizeof(path), GOLDEN_DIR "%s", golden);
	want = read_file(path);
	assert_same_text(got, want, golden);
	free(want);
	free(got);
	profile_free(p);
}

START_TEST(fprof_default_matches_sample)
{
	struct report_opts ro;

	report_opts_init(&ro);
	check_golden(&ro, "native_fprof.txt");
}
END_TEST

START_TEST(fprof_no_callers_matches_sample)
{
	struct report_opts ro;

	report_opts_init(&ro);
	ro.callers = false;
	check_golden(&ro, "native_fprof_no_callers.txt");
}
END_TEST

START_TEST(fprof_totals_sort_own_matches_sample)
{
	struct report_opts ro;

	report_opts_init(&ro);
	ro.totals = true;
	ro.sort = REPORT_SORT_OWN;
	check_golden(&ro, "native_fprof_totals_sort_own.txt");
}
END_TEST

/* The golden copies are the project's shared samples, unchanged. */
START_TEST(fprof_golden_copies_are_current)
{
	static const char *const names[] = {
		"native_fprof.txt", "native_fprof_no_callers.txt",
		"native_fprof_totals_sort_own.txt",
	};
	char a[4096], b[4096];

	for (size_t i = 0; i < 3; i++) {
		char *x, *y;

		snprintf(a, sizeof(a), GOLDEN_DIR "%s", names[i]);
		snprintf(b, sizeof(b), SAMPLES_DIR "%s", names[i]);
		x = read_file(a);
		y = read_file(b);
		assert_same_text(x, y, names[i]);
		free(x);
		free(y);
	}
}
END_TEST

/* Same profile, tree built in another order: same bytes (sorting is total). */
START_TEST(fprof_independent_of_thread_order)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	struct ct_thread *tmp;
	char *a, *b;

	report_opts_init(&ro);
	a = render(p, "fprof", &ro);
	tmp = p->threads[0];
	p->threads[0] = p->threads[1];
	p->threads[1] = tmp;
	b = render(p, "fprof", &ro);
	assert_same_text(b, a, "swapped threads");
	free(a);
	free(b);
	profile_free(p);
}
END_TEST

/* Every data line is cols-1 characters unless a field overflows. */
static void check_widths(int cols, int want)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	char *out, *line, *save = NULL;
	int nr = 0;

	report_opts_init(&ro);
	ro.cols = cols;
	out = render(p, "fprof", &ro);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '%' && line[1] == ' ') {
			ck_assert_int_eq((int)strlen(line), want - 1);
			nr++;
		} else if (strstr(line, "{demo,main,0},") && strstr(line, "44.011")) {
			ck_assert_int_eq((int)strlen(line), want - 1);
		}
	}
	ck_assert_int_eq(nr, 3);
	free(out);
	profile_free(p);
}

START_TEST(fprof_cols)
{
	check_widths(120, 120);
	check_widths(80, 80);
}
END_TEST

/* fprof raises cols below 23 to 23; there the fixed header texts overflow. */
START_TEST(fprof_cols_minimum)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	char *a, *b;

	report_opts_init(&ro);
	ro.cols = 10;
	a = render(p, "fprof", &ro);
	ro.cols = 23;
	b = render(p, "fprof", &ro);
	assert_same_text(a, b, "cols 10 vs 23");
	ck_assert_ptr_nonnull(strstr(a, "\n%          CNT  ACC  OWN        \n"));
	ck_assert_ptr_nonnull(strstr(a, "\n[{ totals,204,44.011,32.800}].  %%%\n"));
	free(a);
	free(b);
	profile_free(p);
}
END_TEST

START_TEST(fprof_cols120_layout)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	char *out;

	report_opts_init(&ro);
	ro.cols = 120;
	out = render(p, "fprof", &ro);
	/* W=9, N=64 */
	ck_assert_ptr_nonnull(strstr(out,
		"\n{[{undefined,                                                             1,"
		"           44.011,            2.750}],     \n"));
	free(out);
	profile_free(p);
}
END_TEST

START_TEST(fprof_no_details)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	char *out;

	report_opts_init(&ro);
	ro.details = false;
	out = render(p, "fprof", &ro);
	ck_assert_str_eq(out,
		"%% Analysis results:\n"
		"{  analysis_options,\n"
		" [{callers, true},\n"
		"  {sort, acc},\n"
		"  {totals, false},\n"
		"  {details, false}]}.\n"
		"\n"
		"%                                               CNT       ACC       OWN        \n"
		"[{ totals,                                      204,   44.011,   32.800}].  %%%\n"
		"\n"
		"\n");
	free(out);
	profile_free(p);
}
END_TEST

START_TEST(fprof_totals_no_callers_merges_threads)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	char *out;

	report_opts_init(&ro);
	ro.totals = true;
	ro.callers = false;
	ro.details = false;
	out = render(p, "fprof", &ro);
	/* cheap: 1 call in main (8 µs) + 5 in the worker (40 µs) */
	ck_assert_ptr_nonnull(strstr(out,
		"{  {demo,cheap,1},                                6,    0.048,    0.048}.      \n"));
	/* undefined: no callers, zero marked row */
	ck_assert_ptr_nonnull(strstr(out,
		"{  undefined,                                     0,    0.000,    0.000}.      \n\n"));
	free(out);
	profile_free(p);
}
END_TEST

/* Rounding: each triple once, half up; sums from the rounded integers. */
START_TEST(fprof_rounding)
{
	struct profile *p = profile_new();
	struct ct_thread *t = profile_add_thread(p, 1, 1);
	ct_func_id a = profile_add_func(p, "a", "m", NULL, 0, 0, 0);
	ct_func_id b = profile_add_func(p, "b", "m", NULL, 0, 0, 0);
	ct_func_id c = profile_add_func(p, "c", "m", NULL, 0, 0, 0);
	struct ct_node *na, *nb, *nc, *nc2;
	struct report_opts ro;
	char *out;

	na = ctree_enter(p, t, &t->root, a, 1000);
	nb = ctree_enter(p, t, na, b, 1000);
	nc = ctree_enter(p, t, nb, c, 1000);
	ctree_leave(p, t, nc, 1500, 1499, 2500);     /* 1.500 -> 2 µs, 1.499 -> 1 µs */
	ctree_leave(p, t, nb, 2500, 1000, 3500);
	nc2 = ctree_enter(p, t, na, c, 3500);
	ctree_leave(p, t, nc2, 1500, 1500, 5000);    /* 2 µs, 2 µs */
	ctree_leave(p, t, na, 4000, 0, 5000);
	report_opts_init(&ro);
	out = render(p, "fprof", &ro);
	/* marked row of c: 2+2 ACC, 1+2 OWN (not round(3.0/2.999)) */
	ck_assert_ptr_nonnull(strstr(out,
		" { {m,c,0},                                       2,    0.004,    0.003},     %\n"));
	/* totals ACC from the span: 4000 ns -> 4 µs; OWN = 0+1+1+2 */
	ck_assert_ptr_nonnull(strstr(out,
		"[{ totals,                                        4,    0.004,    0.004}].  %%%\n"));
	free(out);
	profile_free(p);
}
END_TEST

/* Ties on the key: descending term order, tuples before pseudo-function atoms. */
START_TEST(fprof_tie_order)
{
	struct profile *p = profile_new();
	struct ct_thread *t = profile_add_thread(p, 1, 1);
	ct_func_id top = profile_add_func(p, "top", "m", NULL, 0, 0, 0);
	ct_func_id ids[5];
	struct ct_node *nt;
	struct report_opts ro;
	char *out, *pos[5];
	uint64_t ts = 10;

	ids[0] = profile_add_func(p, "suspend", "", NULL, 0, 0, 0);
	ids[1] = profile_add_func(p, "f", "a", NULL, 0, 1, 0);
	ids[2] = profile_add_func(p, "f", "a", NULL, 0, 2, 0);
	ids[3] = profile_add_func(p, "g", "a", NULL, 0, 0, 0);
	ids[4] = profile_add_func(p, "a", "b", NULL, 0, 0, 0);
	nt = ctree_enter(p, t, &t->root, top, ts++);
	for (int i = 0; i < 5; i++)
		add_calls(p, t, nt, ids[i], 1, 7, 7, &ts);
	ctree_leave(p, t, nt, 100000, 1000, ts);
	report_opts_init(&ro);
	ro.callers = false;
	out = render(p, "fprof", &ro);
	pos[0] = strstr(out, "{  {b,a,0},");
	pos[1] = strstr(out, "{  {a,g,0},");
	pos[2] = strstr(out, "{  {a,f,2},");
	pos[3] = strstr(out, "{  {a,f,1},");
	pos[4] = strstr(out, "{  suspend,");
	for (int i = 0; i < 5; i++)
		ck_assert_ptr_nonnull(pos[i]);
	for (int i = 0; i < 4; i++)
		ck_assert_msg(pos[i] < pos[i + 1], "row %d out of order:\n%s", i, out);
	free(out);
	profile_free(p);
}
END_TEST

/* Thread sections: descending OWN, ties by descending id string. */
START_TEST(fprof_thread_order)
{
	struct profile *p = profile_new();
	ct_func_id f = profile_add_func(p, "f", "m", NULL, 0, 0, 0);
	static const pid_t tids[] = { 7, 10, 9, 8 };
	static const uint64_t own[] = { 5, 5, 5, 6 };
	struct report_opts ro;
	char *out, *pos[4];

	for (int i = 0; i < 4; i++) {
		struct ct_thread *t = profile_add_thread(p, 1, tids[i]);
		uint64_t ts = 100;

		add_calls(p, t, &t->root, f, 1, own[i], own[i], &ts);
	}
	report_opts_init(&ro);
	out = render(p, "fprof", &ro);
	pos[0] = strstr(out, "[{ \"<1.8>\",");
	pos[1] = strstr(out, "[{ \"<1.9>\",");
	pos[2] = strstr(out, "[{ \"<1.7>\",");
	pos[3] = strstr(out, "[{ \"<1.10>\",");   /* "<1.10>" < "<1.7>" as strings */
	for (int i = 0; i < 4; i++)
		ck_assert_ptr_nonnull(pos[i]);
	for (int i = 0; i < 3; i++)
		ck_assert_msg(pos[i] < pos[i + 1], "thread %d out of order:\n%s", i, out);
	free(out);
	profile_free(p);
}
END_TEST

START_TEST(fprof_count_overflow_shifts_line)
{
	struct profile *p = profile_new();
	struct ct_thread *t = profile_add_thread(p, 1, 1);
	ct_func_id f = profile_add_func(p, "f", "m", NULL, 0, 0, 0);
	struct report_opts ro;
	uint64_t ts = 100;
	char *out;

	add_calls(p, t, &t->root, f, 21999, 123456789, 1000, &ts);
	report_opts_init(&ro);
	ro.callers = false;
	ro.details = true;
	out = render(p, "fprof", &ro);
	ck_assert_ptr_nonnull(strstr(out,
		"\n{  {m,f,0},                                    21999,123456.789,    1.000}.      \n"));
	ck_assert_ptr_nonnull(strstr(out,
		"\n[{ \"<1.1>\",                                    21999,undefined,    1.000}].   %%\n"));
	free(out);
	profile_free(p);
}
END_TEST

/* A thread that called nothing still gets its header; an unknown start routine drops
 * spawned_as; only spawned_by left ends the header with "}]." on that line. */
START_TEST(fprof_thread_info_lines)
{
	struct profile *p = profile_new();
	struct ct_thread *t = profile_add_thread(p, 5, 6);
	struct report_opts ro;
	char *out;

	t->parent_pid = 5;
	t->parent_tid = 5;
	report_opts_init(&ro);
	out = render(p, "fprof", &ro);
	ck_assert_ptr_nonnull(strstr(out,
		"[{ \"<5.6>\",                                       0,undefined,    0.000},    %%\n"
		" { spawned_by, \"<5.5>\"}].\n\n\n"));
	free(out);
	profile_free(p);
}
END_TEST

START_TEST(fprof_write_error)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	FILE *f = fopen("/dev/full", "w");

	if (!f)
		return;   /* no /dev/full here: nothing to check */
	report_opts_init(&ro);
	ck_assert_int_lt(report_fprof.emit(p, &ro, f), 0);
	ck_assert_int_lt(report_json.emit(p, &ro, f), 0);
	fclose(f);
	profile_free(p);
}
END_TEST

/* ------------------------------------------------------------------ fprof edge cases */

/* The sample's callee rows, head and tail normalised ("  {" and "},"). */
static char *norm_row(const char *line)
{
	char *s = strdup(line + 3);
	char *end = strstr(s, "}]}.    ");

	if (end && end[8] == '\0')
		memcpy(end, "},      ", 8);
	return s;
}

START_TEST(fprof_edgecases_rows_match_sample)
{
	struct profile *p = edge_profile(false);
	struct report_opts ro;
	char *got, *want, *save = NULL, *line;
	char **got_rows = calloc(4096, sizeof(*got_rows));
	size_t nr_got = 0;
	int in_callees = 0, nr_checked = 0;

	report_opts_init(&ro);
	got = render(p, "fprof", &ro);
	want = read_file(SAMPLES_DIR "native_fprof_edgecases.txt");
	/* the caller and marked rows of main are the same lines */
	ck_assert_ptr_nonnull(strstr(got,
		"{[{undefined,                                     1, 1234.567,    1.000}],     \n"
		" { {demo,main,0},                                 1, 1234.567,    1.000},     %\n"));
	ck_assert_ptr_nonnull(strstr(want,
		"{[{undefined,                                     1, 1234.567,    1.000}],     \n"
		" { {demo,main,0},                                 1, 1234.567,    1.000},     %\n"));
	for (line = strtok_r(got, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strlen(line) > 3)
			got_rows[nr_got++] = norm_row(line);
	save = NULL;
	/* every callee row of the sample's main paragraph is one of ours (the sample is
	 * hand-ordered, so only the rows are compared, not their order) */
	for (line = strtok_r(want, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *n;
		bool found = false;

		if (!strncmp(line, " { {demo,main,0}", 16)) {
			in_callees = 1;
			continue;
		}
		if (!in_callees)
			continue;
		n = norm_row(line);
		for (size_t i = 0; i < nr_got && !found; i++)
			found = !strcmp(got_rows[i], n);
		ck_assert_msg(found, "sample row not produced: [%s]", line);
		nr_checked++;
		free(n);
	}
	ck_assert_int_eq(nr_checked, 12);
	for (size_t i = 0; i < nr_got; i++)
		free(got_rows[i]);
	free(got_rows);
	free(got);
	free(want);
	profile_free(p);
}
END_TEST

START_TEST(fprof_edgecases_golden)
{
	struct profile *p = edge_profile(true);
	struct report_opts ro;
	char *got, *want;

	report_opts_init(&ro);
	got = render(p, "fprof", &ro);
	want = read_file(GOLDEN_DIR "fprof_edgecases.txt");
	assert_same_text(got, want, "fprof_edgecases.txt");
	free(got);
	free(want);
	profile_free(p);
}
END_TEST

/* Padding counts code points: a 2-byte character takes one column. */
START_TEST(fprof_pads_code_points)
{
	struct profile *p = edge_profile(false);
	struct report_opts ro;
	char *out, *l;

	report_opts_init(&ro);
	out = render(p, "fprof", &ro);
	l = strstr(out, "  {{demo,'caf\xc3\xa9_");
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq((int)strcspn(l, "\n"), 79 + 3);   /* 3 two-byte characters */
	ck_assert_int_eq((int)erl_text_width(""), 0);
	free(out);
	profile_free(p);
}
END_TEST

/* ------------------------------------------------------------------ erl.c */

static char *atom_text(const char *name, void (*fn)(struct erl_buf *, const char *))
{
	struct erl_buf b;
	char *s;

	erl_buf_init(&b);
	fn(&b, name);
	s = strdup(erl_buf_str(&b));
	erl_buf_fini(&b);
	return s;
}

static void check_atom(const char *name, const char *want)
{
	char *got = atom_text(name, erl_append_name);

	ck_assert_msg(!strcmp(got, want), "name [%s]: got [%s], want [%s]", name, got, want);
	free(got);
}

START_TEST(erl_bare_atoms)
{
	check_atom("fib", "fib");
	check_atom("caller_a", "caller_a");
	check_atom("a@B9_", "a@B9_");
	check_atom("suspend", "suspend");
	check_atom("libc.so.6", "'libc.so.6'");
	check_atom("Upper", "'Upper'");
	check_atom("_x", "'_x'");
	check_atom("9x", "'9x'");
	check_atom("", "''");
	check_atom("caf\xc3\xa9", "'caf\xc3\xa9'");
}
END_TEST

START_TEST(erl_reserved_words)
{
	static const char *const words[] = {
		"after", "and", "andalso", "band", "begin", "bnot", "bor", "bsl", "bsr",
		"bxor", "case", "catch", "cond", "div", "end", "fun", "if", "let", "maybe",
		"else", "not", "of", "or", "orelse", "receive", "rem", "try", "when", "xor",
	};
	char want[32];

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		ck_assert(erl_is_reserved(words[i]));
		snprintf(want, sizeof(want), "'%s'", words[i]);
		check_atom(words[i], want);
	}
	ck_assert(!erl_is_reserved("ends"));
	check_atom("ends", "ends");
}
END_TEST

START_TEST(erl_escapes)
{
	check_atom("it's", "'it\\'s'");
	check_atom("back\\slash", "'back\\\\slash'");
	check_atom("new\nline", "'new\\nline'");
	check_atom("tab\there", "'tab\\there'");
	check_atom("\x01x\x7f", "'\\x01x\\x7F'");
	check_atom("q\"", "'q\"'");
	/* invalid UTF-8: bytes escaped, valid sequences kept */
	check_atom("bad\xff\xfe", "'bad\\xFF\\xFE'");
	check_atom("\xc3\xa9\xc3", "'\xc3\xa9\\xC3'");
	check_atom("\xed\xa0\x80", "'\\xED\\xA0\\x80'");          /* surrogate */
	check_atom("\xc0\xaf", "'\\xC0\\xAF'");                   /* overlong */
	check_atom("\xf0\x9f\x98\x80", "'\xf0\x9f\x98\x80'");     /* U+1F600 */
}
END_TEST

START_TEST(erl_strings)
{
	char *s = atom_text("<1.2> \"q\" \\ '", erl_append_string);

	ck_assert_str_eq(s, "\"<1.2> \\\"q\\\" \\\\ '\"");
	free(s);
}
END_TEST

START_TEST(erl_long_names_become_strings)
{
	char name[600];
	char *s;

	memset(name, 'x', 255);
	name[255] = '\0';
	ck_assert(!erl_name_is_string(name));
	s = atom_text(name, erl_append_name);
	ck_assert_int_eq((int)strlen(s), 255);
	free(s);

	name[255] = 'x';
	name[256] = '\0';
	ck_assert(erl_name_is_string(name));
	s = atom_text(name, erl_append_name);
	ck_assert_int_eq(s[0], '"');
	ck_assert_int_eq((int)strlen(s), 258);
	free(s);

	/* 255 two-byte characters are 255 characters: still an atom */
	for (int i = 0; i < 255; i++)
		memcpy(name + 2 * i, "\xc3\xa9", 2);
	name[510] = '\0';
	ck_assert_int_eq((int)erl_text_width(name), 255);
	ck_assert(!erl_name_is_string(name));
}
END_TEST

START_TEST(erl_width_and_order)
{
	uint32_t cp = 0;

	ck_assert_uint_eq(erl_text_width("abc"), 3);
	ck_assert_uint_eq(erl_text_width("caf\xc3\xa9"), 4);
	ck_assert_uint_eq(erl_text_width("a\xff" "b"), 3);
	ck_assert_uint_eq(erl_utf8_decode("\xe2\x82\xac", 3, &cp), 3);
	ck_assert_uint_eq(cp, 0x20ac);
	ck_assert_uint_eq(erl_utf8_decode("\xe2\x82", 2, &cp), 0);
	ck_assert_int_lt(erl_text_cmp("abc", "abd"), 0);
	ck_assert_int_lt(erl_text_cmp("ab", "abc"), 0);
	ck_assert_int_eq(erl_text_cmp("abc", "abc"), 0);
	ck_assert_int_gt(erl_text_cmp("\xc3\xa9", "z"), 0);
	ck_assert_int_lt(erl_text_cmp("<1.10>", "<1.7>"), 0);
}
END_TEST

/* ------------------------------------------------------------------ report.c */

START_TEST(report_table)
{
	struct report_opts ro;

	report_opts_init(&ro);
	ck_assert_int_eq(ro.sort, REPORT_SORT_ACC);
	ck_assert(ro.callers);
	ck_assert(!ro.totals);
	ck_assert(ro.details);
	ck_assert_int_eq(ro.cols, 80);
	ck_assert_ptr_eq(report_find("fprof"), &report_fprof);
	ck_assert_ptr_eq(report_find("json"), &report_json);
	ck_assert_ptr_null(report_find("nope"));
	ck_assert_ptr_null(report_find(NULL));
	ck_assert_str_eq(report_names(), "fprof, json, cprof, eprof, flat, callgrind, folded, svg");
}
END_TEST

/* ------------------------------------------------------------------ json */

/* Sum of a function's times over the demo tree (for cross-checks). */
struct sums {
	ct_func_id f;
	uint64_t calls, own, acc;
};

static void sum_node(const struct ct_node *n, int depth, void *arg)
{
	struct sums *s = arg;

	(void)depth;
	if (n->func != s->f)
		return;
	s->calls += n->calls;
	s->own += n->own_ns;
	if (!n->is_rec)
		s->acc += n->acc_ns;
}

START_TEST(json_demo_fields)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	char *text;
	json_object *root, *funcs, *fib, *mainf, *ths, *t1, *tree, *callers;
	struct sums s = { .f = F_FIB };

	report_opts_init(&ro);
	text = render(p, "json", &ro);
	root = parse(text);
	ck_assert_int_eq(json_object_get_int(get(root, "version")), 1);
	ck_assert_str_eq(json_object_get_string(get(root, "mode")), "full");
	ck_assert_str_eq(json_object_get_string(get(root, "clock")), "wall");
	ck_assert_str_eq(json_object_get_string(get(root, "command")), "./demo");

	funcs = get(root, "functions");
	ck_assert_int_eq((int)json_object_array_length(funcs), NR_DEMO_FUNCS);
	fib = find_named(funcs, "fib");
	ck_assert_ptr_nonnull(fib);
	ck_assert_str_eq(json_object_get_string(get(fib, "module")), "demo");
	ck_assert_str_eq(json_object_get_string(get(fib, "file")), "demo.c");
	ck_assert_int_eq(json_object_get_int(get(fib, "line")), 5);
	ck_assert_int_eq(json_object_get_int(get(fib, "calls")), 177);
	ctree_walk(p->threads[0], sum_node, &s);
	ck_assert_uint_eq(json_object_get_uint64(get(fib, "own_ns")), s.own);
	/* ACC counted once: the outermost call only (fib(10) from main) */
	ck_assert_uint_eq(json_object_get_uint64(get(fib, "acc_ns")), s.acc);
	ck_assert_uint_eq((s.acc + 500) / 1000, 3903);
	callers = get(fib, "callers");
	ck_assert_int_eq((int)json_object_array_length(callers), 2);
	ck_assert_int_eq(json_object_get_int(get(find_named(callers, "fib"), "calls")), 176);
	ck_assert_int_eq(json_object_get_int(get(find_named(callers, "main"), "calls")), 1);
	ck_assert_int_eq(json_object_get_int(get(find_named(callers, "fib"), "acc_ns")), 0);
	ck_assert_ptr_nonnull(find_named(get(fib, "callees"), "fib"));

	/* cheap: summed over both threads; no 'undefined' among main's callers */
	ck_assert_int_eq(json_object_get_int(get(find_named(funcs, "cheap"), "calls")), 6);
	mainf = find_named(funcs, "main");
	ck_assert_int_eq((int)json_object_array_length(get(mainf, "callers")), 0);
	ck_assert_int_eq((int)json_object_array_length(get(mainf, "callees")), 8);
	ck_assert(json_object_get_type(get(find_named(funcs, "printf"), "file")) ==
		  json_type_null);
	ck_assert_str_eq(json_object_get_string(get(find_named(funcs, "suspend"), "module")), "");

	ths = get(root, "threads");
	ck_assert_int_eq((int)json_object_array_length(ths), 2);
	ck_assert_int_eq(json_object_get_int(get(json_object_array_get_idx(ths, 0), "tid")), 4242);
	ck_assert(json_object_get_type(get(json_object_array_get_idx(ths, 0), "spawned_by")) ==
		  json_type_null);
	t1 = json_object_array_get_idx(ths, 1);
	ck_assert_int_eq(json_object_get_int(get(t1, "pid")), 4242);
	ck_assert_int_eq(json_object_get_int(get(t1, "tid")), 4243);
	ck_assert_str_eq(json_object_get_string(get(t1, "spawned_by")), "<4242.4242>");
	ck_assert_str_eq(json_object_get_string(get(get(t1, "spawned_as"), "name")), "worker");
	ck_assert_str_eq(json_object_get_string(get(get(t1, "spawned_as"), "arg")), "0x0");
	tree = get(t1, "tree");
	ck_assert_str_eq(json_object_get_string(get(tree, "name")), "undefined");
	ck_assert_int_eq(json_object_get_int(get(tree, "calls")), 0);
	tree = json_object_array_get_idx(get(tree, "children"), 0);
	ck_assert_str_eq(json_object_get_string(get(tree, "name")), "start_thread");
	ck_assert_str_eq(json_object_get_string(get(tree, "module")), "libc.so.6");
	tree = json_object_array_get_idx(get(tree, "children"), 0);
	ck_assert_str_eq(json_object_get_string(get(tree, "name")), "worker");
	ck_assert_int_eq((int)json_object_array_length(get(tree, "children")), 2);
	/* children by descending acc: costly, then cheap (5 calls) */
	ck_assert_str_eq(json_object_get_string(get(json_object_array_get_idx(
				 get(tree, "children"), 0), "name")), "costly");
	ck_assert_int_eq(json_object_get_int(get(json_object_array_get_idx(
				 get(tree, "children"), 1), "calls")), 5);

	json_object_put(root);
	free(text);
	profile_free(p);
}
END_TEST

/* fib(3) by hand: nested recursive nodes have their own acc in the tree, but the
 * function's acc_ns is the outermost call's alone. */
START_TEST(json_recursion_acc_once)
{
	struct profile *p = profile_new();
	struct ct_thread *t = profile_add_thread(p, 1, 1);
	ct_func_id fib = profile_add_func(p, "fib", "m", "f.c", 1, 1, 0);
	struct ct_node *n1, *n2, *n3;
	struct report_opts ro;
	json_object *root, *f, *node;
	char *text;

	n1 = ctree_enter(p, t, &t->root, fib, 100);
	n2 = ctree_enter(p, t, n1, fib, 110);
	n3 = ctree_enter(p, t, n2, fib, 120);
	ctree_leave(p, t, n3, 10, 10, 130);
	ctree_leave(p, t, n2, 30, 20, 140);
	n2 = ctree_enter(p, t, n1, fib, 150);
	ctree_leave(p, t, n2, 10, 10, 160);
	ctree_leave(p, t, n1, 70, 30, 170);
	report_opts_init(&ro);
	text = render(p, "json", &ro);
	root = parse(text);
	f = json_object_array_get_idx(get(root, "functions"), 0);
	ck_assert_int_eq(json_object_get_int(get(f, "calls")), 4);
	ck_assert_int_eq(json_object_get_int(get(f, "own_ns")), 70);
	ck_assert_int_eq(json_object_get_int(get(f, "acc_ns")), 70);
	node = get(json_object_array_get_idx(get(root, "threads"), 0), "tree");
	ck_assert_int_eq(json_object_get_int(get(node, "acc_ns")), 70);
	node = json_object_array_get_idx(get(node, "children"), 0);
	ck_assert(!json_object_get_boolean(get(node, "recursive")));
	node = json_object_array_get_idx(get(node, "children"), 0);
	ck_assert(json_object_get_boolean(get(node, "recursive")));
	ck_assert_int_eq(json_object_get_int(get(node, "calls")), 2);
	ck_assert_int_eq(json_object_get_int(get(node, "acc_ns")), 40);
	json_object_put(root);
	free(text);
	profile_free(p);
}
END_TEST

START_TEST(json_count_mode_nulls)
{
	struct profile *p = demo_profile();
	struct report_opts ro;
	json_object *root, *f, *node;
	char *text;

	p->mode = CT_MODE_COUNT;
	report_opts_init(&ro);
	text = render(p, "json", &ro);
	root = parse(text);
	ck_assert_str_eq(json_object_get_string(get(root, "mode")), "count");
	f = find_named(get(root, "functions"), "fib");
	ck_assert_int_eq(json_object_get_int(get(f, "calls")), 177);
	ck_assert(json_object_get_type(get(f, "own_ns")) == json_type_null);
	ck_assert(json_object_get_type(get(f, "acc_ns")) == json_type_null);
	ck_assert(json_object_get_type(get(json_object_array_get_idx(get(f, "callers"), 0),
					   "own_ns")) == json_type_null);
	node = get(json_object_array_get_idx(get(root, "threads"), 0), "tree");
	ck_assert(json_object_get_type(get(node, "acc_ns")) == json_type_null);
	node = json_object_array_get_idx(get(node, "children"), 0);
	ck_assert(json_object_get_type(get(node, "own_ns")) == json_type_null);
	ck_assert_int_eq(json_object_get_int(get(node, "calls")), 1);
	json_object_put(root);
	free(text);
	profile_free(p);
}
END_TEST

/* Names with invalid UTF-8 still give valid JSON (U+FFFD), other bytes kept. */
START_TEST(json_strings_valid)
{
	struct profile *p = edge_profile(true);
	struct report_opts ro;
	json_object *root, *funcs;
	char *text;

	report_opts_init(&ro);
	text = render(p, "json", &ro);
	root = parse(text);
	funcs = get(root, "functions");
	ck_assert_ptr_nonnull(find_named(funcs, "bad\xef\xbf\xbd\xef\xbf\xbd utf8"));
	ck_assert_ptr_nonnull(find_named(funcs, "new\nline"));
	ck_assert_ptr_nonnull(find_named(funcs, "caf\xc3\xa9_\xc3\xbcn\xc3\xaf" "code"));
	ck_assert_ptr_nonnull(strstr(text, "\"/opt/example/lib/libfoo.so\""));
	json_object_put(root);
	free(text);
	profile_free(p);
}
END_TEST

/* ------------------------------------------------------------------ sample writer */

static int write_one(const char *dir, const char *name, struct profile *p,
		     const struct report_opts *ro)
{
	char path[4096];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "check_report: %s: %s\n", path, strerror(errno));
		return 1;
	}
	rc = report_fprof.emit(p, ro, f);
	if (fclose(f) != 0 || rc < 0) {
		fprintf(stderr, "check_report: %s: write failed\n", path);
		return 1;
	}
	return 0;
}

/* Write every fprof variant into @dir for the Erlang checks of tests/report.cmake. */
static int write_samples(const char *dir)
{
	struct profile *demo = demo_profile(), *edge = edge_profile(true);
	struct report_opts ro;
	int bad = 0;

	report_opts_init(&ro);
	bad |= write_one(dir, "native_fprof.txt", demo, &ro);
	bad |= write_one(dir, "fprof_edgecases.txt", edge, &ro);
	ro.callers = false;
	bad |= write_one(dir, "native_fprof_no_callers.txt", demo, &ro);
	ro.details = false;
	ro.totals = true;
	bad |= write_one(dir, "fprof_totals_no_details_no_callers.txt", demo, &ro);
	report_opts_init(&ro);
	ro.totals = true;
	ro.sort = REPORT_SORT_OWN;
	bad |= write_one(dir, "native_fprof_totals_sort_own.txt", demo, &ro);
	report_opts_init(&ro);
	ro.cols = 120;
	bad |= write_one(dir, "fprof_cols120.txt", demo, &ro);
	ro.cols = 23;
	bad |= write_one(dir, "fprof_cols23.txt", edge, &ro);
	profile_free(demo);
	profile_free(edge);
	return bad;
}

/* ------------------------------------------------------------------ runner */

static Suite *report_suite(void)
{
	Suite *s = suite_create("report");
	struct {
		const char *name;
		const TTest *test;
	} cases[] = {
		{ "fprof_default", fprof_default_matches_sample },
		{ "fprof_no_callers", fprof_no_callers_matches_sample },
		{ "fprof_totals_sort_own", fprof_totals_sort_own_matches_sample },
		{ "fprof_golden_copies", fprof_golden_copies_are_current },
		{ "fprof_thread_order_independent", fprof_independent_of_thread_order },
		{ "fprof_cols", fprof_cols },
		{ "fprof_cols_minimum", fprof_cols_minimum },
		{ "fprof_cols120", fprof_cols120_layout },
		{ "fprof_no_details", fprof_no_details },
		{ "fprof_totals_merge", fprof_totals_no_callers_merges_threads },
		{ "fprof_rounding", fprof_rounding },
		{ "fprof_tie_order", fprof_tie_order },
		{ "fprof_thread_order", fprof_thread_order },
		{ "fprof_overflow", fprof_count_overflow_shifts_line },
		{ "fprof_thread_info", fprof_thread_info_lines },
		{ "fprof_write_error", fprof_write_error },
		{ "fprof_edgecases_rows", fprof_edgecases_rows_match_sample },
		{ "fprof_edgecases_golden", fprof_edgecases_golden },
		{ "fprof_code_points", fprof_pads_code_points },
		{ "erl_bare", erl_bare_atoms },
		{ "erl_reserved", erl_reserved_words },
		{ "erl_escapes", erl_escapes },
		{ "erl_strings", erl_strings },
		{ "erl_long_names", erl_long_names_become_strings },
		{ "erl_width_order", erl_width_and_order },
		{ "report_table", report_table },
		{ "json_demo", json_demo_fields },
		{ "json_recursion", json_recursion_acc_once },
		{ "json_count_mode", json_count_mode_nulls },
		{ "json_strings", json_strings_valid },
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
	sr = srunner_create(report_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
