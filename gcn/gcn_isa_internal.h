/*
 * gcn_isa_internal.h - private to gcn/ (and its tests in tests/gcn/): the
 * wrappers that expand the instruction table gcn3.def into gcn_op_infos[].
 * What executors and tools need of the table (formats, opcodes, gcn_op_info,
 * decoder attributes and patterns, operand codes) is public in gcn_isa.h and
 * gcn_operand.h.
 */
#ifndef GCN_ISA_INTERNAL_H
#define GCN_ISA_INTERNAL_H

#include "gcn_isa.h"
#include "gcn_operand.h"

/* The table wrappers: each field of gcn3.def is named by its macro. */
#define FMT(x) GCN_FMT_##x
#define OPC(x) x
#define UNIT(x) GCN_UNIT_##x
#define FLAGS(x) (x)
#define MEM(x) x
#define DW(x) x
#define SW(a, b, c) a, b, c
#define ATTR(x) (x)
#define AOP(x) GCN_AT_##x
#define ELEM(b, n, s) b, n, s
#define SEG(x) GCN_SEG_##x
#define VCLS(x) GCN_VCLS_##x
#define GCN_ARG0(a, b, c) a
#define GCN_ARG1(a, b, c) b
#define GCN_ARG2(a, b, c) c

/* Sets GCN_IF_POLL_EXIT on p's conditional back-edges whose condition may
 * depend on a value a poll-capable load of their loop returned (gcn_poll.c).
 * Called by gcn_program_decode once the loop heads are marked. */
void gcn_program_mark_poll_exits(gcn_program *p);

#endif
