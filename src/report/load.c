/* SPDX-License-Identifier: MIT */
/* load.c - read a profile saved with --format json (the shape documented at the top of
 * json.c) back into a struct profile, so "calltrace report" can render every format
 * from it. Hostile input never crashes it: the JSON is parsed by json-c with a deep
 * nesting limit, every key is type-checked before use, trees are rebuilt without
 * recursion, and any problem gives -1 and one line naming the key.
 *
 * What the saved form keeps and what is rebuilt:
 *  - functions: name, module, file, line, arity (and "addr" if a file has it); ids in
 *    file order, which is profile order, so every writer's tie-breaks come out the
 *    same. Functions referenced only by spawned_as or edges are added after them.
 *  - tree nodes and count-mode edges name functions by (name, module). Two functions
 *    sharing both (two static functions of one module) cannot be told apart there: they
 *    become one function, and their call paths merge.
 *  - latency: only count, min, max and a few quantiles are saved. The histogram is
 *    rebuilt from them (one value at min, the rest in the buckets of the quantiles and
 *    of max, by rank), which gives back exactly the saved count, min, max and
 *    quantiles; other quantiles of the rebuilt histogram are approximations.
 *  - times: only the span (first to last event) is saved, so every thread gets
 *    first_ts 1 and last_ts 1 + span_ns: profile_span() is right, per-thread first and
 *    last events are lost. Function addresses are not saved (0). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "calltrace/profile.h"
#include "calltrace/report.h"
#include "calltrace/util.h"

/* json_tokener's default depth (32) is far too small for recursion trees: each tree
 * level is two JSON levels (the node and its "children" array). */
#define LOAD_MAX_DEPTH 100000
#define LOAD_VERSION 1
#define LOAD_MAX_QUANTILES 16

/* A (a, b) -> value map, open addressing; slots is 0 or a power of two. */
struct pmap_slot {
	uint64_t a, b, val;
	bool used;
};

struct pmap {
	struct pmap_slot *v;
	size_t slots, nr;
};

struct loader {
	const char *path;
	char *err;
	size_t errlen;
	struct profile *p;
	bool count;             /* count mode: times may be null */
	uint32_t *fidx;         /* (name, module) -> id + 1, 0 empty */
	size_t fslots;
	struct pmap nodes;      /* (parent node, func) -> child node */
};

