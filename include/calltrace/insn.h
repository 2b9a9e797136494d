/* SPDX-License-Identifier: MIT */
/* insn.h - x86-64 instruction analysis: the only module that uses capstone.
 * It classifies instructions, scans function bodies for their exits, and plans how a
 * breakpoint site's displaced instruction is run: rewritten in place, emulated by the
 * tracer, or executed out of line (XOL) from a slot within +-2 GiB with a jmp back.
 * Pure functions on byte strings: no ptrace, so everything is unit-tested on canned
 * bytes (tests/unit/check_insn.c). */
#ifndef CALLTRACE_INSN_H
#define CALLTRACE_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct insn_decoder;     /* a capstone handle with detail on */

/* 0 or -ENOMEM/-EINVAL; on success the caller owns *out (insn_decoder_free). */
int insn_decoder_new(struct insn_decoder **out);
void insn_decoder_free(struct insn_decoder *d);   /* NULL is fine */

enum insn_kind {
	INSN_OTHER,      /* anything else: runs unchanged */
	INSN_NOP,        /* nop / multi-byte nop / endbr64 */
	INSN_RET,        /* ret, ret imm16, rep ret, bnd ret */
	INSN_JMP,        /* jmp rel8/rel32 (direct, target known) */
	INSN_JCC,        /* jcc rel8/rel32 (direct, conditional) */
	INSN_CALL,       /* call rel32 */
	INSN_JMP_IND,    /* jmp through a register or memory */
	INSN_CALL_IND,   /* call through a register or memory */
	INSN_LOOP,       /* loop/loope/loopne/jrcxz/jecxz: rel8 only, cannot be widened */
	INSN_TRAP,       /* int3, int n, ud2, hlt, privileged, xbegin: never displaced */
};

struct insn_info {
	uint64_t addr;       /* runtime address the bytes were decoded at */
	uint8_t len;
	enum insn_kind kind;
	uint64_t target;     /* INSN_JMP/JCC/CALL/LOOP: absolute target */
	uint16_t ret_pop;    /* INSN_RET: imm16 of 'ret imm16', else 0 */
	bool is_riprel;      /* has a %rip-relative memory operand */
	int disp_offset;     /* is_riprel: offset of the 4-byte displacement */
};

/* Decode the one instruction at the start of @code (@len bytes available), located at
 * runtime address @addr. 0, or -EINVAL if the bytes are not a valid instruction. */
int insn_decode(struct insn_decoder *d, const uint8_t *code, size_t len, uint64_t addr,
		struct insn_info *out);

/* How a breakpoint site's displaced first instruction is handled. */
enum insn_plan_kind {
	PLAN_REWRITE,    /* write patch[] at the site (int3 + shorter nop); after the trap
	                    the thread simply continues at site+1: no register change */
	PLAN_RET,        /* the instruction is a ret: the tracer emulates it (or sends the
	                    thread to a shared 'ret' in the XOL page) */
	PLAN_JMP,        /* direct jmp: set rip = target */
	PLAN_XOL,        /* set rip = slot, where xol[] runs the instruction and jumps back */
	PLAN_REFUSE,     /* cannot be displaced safely: do not plant a breakpoint here */
};

#define INSN_XOL_SLOT 32          /* bytes per XOL slot; every plan fits */

struct insn_plan {
	enum insn_plan_kind kind;
	struct insn_info insn;        /* the displaced instruction */
	uint8_t patch[16];            /* PLAN_REWRITE: bytes for the site, patch[0] = 0xcc */
	uint8_t patch_len;
	uint8_t xol[INSN_XOL_SLOT];   /* PLAN_XOL: code for the slot */
	uint8_t xol_len;
	const char *why;              /* PLAN_REFUSE: static reason, for messages */
};

