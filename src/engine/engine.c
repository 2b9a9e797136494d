/* SPDX-License-Identifier: MIT */
/* engine.c - processes, threads and the one event loop: the only ptrace(PTRACE_CONT)
 * and waitpid caller. It spawns the program (or attaches to one), turns wait statuses
 * into events, and hands breakpoint stops to shadow.c and code changes to aspace.c.
 *
 * Mechanism in short (docs/design.md has the whole story): a permanent int3 on every
 * traced function's entry, on every ret and on every jump that leaves a function for
 * untraced code; the displaced instruction is rewritten, emulated or run out of line,
 * so no thread is ever single-stepped or stopped for another's sake on the common
 * path, and the program's stack is never written. A full-mode call costs exactly two
 * stops, a count-mode call one.
 *
 * Lifecycle rules that keep the program harmless:
 *   - a spawned program gets PTRACE_O_EXITKILL: if calltrace dies, so does it, never
 *     left half-traced; calltrace's own SIGINT/SIGTERM kill it and write the report;
 *   - an attached program (-p) is detached on SIGINT/SIGTERM, at the end of -d, or on
 *     a fatal error: every thread stopped, moved out of the XOL page, every replaced
 *     byte restored, then PTRACE_DETACH (the XOL page stays mapped, never run again);
 *   - an unfollowed fork child gets its own copy of the original bytes back before it
 *     is let go; a vfork child shares the parent's memory, so nothing is written while
 *     it runs and it is let go at its exec. */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "calltrace/insn.h"
#include "calltrace/sym.h"
#include "calltrace/util.h"
#include "internal.h"

#define RIP_OFFSET offsetof(struct user, regs.rip)

#define TRACE_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | \
		       PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT)

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t duration_over;
static struct engine *the_engine;     /* for the release hook */

void engine_request_stop(int sig)
{
	stop_signal = sig;
}

static void on_alarm(int sig)
{
	(void)sig;
	duration_over = 1;
}

bool engine_matches_root(const struct engine_opts *eo, const char *name, const char *raw)
{
	for (size_t i = 0; i < eo->nr_patterns; i++) {
		if (fnmatch(eo->patterns[i], name, 0) == 0 || fnmatch(eo->patterns[i], raw, 0) == 0)
			return true;
	}
	return false;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void cont(pid_t tid, int sig)
{
	ptrace(PTRACE_CONT, tid, 0, (void *)(long)sig);
}

/* ---- processes and tasks -------------------------------------------------------- */

static struct proc *proc_new(pid_t pid)
{
	struct proc *pr = xcalloc(1, sizeof(*pr));

	pr->pid = pid;
	pr->memfd = -1;
	return pr;
}

static void proc_get(struct proc *pr)
{
	pr->refs++;
}

static void proc_put(struct proc *pr)
{
	if (--pr->refs > 0)
		return;
	if (pr->memfd >= 0)
		close(pr->memfd);
	aspace_put(pr->as);
	free(pr);
}

static struct task *task_find(struct engine *e, pid_t tid)
{
	if (e->last && e->last->tid == tid)
		return e->last;
	for (struct task *t = e->tasks; t; t = t->next) {
		if (t->tid == tid)
			return e->last = t;
	}
	return NULL;
}

static struct task *task_new(struct engine *e, pid_t tid, struct proc *pr)
{
	struct task *t = xcalloc(1, sizeof(*t));

	t->tid = tid;
	t->proc = pr;
	t->home = -1;
	t->sfd = -1;
	proc_get(pr);
	t->next = e->tasks;
	e->tasks = t;
	return t;
}

static void task_set_proc(struct task *t, struct proc *pr)
{
	if (t->proc == pr)
		return;
	proc_get(pr);
	proc_put(t->proc);
	t->proc = pr;
}

static void task_remove(struct engine *e, struct task *t)
{
	struct task **pp;

	for (pp = &e->tasks; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	if (e->last == t)
		e->last = NULL;
	if (t->sfd >= 0)
		close(t->sfd);
	proc_put(t->proc);
	free(t->stack);
	free(t);
}

/* ---- start-up of a process image -------------------------------------------------- */

/* The program's executable: its symbols (the validated image at the first exec). */
static struct sym_module *load_exe(struct engine *e, pid_t pid)
{
	char exe[64], path[4096];
	struct sym_module *sym = e->first_image;
	ssize_t n;

	if (sym) {
		e->first_image = NULL;
		return sym;
	}
	snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
	n = readlink(exe, path, sizeof(path) - 1);
	if (n <= 0)
		return NULL;
	path[n] = 0;
	if (sym_check_elf(path, NULL) != SYM_ELF_OK || sym_module_load(path, &sym) < 0) {
		msg_warn("pid %d: %s: cannot read its symbols; it runs untraced", pid, path);
		sym_module_free(sym);
		return NULL;
	}
	return sym;
}

/* Set up the traced modules of @pr, stopped at a clean stop of @tid. */
static void image_setup(struct engine *e, struct proc *pr, pid_t tid)
{
	struct sym_module *sym = load_exe(e, pr->pid);
	uint64_t entry = proc_auxv(pr->pid, AT_ENTRY);

	pr->as = aspace_new();
	if (!sym)
		return;
	module_setup(e, pr, tid, sym, sym->is_dyn && entry ? entry - sym->entry : 0, true);
	rtld_init(e, pr);
}

/* At an exec stop, registers cannot be borrowed (we are inside execve): stop again at
 * the first user instruction with a one-shot int3, and set up there. */
static void arm_startup(struct proc *pr, pid_t tid)
{
	struct user_regs_struct regs;
	static const uint8_t int3 = 0xcc;

	pr->startup_addr = 0;
	if (pr->memfd < 0 || ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
		return;
	if (mem_read(pr, regs.rip, &pr->startup_orig, 1) == 0 &&
	    mem_write(pr, regs.rip, &int3, 1) == 0)
		pr->startup_addr = regs.rip;
}

static void on_exec(struct engine *e, struct task *t, uint64_t ts)
{
	struct proc *pr = t->proc;

	if (t->no_record && !t->is_fork && t->tid != pr->pid) {
		/* an unfollowed vfork child that exec'd: it no longer shares our code */
		ptrace(PTRACE_DETACH, t->tid, 0, 0);
		task_remove(e, t);
		return;
	}
	/* The old image is gone with every other thread (the kernel gave this one the
	 * leader's tid). */
	shadow_close_all(e, t, ts);
	for (struct task *o = e->tasks, *next; o; o = next) {
		next = o->next;
		if (o != t && o->proc == pr) {
			shadow_close_all(e, o, ts);
			task_remove(e, o);
		}
	}
	aspace_put(pr->as);
	pr->as = NULL;
	shadow_trips_flush(e);
	if (pr->memfd >= 0)
		close(pr->memfd);
	pr->memfd = open_mem(pr->pid);
	t->ct = NULL;              /* a new program: a new section in the report */
	t->nr_regions = 0;
	t->home = -1;
	arm_startup(pr, t->tid);
}

/* ---- the program's own SIGTRAP handler ----------------------------------------------
 *
 * The kernel delivers an int3's SIGTRAP with force_sig(): if SIGTRAP is blocked (as it
 * is inside a SIGTRAP handler, unless SA_NODEFER), it resets the handler to SIG_DFL and
 * unblocks the signal, before calltrace even sees the stop. So one of our breakpoints
 * hit inside the program's SIGTRAP handler would make its next SIGTRAP kill it. Before
 * delivering the program's own SIGTRAP to a handler, calltrace saves the handler
 * (rt_sigaction, run in the program), and while the handler runs, checks at each of
 * its breakpoint stops whether the kernel reset it: if so, it puts the handler and the
 * blocked mask back. Off the common path: only programs that catch SIGTRAP pay. */

#define SIGTRAP_BIT (1ull << (SIGTRAP - 1))

/* The SigCgt mask of @pid: the signals it catches. */
static uint64_t caught_signals(pid_t pid)
{
	char path[64], line[256];
	uint64_t mask = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "SigCgt:", 7)) {
			mask = strtoull(line + 7, NULL, 16);
			break;
		}
	}
	fclose(f);
	return mask;
}

