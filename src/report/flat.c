/* SPDX-License-Identifier: MIT */
/* flat.c - the flat profile: one line per function, costliest first, like gprof's
 * flat profile or perf report. Plain text for people, not for parsers.
 *
 * Layout: a header line naming the clock, the total own time, the number of
 * functions and of calls (count mode: "count mode, no times"), an empty line, the
 * column heads, then one row per function called at least once:
 *
 *   own ms     own time of the function, milliseconds with 3 decimals (integer
 *              microseconds, rounded half up, from the summed nanoseconds)
 *   own%       own time as a share of the total own time of all functions
 *   cum%       running sum of own% down the rows, in the printed order
 *   calls      calls of the function from every caller (untraced callers included)
 *   own/call   own time per call, microseconds with 2 decimals
 *   acc/call   ACC per call, microseconds: ACC counts calls made while the function
 *              was not already active on the stack (fprof's rule), so recursion does
 *              not count twice
 *   min, p50, p95, p99, max
 *              per-call latency (entry to return of each call, recursive calls
 *              included) from the function's histogram, microseconds with 2
 *              decimals: min and max are exact, the quantiles within 1/8; "-" when
 *              the function has no histogram
 *   function   "name [module] file:line" (file:line left out when unknown, line
 *              left out when 0; pseudo functions such as suspend have no [module];
 *              an empty name is written "???")
 *
 * Every number is a sum over all threads. Percentages of a zero total are 0.00.
 * Count mode has call counts only: every time column is "-".
 *
 * Sort: descending by ro->sort taken literally: own (own time), acc (ACC) or calls;
 * ties by calls, then name, then function id. Note that ro->sort defaults to acc (the
 * fprof default): the command line should pass own for flat unless --sort was given.
 *
 * Names: control characters and bytes that are not valid UTF-8 are printed as '?',
 * so every row is one line. Numeric columns are right-aligned, two spaces apart, at
 * least as wide as their heads and as wide as their longest value, so they stay
 * aligned; the function column comes last and is not padded. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "calltrace/erl.h"
#include "calltrace/profile.h"
#include "calltrace/report.h"
#include "calltrace/util.h"

enum {
	COL_OWN, COL_PCT, COL_CUM, COL_CALLS, COL_OWN_CALL, COL_ACC_CALL,
	COL_MIN, COL_P50, COL_P95, COL_P99, COL_MAX, NR_NUM_COLS
};

static const char *const heads[NR_NUM_COLS] = {
	"own ms", "own%", "cum%", "calls", "own/call", "acc/call",
	"min", "p50", "p95", "p99", "max",
};

struct frow {
	ct_func_id id;
	uint64_t calls, own, acc;
	char *cell[NR_NUM_COLS];
	char *name;
};

struct flat {
	const struct profile *p;
	enum report_sort sort;
	struct frow *rows;       /* by function id while collecting */
};

static bool is_pseudo(const struct profile *p, ct_func_id f)
{
	return f >= p->nr_funcs || p->funcs[f].module[0] == '\0';
}

static void add_arc(const struct ct_arc *a, void *arg)
{
	struct flat *c = arg;
	struct frow *r;

	if (a->callee >= c->p->nr_funcs)
		return;
	r = &c->rows[a->callee];
	r->calls += a->calls;
	r->own += a->own_ns;
	r->acc += a->acc_ns;
}

static uint64_t key(const struct flat *c, const struct frow *r)
{
	switch (c->sort) {
	case REPORT_SORT_OWN:
		return r->own;
	case REPORT_SORT_CALLS:
		return r->calls;
	default:
		return r->acc;
	}
}

