/* SPDX-License-Identifier: MIT */
/* fprof.c - the fprof-style call-graph report (formats.md section 1), byte for byte:
 * options block, totals section, one section per thread, paragraphs or flat lines.
 *
 * Numbers: every tree node N below parent P adds its calls, own time and (unless N is
 * a recursive activation) accumulated time to the (thread, P's function, N's function)
 * triple. Each triple is rounded once to integer microseconds (half up) and every
 * printed sum (marked rows, thread headers, totals, the merged totals paragraphs) is
 * computed from those integers, so the rows add up exactly, as in fprof.
 *
 * Count mode: the triples come from the threads' edge tables (profile_thread_arcs()
 * gives both modes alike), so CNT is exact and every ACC and OWN is 0.000, except the
 * totals line's ACC, which stays the traced span (first to last event). With no tree,
 * initial_calls is left out of the thread headers. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "calltrace/erl.h"
#include "calltrace/profile.h"
#include "calltrace/report.h"
#include "calltrace/util.h"

/* One (caller, callee) triple of a section: ns while collecting, then integer µs. */
struct edge {
	ct_func_id caller, callee;
	uint64_t cnt, acc, own;
};

struct edges {
	struct edge *v;
	size_t nr, cap;
};

/* One printed row: the id it names and its numbers (µs). */
struct row {
	ct_func_id id;
	uint64_t cnt, acc, own;
};

/* A function's paragraph: its marked row, and where its caller rows (in the section's
 * edges sorted by callee) and its callee rows (sorted by caller) are. */
struct para {
	struct row marked;
	size_t callers_lo, callers_hi;
	size_t callees_lo, callees_hi;
};

/* Term text and term-order facts of one function, computed on first use. */
struct fn_info {
	char *term;          /* "{demo,fib,1}", "suspend", "undefined" */
	bool is_pseudo;      /* written as a bare atom, sorts before every tuple */
	bool module_is_str;  /* module written as a string (too long for an atom) */
	bool name_is_str;
};

struct fprof {
	const struct profile *p;
	const struct report_opts *ro;
	FILE *out;
	bool by_own;         /* sort key: OWN (sort=own) or ACC */
	size_t name_w, w;    /* N and W of formats.md 1.3 */
	struct fn_info *info;   /* nr_funcs + 1 entries, the last one for 'undefined' */
	struct erl_buf line;
};

static uint64_t ns_to_us(uint64_t ns)
{
	return (ns + 500) / 1000;
}

static size_t info_index(const struct fprof *c, ct_func_id f)
{
	return f == CT_FUNC_UNDEFINED || f >= c->p->nr_funcs ? c->p->nr_funcs : f;
}

static const struct fn_info *fn_info(struct fprof *c, ct_func_id f)
{
	struct fn_info *fi = &c->info[info_index(c, f)];
	struct erl_buf b;

	if (fi->term)
		return fi;
	erl_buf_init(&b);
	if (info_index(c, f) == c->p->nr_funcs) {
		fi->is_pseudo = true;
		erl_buf_puts(&b, "undefined");
	} else {
		const struct ct_func *fn = &c->p->funcs[f];

		fi->is_pseudo = fn->module[0] == '\0';
		fi->name_is_str = erl_name_is_string(fn->name);
		if (fi->is_pseudo) {
			erl_append_name(&b, fn->name);
		} else {
			fi->module_is_str = erl_name_is_string(fn->module);
			erl_buf_puts(&b, "{");
			erl_append_name(&b, fn->module);
			erl_buf_puts(&b, ",");
			erl_append_name(&b, fn->name);
			erl_buf_printf(&b, ",%d}", fn->arity);
		}
	}
	fi->term = xstrdup(erl_buf_str(&b));
	erl_buf_fini(&b);
	return fi;
}

/* Erlang term order of one tuple element: atoms sort before strings (lists). */
static int elem_cmp(const char *a, bool a_str, const char *b, bool b_str)
{
	if (a_str != b_str)
		return a_str ? 1 : -1;
	return erl_text_cmp(a, b);
}