/* rt_sigaction(SIGTRAP, @act, @old) run in thread @tid, with a scratch area below its
 * stack's red zone. */
static int trap_sigaction(struct proc *pr, pid_t tid, const uint64_t *act, uint64_t *old)
{
	struct user_regs_struct regs;
	uint64_t scratch, args[6], ret;
	int rc;

	if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
		return -errno;
	scratch = ((regs.rsp - 128 - 64) & ~(uint64_t)15);
	if (act && (rc = mem_write(pr, scratch, act, 32)) < 0)
		return rc;
	args[0] = SIGTRAP;
	args[1] = act ? scratch : 0;
	args[2] = old ? scratch + 32 : 0;
	args[3] = 8;
	args[4] = args[5] = 0;
	rc = inject_syscall(pr, tid, SYS_rt_sigaction, args, &ret);
	if (rc == 0 && old)
		rc = mem_read(pr, scratch + 32, old, 32);
	return rc;
}

/* The program's own SIGTRAP, about to be delivered by PTRACE_CONT. */
static void before_program_trap(struct task *t)
{
	struct proc *pr = t->proc;
	siginfo_t si;

	if (!(caught_signals(pr->pid) & SIGTRAP_BIT))
		return;
	if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) < 0)
		return;
	if (trap_sigaction(pr, t->tid, NULL, pr->trap_act) == 0)
		pr->has_trap_act = true;
	/* the injection stopped at a trap of its own: deliver the program's siginfo */
	ptrace(PTRACE_SETSIGINFO, t->tid, 0, &si);
	t->trap_guard = true;
}

/* One of our breakpoints was hit while the program's SIGTRAP handler may be running. */
static void check_trap_handler(struct task *t)
{
	struct proc *pr = t->proc;
	uint64_t mask = 0;

	if (ptrace(PTRACE_GETSIGMASK, t->tid, sizeof(mask), &mask) < 0)
		return;
	if (caught_signals(pr->pid) & SIGTRAP_BIT) {
		if (!(mask & SIGTRAP_BIT))
			t->trap_guard = false;    /* the handler has returned */
		return;
	}
	/* the kernel reset it at our int3: put the handler and the mask back */
	if (pr->has_trap_act)
		trap_sigaction(pr, t->tid, pr->trap_act, NULL);
	mask |= SIGTRAP_BIT;
	ptrace(PTRACE_SETSIGMASK, t->tid, sizeof(mask), &mask);
}

/* ---- breakpoint stops ------------------------------------------------------------ */

/* Does condition code @cc hold for @flags (jcc semantics)? */
static bool cc_holds(uint8_t cc, uint64_t flags)
{
	bool cf = flags & 0x1, pf = flags & 0x4, zf = flags & 0x40, sf = flags & 0x80,
	     of = flags & 0x800;
	bool r;

	switch (cc >> 1) {
	case 0: r = of; break;
	case 1: r = cf; break;
	case 2: r = zf; break;
	case 3: r = cf || zf; break;
	case 4: r = sf; break;
	case 5: r = pf; break;
	case 6: r = sf != of; break;
	default: r = zf || sf != of; break;
	}
	return (cc & 1) ? !r : r;
}

/* A tail jump to the traced entry @target taken at @rsp: the callee's entry, in this
 * same stop. Returns the rip to continue at. */
static uint64_t tail_into(struct engine *e, struct task *t, uint64_t target, uint64_t rsp,
			  uint64_t arg0, uint64_t ts)
{
	const struct bp *tb = bp_find(t->proc->as, target);

	if (!tb || tb->kind != BP_ENTRY || !tb->nr_orig)
		return target;        /* not (or no longer) traced: a plain jump */
	shadow_entry(e, t, tb, rsp, arg0, ts, true);
	/* past its int3: its XOL slot, emulation target, or the nop after a rewrite */
	if (tb->tail)
		return tail_into(e, t, tb->target, rsp, arg0, ts);
	return tb->resume ? tb->resume : target + 1;
}

