/* SPDX-License-Identifier: MIT */
/* check_insn.c - unit tests for src/insn: classification, breakpoint-site plans, body
 * scans, detours (movable instructions, entry regions, blocks) and short-path proofs, all
 * on canned x86-64 byte strings. Expected XOL bytes are worked out by hand in
 * the comments. Unless a test says otherwise the site is at ADDR = 0x401000 and its XOL
 * slot at SLOT = 0x400000, so a re-based displacement grows by ADDR - SLOT = 0x1000 and
 * the 'jmp rel32' back after a copied L-byte instruction is always
 * (ADDR + L) - (SLOT + L + 5) = 0x1000 - 5 = 0xffb: e9 fb 0f 00 00. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <sys/mman.h>

#include "calltrace/insn.h"

#define ADDR 0x401000ULL
#define SLOT 0x400000ULL
#define B(...) ((const uint8_t[]){ __VA_ARGS__ }), sizeof((const uint8_t[]){ __VA_ARGS__ })

static struct insn_decoder *dec;

static void setup(void)
{
	ck_assert_int_eq(insn_decoder_new(&dec), 0);
	ck_assert_ptr_nonnull(dec);
}

static void teardown(void)
{
	insn_decoder_free(dec);
	dec = NULL;
}

static struct insn_plan plan_at(const uint8_t *code, size_t len, uint64_t addr, uint64_t slot)
{
	struct insn_plan p;

	ck_assert_int_eq(insn_plan_site(dec, code, len, addr, slot, &p), 0);
	return p;
}

static struct insn_plan plan(const uint8_t *code, size_t len)
{
	return plan_at(code, len, ADDR, SLOT);
}

static void assert_xol(const struct insn_plan *p, const uint8_t *want, size_t n)
{
	ck_assert_msg(p->kind == PLAN_XOL, "kind %d, why %s", p->kind, p->why ? p->why : "-");
	ck_assert_uint_eq(p->xol_len, n);
	ck_assert_mem_eq(p->xol, want, n);
}

static void assert_refused(const struct insn_plan *p)
{
	ck_assert_int_eq(p->kind, PLAN_REFUSE);
	ck_assert_ptr_nonnull(p->why);
	ck_assert_uint_eq(p->xol_len, 0);
}

/* ---- decoder lifecycle ---- */

START_TEST(decoder_new_free)
{
	struct insn_decoder *d = NULL;

	ck_assert_int_eq(insn_decoder_new(&d), 0);
	ck_assert_ptr_nonnull(d);
	insn_decoder_free(d);
	insn_decoder_free(NULL);
}
END_TEST

START_TEST(decode_rejects_bad_bytes)
{
	struct insn_info info;

	ck_assert_int_eq(insn_decode(dec, B(0x06), ADDR, &info), -EINVAL);   /* push %es */
	ck_assert_int_eq(insn_decode(dec, B(0xe8, 0x00, 0x00), ADDR, &info), -EINVAL);
	ck_assert_int_eq(insn_decode(dec, NULL, 0, ADDR, &info), -EINVAL);
}
END_TEST

/* ---- classification ---- */

struct kind_case {
	const char *name;
	uint8_t bytes[16];
	uint8_t len;
	enum insn_kind kind;
	uint64_t target;       /* at ADDR */
	uint16_t ret_pop;
	bool is_riprel;
	int disp_offset;
};

