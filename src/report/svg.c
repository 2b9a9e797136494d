/* SPDX-License-Identifier: MIT */
/* svg.c - an interactive flame graph written by calltrace itself: one self-contained
 * SVG file (inline CSS and a small plain-JavaScript <script>, no external resources).
 *
 * Layout: the bottom row is one "all" frame (the sum of every thread), above it one
 * frame per thread ("comm PID/TID", threads side by side in (pid, tid) order), and
 * above each thread its calling-context tree, root calls first. Every call path (tree
 * node) is one <g class="frame"> holding a <title> tooltip (name, module, calls, own,
 * acc, % of the total), a <rect> and a <text> label. Widths are proportional to the
 * node's ACC (entry to return of every call on that path); a recursive node's time is
 * also inside its parent's, which is what makes children nest inside their parents.
 * One exception keeps the picture nested: a node is never narrower than its children
 * together (a call that never returned, such as main calling exit(), can have less
 * ACC than its callees), so its width is max(ACC, sum of the children's widths); its
 * tooltip still gives the recorded ACC. Thread frames are as wide as their root
 * calls together, "all" as all threads.
 * Siblings are drawn left to right by name (then function id), as flame graphs do.
 * The thread frames are <g class="thread"> and the bottom one <g class="all">, so
 * counting <g class="frame"> gives the number of drawn call paths.
 *
 * Interaction: clicking a frame zooms to it (its subtree fills the width, its ancestors
 * stay as full-width bars, everything else is hidden); "Reset Zoom" or clicking "all"
 * restores. "Search" (or Ctrl-F, or '/') asks for a regular expression, paints the
 * matching call paths magenta and shows the share of the total they cover (nested
 * matches counted once). Hovering a frame shows its tooltip text in the bottom line.
 *
 * Elision: when the profile has more than SVG_ELIDE_NODES call paths, a node narrower
 * than 0.1 px is not drawn, nor is its subtree; their number is written in the
 * subtitle, and their time stays in their ancestors' widths. Smaller profiles draw
 * every node, so the count of frames equals the number of call paths.
 *
 * Text: names are XML-escaped (& < > " '), control characters become '?', and bytes
 * that are not valid UTF-8 (and U+FFFE/U+FFFF, which XML forbids) become U+FFFD, so
 * the document is always well-formed. Numbers are formatted without printf's %f, so
 * the output never depends on the locale.
 *
 * Count mode has no call paths (caller -> callee counts only): the file is then a
 * valid SVG that says so, with no frames. So is a profile with no recorded time. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calltrace/erl.h"
#include "calltrace/profile.h"
#include "calltrace/report.h"
#include "calltrace/util.h"

#define SVG_WIDTH 1200          /* image width, px */
#define SVG_PAD 10              /* left and right margin, px */
#define SVG_FRAME_H 16          /* row height, px (rect 15 + 1 gap) */
#define SVG_HEADER_H 56         /* title, subtitle and buttons */
#define SVG_FOOTER_H 28         /* the details line */
#define SVG_CHAR_W 7.0          /* average label character width at 12px, px */
#define SVG_ELIDE_NODES 10000   /* elide narrow frames only above this many nodes */
#define SVG_ELIDE_PX 0.1

/* A node as drawn: sorted children are consecutive entries. */
struct dnode {
	const struct ct_node *n;
	const char *name;       /* cleaned, borrowed from svg.names */
	size_t first, nr_kids;  /* its children in svg.d */
	size_t size;            /* nodes in its subtree, itself included */
	uint64_t width;         /* ns: max(acc_ns, sum of the children's widths) */
};

struct svg {
	const struct profile *p;
	FILE *out;
	double scale;           /* px per ns */
	uint64_t total;         /* ns: the "all" frame */
	int max_depth;          /* deepest node, 1 for root calls */
	bool elide;
	size_t nr_elided;
	char **names;           /* cleaned (unescaped) name per function id, on first use */
	struct dnode *d;        /* the laid out nodes (layout_kids()) */
	size_t nr_d, cap_d;
	struct erl_buf tmp;
};

