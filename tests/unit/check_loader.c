/* SPDX-License-Identifier: MIT */
/* check_loader.c - unit tests of the saved-profile reader (load.c) and of the folded
 * and svg writers, on profiles built with ctree_enter()/ctree_leave()/ctree_count()
 * and injected times. Round trips: a profile written with --format json and read back
 * must render every report byte for byte like the original. The reader must reject
 * empty, truncated, non-JSON, wrongly shaped and unknown-version files with one line
 * naming the problem, and must survive random damage. The SVG is checked with a small
 * XML well-formedness checker written here (no libxml2 needed). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "calltrace/erl.h"
#include "calltrace/profile.h"
#include "calltrace/report.h"

#include "unit_util.h"

/* ------------------------------------------------------------------ helpers */

/* A temporary file holding @len bytes of @data. Caller unlinks and frees the name. */
static char *temp_file(const void *data, size_t len)
{
	char *path = strdup("/tmp/check_loader.XXXXXX");
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
	return path;
}

/* report_load_json() on @len bytes of @data. */
static int load_bytes(const void *data, size_t len, struct profile **out, char *err,
		      size_t errlen)
{
	char *path = temp_file(data, len);
	int rc = report_load_json(path, out, err, errlen);

	unlink(path);
	free(path);
	return rc;
}

/* Simulated calls on one thread: times advance by the steps given, own and acc are
 * derived as the engine derives them. */
struct sim {
	struct profile *p;
	struct ct_thread *t;
	struct ct_node *node[1100];
	uint64_t entry[1100], child[1100];
	int depth;
	uint64_t now;
};

static void sim_init(struct sim *s, struct profile *p, struct ct_thread *t, uint64_t now)
{
	memset(s, 0, sizeof(*s));
	s->p = p;
	s->t = t;
	s->now = now;
}

static void sim_call(struct sim *s, ct_func_id f, uint64_t dt)
{
	struct ct_node *parent = s->depth ? s->node[s->depth - 1] : &s->t->root;

	s->now += dt;
	s->node[s->depth] = ctree_enter(s->p, s->t, parent, f, s->now);
	s->entry[s->depth] = s->now;
	s->child[s->depth] = 0;
	s->depth++;
}

static void sim_ret(struct sim *s, uint64_t dt)
{
	uint64_t acc;
	int d = --s->depth;

	s->now += dt;
	acc = s->now - s->entry[d];
	ctree_leave(s->p, s->t, s->node[d], acc, acc - s->child[d], s->now);
	if (d)
		s->child[d - 1] += acc;
}

static void sim_fib(struct sim *s, ct_func_id fib, int n)
{
	sim_call(s, fib, 7);
	if (n > 1) {
		sim_fib(s, fib, n - 1);
		sim_fib(s, fib, n - 2);
	}
	sim_ret(s, 11 + (uint64_t)n);
}

static char *long_name(void)
{
	static char name[301];

	for (int i = 0; i < 300; i++)
		name[i] = (char)('a' + i % 26);
	name[300] = '\0';
	return name;
}

/* A full-mode profile: three threads (one spawned), recursion, mutual recursion, a
 * suspend pseudo function and hostile names; with @bad_utf8 one name and one module
 * are not valid UTF-8 (else they are valid non-ASCII text). */
static struct profile *build_full(bool bad_utf8)
{
	struct profile *p = profile_new();
	ct_func_id f_main = profile_add_func(p, "main", "app", "/src/app.c", 10, 0, 0x401000);
	ct_func_id f_fib = profile_add_func(p, "fib", "app", "/src/app.c", 3, 1, 0x401100);
	ct_func_id f_quote = profile_add_func(p, "say \"hi\"\nthere", "app", NULL, 0, 2, 0);
	ct_func_id f_bad = bad_utf8 ?
		profile_add_func(p, "bad\xff\xfe utf8 \xe2\x82", "lib\xc3.so", NULL, 0, 0, 0) :
		profile_add_func(p, "b\xc3\xa4" "d \xe2\x82\xac", "lib\xc3\xa4.so", NULL, 0, 0, 0);
	ct_func_id f_long = profile_add_func(p, long_name(), "app", "a.c", 7, 3, 0);
	ct_func_id f_even = profile_add_func(p, "is_even", "app", NULL, 0, 1, 0);
	ct_func_id f_odd = profile_add_func(p, "is_odd", "app", NULL, 0, 1, 0);
	ct_func_id f_worker = profile_add_func(p, "worker", "app", NULL, 0, 1, 0);
	ct_func_id f_susp = profile_add_func(p, "suspend", "", NULL, 0, 0, 0);
	ct_func_id f_printf = profile_add_func(p, "printf", "libc.so.6", NULL, 0, 0, 0);
	ct_func_id f_tag = profile_add_func(p, "<tag & 'x'>;op 2", "app", NULL, 0, 0, 0);
	struct ct_thread *t1 = profile_add_thread(p, 100, 100);
	struct ct_thread *t2 = profile_add_thread(p, 100, 101);
	struct ct_thread *t3 = profile_add_thread(p, 300, 300);
	struct sim s;