/* Where the PLT stub at @stub jumps: 'jmp *slot(%rip)', possibly after endbr64 and
 * with a bnd prefix (.plt.sec), read through its GOT slot. 0 if it is no such stub. */
static uint64_t plt_target(struct proc *pr, uint64_t stub)
{
	uint8_t c[16];
	uint64_t slot, final;
	size_t i = 0;
	int32_t disp;

	if (mem_read(pr, stub, c, sizeof(c)) < 0)
		return 0;
	if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
		i = 4;                                  /* endbr64 */
	if (c[i] == 0xf2)
		i++;                                    /* bnd */
	if (c[i] != 0xff || c[i + 1] != 0x25)
		return 0;
	memcpy(&disp, c + i + 2, 4);
	slot = stub + i + 6 + (uint64_t)(int64_t)disp;
	if (mem_read(pr, slot, &final, sizeof(final)) < 0)
		return 0;
	return final;
}

static bool is_entry(const struct aspace *as, uint64_t raddr)
{
	const struct bp *b = bp_find(as, raddr);

	return b && b->kind == BP_ENTRY && b->nr_orig;
}

/* What insn_short_path() asks: does the thread stop at @addr (a breakpoint site), on a
 * call or jmp to @addr (a traced entry, directly or through its PLT stub), or at the
 * ret at @addr (one of a traced function's, all of whose rets are exits)? */
static enum insn_stop_answer trip_stops_at(uint64_t addr, enum insn_stop_query q, void *arg)
{
	struct proc *pr = arg;
	const struct bp *b;
	const struct module *m;
	const struct sym_func *f;
	uint64_t final;

	switch (q) {
	case INSN_Q_AT:
		b = bp_find(pr->as, addr);
		if (!bp_is_site(b))
			return INSN_STOPS_NOT;
		/* a ret's site is an exit; any other stop (an entry, a jump out) is not the
		 * ret that stopped next */
		return b->kind == BP_DETOUR || (b->kind == BP_EXIT && b->is_ret) ? INSN_STOPS_EXIT
										 : INSN_STOPS_ENTRY;
	case INSN_Q_CALL:
		if (is_entry(pr->as, addr))
			return INSN_STOPS_ENTRY;
		final = plt_target(pr, addr);
		return final && is_entry(pr->as, final) ? INSN_STOPS_ENTRY : INSN_STOPS_NOT;
	case INSN_Q_RET:
		/* A planted ret is a site (INSN_Q_AT), at the ret or where its detour starts.
		 * A ret with no site of its own stops only inside an entry's detour region,
		 * which its block runs after the exit's int3 (a function of a few bytes).
		 * Any other (a ret calltrace could not plant) returns without a stop. */
		m = module_of(pr->as, addr);
		f = m ? func_containing(m, addr) : NULL;
		b = f ? bp_find(pr->as, f->addr + m->bias) : NULL;
		return b && b->kind == BP_ENTRY && b->detour_site && b->nr_orig &&
		       addr < b->addr + b->span ? INSN_STOPS_EXIT : INSN_STOPS_NOT;
	}
	return INSN_STOPS_NOT;
}

bool engine_short_trip(struct engine *e, struct proc *pr, uint64_t start, uint64_t call_end)
{
	/* 16 instructions may jump far (a loop's exit to the end of main): a window of
	 * 1 KiB, read only when this (start, call_end) was not checked before. Breakpoints
	 * planted later (dlopen) only prune more paths, so an answer stays right until the
	 * code goes away (shadow_trips_flush). */
	enum { BEFORE = 256, AFTER = 768, MAX_INSNS = 16 };
	uint8_t code[BEFORE + AFTER];
	struct short_proof *sp;
	uint64_t lo = start - BEFORE;
	size_t len = sizeof(code);
	bool ok, read = true;

	if (!pr->as)
		return false;
	if (!e->proofs)
		e->proofs = xcalloc(NR_PROOFS, sizeof(*e->proofs));
	sp = &e->proofs[key_hash3(start, call_end, pr->as->gen) >> 56 & (NR_PROOFS - 1)];
	if (sp->start == start && sp->call_end == call_end && sp->gen == pr->as->gen)
		return sp->proven;
	/* the code before @start too: a loop's call is often just before the return
	 * address it comes back to; from @start on if that cannot be read */
	if (start <= BEFORE || aspace_read_code(pr, lo, code, len) < 0) {
		lo = start;
		len = AFTER;
		read = aspace_read_code(pr, lo, code, len) == 0;
	}
	ok = read && insn_short_path(e->dec, code, len, lo, start, call_end, MAX_INSNS,
				     trip_stops_at, pr) == 1;
	sp->start = start;
	sp->call_end = call_end;
	sp->gen = pr->as->gen;
	sp->proven = ok;
	return ok;
}

/* A SIGTRAP stop. Returns true if it was calltrace's (handled). */
/* rip and rsp of a stopped thread: PTRACE_GET_SYSCALL_INFO reads just those two (a
 * third cheaper than PTRACE_GETREGS here, and every stop needs them); the full
 * register set is read only when a stop needs more. */
static bool stop_ip_sp(pid_t tid, uint64_t *rip, uint64_t *rsp)
{
	static bool no_info;
	struct user_regs_struct regs;

	if (!no_info) {
		struct __ptrace_syscall_info si;

		if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, (void *)sizeof(si), &si) > 0) {
			*rip = si.instruction_pointer;
			*rsp = si.stack_pointer;
			return true;
		}
		if (errno == ESRCH)
			return false;
		no_info = true;       /* a kernel before 5.3 */
	}
	if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
		return false;
	*rip = regs.rip;
	*rsp = regs.rsp;
	return true;
}

static uint64_t peek_reg(pid_t tid, size_t offset)
{
	return (uint64_t)ptrace(PTRACE_PEEKUSER, tid, offset, 0);
}

/* The first argument of a traced entry, read only when it is used: a spawned thread's
 * first recorded call is its start routine, and fprof's spawned_as shows its argument. */
