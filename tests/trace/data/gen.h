/*
 * gen.h - the checked-in generator of the golden traces in tests/trace/data/
 * and of the traces the salvage tests cut (tests/trace/503-salvage.c,
 * 504-golden.c). Header-only so each test binary carries its own copy.
 *
 * gen_trace() writes a small trace whose content is a pure function of the
 * code below: a header, two code objects, every host event kind (ALLOC, one
 * of them managed, COPY H2D/D2H/D2D/INIT, MEMSET, LAUNCH, SYNC, FREE) on two
 * devices and streams, and three kernels whose wavefronts use every record
 * type: branch outcomes, indirect targets, EXEC changes, and memory ops of
 * every flag combination the emulator produces (LOAD, STORE, ATOMIC,
 * ATOMIC|CMPSWAP, LDS, SMEM, SCRATCH; strided, broadcast and gathered
 * addresses; full and partial EXEC; with data values). Workgroups are
 * committed from `threads` threads in an order shuffled by `seed`: the file
 * must not depend on either.
 *
 * Format 2.0: the waves of kernel 2 run a long loop and, with limits of
 * GEN_SEG_REC / GEN_SEG_DATA bytes, stream out in wave segments (unless
 * gen_no_segments is set: the decoded content must be the same either way).
 * Format 2.1: one ALLOC of device memory (the third event) is managed.
 *
 * gen_content_hash() hashes everything a reader returns for a trace, so a
 * golden file's decoded content can be pinned by one number.
 */
#ifndef TRC_TEST_GEN_H
#define TRC_TEST_GEN_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traceformat/trc.h"
#include "traceformat/trc_internal.h"

#define GEN_NK 3
#define GEN_SEG_REC 512
#define GEN_SEG_DATA 2048
#define GEN_LOOP 24 /* iterations of kernel 2's loop */
static int gen_no_segments; /* keep every wave whole */
static const uint32_t gen_grid[GEN_NK][3] = {{3, 2, 1}, {2, 1, 2}, {5, 1, 1}};
static const uint32_t gen_waves[GEN_NK] = {2, 1, 3};

static inline uint64_t gen_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static inline void gen_bytes(uint8_t *p, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(gen_mix(seed + i / 4) >> (8 * (i % 4)));
}

