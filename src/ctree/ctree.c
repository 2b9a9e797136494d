/* SPDX-License-Identifier: MIT */
/* ctree.c - the profile's functions and per-thread calling-context trees. Pure data:
 * the engine calls ctree_enter()/ctree_leave() at each stop with times it measured,
 * the unit tests call them with injected times. A node is one distinct call path, so
 * memory grows with paths, not calls. A node whose function is already active higher
 * on its path is marked is_rec at creation: its ACC is charged 0 in reports (fprof's
 * rule: ACC counts only the outermost activation). */
#include <stdlib.h>
#include <string.h>

#include "calltrace/profile.h"
#include "calltrace/util.h"

struct profile *profile_new(void)
{
	struct profile *p = xcalloc(1, sizeof(*p));

	p->mode = CT_MODE_FULL;
	p->clock = "wall";
	return p;
}

/* Free every node below @root, without recursion: a profile of a program that
 * recursed a million deep has a tree a million deep. */
static void free_children(struct ct_node *root)
{
	struct ct_node *n = root->first_child;

	while (n && n != root) {
		struct ct_node *up;

		if (n->first_child) {
			n = n->first_child;
			continue;
		}
		/* a leaf: free it, then go on with its sibling or climb */
		up = n->parent;
		if (n->next_sibling) {
			struct ct_node *next = n->next_sibling;

			up->first_child = next;
			free(n);
			n = next;
		} else {
			up->first_child = NULL;
			free(n);
			n = up;
		}
	}
	root->first_child = NULL;
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nr_funcs; i++) {
		free(p->funcs[i].name);
		free(p->funcs[i].module);
		free(p->funcs[i].file);
		free(p->funcs[i].hist);
	}
	free(p->funcs);
	for (size_t i = 0; i < p->nr_threads; i++) {
		free_children(&p->threads[i]->root);
		free(p->threads[i]->edges);
		free(p->threads[i]->edge_index);
		free(p->threads[i]->comm);
		free(p->threads[i]);
	}
	free(p->threads);
	free(p->command);
	free(p);
}

ct_func_id profile_add_func(struct profile *p, const char *name, const char *module,
			    const char *file, int line, int arity, uint64_t addr)
{
	struct ct_func *f;

	xgrow(&p->funcs, &p->cap_funcs, p->nr_funcs + 1, sizeof(*p->funcs));
	f = &p->funcs[p->nr_funcs];
	f->name = xstrdup(name);
	f->module = xstrdup(module ? module : "?");
	f->file = file ? xstrdup(file) : NULL;
	f->line = line;
	f->arity = arity;
	f->addr = addr;
	f->hist = NULL;
	return (ct_func_id)p->nr_funcs++;
}

struct ct_thread *profile_add_thread(struct profile *p, pid_t pid, pid_t tid)
{
	struct ct_thread *t = xcalloc(1, sizeof(*t));

	t->pid = pid;
	t->tid = tid;
	t->spawned_as = CT_FUNC_UNDEFINED;
	t->root.func = CT_FUNC_UNDEFINED;
	xgrow(&p->threads, &p->cap_threads, p->nr_threads + 1, sizeof(*p->threads));
	p->threads[p->nr_threads++] = t;
	return t;
}

int profile_thread_cmp(const void *va, const void *vb)
{
	const struct ct_thread *a = *(const struct ct_thread *const *)va;
	const struct ct_thread *b = *(const struct ct_thread *const *)vb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return 0;
}

const char *profile_func_name(const struct profile *p, ct_func_id f)
{
	if (f == CT_FUNC_UNDEFINED || f >= p->nr_funcs)
		return "undefined";
	return p->funcs[f].name;
}