static uint64_t entry_arg0(const struct task *t)
{
	if (!t->parent_tid || !t->record_all || (t->ct && t->ct->spawned_as != CT_FUNC_UNDEFINED))
		return 0;
	return peek_reg(t->tid, offsetof(struct user, regs.rdi));
}

/* Send a stopped thread on at @rip: the one register write a stop may need. */
static void set_rip(struct engine *e, const struct task *t, uint64_t rip)
{
	e->st->rip_writes++;
	ptrace(PTRACE_POKEUSER, t->tid, RIP_OFFSET, rip);
}

/* A SIGTRAP stop. Returns true if it was calltrace's (handled). */
static bool on_trap(struct engine *e, struct task *t, uint64_t ts)
{
	struct proc *pr = t->proc;
	uint64_t rip, rsp;
	struct bp *b;

	if (!stop_ip_sp(t->tid, &rip, &rsp))
		return false;
	if (pr->startup_addr && rip - 1 == pr->startup_addr) {
		mem_write(pr, pr->startup_addr, &pr->startup_orig, 1);
		ptrace(PTRACE_POKEUSER, t->tid, RIP_OFFSET, pr->startup_addr);   /* once */
		pr->startup_addr = 0;
		image_setup(e, pr, t->tid);
		return true;
	}
	b = bp_find(pr->as, rip - 1);
	if (!b || !b->nr_orig)
		return false;
	if (t->trap_guard) {
		check_trap_handler(t);
		b = bp_find(pr->as, rip - 1);
	}
	switch (b->kind) {
	case BP_ENTRY:
		e->st->stops++;
		shadow_entry(e, t, b, rsp, entry_arg0(t), ts, false);
		if (!b->tail && !b->exits)
			shadow_trip(e, t, b, rip, rsp);
		if (b->tail) {
			set_rip(e, t, tail_into(e, t, b->target, rsp, entry_arg0(t), ts));
			return true;
		}
		break;
	case BP_TAIL: {
		uint64_t next = b->addr + b->len;

		e->st->stops++;
		if (b->cc == CC_ALWAYS ||
		    cc_holds(b->cc, peek_reg(t->tid, offsetof(struct user, regs.eflags))))
			next = tail_into(e, t, b->target, rsp, entry_arg0(t), ts);
		set_rip(e, t, next);
		return true;
	}
	case BP_EXIT:
		e->st->stops++;
		if (b->target) {
			/* a jmp to untraced code: a PLT stub whose GOT slot leads to a traced
			 * function is a tail call into it */
			uint64_t final = plt_target(pr, b->target);

			if (final && is_entry(pr->as, final)) {
				set_rip(e, t, tail_into(e, t, final, rsp, entry_arg0(t), ts));
				return true;
			}
		}
		shadow_exit(e, t, rsp, ts);
		if (b->is_ret)
			shadow_trip(e, t, b, rip, rsp);
		break;
	case BP_PATCH:
		if (!b->resume)
			return false;   /* a rewritten displacement never traps */
		e->st->stops++;
		break;
	case BP_DETOUR:
		return false;           /* a jmp: never traps */
	case BP_RTLD:
		rtld_sync(e, pr, t->tid);
		b = bp_find(pr->as, rip - 1);    /* the table may have grown */
		if (b && b->exits) {
			struct user_regs_struct regs;
			uint64_t ret;

			/* _dl_debug_state is a bare ret: do it here */
			if (mem_read(pr, rsp, &ret, sizeof(ret)) == 0 &&
			    ptrace(PTRACE_GETREGS, t->tid, 0, &regs) == 0) {
				regs.rip = ret;
				regs.rsp = rsp + 8;
				ptrace(PTRACE_SETREGS, t->tid, 0, &regs);
			}
		}
		return true;
	}
	if (b->resume)
		set_rip(e, t, b->resume);
	return true;
}

/* ---- new threads and processes ---------------------------------------------------- */

/* A new task has reported both its creation event and its first stop. */
static void child_ready(struct engine *e, struct task *c)
{
	if (c->is_fork) {
		/* Not followed: a private copy of the parent's memory whose original bytes
		 * were put back at the fork event; let it go. */
		ptrace(PTRACE_DETACH, c->tid, 0, 0);
		task_remove(e, c);
		return;
	}
	cont(c->tid, 0);
}

static void on_new_child(struct engine *e, struct task *parent, pid_t child, int event)
{
	bool follow = e->eo->follow_forks && !parent->no_record;
	struct task *c = task_find(e, child);
	struct proc *pr;

	if (event == PTRACE_EVENT_CLONE) {
		pr = parent->proc;                     /* a thread */
	} else if (event == PTRACE_EVENT_VFORK && !follow) {
		pr = parent->proc;                     /* shares our code until it execs */
	} else {
		pr = proc_new(child);
		pr->memfd = open_mem(child);
		pr->is_attached = parent->proc->is_attached;
		if (event == PTRACE_EVENT_VFORK) {
			pr->as = parent->proc->as;     /* the same memory */
			if (pr->as)
				pr->as->refs++;
		} else if (follow) {
			pr->as = parent->proc->as ? aspace_copy(parent->proc->as) : NULL;
		} else if (pr->memfd >= 0) {
			aspace_restore(parent->proc->as, pr->memfd);
		}
	}
	if (!c)
		c = task_new(e, child, pr);
	else
		task_set_proc(c, pr);
	c->parent_pid = parent->proc->pid;
	c->parent_tid = parent->tid;
	c->seen_event = true;
	switch (event) {
	case PTRACE_EVENT_CLONE:
		c->no_record = parent->no_record;
		c->record_all = parent->record_all ||
				(parent->depth && parent->stack[parent->depth - 1].node);
		break;
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		if (follow) {
			c->record_all = parent->record_all;
			shadow_copy(e, c, parent);
		} else {
			c->no_record = true;
			c->is_fork = event == PTRACE_EVENT_FORK;
		}
		break;
	}
	if (c->seen_stop)
		child_ready(e, c);
}

