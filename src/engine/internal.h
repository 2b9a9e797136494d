/* SPDX-License-Identifier: MIT */
/* internal.h - the engine's shared structures, private to src/engine/. The engine is
 * split by concern: engine.c (tasks, events, spawn/attach/detach: the only waitpid
 * caller), aspace.c (address spaces: breakpoints, modules, XOL pages: the only writer
 * of tracee code), shadow.c (per-thread shadow stacks and recording), rtld.c (the
 * dynamic linker's rendezvous: libraries loaded and unloaded). */
#ifndef CALLTRACE_ENGINE_INTERNAL_H
#define CALLTRACE_ENGINE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "calltrace/engine.h"
#include "calltrace/profile.h"

struct insn_decoder;
struct sym_module;
struct sym_func;

/* A traced ELF object mapped in an address space. Shared (refs) between the address
 * spaces of a followed fork, which start as copies. */
struct module {
	struct sym_module *sym;
	uint64_t bias;            /* runtime = file address + bias */
	uint64_t lo, hi;          /* runtime range of its functions */
	ct_func_id *ids;          /* profile id per sym function */
	bool *is_root;            /* per sym function: matches -f */
	uint64_t xol_base;        /* its out-of-line page(s), 0 if none */
	size_t xol_size;
	uint64_t ret_slot;        /* a shared 'ret' in the XOL page */
	uint64_t gadget;          /* 'syscall; int3' in the XOL page, for injected calls */
	uint64_t l_map;           /* link_map entry address (libraries), 0 for the exe */
	bool is_main;
	bool mark;                /* rtld.c: still in the link map */
	int refs;                 /* address spaces and breakpoints sharing it */
};

enum bp_kind {
	BP_ENTRY,      /* a function's first instruction */
	BP_EXIT,       /* a ret, or a jump leaving the function */
	BP_PATCH,      /* a jump back to its own entry: resumed past the entry (a loop);
	                  with resume == 0, a rewritten displacement that never traps */
	BP_RTLD,       /* the dynamic linker's _dl_debug_state */
	BP_TAIL,       /* a jmp/jcc to a traced function's entry: a tail call, handled
	                  as that function's entry in the same stop */
	BP_DETOUR,     /* the jmp of an exit detour (never traps; its int3 is a BP_EXIT
	                  in the block) */
};

struct bp {
	uint64_t addr;            /* runtime address; 0 = free table slot */
	uint64_t resume;          /* rip to continue at; 0: leave rip as the trap left it.
	                             A detoured entry's site: its block, past the int3 */
	struct module *mod;
	uint32_t func;            /* BP_ENTRY: index in mod->sym->funcs */
	uint8_t kind;
	bool exits;               /* BP_ENTRY whose first instruction also leaves;
	                             BP_RTLD: the instruction is a ret, emulate it */
	bool tail;                /* BP_ENTRY whose first instruction is a jmp to a traced
	                             entry (target): a tail call at the same stop */
	uint8_t cc;               /* BP_TAIL: condition code of a jcc, CC_ALWAYS for jmp */
	uint8_t len;              /* BP_TAIL: instruction length (not taken: rip += len) */
	uint64_t target;          /* BP_TAIL, tail entries: the traced entry jumped to */
	bool detour_site;         /* its patch is a detour's jmp (BP_ENTRY, BP_DETOUR) */
	uint8_t span;             /* a detoured entry: the bytes its region covers (a ret
	                             in them is run from the block, after its exit trap) */
	bool is_ret;              /* BP_EXIT at a ret (or before one, in a block) */
	bool in_block;            /* an int3 in a detour block (XOL page): orig[0] is the
	                             nop that replaces it when calltrace lets go */
	uint8_t nr_orig;          /* bytes replaced; 0: not written */
	uint8_t orig[16];
	uint8_t patch[16];
};

#define CC_ALWAYS 0xff

/* The code of one process image: breakpoints and modules. Shared by threads and by a
 * vfork child until it execs. */
struct aspace {
	struct bp *bps;           /* open addressing on addr */
	size_t nr_slots, nr_bps;
	struct module **mods;     /* traced modules, shared with copies (refs) */
	size_t nr_mods, cap_mods;
	uint64_t r_debug;         /* &_r_debug in ld.so, 0 if unknown */
	uint64_t gen;             /* unique per address space: code at an address of one
	                             is not that of another (shadow.c trip pairs) */
	int refs;
};

