/* SPDX-License-Identifier: MIT */
/* check_ctree.c - unit tests of the calling-context tree (src/ctree/ctree.c) on plain
 * data with injected times: one node per distinct path, recursion marking (is_rec) and
 * fprof's "ACC once" rule in profile_thread_arcs(), the latency histograms, count
 * mode's caller -> callee index, and the iterative walk and free on very deep trees.
 * A small replay helper (sim_*) keeps a stack like the engine's shadow stack, so each
 * test states calls and returns with times and the expected OWN/ACC worked out by hand
 * in its comment. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "calltrace/profile.h"

enum { F_MAIN, F_A, F_B, F_C, F_FIB, NR_F };

static struct profile *p;
static struct ct_thread *th;

static void setup(void)
{
	static const char *const names[NR_F] = { "main", "a", "b", "c", "fib" };

	p = profile_new();
	for (int i = 0; i < NR_F; i++)
		ck_assert_uint_eq(profile_add_func(p, names[i], "app", NULL, 0, 0, 0x1000 + i * 0x10),
				  (ct_func_id)i);
	th = profile_add_thread(p, 100, 100);
}

static void teardown(void)
{
	profile_free(p);
	p = NULL;
	th = NULL;
}

/* ------------------------------------------------------------------ replay helper */

#define SIM_MAX 64

static struct {
	struct ct_node *node;
	uint64_t entry, child;
} sim[SIM_MAX];
static int sim_depth;

static struct ct_node *sim_enter(ct_func_id f, uint64_t ts)
{
	struct ct_node *parent = sim_depth ? sim[sim_depth - 1].node : &th->root;
	struct ct_node *n = ctree_enter(p, th, parent, f, ts);

	ck_assert_int_lt(sim_depth, SIM_MAX);
	sim[sim_depth].node = n;
	sim[sim_depth].entry = ts;
	sim[sim_depth].child = 0;
	sim_depth++;
	return n;
}

static void sim_leave(uint64_t ts)
{
	uint64_t acc, own;

	ck_assert_int_gt(sim_depth, 0);
	sim_depth--;
	acc = ts - sim[sim_depth].entry;
	own = acc - sim[sim_depth].child;
	ctree_leave(p, th, sim[sim_depth].node, acc, own, ts);
	if (sim_depth)
		sim[sim_depth - 1].child += acc;
}

/* The child of @parent for @f, or NULL (no side effect, unlike ctree_path). */
static struct ct_node *child(const struct ct_node *parent, ct_func_id f)
{
	for (struct ct_node *c = parent->first_child; c; c = c->next_sibling)
		if (c->func == f)
			return c;
	return NULL;
}

static size_t nr_children(const struct ct_node *parent)
{
	size_t n = 0;

	for (const struct ct_node *c = parent->first_child; c; c = c->next_sibling)
		n++;
	return n;
}

static void assert_node(const struct ct_node *n, uint64_t calls, uint64_t own, uint64_t acc,
			bool is_rec)
{
	ck_assert_ptr_nonnull(n);
	ck_assert_uint_eq(n->calls, calls);
	ck_assert_uint_eq(n->own_ns, own);
	ck_assert_uint_eq(n->acc_ns, acc);
	ck_assert_int_eq(n->is_rec, is_rec);
}

/* Arcs summed per (caller, callee) pair, as the writers sum them. */
#define MAX_ARCS 16
struct arc_sum {
	size_t nr, nr_visits;
	struct ct_arc a[MAX_ARCS];
};

static void sum_arc(const struct ct_arc *a, void *arg)
{
	struct arc_sum *s = arg;
	size_t i;

	s->nr_visits++;
	for (i = 0; i < s->nr; i++)
		if (s->a[i].caller == a->caller && s->a[i].callee == a->callee)
			break;
	if (i == s->nr) {
		ck_assert_uint_lt(s->nr, MAX_ARCS);
		s->a[s->nr++] = (struct ct_arc){ .caller = a->caller, .callee = a->callee,
						 .has_time = a->has_time };
	}
	ck_assert_int_eq(s->a[i].has_time, a->has_time);
	s->a[i].calls += a->calls;
	s->a[i].own_ns += a->own_ns;
	s->a[i].acc_ns += a->acc_ns;
	s->a[i].acc_raw_ns += a->acc_raw_ns;
}

static const struct ct_arc *arc(const struct arc_sum *s, ct_func_id caller, ct_func_id callee)
{
	for (size_t i = 0; i < s->nr; i++)
		if (s->a[i].caller == caller && s->a[i].callee == callee)
			return &s->a[i];
	ck_abort_msg("no arc %u -> %u", caller, callee);
	return NULL;
}

/* ------------------------------------------------------------------ paths */

/* main calls a three times and b once: two nodes below main, a's counting 3 calls. */
START_TEST(path_is_one_node)
{
	struct ct_node *m, *a1, *a2;

	m = sim_enter(F_MAIN, 10);
	a1 = sim_enter(F_A, 20);
	sim_leave(25);
	a2 = sim_enter(F_A, 30);
	sim_leave(40);
	ck_assert_ptr_eq(a1, a2);
	sim_enter(F_B, 50);
	sim_leave(51);
	sim_enter(F_A, 60);
	sim_leave(62);
	sim_leave(100);

	ck_assert_uint_eq(p->nr_nodes, 3);
	ck_assert_ptr_eq(child(&th->root, F_MAIN), m);
	ck_assert_uint_eq(nr_children(&th->root), 1);
	ck_assert_uint_eq(nr_children(m), 2);
	ck_assert_ptr_eq(m->parent, &th->root);
	ck_assert_ptr_eq(a1->parent, m);
	assert_node(m, 1, 90 - 5 - 10 - 1 - 2, 90, false);
	assert_node(a1, 3, 17, 17, false);
	assert_node(child(m, F_B), 1, 1, 1, false);
	ck_assert_uint_eq(th->first_ts, 10);
	ck_assert_uint_eq(th->last_ts, 100);
}
END_TEST

