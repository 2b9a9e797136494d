/* SPDX-License-Identifier: MIT */
/* engine.c - the tracing engine: spawn, plant breakpoints, one event loop.
 *
 * Breakpoints. Every function of the executable gets a permanent int3 on its first
 * byte, and every 'ret' and every direct jump that leaves a function (a tail call into
 * code we do not trace) gets one too. The displaced instruction is handled as
 * insn_plan_site() says: an endbr64 or nop is rewritten as int3 + shorter nop (the
 * thread just continues), a ret is sent to a shared 'ret' in the XOL page, a jmp is
 * emulated by setting rip, and anything else runs from its own XOL slot followed by a
 * jmp back. Nothing is armed or disarmed per call, no thread is ever single-stepped
 * or stopped for another's sake, and the traced program's stack is never written.
 * A full-mode call therefore costs exactly two stops: its entry and its exit.
 *
 * The shadow stack (per thread). A frame is (function, slot, entry time, child time,
 * call-tree node), where slot is %rsp at entry: the address of the return address.
 * At every stop the frames the stack has unwound past are closed first:
 *   - at an entry with %rsp = R: frames with slot < R are gone (longjmp, exceptions,
 *     a return we did not see); a frame with slot == R stays: the new call is a tail
 *     call from it (it jumped here instead of returning), so the new frame is chained
 *     to it and both end together;
 *   - at a ret or a leaving jump with %rsp = S: frames with slot <= S end now.
 * Frames still open when a thread exits end at its exit. Counts are exact whatever
 * the program does; only the end time of a frame whose exit we did not see is late
 * (the next stop of that thread).
 *
 * The XOL page is mapped into the program once per exec, within +-2 GiB of the
 * executable, by making the program run one mmap system call at its first
 * instruction. It is never written again after the breakpoints are planted. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "calltrace/engine.h"
#include "calltrace/insn.h"
#include "calltrace/profile.h"
#include "calltrace/sym.h"
#include "calltrace/util.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define RIP_OFFSET offsetof(struct user, regs.rip)

/* BP_PATCH is not a trap: the displacement of a jump back to its own function's entry,
 * pointed past the entry breakpoint (a loop is not a call). Restored like the others. */
enum bp_kind { BP_ENTRY, BP_EXIT, BP_PATCH };

struct bp {
	uint64_t addr;          /* runtime address of the int3 */
	uint64_t resume;        /* rip to continue at; 0: leave rip as the trap left it */
	uint32_t func;          /* BP_ENTRY: index in the image's functions */
	uint8_t kind;
	bool exits;             /* BP_ENTRY whose first instruction also leaves (ret, jmp
	                           to untraced code): the call ends at the same stop */
	uint8_t nr_orig;        /* bytes replaced; 0: not written */
	uint8_t orig[16];       /* the bytes the breakpoint replaced */
	uint8_t patch[16];      /* what replaced them: int3, or int3 + a shorter nop */
};

struct image {
	struct sym_module *sym;
	uint64_t bias;
	ct_func_id *ids;        /* profile id per sym function */
	bool *is_root;          /* per sym function: matches -f */
	struct bp *bps;         /* open-addressing table, nr_slots entries, addr 0 = empty */
	size_t nr_slots, nr_bps;
	uint64_t xol_base;
	size_t xol_size;
};

struct frame {
	uint64_t slot;
	uint64_t entry_ts;
	uint64_t child_ns;
	struct ct_node *node;   /* NULL when the call is not recorded */
};

struct proc;

struct task {
	pid_t tid;
	struct proc *proc;
	struct ct_thread *ct;   /* created at its first recorded call */
	struct frame *stack;
	size_t depth, cap;
	pid_t parent_tid;
	bool seen_event;        /* its creator's clone/fork/vfork event was seen */
	bool seen_stop;         /* its initial SIGSTOP was seen */
	bool is_fork;           /* an unfollowed fork child: detach when ready */
	bool no_record;         /* a child we do not record (fork, vfork until exec) */
	bool record_all;        /* a thread created while recording: record from its
	                           start routine on */
	struct task *next;
};

struct proc {
	pid_t pid;
	int memfd;              /* /proc/PID/mem */
	struct image *img;      /* NULL until the first instruction after exec */
	struct bp startup;      /* one-shot breakpoint at the first instruction */
	int refs;               /* tasks using this proc */
};

struct engine {
	const struct engine_opts *eo;
	struct profile *p;
	struct engine_stats *st;
	struct task *tasks;
	struct task *last;      /* cache: the task of the previous stop */
	struct insn_decoder *dec;
	pid_t main_pid;
	int status;
	bool have_status;
	struct sym_module *first_image;   /* the validated image, used at the first exec */
};

static volatile sig_atomic_t stop_signal;
static struct engine *the_engine;     /* for the release hook */