	(void)profile_add_func(p, "never_called", "app", NULL, 0, 0, 0);
	p->command = strdup("./app --flag \"x\"");
	t1->comm = strdup("app");
	t2->comm = strdup("app");
	t2->parent_pid = 100;
	t2->parent_tid = 100;
	t2->spawned_as = f_worker;
	t2->spawned_arg = 0xdeadbeef;

	sim_init(&s, p, t1, 1000);
	sim_call(&s, f_main, 0);
	sim_fib(&s, f_fib, 6);
	sim_call(&s, f_quote, 50);
	sim_call(&s, f_bad, 20);
	sim_ret(&s, 300);
	sim_ret(&s, 40);
	for (int i = 0; i < 3; i++) {
		sim_call(&s, f_printf, 5);
		sim_ret(&s, 1000 + (uint64_t)i * 17);
	}
	sim_call(&s, f_even, 3);
	sim_call(&s, f_odd, 3);
	sim_call(&s, f_even, 3);
	sim_call(&s, f_odd, 3);
	sim_ret(&s, 9);
	sim_ret(&s, 9);
	sim_ret(&s, 9);
	sim_ret(&s, 9);
	sim_call(&s, f_long, 2);
	sim_call(&s, f_tag, 2);
	sim_ret(&s, 123);
	sim_ret(&s, 2);
	sim_call(&s, f_susp, 1);
	sim_ret(&s, 50000);
	sim_ret(&s, 77);

	sim_init(&s, p, t2, 5000);
	sim_call(&s, f_worker, 0);
	sim_fib(&s, f_fib, 4);
	sim_call(&s, f_printf, 5);
	sim_ret(&s, 2000);
	sim_ret(&s, 30);

	sim_init(&s, p, t3, 2000);
	sim_call(&s, f_main, 0);
	sim_call(&s, f_tag, 4);
	sim_ret(&s, 8);
	sim_ret(&s, 1);
	/* a second root call in the same thread */
	sim_call(&s, f_printf, 4);
	sim_ret(&s, 8);
	return p;
}

/* A count-mode profile: edges only, large counts, calls from untraced code. */
static struct profile *build_count(void)
{
	struct profile *p = profile_new();
	ct_func_id f_main = profile_add_func(p, "main", "app", "/src/app.c", 10, 0, 0);
	ct_func_id f_fib = profile_add_func(p, "fib", "app", "/src/app.c", 3, 1, 0);
	ct_func_id f_odd = profile_add_func(p, "odd;name\n", "app", NULL, 0, 0, 0);
	ct_func_id f_w = profile_add_func(p, "worker", "app", NULL, 0, 0, 0);
	struct ct_thread *t1 = profile_add_thread(p, 10, 10);
	struct ct_thread *t2 = profile_add_thread(p, 10, 12);
	uint64_t ts = 100;

	p->mode = CT_MODE_COUNT;
	t1->comm = strdup("app");
	t2->comm = strdup("app");
	t2->spawned_as = f_w;
	t2->parent_pid = t2->parent_tid = 10;
	ctree_count(t1, CT_FUNC_UNDEFINED, f_main, ts++);
	for (int i = 0; i < 1000; i++)
		ctree_count(t1, f_main, f_fib, ts++);
	for (int i = 0; i < 2500; i++)
		ctree_count(t1, f_fib, f_fib, ts++);
	ctree_count(t1, f_main, f_odd, ts++);
	ctree_count(t2, CT_FUNC_UNDEFINED, f_w, ts++);
	for (int i = 0; i < 7; i++)
		ctree_count(t2, f_w, f_odd, ts++);
	return p;
}

/* Every writer, and fprof with its other option sets. */
static void assert_same_reports(const struct profile *a, const struct profile *b)
{
	static const char *const names[] = { "fprof", "json", "cprof", "eprof", "flat",
					     "callgrind", "folded", "svg" };
	struct report_opts ro;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *x = render(a, names[i], NULL), *y = render(b, names[i], NULL);

		assert_same_text(y, x, names[i]);
		free(x);
		free(y);
	}
	report_opts_init(&ro);
	ro.totals = true;
	ro.sort = REPORT_SORT_OWN;
	ro.callers = false;
	{
		char *x = render(a, "fprof", &ro), *y = render(b, "fprof", &ro);

		assert_same_text(y, x, "fprof totals sort=own no callers");
		free(x);
		free(y);
	}
}

