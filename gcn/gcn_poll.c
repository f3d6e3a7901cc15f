/*
 * gcn_poll.c - which loop exits can end a wait: GCN_IF_POLL_EXIT on a
 * conditional back-edge whose condition may depend on a value that a load
 * able to see another wave's progress returned inside its loop.
 *
 * The emulator offers a loop that ran a single iteration to the recorder as
 * a RETRY await (trace format "RETRY awaits"): the replay walks it again
 * while its loads read other data than recorded, as a lock or a look-back
 * that was free in the emulator would have made the wave wait on the
 * configured machine. That is only right for a wait loop: one whose exit
 * depends on what it polls. A loop that runs once over a count (gd's
 * `for (e = 0; e < ngpu; e++) sum += g.p[e][j];` with one GPU) is not one,
 * and marking it made the replay treat its kernel as polling (never sampled)
 * and could make it walk the iteration again where its plain loads read
 * other data.
 *
 * Poll-capable loads, as gcn_sync.c's: on gfx803 a wave sees another
 * workgroup's progress only through loads that bypass the L1 (glc = 1:
 * volatile and atomic loads at agent or system scope, AMDGPUUsage "Memory
 * Model GFX6-GFX9") and atomics that return the pre-operation value; a wave
 * sees the other waves of its workgroup through the LDS (any ds_* load).
 * A plain global, flat or scalar load may be hoisted out of any loop by the
 * compiler, and a private (scratch) load sees only the wave's own stores.
 *
 * The test is a static, flow-insensitive taint over the loop's instructions
 * (the head, the back-edge's target, up to the back-edge): the poll-capable
 * loads' destinations are tainted, and so is every destination of an
 * instruction that reads a tainted register, until nothing changes (so
 * values carried around the loop count too). Implicit operands are taken
 * generously (a VALU op reads EXEC, VCC and M0 and writes VCC; a SALU op
 * reads and writes SCC; ops that may write EXEC, GCN_IF_WRITES_EXEC, read and
 * write it), so the taint can only be larger than the real data flow: a
 * back-edge is left unmarked only where its condition (SCC, VCC or EXEC)
 * cannot depend on a polled value. Anything the model does not follow marks
 * the back-edge: a call or indirect branch (s_setpc, s_swappc), relative
 * register addressing (s_movrel*, v_movrel*, s_set_gpr_idx*), s_setreg, a
 * debug branch (s_cbranch_cdbg*), a loop of more than POLL_MAX_BODY
 * instructions, and a branch from outside the loop into its middle (the
 * iteration could then run code outside the range).
 */
#include "gcn_isa_internal.h"

#include <stdlib.h>
#include <string.h>

/* Register slots: 0..127 SGPRs and special registers by operand code (VCC
 * 106-107, M0 124, EXEC 126-127), SLOT_SCC, 256..511 the VGPRs by operand
 * code. */
#define SLOT_SCC 128u
#define NSLOT 512u
#define POLL_MAX_BODY 8192u

typedef struct {
    uint64_t w[NSLOT / 64];
} regset;

static inline int rs_has(const regset *s, unsigned i) { return (int)((s->w[i >> 6] >> (i & 63)) & 1u); }

/* Adds slots [lo, hi); returns how many were new. */
static unsigned rs_add(regset *s, unsigned lo, unsigned hi)
{
    unsigned n = 0;
    for (unsigned i = lo; i < hi; i++) {
        uint64_t b = 1ull << (i & 63);
        if (!(s->w[i >> 6] & b)) {
            s->w[i >> 6] |= b;
            n++;
        }
    }
    return n;
}

static int rs_any(const regset *s, unsigned lo, unsigned hi)
{
    for (unsigned i = lo; i < hi; i++)
        if (rs_has(s, i))
            return 1;
    return 0;
}

/* The slots [*lo, *hi) of operand code c, n dwords wide; 0 for constants,
 * literals and absent operands. */