/* Records workgroup `lin` of kernel k into g (to be committed to w). */
static inline void gen_record_wg(trc_wg_rec *g, uint32_t k, uint32_t lin, trc_writer *w)
{
    const uint32_t *gr = gen_grid[k];
    uint32_t id[3] = {lin % gr[0], (lin / gr[0]) % gr[1], lin / (gr[0] * gr[1])};
    uint32_t nw = gen_waves[k];
    trc_wg_rec_begin(g, k, id, nw);
    if (k == 2 && !gen_no_segments) trc_wg_rec_stream(g, w);
    trc_wg_rec_hash_loads(g, k == 2); /* 2.2: kernel 2's plain loads carry hashes, not values */
    trc_wg_rec_host_image(g, k < 2 ? w : NULL); /* 2.6: see the host-image loads below */
    for (uint32_t v = 0; v < nw; v++) {
        uint64_t s = ((uint64_t)k << 40) | ((uint64_t)lin << 8) | v;
        uint64_t dyn = 0;
        trc_rec_exec(g, v, 0, ~0ull);
        uint64_t addr[64];
        uint8_t ld[64 * 16], st[64 * 16 * 2];
        /* unit-stride dword load, full EXEC */
        for (int l = 0; l < 64; l++) addr[l] = 0x10000 + 0x1000ull * lin + 4u * (unsigned)l;
        gen_bytes(ld, 256, s * 31 + 1);
        trc_rec_mem(g, v, TRC_MO_LOAD, 4, ~0ull, addr, ld, NULL);
        /* branches */
        uint32_t nb = 3 + (lin + v) % 9;
        for (uint32_t b = 0; b < nb; b++) trc_rec_branch(g, v, (int)(gen_mix(s + b) & 1));
        /* EXEC change, then a partial-EXEC strided store */
        dyn += 5 + v;
        uint64_t ex = 0x00ff00ff00ff00ffull << (v & 7);
        trc_rec_exec(g, v, dyn, ex);
        gen_bytes(st, 4 * 32, s * 31 + 2);
        trc_rec_mem(g, v, TRC_MO_STORE, 4, ex, addr, NULL, st);
        /* gather (DELTAS): 8 bytes per lane, scattered addresses */
        for (int l = 0; l < 64; l++) addr[l] = 0x80000 + (gen_mix(s * 64 + (uint64_t)l) & 0xfff8);
        gen_bytes(ld, 8 * 32, s * 31 + 3);
        trc_rec_mem(g, v, TRC_MO_LOAD, 8, ex, addr, ld, NULL);
        if (v == 1) {
            /* 1.2: an await: a wait-loop iteration (a taken back-edge and a
             * poll) kept as the template, one identical repeat dropped */
            uint64_t a = dyn + 1, poll = 0xb0000 + 4ull * k;
            uint8_t z[64 * 8] = {0};
            trc_rec_await_mark(g, v, a);
            trc_rec_mem(g, v, TRC_MO_LOAD, 8, ex, addr, z, NULL);
            trc_rec_branch(g, v, 1);
            if (!trc_rec_await_commit(g, v, a + 2, 0x1100 + poll % 64)) return;
            trc_rec_mem(g, v, TRC_MO_LOAD, 8, ex, addr, z, NULL);
            trc_rec_branch(g, v, 1);
            trc_rec_await_drop(g, v, a + 4);
            trc_rec_await_end(g, v);
        }
        /* broadcast atomic add and compare-swap (stride 0) */
        for (int l = 0; l < 64; l++) addr[l] = 0x90000 + 8ull * k;
        gen_bytes(ld, 4 * 32, s * 31 + 4);
        gen_bytes(st, 4 * 32 * 2, s * 31 + 5);
        trc_rec_mem(g, v, TRC_MO_ATOMIC, 4, ex, addr, ld, st);
        trc_rec_mem(g, v, TRC_MO_ATOMIC | TRC_MO_CMPSWAP, 4, ex, addr, ld, st);
        /* LDS store and load */
        for (int l = 0; l < 64; l++) addr[l] = 256u * v + 4u * (unsigned)(63 - l);
        gen_bytes(st, 256, s * 31 + 6);
        trc_rec_mem(g, v, TRC_MO_STORE | TRC_MO_LDS, 4, ~0ull, addr, NULL, st);
        trc_rec_mem(g, v, TRC_MO_LOAD | TRC_MO_LDS, 4, ~0ull, addr, st, NULL);
        /* scalar load: one address, 16 bytes */
        addr[0] = 0x20000 + 16ull * k;
        gen_bytes(ld, 16, s * 31 + 7);
        trc_rec_mem(g, v, TRC_MO_LOAD | TRC_MO_SMEM, 16, 1, addr, ld, NULL);
        if (k < 2) {
            /* 2.6 host-image loads (trc_wg_rec_host_image): the bytes of the
             * H2D copy at 0x10000 (gen_trace's d[0..256)), of the memset at
             * 0x10100 and (scalar) of the INIT copy at 0x20000 are flagged
             * without values; kernel 1's load at 0x30000, which the D2D copy
             * before it wrote, keeps them (the image does not know them) */
            uint8_t hd[256];
            gen_bytes(hd, sizeof hd, 0xda);
            for (int l = 0; l < 64; l++) addr[l] = 0x10000 + 4u * (unsigned)l;
            trc_rec_mem(g, v, TRC_MO_LOAD, 4, ~0ull, addr, hd, NULL);
            for (int l = 0; l < 8; l++) addr[l] = 0x10100 + 8u * (unsigned)l;
            memset(ld, 0x5a, 64);
            trc_rec_mem(g, v, TRC_MO_LOAD, 8, 0xffull, addr, ld, NULL);
            addr[0] = 0x20010;
            trc_rec_mem(g, v, TRC_MO_LOAD | TRC_MO_SMEM, 16, 1, addr, hd + 116, NULL);
            if (k == 1) {
                for (int l = 0; l < 16; l++) addr[l] = 0x30000 + 4u * (unsigned)l;
                trc_rec_mem(g, v, TRC_MO_LOAD, 4, 0xffffull, addr, hd, NULL);
            }
        }
        /* scratch store (private segment), 16 bytes per lane, one lane active */
        addr[5] = 0xa0000 + 64ull * lin + 16u * v;
        gen_bytes(st, 16, s * 31 + 8);
        trc_rec_mem(g, v, TRC_MO_STORE | TRC_MO_SCRATCH, 16, 1ull << 5, addr, NULL, st);
        /* a memory op with no active lane and one without recorded data */
        trc_rec_mem(g, v, TRC_MO_LOAD, 4, 0, addr, NULL, NULL);
        trc_rec_mem(g, v, TRC_MO_LOAD, 4, ~0ull, addr, NULL, NULL);
        if (v & 1) trc_rec_indirect(g, v, 0x1200 + 4ull * lin);
        trc_rec_exec(g, v, dyn + 7, ~0ull);
        uint64_t n_loop = 0;
        if (k == 2) {
            /* 2.0: a long loop (a branch and a strided load per iteration,
             * an EXEC change every 5th, an indirect jump every 7th): several
             * wave segments, cut at partial branch bytes */
            for (uint32_t it = 0; it < GEN_LOOP; it++) {
                for (int l = 0; l < 64; l++) addr[l] = 0xc0000 + 0x400ull * it + 4u * (unsigned)l;
                gen_bytes(ld, 256, s * 97 + it);
                trc_rec_mem(g, v, TRC_MO_LOAD, 4, ~0ull, addr, ld, NULL);
                trc_rec_branch(g, v, (int)((gen_mix(s + it) >> 3) & 1));
                if (it % 5 == 4) trc_rec_exec(g, v, dyn + 8 + 3 * it, gen_mix(s ^ it) | 1);
                if (it % 7 == 6) trc_rec_indirect(g, v, 0x1300 + 4ull * it);
            }
            n_loop = 3 * GEN_LOOP + 8;
        }
        trc_rec_wave_end(g, v, 30 + lin + v + n_loop);
    }
}

