/* SPDX-License-Identifier: MIT */
/* json.c - the JSON report (design-brief.md section 4), built with json-c and written
 * as one pretty-printed object (JSON_C_TO_STRING_PRETTY | SPACED | NOSLASHESCAPE: two
 * space indent, readable diffs, paths without escaped slashes), then a newline.
 *
 * Shape (every key is always present; "null" where noted):
 *
 * { "version": 1, "mode": "full" | "count", "clock": "wall" | "cpu" | null,
 *   "command": "..." | null, "span_ns": last event - first event,
 *   "stop_cost": { "ns", "source": "run" | "calibration", "round_trips" } | null,
 *   "functions": [ { "name", "module", "file": str|null, "line": int|null, "arity",
 *                    "calls", "own_ns", "acc_ns",
 *                    "latency": { "count", "min_ns", "p50_ns", "p95_ns", "p99_ns",
 *                                 "max_ns" } | null,
 *                    "callers": [ { "name", "module", "calls", "own_ns", "acc_ns" } ],
 *                    "callees": [ ...same... ] } ],
 *   "threads": [ { "pid", "tid", "comm": str|null, "spawned_by": "<P.T>" | null,
 *                  "spawned_as": { "name", "module", "arg": "0x.." } | null,
 *                  "tree": { "name": "undefined", "module": "", "calls": 0,
 *                            "own_ns": 0, "acc_ns", "recursive": false,
 *                            "children": [ node... ] } | null,
 *                  "edges": [ { "caller": { "name", "module" },
 *                               "callee": { "name", "module" },
 *                               "calls" } ] | null } ] }
 *
 * Decisions:
 *  - functions: every function with a node in some thread's tree (count mode: every
 *    function named by some thread's edges, as caller or callee), in profile order
 *    (function id). Counts and times are summed over threads (from
 *    profile_thread_arcs(), both modes); "calls" counts calls from every caller,
 *    'undefined' included. A function's acc_ns adds only non-recursive nodes (fprof's
 *    rule: ACC counts the outermost activation), its own_ns adds all. Pseudo functions
 *    (suspend) are listed with module "".
 *  - latency: the function's per-call latency histogram (ACC of every call, recursive
 *    ones included, all threads): its number of calls, exact min and max, and the
 *    50/95/99% quantiles (bucket midpoints, within 1/8). null when the function has
 *    no histogram (count mode, or never returned).
 *  - callers/callees: one entry per distinct function, summed over threads, sorted by
 *    calls (descending), then function id. An edge's acc_ns follows the same rule
 *    (0 for calls into an already active function). The unknown caller 'undefined'
 *    of a thread's root functions is NOT listed as a caller: callers only name real
 *    functions, so a root function may have no callers.
 *  - threads: sorted by pid, then tid. "tree" is always the pseudo root node
 *    "undefined" (calls 0, own_ns 0, acc_ns the sum of its children's), whose children
 *    are the thread's root calls, so a thread with several root functions keeps one
 *    shape. Tree nodes carry the raw per-path values (acc_ns included, also for
 *    recursive nodes, which are marked "recursive": true). Children are sorted by
 *    acc_ns, then calls (both descending), then function id.
 *  - count mode (profile.mode == CT_MODE_COUNT): every own_ns and acc_ns is null,
 *    "tree" is null (count mode records no tree; should a count-mode profile have
 *    tree nodes, they are written, with null times) and "edges" lists the thread's
 *    caller -> callee pairs with their calls: sorted by calls (descending), then
 *    caller id, then callee id (the caller 'undefined', name "undefined" and module
 *    "", last among equals). Calls
 *    from untraced code are only there: callers lists never name 'undefined'.
 *    In full mode "edges" is null (the tree has the same information and more).
 *  - strings: bytes that are not valid UTF-8 become U+FFFD, so the output is always
 *    valid JSON text. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "calltrace/erl.h"
#include "calltrace/profile.h"
#include "calltrace/report.h"
#include "calltrace/util.h"

/* A function-level (caller, callee) pair summed over threads. */
struct jedge {
	ct_func_id caller, callee;
	uint64_t calls, own, acc;
};

