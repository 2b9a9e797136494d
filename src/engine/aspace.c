/* SPDX-License-Identifier: MIT */
/* aspace.c - address spaces: the breakpoint table, the traced modules and their
 * out-of-line (XOL) pages. The only code that writes the traced program's memory, and
 * it saves every byte it replaces first (from a snapshot taken before any write), so
 * aspace_restore() can always undo it.
 *
 * Planting a module (module_setup):
 *   1. map an r-x XOL page within +-2 GiB of the module, by making the program run one
 *      mmap system call (inject_mmap);
 *   2. decode every body once: the exits (rets, jumps leaving the function) and the
 *      target of every direct branch, so that a detour never covers a byte that some
 *      jump lands on;
 *   3. plan every function entry: a detour when its first 5 bytes are movable
 *      instructions that nothing jumps into (the stop needs no register write: the
 *      int3 is in the block), else insn_plan_site(): rewrite an endbr64/nop in place
 *      as int3 + shorter nop, emulate a ret or jmp by setting rip, or run the
 *      displaced instruction from its own XOL slot followed by a jmp back;
 *   4. every exit: a ret gets a detour over itself and the movable instructions before
 *      it when that is safe, else an int3; a direct jump leaving the function for
 *      code that is not traced gets an int3; loops back to the entry are sent past
 *      the entry breakpoint;
 *   5. write the XOL page, then the breakpoint and detour bytes.
 * Nothing is written again until the module goes away or the process is released. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include "calltrace/insn.h"
#include "calltrace/sym.h"
#include "calltrace/util.h"
#include "internal.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

/* ---- tracee memory ------------------------------------------------------------ */

int mem_read(struct proc *pr, uint64_t raddr, void *laddr, size_t n)
{
	ssize_t r = pread(pr->memfd, laddr, n, (off_t)raddr);

	if (r < 0)
		return -errno;
	return (size_t)r == n ? 0 : -EIO;
}

bool bp_is_site(const struct bp *b)
{
	return b && b->nr_orig && !b->in_block && !(b->kind == BP_PATCH && !b->resume);
}

int aspace_read_code(struct proc *pr, uint64_t raddr, uint8_t *buf, size_t n)
{
	enum { LEAD = 15 };       /* a site replaces at most 16 bytes */
	uint8_t lead[LEAD];
	int rc = mem_read(pr, raddr, buf, n);

	if (rc < 0 || !pr->as)
		return rc;
	if (raddr <= LEAD || mem_read(pr, raddr - LEAD, lead, LEAD) < 0)
		memset(lead, 0, sizeof(lead));
	/* Every site that writes an instruction's first byte writes an int3 or a detour's
	 * jmp there: only those bytes can start one. A rewritten displacement (a loop back
	 * past an entry) is the code that runs: it stays. */
	for (uint64_t a = raddr - LEAD; a < raddr + n; a++) {
		uint8_t c = a < raddr ? lead[a - (raddr - LEAD)] : buf[a - raddr];
		const struct bp *b;

		if (c != 0xcc && c != 0xe9)
			continue;
		b = bp_find(pr->as, a);
		if (!bp_is_site(b))
			continue;
		for (size_t i = 0; i < b->nr_orig; i++)
			if (a + i >= raddr && a + i < raddr + n)
				buf[a + i - raddr] = b->orig[i];
	}
	return 0;
}

/* /proc/PID/mem writes through read-only text (FOLL_FORCE). */
int mem_write(struct proc *pr, uint64_t raddr, const void *laddr, size_t n)
{
	ssize_t r = pwrite(pr->memfd, laddr, n, (off_t)raddr);

	if (r < 0)
		return -errno;
	return (size_t)r == n ? 0 : -EIO;
}

int open_mem(pid_t pid)
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

struct bp *bp_find(const struct aspace *as, uint64_t addr)
{
	if (!as || !as->nr_slots)
		return NULL;
	for (size_t i = bp_hash(addr, as->nr_slots);; i = (i + 1) & (as->nr_slots - 1)) {
		struct bp *b = &as->bps[i];

		if (b->addr == addr)
			return b;
		if (!b->addr)
			return NULL;
	}
}

static void bp_table_resize(struct aspace *as, size_t nr_slots)
{
	struct bp *old = as->bps;
	size_t old_slots = as->nr_slots;

	as->bps = xcalloc(nr_slots, sizeof(*as->bps));
	as->nr_slots = nr_slots;
	for (size_t i = 0; i < old_slots; i++) {
		size_t j;

		if (!old[i].addr)
			continue;
		for (j = bp_hash(old[i].addr, nr_slots); as->bps[j].addr; j = (j + 1) & (nr_slots - 1))
			;
		as->bps[j] = old[i];
	}
	free(old);
}

/* Make room for @more breakpoints (load factor <= 1/2). Pointers into the table are
 * invalidated: call before planting, never while holding a struct bp *. */
static void bp_reserve(struct aspace *as, size_t more)
{
	size_t need = (as->nr_bps + more) * 2, slots = as->nr_slots ? as->nr_slots : 64;

	while (slots < need)
		slots *= 2;
	if (slots != as->nr_slots)
		bp_table_resize(as, slots);
}

/* A new, unwritten breakpoint; NULL if one exists at @addr already. */
static struct bp *bp_add(struct aspace *as, uint64_t addr)
{
	for (size_t i = bp_hash(addr, as->nr_slots);; i = (i + 1) & (as->nr_slots - 1)) {
		struct bp *b = &as->bps[i];

		if (b->addr == addr)
			return NULL;
		if (!b->addr) {
			memset(b, 0, sizeof(*b));
			b->addr = addr;
			as->nr_bps++;
			return b;
		}
	}
}

