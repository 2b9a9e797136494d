/* SPDX-License-Identifier: MIT */
/* check_real.c - end-to-end tests for "real programs": threads (joined, detached,
 * exiting while others run), fork/vfork/exec, signal handlers and the program's own
 * SIGTRAPs, SIGSTOP/SIGCONT, longjmp, C++ exceptions, forced unwinding, backtrace(),
 * abort(), shared libraries (--lib, constructors, -z now, dlopen/dlclose), and attach
 * (-p, -d, SIGINT, SIGTERM). Like check_e2e.c, each fixture (fixtures/<name>.c, whose
 * opening comment gives its exact call counts) runs untraced and under calltrace with
 * `--format json -o FILE`: same stdout bytes, same status, exact counts in the report.
 * Suites: real_fixtures (the fixtures alone), real_trace, real_attach, real_errors.
 * Select with CK_RUN_SUITE / CK_RUN_CASE; CK_FORK=no to debug in gdb.
 * Exits 77 (skip) when ptrace is not permitted, after running the suites that need none.
 * The helpers shared with check_e2e.c are in e2e_util.c. */
#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "e2e_util.h"

/* ------------------------------------------------------------------ more report helpers */

/* The function named @name in module @module; borrowed from @root, NULL if none. */
static json_object *fn_find_in(json_object *root, const char *name, const char *module)
{
	json_object *fns = jarr(root, "functions");

	for (size_t i = 0; i < json_object_array_length(fns); i++) {
		json_object *f = json_object_array_get_idx(fns, i);
		const char *m = jstr(f, "module");

		if (name_is(f, name) && m && strcmp(m, module) == 0)
			return f;
	}
	return NULL;
}

/* Module of the first function named @name; "(no such function)" if there is none. */
static const char *fn_module(json_object *root, const char *name)
{
	json_object *f = fn_find(root, name);
	const char *m = f ? jstr(f, "module") : NULL;

	return f ? (m ? m : "(no module)") : "(no such function)";
}

/* Number of functions[] entries whose module is @module. */
static size_t fns_in_module(json_object *root, const char *module)
{
	json_object *fns = jarr(root, "functions");
	size_t nr = 0;

	for (size_t i = 0; i < json_object_array_length(fns); i++) {
		const char *m = jstr(json_object_array_get_idx(fns, i), "module");

		nr += m && strcmp(m, module) == 0;
	}
	return nr;
}

/* Number of distinct pids among the thread sections. */
static size_t nr_pids(json_object *root)
{
	json_object *threads = jarr(root, "threads");
	size_t n = json_object_array_length(threads), nr = 0;

	for (size_t i = 0; i < n; i++) {
		long long pid = jint(json_object_array_get_idx(threads, i), "pid");
		size_t j;

		for (j = 0; j < i; j++)
			if (jint(json_object_array_get_idx(threads, j), "pid") == pid)
				break;
		nr += j == i;
	}
	return nr;
}

/* Per-name calls of every node of the thread section @th into @t. */
static void tally_thread(struct tally *t, json_object *th)
{
	json_object *top, *kids;

	ck_assert(json_object_object_get_ex(th, "tree", &top));
	if (json_object_object_get_ex(top, "children", &kids))
		for (size_t i = 0; i < json_object_array_length(kids); i++)
			tally_tree(t, json_object_array_get_idx(kids, i));
}

/* Fails unless every function in the thread's tree is one of @names (NULL-terminated).
 * Pseudo functions (module "", such as fprof's 'suspend') are not calls: skipped. */
static void thread_only(json_object *th, const struct tally *t, const char *const *names)
{
	for (size_t i = 0; i < t->nr; i++) {
		const char *const *n = names;

		if (t->v[i].module && t->v[i].module[0] == '\0')
			continue;
		while (*n && strcmp(*n, t->v[i].name) != 0)
			n++;
		ck_assert_msg(*n, "thread %lld: its tree names %s, which it never called",
			      jint(th, "tid"), t->v[i].name);
	}
}

/* ------------------------------------------------------------------ live processes */