/* Plan the breakpoint at runtime address @addr, whose bytes are @code (@len available,
 * at least 15 unless the function is shorter), with its XOL code placed at @slot.
 * XOL relocation: rip-relative displacements are re-based (always 4 bytes at
 * disp_offset, whatever capstone 4.0.2's disp_size says), jcc/jmp rel8 are widened to
 * rel32, 'call rel32' becomes a sequence that pushes the original return address
 * (push %rax; movabs $ret,%rax; xchg %rax,(%rsp); jmp target), and a 'jmp rel32' back
 * to addr+len follows. Refused when a displacement no longer fits in 32 bits.
 * Returns 0 (see out->kind) or -EINVAL if the bytes do not decode. */
int insn_plan_site(struct insn_decoder *d, const uint8_t *code, size_t len, uint64_t addr,
		   uint64_t slot, struct insn_plan *out);

/* An exit of a function body found by insn_scan_body(). */
enum insn_exit_kind {
	EXIT_RET,        /* a ret */
	EXIT_JMP_OUT,    /* direct jmp/jcc whose target is outside the body */
	EXIT_JMP_IND,    /* indirect jmp: may leave the body (tail call through a pointer) */
	EXIT_ENTRY_JUMP, /* direct jmp/jcc back to the body's first instruction */
};

#define INSN_PREV_MAX 4

struct insn_exit {
	uint64_t addr;
	uint64_t target;       /* EXIT_JMP_OUT / EXIT_ENTRY_JUMP */
	enum insn_exit_kind kind;
	enum insn_kind insn_kind;
	uint8_t len;
	/* EXIT_RET: the movable instructions right before it (see insn_movable()), in
	 * straight-line order inside the body; prev_len[0] is the nearest */
	uint8_t nr_prev;
	uint8_t prev_len[INSN_PREV_MAX];
};

/* Linear-sweep the body [@start, @start+@len) whose bytes are @code and report each
 * exit to @fn. Returns 0, or -EINVAL if some bytes did not decode (then *bad_addr is
 * the first such address and exits after it were not reported). */
typedef void (*insn_exit_fn)(const struct insn_exit *e, void *arg);
int insn_scan_body(struct insn_decoder *d, const uint8_t *code, size_t len, uint64_t start,
		   insn_exit_fn fn, void *arg, uint64_t *bad_addr);

/* The same scan, also reporting to @target_fn (if not NULL) the target of every direct
 * jmp, jcc, loop and call in the body, wherever it leads. */
typedef void (*insn_target_fn)(uint64_t target, void *arg);
int insn_scan_body_ex(struct insn_decoder *d, const uint8_t *code, size_t len, uint64_t start,
		      insn_exit_fn fn, insn_target_fn target_fn, void *arg, uint64_t *bad_addr);

/* ---- detours ----------------------------------------------------------------------
 * A detour replaces the first 5 bytes of a run of whole instructions (the region) with
 * a 'jmp rel32' to a block in the XOL page. The block holds an int3 where the tracer
 * wants a stop, then copies of the region's instructions, then a 'jmp rel32' back to
 * the end of the region, or, if the region ends in a ret, an int3 and that ret. The
 * thread reaches the block and, after a stop, goes on from where the int3 left it:
 * unlike an int3 at the site, no register is written at the stop. Only movable
 * instructions are copied, and the caller makes sure nothing jumps into the region
 * past its first byte. */

#define INSN_DETOUR_JMP    5      /* the jmp rel32 at the site */
#define INSN_DETOUR_SPAN   24     /* most bytes a region covers */
#define INSN_DETOUR_BLOCK  48     /* most bytes a block takes */

/* Can the instruction at @code run unchanged from another address once a %rip-relative
 * displacement is re-based? (Not a branch, call, ret, syscall or trapping instruction;
 * no eip-relative operand.) -EINVAL if it does not decode, else 0 or 1. */
int insn_movable(struct insn_decoder *d, const uint8_t *code, size_t len, uint64_t addr);

/* The region of an entry detour at @addr: the fewest whole movable instructions
 * covering 5 bytes; with @extend, through a ret that follows so closely (movable
 * instructions between) that a region of its own for that ret would overlap this one,
 * or through a ret that ends the first 5 bytes or more (lea; ret).
 * Returns its length (*ends_in_ret set when a ret is its last instruction), or 0 when
 * the first 5 bytes are not all movable instructions. */