/* ---- address spaces and modules ------------------------------------------------ */

static uint64_t aspace_gens;

struct aspace *aspace_new(void)
{
	struct aspace *as = xcalloc(1, sizeof(*as));

	as->gen = ++aspace_gens;
	as->refs = 1;
	bp_reserve(as, 32);
	return as;
}

struct aspace *aspace_copy(const struct aspace *as)
{
	struct aspace *c = xcalloc(1, sizeof(*c));

	c->gen = ++aspace_gens;
	c->refs = 1;
	c->nr_slots = as->nr_slots;
	c->nr_bps = as->nr_bps;
	c->r_debug = as->r_debug;
	c->bps = xmalloc(as->nr_slots * sizeof(*c->bps));
	memcpy(c->bps, as->bps, as->nr_slots * sizeof(*c->bps));
	/* modules are immutable once planted: the copy shares them */
	c->mods = xmalloc((as->nr_mods ? as->nr_mods : 1) * sizeof(*c->mods));
	c->nr_mods = c->cap_mods = as->nr_mods;
	for (size_t i = 0; i < as->nr_mods; i++) {
		c->mods[i] = as->mods[i];
		c->mods[i]->refs++;
	}
	return c;
}

static void module_put(struct module *m)
{
	if (--m->refs > 0)
		return;
	sym_module_free(m->sym);
	free(m->ids);
	free(m->is_root);
	free(m);
}

void aspace_put(struct aspace *as)
{
	if (!as || --as->refs > 0)
		return;
	for (size_t i = 0; i < as->nr_mods; i++)
		module_put(as->mods[i]);
	free(as->mods);
	free(as->bps);
	free(as);
}

struct module *module_of(const struct aspace *as, uint64_t raddr)
{
	for (size_t i = 0; as && i < as->nr_mods; i++) {
		struct module *m = as->mods[i];

		if (raddr >= m->lo && raddr < m->hi)
			return m;
	}
	return NULL;
}

const struct sym_func *func_containing(const struct module *m, uint64_t raddr)
{
	const struct sym_module *s = m->sym;
	uint64_t faddr = raddr - m->bias;
	size_t lo = 0, hi = s->nr_funcs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->funcs[mid].addr <= faddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && faddr < s->funcs[lo - 1].addr + s->funcs[lo - 1].size)
		return &s->funcs[lo - 1];
	return NULL;
}

void module_forget(struct aspace *as, struct module *m)
{
	struct bp *old = as->bps;
	size_t old_slots = as->nr_slots;

	/* its code is unmapped: no thread can be at its breakpoints; drop them, so
	 * that a library loaded again at the same address gets fresh ones */
	as->bps = xcalloc(old_slots, sizeof(*as->bps));
	as->nr_bps = 0;
	for (size_t i = 0; i < old_slots; i++) {
		size_t j;

		if (!old[i].addr || old[i].mod == m)
			continue;
		for (j = bp_hash(old[i].addr, old_slots); as->bps[j].addr; j = (j + 1) & (old_slots - 1))
			;
		as->bps[j] = old[i];
		as->nr_bps++;
	}
	free(old);
	for (size_t i = 0; i < as->nr_mods; i++) {
		if (as->mods[i] == m) {
			as->mods[i] = as->mods[--as->nr_mods];
			break;
		}
	}
	module_put(m);
}

void aspace_restore(const struct aspace *as, int memfd)
{
	for (size_t i = 0; as && i < as->nr_slots; i++) {
		const struct bp *b = &as->bps[i];

		if (b->addr && b->nr_orig)
			(void)!pwrite(memfd, b->orig, b->nr_orig, (off_t)b->addr);
	}
}

bool aspace_in_xol(const struct aspace *as, uint64_t rip)
{
	for (size_t i = 0; as && i < as->nr_mods; i++) {
		const struct module *m = as->mods[i];

		if (m->xol_base && rip >= m->xol_base && rip < m->xol_base + m->xol_size)
			return true;
	}
	return false;
}

static void link_module(struct aspace *as, struct module *m)
{
	xgrow(&as->mods, &as->cap_mods, as->nr_mods + 1, sizeof(*as->mods));
	as->mods[as->nr_mods++] = m;
}

/* Make the program run mmap(@hint, @len, r-x, private anonymous fixed-noreplace) at a
 * clean stop (not inside a system call's return): write 'syscall; int3' at its rip,
 * run it, put everything back. Returns the mapping's address or 0. */
/* Let a thread that was sent to run injected code go until its int3 (a SIGTRAP stop,
 * no event). Signals that arrive meanwhile are held back, not delivered, so that the
 * injected code runs: sending them again at once would stop the thread on them again
 * before it executes anything (a program under a fast timer would never get there).
 * Their numbers go to *@held, for reraise() once its registers are back. Events are
 * consumed. 0, or -1 if the thread died. */
static int run_to_trap(pid_t tid, uint64_t *held)
{
	int st;

	while (waitpid(tid, &st, __WALL) == tid) {
		if (!WIFSTOPPED(st))
			return -1;
		if (WSTOPSIG(st) == SIGTRAP && !(st >> 16))
			return 0;
		if (!(st >> 16) && WSTOPSIG(st) != SIGSTOP && WSTOPSIG(st) < 64)
			*held |= 1ull << WSTOPSIG(st);
		ptrace(PTRACE_CONT, tid, 0, 0);
	}
	return -1;
}

/* Send again the signals run_to_trap() held back: pending, they stop the thread when it
 * is next resumed, and the event loop delivers them then. */