/* Erlang term order of two ids: pseudo-function atoms before {M,F,A} tuples, atoms by
 * name, tuples element by element. The id decides between equal terms, so the order
 * is total and the output deterministic. */
static int term_cmp(struct fprof *c, ct_func_id a, ct_func_id b)
{
	const struct fn_info *ia = fn_info(c, a), *ib = fn_info(c, b);
	const char *na = profile_func_name(c->p, a), *nb = profile_func_name(c->p, b);
	int r;

	if (a == b)
		return 0;
	if (ia->is_pseudo != ib->is_pseudo)
		return ia->is_pseudo ? -1 : 1;
	if (!ia->is_pseudo) {
		const struct ct_func *fa = &c->p->funcs[a], *fb = &c->p->funcs[b];

		r = elem_cmp(fa->module, ia->module_is_str, fb->module, ib->module_is_str);
		if (r)
			return r;
		r = elem_cmp(na, ia->name_is_str, nb, ib->name_is_str);
		if (r)
			return r;
		if (fa->arity != fb->arity)
			return fa->arity < fb->arity ? -1 : 1;
	} else {
		r = elem_cmp(na, ia->name_is_str, nb, ib->name_is_str);
		if (r)
			return r;
	}
	return a < b ? -1 : 1;
}

/* Descending sort key (ACC or OWN in µs), ties by descending term order. */
static int row_cmp_desc(const void *va, const void *vb, void *arg)
{
	const struct row *a = va, *b = vb;
	struct fprof *c = arg;
	uint64_t ka = c->by_own ? a->own : a->acc, kb = c->by_own ? b->own : b->acc;

	if (ka != kb)
		return ka > kb ? -1 : 1;
	return term_cmp(c, b->id, a->id);
}

static int para_cmp_desc(const void *va, const void *vb, void *arg)
{
	const struct para *a = va, *b = vb;

	return row_cmp_desc(&a->marked, &b->marked, arg);
}

static int edge_cmp_caller(const void *va, const void *vb)
{
	const struct edge *a = va, *b = vb;

	if (a->caller != b->caller)
		return a->caller < b->caller ? -1 : 1;
	if (a->callee != b->callee)
		return a->callee < b->callee ? -1 : 1;
	return 0;
}

static int edge_cmp_callee(const void *va, const void *vb)
{
	const struct edge *a = va, *b = vb;

	if (a->callee != b->callee)
		return a->callee < b->callee ? -1 : 1;
	if (a->caller != b->caller)
		return a->caller < b->caller ? -1 : 1;
	return 0;
}

static void edges_push(struct edges *es, const struct edge *e)
{
	xgrow(&es->v, &es->cap, es->nr + 1, sizeof(*es->v));
	es->v[es->nr++] = *e;
}

/* Sort by (caller, callee) and add up duplicates. */
static void edges_merge(struct edges *es)
{
	size_t out = 0;

	if (!es->nr)
		return;
	qsort(es->v, es->nr, sizeof(*es->v), edge_cmp_caller);
	for (size_t i = 1; i < es->nr; i++) {
		struct edge *d = &es->v[out];

		if (!edge_cmp_caller(d, &es->v[i])) {
			d->cnt += es->v[i].cnt;
			d->acc += es->v[i].acc;
			d->own += es->v[i].own;
		} else {
			es->v[++out] = es->v[i];
		}
	}
	es->nr = out + 1;
}

/* One arc: a tree node (its ACC 0 if it is a recursive activation), or in count mode
 * an edge-table entry (no times: ACC and OWN 0). */
static void collect_arc(const struct ct_arc *a, void *arg)
{
	struct edge e = {
		.caller = a->caller,
		.callee = a->callee,
		.cnt = a->calls,
		.acc = a->acc_ns,
		.own = a->own_ns,
	};

	edges_push(arg, &e);
}