/* ---- stops -------------------------------------------------------------------- */

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Resume a task from the stop being handled, noting when calltrace's handling ended
 * (before the system call: its cost is part of the calibrated kernel share). */
static void resume(struct task *t, int sig)
{
	t->h_end = now_ns();
	cont(t->tid, sig);
}

static void handle_stop(struct engine *e, struct task *t, int st, uint64_t ts)
{
	int sig = WSTOPSIG(st);
	int event = st >> 16;
	unsigned long msg = 0;

	shadow_stop(e, t, ts);
	if (!t->seen_stop && (event == PTRACE_EVENT_STOP || (sig == SIGSTOP && !event))) {
		/* its initial stop: hold it until its creator's event says what it is */
		t->seen_stop = true;
		if (t->seen_event)
			child_ready(e, t);
		return;
	}
	switch (event) {
	case 0:
		break;
	case PTRACE_EVENT_STOP:
		if (is_stop_signal(sig)) {
			/* a group stop: stay stopped, as untraced, until SIGCONT */
			ptrace(PTRACE_LISTEN, t->tid, 0, 0);
			return;
		}
		resume(t, 0);       /* a PTRACE_INTERRUPT stop */
		return;
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &msg);
		on_new_child(e, t, (pid_t)msg, event);
		resume(t, 0);
		return;
	case PTRACE_EVENT_EXEC:
		on_exec(e, t, ts);
		if (task_find(e, t->tid) == t)
			resume(t, 0);
		return;
	case PTRACE_EVENT_EXIT:
		shadow_close_all(e, t, ts);
		resume(t, 0);
		return;
	default:
		resume(t, 0);
		return;
	}
	if (sig == SIGTRAP && on_trap(e, t, ts)) {
		resume(t, 0);
		return;
	}
	if (sig != SIGCHLD)
		msg_debug("tid %d: delivering signal %d at rip %#lx", t->tid, sig,
			  (unsigned long)ptrace(PTRACE_PEEKUSER, t->tid, RIP_OFFSET, 0));
	if (sig == SIGTRAP)
		before_program_trap(t);
	resume(t, sig);
}

/* ---- detach ------------------------------------------------------------------ */

/* Step a stopped thread out of the XOL page (it was sent to a slot and has not yet
 * jumped back): a few single-steps, only ever at detach. */
static void leave_xol(struct task *t)
{
	struct user_regs_struct regs;
	int st;

	for (int i = 0; i < 32; i++) {
		if (ptrace(PTRACE_GETREGS, t->tid, 0, &regs) < 0 ||
		    !aspace_in_xol(t->proc->as, regs.rip))
			return;
		if (ptrace(PTRACE_SINGLESTEP, t->tid, 0, 0) < 0 ||
		    waitpid(t->tid, &st, __WALL) != t->tid || !WIFSTOPPED(st))
			return;
		if (!(st >> 16) && WSTOPSIG(st) != SIGTRAP)
			t->pending_sig = WSTOPSIG(st);   /* delivered at the detach */
	}
}

/* Is SIGTRAP pending for thread @tid (/proc/PID/task/TID/status SigPnd)? */
static bool sigtrap_pending(pid_t pid, pid_t tid)
{
	char path[96], line[256];
	bool pending = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "SigPnd:", 7) || !strncmp(line, "ShdPnd:", 7))
			pending |= (strtoull(line + 7, NULL, 16) & SIGTRAP_BIT) != 0;
	}
	fclose(f);
	return pending;
}

/* A thread stopped by PTRACE_INTERRUPT right after it executed one of our int3s has
 * its SIGTRAP still pending (the kernel reports the interrupt first): take that stop
 * now and handle it, or the trap would reach the program after the detach. */
static void finish_pending_trap(struct engine *e, struct task *t, uint64_t ts)
{
	struct user_regs_struct regs;
	const struct bp *b;
	int st;

	if (ptrace(PTRACE_GETREGS, t->tid, 0, &regs) < 0)
		return;
	b = bp_find(t->proc->as, regs.rip - 1);
	if (!b || !b->nr_orig || !sigtrap_pending(t->proc->pid, t->tid))
		return;
	if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)
		return;
	while (waitpid(t->tid, &st, __WALL) == t->tid && WIFSTOPPED(st)) {
		shadow_stop(e, t, now_ns());
		if (WSTOPSIG(st) == SIGTRAP && !(st >> 16)) {
			if (!on_trap(e, t, ts))
				t->pending_sig = SIGTRAP;     /* the program's own, after all */
			return;
		}
		if (!(st >> 16))
			t->pending_sig = WSTOPSIG(st);
		if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)
			return;
	}
}

/* A thread resumed after a rewritten entry (int3 + shorter nop) may be stopped
 * inside the nop: once the original instruction (endbr64, a nop) is back, that is the
 * middle of an instruction. Move it past: the instruction does nothing. */
static void leave_rewritten(struct task *t)
{
	struct user_regs_struct regs;
	const struct aspace *as = t->proc->as;

	if (!as || ptrace(PTRACE_GETREGS, t->tid, 0, &regs) < 0)
		return;
	for (int back = 1; back < 16; back++) {
		const struct bp *b = bp_find(as, regs.rip - (uint64_t)back);

		if (b && b->nr_orig > back && b->kind == BP_ENTRY && !b->resume) {
			ptrace(PTRACE_POKEUSER, t->tid, RIP_OFFSET, b->addr + b->nr_orig);
			return;
		}
	}
}