static void reraise(pid_t pid, pid_t tid, uint64_t held)
{
	for (int sig = 1; sig < 64; sig++)
		if (held & (1ull << sig))
			syscall(SYS_tgkill, pid, tid, sig);
}

uint64_t inject_mmap(struct proc *pr, pid_t tid, uint64_t hint, size_t len)
{
	static const uint8_t code[8] = { 0x0f, 0x05, 0xcc, 0x90, 0x90, 0x90, 0x90, 0x90 };
	struct user_regs_struct saved, r;
	uint8_t orig[8];
	uint64_t ret = 0, held = 0;

	if (ptrace(PTRACE_GETREGS, tid, 0, &saved) < 0)
		return 0;
	if (mem_read(pr, saved.rip, orig, sizeof(orig)) < 0 ||
	    mem_write(pr, saved.rip, code, sizeof(code)) < 0)
		return 0;
	r = saved;
	r.rax = SYS_mmap;
	r.orig_rax = (uint64_t)-1;          /* no system-call restart on the way */
	r.rdi = hint;
	r.rsi = len;
	r.rdx = PROT_READ | PROT_EXEC;
	r.r10 = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE;
	r.r8 = (uint64_t)-1;
	r.r9 = 0;
	if (ptrace(PTRACE_SETREGS, tid, 0, &r) == 0 && ptrace(PTRACE_CONT, tid, 0, 0) == 0) {
		if (run_to_trap(tid, &held) < 0)
			return 0;              /* died: nothing to restore */
		if (ptrace(PTRACE_GETREGS, tid, 0, &r) == 0 && r.rax < (uint64_t)-4095)
			ret = r.rax;
	}
	mem_write(pr, saved.rip, orig, sizeof(orig));
	ptrace(PTRACE_SETREGS, tid, 0, &saved);
	reraise(pr->pid, tid, held);
	return ret;
}

int inject_syscall(struct proc *pr, pid_t tid, long nr, const uint64_t args[6], uint64_t *ret)
{
	struct user_regs_struct saved, r;
	uint64_t gadget = 0, held = 0;
	int rc = -EIO;

	for (size_t i = 0; pr->as && i < pr->as->nr_mods && !gadget; i++)
		gadget = pr->as->mods[i]->gadget;
	if (!gadget)
		return -ENOENT;
	if (ptrace(PTRACE_GETREGS, tid, 0, &saved) < 0)
		return -errno;
	r = saved;
	r.rip = gadget;
	r.rax = (uint64_t)nr;
	r.orig_rax = (uint64_t)-1;          /* no system-call restart on the way */
	r.rdi = args[0];
	r.rsi = args[1];
	r.rdx = args[2];
	r.r10 = args[3];
	r.r8 = args[4];
	r.r9 = args[5];
	if (ptrace(PTRACE_SETREGS, tid, 0, &r) == 0 && ptrace(PTRACE_CONT, tid, 0, 0) == 0) {
		if (run_to_trap(tid, &held) < 0)
			return -ESRCH;
		if (ptrace(PTRACE_GETREGS, tid, 0, &r) == 0 && r.rip == gadget + 3) {
			*ret = r.rax;
			rc = r.rax > (uint64_t)-4096 ? (int)(int64_t)r.rax : 0;
		}
	}
	ptrace(PTRACE_SETREGS, tid, 0, &saved);
	reraise(pr->pid, tid, held);
	return rc;
}

/* Map an XOL area of @len bytes within reach of [@lo, @hi): below first, then above. */
static uint64_t map_xol_near(struct proc *pr, pid_t tid, uint64_t lo, uint64_t hi, size_t len)
{
	uint64_t got = 0;

	for (int k = 1; k <= 48 && !got; k++) {
		uint64_t hint = (lo & ~(uint64_t)0xffff) - len - (uint64_t)k * 0x10000;

		if (hint < 0x10000 || hint > lo)
			break;
		got = inject_mmap(pr, tid, hint, len);
	}
	for (int k = 1; k <= 48 && !got; k++) {
		/* above: far enough past a main executable's heap start would need the brk
		 * end; libraries have no heap after them */
		uint64_t hint = ((hi + 0xffff) & ~(uint64_t)0xffff) + (uint64_t)k * 0x100000;

		got = inject_mmap(pr, tid, hint, len);
	}
	return got;
}

/* ---- planting ------------------------------------------------------------------ */

struct plant_ctx {
	struct engine *e;
	struct proc *pr;
	struct aspace *as;
	struct module *mod;
	const uint8_t *code;     /* snapshot of the module's text, from code_lo */
	uint64_t code_lo, code_hi;
	uint8_t *xol;            /* local copy of the XOL page */
	size_t xol_used;
	bool want_exits;         /* plant ret / leaving-jump breakpoints in this body */
	uint32_t func;           /* the function being scanned or planted */
	/* detours (module_setup step 2) */
	bool detours;            /* allowed at all (not --no-detours, an XOL page) */
	uint64_t *targets;       /* sorted: every direct branch target, every entry */
	size_t nr_targets, cap_targets;
	uint8_t *fn_flags;       /* per function: FN_* */
	uint64_t *entry_end;     /* per function: end of its entry detour, 0 if none */
	struct fn_exit *exits;   /* every exit found, in body order */
	size_t nr_exits, cap_exits;
};

#define FN_NO_DETOUR       1    /* not fully decoded, or it has an indirect jmp (a
                                   switch table can land anywhere in it): no detour
                                   anywhere in it */
#define FN_NO_EXIT_DETOUR  2    /* no detour over a ret (see scan_bodies) */
#define FN_UNSEEN          4    /* not decoded to its end: its later jumps are unknown */

