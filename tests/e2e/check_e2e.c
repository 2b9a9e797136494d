/* SPDX-License-Identifier: MIT */
/* check_e2e.c - end-to-end tests. Each fixture (fixtures/<name>.c, whose opening comment
 * gives its exact call counts) is run untraced and under calltrace with
 * `--format json -o FILE`; the two runs must print the same stdout bytes and end with the
 * same status, and the report must hold the exact call and caller->callee counts. The
 * error-path tests check calltrace's own failures: status 125/126/127, exactly one line
 * "calltrace: ..." on stderr, and the program never started.
 * Suites: fixtures (the fixtures alone: outputs, instruction properties), trace, errors.
 * Select with CK_RUN_SUITE / CK_RUN_CASE; CK_FORK=no to debug in gdb.
 * Exits 77 (skip) when ptrace is not permitted, after running the suites that need none. */
#include <check.h>
#include <errno.h>
#include <pty.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_util.h"

#ifndef CT_FIXTURE_SRC_DIR
#error "CT_FIXTURE_SRC_DIR (fixtures source directory) must be defined"
#endif

/* ------------------------------------------------------------------ report helpers */

/* Callees of function object @fn that are functions, not the pseudo 'suspend'. */
static size_t real_callees(json_object *fn)
{
	json_object *callees = jarr(fn, "callees");
	size_t n = 0;

	for (size_t i = 0; i < json_object_array_length(callees); i++)
		n += *jstr(json_object_array_get_idx(callees, i), "module") != '\0';
	return n;
}

/* ------------------------------------------------------------------ trace */

START_TEST(recursion_fib20)
{
	static const struct count c[] = { { "main", 1 }, { "fib", 21891 }, END_COUNTS };
	static const struct edge e[] = { { "main", "fib", 1 }, { "fib", "fib", 21890 },
					 END_EDGES };
	const char *const args[] = { "20", NULL };
	struct traced t;
	json_object *fib, *main_fn;

	trace_fixture("recursion", NULL, args, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, "fib(20) = 6765\n");
	expect_counts(t.report, c, e);
	ck_assert_int_eq(tree_path_calls(t.report, "main"), 1);
	ck_assert_int_eq(tree_path_calls(t.report, "main/fib"), 1);
	ck_assert_int_eq(tree_path_calls(t.report, "main/fib/fib"), 2);
	fib = fn_find(t.report, "fib");
	main_fn = fn_find(t.report, "main");
	ck_assert_ptr_nonnull(main_fn);
	ck_assert_str_eq(jstr(fib, "module"), "recursion");
	ck_assert_str_eq(jstr(main_fn, "module"), "recursion");
	ck_assert_msg(jint(main_fn, "acc_ns") >= jint(main_fn, "own_ns"), "main: acc < own");
	ck_assert_msg(jint(fib, "acc_ns") > 0, "fib: no accumulated time");
	traced_free(&t);
}
END_TEST

/* file and line come from DWARF: the line of fib's definition in fixtures/recursion.c. */
START_TEST(recursion_file_line)
{
	const char *const args[] = { "10", NULL };
	struct traced t;
	json_object *fib;
	char *src = read_file(CT_FIXTURE_SRC_DIR "/recursion.c", NULL), *def;
	long long line = 1;

	ck_assert_ptr_nonnull(src);
	def = strstr(src, " int fib(int n) {");
	ck_assert_ptr_nonnull(def);
	for (const char *p = src; p < def; p++)
		line += *p == '\n';
	trace_fixture("recursion", NULL, args, NULL, 0, 0, &t);
	fib = fn_find(t.report, "fib");
	ck_assert_ptr_nonnull(fib);
	ck_assert_int_eq(jint(fib, "calls"), 177);
	ck_assert_msg(jstr(fib, "file") && strstr(jstr(fib, "file"), "recursion.c"),
		      "fib: file is \"%s\"", jstr(fib, "file") ? jstr(fib, "file") : "(none)");
	ck_assert_int_eq(jint(fib, "line"), line);
	free(src);
	traced_free(&t);
}
END_TEST

START_TEST(mutual_even_odd)
{
	static const struct count c[] = { { "main", 1 }, { "is_even", 10 }, { "is_odd", 9 },
					  END_COUNTS };
	static const struct edge e[] = { { "main", "is_even", 1 }, { "main", "is_odd", 1 },
					 { "is_even", "is_odd", 8 }, { "is_odd", "is_even", 9 },
					 END_EDGES };
	struct traced t;

	trace_fixture("mutual", NULL, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, "10 even: 1\n7 odd: 1\n");
	expect_counts(t.report, c, e);
	ck_assert_int_eq(tree_path_calls(t.report, "main/is_odd/is_even/is_odd/is_even"), 1);
	traced_free(&t);
}
END_TEST

/* callers, callers_nopie, callers_static: one program, three link modes. */
static const char *const callers_variants[] = { "callers", "callers_nopie", "callers_static" };

START_TEST(callers_link_modes)
{
	static const struct count c[] = { { "main", 1 }, { "caller_a", 1 }, { "caller_b", 1 },
					  { "caller_c", 1 }, { "shared", 11 }, END_COUNTS };
	static const struct edge e[] = { { "main", "caller_a", 1 }, { "main", "caller_b", 1 },
					 { "main", "caller_c", 1 }, { "main", "shared", 1 },
					 { "caller_a", "shared", 2 }, { "caller_b", "shared", 3 },
					 { "caller_c", "shared", 5 }, END_EDGES };
	const char *name = callers_variants[_i];
	struct traced t;
	json_object *shared;

	trace_fixture(name, NULL, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, "total = 63\n");
	expect_counts(t.report, c, e);
	shared = fn_find(t.report, "shared");
	ck_assert_ptr_nonnull(shared);
	ck_assert_str_eq(jstr(shared, "module"), name);
	ck_assert_int_eq(json_object_array_length(jarr(shared, "callers")), 4);
	/* it calls nothing; 'suspend' (module "", time off the CPU) may appear under any
	 * function when the machine is busy */
	ck_assert_int_eq(real_callees(shared), 0);
	traced_free(&t);
}
END_TEST

START_TEST(tailcall_chain)
{
	static const struct count c[] = { { "main", 1 }, { "a", 3 }, { "b", 4 }, { "c", 4 },
					  { "leaf", 4 }, END_COUNTS };
	static const struct edge e[] = { { "main", "a", 3 }, { "main", "b", 1 }, { "a", "b", 3 },
					 { "b", "c", 4 }, { "c", "leaf", 4 }, { "main", "c", 0 },
					 { "a", "c", 0 }, { "main", "leaf", 0 }, END_EDGES };
	struct traced t;

	trace_fixture("tailcall", NULL, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, "sum = 70\n");
	expect_counts(t.report, c, e);
	ck_assert_int_eq(tree_path_calls(t.report, "main/a/b/c/leaf"), 3);
	ck_assert_int_eq(tree_path_calls(t.report, "main/b/c/leaf"), 1);
	traced_free(&t);
}
END_TEST

