/* SPDX-License-Identifier: MIT */
/* check_shadow.c - unit tests of the shadow stacks (src/engine/shadow.c) through the
 * engine's private header, with no tracee: a hand-made engine, process, task and
 * module, and stops replayed as shadow_stop() + shadow_entry()/shadow_exit() with
 * injected stack pointers and times, the way engine.c calls them. The task's stack
 * regions are preset (regions[0] is the thread's own stack, regions[1] an alternate
 * signal stack above it), so shadow.c never reads /proc: the process id is one no
 * process can have.
 *
 * Stack addresses: main's slot is 0x7000 and each call one level deeper is 0x40 lower
 * (a at 0x6fc0, b at 0x6f80, ...). Each test's comment lists its stops as
 * "ts: event" and the tree it expects, worked out by hand. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "calltrace/engine.h"
#include "calltrace/profile.h"
#include "calltrace/sym.h"
#include "../../src/engine/internal.h"

enum { F_MAIN, F_A, F_B, F_C, F_LEAF, NR_F };

#define S0 0x7000ull                 /* main's slot */
#define S(d) (S0 - 0x40ull * (d))    /* the slot d calls below main */
#define ALT 0x23f00ull               /* a handler's slot on the alternate stack */
#define NO_PID 99999999              /* above pid_max: no /proc entry */

static struct engine e;
static struct engine_opts eo;
static struct engine_stats st;
static struct proc pr;
static struct task t;
static struct module mod;
static struct sym_module sm;
static struct sym_func funcs[NR_F];
static ct_func_id ids[NR_F];
static bool is_root[NR_F];
static struct bp bps[NR_F];
static const char *patterns[] = { "main" };
static uint64_t hstep;               /* calltrace's handling time per stop (hsum) */

static void setup(void)
{
	static const char *const names[NR_F] = { "main", "a", "b", "c", "leaf" };

	memset(&e, 0, sizeof(e));
	memset(&eo, 0, sizeof(eo));
	memset(&st, 0, sizeof(st));
	memset(&pr, 0, sizeof(pr));
	memset(&t, 0, sizeof(t));
	memset(&mod, 0, sizeof(mod));
	memset(&sm, 0, sizeof(sm));
	memset(bps, 0, sizeof(bps));
	hstep = 0;

	eo.patterns = patterns;
	eo.nr_patterns = 1;
	eo.count = false;
	e.eo = &eo;
	e.st = &st;
	e.p = profile_new();
	e.compensate = false;
	e.suspend = false;
	e.clock_cpu = false;
	e.need_cpu = false;

	sm.path = "/fake/app";
	sm.base = "app";
	sm.funcs = funcs;
	sm.nr_funcs = NR_F;
	for (int i = 0; i < NR_F; i++) {
		memset(&funcs[i], 0, sizeof(funcs[i]));
		funcs[i].name = funcs[i].raw = (char *)names[i];
		funcs[i].addr = 0x1000 + 0x100 * (uint64_t)i;
		funcs[i].size = 0x80;
		ids[i] = profile_add_func(e.p, names[i], "app", NULL, 0, 0, funcs[i].addr);
		is_root[i] = i == F_MAIN;
		bps[i].addr = funcs[i].addr;
		bps[i].kind = BP_ENTRY;
		bps[i].func = (uint32_t)i;
		bps[i].mod = &mod;
	}
	mod.sym = &sm;
	mod.lo = 0x1000;
	mod.hi = 0x1000 + 0x100 * NR_F;
	mod.ids = ids;
	mod.is_root = is_root;
	mod.is_main = true;
	mod.refs = 1;

	pr.pid = NO_PID;
	pr.memfd = -1;
	pr.as = NULL;
	pr.refs = 1;

	t.tid = NO_PID;
	t.proc = &pr;
	t.sfd = -1;
	t.home = 0;
	t.regions[0].lo = 0x1000;        /* the thread's stack */
	t.regions[0].hi = 0x8000;
	t.nr_regions = 1;
}

static void teardown(void)
{
	free(t.stack);
	profile_free(e.p);
	e.p = NULL;
}

/* ------------------------------------------------------------------ replay */

static void stop_done(void)
{
	t.hsum += hstep;     /* engine.c adds the stop's handling time after it */
}

static void call(int f, uint64_t rsp, uint64_t ts)
{
	shadow_stop(&e, &t, ts);
	shadow_entry(&e, &t, &bps[f], rsp, 0, ts, false);
	stop_done();
}

/* A BP_TAIL stop: the jump to @f's entry, taken at @rsp. */
static void tail(int f, uint64_t rsp, uint64_t ts)
{
	shadow_stop(&e, &t, ts);
	shadow_entry(&e, &t, &bps[f], rsp, 0, ts, true);
	stop_done();
}

static void ret(uint64_t rsp, uint64_t ts)
{
	shadow_stop(&e, &t, ts);
	shadow_exit(&e, &t, rsp, ts);
	stop_done();
}

/* The node at a path of functions from the thread's root, or NULL. */
static struct ct_node *node_v(const int *path, int n)
{
	struct ct_node *cur;

	if (!t.ct)
		return NULL;
	cur = &t.ct->root;
	for (int i = 0; i < n && cur; i++) {
		struct ct_node *c;

		for (c = cur->first_child; c && c->func != ids[path[i]]; c = c->next_sibling)
			;
		cur = c;
	}
	return cur;
}

#define NODE(...) node_v((const int[]){ __VA_ARGS__ }, \
			 (int)(sizeof((const int[]){ __VA_ARGS__ }) / sizeof(int)))