/* Stop every thread, finish what each was doing, restore every byte, let go. */
static void detach_all(struct engine *e, uint64_t ts)
{
	for (struct task *t = e->tasks; t; t = t->next) {
		t->stopped = false;
		t->pending_sig = 0;
		ptrace(PTRACE_INTERRUPT, t->tid, 0, 0);
	}
	for (;;) {
		struct task *t;
		int st, pending = 0;
		pid_t tid;

		for (t = e->tasks; t; t = t->next)
			pending += !t->stopped;
		if (!pending)
			break;
		tid = waitpid(-1, &st, __WALL);
		if (tid < 0)
			break;
		t = task_find(e, tid);
		if (!t)
			continue;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (tid == e->main_pid && !e->have_status) {
				e->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
				e->have_status = true;
			}
			shadow_close_all(e, t, ts);
			task_remove(e, t);
			continue;
		}
		if (!WIFSTOPPED(st))
			continue;
		t->stopped = true;
		shadow_stop(e, t, now_ns());
		if ((st >> 16) == PTRACE_EVENT_STOP || (st >> 16))
			continue;       /* interrupt, group stop or event: nothing to carry */
		if (WSTOPSIG(st) == SIGTRAP && on_trap(e, t, ts))
			continue;       /* our breakpoint: rip already moved on */
		t->pending_sig = WSTOPSIG(st);
	}

	for (struct task *t = e->tasks; t; t = t->next) {
		finish_pending_trap(e, t, ts);
		leave_xol(t);
		leave_rewritten(t);
	}
	/* every byte back, once per process (through whichever of its threads is left) */
	for (struct task *t = e->tasks; t; t = t->next) {
		struct proc *pr = t->proc;
		const struct task *o;

		for (o = e->tasks; o != t && o->proc != pr; o = o->next)
			;
		if (o != t || pr->memfd < 0)
			continue;
		if (pr->as)
			aspace_restore(pr->as, pr->memfd);
		if (pr->startup_addr)
			mem_write(pr, pr->startup_addr, &pr->startup_orig, 1);
	}
	while (e->tasks) {
		struct task *t = e->tasks;

		shadow_close_all(e, t, ts);
		ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)t->pending_sig);
		task_remove(e, t);
	}
}

static void release_all(void)
{
	struct engine *e = the_engine;

	if (!e)
		return;
	the_engine = NULL;
	for (struct task *t = e->tasks; t; t = t->next) {
		if (!t->proc->is_attached)
			kill(t->tid, SIGKILL);   /* spawned: it dies with calltrace */
	}
	if (e->tasks && e->tasks->proc->is_attached)
		detach_all(e, now_ns());
}

/* ---- calibration ---------------------------------------------------------------- */

/* Measure what one stop costs a traced thread, on this machine and CPU placement: a
 * child runs int3 in a loop and each stop is handled like a breakpoint (rip and rsp,
 * the clock reads). Per stop, the time from our PTRACE_CONT to the next
 * waitpid return is the kernel's part (ck: trap, two context switches), and the CPU
 * time the child is charged is cu. calltrace's own handling time is not calibrated:
 * it is measured at every real stop. A low percentile is taken, not the mean: a stop
 * never costs less, so subtracting it never makes a time smaller than it was, even
 * when the machine is busy during the run or the calibration. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void calibrate(struct engine *e)
{
	enum { N = 2000 };
	uint64_t *kern = xcalloc(N, sizeof(*kern)), *cpu = xcalloc(N, sizeof(*cpu));
	uint64_t after_cont = 0, h = 0, last_cpu = 0;
	struct task fake = { .sfd = -1 };
	struct proc fp = { 0 };
	size_t nk = 0, nc = 0;
	int st;
	pid_t pid = fork();

	if (pid < 0)
		goto out;
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		for (int i = 0; i < N + 1; i++)
			__asm__ volatile("int3" ::: "memory");
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
		goto out;
	ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_EXITKILL);
	fake.tid = pid;
	fp.pid = pid;
	fake.proc = &fp;
	cont(pid, 0);
	for (int i = 0; i < N; i++) {
		uint64_t hs, rip = 0, rsp = 0;

		if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
			goto out;
		hs = now_ns();
		if (after_cont)
			kern[nk++] = hs - after_cont;
		/* as on_trap() does on the common path: rip and rsp read, none written (a
		 * detour's block goes on from its int3) */
		if (!stop_ip_sp(pid, &rip, &rsp))
			goto out;
		if (e->need_cpu) {
			uint64_t c = shadow_read_cpu(e, &fake);

			if (last_cpu && c >= last_cpu)
				cpu[nc++] = c - last_cpu;
			last_cpu = c;
		}
		after_cont = now_ns();     /* handling ends before the system call, as in resume() */
		cont(pid, 0);
		h += after_cont - hs;
	}
	qsort(kern, nk, sizeof(*kern), cmp_u64);
	qsort(cpu, nc, sizeof(*cpu), cmp_u64);
	e->ck_ns = nk ? kern[nk / 2] : 0;                     /* medians */
	e->cu_ns = nc ? cpu[nc / 2] : 0;
	e->ck_cal = e->ck_ns;
	e->cu_cal = e->cu_ns;
	e->st->handler_ns = h / N;
	e->st->stop_wall_ns = e->ck_ns + e->st->handler_ns;
	e->st->stop_cpu_ns = e->cu_ns;
out:
	free(kern);
	free(cpu);
	if (fake.sfd >= 0)
		close(fake.sfd);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
}

/* ---- spawn and attach -------------------------------------------------------- */

static void pin_to_one_cpu(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		msg_debug("cannot pin to CPU %d: %s", cpu, strerror(errno));
}

static pid_t spawn(struct engine *e)
{
	const struct engine_opts *eo = e->eo;
	struct proc *pr;
	struct task *t;
	int st, err;
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		err = errno;
		msg_error("%s: cannot start: fork: %s", eo->path, strerror(err));
		return -err;
	}
	if (pid == 0) {
		/* stop until the parent has seized us, then become the program */
		raise(SIGSTOP);
		execv(eo->path, eo->argv);
		err = errno;
		fprintf(stderr, "calltrace: %s: cannot execute: %s\n", eo->path, strerror(err));
		_exit(err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
	}
	e->main_pid = pid;
	if (waitpid(pid, &st, WUNTRACED) != pid || !WIFSTOPPED(st)) {
		msg_error("%s: cannot start: the child did not stop", eo->path);
		return -ECHILD;
	}
	if (ptrace(PTRACE_SEIZE, pid, 0, TRACE_OPTIONS | PTRACE_O_EXITKILL) < 0) {
		err = errno;
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		msg_error("%s: cannot trace: ptrace: %s", eo->path, strerror(err));
		return -err;
	}
	pr = proc_new(pid);
	pr->memfd = open_mem(pid);
	t = task_new(e, pid, pr);
	t->seen_event = t->seen_stop = true;
	t->record_all = eo->record_all;
	kill(pid, SIGCONT);
	return pid;
}