START_TEST(ripfirst_relocated)
{
	static const struct count c[] = { { "main", 1 }, { "getg", 3 }, { "setg", 1 },
					  { "setg2", 1 }, { "loadc", 4 }, { "addrg", 1 },
					  END_COUNTS };
	static const struct edge e[] = { { "main", "getg", 3 }, { "main", "setg", 1 },
					 { "main", "setg2", 1 }, { "main", "loadc", 4 },
					 { "main", "addrg", 1 }, END_EDGES };
	struct traced t;

	trace_fixture("ripfirst", NULL, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p,
			 "g=7 g=1000 g=1000 g=2000 c=0x1122334455667788 x4 addr ok\n");
	expect_counts(t.report, c, e);
	traced_free(&t);
}
END_TEST

START_TEST(tiny_ret_functions)
{
	static const struct count c[] = { { "main", 1 }, { "ret_only", 5 }, { "xor_ret", 3 },
					  END_COUNTS };
	static const struct edge e[] = { { "main", "ret_only", 5 }, { "main", "xor_ret", 3 },
					 END_EDGES };
	struct traced t;

	trace_fixture("tiny", NULL, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, "xor_ret sum 0\n");
	expect_counts(t.report, c, e);
	traced_free(&t);
}
END_TEST

START_TEST(endbr_functions)
{
	static const struct count c[] = { { "main", 1 }, { "twice", 3 }, { "add1", 6 },
					  END_COUNTS };
	static const struct edge e[] = { { "main", "twice", 3 }, { "twice", "add1", 6 },
					 END_EDGES };
	struct traced t;

	trace_fixture("endbr", NULL, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, "result 15\n");
	expect_counts(t.report, c, e);
	traced_free(&t);
}
END_TEST

START_TEST(fnptr_indirect)
{
	static const struct count c[] = { { "main", 1 }, { "apply", 7 }, { "op_add", 3 },
					  { "op_sub", 2 }, { "op_mul", 2 }, END_COUNTS };
	static const struct edge e[] = { { "main", "apply", 7 }, { "apply", "op_add", 3 },
					 { "apply", "op_sub", 2 }, { "apply", "op_mul", 2 },
					 END_EDGES };
	struct traced t;
	long long nr_cmp;

	trace_fixture("fnptr", NULL, NULL, NULL, 0, 0, &t);
	nr_cmp = number_after(t.plain.out.p, "cmp_int calls ");
	ck_assert_msg(nr_cmp > 0, "fnptr printed no comparator count: %s", t.plain.out.p);
	expect_counts(t.report, c, e);
	/* called by libc's qsort (untraced): the nearest traced caller is main */
	ck_assert_int_eq(fn_calls(t.report, "cmp_int"), nr_cmp);
	ck_assert_int_eq(edge_calls(t.report, "main", "cmp_int"), nr_cmp);
	traced_free(&t);
}
END_TEST

START_TEST(exit_from_depth)
{
	static const struct count c[] = { { "main", 1 }, { "d1", 1 }, { "d2", 1 }, { "d3", 1 },
					  { "d4", 1 }, { "d5", 1 }, END_COUNTS };
	static const struct edge e[] = { { "main", "d1", 1 }, { "d1", "d2", 1 }, { "d2", "d3", 1 },
					 { "d3", "d4", 1 }, { "d4", "d5", 1 }, END_EDGES };
	struct traced t;

	trace_fixture("exitdepth", NULL, NULL, NULL, 0, 3, &t);
	ck_assert_str_eq(t.plain.out.p, "in d5, exiting with 3\n");
	expect_counts(t.report, c, e);
	ck_assert_int_eq(tree_path_calls(t.report, "main/d1/d2/d3/d4/d5"), 1);
	traced_free(&t);
}
END_TEST

START_TEST(segv_at_depth)
{
	static const struct count c[] = { { "main", 1 }, { "warm", 4 }, { "s1", 1 }, { "s2", 1 },
					  { "s3", 1 }, END_COUNTS };
	static const struct edge e[] = { { "main", "warm", 4 }, { "main", "s1", 1 },
					 { "s1", "s2", 1 }, { "s2", "s3", 1 }, END_EDGES };
	struct traced t;

	trace_fixture("segv", NULL, NULL, NULL, 0, 128 + SIGSEGV, &t);
	ck_assert_str_eq(t.plain.out.p, "warm 10\n");
	expect_counts(t.report, c, e);
	ck_assert_int_eq(tree_path_calls(t.report, "main/s1/s2/s3"), 1);
	traced_free(&t);
}
END_TEST

START_TEST(status42_passthrough)
{
	static const struct count c[] = { { "main", 1 }, { "pick", 2 }, END_COUNTS };
	static const struct edge e[] = { { "main", "pick", 2 }, END_EDGES };
	struct traced t;

	trace_fixture("status42", NULL, NULL, NULL, 0, 42, &t);
	ck_assert_str_eq(t.plain.out.p, "status 42\n");
	ck_assert_str_eq(t.plain.err.p, "status42: exiting with 42\n");
	ck_assert_msg(strstr(t.traced.err.p, "status42: exiting with 42\n"),
		      "the program's stderr line is missing under calltrace: %s",
		      err_head(&t.traced));
	expect_counts(t.report, c, e);
	traced_free(&t);
}
END_TEST

/* A -static -s build: no symbol names. Its functions come from .eh_frame, named by
 * address, main is found from glibc's _start, and calltrace says so on stderr. */
START_TEST(stripped_static)
{
	char dir[] = "/tmp/calltrace-e2e-XXXXXX", file[4200];
	const char *const args[] = { file, NULL };
	json_object *main_fn, *callees;
	struct traced t;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/ran", dir);
	trace_fixture("marker_static_stripped", NULL, args, NULL, 0, 0, &t);
	ck_assert_msg(strstr(t.traced.err.p, "stripped") && strstr(t.traced.err.p, ".eh_frame") &&
		      strstr(t.traced.err.p, "main found from _start"),
		      "no note about the stripped program: %s", err_head(&t.traced));
	ck_assert_int_eq(fn_calls(t.report, "main"), 1);
	main_fn = fn_find(t.report, "main");
	callees = jarr(main_fn, "callees");
	/* main -> touch (named by address now) -> open... (libc, also fn_0x...); 'suspend'
	 * may come too on a busy machine */
	ck_assert_int_eq(real_callees(main_fn), 1);
	for (size_t i = 0; i < json_object_array_length(callees); i++) {
		json_object *k = json_object_array_get_idx(callees, i);

		if (!*jstr(k, "module"))
			continue;
		ck_assert_msg(strncmp(jstr(k, "name"), "fn_0x", 5) == 0, "main's callee is %s",
			      jstr(k, "name"));
		ck_assert_int_eq(jint(k, "calls"), 1);
	}
	unlink(file);
	rmdir(dir);
	traced_free(&t);
}
END_TEST