void profile_span(const struct profile *p, uint64_t *first, uint64_t *last)
{
	*first = *last = 0;
	if (p->clock && !strcmp(p->clock, "cpu")) {
		/* each thread has its own CPU clock: the trace's span is their sum */
		uint64_t sum = 0;

		for (size_t i = 0; i < p->nr_threads; i++) {
			const struct ct_thread *t = p->threads[i];

			if (t->first_ts && t->last_ts > t->first_ts)
				sum += t->last_ts - t->first_ts;
		}
		*first = sum ? 1 : 0;
		*last = sum ? 1 + sum : 0;
		return;
	}
	for (size_t i = 0; i < p->nr_threads; i++) {
		const struct ct_thread *t = p->threads[i];

		if (!t->first_ts)
			continue;
		if (!*first || t->first_ts < *first)
			*first = t->first_ts;
		if (t->last_ts > *last)
			*last = t->last_ts;
	}
}

static void note_ts(struct ct_thread *t, uint64_t ts, uint64_t ts_stops)
{
	if (!t->first_ts || ts < t->first_ts) {
		t->first_ts = ts;
		t->first_stops = ts_stops;
	}
	if (ts > t->last_ts) {
		t->last_ts = ts;
		t->last_stops = ts_stops;
	}
}

struct ct_node *ctree_enter_at(struct profile *p, struct ct_thread *t, struct ct_node *parent,
			       ct_func_id f, uint64_t ts, uint64_t ts_stops)
{
	struct ct_node *c = ctree_path(p, t, parent, f);

	c->calls++;
	note_ts(t, ts, ts_stops);
	return c;
}

struct ct_node *ctree_enter(struct profile *p, struct ct_thread *t, struct ct_node *parent,
			    ct_func_id f, uint64_t ts)
{
	return ctree_enter_at(p, t, parent, f, ts, 0);
}

struct ct_node *ctree_path(struct profile *p, struct ct_thread *t, struct ct_node *parent,
			   ct_func_id f)
{
	struct ct_node *c, *prev = NULL;

	(void)t;

	/* Move-to-front: a loop calling the same few functions finds them first. */
	for (c = parent->first_child; c; prev = c, c = c->next_sibling) {
		if (c->func != f)
			continue;
		if (prev) {
			prev->next_sibling = c->next_sibling;
			c->next_sibling = parent->first_child;
			parent->first_child = c;
		}
		goto found;
	}
	c = xcalloc(1, sizeof(*c));
	c->func = f;
	c->parent = parent;
	c->path_bloom = parent->path_bloom | (1ull << (f % 64));
	/* recursive if f is already on the path; the bloom bits rule most paths out at
	 * once, and in a recursion the nearest same function is usually close */
	if (parent->path_bloom & (1ull << (f % 64))) {
		for (const struct ct_node *a = parent; a; a = a->parent) {
			if (a->func == f) {
				c->is_rec = true;
				break;
			}
		}
	}
	c->next_sibling = parent->first_child;
	parent->first_child = c;
	p->nr_nodes++;
found:
	return c;
}

unsigned ct_hist_bucket(uint64_t ns)
{
	unsigned hi;

	if (ns < 4)
		return (unsigned)ns;
	hi = 63 - (unsigned)__builtin_clzll(ns);          /* 2 .. 63 */
	return hi * 4 + (unsigned)((ns >> (hi - 2)) & 3) - 4;
}

uint64_t ct_hist_value(unsigned b)
{
	unsigned hi, sub;
	uint64_t lo, width;

	if (b < 4)
		return b;
	hi = (b + 4) / 4;
	sub = (b + 4) % 4;
	lo = (1ull << hi) + (uint64_t)sub * (1ull << (hi - 2));
	width = 1ull << (hi - 2);
	return lo + width / 2;
}

void ct_hist_add(struct ct_hist *h, uint64_t ns)
{
	if (!h->count || ns < h->min_ns)
		h->min_ns = ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
	h->count++;
	h->bucket[ct_hist_bucket(ns)]++;
}