static int opd_slots(uint16_t c, unsigned n, unsigned *lo, unsigned *hi)
{
    if (n == 0)
        n = 1;
    if (c < 128) {
        *lo = c;
        *hi = c + n > 128 ? 128 : c + n;
        return 1;
    }
    if (c == GCN_OPD_VCCZ) {
        *lo = GCN_OPD_VCC;
        *hi = GCN_OPD_VCC + 2;
        return 1;
    }
    if (c == GCN_OPD_EXECZ) {
        *lo = GCN_OPD_EXEC;
        *hi = GCN_OPD_EXEC + 2;
        return 1;
    }
    if (c == GCN_OPD_SCC) {
        *lo = SLOT_SCC;
        *hi = SLOT_SCC + 1;
        return 1;
    }
    if (c >= GCN_OPD_VGPR && c < NSLOT) {
        *lo = c;
        *hi = c + n > NSLOT ? NSLOT : c + n;
        return 1;
    }
    return 0;
}

static int is_memory_fmt(uint8_t fmt)
{
    return fmt == GCN_FMT_SMEM || fmt == GCN_FMT_DS || fmt == GCN_FMT_MUBUF || fmt == GCN_FMT_MTBUF ||
           fmt == GCN_FMT_FLAT || fmt == GCN_FMT_MIMG;
}

/* A load that can return another wave's progress (see the top). */
static int poll_capable(const gcn_insn *x)
{
    uint32_t f = x->flags;
    if (!(f & GCN_IF_LOAD) || (f & GCN_IF_SCRATCH))
        return 0;
    if (x->fmt == GCN_FMT_DS)
        return !(f & GCN_IF_GDS);
    if (f & GCN_IF_ATOMIC)
        return (f & GCN_IF_ATOMIC_RTN) != 0;
    return (x->mods & GCN_M_GLC) != 0;
}

/* Does the static analysis not follow x (see the top)? */
static int not_followed(const gcn_insn *x)
{
    if (x->flags & (GCN_IF_BR_INDIRECT | GCN_IF_INVALID))
        return 1;
    const char *nm = gcn_op_info_of(x->op)->name;
    return !strncmp(nm, "s_movrel", 8) || !strncmp(nm, "v_movrel", 8) || strstr(nm, "gpr_idx") != NULL ||
           !strncmp(nm, "s_setreg", 8);
}

/* One pass of the taint over x; returns how many slots became tainted. */
static unsigned taint_step(regset *t, const gcn_insn *x)
{
    const gcn_op_info *oi = gcn_op_info_of(x->op);
    unsigned lo, hi;
    int mem = is_memory_fmt(x->fmt);
    int in = poll_capable(x);
    for (int i = 0; i < 4 && !in; i++) {
        unsigned n = i < 3 ? oi->sw[i] : 0;
        if (!n)
            n = 2;
        if (mem && x->src[i] < 128 && n < 4)
            n = 4; /* a buffer resource, a base pair: generous */
        if (opd_slots(x->src[i], n, &lo, &hi) && rs_any(t, lo, hi))
            in = 1;
    }
    if (!in) {
        if (x->unit == GCN_UNIT_VALU)
            in = rs_any(t, GCN_OPD_VCC, GCN_OPD_VCC + 2) || rs_any(t, GCN_OPD_EXEC, GCN_OPD_EXEC + 2) ||
                 rs_has(t, 124);
        else if (x->unit == GCN_UNIT_VMEM || x->unit == GCN_UNIT_LDS)
            in = rs_any(t, GCN_OPD_EXEC, GCN_OPD_EXEC + 2) || rs_has(t, 124);
        else if (x->unit == GCN_UNIT_SALU)
            in = rs_has(t, SLOT_SCC) ||
                 ((x->flags & GCN_IF_WRITES_EXEC) && rs_any(t, GCN_OPD_EXEC, GCN_OPD_EXEC + 2));
    }
    if (!in)
        return 0;
    unsigned added = 0;
    unsigned dw = oi->dw ? oi->dw : 2;
    if (mem && (x->flags & GCN_IF_LOAD)) {
        unsigned m = ((unsigned)x->mem_bytes + 3) / 4;
        if (x->fmt != GCN_FMT_SMEM && oi->elem_count > 1 && oi->elem_bytes)
            m = m > (unsigned)oi->elem_bytes * oi->elem_count / 4 ? m : (unsigned)oi->elem_bytes * oi->elem_count / 4;
        dw = (dw > m ? dw : m) + 1; /* + tfe */
    }
    for (int i = 0; i < 2; i++)
        if (opd_slots(x->dst[i], i ? 2 : dw, &lo, &hi))
            added += rs_add(t, lo, hi);
    if (x->unit == GCN_UNIT_VALU)
        added += rs_add(t, GCN_OPD_VCC, GCN_OPD_VCC + 2);
    if (x->unit == GCN_UNIT_SALU)
        added += rs_add(t, SLOT_SCC, SLOT_SCC + 1);
    if (x->flags & GCN_IF_WRITES_EXEC)
        added += rs_add(t, GCN_OPD_EXEC, GCN_OPD_EXEC + 2);
    return added;
}