/* The thread's triples, merged and rounded to µs, sorted by (caller, callee). */
static void thread_edges(const struct profile *p, const struct ct_thread *t, struct edges *es)
{
	es->v = NULL;
	es->nr = es->cap = 0;
	profile_thread_arcs(p, t, collect_arc, es);
	edges_merge(es);
	for (size_t i = 0; i < es->nr; i++) {
		es->v[i].acc = ns_to_us(es->v[i].acc);
		es->v[i].own = ns_to_us(es->v[i].own);
	}
}

static void put_line(struct fprof *c, const char *s)
{
	fputs(s, c->out);
	fputc('\n', c->out);
}

/* Pad the text added to the line since @start to @width characters: on the right
 * (left-justified) or on the left (right-justified). Never truncates. */
static void pad_from(struct erl_buf *b, size_t start, size_t width, bool right_justify)
{
	size_t w = erl_text_width(b->data + start), n, len = b->len - start;

	if (w >= width)
		return;
	n = width - w;
	erl_buf_spaces(b, n);
	if (right_justify) {
		memmove(b->data + start + n, b->data + start, len);
		memset(b->data + start, ' ', n);
	}
}

static void put_ms(struct erl_buf *b, uint64_t us)
{
	erl_buf_printf(b, "%" PRIu64 ".%03" PRIu64, us / 1000, us % 1000);
}

/* One table line (formats.md 1.3): head, name, CNT, ACC (or 'undefined' when
 * @acc_undef), OWN, tail, comment. */
static void put_row(struct fprof *c, const char *head, const char *name, const struct row *r,
		    bool acc_undef, const char *tail, const char *comment)
{
	struct erl_buf *b = &c->line;
	size_t start;

	erl_buf_reset(b);
	erl_buf_puts(b, head);
	pad_from(b, 0, 3, false);
	start = b->len;
	erl_buf_puts(b, name);
	erl_buf_puts(b, ",");
	pad_from(b, start, c->name_w, false);
	start = b->len;
	erl_buf_printf(b, "%" PRIu64 ",", r->cnt);
	pad_from(b, start, c->w, true);
	start = b->len;
	if (acc_undef)
		erl_buf_puts(b, "undefined");
	else
		put_ms(b, r->acc);
	erl_buf_puts(b, ",");
	pad_from(b, start, 2 * c->w, true);
	start = b->len;
	put_ms(b, r->own);
	pad_from(b, start, 2 * c->w - 1, true);
	start = b->len;
	erl_buf_puts(b, tail);
	pad_from(b, start, 4, false);
	start = b->len;
	erl_buf_puts(b, comment);
	pad_from(b, start, 4, true);
	put_line(c, erl_buf_str(b));
}

static void put_id_row(struct fprof *c, const char *head, const struct row *r,
		       const char *tail, const char *comment)
{
	put_row(c, head, fn_info(c, r->id)->term, r, false, tail, comment);
}

static void put_header(struct fprof *c)
{
	struct erl_buf *b = &c->line;
	size_t start;

	erl_buf_reset(b);
	erl_buf_puts(b, "%  ");
	erl_buf_spaces(b, c->name_w);
	start = b->len;
	erl_buf_puts(b, " CNT ");
	pad_from(b, start, c->w, true);
	start = b->len;
	erl_buf_puts(b, " ACC ");
	pad_from(b, start, 2 * c->w, true);
	start = b->len;
	erl_buf_puts(b, " OWN");
	pad_from(b, start, 2 * c->w - 1, true);
	erl_buf_spaces(b, 8);
	put_line(c, erl_buf_str(b));
}

/* Rows for edges [lo, hi) of @es, naming the caller (@want_caller) or the callee,
 * sorted like the paragraphs. Caller owns the array (free). */
static struct row *make_rows(struct fprof *c, const struct edge *es, size_t lo, size_t hi,
			     bool want_caller)
{
	struct row *rows = xcalloc(hi - lo + 1, sizeof(*rows));

	for (size_t i = lo; i < hi; i++) {
		rows[i - lo] = (struct row){
			.id = want_caller ? es[i].caller : es[i].callee,
			.cnt = es[i].cnt, .acc = es[i].acc, .own = es[i].own,
		};
	}
	qsort_r(rows, hi - lo, sizeof(*rows), row_cmp_desc, c);
	return rows;
}