/* The same function under two different callers is two nodes. */
START_TEST(path_differs_by_caller)
{
	struct ct_node *m;

	m = sim_enter(F_MAIN, 0);
	sim_enter(F_A, 1);
	sim_enter(F_C, 2);
	sim_leave(3);
	sim_leave(4);
	sim_enter(F_B, 5);
	sim_enter(F_C, 6);
	sim_leave(8);
	sim_leave(9);
	sim_leave(10);

	ck_assert_uint_eq(p->nr_nodes, 5);
	assert_node(child(child(m, F_A), F_C), 1, 1, 1, false);
	assert_node(child(child(m, F_B), F_C), 1, 2, 2, false);
}
END_TEST

/* ------------------------------------------------------------------ recursion */

/* fib(3) = fib(2) [fib(1), fib(0)] + fib(1):
 *   0 fib3 { 10 fib2 { 20 fib1 } 25  30 fib0 } 33  } 40  50 fib1 } 56 } 60
 * N1 = fib:         calls 1, acc 60, own 60 - 30 - 6 = 24
 * N2 = fib/fib:     calls 2 (fib2, fib1), acc 30 + 6 = 36, own (30 - 8) + 6 = 28, is_rec
 * N3 = fib/fib/fib: calls 2 (fib1, fib0), acc 5 + 3 = 8, own 8, is_rec
 * Arcs: undefined -> fib: acc 60; fib -> fib: calls 4, acc 0 (fprof: ACC once),
 * acc_raw 36 + 8 = 44, own 28 + 8 = 36. */
START_TEST(recursion_fib)
{
	struct ct_node *n1, *n2, *n3;
	struct arc_sum s = { 0 };
	const struct ct_arc *a;
	const struct ct_hist *h;

	n1 = sim_enter(F_FIB, 0);
	n2 = sim_enter(F_FIB, 10);
	n3 = sim_enter(F_FIB, 20);
	sim_leave(25);
	ck_assert_ptr_eq(sim_enter(F_FIB, 30), n3);
	sim_leave(33);
	sim_leave(40);
	ck_assert_ptr_eq(sim_enter(F_FIB, 50), n2);
	sim_leave(56);
	sim_leave(60);

	ck_assert_uint_eq(p->nr_nodes, 3);
	assert_node(n1, 1, 24, 60, false);
	assert_node(n2, 2, 28, 36, true);
	assert_node(n3, 2, 8, 8, true);

	profile_thread_arcs(p, th, sum_arc, &s);
	ck_assert_uint_eq(s.nr_visits, 3);
	ck_assert_uint_eq(s.nr, 2);
	a = arc(&s, CT_FUNC_UNDEFINED, F_FIB);
	ck_assert_uint_eq(a->calls, 1);
	ck_assert_uint_eq(a->acc_ns, 60);
	ck_assert_uint_eq(a->acc_raw_ns, 60);
	ck_assert_uint_eq(a->own_ns, 24);
	ck_assert(a->has_time);
	a = arc(&s, F_FIB, F_FIB);
	ck_assert_uint_eq(a->calls, 4);
	ck_assert_uint_eq(a->acc_ns, 0);
	ck_assert_uint_eq(a->acc_raw_ns, 44);
	ck_assert_uint_eq(a->own_ns, 36);

	/* every call's ACC, recursive ones included, is in fib's histogram */
	h = p->funcs[F_FIB].hist;
	ck_assert_ptr_nonnull(h);
	ck_assert_uint_eq(h->count, 5);
	ck_assert_uint_eq(h->min_ns, 3);
	ck_assert_uint_eq(h->max_ns, 60);
}
END_TEST

/* a -> b -> a -> b: the inner a and the inner b are both already active on their path.
 *   0 a { 10 b { 20 a { 30 b } 35 } 45 } 60 } 100
 * outer a: acc 100, own 50; outer b: acc 50, own 25; inner a: acc 25, own 20;
 * inner b: acc 5, own 5. Arcs: a -> b sums the outer b (acc 50) and the inner b (rec:
 * 0) = 50, raw 55; b -> a is only the inner a: acc 0, raw 25. */
START_TEST(recursion_mutual)
{
	struct ct_node *a1, *b1, *a2, *b2;
	struct arc_sum s = { 0 };
	const struct ct_arc *a;

	a1 = sim_enter(F_A, 0);
	b1 = sim_enter(F_B, 10);
	a2 = sim_enter(F_A, 20);
	b2 = sim_enter(F_B, 30);
	sim_leave(35);
	sim_leave(45);
	sim_leave(60);
	sim_leave(100);

	assert_node(a1, 1, 50, 100, false);
	assert_node(b1, 1, 25, 50, false);
	assert_node(a2, 1, 20, 25, true);
	assert_node(b2, 1, 5, 5, true);

	profile_thread_arcs(p, th, sum_arc, &s);
	ck_assert_uint_eq(s.nr, 3);
	a = arc(&s, CT_FUNC_UNDEFINED, F_A);
	ck_assert_uint_eq(a->acc_ns, 100);
	a = arc(&s, F_A, F_B);
	ck_assert_uint_eq(a->calls, 2);
	ck_assert_uint_eq(a->acc_ns, 50);
	ck_assert_uint_eq(a->acc_raw_ns, 55);
	ck_assert_uint_eq(a->own_ns, 30);
	a = arc(&s, F_B, F_A);
	ck_assert_uint_eq(a->calls, 1);
	ck_assert_uint_eq(a->acc_ns, 0);
	ck_assert_uint_eq(a->acc_raw_ns, 25);
}
END_TEST

/* Functions 1 and 65 share a path_bloom bit (id % 64): 65 below 1 is not recursive;
 * 65 below 65 is, even with 1 in between. */
