/* SPDX-License-Identifier: MIT */
/* shadow.c - per-thread shadow stacks: what is recorded at each entry and exit stop.
 *
 * A frame is (slot, entry time, child time, call-tree node, stack region), where slot
 * is %rsp at entry: the address of the return address. calltrace never writes the
 * program's stack, so it learns that calls ended from the stack pointer alone. At
 * every stop of a thread the frames the stack has unwound past are closed first:
 *   - at an entry with %rsp = R: frames with slot <= R are gone (longjmp, exceptions,
 *     a return we did not see: a new call at the same depth as a live frame means
 *     that frame ended), except at a tail call: a jump to a traced entry has its own
 *     breakpoint (BP_TAIL), which handles the callee's entry at the same stop and
 *     keeps the frame that jumped: the new frame is chained above it at the same slot,
 *     both end together, and the callee is a child of the function that jumped, as in
 *     the source;
 *   - at a ret or a leaving jump with %rsp = S: frames with slot <= S end now.
 * Stack pointers are compared only within one stack region (a mapping of the
 * process): a signal handler running on an alternate stack (sigaltstack) must not
 * close the frames of the stack it interrupted, whatever the two addresses are.
 * Frames left on an alternate stack when the thread is back on its own stack were
 * abandoned (siglongjmp out of the handler) and end. Frames still open when a thread
 * exits end at its exit.
 *
 * Recording: a frame is recorded (has a node) when its parent frame is, or its
 * function matches -f, or the thread records everything (created while recording).
 * Count mode keeps frames for root functions only, to know when recording is on, and
 * counts caller -> callee pairs from the return address. */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calltrace/sym.h"
#include "calltrace/util.h"
#include "internal.h"

struct ct_thread *task_thread(struct engine *e, struct task *t)
{
	if (!t->ct) {
		const struct aspace *as = t->proc->as;

		t->ct = profile_add_thread(e->p, t->proc->pid, t->tid);
		if (t->parent_tid) {
			t->ct->parent_pid = t->parent_pid;
			t->ct->parent_tid = t->parent_tid;
		}
		for (size_t i = 0; as && i < as->nr_mods; i++) {
			if (as->mods[i]->is_main) {
				t->ct->comm = xstrdup(as->mods[i]->sym->base);
				break;
			}
		}
	}
	return t->ct;
}

/* ---- stack regions ----------------------------------------------------------- */

static bool in_region(const struct task *t, int r, uint64_t addr)
{
	return r >= 0 && addr >= t->regions[r].lo && addr < t->regions[r].hi;
}

/* The mapping of the process containing @addr, from /proc/PID/maps (slow path:
 * only when @addr is outside every region the thread has used so far). */
static int region_lookup(struct task *t, uint64_t addr)
{
	char path[64], line[512];
	uint64_t lo = 0, hi = 0;
	bool found = false;
	FILE *f;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/maps", t->proc->pid, t->tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		uint64_t a, b;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &a, &b) == 2 && addr >= a && addr < b) {
			lo = a;
			hi = b;
			found = true;
			/* the main stack grows down: cover its future growth at once */
			if (strstr(line, "[stack]"))
				lo = hi > (64ull << 20) ? hi - (64ull << 20) : 0;
			break;
		}
	}
	fclose(f);
	if (!found)
		return -1;
	for (r = 0; r < t->nr_regions; r++) {
		if (t->regions[r].hi == hi) {          /* the same mapping, grown */
			if (lo < t->regions[r].lo)
				t->regions[r].lo = lo;
			return r;
		}
	}
	r = t->nr_regions < NR_REGIONS ? t->nr_regions++ : NR_REGIONS - 1;
	t->regions[r].lo = lo;
	t->regions[r].hi = hi;
	return r;
}

static int region_of(struct task *t, uint64_t addr)
{
	if (t->depth && in_region(t, t->stack[t->depth - 1].region, addr))
		return t->stack[t->depth - 1].region;
	if (in_region(t, t->home, addr))
		return t->home;
	for (int r = 0; r < t->nr_regions; r++)
		if (in_region(t, r, addr))
			return r;
	return region_lookup(t, addr);
}

/* ---- frames ------------------------------------------------------------------ */