static int row_cmp_desc(const void *va, const void *vb, void *arg)
{
	const struct frow *a = va, *b = vb;
	const struct flat *c = arg;
	uint64_t ka = key(c, a), kb = key(c, b);
	int r;

	if (ka != kb)
		return ka > kb ? -1 : 1;
	if (a->calls != b->calls)
		return a->calls > b->calls ? -1 : 1;
	r = strcmp(c->p->funcs[a->id].name, c->p->funcs[b->id].name);
	if (r)
		return r;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* Append @s with control characters and invalid UTF-8 bytes as '?'. */
static void put_clean(struct erl_buf *b, const char *s)
{
	size_t n = strlen(s), i = 0;

	while (i < n) {
		uint32_t cp;
		size_t len = erl_utf8_decode(s + i, n - i, &cp);

		if (!len || cp < 0x20 || cp == 0x7f) {
			erl_buf_puts(b, "?");
			i++;
		} else {
			erl_buf_add(b, s + i, len);
			i += len;
		}
	}
}

static char *func_text(const struct profile *p, ct_func_id f)
{
	const struct ct_func *fn = &p->funcs[f];
	struct erl_buf b;
	char *s;

	erl_buf_init(&b);
	erl_buf_add(&b, "", 0);
	put_clean(&b, fn->name[0] ? fn->name : "???");
	if (!is_pseudo(p, f)) {
		erl_buf_puts(&b, " [");
		put_clean(&b, fn->module);
		erl_buf_puts(&b, "]");
	}
	if (fn->file) {
		erl_buf_puts(&b, " ");
		put_clean(&b, fn->file);
		if (fn->line > 0)
			erl_buf_printf(&b, ":%d", fn->line);
	}
	s = xstrdup(erl_buf_str(&b));
	erl_buf_fini(&b);
	return s;
}

/* Microseconds with 3 decimals as milliseconds: "14000.037". */
static char *ms_text(uint64_t ns)
{
	uint64_t us = (ns + 500) / 1000;

	return xasprintf("%" PRIu64 ".%03" PRIu64, us / 1000, us % 1000);
}

/* ns / n in microseconds with 2 decimals (0.00 when n is 0). */
static char *us_text(uint64_t ns, uint64_t n)
{
	return xasprintf("%.2f", n ? (double)ns / (double)n / 1000.0 : 0.0);
}

static char *pct_text(double part, double whole)
{
	return xasprintf("%.2f", whole > 0 ? 100.0 * part / whole : 0.0);
}

static void fill_cells(const struct flat *c, struct frow *r, uint64_t total, uint64_t *cum)
{
	const struct ct_hist *h = c->p->funcs[r->id].hist;
	static const double qs[] = { 0.5, 0.95, 0.99 };
	bool times = c->p->mode != CT_MODE_COUNT;

	r->name = func_text(c->p, r->id);
	r->cell[COL_CALLS] = xasprintf("%" PRIu64, r->calls);
	if (!times) {
		for (int k = 0; k < NR_NUM_COLS; k++)
			if (k != COL_CALLS)
				r->cell[k] = xstrdup("-");
		return;
	}
	*cum += r->own;
	r->cell[COL_OWN] = ms_text(r->own);
	r->cell[COL_PCT] = pct_text((double)r->own, (double)total);
	r->cell[COL_CUM] = pct_text((double)*cum, (double)total);
	r->cell[COL_OWN_CALL] = us_text(r->own, r->calls);
	r->cell[COL_ACC_CALL] = us_text(r->acc, r->calls);
	if (!h || !h->count) {
		for (int k = COL_MIN; k <= COL_MAX; k++)
			r->cell[k] = xstrdup("-");
		return;
	}
	r->cell[COL_MIN] = us_text(h->min_ns, 1);
	for (int k = 0; k < 3; k++)
		r->cell[COL_P50 + k] = us_text(ct_hist_quantile(h, qs[k]), 1);
	r->cell[COL_MAX] = us_text(h->max_ns, 1);
}

static void put_row(struct erl_buf *b, const char *const cells[NR_NUM_COLS],
		    const char *name, const size_t w[NR_NUM_COLS])
{
	for (int k = 0; k < NR_NUM_COLS; k++) {
		size_t n = strlen(cells[k]);

		if (k)
			erl_buf_puts(b, "  ");
		if (n < w[k])
			erl_buf_spaces(b, w[k] - n);
		erl_buf_puts(b, cells[k]);
	}
	erl_buf_puts(b, "  ");
	erl_buf_puts(b, name);
	erl_buf_puts(b, "\n");
}

static int emit_flat(const struct profile *p, const struct report_opts *ro, FILE *out)
{
	struct flat c = { .p = p, .sort = ro->sort };
	size_t nr = 0, w[NR_NUM_COLS];
	uint64_t total = 0, calls = 0, cum = 0;
	struct erl_buf b;

	errno = 0;
	c.rows = xcalloc(p->nr_funcs + 1, sizeof(*c.rows));
	for (size_t i = 0; i < p->nr_threads; i++)
		profile_thread_arcs(p, p->threads[i], add_arc, &c);
	for (ct_func_id f = 0; f < p->nr_funcs; f++) {
		struct frow r = c.rows[f];

		if (!r.calls)
			continue;
		r.id = f;
		total += r.own;
		calls += r.calls;
		c.rows[nr++] = r;
	}
	if (nr)
		qsort_r(c.rows, nr, sizeof(*c.rows), row_cmp_desc, &c);

	for (int k = 0; k < NR_NUM_COLS; k++)
		w[k] = strlen(heads[k]);
	for (size_t i = 0; i < nr; i++) {
		fill_cells(&c, &c.rows[i], total, &cum);
		for (int k = 0; k < NR_NUM_COLS; k++)
			if (strlen(c.rows[i].cell[k]) > w[k])
				w[k] = strlen(c.rows[i].cell[k]);
	}

	erl_buf_init(&b);
	erl_buf_puts(&b, "Flat profile, clock ");
	put_clean(&b, p->clock ? p->clock : "wall");
	if (p->mode == CT_MODE_COUNT) {
		erl_buf_puts(&b, ", count mode: call counts only, no times");
	} else {
		char *ms = ms_text(total);

		erl_buf_printf(&b, ", total own time %s ms", ms);
		free(ms);
	}
	erl_buf_printf(&b, ", %zu functions, %" PRIu64 " calls%s\n\n", nr, calls,
		       p->mode == CT_MODE_COUNT ? "" : "; per-call times in us");
	put_row(&b, heads, "function", w);
	for (size_t i = 0; i < nr; i++) {
		const char *cells[NR_NUM_COLS];

		for (int k = 0; k < NR_NUM_COLS; k++)
			cells[k] = c.rows[i].cell[k];
		put_row(&b, cells, c.rows[i].name, w);
	}
	fputs(erl_buf_str(&b), out);
	erl_buf_fini(&b);

	for (size_t i = 0; i < nr; i++) {
		for (int k = 0; k < NR_NUM_COLS; k++)
			free(c.rows[i].cell[k]);
		free(c.rows[i].name);
	}
	free(c.rows);
	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

const struct report_ops report_flat = {
	.name = "flat",
	.default_sort = REPORT_SORT_OWN,
	.shows_callers = false,
	.emit = emit_flat,
};