START_TEST(recursion_bloom_collision)
{
	struct ct_node *n1, *n65, *n1b, *n65b;

	for (int i = NR_F; i < 66; i++) {
		char name[16];

		snprintf(name, sizeof(name), "f%d", i);
		ck_assert_uint_eq(profile_add_func(p, name, "app", NULL, 0, 0, 0), (ct_func_id)i);
	}
	n1 = ctree_enter(p, th, &th->root, 1, 1);
	n65 = ctree_enter(p, th, n1, 65, 2);
	n1b = ctree_enter(p, th, n65, 1, 3);
	n65b = ctree_enter(p, th, n1b, 65, 4);
	ck_assert(!n1->is_rec);
	ck_assert(!n65->is_rec);
	ck_assert(n1b->is_rec);
	ck_assert(n65b->is_rec);
	ck_assert(!ctree_enter(p, th, n65, 2, 5)->is_rec);
}
END_TEST

/* ------------------------------------------------------------------ ctree_path */

START_TEST(path_counts_no_call)
{
	struct ct_node *m, *a, *again;

	m = ctree_path(p, th, &th->root, F_MAIN);
	a = ctree_path(p, th, m, F_A);
	ck_assert_uint_eq(p->nr_nodes, 2);
	ck_assert_uint_eq(m->calls, 0);
	ck_assert_uint_eq(a->calls, 0);
	ck_assert_ptr_eq(a->parent, m);
	/* no event recorded: no time span */
	ck_assert_uint_eq(th->first_ts, 0);
	ck_assert_uint_eq(th->last_ts, 0);

	ck_assert_ptr_eq(ctree_path(p, th, &th->root, F_MAIN), m);
	ck_assert_uint_eq(p->nr_nodes, 2);
	ck_assert_uint_eq(m->calls, 0);

	/* a later call on the same path uses the same node and counts once */
	again = ctree_enter(p, th, m, F_A, 50);
	ck_assert_ptr_eq(again, a);
	ck_assert_uint_eq(a->calls, 1);
	ck_assert_uint_eq(p->nr_nodes, 2);
	ck_assert_uint_eq(th->first_ts, 50);
}
END_TEST

/* ------------------------------------------------------------------ move-to-front */

/* The same call pattern replayed in two threads, one with its children created in a
 * different order: identical counts and times per path whatever the sibling order. */
START_TEST(move_to_front_keeps_results)
{
	static const ct_func_id pat[] = { F_A, F_B, F_C, F_A, F_A, F_C, F_B, F_FIB };
	struct ct_thread *t2 = profile_add_thread(p, 100, 101);
	struct ct_node *m1, *m2;
	uint64_t ts = 0;

	m1 = ctree_enter(p, th, &th->root, F_MAIN, ts);
	m2 = ctree_enter(p, t2, &t2->root, F_MAIN, ts);
	/* t2: children created in reverse order first, without calls */
	for (int f = F_FIB; f >= F_A; f--)
		ctree_path(p, t2, m2, (ct_func_id)f);
	for (int i = 0; i < 1000; i++) {
		ct_func_id f = pat[i % 8];
		uint64_t d = (uint64_t)(i % 13) + 1;
		struct ct_node *n1 = ctree_enter(p, th, m1, f, ts);
		struct ct_node *n2 = ctree_enter(p, t2, m2, f, ts);

		ck_assert_uint_eq(n1->func, f);
		ck_assert_uint_eq(n2->func, f);
		ck_assert_ptr_eq(m1->first_child, n1);   /* found or created: moved first */
		ck_assert_ptr_eq(m2->first_child, n2);
		ts += d;
		ctree_leave(p, th, n1, d, d, ts);
		ctree_leave(p, t2, n2, d, d, ts);
	}
	ck_assert_uint_eq(nr_children(m1), 4);
	ck_assert_uint_eq(nr_children(m2), 4);
	ck_assert_uint_eq(p->nr_nodes, 10);
	for (int f = F_A; f <= F_FIB; f++) {
		const struct ct_node *c1 = child(m1, (ct_func_id)f);
		const struct ct_node *c2 = child(m2, (ct_func_id)f);
		uint64_t calls = 0, acc = 0;

		for (int i = 0; i < 1000; i++) {
			if (pat[i % 8] == (ct_func_id)f) {
				calls++;
				acc += (uint64_t)(i % 13) + 1;
			}
		}
		assert_node(c1, calls, acc, acc, false);
		assert_node(c2, calls, acc, acc, false);
	}
}
END_TEST

/* ------------------------------------------------------------------ ctree_leave */

START_TEST(leave_adds_times_and_hist)
{
	struct ct_node *m = ctree_enter(p, th, &th->root, F_MAIN, 100);
	struct ct_node *a = ctree_enter(p, th, m, F_A, 110);
	const struct ct_hist *h;

	ck_assert_ptr_null(p->funcs[F_A].hist);
	ctree_leave(p, th, a, 40, 30, 150);
	ck_assert_uint_eq(a->acc_ns, 40);
	ck_assert_uint_eq(a->own_ns, 30);
	ck_assert_uint_eq(th->last_ts, 150);
	h = p->funcs[F_A].hist;
	ck_assert_ptr_nonnull(h);
	ck_assert_uint_eq(h->count, 1);
	ck_assert_uint_eq(h->min_ns, 40);
	ck_assert_uint_eq(h->max_ns, 40);
	ck_assert_uint_eq(h->bucket[ct_hist_bucket(40)], 1);

	ctree_enter(p, th, m, F_A, 160);
	ctree_leave(p, th, a, 2000, 7, 140);     /* earlier ts: last_ts stays */
	ck_assert_uint_eq(a->acc_ns, 2040);
	ck_assert_uint_eq(a->own_ns, 37);
	ck_assert_uint_eq(a->calls, 2);
	ck_assert_uint_eq(th->last_ts, 160);
	ck_assert_uint_eq(h->count, 2);
	ck_assert_uint_eq(h->min_ns, 40);
	ck_assert_uint_eq(h->max_ns, 2000);
	ck_assert_uint_eq(h->bucket[ct_hist_bucket(2000)], 1);
	/* main has not returned: no histogram yet */
	ck_assert_ptr_null(p->funcs[F_MAIN].hist);
	ck_assert_uint_eq(th->first_ts, 100);
}
END_TEST

/* A node of a function the profile does not list (an id past nr_funcs) still gets
 * its times, and no histogram is touched. */