/* ------------------------------------------------------------------ text */

/* Append @s to @b cleaned for XML: valid UTF-8, no control characters (they become
 * '?'), no U+FFFE/U+FFFF; invalid bytes become U+FFFD. Not yet escaped. */
static void clean_text(struct erl_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0, i = 0;

	erl_buf_add(b, "", 0);
	while (i < n) {
		unsigned char ch = (unsigned char)s[i];
		uint32_t cp;
		size_t len;

		if (ch < 0x20 || ch == 0x7f) {
			erl_buf_puts(b, "?");
			i++;
		} else if ((len = erl_utf8_decode(s + i, n - i, &cp)) != 0 &&
			   cp != 0xfffe && cp != 0xffff) {
			erl_buf_add(b, s + i, len);
			i += len;
		} else {
			erl_buf_puts(b, "\xef\xbf\xbd");
			i += len ? len : 1;
		}
	}
}

/* Write @s (already cleaned) XML-escaped, at most @max characters: a longer text is
 * cut to @max - 2 characters and "..". */
static void put_escaped(FILE *out, const char *s, size_t max)
{
	size_t chars = 0, cut = (size_t)-1;

	for (const char *q = s; *q; q++)
		if (((unsigned char)*q & 0xc0) != 0x80)
			chars++;
	if (chars > max)
		cut = max >= 2 ? max - 2 : 0;
	chars = 0;
	for (const char *q = s; *q; q++) {
		if (((unsigned char)*q & 0xc0) != 0x80 && chars++ == cut) {
			fputs("..", out);
			return;
		}
		switch (*q) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&apos;", out);
			break;
		default:
			fputc(*q, out);
		}
	}
}

static void put_clean(struct svg *c, const char *s)
{
	erl_buf_reset(&c->tmp);
	clean_text(&c->tmp, s);
	put_escaped(c->out, erl_buf_str(&c->tmp), (size_t)-1);
}

static const char *func_name(struct svg *c, ct_func_id f)
{
	size_t i = f == CT_FUNC_UNDEFINED || f >= c->p->nr_funcs ? c->p->nr_funcs : f;

	if (!c->names[i]) {
		struct erl_buf b;

		erl_buf_init(&b);
		clean_text(&b, profile_func_name(c->p, f));
		c->names[i] = xstrdup(erl_buf_str(&b));
		erl_buf_fini(&b);
	}
	return c->names[i];
}

/* @v (>= 0) with @decimals decimals, without the locale's decimal separator. */
static void put_fixed(FILE *out, double v, int decimals)
{
	uint64_t m = 1, x;

	for (int i = 0; i < decimals; i++)
		m *= 10;
	if (!(v > 0))
		v = 0;
	x = (uint64_t)llround(v * (double)m);
	fprintf(out, "%" PRIu64, x / m);
	if (decimals)
		fprintf(out, ".%0*" PRIu64, decimals, x % m);
}

/* ------------------------------------------------------------------ frames */

/* Deterministic "hot" colour of a name (FNV-1a): reds, oranges, yellows. */
static void put_colour(FILE *out, const char *name)
{
	uint32_t h = 2166136261u;

	for (const char *q = name; *q; q++)
		h = (h ^ (unsigned char)*q) * 16777619u;
	fprintf(out, "rgb(%u,%u,%u)", 205 + (h % 51), (h >> 8) % 200 + 30, (h >> 16) % 56);
}