uint64_t ct_hist_quantile(const struct ct_hist *h, double q)
{
	uint64_t rank, seen = 0;

	if (!h || !h->count)
		return 0;
	if (q <= 0)
		return h->min_ns;
	if (q >= 1)
		return h->max_ns;
	/* the smallest value with at least q*count values at or below it */
	rank = (uint64_t)(q * (double)h->count);
	if ((double)rank < q * (double)h->count)
		rank++;
	for (unsigned b = 0; b < CT_HIST_BUCKETS; b++) {
		seen += h->bucket[b];
		if (seen >= rank) {
			uint64_t v = ct_hist_value(b);

			if (v < h->min_ns)
				v = h->min_ns;
			if (v > h->max_ns)
				v = h->max_ns;
			return v;
		}
	}
	return h->max_ns;
}

void ctree_leave_at(struct profile *p, struct ct_thread *t, struct ct_node *n, uint64_t acc_ns,
		    uint64_t own_ns, uint64_t acc_stops, uint64_t hist_ns, uint64_t ts,
		    uint64_t ts_stops)
{
	if (n->func < p->nr_funcs) {
		struct ct_func *f = &p->funcs[n->func];

		if (!f->hist)
			f->hist = xcalloc(1, sizeof(*f->hist));
		ct_hist_add(f->hist, hist_ns);
	}
	n->acc_ns += acc_ns;
	n->own_ns += own_ns;
	n->acc_stops += acc_stops;
	if (ts > t->last_ts) {
		t->last_ts = ts;
		t->last_stops = ts_stops;
	}
}

void ctree_leave(struct profile *p, struct ct_thread *t, struct ct_node *n, uint64_t acc_ns,
		 uint64_t own_ns, uint64_t ts)
{
	ctree_leave_at(p, t, n, acc_ns, own_ns, 0, acc_ns, ts, 0);
}

/* One node, its callees done: own_ns holds the sum of their compensated ACC (set up
 * by profile_compensate) and becomes the node's OWN. A pseudo function ('suspend')
 * holds no stops and keeps OWN 0: its ACC is time spent off the CPU. */
static void compensate_node(const struct profile *p, struct ct_node *n, uint64_t stop_ns)
{
	uint64_t callees = n->own_ns, cost = n->acc_stops * stop_ns;
	uint64_t acc = n->acc_ns > cost ? n->acc_ns - cost : 0;

	if (acc < callees)
		acc = callees;
	n->acc_ns = acc;
	n->own_ns = n->func < p->nr_funcs && !p->funcs[n->func].module[0] ? 0 : acc - callees;
	n->acc_stops = 0;
	if (n->parent)
		n->parent->own_ns += acc;
}

void profile_compensate(struct profile *p, uint64_t stop_ns)
{
	for (size_t i = 0; i < p->nr_threads; i++) {
		struct ct_thread *t = p->threads[i];
		struct ct_node *root = &t->root, *n;
		uint64_t span, cost;

		/* every own_ns becomes the sum of its callees' ACC, filled bottom-up */
		root->own_ns = 0;
		for (n = root->first_child; n; ) {
			n->own_ns = 0;
			if (n->first_child) {
				n = n->first_child;
				continue;
			}
			while (n != root && !n->next_sibling)
				n = n->parent;
			n = n == root ? NULL : n->next_sibling;
		}
		/* post-order, iterative: a tree may be a million deep */
		for (n = root->first_child; n; ) {
			while (n->first_child)
				n = n->first_child;
			for (;;) {
				struct ct_node *up = n->parent, *next = n->next_sibling;

				compensate_node(p, n, stop_ns);
				if (next) {
					n = next;       /* its subtree next */
					break;
				}
				if (up == root) {
					n = NULL;
					break;
				}
				n = up;                 /* its callees are all done */
			}
		}
		if (!t->first_ts || t->last_ts < t->first_ts) {
			root->own_ns = 0;
			continue;
		}
		span = t->last_ts - t->first_ts;
		cost = (t->last_stops > t->first_stops ? t->last_stops - t->first_stops : 0) * stop_ns;
		span = span > cost ? span - cost : 0;
		/* never less than the root calls, unless they began before the thread did
		 * (a fork child's calls are its parent's, from before the fork) */
		if (span < root->own_ns && !t->inherited)
			span = root->own_ns;
		t->last_ts = t->first_ts + span;
		t->last_stops = t->first_stops;
		root->own_ns = 0;
	}
}