/* The thread's time line, less what calltrace's stops cost it: at each stop, the
 * clock (wall or the thread's CPU time) minus, for every stop so far, the kernel's
 * calibrated part (trap, wake-ups: ck, or cu of CPU time) and calltrace's handling
 * time measured at that stop (wall only; it is not the thread's CPU time). A call's
 * ACC is the difference of this time line between its exit and entry stops: the
 * entry stop's handling and the exit stop's trap lie inside the call, as do the k
 * stops between, so it subtracts (k + 1) kernel parts and the handling of the entry
 * and of the k stops. Reports' first and last timestamps are on this time line too. */
static uint64_t virtual_now(const struct engine *e, const struct task *t)
{
	uint64_t cost, v;

	if (!e->compensate)
		return t->now;
	cost = e->clock_cpu ? t->kcost : t->kcost + t->hsum;
	v = t->now > cost ? t->now - cost : 0;
	/* Never backwards: a stop that cost less than the median would otherwise make
	 * the time line step back, and a callee come out longer than its caller. The
	 * cost is cumulative, so what was not subtracted here is at the next stops. */
	return v > t->vnow ? v : t->vnow;
}

/* The kernel's part of this stop, for the time line: the calibrated median, but
 * never more than the 10th percentile of the round trips seen in this run (from a
 * PTRACE_CONT to the same thread's next stop: the kernel's part plus whatever the
 * program did in between). Most programs have many round trips in which they do next
 * to nothing (a leaf's entry to its exit, a loop between two calls), so that
 * percentile tracks the real cost of a stop in this run; it protects against a
 * calibration made while the machine was busier than during the run. */
static uint64_t kernel_part(struct engine *e, struct task *t, uint64_t wall, uint64_t cpu)
{
	if (t->stops > 1 && t->h_end && wall > t->h_end) {
		ct_hist_add(&e->rt_wall, wall - t->h_end);
		if (e->clock_cpu && cpu > t->last_cpu)
			ct_hist_add(&e->rt_cpu, cpu - t->last_cpu);
		if ((e->rt_wall.count & 511) == 0) {
			uint64_t w = ct_hist_quantile(&e->rt_wall, 0.10);
			uint64_t c = ct_hist_quantile(&e->rt_cpu, 0.10);

			e->ck_ns = w && w < e->ck_cal ? w : e->ck_cal;
			e->cu_ns = c && c < e->cu_cal ? c : e->cu_cal;
		}
	}
	return e->clock_cpu ? e->cu_ns : e->ck_ns;
}

/* The raw time line: the clock less calltrace's handling of the thread's stops so far
 * (wall clock; the CPU clock never counts it). Only the kernel's part of the stops is
 * left in it, one per round trip, and that is taken out of the recorded times when the
 * run is over (profile_compensate), with the per-stop cost measured over the whole run
 * (shadow_stop_cost). */
static uint64_t raw_now(const struct engine *e, const struct task *t)
{
	if (!e->compensate || e->clock_cpu)
		return t->now;
	return t->now > t->hsum ? t->now - t->hsum : 0;
}

/* A call ends: its raw ACC and OWN and the number of stop costs in its ACC (the round
 * trips from its entry stop to this one) go to its node. Its latency, for the
 * histogram, is compensated at once with the best estimate so far. */
static void frame_close(struct engine *e, struct task *t)
{
	struct frame *f = &t->stack[--t->depth];
	uint64_t now = t->raw;
	uint64_t dur = now > f->entry_ts ? now - f->entry_ts : 0;
	uint64_t own = dur > f->child_ns ? dur - f->child_ns : 0;
	uint64_t nr = e->compensate ? t->stops - f->stops_entry : 0;
	uint64_t cost = nr * e->stop_est;

	if (f->node)
		ctree_leave_at(e->p, t->ct, f->node, dur, own, nr, dur > cost ? dur - cost : 0,
			       now, t->stops);
	if (t->depth)
		t->stack[t->depth - 1].child_ns += dur;
}