/* Save @p as JSON, load it back. Caller frees the result. */
static struct profile *round_trip(const struct profile *p)
{
	char *json = render(p, "json", NULL), err[256];
	struct profile *q = NULL;

	ck_assert_msg(load_bytes(json, strlen(json), &q, err, sizeof(err)) == 0, "load: %s",
		      err);
	ck_assert_ptr_nonnull(q);
	free(json);
	return q;
}

/* ------------------------------------------------------------------ round trips */

START_TEST(round_trip_full)
{
	struct profile *p = build_full(false), *q = round_trip(p);

	ck_assert_uint_eq(q->nr_threads, 3);
	ck_assert_uint_eq(q->nr_nodes, p->nr_nodes);
	ck_assert_int_eq(q->mode, CT_MODE_FULL);
	assert_same_reports(p, q);
	profile_free(p);
	profile_free(q);
}
END_TEST

/* Bytes that are not valid UTF-8 are saved as U+FFFD (json.c), so they cannot come
 * back: the saved JSON is re-emitted unchanged, and from the first load on every
 * report is stable. */
START_TEST(round_trip_bad_utf8)
{
	struct profile *p = build_full(true), *q = round_trip(p), *r = round_trip(q);
	char *a = render(p, "json", NULL), *b = render(q, "json", NULL);

	assert_same_text(b, a, "json");
	ck_assert_str_eq(q->funcs[3].name,
			 "bad\xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd\xef\xbf\xbd");
	assert_same_reports(q, r);
	free(a);
	free(b);
	profile_free(p);
	profile_free(q);
	profile_free(r);
}
END_TEST

static void assert_load_fails(const char *text, const char *needle);

/* The stop cost taken out of the times is saved ("stop_cost") and comes back, and a
 * profile without it (--raw-times, count mode) says null. */
START_TEST(round_trip_stop_cost)
{
	struct profile *p = build_full(false), *q, *r;
	char *a, *b;

	q = round_trip(p);
	ck_assert(!q->compensated);
	a = render(q, "json", NULL);
	ck_assert_ptr_nonnull(strstr(a, "\"stop_cost\": null"));
	free(a);
	p->compensated = true;
	p->stop_cost_ns = 5109;
	p->stop_cost_trips = 27510;
	r = round_trip(p);
	ck_assert(r->compensated);
	ck_assert_uint_eq(r->stop_cost_ns, 5109);
	ck_assert_uint_eq(r->stop_cost_trips, 27510);
	a = render(p, "json", NULL);
	b = render(r, "json", NULL);
	assert_same_text(b, a, "json");
	ck_assert_ptr_nonnull(strstr(a, "\"source\": \"run\""));
	free(a);
	free(b);
	profile_free(r);
	r = NULL;
	p->stop_cost_trips = 0;
	a = render(p, "json", NULL);
	ck_assert_ptr_nonnull(strstr(a, "\"source\": \"calibration\""));
	free(a);
	assert_load_fails("{\"version\": 1, \"mode\": \"full\", \"stop_cost\": {\"ns\": 5}, "
			  "\"functions\": [], \"threads\": []}",
			  "stop_cost: missing key \"round_trips\"");
	assert_load_fails("{\"version\": 1, \"mode\": \"full\", \"stop_cost\": 5, "
			  "\"functions\": [], \"threads\": []}",
			  "\"stop_cost\" must be an object, not int");
	profile_free(p);
	profile_free(q);
}
END_TEST

START_TEST(round_trip_count)
{
	struct profile *p = build_count(), *q = round_trip(p);

	ck_assert_int_eq(q->mode, CT_MODE_COUNT);
	ck_assert_uint_eq(q->nr_threads, 2);
	assert_same_reports(p, q);
	profile_free(p);
	profile_free(q);
}
END_TEST

/* The loader walks trees without recursion: a 500-deep recursion comes back whole. */
START_TEST(round_trip_deep)
{
	struct profile *p = profile_new(), *q;
	ct_func_id f = profile_add_func(p, "down", "app", NULL, 0, 1, 0);
	struct ct_thread *t = profile_add_thread(p, 1, 1);
	struct sim s;

	t->comm = strdup("deep");
	sim_init(&s, p, t, 10);
	for (int i = 0; i < 500; i++)
		sim_call(&s, f, 1);
	for (int i = 0; i < 500; i++)
		sim_ret(&s, 2);
	q = round_trip(p);
	ck_assert_uint_eq(q->nr_nodes, 500);
	assert_same_reports(p, q);
	profile_free(p);
	profile_free(q);
}
END_TEST

/* Saved latency (count, min, max, p50/p95/p99) comes back as a histogram giving the same
 * numbers. */