/* A child we talk to while it runs (the program under test, or calltrace). */
struct proc {
	pid_t pid;
	int in, out, err;		/* our ends of its stdin/stdout/stderr; -1 if closed */
	struct buf obuf, ebuf;		/* what it has written so far */
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Start argv with pipes on fds 0-2. The child gets default dispositions for the signals
 * the tests send, no core dumps, and SIGKILL when this process dies (PR_SET_PDEATHSIG,
 * kept across exec), so a failed or timed-out test leaves no spinner behind. */
static void proc_start(char *const argv[], struct proc *p)
{
	int pin[2], pout[2], perr[2];

	memset(p, 0, sizeof(*p));
	buf_add(&p->obuf, "", 0);
	buf_add(&p->ebuf, "", 0);
	ck_assert(pipe2(pin, O_CLOEXEC) == 0 && pipe2(pout, O_CLOEXEC) == 0 &&
		  pipe2(perr, O_CLOEXEC) == 0);
	p->pid = fork();
	ck_assert_int_ge(p->pid, 0);
	if (p->pid == 0) {
		static const int dfl[] = { SIGPIPE, SIGINT, SIGTERM, SIGUSR1, SIGCHLD };
		struct rlimit no_core = { 0, 0 };
		sigset_t none;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(pin[0], 0);
		dup2(pout[1], 1);
		dup2(perr[1], 2);
		for (size_t i = 0; i < sizeof(dfl) / sizeof(dfl[0]); i++)
			signal(dfl[i], SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setrlimit(RLIMIT_CORE, &no_core);
		execvp(argv[0], argv);
		dprintf(2, "check_real: cannot exec %s: %s\n", argv[0], strerror(errno));
		_exit(121);
	}
	close(pin[0]);
	close(pout[1]);
	close(perr[1]);
	p->in = pin[1];
	p->out = pout[0];
	p->err = perr[0];
}

/* Read what is available on stdout/stderr, waiting at most @timeout_ms for something. */
static void proc_pump(struct proc *p, int timeout_ms)
{
	struct pollfd pfd[2] = { { p->out, POLLIN, 0 }, { p->err, POLLIN, 0 } };
	char chunk[65536];

	if (p->out < 0 && p->err < 0)
		return;
	if (poll(pfd, 2, timeout_ms) < 0) {
		ck_assert_int_eq(errno, EINTR);
		return;
	}
	for (int i = 0; i < 2; i++) {
		int *fd = i ? &p->err : &p->out;
		ssize_t n;

		if (*fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(*fd, chunk, sizeof(chunk));
		if (n > 0) {
			buf_add(i ? &p->ebuf : &p->obuf, chunk, (size_t)n);
		} else if (n == 0 || errno != EINTR) {
			close(*fd);
			*fd = -1;
		}
	}
}

/* Wait until @needle shows up in the child's stdout (@on_err: stderr); 1 if it did
 * within @timeout_ms, 0 if not. */
static int proc_wait_for(struct proc *p, int on_err, const char *needle, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	struct buf *b = on_err ? &p->ebuf : &p->obuf;

	while (!strstr(b->p, needle)) {
		long long left = deadline - now_ms();

		if (left <= 0 || (p->out < 0 && p->err < 0))
			return strstr(b->p, needle) != NULL;
		proc_pump(p, (int)(left < 100 ? left : 100));
	}
	return 1;
}

static void proc_write(struct proc *p, const char *s)
{
	ck_assert_int_ge(p->in, 0);
	ck_assert(write(p->in, s, strlen(s)) == (ssize_t)strlen(s));
}

/* Close its stdin, collect its output until EOF and reap it; its status (exit code or
 * 128+N). If it has not finished after @timeout_ms it is killed and the test fails. */
static int proc_finish(struct proc *p, int timeout_ms, const char *what)
{
	long long deadline = now_ms() + timeout_ms;
	int st;
	pid_t r;

	if (p->in >= 0)
		close(p->in);
	p->in = -1;
	for (;;) {
		r = waitpid(p->pid, &st, WNOHANG);
		if (r == p->pid && p->out < 0 && p->err < 0)
			break;
		if (r == p->pid) {	/* exited; drain the rest (a grandchild may hold the pipes) */
			long long drain = now_ms() + 2000;

			while ((p->out >= 0 || p->err >= 0) && now_ms() < drain)
				proc_pump(p, 100);
			break;
		}
		ck_assert_int_eq(r, 0);
		if (now_ms() > deadline) {
			kill(p->pid, SIGKILL);
			waitpid(p->pid, &st, 0);
			ck_abort_msg("%s did not finish within %d ms; stdout \"%.300s\", stderr "
				     "\"%.600s\"", what, timeout_ms, p->obuf.p, p->ebuf.p);
		}
		proc_pump(p, 50);
	}
	if (p->out >= 0)
		close(p->out);
	if (p->err >= 0)
		close(p->err);
	p->out = p->err = -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void proc_free(struct proc *p)
{
	free(p->obuf.p);
	free(p->ebuf.p);
	memset(p, 0, sizeof(*p));
}

/* State letter of /proc/@pid/stat ('R', 'S', 'T', 't', 'Z', ...); 0 if no such process. */
static char proc_state(pid_t pid)
{
	char path[64], *text, *paren, state = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	text = read_file(path, NULL);
	if (!text)
		return 0;
	paren = strrchr(text, ')');	/* comm may contain spaces and parentheses */
	if (paren && paren[1] == ' ')
		state = paren[2];
	free(text);
	return state;
}

/* Wait until /proc/@pid/status shows a tracer; 1 if it did within @timeout_ms. */
static int wait_traced(pid_t pid, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	do {
		char *text = read_file(path, NULL);
		long long tracer = text ? number_after(text, "TracerPid:") : -1;

		free(text);
		if (tracer > 0)
			return 1;
		sleep_ms(10);
	} while (now_ms() < deadline);
	return 0;
}

/* A fresh temporary path for a report; the file does not exist yet. */
static void tmp_report(char *path, size_t size)
{
	int fd;

	snprintf(path, size, "/tmp/calltrace-real-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(path);
}

/* Load the report at @path (then remove it); fails the test if there is none. */
static json_object *load_report(const char *path, const char *what, const char *ct_err)
{
	json_object *o = json_load(path);

	unlink(path);
	ck_assert_msg(o, "%s: no parseable JSON report at %s; calltrace stderr:\n%.600s", what,
		      path, ct_err);
	check_consistency(o);
	return o;
}

/* ------------------------------------------------------------------ threads */

static int cmp_ll(const void *l, const void *r)
{
	long long x = *(const long long *)l, y = *(const long long *)r;

	return (x > y) - (x < y);
}

/* One thread section per thread (7), each tree holding only what that thread called;
 * workers and the other threads are spawned by the main thread and recorded from their
 * start routine; the detached ticker, still running at exit, has tick >= 1. */
START_TEST(threads4_per_thread)
{
	static const struct count c[] = { { "main", 1 }, { "setup", 1 }, { "worker", 4 },
					  { "work", 1000 }, { "brief", 1 }, { "quick", 3 },
					  { "ticker", 1 }, END_COUNTS };
	static const struct edge e[] = { { "main", "setup", 1 }, { "worker", "work", 1000 },
					 { "brief", "quick", 3 }, { "main", "worker", 0 },
					 { "main", "work", 0 }, { "main", "brief", 0 },
					 { "main", "ticker", 0 }, END_EDGES };
	static const char *const main_names[] = { "main", "setup", NULL };
	static const char *const worker_names[] = { "worker", "work", NULL };
	static const char *const brief_names[] = { "brief", "quick", NULL };
	static const char *const ticker_names[] = { "ticker", "tick", NULL };
	struct traced t;
	json_object *threads, *main_th = NULL;
	long long ticks, works[4], nr_works = 0;
	int nr_brief = 0, nr_ticker = 0;
	char main_ref[64];

	trace_fixture("threads4", NULL, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, "workers done: 1000 calls\n");
	expect_counts(t.report, c, e);
	ticks = fn_calls(t.report, "tick");
	ck_assert_msg(ticks >= 1, "tick: %lld calls, expected at least 1", ticks);
	ck_assert_int_eq(edge_calls(t.report, "ticker", "tick"), ticks);

	threads = jarr(t.report, "threads");
	ck_assert_msg(json_object_array_length(threads) == 7,
		      "%zu thread sections, expected 7 (main, ticker, 4 workers, brief)",
		      json_object_array_length(threads));
	for (size_t i = 0; i < 7; i++) {
		json_object *th = json_object_array_get_idx(threads, i);

		if (thread_path_calls(th, "main") > 0) {
			ck_assert_msg(!main_th, "two thread sections call main");
			main_th = th;
		}
	}
	ck_assert_msg(main_th, "no thread section calls main");
	ck_assert_int_eq(jint(main_th, "pid"), jint(main_th, "tid"));
	ck_assert_msg(jstr(main_th, "spawned_by") == NULL, "main thread: spawned_by \"%s\"",
		      jstr(main_th, "spawned_by"));
	snprintf(main_ref, sizeof(main_ref), "<%lld.%lld>", jint(main_th, "pid"),
		 jint(main_th, "tid"));

	for (size_t i = 0; i < 7; i++) {
		json_object *th = json_object_array_get_idx(threads, i), *as;
		struct tally tl = { 0 };
		const char *by = jstr(th, "spawned_by");

		tally_thread(&tl, th);
		if (th == main_th) {
			thread_only(th, &tl, main_names);
			ck_assert_int_eq(thread_path_calls(th, "main"), 1);
			ck_assert_int_eq(thread_path_calls(th, "main/setup"), 1);
			free(tl.v);
			continue;
		}
		ck_assert_int_eq(jint(th, "pid"), jint(main_th, "pid"));
		ck_assert_msg(jint(th, "tid") != jint(th, "pid"),
			      "a second section for the main thread");
		ck_assert_msg(by && strcmp(by, main_ref) == 0,
			      "thread %lld: spawned_by \"%s\", expected \"%s\"", jint(th, "tid"),
			      by ? by : "(null)", main_ref);
		/* spawned_as (the start routine) is optional; when set, it must be right */
		if (!json_object_object_get_ex(th, "spawned_as", &as))
			as = NULL;
		if (tally_get(&tl, "worker")) {
			thread_only(th, &tl, worker_names);
			ck_assert(!as || name_is(as, "worker"));
			ck_assert_int_eq(thread_path_calls(th, "worker"), 1);
			ck_assert_int_lt(nr_works, 4);
			works[nr_works] = thread_path_calls(th, "worker/work");
			ck_assert_int_eq(tally_get(&tl, "work"), works[nr_works]);
			nr_works++;
		} else if (tally_get(&tl, "brief")) {
			thread_only(th, &tl, brief_names);
			ck_assert(!as || name_is(as, "brief"));
			ck_assert_int_eq(thread_path_calls(th, "brief/quick"), 3);
			nr_brief++;
		} else if (tally_get(&tl, "ticker")) {
			thread_only(th, &tl, ticker_names);
			ck_assert(!as || name_is(as, "ticker"));
			ck_assert_int_eq(thread_path_calls(th, "ticker"), 1);
			ck_assert_int_eq(thread_path_calls(th, "ticker/tick"), ticks);
			nr_ticker++;
		} else {
			ck_abort_msg("thread %lld: a tree with no start routine (%zu names)",
				     jint(th, "tid"), tl.nr);
		}
		free(tl.v);
	}
	ck_assert_int_eq(nr_works, 4);
	ck_assert_int_eq(nr_brief, 1);
	ck_assert_int_eq(nr_ticker, 1);
	qsort(works, 4, sizeof(works[0]), cmp_ll);
	for (int i = 0; i < 4; i++)
		ck_assert_msg(works[i] == 100 * (i + 1),
			      "per-thread work counts %lld %lld %lld %lld, expected 100 200 300 400",
			      works[0], works[1], works[2], works[3]);
	traced_free(&t);
}
END_TEST

/* pthread_exit at depth 2 and pthread_cancel in a cancellation point at depth 2: both
 * unwind traced frames with the unwinder. */
START_TEST(thrunwind_exit_cancel)
{
	static const struct count c[] = { { "main", 1 }, { "px_start", 1 }, { "px_inner", 1 },
					  { "px_leaf", 3 }, { "cx_start", 1 }, { "cx_wait", 1 },
					  { "cx_cleanup", 1 }, { "after_join", 1 }, END_COUNTS };
	static const struct edge e[] = { { "px_start", "px_inner", 1 },
					 { "px_inner", "px_leaf", 3 }, { "cx_start", "cx_wait", 1 },
					 { "main", "after_join", 1 }, END_EDGES };
	struct traced t;

	trace_fixture("thrunwind", NULL, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, "exit value 42\ncanceled yes\ncleanups 1\n");
	expect_counts(t.report, c, e);
	ck_assert_int_eq(json_object_array_length(jarr(t.report, "threads")), 3);
	ck_assert_int_eq(tree_path_calls(t.report, "px_start/px_inner/px_leaf"), 3);
	ck_assert_int_eq(tree_path_calls(t.report, "main/after_join"), 1);
	traced_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ fork, vfork, exec */

static const char *const follow_forks[] = { "--follow-forks", NULL };

#define FORKER_OUT "parent: forking\nchild: 5 works\nparent: child exited 7\n"

/* Not followed: the child is a copy of a process with breakpoints in it, yet it must run
 * unharmed (its status 7 reaches the parent) and nothing of it is counted. */
START_TEST(forker_default)
{
	static const struct count c[] = { { "main", 1 }, { "parent_work", 3 }, { "in_child", 0 },
					  { "child_work", 0 }, END_COUNTS };
	static const struct edge e[] = { { "main", "parent_work", 3 }, END_EDGES };
	struct traced t;

	trace_fixture("forker", NULL, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, FORKER_OUT);
	expect_counts(t.report, c, e);
	ck_assert_int_eq(nr_pids(t.report), 1);
	traced_free(&t);
}
END_TEST

/* Followed: one more process section; counts summed over both processes. */
START_TEST(forker_follow)
{
	static const struct count c[] = { { "main", 1 }, { "parent_work", 3 }, { "in_child", 1 },
					  { "child_work", 5 }, END_COUNTS };
	static const struct edge e[] = { { "main", "parent_work", 3 },
					 { "in_child", "child_work", 5 }, END_EDGES };
	struct traced t;
	json_object *threads;
	long long parent_pid = -1;
	int nr_child = 0;

	trace_fixture("forker", follow_forks, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, FORKER_OUT);
	expect_counts(t.report, c, e);
	ck_assert_int_eq(nr_pids(t.report), 2);
	threads = jarr(t.report, "threads");
	ck_assert_int_eq(json_object_array_length(threads), 2);
	for (size_t i = 0; i < 2; i++) {
		json_object *th = json_object_array_get_idx(threads, i);

		if (!jstr(th, "spawned_by"))
			parent_pid = jint(th, "pid");
	}
	ck_assert_msg(parent_pid > 0, "no section without spawned_by (the parent)");
	for (size_t i = 0; i < 2; i++) {
		json_object *th = json_object_array_get_idx(threads, i);
		const char *by = jstr(th, "spawned_by");
		char want[64];

		if (!by)
			continue;
		snprintf(want, sizeof(want), "<%lld.%lld>", parent_pid, parent_pid);
		ck_assert_str_eq(by, want);
		ck_assert_int_ne(jint(th, "pid"), parent_pid);
		nr_child++;
	}
	ck_assert_int_eq(nr_child, 1);
	traced_free(&t);
}
END_TEST

#define VFORKER_OUT "true: 0\nfib(6) = 8\nrecursion: 0\n"

START_TEST(vforker_default)
{
	static const struct count c[] = { { "main", 1 }, { "before", 2 }, { "spawn", 2 },
					  { "after", 1 }, { "fib", 0 }, END_COUNTS };
	static const struct edge e[] = { { "main", "before", 2 }, { "main", "spawn", 2 },
					 { "main", "after", 1 }, END_EDGES };
	struct traced t;

	trace_fixture("vforker", NULL, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, VFORKER_OUT);
	expect_counts(t.report, c, e);
	ck_assert_int_eq(nr_pids(t.report), 1);
	traced_free(&t);
}
END_TEST

/* Followed: the vfork child that execs recursion 6 is traced (fib 25, its own main).
 * /bin/true has no symbols; a tracer that finds its main from the entry point counts
 * that main once too. */
START_TEST(vforker_follow)
{
	static const struct count c[] = { { "before", 2 }, { "spawn", 2 }, { "after", 1 },
					  { "fib", 25 }, END_COUNTS };
	static const struct edge e[] = { { "main", "before", 2 }, { "main", "spawn", 2 },
					 { "main", "after", 1 }, { "main", "fib", 1 },
					 { "fib", "fib", 24 }, END_EDGES };
	struct traced t;
	json_object *m1, *m2;
	long long others;

	trace_fixture("vforker", follow_forks, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, VFORKER_OUT);
	expect_counts(t.report, c, e);
	m1 = fn_find_in(t.report, "main", "vforker");
	m2 = fn_find_in(t.report, "main", "recursion");
	ck_assert_msg(m1 && m2, "main of module vforker %s, of module recursion %s",
		      m1 ? "found" : "missing", m2 ? "found" : "missing");
	ck_assert_int_eq(jint(m1, "calls"), 1);
	ck_assert_int_eq(jint(m2, "calls"), 1);
	/* /bin/true's main, if found (its module is "true", or a multi-call binary's name) */
	others = fn_calls(t.report, "main") - 2;
	ck_assert_msg(others == 0 || others == 1, "main of /bin/true counted %lld times", others);
	ck_assert_str_eq(fn_module(t.report, "fib"), "recursion");
	ck_assert_int_ge(nr_pids(t.report), 2);
	traced_free(&t);
}
END_TEST

/* exec in the same process: the report goes on with the new image (main once per
 * image, told apart by module). */
START_TEST(execer_counts)
{
	static const struct count c[] = { { "main", 2 }, { "a", 3 }, { "fib", 177 }, END_COUNTS };
	static const struct edge e[] = { { "main", "a", 3 }, { "main", "fib", 1 },
					 { "fib", "fib", 176 }, END_EDGES };
	struct traced t;
	json_object *m1, *m2;

	trace_fixture("execer", NULL, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, "execer: a x3\nfib(10) = 55\n");
	expect_counts(t.report, c, e);
	m1 = fn_find_in(t.report, "main", "execer");
	m2 = fn_find_in(t.report, "main", "recursion");
	ck_assert_msg(m1 && m2, "main of module execer %s, of module recursion %s",
		      m1 ? "found" : "missing", m2 ? "found" : "missing");
	ck_assert_int_eq(jint(m1, "calls"), 1);
	ck_assert_int_eq(jint(m2, "calls"), 1);
	ck_assert_str_eq(fn_module(t.report, "a"), "execer");
	ck_assert_str_eq(fn_module(t.report, "fib"), "recursion");
	ck_assert_int_eq(nr_pids(t.report), 1);
	traced_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ signals */

START_TEST(signals_handlers)
{
	static const struct count c[] = { { "main", 1 }, { "handle", 3 }, { "fire_usr1", 1 },
					  { "on_usr1", 3 },
					  { "trap_raise", 1 }, { "trap_int3", 1 }, { "on_trap", 4 },
					  { "d1", 1 }, { "d2", 1 }, { "d3", 1 }, { "on_usr2", 1 },
					  { "alt_leaf", 2 }, END_COUNTS };
	static const struct edge e[] = { { "main", "handle", 3 }, { "main", "fire_usr1", 1 },
					 { "fire_usr1", "on_usr1", 3 },
					 { "main", "trap_raise", 1 }, { "main", "trap_int3", 1 },
					 { "trap_raise", "on_trap", 2 },
					 { "trap_int3", "on_trap", 2 },
					 { "main", "d1", 1 }, { "d1", "d2", 1 }, { "d2", "d3", 1 },
					 { "d3", "on_usr2", 1 }, { "on_usr2", "alt_leaf", 2 },
					 END_EDGES };
	struct traced t;

	trace_fixture("signals", NULL, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, "usr1 3\ntrap 2\nint3 4\nusr2 on altstack 1, leaf 2\n");
	expect_counts(t.report, c, e);
	ck_assert_int_eq(tree_path_calls(t.report, "main/fire_usr1/on_usr1"), 3);
	ck_assert_int_eq(tree_path_calls(t.report, "main/d1/d2/d3/on_usr2/alt_leaf"), 2);
	traced_free(&t);
}
END_TEST

/* SIGSTOP from outside while the program is blocked in read() inside a traced function:
 * it stops (the stop is not swallowed: input written meanwhile is not consumed), and
 * after SIGCONT it goes on and ends as it would untraced. */
START_TEST(stopwait_stop_cont)
{
	char json_path[64];
	char *plain_argv[] = { FIX("stopwait"), NULL };
	char *argv[] = { CT_CALLTRACE, "--format", "json", "-o", json_path, "--", FIX("stopwait"),
			 NULL };
	static const struct count c[] = { { "main", 1 }, { "before", 1 }, { "wait_line", 1 },
					  { "after", 2 }, END_COUNTS };
	static const struct edge e[] = { { "main", "before", 1 }, { "main", "wait_line", 1 },
					 { "main", "after", 2 }, END_EDGES };
	struct run plain;
	struct proc ct;
	json_object *report;
	long long pid, deadline;
	char state = 0;
	int status;

	run_argv(plain_argv, NULL, "hello\n", 6, &plain);
	ck_assert_int_eq(plain.status, 0);
	ck_assert_str_eq(plain.out.p, "before\ngot: hello\n");

	tmp_report(json_path, sizeof(json_path));
	proc_start(argv, &ct);
	ck_assert_msg(proc_wait_for(&ct, 1, "stopwait: pid ", 30000) &&
		      proc_wait_for(&ct, 1, "\n", 1000),
		      "no pid line from stopwait under calltrace: %.600s", ct.ebuf.p);
	pid = number_after(ct.ebuf.p, "stopwait: pid ");
	ck_assert_int_gt(pid, 0);
	ck_assert_msg(proc_wait_for(&ct, 0, "before\n", 30000), "no \"before\" line");
	sleep_ms(200);			/* now blocked in read(2) in wait_line */
	ck_assert_int_eq(kill((pid_t)pid, SIGSTOP), 0);
	for (deadline = now_ms() + 3000; now_ms() < deadline; sleep_ms(20)) {
		state = proc_state((pid_t)pid);
		if (state == 'T' || state == 't')
			break;
	}
	ck_assert_msg(state == 'T' || state == 't', "after SIGSTOP the program is in state '%c'",
		      state ? state : '?');
	proc_write(&ct, "hello\n");
	sleep_ms(300);
	proc_pump(&ct, 0);
	ck_assert_msg(strcmp(ct.obuf.p, "before\n") == 0,
		      "the program ran on while stopped: stdout \"%s\"", ct.obuf.p);
	ck_assert_int_eq(kill((pid_t)pid, SIGCONT), 0);
	status = proc_finish(&ct, 60000, "calltrace stopwait");
	ck_assert_msg(status == 0, "status %d; calltrace stderr:\n%.600s", status, ct.ebuf.p);
	ck_assert_str_eq(ct.obuf.p, plain.out.p);
	report = load_report(json_path, "stopwait", ct.ebuf.p);
	expect_counts(report, c, e);
	json_object_put(report);
	proc_free(&ct);
	run_free(&plain);
}
END_TEST

/* ------------------------------------------------------------------ non-local exits */

START_TEST(jumps_longjmp)
{
	static const struct count c[] = { { "main", 1 }, { "j1", 3 }, { "j2", 3 }, { "j3", 3 },
					  { "j4", 3 }, { "after_jump", 3 }, { "sj1", 2 },
					  { "on_sig", 2 }, { "after_sig", 2 }, END_COUNTS };
	static const struct edge e[] = { { "main", "j1", 3 }, { "j1", "j2", 3 }, { "j2", "j3", 3 },
					 { "j3", "j4", 3 }, { "main", "after_jump", 3 },
					 { "j4", "after_jump", 0 }, { "main", "sj1", 2 },
					 { "sj1", "on_sig", 2 }, { "main", "after_sig", 2 },
					 { "on_sig", "after_sig", 0 }, END_EDGES };
	struct traced t;

	trace_fixture("jumps", NULL, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, "jumps 3 (sum 60)\nsigjumps 2, mask ok\n");
	expect_counts(t.report, c, e);
	ck_assert_int_eq(tree_path_calls(t.report, "main/j1/j2/j3/j4"), 3);
	ck_assert_int_eq(tree_path_calls(t.report, "main/after_jump"), 3);
	ck_assert_int_eq(tree_path_calls(t.report, "main/sj1/on_sig"), 2);
	ck_assert_int_eq(tree_path_calls(t.report, "main/after_sig"), 2);
	traced_free(&t);
}
END_TEST

START_TEST(excepts_cxx)
{
	static const struct count c[] = { { "main", 1 }, { "e1", 4 }, { "e2", 4 }, { "e3", 4 },
					  { "after_catch", 4 }, { "r1", 2 }, { "r2", 2 },
					  { "r1_cleanup", 2 }, { "after_rethrow", 2 }, END_COUNTS };
	static const struct edge e[] = { { "main", "e1", 4 }, { "e1", "e2", 4 }, { "e2", "e3", 4 },
					 { "main", "after_catch", 4 }, { "e3", "after_catch", 0 },
					 { "main", "r1", 2 }, { "r1", "r2", 2 },
					 { "r1", "r1_cleanup", 2 }, { "r2", "r1_cleanup", 0 },
					 { "main", "after_rethrow", 2 }, END_EDGES };
	struct traced t;

	trace_fixture("excepts", NULL, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, "caught 4: depth 3\nrethrown 2: 7\n");
	expect_counts(t.report, c, e);
	ck_assert_int_eq(tree_path_calls(t.report, "main/e1/e2/e3"), 4);
	ck_assert_int_eq(tree_path_calls(t.report, "main/after_catch"), 4);
	ck_assert_int_eq(tree_path_calls(t.report, "main/r1/r2"), 2);
	ck_assert_int_eq(tree_path_calls(t.report, "main/r1/r1_cleanup"), 2);
	traced_free(&t);
}
END_TEST

/* backtrace() and __builtin_return_address see the same stack traced and untraced. */
START_TEST(stackwalk_backtrace)
{
	static const struct count c[] = { { "main", 1 }, { "bt1", 1 }, { "bt2", 1 }, { "bt3", 1 },
					  { "inside", 3 }, END_COUNTS };
	static const struct edge e[] = { { "main", "bt1", 1 }, { "bt1", "bt2", 1 },
					 { "bt2", "bt3", 1 }, { "bt3", "inside", 3 }, END_EDGES };
	struct traced t;

	trace_fixture("stackwalk", NULL, NULL, NULL, 0, 0, &t);
	ck_assert_msg(strstr(t.plain.out.p, "ra in bt2: yes\nframe 1 in bt2: yes\n"
			     "frame 2 in bt1: yes\n"), "stackwalk untraced: %s", t.plain.out.p);
	expect_counts(t.report, c, e);
	ck_assert_int_eq(tree_path_calls(t.report, "main/bt1/bt2/bt3"), 1);
	traced_free(&t);
}
END_TEST

START_TEST(aborter_abort)
{
	static const struct count c[] = { { "main", 1 }, { "warm", 2 }, { "a1", 1 }, { "a2", 1 },
					  { "a3", 1 }, END_COUNTS };
	static const struct edge e[] = { { "main", "warm", 2 }, { "main", "a1", 1 },
					 { "a1", "a2", 1 }, { "a2", "a3", 1 }, END_EDGES };
	struct traced t;

	trace_fixture("aborter", NULL, NULL, NULL, 0, 128 + SIGABRT, &t);
	ck_assert_str_eq(t.plain.out.p, "aborting\n");
	expect_counts(t.report, c, e);
	ck_assert_int_eq(tree_path_calls(t.report, "main/a1/a2/a3"), 1);
	traced_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ shared libraries */

static const char *const uselib_variants[] = { "uselib", "uselib_now" };

/* --lib plus the constructor's function as a second root: lib_init (run by libctfix's
 * constructor before main) is counted, as a root. */
/* A stripped library whose cold path jumps back into the bytes before a ret: calltrace
 * decodes only its .dynsym functions, so it plants no detour there; exact counts and
 * the untraced output. */
START_TEST(stripped_lib_cold)
{
	static const char *const opts[] = { "--lib", "libctcold*", NULL };
	static const struct count c[] = { { "main", 1 }, { "cold_f", 10 }, END_COUNTS };
	static const struct edge e[] = { { "main", "cold_f", 10 }, END_EDGES };
	struct traced t;

	trace_fixture("usecold", opts, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, "sum 40\n");
	expect_counts(t.report, c, e);
	ck_assert_str_eq(fn_module(t.report, "cold_f"), "libctcold.so");
	traced_free(&t);
}
END_TEST

START_TEST(uselib_lib_and_ctor)
{
	static const char *const opts[] = { "--lib", "libctfix*", "-f", "lib_init", "-f", "main",
					    NULL };
	static const struct count c[] = { { "main", 1 }, { "lib_init", 1 }, { "lib_add", 8 },
					  { "lib_mul", 3 }, END_COUNTS };
	static const struct edge e[] = { { "main", "lib_add", 5 }, { "main", "lib_mul", 3 },
					 { "lib_mul", "lib_add", 3 }, END_EDGES };
	const char *name = uselib_variants[_i];
	struct traced t;
	static const char *const lib_fns[] = { "lib_init", "lib_add", "lib_mul" };

	trace_fixture(name, opts, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, "sum 15 product 38\n");
	expect_counts(t.report, c, e);
	for (int i = 0; i < 3; i++) {
		ck_assert_str_eq(fn_module(t.report, lib_fns[i]), "libctfix.so");
	}
	ck_assert_str_eq(fn_module(t.report, "main"), name);
	ck_assert_int_eq(json_object_array_length(jarr(fn_find(t.report, "lib_init"), "callers")),
			 0);
	ck_assert_int_eq(tree_path_calls(t.report, "lib_init"), 1);
	ck_assert_int_eq(tree_path_calls(t.report, "main/lib_mul/lib_add"), 3);
	traced_free(&t);
}
END_TEST

/* --lib with the default root: the constructor runs before main, so lib_init is not
 * beneath a root and is not counted. */
START_TEST(uselib_lib_main_root)
{
	static const char *const opts[] = { "--lib", "libctfix*", NULL };
	static const struct count c[] = { { "main", 1 }, { "lib_init", 0 }, { "lib_add", 8 },
					  { "lib_mul", 3 }, END_COUNTS };
	static const struct edge e[] = { { "main", "lib_add", 5 }, { "main", "lib_mul", 3 },
					 { "lib_mul", "lib_add", 3 }, END_EDGES };
	struct traced t;

	trace_fixture("uselib", opts, NULL, NULL, 0, 0, &t);
	expect_counts(t.report, c, e);
	traced_free(&t);
}
END_TEST

/* Without --lib only the executable is traced. */
START_TEST(uselib_no_lib)
{
	static const struct count c[] = { { "main", 1 }, { "lib_init", 0 }, { "lib_add", 0 },
					  { "lib_mul", 0 }, END_COUNTS };
	struct traced t;

	trace_fixture("uselib", NULL, NULL, NULL, 0, 0, &t);
	expect_counts(t.report, c, NULL);
	ck_assert_int_eq(fns_in_module(t.report, "libctfix.so"), 0);
	traced_free(&t);
}
END_TEST

/* dlopen, 4 calls, dlclose (unmapped), dlopen again (mapped afresh), 2 calls. */
START_TEST(useplugin_dlopen)
{
	static const char *const opts[] = { "--lib", "libctplug*", NULL };
	static const struct count c[] = { { "main", 1 }, { "session", 2 }, { "plug_fn", 6 },
					  { "plug_helper", 6 }, END_COUNTS };
	static const struct edge e[] = { { "main", "session", 2 }, { "session", "plug_fn", 6 },
					 { "plug_fn", "plug_helper", 6 }, END_EDGES };
	struct traced t;

	trace_fixture("useplugin", opts, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, "load 1: 1 2 3 4\nload 2: 1 2\n");
	expect_counts(t.report, c, e);
	ck_assert_str_eq(fn_module(t.report, "plug_fn"), "libctplug.so");
	ck_assert_str_eq(fn_module(t.report, "plug_helper"), "libctplug.so");
	ck_assert_int_eq(tree_path_calls(t.report, "main/session/plug_fn/plug_helper"), 6);
	traced_free(&t);
}
END_TEST

/* A tail call through the library's PLT (`jmp tail_target@plt`): read through the GOT,
 * it is a tail call into the traced tail_target, a child of the function that jumped.
 * Lazily bound, the first jump goes to the dynamic linker's resolver instead: that one
 * call is attributed to the jumper's caller (docs/limitations.md). */
START_TEST(plt_tail_call)
{
	static const char *const opts[] = { "--lib", "libcttail*", NULL };
	static const struct count c[] = { { "main", 1 }, { "tail_via_plt", 4 },
					  { "tail_target", 4 }, END_COUNTS };
	static const struct edge bound[] = { { "main", "tail_via_plt", 4 },
					     { "tail_via_plt", "tail_target", 4 }, END_EDGES };
	static const struct edge lazy[] = { { "main", "tail_via_plt", 4 },
					    { "tail_via_plt", "tail_target", 3 },
					    { "main", "tail_target", 1 }, END_EDGES };
	struct traced t;

	trace_fixture("usetail_now", opts, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, "sum 34\n");
	expect_counts(t.report, c, bound);
	ck_assert_str_eq(fn_module(t.report, "tail_target"), "libcttailnow.so");
	ck_assert_int_eq(tree_path_calls(t.report, "main/tail_via_plt/tail_target"), 4);
	traced_free(&t);

	trace_fixture("usetail", opts, NULL, NULL, 0, 0, &t);
	expect_counts(t.report, c, lazy);
	traced_free(&t);
}
END_TEST

START_TEST(useplugin_no_lib)
{
	static const struct count c[] = { { "main", 1 }, { "session", 2 }, { "plug_fn", 0 },
					  { "plug_helper", 0 }, END_COUNTS };
	struct traced t;

	trace_fixture("useplugin", NULL, NULL, NULL, 0, 0, &t);
	expect_counts(t.report, c, NULL);
	traced_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ attach */

/* Start the spinner fixture directly (not traced); its pid once it has printed it. */
static pid_t start_spinner(struct proc *sp)
{
	char *argv[] = { FIX("spinner"), NULL };
	long long pid;

	proc_start(argv, sp);
	ck_assert_msg(proc_wait_for(sp, 0, "pid ", 10000) && proc_wait_for(sp, 0, "\n", 1000),
		      "spinner printed no pid: \"%s\" \"%s\"", sp->obuf.p, sp->ebuf.p);
	pid = number_after(sp->obuf.p, "pid ");
	ck_assert_int_eq(pid, sp->pid);
	sleep_ms(100);			/* past its first checksum, into the loop */
	return sp->pid;
}

/* SIGUSR1 makes the spinner check its text and exit: it must still be alive, its text
 * byte-identical to before calltrace attached, and it must exit 0. */
static void finish_spinner(struct proc *sp, const char *what)
{
	int status;
	char state = proc_state(sp->pid);

	if (!state || state == 'Z') {
		status = proc_finish(sp, 10000, "spinner");
		ck_abort_msg("%s: the spinner is gone: status %d, stdout \"%s\", stderr \"%s\"",
			     what, status, sp->obuf.p, sp->ebuf.p);
	}
	ck_assert_int_eq(kill(sp->pid, SIGUSR1), 0);
	status = proc_finish(sp, 10000, "spinner");
	ck_assert_msg(status == 0, "%s: spinner status %d, stderr \"%s\"", what, status,
		      sp->ebuf.p);
	ck_assert_msg(strstr(sp->obuf.p, "\nchecksum same\n"), "%s: spinner says \"%s\"", what,
		      sp->obuf.p);
	proc_free(sp);
}

/* calltrace -p PID -d 1: records for about 1 s, detaches, exits 0; the program runs on
 * with its text restored. */
START_TEST(attach_duration)
{
	char json_path[64], pid_arg[32];
	char *argv[] = { CT_CALLTRACE, "-p", pid_arg, "-d", "1", "--format", "json", "-o",
			 json_path, NULL };
	struct proc sp;
	struct run r;
	json_object *report;
	long long t0, elapsed;

	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)start_spinner(&sp));
	tmp_report(json_path, sizeof(json_path));
	t0 = now_ms();
	run_argv(argv, NULL, NULL, 0, &r);
	elapsed = now_ms() - t0;
	ck_assert_msg(r.status == 0, "calltrace -p -d 1: status %d; stderr:\n%s", r.status,
		      err_head(&r));
	ck_assert_msg(elapsed >= 900 && elapsed < 30000, "calltrace -d 1 took %lld ms", elapsed);
	report = load_report(json_path, "attach -d 1", r.err.p);
	ck_assert_msg(fn_calls(report, "work") > 0, "work not counted while attached");
	json_object_put(report);
	run_free(&r);
	finish_spinner(&sp, "after -d 1");
}
END_TEST

/* calltrace -p on the detours fixture, busy in its loop under a SIGALRM every 200 us,
 * then detached after 0.5 s: the program goes on through the detour blocks it may be
 * in (their int3s now nops, the jmps gone) and ends with the same sum as untraced. */
START_TEST(attach_detours)
{
	char pid_arg[32], json_path[64];
	char *plain_argv[] = { FIX("detours"), "100000000", "alarm", NULL };
	char *fix_argv[] = { FIX("detours"), "100000000", "attach", NULL };
	char *argv[] = { CT_CALLTRACE, "-p", pid_arg, "-d", "0.5", "--format", "json", "-o",
			 json_path, NULL };
	struct run plain, r;
	struct proc fx;
	json_object *report;
	int status;

	run_argv(plain_argv, NULL, NULL, 0, &plain);
	ck_assert_msg(plain.status == 0 && strstr(plain.out.p, "sum "), "untraced: %d \"%s\"",
		      plain.status, plain.out.p);
	proc_start(fix_argv, &fx);
	ck_assert_msg(proc_wait_for(&fx, 0, "pid ", 10000) && proc_wait_for(&fx, 0, "\n", 1000),
		      "detours printed no pid: \"%s\"", fx.obuf.p);
	sleep_ms(50);                   /* into its loop */
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)fx.pid);
	tmp_report(json_path, sizeof(json_path));
	run_argv(argv, NULL, NULL, 0, &r);
	ck_assert_msg(r.status == 0, "calltrace -p -d 0.5: status %d; stderr:\n%s", r.status,
		      err_head(&r));
	report = load_report(json_path, "attach to detours", r.err.p);
	ck_assert_msg(fn_calls(report, "whole") > 0 && fn_calls(report, "sw") > 0,
		      "nothing counted while attached");
	json_object_put(report);
	run_free(&r);
	status = proc_finish(&fx, 60000, "detours after the detach");
	ck_assert_msg(status == 0, "detours after the detach: status %d, stderr \"%s\"", status,
		      fx.ebuf.p);
	ck_assert_msg(strstr(fx.obuf.p, plain.out.p) != NULL,
		      "detours after the detach printed \"%s\", untraced \"%s\"", fx.obuf.p,
		      plain.out.p);
	proc_free(&fx);
	run_free(&plain);
}
END_TEST

/* calltrace -p while the program sleeps in a SIGSEGV handler whose frame will return
 * to faulty+3, inside the bytes an entry detour of faulty would replace: that address
 * is on its stack, so faulty gets no detour. The handler returns while calltrace is
 * still attached, and the program finishes as untraced. */
START_TEST(attach_in_handler)
{
	char pid_arg[32];
	char *fix_argv[] = { FIX("sigframe"), NULL };
	char *argv[] = { CT_CALLTRACE, "-p", pid_arg, "-d", "10", "-o", "/dev/null", NULL };
	struct proc fx;
	struct run r;
	int status;

	proc_start(fix_argv, &fx);
	ck_assert_msg(proc_wait_for(&fx, 0, "pid ", 10000) && proc_wait_for(&fx, 0, "\n", 1000),
		      "sigframe printed no pid: \"%s\"", fx.obuf.p);
	sleep_ms(200);                  /* in the handler, asleep */
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)fx.pid);
	run_argv(argv, NULL, NULL, 0, &r);
	/* it ends with the program, long before -d 10: the status is the program's */
	ck_assert_msg(r.status == 0, "calltrace -p: status %d; stderr:\n%s", r.status,
		      err_head(&r));
	run_free(&r);
	status = proc_finish(&fx, 20000, "sigframe");
	ck_assert_msg(status == 0 && strstr(fx.obuf.p, "faulty = 1\n"),
		      "sigframe: status %d, stdout \"%s\"", status, fx.obuf.p);
	proc_free(&fx);
}
END_TEST

/* calltrace -p PID, then SIGINT to calltrace: report written, the program keeps running
 * with its text restored. */
START_TEST(attach_sigint)
{
	char json_path[64], pid_arg[32];
	char *argv[] = { CT_CALLTRACE, "-p", pid_arg, "--format", "json", "-o", json_path, NULL };
	struct proc sp, ct;
	json_object *report;
	int status;

	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)start_spinner(&sp));
	tmp_report(json_path, sizeof(json_path));
	proc_start(argv, &ct);
	ck_assert_msg(wait_traced(sp.pid, 10000), "calltrace -p did not attach within 10 s");
	sleep_ms(500);			/* attached; now recording */
	ck_assert_msg(proc_state(ct.pid) && proc_state(ct.pid) != 'Z',
		      "calltrace -p ended early; stderr:\n%s", (proc_pump(&ct, 100), ct.ebuf.p));
	ck_assert_int_eq(kill(ct.pid, SIGINT), 0);
	status = proc_finish(&ct, 30000, "calltrace -p after SIGINT");
	report = load_report(json_path, "attach + SIGINT", ct.ebuf.p);
	ck_assert_msg(fn_calls(report, "work") > 0, "work not counted while attached "
		      "(calltrace status %d)", status);
	json_object_put(report);
	proc_free(&ct);
	finish_spinner(&sp, "after SIGINT to calltrace");
}
END_TEST

/* SIGTERM to calltrace while it runs a program it spawned: report written, the program
 * killed (EXITKILL semantics: it does not outlive calltrace). */
START_TEST(sigterm_spawned)
{
	char json_path[64];
	char *argv[] = { CT_CALLTRACE, "--format", "json", "-o", json_path, "--", FIX("spinner"),
			 NULL };
	struct proc ct;
	json_object *report;
	long long pid, deadline;
	int status;
	char state = '?';

	tmp_report(json_path, sizeof(json_path));
	proc_start(argv, &ct);
	ck_assert_msg(proc_wait_for(&ct, 0, "pid ", 30000) && proc_wait_for(&ct, 0, "\n", 1000),
		      "no pid line from the spinner under calltrace; stderr:\n%.600s", ct.ebuf.p);
	pid = number_after(ct.obuf.p, "pid ");
	ck_assert_int_gt(pid, 0);
	sleep_ms(500);
	ck_assert_int_eq(kill(ct.pid, SIGTERM), 0);
	status = proc_finish(&ct, 30000, "calltrace after SIGTERM");
	for (deadline = now_ms() + 5000; now_ms() < deadline; sleep_ms(20)) {
		state = proc_state((pid_t)pid);
		if (!state || state == 'Z')
			break;
	}
	ck_assert_msg(!state || state == 'Z', "the spinner (pid %lld) outlived calltrace: state "
		      "'%c' (calltrace status %d)", pid, state, status);
	report = load_report(json_path, "SIGTERM", ct.ebuf.p);
	ck_assert_int_eq(fn_calls(report, "main"), 1);
	ck_assert_msg(fn_calls(report, "work") > 0, "work not counted");
	ck_assert_int_eq(edge_calls(report, "main", "work"), fn_calls(report, "work"));
	json_object_put(report);
	proc_free(&ct);
}
END_TEST

/* ------------------------------------------------------------------ errors */

/* -p with a pid that does not exist: 125 and exactly one line naming the pid.
 * The permission-denied cases (another user's process, yama ptrace_scope) cannot be
 * tested here: the tests run as root in CI, and root may trace anything. */
START_TEST(attach_no_such_pid)
{
	char *argv[] = { CT_CALLTRACE, "-p", "999999", NULL };
	struct run r;

	if (kill(999999, 0) == 0 || errno != ESRCH) {
		fprintf(stderr, "check_real: pid 999999 exists; attach_no_such_pid skipped\n");
		return;
	}
	run_argv(argv, NULL, NULL, 0, &r);
	ck_assert_msg(r.status == 125, "status %d, expected 125; stderr: %s", r.status,
		      err_head(&r));
	ck_assert_msg(r.err.len > 0 && r.err.p[r.err.len - 1] == '\n' &&
		      memchr(r.err.p, '\n', r.err.len) == r.err.p + r.err.len - 1,
		      "stderr is not exactly one line: \"%s\"", err_head(&r));
	ck_assert_msg(strncmp(r.err.p, "calltrace: ", 11) == 0 && strstr(r.err.p, "999999"),
		      "stderr does not name the pid: %s", r.err.p);
	ck_assert_str_eq(r.out.p, "");
	run_free(&r);
}
END_TEST

/* Attaching to another user's process: run calltrace as 'nobody' against a process of
 * root's. One line naming the pid and the reason, status 125, and the target untouched.
 * Needs root to switch users; otherwise there is nothing to test from here. */
START_TEST(attach_permission_denied)
{
	char pidbuf[32];
	int st, perr[2];
	char err[1024] = "";
	ssize_t n, len = 0;
	pid_t target, ct;

	if (geteuid() != 0) {
		fprintf(stderr, "check_real: not root; attach_permission_denied skipped\n");
		return;
	}
	target = fork();
	ck_assert_int_ge(target, 0);
	if (target == 0) {
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)target);
	ck_assert_int_eq(pipe(perr), 0);
	ct = fork();
	ck_assert_int_ge(ct, 0);
	if (ct == 0) {
		dup2(perr[1], 2);
		close(perr[0]);
		if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
			_exit(120);
		execl(CT_CALLTRACE, "calltrace", "-p", pidbuf, (char *)NULL);
		_exit(121);
	}
	close(perr[1]);
	while ((n = read(perr[0], err + len, sizeof(err) - 1 - (size_t)len)) > 0)
		len += n;
	err[len] = 0;
	close(perr[0]);
	ck_assert_int_eq(waitpid(ct, &st, 0), ct);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 125, "status %d: %s", st, err);
	ck_assert_msg(!strncmp(err, "calltrace: ", 11) && strstr(err, pidbuf) &&
		      (strcasestr(err, "permission denied") || strcasestr(err, "not permitted")),
		      "message: %s", err);
	ck_assert_msg(strchr(err, '\n') && !strchr(err, '\n')[1], "not one line: %s", err);
	/* the target still runs, untraced */
	ck_assert_int_eq(kill(target, 0), 0);
	kill(target, SIGKILL);
	waitpid(target, &st, 0);
}
END_TEST

