/*
 * 3xx_wave_harness.h - hand-built wavefronts for the instruction-semantics
 * tests (tests/emu/3xx-*.c), with test doubles of the exec/ memory functions
 * (gcn_mem_global, gcn_mem_flat) and of the trace recording calls (trc_rec_*),
 * so that these tests depend only on emu/isa. Include from exactly one .c file
 * per test binary; such a test must not use exec/ or traceformat/.
 *
 * Memory model of the doubles: "global" memory is the array g_mem (device
 * address = host address); anything else faults like exec would. The private
 * aperture maps to g_scratch with the swizzle of gcn_wave.h; the group
 * aperture to the wave's LDS.
 */
#ifndef TESTS_3XX_WAVE_HARNESS_H
#define TESTS_3XX_WAVE_HARNESS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gcn/gcn_isa.h"
#include "gcn/gcn_operand.h"
#include "emu/isa/gcn_sem.h"
#include "emu/isa/gcn_wave.h"

#include "data/3xx-programs.h"

#define VADDR 0x100u
static _Alignas(64) uint8_t g_mem[1 << 16];
static _Alignas(64) uint8_t g_scratch[1 << 16];
static uint8_t g_lds[1 << 16];
static uint32_t g_vregs[128][GCN_WAVE_LANES];

/* ---- test doubles ---- */
void *gcn_mem_global(gcn_wave *w, uint64_t addr, uint32_t len, int write, uint32_t lane, uint64_t pc)
{
    uint64_t a0 = (uint64_t)(uintptr_t)g_mem, s0 = (uint64_t)(uintptr_t)g_scratch;
    if (addr >= a0 && addr + len <= a0 + sizeof g_mem) return (void *)(uintptr_t)addr;
    if (addr >= s0 && addr + len <= s0 + sizeof g_scratch) return (void *)(uintptr_t)addr;
    w->status = GCN_WAVE_FAULT;
    snprintf(w->err, sizeof w->err, "memory fault in kernel %s: lane %u pc 0x%llx: %s of %u bytes at 0x%llx",
             w->kernel_name, lane, (unsigned long long)pc, write ? "write" : "read", len, (unsigned long long)addr);
    return NULL;
}

void *gcn_mem_flat(gcn_wave *w, uint64_t addr, uint32_t len, int write, uint32_t lane, uint64_t pc,
                   gcn_flat_kind *kind, uint64_t *trace_addr)
{
    uint32_t hi = (uint32_t)(addr >> 32), lo = (uint32_t)addr;
    if (hi == GCN_GROUP_APERTURE_HI) {
        *kind = GCN_FLAT_LDS;
        *trace_addr = lo;
        if ((uint64_t)lo + len > w->lds_size) {
            w->status = GCN_WAVE_FAULT;
            snprintf(w->err, sizeof w->err, "LDS fault");
            return NULL;
        }
        return w->lds + lo;
    }
    if (hi == GCN_PRIVATE_APERTURE_HI) {
        *kind = GCN_FLAT_PRIVATE;
        uint64_t a = w->scratch_base + w->scratch_wave_offset + (lo / 4) * 256 + lane * 4 + lo % 4;
        *trace_addr = a;
        return gcn_mem_global(w, a, len, write, lane, pc);
    }
    *kind = GCN_FLAT_GLOBAL;
    *trace_addr = addr;
    return gcn_mem_global(w, addr, len, write, lane, pc);
}

/* recording double: a flat log of what the interpreter reported through its
 * recorder interface (gcn_wave.h) */
typedef struct rec_log {
    int n_branch, taken[64];
    int n_indirect;
    uint64_t indirect[16];
    int n_exec;
    uint64_t exec_at[64], exec_val[64];
    int n_mem;
    uint32_t mem_flags[64], mem_bytes[64]; /* flags without GCN_MO_LINEAR4 (a hint: mem_linear) */
    uint8_t mem_linear[64];                /* the op came with GCN_MO_LINEAR4 (checked true in log_mem) */
    uint64_t mem_exec[64], mem_addr0[64];
    uint8_t mem_load[64][64], mem_store[64][64];
    int ended;
    uint64_t end_n;
} rec_log;
static rec_log g_log;