void engine_request_stop(int sig)
{
	stop_signal = sig;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- tracee memory ------------------------------------------------------------ */

static int mem_read(struct proc *pr, uint64_t raddr, void *laddr, size_t n)
{
	ssize_t r = pread(pr->memfd, laddr, n, (off_t)raddr);

	if (r < 0)
		return -errno;
	return (size_t)r == n ? 0 : -EIO;
}

/* /proc/PID/mem writes through read-only text (FOLL_FORCE): the one way we change
 * the program's code. */
static int mem_write(struct proc *pr, uint64_t raddr, const void *laddr, size_t n)
{
	ssize_t r = pwrite(pr->memfd, laddr, n, (off_t)raddr);

	if (r < 0)
		return -errno;
	return (size_t)r == n ? 0 : -EIO;
}

static int open_mem(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	return open(path, O_RDWR | O_CLOEXEC);
}

/* ---- breakpoint table ----------------------------------------------------------- */

static size_t bp_hash(uint64_t addr, size_t nr_slots)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 20) & (nr_slots - 1);
}

static struct bp *bp_find(const struct image *img, uint64_t addr)
{
	size_t i;

	if (!img || !img->nr_slots)
		return NULL;
	for (i = bp_hash(addr, img->nr_slots);; i = (i + 1) & (img->nr_slots - 1)) {
		struct bp *b = &img->bps[i];

		if (b->addr == addr)
			return b;
		if (!b->addr)
			return NULL;
	}
}

/* Insert an unwritten breakpoint; NULL if one exists at @addr already. */
static struct bp *bp_add(struct image *img, uint64_t addr)
{
	size_t i;

	for (i = bp_hash(addr, img->nr_slots);; i = (i + 1) & (img->nr_slots - 1)) {
		struct bp *b = &img->bps[i];

		if (b->addr == addr)
			return NULL;
		if (!b->addr) {
			memset(b, 0, sizeof(*b));
			b->addr = addr;
			img->nr_bps++;
			return b;
		}
	}
}

static void image_free(struct image *img)
{
	if (!img)
		return;
	sym_module_free(img->sym);
	free(img->ids);
	free(img->is_root);
	free(img->bps);
	free(img);
}

/* Put back every byte the image's breakpoints replaced, through @memfd (the process
 * itself, or a forked copy of it). */
static void image_restore(const struct image *img, int memfd)
{
	for (size_t i = 0; img && i < img->nr_slots; i++) {
		const struct bp *b = &img->bps[i];

		if (b->addr && b->nr_orig)
			(void)!pwrite(memfd, b->orig, b->nr_orig, (off_t)b->addr);
	}
}

/* ---- tasks -------------------------------------------------------------------- */

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

static struct proc *proc_new(pid_t pid)
{
	struct proc *pr = xcalloc(1, sizeof(*pr));

	pr->pid = pid;
	pr->memfd = -1;
	return pr;
}

static void proc_put(struct proc *pr)
{
	if (--pr->refs > 0)
		return;
	if (pr->memfd >= 0)
		close(pr->memfd);
	image_free(pr->img);
	free(pr);
}

static struct task *task_new(struct engine *e, pid_t tid, struct proc *pr)
{
	struct task *t = xcalloc(1, sizeof(*t));

	t->tid = tid;
	t->proc = pr;
	pr->refs++;
	t->next = e->tasks;
	e->tasks = t;
	return t;
}

static void frame_close(struct engine *e, struct task *t, uint64_t ts)
{
	struct frame *f = &t->stack[--t->depth];
	uint64_t dur = ts > f->entry_ts ? ts - f->entry_ts : 0;
	uint64_t own = dur > f->child_ns ? dur - f->child_ns : 0;

	if (f->node)
		ctree_leave(e->p, t->ct, f->node, dur, own, ts);
	if (t->depth)
		t->stack[t->depth - 1].child_ns += dur;
	(void)e;
}

/* Close the frames the stack has unwound past: slot < rsp, or slot <= rsp when
 * @inclusive (at a return). */
static void unwind_to(struct engine *e, struct task *t, uint64_t rsp, bool inclusive,
		      uint64_t ts)
{
	while (t->depth) {
		uint64_t slot = t->stack[t->depth - 1].slot;

		if (slot > rsp || (slot == rsp && !inclusive))
			break;
		frame_close(e, t, ts);
	}
}

static void task_close_all(struct engine *e, struct task *t, uint64_t ts)
{
	while (t->depth)
		frame_close(e, t, ts);
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
	proc_put(t->proc);
	free(t->stack);
	free(t);
}

static struct ct_thread *task_thread(struct engine *e, struct task *t)
{
	if (!t->ct) {
		t->ct = profile_add_thread(e->p, t->proc->pid, t->tid);
		if (t->parent_tid) {
			t->ct->parent_pid = t->proc->pid;
			t->ct->parent_tid = t->parent_tid;
		}
		if (t->proc->img)
			t->ct->comm = xstrdup(t->proc->img->sym->base);
	}
	return t->ct;
}

