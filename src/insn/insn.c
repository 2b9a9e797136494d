/* SPDX-License-Identifier: MIT */
/* insn.c - x86-64 instruction analysis on top of capstone 4.0.2: classification, body
 * scans and breakpoint-site plans (rewrite, emulate, or execute out of line). The only
 * capstone user; no cs_insn leaves this file. Every XOL copy is re-decoded and checked
 * (same instruction, same length, same absolute target or effective address) before a
 * plan is handed out, so a capstone surprise ends in PLAN_REFUSE, never in bad code. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "calltrace/insn.h"

struct insn_decoder {
	csh handle;
	cs_insn *insn;        /* the last instruction decoded, detail filled */
};

/* Encodings of the instructions emitted into XOL slots. */
#define OP_JMP_REL32    0xe9
#define OP_PUSH_RAX     0x50
#define JMP_REL32_LEN   5
#define JCC_REL32_LEN   6
#define CALL_SEQ_LEN    15    /* push %rax; movabs $ret,%rax; xchg %rax,(%rsp) */
#define MAX_INSN_LEN    15

int insn_decoder_new(struct insn_decoder **out)
{
	struct insn_decoder *d;
	cs_err err;

	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	err = cs_open(CS_ARCH_X86, CS_MODE_64, &d->handle);
	if (err != CS_ERR_OK) {
		free(d);
		return err == CS_ERR_MEM ? -ENOMEM : -EINVAL;
	}
	if (cs_option(d->handle, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK) {
		cs_close(&d->handle);
		free(d);
		return -EINVAL;
	}
	d->insn = cs_malloc(d->handle);
	if (!d->insn) {
		cs_close(&d->handle);
		free(d);
		return -ENOMEM;
	}
	*out = d;
	return 0;
}

void insn_decoder_free(struct insn_decoder *d)
{
	if (!d)
		return;
	cs_free(d->insn, 1);
	cs_close(&d->handle);
	free(d);
}

static bool has_group(const cs_insn *ci, uint8_t grp)
{
	const cs_detail *det = ci->detail;
	int i;

	for (i = 0; i < det->groups_count; i++)
		if (det->groups[i] == grp)
			return true;
	return false;
}

/* The memory operand based on %rip, or NULL. */
static const cs_x86_op *riprel_operand(const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;
	int i;

	for (i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM && x->operands[i].mem.base == X86_REG_RIP)
			return &x->operands[i];
	return NULL;
}

static bool uses_eip_base(const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;
	int i;

	for (i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM && x->operands[i].mem.base == X86_REG_EIP)
			return true;
	return false;
}

static bool is_jcc_opcode(const cs_x86 *x)
{
	return (x->opcode[0] >= 0x70 && x->opcode[0] <= 0x7f) ||
	       (x->opcode[0] == 0x0f && x->opcode[1] >= 0x80 && x->opcode[1] <= 0x8f);
}

/* The condition code (low nibble of the opcode) of a jcc rel8 or rel32. */
static uint8_t jcc_condition(const cs_x86 *x)
{
	return x->opcode[0] == 0x0f ? (x->opcode[1] & 0x0f) : (x->opcode[0] & 0x0f);
}

static enum insn_kind classify_branch(const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;

	/* capstone decodes 0x66-prefixed near branches as rel16, Intel CPUs ignore the
	 * prefix in 64-bit mode: the two disagree on the length, so never touch them. */
	if (x->prefix[2] == 0x66)
		return INSN_TRAP;
	if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return INSN_TRAP;
	switch (ci->id) {
	case X86_INS_CALL:
		return x->opcode[0] == 0xe8 ? INSN_CALL : INSN_TRAP;
	case X86_INS_JMP:
		return (x->opcode[0] == 0xe9 || x->opcode[0] == 0xeb) ? INSN_JMP : INSN_TRAP;
	default:
		return is_jcc_opcode(x) ? INSN_JCC : INSN_TRAP;
	}
}

static enum insn_kind classify(const cs_insn *ci)
{
	switch (ci->id) {
	case X86_INS_NOP:
	case X86_INS_ENDBR64:
	case X86_INS_ENDBR32:
		return INSN_NOP;
	case X86_INS_RET:
		return INSN_RET;
	case X86_INS_LOOP:
	case X86_INS_LOOPE:
	case X86_INS_LOOPNE:
	case X86_INS_JRCXZ:
	case X86_INS_JECXZ:
	case X86_INS_JCXZ:
		return INSN_LOOP;
	case X86_INS_XBEGIN:
	case X86_INS_XABORT:
	case X86_INS_UD2:
	case X86_INS_UD2B:
	case X86_INS_UD0:
	case X86_INS_HLT:
	case X86_INS_RETF:
	case X86_INS_RETFQ:
	case X86_INS_SYSENTER:
		return INSN_TRAP;
	case X86_INS_SYSCALL:
		return INSN_OTHER;   /* runs fine from a slot: the kernel resumes after it */
	case X86_INS_LJMP:
		return INSN_JMP_IND;
	case X86_INS_LCALL:
		return INSN_CALL_IND;
	default:
		break;
	}
	if (has_group(ci, CS_GRP_INT) || has_group(ci, CS_GRP_IRET) ||
	    has_group(ci, CS_GRP_PRIVILEGE))
		return INSN_TRAP;
	/* BRANCH_RELATIVE, not JUMP: 'loop' is not in JUMP, and 'jmp *%rax' is. */
	if (has_group(ci, CS_GRP_BRANCH_RELATIVE))
		return classify_branch(ci);
	if (has_group(ci, CS_GRP_JUMP))
		return INSN_JMP_IND;
	if (has_group(ci, CS_GRP_CALL))
		return INSN_CALL_IND;
	return INSN_OTHER;
}

static void fill_info(const cs_insn *ci, struct insn_info *out)
{
	const cs_x86 *x = &ci->detail->x86;

	memset(out, 0, sizeof(*out));
	out->addr = ci->address;
	out->len = (uint8_t)ci->size;
	out->kind = classify(ci);
	switch (out->kind) {
	case INSN_JMP:
	case INSN_JCC:
	case INSN_CALL:
	case INSN_LOOP:
		out->target = (uint64_t)x->operands[0].imm;
		break;
	case INSN_RET:
		if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM)
			out->ret_pop = (uint16_t)x->operands[0].imm;
		break;
	default:
		break;
	}
	if (riprel_operand(ci)) {
		out->is_riprel = true;
		out->disp_offset = x->encoding.disp_offset;
	}
}