typedef struct gen_job {
    trc_writer *w;
    uint32_t k, n, *order, threads, t;
    int rc;
} gen_job;

static inline void *gen_thread(void *arg)
{
    gen_job *j = arg;
    trc_wg_rec *g = trc_wg_rec_create();
    for (uint32_t i = j->t; i < j->n && g; i += j->threads) {
        gen_record_wg(g, j->k, j->order[i], j->w);
        if (trc_wg_commit(j->w, g) != 0) j->rc = -1;
    }
    if (!g) j->rc = -1;
    trc_wg_rec_destroy(g);
    return NULL;
}

static inline int gen_event(trc_writer *w, trc_event_kind kind, uint32_t dev, uint32_t stream,
                            uint64_t addr, uint64_t src, uint64_t size, int mk, int ck, uint8_t value,
                            const uint8_t *data)
{
    trc_event e;
    memset(&e, 0, sizeof e);
    e.kind = kind;
    e.device = dev;
    e.stream = stream;
    e.addr = addr;
    e.src = src;
    e.size = size;
    e.mem_kind = (trc_mem_kind)mk;
    e.copy_kind = (trc_copy_kind)ck;
    e.value = value;
    e.data = data;
    return trc_writer_event(w, &e);
}

static inline int gen_kernel(trc_writer *w, uint32_t k, uint32_t threads, uint64_t seed)
{
    trc_launch l;
    memset(&l, 0, sizeof l);
    l.device = k == 1;
    l.stream = k == 1 ? 3 : 0;
    l.code_object_id = k == 1;
    snprintf(l.kernel_name, sizeof l.kernel_name, "_Z6goldenILi%uEEvPf", k);
    l.entry_vaddr = 0x1100 + 0x100ull * k;
    memcpy(l.grid, gen_grid[k], sizeof l.grid);
    l.wg_size[0] = 64 * gen_waves[k] - (k == 2 ? 10 : 0);
    l.wg_size[1] = l.wg_size[2] = 1;
    l.waves_per_wg = gen_waves[k];
    l.group_segment_size = 1024;
    l.private_segment_size = k == 0 ? 0 : 64;
    l.vgpr_count = 24 + 4 * k;
    l.sgpr_count = 16 + 8 * k;
    l.kernarg_addr = 0x20000 + 0x100ull * k;
    uint8_t ka[24];
    gen_bytes(ka, sizeof ka, 0x4b41 + k);
    l.kernarg_size = 16 + 4 * k;
    l.kernarg = ka;
    if (trc_writer_begin_kernel(w, &l) != 0 || l.kernel_id != k) return -1;
    uint32_t n = gen_grid[k][0] * gen_grid[k][1] * gen_grid[k][2];
    uint32_t order[64];
    for (uint32_t i = 0; i < n; i++) order[i] = i;
    for (uint32_t i = n; i > 1; i--) { /* Fisher-Yates by seed */
        uint32_t r = (uint32_t)(gen_mix(seed * 977 + k * 131 + i) % i), t = order[i - 1];
        order[i - 1] = order[r];
        order[r] = t;
    }
    gen_job jobs[8];
    pthread_t th[8];
    if (threads < 1) threads = 1;
    if (threads > 8) threads = 8;
    for (uint32_t t = 0; t < threads; t++) {
        jobs[t] = (gen_job){w, k, n, order, threads, t, 0};
        if (pthread_create(&th[t], NULL, gen_thread, &jobs[t]) != 0) return -1;
    }
    int rc = 0;
    for (uint32_t t = 0; t < threads; t++) {
        pthread_join(th[t], NULL);
        rc |= jobs[t].rc;
    }
    if (rc) return -1;
    return trc_writer_end_kernel(w, k);
}