START_TEST(catlines_stdin)
{
	static const struct count c[] = { { "main", 1 }, { "copy_line", 100 }, END_COUNTS };
	static const struct edge e[] = { { "main", "copy_line", 100 }, END_EDGES };
	struct buf in = { 0 };
	struct traced t;
	char line[128];

	for (int i = 0; i < 100; i++) {	/* 100 lines, the last without '\n' */
		int len = snprintf(line, sizeof(line), "line %d:", i);

		for (int j = 0; j < i % 7; j++)
			len += snprintf(line + len, sizeof(line) - (size_t)len, " abc");
		buf_add(&in, line, (size_t)len);
		if (i < 99)
			buf_add(&in, "\n", 1);
	}
	trace_fixture("catlines", NULL, NULL, in.p, in.len, 0, &t);
	ck_assert_uint_eq(t.plain.out.len, in.len);
	ck_assert(memcmp(t.plain.out.p, in.p, in.len) == 0);
	expect_counts(t.report, c, e);
	free(in.p);
	traced_free(&t);
}
END_TEST

START_TEST(demo_readme)
{
	static const struct count c[] = { { "main", 1 }, { "count_primes", 1 }, { "is_prime", 98 },
					  { "fib", 2165 }, { "show", 4 }, END_COUNTS };
	static const struct edge e[] = { { "main", "count_primes", 1 },
					 { "count_primes", "is_prime", 98 }, { "main", "fib", 3 },
					 { "fib", "fib", 2162 }, { "main", "show", 4 }, END_EDGES };
	struct traced t;

	trace_fixture("demo", NULL, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p,
			 "primes below 100 = 25\nfib(5) = 5\nfib(10) = 55\nfib(15) = 610\n");
	expect_counts(t.report, c, e);
	traced_free(&t);
}
END_TEST

/* -------------------------------------------------------------- time */

/* Off-CPU time: nap() sleeps 3 x 20 ms. With the wall clock it is 'suspend' under nap
 * (nap's own OWN stays small, its ACC holds the sleep); with --clock cpu the sleep is
 * not counted at all. */
static long long callee_acc(json_object *fn, const char *name, long long *calls)
{
	json_object *callees = jarr(fn, "callees");

	for (size_t i = 0; i < json_object_array_length(callees); i++) {
		json_object *k = json_object_array_get_idx(callees, i);

		if (name_is(k, name)) {
			*calls = jint(k, "calls");
			return jint(k, "acc_ns");
		}
	}
	*calls = 0;
	return 0;
}

START_TEST(suspend_wall_and_cpu)
{
	static const struct count c[] = { { "main", 1 }, { "nap", 3 }, END_COUNTS };
	static const struct edge e[] = { { "main", "nap", 3 }, END_EDGES };
	const char *const cpu[] = { "--clock", "cpu", NULL };
	long long calls, acc;
	json_object *nap;
	struct traced t;

	trace_fixture("sleeper", NULL, NULL, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, "slept 3\n");
	expect_counts(t.report, c, e);
	ck_assert_str_eq(jstr(t.report, "clock"), "wall");
	nap = fn_find(t.report, "nap");
	acc = callee_acc(nap, "suspend", &calls);
	ck_assert_msg(calls >= 3 && acc >= 55000000, "suspend under nap: %lld calls, %lld ns",
		      calls, acc);
	ck_assert_msg(jint(nap, "acc_ns") >= 55000000, "nap ACC %lld ns", jint(nap, "acc_ns"));
	ck_assert_msg(jint(nap, "own_ns") < 20000000, "nap OWN %lld ns: the sleep is in it",
		      jint(nap, "own_ns"));
	traced_free(&t);

	trace_fixture("sleeper", cpu, NULL, NULL, 0, 0, &t);
	expect_counts(t.report, c, e);
	ck_assert_str_eq(jstr(t.report, "clock"), "cpu");
	nap = fn_find(t.report, "nap");
	ck_assert_int_eq(callee_acc(nap, "suspend", &calls), 0);
	ck_assert_int_eq(calls, 0);
	ck_assert_msg(jint(nap, "acc_ns") < 20000000, "cpu clock: nap ACC %lld ns includes the sleep",
		      jint(nap, "acc_ns"));
	traced_free(&t);
}
END_TEST

/* A 20,000-deep recursion: every report is written (no stack overflow, no quadratic
 * blow-up), folded stacks are cut at 1024 frames with the rest on '[deeper]', and the
 * saved JSON loads again. */
START_TEST(deep_recursion_reports)
{
	static const struct count c[] = { { "main", 1 }, { "down", 20001 }, END_COUNTS };
	static const struct edge e[] = { { "main", "down", 1 }, { "down", "down", 20000 },
					 END_EDGES };
	char dir[] = "/tmp/calltrace-e2e-XXXXXX", base[4200], path[4300];
	char *argv[] = { CT_CALLTRACE, "-q", "--format", "json,folded,fprof,svg,callgrind", "-o",
			 base, FIX("deep"), NULL };
	char *rep[] = { CT_CALLTRACE, "report", path, "--format", "folded", "-o", base, NULL };
	size_t len = 0, lines = 0, deeper = 0, waits = 0;
	json_object *root;
	struct run r;
	char *text;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(base, sizeof(base), "%s/deep", dir);
	run_argv(argv, NULL, NULL, 0, &r);
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, err_head(&r));
	ck_assert_str_eq(r.out.p, "depth 20000\n");
	run_free(&r);
	snprintf(path, sizeof(path), "%s.json", base);
	root = json_load(path);
	ck_assert_ptr_nonnull(root);
	expect_counts(root, c, e);
	json_object_put(root);
	snprintf(path, sizeof(path), "%s.folded", base);
	text = read_file(path, &len);
	ck_assert_ptr_nonnull(text);
	ck_assert_msg(len < 16 * 1024 * 1024, "folded output of %zu bytes", len);
	for (char *line = text, *end; *line; line = end + 1) {
		end = strchr(line, '\n');
		ck_assert_ptr_nonnull(end);
		*end = 0;
		lines++;
		deeper += strstr(line, ";[deeper] ") != NULL;
		waits += strstr(line, ";suspend ") != NULL;
	}
	ck_assert_msg(deeper == 1, "%zu lines with a [deeper] frame", deeper);
	/* one line at most per depth up to 1024, [deeper] for the rest; a wait (suspend:
	 * the VM's steal time, say) may add a line anywhere */
	ck_assert_msg(lines - waits <= 1025, "%zu folded lines (%zu of suspend)", lines, waits);
	free(text);
	/* the saved profile renders again */
	snprintf(path, sizeof(path), "%s.json", base);
	snprintf(base, sizeof(base), "%s/again.folded", dir);
	run_argv(rep, NULL, NULL, 0, &r);
	ck_assert_msg(r.status == 0, "report: status %d: %s", r.status, err_head(&r));
	run_free(&r);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

