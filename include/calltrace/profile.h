/* SPDX-License-Identifier: MIT */
/* profile.h - the recorded profile: traced functions, one calling-context tree per
 * thread, and the run's metadata. Pure data: no ptrace, no libdw, no capstone, so the
 * report writers and their tests work on plain structures. The engine fills it through
 * ctree_enter()/ctree_leave(); the writers only read it.
 *
 * Invariant: memory grows with the number of distinct call paths (nodes), never with
 * the number of calls. */
#ifndef CALLTRACE_PROFILE_H
#define CALLTRACE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Index of a function in profile.funcs. CT_FUNC_UNDEFINED is fprof's 'undefined':
 * the unknown caller of a thread's root functions (the tree's root node). */
typedef uint32_t ct_func_id;
#define CT_FUNC_UNDEFINED ((ct_func_id)UINT32_MAX)

/* Per-call latency (ACC of each call, recursive calls included) of one function:
 * a log-linear histogram, 4 buckets per power of two, so quantiles are within 1/8 of
 * the true value while memory stays constant. min and max are exact. */
#define CT_HIST_BUCKETS 256
struct ct_hist {
	uint64_t count;
	uint64_t min_ns, max_ns;
	uint64_t bucket[CT_HIST_BUCKETS];
};

/* Bucket of @ns, and the representative value (midpoint) of bucket @b. */
unsigned ct_hist_bucket(uint64_t ns);
uint64_t ct_hist_value(unsigned b);
void ct_hist_add(struct ct_hist *h, uint64_t ns);
/* The @q quantile (0..1): exact min/max at the ends, else a bucket midpoint clamped
 * to [min, max]. 0 if the histogram is empty. */
uint64_t ct_hist_quantile(const struct ct_hist *h, double q);

/* One traced function. Strings are owned by the profile (profile_add_func copies).
 * A pseudo function (fprof's 'suspend') has module "" and is written as the bare atom
 * of its name. */
struct ct_func {
	char *name;        /* demangled symbol name, or 0x<offset> for a nameless address */
	char *module;      /* base name of the ELF object: "app", "libc.so.6" */
	char *file;        /* source file from DWARF, NULL if unknown */
	int line;          /* DWARF declaration line, 0 if unknown */
	int arity;         /* DWARF formal parameters, 0 if unknown */
	uint64_t addr;     /* runtime entry address (0 if unknown) */
	struct ct_hist *hist;  /* full mode: latency of its calls; NULL until called */
};

/* One calling-context node: a distinct call path from the thread's root. */
struct ct_node {
	ct_func_id func;
	struct ct_node *parent;        /* NULL only for the thread's root ('undefined') */
	struct ct_node *first_child;
	struct ct_node *next_sibling;
	uint64_t calls;                /* entries on this exact path */
	uint64_t own_ns;               /* time with this node on top of the stack */
	uint64_t acc_ns;               /* entry to return of every call on this path */
	uint64_t acc_stops;            /* the ptrace stops' cost still in acc_ns, as a
	                                  count of stops: see profile_compensate() */
	bool is_rec;                   /* func already active on the path above: fprof
	                                  charges ACC 0 to such calls */
	uint64_t path_bloom;           /* bit (func % 64) of every function on the path,
	                                  this one included: skips most ancestor walks */
};

/* A caller -> callee pair with its call count: count mode's record (no tree there,
 * since count mode sees entries only). */
struct ct_edge {
	ct_func_id caller;             /* CT_FUNC_UNDEFINED: called from untraced code */
	ct_func_id callee;
	uint64_t calls;
};

/* One traced thread (fprof: one process section). */
struct ct_thread {
	pid_t pid;                     /* thread group id */
	pid_t tid;
	pid_t parent_pid, parent_tid;  /* the thread that created it; 0 if unknown */
	ct_func_id spawned_as;         /* start routine or CT_FUNC_UNDEFINED */
	uint64_t spawned_arg;          /* start routine's argument (for spawned_as) */
	struct ct_node root;           /* func == CT_FUNC_UNDEFINED */
	uint64_t first_ts, last_ts;    /* first and last recorded event, ns; 0 if none */
	uint64_t first_stops, last_stops;  /* the thread's stop count at those events */
	bool inherited;                /* a followed fork child: its tree starts inside
	                                  calls its parent made (ctree_path) */
	char *comm;                    /* short program name, for folded stacks */
	struct ct_edge *edges;         /* count mode only */
	size_t nr_edges, cap_edges;
	uint32_t *edge_index;          /* open-addressing index into edges (+1; 0 empty) */
	size_t edge_slots;
};

enum ct_mode { CT_MODE_FULL, CT_MODE_COUNT };