/* ------------------------------------------------------------------ fixtures alone */

/* The fixtures behave as their opening comments say (no calltrace involved). */
static const struct {
	const char *name, *in, *out;
	int status;
} fixture_runs[] = {
	{ "threads4", NULL, "workers done: 1000 calls\n", 0 },
	{ "forker", NULL, FORKER_OUT, 0 },
	{ "vforker", NULL, VFORKER_OUT, 0 },
	{ "execer", NULL, "execer: a x3\nfib(10) = 55\n", 0 },
	{ "signals", NULL, "usr1 3\ntrap 2\nint3 4\nusr2 on altstack 1, leaf 2\n", 0 },
	{ "stopwait", "hello\n", "before\ngot: hello\n", 0 },
	{ "jumps", NULL, "jumps 3 (sum 60)\nsigjumps 2, mask ok\n", 0 },
	{ "aborter", NULL, "aborting\n", 128 + SIGABRT },
	{ "thrunwind", NULL, "exit value 42\ncanceled yes\ncleanups 1\n", 0 },
	{ "excepts", NULL, "caught 4: depth 3\nrethrown 2: 7\n", 0 },
	{ "uselib", NULL, "sum 15 product 38\n", 0 },
	{ "uselib_now", NULL, "sum 15 product 38\n", 0 },
	{ "useplugin", NULL, "load 1: 1 2 3 4\nload 2: 1 2\n", 0 },
};

