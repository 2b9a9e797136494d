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

static void free_children(struct ct_node *n)
{
	struct ct_node *c = n->first_child, *next;

	/* iterative over siblings, recursive over depth (bounded by the tree's depth) */
	while (c) {
		next = c->next_sibling;
		free_children(c);
		free(c);
		c = next;
	}
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nr_funcs; i++) {
		free(p->funcs[i].name);
		free(p->funcs[i].module);
		free(p->funcs[i].file);
	}
	free(p->funcs);
	for (size_t i = 0; i < p->nr_threads; i++) {
		free_children(&p->threads[i]->root);
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

const char *profile_func_name(const struct profile *p, ct_func_id f)
{
	if (f == CT_FUNC_UNDEFINED || f >= p->nr_funcs)
		return "undefined";
	return p->funcs[f].name;
}

void profile_span(const struct profile *p, uint64_t *first, uint64_t *last)
{
	*first = *last = 0;
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

static void note_ts(struct ct_thread *t, uint64_t ts)
{
	if (!t->first_ts || ts < t->first_ts)
		t->first_ts = ts;
	if (ts > t->last_ts)
		t->last_ts = ts;
}

struct ct_node *ctree_enter(struct profile *p, struct ct_thread *t, struct ct_node *parent,
			    ct_func_id f, uint64_t ts)
{
	struct ct_node *c, *prev = NULL;

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
	for (const struct ct_node *a = parent; a; a = a->parent) {
		if (a->func == f) {
			c->is_rec = true;
			break;
		}
	}
	c->next_sibling = parent->first_child;
	parent->first_child = c;
	p->nr_nodes++;
found:
	c->calls++;
	note_ts(t, ts);
	return c;
}

void ctree_leave(struct ct_thread *t, struct ct_node *n, uint64_t acc_ns, uint64_t own_ns,
		 uint64_t ts)
{
	n->acc_ns += acc_ns;
	n->own_ns += own_ns;
	if (ts > t->last_ts)
		t->last_ts = ts;
}

static void walk(const struct ct_node *n, int depth, ctree_visit_fn fn, void *arg)
{
	for (const struct ct_node *c = n->first_child; c; c = c->next_sibling) {
		fn(c, depth, arg);
		walk(c, depth + 1, fn, arg);
	}
}

void ctree_walk(const struct ct_thread *t, ctree_visit_fn fn, void *arg)
{
	walk(&t->root, 1, fn, arg);
}
