/* SPDX-License-Identifier: MIT */
/* sim_demo.c - the demo profile of check_report.c and check_writers.c: a replay, with
 * ctree_enter()/ctree_leave() and injected times, of the event stream of
 * ../shared/docs/format-samples/tools/gen_native_samples.py. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calltrace/profile.h"

#include "sim_demo.h"
#include "unit_util.h"

/* name, module, file, line, arity, address of each function */
static const struct {
	const char *name, *module, *file;
	int line, arity;
	uint64_t addr;
} demo_funcs[NR_DEMO_FUNCS] = {
	[F_MAIN] = { "main", "demo", "demo.c", 25, 0, 0x1270 },
	[F_FIB] = { "fib", "demo", "demo.c", 5, 1, 0x1159 },
	[F_CHEAP] = { "cheap", "demo", "demo.c", 6, 1, 0x1187 },
	[F_COSTLY] = { "costly", "demo", "demo.c", 7, 1, 0x118c },
	[F_SHARED] = { "shared", "demo", "demo.c", 12, 1, 0x120f },
	[F_CALLER_A] = { "caller_a", "demo", "demo.c", 13, 1, 0x1214 },
	[F_CALLER_B] = { "caller_b", "demo", "demo.c", 14, 1, 0x1242 },
	[F_WORKER] = { "worker", "demo", "demo.c", 17, 1, 0x11bd },
	[F_PTHREAD_CREATE] = { "pthread_create", "libc.so.6", NULL, 0, 0, 0x89380 },
	[F_PTHREAD_JOIN] = { "pthread_join", "libc.so.6", NULL, 0, 0, 0x8ab80 },
	[F_PRINTF] = { "printf", "libc.so.6", NULL, 0, 0, 0x525b0 },
	[F_START_THREAD] = { "start_thread", "libc.so.6", NULL, 0, 0, 0 },
	[F_SUSPEND] = { "suspend", "", NULL, 0, 0, 0 },
};

struct frame {
	struct ct_node *n;
	uint64_t start, resume, own;
};

/* A thread replaying the generator's events: call, own time, return. */
struct sim {
	struct profile *p;
	struct ct_thread *t;
	uint64_t now;
	struct frame st[64];
	int depth;
};

static void sim_call(struct sim *s, ct_func_id f)
{
	struct ct_node *parent = s->depth ? s->st[s->depth - 1].n : &s->t->root;

	if (s->depth) {
		s->st[s->depth - 1].own += s->now - s->st[s->depth - 1].resume;
		s->st[s->depth - 1].resume = s->now;
	}
	need(s->depth < 64);
	s->st[s->depth++] = (struct frame){
		.n = ctree_enter(s->p, s->t, parent, f, TS_BASE + s->now),
		.start = s->now, .resume = s->now,
	};
}

static void sim_own(struct sim *s, uint64_t units)
{
	s->now += units * UNIT_NS + JITTER_NS;
}

static void sim_ret(struct sim *s)
{
	struct frame *fr = &s->st[--s->depth];
	uint64_t own = fr->own + (s->now - fr->resume);

	if (fr->n->func == F_SUSPEND)
		own = 0;   /* suspend: OWN 0, ACC the blocked time */
	ctree_leave(s->p, s->t, fr->n, s->now - fr->start, own, TS_BASE + s->now);
	if (s->depth)
		s->st[s->depth - 1].resume = s->now;
}

static void sim_leaf(struct sim *s, ct_func_id f, uint64_t units)
{
	sim_call(s, f);
	sim_own(s, units);
	sim_ret(s);
}

static void sim_fib(struct sim *s, int n)
{
	sim_call(s, F_FIB);
	sim_own(s, 18);
	if (n >= 2) {
		sim_fib(s, n - 1);
		sim_own(s, 4);
		sim_fib(s, n - 2);
		sim_own(s, 4);
	}
	sim_ret(s);
}

static void sim_caller(struct sim *s, ct_func_id f, int n)
{
	sim_call(s, f);
	sim_own(s, 22);
	if (n > 0) {
		sim_call(s, F_SHARED);
		sim_own(s, 9);
		sim_ret(s);
		sim_own(s, 3);
		sim_caller(s, f, n - 1);
		sim_own(s, 3);
	}
	sim_ret(s);
}

/* The demo profile: threads 4242 (main) and 4243 (worker), functions F_*. */
struct profile *demo_profile(void)
{
	struct profile *p = profile_new();
	struct sim m = { .p = p }, w = { .p = p };
	uint64_t worker_exit;

	for (int i = 0; i < NR_DEMO_FUNCS; i++) {
		ct_func_id id = profile_add_func(p, demo_funcs[i].name, demo_funcs[i].module,
						 demo_funcs[i].file, demo_funcs[i].line,
						 demo_funcs[i].arity, demo_funcs[i].addr);

		need(id == (ct_func_id)i);
	}
	p->command = strdup("./demo");
	m.t = profile_add_thread(p, 4242, 4242);
	w.t = profile_add_thread(p, 4242, 4243);
	w.t->parent_pid = 4242;
	w.t->parent_tid = 4242;
	w.t->spawned_as = F_WORKER;
	w.t->spawned_arg = 0;

	/* worker thread: first scheduled at 31000 units */
	w.now = 31000 * UNIT_NS;
	sim_call(&w, F_START_THREAD);
	sim_own(&w, 700);
	sim_call(&w, F_WORKER);
	sim_own(&w, 150);
	for (int i = 0; i < 5; i++) {
		sim_own(&w, 12);
		sim_leaf(&w, F_CHEAP, 8);
	}
	sim_own(&w, 20);
	sim_leaf(&w, F_COSTLY, 1750);
	sim_own(&w, 90);
	sim_ret(&w);
	sim_own(&w, 1200);
	sim_ret(&w);
	worker_exit = w.now;

	/* main thread */
	sim_call(&m, F_MAIN);
	sim_own(&m, 1500);
	sim_leaf(&m, F_PTHREAD_CREATE, 14000);
	sim_own(&m, 300);
	sim_fib(&m, 10);
	sim_own(&m, 100);
	sim_caller(&m, F_CALLER_A, 3);
	sim_own(&m, 100);
	sim_caller(&m, F_CALLER_B, 2);
	sim_own(&m, 100);
	sim_leaf(&m, F_CHEAP, 8);
	sim_own(&m, 50);
	sim_leaf(&m, F_COSTLY, 1700);
	sim_own(&m, 200);
	sim_call(&m, F_PTHREAD_JOIN);
	sim_own(&m, 600);
	sim_call(&m, F_SUSPEND);
	m.now = worker_exit + 3000 * UNIT_NS + 211;   /* blocked in futex wait */
	sim_ret(&m);
	sim_own(&m, 400);
	sim_ret(&m);
	sim_own(&m, 100);
	sim_leaf(&m, F_PRINTF, 5200);
	sim_own(&m, 300);
	sim_ret(&m);
	need(m.depth == 0 && w.depth == 0);
	return p;
}