/* Decode one instruction into d->insn. 0 or -EINVAL. */
static int decode_one(struct insn_decoder *d, const uint8_t *code, size_t len, uint64_t addr)
{
	const uint8_t *p = code;
	size_t n = len;
	uint64_t a = addr;

	if (!code || len == 0)
		return -EINVAL;
	if (!cs_disasm_iter(d->handle, &p, &n, &a, d->insn))
		return -EINVAL;
	return 0;
}

int insn_decode(struct insn_decoder *d, const uint8_t *code, size_t len, uint64_t addr,
		struct insn_info *out)
{
	int rc;

	rc = decode_one(d, code, len, addr);
	if (rc < 0)
		return rc;
	fill_info(d->insn, out);
	return 0;
}

static bool fits_s32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static void put_le32(uint8_t *p, int32_t v)
{
	uint32_t u = (uint32_t)v;

	p[0] = (uint8_t)u;
	p[1] = (uint8_t)(u >> 8);
	p[2] = (uint8_t)(u >> 16);
	p[3] = (uint8_t)(u >> 24);
}

static int32_t get_le32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/* Is the displacement of @ci's %rip-relative operand @mem the 4 bytes at disp_offset
 * of @code, with at most an immediate after it? capstone 4.0.2's disp_size is wrong
 * for 0x66-prefixed forms, so the bytes themselves are checked. */