/* Writes the generated trace to path. frame_rec/frame_data: frame sealing
 * thresholds (small values give several frames per kernel); bg: background
 * compressor threads (0 = inline). Returns 0 or -1 with err. */
static inline int gen_trace(const char *path, uint32_t threads, uint64_t seed, size_t frame_rec,
                            size_t frame_data, int bg, char *err, size_t errlen)
{
    trc_header_info h;
    memset(&h, 0, sizeof h);
    snprintf(h.producer, sizeof h.producer, "trc-golden-gen");
    snprintf(h.producer_version, sizeof h.producer_version, "1.0");
    snprintf(h.isa_target, sizeof h.isa_target, "amdgcn-amd-amdhsa--gfx803");
    h.device_count = 2;
    snprintf(h.command_line, sizeof h.command_line, "gen_trace golden");
    trc_writer *w = trc_writer_open_ex(path, &h, bg, err, errlen);
    if (!w) return -1;
    trc_writer_set_frame_limits(w, frame_rec, frame_data);
    trc_writer_set_segment_limits(w, GEN_SEG_REC, GEN_SEG_DATA);
    uint8_t co[2][96], d[512];
    gen_bytes(co[0], sizeof co[0], 0xc0);
    gen_bytes(co[1], sizeof co[1], 0xc1);
    memcpy(co[0], "\177ELF", 4);
    memcpy(co[1], "\177ELF", 4);
    int rc = 0;
    rc |= trc_writer_code_object(w, co[0], sizeof co[0], 0x200000) != 0;
    rc |= trc_writer_code_object(w, co[1], sizeof co[1] - 7, 0x201000) != 1;
    gen_bytes(d, sizeof d, 0xda);
    rc |= gen_event(w, TRC_EV_ALLOC, 0, 0, 0x10000, 0, 0x10000, TRC_MEM_DEVICE, 0, 0, NULL);
    rc |= gen_event(w, TRC_EV_ALLOC, 1, 0, 0x80000, 0, 0x30000, TRC_MEM_HOST_PINNED, 0, 0, NULL);
    {
        /* format 2.1: a managed allocation (hipMallocManaged), device memory */
        trc_event e;
        memset(&e, 0, sizeof e);
        e.kind = TRC_EV_ALLOC;
        e.addr = 0x40000;
        e.size = 0x8000;
        e.mem_kind = TRC_MEM_DEVICE;
        e.managed = 1;
        rc |= trc_writer_event(w, &e);
    }
    rc |= gen_event(w, TRC_EV_COPY, 0, 0, 0x10000, 0x7f0000, 256, 0, TRC_COPY_H2D, 0, d);
    rc |= gen_event(w, TRC_EV_MEMSET, 0, 2, 0x10100, 0, 64, 0, 0, 0x5a, NULL);
    rc |= gen_event(w, TRC_EV_COPY, 0, 0, 0x20000, 0, 61, 0, TRC_COPY_INIT, 0, d + 100);
    if (rc) goto fail;
    if (gen_kernel(w, 0, threads, seed) != 0) goto fail;
    rc |= gen_event(w, TRC_EV_SYNC, 0, 0, 0, 0, 0, 0, 0, 0, NULL);
    rc |= gen_event(w, TRC_EV_COPY, 0, 0, 0x7f1000, 0x10000, 128, 0, TRC_COPY_D2H, 0, d + 7);
    rc |= gen_event(w, TRC_EV_COPY, 1, 3, 0x30000, 0x10000, 64, 0, TRC_COPY_D2D, 0, NULL);
    if (rc) goto fail;
    if (gen_kernel(w, 1, threads, seed) != 0) goto fail;
    rc |= gen_event(w, TRC_EV_SYNC, 1, 3, 0, 0, 0, 0, 0, 0, NULL);
    {
        /* format 1.3: stream 4 waits for stream 3's work before the sync above */
        trc_event e;
        memset(&e, 0, sizeof e);
        e.kind = TRC_EV_SYNC;
        e.device = 1;
        e.stream = 3;
        e.until_event = trc_writer_n_events(w) - 1;
        e.stream_wait = 1;
        e.wait_stream = 4;
        rc |= trc_writer_event(w, &e);
        /* and declares stream 5 non-blocking */
        memset(&e, 0, sizeof e);
        e.kind = TRC_EV_SYNC;
        e.device = 1;
        e.stream = 5;
        e.stream_nonblocking = 1;
        rc |= trc_writer_event(w, &e);
    }
    if (rc) goto fail;
    trc_writer_host_gap(w, 100000); /* format 1.4: host time before the launch of kernel 2 */
    trc_writer_host_gap(w, 23456);
    if (gen_kernel(w, 2, threads, seed) != 0) goto fail;
    trc_writer_host_gap(w, 7000);   /* and before the copy after it */
    rc |= gen_event(w, TRC_EV_COPY, 0, 0, 0x7f2000, 0x10000, 300, 0, TRC_COPY_D2H, 0, d + 200);
    rc |= gen_event(w, TRC_EV_FREE, 0, 0, 0x10000, 0, 0x10000, TRC_MEM_DEVICE, 0, 0, NULL);
    if (rc) goto fail;
    if (trc_writer_close(w) != 0) goto fail;
    trc_writer_destroy(w);
    return 0;
fail:
    if (err && errlen) snprintf(err, errlen, "%s", trc_writer_error(w));
    trc_writer_destroy(w);
    return -1;
}