static int fail(struct loader *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct loader *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(l->err, l->errlen, "%s: ", l->path);
	if (n < 0 || (size_t)n >= l->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(l->err + n, l->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* ------------------------------------------------------------------ maps */

static size_t mix(uint64_t a, uint64_t b)
{
	uint64_t k = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	k ^= k >> 31;
	k *= 0xbf58476d1ce4e5b9ull;
	return (size_t)(k ^ (k >> 29));
}

static struct pmap_slot *pmap_slot(const struct pmap *m, uint64_t a, uint64_t b)
{
	size_t h = mix(a, b) & (m->slots - 1);

	while (m->v[h].used && (m->v[h].a != a || m->v[h].b != b))
		h = (h + 1) & (m->slots - 1);
	return &m->v[h];
}

static bool pmap_get(const struct pmap *m, uint64_t a, uint64_t b, uint64_t *val)
{
	const struct pmap_slot *s;

	if (!m->slots)
		return false;
	s = pmap_slot(m, a, b);
	if (s->used)
		*val = s->val;
	return s->used;
}

static void pmap_put(struct pmap *m, uint64_t a, uint64_t b, uint64_t val)
{
	struct pmap_slot *s;

	if ((m->nr + 1) * 2 > m->slots) {
		struct pmap old = *m;

		m->slots = m->slots ? m->slots * 2 : 64;
		m->v = xcalloc(m->slots, sizeof(*m->v));
		m->nr = 0;
		for (size_t i = 0; i < old.slots; i++)
			if (old.v[i].used)
				pmap_put(m, old.v[i].a, old.v[i].b, old.v[i].val);
		free(old.v);
	}
	s = pmap_slot(m, a, b);
	if (!s->used)
		m->nr++;
	*s = (struct pmap_slot){ .a = a, .b = b, .val = val, .used = true };
}

static void pmap_fini(struct pmap *m)
{
	free(m->v);
	*m = (struct pmap){ 0 };
}

static size_t name_hash(const char *name, const char *module)
{
	uint64_t h = 1469598103934665603ull;

	for (const char *q = name; *q; q++)
		h = (h ^ (unsigned char)*q) * 1099511628211ull;
	h = (h ^ 0xff) * 1099511628211ull;
	for (const char *q = module; *q; q++)
		h = (h ^ (unsigned char)*q) * 1099511628211ull;
	return mix(h, 0);
}

static void fidx_insert(struct loader *l, ct_func_id id)
{
	const struct ct_func *f = &l->p->funcs[id];
	size_t h = name_hash(f->name, f->module) & (l->fslots - 1);

	while (l->fidx[h])
		h = (h + 1) & (l->fslots - 1);
	l->fidx[h] = id + 1;
}

/* The function named (@name, @module), added (no file, line 0, arity 0) if new. */
static ct_func_id func_lookup(struct loader *l, const char *name, const char *module,
			      bool *added)
{
	struct profile *p = l->p;
	size_t h;
	ct_func_id id;

	if (added)
		*added = false;
	if (l->fslots) {
		for (h = name_hash(name, module) & (l->fslots - 1); l->fidx[h];
		     h = (h + 1) & (l->fslots - 1)) {
			const struct ct_func *f = &p->funcs[l->fidx[h] - 1];

			if (!strcmp(f->name, name) && !strcmp(f->module, module))
				return l->fidx[h] - 1;
		}
	}
	id = profile_add_func(p, name, module, NULL, 0, 0, 0);
	if (added)
		*added = true;
	if ((p->nr_funcs + 1) * 2 > l->fslots) {
		free(l->fidx);
		l->fslots = l->fslots ? l->fslots * 2 : 64;
		l->fidx = xcalloc(l->fslots, sizeof(*l->fidx));
		for (ct_func_id i = 0; i < p->nr_funcs; i++)
			fidx_insert(l, i);
	} else {
		fidx_insert(l, id);
	}
	return id;
}

/* ------------------------------------------------------------------ typed keys */

enum need { OPTIONAL, REQUIRED };

/* *@v: the value of @key in @obj (NULL for JSON null). False if the key is missing
 * (an error naming @where if it is REQUIRED, with *@err set). */
static bool key(struct loader *l, json_object *obj, const char *where, const char *k,
		enum need need, json_object **v, int *err)
{
	*v = NULL;
	if (json_object_object_get_ex(obj, k, v))
		return true;
	if (need == REQUIRED)
		*err = fail(l, "not a calltrace profile: %s%smissing key \"%s\"", where,
			    *where ? ": " : "", k);
	return false;
}

static const char *type_name(json_object *v)
{
	return v ? json_type_to_name(json_object_get_type(v)) : "null";
}

/* A non-negative integer at @k; null gives 0 when @null_ok, a missing key 0 when
 * OPTIONAL. 0 or -1 (message set). */
static int get_u64(struct loader *l, json_object *obj, const char *where, const char *k,
		   enum need need, bool null_ok, uint64_t *out)
{
	json_object *v;
	int err = 0;

	*out = 0;
	if (!key(l, obj, where, k, need, &v, &err))
		return err;
	if (!v && null_ok)
		return 0;
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
		return fail(l, "not a calltrace profile: %s%s\"%s\" must be a non-negative "
			    "integer, not %s", where, *where ? ": " : "", k,
			    v && json_object_is_type(v, json_type_int) ? "negative" :
			    type_name(v));
	*out = json_object_get_uint64(v);
	return 0;
}

static int get_int(struct loader *l, json_object *obj, const char *where, const char *k,
		   enum need need, bool null_ok, int *out)
{
	json_object *v;
	int err = 0;
	int64_t x;

	*out = 0;
	if (!key(l, obj, where, k, need, &v, &err))
		return err;
	if (!v && null_ok)
		return 0;
	if (!json_object_is_type(v, json_type_int))
		return fail(l, "not a calltrace profile: %s%s\"%s\" must be an integer, not %s",
			    where, *where ? ": " : "", k, type_name(v));
	x = json_object_get_int64(v);
	if (x < INT_MIN || x > INT_MAX)
		return fail(l, "not a calltrace profile: %s%s\"%s\" is out of range", where,
			    *where ? ": " : "", k);
	*out = (int)x;
	return 0;
}

/* A string at @k (NULL for null when @null_ok, or for a missing OPTIONAL key).
 * Borrowed from the JSON tree. */
static int get_str(struct loader *l, json_object *obj, const char *where, const char *k,
		   enum need need, bool null_ok, const char **out)
{
	json_object *v;
	int err = 0;

	*out = NULL;
	if (!key(l, obj, where, k, need, &v, &err))
		return err;
	if (!v && null_ok)
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return fail(l, "not a calltrace profile: %s%s\"%s\" must be a string, not %s",
			    where, *where ? ": " : "", k, type_name(v));
	*out = json_object_get_string(v);
	return 0;
}

/* An array or object at @k (of @type); NULL when null or missing and allowed. */
static int get_kind(struct loader *l, json_object *obj, const char *where, const char *k,
		    enum need need, bool null_ok, enum json_type type, json_object **out)
{
	json_object *v;
	int err = 0;

	*out = NULL;
	if (!key(l, obj, where, k, need, &v, &err))
		return err;
	if (!v && null_ok)
		return 0;
	if (!json_object_is_type(v, type))
		return fail(l, "not a calltrace profile: %s%s\"%s\" must be an %s, not %s", where,
			    *where ? ": " : "", k, json_type_to_name(type), type_name(v));
	*out = v;
	return 0;
}

/* A function reference { "name", "module" } at @k of @obj. */
static int get_ref(struct loader *l, json_object *obj, const char *where, const char *k,
		   const char **name, const char **module)
{
	json_object *ref;
	char sub[160];

	if (get_kind(l, obj, where, k, REQUIRED, false, json_type_object, &ref) < 0)
		return -1;
	snprintf(sub, sizeof(sub), "%s.%s", where, k);
	if (get_str(l, ref, sub, "name", REQUIRED, false, name) < 0 ||
	    get_str(l, ref, sub, "module", REQUIRED, false, module) < 0)
		return -1;
	return 0;
}

/* ------------------------------------------------------------------ functions */

struct quantile {
	double q;
	uint64_t v;
};

static int quantile_cmp(const void *va, const void *vb)
{
	const struct quantile *a = va, *b = vb;

	return a->q < b->q ? -1 : a->q > b->q;
}

/* ct_hist_quantile()'s rank of @q among @count values. */
static uint64_t rank_of(double q, uint64_t count)
{
	uint64_t r = (uint64_t)(q * (double)count);

	if ((double)r < q * (double)count)
		r++;
	return r < 1 ? 1 : r > count ? count : r;
}

/* Rebuild a histogram from "latency": { "count", "min_ns", "pNN_ns"..., "max_ns" }.
 * Ranks 1..count are given to values: rank 1 is min, ranks up to each quantile's rank
 * go to that quantile's bucket, the rest to max's. Each saved quantile then comes back
 * exactly (a quantile is the clamped midpoint of the bucket holding its rank). */
static int load_latency(struct loader *l, json_object *lat, const char *where,
			struct ct_func *fn)
{
	struct quantile qs[LOAD_MAX_QUANTILES];
	size_t nr = 0;
	uint64_t count, min, max, done = 1;
	struct ct_hist *h;

	if (get_u64(l, lat, where, "count", REQUIRED, false, &count) < 0 ||
	    get_u64(l, lat, where, "min_ns", REQUIRED, false, &min) < 0 ||
	    get_u64(l, lat, where, "max_ns", REQUIRED, false, &max) < 0)
		return -1;
	json_object_object_foreach(lat, k, v) {
		size_t digits = strspn(k + 1, "0123456789");
		char frac[32];

		if (k[0] != 'p' || !digits || digits > 9 || strcmp(k + 1 + digits, "_ns"))
			continue;
		if (nr == LOAD_MAX_QUANTILES)
			return fail(l, "not a calltrace profile: %s: too many quantiles", where);
		(void)v;
		if (get_u64(l, lat, where, k, REQUIRED, false, &qs[nr].v) < 0)
			return -1;
		snprintf(frac, sizeof(frac), "0.%.*s", (int)digits, k + 1);
		qs[nr++].q = strtod(frac, NULL);
	}
	if (!count)
		return 0;
	qsort(qs, nr, sizeof(*qs), quantile_cmp);
	h = xcalloc(1, sizeof(*h));
	h->count = count;
	h->min_ns = min;
	h->max_ns = max;
	h->bucket[ct_hist_bucket(min)] = 1;
	for (size_t i = 0; i < nr; i++) {
		uint64_t r = rank_of(qs[i].q, count);

		if (r > done) {
			h->bucket[ct_hist_bucket(qs[i].v)] += r - done;
			done = r;
		}
	}
	h->bucket[ct_hist_bucket(max)] += count - done;
	free(fn->hist);
	fn->hist = h;
	return 0;
}

static int load_addr(struct loader *l, json_object *o, const char *where, uint64_t *addr)
{
	json_object *v;
	int err = 0;

	*addr = 0;
	if (!key(l, o, where, "addr", OPTIONAL, &v, &err) || !v)
		return err;
	if (json_object_is_type(v, json_type_string)) {
		const char *s = json_object_get_string(v);
		char *end;

		errno = 0;
		*addr = strtoull(s, &end, 16);
		if (!errno && end != s && !*end)
			return 0;
	} else if (json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0) {
		*addr = json_object_get_uint64(v);
		return 0;
	}
	return fail(l, "not a calltrace profile: %s: \"addr\" must be an address", where);
}

static int load_functions(struct loader *l, json_object *arr)
{
	size_t n = json_object_array_length(arr);

	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(arr, i), *lat;
		const char *name, *module, *file;
		char where[48];
		int line, arity;
		uint64_t addr;
		bool added;
		ct_func_id id;

		snprintf(where, sizeof(where), "functions[%zu]", i);
		if (!json_object_is_type(o, json_type_object))
			return fail(l, "not a calltrace profile: %s must be an object, not %s",
				    where, type_name(o));
		if (get_str(l, o, where, "name", REQUIRED, false, &name) < 0 ||
		    get_str(l, o, where, "module", REQUIRED, false, &module) < 0 ||
		    get_str(l, o, where, "file", OPTIONAL, true, &file) < 0 ||
		    get_int(l, o, where, "line", OPTIONAL, true, &line) < 0 ||
		    get_int(l, o, where, "arity", OPTIONAL, true, &arity) < 0 ||
		    load_addr(l, o, where, &addr) < 0 ||
		    get_kind(l, o, where, "latency", OPTIONAL, true, json_type_object, &lat) < 0)
			return -1;
		id = func_lookup(l, name, module, &added);
		if (added) {
			struct ct_func *f = &l->p->funcs[id];

			f->file = file ? xstrdup(file) : NULL;
			f->line = line;
			f->arity = arity;
			f->addr = addr;
		}
		/* a second function with the same (name, module) merges into the first */
		if (lat && added) {
			char sub[64];

			snprintf(sub, sizeof(sub), "%s.latency", where);
			if (load_latency(l, lat, sub, &l->p->funcs[id]) < 0)
				return -1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ threads */

/* The child of @parent for @f: found (numbers to be added) or created. */
static struct ct_node *child_of(struct loader *l, struct ct_node *parent, ct_func_id f)
{
	uint64_t val;
	struct ct_node *c;

	if (pmap_get(&l->nodes, (uint64_t)(uintptr_t)parent, f, &val))
		return (struct ct_node *)(uintptr_t)val;
	c = xcalloc(1, sizeof(*c));
	c->func = f;
	c->parent = parent;
	c->next_sibling = parent->first_child;
	parent->first_child = c;
	l->p->nr_nodes++;
	pmap_put(&l->nodes, (uint64_t)(uintptr_t)parent, f, (uint64_t)(uintptr_t)c);
	return c;
}

/* One node's own numbers, added to @n. */
static int load_node(struct loader *l, json_object *o, const char *where, struct ct_node *n)
{
	uint64_t calls, own, acc;
	json_object *rec;

	if (get_u64(l, o, where, "calls", REQUIRED, false, &calls) < 0 ||
	    get_u64(l, o, where, "own_ns", REQUIRED, l->count, &own) < 0 ||
	    get_u64(l, o, where, "acc_ns", REQUIRED, l->count, &acc) < 0 ||
	    get_kind(l, o, where, "recursive", OPTIONAL, true, json_type_boolean, &rec) < 0)
		return -1;
	n->calls += calls;
	n->own_ns += own;
	n->acc_ns += acc;
	if (rec && json_object_get_boolean(rec))
		n->is_rec = true;
	return 0;
}

/* A level of the walk: the children array being read and the node they hang from. */
struct frame {
	json_object *kids;
	size_t next, nr;
	struct ct_node *node;
};

/* The thread's "tree", rebuilt depth-first with an explicit stack (trees can be as
 * deep as the recursion they recorded). The root's own numbers are not read: the root
 * is the pseudo node 'undefined'. */
static int load_tree(struct loader *l, struct ct_thread *t, json_object *tree,
		     const char *twhere)
{
	struct frame *st = NULL;
	size_t depth = 0, cap = 0;
	char where[160];
	json_object *kids;
	int rc = -1;

	if (get_kind(l, tree, twhere, "children", OPTIONAL, true, json_type_array, &kids) < 0)
		return -1;
	if (!kids)
		return 0;
	xgrow(&st, &cap, 1, sizeof(*st));
	st[0] = (struct frame){ kids, 0, json_object_array_length(kids), &t->root };
	depth = 1;
	while (depth) {
		struct frame *f = &st[depth - 1];
		json_object *o, *sub;
		const char *name, *module;
		struct ct_node *n;

		if (f->next == f->nr) {
			depth--;
			continue;
		}
		o = json_object_array_get_idx(f->kids, f->next);
		snprintf(where, sizeof(where), "%s: node at depth %zu (children[%zu])", twhere,
			 depth, f->next);
		f->next++;
		if (!json_object_is_type(o, json_type_object)) {
			fail(l, "not a calltrace profile: %s must be an object, not %s", where,
			     type_name(o));
			goto out;
		}
		if (get_str(l, o, where, "name", REQUIRED, false, &name) < 0 ||
		    get_str(l, o, where, "module", REQUIRED, false, &module) < 0 ||
		    get_kind(l, o, where, "children", OPTIONAL, true, json_type_array, &sub) < 0)
			goto out;
		n = child_of(l, f->node, func_lookup(l, name, module, NULL));
		if (load_node(l, o, where, n) < 0)
			goto out;
		if (sub && json_object_array_length(sub)) {
			xgrow(&st, &cap, depth + 1, sizeof(*st));
			st[depth++] = (struct frame){ sub, 0, json_object_array_length(sub), n };
		}
	}
	rc = 0;
out:
	free(st);
	return rc;
}

/* Count mode's "edges": [ { "caller": ref, "callee": ref, "calls" } ]. The caller
 * ("undefined", "") is CT_FUNC_UNDEFINED. */
static int load_edges(struct loader *l, struct ct_thread *t, json_object *arr,
		      const char *twhere)
{
	size_t n = json_object_array_length(arr);
	struct pmap seen = { 0 };
	int rc = -1;

	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(arr, i);
		const char *cr_name, *cr_mod, *ce_name, *ce_mod;
		ct_func_id caller, callee;
		char where[96];
		uint64_t calls, idx;

		snprintf(where, sizeof(where), "%s.edges[%zu]", twhere, i);
		if (!json_object_is_type(o, json_type_object)) {
			fail(l, "not a calltrace profile: %s must be an object, not %s", where,
			     type_name(o));
			goto out;
		}
		if (get_ref(l, o, where, "caller", &cr_name, &cr_mod) < 0 ||
		    get_ref(l, o, where, "callee", &ce_name, &ce_mod) < 0 ||
		    get_u64(l, o, where, "calls", REQUIRED, false, &calls) < 0)
			goto out;
		caller = !strcmp(cr_name, "undefined") && !*cr_mod ? CT_FUNC_UNDEFINED :
			 func_lookup(l, cr_name, cr_mod, NULL);
		callee = func_lookup(l, ce_name, ce_mod, NULL);
		if (pmap_get(&seen, caller, callee, &idx)) {
			t->edges[idx].calls += calls;
			continue;
		}
		/* ctree_count() adds one call; the saved count replaces it (there is no
		 * ctree_count_n() yet) */
		idx = t->nr_edges;
		ctree_count(t, caller, callee, 0);
		if (t->nr_edges != idx + 1) {
			fail(l, "%s: edge table out of step", where);
			goto out;
		}
		t->edges[idx].calls = calls;
		pmap_put(&seen, caller, callee, idx);
	}
	rc = 0;
out:
	pmap_fini(&seen);
	return rc;
}

/* "<P.T>" */
static bool parse_pid_pair(const char *s, pid_t *pid, pid_t *tid)
{
	int a, b, end = 0;

	if (sscanf(s, "<%d.%d>%n", &a, &b, &end) != 2 || s[end] || a < 0 || b < 0)
		return false;
	*pid = a;
	*tid = b;
	return true;
}

static int load_thread(struct loader *l, json_object *o, const char *where)
{
	json_object *as, *tree, *edges;
	const char *comm, *by;
	int pid, tid;
	struct ct_thread *t;

	if (!json_object_is_type(o, json_type_object))
		return fail(l, "not a calltrace profile: %s must be an object, not %s", where,
			    type_name(o));
	if (get_int(l, o, where, "pid", REQUIRED, false, &pid) < 0 ||
	    get_int(l, o, where, "tid", REQUIRED, false, &tid) < 0 ||
	    get_str(l, o, where, "comm", OPTIONAL, true, &comm) < 0 ||
	    get_str(l, o, where, "spawned_by", OPTIONAL, true, &by) < 0 ||
	    get_kind(l, o, where, "spawned_as", OPTIONAL, true, json_type_object, &as) < 0 ||
	    get_kind(l, o, where, "tree", OPTIONAL, true, json_type_object, &tree) < 0 ||
	    get_kind(l, o, where, "edges", OPTIONAL, true, json_type_array, &edges) < 0)
		return -1;
	t = profile_add_thread(l->p, pid, tid);
	if (comm)
		t->comm = xstrdup(comm);
	if (by && !parse_pid_pair(by, &t->parent_pid, &t->parent_tid))
		return fail(l, "not a calltrace profile: %s: \"spawned_by\" must be \"<PID.TID>\"",
			    where);
	if (as) {
		const char *name, *module, *arg;
		char sub[80];
		char *end;

		snprintf(sub, sizeof(sub), "%s.spawned_as", where);
		if (get_str(l, as, sub, "name", REQUIRED, false, &name) < 0 ||
		    get_str(l, as, sub, "module", REQUIRED, false, &module) < 0 ||
		    get_str(l, as, sub, "arg", OPTIONAL, true, &arg) < 0)
			return -1;
		t->spawned_as = func_lookup(l, name, module, NULL);
		if (arg) {
			errno = 0;
			t->spawned_arg = strtoull(arg, &end, 16);
			if (errno || end == arg || *end)
				return fail(l, "not a calltrace profile: %s: \"arg\" must be a hex "
					    "number", sub);
		}
	}
	if (tree) {
		char sub[80];

		snprintf(sub, sizeof(sub), "%s.tree", where);
		if (load_tree(l, t, tree, sub) < 0)
			return -1;
	}
	if (edges && load_edges(l, t, edges, where) < 0)
		return -1;
	return 0;
}

/* ------------------------------------------------------------------ top level */

static int load_profile(struct loader *l, json_object *root)
{
	json_object *v, *funcs, *threads, *cost;
	const char *mode, *clock, *command;
	uint64_t span;
	int err = 0;

	if (!json_object_is_type(root, json_type_object))
		return fail(l, "not a calltrace profile: the top-level value must be an object, "
			    "not %s", type_name(root));
	if (!key(l, root, "", "version", REQUIRED, &v, &err))
		return err;
	if (!json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) != LOAD_VERSION) {
		const char *text = v ? json_object_to_json_string(v) : "null";

		return fail(l, "unknown profile version %.40s%s (this calltrace reads version %d)",
			    text, strlen(text) > 40 ? "..." : "", LOAD_VERSION);
	}
	if (get_str(l, root, "", "mode", REQUIRED, false, &mode) < 0 ||
	    get_str(l, root, "", "clock", OPTIONAL, true, &clock) < 0 ||
	    get_str(l, root, "", "command", OPTIONAL, true, &command) < 0 ||
	    get_u64(l, root, "", "span_ns", OPTIONAL, true, &span) < 0 ||
	    get_kind(l, root, "", "stop_cost", OPTIONAL, true, json_type_object, &cost) < 0 ||
	    (cost && (get_u64(l, cost, "stop_cost", "ns", REQUIRED, false,
			      &l->p->stop_cost_ns) < 0 ||
		      get_u64(l, cost, "stop_cost", "round_trips", REQUIRED, false,
			      &l->p->stop_cost_trips) < 0)) ||
	    get_kind(l, root, "", "functions", REQUIRED, false, json_type_array, &funcs) < 0 ||
	    get_kind(l, root, "", "threads", REQUIRED, false, json_type_array, &threads) < 0)
		return -1;
	if (!strcmp(mode, "full"))
		l->p->mode = CT_MODE_FULL;
	else if (!strcmp(mode, "count"))
		l->p->mode = CT_MODE_COUNT;
	else
		return fail(l, "not a calltrace profile: \"mode\" must be \"full\" or \"count\"");
	l->count = l->p->mode == CT_MODE_COUNT;
	/* profile.clock is not owned: only the clocks calltrace knows */
	if (!clock)
		l->p->clock = NULL;
	else if (!strcmp(clock, "wall"))
		l->p->clock = "wall";
	else if (!strcmp(clock, "cpu"))
		l->p->clock = "cpu";
	else
		return fail(l, "not a calltrace profile: \"clock\" must be \"wall\", \"cpu\" or "
			    "null");
	if (command)
		l->p->command = xstrdup(command);
	l->p->compensated = cost != NULL;
	if (load_functions(l, funcs) < 0)
		return -1;
	for (size_t i = 0; i < json_object_array_length(threads); i++) {
		char where[48];

		snprintf(where, sizeof(where), "threads[%zu]", i);
		if (load_thread(l, json_object_array_get_idx(threads, i), where) < 0)
			return -1;
	}
	for (size_t i = 0; i < l->p->nr_threads; i++) {
		l->p->threads[i]->first_ts = 1;
		l->p->threads[i]->last_ts = 1 + span;
	}
	return 0;
}

/* The whole file in a NUL-terminated buffer (caller frees), or NULL with the message
 * set. */
static char *read_all(struct loader *l, size_t *len)
{
	FILE *f = fopen(l->path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f) {
		fail(l, "cannot open: %s", strerror(errno));
		return NULL;
	}
	for (;;) {
		size_t got;

		xgrow(&buf, &cap, n + 65536 + 1, 1);
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		fail(l, "cannot read: %s", strerror(errno ? errno : EIO));
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static bool all_space(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strchr(" \t\r\n", s[i]) || !s[i])
			return false;
	return true;
}

/* The deepest nesting of arrays and objects in @buf (strings skipped), so that the
 * tokenizer's stack fits a profile of a deep recursion and no more. */
static int nesting(const char *buf, size_t len)
{
	int depth = 0, max = 0;
	bool in_str = false;

	for (size_t i = 0; i < len; i++) {
		char ch = buf[i];

		if (in_str) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in_str = false;
		} else if (ch == '"') {
			in_str = true;
		} else if (ch == '[' || ch == '{') {
			if (++depth > max)
				max = depth;
		} else if (ch == ']' || ch == '}') {
			depth--;
		}
	}
	return max;
}

/* Parse @buf (@len bytes) as exactly one JSON value. NULL with the message set. */
static json_object *parse(struct loader *l, const char *buf, size_t len)
{
	int need = nesting(buf, len) + 8;
	json_tokener *tok = json_tokener_new_ex(need > LOAD_MAX_DEPTH ? need : LOAD_MAX_DEPTH);
	json_object *root = NULL;
	enum json_tokener_error jerr = json_tokener_continue;
	size_t done = 0, end = 0;

	if (!tok)
		die(EXIT_TRACER, "out of memory");
	/* json-c takes an int length: feed large files in pieces */
	while (done < len && jerr == json_tokener_continue) {
		size_t piece = len - done > (1u << 30) ? (1u << 30) : len - done;

		root = json_tokener_parse_ex(tok, buf + done, (int)piece);
		jerr = json_tokener_get_error(tok);
		end = done + json_tokener_get_parse_end(tok);
		done += piece;
	}
	if (jerr == json_tokener_continue) {
		/* a top-level number is only complete once json-c sees its end */
		root = json_tokener_parse_ex(tok, "", 1);
		jerr = json_tokener_get_error(tok);
		if (jerr != json_tokener_success) {
			fail(l, "truncated JSON: the file ends inside a value (after %zu bytes)",
			     len);
			root = NULL;
			goto out;
		}
		end = len;
	}
	if (jerr != json_tokener_success) {
		fail(l, "not JSON: %s at byte %zu", json_tokener_error_desc(jerr), end);
		root = NULL;
		goto out;
	}
	if (end < len && !all_space(buf + end, len - end)) {
		fail(l, "not JSON: unexpected data after the top-level value at byte %zu", end);
		json_object_put(root);
		root = NULL;
		goto out;
	}
out:
	json_tokener_free(tok);
	return root;
}

int report_load_json(const char *path, struct profile **out, char *err, size_t errlen)
{
	struct loader l = { .path = path, .err = err, .errlen = errlen };
	json_object *root;
	size_t len = 0;
	char *buf;
	int rc;

	*out = NULL;
	if (errlen)
		err[0] = '\0';
	buf = read_all(&l, &len);
	if (!buf)
		return -1;
	if (all_space(buf, len)) {
		free(buf);
		return fail(&l, "empty file, not a saved profile (write one with --format json)");
	}
	root = parse(&l, buf, len);
	free(buf);
	if (!root)
		return -1;
	l.p = profile_new();
	rc = load_profile(&l, root);
	json_object_put(root);
	free(l.fidx);
	pmap_fini(&l.nodes);
	if (rc < 0) {
		profile_free(l.p);
		return -1;
	}
	*out = l.p;
	return 0;
}