START_TEST(fixture_untraced)
{
	char path[4096];
	char *argv[2] = { path, NULL };
	const char *in = fixture_runs[_i].in;
	struct run r;

	snprintf(path, sizeof(path), "%s/%s", CT_FIXTURE_DIR, fixture_runs[_i].name);
	run_argv(argv, NULL, in, in ? strlen(in) : 0, &r);
	ck_assert_msg(r.status == fixture_runs[_i].status, "%s: status %d, expected %d",
		      fixture_runs[_i].name, r.status, fixture_runs[_i].status);
	ck_assert_str_eq(r.out.p, fixture_runs[_i].out);
	run_free(&r);
}
END_TEST

START_TEST(stackwalk_untraced)
{
	char *argv[] = { FIX("stackwalk"), NULL };
	struct run r;

	run_argv(argv, NULL, NULL, 0, &r);
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(number_after(r.out.p, "frames ") >= 4, "stackwalk: %s", r.out.p);
	ck_assert_msg(strstr(r.out.p, "\nra in bt2: yes\nframe 1 in bt2: yes\n"
			     "frame 2 in bt1: yes\n"), "stackwalk: %s", r.out.p);
	run_free(&r);
}
END_TEST

START_TEST(spinner_untraced)
{
	struct proc sp;

	start_spinner(&sp);
	finish_spinner(&sp, "untraced");
}
END_TEST