#define ASSERT_NODE(n, want_calls, want_own, want_acc)                                  \
	do {                                                                             \
		const struct ct_node *n_ = (n);                                          \
		ck_assert_msg(n_ != NULL, "no node " #n);                                \
		ck_assert_uint_eq(n_->calls, (want_calls));                              \
		ck_assert_uint_eq(n_->own_ns, (want_own));                               \
		ck_assert_uint_eq(n_->acc_ns, (want_acc));                               \
	} while (0)

static size_t nr_children(const struct ct_node *n)
{
	size_t k = 0;

	for (const struct ct_node *c = n->first_child; c; c = c->next_sibling)
		k++;
	return k;
}

/* ------------------------------------------------------------------ nesting */

/* 0 main; 10 a; 20 b; 30 ret b; 35 c (b's slot again); 45 ret c; 50 ret a;
 * 55 leaf at a's slot; 60 ret leaf; 100 ret main.
 * main: acc 100, own 100 - 40 - 5 = 55; a: acc 40, own 20; b, c: 10; leaf: 5. */
START_TEST(nested_calls)
{
	call(F_MAIN, S0, 0);
	call(F_A, S(1), 10);
	call(F_B, S(2), 20);
	ck_assert_uint_eq(t.depth, 3);
	ret(S(2), 30);
	ck_assert_uint_eq(t.depth, 2);
	call(F_C, S(2), 35);
	ret(S(2), 45);
	ret(S(1), 50);
	call(F_LEAF, S(1), 55);
	ret(S(1), 60);
	ck_assert_uint_eq(t.depth, 1);
	ret(S0, 100);
	ck_assert_uint_eq(t.depth, 0);

	ck_assert_ptr_nonnull(t.ct);
	ck_assert_uint_eq(e.p->nr_threads, 1);
	ck_assert_int_eq(t.ct->tid, NO_PID);
	ASSERT_NODE(NODE(F_MAIN), 1, 55, 100);
	ASSERT_NODE(NODE(F_MAIN, F_A), 1, 20, 40);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_B), 1, 10, 10);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_C), 1, 10, 10);
	ASSERT_NODE(NODE(F_MAIN, F_LEAF), 1, 5, 5);
	ck_assert_uint_eq(e.p->nr_nodes, 5);
	ck_assert_uint_eq(st.calls, 5);
	ck_assert_uint_eq(st.recorded, 5);
	ck_assert_uint_eq(t.stops, 10);
	ck_assert_uint_eq(t.ct->last_ts, 100);
}
END_TEST

/* A loop calling a three times: one node, three calls.
 * 0 main; 10 a, 15 ret; 20 a, 30 ret; 40 a, 41 ret; 50 ret main. */
START_TEST(repeated_calls)
{
	call(F_MAIN, S0, 0);
	call(F_A, S(1), 10);
	ret(S(1), 15);
	call(F_A, S(1), 20);
	ret(S(1), 30);
	call(F_A, S(1), 40);
	ret(S(1), 41);
	ret(S0, 50);

	ASSERT_NODE(NODE(F_MAIN), 1, 34, 50);
	ASSERT_NODE(NODE(F_MAIN, F_A), 3, 16, 16);
	ck_assert_uint_eq(nr_children(NODE(F_MAIN)), 1);
	ck_assert_uint_eq(e.p->funcs[ids[F_A]].hist->count, 3);
}
END_TEST

/* ------------------------------------------------------------------ recursion */

/* 0 main; 10 a; 20 a; 30 a; 35 ret; 45 ret; 60 ret a; 70 ret main.
 * main/a: acc 50, own 25; main/a/a: acc 25, own 20, is_rec; main/a/a/a: acc 5, own 5,
 * is_rec. */
START_TEST(recursion)
{
	call(F_MAIN, S0, 0);
	call(F_A, S(1), 10);
	call(F_A, S(2), 20);
	call(F_A, S(3), 30);
	ret(S(3), 35);
	ret(S(2), 45);
	ret(S(1), 60);
	ret(S0, 70);

	ASSERT_NODE(NODE(F_MAIN), 1, 20, 70);
	ASSERT_NODE(NODE(F_MAIN, F_A), 1, 25, 50);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_A), 1, 20, 25);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_A, F_A), 1, 5, 5);
	ck_assert(!NODE(F_MAIN, F_A)->is_rec);
	ck_assert(NODE(F_MAIN, F_A, F_A)->is_rec);
	ck_assert(NODE(F_MAIN, F_A, F_A, F_A)->is_rec);
}
END_TEST

/* ------------------------------------------------------------------ tail calls */

/* a jumps to b at a's own slot: b is a child of a, both end at b's ret.
 * 0 main; 10 a; 20 a jumps to b (S(1)); 50 ret at S(1); 100 ret main.
 * main/a: acc 40, own 10; main/a/b: acc 30, own 30; main: acc 100, own 60. */
START_TEST(tail_call)
{
	call(F_MAIN, S0, 0);
	call(F_A, S(1), 10);
	tail(F_B, S(1), 20);
	ck_assert_uint_eq(t.depth, 3);
	ret(S(1), 50);
	ck_assert_uint_eq(t.depth, 1);
	ret(S0, 100);

	ASSERT_NODE(NODE(F_MAIN), 1, 60, 100);
	ASSERT_NODE(NODE(F_MAIN, F_A), 1, 10, 40);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_B), 1, 30, 30);
	ck_assert_ptr_null(NODE(F_MAIN, F_B));
	ck_assert_uint_eq(st.calls, 3);
}
END_TEST

/* A chain of tail calls a -> b -> c, and a tail call at an entry stop (a's first
 * instruction is the jump: entry and tail entry in one stop).
 * 0 main; 10 a; 20 jmp b; 30 jmp c; 60 ret S(1); 70 leaf + jmp b in one stop (S(1));
 * 75 ret S(1); 100 ret main.
 * main/a: 50, own 10; a/b: 40, own 10; a/b/c: 30; main/leaf: 5, own 0; leaf/b: 5. */
START_TEST(tail_chain)
{
	call(F_MAIN, S0, 0);
	call(F_A, S(1), 10);
	tail(F_B, S(1), 20);
	tail(F_C, S(1), 30);
	ck_assert_uint_eq(t.depth, 4);
	ret(S(1), 60);
	ck_assert_uint_eq(t.depth, 1);

	shadow_stop(&e, &t, 70);
	shadow_entry(&e, &t, &bps[F_LEAF], S(1), 0, 70, false);
	shadow_entry(&e, &t, &bps[F_B], S(1), 0, 70, true);
	stop_done();
	ck_assert_uint_eq(t.depth, 3);
	ret(S(1), 75);
	ret(S0, 100);

	ASSERT_NODE(NODE(F_MAIN), 1, 45, 100);
	ASSERT_NODE(NODE(F_MAIN, F_A), 1, 10, 50);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_B), 1, 10, 40);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_B, F_C), 1, 30, 30);
	ASSERT_NODE(NODE(F_MAIN, F_LEAF), 1, 0, 5);
	ASSERT_NODE(NODE(F_MAIN, F_LEAF, F_B), 1, 5, 5);
}
END_TEST