START_TEST(latency_survives)
{
	struct profile *p = profile_new(), *q;
	ct_func_id f = profile_add_func(p, "work", "app", NULL, 0, 0, 0);
	struct ct_thread *t = profile_add_thread(p, 1, 1);
	struct sim s;
	const double qs[] = { 0, 0.5, 0.95, 0.99, 1 };

	sim_init(&s, p, t, 10);
	for (uint64_t i = 0; i < 237; i++) {
		sim_call(&s, f, 1);
		sim_ret(&s, (i * 7919) % 100000 + 3);
	}
	q = round_trip(p);
	ck_assert_ptr_nonnull(q->funcs[0].hist);
	ck_assert_uint_eq(q->funcs[0].hist->count, 237);
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
		ck_assert_uint_eq(ct_hist_quantile(q->funcs[0].hist, qs[i]),
				  ct_hist_quantile(p->funcs[0].hist, qs[i]));
	profile_free(p);
	profile_free(q);
}
END_TEST

/* ------------------------------------------------------------------ errors */

static void assert_load_fails(const char *text, const char *needle)
{
	struct profile *q = (struct profile *)1;
	char err[256];

	ck_assert_int_eq(load_bytes(text, strlen(text), &q, err, sizeof(err)), -1);
	ck_assert_ptr_null(q);
	ck_assert_msg(strstr(err, needle) != NULL, "message [%s] lacks [%s]", err, needle);
	ck_assert_msg(!strchr(err, '\n'), "message [%s] is not one line", err);
}

START_TEST(error_missing_file)
{
	struct profile *q;
	char err[256];

	ck_assert_int_eq(report_load_json("/nonexistent/profile.json", &q, err, sizeof(err)),
			 -1);
	ck_assert_ptr_null(q);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/profile.json: cannot open"));
	ck_assert_int_eq(report_load_json("/", &q, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "cannot read"));
}
END_TEST

START_TEST(error_empty)
{
	assert_load_fails("", "empty file");
	assert_load_fails(" \n\t\n", "empty file");
}
END_TEST

START_TEST(error_not_json)
{
	assert_load_fails("hello\n", "not JSON");
	assert_load_fails("{\"version\": 1,,}", "not JSON");
	assert_load_fails("{\"version\": 1} trailing", "unexpected data after");
	assert_load_fails("fprof output, not json", "not JSON");
}
END_TEST

START_TEST(error_shape)
{
	assert_load_fails("[1, 2]", "top-level value must be an object");
	assert_load_fails("42", "top-level value must be an object");
	assert_load_fails("{}", "missing key \"version\"");
	assert_load_fails("{\"version\": 1}", "missing key \"mode\"");
	assert_load_fails("{\"version\": 1, \"mode\": \"fast\", \"functions\": [], "
			  "\"threads\": []}", "\"mode\"");
	assert_load_fails("{\"version\": 1, \"mode\": \"full\", \"functions\": {}, "
			  "\"threads\": []}", "\"functions\" must be an array, not object");
	assert_load_fails("{\"version\": 1, \"mode\": \"full\", \"functions\": [7], "
			  "\"threads\": []}", "functions[0] must be an object");
	assert_load_fails("{\"version\": 1, \"mode\": \"full\", \"functions\": "
			  "[{\"name\": 3, \"module\": \"m\"}], \"threads\": []}",
			  "functions[0]: \"name\" must be a string, not int");
	assert_load_fails("{\"version\": 1, \"mode\": \"full\", \"functions\": [], "
			  "\"threads\": [{\"pid\": 1}]}", "threads[0]: missing key \"tid\"");
	assert_load_fails("{\"version\": 1, \"mode\": \"full\", \"functions\": [], "
			  "\"threads\": [{\"pid\": 1, \"tid\": 1, \"tree\": {\"children\": "
			  "[{\"name\": \"f\", \"module\": \"m\", \"calls\": -1, \"own_ns\": 0, "
			  "\"acc_ns\": 0}]}}]}",
			  "threads[0].tree: node at depth 1 (children[0]): \"calls\" must be a "
			  "non-negative integer");
	assert_load_fails("{\"version\": 1, \"mode\": \"full\", \"functions\": [], "
			  "\"threads\": [{\"pid\": 1, \"tid\": 1, \"tree\": {\"children\": "
			  "[{\"name\": \"f\", \"module\": \"m\", \"calls\": 1, \"own_ns\": null, "
			  "\"acc_ns\": 0}]}}]}",
			  "\"own_ns\" must be a non-negative integer, not null");
	assert_load_fails("{\"version\": 1, \"mode\": \"count\", \"functions\": [], "
			  "\"threads\": [{\"pid\": 1, \"tid\": 1, \"edges\": [{\"caller\": "
			  "{\"name\": \"a\", \"module\": \"m\"}, \"calls\": 1}]}]}",
			  "threads[0].edges[0]: missing key \"callee\"");
	assert_load_fails("{\"version\": 1, \"mode\": \"full\", \"functions\": [], "
			  "\"threads\": [{\"pid\": 1, \"tid\": 1, \"spawned_by\": \"me\"}]}",
			  "\"spawned_by\"");
}
END_TEST