/* The thread's CPU time. With the CPU clock, read at every stop: a task-clock perf
 * counter opened on it (a read of a stopped thread's counter is one cheap system
 * call, 0.4 us). For 'suspend' with the wall clock, read every 8 stops or so:
 * /proc/PID/task/TID/schedstat (0.6-1.5 us), because a perf counter on the thread
 * costs at every one of its context switches, two per stop, whether it is read or not
 * (a full-mode call cost 6 % more with it). Also schedstat where perf events are not
 * allowed. Only differences are used, so the counter may start at zero. */
uint64_t shadow_read_cpu(const struct engine *e, struct task *t)
{
	char buf[96];
	uint64_t v;
	ssize_t n;

	if (t->sfd < 0 && !e->clock_cpu)
		t->sfd_is_proc = true;
	if (t->sfd < 0 && !t->sfd_is_proc) {
		struct perf_event_attr a;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_TASK_CLOCK;
		t->sfd = (int)syscall(SYS_perf_event_open, &a, t->tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (t->sfd < 0)
			t->sfd_is_proc = true;
	}
	if (t->sfd_is_proc) {
		if (t->sfd < 0) {
			snprintf(buf, sizeof(buf), "/proc/%d/task/%d/schedstat", t->proc->pid, t->tid);
			t->sfd = open(buf, O_RDONLY | O_CLOEXEC);
			if (t->sfd < 0)
				return t->last_cpu;
		}
		n = pread(t->sfd, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			return t->last_cpu;
		buf[n] = 0;
		return strtoull(buf, NULL, 10);    /* first field: time on CPU, ns */
	}
	if (read(t->sfd, &v, sizeof(v)) != sizeof(v))
		return t->last_cpu;
	return v;
}

/* Off-CPU time ('suspend', wall clock): the thread's CPU clock is read at a stop only
 * when the wall time since its previous stop leaves room for a wait above the
 * threshold, or after 8 stops without a read (so that the model of the stops' own cost
 * never spans many stops). Between reads, the stops' own off-CPU cost is summed
 * (span_traced). A call-heavy thread thus pays the read at a fraction of its stops. */
#define SUSPEND_MIN_NS(e) (5000 + 2 * (e)->stop_est)
#define SUSPEND_READ_EVERY 8

static void note_suspend(struct engine *e, struct task *t, uint64_t wall, uint64_t cpu)
{
	uint64_t dw = wall - t->last_wall, du = cpu - t->last_cpu;
	uint64_t off = dw > du + t->span_traced ? dw - du - t->span_traced : 0;

	/* never more than the time line moved: suspend is inside its caller's ACC */
	if (off > t->vnow - t->read_vnow)
		off = t->vnow - t->read_vnow;
	/* below this it is the noise of the stops themselves, not a wait */
	if (off <= SUSPEND_MIN_NS(e))
		return;
	/* out of this round trip's share of the stop cost, recorded or not (shadow_trip) */
	t->stop_off = off;
	if (t->depth && t->stack[t->depth - 1].node) {
		struct frame *top = &t->stack[t->depth - 1];
		struct ct_node *n = ctree_enter_at(e->p, t->ct, top->node, e->suspend_id,
						   t->raw, t->stops);

		ctree_leave_at(e->p, t->ct, n, off, 0, 0, off, t->raw, t->stops);
		top->child_ns += off;
	}
}

void shadow_stop(struct engine *e, struct task *t, uint64_t wall)
{
	bool read = e->clock_cpu;
	uint64_t cpu = t->last_cpu;

	if (e->suspend) {
		/* the previous stop's own share of this interval: its handling, and the part
		 * of the kernel's work the thread is not charged for */
		uint64_t traced = t->last_h + (e->stop_est > e->cu_ns ? e->stop_est - e->cu_ns : 0);

		t->span_traced += traced;
		read = !t->last_wall || ++t->since_read >= SUSPEND_READ_EVERY ||
		       wall - t->prev_wall > SUSPEND_MIN_NS(e) + traced;
	}
	if (read && e->need_cpu)
		cpu = shadow_read_cpu(e, t);
	/* the round trip that ends here, from calltrace's PTRACE_CONT (wall) or from the
	 * previous stop's clock read (CPU), for shadow_trip() */
	t->stop_off = 0;
	if (e->clock_cpu)
		t->rt_ns = t->stops && t->last_cpu && cpu > t->last_cpu ? cpu - t->last_cpu : 0;
	else
		t->rt_ns = t->h_end && wall > t->h_end ? wall - t->h_end : 0;
	t->stops++;
	t->now = e->clock_cpu ? cpu : wall;
	if (e->compensate)
		t->kcost += kernel_part(e, t, wall, cpu);
	t->vnow = virtual_now(e, t);
	t->raw = raw_now(e, t);
	t->prev_wall = wall;
	if (!read)
		return;
	if (e->suspend && t->last_wall && cpu >= t->last_cpu)
		note_suspend(e, t, wall, cpu);
	t->last_wall = wall;
	t->last_cpu = cpu;
	t->read_vnow = t->vnow;
	t->span_traced = 0;
	t->since_read = 0;
}

/* ---- the cost of a stop, measured in the run ------------------------------------
 * What a stop costs the program's time line moves with the machine's state: on the
 * VMs calltrace is developed on, by a microsecond (a fifth) between runs and between
 * phases of one run, while the calibration at start-up sees one moment. So the run
 * measures it itself. Round trips (from calltrace's PTRACE_CONT to the thread's next
 * stop) are summed by their two sites; a sample of each pair is checked against the
 * code (engine_short_trip: at most 16 instructions, no loop, no untraced call). The
 * mean round trip of the pairs whose samples all ran next to nothing is the cost of a
 * stop as it was in this run, with its slow phases and its tail: the mean, not a
 * percentile, because the times are sums. */
#define TRIP_SLOTS 1024         /* site pairs followed; a pair past 3/4 full is not */
#define TRIP_SAMPLES 8          /* samples checked per pair */
#define TRIP_MIN_SAMPLES 4      /* ... of which a pair must have had at least this many */
#define TRIP_MIN_PAIR 64        /* round trips a pair needs to count */
#define TRIP_MIN 1000           /* round trips needed in all, else the calibration */

/* Still to be sampled: fewer than TRIP_SAMPLES samples, all of them short so far. */
static bool trip_open(const struct trip_key *k)
{
	return k->tried < TRIP_SAMPLES && k->proven == k->tried;
}

static void open_remove(struct engine *e, const struct trip_key *k)
{
	for (size_t i = 0; i < e->nr_open; i++) {
		if (e->open[i] == k) {
			e->open[i] = e->open[--e->nr_open];
			return;
		}
	}
}

static bool open_starts_at(const struct engine *e, uint64_t from, uint64_t ctx)
{
	for (size_t i = 0; i < e->nr_open; i++)
		if (e->open[i]->from == from && e->open[i]->ctx == ctx)
			return true;
	return false;
}

/* The slot of a pair in @tab: its own, or the free one where it goes. The table is never
 * more than 3/4 full, so the probe ends. */
static struct trip_key *trip_slot(struct trip_key *tab, const struct trip_key *key)
{
	size_t i = (size_t)(key_hash3(key->from, key->to ^ (key->ctx << 7), key->gen) >> 40) &
		   (TRIP_SLOTS - 1);

	for (;; i = (i + 1) & (TRIP_SLOTS - 1)) {
		struct trip_key *k = &tab[i];

		if (!k->from || (k->from == key->from && k->to == key->to && k->ctx == key->ctx &&
				 k->gen == key->gen))
			return k;
	}
}

/* The table is full: keep the pairs of 64 round trips or more (the only ones that can
 * count), so that pairs of a later phase of the run get their place. If that frees
 * little, the table stays as it is and new pairs are not followed. */
static void trips_purge(struct engine *e)
{
	struct trip_key *old = e->trips;
	size_t kept = 0;

	for (size_t i = 0; i < TRIP_SLOTS; i++)
		kept += old[i].from && old[i].n >= TRIP_MIN_PAIR;
	if (kept > TRIP_SLOTS / 2) {
		e->trips_frozen = true;
		return;
	}
	e->trips = xcalloc(TRIP_SLOTS, sizeof(*e->trips));
	e->nr_trips = 0;
	e->nr_open = 0;
	for (size_t i = 0; i < TRIP_SLOTS; i++) {
		struct trip_key *k;

		if (!old[i].from || old[i].n < TRIP_MIN_PAIR)
			continue;
		k = trip_slot(e->trips, &old[i]);
		*k = old[i];
		e->nr_trips++;
		if (trip_open(k) && e->nr_open < NR_OPEN)
			e->open[e->nr_open++] = k;
	}
	free(old);
}

static struct trip_key *trip_get(struct engine *e, uint64_t from, uint64_t to, uint64_t ctx,
				 uint64_t gen)
{
	const struct trip_key key = { .from = from, .to = to, .ctx = ctx, .gen = gen };
	struct trip_key *k;

	if (!e->trips)
		e->trips = xcalloc(TRIP_SLOTS, sizeof(*e->trips));
	k = trip_slot(e->trips, &key);
	if (k->from)
		return k;
	if (e->nr_trips >= TRIP_SLOTS * 3 / 4) {
		if (e->trips_frozen)
			return NULL;
		trips_purge(e);
		if (e->nr_trips >= TRIP_SLOTS * 3 / 4)
			return NULL;
		k = trip_slot(e->trips, &key);
	}
	e->nr_trips++;
	*k = key;
	return k;
}

/* A proven pair's round trips, for the estimate. */
static bool trip_counts(const struct trip_key *k)
{
	return k->from && k->tried >= TRIP_MIN_SAMPLES && k->proven == k->tried &&
	       k->n >= TRIP_MIN_PAIR;
}

void shadow_trips_debug(const struct engine *e)
{
	msg_debug("%zu site pairs, %zu open, %" PRIu64 " round trips", e->nr_trips, e->nr_open,
		  e->trips_seen);
	for (size_t i = 0; e->trips && i < TRIP_SLOTS; i++) {
		const struct trip_key *k = &e->trips[i];

		if (k->from && k->n >= TRIP_MIN_PAIR)
			msg_debug("round trips %#" PRIx64 " -> %#" PRIx64 " (frame %#" PRIx64
				  "): %" PRIu64 ", mean %" PRIu64 " ns, %u of %u samples short",
				  k->from, k->to, k->ctx, k->n, k->n ? k->sum_ns / k->n : 0, k->proven,
				  k->tried);
	}
}

/* Add the round trips of the pairs that count (their number and total) to *@n, *@sum. */
static void trips_sum(const struct engine *e, uint64_t *n, uint64_t *sum)
{
	for (size_t i = 0; e->trips && i < TRIP_SLOTS; i++) {
		if (trip_counts(&e->trips[i])) {
			*n += e->trips[i].n;
			*sum += e->trips[i].sum_ns;
		}
	}
}

void shadow_trips_flush(struct engine *e)
{
	trips_sum(e, &e->trips_kept_n, &e->trips_kept_ns);
	if (e->trips)
		memset(e->trips, 0, TRIP_SLOTS * sizeof(*e->trips));
	if (e->proofs)
		memset(e->proofs, 0, NR_PROOFS * sizeof(*e->proofs));
	e->nr_trips = 0;
	e->nr_open = 0;
	e->trips_frozen = false;
	for (struct task *t = e->tasks; t; t = t->next)
		t->trip_from = 0;
}

uint64_t shadow_stop_cost(struct engine *e, uint64_t *nr_trips)
{
	uint64_t n = e->trips_kept_n, sum = e->trips_kept_ns;

	trips_sum(e, &n, &sum);
	*nr_trips = n >= TRIP_MIN ? n : 0;
	if (n >= TRIP_MIN)
		return sum / n;
	return e->clock_cpu ? e->cu_ns : e->ck_ns;
}

void shadow_trip(struct engine *e, struct task *t, const struct bp *b, uint64_t rip,
		 uint64_t rsp)
{
	if (!e->compensate)
		return;
	if (t->trip_from && t->trip_no + 1 == t->stops && t->rt_ns) {
		/* A round trip counts for what stays of it in the times: less what this stop
		 * found the thread spent off the CPU and recorded as 'suspend'. Everything
		 * else stays, the rare long ones too (the VM's steal time, an interrupt):
		 * they happen in every kind of round trip alike, so the mean takes them out
		 * where they fell, on average. */
		struct trip_key *k = trip_get(e, t->trip_from, rip, t->trip_ctx,
					      t->proc->as ? t->proc->as->gen : 0);

		if (k) {
			k->sum_ns += t->rt_ns > t->stop_off ? t->rt_ns - t->stop_off : 0;
			/* frequent enough to matter, and still to be sampled: sample at its
			 * first site from now on (the rest of the time, now and then) */
			if (++k->n == TRIP_MIN_PAIR && trip_open(k) && e->nr_open < NR_OPEN)
				e->open[e->nr_open++] = k;
		}
		/* A settled pair is sampled again whenever a sample falls on it: the same
		 * two sites may be joined by other code (another call site, an argument
		 * that takes another branch), and one failed sample drops the pair. */
		if (k && t->probe_start && k->proven == k->tried && k->tried < UINT16_MAX) {
			bool was_open = trip_open(k);
			uint64_t call_end = 0;

			k->tried++;
			/* an entry reached by a call: the call ends at its return address
			 * (0 would mean a ret: no proof then) */
			if ((b->kind != BP_ENTRY ||
			     (mem_read(t->proc, rsp, &call_end, 8) == 0 && call_end)) &&
			    engine_short_trip(e, t->proc, t->probe_start, call_end))
				k->proven++;
			if (was_open && !trip_open(k))
				open_remove(e, k);
		}
		if ((++e->trips_seen & 511) == 0) {
			uint64_t nr;

			e->stop_est = shadow_stop_cost(e, &nr);
		}
	}
	t->probe_start = 0;
	t->trip_from = rip;
	t->trip_no = t->stops;
	/* from a ret, the thread goes on in the frame it returned to: its code, and so
	 * the pair's, depends on which function that is */
	t->trip_ctx = b->kind != BP_ENTRY && t->depth ? t->stack[t->depth - 1].site : 0;
	/* Sample the round trip that starts here (where the thread goes on): when an open
	 * pair starts here, and every 1016 to 1031 stops (settled pairs are checked again,
	 * rare ones get their samples). The gap varies, so that a loop of an even number
	 * of stops does not have the same stop sampled every time. */
	if (t->probe_in && !open_starts_at(e, rip, t->trip_ctx)) {
		t->probe_in--;
		return;
	}
	if (!t->probe_in)
		t->probe_in = (unsigned)((e->trips_seen * 0x9e3779b97f4a7c15ull) >> 60) + 1016;
	if (b->kind == BP_ENTRY)
		t->probe_start = b->mod->sym->funcs[b->func].addr + b->mod->bias;
	else if (mem_read(t->proc, rsp, &t->probe_start, 8) < 0)
		t->probe_start = 0;
}

/* Close the frames the stack has unwound past: slot < rsp, or slot <= rsp when
 * @inclusive (at a return). */
static void unwind_to(struct engine *e, struct task *t, uint64_t rsp, bool inclusive)
{
	while (t->depth) {
		const struct frame *f = &t->stack[t->depth - 1];

		if (!in_region(t, f->region, rsp)) {
			/* on another stack than the top frame: a handler on an alternate
			 * stack runs above it (keep it), unless we are back on the thread's
			 * own stack and the top frame is on another one (abandoned) */
			if (f->region == t->home || region_of(t, rsp) != t->home)
				break;
			frame_close(e, t);
			continue;
		}
		if (f->slot > rsp || (f->slot == rsp && !inclusive))
			break;
		frame_close(e, t);
	}
}

static struct frame *frame_push(struct task *t, uint64_t rsp)
{
	struct frame *f;
	int r = region_of(t, rsp);

	if (t->home < 0)
		t->home = r;
	xgrow(&t->stack, &t->cap, t->depth + 1, sizeof(*t->stack));
	f = &t->stack[t->depth++];
	f->slot = rsp;
	f->site = 0;
	f->stops_entry = t->stops;
	f->entry_ts = t->raw;
	f->child_ns = 0;
	f->node = NULL;
	f->region = (int8_t)r;
	return f;
}

void shadow_close_all(struct engine *e, struct task *t, uint64_t ts)
{
	/* not always at a stop of the thread (its exit status, the end of a detach): bring
	 * its time line to @ts, counting no stop */
	if (t->depth) {
		t->now = e->clock_cpu ? (e->need_cpu ? shadow_read_cpu(e, t) : t->now) : ts;
		t->vnow = virtual_now(e, t);
		t->raw = raw_now(e, t);
	}
	while (t->depth)
		frame_close(e, t);
}

/* Count mode: one stop per call. The caller is the traced function containing the
 * return address; a call from untraced code (a library calling back) has the caller
 * 'undefined'. Only root functions get frames, to know when recording is on. */
static void entry_count(struct engine *e, struct task *t, const struct bp *b, uint64_t rsp,
			uint64_t ts)
{
	const struct module *m = b->mod;
	ct_func_id caller = CT_FUNC_UNDEFINED;

	if (m->is_root[b->func])
		frame_push(t, rsp);
	if (!t->no_record && (t->depth || t->record_all)) {
		const struct module *cm;
		const struct sym_func *f = NULL;
		uint64_t ret;

		if (e->eo->count_callers && mem_read(t->proc, rsp, &ret, sizeof(ret)) == 0 &&
		    (cm = module_of(t->proc->as, ret)) != NULL)
			f = func_containing(cm, ret);
		if (f)
			caller = cm->ids[f - cm->sym->funcs];
		ctree_count(task_thread(e, t), caller, m->ids[b->func], ts);
		e->st->recorded++;
	}
}

void shadow_entry(struct engine *e, struct task *t, const struct bp *b, uint64_t rsp,
		  uint64_t arg0, uint64_t ts, bool is_tail)
{
	const struct module *m = b->mod;
	struct ct_node *parent = NULL;
	struct frame *f;

	unwind_to(e, t, rsp, !is_tail);
	e->st->calls++;
	if (e->eo->count) {
		entry_count(e, t, b, rsp, ts);
	} else {
		if (!t->no_record) {
			if (t->depth && t->stack[t->depth - 1].node)
				parent = t->stack[t->depth - 1].node;
			else if (m->is_root[b->func] || t->record_all)
				parent = &task_thread(e, t)->root;
		}
		f = frame_push(t, rsp);
		f->site = b->addr;
		if (parent) {
			/* a thread's first recorded call is its start routine (fprof's
			 * spawned_as), called with the pthread_create argument */
			if (t->parent_tid && !t->ct->root.first_child &&
			    t->ct->spawned_as == CT_FUNC_UNDEFINED && t->record_all) {
				t->ct->spawned_as = m->ids[b->func];
				t->ct->spawned_arg = arg0;
			}
			f->node = ctree_enter_at(e->p, t->ct, parent, m->ids[b->func], t->raw,
						 t->stops);
			e->st->recorded++;
		}
	}
	if (b->exits)
		unwind_to(e, t, rsp, true);
}

void shadow_exit(struct engine *e, struct task *t, uint64_t rsp, uint64_t ts)
{
	unwind_to(e, t, rsp, true);
}

void shadow_copy(struct engine *e, struct task *c, const struct task *parent)
{
	struct ct_node *node = NULL;

	c->depth = 0;
	for (size_t i = 0; i < parent->depth; i++) {
		const struct frame *pf = &parent->stack[i];
		struct frame *f;

		xgrow(&c->stack, &c->cap, c->depth + 1, sizeof(*c->stack));
		f = &c->stack[c->depth++];
		*f = *pf;
		f->node = NULL;
		if (pf->node) {
			/* the same path in the child's own tree, with no call of its own:
			 * the calls happened before the fork, in the parent */
			if (!node) {
				node = &task_thread(e, c)->root;
				c->ct->inherited = true;
			}
			node = ctree_path(e->p, c->ct, node, pf->node->func);
			f->node = node;
		}
	}
	/* the child goes on along the parent's time line */
	c->stops = parent->stops;
	c->kcost = parent->kcost;
	c->hsum = parent->hsum;
	c->now = parent->now;
	c->vnow = parent->vnow;
	c->raw = parent->raw;
	c->trip_from = 0;
	memcpy(c->regions, parent->regions, sizeof(c->regions));
	c->nr_regions = parent->nr_regions;
	c->home = parent->home;
}