/* The live status line: on a terminal (a run of more than 250 ms), erased at the end;
 * never with -q. */
START_TEST(status_line_on_terminal)
{
	for (int quiet = 0; quiet < 2; quiet++) {
		char buf[65536];
		size_t len = 0;
		ssize_t n;
		int master, st;
		pid_t pid = forkpty(&master, NULL, NULL, NULL);

		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			execl(CT_CALLTRACE, "calltrace", quiet ? "-q" : "--stats", "-o", "/dev/null",
			      FIX("deep"), "100000", (char *)NULL);
			_exit(121);
		}
		while ((n = read(master, buf + len, sizeof(buf) - 1 - len)) > 0)
			len += (size_t)n;
		buf[len] = 0;
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, buf);
		ck_assert_msg(strstr(buf, "depth 100000"), "program output missing: %s", buf);
		if (quiet)
			ck_assert_msg(!strstr(buf, "\033[K"), "-q printed a status line: %s", buf);
		else
			ck_assert_msg(strstr(buf, "\rcalltrace: ") && strstr(buf, " calls/s, 1 thread") &&
				      strstr(buf, "\r\033[K"), "no status line: %s", buf);
		close(master);
	}
}
END_TEST

/* ------------------------------------------------------------- detours */

static const char *const detour_opts[][2] = { { NULL }, { "--no-detours", NULL } };

/* Hand-written functions where a detour may go (whole, pro, riprel) and where jumps land
 * inside what a detour would cover (spin_in, epi_target, mid_target, sw), under a
 * SIGALRM every 200 us that lands anywhere, blocks included: the same output and exact
 * counts with detours and without them (count mode: count_cases). A
 * detour over
 * a jump target would send that jump into the middle of a jmp rel32. */
START_TEST(detours_counts)
{
	static const struct count c[] = { { "main", 1 }, { "whole", 1000 }, { "pro", 1000 },
					  { "riprel", 1000 }, { "spin_in", 1000 },
					  { "epi_target", 1000 }, { "mid_target", 1000 },
					  { "sw", 1000 }, { "swent", 1000 }, { "nest_a", 1000 },
					  { "nest_b", 750 }, END_COUNTS };
	static const struct edge e[] = { { "main", "whole", 1000 }, { "main", "pro", 1000 },
					 { "main", "riprel", 1000 }, { "main", "spin_in", 1000 },
					 { "main", "epi_target", 1000 },
					 { "main", "mid_target", 1000 }, { "main", "sw", 1000 },
					 { "main", "swent", 1000 }, { "main", "nest_a", 1000 },
					 END_EDGES };
	static const char *const args[] = { "1000", "alarm", NULL };
	struct traced t;

	trace_fixture("detours", detour_opts[_i], args, NULL, 0, 0, &t);
	ck_assert_str_eq(t.plain.out.p, "sum 1318531 ctr 1000\n");
	expect_counts(t.report, c, e);
	traced_free(&t);
}
END_TEST

/* The common path writes no register: 2 stops per call, and no rip write at all for
 * functions whose entry and ret have detours (main may need one at its exit). Without
 * detours every stop writes the rip. */
START_TEST(detours_no_rip_writes)
{
	char *argv[] = { CT_CALLTRACE, "--stats", "-o", "/dev/null", FIX("detours"), "1000",
			 "fast", NULL };
	char *plain[] = { CT_CALLTRACE, "--stats", "--no-detours", "-o", "/dev/null",
			  FIX("detours"), "1000", "fast", NULL };
	struct run r;
	const char *p;
	long long writes;

	run_argv(argv, NULL, NULL, 0, &r);
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, err_head(&r));
	ck_assert_str_eq(r.out.p, "sum 1109956 ctr 1000\n");
	/* main, 3 x 1000 calls, and _start (not recorded; it never returns: one stop) */
	ck_assert_msg(strstr(r.err.p, "3002 calls (3001 recorded), 6003 stops, 2.000 stops per call"),
		      "stats: %s", r.err.p);
	p = strstr(r.err.p, " in detours), ");
	writes = p ? number_after(p, "), ") : -1;
	ck_assert_msg(writes >= 0 && writes <= 2, "rip writes: %s", r.err.p);
	ck_assert_msg(number_after(r.err.p, "breakpoints (") >= 6, "detours: %s", r.err.p);
	run_free(&r);

	run_argv(plain, NULL, NULL, 0, &r);
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, err_head(&r));
	ck_assert_msg(strstr(r.err.p, "(0 in detours), 6003 rip writes"), "stats: %s", r.err.p);
	run_free(&r);
}
END_TEST

/* ------------------------------------------------------------- the cost of a stop */

/* The cost of a stop is measured on the run's own round trips that are proven, from the
 * code, to run next to nothing (docs/timing.md). A plain loop of calls to a straight
 * function has two such pairs of sites, of 3000 and 2999 round trips. In the other modes of fixture trips every round trip runs code of its own, some
 * of it only in ways a careless proof would miss (a loop through a rewritten jump back
 * to the entry, an untraced helper that tail-jumps to the traced entry, a conditional
 * jump out to memset), and the start-up calibration must be used. (Times themselves are
 * measured in bench/accuracy.sh.) */
static const struct {
	const char *mode, *out;
} unprovable[] = {
	{ "loop", "sum 63000\n" }, { "reloop", "sum 660000\n" },
	{ "helper", "sum 225000\n" }, { "jccout", "sum 60000\n" },
};

START_TEST(stop_cost_measured)
{
	char dir[] = "/tmp/calltrace-e2e-XXXXXX", path[4200];
	char *tight[] = { CT_CALLTRACE, "--stats", "--format", "json", "-o", path, FIX("trips"),
			  "tight", "3000", NULL };
	json_object *root, *cost = NULL;
	struct run r;
	long long n;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/trips.json", dir);
	run_argv(tight, NULL, NULL, 0, &r);
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, err_head(&r));
	ck_assert_str_eq(r.out.p, "sum 3000\n");
	ck_assert_msg(strstr(r.err.p, "3002 calls (3001 recorded), 6003 stops"), "stats: %s",
		      r.err.p);
	n = number_after(r.err.p, "ns (the mean of ");
	/* both pairs proven: 3000 entry-to-ret and 2999 ret-to-entry round trips */
	ck_assert_msg(n == 5999, "round trips measured: %s", r.err.p);
	/* the report says what was taken out, and from what */
	root = json_load(path);
	ck_assert_ptr_nonnull(root);
	ck_assert(json_object_object_get_ex(root, "stop_cost", &cost) && cost);
	ck_assert_str_eq(jstr(cost, "source"), "run");
	ck_assert_int_eq(jint(cost, "round_trips"), n);
	ck_assert_int_eq(jint(cost, "ns"), number_after(r.err.p, "kernel part used "));
	json_object_put(root);
	run_free(&r);
	unlink(path);
	rmdir(dir);
}
END_TEST