struct proc {
	pid_t pid;
	int memfd;                /* /proc/PID/mem */
	struct aspace *as;        /* NULL until the first instruction after exec */
	uint64_t startup_addr;    /* one-shot int3 at the first instruction after exec */
	uint8_t startup_orig;
	bool is_attached;         /* -p: detach, never kill */
	uint64_t trap_act[4];     /* the program's SIGTRAP sigaction (kernel layout), saved
	                             before its handler runs (see trap_guard) */
	bool has_trap_act;
	int refs;
};

#define NR_REGIONS 6

struct frame {
	uint64_t slot;            /* %rsp at entry: where the return address is */
	uint64_t site;            /* its entry's breakpoint address */
	uint64_t stops_entry;     /* the thread's stop count at its entry stop */
	uint64_t entry_ts;        /* the thread's raw time line at entry (shadow.c) */
	uint64_t child_ns;        /* its callees' raw ACC */
	struct ct_node *node;     /* NULL when not recorded */
	int8_t region;            /* stack region of slot (sigaltstack) */
};

struct task {
	pid_t tid;
	struct proc *proc;
	struct ct_thread *ct;     /* created at its first recorded call */
	struct frame *stack;
	size_t depth, cap;
	pid_t parent_pid, parent_tid;   /* its creator, 0 if unknown */
	int pending_sig;          /* a signal to deliver when it is next resumed */
	bool seen_event;          /* its creator's clone/fork/vfork event was seen */
	bool seen_stop;           /* its initial stop was seen */
	bool is_fork;             /* an unfollowed fork child: detach when ready */
	bool no_record;           /* not recorded (unfollowed children) */
	bool record_all;          /* record from its first call on (threads created while
	                             recording, attached threads) */
	bool stopped;             /* detach: held in a stop */
	bool trap_guard;          /* running the program's SIGTRAP handler: our int3s
	                             there make the kernel reset it (engine.c) */
	struct { uint64_t lo, hi; } regions[NR_REGIONS];
	int nr_regions;
	int home;                 /* region of its own stack, -1 until known */
	/* time: see shadow_stop() */
	uint64_t stops;           /* stops of this thread so far */
	uint64_t hsum;            /* calltrace's handling time at its stops, ns */
	uint64_t kcost;           /* the kernel's part of its stops so far, ns */
	uint64_t now;             /* the clock at the current stop (wall or cpu) */
	uint64_t vnow;            /* ... less the cost of its stops so far (shadow.c) */
	uint64_t raw;             /* ... less calltrace's handling only: the raw time line */
	uint64_t rt_ns;           /* this stop's round trip (wall or CPU), 0 if unknown */
	uint64_t stop_off;        /* off-CPU time this stop recorded as 'suspend' */
	uint64_t trip_from;       /* rip of its last stop at an entry or a ret, 0 if none */
	uint64_t trip_no;         /* ... and its stop number (a round trip follows it only
	                             if the next stop is number trip_no + 1) */
	uint64_t trip_ctx;        /* ... and the entry site of the frame it returned to */
	uint64_t probe_start;     /* sampled round trip: where the thread went on, 0 if none */
	unsigned probe_in;        /* stops until the next sample */
	uint64_t last_wall, last_cpu, last_h;   /* last_wall/cpu: at its last CPU read */
	uint64_t prev_wall;       /* the wall clock at its previous stop */
	uint64_t read_vnow;       /* its time line at its last CPU read */
	uint64_t span_traced;     /* the stops' own off-CPU cost since that read */
	unsigned since_read;      /* stops since that read */
	uint64_t h_end;           /* when calltrace's handling of this stop ended */
	int sfd;                  /* its CPU clock: task-clock perf fd, or schedstat */
	bool sfd_is_proc;         /* sfd is /proc/PID/task/TID/schedstat */
	struct task *next;
};

/* Profile ids given to the functions of an object file, so that a library loaded
 * again (dlopen after dlclose) or a program exec'd again reports as the same
 * functions. */
struct known_object {
	char *path;
	size_t nr_funcs;
	ct_func_id *ids;
};

#define NR_OPEN 16

/* A 64-bit mix of three words, for the direct-mapped and open-addressed tables keyed
 * by several addresses (trip pairs, short-path answers): take the high bits. */