/* Taking the stops' cost out once the run is over (profile_compensate): each node loses
 * its count of stops times the cost, bottom-up; siblings and threads are independent;
 * a pseudo function ('suspend') holds no stops and keeps OWN 0; a node whose OWN would
 * be negative gets OWN 0 and its callees' ACC; spans lose the stops between the
 * thread's first and last events, and are never less than its root calls.
 * Thread 100 (cost 1000 per stop):
 *   main: raw 100000, 10 stops -> 90000; callees 26000 + 17000 + 7000: OWN 40000
 *     a (2 calls): raw 30000, 4 stops -> 26000, OWN 22000
 *       c: raw 5000, 1 stop -> 4000
 *     b: raw 20000, 3 stops -> 17000
 *     suspend: 7000, OWN 0
 * Thread 101: b raw 500, 2 stops -> below 0, raised to its callee c (raw 300, no
 * stops): ACC 300, OWN 0; its span 500 - 2 * 1000 < 0 -> 300. */
START_TEST(compensate_tree)
{
	ct_func_id susp = profile_add_func(p, "suspend", "", NULL, 0, 0, 0);
	struct ct_thread *t2 = profile_add_thread(p, 100, 101);
	struct ct_node *m, *a, *c, *b, *sp, *b2, *c2;
	const uint64_t T0 = 1000000;

	m = ctree_enter_at(p, th, &th->root, F_MAIN, T0, 1);
	a = ctree_enter_at(p, th, m, F_A, T0 + 10, 2);
	c = ctree_enter_at(p, th, a, F_C, T0 + 20, 3);
	ctree_leave_at(p, th, c, 5000, 5000, 1, 4000, T0 + 5020, 4);
	ctree_leave_at(p, th, a, 15000, 10000, 2, 13000, T0 + 15010, 5);
	a = ctree_enter_at(p, th, m, F_A, T0 + 20000, 6);
	ctree_leave_at(p, th, a, 15000, 15000, 2, 13000, T0 + 35000, 7);
	b = ctree_enter_at(p, th, m, F_B, T0 + 40000, 8);
	ctree_leave_at(p, th, b, 20000, 20000, 3, 17000, T0 + 60000, 10);
	sp = ctree_enter_at(p, th, m, susp, T0 + 70000, 10);
	ctree_leave_at(p, th, sp, 7000, 0, 0, 7000, T0 + 70000, 10);
	ctree_leave_at(p, th, m, 100000, 43000, 10, 90000, T0 + 100000, 11);

	b2 = ctree_enter_at(p, t2, &t2->root, F_B, T0, 0);
	c2 = ctree_enter_at(p, t2, b2, F_C, T0 + 100, 1);
	ctree_leave_at(p, t2, c2, 300, 300, 0, 300, T0 + 400, 1);
	ctree_leave_at(p, t2, b2, 500, 200, 2, 0, T0 + 500, 2);

	profile_compensate(p, 1000);
	assert_node(m, 1, 40000, 90000, false);
	assert_node(a, 2, 22000, 26000, false);
	assert_node(c, 1, 4000, 4000, false);
	assert_node(b, 1, 17000, 17000, false);
	assert_node(sp, 1, 0, 7000, false);
	ck_assert_uint_eq(th->last_ts - th->first_ts, 90000);
	assert_node(b2, 1, 0, 300, false);
	assert_node(c2, 1, 300, 300, false);
	ck_assert_uint_eq(t2->last_ts - t2->first_ts, 300);
	ck_assert_uint_eq(th->root.own_ns, 0);
	ck_assert_uint_eq(t2->root.own_ns, 0);
	/* the latency histograms keep what was given at each call */
	ck_assert_uint_eq(p->funcs[F_A].hist->count, 2);
	ck_assert_uint_eq(p->funcs[F_A].hist->max_ns, 13000);
	/* done once: a second pass changes nothing */
	profile_compensate(p, 1000);
	assert_node(m, 1, 40000, 90000, false);
	assert_node(sp, 1, 0, 7000, false);
	assert_node(b2, 1, 0, 300, false);
	ck_assert_uint_eq(th->last_ts - th->first_ts, 90000);
}
END_TEST

/* A followed fork child's tree starts inside its parent's calls, from before the fork:
 * its span is not raised to them. Here the inherited main (raw 50000, 2 stops: 48000)
 * is longer than the child's own span (first event at 40000, last at 50000, 1 stop:
 * 9000). A thread of its own would get 48000. */
START_TEST(compensate_fork_child_span)
{
	struct ct_node *m = ctree_path(p, th, &th->root, F_MAIN);
	struct ct_node *a;

	th->inherited = true;
	a = ctree_enter_at(p, th, m, F_A, 40000, 10);
	ctree_leave_at(p, th, a, 1000, 1000, 0, 1000, 41000, 10);
	ctree_leave_at(p, th, m, 50000, 49000, 2, 48000, 50000, 11);
	profile_compensate(p, 1000);
	assert_node(m, 0, 47000, 48000, false);
	ck_assert_uint_eq(th->last_ts - th->first_ts, 9000);
}
END_TEST

/* Without a cost (--raw-times) the tree is unchanged, suspend's OWN included. */
START_TEST(compensate_zero)
{
	ct_func_id susp = profile_add_func(p, "suspend", "", NULL, 0, 0, 0);
	struct ct_node *m, *sp;

	m = ctree_enter_at(p, th, &th->root, F_MAIN, 1000, 0);
	sp = ctree_enter_at(p, th, m, susp, 1500, 0);
	ctree_leave_at(p, th, sp, 400, 0, 0, 400, 1500, 0);
	ctree_leave_at(p, th, m, 2000, 1600, 0, 2000, 3000, 0);
	profile_compensate(p, 0);
	assert_node(m, 1, 1600, 2000, false);
	assert_node(sp, 1, 0, 400, false);
	ck_assert_uint_eq(th->last_ts - th->first_ts, 2000);
}
END_TEST

