/* SPDX-License-Identifier: MIT */
/* folded.c - folded stacks (formats.md section 5), the input of flamegraph.pl, inferno
 * and speedscope: one line "comm-PID/TID;f1;...;fN VALUE" per distinct (thread, call
 * path), VALUE the exclusive (own) nanoseconds of exactly that path. Lines with 0 are
 * left out and recursion stays as repeated frames.
 *
 * Decisions:
 *  - Frames are bare function names (no module qualifier); the first frame is the
 *    thread, "comm-PID/TID" ("unknown" when the thread has no comm).
 *  - Frame names are made safe for the line format: ';' becomes '_', ASCII control
 *    characters (newline included) become '?', bytes that are not valid UTF-8 become
 *    U+FFFD, and an empty name becomes '?'. A frame ending in whitespace plus a number
 *    ("op 2", "x 1.5") would be read as a differential count column, so '_' is
 *    appended to it ("op 2_").
 *  - Threads come in (pid, tid) order and each thread's lines are sorted by stack,
 *    frame by frame (names compared bytewise, a stack before its extensions), so the
 *    output is deterministic. Paths that become the same text (two functions with one
 *    name, or names equal once sanitized) are one line, their values added. Lines are
 *    written while walking the tree, so memory stays O(depth), not O(depth^2), on
 *    deep recursion; stacks deeper than FOLDED_MAX_DEPTH frames are cut (below).
 *  - Count mode records no call paths, only caller -> callee pairs with call counts,
 *    so its lines are "comm-PID/TID;caller;callee CALLS": pairs, not full stacks. Calls
 *    from untraced code (fprof's 'undefined' caller) are "comm-PID/TID;callee CALLS". */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "calltrace/erl.h"
#include "calltrace/profile.h"
#include "calltrace/report.h"
#include "calltrace/util.h"

/* One count mode line: frames @a and @b (NULL for calls from untraced code, which have
 * the one frame @a) below the thread frame, borrowed from folded.names. */
struct fline {
	const char *a, *b;
	uint64_t value;
};

/* Stacks deeper than this are cut: a program that recursed 100,000 deep would
 * otherwise write 100,000 lines of up to 100,000 frames (gigabytes). The own time
 * below the cut is written once, on the cut stack plus a last frame "[deeper]", so
 * every line still adds up to the thread's total. perf limits its stacks the same way
 * (kernel.perf_event_max_stack). */
#define FOLDED_MAX_DEPTH 1024

struct folded {
	const struct profile *p;
	int depth;             /* frames below the thread frame in c->path */
	char **names;          /* sanitized frame name per function id, on first use */
	struct erl_buf path;   /* the current stack text while walking */
	struct fline *lines;
	size_t nr_lines, cap_lines;
};

/* True if @s ends in whitespace followed by a number as flamegraph.pl reads counts
 * (\s+\d+(\.\d*)?$). */
static bool ends_in_count(const char *s, size_t n)
{
	size_t i = n, digits = 0;

	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	if (i > 0 && s[i - 1] == '.') {
		/* "1." and "1.5": digits before the dot are then required */
		size_t dot = --i;

		while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
			i--;
		digits = dot - i;
	} else {
		digits = n - i;
	}
	return digits > 0 && i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t');
}

/* Append @name to @b as a safe frame name (rules in the file comment). @last: the
 * name ends the frame (the thread frame continues with "-PID/TID"). */
static void append_frame(struct erl_buf *b, const char *name, bool last)
{
	size_t n = name ? strlen(name) : 0, i = 0, start = b->len;

	if (!n) {
		erl_buf_puts(b, "?");
		return;
	}
	while (i < n) {
		unsigned char ch = (unsigned char)name[i];
		uint32_t cp;
		size_t len;

		if (ch == ';') {
			erl_buf_puts(b, "_");
			i++;
		} else if (ch < 0x20 || ch == 0x7f) {
			erl_buf_puts(b, "?");
			i++;
		} else if ((len = erl_utf8_decode(name + i, n - i, &cp)) != 0) {
			erl_buf_add(b, name + i, len);
			i += len;
		} else {
			erl_buf_puts(b, "\xef\xbf\xbd");
			i++;
		}
	}
	if (last && ends_in_count(b->data + start, b->len - start))
		erl_buf_puts(b, "_");
}