/* The link properties the library tests rely on: uselib needs libctfix.so through
 * RUNPATH $ORIGIN, uselib_now is BIND_NOW, useplugin does not link libctplug.so. */
START_TEST(lib_link_properties)
{
	char *argv_lib[] = { "readelf", "-d", FIX("uselib"), NULL };
	char *argv_now[] = { "readelf", "-d", FIX("uselib_now"), NULL };
	char *argv_plug[] = { "readelf", "-d", FIX("useplugin"), NULL };
	struct run r;

	run_argv(argv_lib, NULL, NULL, 0, &r);
	ck_assert_int_eq(r.status, 0);
	ck_assert(strstr(r.out.p, "[libctfix.so]") && strstr(r.out.p, "$ORIGIN"));
	ck_assert_msg(!strstr(r.out.p, "BIND_NOW") && !strstr(r.out.p, "NOW"),
		      "uselib is not lazily bound");
	run_free(&r);
	run_argv(argv_now, NULL, NULL, 0, &r);
	ck_assert_int_eq(r.status, 0);
	ck_assert(strstr(r.out.p, "[libctfix.so]") && strstr(r.out.p, "NOW"));
	run_free(&r);
	run_argv(argv_plug, NULL, NULL, 0, &r);
	ck_assert_int_eq(r.status, 0);
	ck_assert(!strstr(r.out.p, "libctplug") && strstr(r.out.p, "$ORIGIN"));
	run_free(&r);
}
END_TEST