/* Pre-order, iterative (parent and sibling links), so any depth is fine. */
void ctree_walk(const struct ct_thread *t, ctree_visit_fn fn, void *arg)
{
	const struct ct_node *root = &t->root, *n = root->first_child;
	int depth = 1;

	while (n) {
		fn(n, depth, arg);
		if (n->first_child) {
			n = n->first_child;
			depth++;
			continue;
		}
		while (n != root && !n->next_sibling) {
			n = n->parent;
			depth--;
		}
		if (n == root)
			break;
		n = n->next_sibling;
	}
}

static size_t edge_hash(ct_func_id caller, ct_func_id callee, size_t slots)
{
	uint64_t k = ((uint64_t)caller << 32) | callee;

	return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 17) & (slots - 1);
}

static void edge_reindex(struct ct_thread *t)
{
	size_t slots = t->edge_slots ? t->edge_slots * 2 : 64;

	free(t->edge_index);
	t->edge_index = xcalloc(slots, sizeof(*t->edge_index));
	t->edge_slots = slots;
	for (size_t i = 0; i < t->nr_edges; i++) {
		size_t h = edge_hash(t->edges[i].caller, t->edges[i].callee, slots);

		while (t->edge_index[h])
			h = (h + 1) & (slots - 1);
		t->edge_index[h] = (uint32_t)i + 1;
	}
}

void ctree_count(struct ct_thread *t, ct_func_id caller, ct_func_id callee, uint64_t ts)
{
	size_t h;

	if (t->nr_edges * 2 >= t->edge_slots)
		edge_reindex(t);
	for (h = edge_hash(caller, callee, t->edge_slots); t->edge_index[h];
	     h = (h + 1) & (t->edge_slots - 1)) {
		struct ct_edge *e = &t->edges[t->edge_index[h] - 1];

		if (e->caller == caller && e->callee == callee) {
			e->calls++;
			note_ts(t, ts, 0);
			return;
		}
	}
	xgrow(&t->edges, &t->cap_edges, t->nr_edges + 1, sizeof(*t->edges));
	t->edges[t->nr_edges] = (struct ct_edge){ caller, callee, 1 };
	t->edge_index[h] = (uint32_t)++t->nr_edges;
	note_ts(t, ts, 0);
}

struct arc_walk {
	ct_arc_fn fn;
	void *arg;
};

static void arc_of_node(const struct ct_node *n, int depth, void *arg)
{
	const struct arc_walk *w = arg;
	struct ct_arc a = {
		.caller = n->parent ? n->parent->func : CT_FUNC_UNDEFINED,
		.callee = n->func,
		.calls = n->calls,
		.own_ns = n->own_ns,
		.acc_ns = n->is_rec ? 0 : n->acc_ns,
		.acc_raw_ns = n->acc_ns,
		.has_time = true,
	};

	(void)depth;
	w->fn(&a, w->arg);
}

void profile_thread_arcs(const struct profile *p, const struct ct_thread *t, ct_arc_fn fn,
			 void *arg)
{
	struct arc_walk w = { fn, arg };

	(void)p;
	for (size_t i = 0; i < t->nr_edges; i++) {
		struct ct_arc a = {
			.caller = t->edges[i].caller,
			.callee = t->edges[i].callee,
			.calls = t->edges[i].calls,
		};

		fn(&a, arg);
	}
	ctree_walk(t, arc_of_node, &w);
}
