/*
 * gcn_sync.c - does a kernel's code wait on other workgroups? (issue 15:
 * traces identical for every emulator thread count).
 *
 * A workgroup can only observe another workgroup of the same dispatch while
 * both run through memory operations whose result depends on when the other
 * one wrote: on gfx803 these are the loads that bypass the L1 (glc = 1:
 * volatile and atomic loads, AMDGPUUsage "Memory Model GFX6-GFX9": load
 * atomic monotonic/acquire at agent or system scope is buffer/global/flat_load
 * glc=1; scalar s_load ... glc likewise), the atomics that return the
 * pre-operation value (glc = 1: compare-and-swap, atomicAdd whose result is
 * used, atomicInc of a last-block count) and s_sleep (a wait loop that backs
 * off; device printf and malloc wait on the host with it). A plain load never
 * spins (the compiler may hoist it out of any loop) and an atomic without
 * return tells the wave nothing. LDS and ds_* atomics stay inside the
 * workgroup. The emulator runs a kernel whose reachable code holds any of
 * these on one worker, so its interleaving, and so its trace, does not depend
 * on --threads (emu/exec/gcn_launch.c).
 */
#include "gcn_isa.h"
#include "gcn_operand.h"

#include <stdlib.h>
#include <string.h>

static uint32_t reasons_of(const gcn_insn *in, uint64_t *first_pc, uint32_t have)
{
    uint32_t r = 0;
    uint32_t f = in->flags;
    if (f & GCN_IF_SLEEP)
        r |= GCN_SYNC_SLEEP;
    if (in->fmt != GCN_FMT_DS && (f & GCN_IF_ATOMIC_RTN))
        r |= GCN_SYNC_ATOMIC_RTN;
    else if (in->fmt != GCN_FMT_DS && (f & GCN_IF_LOAD) && !(f & GCN_IF_ATOMIC) && (in->mods & GCN_M_GLC))
        r |= GCN_SYNC_GLC_LOAD;
    if (r && !have && first_pc)
        *first_pc = in->pc;
    return r;
}

/* Does instruction `in` write SGPR s (a scalar destination, or a VOP3
 * carry-out / compare result in dst[1])? */
static int writes_sgpr(const gcn_insn *in, unsigned s)
{
    const gcn_op_info *oi = gcn_op_info_of(in->op);
    unsigned d0 = in->dst[0], d1 = in->dst[1];
    unsigned w0 = oi->dw ? oi->dw : 1;
    if (d0 < 102 && s >= d0 && s < d0 + w0)
        return 1;
    if (d1 < 102 && s >= d1 && s < d1 + 2)
        return 1;
    return 0;
}

static int lit_of(const gcn_insn *in, unsigned src, uint32_t *v)
{
    unsigned c = in->src[src];
    if (c == GCN_OPD_LIT) {
        *v = in->literal;
        return 1;
    }
    if (c >= 128 && c <= 192) { /* inline 0..64 */
        *v = c - 128;
        return 1;
    }
    if (c >= 193 && c <= 208) { /* inline -1..-16 */
        *v = (uint32_t)-(int32_t)(c - 192);
        return 1;
    }
    return 0;
}

/* The target of the s_swappc_b64/s_setpc_b64 at index i when its address
 * register pair was computed in the same straight-line code by LLVM's
 * direct-call sequence: s_getpc_b64 s[X:X+1]; s_add_u32 sX, sX, lo;
 * s_addc_u32 sX+1, sX+1, hi (AMDGPU's rel32 call lowering). 0: not found. */