struct jctx {
	const struct profile *p;
	bool full;             /* times are written (not count mode) */
	struct jedge *edges;          /* sorted by (caller, callee) */
	struct jedge *by_callee;      /* the same, sorted by (callee, caller) */
	size_t nr_edges, cap_edges;
	struct jedge *tedges;         /* count mode: one thread's edges */
	size_t nr_tedges, cap_tedges;
};

/* @s as valid UTF-8 (invalid bytes replaced by U+FFFD); NULL gives JSON null. */
static json_object *jstr(const char *s)
{
	struct erl_buf b;
	size_t n, i = 0;
	json_object *o;

	if (!s)
		return NULL;
	n = strlen(s);
	erl_buf_init(&b);
	erl_buf_add(&b, "", 0);
	while (i < n) {
		uint32_t cp;
		size_t len = erl_utf8_decode(s + i, n - i, &cp);

		if (len) {
			erl_buf_add(&b, s + i, len);
			i += len;
		} else {
			erl_buf_puts(&b, "\xef\xbf\xbd");
			i++;
		}
	}
	o = json_object_new_string(erl_buf_str(&b));
	erl_buf_fini(&b);
	return o;
}

static json_object *jtime(const struct jctx *c, uint64_t ns)
{
	return c->full ? json_object_new_uint64(ns) : NULL;
}

static void put(json_object *obj, const char *key, json_object *val)
{
	json_object_object_add(obj, key, val);
}

/* What was taken out of every time per stop, and where it came from; null when nothing
 * was (--raw-times, count mode, a loaded profile that did not say). */
static json_object *stop_cost(const struct profile *p)
{
	json_object *o;

	if (!p->compensated)
		return NULL;
	o = json_object_new_object();
	put(o, "ns", json_object_new_uint64(p->stop_cost_ns));
	put(o, "source", json_object_new_string(p->stop_cost_trips ? "run" : "calibration"));
	put(o, "round_trips", json_object_new_uint64(p->stop_cost_trips));
	return o;
}


static const char *func_module(const struct profile *p, ct_func_id f)
{
	return f == CT_FUNC_UNDEFINED || f >= p->nr_funcs ? "" : p->funcs[f].module;
}

static void collect_arc(const struct ct_arc *a, void *arg)
{
	struct jctx *c = arg;

	xgrow(&c->edges, &c->cap_edges, c->nr_edges + 1, sizeof(*c->edges));
	c->edges[c->nr_edges++] = (struct jedge){
		.caller = a->caller, .callee = a->callee, .calls = a->calls,
		.own = a->own_ns, .acc = a->acc_ns,
	};
}

static int jedge_cmp(const void *va, const void *vb)
{
	const struct jedge *a = va, *b = vb;

	if (a->caller != b->caller)
		return a->caller < b->caller ? -1 : 1;
	if (a->callee != b->callee)
		return a->callee < b->callee ? -1 : 1;
	return 0;
}

/* Sort the collected node edges by (caller, callee) and add up duplicates. */
static void merge_edges(struct jctx *c)
{
	size_t out = 0;

	if (!c->nr_edges)
		return;
	qsort(c->edges, c->nr_edges, sizeof(*c->edges), jedge_cmp);
	for (size_t i = 1; i < c->nr_edges; i++) {
		struct jedge *d = &c->edges[out];

		if (!jedge_cmp(d, &c->edges[i])) {
			d->calls += c->edges[i].calls;
			d->own += c->edges[i].own;
			d->acc += c->edges[i].acc;
		} else {
			c->edges[++out] = c->edges[i];
		}
	}
	c->nr_edges = out + 1;
}

static int jedge_cmp_callee(const void *va, const void *vb)
{
	const struct jedge *a = va, *b = vb;

	if (a->callee != b->callee)
		return a->callee < b->callee ? -1 : 1;
	if (a->caller != b->caller)
		return a->caller < b->caller ? -1 : 1;
	return 0;
}

/* First index in @v (sorted by the key @by_callee selects) whose key is >= @f. */
static size_t lower_bound(const struct jedge *v, size_t nr, ct_func_id f, bool by_callee)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((by_callee ? v[mid].callee : v[mid].caller) < f)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Edge list entries: one function named by @id with the edge's numbers. */
struct jref {
	ct_func_id id;
	const struct jedge *e;
};