/* The <g>: tooltip, rect and label. @name is cleaned; @module may be NULL. */
static void put_frame(struct svg *c, const char *cls, const char *name, const char *module,
		      const struct ct_node *n, uint64_t acc, double x, double w, int level,
		      const char *fill)
{
	double y = SVG_HEADER_H + (double)(c->max_depth + 1 - level) * SVG_FRAME_H;
	double pct = c->total ? 100.0 * (double)acc / (double)c->total : 0;
	size_t fit = w > 6 ? (size_t)((w - 6) / SVG_CHAR_W) : 0;

	fprintf(c->out, "<g class=\"%s\"><title>", cls);
	put_escaped(c->out, name, (size_t)-1);
	fputc('\n', c->out);
	if (n) {
		put_clean(c, module);
		fprintf(c->out, ": calls %" PRIu64 ", own %" PRIu64 " ns, acc %" PRIu64 " ns, ",
			n->calls, n->own_ns, n->acc_ns);
	} else {
		fprintf(c->out, "acc %" PRIu64 " ns, ", acc);
	}
	put_fixed(c->out, pct, 2);
	fputs("% of total", c->out);
	if (n && n->is_rec)
		fputs(" (recursive: inside an outer call of the same function)", c->out);
	fputs("</title><rect x=\"", c->out);
	put_fixed(c->out, x, 3);
	fputs("\" y=\"", c->out);
	put_fixed(c->out, y, 1);
	fputs("\" width=\"", c->out);
	put_fixed(c->out, w, 3);
	fprintf(c->out, "\" height=\"%d\" fill=\"", SVG_FRAME_H - 1);
	if (fill)
		fputs(fill, c->out);
	else
		put_colour(c->out, name);
	fputs("\" rx=\"2\"/><text x=\"", c->out);
	put_fixed(c->out, x + 3, 3);
	fputs("\" y=\"", c->out);
	put_fixed(c->out, y + 11.5, 1);
	fputs("\">", c->out);
	if (fit >= 3)
		put_escaped(c->out, name, fit);
	fputs("</text></g>\n", c->out);
}

/* A child while sorting: its cleaned name and node. */
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

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* Lay out the children of @n (at @depth, 1 for root calls) as consecutive entries of
 * c->d, sorted, each followed later by its own children. Returns the index of the
 * first; *@nr their number, *@width the sum of their widths, *@size the number of
 * nodes below @n. Recursive over depth, like ctree_walk(). */
static size_t layout_kids(struct svg *c, const struct ct_node *n, int depth, size_t *nr,
			  uint64_t *width, size_t *size)
{
	struct kid *kids = NULL;
	size_t cap = 0, base;

	*nr = *size = 0;
	*width = 0;
	for (const struct ct_node *k = n->first_child; k; k = k->next_sibling) {
		xgrow(&kids, &cap, *nr + 1, sizeof(*kids));
		kids[*nr].name = func_name(c, k->func);
		kids[(*nr)++].n = k;
	}
	if (!*nr)
		return 0;
	if (depth > c->max_depth)
		c->max_depth = depth;
	qsort(kids, *nr, sizeof(*kids), kid_cmp);
	xgrow(&c->d, &c->cap_d, c->nr_d + *nr, sizeof(*c->d));
	base = c->nr_d;
	c->nr_d += *nr;
	for (size_t i = 0; i < *nr; i++) {
		size_t first, nr_kids, sub;
		uint64_t kw;

		first = layout_kids(c, kids[i].n, depth + 1, &nr_kids, &kw, &sub);
		c->d[base + i] = (struct dnode){
			.n = kids[i].n, .name = kids[i].name, .first = first,
			.nr_kids = nr_kids, .size = sub + 1,
			.width = kids[i].n->acc_ns > kw ? kids[i].n->acc_ns : kw,
		};
		*width = add_sat(*width, c->d[base + i].width);
		*size += sub + 1;
	}
	free(kids);
	return base;
}

/* Number of laid out nodes in [@first, @first + @nr) and below that are not drawn. */
static size_t count_elided(const struct svg *c, size_t first, size_t nr)
{
	size_t sum = 0;

	for (size_t i = first; i < first + nr; i++) {
		const struct dnode *d = &c->d[i];

		if ((double)d->width * c->scale < SVG_ELIDE_PX)
			sum += d->size;
		else
			sum += count_elided(c, d->first, d->nr_kids);
	}
	return sum;
}