START_TEST(error_version)
{
	assert_load_fails("{\"version\": 2, \"mode\": \"full\"}", "unknown profile version 2");
	assert_load_fails("{\"version\": \"1\"}", "unknown profile version \"1\"");
}
END_TEST

/* Every proper prefix of a saved profile fails cleanly (the last byte is the newline
 * after the object, so the longest tested prefix is the object minus its '}'). */
START_TEST(error_every_prefix)
{
	struct profile *p = build_count(), *q;
	char *json = render(p, "json", NULL), err[256];
	size_t len = strlen(json);

	for (size_t n = 0; n + 1 < len; n++) {
		q = (struct profile *)1;
		ck_assert_int_eq(load_bytes(json, n, &q, err, sizeof(err)), -1);
		ck_assert_ptr_null(q);
		ck_assert_msg(strstr(err, n ? "truncated" : "empty"), "prefix %zu: %s", n, err);
	}
	ck_assert_int_eq(load_bytes(json, len - 1, &q, err, sizeof(err)), 0);
	profile_free(q);
	free(json);
	profile_free(p);
}
END_TEST

/* Random byte flips, insertions and cuts: never a crash; what loads also renders. */
START_TEST(fuzz_damage)
{
	struct profile *p = build_full(true), *q;
	char *json = render(p, "json", NULL), err[256];
	size_t len = strlen(json);
	char *buf = malloc(len + 16);
	unsigned seed = 12345;
	int loaded = 0;
	static const char junk[] = "{}[]\",:0-9etn\\ \xff";

	for (int round = 0; round < 400; round++) {
		size_t n = len;

		memcpy(buf, json, len);
		for (int k = 0; k < 1 + round % 4; k++) {
			size_t at = (size_t)rand_r(&seed) % n;

			switch (rand_r(&seed) % 3) {
			case 0:
				buf[at] = (char)(rand_r(&seed) & 0xff);
				break;
			case 1:
				buf[at] = junk[(size_t)rand_r(&seed) % (sizeof(junk) - 1)];
				break;
			default:
				n = at + 1;
				break;
			}
		}
		err[0] = '\0';
		if (load_bytes(buf, n, &q, err, sizeof(err)) == 0) {
			static const char *const names[] = { "fprof", "json", "cprof", "eprof",
							     "flat", "callgrind", "folded",
							     "svg" };

			loaded++;
			for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
				free(render(q, names[i], NULL));
			profile_free(q);
		} else {
			ck_assert_ptr_null(q);
			ck_assert_msg(err[0] != '\0', "round %d: no message", round);
		}
	}
	ck_assert_int_gt(loaded, 0);
	free(buf);
	free(json);
	profile_free(p);
}
END_TEST

/* ------------------------------------------------------------------ folded */

START_TEST(folded_golden)
{
	struct profile *p = profile_new();
	ct_func_id f_main = profile_add_func(p, "main", "demo", NULL, 0, 0, 0);
	ct_func_id f_fib = profile_add_func(p, "fib", "demo", NULL, 0, 1, 0);
	ct_func_id f_b = profile_add_func(p, "b", "demo", NULL, 0, 0, 0);
	ct_func_id f_fib2 = profile_add_func(p, "fib2", "demo", NULL, 0, 0, 0);
	ct_func_id f_zero = profile_add_func(p, "zero", "demo", NULL, 0, 0, 0);
	struct ct_thread *t = profile_add_thread(p, 4242, 4243);
	struct ct_thread *t0 = profile_add_thread(p, 4242, 4242);
	struct ct_node *m, *f1, *f2, *n;
	char *got;

	t->comm = strdup("demo");
	t0->comm = strdup("demo");
	m = ctree_enter(p, t0, &t0->root, f_main, 1);
	f1 = ctree_enter(p, t0, m, f_fib, 2);
	f2 = ctree_enter(p, t0, f1, f_fib, 3);
	ctree_leave(p, t0, f2, 30, 30, 33);
	ctree_leave(p, t0, f1, 50, 20, 52);
	n = ctree_enter(p, t0, m, f_fib2, 60);
	ctree_leave(p, t0, n, 5, 5, 65);
	n = ctree_enter(p, t0, m, f_b, 70);
	ctree_leave(p, t0, n, 7, 7, 77);
	n = ctree_enter(p, t0, m, f_zero, 80);
	ctree_leave(p, t0, n, 0, 0, 80);
	ctree_leave(p, t0, m, 1000, 938, 1001);
	m = ctree_enter(p, t, &t->root, f_b, 5);
	ctree_leave(p, t, m, 9, 9, 14);

	got = render(p, "folded", NULL);
	assert_same_text(got,
			 "demo-4242/4242;main 938\n"
			 "demo-4242/4242;main;b 7\n"
			 "demo-4242/4242;main;fib 20\n"
			 "demo-4242/4242;main;fib;fib 30\n"
			 "demo-4242/4242;main;fib2 5\n"
			 "demo-4242/4243;b 9\n", "folded");
	free(got);
	profile_free(p);
}
END_TEST