static uint64_t call_target(const gcn_program *p, size_t i)
{
    const gcn_insn *br = &p->insn[i];
    unsigned x = br->src[0];
    if (x >= 101)
        return 0;
    int have_lo = 0, have_hi = 0;
    uint32_t lo = 0, hi = 0;
    for (size_t k = i, n = 0; k-- > 0 && n < 64; n++) {
        const gcn_insn *in = &p->insn[k];
        if (in->flags & (GCN_IF_BR_COND | GCN_IF_BR_JUMP | GCN_IF_BR_INDIRECT | GCN_IF_ENDPGM | GCN_IF_INVALID))
            return 0;
        if (in->op == GCN_OP_s_getpc_b64 && in->dst[0] == x) {
            if (!have_lo || !have_hi)
                return 0;
            uint64_t base = in->pc + in->size;
            return base + (((uint64_t)hi << 32) | lo);
        }
        if (!have_hi && in->op == GCN_OP_s_addc_u32 && in->dst[0] == x + 1 && in->src[0] == x + 1 &&
            lit_of(in, 1, &hi)) {
            have_hi = 1;
            continue;
        }
        if (have_hi && !have_lo && in->op == GCN_OP_s_add_u32 && in->dst[0] == x && in->src[0] == x &&
            lit_of(in, 1, &lo)) {
            have_lo = 1;
            continue;
        }
        if (writes_sgpr(in, x) || writes_sgpr(in, x + 1))
            return 0;
    }
    return 0;
}

uint32_t gcn_program_sync_reasons(const gcn_program *p, uint64_t entry, uint64_t *first_pc)
{
    if (!p || !p->n_insn)
        return 0;
    const gcn_insn *e = gcn_program_at(p, entry);
    if (!e)
        return 0;
    uint8_t *seen = calloc(p->n_insn, 1);
    uint32_t *stack = malloc(p->n_insn * sizeof *stack);
    uint32_t r = 0;
    if (!seen || !stack) {
        free(seen);
        free(stack);
        return GCN_SYNC_UNKNOWN; /* out of memory: assume the worst */
    }
    size_t sp = 0;
    stack[sp++] = (uint32_t)(e - p->insn);
    seen[e - p->insn] = 1;
    while (sp) {
        const gcn_insn *in = &p->insn[stack[--sp]];
        r |= reasons_of(in, first_pc, r);
        uint32_t f = in->flags;
        uint64_t next[2];
        int n = 0;
        if (f & (GCN_IF_ENDPGM | GCN_IF_INVALID))
            continue;
        if (f & GCN_IF_BR_INDIRECT) {
            /* a direct call (s_swappc) or tail call (s_setpc) goes on at its
             * target, a call also after it; an s_setpc of a register pair
             * the code did not compute is a return. A call whose target is
             * computed otherwise (a function pointer): the whole .text counts
             * (every function it could reach). */
            uint64_t t = call_target(p, (size_t)(in - p->insn));
            int call = in->op == GCN_OP_s_swappc_b64;
            if (!t && call) {
                r |= GCN_SYNC_INDIRECT;
                break;
            }
            if (t)
                next[n++] = t;
            if (call)
                next[n++] = in->pc + in->size;
        } else if (f & GCN_IF_BR_JUMP) {
            next[n++] = in->target;
        } else {
            next[n++] = in->pc + in->size;
            if (f & GCN_IF_BR_COND)
                next[n++] = in->target;
        }
        for (int i = 0; i < n; i++) {
            const gcn_insn *t = gcn_program_at(p, next[i]);
            if (t && !seen[t - p->insn]) {
                seen[t - p->insn] = 1;
                stack[sp++] = (uint32_t)(t - p->insn);
            }
        }
    }
    if (r & GCN_SYNC_INDIRECT)
        for (size_t i = 0; i < p->n_insn; i++)
            r |= reasons_of(&p->insn[i], first_pc, r & ~(uint32_t)GCN_SYNC_INDIRECT);
    free(seen);
    free(stack);
    return (r & ~(uint32_t)GCN_SYNC_INDIRECT) ? r : 0; /* an indirect branch alone waits for nobody */
}

const char *gcn_sync_reason_name(uint32_t r)
{
    return (r & GCN_SYNC_SLEEP)        ? "s_sleep"
           : (r & GCN_SYNC_ATOMIC_RTN) ? "an atomic that returns its old value"
           : (r & GCN_SYNC_GLC_LOAD)   ? "a glc (volatile or atomic) load"
           : (r & GCN_SYNC_INDIRECT)   ? "an indirect branch"
           : (r & GCN_SYNC_UNKNOWN)    ? "out of memory while looking"
                                       : "nothing";
}