/* Draw the laid out nodes [@first, @first + @nr) from @x on, at @level. */
static void draw(struct svg *c, size_t first, size_t nr, double x, int level)
{
	for (size_t i = first; i < first + nr; i++) {
		const struct dnode *d = &c->d[i];
		double w = (double)d->width * c->scale;

		if (!c->elide || w >= SVG_ELIDE_PX) {
			const char *module = d->n->func < c->p->nr_funcs ?
					     c->p->funcs[d->n->func].module : "";

			put_frame(c, "frame", d->name, module, d->n, d->n->acc_ns, x, w, level,
				  NULL);
			draw(c, d->first, d->nr_kids, x, level + 1);
		}
		x += w;
	}
}

/* ------------------------------------------------------------------ document */

/* The script: plain JavaScript, no external resources. Frames keep their drawn
 * geometry in f.x/f.w; zooming rescales from those. */
static const char svg_script[] =
	"var frames = [], all = null, matchRe = \"\";\n"
	"function el(id) { return document.getElementById(id); }\n"
	"function init() {\n"
	"\tvar gs = document.querySelectorAll(\"g.frame, g.thread, g.all\");\n"
	"\tfor (var i = 0; i < gs.length; i++) {\n"
	"\t\tvar g = gs[i], r = g.querySelector(\"rect\");\n"
	"\t\tvar tip = g.querySelector(\"title\").textContent;\n"
	"\t\tvar f = { g: g, r: r, t: g.querySelector(\"text\"), tip: tip,\n"
	"\t\t\tname: tip.split(\"\\n\")[0], x: +r.getAttribute(\"x\"),\n"
	"\t\t\tw: +r.getAttribute(\"width\"), y: +r.getAttribute(\"y\"),\n"
	"\t\t\tfill: r.getAttribute(\"fill\"), leaf: g.getAttribute(\"class\") == \"frame\" };\n"
	"\t\tg.ctf = f;\n"
	"\t\tframes.push(f);\n"
	"\t\tif (g.getAttribute(\"class\") == \"all\")\n"
	"\t\t\tall = f;\n"
	"\t\tg.addEventListener(\"click\", function () { zoom(this.ctf); });\n"
	"\t\tg.addEventListener(\"mouseover\", function () {\n"
	"\t\t\tel(\"details\").textContent = this.ctf.tip.replace(\"\\n\", \" - \");\n"
	"\t\t});\n"
	"\t\tg.addEventListener(\"mouseout\", function () {\n"
	"\t\t\tel(\"details\").textContent = \" \";\n"
	"\t\t});\n"
	"\t}\n"
	"\tel(\"reset\").addEventListener(\"click\", function () { if (all) zoom(all); });\n"
	"\tel(\"search\").addEventListener(\"click\", search);\n"
	"\twindow.addEventListener(\"keydown\", function (e) {\n"
	"\t\tif ((e.ctrlKey && e.key == \"f\") || e.key == \"/\") {\n"
	"\t\t\te.preventDefault();\n"
	"\t\t\tsearch();\n"
	"\t\t}\n"
	"\t});\n"
	"}\n"
	"function label(f, w) {\n"
	"\tvar n = Math.floor((w - 6) / CW), s = f.name;\n"
	"\tif (n < 3)\n"
	"\t\treturn \"\";\n"
	"\treturn s.length <= n ? s : s.substring(0, n - 2) + \"..\";\n"
	"}\n"
	"function place(f, x, w) {\n"
	"\tf.r.setAttribute(\"x\", x.toFixed(3));\n"
	"\tf.r.setAttribute(\"width\", w.toFixed(3));\n"
	"\tf.t.setAttribute(\"x\", (x + 3).toFixed(3));\n"
	"\tf.t.textContent = label(f, w);\n"
	"}\n"
	"function zoom(z) {\n"
	"\tvar s = z.w > 0 ? W / z.w : 1, eps = 0.002;\n"
	"\tfor (var i = 0; i < frames.length; i++) {\n"
	"\t\tvar f = frames[i];\n"
	"\t\tvar inside = f.x >= z.x - eps && f.x + f.w <= z.x + z.w + eps;\n"
	"\t\tvar around = f.x <= z.x + eps && f.x + f.w >= z.x + z.w - eps;\n"
	"\t\tif (f.y <= z.y && inside) {\n"
	"\t\t\tf.g.style.display = \"\";\n"
	"\t\t\tf.g.style.opacity = \"\";\n"
	"\t\t\tplace(f, PAD + (f.x - z.x) * s, f.w * s);\n"
	"\t\t} else if (f.y > z.y && around) {\n"
	"\t\t\tf.g.style.display = \"\";\n"
	"\t\t\tf.g.style.opacity = \"0.6\";\n"
	"\t\t\tplace(f, PAD, W);\n"
	"\t\t} else {\n"
	"\t\t\tf.g.style.display = \"none\";\n"
	"\t\t}\n"
	"\t}\n"
	"\tel(\"reset\").style.opacity = z == all ? \"0\" : \"1\";\n"
	"}\n"
	"function search() {\n"
	"\tvar q = prompt(\"Search call paths (regular expression; empty clears):\", matchRe);\n"
	"\tvar re, iv = [], sum = 0, end = -1;\n"
	"\tif (q === null)\n"
	"\t\treturn;\n"
	"\tif (q !== \"\") {\n"
	"\t\ttry {\n"
	"\t\t\tre = new RegExp(q);\n"
	"\t\t} catch (e) {\n"
	"\t\t\talert(e);\n"
	"\t\t\treturn;\n"
	"\t\t}\n"
	"\t}\n"
	"\tmatchRe = q;\n"
	"\tfor (var i = 0; i < frames.length; i++) {\n"
	"\t\tvar f = frames[i], hit = re && f.leaf && re.test(f.name);\n"
	"\t\tf.r.setAttribute(\"fill\", hit ? \"rgb(230,0,230)\" : f.fill);\n"
	"\t\tif (hit)\n"
	"\t\t\tiv.push([f.x, f.x + f.w]);\n"
	"\t}\n"
	"\tiv.sort(function (a, b) { return a[0] - b[0]; });\n"
	"\tfor (var j = 0; j < iv.length; j++) {\n"
	"\t\tif (iv[j][1] <= end)\n"
	"\t\t\tcontinue;\n"
	"\t\tsum += iv[j][1] - Math.max(iv[j][0], end);\n"
	"\t\tend = iv[j][1];\n"
	"\t}\n"
	"\tel(\"matched\").textContent =\n"
	"\t\tre ? \"Matched: \" + (100 * sum / W).toFixed(2) + \"%\" : \" \";\n"
	"}\n"
	"init();\n";

