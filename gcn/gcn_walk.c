/*
 * gcn_walk.c - the cold half of the wave walker (gcn_walk.h): start, error
 * messages, the end-of-wave check, and the all-in-one step for tools.
 */
#include "gcn_walk.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void gcn_walk_init(gcn_walk *w, const gcn_program *prog, uint32_t entry_idx, const trc_wave *tw)
{
    memset(w, 0, sizeof *w);
    w->prog = prog;
    w->tw = tw;
    w->idx = entry_idx;
    w->exec = ~0ull; /* until the first recorded value (every wave records EXEC at 0) */
    w->n_instr = tw ? tw->n_instr : 0;
    w->mem = tw ? tw->mem : NULL;
    w->n_mem = tw ? tw->n_mem : 0;
    w->n_branch = tw ? tw->n_branch : 0;
    w->branch_taken = tw ? tw->branch_taken : NULL;
    w->exec_next_at = tw && tw->n_exec ? tw->exec_at[0] : UINT64_MAX;
}

int gcn_walk_fail(gcn_walk *w, const char *fmt, ...)
{
    size_t n = 0;
    if (w->prog && w->idx < w->prog->n_insn) {
        const gcn_insn *in = &w->prog->insn[w->idx];
        n = (size_t)snprintf(w->err, sizeof w->err, "dynamic instruction %" PRIu64 ", pc 0x%" PRIx64 " %s: ", w->dyn,
                             in->pc, gcn_op_name(in->op));
        if (n >= sizeof w->err) n = sizeof w->err - 1;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err + n, sizeof w->err - n, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- awaits ------------------------------------------------------------------ */

static void pos_save(const gcn_walk *w, gcn_walk_pos *p)
{
    *p = (gcn_walk_pos){w->idx, w->dyn, w->exec, w->exec_i, w->br_i, w->ind_i, w->mem_i};
}

static void pos_restore(gcn_walk *w, const gcn_walk_pos *p)
{
    w->idx = p->idx;
    w->dyn = p->dyn;
    w->exec = p->exec;
    w->exec_i = p->exec_i;
    w->exec_next_at = w->exec_i < w->tw->n_exec ? w->tw->exec_at[w->exec_i] : UINT64_MAX;
    w->br_i = p->br_i;
    w->ind_i = p->ind_i;
    w->mem_i = p->mem_i;
}

/* The polls of the current iteration start afresh (the caller sets them). */
static inline void polls_reset(gcn_walk *w)
{
    w->aw_diff = 0;
    w->aw_hard = 0;
}

/* Make await w->aw_i the one ahead (or turn the checks off). */
static int await_next(gcn_walk *w)
{
    const trc_wave *tw = w->tw;
    w->aw_state = GCN_AW_NONE;
    polls_reset(w);
    w->aw_n = 0;
    w->aw_check = w->aw_i < tw->n_await;
    if (!w->aw_check)
        return 0;
    const gcn_insn *h = gcn_program_at(w->prog, tw->await_pc[w->aw_i]);
    if (!h) {
        w->aw_check = 0;
        return gcn_walk_fail(w, "await %u: loop head 0x%" PRIx64 " is not an instruction", w->aw_i,
                             tw->await_pc[w->aw_i]);
    }
    w->aw_head = (uint32_t)(h - w->prog->insn);
    w->aw_back = UINT32_MAX;
    w->aw_kind = tw->await_kind ? tw->await_kind[w->aw_i] : TRC_AWAIT_WAIT;
    return 0;
}

/* The current await is over; counted as a soft exit or a give-up when it
 * ended so. Then the next await ahead. */
static int await_leave(gcn_walk *w, int soft, int gave_up)
{
    if (soft)
        w->aw_soft_exits++;
    if (gave_up) {
        if (!w->aw_gave_up)
            w->aw_gave_up_pc = w->tw->await_pc[w->aw_i];
        w->aw_gave_up++;
    }
    w->aw_i++;
    return await_next(w);
}

/* Walk the template (of a RETRY: its only iteration, started at dyn `at`)
 * again: memory did not yet show what the recording saw. */
static void await_again(gcn_walk *w, uint64_t at)
{
    w->aw_n++;
    w->aw_repeats++;
    w->aw_iters++;
    w->dyn_extra += w->dyn - at;
    pos_restore(w, &w->aw_pos);
    polls_reset(w);
}

/* A RETRY await: the loop's only recorded iteration [at, end). */
static int await_retry(gcn_walk *w, uint64_t at, uint64_t end)
{
    if (w->aw_state == GCN_AW_NONE) {
        if (w->dyn != at)
            return 0;
        if (w->idx != w->aw_head)
            return gcn_walk_fail(w, "await %u starts at instruction %" PRIu64 " away from its loop head 0x%" PRIx64,
                                 w->aw_i, at, w->tw->await_pc[w->aw_i]);
        pos_save(w, &w->aw_pos);
        w->aw_state = GCN_AW_TEMPLATE;
        polls_reset(w);
        w->aw_iters++;
        return 0;
    }
    if (w->dyn != end)
        return 0;
    if (w->aw_diff && !w->aw_hard) /* a set flag, set to another value: the loop ends */
        return await_leave(w, 1, 0);
    if (!w->aw_diff || w->aw_n >= GCN_WALK_MAX_RETRY || w->aw_n >= w->aw_max) /* as recorded (or gave up): on */
        return await_leave(w, 0, w->aw_diff);
    await_again(w, at); /* memory was not yet what the recording saw: the loop runs again */
    return 0;
}

void gcn_walk_awaits_on(gcn_walk *w, uint64_t max_repeats)
{
    w->aw_max = max_repeats ? max_repeats : 1;
    await_next(w);
}

/* From the loop head in the region before the template, memory changed: walk
 * the record without executing up to the template's end (saving its start),
 * where the way out begins. */
static int await_skip(gcn_walk *w, uint64_t at, uint64_t end)
{
    uint64_t from = w->dyn;
    w->aw_check = 0; /* gcn_walk_insn without the await checks */
    while (w->dyn < end) {
        if (w->dyn == at)
            pos_save(w, &w->aw_pos);
        const gcn_insn *in = gcn_walk_insn(w);
        if (!in)
            return -1;
        if (w->dyn + 1 == end)
            w->aw_back = w->idx;
        const trc_mem_op *op;
        if ((gcn_walk_is_mem(in) && gcn_walk_mem(w, in, &op) < 0) || gcn_walk_step(w, in) < 0)
            return -1;
    }
    w->aw_check = 1;
    if (w->idx != w->aw_head)
        return gcn_walk_fail(w, "await %u's template does not return to its loop head 0x%" PRIx64, w->aw_i,
                             w->tw->await_pc[w->aw_i]);
    w->dyn_skipped += end - from;
    w->aw_state = GCN_AW_EXIT;
    polls_reset(w);
    return 0;
}

int gcn_walk_await_point(gcn_walk *w)
{
    const trc_wave *tw = w->tw;
    uint64_t at = tw->await_at[w->aw_i], end = at + tw->await_len[w->aw_i];
    if (w->aw_kind == TRC_AWAIT_RETRY)
        return await_retry(w, at, end);
    switch (w->aw_state) {
    case GCN_AW_NONE:
        /* the wait's own loop run: at most two iterations of the template's
         * length before it (the emulator keeps no more), not an earlier run
         * of the same loop */
        if (w->idx != w->aw_head || w->dyn > at || (at - w->dyn) % (end - at) != 0 || at - w->dyn > 2 * (end - at))
            return 0;
        w->aw_state = GCN_AW_REGION; /* at the loop head: the wave polls */
        /* fall through */
    case GCN_AW_REGION:
        if (w->idx == w->aw_head && w->dyn <= at) {
            if (w->dyn < at)
                w->aw_iters++;
            if (w->aw_diff) { /* a poll of the last iteration saw memory change */
                w->aw_tmpl_hard = w->aw_hard;
                return await_skip(w, at, end);
            }
        }
        if (w->dyn == at) {
            if (w->idx != w->aw_head)
                return gcn_walk_fail(w, "await %u starts at instruction %" PRIu64 " away from its loop head 0x%" PRIx64,
                                     w->aw_i, at, tw->await_pc[w->aw_i]);
            pos_save(w, &w->aw_pos);
            w->aw_state = GCN_AW_TEMPLATE;
            polls_reset(w);
            w->aw_iters++;
        }
        return 0;
    case GCN_AW_TEMPLATE:
        if (w->dyn + 1 == end)
            w->aw_back = w->idx; /* the back-edge: the template's last instruction */
        if (w->dyn != end)
            return 0;
        if (w->idx != w->aw_head)
            return gcn_walk_fail(w, "await %u's template does not return to its loop head 0x%" PRIx64, w->aw_i,
                                 tw->await_pc[w->aw_i]);
        if (w->aw_diff) {
            w->aw_state = GCN_AW_EXIT; /* memory changed: try the recorded way out */
            w->aw_tmpl_hard = w->aw_hard;
            polls_reset(w);
            return 0;
        }
        break; /* nothing changed: again */
    case GCN_AW_EXIT:
        if (w->dyn == end || (w->idx > w->aw_head && w->idx <= w->aw_back))
            return 0; /* still in the loop's first iteration after the template */
        if (!w->aw_diff) /* it saw what the recording saw: the wait is over */
            return await_leave(w, 0, 0);
        if (!w->aw_hard && w->aw_tmpl_hard)
            /* the flag the template waited on is set, to another value than
             * the recording's: the loop ends (order-dependent data) */
            return await_leave(w, 1, 0);
        break; /* not what the recording saw: back to waiting */
    default:
        return 0;
    }
    if (w->aw_n >= w->aw_max)
        /* max_repeats polls and memory never showed what the recording saw:
         * the configured machine does not end this wait. Give up: go on as
         * recorded (from the template's end the way out, from inside the way
         * out the rest of it), counted for the caller to report. */
        return await_leave(w, 0, 1);
    await_again(w, at);
    w->aw_state = GCN_AW_TEMPLATE;
    return 0;
}

int gcn_walk_end(gcn_walk *w)
{
    const trc_wave *tw = w->tw;
    if (w->dyn != tw->n_instr)
        return gcn_walk_fail(w, "s_endpgm after %" PRIu64 " instructions, the trace says %" PRIu64, w->dyn,
                             tw->n_instr);
    if (w->br_i != tw->n_branch)
        return gcn_walk_fail(w, "wave ended with %u of %u recorded branch outcomes used", w->br_i, tw->n_branch);
    if (w->ind_i != tw->n_indirect)
        return gcn_walk_fail(w, "wave ended with %u of %u recorded indirect targets used", w->ind_i,
                             tw->n_indirect);
    if (w->mem_i != tw->n_mem)
        return gcn_walk_fail(w, "wave ended with %u of %u recorded memory ops used", w->mem_i, tw->n_mem);
    if (w->aw_check && w->aw_i < tw->n_await)
        return gcn_walk_fail(w, "await %u (instruction %" PRIu64 ") was never reached at its loop head 0x%" PRIx64,
                             w->aw_i, tw->await_at[w->aw_i], tw->await_pc[w->aw_i]);
    return 0;
}

int gcn_walk_next(gcn_walk *w, const gcn_insn **inp, const trc_mem_op **opp)
{
    if (w->ended)
        return gcn_walk_end(w) ? -1 : 0;
    const gcn_insn *in = gcn_walk_insn(w);
    if (!in)
        return -1;
    const trc_mem_op *op = NULL;
    if (gcn_walk_is_mem(in) && gcn_walk_mem(w, in, &op) < 0)
        return -1;
    if (gcn_walk_step(w, in) < 0)
        return -1;
    *inp = in;
    *opp = op;
    return 1;
}