/* Frame names never contain ';' or a newline, never end in space + number, and are
 * valid UTF-8; paths that become equal are merged. */
START_TEST(folded_names)
{
	struct profile *p = profile_new();
	const char *const names[] = { "semi;colon", "new\nline", "op 2", "ver 1.5", "",
				      "bad\xff", "semi_colon", "tab\tx", "1.5" };
	struct ct_thread *t = profile_add_thread(p, 7, 8);
	char *got;

	t->comm = strdup("my;app 3");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		ct_func_id f = profile_add_func(p, names[i], "m", NULL, 0, 0, 0);
		struct ct_node *n = ctree_enter(p, t, &t->root, f, 1);

		ctree_leave(p, t, n, 10 + i, 10 + i, 2);
	}
	got = render(p, "folded", NULL);
	assert_same_text(got,
			 "my_app 3-7/8;1.5 18\n"
			 "my_app 3-7/8;? 14\n"
			 "my_app 3-7/8;bad\xef\xbf\xbd 15\n"
			 "my_app 3-7/8;new?line 11\n"
			 "my_app 3-7/8;op 2_ 12\n"
			 "my_app 3-7/8;semi_colon 26\n"
			 "my_app 3-7/8;tab?x 17\n"
			 "my_app 3-7/8;ver 1.5_ 13\n", "folded names");
	free(got);
	profile_free(p);
}
END_TEST

START_TEST(folded_count_mode)
{
	struct profile *p = build_count();
	char *got = render(p, "folded", NULL);

	assert_same_text(got,
			 "app-10/10;fib;fib 2500\n"
			 "app-10/10;main 1\n"
			 "app-10/10;main;fib 1000\n"
			 "app-10/10;main;odd_name? 1\n"
			 "app-10/12;worker 1\n"
			 "app-10/12;worker;odd_name? 7\n", "folded count");
	free(got);
	profile_free(p);
}
END_TEST

/* ------------------------------------------------------------------ svg */

/* @s starts with one of the five predefined entities or a decimal character
 * reference. */
static bool is_entity(const char *s)
{
	static const char *const ents[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
	size_t d;

	for (size_t k = 0; k < 5; k++)
		if (!strncmp(s, ents[k], strlen(ents[k])))
			return true;
	if (s[1] != '#')
		return false;
	d = strspn(s + 2, "0123456789");
	return d && s[2 + d] == ';';
}

/* Minimal XML well-formedness: UTF-8 without forbidden control characters, balanced
 * and properly nested tags, quoted attributes without '<', and only the five predefined
 * entities or character references. Returns NULL or a description of the problem. */
static const char *xml_problem(const char *s, size_t *where)
{
	static char why[128];
	const char *stack[4096];
	size_t lens[4096];
	size_t depth = 0, n = strlen(s);
	const char *q = s, *end = s + n;

	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len = erl_utf8_decode(s + i, n - i, &cp);

		*where = i;
		if (!len)
			return "invalid UTF-8";
		if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0xfffe ||
		    cp == 0xffff)
			return "forbidden character";
		i += len;
	}
	while (q < end) {
		*where = (size_t)(q - s);
		if (*q == '&') {
			if (!is_entity(q))
				return "bare &";
			q++;
			continue;
		}
		if (*q == '>')
			return "bare >";
		if (*q != '<') {
			q++;
			continue;
		}
		if (!strncmp(q, "<?", 2)) {
			const char *e = strstr(q, "?>");

			if (!e)
				return "unterminated <?";
			q = e + 2;
		} else if (!strncmp(q, "<![CDATA[", 9)) {
			const char *e = strstr(q, "]]>");

			if (!e)
				return "unterminated CDATA";
			q = e + 3;
		} else if (!strncmp(q, "<!--", 4)) {
			const char *e = strstr(q, "-->");

			if (!e)
				return "unterminated comment";
			q = e + 3;
		} else if (q[1] == '/') {
			size_t len = strcspn(q + 2, " \t\n>");

			if (!depth || lens[depth - 1] != len ||
			    strncmp(stack[depth - 1], q + 2, len))
				return "mismatched end tag";
			depth--;
			q += 2 + len;
			q += strspn(q, " \t\n");
			if (*q != '>')
				return "bad end tag";
			q++;
		} else {
			const char *name = q + 1;
			size_t len = strcspn(name, " \t\n/>");

			if (!len)
				return "empty tag name";
			q = name + len;
			for (;;) {
				q += strspn(q, " \t\n");
				if (*q == '>' || !strncmp(q, "/>", 2))
					break;
				q += strcspn(q, "= \t\n>");
				if (*q != '=' || (q[1] != '"' && q[1] != '\''))
					return "attribute without quoted value";
				{
					char quote = q[1];
					const char *e = strchr(q + 2, quote);

					if (!e)
						return "unterminated attribute";
					for (const char *a = q + 2; a < e; a++) {
						if (*a == '<')
							return "< in attribute";
						if (*a == '&' && !is_entity(a))
							return "bare & in attribute";
					}
					q = e + 1;
				}
			}
			if (*q == '>') {
				if (depth == 4096)
					return "too deep";
				stack[depth] = name;
				lens[depth++] = len;
				q++;
			} else {
				q += 2;
			}
		}
	}
	if (depth) {
		snprintf(why, sizeof(why), "unclosed <%.*s>", (int)lens[depth - 1],
			 stack[depth - 1]);
		return why;
	}
	return NULL;
}