/* The slots of back-edge b's condition; 0 for a condition not followed. */
static int cond_slots(const gcn_insn *b, unsigned *lo, unsigned *hi)
{
    const char *nm = gcn_op_info_of(b->op)->name;
    if (!strncmp(nm, "s_cbranch_scc", 13))
        return opd_slots(GCN_OPD_SCC, 1, lo, hi);
    if (!strncmp(nm, "s_cbranch_vcc", 13))
        return opd_slots(GCN_OPD_VCC, 2, lo, hi);
    if (!strncmp(nm, "s_cbranch_exec", 14))
        return opd_slots(GCN_OPD_EXEC, 2, lo, hi);
    return 0;
}

typedef struct {
    uint64_t target; /* the branch's taken target (ELF vaddr) */
    uint32_t idx;    /* the branch's index in insn */
} branch;

static int by_target(const void *a, const void *b)
{
    uint64_t x = ((const branch *)a)->target, y = ((const branch *)b)->target;
    return x < y ? -1 : x > y;
}

/* May the condition of back-edge insn[be] (target insn[head]) depend on a
 * polled value? brs: the program's direct branches, by target. */
static int poll_exit(const gcn_program *p, size_t head, size_t be, const branch *brs, size_t nbr)
{
    if (be - head >= POLL_MAX_BODY)
        return 1;
    unsigned lo, hi;
    if (!cond_slots(&p->insn[be], &lo, &hi))
        return 1;
    uint64_t head_pc = p->insn[head].pc, be_pc = p->insn[be].pc;
    size_t a = 0, z = nbr; /* the first branch whose target is past the head */
    while (a < z) {
        size_t m = a + (z - a) / 2;
        if (brs[m].target <= head_pc)
            a = m + 1;
        else
            z = m;
    }
    for (size_t k = a; k < nbr && brs[k].target <= be_pc; k++)
        if (brs[k].idx < head || brs[k].idx > be)
            return 1; /* entered in the middle from outside */
    for (size_t i = head; i <= be; i++)
        if (not_followed(&p->insn[i]))
            return 1;
    regset t;
    memset(&t, 0, sizeof t);
    for (unsigned pass = 0; pass <= NSLOT; pass++) {
        unsigned added = 0;
        for (size_t i = head; i <= be; i++)
            added += taint_step(&t, &p->insn[i]);
        if (rs_any(&t, lo, hi))
            return 1;
        if (!added)
            return 0;
    }
    return 1;
}

void gcn_program_mark_poll_exits(gcn_program *p)
{
    size_t nbr = 0;
    for (size_t j = 0; j < p->n_insn; j++)
        nbr += (p->insn[j].flags & (GCN_IF_BR_COND | GCN_IF_BR_JUMP)) != 0;
    branch *brs = malloc((nbr ? nbr : 1) * sizeof *brs);
    nbr = 0;
    if (brs)
        for (size_t j = 0; j < p->n_insn; j++)
            if (p->insn[j].flags & (GCN_IF_BR_COND | GCN_IF_BR_JUMP))
                brs[nbr++] = (branch){p->insn[j].target, (uint32_t)j};
    if (brs)
        qsort(brs, nbr, sizeof *brs, by_target);
    for (size_t j = 0; j < p->n_insn; j++) {
        gcn_insn *b = &p->insn[j];
        if (!(b->flags & GCN_IF_BR_COND) || b->target > b->pc || b->target < p->vaddr)
            continue;
        const gcn_insn *h = gcn_program_at(p, b->target);
        size_t head = h ? (size_t)(h - p->insn) : 0;
        /* out of memory for the branch list: every back-edge may end a wait (as before) */
        if (!h || !brs || poll_exit(p, head, j, brs, nbr))
            b->flags |= GCN_IF_POLL_EXIT;
    }
    free(brs);
}