static void put_header(struct svg *c, int height, const char *note)
{
	FILE *out = c->out;

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n",
		SVG_WIDTH, height, SVG_WIDTH, height);
	fputs("<style>\n"
	      "text { font-family: monospace; font-size: 12px; fill: rgb(0,0,0); }\n"
	      "g.frame, g.thread, g.all { cursor: pointer; }\n"
	      "g.frame:hover rect, g.thread:hover rect, g.all:hover rect "
	      "{ stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
	      "text.title { font-size: 17px; }\n"
	      "text.button { cursor: pointer; fill: rgb(0,0,160); }\n"
	      "</style>\n", out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
		"fill=\"rgb(248,248,240)\"/>\n", SVG_WIDTH, height);
	fprintf(out, "<text class=\"title\" x=\"%d\" y=\"22\" text-anchor=\"middle\">"
		"Flame graph", SVG_WIDTH / 2);
	if (c->p->command) {
		fputs(": ", out);
		erl_buf_reset(&c->tmp);
		clean_text(&c->tmp, c->p->command);
		put_escaped(out, erl_buf_str(&c->tmp), 120);
	}
	fputs("</text>\n", out);
	fprintf(out, "<text x=\"%d\" y=\"40\" text-anchor=\"middle\">", SVG_WIDTH / 2);
	if (note) {
		fputs(note, out);
	} else {
		fputs("width: accumulated time of each call path (", out);
		put_clean(c, c->p->clock ? c->p->clock : "wall");
		fprintf(out, " clock), total %" PRIu64 " ns", c->total);
		if (c->nr_elided)
			fprintf(out, "; %zu call paths narrower than 0.1 px not drawn",
				c->nr_elided);
	}
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"reset\" class=\"button\" x=\"%d\" y=\"22\" "
		"style=\"opacity:0\">Reset Zoom</text>\n", SVG_PAD);
	fprintf(out, "<text id=\"search\" class=\"button\" x=\"%d\" y=\"22\" "
		"text-anchor=\"end\">Search</text>\n", SVG_WIDTH - SVG_PAD);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", SVG_PAD,
		height - 10);
	fprintf(out, "<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"> </text>\n",
		SVG_WIDTH - SVG_PAD, height - 10);
}