struct fn_exit {
	uint32_t func;
	struct insn_exit x;
};

static uint64_t xol_next(const struct plant_ctx *c)
{
	return c->mod->xol_base + c->xol_used;
}

/* Copy @n bytes into the next @room bytes of the XOL page; their address, or 0 if the
 * page is full (or there is none). */
static uint64_t xol_put(struct plant_ctx *c, const uint8_t *bytes, size_t n, size_t room)
{
	uint64_t at;

	if (!c->mod->xol_base || c->xol_used + room > c->mod->xol_size)
		return 0;
	at = xol_next(c);
	memcpy(c->xol + c->xol_used, bytes, n);
	c->xol_used += room;
	return at;
}

/* An XOL slot (INSN_XOL_SLOT bytes) holding @n bytes. */
static uint64_t xol_alloc(struct plant_ctx *c, const uint8_t *bytes, size_t n)
{
	return xol_put(c, bytes, n, INSN_XOL_SLOT);
}

static const uint8_t *code_at(const struct plant_ctx *c, uint64_t raddr, size_t *avail)
{
	if (raddr < c->code_lo || raddr >= c->code_hi)
		return NULL;
	*avail = c->code_hi - raddr;
	return c->code + (raddr - c->code_lo);
}

/* Fill @b from @plan (its XOL slot is the next free one). */
static int apply_plan(struct plant_ctx *c, struct bp *b, const struct insn_plan *plan)
{
	switch (plan->kind) {
	case PLAN_REWRITE:
		b->resume = 0;
		b->nr_orig = plan->patch_len;
		memcpy(b->patch, plan->patch, plan->patch_len);
		return 0;
	case PLAN_RET:
		if (plan->insn.ret_pop) {
			uint8_t r[3] = { 0xc2, (uint8_t)plan->insn.ret_pop,
					 (uint8_t)(plan->insn.ret_pop >> 8) };

			b->resume = xol_alloc(c, r, sizeof(r));
		} else {
			b->resume = c->mod->ret_slot;
		}
		break;
	case PLAN_JMP:
		b->resume = plan->insn.target;
		break;
	case PLAN_XOL:
		b->resume = xol_alloc(c, plan->xol, plan->xol_len);
		break;
	default:
		return -EINVAL;
	}
	b->nr_orig = 1;
	b->patch[0] = 0xcc;
	return b->resume ? 0 : -ENOSPC;
}

/* ---- detours ------------------------------------------------------------------ */