/* ------------------------------------------------------------------ unseen returns */

/* a's return went unseen (longjmp, exception): b called at a's slot, not by a tail
 * jump, means a ended; b is main's child.
 * 0 main; 10 a; 30 b at S(1); 40 ret b; 50 ret main.
 * main/a: acc 20; main/b: acc 10; main: acc 50, own 20. */
START_TEST(stale_frame_same_depth)
{
	call(F_MAIN, S0, 0);
	call(F_A, S(1), 10);
	call(F_B, S(1), 30);
	ck_assert_uint_eq(t.depth, 2);
	ret(S(1), 40);
	ret(S0, 50);

	ASSERT_NODE(NODE(F_MAIN), 1, 20, 50);
	ASSERT_NODE(NODE(F_MAIN, F_A), 1, 20, 20);
	ASSERT_NODE(NODE(F_MAIN, F_B), 1, 10, 10);
	ck_assert_ptr_null(NODE(F_MAIN, F_A, F_B));
}
END_TEST

/* longjmp from leaf (4 calls below main) back into main, which then calls leaf at
 * a's depth: the 4 frames end at that entry's time.
 * 0 main; 10 a; 20 b; 30 c; 40 leaf; 100 leaf at S(1); 105 ret; 120 ret main.
 * a/b/c/leaf: 60; c: 70, own 10; b: 80, own 10; a: 90, own 10; main/leaf: 5;
 * main: 120, own 25. */
START_TEST(longjmp_depth4)
{
	call(F_MAIN, S0, 0);
	call(F_A, S(1), 10);
	call(F_B, S(2), 20);
	call(F_C, S(3), 30);
	call(F_LEAF, S(4), 40);
	ck_assert_uint_eq(t.depth, 5);
	call(F_LEAF, S(1), 100);
	ck_assert_uint_eq(t.depth, 2);
	ret(S(1), 105);
	ret(S0, 120);

	ASSERT_NODE(NODE(F_MAIN), 1, 25, 120);
	ASSERT_NODE(NODE(F_MAIN, F_A), 1, 10, 90);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_B), 1, 10, 80);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_B, F_C), 1, 10, 70);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_B, F_C, F_LEAF), 1, 60, 60);
	ASSERT_NODE(NODE(F_MAIN, F_LEAF), 1, 5, 5);
	ck_assert_uint_eq(t.ct->last_ts, 120);
}
END_TEST

/* An exception thrown in c caught in a, which returns: a's ret closes c and b too.
 * 0 main; 10 a; 20 b; 30 c; 60 ret at S(1); 80 ret main.
 * c: 30; b: 40, own 10; a: 50, own 10; main: 80, own 30. */
START_TEST(exit_closes_several)
{
	call(F_MAIN, S0, 0);
	call(F_A, S(1), 10);
	call(F_B, S(2), 20);
	call(F_C, S(3), 30);
	ret(S(1), 60);
	ck_assert_uint_eq(t.depth, 1);
	ret(S0, 80);

	ASSERT_NODE(NODE(F_MAIN), 1, 30, 80);
	ASSERT_NODE(NODE(F_MAIN, F_A), 1, 10, 50);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_B), 1, 10, 40);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_B, F_C), 1, 30, 30);
}
END_TEST

/* An exception caught in b: an exit (b's ret) at b's slot with c still open, then b
 * returned normally up the stack. Also: an exit above every frame's slot but main's
 * keeps main open.
 * 0 main; 10 a; 20 b; 30 c; 50 ret S(2); 60 ret S(1); 70 ret at S(1)+8 (a leaving
 * jump in main's body at a shallower rsp, still below main's slot); 90 ret main. */
START_TEST(exit_between_slots)
{
	call(F_MAIN, S0, 0);
	call(F_A, S(1), 10);
	call(F_B, S(2), 20);
	call(F_C, S(3), 30);
	ret(S(2), 50);
	ck_assert_uint_eq(t.depth, 2);
	ret(S(1), 60);
	ret(S(1) + 8, 70);
	ck_assert_uint_eq(t.depth, 1);
	ret(S0, 90);

	ASSERT_NODE(NODE(F_MAIN), 1, 40, 90);
	ASSERT_NODE(NODE(F_MAIN, F_A), 1, 20, 50);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_B), 1, 10, 30);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_B, F_C), 1, 20, 20);
}
END_TEST

/* ------------------------------------------------------------------ exits at entry */

/* leaf's first instruction is its ret: call and return at one stop, ACC 0.
 * 0 main; 10 leaf (exits); 20 ret main. */
START_TEST(entry_that_exits)
{
	bps[F_LEAF].exits = true;
	call(F_MAIN, S0, 0);
	call(F_LEAF, S(1), 10);
	ck_assert_uint_eq(t.depth, 1);
	call(F_LEAF, S(1), 15);
	ck_assert_uint_eq(t.depth, 1);
	ret(S0, 20);

	ASSERT_NODE(NODE(F_MAIN), 1, 20, 20);
	ASSERT_NODE(NODE(F_MAIN, F_LEAF), 2, 0, 0);
	ck_assert_uint_eq(e.p->funcs[ids[F_LEAF]].hist->count, 2);
	ck_assert_uint_eq(e.p->funcs[ids[F_LEAF]].hist->max_ns, 0);
}
END_TEST

/* ------------------------------------------------------------------ recording */

/* Only main's subtree is recorded. c runs before main (the libc start routine that
 * calls main): its frame is pushed but records nothing, and so does a call it makes
 * before main (a constructor); main inside it is a root call; calls below main are
 * recorded; a after main returned (an atexit handler) is not.
 * 0 c at S0+0x40; 5 a at S0; 8 ret; 10 main at S0; 20 a; 30 ret; 50 ret main;
 * 60 a at S0; 65 ret; 70 ret c.
 * root has one child, main: acc 40, own 30; main/a: 10. */