START_TEST(leave_unknown_func)
{
	struct ct_node *n = ctree_enter(p, th, &th->root, 4000, 1);

	ctree_leave(p, th, n, 5, 5, 6);
	ck_assert_uint_eq(n->acc_ns, 5);
	for (int i = 0; i < NR_F; i++)
		ck_assert_ptr_null(p->funcs[i].hist);
}
END_TEST

/* ------------------------------------------------------------------ histogram */

START_TEST(hist_bucket_small)
{
	for (unsigned v = 0; v < 8; v++) {
		ck_assert_uint_eq(ct_hist_bucket(v), v);
		ck_assert_uint_eq(ct_hist_value(v), v);
	}
	/* 4 buckets per power of two: [8,10) [10,12) [12,14) [14,16) [16,20) ... */
	ck_assert_uint_eq(ct_hist_bucket(8), 8);
	ck_assert_uint_eq(ct_hist_bucket(9), 8);
	ck_assert_uint_eq(ct_hist_bucket(10), 9);
	ck_assert_uint_eq(ct_hist_bucket(15), 11);
	ck_assert_uint_eq(ct_hist_bucket(16), 12);
	ck_assert_uint_eq(ct_hist_bucket(19), 12);
	ck_assert_uint_eq(ct_hist_bucket(20), 13);
	ck_assert_uint_eq(ct_hist_value(8), 9);
	ck_assert_uint_eq(ct_hist_value(12), 18);
}
END_TEST

/* Over the whole range: buckets never decrease, stay below CT_HIST_BUCKETS, and a
 * bucket's value is within 1/8 of every value in it. */
START_TEST(hist_bucket_range)
{
	unsigned prev = 0;
	uint64_t v = 1;

	while (1) {
		uint64_t vals[3] = { v, v + v / 3, v + v / 2 + v / 5 };

		for (int i = 0; i < 3; i++) {
			unsigned b = ct_hist_bucket(vals[i]);
			uint64_t mid = ct_hist_value(b);
			uint64_t err = mid > vals[i] ? mid - vals[i] : vals[i] - mid;

			ck_assert_uint_lt(b, CT_HIST_BUCKETS);
			ck_assert_uint_ge(b, prev);
			ck_assert_msg(err <= vals[i] / 8, "%llu: bucket %u value %llu",
				      (unsigned long long)vals[i], b, (unsigned long long)mid);
			ck_assert_uint_eq(ct_hist_bucket(mid), b);
			prev = b;
		}
		if (v >> 62)
			break;
		v *= 2;
	}
	ck_assert_uint_lt(ct_hist_bucket(UINT64_MAX), CT_HIST_BUCKETS);
	ck_assert_uint_ge(ct_hist_bucket(UINT64_MAX), prev);
	ck_assert_uint_ge(ct_hist_value(ct_hist_bucket(UINT64_MAX)), UINT64_MAX / 8 * 7);
}
END_TEST

static void assert_near(uint64_t got, uint64_t want)
{
	uint64_t err = got > want ? got - want : want - got;

	ck_assert_msg(err <= want / 8, "quantile %llu, want %llu within 1/8",
		      (unsigned long long)got, (unsigned long long)want);
}

START_TEST(hist_quantile_uniform)
{
	struct ct_hist h;
	uint64_t prev = 0;

	memset(&h, 0, sizeof(h));
	/* 1000 values 1..1000 us, added in a scrambled order */
	for (uint64_t i = 0; i < 1000; i++)
		ct_hist_add(&h, ((i * 337) % 1000 + 1) * 1000);
	ck_assert_uint_eq(h.count, 1000);
	ck_assert_uint_eq(h.min_ns, 1000);
	ck_assert_uint_eq(h.max_ns, 1000000);
	ck_assert_uint_eq(ct_hist_quantile(&h, 0), 1000);
	ck_assert_uint_eq(ct_hist_quantile(&h, 1), 1000000);
	assert_near(ct_hist_quantile(&h, 0.5), 500000);
	assert_near(ct_hist_quantile(&h, 0.9), 900000);
	assert_near(ct_hist_quantile(&h, 0.99), 990000);
	assert_near(ct_hist_quantile(&h, 0.1), 100000);
	assert_near(ct_hist_quantile(&h, 0.01), 10000);
	for (double q = 0; q <= 1.0; q += 0.01) {
		uint64_t v = ct_hist_quantile(&h, q);

		ck_assert_uint_ge(v, prev);
		ck_assert_uint_ge(v, h.min_ns);
		ck_assert_uint_le(v, h.max_ns);
		prev = v;
	}
}
END_TEST

/* 900 calls of 100 us and 100 of 10 ms: the median and p90 are the fast calls, p95
 * and p99 the slow ones. */
START_TEST(hist_quantile_bimodal)
{
	struct ct_hist h;

	memset(&h, 0, sizeof(h));
	for (int i = 0; i < 1000; i++)
		ct_hist_add(&h, i % 10 == 3 ? 10000000 : 100000);
	assert_near(ct_hist_quantile(&h, 0.5), 100000);
	assert_near(ct_hist_quantile(&h, 0.9), 100000);
	assert_near(ct_hist_quantile(&h, 0.95), 10000000);
	assert_near(ct_hist_quantile(&h, 0.99), 10000000);
	ck_assert_uint_eq(ct_hist_quantile(&h, 0), 100000);
	ck_assert_uint_eq(ct_hist_quantile(&h, 1), 10000000);
}
END_TEST

/* One value: every quantile is that value exactly (clamped to min/max). */
START_TEST(hist_quantile_single)
{
	struct ct_hist h;

	memset(&h, 0, sizeof(h));
	ct_hist_add(&h, 12345);
	for (double q = 0; q <= 1.0; q += 0.125)
		ck_assert_uint_eq(ct_hist_quantile(&h, q), 12345);
	ck_assert_uint_eq(ct_hist_quantile(&h, -1), 12345);
	ck_assert_uint_eq(ct_hist_quantile(&h, 2), 12345);

	/* a zero-length call is a valid minimum */
	ct_hist_add(&h, 0);
	ck_assert_uint_eq(h.min_ns, 0);
	ck_assert_uint_eq(ct_hist_quantile(&h, 0), 0);
	ck_assert_uint_eq(ct_hist_quantile(&h, 1), 12345);
}
END_TEST