struct profile {
	struct ct_func *funcs;
	size_t nr_funcs, cap_funcs;
	struct ct_thread **threads;
	size_t nr_threads, cap_threads;
	enum ct_mode mode;
	const char *clock;             /* "wall" or "cpu" */
	char *command;                 /* traced command line, for headers */
	size_t nr_nodes;               /* distinct call paths, all threads */
	bool compensated;              /* the stops' cost was taken out of the times */
	uint64_t stop_cost_ns;         /* ... this much per stop (profile_compensate) */
	uint64_t stop_cost_trips;      /* the round trips it was measured on; 0: it is
	                                  the start-up calibration */
};

/* New empty profile. Caller owns it: profile_free(). Never NULL (dies on OOM). */
struct profile *profile_new(void);
void profile_free(struct profile *p);

/* Add a function; strings are copied (file may be NULL). Returns its id. */
ct_func_id profile_add_func(struct profile *p, const char *name, const char *module,
			    const char *file, int line, int arity, uint64_t addr);

/* Add a thread; borrowed pointer, owned by the profile. */
struct ct_thread *profile_add_thread(struct profile *p, pid_t pid, pid_t tid);

/* First and last recorded event over all threads (ns); both 0 if nothing was recorded.
 * With the cpu clock, where each thread has its own clock, last - first is the sum of
 * the threads' spans. */
void profile_span(const struct profile *p, uint64_t *first, uint64_t *last);

/* qsort comparator for an array of struct ct_thread *: by pid, then tid. */
int profile_thread_cmp(const void *a, const void *b);

/* Display name of a function id: "undefined" for CT_FUNC_UNDEFINED. */
const char *profile_func_name(const struct profile *p, ct_func_id f);

/* Record a call of @f below @parent at @ts: returns the (possibly new) child node, its
 * call count already incremented. */
struct ct_node *ctree_enter(struct profile *p, struct ct_thread *t, struct ct_node *parent,
			    ct_func_id f, uint64_t ts);

/* The child node of @parent for @f, created if needed, without counting a call (a
 * followed fork child continues inside calls its parent made). */
struct ct_node *ctree_path(struct profile *p, struct ct_thread *t, struct ct_node *parent,
			   ct_func_id f);

/* Record the end of one call on @n: @acc_ns from entry to exit, @own_ns of it with @n
 * on top. @ts is the exit time (kept for the thread's last_ts). Also adds @acc_ns to
 * the function's latency histogram. */
void ctree_leave(struct profile *p, struct ct_thread *t, struct ct_node *n, uint64_t acc_ns,
		 uint64_t own_ns, uint64_t ts);

/* ctree_enter() and ctree_leave() for a recorder whose times still hold the cost of
 * its stops (the engine): @ts_stops is the thread's stop count at @ts, @acc_stops the
 * number of stop costs in @acc_ns, and @hist_ns the call's latency for the function's
 * histogram (already compensated, the best estimate at the time). The stop costs are
 * taken out once the run is over, with one per-stop cost for the whole run:
 * profile_compensate(). */
struct ct_node *ctree_enter_at(struct profile *p, struct ct_thread *t, struct ct_node *parent,
			       ct_func_id f, uint64_t ts, uint64_t ts_stops);
void ctree_leave_at(struct profile *p, struct ct_thread *t, struct ct_node *n, uint64_t acc_ns,
		    uint64_t own_ns, uint64_t acc_stops, uint64_t hist_ns, uint64_t ts,
		    uint64_t ts_stops);

/* Take @stop_ns per counted stop out of every node's ACC (acc_stops of them) and out of
 * each thread's span (the stops between its first and last events). Bottom-up, so that
 * the tree stays consistent: a node's OWN is its ACC less its callees' ACC, and where
 * that would be negative (the noise of the stops' cost, in a function that does next to
 * nothing between calls) it is 0 and the ACC is raised to its callees' sum; a thread's
 * span is never less than its root calls' ACC. Sets every acc_stops to 0, so a second
 * call changes nothing. */
void profile_compensate(struct profile *p, uint64_t stop_ns);

/* Count mode: one call of @callee from @caller at @ts. */
void ctree_count(struct ct_thread *t, ct_func_id caller, ct_func_id callee, uint64_t ts);

/* One caller -> callee arc of a thread, in either mode. In full mode there is one arc
 * per tree node (the same pair can come several times, from different paths: sum
 * them); acc_ns is 0 for recursive nodes (fprof's rule) and acc_raw_ns is the node's
 * own ACC regardless. In count mode own/acc are 0 and has_time is false. */
struct ct_arc {
	ct_func_id caller, callee;
	uint64_t calls, own_ns, acc_ns, acc_raw_ns;
	bool has_time;
};
typedef void (*ct_arc_fn)(const struct ct_arc *a, void *arg);
void profile_thread_arcs(const struct profile *p, const struct ct_thread *t, ct_arc_fn fn,
			 void *arg);

/* Visit every node of a thread's tree (root excluded), parents before children.
 * @depth is 1 for the thread's root calls. */
typedef void (*ctree_visit_fn)(const struct ct_node *n, int depth, void *arg);
void ctree_walk(const struct ct_thread *t, ctree_visit_fn fn, void *arg);

#endif
