/*
 * gcn_walk.h - the one walker of a recorded wavefront: given a decoded code
 * object (gcn_program) and a wave's dynamic record (trc_wave), it yields the
 * wave's instructions in execution order and the memory op each consumes.
 * The replay's CU (timing) and gcn3-trace (stats, verify, dump --instr) both
 * walk waves with it, so there is one set of rules:
 *
 *   - EXEC: the recorded value exec_val[i] holds from dynamic instruction
 *     exec_at[i] on (docs/trace-format.md "wavefront record").
 *   - Conditional branches (s_cbranch_*) take the next recorded outcome bit;
 *     s_branch jumps to its static target; s_setpc/s_swappc take the next
 *     recorded indirect target. A target that is not an instruction start is
 *     an inconsistency.
 *   - Memory: a VMEM/SMEM/LDS instruction that loads, stores or is atomic
 *     consumes the next recorded memory op, except a vector one under EXEC = 0
 *     (which some emulator paths do not record): it consumes the next op only
 *     if that op's exec is 0 too.
 *   - ds_gws_barrier (the grid barrier of a cooperative launch) is walked as an
 *     instruction without a memory op; the other GDS ops are refused.
 *   - s_endpgm ends the wave; by then every recorded instruction, branch
 *     outcome, indirect target and memory op must have been used.
 *
 * Use: gcn_walk_init(); then per instruction gcn_walk_insn() (the next
 * instruction, EXEC applied), gcn_walk_mem() when the caller issues its memory
 * op, gcn_walk_step() to count it and move to the next one; gcn_walk_end()
 * after s_endpgm. The replay interleaves timing between these calls (a wave
 * may stall at a waitcnt before it steps); gcn3-trace calls gcn_walk_next(),
 * which does all of it. The hot functions are inline: the replay calls them
 * for every wavefront instruction.
 *
 * Errors: a function that finds the record inconsistent with the code returns
 * -1 (or NULL) and leaves a one-line message in w->err naming the pc and the
 * record; the walk must not be continued then.
 * Thread-safety: a walker is one wave's state; the program and record it
 * reads are shared read-only.
 */
#ifndef GCN_WALK_H
#define GCN_WALK_H

#include <stdint.h>

#include "gcn/gcn_isa.h"
#include "traceformat/trc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a walk is in its record: what an await's repeat goes back to. */
typedef struct gcn_walk_pos {
    uint32_t idx;
    uint64_t dyn, exec;
    uint32_t exec_i, br_i, ind_i, mem_i;
} gcn_walk_pos;

typedef struct gcn_walk {
    const gcn_program *prog;
    const trc_wave *tw;
    uint32_t idx;       /* index into prog->insn of the next instruction */
    uint64_t dyn;       /* dynamic instructions stepped past (in the record) */
    uint64_t exec;      /* EXEC of the next instruction (after gcn_walk_insn) */
    uint32_t exec_i, br_i, ind_i, mem_i; /* records used so far */
    uint8_t ended;      /* s_endpgm stepped past */
    /* Copies of the record's values the hot path compares with each
     * instruction, so that it reads the walk alone (the record is out of
     * the host's caches between a wave's turns): tw->n_instr, and the dyn
     * from which the next EXEC value holds (tw->exec_at[exec_i], or
     * UINT64_MAX when none is left); tw->n_mem, tw->mem, tw->n_branch,
     * tw->branch_taken */
    uint64_t n_instr, exec_next_at;
    const trc_mem_op *mem;
    const uint8_t *branch_taken;
    uint32_t n_mem, n_branch;

    /* Awaits (trace format 1.2; gcn_walk_awaits_on). A walk that does not
     * turn them on walks the record as it is (each template once). */
    uint8_t aw_check;   /* an await is ahead or in progress: gcn_walk_insn looks */
    uint8_t aw_state;   /* GCN_AW_*: where the walk is in the current await */
    uint8_t aw_diff;    /* set by the caller: a poll of this iteration read other data than recorded */
    uint8_t aw_hard;    /* set by the caller with aw_diff unless every such difference was "soft": a
                         * single-lane poll of at most 8 bytes, no compare-and-swap, whose data and the
                         * recorded data are both non-zero (a flag or status word that is set, to
                         * another value than the recording's) */
    uint8_t aw_tmpl_hard; /* the change that ended the template (or the iterations before it) was hard */
    uint32_t aw_i;      /* index of that await in tw */
    uint32_t aw_head, aw_back; /* insn index of its loop head and back-edge branch */
    uint64_t aw_repeats;       /* iterations walked again, all awaits */
    uint64_t aw_iters;         /* wait iterations walked (polls that found nothing new), all awaits */
    uint64_t dyn_extra;        /* instructions walked again */
    uint64_t dyn_skipped;      /* recorded wait iterations skipped (executed = dyn + dyn_extra - dyn_skipped) */
    uint64_t aw_max;           /* iterations one await may repeat before the walk fails */
    uint64_t aw_n;             /* iterations the current await repeated */
    uint32_t aw_kind;          /* TRC_AWAIT_* of the current await */
    uint64_t aw_gave_up;       /* awaits given up (the recorded data never came): RETRY after max_retry
                                * tries, WAIT after max_repeats polls */
    uint64_t aw_gave_up_pc;    /* loop head of the first await given up */
    uint64_t aw_soft_exits;    /* awaits left by a soft difference (below): order-dependent data */
    gcn_walk_pos aw_pos;       /* the template's start */
    char err[192];      /* the last inconsistency */
} gcn_walk;