START_TEST(stop_cost_unprovable)
{
	char *argv[] = { CT_CALLTRACE, "--stats", "-o", "/dev/null", FIX("trips"),
			 (char *)unprovable[_i].mode, "3000", NULL };
	struct run r;

	run_argv(argv, NULL, NULL, 0, &r);
	ck_assert_msg(r.status == 0, "%s: status %d: %s", unprovable[_i].mode, r.status,
		      err_head(&r));
	ck_assert_str_eq(r.out.p, unprovable[_i].out);
	ck_assert_msg(strstr(r.err.p, "ns (calibrated: fewer than 1000 round trips that ran next "
				      "to nothing)"),
		      "%s: stats: %s", unprovable[_i].mode, r.err.p);
	run_free(&r);
}
END_TEST

/* ------------------------------------------------------------- count mode */

/* Calls per function name ("name@module", pseudo functions left out) from a report. */
static void calls_by_function(json_object *root, struct tally *t)
{
	json_object *fns = jarr(root, "functions");

	for (size_t i = 0; i < json_object_array_length(fns); i++) {
		json_object *f = json_object_array_get_idx(fns, i);
		char key[1024];

		if (!*jstr(f, "module") || jint(f, "calls") == 0)
			continue;
		snprintf(key, sizeof(key), "%s@%s", jstr(f, "name"), jstr(f, "module"));
		tally_add(t, xstrdup(key), NULL, jint(f, "calls"));
	}
}

static const struct {
	const char *fixture;
	const char *arg;
} count_cases[] = {
	{ "recursion", "12" }, { "mutual", NULL }, { "callers", NULL }, { "tailcall", NULL },
	{ "tiny", NULL }, { "endbr", NULL }, { "fnptr", NULL }, { "demo", NULL },
	{ "callers_static", NULL }, { "detours", "1000" },
};

/* -c makes one stop per call and must count exactly what full mode counts. */
START_TEST(count_matches_full)
{
	char dir[] = "/tmp/calltrace-e2e-XXXXXX", full[4200], count[4200], fix[4200];
	char *arg = (char *)count_cases[_i].arg;
	char *full_argv[] = { CT_CALLTRACE, "--format", "json", "-o", full, fix, arg, NULL };
	char *count_argv[] = { CT_CALLTRACE, "-c", "--stats", "--format", "json", "-o", count,
			       fix, arg, NULL };
	struct tally a = { 0 }, b = { 0 };
	json_object *rf, *rc;
	struct run r1, r2;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(fix, sizeof(fix), "%s/%s", CT_FIXTURE_DIR, count_cases[_i].fixture);
	snprintf(full, sizeof(full), "%s/full.json", dir);
	snprintf(count, sizeof(count), "%s/count.json", dir);
	run_argv(full_argv, NULL, NULL, 0, &r1);
	run_argv(count_argv, NULL, NULL, 0, &r2);
	ck_assert_int_eq(r1.status, r2.status);
	ck_assert_msg(r1.out.len == r2.out.len && !memcmp(r1.out.p, r2.out.p, r1.out.len),
		      "%s: stdout differs between full and count mode", count_cases[_i].fixture);
	/* one stop per call, and one more for each root's exit */
	{
		const char *p = strstr(r2.err.p, "stops, ");
		double per_call = p ? strtod(p + 7, NULL) : -1;

		ck_assert_msg(per_call >= 1.0 && per_call <= 1.25,
			      "%s: %.3f stops per call in count mode: %s", count_cases[_i].fixture,
			      per_call, err_head(&r2));
	}
	rf = json_load(full);
	rc = json_load(count);
	ck_assert_ptr_nonnull(rf);
	ck_assert_ptr_nonnull(rc);
	ck_assert_str_eq(jstr(rc, "mode"), "count");
	calls_by_function(rf, &a);
	calls_by_function(rc, &b);
	ck_assert_msg(a.nr > 0, "%s: nothing counted", count_cases[_i].fixture);
	ck_assert_msg(a.nr == b.nr, "%s: %zu functions in full mode, %zu in count mode",
		      count_cases[_i].fixture, a.nr, b.nr);
	for (size_t i = 0; i < a.nr; i++)
		ck_assert_msg(tally_get(&b, a.v[i].name) == a.v[i].n,
			      "%s: %s called %lld times in full mode, %lld in count mode",
			      count_cases[_i].fixture, a.v[i].name, a.v[i].n,
			      tally_get(&b, a.v[i].name));
	json_object_put(rf);
	json_object_put(rc);
	for (size_t i = 0; i < a.nr; i++)
		free((char *)a.v[i].name);
	for (size_t i = 0; i < b.nr; i++)
		free((char *)b.v[i].name);
	free(a.v);
	free(b.v);
	unlink(full);
	unlink(count);
	rmdir(dir);
	run_free(&r1);
	run_free(&r2);
}
END_TEST

/* -c alone: cprof on stderr (no caller reads needed), counts as full mode's. */
START_TEST(count_default_cprof)
{
	char *argv[] = { CT_CALLTRACE, "-c", FIX("callers"), NULL };
	struct run r;

	run_argv(argv, NULL, NULL, 0, &r);
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, err_head(&r));
	ck_assert_str_eq(r.out.p, "total = 63\n");
	ck_assert_msg(strstr(r.err.p, "{{callers,shared,1},11}") &&
		      strstr(r.err.p, "{{callers,caller_c,0},1}") &&
		      strstr(r.err.p, "{15,") && strstr(r.err.p, "{callers,15,"),
		      "cprof report: %s", r.err.p);
	run_free(&r);
}
END_TEST

/* ---------------------------------------------------------- saved profiles */

static const char *const all_formats[] = { "fprof", "json", "cprof", "eprof", "flat",
					   "callgrind", "folded", "svg" };

/* One run writes fprof and json; 'calltrace report' re-renders every format from the
 * json, and its fprof is byte for byte the one written by the run. */
START_TEST(report_every_format)
{
	char dir[] = "/tmp/calltrace-e2e-XXXXXX", base[4200], saved[4300], direct[4300];
	char out[4300];
	char *run_args[] = { CT_CALLTRACE, "--format", "fprof,json", "-o", base, FIX("demo"), NULL };
	struct run r;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(base, sizeof(base), "%s/demo", dir);
	snprintf(saved, sizeof(saved), "%s.json", base);
	snprintf(direct, sizeof(direct), "%s.fprof", base);
	run_argv(run_args, NULL, NULL, 0, &r);
	ck_assert_msg(r.status == 0, "traced run: %s", err_head(&r));
	run_free(&r);
	for (size_t i = 0; i < sizeof(all_formats) / sizeof(all_formats[0]); i++) {
		char *argv[] = { CT_CALLTRACE, "report", saved, "--format", (char *)all_formats[i],
				 "-o", out, NULL };
		size_t len = 0;
		char *text;

		snprintf(out, sizeof(out), "%s/again.%s", dir, all_formats[i]);
		run_argv(argv, NULL, NULL, 0, &r);
		ck_assert_msg(r.status == 0, "report --format %s: status %d: %s", all_formats[i],
			      r.status, err_head(&r));
		text = read_file(out, &len);
		ck_assert_msg(text && len > 0, "report --format %s wrote nothing", all_formats[i]);
		if (!strcmp(all_formats[i], "fprof")) {
			size_t dlen = 0;
			char *d = read_file(direct, &dlen);

			ck_assert_msg(d && dlen == len && !memcmp(d, text, len),
				      "fprof from the saved profile differs from the run's own");
			free(d);
		}
		free(text);
		unlink(out);
		run_free(&r);
	}
	unlink(saved);
	unlink(direct);
	rmdir(dir);
}
END_TEST

