/* SPDX-License-Identifier: MIT */
/* callgrind.c - Callgrind profiles (formats.md section 4) for callgrind_annotate and
 * KCachegrind: a function-level call graph, self cost on cost lines, inclusive cost on
 * calls= edges, as in format-samples/callgrind.out.native.
 *
 * Full mode, "events: ns":
 *  - A function's self cost is its OWN time summed over threads; a pseudo function
 *    (suspend) is written in "ob=[kernel]" and its self cost is its ACC, the blocked
 *    time, since callgrind has no other place for it (formats.md 4.5).
 *  - A calls= edge carries the ACC of its calls by fprof's rule: calls into a function
 *    already active on the thread's stack carry 0 (callgrind_annotate adds up incoming
 *    edges without cycle detection, formats.md 4.4.1).
 *  - Every thread gets a pseudo root "fn=[thread PID.TID]" in "ob=[calltrace]", self
 *    cost 0, calling the thread's root functions (fprof's 'undefined'), so recursive
 *    roots keep their inclusive cost and KCachegrind shows one root per thread.
 *  - summary: and totals: are both the sum of every self cost: the threads' wall
 *    times added up.
 * Count mode, "events: calls": a function's self cost is its number of calls and an
 * edge's inclusive cost its number of calls, so callgrind_annotate's inclusive figure
 * (the sum of the incoming edges) equals the self figure: the call count. Count mode
 * has no nesting, so nothing more can be said.
 *
 * Positions are source lines ("positions: line"): a function's cost lines use its
 * DWARF start line (0 if unknown), calls= names the callee's start line. fl= is
 * always written ("???" for an unknown file), cfi= whenever the callee's file differs
 * from the caller's, cob= whenever its object differs. Names are compressed: "(n)
 * name" on first use, "(n)" after, one id space each for objects, files and functions.
 *
 * Names: the format is line based, so control characters (newlines included) and
 * bytes that are not valid UTF-8 become '?', a name that would start with "(" and a
 * digit (a compressed id) gets '?' for the '(' and an empty name becomes "???".
 *
 * Order (deterministic): the thread roots in (pid, tid) order, then the functions of
 * the traced program's own object (base name of the command's first word), then the
 * others by object, file (unknown first), name and id. A function's calls follow the
 * callees' names, then object, file and id.
 *
 * Threads: one merged file by default. With ro->per_thread the stream gets the merged
 * profile as usual, and every thread also gets its own file, "<ro->output>.<TID>",
 * with a "thread: TID" header (callgrind_annotate reads one part per file, so there
 * is one part per file). per_thread without ro->output (writing to a stream only)
 * is refused with -EINVAL, before anything is written. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calltrace/erl.h"
#include "calltrace/profile.h"
#include "calltrace/report.h"
#include "calltrace/util.h"

/* Names of one output function. Node ids are function ids, then one per thread root. */
struct cg_names {
	char *ob, *fl, *fn;
	const char *sort_file;   /* file for ordering: "" if unknown */
	int line;
};

struct cg_edge {
	size_t caller, callee;
	uint64_t calls, inc;
};

/* Name compression: an open-addressing table from name to id. */
struct cg_ids {
	char **names;
	unsigned *ids;
	size_t slots, nr;
};

struct cg_file {
	const struct profile *p;
	bool count;                  /* count mode: events calls */
	struct cg_names *names;      /* nr_funcs + nr_roots */
	size_t nr_nodes;
	uint64_t *self;
	bool *present;
	struct cg_edge *edges;
	size_t nr_edges, cap_edges;
	size_t root;                 /* node of the thread being collected */
	const char *main_ob;         /* object written first, or NULL */
	struct cg_ids ids[3];        /* objects, files, functions */
};

enum { ID_OB, ID_FL, ID_FN };

static bool is_pseudo(const struct profile *p, ct_func_id f)
{
	return f == CT_FUNC_UNDEFINED || f >= p->nr_funcs || p->funcs[f].module[0] == '\0';
}