/* Await states (the replay's polling, docs/trace-format.md "awaits"). */
enum {
    GCN_AW_NONE = 0,
    GCN_AW_REGION,   /* in the wait loop before the template (recorded polls) */
    GCN_AW_TEMPLATE, /* in the template: at its end it repeats unless a poll read other data */
    GCN_AW_EXIT,     /* in the recorded iteration after the template: if a poll reads other
                      * data before the wave leaves the loop, the walk goes back to the template */
};

/* Turn awaits on (the replay). From the wave's arrival at an await's loop
 * head one or two template lengths before the template (the iterations the
 * emulator recorded before it saw the state repeat), its memory ops are polls (aw_state != NONE) and the caller
 * reports through w->aw_diff when one read other data than recorded (memory
 * changed). The recorded iterations before the template are walked while
 * nothing changes; when something did, the walk skips to the recorded
 * iteration after the template (the way out). At the template's end it walks
 * the template again if nothing changed, else the way out; when a poll of the
 * way out reads other data before the wave leaves the loop (memory changed,
 * but not to what the recording saw), it goes back to the template. So the
 * number of wait iterations is the caller's (its timing), not the
 * recording's. max_repeats bounds one await: a wait that memory never ends
 * gives up after max_repeats repetitions of its template, goes on as recorded
 * (the way out) and counts aw_gave_up (the caller reports it as a
 * difference), so the rest of the wave is still replayed.
 *
 * Soft differences (aw_hard clear): when the template's polls saw a hard
 * change (zero to non-zero: a flag was set) and the way out's poll reads a
 * non-zero value other than the recorded one, the wave leaves the loop (the
 * flag is set, to another value: a look-back predecessor that published its
 * prefix where the recording saw its aggregate) and counts aw_soft_exits
 * (order-dependent data, reported by the caller) instead of waiting for a
 * value that may never come. A soft change in the template leaves the exact
 * rule: a counter that moves from 3 to 4 while the loop waits for 8. */
void gcn_walk_awaits_on(gcn_walk *w, uint64_t max_repeats);

/* RETRY awaits (the only iteration of a loop, recorded as a poll): the walk
 * repeats it while a poll of it read other data than recorded (the loop would
 * have run again), at most GCN_WALK_MAX_RETRY (and max_repeats) times; then it goes on as
 * recorded and counts aw_gave_up (the caller reports it as a difference). A
 * soft difference (non-zero data where the recording read other non-zero
 * data, no compare-and-swap) leaves at once and counts aw_soft_exits: the
 * recording's one iteration ended on a set flag, and the model's flag is set
 * too. An estimate of the loop's condition: a loop that waits for a counter
 * to reach a non-zero value may be left early (docs/timing-model.md). */
#define GCN_WALK_MAX_RETRY (1u << 14)

/* Cold path of gcn_walk_insn at an await boundary: -1 on an inconsistency. */
int gcn_walk_await_point(gcn_walk *w);

/* Start a wave at instruction index entry_idx of prog (the kernel's entry). */
void gcn_walk_init(gcn_walk *w, const gcn_program *prog, uint32_t entry_idx, const trc_wave *tw);

/* Cold path: formats w->err ("dynamic instruction N, pc 0x... op: " first when
 * the pc is in the code object) and
 * returns -1. */