static inline uint64_t key_hash3(uint64_t a, uint64_t b, uint64_t c)
{
	return ((a * 0x9e3779b97f4a7c15ull) ^ b ^ (c << 17)) * 0xc2b2ae3d27d4eb4full;
}

/* engine_short_trip's answers by (start, call_end). */
#define NR_PROOFS 256
struct short_proof {
	uint64_t start, call_end, gen;
	bool proven;
};

/* The round trips between two stops of a thread at given sites (rips), when the
 * first is at an entry or a ret and the second follows it (shadow.c). */
struct trip_key {
	uint64_t from, to;        /* 0: free slot */
	uint64_t gen;             /* the address space's (aspace.gen) */
	uint64_t ctx;             /* from a ret: the entry site of the frame returned to (0
	                             if none), since the code run depends on the call site */
	uint64_t n, sum_ns;       /* round trips and their total cost (wall or CPU) */
	uint16_t tried, proven;   /* samples checked, and proven to run next to nothing */
};

struct engine {
	const struct engine_opts *eo;
	struct known_object *known;
	size_t nr_known, cap_known;
	struct profile *p;
	struct engine_stats *st;
	struct task *tasks;
	struct task *last;        /* the task of the previous stop */
	struct insn_decoder *dec;
	pid_t main_pid;
	int status;
	bool have_status;
	struct sym_module *first_image;   /* validated before the run, used at first exec */
	/* time */
	bool clock_cpu;           /* frames timed in thread CPU time */
	bool need_cpu;            /* read CPU time at each stop (cpu clock, or suspend) */
	bool suspend;             /* off-CPU time as 'suspend' (wall clock) */
	bool compensate;          /* subtract the cost of stops from times */
	uint64_t ck_ns;           /* per stop: wall time outside calltrace's handling */
	uint64_t cu_ns;           /* per stop: CPU time charged to the thread */
	uint64_t ck_cal, cu_cal;  /* the calibrated values (medians) */
	struct ct_hist rt_wall;   /* round trips seen in the run: kernel part + work */
	struct ct_hist rt_cpu;
	struct trip_key *trips;   /* round trips by their two stops (shadow.c) */
	size_t nr_trips;          /* pairs in the table (TRIP_SLOTS, shadow.c) */
	const struct trip_key *open[NR_OPEN];  /* pairs of 64 round trips or more still
	                                          being sampled (shadow_trip) */
	size_t nr_open;
	uint64_t trips_kept_n, trips_kept_ns;   /* proven pairs' sums from before a flush */
	struct short_proof *proofs;   /* NR_PROOFS, direct-mapped (engine_short_trip) */
	bool trips_frozen;        /* the pair table is full of pairs that count */
	uint64_t trips_seen;
	uint64_t stop_est;        /* per stop, for the latency histograms: the best
	                             estimate so far (shadow_stop_cost) */
	ct_func_id suspend_id;
	const uint64_t *live_ips; /* attach: where the threads are stopped (no detour may
	                             cover one of these but at its first byte) */
	size_t nr_live_ips;
};

/* aspace.c */
struct aspace *aspace_new(void);
struct aspace *aspace_copy(const struct aspace *as);
void aspace_put(struct aspace *as);
struct bp *bp_find(const struct aspace *as, uint64_t addr);
struct module *module_of(const struct aspace *as, uint64_t raddr);
/* Is @b written into the program's code where the thread reaches it (an int3 or a
 * detour's jmp), as opposed to a block's trap or a rewritten displacement, which is
 * simply the code that runs? */
bool bp_is_site(const struct bp *b);
const struct sym_func *func_containing(const struct module *m, uint64_t raddr);
/* Set up @sym (ownership taken) at @bias in @pr, stopped at a clean stop of @tid:
 * XOL page, breakpoints. Returns the module or NULL (message printed). */
struct module *module_setup(struct engine *e, struct proc *pr, pid_t tid,
			    struct sym_module *sym, uint64_t bias, bool is_main);
