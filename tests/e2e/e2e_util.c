/* SPDX-License-Identifier: MIT */
/* e2e_util.c - helpers shared by the end-to-end runners check_e2e.c and check_real.c:
 * running a program and collecting its output, reading the JSON report and checking
 * its consistency, and tracing a fixture untraced and under calltrace. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_util.h"

/* ------------------------------------------------------------------ processes */

void buf_add(struct buf *b, const void *data, size_t len)
{
	if (b->len + len + 1 > b->cap) {
		b->cap = (b->len + len + 1) * 2;
		b->p = realloc(b->p, b->cap);
		ck_assert_ptr_nonnull(b->p);
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
	b->p[b->len] = '\0';
}

void run_free(struct run *r)
{
	free(r->out.p);
	free(r->err.p);
	memset(r, 0, sizeof(*r));
}

/* Run argv (argv[0] is a path, or a name looked up in PATH) in @cwd (NULL: ours) with
 * @in on stdin (NULL: empty), collecting stdout, stderr and status into @r (free with
 * run_free). The child gets SIGPIPE at its default and no core dumps. */
void run_argv(char *const argv[], const char *cwd, const char *in, size_t in_len,
	      struct run *r)
{
	int pin[2], pout[2], perr[2], st;
	size_t in_off = 0;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	buf_add(&r->out, "", 0);
	buf_add(&r->err, "", 0);
	ck_assert(pipe2(pin, O_CLOEXEC) == 0 && pipe2(pout, O_CLOEXEC) == 0 &&
		  pipe2(perr, O_CLOEXEC) == 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit no_core = { 0, 0 };

		dup2(pin[0], 0);
		dup2(pout[1], 1);
		dup2(perr[1], 2);
		signal(SIGPIPE, SIG_DFL);
		setrlimit(RLIMIT_CORE, &no_core);
		if (cwd && chdir(cwd) < 0)
			_exit(120);
		execvp(argv[0], argv);
		dprintf(2, "%s: cannot exec %s: %s\n", program_invocation_short_name,
			argv[0], strerror(errno));
		_exit(121);
	}
	close(pin[0]);
	close(pout[1]);
	close(perr[1]);
	if (!in || in_len == 0) {
		close(pin[1]);
		pin[1] = -1;
	} else {
		fcntl(pin[1], F_SETFL, O_NONBLOCK);
	}
	while (pout[0] >= 0 || perr[0] >= 0) {
		struct pollfd pfd[3] = { { pout[0], POLLIN, 0 }, { perr[0], POLLIN, 0 },
					 { pin[1], POLLOUT, 0 } };
		char chunk[65536];

		if (poll(pfd, 3, -1) < 0) {
			ck_assert_int_eq(errno, EINTR);
			continue;
		}
		for (int i = 0; i < 2; i++) {
			int *fd = i ? &perr[0] : &pout[0];
			ssize_t n;

			if (*fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(*fd, chunk, sizeof(chunk));
			if (n > 0) {
				buf_add(i ? &r->err : &r->out, chunk, (size_t)n);
			} else if (n == 0 || errno != EINTR) {
				close(*fd);
				*fd = -1;
			}
		}
		if (pin[1] >= 0 && (pfd[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t n = write(pin[1], in + in_off, in_len - in_off);

			if (n > 0)
				in_off += (size_t)n;
			if ((n < 0 && errno != EAGAIN && errno != EINTR) || in_off == in_len) {
				close(pin[1]);	/* done, or the reader is gone (EPIPE) */
				pin[1] = -1;
			}
		}
	}
	if (pin[1] >= 0)
		close(pin[1]);
	while (waitpid(pid, &st, 0) < 0)
		ck_assert_int_eq(errno, EINTR);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The first 600 bytes of calltrace's stderr, for failure messages. Borrowed from @r. */
const char *err_head(struct run *r)
{
	if (r->err.len > 600)
		r->err.p[600] = '\0';
	return r->err.p;
}

char *xstrdup(const char *s)
{
	char *d = strdup(s);

	ck_assert_ptr_nonnull(d);
	return d;
}

/* Read a whole file; caller owns the result (free). NULL if it cannot be read. */
char *read_file(const char *path, size_t *len)
{
	struct buf b = { 0 };
	char chunk[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	buf_add(&b, "", 0);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		buf_add(&b, chunk, (size_t)n);
	close(fd);
	if (len)
		*len = b.len;
	return b.p;
}

void write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	ck_assert_msg(fd >= 0, "cannot create %s: %s", path, strerror(errno));
	ck_assert(write(fd, data, len) == (ssize_t)len);
	ck_assert(fchmod(fd, mode) == 0);	/* whatever the umask */
	close(fd);
}

/* ------------------------------------------------------------------ JSON report */

long long jint(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return -1;
	return json_object_get_int64(v);
}

const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* Parse the JSON file @path; caller owns the result (json_object_put), NULL on error.
 * Call trees nest deeper than json-c's default limit of 32 (fib(20): ~45 levels). */
json_object *json_load(const char *path)
{
	size_t len;
	char *text = read_file(path, &len);
	struct json_tokener *tok = json_tokener_new_ex(100000);
	json_object *o = NULL;

	ck_assert_ptr_nonnull(tok);
	if (text && len > 0 && len < INT_MAX) {
		o = json_tokener_parse_ex(tok, text, (int)len);
		if (!o || json_tokener_get_error(tok) != json_tokener_success)
			fprintf(stderr, "%s: %s\n", path,
				json_tokener_error_desc(json_tokener_get_error(tok)));
	}
	json_tokener_free(tok);
	free(text);
	return o;
}

/* Borrowed array member @key of @o; fails the test if absent. */
json_object *jarr(json_object *o, const char *key)
{
	json_object *v;

	ck_assert_msg(json_object_object_get_ex(o, key, &v) &&
		      json_object_is_type(v, json_type_array),
		      "report: \"%s\" is missing or not an array", key);
	return v;
}

int name_is(json_object *o, const char *name)
{
	const char *n = jstr(o, "name");

	return n && strcmp(n, name) == 0;
}

/* First entry of functions[] named @name; borrowed from @root, NULL if none. */
json_object *fn_find(json_object *root, const char *name)
{
	json_object *fns = jarr(root, "functions");

	for (size_t i = 0; i < json_object_array_length(fns); i++)
		if (name_is(json_object_array_get_idx(fns, i), name))
			return json_object_array_get_idx(fns, i);
	return NULL;
}

/* Sum of calls of the entries named @name in the array @key of every function named
 * @owner (0 if none). */
long long list_calls(json_object *root, const char *owner, const char *key, const char *name)
{
	json_object *fns = jarr(root, "functions");
	long long sum = 0;

	for (size_t i = 0; i < json_object_array_length(fns); i++) {
		json_object *f = json_object_array_get_idx(fns, i), *l;

		if (!name_is(f, owner))
			continue;
		l = jarr(f, key);
		for (size_t j = 0; j < json_object_array_length(l); j++)
			if (name_is(json_object_array_get_idx(l, j), name))
				sum += jint(json_object_array_get_idx(l, j), "calls");
	}
	return sum;
}

/* Calls of every function named @name, summed (0 if absent). */
long long fn_calls(json_object *root, const char *name)
{
	json_object *fns = jarr(root, "functions");
	long long sum = 0;

	for (size_t i = 0; i < json_object_array_length(fns); i++)
		if (name_is(json_object_array_get_idx(fns, i), name))
			sum += jint(json_object_array_get_idx(fns, i), "calls");
	return sum;
}

/* Calls from @from to @to; the callees of @from and the callers of @to must agree. */
long long edge_calls(json_object *root, const char *from, const char *to)
{
	long long down = list_calls(root, from, "callees", to);
	long long up = list_calls(root, to, "callers", from);

	ck_assert_msg(down == up, "edge %s->%s: %lld in %s's callees, %lld in %s's callers",
		      from, to, down, from, up, to);
	return down;
}

/* Calls of the tree node at @path ("main/a/b", below the thread's 'undefined' root) in
 * the thread section @th; 0 if absent. */
long long thread_path_calls(json_object *th, const char *path)
{
	json_object *node, *kids;
	char *copy = xstrdup(path), *save = NULL;
	long long calls = 0;

	ck_assert(json_object_object_get_ex(th, "tree", &node));
	for (char *part = strtok_r(copy, "/", &save); part && node;
	     part = strtok_r(NULL, "/", &save)) {
		json_object *next = NULL;

		if (json_object_object_get_ex(node, "children", &kids))
			for (size_t i = 0; i < json_object_array_length(kids); i++)
				if (name_is(json_object_array_get_idx(kids, i), part))
					next = json_object_array_get_idx(kids, i);
		node = next;
	}
	if (node)
		calls = jint(node, "calls");
	free(copy);
	return calls;
}

/* Calls of the tree node at @path, summed over threads; 0 if no thread has it. */
long long tree_path_calls(json_object *root, const char *path)
{
	json_object *threads = jarr(root, "threads");
	long long sum = 0;

	for (size_t t = 0; t < json_object_array_length(threads); t++)
		sum += thread_path_calls(json_object_array_get_idx(threads, t), path);
	return sum;
}

static int same_module(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

void tally_add(struct tally *t, const char *name, const char *module, long long n)
{
	for (size_t i = 0; i < t->nr; i++)
		if (strcmp(t->v[i].name, name) == 0 && same_module(t->v[i].module, module)) {
			t->v[i].n += n;
			return;
		}
	if (t->nr == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->v = realloc(t->v, t->cap * sizeof(*t->v));
		ck_assert_ptr_nonnull(t->v);
	}
	t->v[t->nr++] = (struct name_count){ name, module, n };
}

/* Calls of @name in @module; with @module NULL, in every module together. */
long long tally_get_in(const struct tally *t, const char *name, const char *module)
{
	long long sum = 0;

	for (size_t i = 0; i < t->nr; i++)
		if (strcmp(t->v[i].name, name) == 0 &&
		    (!module || same_module(t->v[i].module, module)))
			sum += t->v[i].n;
	return sum;
}

long long tally_get(const struct tally *t, const char *name)
{
	return tally_get_in(t, name, NULL);
}

void tally_tree(struct tally *t, json_object *node)
{
	json_object *kids;
	const char *name = jstr(node, "name");

	ck_assert_msg(name, "report: tree node without a name");
	ck_assert_msg(jint(node, "calls") >= 0, "report: tree node %s: bad calls", name);
	tally_add(t, name, jstr(node, "module"), jint(node, "calls"));
	if (json_object_object_get_ex(node, "children", &kids))
		for (size_t i = 0; i < json_object_array_length(kids); i++)
			tally_tree(t, json_object_array_get_idx(kids, i));
}

/* Checks every report must pass: each thread's tree is rooted at 'undefined'; per
 * function (name and module), the tree nodes' calls add up to functions[].calls; a
 * function's callers add up to its calls (root calls, the children of 'undefined',
 * aside) and never name 'undefined'; times are non-negative integers. */
void check_consistency(json_object *root)
{
	json_object *fns = jarr(root, "functions"), *threads = jarr(root, "threads");
	struct tally tree = { 0 }, roots = { 0 }, table = { 0 };

	ck_assert_msg(json_object_array_length(threads) > 0, "report: no threads");
	for (size_t t = 0; t < json_object_array_length(threads); t++) {
		json_object *th = json_object_array_get_idx(threads, t), *top, *kids;

		ck_assert_msg(json_object_object_get_ex(th, "tree", &top), "thread without tree");
		ck_assert_msg(name_is(top, "undefined"), "tree root is not 'undefined'");
		if (!json_object_object_get_ex(top, "children", &kids))
			continue;
		for (size_t i = 0; i < json_object_array_length(kids); i++) {
			json_object *k = json_object_array_get_idx(kids, i);

			tally_add(&roots, jstr(k, "name"), jstr(k, "module"), jint(k, "calls"));
			tally_tree(&tree, k);
		}
	}
	for (size_t i = 0; i < json_object_array_length(fns); i++) {
		json_object *f = json_object_array_get_idx(fns, i), *callers = jarr(f, "callers");
		const char *name = jstr(f, "name"), *module = jstr(f, "module");
		long long calls = jint(f, "calls"), from_callers = 0;

		ck_assert_msg(name && calls >= 0, "report: function %zu without name/calls", i);
		tally_add(&table, name, module, calls);
		for (size_t j = 0; j < json_object_array_length(callers); j++) {
			json_object *c = json_object_array_get_idx(callers, j);

			ck_assert_msg(!name_is(c, "undefined"),
				      "%s: callers list the pseudo caller 'undefined'", name);
			from_callers += jint(c, "calls");
		}
		ck_assert_msg(from_callers + tally_get_in(&roots, name, module) == calls,
			      "%s (%s): %lld calls but callers account for %lld (+%lld as root)",
			      name, module, calls, from_callers,
			      tally_get_in(&roots, name, module));
		for (int k = 0; k < 2; k++) {
			const char *key = k ? "acc_ns" : "own_ns";
			json_object *v;

			/* absent or null in count mode */
			if (json_object_object_get_ex(f, key, &v) && v)
				ck_assert_msg(json_object_is_type(v, json_type_int) &&
					      json_object_get_int64(v) >= 0,
					      "%s: %s is not a non-negative integer", name, key);
		}
	}
	for (size_t i = 0; i < table.nr; i++) {
		const struct name_count *c = &table.v[i];

		ck_assert_msg(tally_get_in(&tree, c->name, c->module) == c->n,
			      "%s (%s): functions[] says %lld calls, the thread trees %lld",
			      c->name, c->module, c->n, tally_get_in(&tree, c->name, c->module));
	}
	for (size_t i = 0; i < tree.nr; i++) {
		const struct name_count *c = &tree.v[i];

		ck_assert_msg(tally_get_in(&table, c->name, c->module) == c->n,
			      "%s (%s): in the thread trees but not (or less) in functions[]",
			      c->name, c->module);
	}
	free(tree.v);
	free(roots.v);
	free(table.v);
}

void expect_counts(json_object *root, const struct count *c, const struct edge *e)
{
	for (; c && c->name; c++)
		ck_assert_msg(fn_calls(root, c->name) == c->calls, "calls of %s: %lld, expected %lld",
			      c->name, fn_calls(root, c->name), c->calls);
	for (; e && e->from; e++)
		ck_assert_msg(edge_calls(root, e->from, e->to) == e->calls,
			      "calls %s->%s: %lld, expected %lld", e->from, e->to,
			      edge_calls(root, e->from, e->to), e->calls);
}

/* ------------------------------------------------------------------ traced runs */

void traced_free(struct traced *t)
{
	run_free(&t->plain);
	run_free(&t->traced);
	json_object_put(t->report);
}

/* Run fixture @name with @args (NULL-terminated, may be NULL) and stdin @in, untraced and
 * under `calltrace OPTS --format json -o TMP --` (@opts NULL-terminated, may be NULL).
 * Asserts the untraced status is @want_status, that both runs print the same stdout
 * bytes and end with the same status, and that the report parses and is consistent.
 * Caller frees @t (traced_free). */
void trace_fixture(const char *name, const char *const *opts, const char *const *args,
		   const char *in, size_t in_len, int want_status, struct traced *t)
{
	char path[4096], json_path[] = "/tmp/calltrace-e2e-XXXXXX";
	char *argv[48];
	int n = 0, fd;
	size_t nr_args = 0, nr_opts = 0;

	memset(t, 0, sizeof(*t));
	snprintf(path, sizeof(path), "%s/%s", CT_FIXTURE_DIR, name);
	while (args && args[nr_args])
		nr_args++;
	while (opts && opts[nr_opts])
		nr_opts++;
	ck_assert(nr_args < 20 && nr_opts < 16);

	argv[n++] = path;
	for (size_t i = 0; i < nr_args; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	run_argv(argv, NULL, in, in_len, &t->plain);
	ck_assert_msg(t->plain.status == want_status, "%s untraced: status %d, expected %d",
		      name, t->plain.status, want_status);

	fd = mkstemp(json_path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	n = 0;
	argv[n++] = CT_CALLTRACE;
	for (size_t i = 0; i < nr_opts; i++)
		argv[n++] = (char *)opts[i];
	argv[n++] = "--format";
	argv[n++] = "json";
	argv[n++] = "-o";
	argv[n++] = json_path;
	argv[n++] = "--";
	argv[n++] = path;
	for (size_t i = 0; i < nr_args; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	run_argv(argv, NULL, in, in_len, &t->traced);

	ck_assert_msg(t->traced.status == t->plain.status,
		      "%s: traced status %d, untraced %d; calltrace stderr:\n%s", name,
		      t->traced.status, t->plain.status, err_head(&t->traced));
	ck_assert_msg(t->traced.out.len == t->plain.out.len &&
		      memcmp(t->traced.out.p, t->plain.out.p, t->plain.out.len) == 0,
		      "%s: stdout differs: traced %zu bytes \"%.300s\", untraced %zu bytes "
		      "\"%.300s\"", name, t->traced.out.len, t->traced.out.p, t->plain.out.len,
		      t->plain.out.p);
	t->report = json_load(json_path);
	unlink(json_path);
	ck_assert_msg(t->report, "%s: no parseable JSON report; calltrace stderr:\n%s", name,
		      err_head(&t->traced));
	check_consistency(t->report);
}

/* ------------------------------------------------------------------ misc */

/* The number printed after @key in @text, or -1. */
long long number_after(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

TCase *tcase(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, TEST_TIMEOUT);
	suite_add_tcase(s, tc);
	return tc;
}

/* Can this process trace a child? (Denied under some container seccomp profiles.) */
int ptrace_permitted(void)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return 0;
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(1);
		raise(SIGSTOP);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) < 0)
		return 0;
	if (WIFSTOPPED(st)) {
		ptrace(PTRACE_CONT, pid, NULL, NULL);
		if (waitpid(pid, &st, 0) < 0)
			return 0;
	}
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}