static const struct kind_case kind_cases[] = {
	{ "nop", { 0x90 }, 1, INSN_NOP, 0, 0, false, 0 },
	{ "xchg %ax,%ax", { 0x66, 0x90 }, 2, INSN_NOP, 0, 0, false, 0 },
	{ "nopl (%rax)", { 0x0f, 0x1f, 0x00 }, 3, INSN_NOP, 0, 0, false, 0 },
	{ "nopw cs:0(%rax,%rax)", { 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 10,
	  INSN_NOP, 0, 0, false, 0 },
	{ "endbr64", { 0xf3, 0x0f, 0x1e, 0xfa }, 4, INSN_NOP, 0, 0, false, 0 },
	{ "ret", { 0xc3 }, 1, INSN_RET, 0, 0, false, 0 },
	{ "ret $8", { 0xc2, 0x08, 0x00 }, 3, INSN_RET, 0, 8, false, 0 },
	{ "rep ret", { 0xf3, 0xc3 }, 2, INSN_RET, 0, 0, false, 0 },
	{ "bnd ret", { 0xf2, 0xc3 }, 2, INSN_RET, 0, 0, false, 0 },
	/* 0x401000 + 2 + 0x10 */
	{ "jmp rel8", { 0xeb, 0x10 }, 2, INSN_JMP, 0x401012, 0, false, 0 },
	/* 0x401000 + 5 + 0x100 */
	{ "jmp rel32", { 0xe9, 0x00, 0x01, 0x00, 0x00 }, 5, INSN_JMP, 0x401105, 0, false, 0 },
	{ "bnd jmp rel32", { 0xf2, 0xe9, 0x00, 0x01, 0x00, 0x00 }, 6, INSN_JMP, 0x401106, 0,
	  false, 0 },
	{ "notrack jmp rel32", { 0x3e, 0xe9, 0x00, 0x01, 0x00, 0x00 }, 6, INSN_JMP, 0x401106, 0,
	  false, 0 },
	/* 0x401002 - 0x10 */
	{ "jne rel8 backwards", { 0x75, 0xf0 }, 2, INSN_JCC, 0x400ff2, 0, false, 0 },
	{ "je rel32", { 0x0f, 0x84, 0x00, 0x01, 0x00, 0x00 }, 6, INSN_JCC, 0x401106, 0, false, 0 },
	{ "call rel32", { 0xe8, 0x00, 0x01, 0x00, 0x00 }, 5, INSN_CALL, 0x401105, 0, false, 0 },
	{ "jmp *%rax", { 0xff, 0xe0 }, 2, INSN_JMP_IND, 0, 0, false, 0 },
	{ "notrack jmp *%rax", { 0x3e, 0xff, 0xe0 }, 3, INSN_JMP_IND, 0, 0, false, 0 },
	{ "jmp *0x10(%rip)", { 0xff, 0x25, 0x10, 0, 0, 0 }, 6, INSN_JMP_IND, 0, 0, true, 2 },
	{ "jmp *(%rax)", { 0xff, 0x20 }, 2, INSN_JMP_IND, 0, 0, false, 0 },
	{ "ljmp *(%rax)", { 0xff, 0x28 }, 2, INSN_JMP_IND, 0, 0, false, 0 },
	{ "call *%rax", { 0xff, 0xd0 }, 2, INSN_CALL_IND, 0, 0, false, 0 },
	{ "call *0x10(%rip)", { 0xff, 0x15, 0x10, 0, 0, 0 }, 6, INSN_CALL_IND, 0, 0, true, 2 },
	{ "notrack call *0x10(%rip)", { 0x3e, 0xff, 0x15, 0x10, 0, 0, 0 }, 7, INSN_CALL_IND, 0,
	  0, true, 3 },
	{ "lcall *(%rax)", { 0xff, 0x18 }, 2, INSN_CALL_IND, 0, 0, false, 0 },
	{ "loop", { 0xe2, 0x10 }, 2, INSN_LOOP, 0x401012, 0, false, 0 },
	{ "loope", { 0xe1, 0x10 }, 2, INSN_LOOP, 0x401012, 0, false, 0 },
	{ "loopne", { 0xe0, 0x10 }, 2, INSN_LOOP, 0x401012, 0, false, 0 },
	{ "jrcxz", { 0xe3, 0x10 }, 2, INSN_LOOP, 0x401012, 0, false, 0 },
	{ "jecxz", { 0x67, 0xe3, 0x10 }, 3, INSN_LOOP, 0x401013, 0, false, 0 },
	{ "int3", { 0xcc }, 1, INSN_TRAP, 0, 0, false, 0 },
	{ "int $0x80", { 0xcd, 0x80 }, 2, INSN_TRAP, 0, 0, false, 0 },
	{ "int1", { 0xf1 }, 1, INSN_TRAP, 0, 0, false, 0 },
	{ "ud2", { 0x0f, 0x0b }, 2, INSN_TRAP, 0, 0, false, 0 },
	{ "hlt", { 0xf4 }, 1, INSN_TRAP, 0, 0, false, 0 },
	{ "cli", { 0xfa }, 1, INSN_TRAP, 0, 0, false, 0 },
	{ "mov %cr0,%rax", { 0x0f, 0x20, 0xc0 }, 3, INSN_TRAP, 0, 0, false, 0 },
	{ "xbegin", { 0xc7, 0xf8, 0x00, 0x01, 0x00, 0x00 }, 6, INSN_TRAP, 0, 0, false, 0 },
	{ "xabort", { 0xc6, 0xf8, 0x05 }, 3, INSN_TRAP, 0, 0, false, 0 },
	{ "iretq", { 0x48, 0xcf }, 2, INSN_TRAP, 0, 0, false, 0 },
	{ "lret", { 0xcb }, 1, INSN_TRAP, 0, 0, false, 0 },
	/* capstone says rel16, Intel CPUs say rel32: never touched */
	{ "data16 jmp", { 0x66, 0xe9, 0x00, 0x01, 0x00, 0x00 }, 4, INSN_TRAP, 0, 0, false, 0 },
	{ "syscall", { 0x0f, 0x05 }, 2, INSN_OTHER, 0, 0, false, 0 },
	{ "push %rbp", { 0x55 }, 1, INSN_OTHER, 0, 0, false, 0 },
	{ "mov %rsp,%rbp", { 0x48, 0x89, 0xe5 }, 3, INSN_OTHER, 0, 0, false, 0 },
	{ "mov 0x2edb(%rip),%rax", { 0x48, 0x8b, 0x05, 0xdb, 0x2e, 0, 0 }, 7, INSN_OTHER, 0, 0,
	  true, 3 },
	{ "cmpl $5,0x10(%rip)", { 0x83, 0x3d, 0x10, 0, 0, 0, 0x05 }, 7, INSN_OTHER, 0, 0, true,
	  2 },
	{ "movdqa 0x10(%rip),%xmm0", { 0x66, 0x0f, 0x6f, 0x05, 0x10, 0, 0, 0 }, 8, INSN_OTHER, 0,
	  0, true, 4 },
	{ "vmovdqa 0x10(%rip),%ymm0", { 0xc5, 0xfd, 0x6f, 0x05, 0x10, 0, 0, 0 }, 8, INSN_OTHER,
	  0, 0, true, 4 },
	{ "mov (%rax),%rax", { 0x48, 0x8b, 0x00 }, 3, INSN_OTHER, 0, 0, false, 0 },
};

START_TEST(decode_kinds)
{
	const struct kind_case *c = &kind_cases[_i];
	struct insn_info info;

	memset(&info, 0xa5, sizeof(info));
	ck_assert_msg(insn_decode(dec, c->bytes, sizeof(c->bytes), ADDR, &info) == 0,
		      "%s: does not decode", c->name);
	ck_assert_msg(info.addr == ADDR, "%s: addr", c->name);
	ck_assert_msg(info.len == c->len, "%s: len %u, want %u", c->name, info.len, c->len);
	ck_assert_msg(info.kind == c->kind, "%s: kind %d, want %d", c->name, info.kind, c->kind);
	ck_assert_msg(info.target == c->target, "%s: target %#llx, want %#llx", c->name,
		      (unsigned long long)info.target, (unsigned long long)c->target);
	ck_assert_msg(info.ret_pop == c->ret_pop, "%s: ret_pop %u", c->name, info.ret_pop);
	ck_assert_msg(info.is_riprel == c->is_riprel, "%s: is_riprel", c->name);
	ck_assert_msg(info.disp_offset == c->disp_offset, "%s: disp_offset %d, want %d",
		      c->name, info.disp_offset, c->disp_offset);
}
END_TEST

/* ---- prologue instructions ---- */

START_TEST(plan_endbr64)
{
	struct insn_plan p = plan(B(0xf3, 0x0f, 0x1e, 0xfa, 0x55));

	ck_assert_int_eq(p.kind, PLAN_REWRITE);
	ck_assert_int_eq(p.insn.kind, INSN_NOP);
	ck_assert_uint_eq(p.patch_len, 4);
	ck_assert_mem_eq(p.patch, ((const uint8_t[]){ 0xcc, 0x0f, 0x1f, 0x00 }), 4);
}
END_TEST

START_TEST(plan_nops)
{
	struct insn_plan p;

	/* nop: int3 alone, the thread continues at addr + 1 = the next instruction */
	p = plan(B(0x90, 0x55));
	ck_assert_int_eq(p.kind, PLAN_REWRITE);
	ck_assert_uint_eq(p.patch_len, 1);
	ck_assert_uint_eq(p.patch[0], 0xcc);

	p = plan(B(0x66, 0x90));
	ck_assert_int_eq(p.kind, PLAN_REWRITE);
	ck_assert_uint_eq(p.patch_len, 2);
	ck_assert_mem_eq(p.patch, ((const uint8_t[]){ 0xcc, 0x90 }), 2);

	p = plan(B(0x0f, 0x1f, 0x40, 0x00));                       /* nopl 0(%rax) */
	ck_assert_int_eq(p.kind, PLAN_REWRITE);
	ck_assert_uint_eq(p.patch_len, 4);
	ck_assert_mem_eq(p.patch, ((const uint8_t[]){ 0xcc, 0x0f, 0x1f, 0x00 }), 4);

	p = plan(B(0x0f, 0x1f, 0x44, 0x00, 0x00));                 /* nopl 0(%rax,%rax) */
	ck_assert_uint_eq(p.patch_len, 5);
	ck_assert_mem_eq(p.patch, ((const uint8_t[]){ 0xcc, 0x0f, 0x1f, 0x40, 0x00 }), 5);

	p = plan(B(0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00));
	ck_assert_uint_eq(p.patch_len, 6);
	ck_assert_mem_eq(p.patch, ((const uint8_t[]){ 0xcc, 0x0f, 0x1f, 0x44, 0x00, 0x00 }), 6);

	p = plan(B(0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00));
	ck_assert_uint_eq(p.patch_len, 7);
	ck_assert_mem_eq(p.patch, ((const uint8_t[]){ 0xcc, 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 }),
			 7);

	p = plan(B(0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00));
	ck_assert_uint_eq(p.patch_len, 10);
	ck_assert_mem_eq(p.patch, ((const uint8_t[]){ 0xcc, 0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00,
						      0x00, 0x00, 0x00 }), 10);
}
END_TEST

/* For every nop length 2..15 the patch is int3 + exactly one nop covering the rest. */
START_TEST(plan_nop_patch_decodes)
{
	uint8_t code[16];
	struct insn_plan p;
	struct insn_info info;
	int n = _i;

	/* 66 90, or n-3 redundant 0x66 prefixes + nopl (%rax): a valid n-byte nop */
	memset(code, 0x66, sizeof(code));
	if (n == 2)
		code[1] = 0x90;
	else
		memcpy(code + n - 3, ((const uint8_t[]){ 0x0f, 0x1f, 0x00 }), 3);
	p = plan(code, n);
	ck_assert_int_eq(p.insn.kind, INSN_NOP);
	ck_assert_int_eq(p.insn.len, n);
	ck_assert_int_eq(p.kind, PLAN_REWRITE);
	ck_assert_uint_eq(p.patch_len, n);
	ck_assert_uint_eq(p.patch[0], 0xcc);
	ck_assert_int_eq(insn_decode(dec, p.patch + 1, n - 1, ADDR + 1, &info), 0);
	ck_assert_int_eq(info.kind, INSN_NOP);
	ck_assert_uint_eq(info.len, n - 1);
}
END_TEST

START_TEST(plan_push_rbp)
{
	struct insn_plan p = plan(B(0x55, 0x48, 0x89, 0xe5));

	ck_assert_int_eq(p.insn.kind, INSN_OTHER);
	/* 55; jmp from SLOT+6 to ADDR+1: 0x401001 - 0x400006 = 0xffb */
	assert_xol(&p, B(0x55, 0xe9, 0xfb, 0x0f, 0x00, 0x00));
}
END_TEST

START_TEST(plan_push_r12)
{
	struct insn_plan p = plan(B(0x41, 0x54, 0x55));

	/* 0x401002 - 0x400007 = 0xffb */
	assert_xol(&p, B(0x41, 0x54, 0xe9, 0xfb, 0x0f, 0x00, 0x00));
}
END_TEST

START_TEST(plan_mov_rsp_rbp)
{
	struct insn_plan p = plan(B(0x48, 0x89, 0xe5, 0x90));

	assert_xol(&p, B(0x48, 0x89, 0xe5, 0xe9, 0xfb, 0x0f, 0x00, 0x00));
}
END_TEST

START_TEST(plan_sub_rsp)
{
	struct insn_plan p = plan(B(0x48, 0x83, 0xec, 0x18));

	assert_xol(&p, B(0x48, 0x83, 0xec, 0x18, 0xe9, 0xfb, 0x0f, 0x00, 0x00));
}
END_TEST

START_TEST(plan_xor_eax)
{
	struct insn_plan p = plan(B(0x31, 0xc0, 0xc3));

	assert_xol(&p, B(0x31, 0xc0, 0xe9, 0xfb, 0x0f, 0x00, 0x00));
}
END_TEST

START_TEST(plan_slot_above_site)
{
	/* slot 0x402000 above the site: jmp back = 0x401001 - 0x402006 = -0x1005 */
	struct insn_plan p = plan_at(B(0x55), ADDR, 0x402000);

	assert_xol(&p, B(0x55, 0xe9, 0xfb, 0xef, 0xff, 0xff));
}
END_TEST

START_TEST(plan_syscall)
{
	struct insn_plan p = plan(B(0x0f, 0x05));

	assert_xol(&p, B(0x0f, 0x05, 0xe9, 0xfb, 0x0f, 0x00, 0x00));
}
END_TEST

/* ---- returns ---- */

START_TEST(plan_rets)
{
	struct insn_plan p;

	p = plan(B(0xc3));
	ck_assert_int_eq(p.kind, PLAN_RET);
	ck_assert_uint_eq(p.insn.len, 1);
	ck_assert_uint_eq(p.insn.ret_pop, 0);

	p = plan(B(0xc2, 0x08, 0x00));
	ck_assert_int_eq(p.kind, PLAN_RET);
	ck_assert_uint_eq(p.insn.len, 3);
	ck_assert_uint_eq(p.insn.ret_pop, 8);

	p = plan(B(0xf3, 0xc3));
	ck_assert_int_eq(p.kind, PLAN_RET);
	ck_assert_uint_eq(p.insn.len, 2);

	p = plan(B(0xf2, 0xc3));
	ck_assert_int_eq(p.kind, PLAN_RET);
	ck_assert_uint_eq(p.insn.len, 2);
}
END_TEST

/* ---- rip-relative relocation ---- */

START_TEST(riprel_mov_load)
{
	/* mov 0x2edb(%rip),%rax: disp 0x2edb + 0x1000 = 0x3edb */
	struct insn_plan p = plan(B(0x48, 0x8b, 0x05, 0xdb, 0x2e, 0x00, 0x00));

	ck_assert(p.insn.is_riprel);
	ck_assert_int_eq(p.insn.disp_offset, 3);
	assert_xol(&p, B(0x48, 0x8b, 0x05, 0xdb, 0x3e, 0x00, 0x00,
			 0xe9, 0xfb, 0x0f, 0x00, 0x00));
}
END_TEST

START_TEST(riprel_mov_slot_above)
{
	/* slot 0x402000: disp 0x2edb - 0x1000 = 0x1edb; jmp back 0x401007 - 0x40200c = -0x1005 */
	struct insn_plan p = plan_at(B(0x48, 0x8b, 0x05, 0xdb, 0x2e, 0x00, 0x00), ADDR, 0x402000);

	assert_xol(&p, B(0x48, 0x8b, 0x05, 0xdb, 0x1e, 0x00, 0x00,
			 0xe9, 0xfb, 0xef, 0xff, 0xff));
}
END_TEST

START_TEST(riprel_lea)
{
	/* lea -0x20(%rip),%rdi: -0x20 + 0x1000 = 0xfe0 */
	struct insn_plan p = plan(B(0x48, 0x8d, 0x3d, 0xe0, 0xff, 0xff, 0xff));

	assert_xol(&p, B(0x48, 0x8d, 0x3d, 0xe0, 0x0f, 0x00, 0x00,
			 0xe9, 0xfb, 0x0f, 0x00, 0x00));
}
END_TEST

START_TEST(riprel_cmp_imm)
{
	/* cmpl $5,0x10(%rip): disp at 2, then imm8 5 stays last: 0x10 + 0x1000 = 0x1010 */
	struct insn_plan p = plan(B(0x83, 0x3d, 0x10, 0x00, 0x00, 0x00, 0x05));

	ck_assert_int_eq(p.insn.disp_offset, 2);
	assert_xol(&p, B(0x83, 0x3d, 0x10, 0x10, 0x00, 0x00, 0x05,
			 0xe9, 0xfb, 0x0f, 0x00, 0x00));
}
END_TEST

START_TEST(riprel_movq_imm32)
{
	/* movq $0x12345678,0x10(%rip): disp at 3, imm32 after it */
	struct insn_plan p = plan(B(0x48, 0xc7, 0x05, 0x10, 0x00, 0x00, 0x00,
				    0x78, 0x56, 0x34, 0x12));

	assert_xol(&p, B(0x48, 0xc7, 0x05, 0x10, 0x10, 0x00, 0x00, 0x78, 0x56, 0x34, 0x12,
			 0xe9, 0xfb, 0x0f, 0x00, 0x00));
}
END_TEST

START_TEST(riprel_sse_66)
{
	/* capstone 4.0.2 says disp_size 2 for these; the displacement is still 4 bytes */
	struct insn_plan p;

	p = plan(B(0x66, 0x0f, 0x6f, 0x05, 0x10, 0x00, 0x00, 0x00));   /* movdqa */
	ck_assert_int_eq(p.insn.disp_offset, 4);
	assert_xol(&p, B(0x66, 0x0f, 0x6f, 0x05, 0x10, 0x10, 0x00, 0x00,
			 0xe9, 0xfb, 0x0f, 0x00, 0x00));

	p = plan(B(0x66, 0x0f, 0x28, 0x05, 0x10, 0x00, 0x00, 0x00));   /* movapd */
	assert_xol(&p, B(0x66, 0x0f, 0x28, 0x05, 0x10, 0x10, 0x00, 0x00,
			 0xe9, 0xfb, 0x0f, 0x00, 0x00));

	p = plan(B(0x66, 0x0f, 0xef, 0x05, 0x10, 0x00, 0x00, 0x00));   /* pxor */
	assert_xol(&p, B(0x66, 0x0f, 0xef, 0x05, 0x10, 0x10, 0x00, 0x00,
			 0xe9, 0xfb, 0x0f, 0x00, 0x00));

	/* palignr $8,0x10(%rip),%xmm0: 0x66, then an imm8 after the displacement */
	p = plan(B(0x66, 0x0f, 0x3a, 0x0f, 0x05, 0x10, 0x00, 0x00, 0x00, 0x08));
	assert_xol(&p, B(0x66, 0x0f, 0x3a, 0x0f, 0x05, 0x10, 0x10, 0x00, 0x00, 0x08,
			 0xe9, 0xfb, 0x0f, 0x00, 0x00));
}
END_TEST

START_TEST(riprel_mov_ax_store)
{
	/* mov %ax,0x10(%rip) and cmpw $0x1234,0x10(%rip) (0x66 + imm16 after the disp) */
	struct insn_plan p;

	p = plan(B(0x66, 0x89, 0x05, 0x10, 0x00, 0x00, 0x00));
	ck_assert_int_eq(p.insn.disp_offset, 3);
	assert_xol(&p, B(0x66, 0x89, 0x05, 0x10, 0x10, 0x00, 0x00,
			 0xe9, 0xfb, 0x0f, 0x00, 0x00));

	p = plan(B(0x66, 0x81, 0x3d, 0x10, 0x00, 0x00, 0x00, 0x34, 0x12));
	assert_xol(&p, B(0x66, 0x81, 0x3d, 0x10, 0x10, 0x00, 0x00, 0x34, 0x12,
			 0xe9, 0xfb, 0x0f, 0x00, 0x00));
}
END_TEST

START_TEST(riprel_vex)
{
	struct insn_plan p;

	/* vmovdqa 0x10(%rip),%ymm0 (2-byte VEX) */
	p = plan(B(0xc5, 0xfd, 0x6f, 0x05, 0x10, 0x00, 0x00, 0x00));
	ck_assert_int_eq(p.insn.disp_offset, 4);
	assert_xol(&p, B(0xc5, 0xfd, 0x6f, 0x05, 0x10, 0x10, 0x00, 0x00,
			 0xe9, 0xfb, 0x0f, 0x00, 0x00));

	/* vbroadcastss 0x10(%rip),%xmm0 (3-byte VEX) */
	p = plan(B(0xc4, 0xe2, 0x79, 0x18, 0x05, 0x10, 0x00, 0x00, 0x00));
	assert_xol(&p, B(0xc4, 0xe2, 0x79, 0x18, 0x05, 0x10, 0x10, 0x00, 0x00,
			 0xe9, 0xfb, 0x0f, 0x00, 0x00));

	/* vpshufd $5,0x10(%rip),%xmm0: imm8 after the displacement */
	p = plan(B(0xc5, 0xf9, 0x70, 0x05, 0x10, 0x00, 0x00, 0x00, 0x05));
	assert_xol(&p, B(0xc5, 0xf9, 0x70, 0x05, 0x10, 0x10, 0x00, 0x00, 0x05,
			 0xe9, 0xfb, 0x0f, 0x00, 0x00));
}
END_TEST

START_TEST(riprel_jmp_ind)
{
	/* jmp *0x10(%rip) re-based like any load; the jmp back is never reached */
	struct insn_plan p = plan(B(0xff, 0x25, 0x10, 0x00, 0x00, 0x00));

	ck_assert_int_eq(p.insn.kind, INSN_JMP_IND);
	assert_xol(&p, B(0xff, 0x25, 0x10, 0x10, 0x00, 0x00, 0xe9, 0xfb, 0x0f, 0x00, 0x00));
}
END_TEST

START_TEST(riprel_disp_limits)
{
	struct insn_plan p;

	/* 0x7fffefff + 0x1000 = 0x7fffffff: still fits */
	p = plan(B(0x48, 0x8b, 0x05, 0xff, 0xef, 0xff, 0x7f));
	assert_xol(&p, B(0x48, 0x8b, 0x05, 0xff, 0xff, 0xff, 0x7f,
			 0xe9, 0xfb, 0x0f, 0x00, 0x00));

	/* 0x7ffff000 + 0x1000 = 0x80000000: does not */
	p = plan(B(0x48, 0x8b, 0x05, 0x00, 0xf0, 0xff, 0x7f));
	assert_refused(&p);
	ck_assert_int_eq(p.insn.kind, INSN_OTHER);
}
END_TEST

START_TEST(riprel_slot_too_far)
{
	/* a slot 3 GiB below the site: neither the displacement nor the jmp back fit */
	uint64_t addr = 0x7f00c0001000ULL, slot = addr - 0xc0000000ULL;
	struct insn_plan p;

	p = plan_at(B(0x48, 0x8b, 0x05, 0xdb, 0x2e, 0x00, 0x00), addr, slot);
	assert_refused(&p);
	p = plan_at(B(0x55), addr, slot);
	assert_refused(&p);
	p = plan_at(B(0x66, 0x0f, 0x6f, 0x05, 0x10, 0x00, 0x00, 0x00), addr, slot + 0x180000000ULL);
	assert_refused(&p);
}
END_TEST

START_TEST(eip_relative_refused)
{
	struct insn_plan p = plan(B(0x67, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00));

	assert_refused(&p);
}
END_TEST

/* ---- direct branches ---- */

START_TEST(plan_jmp_direct)
{
	struct insn_plan p;

	p = plan(B(0xeb, 0x10));
	ck_assert_int_eq(p.kind, PLAN_JMP);
	ck_assert_uint_eq(p.insn.target, 0x401012);

	p = plan(B(0xe9, 0x00, 0x01, 0x00, 0x00));
	ck_assert_int_eq(p.kind, PLAN_JMP);
	ck_assert_uint_eq(p.insn.target, 0x401105);

	/* rel32 -0x1005 from 0x401005: 0x400000 */
	p = plan(B(0xe9, 0xfb, 0xef, 0xff, 0xff));
	ck_assert_int_eq(p.kind, PLAN_JMP);
	ck_assert_uint_eq(p.insn.target, 0x400000);

	p = plan(B(0xf2, 0xe9, 0x00, 0x01, 0x00, 0x00));
	ck_assert_int_eq(p.kind, PLAN_JMP);
	ck_assert_uint_eq(p.insn.target, 0x401106);
}
END_TEST

START_TEST(plan_jcc_rel8)
{
	/* je +0x10 at 0x401000: target 0x401012.
	 * je rel32 at SLOT: 0x401012 - 0x400006 = 0x100c
	 * jmp at SLOT+6 back to 0x401002: 0x401002 - 0x40000b = 0xff7 */
	struct insn_plan p = plan(B(0x74, 0x10));

	ck_assert_uint_eq(p.insn.target, 0x401012);
	assert_xol(&p, B(0x0f, 0x84, 0x0c, 0x10, 0x00, 0x00, 0xe9, 0xf7, 0x0f, 0x00, 0x00));
}
END_TEST

START_TEST(plan_jcc_rel8_backwards)
{
	/* jne -0x10 at 0x401000: target 0x400ff2; 0x400ff2 - 0x400006 = 0xfec */
	struct insn_plan p = plan(B(0x75, 0xf0));

	assert_xol(&p, B(0x0f, 0x85, 0xec, 0x0f, 0x00, 0x00, 0xe9, 0xf7, 0x0f, 0x00, 0x00));
}
END_TEST

START_TEST(plan_jcc_rel32)
{
	/* jg +0x100 at 0x401000 (6 bytes): target 0x401106; 0x401106 - 0x400006 = 0x1100;
	 * back to 0x401006: 0x401006 - 0x40000b = 0xffb */
	struct insn_plan p = plan(B(0x0f, 0x8f, 0x00, 0x01, 0x00, 0x00));

	ck_assert_uint_eq(p.insn.target, 0x401106);
	assert_xol(&p, B(0x0f, 0x8f, 0x00, 0x11, 0x00, 0x00, 0xe9, 0xfb, 0x0f, 0x00, 0x00));
}
END_TEST

START_TEST(plan_jcc_all_conditions)
{
	/* 7x rel8 widens to 0f 8x for every condition x */
	uint8_t code[2] = { (uint8_t)(0x70 | _i), 0x10 };
	struct insn_plan p = plan(code, 2);

	ck_assert_int_eq(p.kind, PLAN_XOL);
	ck_assert_uint_eq(p.xol[0], 0x0f);
	ck_assert_uint_eq(p.xol[1], 0x80 | _i);
}
END_TEST

START_TEST(plan_jcc_too_far)
{
	uint64_t addr = 0x7f00c0001000ULL;
	struct insn_plan p = plan_at(B(0x74, 0x10), addr, addr - 0xc0000000ULL);

	assert_refused(&p);
}
END_TEST

START_TEST(plan_call_rel32)
{
	/* call +0x100 at 0x401000: target 0x401105, return address 0x401005.
	 * push %rax; movabs $0x401005,%rax; xchg %rax,(%rsp);
	 * jmp at SLOT+15: 0x401105 - 0x400014 = 0x10f1 */
	struct insn_plan p = plan(B(0xe8, 0x00, 0x01, 0x00, 0x00));

	ck_assert_int_eq(p.insn.kind, INSN_CALL);
	ck_assert_uint_eq(p.insn.target, 0x401105);
	assert_xol(&p, B(0x50,
			 0x48, 0xb8, 0x05, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00,
			 0x48, 0x87, 0x04, 0x24,
			 0xe9, 0xf1, 0x10, 0x00, 0x00));
}
END_TEST

START_TEST(plan_call_backwards)
{
	/* call -0x2005 at 0x401000: target 0x3ff000; 0x3ff000 - 0x400014 = -0x1014 */
	struct insn_plan p = plan(B(0xe8, 0xfb, 0xdf, 0xff, 0xff));

	ck_assert_uint_eq(p.insn.target, 0x3ff000);
	assert_xol(&p, B(0x50,
			 0x48, 0xb8, 0x05, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00,
			 0x48, 0x87, 0x04, 0x24,
			 0xe9, 0xec, 0xef, 0xff, 0xff));
}
END_TEST

START_TEST(plan_call_too_far)
{
	/* the target is near the site, the slot 3 GiB away */
	uint64_t addr = 0x7f00c0001000ULL;
	struct insn_plan p = plan_at(B(0xe8, 0x00, 0x01, 0x00, 0x00), addr,
				     addr - 0xc0000000ULL);

	assert_refused(&p);
}
END_TEST

/* ---- indirect branches ---- */

START_TEST(plan_jmp_ind_reg)
{
	struct insn_plan p = plan(B(0xff, 0xe0));

	ck_assert_int_eq(p.insn.kind, INSN_JMP_IND);
	assert_xol(&p, B(0xff, 0xe0, 0xe9, 0xfb, 0x0f, 0x00, 0x00));

	/* jmp *0x8(%rax,%rdx,8) */
	p = plan(B(0xff, 0x64, 0xd0, 0x08));
	assert_xol(&p, B(0xff, 0x64, 0xd0, 0x08, 0xe9, 0xfb, 0x0f, 0x00, 0x00));
}
END_TEST

START_TEST(plan_call_ind_reg)
{
	/* call *%rax -> push seq with return 0x401002, then jmp *%rax (ModRM d0 -> e0) */
	struct insn_plan p = plan(B(0xff, 0xd0));

	ck_assert_int_eq(p.insn.kind, INSN_CALL_IND);
	assert_xol(&p, B(0x50,
			 0x48, 0xb8, 0x02, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00,
			 0x48, 0x87, 0x04, 0x24,
			 0xff, 0xe0));

	/* call *%r11 (41 ff d3) -> jmp *%r11 (41 ff e3), return 0x401003 */
	p = plan(B(0x41, 0xff, 0xd3));
	assert_xol(&p, B(0x50,
			 0x48, 0xb8, 0x03, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00,
			 0x48, 0x87, 0x04, 0x24,
			 0x41, 0xff, 0xe3));
}
END_TEST

START_TEST(plan_call_ind_riprel)
{
	/* call *0x10(%rip) at 0x401000 reads 0x401006 + 0x10 = 0x401016.
	 * The jmp *disp(%rip) sits at SLOT+15 and ends at 0x400015:
	 * disp = 0x401016 - 0x400015 = 0x1001 (= 0x10 + 0x1000 - 15). */
	struct insn_plan p = plan(B(0xff, 0x15, 0x10, 0x00, 0x00, 0x00));

	assert_xol(&p, B(0x50,
			 0x48, 0xb8, 0x06, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00,
			 0x48, 0x87, 0x04, 0x24,
			 0xff, 0x25, 0x01, 0x10, 0x00, 0x00));

	/* notrack: 3e ff 15, disp at 3, return 0x401007 -> 0x401017 - 0x400016 = 0x1001 */
	p = plan(B(0x3e, 0xff, 0x15, 0x10, 0x00, 0x00, 0x00));
	assert_xol(&p, B(0x50,
			 0x48, 0xb8, 0x07, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00,
			 0x48, 0x87, 0x04, 0x24,
			 0x3e, 0xff, 0x25, 0x01, 0x10, 0x00, 0x00));
}
END_TEST

START_TEST(plan_call_ind_refused)
{
	struct insn_plan p;

	p = plan(B(0xff, 0x54, 0x24, 0x08));       /* call *0x8(%rsp): %rsp moves first */
	assert_refused(&p);
	p = plan(B(0xff, 0x18));                   /* lcall *(%rax) */
	assert_refused(&p);
}
END_TEST

/* ---- never displaced ---- */

START_TEST(plan_traps_refused)
{
	struct insn_plan p;

	p = plan(B(0xcc));
	assert_refused(&p);
	ck_assert_int_eq(p.insn.kind, INSN_TRAP);
	p = plan(B(0x0f, 0x0b));
	assert_refused(&p);
	ck_assert_int_eq(p.insn.kind, INSN_TRAP);
	p = plan(B(0xcd, 0x80));
	assert_refused(&p);
	p = plan(B(0xf4));
	assert_refused(&p);
	p = plan(B(0xc7, 0xf8, 0x00, 0x01, 0x00, 0x00));
	assert_refused(&p);
}
END_TEST

START_TEST(plan_loops_refused)
{
	struct insn_plan p;

	p = plan(B(0xe2, 0x10));
	assert_refused(&p);
	ck_assert_int_eq(p.insn.kind, INSN_LOOP);
	ck_assert_uint_eq(p.insn.target, 0x401012);
	p = plan(B(0xe3, 0x10));
	assert_refused(&p);
}
END_TEST

START_TEST(plan_bad_bytes)
{
	struct insn_plan p;

	ck_assert_int_eq(insn_plan_site(dec, B(0x06), ADDR, SLOT, &p), -EINVAL);
}
END_TEST

/* ---- running the XOL code for real ----
 * One RWX mapping: the site page at A = mem, the slot at B = mem + 0x1000. The site code
 * ends in a ret, so calling the slot as a C function runs the displaced instruction, the
 * jmp back, the rest of the site and returns to the test. */

typedef long (*xol_fn)(long, long);

static uint8_t *exec_map(void)
{
	void *mem = mmap(NULL, 0x2000, PROT_READ | PROT_WRITE | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED)
		return NULL;
	memset(mem, 0xcc, 0x2000);
	return mem;
}

/* Plan the site at @a, install its XOL code at @a + 0x1000 and return the slot. */
static xol_fn exec_install(uint8_t *a, size_t len)
{
	uint8_t *b = a + 0x1000;
	struct insn_plan p = plan_at(a, len, (uintptr_t)a, (uintptr_t)b);

	ck_assert_msg(p.kind == PLAN_XOL, "kind %d, why %s", p.kind, p.why ? p.why : "-");
	memcpy(b, p.xol, p.xol_len);
	return (xol_fn)(uintptr_t)b;
}

static void put(uint8_t *at, const uint8_t *bytes, size_t n)
{
	memcpy(at, bytes, n);
}

START_TEST(exec_riprel_load)
{
	uint8_t *a = exec_map();
	uint64_t magic = 0x1122334455667788ULL;

	if (!a)
		return;                            /* no RWX mappings here: nothing to run */
	put(a, B(0x48, 0x8b, 0x05, 0xf9, 0x00, 0x00, 0x00));   /* mov 0xf9(%rip),%rax: a+0x100 */
	put(a + 7, B(0xc3));
	memcpy(a + 0x100, &magic, sizeof(magic));
	ck_assert_uint_eq((uint64_t)exec_install(a, 7)(0, 0), magic);
	munmap(a, 0x2000);
}
END_TEST

START_TEST(exec_sse_66_load)
{
	uint8_t *a = exec_map();
	uint64_t magic[2] = { 0x0102030405060708ULL, 0 };

	if (!a)
		return;
	/* movdqa 0xf8(%rip),%xmm0 (a+8+0xf8 = a+0x100); movq %xmm0,%rax; ret */
	put(a, B(0x66, 0x0f, 0x6f, 0x05, 0xf8, 0x00, 0x00, 0x00));
	put(a + 8, B(0x66, 0x48, 0x0f, 0x7e, 0xc0, 0xc3));
	memcpy(a + 0x100, magic, sizeof(magic));
	ck_assert_uint_eq((uint64_t)exec_install(a, 8)(0, 0), magic[0]);
	munmap(a, 0x2000);
}
END_TEST

START_TEST(exec_call_rel32)
{
	uint8_t *a = exec_map();

	if (!a)
		return;
	put(a, B(0xe8, 0x7b, 0x00, 0x00, 0x00));               /* call a+0x80 (a+5+0x7b) */
	put(a + 5, B(0x83, 0xc0, 0x01, 0xc3));                  /* add $1,%eax; ret */
	put(a + 0x80, B(0xb8, 0x2a, 0x00, 0x00, 0x00, 0xc3));   /* mov $42,%eax; ret */
	ck_assert_int_eq((int)exec_install(a, 5)(0, 0), 43);
	munmap(a, 0x2000);
}
END_TEST

START_TEST(exec_call_ind)
{
	uint8_t *a = exec_map();
	xol_fn f;

	if (!a)
		return;
	put(a, B(0xff, 0xd6));                                  /* call *%rsi */
	put(a + 2, B(0x83, 0xc0, 0x01, 0xc3));                  /* add $1,%eax; ret */
	put(a + 0x80, B(0x8d, 0x47, 0x02, 0xc3));               /* lea 2(%rdi),%eax; ret */
	f = exec_install(a, 2);
	ck_assert_int_eq((int)f(40, (long)(uintptr_t)(a + 0x80)), 43);
	munmap(a, 0x2000);
}
END_TEST

START_TEST(exec_call_ind_riprel)
{
	uint8_t *a = exec_map();
	uint64_t callee;

	if (!a)
		return;
	put(a, B(0xff, 0x15, 0xfa, 0x00, 0x00, 0x00));          /* call *0xfa(%rip): a+0x100 */
	put(a + 6, B(0x83, 0xc0, 0x01, 0xc3));                  /* add $1,%eax; ret */
	put(a + 0x80, B(0xb8, 0x2a, 0x00, 0x00, 0x00, 0xc3));   /* mov $42,%eax; ret */
	callee = (uintptr_t)(a + 0x80);
	memcpy(a + 0x100, &callee, sizeof(callee));
	ck_assert_int_eq((int)exec_install(a, 6)(0, 0), 43);
	munmap(a, 0x2000);
}
END_TEST

START_TEST(exec_jcc)
{
	uint8_t *a = exec_map();
	xol_fn f;
	int32_t rel;

	if (!a)
		return;
	put(a, B(0x74, 0x7e));                                  /* je a+0x80 */
	put(a + 2, B(0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3));      /* mov $1,%eax; ret */
	put(a + 0x80, B(0xb8, 0x02, 0x00, 0x00, 0x00, 0xc3));   /* mov $2,%eax; ret */
	exec_install(a, 2);
	/* a+0x200: test %edi,%edi; jmp slot (0x1000 - 0x207) */
	rel = 0x1000 - 0x207;
	put(a + 0x200, B(0x85, 0xff, 0xe9));
	memcpy(a + 0x203, &rel, sizeof(rel));
	f = (xol_fn)(uintptr_t)(a + 0x200);
	ck_assert_int_eq((int)f(0, 0), 2);
	ck_assert_int_eq((int)f(1, 0), 1);
	munmap(a, 0x2000);
}
END_TEST

/* ---- body scans ---- */

#define MAX_EXITS 16

struct exits {
	int n;
	struct insn_exit e[MAX_EXITS];
};

static void collect(const struct insn_exit *e, void *arg)
{
	struct exits *x = arg;

	ck_assert_int_lt(x->n, MAX_EXITS);
	x->e[x->n++] = *e;
}

static void assert_exit(const struct exits *x, int i, uint64_t addr, enum insn_exit_kind kind,
			uint64_t target, uint8_t len)
{
	ck_assert_int_lt(i, x->n);
	ck_assert_uint_eq(x->e[i].addr, addr);
	ck_assert_int_eq(x->e[i].kind, kind);
	ck_assert_uint_eq(x->e[i].target, target);
	ck_assert_uint_eq(x->e[i].len, len);
}

START_TEST(scan_body_exits)
{
	static const uint8_t body[] = {
		0x55,                               /* 00 push %rbp */
		0x48, 0x89, 0xe5,                   /* 01 mov %rsp,%rbp */
		0x85, 0xff,                         /* 04 test %edi,%edi */
		0x74, 0x0a,                         /* 06 je 0x12: inside, not an exit */
		0x0f, 0x84, 0xf2, 0xff, 0xff, 0xff, /* 08 je 0x00: 0x00 - 0x0e = -14 */
		0xeb, 0x40,                         /* 0e jmp 0x50: 0x10 + 0x40, outside */
		0xff, 0xe0,                         /* 10 jmp *%rax */
		0x5d,                               /* 12 pop %rbp */
		0xc3,                               /* 13 ret */
		0xe8, 0x00, 0x00, 0x00, 0x00,       /* 14 call 0x19: not an exit */
		0xc2, 0x08, 0x00,                   /* 19 ret $8 */
		0xe9, 0xdf, 0xfe, 0xff, 0xff,       /* 1c jmp 0x400f00: -0x121 from 0x401021 */
	};
	struct exits x = { 0 };
	uint64_t bad = 0;

	ck_assert_int_eq(insn_scan_body(dec, body, sizeof(body), ADDR, collect, &x, &bad), 0);
	ck_assert_int_eq(x.n, 6);
	assert_exit(&x, 0, ADDR + 0x08, EXIT_ENTRY_JUMP, ADDR, 6);
	ck_assert_int_eq(x.e[0].insn_kind, INSN_JCC);
	assert_exit(&x, 1, ADDR + 0x0e, EXIT_JMP_OUT, ADDR + 0x50, 2);
	ck_assert_int_eq(x.e[1].insn_kind, INSN_JMP);
	assert_exit(&x, 2, ADDR + 0x10, EXIT_JMP_IND, 0, 2);
	ck_assert_int_eq(x.e[2].insn_kind, INSN_JMP_IND);
	assert_exit(&x, 3, ADDR + 0x13, EXIT_RET, 0, 1);
	ck_assert_int_eq(x.e[3].insn_kind, INSN_RET);
	assert_exit(&x, 4, ADDR + 0x19, EXIT_RET, 0, 3);
	assert_exit(&x, 5, ADDR + 0x1c, EXIT_JMP_OUT, 0x400f00, 5);
}
END_TEST

START_TEST(scan_body_boundaries)
{
	/* jne to start+len (just past the end) is out; jmp to the last byte is in */
	static const uint8_t body[] = {
		0x75, 0x02,                         /* 00 jne 0x04 = start + len */
		0xeb, 0xff,                         /* 02 jmp 0x03: inside (mid-insn, still in) */
	};
	struct exits x = { 0 };

	ck_assert_int_eq(insn_scan_body(dec, body, sizeof(body), ADDR, collect, &x, NULL), 0);
	ck_assert_int_eq(x.n, 1);
	assert_exit(&x, 0, ADDR, EXIT_JMP_OUT, ADDR + 4, 2);
}
END_TEST

START_TEST(scan_body_tail_jump_to_self)
{
	/* a loop back to the entry with jmp rel8: -2 from 0x401002 */
	struct exits x = { 0 };

	ck_assert_int_eq(insn_scan_body(dec, B(0xeb, 0xfe), ADDR, collect, &x, NULL), 0);
	ck_assert_int_eq(x.n, 1);
	assert_exit(&x, 0, ADDR, EXIT_ENTRY_JUMP, ADDR, 2);
}
END_TEST

START_TEST(scan_body_bad_byte)
{
	/* push %rbp; ret; (0x06 is invalid in 64-bit mode); ret */
	struct exits x = { 0 };
	uint64_t bad = 0;

	ck_assert_int_eq(insn_scan_body(dec, B(0x55, 0xc3, 0x06, 0xc3), ADDR, collect, &x, &bad),
			 -EINVAL);
	ck_assert_uint_eq(bad, ADDR + 2);
	ck_assert_int_eq(x.n, 1);
	assert_exit(&x, 0, ADDR + 1, EXIT_RET, 0, 1);
}
END_TEST

START_TEST(scan_body_truncated)
{
	/* a call cut short by the end of the body */
	struct exits x = { 0 };
	uint64_t bad = 0;

	ck_assert_int_eq(insn_scan_body(dec, B(0x55, 0xe8, 0x00, 0x00), ADDR, collect, &x, &bad),
			 -EINVAL);
	ck_assert_uint_eq(bad, ADDR + 1);
	ck_assert_int_eq(x.n, 0);
}
END_TEST

START_TEST(scan_body_calls_not_exits)
{
	struct exits x = { 0 };

	/* call far outside, call *%rax, call *0x10(%rip) */
	ck_assert_int_eq(insn_scan_body(dec, B(0xe8, 0x00, 0x00, 0x00, 0x10, 0xff, 0xd0,
					       0xff, 0x15, 0x10, 0x00, 0x00, 0x00),
					ADDR, collect, &x, NULL), 0);
	ck_assert_int_eq(x.n, 0);
}
END_TEST

/* ---- body scans: branch targets and the movable run before each ret ---- */

#define MAX_TARGETS 16

struct scan_ex {
	struct exits x;
	int nt;
	uint64_t t[MAX_TARGETS];
};

static void collect_ex(const struct insn_exit *e, void *arg)
{
	collect(e, &((struct scan_ex *)arg)->x);
}

static void collect_target(uint64_t target, void *arg)
{
	struct scan_ex *r = arg;

	ck_assert_int_lt(r->nt, MAX_TARGETS);
	r->t[r->nt++] = target;
}

/* exit @i is a ret with the @nr movable instruction lengths @want before it */
static void assert_prev(const struct exits *x, int i, const uint8_t *want, size_t nr)
{
	ck_assert_int_lt(i, x->n);
	ck_assert_int_eq(x->e[i].kind, EXIT_RET);
	ck_assert_uint_eq(x->e[i].nr_prev, nr);
	if (nr)
		ck_assert_mem_eq(x->e[i].prev_len, want, nr);
}

START_TEST(scan_body_ex_targets)
{
	static const uint8_t body[] = {
		0x55,                               /* 00 push %rbp */
		0x85, 0xff,                         /* 01 test %edi,%edi */
		0x74, 0x0b,                         /* 03 je 0x10: 0x05 + 0x0b, inside */
		0xe8, 0x00, 0x01, 0x00, 0x00,       /* 05 call 0x10a: 0x0a + 0x100 */
		0xe2, 0xfe,                         /* 0a loop 0x0a: 0x0c - 2, inside */
		0xff, 0xd0,                         /* 0c call *%rax: no target */
		0xeb, 0x10,                         /* 0e jmp 0x20: 0x10 + 0x10, outside */
		0x5d,                               /* 10 pop %rbp */
		0xc3,                               /* 11 ret: no target */
		0xe3, 0x20,                         /* 12 jrcxz 0x34: 0x14 + 0x20, outside */
		0xff, 0xe0,                         /* 14 jmp *%rax: no target */
	};
	struct scan_ex r = { 0 };
	uint64_t bad = 0;

	ck_assert_int_eq(insn_scan_body_ex(dec, body, sizeof(body), ADDR, collect_ex,
					   collect_target, &r, &bad), 0);
	/* every direct target, in body order, inside or outside, calls included */
	ck_assert_int_eq(r.nt, 5);
	ck_assert_uint_eq(r.t[0], ADDR + 0x10);
	ck_assert_uint_eq(r.t[1], ADDR + 0x10a);
	ck_assert_uint_eq(r.t[2], ADDR + 0x0a);
	ck_assert_uint_eq(r.t[3], ADDR + 0x20);
	ck_assert_uint_eq(r.t[4], ADDR + 0x34);
	/* the exits are those insn_scan_body() reports */
	ck_assert_int_eq(r.x.n, 4);
	assert_exit(&r.x, 0, ADDR + 0x0e, EXIT_JMP_OUT, ADDR + 0x20, 2);
	ck_assert_int_eq(r.x.e[0].insn_kind, INSN_JMP);
	ck_assert_uint_eq(r.x.e[0].nr_prev, 0);
	assert_exit(&r.x, 1, ADDR + 0x11, EXIT_RET, 0, 1);
	/* pop %rbp after the jmp: the jmp ends the run */
	assert_prev(&r.x, 1, B(1));
	assert_exit(&r.x, 2, ADDR + 0x12, EXIT_JMP_OUT, ADDR + 0x34, 2);
	ck_assert_int_eq(r.x.e[2].insn_kind, INSN_LOOP);
	assert_exit(&r.x, 3, ADDR + 0x14, EXIT_JMP_IND, 0, 2);
}
END_TEST

START_TEST(scan_body_ex_targets_only)
{
	/* no exit callback: only the targets; jmp back to the entry is a target too */
	static const uint8_t body[] = {
		0x75, 0x02,                         /* 00 jne 0x04 */
		0xeb, 0xfc,                         /* 02 jmp 0x00: 0x04 - 4 */
		0x0f, 0x84, 0x00, 0x10, 0x00, 0x00, /* 04 je 0x100a: 0x0a + 0x1000 */
		0xe8, 0xf1, 0xff, 0xff, 0xff,       /* 0a call 0x00: 0x0f - 0x0f */
		0xc3,                               /* 0f ret */
	};
	struct scan_ex r = { 0 };

	ck_assert_int_eq(insn_scan_body_ex(dec, body, sizeof(body), ADDR, NULL, collect_target,
					   &r, NULL), 0);
	ck_assert_int_eq(r.x.n, 0);
	ck_assert_int_eq(r.nt, 4);
	ck_assert_uint_eq(r.t[0], ADDR + 0x04);
	ck_assert_uint_eq(r.t[1], ADDR);
	ck_assert_uint_eq(r.t[2], ADDR + 0x100a);
	ck_assert_uint_eq(r.t[3], ADDR);
}
END_TEST

START_TEST(scan_body_ex_no_target_fn)
{
	/* target_fn NULL: the exits alone, like insn_scan_body() */
	struct scan_ex r = { 0 };

	ck_assert_int_eq(insn_scan_body_ex(dec, B(0xe8, 0x00, 0x00, 0x00, 0x00, 0xeb, 0x10),
					   ADDR, collect_ex, NULL, &r, NULL), 0);
	ck_assert_int_eq(r.nt, 0);
	ck_assert_int_eq(r.x.n, 1);
	/* 0x401007 + 0x10 */
	assert_exit(&r.x, 0, ADDR + 5, EXIT_JMP_OUT, 0x401017, 2);
}
END_TEST

START_TEST(scan_body_ex_bad_byte)
{
	/* targets before the bad byte are reported, none after it */
	struct scan_ex r = { 0 };
	uint64_t bad = 0;

	ck_assert_int_eq(insn_scan_body_ex(dec, B(0x74, 0x10, 0x06, 0xeb, 0x10), ADDR,
					   collect_ex, collect_target, &r, &bad), -EINVAL);
	ck_assert_uint_eq(bad, ADDR + 2);
	ck_assert_int_eq(r.nt, 1);
	ck_assert_uint_eq(r.t[0], 0x401012);     /* 0x401002 + 0x10 */
	ck_assert_int_eq(r.x.n, 1);              /* je 0x401012: outside the 5 bytes */
	assert_exit(&r.x, 0, ADDR, EXIT_JMP_OUT, 0x401012, 2);
}
END_TEST

START_TEST(scan_body_prev_pops)
{
	static const uint8_t body[] = {
		0x5b,                               /* 00 pop %rbx */
		0x5d,                               /* 01 pop %rbp */
		0xc3,                               /* 02 ret: 2 before it */
		0x41, 0x5c,                         /* 03 pop %r12 */
		0x5d,                               /* 05 pop %rbp */
		0xc2, 0x08, 0x00,                   /* 06 ret $8: the ret at 02 ends the run */
	};
	struct scan_ex r = { 0 };

	ck_assert_int_eq(insn_scan_body_ex(dec, body, sizeof(body), ADDR, collect_ex,
					   collect_target, &r, NULL), 0);
	ck_assert_int_eq(r.nt, 0);
	ck_assert_int_eq(r.x.n, 2);
	assert_exit(&r.x, 0, ADDR + 2, EXIT_RET, 0, 1);
	assert_prev(&r.x, 0, B(1, 1));
	assert_exit(&r.x, 1, ADDR + 6, EXIT_RET, 0, 3);
	assert_prev(&r.x, 1, B(1, 2));       /* nearest first: pop %rbp, pop %r12 */
}
END_TEST

START_TEST(scan_body_prev_reset)
{
	static const uint8_t body[] = {
		0x5d,                               /* 00 pop %rbp */
		0xe8, 0x00, 0x00, 0x00, 0x00,       /* 01 call 0x06 */
		0xc3,                               /* 06 ret: right after a call */
		0xb8, 0x3c, 0x00, 0x00, 0x00,       /* 07 mov $60,%eax */
		0x0f, 0x05,                         /* 0c syscall */
		0xc3,                               /* 0e ret: right after a syscall */
		0x5d,                               /* 0f pop %rbp */
		0x75, 0x00,                         /* 10 jne 0x12 */
		0xc3,                               /* 12 ret: right after a jcc */
		0xcc,                               /* 13 int3 */
		0xf3, 0xc3,                         /* 14 rep ret: right after a trap */
		0xff, 0xe0,                         /* 16 jmp *%rax */
		0xc3,                               /* 18 ret: right after an indirect jmp */
		0x67, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00, /* 19 mov 0x10(%eip),%eax */
		0xc3,                               /* 20 ret: eip-relative is not movable */
	};
	struct scan_ex r = { 0 };

	ck_assert_int_eq(insn_scan_body_ex(dec, body, sizeof(body), ADDR, collect_ex,
					   collect_target, &r, NULL), 0);
	ck_assert_int_eq(r.x.n, 7);               /* jne 0x12 stays inside: not an exit */
	assert_exit(&r.x, 0, ADDR + 0x06, EXIT_RET, 0, 1);
	assert_prev(&r.x, 0, NULL, 0);
	assert_exit(&r.x, 1, ADDR + 0x0e, EXIT_RET, 0, 1);
	assert_prev(&r.x, 1, NULL, 0);
	assert_exit(&r.x, 2, ADDR + 0x12, EXIT_RET, 0, 1);
	assert_prev(&r.x, 2, NULL, 0);
	assert_exit(&r.x, 3, ADDR + 0x14, EXIT_RET, 0, 2);
	assert_prev(&r.x, 3, NULL, 0);
	assert_exit(&r.x, 4, ADDR + 0x16, EXIT_JMP_IND, 0, 2);
	assert_exit(&r.x, 5, ADDR + 0x18, EXIT_RET, 0, 1);
	assert_prev(&r.x, 5, NULL, 0);
	assert_exit(&r.x, 6, ADDR + 0x20, EXIT_RET, 0, 1);
	assert_prev(&r.x, 6, NULL, 0);
	ck_assert_int_eq(r.nt, 2);                  /* call 0x06, jne 0x12 */
}
END_TEST

START_TEST(scan_body_prev_cap)
{
	static const uint8_t body[] = {
		0x55,                               /* 00 push %rbp         1 */
		0x48, 0x89, 0xe5,                   /* 01 mov %rsp,%rbp     3 */
		0x48, 0x83, 0xec, 0x10,             /* 04 sub $0x10,%rsp    4 */
		0x89, 0xf8,                         /* 08 mov %edi,%eax     2 */
		0x83, 0xc0, 0x01,                   /* 0a add $1,%eax       3 */
		0xc9,                               /* 0d leave             1 */
		0xc3,                               /* 0e ret: 6 movable before, the 4 nearest kept */
	};
	struct scan_ex r = { 0 };

	ck_assert_int_eq(insn_scan_body_ex(dec, body, sizeof(body), ADDR, collect_ex,
					   collect_target, &r, NULL), 0);
	ck_assert_int_eq(r.x.n, 1);
	assert_exit(&r.x, 0, ADDR + 0x0e, EXIT_RET, 0, 1);
	ck_assert_uint_eq(r.x.e[0].nr_prev, INSN_PREV_MAX);
	assert_prev(&r.x, 0, B(1, 3, 2, 4));   /* leave, add, mov, sub */
}
END_TEST

START_TEST(scan_body_prev_nops_riprel)
{
	/* nops and re-basable rip-relative operands are movable like the rest */
	static const uint8_t body[] = {
		0xf3, 0x0f, 0x1e, 0xfa,             /* 00 endbr64                   4 */
		0x48, 0x8b, 0x05, 0xdb, 0x2e, 0x00, 0x00, /* 04 mov 0x2edb(%rip),%rax 7 */
		0x66, 0x90,                         /* 0b xchg %ax,%ax              2 */
		0xc3,                               /* 0d ret */
		0x83, 0x3d, 0x10, 0x00, 0x00, 0x00, 0x05, /* 0e cmpl $5,0x10(%rip)   7 */
		0xf3, 0xc3,                         /* 15 rep ret: a ret ends the run first */
	};
	struct scan_ex r = { 0 };

	ck_assert_int_eq(insn_scan_body_ex(dec, body, sizeof(body), ADDR, collect_ex, NULL, &r,
					   NULL), 0);
	ck_assert_int_eq(r.x.n, 2);
	assert_exit(&r.x, 0, ADDR + 0x0d, EXIT_RET, 0, 1);
	assert_prev(&r.x, 0, B(2, 7, 4));
	assert_exit(&r.x, 1, ADDR + 0x15, EXIT_RET, 0, 2);
	assert_prev(&r.x, 1, B(7));
}
END_TEST

/* An exit callback that uses the decoder itself, as the engine's does. */
static void collect_reuse(const struct insn_exit *e, void *arg)
{
	ck_assert_int_eq(insn_movable(dec, B(0x0f, 0x05), 0x500000), 0);
	collect_ex(e, arg);
}

START_TEST(scan_body_ex_callback_reuses_decoder)
{
	static const uint8_t body[] = {
		0x5b,                               /* 00 pop %rbx */
		0x5d,                               /* 01 pop %rbp */
		0xc3,                               /* 02 ret */
		0x41, 0x5c,                         /* 03 pop %r12 */
		0xc3,                               /* 05 ret */
		0xeb, 0x10,                         /* 06 jmp 0x18: outside */
	};
	struct scan_ex r = { 0 };

	ck_assert_int_eq(insn_scan_body_ex(dec, body, sizeof(body), ADDR, collect_reuse,
					   collect_target, &r, NULL), 0);
	ck_assert_int_eq(r.x.n, 3);
	assert_exit(&r.x, 0, ADDR + 2, EXIT_RET, 0, 1);
	assert_prev(&r.x, 0, B(1, 1));
	assert_exit(&r.x, 1, ADDR + 5, EXIT_RET, 0, 1);
	assert_prev(&r.x, 1, B(2));
	assert_exit(&r.x, 2, ADDR + 6, EXIT_JMP_OUT, ADDR + 0x18, 2);
	ck_assert_int_eq(r.nt, 1);
	ck_assert_uint_eq(r.t[0], ADDR + 0x18);
}
END_TEST

/* ---- detours: movable instructions ---- */

START_TEST(movable_insns)
{
	ck_assert_int_eq(insn_movable(dec, B(0x55), ADDR), 1);                   /* push %rbp */
	ck_assert_int_eq(insn_movable(dec, B(0x48, 0x89, 0xe5), ADDR), 1);       /* mov %rsp,%rbp */
	ck_assert_int_eq(insn_movable(dec, B(0x48, 0x83, 0xec, 0x10), ADDR), 1); /* sub $16,%rsp */
	ck_assert_int_eq(insn_movable(dec, B(0x90), ADDR), 1);                   /* nop */
	ck_assert_int_eq(insn_movable(dec, B(0xf3, 0x0f, 0x1e, 0xfa), ADDR), 1); /* endbr64 */
	ck_assert_int_eq(insn_movable(dec, B(0xc9), ADDR), 1);                   /* leave */
	ck_assert_int_eq(insn_movable(dec, B(0x48, 0x8b, 0x00), ADDR), 1);       /* mov (%rax),%rax */
	/* rip-relative: mov 0x2edb(%rip),%rax; lea -0x20(%rip),%rdi; cmpl $5,0x10(%rip)
	 * (imm8 after the displacement); movdqa 0x10(%rip),%xmm0 (0x66) */
	ck_assert_int_eq(insn_movable(dec, B(0x48, 0x8b, 0x05, 0xdb, 0x2e, 0x00, 0x00), ADDR), 1);
	ck_assert_int_eq(insn_movable(dec, B(0x48, 0x8d, 0x3d, 0xe0, 0xff, 0xff, 0xff), ADDR), 1);
	ck_assert_int_eq(insn_movable(dec, B(0x83, 0x3d, 0x10, 0x00, 0x00, 0x00, 0x05), ADDR), 1);
	ck_assert_int_eq(insn_movable(dec, B(0x66, 0x0f, 0x6f, 0x05, 0x10, 0x00, 0x00, 0x00),
				      ADDR), 1);
}
END_TEST

START_TEST(movable_refused)
{
	ck_assert_int_eq(insn_movable(dec, B(0xc3), ADDR), 0);                   /* ret */
	ck_assert_int_eq(insn_movable(dec, B(0xc2, 0x08, 0x00), ADDR), 0);       /* ret $8 */
	ck_assert_int_eq(insn_movable(dec, B(0xf3, 0xc3), ADDR), 0);             /* rep ret */
	ck_assert_int_eq(insn_movable(dec, B(0xeb, 0x10), ADDR), 0);             /* jmp rel8 */
	ck_assert_int_eq(insn_movable(dec, B(0xe9, 0x00, 0x01, 0x00, 0x00), ADDR), 0);
	ck_assert_int_eq(insn_movable(dec, B(0x75, 0xf0), ADDR), 0);             /* jne rel8 */
	ck_assert_int_eq(insn_movable(dec, B(0x0f, 0x84, 0x00, 0x01, 0x00, 0x00), ADDR), 0);
	ck_assert_int_eq(insn_movable(dec, B(0xe8, 0x00, 0x01, 0x00, 0x00), ADDR), 0); /* call */
	ck_assert_int_eq(insn_movable(dec, B(0xff, 0xd0), ADDR), 0);             /* call *%rax */
	ck_assert_int_eq(insn_movable(dec, B(0xff, 0xe0), ADDR), 0);             /* jmp *%rax */
	ck_assert_int_eq(insn_movable(dec, B(0xff, 0x25, 0x10, 0x00, 0x00, 0x00), ADDR), 0);
	ck_assert_int_eq(insn_movable(dec, B(0xe2, 0x10), ADDR), 0);             /* loop */
	ck_assert_int_eq(insn_movable(dec, B(0xe3, 0x10), ADDR), 0);             /* jrcxz */
	ck_assert_int_eq(insn_movable(dec, B(0x0f, 0x05), ADDR), 0);             /* syscall */
	ck_assert_int_eq(insn_movable(dec, B(0xcc), ADDR), 0);                   /* int3 */
	ck_assert_int_eq(insn_movable(dec, B(0xcd, 0x80), ADDR), 0);             /* int $0x80 */
	ck_assert_int_eq(insn_movable(dec, B(0x0f, 0x0b), ADDR), 0);             /* ud2 */
	ck_assert_int_eq(insn_movable(dec, B(0xf4), ADDR), 0);                   /* hlt */
	ck_assert_int_eq(insn_movable(dec, B(0xc7, 0xf8, 0x00, 0x01, 0x00, 0x00), ADDR), 0);
	/* mov 0x10(%eip),%eax: eip-relative */
	ck_assert_int_eq(insn_movable(dec, B(0x67, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00), ADDR), 0);
	/* capstone's rel16 reading of a 0x66 jmp */
	ck_assert_int_eq(insn_movable(dec, B(0x66, 0xe9, 0x00, 0x01, 0x00, 0x00), ADDR), 0);
}
END_TEST

START_TEST(movable_bad_bytes)
{
	ck_assert_int_eq(insn_movable(dec, B(0x06), ADDR), -EINVAL);             /* push %es */
	ck_assert_int_eq(insn_movable(dec, B(0xe8, 0x00, 0x00), ADDR), -EINVAL); /* cut short */
	ck_assert_int_eq(insn_movable(dec, NULL, 0, ADDR), -EINVAL);
}
END_TEST

/* ---- detours: entry regions ---- */

static size_t region(const uint8_t *code, size_t len, bool extend, bool *ret)
{
	return insn_entry_region(dec, code, len, ADDR, extend, ret);
}

START_TEST(region_prologue)
{
	/* push %rbp; mov %rsp,%rbp; sub $0x10,%rsp: 1 + 3 + 4 = 8 */
	static const uint8_t prologue[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10 };
	/* ... then mov %edi,-4(%rbp) (3); mov -4(%rbp),%eax (3); leave; ret: the ret ends
	 * 8 bytes past the region, far enough for a region of its own */
	static const uint8_t body[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10,
					0x89, 0x7d, 0xfc, 0x8b, 0x45, 0xfc, 0xc9, 0xc3 };
	bool ret = true;

	ck_assert_uint_eq(region(prologue, sizeof(prologue), false, &ret), 8);
	ck_assert(!ret);
	ret = true;
	ck_assert_uint_eq(region(prologue, sizeof(prologue), true, &ret), 8);
	ck_assert(!ret);
	ret = true;
	ck_assert_uint_eq(region(body, sizeof(body), true, &ret), 8);
	ck_assert(!ret);
	ret = true;
	ck_assert_uint_eq(region(body, sizeof(body), false, &ret), 8);
	ck_assert(!ret);
}
END_TEST

START_TEST(region_whole_function)
{
	/* push %rbp; mov %rsp,%rbp; pop %rbp; ret (an empty function at -O0): the minimal
	 * region is 1 + 3 + 1 = 5; the ret ends 1 byte after it, so with @extend it is
	 * taken in (6); a region of its own would need 4 bytes of this one */
	bool ret = false;

	ck_assert_uint_eq(region(B(0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3), true, &ret), 6);
	ck_assert(ret);
	ck_assert_uint_eq(region(B(0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3), false, &ret), 5);
	ck_assert(!ret);
	/* ... with ret $8: the ret ends 3 bytes after, 8 in all */
	ck_assert_uint_eq(region(B(0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc2, 0x08, 0x00), true, &ret),
			  8);
	ck_assert(ret);
	/* ... with padding after the ret: it stops at the ret */
	ck_assert_uint_eq(region(B(0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3, 0x90, 0x90, 0x90, 0x90,
				   0x90, 0x90), true, &ret), 6);
	ck_assert(ret);
}
END_TEST

START_TEST(region_ret_in_first_5)
{
	/* lea 0x1(%rdi,%rdi,1),%eax (4); ret: the whole function is 5 bytes and ends in the
	 * ret. With @extend the region is the whole function (one block: int3, lea, int3,
	 * ret); without, there is none (the ret is not movable). */
	bool ret = true;

	ck_assert_uint_eq(region(B(0x8d, 0x44, 0x3f, 0x01, 0xc3), false, &ret), 0);
	ck_assert(!ret);
	ret = false;
	ck_assert_uint_eq(region(B(0x8d, 0x44, 0x3f, 0x01, 0xc3), true, &ret), 5);
	ck_assert(ret);
	ret = false;
	ck_assert_uint_eq(region(B(0x8d, 0x44, 0x3f, 0x01, 0xc3, 0x90, 0x90, 0x90, 0x90), true,
				 &ret), 5);
	ck_assert(ret);
	/* lea 0x1(%rdi),%eax (3); ret: 4 bytes, too short for a jmp rel32 */
	ret = true;
	ck_assert_uint_eq(region(B(0x8d, 0x47, 0x01, 0xc3, 0x90, 0x90), true, &ret), 0);
	ck_assert(!ret);
}
END_TEST

START_TEST(region_riprel_extension)
{
	/* mov 0x2edb(%rip),%rax (7); add $0x8,%rsp (4); ret: from the minimal region's
	 * end (7) to the ret's end (12) is 5 bytes, enough for the ret's own region
	 * [7, 12): no extension */
	bool ret = true;

	ck_assert_uint_eq(region(B(0x48, 0x8b, 0x05, 0xdb, 0x2e, 0x00, 0x00,
				   0x48, 0x83, 0xc4, 0x08, 0xc3), true, &ret), 7);
	ck_assert(!ret);
	/* add $0x1,%eax (3) instead: 3 + 1 = 4 < 5, so the region runs through the ret */
	ret = false;
	ck_assert_uint_eq(region(B(0x48, 0x8b, 0x05, 0xdb, 0x2e, 0x00, 0x00,
				   0x83, 0xc0, 0x01, 0xc3), true, &ret), 11);
	ck_assert(ret);
	ck_assert_uint_eq(region(B(0x48, 0x8b, 0x05, 0xdb, 0x2e, 0x00, 0x00,
				   0x83, 0xc0, 0x01, 0xc3), false, &ret), 7);
	ck_assert(!ret);
	/* two movable instructions between: pop %rbx; pop %rbp; ret: 1 + 1 + 1 = 3 */
	ck_assert_uint_eq(region(B(0x48, 0x8b, 0x05, 0xdb, 0x2e, 0x00, 0x00,
				   0x5b, 0x5d, 0xc3), true, &ret), 10);
	ck_assert(ret);
	/* four: 1 + 1 + 1 + 1 + ret = 5: not extended */
	ck_assert_uint_eq(region(B(0x48, 0x8b, 0x05, 0xdb, 0x2e, 0x00, 0x00,
				   0x5b, 0x5d, 0x5e, 0x5f, 0xc3), true, &ret), 7);
	ck_assert(!ret);
	/* the ret right after the minimal region */
	ck_assert_uint_eq(region(B(0x48, 0x8b, 0x05, 0xdb, 0x2e, 0x00, 0x00, 0xc3), true, &ret),
			  8);
	ck_assert(ret);
}
END_TEST

START_TEST(region_extension_blocked)
{
	bool ret = true;

	/* sub $8,%rsp; xor %eax,%eax (6); syscall; ret: not movable between, no extension */
	ck_assert_uint_eq(region(B(0x48, 0x83, 0xec, 0x08, 0x31, 0xc0, 0x0f, 0x05, 0xc3), true,
				 &ret), 6);
	ck_assert(!ret);
	/* ... a call between */
	ck_assert_uint_eq(region(B(0x48, 0x83, 0xec, 0x08, 0x31, 0xc0,
				   0xe8, 0x00, 0x00, 0x00, 0x00, 0xc3), true, &ret), 6);
	ck_assert(!ret);
	/* ... a jcc between */
	ck_assert_uint_eq(region(B(0x48, 0x83, 0xec, 0x08, 0x31, 0xc0, 0x75, 0x00, 0xc3), true,
				 &ret), 6);
	ck_assert(!ret);
	/* ... an undecodable byte between */
	ck_assert_uint_eq(region(B(0x48, 0x83, 0xec, 0x08, 0x31, 0xc0, 0x06, 0xc3), true, &ret),
			  6);
	ck_assert(!ret);
	/* ... the body ends before any ret */
	ck_assert_uint_eq(region(B(0x48, 0x83, 0xec, 0x08, 0x31, 0xc0, 0x5d), true, &ret), 6);
	ck_assert(!ret);
}
END_TEST

START_TEST(region_none)
{
	bool ret = true;

	/* first instruction a jmp */
	ck_assert_uint_eq(region(B(0xeb, 0x10, 0x90, 0x90, 0x90, 0x90, 0x90), true, &ret), 0);
	ck_assert(!ret);
	ck_assert_uint_eq(region(B(0xe9, 0x00, 0x01, 0x00, 0x00, 0x90), false, &ret), 0);
	/* a ret first */
	ck_assert_uint_eq(region(B(0xc3, 0x90, 0x90, 0x90, 0x90, 0x90), true, &ret), 0);
	/* a call, a jcc, a syscall, an int3 inside the first 5 bytes */
	ck_assert_uint_eq(region(B(0x55, 0xe8, 0x00, 0x01, 0x00, 0x00), true, &ret), 0);
	ck_assert_uint_eq(region(B(0x85, 0xff, 0x74, 0x10, 0x90, 0x90), true, &ret), 0);
	/* (but mov $60,%eax covers 5 bytes alone: the syscall after it is not needed) */
	ck_assert_uint_eq(region(B(0xb8, 0x3c, 0x00, 0x00, 0x00, 0x0f, 0x05), true, &ret), 5);
	ck_assert_uint_eq(region(B(0x31, 0xc0, 0x0f, 0x05, 0x90, 0x90, 0x90), true, &ret), 0);
	ck_assert_uint_eq(region(B(0x55, 0x48, 0x89, 0xe5, 0xcc, 0x90), true, &ret), 0);
	/* an eip-relative operand */
	ck_assert_uint_eq(region(B(0x67, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00), true, &ret), 0);
	/* shorter than 5 bytes: push %rbp; pop %rbp / four nops / xor %eax,%eax; ret */
	ck_assert_uint_eq(region(B(0x55, 0x5d), true, &ret), 0);
	ck_assert_uint_eq(region(B(0x90, 0x90, 0x90, 0x90), true, &ret), 0);
	ck_assert_uint_eq(region(B(0x31, 0xc0, 0xc3), true, &ret), 0);
	ck_assert(!ret);
	/* an instruction cut short by the end of the bytes, or undecodable */
	ck_assert_uint_eq(region(B(0x55, 0x48, 0x83, 0xec), true, &ret), 0);
	ck_assert_uint_eq(region(B(0x55, 0x06, 0x90, 0x90, 0x90, 0x90), true, &ret), 0);
	ck_assert_uint_eq(region(NULL, 0, true, &ret), 0);
	ck_assert(!ret);
}
END_TEST

START_TEST(region_long_insn)
{
	/* nopl 0(%rax) (4) + movq $0x12345678,0x10(%rip) (11): 15, the last one crossing
	 * byte 5 taken whole */
	bool ret = true;

	ck_assert_uint_eq(region(B(0x0f, 0x1f, 0x40, 0x00,
				   0x48, 0xc7, 0x05, 0x10, 0x00, 0x00, 0x00, 0x78, 0x56, 0x34, 0x12,
				   0x90, 0xc3), false, &ret), 15);
	ck_assert(!ret);
	/* with @extend: nop; ret are 2 bytes, so through the ret: 17 */
	ck_assert_uint_eq(region(B(0x0f, 0x1f, 0x40, 0x00,
				   0x48, 0xc7, 0x05, 0x10, 0x00, 0x00, 0x00, 0x78, 0x56, 0x34, 0x12,
				   0x90, 0xc3), true, &ret), 17);
	ck_assert(ret);
}
END_TEST

/* ---- detours: blocks ----
 * The site's jmp is always e9 + SLOT - (ADDR + 5) = 0x400000 - 0x401005 = -0x1005:
 * e9 fb ef ff ff. */

static const uint8_t site_jmp[INSN_DETOUR_JMP] = { 0xe9, 0xfb, 0xef, 0xff, 0xff };

static struct insn_detour detour_at(const uint8_t *code, size_t len, uint64_t site,
				    uint64_t slot, bool entry_trap, bool exit_trap)
{
	struct insn_detour d;
	const char *why;

	why = insn_plan_detour(dec, code, len, site, slot, entry_trap, exit_trap, &d);
	ck_assert_msg(why == NULL, "refused: %s", why);
	ck_assert_uint_eq(d.site, site);
	ck_assert_uint_eq(d.site_len, len);
	return d;
}

static struct insn_detour detour(const uint8_t *code, size_t len, bool entry_trap,
				 bool exit_trap)
{
	struct insn_detour d = detour_at(code, len, ADDR, SLOT, entry_trap, exit_trap);

	ck_assert_mem_eq(d.jmp, site_jmp, INSN_DETOUR_JMP);
	return d;
}

static void assert_block(const struct insn_detour *d, const uint8_t *want, size_t n,
			 int entry_trap, int exit_trap)
{
	ck_assert_uint_eq(d->code_len, n);
	ck_assert_mem_eq(d->code, want, n);
	ck_assert_int_eq(d->entry_trap, entry_trap);
	ck_assert_int_eq(d->exit_trap, exit_trap);
}

static void assert_detour_refused(const uint8_t *code, size_t len, uint64_t site,
				  uint64_t slot)
{
	struct insn_detour d;
	const char *why;

	why = insn_plan_detour(dec, code, len, site, slot, true, true, &d);
	ck_assert_ptr_nonnull(why);
	ck_assert_int_gt(strlen(why), 0);
	why = insn_plan_detour(dec, code, len, site, slot, false, false, &d);
	ck_assert_ptr_nonnull(why);
}

START_TEST(detour_entry_prologue)
{
	static const uint8_t code[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10 };
	struct insn_detour d;

	/* int3; push %rbp; mov %rsp,%rbp; sub $0x10,%rsp; jmp from SLOT+14 to ADDR+8:
	 * 0x401008 - 0x40000e = 0xffa */
	d = detour(code, sizeof(code), true, false);
	assert_block(&d, B(0xcc, 0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10,
			   0xe9, 0xfa, 0x0f, 0x00, 0x00), 0, -1);
	/* exit_trap without a ret changes nothing */
	d = detour(code, sizeof(code), true, true);
	assert_block(&d, B(0xcc, 0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10,
			   0xe9, 0xfa, 0x0f, 0x00, 0x00), 0, -1);
	/* no int3: the jmp from SLOT+13: 0x401008 - 0x40000d = 0xffb */
	d = detour(code, sizeof(code), false, false);
	assert_block(&d, B(0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10,
			   0xe9, 0xfb, 0x0f, 0x00, 0x00), -1, -1);
}
END_TEST

START_TEST(detour_entry_riprel)
{
	struct insn_detour d;

	/* push %rbp; mov 0x2edb(%rip),%rax at ADDR+1 reads 0x401008 + 0x2edb = 0x403ee3.
	 * Its copy sits at SLOT+2 behind the int3 and ends at 0x400009:
	 * disp = 0x403ee3 - 0x400009 = 0x3eda (= 0x2edb + 0x1000 - 1);
	 * jmp from SLOT+14 to ADDR+8: 0x401008 - 0x40000e = 0xffa */
	d = detour(B(0x55, 0x48, 0x8b, 0x05, 0xdb, 0x2e, 0x00, 0x00), true, false);
	assert_block(&d, B(0xcc, 0x55, 0x48, 0x8b, 0x05, 0xda, 0x3e, 0x00, 0x00,
			   0xe9, 0xfa, 0x0f, 0x00, 0x00), 0, -1);

	/* lea -0x20(%rip),%rdi alone, no int3: -0x20 + 0x1000 = 0xfe0; jmp from SLOT+12 to
	 * ADDR+7: 0xffb */
	d = detour(B(0x48, 0x8d, 0x3d, 0xe0, 0xff, 0xff, 0xff), false, false);
	assert_block(&d, B(0x48, 0x8d, 0x3d, 0xe0, 0x0f, 0x00, 0x00,
			   0xe9, 0xfb, 0x0f, 0x00, 0x00), -1, -1);

	/* cmpl $5,0x10(%rip) behind an int3: the imm8 stays last;
	 * 0x10 + 0x1000 - 1 = 0x100f; jmp from SLOT+13 to ADDR+7: 0x401007 - 0x40000d = 0xffa */
	d = detour(B(0x83, 0x3d, 0x10, 0x00, 0x00, 0x00, 0x05), true, false);
	assert_block(&d, B(0xcc, 0x83, 0x3d, 0x0f, 0x10, 0x00, 0x00, 0x05,
			   0xe9, 0xfa, 0x0f, 0x00, 0x00), 0, -1);

	/* two rip-relative loads, each re-based for its own place in the block:
	 * movdqa 0x10(%rip),%xmm0 (8) at ADDR -> SLOT+1: 0x10 + 0x1000 - 1 = 0x100f;
	 * mov 0x2edb(%rip),%rax at ADDR+8 -> SLOT+9: 0x2edb + 0x1000 - 1 = 0x3eda;
	 * jmp from SLOT+21 to ADDR+15: 0x40100f - 0x400015 = 0xffa */
	d = detour(B(0x66, 0x0f, 0x6f, 0x05, 0x10, 0x00, 0x00, 0x00,
		     0x48, 0x8b, 0x05, 0xdb, 0x2e, 0x00, 0x00), true, false);
	assert_block(&d, B(0xcc, 0x66, 0x0f, 0x6f, 0x05, 0x0f, 0x10, 0x00, 0x00,
			   0x48, 0x8b, 0x05, 0xda, 0x3e, 0x00, 0x00,
			   0xe9, 0xfa, 0x0f, 0x00, 0x00), 0, -1);
}
END_TEST

START_TEST(detour_slot_above_site)
{
	/* slot 0x402000: site jmp 0x402000 - 0x401005 = 0xffb; the rip-relative copy at
	 * 0x402001: 0x2edb - 0x1000 - 1 = 0x1eda; jmp from 0x40200d to 0x401007: -0x1006 */
	struct insn_detour d = detour_at(B(0x48, 0x8b, 0x05, 0xdb, 0x2e, 0x00, 0x00), ADDR,
					 0x402000, true, false);

	ck_assert_mem_eq(d.jmp, ((const uint8_t[]){ 0xe9, 0xfb, 0x0f, 0x00, 0x00 }), 5);
	assert_block(&d, B(0xcc, 0x48, 0x8b, 0x05, 0xda, 0x1e, 0x00, 0x00,
			   0xe9, 0xfa, 0xef, 0xff, 0xff), 0, -1);
}
END_TEST

START_TEST(detour_exit_ret)
{
	struct insn_detour d;

	/* add $0x8,%rsp; ret: the copy, an int3, the ret; no jmp back */
	d = detour(B(0x48, 0x83, 0xc4, 0x08, 0xc3), false, true);
	assert_block(&d, B(0x48, 0x83, 0xc4, 0x08, 0xcc, 0xc3), -1, 4);
	/* both traps */
	d = detour(B(0x48, 0x83, 0xc4, 0x08, 0xc3), true, true);
	assert_block(&d, B(0xcc, 0x48, 0x83, 0xc4, 0x08, 0xcc, 0xc3), 0, 5);
	/* no trap at all */
	d = detour(B(0x48, 0x83, 0xc4, 0x08, 0xc3), false, false);
	assert_block(&d, B(0x48, 0x83, 0xc4, 0x08, 0xc3), -1, -1);
	/* ret $8 and rep ret are copied whole */
	d = detour(B(0x48, 0x83, 0xc4, 0x08, 0xc2, 0x08, 0x00), false, true);
	assert_block(&d, B(0x48, 0x83, 0xc4, 0x08, 0xcc, 0xc2, 0x08, 0x00), -1, 4);
	d = detour(B(0x48, 0x83, 0xc4, 0x08, 0xf3, 0xc3), false, true);
	assert_block(&d, B(0x48, 0x83, 0xc4, 0x08, 0xcc, 0xf3, 0xc3), -1, 4);
	/* pop %rbx; pop %rbp; pop %r12; pop %r13; ret (the run before a ret) */
	d = detour(B(0x5b, 0x5d, 0x41, 0x5c, 0x41, 0x5d, 0xc3), false, true);
	assert_block(&d, B(0x5b, 0x5d, 0x41, 0x5c, 0x41, 0x5d, 0xcc, 0xc3), -1, 6);
}
END_TEST

START_TEST(detour_entry_and_exit)
{
	/* the extended region of push %rbp; mov %rsp,%rbp; pop %rbp; ret */
	struct insn_detour d = detour(B(0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3), true, true);

	assert_block(&d, B(0xcc, 0x55, 0x48, 0x89, 0xe5, 0x5d, 0xcc, 0xc3), 0, 6);

	/* a rip-relative load then a ret: mov 0x2edb(%rip),%rax at SLOT+1, 0x3eda */
	d = detour(B(0x48, 0x8b, 0x05, 0xdb, 0x2e, 0x00, 0x00, 0xc3), true, true);
	assert_block(&d, B(0xcc, 0x48, 0x8b, 0x05, 0xda, 0x3e, 0x00, 0x00, 0xcc, 0xc3), 0, 8);
}
END_TEST

START_TEST(detour_span_limits)
{
	uint8_t nops[INSN_DETOUR_SPAN + 1];
	uint8_t want[INSN_DETOUR_SPAN + 6];
	struct insn_detour d;

	/* 24 one-byte nops: the longest region. int3 + 24 nops + jmp from SLOT+30 to
	 * ADDR+24: 0x401018 - 0x40001e = 0xffa */
	memset(nops, 0x90, sizeof(nops));
	d = detour(nops, INSN_DETOUR_SPAN, true, false);
	want[0] = 0xcc;
	memset(want + 1, 0x90, INSN_DETOUR_SPAN);
	memcpy(want + 1 + INSN_DETOUR_SPAN, ((const uint8_t[]){ 0xe9, 0xfa, 0x0f, 0x00, 0x00 }),
	       5);
	assert_block(&d, want, INSN_DETOUR_SPAN + 6, 0, -1);
	ck_assert_int_le(d.code_len, INSN_DETOUR_BLOCK);
	/* 5 nops: the shortest */
	d = detour(nops, INSN_DETOUR_JMP, false, false);
	ck_assert_uint_eq(d.code_len, 10);
	/* 25 or 4 bytes: refused */
	assert_detour_refused(nops, INSN_DETOUR_SPAN + 1, ADDR, SLOT);
	assert_detour_refused(nops, INSN_DETOUR_JMP - 1, ADDR, SLOT);
	assert_detour_refused(B(0x48, 0x83, 0xc4, 0x08), ADDR, SLOT);   /* add $8,%rsp: 4 */
	assert_detour_refused(B(0x5d, 0xc3), ADDR, SLOT);               /* pop; ret: 2 */
	assert_detour_refused(NULL, 0, ADDR, SLOT);
}
END_TEST

START_TEST(detour_refused)
{
	/* a ret that is not last */
	assert_detour_refused(B(0x5b, 0x5d, 0xc3, 0x48, 0x83, 0xc4, 0x08), ADDR, SLOT);
	assert_detour_refused(B(0x48, 0x83, 0xc4, 0x08, 0xc3, 0x90), ADDR, SLOT);
	/* a call, a jmp, a jcc, a loop, an indirect jmp or call */
	assert_detour_refused(B(0x55, 0xe8, 0x00, 0x01, 0x00, 0x00), ADDR, SLOT);
	assert_detour_refused(B(0xe8, 0x00, 0x01, 0x00, 0x00), ADDR, SLOT);
	assert_detour_refused(B(0x55, 0x48, 0x89, 0xe5, 0xeb, 0x10), ADDR, SLOT);
	assert_detour_refused(B(0x85, 0xff, 0x74, 0x10, 0x90, 0x90), ADDR, SLOT);
	assert_detour_refused(B(0x90, 0x90, 0x90, 0xe2, 0x10), ADDR, SLOT);
	assert_detour_refused(B(0x90, 0x90, 0x90, 0xff, 0xe0), ADDR, SLOT);
	assert_detour_refused(B(0x90, 0x90, 0x90, 0xff, 0xd0), ADDR, SLOT);
	/* a syscall, an int3, a ud2 */
	assert_detour_refused(B(0xb8, 0x3c, 0x00, 0x00, 0x00, 0x0f, 0x05), ADDR, SLOT);
	assert_detour_refused(B(0x55, 0x48, 0x89, 0xe5, 0xcc), ADDR, SLOT);
	assert_detour_refused(B(0x55, 0x48, 0x89, 0xe5, 0x0f, 0x0b), ADDR, SLOT);
	/* an eip-relative operand */
	assert_detour_refused(B(0x67, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00), ADDR, SLOT);
	/* undecodable, or the last instruction cut by the region's end */
	assert_detour_refused(B(0x55, 0x06, 0x90, 0x90, 0x90), ADDR, SLOT);
	assert_detour_refused(B(0x55, 0x48, 0x89, 0xe5, 0x48, 0x83), ADDR, SLOT);
}
END_TEST

START_TEST(detour_too_far)
{
	uint64_t addr = 0x7f00c0001000ULL, slot = addr - 0xc0000000ULL;

	/* 3 GiB apart: no jmp back, no rip-relative re-base, no jmp at the site */
	assert_detour_refused(B(0x55, 0x48, 0x89, 0xe5, 0x5d), addr, slot);
	assert_detour_refused(B(0x48, 0x8b, 0x05, 0xdb, 0x2e, 0x00, 0x00, 0xc3), addr, slot);
	assert_detour_refused(B(0x48, 0x83, 0xc4, 0x08, 0xc3), addr, slot);
}
END_TEST

START_TEST(detour_reach_limits)
{
	/* a ret region has no jmp back: only the site's jmp limits the slot,
	 * slot - (site + 5) in [INT32_MIN, INT32_MAX] */
	uint64_t site = 0x7f0000001000ULL;
	struct insn_detour d;

	d = detour_at(B(0x48, 0x83, 0xc4, 0x08, 0xc3), site, site + 5 + 0x7fffffffULL, false,
		      true);
	ck_assert_mem_eq(d.jmp, ((const uint8_t[]){ 0xe9, 0xff, 0xff, 0xff, 0x7f }), 5);
	d = detour_at(B(0x48, 0x83, 0xc4, 0x08, 0xc3), site, site + 5 - 0x80000000ULL, false,
		      true);
	ck_assert_mem_eq(d.jmp, ((const uint8_t[]){ 0xe9, 0x00, 0x00, 0x00, 0x80 }), 5);
	assert_detour_refused(B(0x48, 0x83, 0xc4, 0x08, 0xc3), site, site + 5 + 0x80000000ULL);
	assert_detour_refused(B(0x48, 0x83, 0xc4, 0x08, 0xc3), site, site + 5 - 0x80000001ULL);
}
END_TEST

/* ---- detours, run for real: the site's jmp written over the region, the block at
 * site + 0x1000 (same RWX mapping as the XOL tests), no int3s ---- */

static void exec_detour(uint8_t *site, size_t len)
{
	uint8_t *block = site + 0x1000;
	struct insn_detour d;
	const char *why;

	why = insn_plan_detour(dec, site, len, (uintptr_t)site, (uintptr_t)block, false, false,
			       &d);
	ck_assert_msg(why == NULL, "refused: %s", why);
	memcpy(block, d.code, d.code_len);
	memcpy(site, d.jmp, INSN_DETOUR_JMP);
}

START_TEST(exec_detour_entry)
{
	uint8_t *a = exec_map();

	if (!a)
		return;
	/* lea 0x1(%rdi,%rdi,1),%eax; add $2,%eax (the region, 7); ret */
	put(a, B(0x8d, 0x44, 0x3f, 0x01, 0x83, 0xc0, 0x02, 0xc3));
	exec_detour(a, 7);
	ck_assert_uint_eq(a[0], 0xe9);
	ck_assert_int_eq((int)((xol_fn)(uintptr_t)a)(20, 0), 43);
	munmap(a, 0x2000);
}
END_TEST

START_TEST(exec_detour_exit)
{
	uint8_t *a = exec_map();

	if (!a)
		return;
	/* mov %rdi,%rax; [add $5,%rax; ret] (the region, 5) */
	put(a, B(0x48, 0x89, 0xf8, 0x48, 0x83, 0xc0, 0x05, 0xc3));
	exec_detour(a + 3, 5);
	ck_assert_int_eq((int)((xol_fn)(uintptr_t)a)(10, 0), 15);
	munmap(a, 0x2000);
}
END_TEST

START_TEST(exec_detour_riprel_ret)
{
	uint8_t *a = exec_map();
	uint64_t magic = 0x1122334455667788ULL;

	if (!a)
		return;
	/* mov 0xf9(%rip),%rax (a + 7 + 0xf9 = a + 0x100); ret: one region through the ret */
	put(a, B(0x48, 0x8b, 0x05, 0xf9, 0x00, 0x00, 0x00, 0xc3));
	memcpy(a + 0x100, &magic, sizeof(magic));
	exec_detour(a, 8);
	ck_assert_uint_eq((uint64_t)((xol_fn)(uintptr_t)a)(0, 0), magic);
	munmap(a, 0x2000);
}
END_TEST

/* ---- short paths: unless a test says otherwise, start and code[0] are at ADDR ---- */

/* The traced entries a stops() callback knows (calls and jmps to them stop), and how
 * often it was asked about a call or jmp target; its stop sites (instructions where the
 * thread stops: entry sites, or exit sites when is_exit) and whether rets are untraced
 * (by default every ret is a traced exit). */
struct traced {
	uint64_t entry[4];
	int nr;
	int asked;
	uint64_t site[4];
	bool site_is_exit[4];
	int nr_sites;
	bool untraced_rets;
};

static enum insn_stop_answer traced_stops(uint64_t addr, enum insn_stop_query q, void *arg)
{
	struct traced *tr = arg;
	int i;

	switch (q) {
	case INSN_Q_AT:
		for (i = 0; i < tr->nr_sites; i++)
			if (tr->site[i] == addr)
				return tr->site_is_exit[i] ? INSN_STOPS_EXIT : INSN_STOPS_ENTRY;
		return INSN_STOPS_NOT;
	case INSN_Q_CALL:
		tr->asked++;
		for (i = 0; i < tr->nr; i++)
			if (tr->entry[i] == addr)
				return INSN_STOPS_ENTRY;
		return INSN_STOPS_NOT;
	case INSN_Q_RET:
		return tr->untraced_rets ? INSN_STOPS_NOT : INSN_STOPS_EXIT;
	}
	return INSN_STOPS_NOT;
}

static int short_path(const uint8_t *code, size_t len, uint64_t call_end, unsigned max,
		      struct traced *tr)
{
	return insn_short_path(dec, code, len, ADDR, ADDR, call_end, max, traced_stops, tr);
}

/* The ladder: back from a traced callee (start = its return address), count down and
 * call it again, or fall out of the loop into a call to something else:
 *   0x401000: 83 eb 01        sub $1,%ebx
 *   0x401003: 75 05           jne 0x40100a
 *   0x401005: e8 f6 0f 00 00  call G = 0x40100a + 0xff6 = 0x402000
 *   0x40100a: e8 f1 ef ff ff  call F = 0x40100f - 0x100f = 0x400000, ends at call_end */
static const uint8_t ladder[] = {
	0x83, 0xeb, 0x01, 0x75, 0x05, 0xe8, 0xf6, 0x0f, 0x00, 0x00,
	0xe8, 0xf1, 0xef, 0xff, 0xff,
};

START_TEST(short_ladder_traced)
{
	struct traced tr = { .entry = { 0x400000, 0x402000 }, .nr = 2 };

	ck_assert_int_eq(short_path(ladder, sizeof(ladder), 0x40100f, 16, &tr), 1);
	ck_assert_int_gt(tr.asked, 0);
	/* sub, jne, call: 3 on the longest path */
	ck_assert_int_eq(short_path(ladder, sizeof(ladder), 0x40100f, 3, &tr), 1);
	ck_assert_int_eq(short_path(ladder, sizeof(ladder), 0x40100f, 2, &tr), 0);
	/* the call ending at call_end must call a traced entry: an untraced F could work,
	 * then jump to the entry that stopped */
	tr = (struct traced){ .entry = { 0x402000 }, .nr = 1 };
	ck_assert_int_eq(short_path(ladder, sizeof(ladder), 0x40100f, 16, &tr), 0);
}
END_TEST

START_TEST(short_ladder_untraced)
{
	struct traced tr = { .entry = { 0x400000 }, .nr = 1 };

	/* out of the loop, call G runs an untraced function: not short */
	ck_assert_int_eq(short_path(ladder, sizeof(ladder), 0x40100f, 16, &tr), 0);
	/* call_end elsewhere: neither call is the stop */
	tr = (struct traced){ .entry = { 0x402000 }, .nr = 1 };
	ck_assert_int_eq(short_path(ladder, sizeof(ladder), 0x401010, 16, &tr), 0);
	/* a ret expected instead: no path reaches one */
	ck_assert_int_eq(short_path(ladder, sizeof(ladder), 0, 16, &tr), 0);
}
END_TEST

START_TEST(short_ladder_window)
{
	struct traced tr = { .entry = { 0x400000, 0x402000 }, .nr = 2 };
	/* The loop laid out the usual way round: the call sits just before start, and
	 * the window begins with it:
	 *   0x400ffb: e8 00 f0 ff ff  call F = 0x401000 - 0x1000 = 0x400000, ends at start
	 *   0x401000: 83 eb 01        sub $1,%ebx             <- start = call_end
	 *   0x401003: 75 f6           jne 0x400ffb (0x401005 - 10)
	 *   0x401005: e8 f6 0f 00 00  call G = 0x40100a + 0xff6 = 0x402000 */
	static const uint8_t code[] = {
		0xe8, 0x00, 0xf0, 0xff, 0xff, 0x83, 0xeb, 0x01, 0x75, 0xf6,
		0xe8, 0xf6, 0x0f, 0x00, 0x00,
	};
	uint64_t code_addr = ADDR - 5;

	ck_assert_int_eq(insn_short_path(dec, code, sizeof(code), code_addr, ADDR, ADDR, 16,
					 traced_stops, &tr), 1);
	/* G untraced */
	tr = (struct traced){ .entry = { 0x400000 }, .nr = 1 };
	ck_assert_int_eq(insn_short_path(dec, code, sizeof(code), code_addr, ADDR, ADDR, 16,
					 traced_stops, &tr), 0);
	/* a window that begins at start: jne leads out of it */
	tr = (struct traced){ .entry = { 0x400000, 0x402000 }, .nr = 2 };
	ck_assert_int_eq(insn_short_path(dec, code + 5, sizeof(code) - 5, ADDR, ADDR, ADDR, 16,
					 traced_stops, &tr), 0);
	/* start outside the window, before or after it */
	ck_assert_int_eq(insn_short_path(dec, code + 5, sizeof(code) - 5, ADDR, code_addr, ADDR,
					 16, traced_stops, &tr), 0);
	ck_assert_int_eq(insn_short_path(dec, code, 5, code_addr, ADDR, ADDR, 16, traced_stops,
					 &tr), 0);
}
END_TEST

START_TEST(short_ret)
{
	struct traced tr = { .entry = { 0 }, .nr = 0 };
	/* mov %rdi,%rax; add $1,%rax; ret */
	static const uint8_t code[] = { 0x48, 0x89, 0xf8, 0x48, 0x83, 0xc0, 0x01, 0xc3 };

	ck_assert_int_eq(short_path(code, sizeof(code), 0, 16, &tr), 1);
	ck_assert_int_eq(short_path(code, sizeof(code), 0, 3, &tr), 1);
	ck_assert_int_eq(short_path(code, sizeof(code), 0, 2, &tr), 0);
	/* a call expected: the ret leaves without one */
	ck_assert_int_eq(short_path(code, sizeof(code), ADDR + 0x100, 16, &tr), 0);
	ck_assert_int_eq(short_path(code, sizeof(code), ADDR + sizeof(code), 16, &tr), 0);
	/* ret $8, rep ret */
	ck_assert_int_eq(short_path(B(0x5d, 0xc2, 0x08, 0x00), 0, 16, &tr), 1);
	ck_assert_int_eq(short_path(B(0x5d, 0xf3, 0xc3), 0, 16, &tr), 1);
	ck_assert_int_eq(tr.asked, 0);
}
END_TEST

START_TEST(short_loop)
{
	struct traced tr = { .entry = { 0 }, .nr = 0 };

	/* 0x401000: 31 c0  xor %eax,%eax
	 * 0x401002: ff c9  dec %ecx
	 * 0x401004: 75 fc  jne 0x401002
	 * 0x401006: c3     ret */
	ck_assert_int_eq(short_path(B(0x31, 0xc0, 0xff, 0xc9, 0x75, 0xfc, 0xc3), 0, 16, &tr), 0);
	/* the same with jne 0x401006 (75 00): both arms end at the ret */
	ck_assert_int_eq(short_path(B(0x31, 0xc0, 0xff, 0xc9, 0x75, 0x00, 0xc3), 0, 16, &tr), 1);
	/* nop; jmp 0x401000 (eb fd); and jmp . (eb fe) */
	ck_assert_int_eq(short_path(B(0x90, 0xeb, 0xfd, 0xc3), 0, 16, &tr), 0);
	ck_assert_int_eq(short_path(B(0xeb, 0xfe, 0xc3), 0, 16, &tr), 0);
}
END_TEST

START_TEST(short_loop_insns)
{
	struct traced tr = { .entry = { 0 }, .nr = 0 };

	/* loop 0x401002 / jrcxz 0x401002, then ret: both ways end at the ret, still no */
	ck_assert_int_eq(short_path(B(0xe2, 0x00, 0xc3), 0, 16, &tr), 0);
	ck_assert_int_eq(short_path(B(0xe3, 0x00, 0xc3), 0, 16, &tr), 0);
}
END_TEST

START_TEST(short_indirect)
{
	struct traced tr = { .entry = { 0 }, .nr = 0 };

	/* jmp *%rax; jmp *0x10(%rip) */
	ck_assert_int_eq(short_path(B(0xff, 0xe0), 0, 16, &tr), 0);
	ck_assert_int_eq(short_path(B(0xff, 0xe0), ADDR + 2, 16, &tr), 0);
	ck_assert_int_eq(short_path(B(0xff, 0x25, 0x10, 0x00, 0x00, 0x00), 0, 16, &tr), 0);
	/* nop; call *%rax (ends at ADDR + 3): even at call_end a call through a pointer
	 * may run untraced code first, which then jumps to the traced entry */
	ck_assert_int_eq(short_path(B(0x90, 0xff, 0xd0), ADDR + 3, 16, &tr), 0);
	ck_assert_int_eq(short_path(B(0x90, 0xff, 0xd0, 0xc3), ADDR + 4, 16, &tr), 0);
	ck_assert_int_eq(short_path(B(0x90, 0xff, 0xd0, 0xc3), 0, 16, &tr), 0);
	/* call *0x10(%rip), 6 bytes */
	ck_assert_int_eq(short_path(B(0xff, 0x15, 0x10, 0x00, 0x00, 0x00), ADDR + 6, 16, &tr),
			 0);
	ck_assert_int_eq(short_path(B(0xff, 0x15, 0x10, 0x00, 0x00, 0x00), ADDR + 5, 16, &tr),
			 0);
	ck_assert_int_eq(tr.asked, 0);
}
END_TEST

START_TEST(short_direct_call)
{
	struct traced tr = { .entry = { 0 }, .nr = 0 };
	/* nop; call 0x402000 (0x402000 - 0x401006 = 0xffa); ret */
	static const uint8_t code[] = { 0x90, 0xe8, 0xfa, 0x0f, 0x00, 0x00, 0xc3 };

	/* the call ending at call_end is the stop if it calls a traced entry; an untraced
	 * callee could work and then jump to the entry (same return address) */
	ck_assert_int_eq(short_path(code, sizeof(code), ADDR + 6, 16, &tr), 0);
	tr = (struct traced){ .entry = { 0x402000 }, .nr = 1 };
	ck_assert_int_eq(short_path(code, sizeof(code), ADDR + 6, 16, &tr), 1);
	tr = (struct traced){ .nr = 0 };
	/* an untraced call on the way to the ret, or to another call_end */
	ck_assert_int_eq(short_path(code, sizeof(code), 0, 16, &tr), 0);
	ck_assert_int_eq(short_path(code, sizeof(code), ADDR + 7, 16, &tr), 0);
	/* a traced callee would have stopped there: pruned, but nothing else reaches */
	tr = (struct traced){ .entry = { 0x402000 }, .nr = 1 };
	ck_assert_int_eq(short_path(code, sizeof(code), 0, 16, &tr), 0);
	ck_assert_int_eq(tr.asked, 1);
}
END_TEST

START_TEST(short_syscall)
{
	struct traced tr = { .entry = { 0 }, .nr = 0 };

	/* mov $39,%eax; syscall; ret, and the same without the syscall */
	ck_assert_int_eq(short_path(B(0xb8, 0x27, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xc3), 0, 16,
				    &tr), 0);
	ck_assert_int_eq(short_path(B(0xb8, 0x27, 0x00, 0x00, 0x00, 0xc3), 0, 16, &tr), 1);
	/* sysenter; int $0x80 */
	ck_assert_int_eq(short_path(B(0x0f, 0x34, 0xc3), 0, 16, &tr), 0);
	ck_assert_int_eq(short_path(B(0xcd, 0x80, 0xc3), 0, 16, &tr), 0);
	/* on one arm only: test %edi,%edi; je 0x401006; syscall; ret */
	ck_assert_int_eq(short_path(B(0x85, 0xff, 0x74, 0x02, 0x0f, 0x05, 0xc3), 0, 16, &tr),
			 0);
}
END_TEST

START_TEST(short_traps)
{
	struct traced tr = { .entry = { 0 }, .nr = 0 };

	/* int3; ret / ud2; ret / hlt; ret / nop; int3 before a call at call_end */
	ck_assert_int_eq(short_path(B(0xcc, 0xc3), 0, 16, &tr), 0);
	ck_assert_int_eq(short_path(B(0x0f, 0x0b, 0xc3), 0, 16, &tr), 0);
	ck_assert_int_eq(short_path(B(0xf4, 0xc3), 0, 16, &tr), 0);
	ck_assert_int_eq(short_path(B(0x90, 0xcc, 0xe8, 0xf6, 0xef, 0xff, 0xff), ADDR + 7, 16,
				    &tr), 0);
	tr = (struct traced){ .entry = { 0x400000 }, .nr = 1 };
	ck_assert_int_eq(short_path(B(0x90, 0xcc, 0xe8, 0xf6, 0xef, 0xff, 0xff), ADDR + 7, 16,
				    &tr), 0);
	/* nop; nop; call 0x400000 (0x401007 - 0x1007) */
	ck_assert_int_eq(short_path(B(0x90, 0x90, 0xe8, 0xf9, 0xef, 0xff, 0xff), ADDR + 7, 16,
				    &tr), 1);
}
END_TEST

START_TEST(short_max_insns)
{
	struct traced tr = { .entry = { 0 }, .nr = 0 };
	/* 5 nops, ret: 6 instructions */
	static const uint8_t code[] = { 0x90, 0x90, 0x90, 0x90, 0x90, 0xc3 };

	ck_assert_int_eq(short_path(code, sizeof(code), 0, 6, &tr), 1);
	ck_assert_int_eq(short_path(code, sizeof(code), 0, 5, &tr), 0);
	ck_assert_int_eq(short_path(code, sizeof(code), 0, 0, &tr), 0);
	ck_assert_int_eq(short_path(code, sizeof(code), 0, 100000, &tr), 1);
	ck_assert_int_eq(short_path(code, sizeof(code), 0, ~0u, &tr), 1);
}
END_TEST

START_TEST(short_long_path)
{
	struct traced tr = { .entry = { 0 }, .nr = 0 };
	uint8_t code[101];

	/* 100 nops, ret: more than fits the walk's on-stack buffers */
	memset(code, 0x90, sizeof(code));
	code[100] = 0xc3;
	ck_assert_int_eq(short_path(code, sizeof(code), 0, 101, &tr), 1);
	ck_assert_int_eq(short_path(code, sizeof(code), 0, 100, &tr), 0);
	ck_assert_int_eq(short_path(code, sizeof(code), 0, 1000, &tr), 1);
	/* jmp . at the end instead: a loop found on a long path */
	code[99] = 0xeb;
	code[100] = 0xfe;
	ck_assert_int_eq(short_path(code, sizeof(code), 0, 1000, &tr), 0);
}
END_TEST

START_TEST(short_diamond)
{
	struct traced tr = { .entry = { 0 }, .nr = 0 };
	/* 0x401000: 85 ff           test %edi,%edi
	 * 0x401002: 74 07           je 0x40100b
	 * 0x401004: b8 01 00 00 00  mov $1,%eax
	 * 0x401009: eb 05           jmp 0x401010
	 * 0x40100b: b8 02 00 00 00  mov $2,%eax
	 * 0x401010: c3              ret           (both arms join here) */
	static const uint8_t code[] = {
		0x85, 0xff, 0x74, 0x07, 0xb8, 0x01, 0x00, 0x00, 0x00, 0xeb, 0x05,
		0xb8, 0x02, 0x00, 0x00, 0x00, 0xc3,
	};

	ck_assert_int_eq(short_path(code, sizeof(code), 0, 16, &tr), 1);
	/* the fall-through arm is 5 long: test, je, mov, jmp, ret */
	ck_assert_int_eq(short_path(code, sizeof(code), 0, 5, &tr), 1);
	ck_assert_int_eq(short_path(code, sizeof(code), 0, 4, &tr), 0);
	ck_assert_int_eq(short_path(code, sizeof(code), ADDR + 0x100, 16, &tr), 0);
}
END_TEST

START_TEST(short_budget)
{
	struct traced tr = { .entry = { 0 }, .nr = 0 };

	/* je .+2 n times, then ret: 2^n paths of n + 1 instructions, joins walked again.
	 * n = 3: 1 + 2 + 4 + 8 = 15 decoded, within 4 * 5; n = 4: 31, past 20. */
	ck_assert_int_eq(short_path(B(0x74, 0x00, 0x74, 0x00, 0x74, 0x00, 0xc3), 0, 5, &tr), 1);
	ck_assert_int_eq(short_path(B(0x74, 0x00, 0x74, 0x00, 0x74, 0x00, 0x74, 0x00, 0xc3), 0,
				    5, &tr), 0);
}
END_TEST

START_TEST(short_tail_jmp)
{
	struct traced tr = { .entry = { 0x403000, 0x400000 }, .nr = 2 };
	/* 0x401000: 85 ff           test %edi,%edi
	 * 0x401002: 74 05           je 0x401009
	 * 0x401004: e8 f7 ef ff ff  call 0x400000 (0x401009 - 0x1009), ends at call_end
	 * 0x401009: e9 f2 1f 00 00  jmp 0x403000 (0x40100e + 0x1ff2): a tail call */
	static const uint8_t code[] = {
		0x85, 0xff, 0x74, 0x05, 0xe8, 0xf7, 0xef, 0xff, 0xff,
		0xe9, 0xf2, 0x1f, 0x00, 0x00,
	};

	ck_assert_int_eq(short_path(code, sizeof(code), 0x401009, 16, &tr), 1);
	ck_assert_int_gt(tr.asked, 0);
	/* an untraced tail call leaves the code: not proven */
	tr = (struct traced){ .entry = { 0x400000 }, .nr = 1 };
	ck_assert_int_eq(short_path(code, sizeof(code), 0x401009, 16, &tr), 0);
	/* a traced tail call alone reaches no stop: jmp 0x403000 (0x401005 + 0x1ffb) */
	tr = (struct traced){ .entry = { 0x403000 }, .nr = 1 };
	ck_assert_int_eq(short_path(B(0xe9, 0xfb, 0x1f, 0x00, 0x00), 0, 16, &tr), 0);
	ck_assert_int_eq(short_path(B(0xe9, 0xfb, 0x1f, 0x00, 0x00), ADDR + 5, 16, &tr), 0);
}
END_TEST

START_TEST(short_jcc_to_traced)
{
	struct traced tr = { .entry = { 0x403000 }, .nr = 1 };
	/* je 0x403000 (0x401006 + 0x1ffa): a conditional tail call; ret */
	static const uint8_t code[] = { 0x0f, 0x84, 0xfa, 0x1f, 0x00, 0x00, 0xc3 };

	ck_assert_int_eq(short_path(code, sizeof(code), 0, 16, &tr), 1);
	tr.nr = 0;
	ck_assert_int_eq(short_path(code, sizeof(code), 0, 16, &tr), 0);
}
END_TEST

START_TEST(short_past_len)
{
	struct traced tr = { .entry = { 0 }, .nr = 0 };

	/* nop; nop and no end */
	ck_assert_int_eq(short_path(B(0x90, 0x90), 0, 16, &tr), 0);
	/* nop; call rel32 cut after 2 bytes of its displacement */
	ck_assert_int_eq(short_path(B(0x90, 0xe8, 0x00, 0x01), ADDR + 6, 16, &tr), 0);
	/* jmp 0x401012 past the end; jmp 0x400ffe before the start */
	ck_assert_int_eq(short_path(B(0xeb, 0x10, 0xc3), 0, 16, &tr), 0);
	ck_assert_int_eq(short_path(B(0xeb, 0xfc, 0xc3), 0, 16, &tr), 0);
	/* je 0x401005 (just past the end) on one arm only: 74 02; nop; ret */
	ck_assert_int_eq(short_path(B(0x74, 0x02, 0x90, 0xc3), 0, 16, &tr), 0);
	ck_assert_int_eq(short_path(B(0x74, 0x01, 0x90, 0xc3), 0, 16, &tr), 1);
	ck_assert_int_eq(insn_short_path(dec, NULL, 0, ADDR, ADDR, 0, 16, traced_stops, &tr), 0);
	ck_assert_int_eq(insn_short_path(dec, B(0xc3), ADDR, ADDR, 0, 16, traced_stops, &tr), 1);
	ck_assert_int_eq(insn_short_path(dec, (const uint8_t[]){ 0xc3 }, 0, ADDR, ADDR, 0, 16,
					 traced_stops, &tr), 0);
}
END_TEST

START_TEST(short_bad_byte)
{
	struct traced tr = { .entry = { 0 }, .nr = 0 };

	/* nop; (06: push %es, invalid in 64-bit mode); ret */
	ck_assert_int_eq(short_path(B(0x90, 0x06, 0xc3), 0, 16, &tr), 0);
	/* on the fall-through arm of je 0x401003 only */
	ck_assert_int_eq(short_path(B(0x74, 0x01, 0x06, 0xc3), 0, 16, &tr), 0);
	ck_assert_int_eq(short_path(B(0x74, 0x01, 0x90, 0xc3), 0, 16, &tr), 1);
}
END_TEST

/* A path may go on after an untraced call, but must then end pruned. The end of a
 * loop at the end of main (start = the callee's return address):
 *   0x401000: 48 83 45 f8 01  addq $1,-8(%rbp)
 *   0x401005: 7c 07           jl 0x40100e
 *   0x401007: e8 f4 0f 00 00  call 0x402000 (printf: untraced)
 *   0x40100c: c9              leave
 *   0x40100d: c3              ret (main's: a traced exit, so that path stops there)
 *   0x40100e: e8 ed ef ff ff  call F = 0x400000, ends at call_end 0x401013 */
static const uint8_t loop_end[] = {
	0x48, 0x83, 0x45, 0xf8, 0x01, 0x7c, 0x07, 0xe8, 0xf4, 0x0f, 0x00, 0x00, 0xc9, 0xc3,
	0xe8, 0xed, 0xef, 0xff, 0xff,
};

START_TEST(short_untraced_call_then_pruned)
{
	struct traced tr = { .entry = { 0x400000 }, .nr = 1 };

	ck_assert_int_eq(short_path(loop_end, sizeof(loop_end), 0x401013, 16, &tr), 1);
	/* a ret that is no traced exit goes back to code nobody knows */
	tr.untraced_rets = true;
	ck_assert_int_eq(short_path(loop_end, sizeof(loop_end), 0x401013, 16, &tr), 0);
	/* unless the call before it stops */
	tr.entry[1] = 0x402000;
	tr.nr = 2;
	ck_assert_int_eq(short_path(loop_end, sizeof(loop_end), 0x401013, 16, &tr), 1);
	/* a tainted path to the stop: call untraced; call F (call_end) */
	tr = (struct traced){ .entry = { 0x400000 }, .nr = 1 };
	ck_assert_int_eq(short_path(B(0xe8, 0xfb, 0x0f, 0x00, 0x00, 0xe8, 0xf6, 0xef, 0xff, 0xff),
				    0x40100a, 16, &tr), 0);
	/* ... or to a ret, where an exit was next */
	ck_assert_int_eq(short_path(B(0xe8, 0xfb, 0x0f, 0x00, 0x00, 0x5d, 0xc3), 0, 16, &tr), 0);
	/* a call through a pointer that is not the stop is untraced work too */
	ck_assert_int_eq(short_path(B(0xff, 0xd0, 0x5d, 0xc3), 0, 16, &tr), 0);
}
END_TEST

/* Stop sites on the way (INSN_Q_AT): where an exit is next, an exit site is the stop
 * (a ret's detour starts before the ret); any other site ends its path pruned. */
START_TEST(short_stop_sites)
{
	struct traced tr = { .untraced_rets = true };
	/* mov %eax,%eax x 3; pop %rbp (0x401006: an exit's site); ret */
	static const uint8_t exit_site[] = { 0x89, 0xc0, 0x89, 0xc0, 0x89, 0xc0, 0x5d, 0xc3 };
	/* test; je 0x401005; ret; 0x401005: nop (an entry's site); jmp *%rax */
	static const uint8_t entry_site[] = { 0x85, 0xc0, 0x74, 0x01, 0xc3, 0x90, 0xff, 0xe0 };
	/* test; jne 0x401006; 0x401004: jmp *%rax (an exit's site); 0x401006: call F,
	 * ending at 0x40100b */
	static const uint8_t exit_then_call[] = { 0x85, 0xc0, 0x75, 0x02, 0xff, 0xe0,
						  0xe8, 0xf5, 0xef, 0xff, 0xff };

	ck_assert_int_eq(short_path(exit_site, sizeof(exit_site), 0, 16, &tr), 0);
	tr.site[0] = ADDR + 6;
	tr.site_is_exit[0] = true;
	tr.nr_sites = 1;
	ck_assert_int_eq(short_path(exit_site, sizeof(exit_site), 0, 16, &tr), 1);
	/* an exit's site where a call is next: that exit would have stopped first */
	ck_assert_int_eq(short_path(exit_site, sizeof(exit_site), ADDR + 20, 16, &tr), 0);

	tr = (struct traced){ .nr = 0 };
	ck_assert_int_eq(short_path(entry_site, sizeof(entry_site), 0, 16, &tr), 0);
	tr.site[0] = ADDR + 5;
	tr.nr_sites = 1;
	ck_assert_int_eq(short_path(entry_site, sizeof(entry_site), 0, 16, &tr), 1);
	/* an entry's site never ends a path well, even where an exit is next */
	tr.untraced_rets = true;
	ck_assert_int_eq(short_path(entry_site, sizeof(entry_site), 0, 16, &tr), 0);

	tr = (struct traced){ .entry = { 0x400000 }, .nr = 1 };
	ck_assert_int_eq(short_path(exit_then_call, sizeof(exit_then_call), 0x40100b, 16, &tr),
			 0);
	tr.site[0] = ADDR + 4;
	tr.site_is_exit[0] = true;
	tr.nr_sites = 1;
	ck_assert_int_eq(short_path(exit_then_call, sizeof(exit_then_call), 0x40100b, 16, &tr),
			 1);

	/* the thread has just left its stop at start: start is never asked about */
	tr = (struct traced){ .nr = 0 };
	tr.site[0] = ADDR;
	tr.nr_sites = 1;
	ck_assert_int_eq(short_path(B(0x5d, 0xc3), 0, 16, &tr), 1);
}
END_TEST

/* A traced ret where a call is next would have stopped: pruned.
 * test; je 0x401005; ret; 0x401005: call F (ends at 0x40100a). */
START_TEST(short_traced_ret_pruned)
{
	struct traced tr = { .entry = { 0x400000 }, .nr = 1 };
	static const uint8_t code[] = { 0x85, 0xc0, 0x74, 0x01, 0xc3, 0xe8, 0xf6, 0xef, 0xff, 0xff };

	ck_assert_int_eq(short_path(code, sizeof(code), 0x40100a, 16, &tr), 1);
	tr.untraced_rets = true;
	ck_assert_int_eq(short_path(code, sizeof(code), 0x40100a, 16, &tr), 0);
}
END_TEST

/* One instruction, but not a short one: rep string operations, cpuid (a VM exit),
 * pause, rdrand, xsave. Without rep a string operation is one short step, and f2/f3 as
 * the mandatory prefix of an SSE move is no rep. Each before a ret (call_end 0). */
START_TEST(short_slow_insns)
{
	struct traced tr = { .nr = 0 };

	/* rep stos %rax,(%rdi); rep movsb; repne scasb */
	ck_assert_int_eq(short_path(B(0xf3, 0x48, 0xab, 0xc3), 0, 16, &tr), 0);
	ck_assert_int_eq(short_path(B(0xf3, 0xa4, 0xc3), 0, 16, &tr), 0);
	ck_assert_int_eq(short_path(B(0xf2, 0xae, 0xc3), 0, 16, &tr), 0);
	/* stos %rax,(%rdi); movsb: one step each */
	ck_assert_int_eq(short_path(B(0x48, 0xab, 0xc3), 0, 16, &tr), 1);
	ck_assert_int_eq(short_path(B(0xa4, 0xc3), 0, 16, &tr), 1);
	/* movsd %xmm1,%xmm0 (f2 0f 10 c1); movss (f3 0f 10 c1) */
	ck_assert_int_eq(short_path(B(0xf2, 0x0f, 0x10, 0xc1, 0xc3), 0, 16, &tr), 1);
	ck_assert_int_eq(short_path(B(0xf3, 0x0f, 0x10, 0xc1, 0xc3), 0, 16, &tr), 1);
	/* cpuid; pause; rdrand %eax; xsave (%rdi) */
	ck_assert_int_eq(short_path(B(0x0f, 0xa2, 0xc3), 0, 16, &tr), 0);
	ck_assert_int_eq(short_path(B(0xf3, 0x90, 0xc3), 0, 16, &tr), 0);
	ck_assert_int_eq(short_path(B(0x0f, 0xc7, 0xf0, 0xc3), 0, 16, &tr), 0);
	ck_assert_int_eq(short_path(B(0x0f, 0xae, 0x27, 0xc3), 0, 16, &tr), 0);
	/* endbr64 (f3 0f 1e fa) stays a nop */
	ck_assert_int_eq(short_path(B(0xf3, 0x0f, 0x1e, 0xfa, 0xc3), 0, 16, &tr), 1);
}
END_TEST

START_TEST(short_stops_null)
{
	/* no stops(): nothing is traced */
	ck_assert_int_eq(insn_short_path(dec, B(0x5d, 0xc3), ADDR, ADDR, 0, 16, NULL, NULL),
			 1);
	ck_assert_int_eq(insn_short_path(dec, ladder, sizeof(ladder), ADDR, ADDR, 0x40100f, 16,
					 NULL, NULL), 0);
	/* the call at call_end, through a pointer or direct (the ladder's call F): its
	 * target does not stop, so it is not proven to be the stop */
	ck_assert_int_eq(insn_short_path(dec, B(0xff, 0xd0), ADDR, ADDR, ADDR + 2, 16, NULL,
					 NULL), 0);
	ck_assert_int_eq(insn_short_path(dec, ladder + 10, 5, ADDR, ADDR, ADDR + 5, 16, NULL,
					 NULL), 0);
	/* jmp 0x403000: untraced, out of the code */
	ck_assert_int_eq(insn_short_path(dec, B(0xe9, 0xfb, 0x1f, 0x00, 0x00), ADDR, ADDR, 0,
					 16, NULL, NULL), 0);
}
END_TEST

static TCase *tcase(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, setup, teardown);
	suite_add_tcase(s, tc);
	return tc;
}