static const char *frame_name(struct folded *c, ct_func_id f)
{
	size_t i = f == CT_FUNC_UNDEFINED || f >= c->p->nr_funcs ? c->p->nr_funcs : f;

	if (!c->names[i]) {
		struct erl_buf b;

		erl_buf_init(&b);
		append_frame(&b, profile_func_name(c->p, f), true);
		c->names[i] = xstrdup(erl_buf_str(&b));
		erl_buf_fini(&b);
	}
	return c->names[i];
}

static void add_line(struct folded *c, const char *a, const char *b, uint64_t value)
{
	xgrow(&c->lines, &c->cap_lines, c->nr_lines + 1, sizeof(*c->lines));
	c->lines[c->nr_lines++] = (struct fline){ .a = a, .b = b, .value = value };
}

/* A child while walking: its frame name and node. */
struct kid {
	const char *name;
	const struct ct_node *n;
};

static int kid_cmp(const void *va, const void *vb)
{
	const struct kid *a = va, *b = vb;
	int r = strcmp(a->name, b->name);

	if (r)
		return r;
	if (a->n->func != b->n->func)
		return a->n->func < b->n->func ? -1 : 1;
	return 0;
}

static void walk_group(struct folded *c, const struct ct_node *const *grp, size_t nr,
		       FILE *out);

/* Walk the children of the @nr nodes @grp (one path), in frame name order; children
 * with the same name are one path, walked together. */
static void walk_children(struct folded *c, const struct ct_node *const *grp, size_t nr,
			  FILE *out)
{
	struct kid *kids = NULL;
	const struct ct_node **same = NULL;
	size_t nr_kids = 0, cap = 0, cap_same = 0;

	for (size_t i = 0; i < nr; i++) {
		for (const struct ct_node *k = grp[i]->first_child; k; k = k->next_sibling) {
			xgrow(&kids, &cap, nr_kids + 1, sizeof(*kids));
			kids[nr_kids].name = frame_name(c, k->func);
			kids[nr_kids++].n = k;
		}
	}
	if (nr_kids)
		qsort(kids, nr_kids, sizeof(*kids), kid_cmp);
	for (size_t i = 0, j; i < nr_kids; i = j) {
		for (j = i + 1; j < nr_kids && !strcmp(kids[j].name, kids[i].name); j++)
			;
		xgrow(&same, &cap_same, j - i, sizeof(*same));
		for (size_t k = i; k < j; k++)
			same[k - i] = kids[k].n;
		walk_group(c, same, j - i, out);
	}
	free(same);
	free(kids);
}

/* One path (@nr nodes of the same name below one path) and its subtree; c->path holds
 * the stack text down to the parent. */
/* The own time of every node strictly below @top (iterative: any depth). */
static uint64_t below_own(const struct ct_node *top)
{
	const struct ct_node *n = top->first_child;
	uint64_t sum = 0;

	while (n) {
		sum += n->own_ns;
		if (n->first_child) {
			n = n->first_child;
			continue;
		}
		while (n != top && !n->next_sibling)
			n = n->parent;
		n = n == top ? NULL : n->next_sibling;
	}
	return sum;
}