START_TEST(record_root_subtree)
{
	call(F_C, S0 + 0x40, 0);
	call(F_A, S0, 5);
	ck_assert_uint_eq(t.depth, 2);
	ret(S0, 8);
	ck_assert_uint_eq(t.depth, 1);
	ck_assert_ptr_null(t.ct);        /* nothing recorded yet: no thread */

	call(F_MAIN, S0, 10);
	ck_assert_uint_eq(t.depth, 2);
	ck_assert_ptr_null(t.stack[0].node);
	ck_assert_ptr_nonnull(t.stack[1].node);
	call(F_A, S(1), 20);
	ret(S(1), 30);
	ret(S0, 50);
	call(F_A, S0, 60);
	ck_assert_uint_eq(t.depth, 2);
	ck_assert_ptr_null(t.stack[1].node);
	ret(S0, 65);
	ret(S0 + 0x40, 70);
	ck_assert_uint_eq(t.depth, 0);

	ck_assert_ptr_nonnull(t.ct);
	ck_assert_uint_eq(nr_children(&t.ct->root), 1);
	ASSERT_NODE(NODE(F_MAIN), 1, 30, 40);
	ASSERT_NODE(NODE(F_MAIN, F_A), 1, 10, 10);
	ck_assert_uint_eq(e.p->nr_nodes, 2);
	ck_assert_uint_eq(st.calls, 5);
	ck_assert_uint_eq(st.recorded, 2);
	ck_assert_ptr_null(e.p->funcs[ids[F_C]].hist);
	ck_assert_uint_eq(e.p->funcs[ids[F_A]].hist->count, 1);
}
END_TEST

/* A thread created while recording (record_all) records from its first call, which is
 * its start routine (spawned_as, with its argument). */
START_TEST(record_all_thread)
{
	t.record_all = true;
	t.parent_pid = 50;
	t.parent_tid = 51;
	shadow_stop(&e, &t, 0);
	shadow_entry(&e, &t, &bps[F_B], S0, 0xabc, 0, false);
	stop_done();
	call(F_C, S(1), 10);
	ret(S(1), 15);
	ret(S0, 20);

	ck_assert_ptr_nonnull(t.ct);
	ck_assert_uint_eq(t.ct->spawned_as, ids[F_B]);
	ck_assert_uint_eq(t.ct->spawned_arg, 0xabc);
	ck_assert_int_eq(t.ct->parent_pid, 50);
	ck_assert_int_eq(t.ct->parent_tid, 51);
	ASSERT_NODE(NODE(F_B), 1, 15, 20);
	ASSERT_NODE(NODE(F_B, F_C), 1, 5, 5);
}
END_TEST

/* no_record (an unfollowed child): frames, no nodes, no thread. */
START_TEST(no_record_task)
{
	t.no_record = true;
	call(F_MAIN, S0, 0);
	call(F_A, S(1), 10);
	ret(S(1), 20);
	ret(S0, 30);
	ck_assert_ptr_null(t.ct);
	ck_assert_uint_eq(st.calls, 2);
	ck_assert_uint_eq(st.recorded, 0);
}
END_TEST

/* ------------------------------------------------------------------ thread exit */

/* The thread's exit stop (PTRACE_EVENT_EXIT: shadow_stop, then shadow_close_all):
 * 0 main; 10 a; 20 b; 100 exit: all three end at 100.
 * b: 80; a: 90, own 10; main: 100, own 10. */
START_TEST(close_all_at_exit)
{
	call(F_MAIN, S0, 0);
	call(F_A, S(1), 10);
	call(F_B, S(2), 20);
	shadow_stop(&e, &t, 100);
	shadow_close_all(&e, &t, 100);
	ck_assert_uint_eq(t.depth, 0);

	ASSERT_NODE(NODE(F_MAIN), 1, 10, 100);
	ASSERT_NODE(NODE(F_MAIN, F_A), 1, 10, 90);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_B), 1, 80, 80);
	ck_assert_uint_eq(t.ct->last_ts, 100);

	shadow_close_all(&e, &t, 200);      /* nothing left: no change */
	ASSERT_NODE(NODE(F_MAIN), 1, 10, 100);
}
END_TEST

/* BUG (fails since 1f2bb77): engine.c also calls shadow_close_all() with no stop of
 * the thread just before it: detach_all() (end of -d, SIGINT/SIGTERM with -p: the
 * PTRACE_INTERRUPT stop does not go through shadow_stop), a WIFEXITED/WIFSIGNALED
 * status with no exit stop, and the other threads of a process at exec. Frames still
 * open must end at @ts, the exit or detach time ("Frames still open when a thread
 * exits end at its exit", shadow.c's header), but frame_close() ignores its ts
 * ((void)ts) and uses t->vnow from the thread's last stop, so a thread blocked in a
 * traced call when the run ends loses all the time since its last breakpoint.
 * No compensation here, so the time line is the clock itself:
 * 0 main; 10 a; 20 b; (no stop) close all at 100.
 * want b: 80; a: 90, own 10; main: 100, own 10 (got 0, 10 and 20). */
START_TEST(close_all_without_stop_ends_at_ts)
{
	call(F_MAIN, S0, 0);
	call(F_A, S(1), 10);
	call(F_B, S(2), 20);
	shadow_close_all(&e, &t, 100);
	ck_assert_uint_eq(t.depth, 0);

	ASSERT_NODE(NODE(F_MAIN, F_A, F_B), 1, 80, 80);
	ASSERT_NODE(NODE(F_MAIN, F_A), 1, 10, 90);
	ASSERT_NODE(NODE(F_MAIN), 1, 10, 100);
}
END_TEST

/* ------------------------------------------------------------------ sigaltstack */

static void alt_stack(void)
{
	t.regions[1].lo = 0x20000;       /* above the thread's stack */
	t.regions[1].hi = 0x24000;
	t.nr_regions = 2;
}

/* A handler (c) on the alternate stack, above main's stack, returns normally.
 * 0 main; 10 a; 20 signal: c at ALT; 25 leaf at ALT-0x40; 30 ret; 40 ret c;
 * 50 ret a; 60 ret main.
 * main/a/c: 20, own 15; c/leaf: 5; a: 40, own 20; main: 60, own 20. */