static int attach_thread(struct engine *e, struct proc *pr, pid_t tid)
{
	struct task *t;

	if (task_find(e, tid))
		return 0;
	if (ptrace(PTRACE_SEIZE, tid, 0, TRACE_OPTIONS) < 0)
		return -errno;
	ptrace(PTRACE_INTERRUPT, tid, 0, 0);
	t = task_new(e, tid, pr);
	t->seen_event = true;
	t->record_all = e->eo->record_all;
	return 0;
}

/* Where the attached threads will run on from: each one's rip, and every word of the
 * top ATTACH_STACK_SCAN bytes of its stack (return addresses, and the rip saved in the
 * frame of a signal handler it is running, or in a ucontext). A detour may not cover
 * any of them but at its first byte. Over-inclusive on purpose: a word that merely
 * looks like a code address costs one detour. Sorted. */
#define ATTACH_STACK_SCAN (64 * 1024)

static uint64_t *live_addresses(struct engine *e, struct proc *pr, size_t *nr)
{
	size_t n = 0, cap = 64;
	uint64_t *v = xcalloc(cap, sizeof(*v));
	uint64_t *page = xmalloc(4096);

	for (struct task *t = e->tasks; t; t = t->next) {
		uint64_t rsp = peek_reg(t->tid, offsetof(struct user, regs.rsp));

		xgrow(&v, &cap, n + 1, sizeof(*v));
		v[n++] = peek_reg(t->tid, RIP_OFFSET);
		for (uint64_t at = rsp & ~(uint64_t)7; at < rsp + ATTACH_STACK_SCAN; ) {
			uint64_t end = (at | 4095) + 1;
			size_t len = end - at;

			if (mem_read(pr, at, page, len) < 0)
				break;           /* past the top of the stack */
			xgrow(&v, &cap, n + len / 8, sizeof(*v));
			for (size_t i = 0; i < len / 8; i++)
				if (page[i] > 4096)
					v[n++] = page[i];
			at = end;
		}
	}
	free(page);
	qsort(v, n, sizeof(*v), cmp_u64);
	*nr = n;
	return v;
}

static int attach(struct engine *e)
{
	pid_t pid = e->eo->pid;
	struct proc *pr = proc_new(pid);
	char path[64];
	bool added;
	int rc = 0, st;

	pr->is_attached = true;
	e->main_pid = pid;
	/* seize every thread; re-read the list until no new thread appears */
	do {
		struct dirent *d;
		DIR *dir;

		added = false;
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		dir = opendir(path);
		if (!dir) {
			rc = -errno;
			break;
		}
		while ((d = readdir(dir)) != NULL) {
			pid_t tid = (pid_t)atoi(d->d_name);

			if (tid <= 0 || task_find(e, tid))
				continue;
			rc = attach_thread(e, pr, tid);
			if (rc == -ESRCH) {
				rc = 0;       /* the thread exited meanwhile */
				continue;
			}
			if (rc < 0)
				break;
			added = true;
		}
		closedir(dir);
	} while (added && rc == 0);
	if (rc == 0 && !e->tasks)
		rc = -ESRCH;
	if (rc < 0) {
		if (rc == -ESRCH || rc == -ENOENT)
			msg_error("pid %d: no such process; check the pid with ps", pid);
		else if (rc == -EPERM)
			msg_error("pid %d: ptrace not permitted (another user's process, or "
				  "/proc/sys/kernel/yama/ptrace_scope); run as that user or root", pid);
		else
			msg_error("pid %d: cannot attach: %s", pid, strerror(-rc));
		for (struct task *t = e->tasks; t; t = t->next)
			ptrace(PTRACE_DETACH, t->tid, 0, 0);
		while (e->tasks)
			task_remove(e, e->tasks);
		if (!pr->refs) {
			proc_get(pr);
			proc_put(pr);
		}
		return rc;
	}
	/* wait for every thread's interrupt stop */
	for (struct task *t = e->tasks; t; t = t->next) {
		while (!t->seen_stop) {
			if (waitpid(t->tid, &st, __WALL) != t->tid || !WIFSTOPPED(st))
				break;
			if ((st >> 16) == PTRACE_EVENT_STOP)
				t->seen_stop = true;
			else if (!(st >> 16))
				t->pending_sig = WSTOPSIG(st);   /* delivered after set-up */
			if (!t->seen_stop)
				cont(t->tid, 0);
		}
	}
	pr->memfd = open_mem(pid);
	if (pr->memfd < 0) {
		msg_error("pid %d: cannot open its memory: %s", pid, strerror(errno));
		detach_all(e, now_ns());
		return -EPERM;
	}
	pr->as = aspace_new();
	{
		struct sym_module *sym = load_exe(e, pid);
		uint64_t entry = proc_auxv(pid, AT_ENTRY);
		pid_t tid = e->tasks->tid;
		size_t n = 0;
		uint64_t *ips;

		if (!sym) {
			detach_all(e, now_ns());
			return -ENOENT;
		}
		ips = live_addresses(e, pr, &n);
		e->live_ips = ips;
		e->nr_live_ips = n;
		module_setup(e, pr, tid, sym, sym->is_dyn && entry ? entry - sym->entry : 0, true);
		if (e->eo->nr_libs) {
			uint64_t brk = 0;

			/* the rendezvous breakpoint first: if ld.so itself is traced (--lib
			 * '*'), its _dl_debug_state then gets no entry breakpoint of its own */
			pr->as->r_debug = rtld_find_r_debug(pr);
			if (pr->as->r_debug &&
			    mem_read(pr, pr->as->r_debug + offsetof(struct r_debug, r_brk), &brk,
				     sizeof(brk)) == 0 && brk)
				aspace_add_rtld(e, pr, brk);
			rtld_sync(e, pr, tid);
		}
		e->live_ips = NULL;
		e->nr_live_ips = 0;
		free(ips);
	}
	for (struct task *t = e->tasks; t; t = t->next) {
		cont(t->tid, t->pending_sig);
		t->pending_sig = 0;
	}
	return 0;
}