static int emit(const struct profile *p, const struct report_opts *ro, FILE *out)
{
	struct svg c = { .p = p, .out = out };
	const struct ct_thread **v = xcalloc(p->nr_threads + 1, sizeof(*v));
	struct {
		size_t first, nr;
		uint64_t width;
	} *tl;
	const char *note = NULL;
	int height;
	double x = SVG_PAD;

	(void)ro;
	errno = 0;
	c.names = xcalloc(p->nr_funcs + 1, sizeof(*c.names));
	erl_buf_init(&c.tmp);
	memcpy(v, p->threads, p->nr_threads * sizeof(*v));
	if (p->nr_threads)
		qsort(v, p->nr_threads, sizeof(*v), profile_thread_cmp);
	tl = xcalloc(p->nr_threads + 1, sizeof(*tl));
	for (size_t i = 0; i < p->nr_threads; i++) {
		size_t size;

		tl[i].first = layout_kids(&c, &v[i]->root, 1, &tl[i].nr, &tl[i].width, &size);
		c.total = add_sat(c.total, tl[i].width);
	}
	if (p->mode == CT_MODE_COUNT)
		note = "count mode records no call paths or times: nothing to draw "
		       "(see the folded or cprof reports)";
	else if (!c.total)
		note = "no recorded time: nothing to draw";
	if (note)
		c.max_depth = -1;
	c.scale = c.total ? (double)(SVG_WIDTH - 2 * SVG_PAD) / (double)c.total : 0;
	c.elide = p->nr_nodes > SVG_ELIDE_NODES;
	height = SVG_HEADER_H + (c.max_depth + 2) * SVG_FRAME_H + SVG_FOOTER_H;

	if (c.elide && !note)
		for (size_t i = 0; i < p->nr_threads; i++)
			c.nr_elided += count_elided(&c, tl[i].first, tl[i].nr);
	put_header(&c, height, note);
	if (!note) {
		put_frame(&c, "all", "all", NULL, NULL, c.total, x, SVG_WIDTH - 2 * SVG_PAD, 0,
			  "rgb(190,190,190)");
		for (size_t i = 0; i < p->nr_threads; i++) {
			const struct ct_thread *t = v[i];
			uint64_t acc = tl[i].width;
			double w = (double)acc * c.scale;
			char *label;

			erl_buf_reset(&c.tmp);
			clean_text(&c.tmp, t->comm ? t->comm : "unknown");
			label = xasprintf("%s %d/%d", erl_buf_str(&c.tmp), (int)t->pid,
					  (int)t->tid);
			put_frame(&c, "thread", label, NULL, NULL, acc, x, w, 1,
				  "rgb(215,215,215)");
			free(label);
			draw(&c, tl[i].first, tl[i].nr, x, 2);
			x += w;
		}
	}
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n"
		"var W = %d, PAD = %d, CW = %d;\n%s]]></script>\n",
		SVG_WIDTH - 2 * SVG_PAD, SVG_PAD, (int)SVG_CHAR_W, svg_script);
	fputs("</svg>\n", out);

	for (size_t i = 0; i <= p->nr_funcs; i++)
		free(c.names[i]);
	free(c.names);
	free(c.d);
	free(tl);
	free(v);
	erl_buf_fini(&c.tmp);

	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

const struct report_ops report_svg = {
	.name = "svg",
	.default_sort = REPORT_SORT_ACC,
	.shows_callers = true,
	.emit = emit,
};