static Suite *insn_suite(void)
{
	Suite *s = suite_create("insn");
	TCase *tc;

	tc = tcase(s, "decoder");
	tcase_add_test(tc, decoder_new_free);
	tcase_add_test(tc, decode_rejects_bad_bytes);

	tc = tcase(s, "classify");
	tcase_add_loop_test(tc, decode_kinds, 0, sizeof(kind_cases) / sizeof(kind_cases[0]));

	tc = tcase(s, "prologue");
	tcase_add_test(tc, plan_endbr64);
	tcase_add_test(tc, plan_nops);
	tcase_add_loop_test(tc, plan_nop_patch_decodes, 2, 16);
	tcase_add_test(tc, plan_push_rbp);
	tcase_add_test(tc, plan_push_r12);
	tcase_add_test(tc, plan_mov_rsp_rbp);
	tcase_add_test(tc, plan_sub_rsp);
	tcase_add_test(tc, plan_xor_eax);
	tcase_add_test(tc, plan_slot_above_site);
	tcase_add_test(tc, plan_syscall);

	tc = tcase(s, "ret");
	tcase_add_test(tc, plan_rets);

	tc = tcase(s, "riprel");
	tcase_add_test(tc, riprel_mov_load);
	tcase_add_test(tc, riprel_mov_slot_above);
	tcase_add_test(tc, riprel_lea);
	tcase_add_test(tc, riprel_cmp_imm);
	tcase_add_test(tc, riprel_movq_imm32);
	tcase_add_test(tc, riprel_sse_66);
	tcase_add_test(tc, riprel_mov_ax_store);
	tcase_add_test(tc, riprel_vex);
	tcase_add_test(tc, riprel_jmp_ind);
	tcase_add_test(tc, riprel_disp_limits);
	tcase_add_test(tc, riprel_slot_too_far);
	tcase_add_test(tc, eip_relative_refused);

	tc = tcase(s, "branch");
	tcase_add_test(tc, plan_jmp_direct);
	tcase_add_test(tc, plan_jcc_rel8);
	tcase_add_test(tc, plan_jcc_rel8_backwards);
	tcase_add_test(tc, plan_jcc_rel32);
	tcase_add_loop_test(tc, plan_jcc_all_conditions, 0, 16);
	tcase_add_test(tc, plan_jcc_too_far);
	tcase_add_test(tc, plan_call_rel32);
	tcase_add_test(tc, plan_call_backwards);
	tcase_add_test(tc, plan_call_too_far);

	tc = tcase(s, "indirect");
	tcase_add_test(tc, plan_jmp_ind_reg);
	tcase_add_test(tc, plan_call_ind_reg);
	tcase_add_test(tc, plan_call_ind_riprel);
	tcase_add_test(tc, plan_call_ind_refused);

	tc = tcase(s, "refuse");
	tcase_add_test(tc, plan_traps_refused);
	tcase_add_test(tc, plan_loops_refused);
	tcase_add_test(tc, plan_bad_bytes);

	tc = tcase(s, "execute");
	tcase_add_test(tc, exec_riprel_load);
	tcase_add_test(tc, exec_sse_66_load);
	tcase_add_test(tc, exec_call_rel32);
	tcase_add_test(tc, exec_call_ind);
	tcase_add_test(tc, exec_call_ind_riprel);
	tcase_add_test(tc, exec_jcc);

	tc = tcase(s, "scan_body");
	tcase_add_test(tc, scan_body_exits);
	tcase_add_test(tc, scan_body_boundaries);
	tcase_add_test(tc, scan_body_tail_jump_to_self);
	tcase_add_test(tc, scan_body_bad_byte);
	tcase_add_test(tc, scan_body_truncated);
	tcase_add_test(tc, scan_body_calls_not_exits);
	tcase_add_test(tc, scan_body_ex_targets);
	tcase_add_test(tc, scan_body_ex_targets_only);
	tcase_add_test(tc, scan_body_ex_no_target_fn);
	tcase_add_test(tc, scan_body_ex_bad_byte);
	tcase_add_test(tc, scan_body_prev_pops);
	tcase_add_test(tc, scan_body_prev_reset);
	tcase_add_test(tc, scan_body_prev_cap);
	tcase_add_test(tc, scan_body_prev_nops_riprel);
	tcase_add_test(tc, scan_body_ex_callback_reuses_decoder);

	tc = tcase(s, "detour");
	tcase_add_test(tc, movable_insns);
	tcase_add_test(tc, movable_refused);
	tcase_add_test(tc, movable_bad_bytes);
	tcase_add_test(tc, region_prologue);
	tcase_add_test(tc, region_whole_function);
	tcase_add_test(tc, region_ret_in_first_5);
	tcase_add_test(tc, region_riprel_extension);
	tcase_add_test(tc, region_extension_blocked);
	tcase_add_test(tc, region_none);
	tcase_add_test(tc, region_long_insn);
	tcase_add_test(tc, detour_entry_prologue);
	tcase_add_test(tc, detour_entry_riprel);
	tcase_add_test(tc, detour_slot_above_site);
	tcase_add_test(tc, detour_exit_ret);
	tcase_add_test(tc, detour_entry_and_exit);
	tcase_add_test(tc, detour_span_limits);
	tcase_add_test(tc, detour_refused);
	tcase_add_test(tc, detour_too_far);
	tcase_add_test(tc, detour_reach_limits);
	tcase_add_test(tc, exec_detour_entry);
	tcase_add_test(tc, exec_detour_exit);
	tcase_add_test(tc, exec_detour_riprel_ret);

	tc = tcase(s, "short_path");
	tcase_add_test(tc, short_ladder_traced);
	tcase_add_test(tc, short_ladder_untraced);
	tcase_add_test(tc, short_ladder_window);
	tcase_add_test(tc, short_ret);
	tcase_add_test(tc, short_loop);
	tcase_add_test(tc, short_loop_insns);
	tcase_add_test(tc, short_indirect);
	tcase_add_test(tc, short_direct_call);
	tcase_add_test(tc, short_syscall);
	tcase_add_test(tc, short_traps);
	tcase_add_test(tc, short_max_insns);
	tcase_add_test(tc, short_long_path);
	tcase_add_test(tc, short_diamond);
	tcase_add_test(tc, short_budget);
	tcase_add_test(tc, short_tail_jmp);
	tcase_add_test(tc, short_jcc_to_traced);
	tcase_add_test(tc, short_past_len);
	tcase_add_test(tc, short_bad_byte);
	tcase_add_test(tc, short_stops_null);
	tcase_add_test(tc, short_slow_insns);
	tcase_add_test(tc, short_untraced_call_then_pruned);
	tcase_add_test(tc, short_stop_sites);
	tcase_add_test(tc, short_traced_ret_pruned);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(insn_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