/* The live status line: elapsed time, calls, rate, threads; at most 4 a second. */
static void status_line(struct engine *e, uint64_t ts, bool last)
{
	static uint64_t start, prev_ts, prev_calls;
	int threads = 0;

	if (!e->eo->status_line)
		return;
	if (last) {
		if (start)
			fputs("\r\033[K", stderr);
		return;
	}
	if (!start) {
		start = prev_ts = ts;
		return;
	}
	if (ts - prev_ts < 250000000ull)
		return;
	for (struct task *t = e->tasks; t; t = t->next)
		threads++;
	fprintf(stderr, "\rcalltrace: %.1f s, %llu calls, %.0f calls/s, %d thread%s\033[K",
		(double)(ts - start) / 1e9, (unsigned long long)e->st->calls,
		(double)(e->st->calls - prev_calls) * 1e9 / (double)(ts - prev_ts), threads,
		threads == 1 ? "" : "s");
	prev_ts = ts;
	prev_calls = e->st->calls;
}

int engine_run(const struct engine_opts *eo, struct profile *p, int *status,
	       struct engine_stats *stats)
{
	struct engine e = { .eo = eo, .p = p, .st = stats };
	bool killed = false;
	int rc;

	memset(stats, 0, sizeof(*stats));
	rc = insn_decoder_new(&e.dec);
	if (rc < 0) {
		msg_error("cannot start the instruction decoder: %s", strerror(-rc));
		return rc;
	}
	e.first_image = eo->image;
	the_engine = &e;
	util_set_release_hook(release_all);
	if (eo->duration > 0) {
		struct sigaction sa = { .sa_handler = on_alarm };
		struct itimerval it = { 0 };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, NULL);     /* no SA_RESTART: waitpid returns EINTR */
		it.it_value.tv_sec = (time_t)eo->duration;
		it.it_value.tv_usec = (suseconds_t)((eo->duration - (double)(time_t)eo->duration) * 1e6);
		setitimer(ITIMER_REAL, &it, NULL);
	}
	e.clock_cpu = eo->clock_cpu;
	e.suspend = !eo->clock_cpu && !eo->no_suspend && !eo->count;
	e.need_cpu = e.clock_cpu || e.suspend;
	e.compensate = !eo->no_compensate && !eo->count;
	p->clock = e.clock_cpu ? "cpu" : "wall";
	if (e.suspend)
		e.suspend_id = profile_add_func(p, "suspend", "", NULL, 0, 0, 0);
	if (!eo->pid && eo->pin)
		pin_to_one_cpu();
	if (e.compensate || e.suspend)
		calibrate(&e);
	e.stop_est = e.clock_cpu ? e.cu_ns : e.ck_ns;
	if (eo->pid)
		rc = attach(&e);
	else
		rc = spawn(&e);
	if (rc < 0) {
		the_engine = NULL;
		util_set_release_hook(NULL);
		insn_decoder_free(e.dec);
		sym_module_free(e.first_image);
		return rc;
	}

	while (e.tasks) {
		int st;
		pid_t tid;
		uint64_t ts;
		struct task *t;

		/* a flag set by a signal handler, seen whether or not waitpid was the call
		 * it interrupted */
		if (duration_over || (stop_signal && e.tasks->proc->is_attached)) {
			/* leave the program running, untouched */
			detach_all(&e, now_ns());
			if (!e.have_status) {
				e.status = stop_signal ? 128 + stop_signal : 0;
				e.have_status = true;
			}
			break;
		}
		if (stop_signal && !killed) {
			release_all();           /* spawned: it dies with calltrace */
			the_engine = &e;
			killed = true;
			if (!e.have_status) {
				e.status = 128 + stop_signal;
				e.have_status = true;
			}
		}
		tid = waitpid(-1, &st, __WALL);
		ts = now_ns();
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		t = task_find(&e, tid);
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (tid == e.main_pid && !e.have_status) {
				e.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
				e.have_status = true;
			}
			if (t) {
				shadow_close_all(&e, t, ts);
				task_remove(&e, t);
			}
			continue;
		}
		if (!WIFSTOPPED(st))
			continue;
		if (!t) {
			/* a new thread or child reporting before its creator's event */
			t = task_new(&e, tid, proc_new(tid));
		}
		handle_stop(&e, t, st, ts);
		status_line(&e, ts, false);
		/* calltrace's own handling time at this stop, for the time compensation
		 * (shadow.c: virtual_now) */
		if ((t = task_find(&e, tid)) != NULL) {
			t->last_h = t->h_end > ts ? t->h_end - ts : 0;
			t->hsum += t->last_h;
		}
	}
	if (eo->duration > 0) {
		struct itimerval off = { 0 };

		setitimer(ITIMER_REAL, &off, NULL);
	}
	status_line(&e, 0, true);
	if (!eo->count) {
		/* the stops' cost out of every time, with the run's own measure of it */
		uint64_t c = e.compensate ? shadow_stop_cost(&e, &stats->stop_cost_trips) : 0;

		shadow_trips_debug(&e);

		profile_compensate(p, c);
		stats->stop_kernel_used_ns = c;
		p->compensated = e.compensate;
		p->stop_cost_ns = c;
		p->stop_cost_trips = stats->stop_cost_trips;
	}
	free(e.trips);
	free(e.proofs);
	*status = e.have_status ? e.status : EXIT_TRACER;
	the_engine = NULL;
	util_set_release_hook(NULL);
	while (e.tasks)
		task_remove(&e, e.tasks);
	insn_decoder_free(e.dec);
	sym_module_free(e.first_image);
	for (size_t i = 0; i < e.nr_known; i++) {
		free(e.known[i].path);
		free(e.known[i].ids);
	}
	free(e.known);
	return 0;
}