static int jref_cmp(const void *va, const void *vb)
{
	const struct jref *a = va, *b = vb;

	if (a->e->calls != b->e->calls)
		return a->e->calls > b->e->calls ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return 0;
}

static json_object *edge_list(const struct jctx *c, ct_func_id f, bool callers)
{
	json_object *arr = json_object_new_array();
	const struct jedge *v = callers ? c->by_callee : c->edges;
	struct jref *refs = NULL;
	size_t nr = 0, cap = 0;

	for (size_t i = lower_bound(v, c->nr_edges, f, callers); i < c->nr_edges; i++) {
		const struct jedge *e = &v[i];
		ct_func_id other = callers ? e->caller : e->callee;

		if ((callers ? e->callee : e->caller) != f)
			break;
		if (other == CT_FUNC_UNDEFINED)
			continue;
		xgrow(&refs, &cap, nr + 1, sizeof(*refs));
		refs[nr++] = (struct jref){ .id = other, .e = e };
	}
	if (nr)
		qsort(refs, nr, sizeof(*refs), jref_cmp);
	for (size_t i = 0; i < nr; i++) {
		json_object *o = json_object_new_object();

		put(o, "name", jstr(profile_func_name(c->p, refs[i].id)));
		put(o, "module", jstr(func_module(c->p, refs[i].id)));
		put(o, "calls", json_object_new_uint64(refs[i].e->calls));
		put(o, "own_ns", jtime(c, refs[i].e->own));
		put(o, "acc_ns", jtime(c, refs[i].e->acc));
		json_object_array_add(arr, o);
	}
	free(refs);
	return arr;
}

static json_object *latency(const struct ct_hist *h)
{
	json_object *o;

	if (!h || !h->count)
		return NULL;
	o = json_object_new_object();
	put(o, "count", json_object_new_uint64(h->count));
	put(o, "min_ns", json_object_new_uint64(h->min_ns));
	put(o, "p50_ns", json_object_new_uint64(ct_hist_quantile(h, 0.5)));
	put(o, "p95_ns", json_object_new_uint64(ct_hist_quantile(h, 0.95)));
	put(o, "p99_ns", json_object_new_uint64(ct_hist_quantile(h, 0.99)));
	put(o, "max_ns", json_object_new_uint64(h->max_ns));
	return o;
}

static json_object *functions(struct jctx *c)
{
	const struct profile *p = c->p;
	json_object *arr = json_object_new_array();
	struct jedge *sum = xcalloc(p->nr_funcs + 1, sizeof(*sum));
	bool *seen = xcalloc(p->nr_funcs + 1, sizeof(*seen));

	/* Function totals are the sums over their incoming edges (one per caller). */
	for (size_t i = 0; i < c->nr_edges; i++) {
		const struct jedge *e = &c->edges[i];

		if (e->callee >= p->nr_funcs)
			continue;
		seen[e->callee] = true;
		if (e->caller < p->nr_funcs)
			seen[e->caller] = true;
		sum[e->callee].calls += e->calls;
		sum[e->callee].own += e->own;
		sum[e->callee].acc += e->acc;
	}
	for (ct_func_id f = 0; f < p->nr_funcs; f++) {
		const struct ct_func *fn = &p->funcs[f];
		json_object *o;

		if (!seen[f])
			continue;
		o = json_object_new_object();
		put(o, "name", jstr(fn->name));
		put(o, "module", jstr(fn->module));
		put(o, "file", jstr(fn->file));
		put(o, "line", fn->line > 0 ? json_object_new_int(fn->line) : NULL);
		put(o, "arity", json_object_new_int(fn->arity));
		put(o, "calls", json_object_new_uint64(sum[f].calls));
		put(o, "own_ns", jtime(c, sum[f].own));
		put(o, "acc_ns", jtime(c, sum[f].acc));
		put(o, "latency", latency(fn->hist));
		put(o, "callers", edge_list(c, f, true));
		put(o, "callees", edge_list(c, f, false));
		json_object_array_add(arr, o);
	}
	free(seen);
	free(sum);
	return arr;
}