START_TEST(hist_quantile_empty)
{
	struct ct_hist h;

	memset(&h, 0, sizeof(h));
	ck_assert_uint_eq(ct_hist_quantile(&h, 0), 0);
	ck_assert_uint_eq(ct_hist_quantile(&h, 0.5), 0);
	ck_assert_uint_eq(ct_hist_quantile(&h, 1), 0);
	ck_assert_uint_eq(ct_hist_quantile(NULL, 0.5), 0);
}
END_TEST

/* ------------------------------------------------------------------ count mode */

static const struct ct_edge *find_edge(const struct ct_thread *t, ct_func_id caller,
				       ct_func_id callee)
{
	for (size_t i = 0; i < t->nr_edges; i++)
		if (t->edges[i].caller == caller && t->edges[i].callee == callee)
			return &t->edges[i];
	return NULL;
}

START_TEST(count_same_pair)
{
	ctree_count(th, F_MAIN, F_A, 30);
	ctree_count(th, F_MAIN, F_A, 20);
	ctree_count(th, F_A, F_MAIN, 40);
	ctree_count(th, CT_FUNC_UNDEFINED, F_MAIN, 10);
	ctree_count(th, F_MAIN, F_A, 50);

	ck_assert_uint_eq(th->nr_edges, 3);
	ck_assert_uint_eq(find_edge(th, F_MAIN, F_A)->calls, 3);
	ck_assert_uint_eq(find_edge(th, F_A, F_MAIN)->calls, 1);
	ck_assert_uint_eq(find_edge(th, CT_FUNC_UNDEFINED, F_MAIN)->calls, 1);
	ck_assert_uint_eq(th->first_ts, 10);
	ck_assert_uint_eq(th->last_ts, 50);
	/* count mode builds no tree */
	ck_assert_ptr_null(th->root.first_child);
	ck_assert_uint_eq(p->nr_nodes, 0);
}
END_TEST

/* 500 distinct pairs (the index is rebuilt at 32, 64, 128 and 256 pairs), each seen
 * (i % 7) + 1 times, interleaved: every count stays right through the rebuilds. */
START_TEST(count_index_growth)
{
	const int nr = 500;
	uint64_t ts = 1;

	for (int round = 0; round < 7; round++) {
		for (int i = 0; i < nr; i++) {
			ct_func_id caller = i % 3 ? (ct_func_id)(i / 5) : CT_FUNC_UNDEFINED;
			ct_func_id callee = (ct_func_id)i;

			if (round <= i % 7)
				ctree_count(th, caller, callee, ts++);
		}
		if (round == 0) {
			ck_assert_uint_eq(th->nr_edges, (size_t)nr);
			ck_assert_uint_gt(th->edge_slots, th->nr_edges);
		}
	}
	ck_assert_uint_eq(th->nr_edges, (size_t)nr);
	for (int i = 0; i < nr; i++) {
		ct_func_id caller = i % 3 ? (ct_func_id)(i / 5) : CT_FUNC_UNDEFINED;
		const struct ct_edge *e = find_edge(th, caller, (ct_func_id)i);

		ck_assert_ptr_nonnull(e);
		ck_assert_uint_eq(e->calls, (uint64_t)(i % 7) + 1);
	}
	ck_assert_uint_eq(th->first_ts, 1);
	ck_assert_uint_eq(th->last_ts, ts - 1);
}
END_TEST

/* Reversed pairs (a -> b, b -> a) are distinct edges. */
START_TEST(count_direction)
{
	for (int i = 0; i < 70; i++) {
		ctree_count(th, F_A, F_B, 1);
		if (i % 2)
			ctree_count(th, F_B, F_A, 1);
		ctree_count(th, (ct_func_id)(100 + i), F_C, 1);
	}
	ck_assert_uint_eq(th->nr_edges, 72);
	ck_assert_uint_eq(find_edge(th, F_A, F_B)->calls, 70);
	ck_assert_uint_eq(find_edge(th, F_B, F_A)->calls, 35);
}
END_TEST

START_TEST(arcs_count_mode)
{
	struct arc_sum s = { 0 };
	const struct ct_arc *a;

	p->mode = CT_MODE_COUNT;
	ctree_count(th, CT_FUNC_UNDEFINED, F_MAIN, 1);
	ctree_count(th, F_MAIN, F_A, 2);
	ctree_count(th, F_MAIN, F_A, 3);
	profile_thread_arcs(p, th, sum_arc, &s);
	ck_assert_uint_eq(s.nr_visits, 2);
	a = arc(&s, CT_FUNC_UNDEFINED, F_MAIN);
	ck_assert_uint_eq(a->calls, 1);
	ck_assert(!a->has_time);
	a = arc(&s, F_MAIN, F_A);
	ck_assert_uint_eq(a->calls, 2);
	ck_assert(!a->has_time);
	ck_assert_uint_eq(a->own_ns, 0);
	ck_assert_uint_eq(a->acc_ns, 0);
	ck_assert_uint_eq(a->acc_raw_ns, 0);
}
END_TEST

/* Full mode: one arc per node; the same pair from two paths comes twice. */
START_TEST(arcs_full_mode)
{
	struct arc_sum s = { 0 };
	const struct ct_arc *a;

	sim_enter(F_MAIN, 0);
	sim_enter(F_A, 10);
	sim_enter(F_C, 12);
	sim_leave(15);
	sim_leave(20);
	sim_enter(F_B, 30);
	sim_enter(F_C, 31);
	sim_leave(38);
	sim_leave(40);
	sim_leave(50);

	profile_thread_arcs(p, th, sum_arc, &s);
	ck_assert_uint_eq(s.nr_visits, 5);
	ck_assert_uint_eq(s.nr, 5);
	a = arc(&s, CT_FUNC_UNDEFINED, F_MAIN);
	ck_assert_uint_eq(a->calls, 1);
	ck_assert_uint_eq(a->acc_ns, 50);
	ck_assert_uint_eq(a->own_ns, 30);
	ck_assert(a->has_time);
	a = arc(&s, F_A, F_C);
	ck_assert_uint_eq(a->acc_ns, 3);
	a = arc(&s, F_B, F_C);
	ck_assert_uint_eq(a->acc_ns, 7);
	ck_assert_uint_eq(a->acc_raw_ns, 7);
	a = arc(&s, F_MAIN, F_B);
	ck_assert_uint_eq(a->own_ns, 3);
}
END_TEST