/* FNV-1a 64 over bytes. */
static inline uint64_t gen_fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}
#define GEN_H(h, x) ((h) = gen_fnv((h), &(x), sizeof(x)))

/* Hash of everything a reader returns for code objects [0, nco), events
 * [0, ne) and kernels [0, nk) (pass SIZE_MAX for all); -1 (as uint64) with
 * err on a read error. */
static inline uint64_t gen_content_hash(trc_reader *r, size_t nco, size_t ne, size_t nk, char *err,
                                        size_t errlen)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const trc_header_info *hd = trc_reader_header(r);
    h = gen_fnv(h, hd->producer, strlen(hd->producer));
    h = gen_fnv(h, hd->producer_version, strlen(hd->producer_version));
    h = gen_fnv(h, hd->isa_target, strlen(hd->isa_target));
    h = gen_fnv(h, hd->command_line, strlen(hd->command_line));
    GEN_H(h, hd->device_count);
    /* format 2.3's LDS values left out, hashed only when set: older files'
     * content hashes are what they were */
    if (hd->lds_values_omitted) GEN_H(h, hd->lds_values_omitted);
    for (size_t i = 0; i < trc_reader_n_code_objects(r) && i < nco; i++) {
        size_t len;
        const uint8_t *b = trc_reader_code_object(r, i, &len);
        h = gen_fnv(h, b, len);
        GEN_H(h, len);
        /* format 1.1's load address, hashed only when present: a 1.0 file's
         * content hash is what it was */
        uint64_t la = trc_reader_code_object_addr(r, i);
        if (la) GEN_H(h, la);
    }
    if (ne > trc_reader_n_events(r)) ne = trc_reader_n_events(r);
    if (nk > trc_reader_n_kernels(r)) nk = trc_reader_n_kernels(r);
    for (size_t i = 0; i < ne; i++) {
        const trc_event *e = trc_reader_event(r, i);
        uint32_t kind = e->kind, mk = e->mem_kind, ck = e->copy_kind;
        GEN_H(h, kind); GEN_H(h, e->device); GEN_H(h, e->stream); GEN_H(h, e->addr);
        GEN_H(h, e->src); GEN_H(h, e->size); GEN_H(h, mk); GEN_H(h, ck); GEN_H(h, e->value);
        if (e->until_event || e->stream_wait || e->wait_stream || e->stream_nonblocking) { /* 1.3; absent before: older hashes stand */
            uint32_t sw = e->stream_wait, nb = e->stream_nonblocking;
            GEN_H(h, e->until_event); GEN_H(h, sw); GEN_H(h, e->wait_stream); GEN_H(h, nb);
        }
        if (e->host_gap_ns) /* 1.4; absent before: older hashes stand */
            GEN_H(h, e->host_gap_ns);
        if (e->managed) /* 2.1; absent before: older hashes stand */
            GEN_H(h, e->managed);
        if (e->data) h = gen_fnv(h, e->data, (size_t)e->size);
        if (e->kind != TRC_EV_LAUNCH) continue;
        const trc_launch *l = &e->launch;
        GEN_H(h, l->kernel_id); GEN_H(h, l->code_object_id); GEN_H(h, l->entry_vaddr);
        h = gen_fnv(h, l->kernel_name, strlen(l->kernel_name));
        h = gen_fnv(h, l->grid, sizeof l->grid);
        h = gen_fnv(h, l->wg_size, sizeof l->wg_size);
        GEN_H(h, l->waves_per_wg); GEN_H(h, l->group_segment_size); GEN_H(h, l->private_segment_size);
        GEN_H(h, l->vgpr_count); GEN_H(h, l->sgpr_count); GEN_H(h, l->kernarg_addr);
        h = gen_fnv(h, l->kernarg, l->kernarg_size);
        if (l->kernel_id >= nk) continue;
        GEN_H(h, e->n_instr);
        GEN_H(h, e->n_wg);
        for (uint32_t j = 0; j < e->n_wg; j++) {
            trc_wg *wg = trc_reader_load_wg(r, l->kernel_id, j, err, errlen);
            if (!wg) return (uint64_t)-1;
            h = gen_fnv(h, wg->wg_id, sizeof wg->wg_id);
            for (uint32_t v = 0; v < wg->n_waves; v++) {
                const trc_wave *w = &wg->waves[v];
                GEN_H(h, w->wave_in_wg); GEN_H(h, w->n_instr); GEN_H(h, w->n_branch);
                h = gen_fnv(h, w->branch_taken, (w->n_branch + 7) / 8);
                h = gen_fnv(h, w->indirect_target, 8 * (size_t)w->n_indirect);
                h = gen_fnv(h, w->exec_at, 8 * (size_t)w->n_exec);
                h = gen_fnv(h, w->exec_val, 8 * (size_t)w->n_exec);
                for (uint32_t m = 0; m < w->n_mem; m++) {
                    const trc_mem_op *o = &w->mem[m];
                    uint32_t n = (uint32_t)__builtin_popcountll(o->exec);
                    GEN_H(h, o->flags); GEN_H(h, o->bytes_per_lane); GEN_H(h, o->exec);
                    h = gen_fnv(h, o->addr, 8 * (size_t)n);
                    if (o->load_data) h = gen_fnv(h, o->load_data, trc_mo_load_len(o->flags, n, o->bytes_per_lane));
                    if (o->store_data) h = gen_fnv(h, o->store_data, trc_mo_store_len(o->flags, n, o->bytes_per_lane));
                    uint8_t has = (uint8_t)((o->load_data ? 1 : 0) | (o->store_data ? 2 : 0));
                    GEN_H(h, has);
                    if (o->load_hash) GEN_H(h, o->load_hash); /* 2.2 (older files have none) */
                }
                if (w->n_await) { /* 1.2 (older files have none: their content hashes stay) */
                    h = gen_fnv(h, w->await_at, 8 * (size_t)w->n_await);
                    h = gen_fnv(h, w->await_len, 8 * (size_t)w->n_await);
                    h = gen_fnv(h, w->await_pc, 8 * (size_t)w->n_await);
                }
            }
            trc_wg_free(wg);
        }
    }
    return h;
}

#endif
