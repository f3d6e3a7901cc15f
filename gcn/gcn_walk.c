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