START_TEST(altstack_handler_returns)
{
	alt_stack();
	call(F_MAIN, S0, 0);
	call(F_A, S(1), 10);
	call(F_C, ALT, 20);
	ck_assert_uint_eq(t.depth, 3);   /* main's frames stay open */
	ck_assert_int_eq(t.stack[2].region, 1);
	call(F_LEAF, ALT - 0x40, 25);
	ck_assert_uint_eq(t.depth, 4);
	ret(ALT - 0x40, 30);
	ret(ALT, 40);
	ck_assert_uint_eq(t.depth, 2);   /* the handler's ret closes only its frame */
	ret(S(1), 50);
	ret(S0, 60);

	ASSERT_NODE(NODE(F_MAIN), 1, 20, 60);
	ASSERT_NODE(NODE(F_MAIN, F_A), 1, 20, 40);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_C), 1, 15, 20);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_C, F_LEAF), 1, 5, 5);
	ck_assert_int_eq(t.nr_regions, 2);   /* both preset: no /proc lookup */
	ck_assert_int_eq(t.home, 0);
}
END_TEST

/* siglongjmp out of the handler into a: the next entry on the thread's own stack
 * closes the abandoned alternate-stack frames, not main's or a's.
 * 0 main; 10 a; 20 c at ALT; 25 leaf at ALT-0x40; 40 b at S(2); 45 ret b; 50 ret a;
 * 60 ret main.
 * c: 20 (ended at 40), own 5; c/leaf: 15; a/b: 5; a: 40, own 15; main: 60, own 20. */
START_TEST(altstack_abandoned)
{
	alt_stack();
	call(F_MAIN, S0, 0);
	call(F_A, S(1), 10);
	call(F_C, ALT, 20);
	call(F_LEAF, ALT - 0x40, 25);
	ck_assert_uint_eq(t.depth, 4);
	call(F_B, S(2), 40);
	ck_assert_uint_eq(t.depth, 3);
	ret(S(2), 45);
	ret(S(1), 50);
	ret(S0, 60);

	ASSERT_NODE(NODE(F_MAIN), 1, 20, 60);
	ASSERT_NODE(NODE(F_MAIN, F_A), 1, 15, 40);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_C), 1, 5, 20);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_C, F_LEAF), 1, 15, 15);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_B), 1, 5, 5);
}
END_TEST

/* An exit on the thread's own stack (siglongjmp to a point where a returns) also
 * closes the abandoned handler frames first.
 * 0 main; 10 a; 20 c at ALT; 50 ret at S(1); 60 ret main.
 * c: 30; a: 40, own 10; main: 60, own 20. */
START_TEST(altstack_abandoned_by_exit)
{
	alt_stack();
	call(F_MAIN, S0, 0);
	call(F_A, S(1), 10);
	call(F_C, ALT, 20);
	ret(S(1), 50);
	ck_assert_uint_eq(t.depth, 1);
	ret(S0, 60);

	ASSERT_NODE(NODE(F_MAIN), 1, 20, 60);
	ASSERT_NODE(NODE(F_MAIN, F_A), 1, 10, 40);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_C), 1, 30, 30);
}
END_TEST

/* ------------------------------------------------------------------ compensation */

/* Times start at T0. The nodes hold raw times (the clock less calltrace's handling)
 * and the number of stop costs in them until the run is over; then the engine takes
 * the per-stop cost out of them all (shadow_stop_cost(), profile_compensate()). */
#define T0 1000000ull

static void compensate(void)
{
	e.compensate = true;
	e.ck_ns = e.stop_est = 1000;
	hstep = 500;
}

/* The end of the run, as engine_run() does it. */
static void finish(void)
{
	uint64_t nr;

	profile_compensate(e.p, shadow_stop_cost(&e, &nr));
}

/* Each stop costs the thread ck = 1000 ns of kernel time plus calltrace's handling,
 * 500 ns, added to hsum after the stop (engine.c). A call with k stops inside is
 * charged (k + 1) kernel parts and the handling of its entry stop and of the k stops:
 * ACC = raw - (k + 1) * 1000 - (k + 1) * 500.
 *   T0 main; +10000 a; +12000 b; +15000 ret b; +20000 ret a; +30000 ret main.
 * b: k 0: 3000 - 1500 = 1500, own 1500.
 * a: k 2: 10000 - 3 * 1500 = 5500, own 5500 - 1500 = 4000.
 * main: k 4: 30000 - 5 * 1500 = 22500, own 22500 - 5500 = 17000. */
START_TEST(compensation)
{
	compensate();
	call(F_MAIN, S0, T0);
	call(F_A, S(1), T0 + 10000);
	call(F_B, S(2), T0 + 12000);
	ret(S(2), T0 + 15000);
	ret(S(1), T0 + 20000);
	ret(S0, T0 + 30000);

	/* before the end: raw times (handling out) and the stops they hold */
	ck_assert_uint_eq(NODE(F_MAIN, F_A, F_B)->acc_ns, 2500);
	ck_assert_uint_eq(NODE(F_MAIN, F_A, F_B)->acc_stops, 1);
	ck_assert_uint_eq(NODE(F_MAIN)->acc_ns, 27500);
	ck_assert_uint_eq(NODE(F_MAIN)->acc_stops, 5);
	/* latencies are compensated at once, with the estimate of the time */
	ck_assert_uint_eq(e.p->funcs[ids[F_B]].hist->max_ns, 1500);
	finish();
	ASSERT_NODE(NODE(F_MAIN), 1, 17000, 22500);
	ASSERT_NODE(NODE(F_MAIN, F_A), 1, 4000, 5500);
	ASSERT_NODE(NODE(F_MAIN, F_A, F_B), 1, 1500, 1500);
	ck_assert_uint_eq(NODE(F_MAIN)->acc_stops, 0);
	/* the thread's span is on the same time line: 22500 from main's entry to its exit */
	ck_assert_uint_eq(t.ct->last_ts - t.ct->first_ts, 22500);
	/* a second time changes nothing */
	finish();
	ASSERT_NODE(NODE(F_MAIN), 1, 17000, 22500);
	ck_assert_uint_eq(t.ct->last_ts - t.ct->first_ts, 22500);
}
END_TEST

/* Stops that record nothing (a BP_PATCH loop stop: shadow_stop only) still count.
 * T0 main; +1000 a; patch stops at +2000..+4000; +11000 ret a: raw 10000 less 4
 * handlings = 8000, 4 stops: a 4000; +20000 ret main: raw 20000 - 6 * 500 = 17000,
 * 6 stops: main 11000, own 7000. */