/* @s made safe for a line-based name field (see the top of this file). */
static char *clean_name(const char *s)
{
	size_t n = s ? strlen(s) : 0, i = 0;
	struct erl_buf b;
	char *r;

	if (!n)
		return xstrdup("???");
	erl_buf_init(&b);
	while (i < n) {
		uint32_t cp;
		size_t len = erl_utf8_decode(s + i, n - i, &cp);

		if (!len || cp < 0x20 || cp == 0x7f) {
			erl_buf_puts(&b, "?");
			i++;
		} else {
			erl_buf_add(&b, s + i, len);
			i += len;
		}
	}
	r = xstrdup(erl_buf_str(&b));
	erl_buf_fini(&b);
	if (r[0] == '(' && r[1] >= '0' && r[1] <= '9')
		r[0] = '?';
	return r;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The id of @name, and whether it is new (then it was added). */
static unsigned name_id(struct cg_ids *t, const char *name, bool *is_new)
{
	size_t i;

	if (2 * (t->nr + 1) > t->slots) {
		struct cg_ids big = { .slots = t->slots ? 2 * t->slots : 64 };

		big.names = xcalloc(big.slots, sizeof(*big.names));
		big.ids = xcalloc(big.slots, sizeof(*big.ids));
		for (size_t k = 0; k < t->slots; k++) {
			if (!t->names[k])
				continue;
			i = hash_str(t->names[k]) & (big.slots - 1);
			while (big.names[i])
				i = (i + 1) & (big.slots - 1);
			big.names[i] = t->names[k];
			big.ids[i] = t->ids[k];
		}
		big.nr = t->nr;
		free(t->names);
		free(t->ids);
		*t = big;
	}
	i = hash_str(name) & (t->slots - 1);
	while (t->names[i]) {
		if (!strcmp(t->names[i], name)) {
			*is_new = false;
			return t->ids[i];
		}
		i = (i + 1) & (t->slots - 1);
	}
	t->names[i] = xstrdup(name);
	t->ids[i] = (unsigned)++t->nr;
	*is_new = true;
	return t->ids[i];
}

static void ids_free(struct cg_ids *t)
{
	for (size_t k = 0; k < t->slots; k++)
		free(t->names[k]);
	free(t->names);
	free(t->ids);
}

/* "key=(n) name" on first use, "key=(n)" after. */
static void put_name(struct cg_file *c, FILE *out, const char *key, int space,
		     const char *name)
{
	bool is_new;
	unsigned id = name_id(&c->ids[space], name, &is_new);

	if (is_new)
		fprintf(out, "%s=(%u) %s\n", key, id, name);
	else
		fprintf(out, "%s=(%u)\n", key, id);
}

static void add_arc(const struct ct_arc *a, void *arg)
{
	struct cg_file *c = arg;
	size_t caller = a->caller == CT_FUNC_UNDEFINED ? c->root : a->caller;
	uint64_t self, inc;

	if (a->callee >= c->p->nr_funcs || (a->caller != CT_FUNC_UNDEFINED &&
					   a->caller >= c->p->nr_funcs))
		return;
	if (c->count) {
		self = inc = a->calls;
	} else {
		self = is_pseudo(c->p, a->callee) ? a->acc_ns : a->own_ns;
		inc = a->acc_ns;
	}
	c->present[caller] = c->present[a->callee] = true;
	c->self[a->callee] += self;
	xgrow(&c->edges, &c->cap_edges, c->nr_edges + 1, sizeof(*c->edges));
	c->edges[c->nr_edges++] = (struct cg_edge){
		.caller = caller, .callee = a->callee, .calls = a->calls, .inc = inc,
	};
}

/* Order of the functions in the file (see the top). */
static int node_cmp(const void *va, const void *vb, void *arg)
{
	size_t a = *(const size_t *)va, b = *(const size_t *)vb;
	const struct cg_file *c = arg;
	const struct cg_names *na = &c->names[a], *nb = &c->names[b];
	size_t nf = c->p->nr_funcs;
	int ra, rb, r;

	ra = a >= nf ? 0 : c->main_ob && !strcmp(na->ob, c->main_ob) ? 1 : 2;
	rb = b >= nf ? 0 : c->main_ob && !strcmp(nb->ob, c->main_ob) ? 1 : 2;
	if (ra != rb)
		return ra < rb ? -1 : 1;
	if (ra) {
		r = strcmp(na->ob, nb->ob);
		if (!r)
			r = strcmp(na->sort_file, nb->sort_file);
		if (!r)
			r = strcmp(na->fn, nb->fn);
		if (r)
			return r;
	}
	return a < b ? -1 : a > b;
}

/* Edges by caller, then callee name, object, file and id. */
static int edge_cmp(const void *va, const void *vb, void *arg)
{
	const struct cg_edge *a = va, *b = vb;
	const struct cg_file *c = arg;
	const struct cg_names *na = &c->names[a->callee], *nb = &c->names[b->callee];
	int r;

	if (a->caller != b->caller)
		return a->caller < b->caller ? -1 : 1;
	r = strcmp(na->fn, nb->fn);
	if (!r)
		r = strcmp(na->ob, nb->ob);
	if (!r)
		r = strcmp(na->sort_file, nb->sort_file);
	if (r)
		return r;
	return a->callee < b->callee ? -1 : a->callee > b->callee;
}

/* Sort the edges and add up those of the same (caller, callee). */
static void merge_edges(struct cg_file *c)
{
	size_t out = 0;

	if (!c->nr_edges)
		return;
	qsort_r(c->edges, c->nr_edges, sizeof(*c->edges), edge_cmp, c);
	for (size_t i = 1; i < c->nr_edges; i++) {
		struct cg_edge *d = &c->edges[out];

		if (d->caller == c->edges[i].caller && d->callee == c->edges[i].callee) {
			d->calls += c->edges[i].calls;
			d->inc += c->edges[i].inc;
		} else {
			c->edges[++out] = c->edges[i];
		}
	}
	c->nr_edges = out + 1;
}

/* The base name of the command's first word: the traced program's object. */
static char *main_object(const char *cmd)
{
	const char *s, *e, *slash;

	if (!cmd)
		return NULL;
	s = cmd + strspn(cmd, " \t");
	e = s + strcspn(s, " \t");
	for (slash = s; slash < e; slash++)
		if (*slash == '/')
			s = slash + 1;
	if (s == e)
		return NULL;
	return xasprintf("%.*s", (int)(e - s), s);
}

static void put_function(struct cg_file *c, FILE *out, size_t f, const struct cg_edge *es,
			 size_t nr)
{
	const struct cg_names *n = &c->names[f];

	put_name(c, out, "ob", ID_OB, n->ob);
	put_name(c, out, "fl", ID_FL, n->fl);
	put_name(c, out, "fn", ID_FN, n->fn);
	fprintf(out, "%d %" PRIu64 "\n", n->line, c->self[f]);
	for (size_t i = 0; i < nr; i++) {
		const struct cg_names *k = &c->names[es[i].callee];

		if (strcmp(k->ob, n->ob))
			put_name(c, out, "cob", ID_OB, k->ob);
		if (strcmp(k->fl, n->fl))
			put_name(c, out, "cfi", ID_FL, k->fl);
		put_name(c, out, "cfn", ID_FN, k->fn);
		fprintf(out, "calls=%" PRIu64 " %d\n", es[i].calls, k->line);
		fprintf(out, "%d %" PRIu64 "\n", n->line, es[i].inc);
	}
	fputs("\n", out);
}

/* One Callgrind file of @ths (@nr threads; @thread_line: a per-thread file). */
static void write_file(const struct profile *p, struct cg_names *fnames, const char *main_ob,
		       struct ct_thread *const *ths, size_t nr, bool thread_line, FILE *out)
{
	struct cg_file c = {
		.p = p, .count = p->mode == CT_MODE_COUNT, .main_ob = main_ob,
		.nr_nodes = p->nr_funcs + nr,
	};
	size_t *order, nr_order = 0;
	uint64_t total = 0;
	bool one_pid = nr > 0;

	c.names = xcalloc(c.nr_nodes + 1, sizeof(*c.names));
	if (p->nr_funcs)
		memcpy(c.names, fnames, p->nr_funcs * sizeof(*c.names));
	c.self = xcalloc(c.nr_nodes + 1, sizeof(*c.self));
	c.present = xcalloc(c.nr_nodes + 1, sizeof(*c.present));
	for (size_t k = 0; k < nr; k++) {
		struct cg_names *rn = &c.names[p->nr_funcs + k];

		rn->ob = xstrdup("[calltrace]");
		rn->fl = xstrdup("???");
		rn->fn = xasprintf("[thread %d.%d]", (int)ths[k]->pid, (int)ths[k]->tid);
		rn->sort_file = "";
		c.root = p->nr_funcs + k;
		c.present[c.root] = true;
		profile_thread_arcs(p, ths[k], add_arc, &c);
		if (ths[k]->pid != ths[0]->pid)
			one_pid = false;
	}
	merge_edges(&c);

	order = xcalloc(c.nr_nodes + 1, sizeof(*order));
	for (size_t f = 0; f < c.nr_nodes; f++) {
		if (c.present[f]) {
			order[nr_order++] = f;
			total += c.self[f];
		}
	}
	qsort_r(order, nr_order, sizeof(*order), node_cmp, &c);

	fputs("# callgrind format\nversion: 1\ncreator: calltrace " CALLTRACE_VERSION "\n", out);
	if (one_pid)
		fprintf(out, "pid: %d\n", (int)ths[0]->pid);
	if (p->command) {
		char *cmd = clean_name(p->command);

		fprintf(out, "cmd: %s\n", cmd);
		free(cmd);
	}
	if (thread_line)
		fprintf(out, "thread: %d\n", (int)ths[0]->tid);
	fputs("part: 1\n\n"
	      "desc: Timerange: whole run\n"
	      "desc: Trigger: Program termination\n", out);
	if (!c.count && p->clock && strcmp(p->clock, "wall")) {
		char *clk = clean_name(p->clock);

		fprintf(out, "desc: Clock: %s\n", clk);
		free(clk);
	}
	fprintf(out, "\npositions: line\nevents: %s\nsummary: %" PRIu64 "\n\n",
		c.count ? "calls" : "ns", total);

	for (size_t i = 0; i < nr_order; i++) {
		size_t f = order[i], lo = 0, hi = c.nr_edges;

		/* the edges are sorted by caller: find f's run */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (c.edges[mid].caller < f)
				lo = mid + 1;
			else
				hi = mid;
		}
		hi = lo;
		while (hi < c.nr_edges && c.edges[hi].caller == f)
			hi++;
		put_function(&c, out, f, c.edges + lo, hi - lo);
	}
	fprintf(out, "totals: %" PRIu64 "\n", total);

	for (size_t k = 0; k < nr; k++) {
		free(c.names[p->nr_funcs + k].ob);
		free(c.names[p->nr_funcs + k].fl);
		free(c.names[p->nr_funcs + k].fn);
	}
	for (int k = 0; k < 3; k++)
		ids_free(&c.ids[k]);
	free(order);
	free(c.edges);
	free(c.present);
	free(c.self);
	free(c.names);
}