static void put_paragraph(struct fprof *c, const struct para *pa, const struct edge *by_callee,
			  const struct edge *by_caller)
{
	size_t nr = pa->callers_hi - pa->callers_lo;
	struct row *rows = make_rows(c, by_callee, pa->callers_lo, pa->callers_hi, true);

	if (!nr)
		put_line(c, "{[ ],");
	for (size_t i = 0; i < nr; i++)
		put_id_row(c, i ? "  {" : "{[{", &rows[i], i + 1 == nr ? "}]," : "},", "");
	free(rows);

	put_id_row(c, " { ", &pa->marked, "},", "%");

	nr = pa->callees_hi - pa->callees_lo;
	rows = make_rows(c, by_caller, pa->callees_lo, pa->callees_hi, false);
	if (!nr)
		put_line(c, " [ ]}.");
	for (size_t i = 0; i < nr; i++)
		put_id_row(c, i ? "  {" : " [{", &rows[i], i + 1 == nr ? "}]}." : "},", "");
	free(rows);
	put_line(c, "");
}

/* The entries of one section (paragraphs or flat lines) from its triples @es (µs,
 * merged, sorted by caller). Every function seen as a caller or a callee gets one. */
static void put_entries(struct fprof *c, const struct edges *es)
{
	struct edge *by_caller = es->v, *by_callee;
	struct para *paras;
	size_t nr = 0, i = 0, j = 0;

	if (!es->nr)
		return;
	by_callee = xcalloc(es->nr, sizeof(*by_callee));
	memcpy(by_callee, by_caller, es->nr * sizeof(*by_callee));
	qsort(by_callee, es->nr, sizeof(*by_callee), edge_cmp_callee);
	paras = xcalloc(2 * es->nr, sizeof(*paras));

	/* Both arrays are grouped by ascending id: walk them together, one function at
	 * a time. */
	while (i < es->nr || j < es->nr) {
		ct_func_id f;
		struct para *pa = &paras[nr++];

		if (i < es->nr && j < es->nr)
			f = by_caller[i].caller < by_callee[j].callee ? by_caller[i].caller
								      : by_callee[j].callee;
		else
			f = i < es->nr ? by_caller[i].caller : by_callee[j].callee;
		pa->marked = (struct row){ .id = f };
		pa->callees_lo = i;
		while (i < es->nr && by_caller[i].caller == f)
			i++;
		pa->callees_hi = i;
		pa->callers_lo = j;
		while (j < es->nr && by_callee[j].callee == f) {
			pa->marked.cnt += by_callee[j].cnt;
			pa->marked.acc += by_callee[j].acc;
			pa->marked.own += by_callee[j].own;
			j++;
		}
		pa->callers_hi = j;
	}
	qsort_r(paras, nr, sizeof(*paras), para_cmp_desc, c);

	for (size_t k = 0; k < nr; k++) {
		if (c->ro->callers)
			put_paragraph(c, &paras[k], by_callee, by_caller);
		else
			put_id_row(c, "{  ", &paras[k].marked, "}.", "");
	}
	free(paras);
	free(by_callee);
}

static void sum_edges(const struct edges *es, struct row *r)
{
	for (size_t i = 0; i < es->nr; i++) {
		r->cnt += es->v[i].cnt;
		r->own += es->v[i].own;
	}
}

struct thread_sec {
	const struct ct_thread *t;
	struct edges es;
	struct row sum;      /* CNT and OWN of the thread header */
	char *id;            /* "<PID.TID>", unquoted */
};

static int thread_cmp_desc(const void *va, const void *vb)
{
	const struct thread_sec *a = va, *b = vb;

	if (a->sum.own != b->sum.own)
		return a->sum.own > b->sum.own ? -1 : 1;
	return -erl_text_cmp(a->id, b->id);
}

static bool is_pseudo_func(const struct profile *p, ct_func_id f)
{
	return f == CT_FUNC_UNDEFINED || f >= p->nr_funcs || p->funcs[f].module[0] == '\0';
}