static int node_cmp(const void *va, const void *vb)
{
	const struct ct_node *a = *(const struct ct_node *const *)va;
	const struct ct_node *b = *(const struct ct_node *const *)vb;

	if (a->acc_ns != b->acc_ns)
		return a->acc_ns > b->acc_ns ? -1 : 1;
	if (a->calls != b->calls)
		return a->calls > b->calls ? -1 : 1;
	if (a->func != b->func)
		return a->func < b->func ? -1 : 1;
	return 0;
}

/* The node and its subtree. Recursive over depth, like ctree_walk(). */
static void note_depth(const struct ct_node *n, int depth, void *arg)
{
	int *max = arg;

	(void)n;
	if (depth > *max)
		*max = depth;
}

static int max_depth(const struct profile *p)
{
	int max = 0;

	for (size_t i = 0; i < p->nr_threads; i++)
		ctree_walk(p->threads[i], note_depth, &max);
	return max;
}

static json_object *tree_node(const struct jctx *c, const struct ct_node *n)
{
	json_object *o = json_object_new_object(), *kids = json_object_new_array();
	const struct ct_node **v = NULL;
	size_t nr = 0, cap = 0;
	uint64_t calls = n->calls, own = n->own_ns, acc = n->acc_ns;

	for (const struct ct_node *k = n->first_child; k; k = k->next_sibling) {
		xgrow(&v, &cap, nr + 1, sizeof(*v));
		v[nr++] = k;
	}
	if (nr)
		qsort(v, nr, sizeof(*v), node_cmp);
	if (!n->parent) {
		/* the pseudo root 'undefined': no calls of its own */
		calls = own = acc = 0;
		for (size_t i = 0; i < nr; i++)
			acc += v[i]->acc_ns;
	}
	put(o, "name", jstr(profile_func_name(c->p, n->func)));
	put(o, "module", jstr(func_module(c->p, n->func)));
	put(o, "calls", json_object_new_uint64(calls));
	put(o, "own_ns", jtime(c, own));
	put(o, "acc_ns", jtime(c, acc));
	put(o, "recursive", json_object_new_boolean(n->is_rec));
	for (size_t i = 0; i < nr; i++)
		json_object_array_add(kids, tree_node(c, v[i]));
	put(o, "children", kids);
	free(v);
	return o;
}

static json_object *func_ref(const struct profile *p, ct_func_id f)
{
	json_object *o = json_object_new_object();

	put(o, "name", jstr(profile_func_name(p, f)));
	put(o, "module", jstr(func_module(p, f)));
	return o;
}

static void collect_thread_arc(const struct ct_arc *a, void *arg)
{
	struct jctx *c = arg;

	xgrow(&c->tedges, &c->cap_tedges, c->nr_tedges + 1, sizeof(*c->tedges));
	c->tedges[c->nr_tedges++] = (struct jedge){
		.caller = a->caller, .callee = a->callee, .calls = a->calls,
	};
}

static int tedge_cmp(const void *va, const void *vb)
{
	const struct jedge *a = va, *b = vb;

	if (a->calls != b->calls)
		return a->calls > b->calls ? -1 : 1;
	return jedge_cmp(a, b);
}

/* Count mode: the thread's caller -> callee pairs. */
static json_object *thread_edges(struct jctx *c, const struct ct_thread *t)
{
	json_object *arr = json_object_new_array();
	size_t out = 0;

	c->nr_tedges = 0;
	profile_thread_arcs(c->p, t, collect_thread_arc, c);
	if (c->nr_tedges) {
		/* add up repeated pairs (there are none in count mode's table) */
		qsort(c->tedges, c->nr_tedges, sizeof(*c->tedges), jedge_cmp);
		for (size_t i = 1; i < c->nr_tedges; i++) {
			if (!jedge_cmp(&c->tedges[out], &c->tedges[i]))
				c->tedges[out].calls += c->tedges[i].calls;
			else
				c->tedges[++out] = c->tedges[i];
		}
		c->nr_tedges = out + 1;
		qsort(c->tedges, c->nr_tedges, sizeof(*c->tedges), tedge_cmp);
	}
	for (size_t i = 0; i < c->nr_tedges; i++) {
		json_object *o = json_object_new_object();

		put(o, "caller", func_ref(c->p, c->tedges[i].caller));
		put(o, "callee", func_ref(c->p, c->tedges[i].callee));
		put(o, "calls", json_object_new_uint64(c->tedges[i].calls));
		json_object_array_add(arr, o);
	}
	return arr;
}