/* ------------------------------------------------------------------ runner */

static Suite *fixtures_suite(void)
{
	Suite *s = suite_create("real_fixtures");

	tcase_add_loop_test(tcase(s, "real_untraced"), fixture_untraced, 0,
			    (int)(sizeof(fixture_runs) / sizeof(fixture_runs[0])));
	tcase_add_test(tcase(s, "stackwalk_untraced"), stackwalk_untraced);
	tcase_add_test(tcase(s, "spinner_untraced"), spinner_untraced);
	tcase_add_test(tcase(s, "lib_link_properties"), lib_link_properties);
	return s;
}

static Suite *trace_suite(void)
{
	Suite *s = suite_create("real_trace");

	tcase_add_test(tcase(s, "threads4"), threads4_per_thread);
	tcase_add_test(tcase(s, "thrunwind"), thrunwind_exit_cancel);
	tcase_add_test(tcase(s, "forker_default"), forker_default);
	tcase_add_test(tcase(s, "forker_follow"), forker_follow);
	tcase_add_test(tcase(s, "vforker_default"), vforker_default);
	tcase_add_test(tcase(s, "vforker_follow"), vforker_follow);
	tcase_add_test(tcase(s, "execer"), execer_counts);
	tcase_add_test(tcase(s, "signals"), signals_handlers);
	tcase_add_test(tcase(s, "stopwait"), stopwait_stop_cont);
	tcase_add_test(tcase(s, "jumps"), jumps_longjmp);
	tcase_add_test(tcase(s, "excepts"), excepts_cxx);
	tcase_add_test(tcase(s, "stackwalk"), stackwalk_backtrace);
	tcase_add_test(tcase(s, "aborter"), aborter_abort);
	tcase_add_loop_test(tcase(s, "uselib_lib"), uselib_lib_and_ctor, 0, 2);
	tcase_add_test(tcase(s, "uselib_main_root"), uselib_lib_main_root);
	tcase_add_test(tcase(s, "uselib_no_lib"), uselib_no_lib);
	tcase_add_test(tcase(s, "useplugin"), useplugin_dlopen);
	tcase_add_test(tcase(s, "useplugin_no_lib"), useplugin_no_lib);
	tcase_add_test(tcase(s, "plt_tail_call"), plt_tail_call);
	tcase_add_test(tcase(s, "stripped_lib_cold"), stripped_lib_cold);
	return s;
}