static void walk_group(struct folded *c, const struct ct_node *const *grp, size_t nr,
		       FILE *out)
{
	size_t keep = c->path.len;
	uint64_t own = 0, deeper = 0;

	erl_buf_puts(&c->path, ";");
	erl_buf_puts(&c->path, frame_name(c, grp[0]->func));
	for (size_t i = 0; i < nr; i++)
		own += grp[i]->own_ns;
	if (own)
		fprintf(out, "%s %" PRIu64 "\n", erl_buf_str(&c->path), own);
	if (++c->depth < FOLDED_MAX_DEPTH) {
		walk_children(c, grp, nr, out);
	} else {
		for (size_t i = 0; i < nr; i++)
			deeper += below_own(grp[i]);
		if (deeper)
			fprintf(out, "%s;[deeper] %" PRIu64 "\n", erl_buf_str(&c->path), deeper);
	}
	c->depth--;
	c->path.len = keep;
	c->path.data[keep] = '\0';
}

/* Frame by frame, a stack before its extensions (the order of walk_children()). */
static int fline_cmp(const void *va, const void *vb)
{
	const struct fline *x = va, *y = vb;
	int r = strcmp(x->a, y->a);

	if (r)
		return r;
	if (!x->b || !y->b)
		return x->b ? 1 : y->b ? -1 : 0;
	return strcmp(x->b, y->b);
}

/* Count mode: the thread's caller -> callee lines, sorted, equal texts merged. */
static void count_lines(struct folded *c, const struct ct_thread *t, FILE *out)
{
	size_t i = 0;

	c->nr_lines = 0;
	for (size_t k = 0; k < t->nr_edges; k++) {
		const struct ct_edge *e = &t->edges[k];
		const char *callee = frame_name(c, e->callee);

		if (e->caller == CT_FUNC_UNDEFINED)
			add_line(c, callee, NULL, e->calls);
		else
			add_line(c, frame_name(c, e->caller), callee, e->calls);
	}
	if (c->nr_lines)
		qsort(c->lines, c->nr_lines, sizeof(*c->lines), fline_cmp);
	while (i < c->nr_lines) {
		const struct fline *l = &c->lines[i];
		uint64_t sum = 0;

		for (; i < c->nr_lines && !fline_cmp(&c->lines[i], l); i++)
			sum += c->lines[i].value;
		if (!sum)
			continue;
		fprintf(out, "%s;%s", erl_buf_str(&c->path), l->a);
		if (l->b)
			fprintf(out, ";%s", l->b);
		fprintf(out, " %" PRIu64 "\n", sum);
	}
}

static void thread_lines(struct folded *c, const struct ct_thread *t, FILE *out)
{
	const struct ct_node *root = &t->root;

	if (c->p->mode == CT_MODE_COUNT)
		count_lines(c, t, out);
	else
		walk_children(c, &root, 1, out);
}

static int emit(const struct profile *p, const struct report_opts *ro, FILE *out)
{
	struct folded c = { .p = p };
	const struct ct_thread **v = xcalloc(p->nr_threads + 1, sizeof(*v));

	(void)ro;
	errno = 0;
	c.names = xcalloc(p->nr_funcs + 1, sizeof(*c.names));
	erl_buf_init(&c.path);
	memcpy(v, p->threads, p->nr_threads * sizeof(*v));
	if (p->nr_threads)
		qsort(v, p->nr_threads, sizeof(*v), profile_thread_cmp);
	for (size_t i = 0; i < p->nr_threads; i++) {
		const struct ct_thread *t = v[i];
		char ids[48];

		erl_buf_reset(&c.path);
		append_frame(&c.path, t->comm ? t->comm : "unknown", false);
		snprintf(ids, sizeof(ids), "-%d/%d", (int)t->pid, (int)t->tid);
		erl_buf_puts(&c.path, ids);
		thread_lines(&c, t, out);
	}
	for (size_t i = 0; i <= p->nr_funcs; i++)
		free(c.names[i]);
	free(c.names);
	free(c.lines);
	free(v);
	erl_buf_fini(&c.path);

	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

const struct report_ops report_folded = {
	.name = "folded",
	.default_sort = REPORT_SORT_ACC,
	.shows_callers = true,
	.emit = emit,
};
