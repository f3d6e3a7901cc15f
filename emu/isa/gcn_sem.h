/*
 * gcn_sem.h - the emulator's instruction semantics, as seen from outside
 * emu/isa: the handler of each opcode of gcn/gcn3.def (gcn_sem*.c) and which
 * opcodes are refused on purpose. The decoder (gcn/) knows nothing of them:
 * the run loop looks the handler up by opcode.
 */
#ifndef GCN_SEM_H
#define GCN_SEM_H

#include "gcn/gcn_isa.h"

struct gcn_wave;
/* Semantics of one op: executes `in` on wavefront w (all lanes under EXEC). */
typedef void (*gcn_exec_fn)(struct gcn_wave *w, const gcn_insn *in);

/* Handler table indexed by gcn_op, defined by gcn_sem.c; NULL for an op
 * without semantics (executing it stops the wave with GCN_WAVE_ILLEGAL). */
extern const gcn_exec_fn gcn_sem_handlers[GCN_OP_COUNT];

/* Ops whose handler only stops the wave with a message (graphics-only
 * encodings, fork/join, trap return): the reason, or NULL when op executes.
 * For docs/isa-coverage.md (gcn_sem.c). */
const char *gcn_sem_refusal(unsigned op);

#endif
