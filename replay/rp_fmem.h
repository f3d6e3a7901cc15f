/*
 * rp_fmem.h - the contents of the modelled DRAM (data-value checking,
 * DESIGN.md Sec. 6).
 *
 * The image is sparse: 4 KiB pages in a radix tree keyed by page number,
 * created on first write; never-written bytes read as zero. It is
 * the backing store below the L2s: it starts from the trace's host-side
 * writes (COPY H2D / INIT data, MEMSET, D2D; perform.c keeps L2 copies of
 * those bytes up to date), receives the data of dirty lines the L2 banks
 * write back (eviction, kernel-end flush, the flush before a D2H copy),
 * fills L2 misses, and answers D2H copies, whose bytes are compared with
 * what the host received. Loads are checked in the caches, not here.
 *
 * Thread-safe for the partitions of one parallel replay: page lookup and
 * creation are lock-free; concurrent writers must touch different bytes
 * (each line has one owner L2 bank).
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

/* Atomics are applied with gcn_atomic_apply() (gcn/gcn_isa.h), the same
 * arithmetic the emulator used. */

#endif