START_TEST(compensation_plain_stops)
{
	compensate();
	call(F_MAIN, S0, T0);
	call(F_A, S(1), T0 + 1000);
	for (uint64_t i = 2; i <= 4; i++) {
		shadow_stop(&e, &t, T0 + i * 1000);
		stop_done();
	}
	ret(S(1), T0 + 11000);
	ret(S0, T0 + 20000);
	finish();

	ASSERT_NODE(NODE(F_MAIN, F_A), 1, 4000, 4000);
	ASSERT_NODE(NODE(F_MAIN), 1, 7000, 11000);
}
END_TEST

/* A call shorter than its stops' cost is clamped at 0 (not a wrapped huge value).
 * T0 main; +10000 leaf; +10100 ret leaf (raw 100 < 1500); +20000 ret main.
 * leaf: 0; main: k 2: 20000 - 3 * 1500 = 15500, own 15500. */
START_TEST(compensation_clamps)
{
	compensate();
	call(F_MAIN, S0, T0);
	call(F_LEAF, S(1), T0 + 10000);
	ret(S(1), T0 + 10100);
	ret(S0, T0 + 20000);
	finish();

	ASSERT_NODE(NODE(F_MAIN, F_LEAF), 1, 0, 0);
	ASSERT_NODE(NODE(F_MAIN), 1, 15500, 15500);
	ck_assert_uint_eq(e.p->funcs[ids[F_LEAF]].hist->max_ns, 0);
}
END_TEST

/* A parent entered just before its child and left just after it spans two stops more
 * than the child, so its compensated ACC can come out below the child's (the noise of
 * the stops' cost). It is raised to its callees' sum: OWN 0, never negative or
 * wrapped, and the parent's own parent sees the raised value.
 * No handling; ck 1000. T0 main; +100 a; +101 b; +5000 ret b; +5001 ret a;
 * +10000 ret main.
 * b: 4899 - 1000 = 3899. a: 4901 - 3 * 1000 = 1901 < 3899: ACC 3899, OWN 0.
 * main: 10000 - 5 * 1000 = 5000, OWN 5000 - 3899 = 1101. */
START_TEST(compensation_own_clamps)
{
	e.compensate = true;
	e.ck_ns = 1000;
	call(F_MAIN, S0, T0);
	call(F_A, S(1), T0 + 100);
	call(F_B, S(2), T0 + 101);
	ret(S(2), T0 + 5000);
	ret(S(1), T0 + 5001);
	ret(S0, T0 + 10000);
	finish();

	ASSERT_NODE(NODE(F_MAIN, F_A, F_B), 1, 3899, 3899);
	ASSERT_NODE(NODE(F_MAIN, F_A), 1, 0, 3899);
	ASSERT_NODE(NODE(F_MAIN), 1, 1101, 5000);
}
END_TEST

/* The raise goes up to the root: a main whose calls leave it less than nothing gets
 * OWN 0 and the ACC of its callees, and the thread's span is never below that.
 * ck 1000. T0 main; +10 a; +3010 ret a; +3020 ret main.
 * a: 3000 - 1000 = 2000. main: 3020 - 3 * 1000 = 20 < 2000: ACC 2000, OWN 0;
 * span: 20 -> 2000. */
START_TEST(compensation_raise_to_root)
{
	e.compensate = true;
	e.ck_ns = 1000;
	call(F_MAIN, S0, T0);
	call(F_A, S(1), T0 + 10);
	ret(S(1), T0 + 3010);
	ret(S0, T0 + 3020);
	finish();

	ASSERT_NODE(NODE(F_MAIN, F_A), 1, 2000, 2000);
	ASSERT_NODE(NODE(F_MAIN), 1, 0, 2000);
	ck_assert_uint_eq(t.ct->last_ts - t.ct->first_ts, 2000);
}
END_TEST

/* The kernel part of a stop is the calibrated median (ck_cal), bounded by the 10th
 * percentile of the round trips seen in the run (from the end of calltrace's handling
 * of a stop, h_end, to the thread's next stop), recomputed every 512 round trips.
 * Round trips of 600 ns bring it down from a calibrated 1000; round trips of 10 µs
 * (the program working between stops) leave the calibration alone. */
static void round_trips(uint64_t *now, uint64_t rt, int n)
{
	for (int i = 0; i < n; i++) {
		t.h_end = *now;
		*now += rt;
		shadow_stop(&e, &t, *now);
	}
}

START_TEST(compensation_round_trip_bounds_kernel_part)
{
	uint64_t now = T0;

	e.compensate = true;
	e.ck_ns = e.ck_cal = 1000;
	shadow_stop(&e, &t, now);
	round_trips(&now, 10000, 600);
	ck_assert_uint_eq(e.ck_ns, 1000);
	round_trips(&now, 600, 2000);
	ck_assert_uint_eq(e.ck_ns, 600);
}
END_TEST

/* The kernel part subtracted per stop: a call with one kernel part and its entry's
 * handling inside. a: raw 10200 - ck (600) - a's entry handling (200) = 9400. */
START_TEST(compensation_kernel_part_and_handling)
{
	e.compensate = true;
	e.ck_ns = e.ck_cal = 600;

	shadow_stop(&e, &t, T0);
	shadow_entry(&e, &t, &bps[F_MAIN], S0, 0, T0, false);
	t.h_end = T0 + 200;
	t.hsum += 200;

	shadow_stop(&e, &t, T0 + 800);
	shadow_entry(&e, &t, &bps[F_A], S(1), 0, T0 + 800, false);
	t.h_end = T0 + 1000;
	t.hsum += 200;

	shadow_stop(&e, &t, T0 + 11000);
	shadow_exit(&e, &t, S(1), T0 + 11000);
	finish();

	ASSERT_NODE(NODE(F_MAIN, F_A), 1, 9400, 9400);
}
END_TEST

