/* SPDX-License-Identifier: MIT */
/* cprof.c - cprof-style call counts (formats.md section 2): the term cprof:analyse/1
 * returns, written so that file:consult/1 reads it back:
 *
 *   {AllCallCount, [{Module, ModuleCallCount, [{{Module,Function,Arity}, Count}]}]}.
 *
 * after one "%%" comment line naming the shape.
 *
 * Counts are the calls of each function summed over every thread and every caller
 * (calls from untraced code included), from profile_thread_arcs(), so both modes
 * work: count mode's edge tables and full mode's tree node counts give the same
 * numbers. Pseudo functions (suspend, undefined) are left out.
 *
 * cprof's rules (checked against OTP 25's cprof): a function called fewer than
 * ro->limit times is left out of its module's list but still counts in the module's
 * total; the limit never removes a module, so a module may end with []; limit 0 lists
 * every traced function of a listed module, also those never called; modules whose
 * total is 0 are left out. Modules are sorted by descending total, ties by descending
 * module name; functions by descending count, ties by descending {M,F,A} (Erlang term
 * order; the function id breaks what is left, so the output is deterministic).
 *
 * Layout: the stable one of formats.md 2.3 (native_cprof.txt): one module header per
 * line, one {{M,F,A},N} per line indented under the module's count. Names follow the
 * atom rules of erl.h; names longer than an atom allows become strings. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "calltrace/erl.h"
#include "calltrace/profile.h"
#include "calltrace/report.h"
#include "calltrace/util.h"

struct cfunc {
	ct_func_id id;
	uint64_t count;
};

struct cmod {
	const char *name;      /* module name, borrowed from the profile */
	uint64_t total;
	size_t lo, hi;         /* its functions: [lo, hi) of the sorted function array */
};

struct cprof {
	const struct profile *p;
	uint64_t *counts;      /* per function id */
};

static bool is_pseudo(const struct profile *p, ct_func_id f)
{
	return f == CT_FUNC_UNDEFINED || f >= p->nr_funcs || p->funcs[f].module[0] == '\0';
}

static void count_arc(const struct ct_arc *a, void *arg)
{
	struct cprof *c = arg;

	if (!is_pseudo(c->p, a->callee))
		c->counts[a->callee] += a->calls;
}

/* Erlang term order of two names written by erl_append_name(): atoms before strings,
 * then character by character. */
static int name_cmp(const char *a, const char *b)
{
	bool sa = erl_name_is_string(a), sb = erl_name_is_string(b);

	if (sa != sb)
		return sa ? 1 : -1;
	return erl_text_cmp(a, b);
}