/* A corrupt or truncated saved profile: one line naming the file, status 125. */
START_TEST(report_corrupt)
{
	char dir[] = "/tmp/calltrace-e2e-XXXXXX", base[4200], saved[4300], bad[4300];
	char *run_args[] = { CT_CALLTRACE, "--format", "json", "-o", saved, FIX("demo"), NULL };
	static const char *const keys[] = { "truncated", "not JSON", "no such file" };
	struct run r;
	size_t len = 0;
	char *text;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(base, sizeof(base), "%s/demo", dir);
	snprintf(saved, sizeof(saved), "%s.json", base);
	snprintf(bad, sizeof(bad), "%s/bad.json", dir);
	run_argv(run_args, NULL, NULL, 0, &r);
	ck_assert_int_eq(r.status, 0);
	run_free(&r);
	text = read_file(saved, &len);
	ck_assert(text && len > 100);
	for (int k = 0; k < 3; k++) {
		char *argv[] = { CT_CALLTRACE, "report", bad, NULL };

		if (k == 0)
			write_file(bad, text, len / 2, 0644);
		else if (k == 1)
			write_file(bad, "calltrace profile\n", 18, 0644);
		else
			unlink(bad);
		run_argv(argv, NULL, NULL, 0, &r);
		ck_assert_msg(r.status == 125, "%s: status %d", keys[k], r.status);
		ck_assert_msg(!strncmp(r.err.p, "calltrace: ", 11) && strchr(r.err.p, '\n') &&
			      !strchr(r.err.p, '\n')[1],
			      "%s: not one line: %s", keys[k], r.err.p);
		ck_assert_msg(strstr(r.err.p, bad) && strcasestr(r.err.p, keys[k]),
			      "%s: message: %s", keys[k], r.err.p);
		run_free(&r);
	}
	free(text);
	unlink(saved);
	unlink(bad);
	rmdir(dir);
}
END_TEST

/* Default format fprof, written to stderr: the program's stdout is untouched, and the
 * report names functions as {Module,Function,Arity} with the executable's base name as
 * module and the arity from DWARF. */