/* Without compensation the same stops change nothing: raw times. */
START_TEST(compensation_off)
{
	hstep = 500;
	e.ck_ns = 1000;
	call(F_MAIN, S0, T0);
	call(F_A, S(1), T0 + 10000);
	ret(S(1), T0 + 20000);
	ret(S0, T0 + 30000);

	profile_compensate(e.p, 0);      /* engine_run() without compensation */
	ASSERT_NODE(NODE(F_MAIN), 1, 20000, 30000);
	ASSERT_NODE(NODE(F_MAIN, F_A), 1, 10000, 10000);
	ck_assert_uint_eq(t.ct->first_ts, T0);
	ck_assert_uint_eq(t.ct->last_ts, T0 + 30000);
	/* and no stop was counted for a later cost */
	finish();
	ASSERT_NODE(NODE(F_MAIN), 1, 20000, 30000);
}
END_TEST

/* A site pair: from, to, round trips, their sum, samples tried and proven. */
#define TRIP(from_, to_, n_, ns_, tried_, proven_) \
	((struct trip_key){ .from = (from_), .to = (to_), .n = (n_), .sum_ns = (ns_), \
			    .tried = (tried_), .proven = (proven_) })

/* The run's own measure of a stop (shadow_stop_cost): the pooled mean round trip of
 * the site pairs whose every sample (4 at least) ran next to nothing and that have 64
 * round trips or more; the calibrated value while they add up to fewer than 1000. */
START_TEST(stop_cost_from_trips)
{
	uint64_t nr;

	e.ck_ns = 4000;
	e.cu_ns = 2000;
	e.trips = calloc(1024, sizeof(*e.trips));
	ck_assert_ptr_nonnull(e.trips);
	e.trips[0] = TRIP(1, 2, 600, 600 * 5000ull, 8, 8);
	e.trips[1] = TRIP(2, 1, 600, 600 * 5200ull, 8, 8);
	e.trips[2] = TRIP(3, 4, 5000, 5000 * 9000ull, 8, 7);   /* one failed */
	e.trips[3] = TRIP(4, 3, 5000, 5000 * 4000ull, 2, 2);   /* 2 samples */
	e.trips[4] = TRIP(5, 6, 50, 50 * 1000ull, 8, 8);       /* 50 trips */
	ck_assert_uint_eq(shadow_stop_cost(&e, &nr), 5100);
	ck_assert_uint_eq(nr, 1200);
	/* one pair alone is 600 round trips: the calibration */
	e.trips[1].proven = 7;
	ck_assert_uint_eq(shadow_stop_cost(&e, &nr), 4000);
	ck_assert_uint_eq(nr, 0);
	e.clock_cpu = true;
	ck_assert_uint_eq(shadow_stop_cost(&e, &nr), 2000);
	/* code went away (exec, dlclose): the proven sums stay, the pairs start afresh */
	e.clock_cpu = false;
	e.trips[1].proven = 8;
	e.trips[4] = TRIP(5, 6, 5000, 5000 * 6000ull, 1, 1);  /* still open */
	e.nr_trips = 5;
	e.open[0] = &e.trips[4];
	e.nr_open = 1;
	shadow_trips_flush(&e);
	ck_assert_uint_eq(e.nr_trips, 0);
	ck_assert_uint_eq(e.nr_open, 0);
	ck_assert_uint_eq(e.trips[0].from, 0);
	ck_assert_uint_eq(e.trips[4].n, 0);
	ck_assert_uint_eq(shadow_stop_cost(&e, &nr), 5100);
	ck_assert_uint_eq(nr, 1200);
	e.trips[0] = TRIP(1, 2, 1800, 1800 * 5500ull, 8, 8);
	ck_assert_uint_eq(shadow_stop_cost(&e, &nr), (1200 * 5100 + 1800 * 5500) / 3000);
	ck_assert_uint_eq(nr, 3000);
	e.clock_cpu = true;
	e.trips_kept_n = e.trips_kept_ns = 0;
	memset(e.trips, 0, 1024 * sizeof(*e.trips));
	free(e.trips);
	e.trips = NULL;
	/* no pairs at all */
	ck_assert_uint_eq(shadow_stop_cost(&e, &nr), 2000);
	ck_assert_uint_eq(nr, 0);
}
END_TEST

/* The edges: a pair counts with 4 samples (all short) and 64 round trips; the run's
 * measure needs 1000 round trips in all. */
START_TEST(stop_cost_thresholds)
{
	uint64_t nr;

	e.ck_ns = 4000;
	e.trips = calloc(1024, sizeof(*e.trips));
	ck_assert_ptr_nonnull(e.trips);
	e.trips[0] = TRIP(1, 2, 936, 936 * 5000ull, 4, 4);
	e.trips[1] = TRIP(2, 1, 64, 64 * 6000ull, 4, 4);
	e.trips[2] = TRIP(3, 4, 5000, 5000 * 9000ull, 3, 3);     /* 3 samples */
	e.trips[3] = TRIP(4, 3, 63, 63 * 9000ull, 8, 8);         /* 63 trips */
	ck_assert_uint_eq(shadow_stop_cost(&e, &nr), (936 * 5000 + 64 * 6000) / 1000);
	ck_assert_uint_eq(nr, 1000);
	e.trips[0].n = 935;
	e.trips[0].sum_ns = 935 * 5000ull;
	ck_assert_uint_eq(shadow_stop_cost(&e, &nr), 4000);
	ck_assert_uint_eq(nr, 0);
	free(e.trips);
	e.trips = NULL;
}
END_TEST

/* The pair table never stops following new pairs because of old small ones: when it
 * is full (768 of 1024), pairs of fewer than 64 round trips are dropped. If the big
 * ones fill more than half of it, it stays as it is. */