/* ---- the entry and exit of a call ------------------------------------------------ */

static const struct sym_func *func_containing(const struct sym_module *m, uint64_t faddr)
{
	size_t lo = 0, hi = m->nr_funcs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->funcs[mid].addr <= faddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	if (faddr < m->funcs[lo - 1].addr + m->funcs[lo - 1].size)
		return &m->funcs[lo - 1];
	return NULL;
}

/* Count mode: one stop per call. The caller is the traced function containing the
 * return address; a call from untraced code (a library calling back) has the caller
 * 'undefined'. Only root functions get frames, to know when recording is on. */
static void on_entry_count(struct engine *e, struct task *t, const struct bp *b, uint64_t rsp,
			   uint64_t ts)
{
	struct image *img = t->proc->img;
	ct_func_id caller = CT_FUNC_UNDEFINED;
	uint64_t ret;

	unwind_to(e, t, rsp, false, ts);
	e->st->calls++;
	if (img->is_root[b->func]) {
		xgrow(&t->stack, &t->cap, t->depth + 1, sizeof(*t->stack));
		t->stack[t->depth++] = (struct frame){ .slot = rsp, .entry_ts = ts };
	}
	if (!t->no_record && (t->depth || t->record_all)) {
		const struct sym_func *f = NULL;

		if (mem_read(t->proc, rsp, &ret, sizeof(ret)) == 0)
			f = func_containing(img->sym, ret - img->bias);
		if (f)
			caller = img->ids[f - img->sym->funcs];
		ctree_count(task_thread(e, t), caller, img->ids[b->func], ts);
		e->st->recorded++;
	}
	if (b->exits)
		unwind_to(e, t, rsp, true, ts);
}

static void on_entry(struct engine *e, struct task *t, const struct bp *b, uint64_t rsp,
		     uint64_t ts)
{
	struct image *img = t->proc->img;
	struct ct_node *parent = NULL;
	struct frame *f;

	unwind_to(e, t, rsp, false, ts);
	e->st->calls++;
	if (!t->no_record) {
		if (t->depth && t->stack[t->depth - 1].node)
			parent = t->stack[t->depth - 1].node;
		else if (img->is_root[b->func] || t->record_all)
			parent = &task_thread(e, t)->root;
	}
	xgrow(&t->stack, &t->cap, t->depth + 1, sizeof(*t->stack));
	f = &t->stack[t->depth++];
	f->slot = rsp;
	f->entry_ts = ts;
	f->child_ns = 0;
	f->node = NULL;
	if (parent) {
		f->node = ctree_enter(e->p, t->ct, parent, img->ids[b->func], ts);
		e->st->recorded++;
	}
	if (b->exits)
		unwind_to(e, t, rsp, true, ts);
}

/* ---- planting ------------------------------------------------------------------ */

struct plant_ctx {
	struct engine *e;
	bool want_exits;         /* plant ret / leaving-jump breakpoints in this body */
	struct proc *pr;
	struct image *img;
	const uint8_t *code;     /* snapshot of the text, from code_lo */
	uint64_t code_lo, code_hi;
	uint8_t *xol;            /* local copy of the XOL page */
	size_t xol_used;
	uint64_t ret_slot;       /* shared 'ret' */
};


static uint64_t xol_alloc(struct plant_ctx *c, const uint8_t *bytes, size_t n)
{
	uint64_t at;

	if (c->xol_used + INSN_XOL_SLOT > c->img->xol_size)
		return 0;
	at = c->img->xol_base + c->xol_used;
	memcpy(c->xol + c->xol_used, bytes, n);
	c->xol_used += INSN_XOL_SLOT;
	return at;
}

static const uint8_t *code_at(const struct plant_ctx *c, uint64_t raddr, size_t *avail)
{
	if (raddr < c->code_lo || raddr >= c->code_hi)
		return NULL;
	*avail = c->code_hi - raddr;
	return c->code + (raddr - c->code_lo);
}

/* Fill @b from @plan (the slot for XOL was reserved at c->xol_used). */
static int apply_plan(struct plant_ctx *c, struct bp *b, const struct insn_plan *plan)
{
	switch (plan->kind) {
	case PLAN_REWRITE:
		b->resume = 0;
		b->nr_orig = plan->patch_len;
		break;
	case PLAN_RET:
		if (plan->insn.ret_pop) {
			uint8_t r[3] = { 0xc2, (uint8_t)plan->insn.ret_pop,
					 (uint8_t)(plan->insn.ret_pop >> 8) };

			b->resume = xol_alloc(c, r, sizeof(r));
		} else {
			b->resume = c->ret_slot;
		}
		b->nr_orig = 1;
		break;
	case PLAN_JMP:
		b->resume = plan->insn.target;
		b->nr_orig = 1;
		break;
	case PLAN_XOL:
		b->resume = xol_alloc(c, plan->xol, plan->xol_len);
		b->nr_orig = 1;
		break;
	default:
		return -EINVAL;
	}
	if (plan->kind != PLAN_REWRITE && !b->resume)
		return -ENOSPC;
	return 0;
}