size_t insn_entry_region(struct insn_decoder *d, const uint8_t *code, size_t len,
			 uint64_t addr, bool extend, bool *ends_in_ret);

struct insn_detour {
	uint64_t site;              /* the region: [site, site + site_len) */
	uint8_t site_len;
	uint8_t jmp[INSN_DETOUR_JMP];   /* written at the site */
	uint8_t code[INSN_DETOUR_BLOCK];
	uint8_t code_len;
	int8_t entry_trap;          /* offset of the block's entry int3, -1 if none */
	int8_t exit_trap;           /* offset of the int3 before its ret, -1 if none */
};

/* Plan the detour of the region [@site, @site + @len) whose bytes are @code, its block
 * at @slot: every instruction movable except a last one that may be a ret. @entry_trap
 * starts the block with an int3; @exit_trap puts one before a final ret. Each copy is
 * re-decoded and checked like an XOL copy. NULL, or why it cannot be done. */
const char *insn_plan_detour(struct insn_decoder *d, const uint8_t *code, size_t len,
			     uint64_t site, uint64_t slot, bool entry_trap, bool exit_trap,
			     struct insn_detour *out);

/* ---- short paths -------------------------------------------------------------------
 * Time compensation (src/engine/shadow.c) needs round trips in which the program is
 * known to have run next to nothing, to measure what a stop costs in this very run.
 * A sampled round trip starts at @start (a traced function's entry, or the return
 * address of a ret that stopped) and ends at the thread's next stop, which is either
 * an entry reached by a call (the call instruction ends at @call_end) or a ret
 * (@call_end == 0). */

/* What the walk asks of its caller, and what the answer means. */
enum insn_stop_query {
	INSN_Q_AT,       /* the thread reaches the instruction at @addr: is it a stop site? */
	INSN_Q_CALL,     /* a call or jmp to @addr: does the target stop (a traced entry,
	                    directly or through its PLT stub)? */
	INSN_Q_RET,      /* the ret at @addr: is it a traced exit (a stop)? */
};
enum insn_stop_answer {
	INSN_STOPS_NOT = 0,
	INSN_STOPS_ENTRY,    /* the thread would stop there, not at an exit */
	INSN_STOPS_EXIT,     /* the thread would stop there at an exit (a ret's site) */
};
typedef enum insn_stop_answer (*insn_stops_fn)(uint64_t addr, enum insn_stop_query q,
					       void *arg);

/* Prove that the thread ran at most @max_insns instructions from @start to its next
 * stop. Every path from @start is followed (both ways at a jcc, into direct jmps), and
 * a path ends:
 *   - well, at the next stop: the direct call ending at @call_end to a target that
 *     stops (when @call_end != 0; a call through a pointer, or to an untraced function
 *     that could work and then jump to the traced entry, fails the proof), or, when
 *     @call_end == 0, a ret that is a traced exit or an instruction that is an exit's
 *     stop site;
 *   - pruned (it cannot be the path taken: the thread would have stopped elsewhere
 *     first), at any other stop site, at a call or jmp (or a jcc's taken arm) whose
 *     target stops, or at a traced ret when a call is expected.
 * A path may go on after a call to an untraced function (whose work is unknown), but it
 * must then end pruned: if it reaches the next stop, the proof fails. Anything else on
 * a path fails it too: an indirect jmp, an untraced ret, a trap or syscall, a loop, bytes
 * that do not decode or lie outside [@code_addr, @code_addr + @len), more than
 * @max_insns on a path or 4 * @max_insns decoded in all. At least one path must end
 * well. @code holds the original bytes (no breakpoints) of [@code_addr,
 * @code_addr + @len), which contains @start (paths may jump back before @start, as a
 * loop's call does). @start itself is not asked about (the thread has just left its
 * stop there). @stops may be NULL: nothing stops, but every ret is a traced exit.
 * Returns 1 if proven, else 0. */
int insn_short_path(struct insn_decoder *d, const uint8_t *code, size_t len, uint64_t code_addr,
		    uint64_t start, uint64_t call_end, unsigned max_insns, insn_stops_fn stops,
		    void *arg);

#endif