/* ------------------------------------------------------------------ walk */

struct walk_check {
	const struct ct_node **seen;
	size_t nr, cap;
	int max_depth;
	bool bad;
};

static bool was_seen(const struct walk_check *w, const struct ct_node *n)
{
	for (size_t i = 0; i < w->nr; i++)
		if (w->seen[i] == n)
			return true;
	return false;
}

/* Parents before children, depth = parent's depth + 1 (1 below the root). */
static void visit_small(const struct ct_node *n, int depth, void *arg)
{
	struct walk_check *w = arg;
	int d = 0;

	for (const struct ct_node *a = n->parent; a && a->parent; a = a->parent)
		d++;
	if (depth != d + 1 || (n->parent->parent && !was_seen(w, n->parent)) || was_seen(w, n))
		w->bad = true;
	ck_assert_uint_lt(w->nr, w->cap);
	w->seen[w->nr++] = n;
}

START_TEST(walk_order_small)
{
	const struct ct_node *seen[32];
	struct walk_check w = { seen, 0, 32, 0, false };
	struct ct_thread *empty = profile_add_thread(p, 1, 2);

	/* main { a { b { c } } c { b } fib } and a second root fib { fib } */
	sim_enter(F_MAIN, 0);
	sim_enter(F_A, 1);
	sim_enter(F_B, 2);
	sim_enter(F_C, 3);
	sim_leave(4);
	sim_leave(5);
	sim_leave(6);
	sim_enter(F_C, 7);
	sim_enter(F_B, 8);
	sim_leave(9);
	sim_leave(10);
	sim_enter(F_FIB, 11);
	sim_leave(12);
	sim_leave(13);
	sim_enter(F_FIB, 14);
	sim_enter(F_FIB, 15);
	sim_leave(16);
	sim_leave(17);

	ctree_walk(th, visit_small, &w);
	ck_assert(!w.bad);
	ck_assert_uint_eq(w.nr, p->nr_nodes);
	ck_assert_uint_eq(w.nr, 9);

	w.nr = 0;
	ctree_walk(empty, visit_small, &w);
	ck_assert_uint_eq(w.nr, 0);
}
END_TEST

#define DEEP 200000

struct deep_walk {
	int expect_depth;
	size_t nr;
	bool bad;
	const struct ct_node *prev;
};

/* The chain is a, b, a, b, ... with one extra child (c) at the bottom and one next to
 * the top: the walk goes 1, 2, ..., DEEP, then c at DEEP + 1, then the sibling at 2. */
static void visit_deep(const struct ct_node *n, int depth, void *arg)
{
	struct deep_walk *w = arg;

	w->nr++;
	if (w->nr <= DEEP + 1) {
		if (depth != (int)w->nr || (w->prev && n->parent != w->prev))
			w->bad = true;
	} else if (depth != 2 || n->func != F_FIB) {
		w->bad = true;
	}
	w->prev = n;
}

START_TEST(walk_deep_chain)
{
	struct ct_node *n = &th->root, *top = NULL;
	struct deep_walk w = { 0 };

	for (int i = 0; i < DEEP; i++) {
		n = ctree_enter(p, th, n, i % 2 ? F_B : F_A, (uint64_t)i + 1);
		if (!top)
			top = n;
		ck_assert_int_eq(n->is_rec, i >= 2);
	}
	ctree_enter(p, th, n, F_C, DEEP + 1);
	ctree_enter(p, th, top, F_FIB, DEEP + 2);
	/* the bottom node's siblings come after its subtree in move-to-front order */
	ctree_path(p, th, top, F_B);
	ck_assert_uint_eq(p->nr_nodes, DEEP + 2);

	ctree_walk(th, visit_deep, &w);
	ck_assert(!w.bad);
	ck_assert_uint_eq(w.nr, DEEP + 2);
}
END_TEST

START_TEST(free_deep_chain)
{
	struct profile *q = profile_new();
	struct ct_thread *t = profile_add_thread(q, 1, 1);
	ct_func_id f = profile_add_func(q, "r", "app", NULL, 0, 0, 0);
	struct ct_node *n = &t->root;

	for (int i = 0; i < DEEP; i++) {
		n = ctree_enter(q, t, n, f, (uint64_t)i);
		if (i % 1000 == 0)
			ctree_path(q, t, n, f + 1);    /* side branches to free too */
		ctree_leave(q, t, n, 1, 1, (uint64_t)i);
	}
	ck_assert_uint_eq(q->nr_nodes, DEEP + DEEP / 1000);
	profile_free(q);
	profile_free(NULL);
}
END_TEST

/* ------------------------------------------------------------------ profile */

START_TEST(span_over_threads)
{
	struct ct_thread *t2, *t3;
	uint64_t first = 1, last = 1;

	profile_span(p, &first, &last);       /* one thread, nothing recorded */
	ck_assert_uint_eq(first, 0);
	ck_assert_uint_eq(last, 0);

	t2 = profile_add_thread(p, 100, 101);
	t3 = profile_add_thread(p, 100, 102);
	(void)t3;                             /* never records anything */
	ctree_enter(p, th, &th->root, F_MAIN, 500);
	ctree_leave(p, th, th->root.first_child, 100, 100, 600);
	ctree_enter(p, t2, &t2->root, F_A, 300);
	ctree_leave(p, t2, t2->root.first_child, 100, 100, 400);
	ctree_count(t2, F_A, F_B, 450);
	profile_span(p, &first, &last);
	ck_assert_uint_eq(first, 300);
	ck_assert_uint_eq(last, 600);

	ctree_enter(p, t2, &t2->root, F_A, 900);
	profile_span(p, &first, &last);
	ck_assert_uint_eq(first, 300);
	ck_assert_uint_eq(last, 900);
}
END_TEST