static int cmp_addr(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void add_target(uint64_t target, void *arg)
{
	struct plant_ctx *c = arg;

	if (c->nr_targets == c->cap_targets) {
		c->cap_targets = c->cap_targets ? c->cap_targets * 2 : 1024;
		c->targets = xrealloc(c->targets, c->cap_targets * sizeof(*c->targets));
	}
	c->targets[c->nr_targets++] = target;
}

static void store_exit(const struct insn_exit *x, void *arg)
{
	struct plant_ctx *c = arg;

	if (x->kind == EXIT_JMP_IND)
		c->fn_flags[c->func] |= FN_NO_DETOUR;
	if (c->nr_exits == c->cap_exits) {
		c->cap_exits = c->cap_exits ? c->cap_exits * 2 : 256;
		c->exits = xrealloc(c->exits, c->cap_exits * sizeof(*c->exits));
	}
	c->exits[c->nr_exits].func = c->func;
	c->exits[c->nr_exits++].x = *x;
}

/* Step 2: decode every body once, keeping its exits and every branch target. */
static void scan_bodies(struct plant_ctx *c)
{
	struct module *m = c->mod;
	const struct sym_module *s = m->sym;
	bool cold_ind = false;

	c->fn_flags = xcalloc(s->nr_funcs ? s->nr_funcs : 1, 1);
	c->entry_end = xcalloc(s->nr_funcs ? s->nr_funcs : 1, sizeof(*c->entry_end));
	for (size_t i = 0; i < s->nr_funcs; i++) {
		const struct sym_func *f = &s->funcs[i];
		uint64_t raddr = f->addr + m->bias, bad;
		const uint8_t *p;
		size_t avail;

		add_target(raddr, c);
		p = code_at(c, raddr, &avail);
		if (!p || avail < f->size) {
			c->fn_flags[i] |= FN_NO_DETOUR;
			continue;
		}
		c->func = (uint32_t)i;
		if (insn_scan_body_ex(c->e->dec, p, f->size, raddr, store_exit, add_target, c,
				      &bad) < 0) {
			c->fn_flags[i] |= FN_NO_DETOUR | FN_UNSEEN;
			msg_debug("%s: undecodable at %#" PRIx64 "; exits after it are not watched",
				  f->name, bad);
		}
		/* a cold part's switch table may land in its parent's body, and the jumps
		 * after an undecodable byte are unknown: no ret detours in the module then */
		if ((f->is_cold && (c->fn_flags[i] & FN_NO_DETOUR)) ||
		    (c->fn_flags[i] & FN_UNSEEN))
			cold_ind = true;
	}
	for (size_t i = 0; cold_ind && i < s->nr_funcs; i++)
		c->fn_flags[i] |= FN_NO_EXIT_DETOUR;
	qsort(c->targets, c->nr_targets, sizeof(*c->targets), cmp_addr);
}

/* Do bytes [@addr, @addr + @len) overlap bytes some site already replaces (nested
 * symbols: a function inside another one's body)? Sites replace at most 16 bytes. */
static bool bytes_claimed(const struct aspace *as, uint64_t addr, size_t len)
{
	for (uint64_t a = addr > 16 ? addr - 16 : 0; a < addr + len; a++) {
		const struct bp *b = bp_find(as, a);

		if (b && b->nr_orig && !b->in_block && a + b->nr_orig > addr)
			return true;
	}
	return false;
}

/* May a detour cover [@lo, @hi)? Nothing may land inside it past @lo: no branch target
 * and, when attaching, no thread stopped there. */
static bool region_free(const struct plant_ctx *c, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = c->nr_targets;

	while (a < b) {          /* first target > lo */
		size_t mid = (a + b) / 2;

		if (c->targets[mid] <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	if (a < c->nr_targets && c->targets[a] < hi)
		return false;
	a = 0;
	b = c->e->nr_live_ips;
	while (a < b) {          /* the live addresses are sorted too (engine.c: attach) */
		size_t mid = (a + b) / 2;

		if (c->e->live_ips[mid] <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	if (a < c->e->nr_live_ips && c->e->live_ips[a] < hi)
		return false;
	return !bytes_claimed(c->as, lo, hi - lo);
}

/* A breakpoint for the int3 at @addr inside a block: written with the block, turned
 * into a nop when calltrace lets go. */
static struct bp *add_block_trap(struct plant_ctx *c, uint64_t addr, enum bp_kind kind)
{
	struct bp *b = bp_add(c->as, addr);

	if (!b)
		return NULL;
	b->kind = (uint8_t)kind;
	b->mod = c->mod;
	b->func = c->func;
	b->in_block = true;
	b->is_ret = kind == BP_EXIT;     /* a block's exit trap is always before its ret */
	b->nr_orig = 1;
	b->orig[0] = 0x90;
	b->patch[0] = 0xcc;
	return b;
}

/* Plan a detour over [@site, @site + @len) and place its block (16-byte aligned): the
 * block's address, or 0 (nothing changed) when it cannot be done. */
static uint64_t place_detour(struct plant_ctx *c, uint64_t site, size_t len, bool entry,
			     bool exit_trap, struct insn_detour *d)
{
	const uint8_t *p;
	const char *why;
	size_t avail;

	p = code_at(c, site, &avail);
	if (!p || avail < len || !region_free(c, site, site + len))
		return 0;
	why = insn_plan_detour(c->e->dec, p, len, site, xol_next(c), entry, exit_trap, d);
	if (why) {
		msg_debug("%#" PRIx64 ": no detour (%s)", site, why);
		return 0;
	}
	return xol_put(c, d->code, d->code_len, (d->code_len + 15u) & ~15u);
}

/* The entry of function @i at @raddr through a detour, if it can have one. */
static bool detour_entry(struct plant_ctx *c, size_t i, uint64_t raddr, const uint8_t *p,
			 size_t avail)
{
	struct insn_detour d;
	uint64_t block;
	size_t len;
	bool ret;
	struct bp *b;

	if (!c->detours || (c->fn_flags[i] & FN_NO_DETOUR))
		return false;
	c->func = (uint32_t)i;
	len = insn_entry_region(c->e->dec, p, avail, raddr, true, &ret);
	if (len && ret && !region_free(c, raddr, raddr + len))
		len = insn_entry_region(c->e->dec, p, avail, raddr, false, &ret);
	/* count mode wants a function's exit only if it is a root */
	if (!len || !(block = place_detour(c, raddr, len, true,
					   ret && (!c->e->eo->count || c->mod->is_root[i]), &d)))
		return false;
	b = bp_add(c->as, raddr);
	if (!b)
		return false;
	b->kind = BP_ENTRY;
	b->mod = c->mod;
	b->func = (uint32_t)i;
	b->detour_site = true;
	b->span = (uint8_t)len;
	b->resume = block + 1;           /* past the int3: for tail calls and loops */
	b->nr_orig = INSN_DETOUR_JMP;
	memcpy(b->patch, d.jmp, INSN_DETOUR_JMP);
	add_block_trap(c, block, BP_ENTRY);
	if (d.exit_trap >= 0)
		add_block_trap(c, block + (uint64_t)d.exit_trap, BP_EXIT);
	c->entry_end[i] = raddr + len;
	return true;
}

/* The ret @x of the function being planted through a detour, if it can have one. */
static bool detour_ret(struct plant_ctx *c, const struct insn_exit *x)
{
	uint64_t end = x->addr + x->len, start = x->addr;
	struct insn_detour d;
	uint64_t block;
	struct bp *b;

	if (!c->detours || (c->fn_flags[c->func] & (FN_NO_DETOUR | FN_NO_EXIT_DETOUR)) ||
	    c->mod->sym->funcs[c->func].is_cold)
		return false;
	if (x->addr < c->entry_end[c->func])
		return true;       /* inside the entry's detour, which has its int3 */
	for (int k = 0; k < x->nr_prev && end - start < INSN_DETOUR_JMP; k++)
		start -= x->prev_len[k];
	if (end - start < INSN_DETOUR_JMP || end - start > INSN_DETOUR_SPAN ||
	    start < c->entry_end[c->func] ||
	    start < c->mod->sym->funcs[c->func].addr + c->mod->bias)
		return false;
	if (!(block = place_detour(c, start, end - start, false, true, &d)))
		return false;
	b = bp_add(c->as, start);
	if (!b)
		return false;
	b->kind = BP_DETOUR;
	b->detour_site = true;
	b->mod = c->mod;
	b->nr_orig = INSN_DETOUR_JMP;
	memcpy(b->patch, d.jmp, INSN_DETOUR_JMP);
	add_block_trap(c, block + (uint64_t)d.exit_trap, BP_EXIT);
	return true;
}

/* Is @raddr inside some traced function (of any module)? */
static const struct sym_func *any_func(const struct aspace *as, uint64_t raddr,
				       const struct module **mod)
{
	const struct module *m = module_of(as, raddr);

	*mod = m;
	return m ? func_containing(m, raddr) : NULL;
}

static void add_patch(struct aspace *as, struct module *m, uint64_t raddr, int64_t value, int n)
{
	struct bp *b = bp_add(as, raddr);

	if (!b)
		return;
	b->kind = BP_PATCH;
	b->mod = m;
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
	struct bp *e = bp_find(c->as, x->target);
	struct insn_plan plan;
	const uint8_t *code;
	uint64_t dest, next = x->addr + x->len;
	int64_t rel;
	size_t avail;
	struct bp *b;

	if (!e || e->kind != BP_ENTRY || !e->nr_orig)
		return;
	if (bytes_claimed(c->as, x->addr, x->len))
		goto untraced;        /* nested symbols: the jump is under another site */
	dest = e->resume ? e->resume : x->target + 1;
	rel = (int64_t)(dest - next);
	code = code_at(c, x->addr, &avail);
	if (!code || x->len < 2)
		goto untraced;
	/* jmp rel32 (e9) and jcc rel32 (0f 8x) end in their displacement, as do the
	 * rel8 forms (eb, 7x), whatever prefixes come first */
	if (x->len >= 5 && (code[x->len - 5] == 0xe9 ||
			    (x->len >= 6 && code[x->len - 6] == 0x0f &&
			     (code[x->len - 5] & 0xf0) == 0x80))) {
		if (rel == (int32_t)rel) {
			add_patch(c->as, c->mod, next - 4, rel, 4);
			return;
		}
	} else if (rel == (int8_t)rel) {
		add_patch(c->as, c->mod, next - 1, rel, 1);
		return;
	}
	if (insn_plan_site(c->e->dec, code, avail, x->addr, xol_next(c), &plan) < 0)
		goto untraced;
	if (plan.kind == PLAN_JMP) {
		plan.insn.target = dest;
	} else if (plan.kind == PLAN_XOL && plan.xol[0] == 0x0f) {
		/* jcc rel32 to the entry, then jmp back: aim the jcc at dest instead */
		int32_t r = (int32_t)(dest - (xol_next(c) + 6));

		memcpy(plan.xol + 2, &r, 4);
	} else {
		goto untraced;     /* loop/jrcxz out of reach */
	}
	b = bp_add(c->as, x->addr);
	if (!b)
		return;
	b->kind = BP_PATCH;       /* not an exit: the stop only resumes it */
	b->mod = c->mod;
	if (apply_plan(c, b, &plan) == 0)
		return;
	b->nr_orig = 0;
	e = bp_find(c->as, x->target);     /* the table did not move: no bp_reserve here */
untraced:
	/* every pass of the loop would count as a call: better not trace the function */
	msg_debug("%#" PRIx64 ": a loop back to the entry cannot be redirected; the function "
		  "is not traced", x->target);
	if (e && e->nr_orig) {
		e->nr_orig = 0;
		c->e->st->nr_refused++;
	}
}

/* The condition code of a jmp (CC_ALWAYS) or jcc ending at its displacement, or -1. */
static int jump_cc(const uint8_t *code, uint8_t len)
{
	if (len >= 5 && code[len - 5] == 0xe9)
		return CC_ALWAYS;
	if (len >= 6 && code[len - 6] == 0x0f && (code[len - 5] & 0xf0) == 0x80)
		return code[len - 5] & 0xf;
	if (len >= 2 && code[len - 2] == 0xeb)
		return CC_ALWAYS;
	if (len >= 2 && (code[len - 2] & 0xf0) == 0x70)
		return code[len - 2] & 0xf;
	return -1;
}

/* A direct jump to a traced function's entry: an int3 on the jump itself, so the
 * callee's entry is seen as a tail call (chained to the function that jumped) rather
 * than as a call at a stale frame's depth. The jump is emulated at the stop. */
static void plant_tail(struct plant_ctx *c, const struct insn_exit *x)
{
	const uint8_t *code;
	size_t avail;
	struct bp *b;
	int cc;

	if (bytes_claimed(c->as, x->addr, 1))
		return;
	code = code_at(c, x->addr, &avail);
	if (!code || avail < x->len || (cc = jump_cc(code, x->len)) < 0)
		return;
	b = bp_add(c->as, x->addr);
	if (!b)
		return;
	b->kind = BP_TAIL;
	b->mod = c->mod;
	b->cc = (uint8_t)cc;
	b->len = x->len;
	b->target = x->target;
	b->nr_orig = 1;
	b->patch[0] = 0xcc;
}

static void plant_exit(const struct insn_exit *x, void *arg)
{
	struct plant_ctx *c = arg;
	const struct module *tm;
	struct insn_plan plan;
	const uint8_t *code;
	size_t avail;
	struct bp *b;

	if (x->kind == EXIT_ENTRY_JUMP) {
		redirect_entry_jump(c, x);
		return;
	}
	if (!c->want_exits)
		return;
	switch (x->kind) {
	case EXIT_RET:
		if (detour_ret(c, x))
			return;
		break;
	case EXIT_JMP_OUT: {
		const struct sym_func *tf = any_func(c->as, x->target, &tm);

		if (!tf && x->target >= c->mod->lo && x->target < c->mod->hi)
			tf = func_containing(c->mod, x->target);
		if (tf && !tf->is_cold && x->target == tf->addr + (tm ? tm->bias : c->mod->bias)) {
			plant_tail(c, x);      /* a tail call into a traced function */
			return;
		}
		if (tf)
			return;     /* into another function's body (a .cold part): no call */
		break;
	}
	default:
		/* Indirect jumps are mostly switch tables: a stop on each would be a stop on
		 * the common path. A tail call through a pointer ends at the next stop. */
		return;
	}
	if (bytes_claimed(c->as, x->addr, 1))
		return;       /* a site (or a detour's jmp) already covers it */
	code = code_at(c, x->addr, &avail);
	if (!code || insn_plan_site(c->e->dec, code, avail, x->addr, xol_next(c), &plan) < 0)
		return;
	if (plan.kind == PLAN_REFUSE || plan.kind == PLAN_REWRITE)
		return;
	b = bp_add(c->as, x->addr);
	if (!b)
		return;
	b->kind = BP_EXIT;
	b->mod = c->mod;
	b->is_ret = x->kind == EXIT_RET;
	if (plan.kind == PLAN_JMP)
		b->target = plan.insn.target;   /* a jmp out: maybe a PLT stub (engine.c) */
	if (apply_plan(c, b, &plan) < 0)
		b->nr_orig = 0;     /* out of XOL room: never written */
}

static void plan_entries(struct plant_ctx *c)
{
	struct module *m = c->mod;
	const struct sym_module *s = m->sym;

	for (size_t i = 0; i < s->nr_funcs; i++) {
		const struct sym_func *f = &s->funcs[i];
		uint64_t raddr = f->addr + m->bias;
		struct insn_plan plan;
		const uint8_t *p;
		size_t avail = 0;
		struct bp *b;

		if (f->is_cold)
			continue;
		p = code_at(c, raddr, &avail);
		if (avail > f->size)
			avail = f->size;
		if (p && detour_entry(c, i, raddr, p, avail))
			continue;
		if (!p || insn_plan_site(c->e->dec, p, avail, raddr, xol_next(c), &plan) < 0 ||
		    plan.kind == PLAN_REFUSE) {
			msg_debug("%s: not traced (%s)", f->name,
				  !p ? "unmapped" : plan.kind == PLAN_REFUSE ? plan.why : "undecodable");
			c->e->st->nr_refused++;
			continue;
		}
		b = bp_add(c->as, raddr);
		if (!b)
			continue;
		b->kind = BP_ENTRY;
		b->mod = m;
		b->func = (uint32_t)i;
		if (apply_plan(c, b, &plan) < 0) {
			b->nr_orig = 0;      /* out of XOL room: never written */
			c->e->st->nr_refused++;
			continue;
		}
		/* a first instruction that leaves (ret; jmp to untraced code) ends the call
		 * at the same stop */
		if (plan.kind == PLAN_RET) {
			b->exits = true;
		} else if (plan.kind == PLAN_JMP) {
			const struct module *tm;
			const struct sym_func *tf = any_func(c->as, plan.insn.target, &tm);

			if (!tf)
				b->exits = true;      /* jumps to untraced code: ends here */
			else if (!tf->is_cold && plan.insn.target == tf->addr + tm->bias) {
				b->tail = true;       /* a thunk: tail call into a traced entry */
				b->target = plan.insn.target;
			}
		}
	}
}

static void scan_exits(struct plant_ctx *c)
{
	struct module *m = c->mod;

	for (size_t i = 0; i < c->nr_exits; i++) {
		c->func = c->exits[i].func;
		/* count mode watches only the roots' exits: it needs to know when a root
		 * is active, not when other calls end */
		c->want_exits = !c->e->eo->count || m->is_root[c->func];
		plant_exit(&c->exits[i].x, c);
	}
}

/* Write the XOL page, then every unwritten breakpoint of @m. */
static int write_module(struct plant_ctx *c)
{
	struct aspace *as = c->as;
	int rc = 0;

	if (c->mod->xol_base && mem_write(c->pr, c->mod->xol_base, c->xol, c->xol_used) < 0)
		rc = -EIO;
	for (size_t i = 0; i < as->nr_slots && rc == 0; i++) {
		struct bp *b = &as->bps[i];
		const uint8_t *p;
		size_t avail;

		if (!b->addr || b->mod != c->mod || !b->nr_orig)
			continue;
		if (b->in_block) {
			c->e->st->nr_bps++;          /* its int3 went with the XOL page */
			c->e->st->nr_detoured++;
			continue;
		}
		p = code_at(c, b->addr, &avail);
		if (!p || avail < b->nr_orig) {
			b->nr_orig = 0;
			continue;
		}
		memcpy(b->orig, p, b->nr_orig);     /* from the snapshot: never our own bytes */
		if (mem_write(c->pr, b->addr, b->patch, b->nr_orig) < 0)
			rc = -EIO;
		else if (!b->detour_site)
			c->e->st->nr_bps++;       /* a detour's jmp is counted at its int3 */
	}
	return rc;
}

static const ct_func_id *known_ids(struct engine *e, const struct sym_module *s)
{
	struct known_object *k;

	for (size_t i = 0; i < e->nr_known; i++) {
		k = &e->known[i];
		if (k->nr_funcs == s->nr_funcs && !strcmp(k->path, s->path))
			return k->ids;
	}
	return NULL;
}

static void module_names(struct engine *e, struct module *m)
{
	const struct sym_module *s = m->sym;
	const ct_func_id *seen = known_ids(e, s);

	m->ids = xcalloc(s->nr_funcs ? s->nr_funcs : 1, sizeof(*m->ids));
	m->is_root = xcalloc(s->nr_funcs ? s->nr_funcs : 1, sizeof(*m->is_root));
	if (!seen) {
		struct known_object *k;

		xgrow(&e->known, &e->cap_known, e->nr_known + 1, sizeof(*e->known));
		k = &e->known[e->nr_known++];
		k->path = xstrdup(s->path);
		k->nr_funcs = s->nr_funcs;
		k->ids = NULL;
	}
	for (size_t i = 0; i < s->nr_funcs; i++) {
		const struct sym_func *f = &s->funcs[i];

		m->ids[i] = seen ? seen[i] :
			    profile_add_func(e->p, f->name, s->base, f->file, f->line, f->arity,
					     f->addr + m->bias);
		m->is_root[i] = engine_matches_root(e->eo, f->name, f->raw);
		if (f->is_cold && !m->is_root[i]) {
			/* main.cold belongs to main */
			char *base = xstrdup(f->raw);

			*strstr(base, ".cold") = 0;
			m->is_root[i] = engine_matches_root(e->eo, base, base);
			free(base);
		}
	}
	if (!seen) {
		struct known_object *k = &e->known[e->nr_known - 1];

		k->ids = xmalloc((s->nr_funcs ? s->nr_funcs : 1) * sizeof(*k->ids));
		memcpy(k->ids, m->ids, s->nr_funcs * sizeof(*k->ids));
	}
}

struct module *module_setup(struct engine *e, struct proc *pr, pid_t tid,
			    struct sym_module *sym, uint64_t bias, bool is_main)
{
	struct module *m = xcalloc(1, sizeof(*m));
	struct plant_ctx c = { .e = e, .pr = pr, .as = pr->as, .mod = m };
	uint8_t *code = NULL;
	size_t need;
	int rc = 0;

	m->sym = sym;
	m->bias = bias;
	m->is_main = is_main;
	m->refs = 1;
	module_names(e, m);
	if (!sym->nr_funcs)
		goto link;
	m->lo = sym->funcs[0].addr + bias;
	m->hi = m->lo;
	for (size_t i = 0; i < sym->nr_funcs; i++) {
		uint64_t end = sym->funcs[i].addr + bias + sym->funcs[i].size;

		if (end > m->hi)
			m->hi = end;
	}
	code = xcalloc(1, m->hi - m->lo + 16);
	if (mem_read(pr, m->lo, code, m->hi - m->lo) < 0) {
		msg_warn("pid %d: cannot read the code of %s; it is not traced", pr->pid, sym->path);
		goto fail;
	}
	c.code = code;
	c.code_lo = m->lo;
	c.code_hi = m->hi;

	/* a library known by its .dynsym alone: its static functions and .cold parts are
	 * not decoded, so their jumps are not known; no detours there */
	c.detours = !e->eo->no_detours && (sym->has_symtab || sym->nr_from_cfi > 0);
	scan_bodies(&c);
	/* slots for entries and exits, and a block for every entry and exit */
	need = (sym->nr_funcs * 2 + 16) * INSN_XOL_SLOT;
	if (c.detours)
		need += (sym->nr_funcs + c.nr_exits) * INSN_DETOUR_BLOCK;
	m->xol_size = (need + 4095) & ~(size_t)4095;
	m->xol_base = map_xol_near(pr, tid, m->lo, m->hi, m->xol_size);
	if (!m->xol_base) {
		msg_warn("pid %d: cannot map an out-of-line page near %s; only functions that "
			 "need none are traced", pr->pid, sym->base);
		m->xol_size = 0;
		c.detours = false;
	}
	c.xol = xcalloc(1, m->xol_size ? m->xol_size : 1);
	if (m->xol_base) {
		static const uint8_t ret = 0xc3;

		static const uint8_t gadget[3] = { 0x0f, 0x05, 0xcc };

		m->ret_slot = xol_alloc(&c, &ret, 1);
		m->gadget = xol_alloc(&c, gadget, sizeof(gadget));
	}
	/* link first so that exits can tell tail calls into this module's entries */
	link_module(pr->as, m);
	/* an entry: its site and up to two int3s; an exit: a site and an int3 */
	bp_reserve(pr->as, sym->nr_funcs * 3 + c.nr_exits * 2 + 16);
	plan_entries(&c);
	scan_exits(&c);
	rc = write_module(&c);
	free(c.xol);
	free(code);
	free(c.targets);
	free(c.fn_flags);
	free(c.entry_end);
	free(c.exits);
	if (rc < 0)
		die(EXIT_TRACER, "pid %d: cannot write breakpoints into %s: %s", pr->pid,
		    sym->base, strerror(-rc));
	return m;
fail:
	free(code);
link:
	m->lo = m->hi = 0;
	link_module(pr->as, m);
	return m;
}

int aspace_add_rtld(struct engine *e, struct proc *pr, uint64_t addr)
{
	struct insn_plan plan;
	uint8_t code[16];
	struct bp *b;
	int rc;

	if ((rc = mem_read(pr, addr, code, sizeof(code))) < 0)
		return rc;
	/* _dl_debug_state is 'ret' or 'endbr64; ret': rewritten, or emulated on a hit */
	if (insn_plan_site(e->dec, code, sizeof(code), addr, 0, &plan) < 0 ||
	    (plan.kind != PLAN_REWRITE && plan.kind != PLAN_RET))
		return -EINVAL;
	bp_reserve(pr->as, 1);
	b = bp_add(pr->as, addr);
	if (!b)
		return 0;
	b->kind = BP_RTLD;
	if (plan.kind == PLAN_REWRITE) {
		b->nr_orig = plan.patch_len;
		memcpy(b->patch, plan.patch, plan.patch_len);
	} else {
		b->nr_orig = 1;
		b->patch[0] = 0xcc;
		b->exits = true;
	}
	memcpy(b->orig, code, b->nr_orig);
	return mem_write(pr, addr, b->patch, b->nr_orig);
}
