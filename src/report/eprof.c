/* SPDX-License-Identifier: MIT */
/* eprof.c - eprof-style flat time tables (formats.md section 3), byte for byte:
 * one block per thread in ascending TID order (eprof's 'procs'), or, with ro->totals,
 * one table for all threads (eprof's 'total').
 *
 * A row is one function of the block (pseudo functions are left out): CALLS is its
 * calls from every caller, TIME its own time summed over its callers and rounded once
 * to integer microseconds (half up), "%" its share of the block's TIME total, and
 * "uS / CALLS" TIME divided by CALLS. A thread's header gives its TIME total as a
 * share of the total table's (so the shares of all blocks add up to 100). Every
 * division by zero gives 0.00. Count mode has no times: TIME is 0 everywhere.
 *
 * Rows are sorted ascending (the costliest last) by TIME (ro->sort own or acc) or by
 * CALLS (ro->sort calls; always in count mode, where TIME is 0). eprof leaves ties
 * in no particular order; calltrace breaks them by ascending {M,F,A} term order,
 * then function id. C1 is Mod:Fun/Arity with
 * the atom rules of erl.h, so a name never breaks a line. Column widths count
 * characters (code points), as eprof's io:format does. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "calltrace/erl.h"
#include "calltrace/profile.h"
#include "calltrace/report.h"
#include "calltrace/util.h"

struct erow {
	ct_func_id id;
	uint64_t calls, own_ns, us;
	char *text[5];       /* the five columns, formatted */
};

struct etable {
	struct erow *rows;   /* indexed by function id while collecting */
	size_t nr;
};

struct eprof {
	const struct profile *p;
	bool by_calls;
	struct etable *tab;  /* the table being collected */
};

static bool is_pseudo(const struct profile *p, ct_func_id f)
{
	return f == CT_FUNC_UNDEFINED || f >= p->nr_funcs || p->funcs[f].module[0] == '\0';
}

static void add_arc(const struct ct_arc *a, void *arg)
{
	struct eprof *c = arg;
	struct erow *r;

	if (is_pseudo(c->p, a->callee))
		return;
	r = &c->tab->rows[a->callee];
	r->calls += a->calls;
	r->own_ns += a->own_ns;
}

static int name_cmp(const char *a, const char *b)
{
	bool sa = erl_name_is_string(a), sb = erl_name_is_string(b);

	if (sa != sb)
		return sa ? 1 : -1;
	return erl_text_cmp(a, b);
}

static int row_cmp_asc(const void *va, const void *vb, void *arg)
{
	const struct erow *a = va, *b = vb;
	const struct eprof *c = arg;
	const struct ct_func *fa = &c->p->funcs[a->id], *fb = &c->p->funcs[b->id];
	uint64_t ka = c->by_calls ? a->calls : a->us, kb = c->by_calls ? b->calls : b->us;
	int r;

	if (ka != kb)
		return ka < kb ? -1 : 1;
	r = name_cmp(fa->module, fb->module);
	if (!r)
		r = name_cmp(fa->name, fb->name);
	if (r)
		return r;
	if (fa->arity != fb->arity)
		return fa->arity < fb->arity ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* The table of @threads (@nr of them): rows of the functions called there, TIME
 * rounded per function, unsorted. */
static void collect(struct eprof *c, struct etable *tab, struct ct_thread *const *threads,
		    size_t nr)
{
	const struct profile *p = c->p;
	size_t out = 0;

	tab->rows = xcalloc(p->nr_funcs + 1, sizeof(*tab->rows));
	c->tab = tab;
	for (size_t i = 0; i < nr; i++)
		profile_thread_arcs(p, threads[i], add_arc, c);
	for (ct_func_id f = 0; f < p->nr_funcs; f++) {
		struct erow r = tab->rows[f];

		if (!r.calls)
			continue;
		r.id = f;
		r.us = (r.own_ns + 500) / 1000;
		tab->rows[out++] = r;
	}
	tab->nr = out;
}

static uint64_t table_us(const struct etable *tab)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < tab->nr; i++)
		sum += tab->rows[i].us;
	return sum;
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

static void put_cell(struct erl_buf *b, const char *s, size_t width, bool right)
{
	size_t w = erl_text_width(s);

	if (right && w < width)
		erl_buf_spaces(b, width - w);
	erl_buf_puts(b, s);
	if (!right && w < width)
		erl_buf_spaces(b, width - w);
}

static void put_line(struct erl_buf *b, const char *const cols[5], const size_t w[5])
{
	put_cell(b, cols[0], w[0], false);
	for (int i = 1; i < 4; i++) {
		erl_buf_puts(b, "  ");
		put_cell(b, cols[i], w[i], true);
	}
	erl_buf_puts(b, "  [");
	put_cell(b, cols[4], w[4], true);
	erl_buf_puts(b, "]\n");
}

/* put_line() for an array of allocated strings. */
static void put_owned(struct erl_buf *b, char *cols[5], const size_t w[5])
{
	const char *v[5] = { cols[0], cols[1], cols[2], cols[3], cols[4] };

	put_line(b, v, w);
}