int gcn_walk_fail(gcn_walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The instruction at the walk's position with EXEC brought up to date; NULL
 * (w->err) when the pc left the code object, no s_endpgm came within the
 * recorded instruction count, or the instruction is invalid or a GDS op. */
static inline const gcn_insn *gcn_walk_insn(gcn_walk *w)
{
    const trc_wave *tw = w->tw;
    if (w->idx >= w->prog->n_insn) {
        gcn_walk_fail(w, "program counter left the code object");
        return NULL;
    }
    if (w->dyn >= w->n_instr) {
        gcn_walk_fail(w, "no s_endpgm within the %llu recorded instructions", (unsigned long long)tw->n_instr);
        return NULL;
    }
    if (__builtin_expect(w->aw_check, 0) && gcn_walk_await_point(w) < 0)
        return NULL;
    if (w->exec_next_at <= w->dyn) {
        while (w->exec_i < tw->n_exec && tw->exec_at[w->exec_i] <= w->dyn)
            w->exec = tw->exec_val[w->exec_i++];
        w->exec_next_at = w->exec_i < tw->n_exec ? tw->exec_at[w->exec_i] : UINT64_MAX;
    }
    const gcn_insn *in = &w->prog->insn[w->idx];
    if (__builtin_expect((in->flags & (GCN_IF_INVALID | GCN_IF_GDS)) != 0, 0) &&
        ((in->flags & GCN_IF_INVALID) || in->op != GCN_OP_ds_gws_barrier)) {
        /* of the GDS ops only the grid barrier (cooperative launches) runs */
        gcn_walk_fail(w, in->flags & GCN_IF_GDS ? "GDS instruction (unsupported)" : "invalid instruction");
        return NULL;
    }
    return in;
}

/* Does in consume a recorded memory op (a VMEM/SMEM/LDS load, store or atomic)? */
static inline int gcn_walk_is_mem(const gcn_insn *in)
{
    return (in->unit == GCN_UNIT_VMEM || in->unit == GCN_UNIT_SMEM || in->unit == GCN_UNIT_LDS) &&
           (in->flags & (GCN_IF_LOAD | GCN_IF_STORE | GCN_IF_ATOMIC));
}

/* The memory op of in (gcn_walk_is_mem(in) must hold): 1 with *op, 0 when
 * in runs under EXEC = 0 and left no record (*op = NULL), -1 when the record
 * has no memory op left for it. */
static inline int gcn_walk_mem(gcn_walk *w, const gcn_insn *in, const trc_mem_op **op)
{
    int vec_off = in->unit != GCN_UNIT_SMEM && w->exec == 0;
    *op = NULL;
    if (w->mem_i >= w->n_mem) {
        if (vec_off)
            return 0;
        return gcn_walk_fail(w, "memory instruction beyond the %u recorded memory ops", w->n_mem);
    }
    if (vec_off && w->mem[w->mem_i].exec != 0)
        return 0;
    *op = &w->mem[w->mem_i++];
    return 1;
}

/* Count in as executed and move to the instruction that follows it (branch
 * outcome, jump or indirect target from the record); s_endpgm sets w->ended.
 * Returns 0, or -1 when a recorded outcome/target is missing or the target
 * is not an instruction. */
static inline int gcn_walk_step(gcn_walk *w, const gcn_insn *in)
{
    const trc_wave *tw = w->tw;
    uint32_t fl = in->flags;
    w->dyn++;
    if (!(fl & (GCN_IF_ENDPGM | GCN_IF_BR_COND | GCN_IF_BR_JUMP | GCN_IF_BR_INDIRECT))) {
        w->idx++;
        return 0;
    }
    uint64_t tgt;
    if (fl & GCN_IF_ENDPGM) {
        w->ended = 1;
        return 0;
    } else if (fl & GCN_IF_BR_COND) {
        if (w->br_i >= w->n_branch)
            return gcn_walk_fail(w, "conditional branch beyond the %u recorded outcomes", w->n_branch);
        int taken = (w->branch_taken[w->br_i >> 3] >> (w->br_i & 7)) & 1;
        w->br_i++;
        if (!taken) {
            w->idx++;
            return 0;
        }
        tgt = in->target;
    } else if (fl & GCN_IF_BR_JUMP) {
        tgt = in->target;
    } else {
        if (w->ind_i >= tw->n_indirect)
            return gcn_walk_fail(w, "indirect branch beyond the %u recorded targets", tw->n_indirect);
        tgt = tw->indirect_target[w->ind_i++];
    }
    const gcn_insn *t = gcn_program_at(w->prog, tgt);
    if (!t)
        return gcn_walk_fail(w, "branch target 0x%llx is not an instruction", (unsigned long long)tgt);
    w->idx = (uint32_t)(t - w->prog->insn);
    return 0;
}

/* After s_endpgm: 0 when the wave used its whole record, else -1 (w->err). */
int gcn_walk_end(gcn_walk *w);

/* All of it, for tools: 1 with the next instruction (*in) and the memory op
 * it consumed (*op, or NULL); 0 once the wave has ended with its record used
 * up; -1 on an inconsistency (w->err). */
int gcn_walk_next(gcn_walk *w, const gcn_insn **in, const trc_mem_op **op);

#ifdef __cplusplus
}
#endif
#endif