/* Is @raddr the entry of a function of this image (traced or about to be)? */
static bool is_traced_entry_addr(const struct sym_module *m, const struct image *img,
				 uint64_t raddr)
{
	const struct sym_func *f = func_containing(m, raddr - img->bias);

	return f && f->addr + img->bias == raddr && !f->is_cold;
}

/* Add a BP_PATCH writing the @n-byte little-endian @value at @raddr. */
static void add_patch(struct image *img, uint64_t raddr, int64_t value, int n)
{
	struct bp *b = bp_add(img, raddr);

	if (!b)
		return;
	b->kind = BP_PATCH;
	b->nr_orig = (uint8_t)n;
	for (int i = 0; i < n; i++)
		b->patch[i] = (uint8_t)((uint64_t)value >> (8 * i));
}

/* A jump inside a function back to its own first instruction is a loop, not a call.
 * Send it to where the entry's displaced instruction runs, past the entry breakpoint:
 * by rewriting its displacement when the destination is in reach, or else through a
 * breakpoint of its own (a stop per iteration, but the count stays exact). */
static void redirect_entry_jump(struct plant_ctx *c, const struct insn_exit *x)
{
	struct image *img = c->img;
	const struct bp *e = bp_find(img, x->target);
	struct insn_plan plan;
	const uint8_t *code;
	uint64_t dest, next = x->addr + x->len;
	int64_t rel;
	size_t avail;
	struct bp *b;

	if (!e || e->kind != BP_ENTRY || !e->nr_orig)
		return;
	dest = e->resume ? e->resume : x->target + 1;
	rel = (int64_t)(dest - next);
	code = code_at(c, x->addr, &avail);
	if (!code)
		return;
	/* jmp rel32 (e9) and jcc rel32 (0f 8x) end in their displacement, as do the
	 * rel8 forms (eb, 7x), whatever prefixes come first */
	if (x->len >= 5 && (code[x->len - 5] == 0xe9 ||
			    (code[x->len - 6] == 0x0f && (code[x->len - 5] & 0xf0) == 0x80))) {
		if (rel == (int32_t)rel) {
			add_patch(img, next - 4, rel, 4);
			return;
		}
	} else if (rel == (int8_t)rel) {
		add_patch(img, next - 1, rel, 1);
		return;
	}
	if (insn_plan_site(c->e->dec, code, avail, x->addr, img->xol_base + c->xol_used,
			   &plan) < 0)
		return;
	if (plan.kind == PLAN_JMP) {
		plan.insn.target = dest;
	} else if (plan.kind == PLAN_XOL && plan.xol[0] == 0x0f) {
		/* jcc rel32 to the entry, then jmp back: aim the jcc at dest instead */
		int32_t r = (int32_t)(dest - (img->xol_base + c->xol_used + 6));

		memcpy(plan.xol + 2, &r, 4);
	} else {
		return;
	}
	b = bp_add(img, x->addr);
	if (!b)
		return;
	b->kind = BP_PATCH;       /* not an exit: on_trap only resumes it */
	if (apply_plan(c, b, &plan) < 0)
		b->nr_orig = 0;
}

static void plant_exit(const struct insn_exit *x, void *arg)
{
	struct plant_ctx *c = arg;
	struct image *img = c->img;
	struct insn_plan plan;
	const uint8_t *code;
	size_t avail;
	struct bp *b;

	if (x->kind != EXIT_ENTRY_JUMP && !c->want_exits)
		return;
	switch (x->kind) {
	case EXIT_RET:
		break;
	case EXIT_JMP_OUT:
		/* A tail call into a traced function is seen at its entry; a jump into
		 * another function's body (a .cold part) is not a call. */
		if (func_containing(img->sym, x->target - img->bias))
			return;
		break;
	case EXIT_ENTRY_JUMP:
		redirect_entry_jump(c, x);
		return;
	default:
		/* Indirect jumps are mostly switch tables: a stop on each would be a stop on
		 * the common path. A tail call through a pointer ends at the next stop. */
		return;
	}
	if (bp_find(img, x->addr))
		return;
	code = code_at(c, x->addr, &avail);
	if (!code || insn_plan_site(c->e->dec, code, avail, x->addr,
				    img->xol_base + c->xol_used, &plan) < 0)
		return;
	if (plan.kind == PLAN_REFUSE || plan.kind == PLAN_REWRITE)
		return;
	b = bp_add(img, x->addr);
	if (!b)
		return;
	b->kind = BP_EXIT;
	if (apply_plan(c, b, &plan) < 0)
		b->nr_orig = 0;     /* out of XOL room: leave it unwritten */
}