/* Forget @m (its code is already unmapped): drop its breakpoints and release it. */
void module_forget(struct aspace *as, struct module *m);
/* Put back every byte our breakpoints replaced, through @memfd. */
void aspace_restore(const struct aspace *as, int memfd);
/* The original address for a thread stopped at @rip inside an XOL slot, or 0. */
bool aspace_in_xol(const struct aspace *as, uint64_t rip);
int mem_read(struct proc *pr, uint64_t raddr, void *laddr, size_t n);
int mem_write(struct proc *pr, uint64_t raddr, const void *laddr, size_t n);
int open_mem(pid_t pid);
uint64_t inject_mmap(struct proc *pr, pid_t tid, uint64_t hint, size_t len);
/* Run system call @nr(@args) in thread @tid, stopped, through the XOL page's
 * 'syscall; int3' gadget; its registers are put back. 0 and *@ret, or -errno. */
int inject_syscall(struct proc *pr, pid_t tid, long nr, const uint64_t args[6], uint64_t *ret);
/* Plant a BP_RTLD at @addr (resumed like an entry). 0 or -errno. */
int aspace_add_rtld(struct engine *e, struct proc *pr, uint64_t addr);
/* Read @n bytes of code at @raddr as the program's own: what calltrace's breakpoints
 * replaced is put back in the copy. 0 or -errno. */
int aspace_read_code(struct proc *pr, uint64_t raddr, uint8_t *buf, size_t n);

/* shadow.c */
/* Every stop of a traced thread, first: count it, read its clock, and charge the
 * off-CPU time since its previous stop to 'suspend'. */
void shadow_stop(struct engine *e, struct task *t, uint64_t wall);
/* The thread's CPU time so far (ns): a perf task-clock (CPU clock) or schedstat. */
uint64_t shadow_read_cpu(const struct engine *e, struct task *t);
/* An entry (@arg0: its first argument register, %rdi): @is_tail when reached by a tail jump seen at its jump (the frame at the
 * same slot is the caller that jumped: chain to it), else a frame at the same slot is
 * stale (its return went unseen) and ends. */
void shadow_entry(struct engine *e, struct task *t, const struct bp *b, uint64_t rsp,
		  uint64_t arg0, uint64_t ts, bool is_tail);
void shadow_exit(struct engine *e, struct task *t, uint64_t rsp, uint64_t ts);
void shadow_close_all(struct engine *e, struct task *t, uint64_t ts);
/* A stop at an entry or a ret (@b, at @rip, %rsp @rsp): the round trip that led
 * here from the thread's previous such stop is counted by its two sites, and every so
 * often one is checked for having run next to nothing (engine_short_trip). */
void shadow_trip(struct engine *e, struct task *t, const struct bp *b, uint64_t rip,
		 uint64_t rsp);
/* Code went away (exec, dlclose): the same addresses may hold other code later. Keep
 * the proven pairs' sums, and start the pairs afresh. */
void shadow_trips_flush(struct engine *e);
/* CALLTRACE_DEBUG: every pair of 64 round trips or more. */
void shadow_trips_debug(const struct engine *e);
/* The cost of one stop to take out of every time once the run is over: the mean
 * round trip of the sites proven to run next to nothing, if there were enough of
 * them (*nr_trips: how many), else the calibrated estimate (*nr_trips 0). */
uint64_t shadow_stop_cost(struct engine *e, uint64_t *nr_trips);
/* A followed fork: @c continues inside @parent's calls. */
void shadow_copy(struct engine *e, struct task *c, const struct task *parent);
struct ct_thread *task_thread(struct engine *e, struct task *t);

/* engine.c */
/* Did a thread of @pr that went on at @start and stopped next at a call ending at
 * @call_end (0: at a ret) run only a few instructions in between? (insn_short_path
 * on the program's own code.) */
bool engine_short_trip(struct engine *e, struct proc *pr, uint64_t start, uint64_t call_end);

/* rtld.c */
/* The value of auxiliary vector entry @type (AT_*) of @pid, 0 if absent. */
uint64_t proc_auxv(pid_t pid, uint64_t type);
/* At the first instruction: find ld.so and plant its rendezvous breakpoint (only when
 * libraries are traced). */
void rtld_init(struct engine *e, struct proc *pr);
/* The rendezvous breakpoint was hit (or we attached): sync modules with the link map. */
void rtld_sync(struct engine *e, struct proc *pr, pid_t tid);
/* &_r_debug in @pr (through the executable's DT_DEBUG), or 0. */
uint64_t rtld_find_r_debug(struct proc *pr);

/* engine.c */
bool engine_matches_root(const struct engine_opts *eo, const char *name, const char *raw);

#endif