static void assert_well_formed(const char *svg)
{
	size_t at = 0;
	const char *why = xml_problem(svg, &at);

	ck_assert_msg(!why, "SVG not well-formed: %s at byte %zu: [%.60s]", why, at, svg + at);
}

static size_t count_str(const char *s, const char *needle)
{
	size_t n = 0;

	for (const char *q = strstr(s, needle); q; q = strstr(q + 1, needle))
		n++;
	return n;
}

/* The rect width of the first frame whose tooltip starts with "@name\n". */
static double frame_width(const char *svg, const char *name)
{
	char key[128];
	const char *q, *w;

	snprintf(key, sizeof(key), "<g class=\"frame\"><title>%s\n", name);
	q = strstr(svg, key);
	ck_assert_msg(q != NULL, "no frame %s", name);
	w = strstr(q, " width=\"");
	ck_assert_ptr_nonnull(w);
	return strtod(w + 8, NULL);
}

START_TEST(self_test_xml_checker)
{
	size_t at;

	ck_assert_ptr_null(xml_problem("<a x=\"1\"><b/>t &amp; u</a>", &at));
	ck_assert_ptr_nonnull(xml_problem("<a><b></a></b>", &at));
	ck_assert_ptr_nonnull(xml_problem("<a>x & y</a>", &at));
	ck_assert_ptr_nonnull(xml_problem("<a>x < y</a>", &at));
	ck_assert_ptr_nonnull(xml_problem("<a t=\"<\"></a>", &at));
	ck_assert_ptr_nonnull(xml_problem("<a>\xff</a>", &at));
	ck_assert_ptr_nonnull(xml_problem("<a>\x01</a>", &at));
	ck_assert_ptr_nonnull(xml_problem("<a>", &at));
}
END_TEST

START_TEST(svg_frames_and_widths)
{
	struct profile *p = build_full(true);
	char *svg = render(p, "svg", NULL);
	double w_main, w_fib, w_printf;
	uint64_t acc_main = 0, acc_fib = 0, acc_printf = 0;

	assert_well_formed(svg);
	ck_assert_uint_eq(count_str(svg, "<g class=\"frame\""), p->nr_nodes);
	ck_assert_uint_eq(count_str(svg, "<g class=\"thread\""), 3);
	ck_assert_uint_eq(count_str(svg, "<g class=\"all\""), 1);
	/* thread 100/100: main, its first fib and its printf */
	for (const struct ct_node *n = p->threads[0]->root.first_child; n; n = n->next_sibling) {
		acc_main = n->acc_ns;
		for (const struct ct_node *k = n->first_child; k; k = k->next_sibling) {
			if (k->func == 1)
				acc_fib = k->acc_ns;
			if (k->func == 9)
				acc_printf = k->acc_ns;
		}
	}
	w_main = frame_width(svg, "main");
	w_fib = frame_width(svg, "fib");
	w_printf = frame_width(svg, "printf");
	ck_assert_msg(acc_main && acc_fib && acc_printf, "test profile changed");
	ck_assert_double_eq_tol(w_fib / w_main, (double)acc_fib / (double)acc_main,
				0.01 * (double)acc_fib / (double)acc_main);
	ck_assert_double_eq_tol(w_printf / w_fib, (double)acc_printf / (double)acc_fib,
				0.01 * (double)acc_printf / (double)acc_fib);
	/* names: escaped, control characters and invalid bytes replaced */
	ck_assert_ptr_nonnull(strstr(svg, "&lt;tag &amp; &apos;x&apos;&gt;;op 2"));
	ck_assert_ptr_nonnull(strstr(svg, "say &quot;hi&quot;?there"));
	ck_assert_ptr_nonnull(strstr(svg, "bad\xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd"));
	ck_assert_ptr_nonnull(strstr(svg, long_name()));
	ck_assert_ptr_nonnull(strstr(svg, "<script"));
	ck_assert_ptr_null(strstr(svg, "href="));
	free(svg);
	profile_free(p);
}
END_TEST