/* Make the program run mmap(@hint, @len, r-x, private anonymous fixed-noreplace) at a
 * clean stop (not inside a system call): write 'syscall; int3' at its rip, run it,
 * put everything back. Returns the mapping's address or 0. */
static uint64_t inject_mmap(struct proc *pr, pid_t tid, uint64_t hint, size_t len)
{
	static const uint8_t code[8] = { 0x0f, 0x05, 0xcc, 0x90, 0x90, 0x90, 0x90, 0x90 };
	struct user_regs_struct saved, r;
	uint8_t orig[8];
	uint64_t ret = 0;
	int st;

	if (ptrace(PTRACE_GETREGS, tid, 0, &saved) < 0)
		return 0;
	if (mem_read(pr, saved.rip, orig, sizeof(orig)) < 0 ||
	    mem_write(pr, saved.rip, code, sizeof(code)) < 0)
		return 0;
	r = saved;
	r.rax = SYS_mmap;
	r.orig_rax = (uint64_t)-1;
	r.rdi = hint;
	r.rsi = len;
	r.rdx = PROT_READ | PROT_EXEC;
	r.r10 = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE;
	r.r8 = (uint64_t)-1;
	r.r9 = 0;
	if (ptrace(PTRACE_SETREGS, tid, 0, &r) == 0 && ptrace(PTRACE_CONT, tid, 0, 0) == 0) {
		while (waitpid(tid, &st, __WALL) == tid) {
			if (!WIFSTOPPED(st))
				return 0;      /* died: nothing to restore */
			if (WSTOPSIG(st) == SIGTRAP)
				break;
			/* a signal arrived meanwhile: it is lost to the program only if we
			 * drop it, so keep it pending by re-sending it after the set-up */
			kill(tid, WSTOPSIG(st));
			ptrace(PTRACE_CONT, tid, 0, 0);
		}
		if (ptrace(PTRACE_GETREGS, tid, 0, &r) == 0 && r.rax < (uint64_t)-4095)
			ret = r.rax;
	}
	mem_write(pr, saved.rip, orig, sizeof(orig));
	ptrace(PTRACE_SETREGS, tid, 0, &saved);
	return ret;
}

static uint64_t read_auxv_entry(pid_t pid)
{
	char path[64];
	uint64_t av[2];
	uint64_t entry = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (read(fd, av, sizeof(av)) == sizeof(av) && av[0] != 0) {
		if (av[0] == 9 /* AT_ENTRY */)
			entry = av[1];
	}
	close(fd);
	return entry;
}

static bool matches_root(const struct engine_opts *eo, const char *name, const char *raw)
{
	for (size_t i = 0; i < eo->nr_patterns; i++) {
		if (fnmatch(eo->patterns[i], name, 0) == 0 ||
		    fnmatch(eo->patterns[i], raw, 0) == 0)
			return true;
	}
	return false;
}

/* Set up the image of @pr at its first instruction after exec: symbols, XOL page,
 * breakpoints. 0 or -errno. */