static void log_branch(void *g, uint32_t wave, int taken)
{
    (void)g; (void)wave;
    if (g_log.n_branch < 64) g_log.taken[g_log.n_branch] = taken;
    g_log.n_branch++;
}
static void log_indirect(void *g, uint32_t wave, uint64_t t)
{
    (void)g; (void)wave;
    if (g_log.n_indirect < 16) g_log.indirect[g_log.n_indirect] = t;
    g_log.n_indirect++;
}
static void log_exec(void *g, uint32_t wave, uint64_t at, uint64_t exec)
{
    (void)g; (void)wave;
    if (g_log.n_exec < 64) { g_log.exec_at[g_log.n_exec] = at; g_log.exec_val[g_log.n_exec] = exec; }
    g_log.n_exec++;
}
static void log_mem(void *g, uint32_t wave, uint32_t flags, uint32_t bpl, uint64_t exec, const uint64_t *addr,
                    const void *ld, const void *st)
{
    (void)g; (void)wave;
    int i = g_log.n_mem++;
    if (flags & GCN_MO_LINEAR4) {
        /* the hint must hold: every active lane at the first one's address + 4 per lane */
        unsigned f = exec ? (unsigned)__builtin_ctzll(exec) : 0;
        for (unsigned l = 0; l < 64; l++)
            if ((exec >> l) & 1)
                assert_int_equal(addr[l], addr[f] + 4ull * (l - f));
    }
    if (i >= 64) return;
    g_log.mem_linear[i] = (flags & GCN_MO_LINEAR4) != 0;
    flags &= ~(uint32_t)GCN_MO_LINEAR4;
    g_log.mem_flags[i] = flags;
    g_log.mem_bytes[i] = bpl;
    g_log.mem_exec[i] = exec;
    unsigned first = exec ? (unsigned)__builtin_ctzll(exec) : 0;
    g_log.mem_addr0[i] = addr[first];
    size_t n = bpl * (size_t)__builtin_popcountll(exec);
    if (n > 64) n = 64;
    if (ld) memcpy(g_log.mem_load[i], ld, n);
    if (st) memcpy(g_log.mem_store[i], st, n);
}
static void log_wave_end(void *g, uint32_t wave, uint64_t n)
{
    (void)g; (void)wave;
    g_log.ended = 1;
    g_log.end_n = n;
}

/* the recorder the interpreter reports to when a test records */
static const gcn_recorder_ops g_log_ops = {log_branch, log_indirect, log_exec, log_mem, log_wave_end,
                                           NULL, NULL, NULL, NULL, NULL, NULL};

/* ---- wave construction ---- */
typedef struct harness {
    gcn_wave w;
    gcn_program *p;
    uint32_t code[256];
} harness;

/* MODE as compiled HIP kernels start (FACTS.md): round to nearest, f32
 * denormals flushed, f64 denormals kept, DX10_CLAMP and IEEE on. */
#define MODE_HIP 0x3c0u

static void wave_init_(harness *h, const uint32_t *code, size_t nwords, int record)
{
    memset(h, 0, sizeof *h);
    memset(g_vregs, 0, sizeof g_vregs);
    memset(&g_log, 0, sizeof g_log);
    assert_true(nwords <= 256);
    memcpy(h->code, code, nwords * 4);
    h->p = gcn_program_decode(NULL, (const uint8_t *)h->code, nwords * 4, VADDR);
    assert_non_null(h->p);
    gcn_wave *w = &h->w;
    w->prog = h->p;
    w->pc = VADDR;
    w->image_base = (uint64_t)(uintptr_t)h->code - VADDR;
    w->v = g_vregs;
    w->n_vgpr = 128;
    w->mode = MODE_HIP;
    w->kernel_name = "test_kernel";
    w->lds = g_lds;
    w->lds_size = 8192;
    w->scratch_base = (uint64_t)(uintptr_t)g_scratch;
    w->scratch_wave_offset = 0;
    w->rec = record ? (gcn_recorder){&g_log_ops, &g_log, 1} : (gcn_recorder){NULL, NULL, 0};
    gcn_set_exec(w, ~0ull);
}
#define WAVE_INIT(h, prog, rec) wave_init_(h, prog, sizeof(prog) / 4, rec)

static void wave_fini(harness *h) { gcn_program_free(h->p); }

static gcn_wave_status run_ok(harness *h)
{
    gcn_wave_status st = gcn_wave_run(&h->w);
    if (st != GCN_WAVE_DONE) print_error("wave stopped with status %d: %s\n", (int)st, h->w.err);
    assert_int_equal(st, GCN_WAVE_DONE);
    return st;
}

static inline float fb(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static inline uint32_t bf(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
static inline uint64_t v64(unsigned r, unsigned l) { return g_vregs[r][l] | (uint64_t)g_vregs[r + 1][l] << 32; }
static inline void set64(unsigned r, unsigned l, uint64_t v) { g_vregs[r][l] = (uint32_t)v; g_vregs[r + 1][l] = (uint32_t)(v >> 32); }

#endif