/* Group functions by module: by module name (any total order will do), then by id. */
static int func_by_module(const void *va, const void *vb, void *arg)
{
	const struct cfunc *a = va, *b = vb;
	const struct profile *p = arg;
	int r = strcmp(p->funcs[a->id].module, p->funcs[b->id].module);

	if (r)
		return r;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* Descending count, then descending {M,F,A} (same module: name, arity), then id. */
static int func_cmp_desc(const void *va, const void *vb, void *arg)
{
	const struct cfunc *a = va, *b = vb;
	const struct profile *p = arg;
	const struct ct_func *fa = &p->funcs[a->id], *fb = &p->funcs[b->id];
	int r;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	r = name_cmp(fa->name, fb->name);
	if (r)
		return -r;
	if (fa->arity != fb->arity)
		return fa->arity > fb->arity ? -1 : 1;
	return a->id > b->id ? -1 : a->id < b->id;
}

/* Descending total, then descending module name. */
static int mod_cmp_desc(const void *va, const void *vb)
{
	const struct cmod *a = va, *b = vb;

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return -name_cmp(a->name, b->name);
}

static void put_func(struct erl_buf *b, const struct ct_func *fn, uint64_t count)
{
	erl_buf_puts(b, "{{");
	erl_append_name(b, fn->module);
	erl_buf_puts(b, ",");
	erl_append_name(b, fn->name);
	erl_buf_printf(b, ",%d},%" PRIu64 "}", fn->arity, count);
}

/* One module: "{Mod,Total," then its list, one function a line, indented under the
 * total. @first and @last place it in the outer list. */
static void put_module(struct erl_buf *b, const struct profile *p, const struct cmod *m,
		       const struct cfunc *fs, unsigned long limit, bool first, bool last)
{
	size_t start, indent, nr = 0;

	erl_buf_puts(b, first ? " [" : "  ");
	erl_buf_puts(b, "{");
	start = b->len;
	erl_append_name(b, m->name);
	indent = 3 + erl_text_width(b->data + start) + 1;
	erl_buf_printf(b, ",%" PRIu64 ",\n", m->total);
	for (size_t i = m->lo; i < m->hi; i++) {
		if (fs[i].count < limit)
			continue;
		if (nr++)
			erl_buf_puts(b, ",\n");
		erl_buf_spaces(b, indent);
		erl_buf_puts(b, nr == 1 ? "[" : " ");
		put_func(b, &p->funcs[fs[i].id], fs[i].count);
	}
	if (!nr) {
		erl_buf_spaces(b, indent);
		erl_buf_puts(b, "[]");
	} else {
		erl_buf_puts(b, "]");
	}
	erl_buf_puts(b, last ? "}]}.\n" : "},\n");
}

static int emit_cprof(const struct profile *p, const struct report_opts *ro, FILE *out)
{
	struct cprof c = { .p = p };
	struct cfunc *fs = xcalloc(p->nr_funcs + 1, sizeof(*fs));
	struct cmod *mods = xcalloc(p->nr_funcs + 1, sizeof(*mods));
	size_t nr_fs = 0, nr_mods = 0;
	uint64_t all = 0;
	struct erl_buf b;

	errno = 0;
	c.counts = xcalloc(p->nr_funcs + 1, sizeof(*c.counts));
	for (size_t i = 0; i < p->nr_threads; i++)
		profile_thread_arcs(p, p->threads[i], count_arc, &c);

	for (ct_func_id f = 0; f < p->nr_funcs; f++) {
		if (!is_pseudo(p, f))
			fs[nr_fs++] = (struct cfunc){ .id = f, .count = c.counts[f] };
	}
	if (nr_fs)
		qsort_r(fs, nr_fs, sizeof(*fs), func_by_module, (void *)p);

	/* One module per run of equal module names; sort each run's functions. */
	for (size_t i = 0; i < nr_fs;) {
		struct cmod m = { .name = p->funcs[fs[i].id].module, .lo = i };

		while (i < nr_fs && !strcmp(p->funcs[fs[i].id].module, m.name))
			m.total += fs[i++].count;
		m.hi = i;
		if (!m.total)
			continue;
		qsort_r(fs + m.lo, m.hi - m.lo, sizeof(*fs), func_cmp_desc, (void *)p);
		mods[nr_mods++] = m;
		all += m.total;
	}
	if (nr_mods)
		qsort(mods, nr_mods, sizeof(*mods), mod_cmp_desc);

	erl_buf_init(&b);
	erl_buf_puts(&b, "%% cprof-style call counts: {AllCallCount, [{Module, ModuleCallCount, "
			 "[{{Module,Function,Arity}, CallCount}]}]}\n");
	erl_buf_printf(&b, "{%" PRIu64 ",\n", all);
	if (!nr_mods)
		erl_buf_puts(&b, " []}.\n");
	for (size_t i = 0; i < nr_mods; i++)
		put_module(&b, p, &mods[i], fs, ro->limit, i == 0, i + 1 == nr_mods);
	fputs(erl_buf_str(&b), out);
	erl_buf_fini(&b);

	free(c.counts);
	free(mods);
	free(fs);
	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

const struct report_ops report_cprof = {
	.name = "cprof",
	.default_sort = REPORT_SORT_ACC,
	.shows_callers = false,
	.emit = emit_cprof,
};
