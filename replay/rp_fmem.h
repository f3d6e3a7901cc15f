/*
 * rp_fmem.h - functional memory image of the replay (data-value checking,
 * DESIGN.md Sec. 6) and the statistics registry.
 *
 * The image is sparse: 4 KiB pages in an open-addressing hash keyed by page
 * number, created on first write; never-written bytes read as zero. It starts
 * from the trace's host-side writes (COPY H2D / INIT data, MEMSET, D2D),
 * receives store data and atomic results when the timing model performs them,
 * and answers loads, whose values are compared with what the emulator saw.
 *
 * Not thread-safe (one image per replay).
 */
#ifndef RP_FMEM_H
#define RP_FMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct rp_fmem rp_fmem;

rp_fmem *rp_fmem_create(void);
void rp_fmem_destroy(rp_fmem *m); /* accepts NULL */
/* Return 0, or -1 when out of memory. */
int rp_fmem_write(rp_fmem *m, uint64_t addr, const void *src, size_t n);
int rp_fmem_fill(rp_fmem *m, uint64_t addr, uint8_t value, size_t n);
int rp_fmem_copy(rp_fmem *m, uint64_t dst, uint64_t src, size_t n);
void rp_fmem_read(rp_fmem *m, uint64_t addr, void *dst, size_t n);
/* True iff the n bytes at addr equal exp (never-written bytes are zero);
 * the data check's fast path: no copy. */
bool rp_fmem_equal(rp_fmem *m, uint64_t addr, const void *exp, size_t n);
size_t rp_fmem_pages(const rp_fmem *m);

/* Atomic operations of GCN3 (FLAT/MUBUF/DS atomics), derived from the mnemonic. */
typedef enum rp_atomic_op {
    RP_AT_NONE = 0, RP_AT_SWAP, RP_AT_CMPSWAP, RP_AT_ADD, RP_AT_SUB, RP_AT_SMIN, RP_AT_UMIN,
    RP_AT_SMAX, RP_AT_UMAX, RP_AT_AND, RP_AT_OR, RP_AT_XOR, RP_AT_INC, RP_AT_DEC, RP_AT_ADD_F32,
    RP_AT_RSUB, RP_AT_UNKNOWN,
} rp_atomic_op;

/* "flat_atomic_add_x2" -> RP_AT_ADD (x2/_u64/_b64/_i64 variants map to the
 * same op; the width comes from bytes_per_lane). */
rp_atomic_op rp_atomic_from_name(const char *mnemonic);
/* new value of an atomic of `bytes` (4 or 8) given old memory value, the
 * source operand and (cmpswap) the compare value. GCN3 ISA manual Sec. 9/10
 * (inc/dec wrap: inc: old >= src ? 0 : old+1; dec: old == 0 || old > src ? src : old-1). */
uint64_t rp_atomic_apply(rp_atomic_op op, unsigned bytes, uint64_t old, uint64_t src, uint64_t cmp);

/* ---- statistics ------------------------------------------------------------ */

typedef struct rp_stat {
    char *name;        /* "gpu[0].cu[3].l1v.read_hits" */
    uint64_t *ptr;     /* the counter, incremented in place on the hot path */
    const char *unit;  /* "count", "bytes", "ps" */
} rp_stat;

typedef struct rp_stats {
    rp_stat *v;
    size_t n, cap;
} rp_stats;

/* Register counter ptr under prefix.name. Returns 0 or -1 (out of memory). */
int rp_stats_add(rp_stats *s, const char *prefix, const char *name, uint64_t *ptr, const char *unit);
void rp_stats_snapshot(const rp_stats *s, uint64_t *out); /* out: s->n values */
void rp_stats_fini(rp_stats *s);

#endif