static int image_setup(struct engine *e, struct proc *pr, pid_t tid, struct sym_module *sym)
{
	struct image *img = xcalloc(1, sizeof(*img));
	const struct sym_module *m = sym;
	struct plant_ctx c = { .e = e, .pr = pr, .img = img };
	uint64_t entry = read_auxv_entry(pr->pid);
	uint64_t lo, hi, hint;
	size_t need;
	uint8_t *code = NULL;
	int rc = 0;

	img->sym = sym;
	img->bias = m->is_dyn && entry ? entry - m->entry : 0;
	img->ids = xcalloc(m->nr_funcs, sizeof(*img->ids));
	img->is_root = xcalloc(m->nr_funcs, sizeof(*img->is_root));
	for (size_t i = 0; i < m->nr_funcs; i++) {
		const struct sym_func *f = &m->funcs[i];

		img->ids[i] = profile_add_func(e->p, f->name, m->base, f->file, f->line,
					       f->arity, f->addr + img->bias);
		img->is_root[i] = matches_root(e->eo, f->name, f->raw);
		if (f->is_cold && !img->is_root[i]) {
			/* main.cold belongs to main */
			char *base = xstrdup(f->raw);

			*strstr(base, ".cold") = 0;
			img->is_root[i] = matches_root(e->eo, base, base);
			free(base);
		}
	}
	img->nr_slots = 64;
	while (img->nr_slots < m->nr_funcs * 8)
		img->nr_slots *= 2;
	img->bps = xcalloc(img->nr_slots, sizeof(*img->bps));
	pr->img = img;
	if (!m->nr_funcs)
		return 0;

	lo = m->funcs[0].addr + img->bias;
	hi = lo;
	for (size_t i = 0; i < m->nr_funcs; i++) {
		uint64_t end = m->funcs[i].addr + img->bias + m->funcs[i].size;

		if (end > hi)
			hi = end;
	}
	hi += 16;
	code = xmalloc(hi - lo);
	/* the tail may run past the mapping: read what is there */
	memset(code, 0, hi - lo);
	if (mem_read(pr, lo, code, hi - lo - 16) < 0) {
		rc = -EIO;
		goto out;
	}
	c.code = code;
	c.code_lo = lo;
	c.code_hi = hi - 16;

	need = (m->nr_funcs * 2 + 16) * INSN_XOL_SLOT;
	img->xol_size = (need + 4095) & ~(size_t)4095;
	/* Below the executable, never above it: the heap grows up from its end. */
	for (int k = 1; k <= 64 && !img->xol_base; k++) {
		hint = ((lo & ~(uint64_t)0xffff) - img->xol_size - (uint64_t)k * 0x10000);
		if (hint < 0x10000 || hint > lo)
			break;
		img->xol_base = inject_mmap(pr, tid, hint, img->xol_size);
	}
	if (!img->xol_base) {
		msg_warn("pid %d: cannot map the out-of-line page near %#" PRIx64
			 "; functions needing it are not traced", pr->pid, lo);
		img->xol_size = 0;
	}
	c.xol = xcalloc(1, img->xol_size ? img->xol_size : 1);
	if (img->xol_size) {
		static const uint8_t ret = 0xc3;

		c.ret_slot = xol_alloc(&c, &ret, 1);
	}

	/* Entries first, so that exits can tell a tail call into a traced function. */
	for (size_t i = 0; i < m->nr_funcs; i++) {
		const struct sym_func *f = &m->funcs[i];
		uint64_t raddr = f->addr + img->bias;
		struct insn_plan plan;
		const uint8_t *p;
		size_t avail;
		struct bp *b;

		if (f->is_cold)
			continue;
		p = code_at(&c, raddr, &avail);
		if (avail > f->size)
			avail = f->size;
		if (!p || insn_plan_site(e->dec, p, avail, raddr, img->xol_base + c.xol_used,
					 &plan) < 0 || plan.kind == PLAN_REFUSE) {
			msg_debug("%s: not traced (%s)", f->name,
				  p ? (plan.kind == PLAN_REFUSE ? plan.why : "undecodable") : "unmapped");
			e->st->nr_refused++;
			continue;
		}
		b = bp_add(img, raddr);
		if (!b)
			continue;
		b->kind = BP_ENTRY;
		b->func = (uint32_t)i;
		if (apply_plan(&c, b, &plan) < 0) {
			b->nr_orig = 0;      /* out of XOL room: never written */
			e->st->nr_refused++;
			continue;
		}
		if (plan.kind == PLAN_REWRITE)
			memcpy(b->patch, plan.patch, plan.patch_len);
		b->exits = plan.kind == PLAN_RET ||
			   (plan.kind == PLAN_JMP && !is_traced_entry_addr(m, img, plan.insn.target));
	}
	for (size_t i = 0; i < m->nr_funcs; i++) {
		const struct sym_func *f = &m->funcs[i];
		uint64_t raddr = f->addr + img->bias;
		const uint8_t *p;
		size_t avail;
		uint64_t bad;

		p = code_at(&c, raddr, &avail);
		if (!p || avail < f->size)
			continue;
		/* count mode watches only the roots' exits: it needs to know when a root
		 * is active, not when other calls end */
		c.want_exits = !e->eo->count || img->is_root[i];
		if (insn_scan_body(e->dec, p, f->size, raddr, plant_exit, &c, &bad) < 0)
			msg_debug("%s: undecodable at %#" PRIx64 "; exits after it are not watched",
				  f->name, bad);
	}

	/* The XOL page first (nothing jumps there yet), then the int3s. */
	if (img->xol_size && mem_write(pr, img->xol_base, c.xol, c.xol_used) < 0)
		rc = -EIO;
	for (size_t i = 0; i < img->nr_slots && rc == 0; i++) {
		struct bp *b = &img->bps[i];

		if (!b->addr || !b->nr_orig)
			continue;
		const uint8_t *p;
		size_t avail;

		if (!b->patch[0])
			b->patch[0] = 0xcc;           /* a plain int3 */
		p = code_at(&c, b->addr, &avail);
		if (!p || avail < b->nr_orig) {
			b->nr_orig = 0;
			continue;
		}
		memcpy(b->orig, p, b->nr_orig);     /* from the snapshot: never our own bytes */
		if (mem_write(pr, b->addr, b->patch, b->nr_orig) < 0)
			rc = -EIO;
	}
	for (size_t i = 0; i < img->nr_slots; i++)
		if (img->bps[i].addr && img->bps[i].nr_orig)
			e->st->nr_bps++;
out:
	free(c.xol);
	free(code);
	return rc;
}

/* ---- events ------------------------------------------------------------------ */

static void cont(pid_t tid, int sig)
{
	ptrace(PTRACE_CONT, tid, 0, (void *)(long)sig);
}