static bool riprel_disp_ok(const cs_insn *ci, const cs_x86_op *mem, const uint8_t *code)
{
	const cs_x86 *x = &ci->detail->x86;
	int off = x->encoding.disp_offset;

	return off > 0 && off + 4 + x->encoding.imm_size == ci->size &&
	       get_le32(code + off) == mem->mem.disp;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Append @op (1 or 2 opcode bytes) + rel32 to @target; the instruction sits at
 * @slot + p->xol_len. false if the target is out of rel32 reach. */
static bool emit_rel32(struct insn_plan *p, uint64_t slot, const uint8_t *op, int op_len,
		       uint64_t target)
{
	uint64_t next = slot + p->xol_len + op_len + 4;
	int64_t rel = (int64_t)(target - next);

	if (!fits_s32(rel) || p->xol_len + op_len + 4 > INSN_XOL_SLOT)
		return false;
	memcpy(p->xol + p->xol_len, op, op_len);
	put_le32(p->xol + p->xol_len + op_len, (int32_t)rel);
	p->xol_len += op_len + 4;
	return true;
}

static bool emit_jmp(struct insn_plan *p, uint64_t slot, uint64_t target)
{
	static const uint8_t op[1] = { OP_JMP_REL32 };

	return emit_rel32(p, slot, op, 1, target);
}

/* Re-decode @n bytes at @buf (runtime address @at) and check that they start with
 * instruction @id of @len bytes and, when @target is nonzero, that its relative target
 * (or, if it is rip-relative, its effective address) is @target. */
static bool verify_at(struct insn_decoder *d, const uint8_t *buf, size_t n, uint64_t at,
		      unsigned int id, int len, uint64_t target)
{
	const cs_x86_op *mem;
	const cs_x86 *x;

	if (decode_one(d, buf, n, at) < 0)
		return false;
	if (d->insn->id != id || d->insn->size != len)
		return false;
	if (!target)
		return true;
	mem = riprel_operand(d->insn);
	if (mem)
		return at + len + (uint64_t)mem->mem.disp == target;
	x = &d->insn->detail->x86;
	return x->op_count == 1 && x->operands[0].type == X86_OP_IMM &&
	       (uint64_t)x->operands[0].imm == target;
}

/* verify_at() on the XOL code of @p at offset @off (runtime address slot + @off). */
static bool verify_xol(struct insn_decoder *d, const struct insn_plan *p, uint64_t slot,
		       int off, unsigned int id, int len, uint64_t target)
{
	return verify_at(d, p->xol + off, p->xol_len - off, slot + off, id, len, target);
}

static void refuse(struct insn_plan *p, const char *why)
{
	memset(p->xol, 0, sizeof(p->xol));
	memset(p->patch, 0, sizeof(p->patch));
	p->kind = PLAN_REFUSE;
	p->why = why;
	p->xol_len = 0;
	p->patch_len = 0;
}

/* A single nop of @n bytes (1..14) at @buf: the recommended Intel encodings, longer ones
 * with extra 0x66 prefixes in front of the 10-byte form. */
static void put_nop(uint8_t *buf, int n)
{
	static const uint8_t nops[10][10] = {
		{ 0 },
		{ 0x90 },
		{ 0x66, 0x90 },
		{ 0x0f, 0x1f, 0x00 },
		{ 0x0f, 0x1f, 0x40, 0x00 },
		{ 0x0f, 0x1f, 0x44, 0x00, 0x00 },
		{ 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
		{ 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 },
		{ 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
		{ 0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
	};
	static const uint8_t nop10[10] = {
		0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00
	};

	if (n <= 9) {
		memcpy(buf, nops[n], n);
		return;
	}
	memset(buf, 0x66, n - 10);
	memcpy(buf + n - 10, nop10, sizeof(nop10));
}

/* Any instruction that does not depend on its address, or whose only dependence is a
 * %rip-relative memory operand: copy, re-base the displacement, jump back. */
static const char *plan_copy(struct insn_decoder *d, const uint8_t *code, uint64_t addr,
			     uint64_t slot, struct insn_plan *p)
{
	const cs_insn *ci = d->insn;
	const cs_x86 *x = &ci->detail->x86;
	const cs_x86_op *mem = riprel_operand(ci);
	unsigned int id = ci->id;
	int len = ci->size;
	uint64_t ea = 0;

	if (uses_eip_base(ci))
		return "eip-relative operand (0x67 prefix)";
	memcpy(p->xol, code, len);
	p->xol_len = (uint8_t)len;
	if (mem) {
		int off = x->encoding.disp_offset;
		int64_t disp;

		if (!riprel_disp_ok(ci, mem, code))
			return "cannot locate the rip-relative displacement";
		ea = addr + len + (uint64_t)mem->mem.disp;
		disp = mem->mem.disp + (int64_t)(addr - slot);
		if (!fits_s32(disp))
			return "rip-relative operand out of reach of the XOL slot";
		put_le32(p->xol + off, (int32_t)disp);
	}
	if (!emit_jmp(p, slot, addr + len))
		return "XOL slot too far from the site for a jmp back";
	if (!verify_xol(d, p, slot, 0, id, len, ea) ||
	    !verify_xol(d, p, slot, len, X86_INS_JMP, JMP_REL32_LEN, addr + len))
		return "relocated copy does not decode as the original";
	p->kind = PLAN_XOL;
	return NULL;
}

/* Start the XOL code with 'push %rax; movabs $ret,%rax; xchg %rax,(%rsp)': the original
 * return address @ret is pushed and every register is left as it was. */
static void put_push_ret(struct insn_plan *p, uint64_t ret)
{
	static const uint8_t xchg[4] = { 0x48, 0x87, 0x04, 0x24 };

	p->xol[0] = OP_PUSH_RAX;
	p->xol[1] = 0x48;
	p->xol[2] = 0xb8;
	put_le64(p->xol + 3, ret);
	memcpy(p->xol + 11, xchg, sizeof(xchg));
	p->xol_len = CALL_SEQ_LEN;
}

/* call rel32: push the original return address, then jmp to the target. */
static const char *plan_call(struct insn_decoder *d, uint64_t addr, uint64_t slot,
			     struct insn_plan *p)
{
	put_push_ret(p, addr + p->insn.len);
	if (!emit_jmp(p, slot, p->insn.target))
		return "call target out of rel32 reach of the XOL slot";
	if (!verify_xol(d, p, slot, CALL_SEQ_LEN, X86_INS_JMP, JMP_REL32_LEN, p->insn.target))
		return "relocated call does not decode as expected";
	p->kind = PLAN_XOL;
	return NULL;
}

static bool is_stack_reg(x86_reg r)
{
	return r == X86_REG_RSP || r == X86_REG_ESP || r == X86_REG_SP;
}

/* call *X: the same push sequence, then the same instruction turned into 'jmp *X'
 * (ModRM.reg /2 -> /4). X is evaluated after the push, so it must not involve %rsp;
 * an X that reads the 8 bytes below %rsp through another register would see the pushed
 * address, which compiled code never does (a function that calls keeps nothing in the
 * red zone across the call). */
static const char *plan_call_ind(struct insn_decoder *d, const uint8_t *code, uint64_t addr,
				 uint64_t slot, struct insn_plan *p)
{
	const cs_insn *ci = d->insn;
	const cs_x86 *x = &ci->detail->x86;
	const cs_x86_op *op = &x->operands[0];
	const cs_x86_op *mem = riprel_operand(ci);
	int len = ci->size;
	int modrm = x->encoding.modrm_offset;
	uint64_t ea = 0;

	if (ci->id != X86_INS_CALL || x->opcode[0] != 0xff || x->op_count != 1 ||
	    modrm <= 0 || modrm >= len || ((code[modrm] >> 3) & 7) != 2)
		return "unsupported indirect call form";
	if ((op->type == X86_OP_REG && is_stack_reg(op->reg)) ||
	    (op->type == X86_OP_MEM && (is_stack_reg(op->mem.base) ||
					is_stack_reg(op->mem.index))))
		return "indirect call through %rsp";
	if (uses_eip_base(ci))
		return "eip-relative operand (0x67 prefix)";

	put_push_ret(p, addr + len);
	memcpy(p->xol + CALL_SEQ_LEN, code, len);
	p->xol[CALL_SEQ_LEN + modrm] = (uint8_t)((code[modrm] & 0xc7) | (4 << 3));
	p->xol_len = (uint8_t)(CALL_SEQ_LEN + len);
	if (mem) {
		int off = x->encoding.disp_offset;
		int64_t disp;

		if (!riprel_disp_ok(ci, mem, code))
			return "cannot locate the rip-relative displacement";
		/* same effective address from slot + 15: addr+len+old == slot+15+len+new */
		ea = addr + len + (uint64_t)mem->mem.disp;
		disp = mem->mem.disp + (int64_t)(addr - slot) - CALL_SEQ_LEN;
		if (!fits_s32(disp))
			return "rip-relative operand out of reach of the XOL slot";
		put_le32(p->xol + CALL_SEQ_LEN + off, (int32_t)disp);
	}
	if (!verify_xol(d, p, slot, CALL_SEQ_LEN, X86_INS_JMP, len, ea))
		return "relocated indirect call does not decode as expected";
	p->kind = PLAN_XOL;
	return NULL;
}

static const char *plan_jcc(struct insn_decoder *d, uint64_t addr, uint64_t slot,
			    struct insn_plan *p)
{
	uint8_t op[2] = { 0x0f, 0x80 };
	unsigned int id = d->insn->id;

	op[1] |= jcc_condition(&d->insn->detail->x86);
	if (!emit_rel32(p, slot, op, 2, p->insn.target))
		return "jcc target out of rel32 reach of the XOL slot";
	if (!emit_jmp(p, slot, addr + p->insn.len))
		return "XOL slot too far from the site for a jmp back";
	if (!verify_xol(d, p, slot, 0, id, JCC_REL32_LEN, p->insn.target) ||
	    !verify_xol(d, p, slot, JCC_REL32_LEN, X86_INS_JMP, JMP_REL32_LEN,
			addr + p->insn.len))
		return "widened jcc does not decode as expected";
	p->kind = PLAN_XOL;
	return NULL;
}

int insn_plan_site(struct insn_decoder *d, const uint8_t *code, size_t len, uint64_t addr,
		   uint64_t slot, struct insn_plan *out)
{
	const char *why = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = decode_one(d, code, len, addr);
	if (rc < 0)
		return rc;
	fill_info(d->insn, &out->insn);
	if (out->insn.len > MAX_INSN_LEN) {
		refuse(out, "instruction too long");
		return 0;
	}

	switch (out->insn.kind) {
	case INSN_NOP:
		/* int3 + a nop covering the rest: the thread continues at addr + 1. */
		out->kind = PLAN_REWRITE;
		out->patch[0] = 0xcc;
		put_nop(out->patch + 1, out->insn.len - 1);
		out->patch_len = out->insn.len;
		break;
	case INSN_RET:
		out->kind = PLAN_RET;
		break;
	case INSN_JMP:
		out->kind = PLAN_JMP;
		break;
	case INSN_CALL:
		why = plan_call(d, addr, slot, out);
		break;
	case INSN_JCC:
		why = plan_jcc(d, addr, slot, out);
		break;
	case INSN_CALL_IND:
		why = plan_call_ind(d, code, addr, slot, out);
		break;
	case INSN_LOOP:
		why = "loop/jrcxz (rel8 only, cannot be relocated)";
		break;
	case INSN_TRAP:
		why = "trapping, privileged or transactional instruction";
		break;
	case INSN_JMP_IND:
	case INSN_OTHER:
		why = plan_copy(d, code, addr, slot, out);
		break;
	}
	if (why)
		refuse(out, why);
	return 0;
}

static bool movable_ci(const cs_insn *ci, const uint8_t *code);

int insn_scan_body_ex(struct insn_decoder *d, const uint8_t *code, size_t len, uint64_t start,
		      insn_exit_fn fn, insn_target_fn target_fn, void *arg, uint64_t *bad_addr)
{
	const uint8_t *p = code;
	size_t left = len;
	uint64_t a = start;
	uint64_t end = start + len;
	struct insn_info info;
	struct insn_exit e;
	uint8_t prev[INSN_PREV_MAX];    /* lengths of the movable run just before, newest first */
	uint8_t nr_prev = 0;

	while (left > 0) {
		const uint8_t *here_code = p;
		uint64_t here = a;
		bool mv;

		if (!cs_disasm_iter(d->handle, &p, &left, &a, d->insn)) {
			if (bad_addr)
				*bad_addr = here;
			return -EINVAL;
		}
		fill_info(d->insn, &info);
		mv = movable_ci(d->insn, here_code);    /* before @fn reuses the decoder */
		if (target_fn && (info.kind == INSN_JMP || info.kind == INSN_JCC ||
				  info.kind == INSN_LOOP || info.kind == INSN_CALL))
			target_fn(info.target, arg);
		memset(&e, 0, sizeof(e));
		e.addr = info.addr;
		e.len = info.len;
		e.insn_kind = info.kind;
		switch (info.kind) {
		case INSN_RET:
			e.kind = EXIT_RET;
			e.nr_prev = nr_prev;
			memcpy(e.prev_len, prev, nr_prev);
			break;
		case INSN_JMP:
		case INSN_JCC:
		case INSN_LOOP:
			e.target = info.target;
			if (info.target == start)
				e.kind = EXIT_ENTRY_JUMP;
			else if (info.target < start || info.target >= end)
				e.kind = EXIT_JMP_OUT;
			else
				goto next;
			break;
		case INSN_JMP_IND:
			e.kind = EXIT_JMP_IND;
			break;
		default:
			goto next;
		}
		if (fn)
			fn(&e, arg);
next:
		if (mv) {
			memmove(prev + 1, prev, INSN_PREV_MAX - 1);
			prev[0] = info.len;
			if (nr_prev < INSN_PREV_MAX)
				nr_prev++;
		} else {
			nr_prev = 0;
		}
	}
	return 0;
}
int insn_scan_body(struct insn_decoder *d, const uint8_t *code, size_t len, uint64_t start,
		   insn_exit_fn fn, void *arg, uint64_t *bad_addr)
{
	return insn_scan_body_ex(d, code, len, start, fn, NULL, arg, bad_addr);
}

/* ---- detours ------------------------------------------------------------------- */

/* Can @ci, whose bytes are @code, run from another address (insn_movable())? */
static bool movable_ci(const cs_insn *ci, const uint8_t *code)
{
	const cs_x86_op *mem;
	enum insn_kind k = classify(ci);

	if ((k != INSN_OTHER && k != INSN_NOP) || ci->id == X86_INS_SYSCALL ||
	    ci->size > MAX_INSN_LEN || uses_eip_base(ci))
		return false;
	mem = riprel_operand(ci);
	return !mem || riprel_disp_ok(ci, mem, code);
}

int insn_movable(struct insn_decoder *d, const uint8_t *code, size_t len, uint64_t addr)
{
	if (decode_one(d, code, len, addr) < 0)
		return -EINVAL;
	return movable_ci(d->insn, code);
}

size_t insn_entry_region(struct insn_decoder *d, const uint8_t *code, size_t len,
			 uint64_t addr, bool extend, bool *ends_in_ret)
{
	size_t n = 0, first;

	*ends_in_ret = false;
	while (n < INSN_DETOUR_JMP) {
		if (n >= len || decode_one(d, code + n, len - n, addr + n) < 0)
			return 0;
		if (extend && n > 0 && classify(d->insn) == INSN_RET) {
			/* a whole function of 5 bytes or more ending in this ret: lea; ret */
			if (n + d->insn->size < INSN_DETOUR_JMP)
				return 0;
			*ends_in_ret = true;
			return n + d->insn->size;
		}
		if (!movable_ci(d->insn, code + n))
			return 0;
		n += d->insn->size;
	}
	if (n > INSN_DETOUR_SPAN)
		return 0;
	first = n;
	/* a ret so close behind that a region of its own ending at it would need bytes of
	 * this one: take it in, with the movable instructions before it */
	while (extend && n < len) {
		if (decode_one(d, code + n, len - n, addr + n) < 0)
			break;
		if (classify(d->insn) == INSN_RET) {
			size_t end = n + d->insn->size;

			if (end - first < INSN_DETOUR_JMP && end <= INSN_DETOUR_SPAN) {
				*ends_in_ret = true;
				return end;
			}
			break;
		}
		if (!movable_ci(d->insn, code + n) || n + d->insn->size - first >= INSN_DETOUR_JMP)
			break;
		n += d->insn->size;
	}
	return first;
}

const char *insn_plan_detour(struct insn_decoder *d, const uint8_t *code, size_t len,
			     uint64_t site, uint64_t slot, bool entry_trap, bool exit_trap,
			     struct insn_detour *out)
{
	uint8_t *b = out->code;
	size_t off = 0, bl = 0;
	bool ret = false;
	int64_t rel;

	memset(out, 0, sizeof(*out));
	out->entry_trap = out->exit_trap = -1;
	out->site = site;
	if (len < INSN_DETOUR_JMP || len > INSN_DETOUR_SPAN)
		return "region size";
	out->site_len = (uint8_t)len;
	if (entry_trap) {
		out->entry_trap = 0;
		b[bl++] = 0xcc;
	}
	while (off < len) {
		const cs_insn *ci;
		const cs_x86_op *mem;
		uint64_t ea = 0;
		unsigned int id;
		int il;

		if (decode_one(d, code + off, len - off, site + off) < 0)
			return "undecodable instruction in the region";
		ci = d->insn;
		id = ci->id;
		il = ci->size;
		if (classify(ci) == INSN_RET) {
			if (off + il != len)
				return "a ret inside the region";
			if (exit_trap) {
				out->exit_trap = (int8_t)bl;
				b[bl++] = 0xcc;
			}
			memcpy(b + bl, code + off, il);
			if (!verify_at(d, b + bl, il, slot + bl, id, il, 0))
				return "copied ret does not decode as the original";
			bl += il;
			off += il;
			ret = true;
			break;
		}
		if (!movable_ci(ci, code + off))
			return "an instruction in the region cannot move";
		memcpy(b + bl, code + off, il);
		mem = riprel_operand(ci);
		if (mem) {
			int doff = ci->detail->x86.encoding.disp_offset;
			int64_t disp = mem->mem.disp + (int64_t)((site + off) - (slot + bl));

			ea = site + off + il + (uint64_t)mem->mem.disp;
			if (!fits_s32(disp))
				return "rip-relative operand out of reach of the block";
			put_le32(b + bl + doff, (int32_t)disp);
		}
		if (!verify_at(d, b + bl, il, slot + bl, id, il, ea))
			return "relocated copy does not decode as the original";
		bl += il;
		off += il;
	}
	if (!ret) {
		rel = (int64_t)((site + len) - (slot + bl + JMP_REL32_LEN));
		if (!fits_s32(rel))
			return "block too far from the site for a jmp back";
		b[bl] = OP_JMP_REL32;
		put_le32(b + bl + 1, (int32_t)rel);
		if (!verify_at(d, b + bl, JMP_REL32_LEN, slot + bl, X86_INS_JMP, JMP_REL32_LEN,
			       site + len))
			return "jmp back does not decode as expected";
		bl += JMP_REL32_LEN;
	}
	rel = (int64_t)(slot - (site + JMP_REL32_LEN));
	if (!fits_s32(rel))
		return "block out of rel32 reach of the site";
	out->jmp[0] = OP_JMP_REL32;
	put_le32(out->jmp + 1, (int32_t)rel);
	out->code_len = (uint8_t)bl;
	return NULL;
}

/* ---- short paths --------------------------------------------------------------- */

#define SHORT_PATH_ONSTACK 64     /* paths up to this long need no allocation */

/* A branch arm still to walk: its first instruction, the path length before it, and
 * whether that path went through an untraced call. */
struct short_pend {
	uint64_t addr;
	unsigned int depth;
	bool tainted;
};

/* An instruction that is one instruction but not a short one: a rep-prefixed string
 * operation (struct copies and zeroing, of any length), cpuid (a VM exit), pause,
 * rdrand/rdseed, xsave/xrstor; syscall and sysenter (the kernel's time). */
static bool slow_insn(const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;

	switch (x->opcode[0]) {
	case 0x6c: case 0x6d: case 0x6e: case 0x6f:     /* ins, outs */
	case 0xa4: case 0xa5: case 0xa6: case 0xa7:     /* movs, cmps */
	case 0xaa: case 0xab: case 0xac: case 0xad:     /* stos, lods */
	case 0xae: case 0xaf:                           /* scas */
		if (x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE)
			return true;
		break;
	default:
		break;
	}
	switch (ci->id) {
	case X86_INS_SYSCALL: case X86_INS_SYSENTER:
	case X86_INS_CPUID: case X86_INS_PAUSE: case X86_INS_RDRAND: case X86_INS_RDSEED:
	case X86_INS_XSAVE: case X86_INS_XSAVE64: case X86_INS_XSAVEC: case X86_INS_XSAVEC64:
	case X86_INS_XSAVEOPT: case X86_INS_XSAVEOPT64: case X86_INS_XSAVES:
	case X86_INS_XSAVES64: case X86_INS_XRSTOR: case X86_INS_XRSTOR64:
	case X86_INS_XRSTORS: case X86_INS_XRSTORS64:
		return true;
	default:
		return false;
	}
}

static enum insn_stop_answer short_stops(insn_stops_fn stops, void *arg, uint64_t addr,
					 enum insn_stop_query q)
{
	if (stops)
		return stops(addr, q, arg);
	return q == INSN_Q_RET ? INSN_STOPS_EXIT : INSN_STOPS_NOT;
}

/* Depth-first walk with an explicit stack: path[] holds the addresses of the current
 * path, pend[] the jcc arms not yet walked. Pending arms have strictly increasing depth
 * (each is pushed below the path it was found on), so both need one slot more than the
 * longest path: min(max_insns, len). 1 proven, 0 not. */
static int short_walk(struct insn_decoder *d, const uint8_t *code, size_t len,
		      uint64_t code_addr, uint64_t start, uint64_t call_end,
		      unsigned int max_insns, insn_stops_fn stops, void *arg, uint64_t *path,
		      struct short_pend *pend)
{
	uint64_t budget = 4 * (uint64_t)max_insns, decoded = 0;
	unsigned int npend = 0, n, i;
	struct insn_info info;
	bool reached = false, tainted;
	uint64_t a;

	pend[npend++] = (struct short_pend){ .addr = start, .depth = 0, .tainted = false };
	while (npend > 0) {
		npend--;
		a = pend[npend].addr;
		n = pend[npend].depth;
		tainted = pend[npend].tainted;
		for (;;) {
			uint64_t off = a - code_addr;
			enum insn_stop_answer at;

			if (n >= max_insns || decoded++ >= budget)
				return 0;
			/* off wraps for a < code_addr: one test covers both ends */
			if (off >= len)
				return 0;
			for (i = 0; i < n; i++)
				if (path[i] == a)
					return 0;       /* a loop */
			/* a stop site on the way: the thread stops here. Where an exit was
			 * next, that is the stop (this path is short, unless it ran an
			 * untraced call); anywhere else it stopped first: not this path */
			at = n ? short_stops(stops, arg, a, INSN_Q_AT) : INSN_STOPS_NOT;
			if (at == INSN_STOPS_EXIT && !call_end) {
				if (tainted)
					return 0;
				reached = true;
				break;
			}
			if (at != INSN_STOPS_NOT)
				break;
			/* only the bytes left are offered: an instruction cut by the end of
			 * @code does not decode */
			if (decode_one(d, code + off, len - off, a) < 0)
				return 0;
			fill_info(d->insn, &info);
			path[n++] = a;

			switch (info.kind) {
			case INSN_NOP:
				if (slow_insn(d->insn))
					return 0;      /* pause is a nop of its kind */
				a += info.len;
				continue;
			case INSN_OTHER:
				/* classify() lets syscall run (it is fine in an XOL slot), but
				 * the kernel's time is not next to nothing, nor a rep movs */
				if (slow_insn(d->insn))
					return 0;
				a += info.len;
				continue;
			case INSN_JCC:
				/* a taken arm into a traced entry is a conditional tail call
				 * that would have stopped there: not walked */
				if (!short_stops(stops, arg, info.target, INSN_Q_CALL))
					pend[npend++] = (struct short_pend){
						.addr = info.target, .depth = n, .tainted = tainted };
				a += info.len;
				continue;
			case INSN_JMP:
				if (short_stops(stops, arg, info.target, INSN_Q_CALL))
					break;          /* would have stopped elsewhere */
				a = info.target;
				continue;
			case INSN_CALL:
			case INSN_CALL_IND:
				/* the call ending at call_end is the stop, if it calls a traced
				 * entry. An untraced callee could have worked and then jumped
				 * to the entry (its return address is the same); a call through
				 * a pointer may lead anywhere first. */
				if (call_end && a + info.len == call_end) {
					if (tainted || info.kind != INSN_CALL ||
					    !short_stops(stops, arg, info.target, INSN_Q_CALL))
						return 0;
					reached = true;
					break;
				}
				if (info.kind == INSN_CALL &&
				    short_stops(stops, arg, info.target, INSN_Q_CALL))
					break;          /* would have stopped in the callee */
				/* an untraced callee: it returns here after work of its own, so
				 * this path may go on, but must not reach the stop */
				tainted = true;
				a += info.len;
				continue;
			case INSN_RET:
				if (short_stops(stops, arg, a, INSN_Q_RET) != INSN_STOPS_EXIT)
					return 0;       /* back to code not known */
				if (call_end)
					break;          /* an exit would have stopped first */
				if (tainted)
					return 0;
				reached = true;
				break;
			default:                        /* indirect jmp, loop, trap */
				return 0;
			}
			break;                          /* this path ended */
		}
	}
	return reached;
}

int insn_short_path(struct insn_decoder *d, const uint8_t *code, size_t len, uint64_t code_addr,
		    uint64_t start, uint64_t call_end, unsigned max_insns, insn_stops_fn stops,
		    void *arg)
{
	uint64_t path_buf[SHORT_PATH_ONSTACK + 1];
	struct short_pend pend_buf[SHORT_PATH_ONSTACK + 1];
	uint64_t *path = path_buf;
	struct short_pend *pend = pend_buf;
	size_t slots = max_insns;
	int rc;

	if (!d || !code || len == 0 || max_insns == 0)
		return 0;
	/* the addresses on a path are distinct and inside @code: never more than len */
	if (slots > len)
		slots = len;
	if (slots > SHORT_PATH_ONSTACK) {
		path = calloc(slots + 1, sizeof(*path));
		pend = calloc(slots + 1, sizeof(*pend));
		if (!path || !pend) {
			free(path);
			free(pend);
			return 0;
		}
	}
	rc = short_walk(d, code, len, code_addr, start, call_end, max_insns, stops, arg, path,
			pend);
	if (path != path_buf) {
		free(path);
		free(pend);
	}
	return rc;
}
