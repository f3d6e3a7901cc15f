/*
 * gcn_sem_dpp.c - SDWA (sub-dword addressing) and DPP (data-parallel
 * primitives) operand forms of VOP1/VOP2/VOPC instructions.
 * Source: AMD GCN3 ISA manual (Rev 1.1, 2016) Sec. 6.? and 12.? (SDWA, DPP).
 */
#include "gcn_sem_internal.h"

void gcn_sem_sdwa_dpp(gcn_wave *w, const gcn_insn *in, gcn_exec_fn h)
{
    (void)h;
    wave_error(w, in, GCN_WAVE_ILLEGAL, "%s operands of %s are not implemented",
               (in->mods & GCN_M_SDWA) ? "SDWA" : "DPP", gcn_op_name(in->op));
}