/* A SIGTRAP stop. Returns true if it was one of our breakpoints (handled). */
static bool on_trap(struct engine *e, struct task *t, uint64_t ts)
{
	struct proc *pr = t->proc;
	struct user_regs_struct regs;
	struct bp *b;

	if (ptrace(PTRACE_GETREGS, t->tid, 0, &regs) < 0)
		return false;
	if (pr->startup.addr && regs.rip - 1 == pr->startup.addr) {
		struct sym_module *sym = e->first_image;
		int rc;

		mem_write(pr, pr->startup.addr, pr->startup.orig, 1);
		ptrace(PTRACE_POKEUSER, t->tid, RIP_OFFSET, pr->startup.addr);
		pr->startup.addr = 0;
		e->first_image = NULL;
		if (!sym) {
			char exe[64], path[4096];
			ssize_t n;

			snprintf(exe, sizeof(exe), "/proc/%d/exe", pr->pid);
			n = readlink(exe, path, sizeof(path) - 1);
			if (n <= 0)
				return true;
			path[n] = 0;
			if (sym_check_elf(path, NULL) != SYM_ELF_OK || sym_module_load(path, &sym) < 0) {
				sym_module_free(sym);
				return true;    /* an exec'd program we cannot trace runs untraced */
			}
		}
		rc = image_setup(e, pr, t->tid, sym);
		if (rc < 0)
			die(EXIT_TRACER, "pid %d: cannot plant breakpoints: %s", pr->pid, strerror(-rc));
		return true;
	}
	b = bp_find(pr->img, regs.rip - 1);
	if (!b || !b->nr_orig)
		return false;
	if (b->kind == BP_PATCH && !b->resume)
		return false;        /* a rewritten displacement, never a trap */
	e->st->stops++;
	if (b->kind == BP_ENTRY && e->eo->count)
		on_entry_count(e, t, b, regs.rsp, ts);
	else if (b->kind == BP_ENTRY)
		on_entry(e, t, b, regs.rsp, ts);
	else if (b->kind == BP_EXIT)
		unwind_to(e, t, regs.rsp, true, ts);
	if (b->resume)
		ptrace(PTRACE_POKEUSER, t->tid, RIP_OFFSET, b->resume);
	return true;
}

static void on_exec(struct engine *e, struct task *t, uint64_t ts)
{
	struct proc *pr = t->proc;
	struct user_regs_struct regs;
	static const uint8_t int3 = 0xcc;

	if (t->no_record) {
		/* a vfork child that exec'd: it no longer shares our breakpoints */
		ptrace(PTRACE_DETACH, t->tid, 0, 0);
		task_remove(e, t);
		return;
	}
	/* The old image is gone with every thread but this one (the kernel gave it the
	 * leader's tid). */
	task_close_all(e, t, ts);
	for (struct task *o = e->tasks, *next; o; o = next) {
		next = o->next;
		if (o != t && o->proc == pr) {
			task_close_all(e, o, ts);
			task_remove(e, o);
		}
	}
	image_free(pr->img);
	pr->img = NULL;
	if (pr->memfd >= 0)
		close(pr->memfd);
	pr->memfd = open_mem(pr->pid);
	/* Stop again at the first user instruction: inside execve the registers are not
	 * ours to use for the mmap. */
	if (pr->memfd < 0 || ptrace(PTRACE_GETREGS, t->tid, 0, &regs) < 0)
		return;
	pr->startup.addr = regs.rip;
	if (mem_read(pr, regs.rip, pr->startup.orig, 1) < 0 ||
	    mem_write(pr, regs.rip, &int3, 1) < 0)
		pr->startup.addr = 0;
}

/* A new thread or child has reported both its creation event and its first stop. */
static void child_ready(struct engine *e, struct task *c)
{
	if (c->is_fork) {
		/* Not followed: a private copy of the parent's memory, breakpoints and all.
		 * Its bytes were put back at the fork event; let it go. */
		ptrace(PTRACE_DETACH, c->tid, 0, 0);
		task_remove(e, c);
		return;
	}
	cont(c->tid, 0);
}

static void on_new_child(struct engine *e, struct task *parent, pid_t child, int event)
{
	struct task *c = task_find(e, child);
	struct proc *pr;

	/* A thread, and a vfork child until it execs, share the parent's memory and so
	 * its breakpoints; a fork child has its own copy. */
	pr = event == PTRACE_EVENT_FORK ? proc_new(child) : parent->proc;
	if (!c) {
		c = task_new(e, child, pr);
	} else if (c->proc != pr) {
		proc_put(c->proc);
		c->proc = pr;
		pr->refs++;
	}
	c->parent_tid = parent->tid;
	c->no_record = event != PTRACE_EVENT_CLONE;
	c->record_all = event == PTRACE_EVENT_CLONE &&
			(parent->record_all ||
			 (parent->depth && parent->stack[parent->depth - 1].node));
	if (event == PTRACE_EVENT_FORK) {
		c->is_fork = true;
		pr->memfd = open_mem(child);
		if (pr->memfd >= 0)
			image_restore(parent->proc->img, pr->memfd);
	}
	c->seen_event = true;
	if (c->seen_stop)
		child_ready(e, c);
}