START_TEST(fprof_default_to_stderr)
{
	char *plain_argv[] = { FIX("recursion"), "10", NULL };
	char *traced_argv[] = { CT_CALLTRACE, FIX("recursion"), "10", NULL };
	struct run plain, traced;
	int found_fib = 0, found_main = 0;
	char *save = NULL;

	run_argv(plain_argv, NULL, NULL, 0, &plain);
	run_argv(traced_argv, NULL, NULL, 0, &traced);
	ck_assert_int_eq(plain.status, 0);
	ck_assert_msg(traced.status == 0, "status %d; stderr:\n%s", traced.status,
		      err_head(&traced));
	ck_assert_str_eq(traced.out.p, plain.out.p);
	ck_assert_msg(strstr(traced.err.p, "analysis_options"), "no fprof report on stderr:\n%s",
		      err_head(&traced));
	for (char *l = strtok_r(traced.err.p, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		/* the marked line of fib's paragraph: " { {recursion,fib,1},   177, ..." */
		if (strstr(l, "{recursion,fib,1},") && strstr(l, " 177,") &&
		    strncmp(l, " { ", 3) == 0)
			found_fib = 1;
		if (strstr(l, "{recursion,main,2}"))
			found_main = 1;
	}
	ck_assert_msg(found_fib, "no line ' { {recursion,fib,1}, 177, ...' in the fprof report");
	ck_assert_msg(found_main, "no {recursion,main,2} in the fprof report");
	run_free(&plain);
	run_free(&traced);
}
END_TEST

/* ------------------------------------------------------------------ fixtures alone */

/* The fixtures behave as their opening comments say (no calltrace involved). */
static const struct {
	const char *name, *arg, *out;
	int status;
} fixture_runs[] = {
	{ "recursion", "20", "fib(20) = 6765\n", 0 },
	{ "recursion", "10", "fib(10) = 55\n", 0 },
	{ "mutual", NULL, "10 even: 1\n7 odd: 1\n", 0 },
	{ "callers", NULL, "total = 63\n", 0 },
	{ "callers_nopie", NULL, "total = 63\n", 0 },
	{ "callers_static", NULL, "total = 63\n", 0 },
	{ "tailcall", NULL, "sum = 70\n", 0 },
	{ "ripfirst", NULL, "g=7 g=1000 g=1000 g=2000 c=0x1122334455667788 x4 addr ok\n", 0 },
	{ "tiny", NULL, "xor_ret sum 0\n", 0 },
	{ "detours", NULL, "sum 1318531 ctr 1000\n", 0 },
	{ "endbr", NULL, "result 15\n", 0 },
	{ "exitdepth", NULL, "in d5, exiting with 3\n", 3 },
	{ "segv", NULL, "warm 10\n", 128 + SIGSEGV },
	{ "status42", NULL, "status 42\n", 42 },
	{ "demo", NULL, "primes below 100 = 25\nfib(5) = 5\nfib(10) = 55\nfib(15) = 610\n", 0 },
};

START_TEST(fixture_untraced)
{
	char path[4096];
	char *argv[3] = { path, (char *)fixture_runs[_i].arg, NULL };
	struct run r;

	snprintf(path, sizeof(path), "%s/%s", CT_FIXTURE_DIR, fixture_runs[_i].name);
	run_argv(argv, NULL, NULL, 0, &r);
	ck_assert_msg(r.status == fixture_runs[_i].status, "%s: status %d, expected %d",
		      fixture_runs[_i].name, r.status, fixture_runs[_i].status);
	ck_assert_str_eq(r.out.p, fixture_runs[_i].out);
	run_free(&r);
}
END_TEST

/* Instructions of @sym in fixture @file, one per element, as objdump prints them
 * ("jmp    11e0 <b>"); *nr set. Caller owns the array and strings (free_insns). */
static char **disasm(const char *file, const char *sym, size_t *nr)
{
	char path[4096], opt[256], header[256];
	char *argv[] = { "objdump", "-d", "--no-show-raw-insn", opt, path, NULL };
	char **v = NULL, *p, *save = NULL;
	struct run r;

	snprintf(path, sizeof(path), "%s/%s", CT_FIXTURE_DIR, file);
	snprintf(opt, sizeof(opt), "--disassemble=%s", sym);
	snprintf(header, sizeof(header), "<%s>:", sym);
	run_argv(argv, NULL, NULL, 0, &r);
	ck_assert_msg(r.status == 0, "objdump failed on %s: %s", path, r.err.p);
	p = strstr(r.out.p, header);
	ck_assert_msg(p, "no symbol %s in %s", sym, path);
	*nr = 0;
	for (char *l = strtok_r(p + strlen(header), "\n", &save); l && *l;
	     l = strtok_r(NULL, "\n", &save)) {
		char *insn = strstr(l, ":\t");

		if (!insn)
			break;		/* next symbol's header or end */
		v = realloc(v, (*nr + 1) * sizeof(*v));
		ck_assert_ptr_nonnull(v);
		v[(*nr)++] = xstrdup(insn + 2);
	}
	ck_assert_msg(*nr > 0, "no instructions for %s in %s", sym, path);
	run_free(&r);
	return v;
}

static void free_insns(char **v, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(v[i]);
	free(v);
}

static void expect_insn(const char *file, const char *sym, int last, const char *prefix,
			const char *contains)
{
	size_t nr;
	char **v = disasm(file, sym, &nr);
	const char *insn = v[last ? nr - 1 : 0];

	ck_assert_msg(strncmp(insn, prefix, strlen(prefix)) == 0 &&
		      (!contains || strstr(insn, contains)),
		      "%s: %s instruction of %s is \"%s\", expected \"%s...%s\"", file,
		      last ? "last" : "first", sym, insn, prefix, contains ? contains : "");
	free_insns(v, nr);
}

START_TEST(tailcall_is_jmp)
{
	expect_insn("tailcall", "a", 1, "jmp", "<b>");
	expect_insn("tailcall", "b", 1, "jmp", "<c>");
	expect_insn("tailcall", "c", 1, "ret", NULL);
}
END_TEST

START_TEST(endbr_first_insn)
{
	expect_insn("endbr", "main", 0, "endbr64", NULL);
	expect_insn("endbr", "twice", 0, "endbr64", NULL);
	expect_insn("endbr", "add1", 0, "endbr64", NULL);
}
END_TEST

START_TEST(ripfirst_first_insn)
{
	expect_insn("ripfirst", "getg", 0, "mov ", "(%rip)");
	expect_insn("ripfirst", "setg", 0, "movl ", "(%rip)");
	expect_insn("ripfirst", "setg2", 0, "movl ", "(%rip)");
	expect_insn("ripfirst", "loadc", 0, "movdqa ", "(%rip)");
	expect_insn("ripfirst", "addrg", 0, "lea ", "(%rip)");
}
END_TEST

START_TEST(tiny_sizes)
{
	size_t nr;
	char **v = disasm("tiny", "ret_only", &nr);

	ck_assert_int_eq(nr, 1);
	ck_assert_str_eq(v[0], "ret");
	free_insns(v, nr);
	v = disasm("tiny", "xor_ret", &nr);
	ck_assert_int_eq(nr, 2);
	ck_assert(strncmp(v[0], "xor ", 4) == 0 && strcmp(v[1], "ret") == 0);
	free_insns(v, nr);
}
END_TEST

/* marker, marker_static_stripped and nosyms create their argument; the error tests rely
 * on it. */
START_TEST(marker_creates_file)
{
	char dir[] = "/tmp/calltrace-e2e-XXXXXX", file[4200];
	char *argv[] = { FIX("marker"), file, NULL };
	char *argv_static[] = { FIX("marker_static_stripped"), file, NULL };
	char *argv_nosyms[] = { FIX("nosyms"), file, NULL };
	struct run r;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/ran", dir);
	run_argv(argv, NULL, NULL, 0, &r);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(unlink(file), 0);
	run_free(&r);
	run_argv(argv_static, NULL, NULL, 0, &r);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(unlink(file), 0);
	run_free(&r);
	run_argv(argv_nosyms, NULL, NULL, 0, &r);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(unlink(file), 0);
	run_free(&r);
	rmdir(dir);
}
END_TEST

/* ------------------------------------------------------------------ errors */

/* Each case: calltrace's status, stderr exactly one line "calltrace: ..." containing
 * every key (case-insensitive; "x|y" accepts either), and the program never ran (the
 * marker file @dir/ran does not exist). Runs in a fresh temporary directory. */
struct err_case {
	const char *what;
	int status;
	const char *keys[4];
};

static const struct err_case err_cases[] = {
	{ "nonexistent path", 127, { "./no/such/prog", "no such file" } },
	{ "bare name not in PATH", 127, { "no-such-cmd-xyz", "not found" } },
	{ "file without x bits", 126, { "noexec", "not executable" } },
	{ "executable script", 126, { "script.sh", "not an ELF" } },
	{ "32-bit ELF", 126, { "elf32", "32-bit" } },
	{ "aarch64 ELF", 126, { "arm64", "x86-64" } },
	{ "-f matching nothing", 125, { "no_such_function_xyz", "no function|no such function" } },
	{ "no symbols at all", 125, { "nosyms", "no function symbols" } },
	{ "unknown option", 125, { "--bogus" } },
	{ "unwritable -o", 125, { "/nonexistent-dir/x.txt" } },
};

/* Copy the marker fixture to @dst with @mode, then patch @nr bytes at @off (if nr). */
static void copy_marker(const char *dst, mode_t mode, size_t off, const void *bytes, size_t nr)
{
	size_t len;
	char *elf = read_file(FIX("marker"), &len);

	ck_assert_ptr_nonnull(elf);
	ck_assert_uint_gt(len, off + nr);
	memcpy(elf + off, bytes, nr);
	write_file(dst, elf, len, mode);
	free(elf);
}

static int has_key(const char *line, const char *keys)
{
	char *copy = xstrdup(keys), *save = NULL;
	int found = 0;

	for (char *k = strtok_r(copy, "|", &save); k && !found; k = strtok_r(NULL, "|", &save))
		found = strcasestr(line, k) != NULL;
	free(copy);
	return found;
}

START_TEST(error_path)
{
	const struct err_case *c = &err_cases[_i];
	char dir[] = "/tmp/calltrace-e2e-XXXXXX", marker[4200], path[4200];
	char *argv[8] = { CT_CALLTRACE };
	struct run r;
	int n = 1;

	path[0] = '\0';
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(marker, sizeof(marker), "%s/ran", dir);
	switch (_i) {
	case 0:
		argv[n++] = "./no/such/prog";
		break;
	case 1:
		argv[n++] = "no-such-cmd-xyz";
		break;
	case 2:
		snprintf(path, sizeof(path), "%s/noexec", dir);
		copy_marker(path, 0644, 0, NULL, 0);
		argv[n++] = "./noexec";
		break;
	case 3: {
		char script[4400];

		snprintf(script, sizeof(script), "#!/bin/sh\n: > '%s'\n", marker);
		snprintf(path, sizeof(path), "%s/script.sh", dir);
		write_file(path, script, strlen(script), 0755);
		argv[n++] = "./script.sh";
		break;
	}
	case 4: {
		const unsigned char elfclass32 = 1;	/* e_ident[EI_CLASS] = ELFCLASS32 */

		snprintf(path, sizeof(path), "%s/elf32", dir);
		copy_marker(path, 0755, 4, &elfclass32, 1);
		argv[n++] = "./elf32";
		break;
	}
	case 5: {
		const unsigned char em_aarch64[2] = { 183, 0 };	/* e_machine, little-endian */

		snprintf(path, sizeof(path), "%s/arm64", dir);
		copy_marker(path, 0755, 18, em_aarch64, 2);
		argv[n++] = "./arm64";
		break;
	}
	case 6:
		argv[n++] = "-f";
		argv[n++] = "no_such_function_xyz";
		argv[n++] = FIX("marker");
		break;
	case 7:
		argv[n++] = FIX("nosyms");
		break;
	case 8:
		argv[n++] = "--bogus";
		argv[n++] = FIX("marker");
		break;
	case 9:
		argv[n++] = "-o";
		argv[n++] = "/nonexistent-dir/x.txt";
		argv[n++] = FIX("marker");
		break;
	default:
		ck_abort_msg("no such error case %d", _i);
	}
	argv[n++] = marker;
	argv[n] = NULL;
	run_argv(argv, dir, NULL, 0, &r);

	ck_assert_msg(r.status == c->status, "%s: status %d, expected %d; stderr: %s", c->what,
		      r.status, c->status, err_head(&r));
	ck_assert_msg(r.err.len > 0 && r.err.p[r.err.len - 1] == '\n' &&
		      memchr(r.err.p, '\n', r.err.len) == r.err.p + r.err.len - 1,
		      "%s: stderr is not exactly one line: \"%s\"", c->what, err_head(&r));
	ck_assert_msg(strncmp(r.err.p, "calltrace: ", 11) == 0,
		      "%s: stderr does not start with \"calltrace: \": %s", c->what, r.err.p);
	for (int k = 0; k < 4 && c->keys[k]; k++)
		ck_assert_msg(has_key(r.err.p, c->keys[k]), "%s: \"%s\" not in: %s", c->what,
			      c->keys[k], r.err.p);
	ck_assert_str_eq(r.out.p, "");
	ck_assert_msg(access(marker, F_OK) < 0 && errno == ENOENT,
		      "%s: the program ran (marker file created)", c->what);

	if (path[0])
		unlink(path);
	rmdir(dir);
	run_free(&r);
}
END_TEST

/* ------------------------------------------------------------------ runner */

static Suite *fixtures_suite(void)
{
	Suite *s = suite_create("fixtures");

	tcase_add_loop_test(tcase(s, "untraced"), fixture_untraced, 0,
			    (int)(sizeof(fixture_runs) / sizeof(fixture_runs[0])));
	tcase_add_test(tcase(s, "tailcall_is_jmp"), tailcall_is_jmp);
	tcase_add_test(tcase(s, "endbr_first_insn"), endbr_first_insn);
	tcase_add_test(tcase(s, "ripfirst_first_insn"), ripfirst_first_insn);
	tcase_add_test(tcase(s, "tiny_sizes"), tiny_sizes);
	tcase_add_test(tcase(s, "marker"), marker_creates_file);
	return s;
}

static Suite *trace_suite(void)
{
	Suite *s = suite_create("trace");

	tcase_add_test(tcase(s, "recursion"), recursion_fib20);
	tcase_add_test(tcase(s, "recursion_file_line"), recursion_file_line);
	tcase_add_test(tcase(s, "mutual"), mutual_even_odd);
	tcase_add_loop_test(tcase(s, "callers"), callers_link_modes, 0, 3);
	tcase_add_test(tcase(s, "tailcall"), tailcall_chain);
	tcase_add_test(tcase(s, "ripfirst"), ripfirst_relocated);
	tcase_add_test(tcase(s, "tiny"), tiny_ret_functions);
	tcase_add_loop_test(tcase(s, "detours"), detours_counts, 0,
			    (int)(sizeof(detour_opts) / sizeof(detour_opts[0])));
	tcase_add_test(tcase(s, "detours_rip"), detours_no_rip_writes);
	tcase_add_test(tcase(s, "stop_cost"), stop_cost_measured);
	tcase_add_loop_test(tcase(s, "stop_cost_unprovable"), stop_cost_unprovable, 0,
			    (int)(sizeof(unprovable) / sizeof(unprovable[0])));
	tcase_add_test(tcase(s, "endbr"), endbr_functions);
	tcase_add_test(tcase(s, "fnptr"), fnptr_indirect);
	tcase_add_test(tcase(s, "exitdepth"), exit_from_depth);
	tcase_add_test(tcase(s, "segv"), segv_at_depth);
	tcase_add_test(tcase(s, "status42"), status42_passthrough);
	tcase_add_test(tcase(s, "catlines"), catlines_stdin);
	tcase_add_test(tcase(s, "stripped"), stripped_static);
	tcase_add_loop_test(tcase(s, "count_mode"), count_matches_full, 0,
			    (int)(sizeof(count_cases) / sizeof(count_cases[0])));
	tcase_add_test(tcase(s, "count_cprof"), count_default_cprof);
	tcase_add_test(tcase(s, "report_formats"), report_every_format);
	tcase_add_test(tcase(s, "report_corrupt"), report_corrupt);
	tcase_add_test(tcase(s, "suspend"), suspend_wall_and_cpu);
	tcase_add_test(tcase(s, "deep"), deep_recursion_reports);
	tcase_add_test(tcase(s, "status_line"), status_line_on_terminal);
	tcase_add_test(tcase(s, "demo"), demo_readme);
	tcase_add_test(tcase(s, "fprof_default"), fprof_default_to_stderr);
	return s;
}

static Suite *errors_suite(void)
{
	Suite *s = suite_create("errors");

	tcase_add_loop_test(tcase(s, "error_path"), error_path, 0,
			    (int)(sizeof(err_cases) / sizeof(err_cases[0])));
	return s;
}

int main(void)
{
	int can_trace = ptrace_permitted(), failed;
	SRunner *sr = srunner_create(fixtures_suite());

	signal(SIGPIPE, SIG_IGN);	/* a fixture that stops reading stdin: EPIPE, not death */
	srunner_add_suite(sr, errors_suite());
	if (can_trace)
		srunner_add_suite(sr, trace_suite());
	else
		fprintf(stderr, "check_e2e: ptrace not permitted here; skipping the trace suite\n");
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (failed)
		return EXIT_FAILURE;
	return can_trace ? EXIT_SUCCESS : 77;
}