/* Order of candidate initial calls: larger ACC first, then descending term order. */
static int node_cmp_desc(const void *va, const void *vb, void *arg)
{
	const struct ct_node *a = *(const struct ct_node *const *)va;
	const struct ct_node *b = *(const struct ct_node *const *)vb;

	if (a->acc_ns != b->acc_ns)
		return a->acc_ns > b->acc_ns ? -1 : 1;
	return term_cmp(arg, b->func, a->func);
}

/* The real (non-pseudo) children of @n, best first. Caller frees the array. */
static const struct ct_node **real_children(struct fprof *c, const struct ct_node *n,
					    size_t *nr)
{
	const struct ct_node **v = NULL;
	size_t cap = 0;

	*nr = 0;
	for (const struct ct_node *k = n->first_child; k; k = k->next_sibling) {
		if (is_pseudo_func(c->p, k->func))
			continue;
		xgrow(&v, &cap, *nr + 1, sizeof(*v));
		v[(*nr)++] = k;
	}
	if (*nr)
		qsort_r(v, *nr, sizeof(*v), node_cmp_desc, c);
	return v;
}

/* initial_calls: the first two functions entered in the thread. The tree keeps no
 * order of first entry, so they are derived: with one root function R, R and then
 * the start routine if R called it (start_thread -> worker), else R's only callee if
 * it has exactly one; with several root functions, the two with the largest ACC.
 * Returns the number of ids written to @ids (0..2). */
static size_t initial_calls(struct fprof *c, const struct ct_thread *t, ct_func_id ids[2])
{
	size_t nr_roots, nr_kids, n = 0;
	const struct ct_node **roots = real_children(c, &t->root, &nr_roots), **kids;

	if (nr_roots == 1) {
		ids[n++] = roots[0]->func;
		kids = real_children(c, roots[0], &nr_kids);
		for (size_t i = 0; i < nr_kids; i++) {
			if (t->spawned_as != CT_FUNC_UNDEFINED && kids[i]->func == t->spawned_as &&
			    roots[0]->func != t->spawned_as)
				ids[n++] = t->spawned_as;
		}
		if (n == 1 && nr_kids == 1)
			ids[n++] = kids[0]->func;
		free(kids);
	} else {
		for (size_t i = 0; i < nr_roots && n < 2; i++)
			ids[n++] = roots[i]->func;
	}
	free(roots);
	return n;
}

/* Thread header and its info lines. spawned_by, spawned_as and initial_calls are
 * written for threads created while tracing (parent or start routine known), as in
 * formats.md's sample: the first thread's root calls are its 'undefined' paragraph. */
static void put_thread_header(struct fprof *c, const struct thread_sec *ts)
{
	const struct ct_thread *t = ts->t;
	bool has_by = t->parent_pid || t->parent_tid;
	bool has_as = t->spawned_as != CT_FUNC_UNDEFINED && t->spawned_as < c->p->nr_funcs;
	ct_func_id ids[2];
	size_t nr_ids = has_by || has_as ? initial_calls(c, t, ids) : 0;
	size_t nr_info = (has_by ? 1 : 0) + (has_as ? 1 : 0) + (nr_ids ? 1 : 0);
	struct erl_buf idb;
	struct erl_buf *b = &c->line;

	erl_buf_init(&idb);
	erl_append_string(&idb, ts->id);
	put_row(c, "[{ ", erl_buf_str(&idb), &ts->sum, true, nr_info ? "}," : "}].", "%%");
	erl_buf_fini(&idb);

	if (has_by) {
		erl_buf_reset(b);
		erl_buf_puts(b, " { spawned_by, ");
		erl_buf_printf(b, "\"<%d.%d>\"", (int)t->parent_pid, (int)t->parent_tid);
		erl_buf_puts(b, --nr_info ? "}," : "}].");
		put_line(c, erl_buf_str(b));
	}
	if (has_as) {
		const struct ct_func *fn = &c->p->funcs[t->spawned_as];
		char arg[32];

		erl_buf_reset(b);
		erl_buf_puts(b, " { spawned_as, {");
		erl_append_name(b, fn->module);
		erl_buf_puts(b, ",");
		erl_append_name(b, fn->name);
		snprintf(arg, sizeof(arg), "0x%" PRIx64, t->spawned_arg);
		erl_buf_puts(b, ",[");
		erl_append_string(b, arg);
		erl_buf_puts(b, --nr_info ? "]}}," : "]}}].");
		put_line(c, erl_buf_str(b));
	}
	if (nr_ids) {
		erl_buf_reset(b);
		erl_buf_puts(b, " { initial_calls, [");
		for (size_t i = 0; i < nr_ids; i++) {
			if (i)
				erl_buf_puts(b, ",");
			erl_buf_puts(b, fn_info(c, ids[i])->term);
		}
		erl_buf_puts(b, "]}].");
		put_line(c, erl_buf_str(b));
	}
}