static json_object *threads(struct jctx *c)
{
	const struct profile *p = c->p;
	json_object *arr = json_object_new_array();
	const struct ct_thread **v = xcalloc(p->nr_threads + 1, sizeof(*v));

	memcpy(v, p->threads, p->nr_threads * sizeof(*v));
	qsort(v, p->nr_threads, sizeof(*v), profile_thread_cmp);
	for (size_t i = 0; i < p->nr_threads; i++) {
		const struct ct_thread *t = v[i];
		json_object *o = json_object_new_object(), *as = NULL;
		char *by = NULL;

		put(o, "pid", json_object_new_int(t->pid));
		put(o, "tid", json_object_new_int(t->tid));
		put(o, "comm", jstr(t->comm));
		if (t->parent_pid || t->parent_tid)
			by = xasprintf("<%d.%d>", (int)t->parent_pid, (int)t->parent_tid);
		put(o, "spawned_by", jstr(by));
		free(by);
		if (t->spawned_as != CT_FUNC_UNDEFINED && t->spawned_as < p->nr_funcs) {
			char arg[32];

			snprintf(arg, sizeof(arg), "0x%" PRIx64, t->spawned_arg);
			as = json_object_new_object();
			put(as, "name", jstr(p->funcs[t->spawned_as].name));
			put(as, "module", jstr(p->funcs[t->spawned_as].module));
			put(as, "arg", jstr(arg));
		}
		put(o, "spawned_as", as);
		put(o, "tree", c->full || t->root.first_child ? tree_node(c, &t->root) : NULL);
		put(o, "edges", c->full ? NULL : thread_edges(c, t));
		json_object_array_add(arr, o);
	}
	free(v);
	return arr;
}

static int emit_json(const struct profile *p, const struct report_opts *ro, FILE *out)
{
	struct jctx c = { .p = p, .full = p->mode != CT_MODE_COUNT };
	json_object *root = json_object_new_object();
	uint64_t first, last;
	const char *text;

	(void)ro;
	errno = 0;
	for (size_t i = 0; i < p->nr_threads; i++)
		profile_thread_arcs(p, p->threads[i], collect_arc, &c);
	merge_edges(&c);
	c.by_callee = xcalloc(c.nr_edges + 1, sizeof(*c.by_callee));
	if (c.nr_edges) {
		memcpy(c.by_callee, c.edges, c.nr_edges * sizeof(*c.edges));
		qsort(c.by_callee, c.nr_edges, sizeof(*c.edges), jedge_cmp_callee);
	}
	profile_span(p, &first, &last);

	put(root, "version", json_object_new_int(1));
	put(root, "mode", json_object_new_string(c.full ? "full" : "count"));
	put(root, "clock", jstr(p->clock));
	put(root, "command", jstr(p->command));
	put(root, "span_ns", json_object_new_uint64(last - first));
	put(root, "stop_cost", stop_cost(p));
	put(root, "functions", functions(&c));
	put(root, "threads", threads(&c));

	/* Pretty-printing indents every level: a tree thousands deep (deep recursion)
	 * would grow with the square of its depth. Such profiles are written compact. */
	text = json_object_to_json_string_ext(root, (max_depth(p) > 200 ? JSON_C_TO_STRING_PLAIN :
						     JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED) |
					      JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!text) {
		json_object_put(root);
		free(c.edges);
		free(c.by_callee);
		free(c.tedges);
		return -ENOMEM;
	}
	fputs(text, out);
	fputc('\n', out);
	json_object_put(root);
	free(c.edges);
	free(c.by_callee);
	free(c.tedges);

	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

const struct report_ops report_json = {
	.name = "json",
	.default_sort = REPORT_SORT_ACC,
	.shows_callers = true,
	.emit = emit_json,
};