/* More than 10000 call paths: frames narrower than 0.1 px are left out but counted. */
START_TEST(svg_elision)
{
	struct profile *p = profile_new();
	struct ct_thread *t = profile_add_thread(p, 1, 1);
	size_t frames, elided = 0;
	char *svg;
	const char *q;

	for (int i = 0; i < 10050; i++) {
		char name[32];
		ct_func_id f;
		struct ct_node *n;

		snprintf(name, sizeof(name), "f%05d", i);
		f = profile_add_func(p, name, "m", NULL, 0, 0, 0);
		n = ctree_enter(p, t, &t->root, f, 1);
		ctree_leave(p, t, n, i % 100 ? 1 : 100000000, 1, 2);
	}
	svg = render(p, "svg", NULL);
	assert_well_formed(svg);
	frames = count_str(svg, "<g class=\"frame\"");
	q = strstr(svg, " ns; ");
	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(sscanf(q, " ns; %zu call paths narrower than 0.1 px not drawn", &elided),
			 1);
	ck_assert_uint_eq(frames, 101);
	ck_assert_uint_eq(frames + elided, p->nr_nodes);
	free(svg);
	profile_free(p);
}
END_TEST

/* A call that never returned (main calling exit()) has less ACC than its callees: it
 * is drawn as wide as they are together, and its tooltip keeps the recorded ACC. */
START_TEST(svg_unreturned)
{
	struct profile *p = profile_new();
	ct_func_id f_main = profile_add_func(p, "main", "app", NULL, 0, 0, 0);
	ct_func_id f_a = profile_add_func(p, "a", "app", NULL, 0, 0, 0);
	ct_func_id f_b = profile_add_func(p, "b", "app", NULL, 0, 0, 0);
	struct ct_thread *t = profile_add_thread(p, 1, 1);
	struct ct_node *m = ctree_enter(p, t, &t->root, f_main, 1), *n;
	char *svg;

	n = ctree_enter(p, t, m, f_a, 2);
	ctree_leave(p, t, n, 300, 300, 302);
	n = ctree_enter(p, t, m, f_b, 400);
	ctree_leave(p, t, n, 100, 100, 500);
	svg = render(p, "svg", NULL);
	assert_well_formed(svg);
	ck_assert_double_eq_tol(frame_width(svg, "main"), 1180.0, 0.001);
	ck_assert_double_eq_tol(frame_width(svg, "a"), 885.0, 0.001);
	ck_assert_double_eq_tol(frame_width(svg, "b"), 295.0, 0.001);
	ck_assert_ptr_nonnull(strstr(svg, "main\napp: calls 1, own 0 ns, acc 0 ns, 0.00% of total"));
	free(svg);
	profile_free(p);
}
END_TEST

START_TEST(svg_count_mode)
{
	struct profile *p = build_count();
	char *svg = render(p, "svg", NULL);

	assert_well_formed(svg);
	ck_assert_uint_eq(count_str(svg, "<g class=\"frame\""), 0);
	ck_assert_ptr_nonnull(strstr(svg, "count mode"));
	free(svg);
	profile_free(p);
}
END_TEST

static Suite *loader_suite(void)
{
	Suite *s = suite_create("loader");
	TCase *tc;

	tc = tcase_create("round_trip");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, round_trip_full);
	tcase_add_test(tc, round_trip_bad_utf8);
	tcase_add_test(tc, round_trip_count);
	tcase_add_test(tc, round_trip_stop_cost);
	tcase_add_test(tc, round_trip_deep);
	tcase_add_test(tc, latency_survives);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, error_missing_file);
	tcase_add_test(tc, error_empty);
	tcase_add_test(tc, error_not_json);
	tcase_add_test(tc, error_shape);
	tcase_add_test(tc, error_version);
	tcase_add_test(tc, error_every_prefix);
	tcase_add_test(tc, fuzz_damage);
	suite_add_tcase(s, tc);

	tc = tcase_create("folded");
	tcase_add_test(tc, folded_golden);
	tcase_add_test(tc, folded_names);
	tcase_add_test(tc, folded_count_mode);
	suite_add_tcase(s, tc);

	tc = tcase_create("svg");
	tcase_add_test(tc, self_test_xml_checker);
	tcase_add_test(tc, svg_frames_and_widths);
	tcase_add_test(tc, svg_elision);
	tcase_add_test(tc, svg_unreturned);
	tcase_add_test(tc, svg_count_mode);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(loader_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