static void put_options(struct fprof *c)
{
	fprintf(c->out,
		"%%%% Analysis results:\n"
		"{  analysis_options,\n"
		" [{callers, %s},\n"
		"  {sort, %s},\n"
		"  {totals, %s},\n"
		"  {details, %s}]}.\n"
		"\n",
		c->ro->callers ? "true" : "false", c->by_own ? "own" : "acc",
		c->ro->totals ? "true" : "false", c->ro->details ? "true" : "false");
}

static int emit_fprof(const struct profile *p, const struct report_opts *ro, FILE *out)
{
	struct fprof c = { .p = p, .ro = ro, .out = out };
	struct thread_sec *secs = xcalloc(p->nr_threads + 1, sizeof(*secs));
	struct edges all = { 0 };
	struct row tot = { 0 };
	uint64_t first, last;
	int cols = ro->cols > 0 ? ro->cols : 80;

	errno = 0;
	if (cols < 23)
		cols = 23;
	c.w = (size_t)(cols - 11) / 12;
	c.name_w = (size_t)cols - 11 - 5 * c.w;
	c.by_own = ro->sort == REPORT_SORT_OWN;
	c.info = xcalloc(p->nr_funcs + 1, sizeof(*c.info));
	erl_buf_init(&c.line);

	for (size_t i = 0; i < p->nr_threads; i++) {
		struct thread_sec *ts = &secs[i];

		ts->t = p->threads[i];
		ts->id = xasprintf("<%d.%d>", (int)ts->t->pid, (int)ts->t->tid);
		thread_edges(p, ts->t, &ts->es);
		sum_edges(&ts->es, &ts->sum);
		for (size_t k = 0; k < ts->es.nr; k++)
			edges_push(&all, &ts->es.v[k]);
	}
	edges_merge(&all);
	sum_edges(&all, &tot);
	profile_span(p, &first, &last);
	tot.acc = ns_to_us(last - first);

	put_options(&c);
	put_header(&c);
	put_row(&c, "[{ ", "totals", &tot, false, "}].", "%%%");
	put_line(&c, "");
	if (ro->totals)
		put_entries(&c, &all);
	put_line(&c, "");

	if (ro->details) {
		qsort(secs, p->nr_threads, sizeof(*secs), thread_cmp_desc);
		for (size_t i = 0; i < p->nr_threads; i++) {
			put_header(&c);
			put_thread_header(&c, &secs[i]);
			put_line(&c, "");
			put_entries(&c, &secs[i].es);
			put_line(&c, "");
		}
	}

	for (size_t i = 0; i < p->nr_threads; i++) {
		free(secs[i].es.v);
		free(secs[i].id);
	}
	free(secs);
	free(all.v);
	for (size_t i = 0; i <= p->nr_funcs; i++)
		free(c.info[i].term);
	free(c.info);
	erl_buf_fini(&c.line);

	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

const struct report_ops report_fprof = {
	.name = "fprof",
	.default_sort = REPORT_SORT_ACC,
	.shows_callers = true,
	.emit = emit_fprof,
};