/* With the cpu clock each thread has its own clock: the span is the sum of the
 * threads' spans (100 + 600), from 1; a thread with no events adds nothing. */
START_TEST(span_cpu_clock)
{
	struct ct_thread *t2 = profile_add_thread(p, 100, 101);
	uint64_t first, last;

	profile_add_thread(p, 100, 102);
	p->clock = "cpu";
	profile_span(p, &first, &last);
	ck_assert_uint_eq(first, 0);
	ck_assert_uint_eq(last, 0);

	ctree_enter(p, th, &th->root, F_MAIN, 500);
	ctree_leave(p, th, th->root.first_child, 100, 100, 600);
	ctree_enter(p, t2, &t2->root, F_A, 300);
	ctree_leave(p, t2, t2->root.first_child, 600, 600, 900);
	profile_span(p, &first, &last);
	ck_assert_uint_eq(first, 1);
	ck_assert_uint_eq(last, 701);
}
END_TEST

START_TEST(span_empty_profile)
{
	struct profile *q = profile_new();
	uint64_t first = 7, last = 7;

	profile_span(q, &first, &last);
	ck_assert_uint_eq(first, 0);
	ck_assert_uint_eq(last, 0);
	profile_free(q);
}
END_TEST

START_TEST(func_names)
{
	ck_assert_str_eq(profile_func_name(p, CT_FUNC_UNDEFINED), "undefined");
	ck_assert_str_eq(profile_func_name(p, NR_F), "undefined");
	ck_assert_str_eq(profile_func_name(p, F_MAIN), "main");
	ck_assert_str_eq(profile_func_name(p, F_FIB), "fib");
}
END_TEST

START_TEST(add_func_copies)
{
	char name[] = "parse", file[] = "parse.c";
	ct_func_id f = profile_add_func(p, name, NULL, file, 12, 3, 0x4010);

	name[0] = 'X';
	file[0] = 'X';
	ck_assert_str_eq(p->funcs[f].name, "parse");
	ck_assert_str_eq(p->funcs[f].module, "?");
	ck_assert_str_eq(p->funcs[f].file, "parse.c");
	ck_assert_int_eq(p->funcs[f].line, 12);
	ck_assert_int_eq(p->funcs[f].arity, 3);
	ck_assert_uint_eq(p->funcs[f].addr, 0x4010);
	ck_assert_ptr_null(p->funcs[f].hist);
	ck_assert_ptr_null(p->funcs[F_MAIN].file);
	ck_assert_str_eq(p->funcs[F_MAIN].module, "app");
}
END_TEST

START_TEST(new_profile_defaults)
{
	ck_assert_int_eq(p->mode, CT_MODE_FULL);
	ck_assert_str_eq(p->clock, "wall");
	ck_assert_uint_eq(th->pid, 100);
	ck_assert_uint_eq(th->tid, 100);
	ck_assert_uint_eq(th->spawned_as, CT_FUNC_UNDEFINED);
	ck_assert_uint_eq(th->root.func, CT_FUNC_UNDEFINED);
	ck_assert_ptr_null(th->root.parent);
	ck_assert_uint_eq(p->nr_threads, 1);
	ck_assert_ptr_eq(p->threads[0], th);
}
END_TEST

/* ------------------------------------------------------------------ runner */

static TCase *tcase(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, setup, teardown);
	suite_add_tcase(s, tc);
	return tc;
}

static Suite *ctree_suite(void)
{
	Suite *s = suite_create("ctree");
	TCase *tc;

	tc = tcase(s, "path");
	tcase_add_test(tc, path_is_one_node);
	tcase_add_test(tc, path_differs_by_caller);

	tc = tcase(s, "recursion");
	tcase_add_test(tc, recursion_fib);
	tcase_add_test(tc, recursion_mutual);
	tcase_add_test(tc, recursion_bloom_collision);

	tc = tcase(s, "ctree_path");
	tcase_add_test(tc, path_counts_no_call);

	tc = tcase(s, "move_to_front");
	tcase_add_test(tc, move_to_front_keeps_results);

	tc = tcase(s, "leave");
	tcase_add_test(tc, leave_adds_times_and_hist);
	tcase_add_test(tc, leave_unknown_func);

	tc = tcase(s, "hist_bucket");
	tcase_add_test(tc, hist_bucket_small);
	tcase_add_test(tc, hist_bucket_range);

	tc = tcase(s, "hist_quantile");
	tcase_add_test(tc, hist_quantile_uniform);
	tcase_add_test(tc, hist_quantile_bimodal);
	tcase_add_test(tc, hist_quantile_single);
	tcase_add_test(tc, hist_quantile_empty);

	tc = tcase(s, "count");
	tcase_add_test(tc, count_same_pair);
	tcase_add_test(tc, count_index_growth);
	tcase_add_test(tc, count_direction);

	tc = tcase(s, "arcs");
	tcase_add_test(tc, arcs_count_mode);
	tcase_add_test(tc, arcs_full_mode);

	tc = tcase(s, "walk");
	tcase_add_test(tc, walk_order_small);
	tcase_add_test(tc, walk_deep_chain);
	tcase_add_test(tc, free_deep_chain);
	tcase_set_timeout(tc, 60);

	tc = tcase(s, "span");
	tcase_add_test(tc, span_over_threads);
	tcase_add_test(tc, span_cpu_clock);
	tcase_add_test(tc, span_empty_profile);

	tc = tcase(s, "funcs");
	tcase_add_test(tc, func_names);
	tcase_add_test(tc, compensate_tree);
	tcase_add_test(tc, compensate_zero);
	tcase_add_test(tc, compensate_fork_child_span);
	tcase_add_test(tc, add_func_copies);
	tcase_add_test(tc, new_profile_defaults);

	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ctree_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