static void release_all(void)
{
	struct engine *e = the_engine;

	if (!e)
		return;
	/* Spawned programs die with calltrace (PTRACE_O_EXITKILL); make it explicit. */
	for (struct task *t = e->tasks; t; t = t->next)
		kill(t->tid, SIGKILL);
}

static void handle_stop(struct engine *e, struct task *t, int st, uint64_t ts)
{
	int sig = WSTOPSIG(st);
	int event = st >> 16;

	if (!t->seen_stop && sig == SIGSTOP && !event) {
		/* its initial stop: hold it until its creator's event says what it is */
		t->seen_stop = true;
		if (t->seen_event)
			child_ready(e, t);
		return;
	}
	if (sig == SIGTRAP && event) {
		unsigned long msg = 0;

		switch (event) {
		case PTRACE_EVENT_CLONE:
		case PTRACE_EVENT_FORK:
		case PTRACE_EVENT_VFORK:
			ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &msg);
			on_new_child(e, t, (pid_t)msg, event);
			break;
		case PTRACE_EVENT_EXEC:
			on_exec(e, t, ts);
			if (!task_find(e, t->tid))
				return;
			break;
		case PTRACE_EVENT_EXIT:
			task_close_all(e, t, ts);
			break;
		default:
			break;
		}
		cont(t->tid, 0);
		return;
	}
	if (sig == SIGTRAP && on_trap(e, t, ts)) {
		cont(t->tid, 0);
		return;
	}
	if (sig != SIGCHLD)
		msg_debug("tid %d: delivering signal %d at rip %#lx", t->tid, sig,
			  (unsigned long)ptrace(PTRACE_PEEKUSER, t->tid, RIP_OFFSET, 0));
	cont(t->tid, sig);
}

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

static pid_t spawn(const struct engine_opts *eo)
{
	int pipefd[2];
	pid_t pid;
	int err = 0;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(pipefd[0]);
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0) {
			err = errno;
			(void)!write(pipefd[1], &err, sizeof(err));
			_exit(EXIT_TRACER);
		}
		raise(SIGSTOP);
		execv(eo->path, eo->argv);
		err = errno;
		fprintf(stderr, "calltrace: %s: cannot execute: %s\n", eo->path, strerror(err));
		(void)!write(pipefd[1], &err, sizeof(err));
		_exit(err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
	}
	close(pipefd[1]);
	the_engine->main_pid = pid;
	{
		int st;

		if (waitpid(pid, &st, __WALL) != pid || !WIFSTOPPED(st)) {
			if (read(pipefd[0], &err, sizeof(err)) == sizeof(err))
				msg_error("%s: cannot trace: %s", eo->path, strerror(err));
			close(pipefd[0]);
			return -ECHILD;
		}
	}
	if (ptrace(PTRACE_SETOPTIONS, pid, 0,
		   PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
		   PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL) < 0) {
		err = errno;
		kill(pid, SIGKILL);
		close(pipefd[0]);
		msg_error("%s: cannot set ptrace options: %s", eo->path, strerror(err));
		return -err;
	}
	close(pipefd[0]);
	return pid;
}

int engine_run(const struct engine_opts *eo, struct profile *p, int *status,
	       struct engine_stats *stats)
{
	struct engine e = { .eo = eo, .p = p, .st = stats };
	struct proc *pr;
	pid_t pid;
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
	if (eo->pin)
		pin_to_one_cpu();
	pid = spawn(eo);
	if (pid < 0) {
		the_engine = NULL;
		util_set_release_hook(NULL);
		insn_decoder_free(e.dec);
		sym_module_free(e.first_image);
		return pid;
	}
	pr = proc_new(pid);
	pr->memfd = open_mem(pid);
	{
		struct task *t = task_new(&e, pid, pr);

		t->seen_event = t->seen_stop = true;
	}
	cont(pid, 0);

	while (e.tasks) {
		int st;
		pid_t tid = waitpid(-1, &st, __WALL);
		uint64_t ts = now_ns();
		struct task *t;

		if (tid < 0) {
			if (errno == EINTR) {
				if (stop_signal) {
					release_all();
					if (!e.have_status) {
						e.status = 128 + stop_signal;
						e.have_status = true;
					}
				}
				continue;
			}
			break;
		}
		t = task_find(&e, tid);
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (tid == e.main_pid && !e.have_status) {
				e.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
				e.have_status = true;
			}
			if (t) {
				task_close_all(&e, t, ts);
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
	}
	*status = e.have_status ? e.status : EXIT_TRACER;
	the_engine = NULL;
	util_set_release_hook(NULL);
	while (e.tasks)
		task_remove(&e, e.tasks);
	insn_decoder_free(e.dec);
	sym_module_free(e.first_image);
	return 0;
}