static int finish(FILE *f)
{
	if (fflush(f) != 0 || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}

static int emit_callgrind(const struct profile *p, const struct report_opts *ro, FILE *out)
{
	struct cg_names *fnames;
	struct ct_thread **ths;
	char *main_ob;
	int err;

	if (ro->per_thread && !ro->output)
		return -EINVAL;
	errno = 0;
	fnames = xcalloc(p->nr_funcs + 1, sizeof(*fnames));
	for (ct_func_id f = 0; f < p->nr_funcs; f++) {
		const struct ct_func *fn = &p->funcs[f];

		fnames[f].ob = is_pseudo(p, f) ? xstrdup("[kernel]") : clean_name(fn->module);
		fnames[f].fl = clean_name(fn->file);
		fnames[f].fn = clean_name(fn->name);
		fnames[f].sort_file = fn->file ? fn->file : "";
		fnames[f].line = fn->line > 0 ? fn->line : 0;
	}
	ths = xcalloc(p->nr_threads + 1, sizeof(*ths));
	if (p->nr_threads)
		memcpy(ths, p->threads, p->nr_threads * sizeof(*ths));
	qsort(ths, p->nr_threads, sizeof(*ths), profile_thread_cmp);
	main_ob = main_object(p->command);

	write_file(p, fnames, main_ob, ths, p->nr_threads, false, out);
	err = finish(out);
	for (size_t i = 0; !err && ro->per_thread && i < p->nr_threads; i++) {
		char *path = xasprintf("%s.%d", ro->output, (int)ths[i]->tid);
		FILE *f = fopen(path, "w");

		if (!f) {
			err = -errno;
		} else {
			errno = 0;
			write_file(p, fnames, main_ob, &ths[i], 1, true, f);
			err = finish(f);
			if (fclose(f) && !err)
				err = errno ? -errno : -EIO;
		}
		free(path);
	}

	for (ct_func_id f = 0; f < p->nr_funcs; f++) {
		free(fnames[f].ob);
		free(fnames[f].fl);
		free(fnames[f].fn);
	}
	free(fnames);
	free(ths);
	free(main_ob);
	return err;
}

const struct report_ops report_callgrind = {
	.name = "callgrind",
	.default_sort = REPORT_SORT_ACC,
	.shows_callers = true,
	.emit = emit_callgrind,
};
