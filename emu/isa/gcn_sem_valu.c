/*
 * gcn_sem_valu.c - VALU instruction semantics beyond gcn_sem.c: 16-bit float
 * arithmetic and the remaining VOP1/VOP2/VOP3/VOPC opcodes.
 * Source: AMD GCN3 ISA manual (Rev 1.1, 2016) Ch. 6 and 12.
 */
#include "gcn_sem_internal.h"

#include "gcn_sem_ops.h"

/* referenced by gcn_sem.c so that the static library links this file */
const char gcn_sem_valu_part[] = "valu";