START_TEST(trips_table_full)
{
	uint64_t now = T0, rip = 0x1000;

	e.compensate = true;
	e.ck_ns = e.ck_cal = 1000;
	t.probe_in = 1000000;            /* no samples */
	shadow_stop(&e, &t, now);
	shadow_trip(&e, &t, &bps[F_MAIN], rip, S0);
	/* 800 distinct pairs of one round trip each */
	for (int i = 0; i < 800; i++) {
		t.h_end = now + 100;
		now += 3100;
		shadow_stop(&e, &t, now);
		shadow_trip(&e, &t, &bps[F_MAIN], rip += 0x10, S0);
	}
	ck_assert_uint_eq(e.trips_seen, 800);
	ck_assert(!e.trips_frozen);
	/* the 769th pair found the table full: it and those after it are there */
	ck_assert_uint_eq(e.nr_trips, 800 - 768);
	free(e.trips);
	e.trips = NULL;
	e.nr_trips = 0;

	/* 600 pairs of 64 round trips: more than half of the table counts, it stays */
	for (int i = 0; i < 600; i++) {
		for (int j = 0; j < 64; j++) {
			t.h_end = now + 100;
			now += 3100;
			shadow_stop(&e, &t, now);
			shadow_trip(&e, &t, &bps[F_MAIN], 0x100000 + (uint64_t)i * 0x20, S0);
			t.h_end = now + 100;
			now += 3100;
			shadow_stop(&e, &t, now);
			shadow_trip(&e, &t, &bps[F_MAIN], 0x100010 + (uint64_t)i * 0x20, S0);
		}
	}
	/* each i: (a -> b) 64, (b -> a) 63, and (b -> next a) 1: 768 reached, big pairs
	 * kept and the table frozen */
	ck_assert(e.trips_frozen);
	ck_assert_uint_le(e.nr_trips, 768);
	free(e.trips);
	e.trips = NULL;
}
END_TEST

/* shadow_trip counts a round trip by its two sites when the second stop follows the
 * first directly, for what stays of it in the times: a long one whole (steal time, an
 * interrupt: it stays in the function), less what its stop recorded as 'suspend'.
 * A round trip with another stop in between is not counted. */
START_TEST(trips_counted_by_sites)
{
	uint64_t nr;
	const struct trip_key *k = NULL, *back = NULL;

	e.compensate = true;
	e.ck_ns = e.ck_cal = 1000;
	t.probe_in = 1000;               /* no samples here: they read the program */
	shadow_stop(&e, &t, T0);
	shadow_trip(&e, &t, &bps[F_MAIN], 0x10, S0);
	t.h_end = T0 + 100;
	shadow_stop(&e, &t, T0 + 3100);              /* 3000 */
	shadow_trip(&e, &t, &bps[F_A], 0x20, S(1));
	t.h_end = T0 + 3200;
	shadow_stop(&e, &t, T0 + 103200);            /* 100000, of which a wait of 96000 */
	t.stop_off = 96000;                          /* as note_suspend() records it */
	shadow_trip(&e, &t, &bps[F_MAIN], 0x10, S0);
	t.h_end = T0 + 103300;
	shadow_stop(&e, &t, T0 + 107300);            /* 4000 */
	shadow_trip(&e, &t, &bps[F_A], 0x20, S(1));
	t.h_end = T0 + 107400;
	shadow_stop(&e, &t, T0 + 108400);            /* a signal stop: no trip */
	t.h_end = T0 + 108500;
	shadow_stop(&e, &t, T0 + 109500);
	shadow_trip(&e, &t, &bps[F_MAIN], 0x10, S0);  /* not after 0x20's stop */
	t.h_end = T0 + 109600;
	shadow_stop(&e, &t, T0 + 159600);            /* 50000, no wait recorded */
	shadow_trip(&e, &t, &bps[F_A], 0x20, S(1));

	for (size_t i = 0; e.trips && i < 1024; i++) {
		if (e.trips[i].from == 0x10 && e.trips[i].to == 0x20)
			k = &e.trips[i];
		if (e.trips[i].from == 0x20 && e.trips[i].to == 0x10)
			back = &e.trips[i];
	}
	ck_assert_ptr_nonnull(k);
	ck_assert_ptr_nonnull(back);
	ck_assert_uint_eq(k->n, 3);
	ck_assert_uint_eq(k->sum_ns, 57000);
	ck_assert_uint_eq(back->n, 1);
	ck_assert_uint_eq(back->sum_ns, 4000);
	ck_assert_uint_eq(e.nr_trips, 2);
	ck_assert_uint_eq(e.trips_seen, 4);
	/* none sampled: the calibration */
	ck_assert_uint_eq(shadow_stop_cost(&e, &nr), 1000);
	free(e.trips);
	e.trips = NULL;
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

static Suite *shadow_suite(void)
{
	Suite *s = suite_create("shadow");
	TCase *tc;

	tc = tcase(s, "nesting");
	tcase_add_test(tc, nested_calls);
	tcase_add_test(tc, repeated_calls);

	tc = tcase(s, "recursion");
	tcase_add_test(tc, recursion);

	tc = tcase(s, "tail_call");
	tcase_add_test(tc, tail_call);
	tcase_add_test(tc, tail_chain);

	tc = tcase(s, "stale_frame");
	tcase_add_test(tc, stale_frame_same_depth);

	tc = tcase(s, "longjmp");
	tcase_add_test(tc, longjmp_depth4);

	tc = tcase(s, "exception");
	tcase_add_test(tc, exit_closes_several);
	tcase_add_test(tc, exit_between_slots);

	tc = tcase(s, "entry_exits");
	tcase_add_test(tc, entry_that_exits);

	tc = tcase(s, "recording");
	tcase_add_test(tc, record_root_subtree);
	tcase_add_test(tc, record_all_thread);
	tcase_add_test(tc, no_record_task);

	tc = tcase(s, "thread_exit");
	tcase_add_test(tc, close_all_at_exit);
	tcase_add_test(tc, close_all_without_stop_ends_at_ts);

	tc = tcase(s, "sigaltstack");
	tcase_add_test(tc, altstack_handler_returns);
	tcase_add_test(tc, altstack_abandoned);
	tcase_add_test(tc, altstack_abandoned_by_exit);

	tc = tcase(s, "compensation");
	tcase_add_test(tc, compensation);
	tcase_add_test(tc, compensation_plain_stops);
	tcase_add_test(tc, compensation_clamps);
	tcase_add_test(tc, compensation_own_clamps);
	tcase_add_test(tc, compensation_round_trip_bounds_kernel_part);
	tcase_add_test(tc, compensation_kernel_part_and_handling);
	tcase_add_test(tc, compensation_off);
	tcase_add_test(tc, compensation_raise_to_root);
	tcase_add_test(tc, stop_cost_from_trips);
	tcase_add_test(tc, stop_cost_thresholds);
	tcase_add_test(tc, trips_counted_by_sites);
	tcase_add_test(tc, trips_table_full);

	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(shadow_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