static Suite *attach_suite(void)
{
	Suite *s = suite_create("real_attach");

	tcase_add_test(tcase(s, "attach_duration"), attach_duration);
	tcase_add_test(tcase(s, "attach_sigint"), attach_sigint);
	tcase_add_test(tcase(s, "attach_detours"), attach_detours);
	tcase_add_test(tcase(s, "attach_in_handler"), attach_in_handler);
	tcase_add_test(tcase(s, "sigterm_spawned"), sigterm_spawned);
	return s;
}

static Suite *errors_suite(void)
{
	Suite *s = suite_create("real_errors");

	tcase_add_test(tcase(s, "attach_no_such_pid"), attach_no_such_pid);
	tcase_add_test(tcase(s, "attach_permission_denied"), attach_permission_denied);
	return s;
}

int main(void)
{
	int can_trace = ptrace_permitted(), failed;
	SRunner *sr = srunner_create(fixtures_suite());

	signal(SIGPIPE, SIG_IGN);	/* a fixture that stops reading stdin: EPIPE, not death */
	if (can_trace) {
		srunner_add_suite(sr, errors_suite());
		srunner_add_suite(sr, trace_suite());
		srunner_add_suite(sr, attach_suite());
	} else {
		fprintf(stderr, "check_real: ptrace not permitted here; skipping the trace, "
			"attach and error suites\n");
	}
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (failed)
		return EXIT_FAILURE;
	return can_trace ? EXIT_SUCCESS : 77;
}