static size_t max_sz(size_t a, size_t b)
{
	return a > b ? a : b;
}

/* Append the table (header, underline, rows, rule, Total line) to @b. */
static void put_table(struct eprof *c, struct erl_buf *b, struct etable *tab)
{
	static const char *const heads[5] = {
		"FUNCTION", "CALLS", "      %", "TIME", "uS / CALLS",
	};
	static const char *const under[5] = {
		"--------", "-----", "-------", "----", "----------",
	};
	uint64_t calls = 0, us = table_us(tab);
	char *tot[5], *rule[5];
	size_t w[5];
	struct erl_buf t;

	erl_buf_init(&t);
	for (size_t i = 0; i < tab->nr; i++)
		calls += tab->rows[i].calls;
	if (tab->nr)
		qsort_r(tab->rows, tab->nr, sizeof(*tab->rows), row_cmp_asc, c);

	for (int k = 0; k < 5; k++)
		w[k] = strlen(heads[k]);
	for (size_t i = 0; i < tab->nr; i++) {
		struct erow *r = &tab->rows[i];
		const struct ct_func *fn = &c->p->funcs[r->id];

		erl_buf_reset(&t);
		erl_append_name(&t, fn->module);
		erl_buf_puts(&t, ":");
		erl_append_name(&t, fn->name);
		erl_buf_printf(&t, "/%d", fn->arity);
		r->text[0] = xstrdup(erl_buf_str(&t));
		r->text[1] = xasprintf("%" PRIu64, r->calls);
		r->text[2] = xasprintf("%.2f", 100.0 * ratio(r->us, us));
		r->text[3] = xasprintf("%" PRIu64, r->us);
		r->text[4] = xasprintf("%.2f", ratio(r->us, r->calls));
		for (int k = 0; k < 5; k++)
			w[k] = max_sz(w[k], erl_text_width(r->text[k]));
	}
	tot[0] = xstrdup("Total:");
	tot[1] = xasprintf("%" PRIu64, calls);
	tot[2] = xstrdup("100.00%");
	tot[3] = xasprintf("%" PRIu64, us);
	tot[4] = xasprintf("%.2f", ratio(us, calls));
	w[1] = max_sz(w[1], strlen(tot[1]));
	w[3] = max_sz(w[3], strlen(tot[3]));
	w[4] = max_sz(w[4], strlen(tot[4]));

	put_line(b, heads, w);
	put_line(b, under, w);
	for (size_t i = 0; i < tab->nr; i++)
		put_owned(b, tab->rows[i].text, w);
	for (int k = 0; k < 5; k++) {
		rule[k] = xcalloc(w[k] + 1, 1);
		memset(rule[k], '-', w[k]);
	}
	put_owned(b, rule, w);
	put_owned(b, tot, w);

	for (int k = 0; k < 5; k++) {
		free(rule[k]);
		free(tot[k]);
		for (size_t i = 0; i < tab->nr; i++)
			free(tab->rows[i].text[k]);
	}
	erl_buf_fini(&t);
}

static int thread_cmp(const void *va, const void *vb)
{
	const struct ct_thread *a = *(const struct ct_thread *const *)va;
	const struct ct_thread *b = *(const struct ct_thread *const *)vb;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return 0;
}

static int emit_eprof(const struct profile *p, const struct report_opts *ro, FILE *out)
{
	struct eprof c = {
		.p = p,
		.by_calls = ro->sort == REPORT_SORT_CALLS || p->mode == CT_MODE_COUNT,
	};
	struct ct_thread **ths = xcalloc(p->nr_threads + 1, sizeof(*ths));
	struct etable all = { 0 };
	struct erl_buf b;
	uint64_t grand;

	errno = 0;
	erl_buf_init(&b);
	erl_buf_add(&b, "", 0);
	if (p->nr_threads)
		memcpy(ths, p->threads, p->nr_threads * sizeof(*ths));
	qsort(ths, p->nr_threads, sizeof(*ths), thread_cmp);
	collect(&c, &all, ths, p->nr_threads);
	grand = table_us(&all);

	if (ro->totals) {
		put_table(&c, &b, &all);
	} else {
		for (size_t i = 0; i < p->nr_threads; i++) {
			struct etable tab = { 0 };

			collect(&c, &tab, &ths[i], 1);
			erl_buf_printf(&b, "\n****** Process <%d.%d>    -- %.2f %% of profiled "
				       "time *** \n", (int)ths[i]->pid, (int)ths[i]->tid,
				       100.0 * ratio(table_us(&tab), grand));
			put_table(&c, &b, &tab);
			free(tab.rows);
		}
	}
	fputs(erl_buf_str(&b), out);
	erl_buf_fini(&b);
	free(all.rows);
	free(ths);
	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

const struct report_ops report_eprof = {
	.name = "eprof",
	.default_sort = REPORT_SORT_ACC,
	.shows_callers = false,
	.emit = emit_eprof,
};
