/*
 * 502-crafted: workgroup chunks whose zstd frame and checksum are valid but
 * whose protobuf content is inconsistent (a buggy or hostile writer). The
 * reader must refuse the always-invalid ones with a message and must never
 * read out of bounds on any of them (run under -fsanitize=address).
 *
 * Each trial takes the Workgroup/WorkgroupData messages of a real trace,
 * mutates one field, re-encodes them as fresh chunks appended after the
 * original chunks, and writes a new index and trailer pointing at them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zstd.h>

#include "traceformat/gtrace.pb-c.h"
#include "traceformat/trc.h"
#include "traceformat/trc_internal.h"

static char path[256], path2[256];

static uint64_t rng = 99;
static uint64_t mix(void)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void write_base(const char *p)
{
    trc_header_info h;
    memset(&h, 0, sizeof h);
    strcpy(h.producer, "gcn3-emu");
    char err[256];
    trc_writer *w = trc_writer_open(p, &h, err, sizeof err);
    assert_non_null(w);
    trc_launch l;
    memset(&l, 0, sizeof l);
    l.grid[0] = l.grid[1] = l.grid[2] = 1;
    l.waves_per_wg = 2;
    assert_int_equal(trc_writer_begin_kernel(w, &l), 0);
    trc_wg_rec *g = trc_wg_rec_create();
    uint32_t id[3] = {0, 0, 0};
    trc_wg_rec_begin(g, 0, id, 2);
    for (uint32_t v = 0; v < 2; v++) {
        uint64_t a[64];
        uint8_t d[2 * 64 * 8];
        for (size_t k = 0; k < sizeof d; k++) d[k] = (uint8_t)mix();
        trc_rec_exec(g, v, 0, ~0ull);
        trc_rec_exec(g, v, 5, 0xffff);
        for (int k = 0; k < 64; k++) a[k] = 0x1000 + 8u * (unsigned)k;
        trc_rec_mem(g, v, TRC_MO_LOAD, 8, ~0ull, a, d, NULL);
        for (int k = 0; k < 64; k++) a[k] = mix() % 100000;
        trc_rec_mem(g, v, TRC_MO_STORE, 4, 0xf0f0f0f0f0f0f0f0ull, a, NULL, d);
        trc_rec_mem(g, v, TRC_MO_ATOMIC | TRC_MO_CMPSWAP | TRC_MO_LOAD, 4, 0xff00, a, d, d);
        trc_rec_mem(g, v, TRC_MO_SMEM | TRC_MO_LOAD, 16, 1, a, d, NULL);
        for (int b = 0; b < 11; b++) trc_rec_branch(g, v, b & 1);
        trc_rec_indirect(g, v, 0x2000);
        trc_rec_wave_end(g, v, 50);
    }
    assert_int_equal(trc_wg_commit(w, g), 0);
    trc_wg_rec_destroy(g);
    assert_int_equal(trc_writer_end_kernel(w, 0), 0);
    assert_int_equal(trc_writer_close(w), 0);
    trc_writer_destroy(w);
}

static uint8_t *file;
static size_t file_len;
static uint64_t ix_off;
static uint8_t *raw_ix, *raw_wg, *raw_wd; /* decompressed messages */
static size_t raw_ix_n, raw_wg_n, raw_wd_n;

static uint8_t *chunk_raw(uint64_t off, size_t *n)
{
    uint64_t sz = trc_get_le64(file + off + 8);
    const uint8_t *z = file + off + TRC_CHUNK_HDR_SIZE;
    unsigned long long rn = ZSTD_getFrameContentSize(z, sz);
    uint8_t *raw = malloc(rn + 1);
    assert_int_equal(ZSTD_decompress(raw, rn, z, sz), rn);
    *n = rn;
    return raw;
}

/* Appends a chunk of `type` holding msg to buf at *len. */
static uint64_t put_chunk(uint8_t *buf, size_t *len, uint32_t type, const ProtobufCMessage *msg)
{
    size_t pn = protobuf_c_message_get_packed_size(msg);
    uint8_t *pk = malloc(pn + 1);
    protobuf_c_message_pack(msg, pk);
    ZSTD_CCtx *c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    uint64_t off = *len;
    size_t zn = ZSTD_compress2(c, buf + off + TRC_CHUNK_HDR_SIZE, ZSTD_compressBound(pn), pk, pn);
    assert_false(ZSTD_isError(zn));
    ZSTD_freeCCtx(c);
    free(pk);
    trc_put_le32(buf + off, type);
    trc_put_le32(buf + off + 4, 0);
    trc_put_le64(buf + off + 8, zn);
    *len = off + TRC_CHUNK_HDR_SIZE + zn;
    return off;
}

/* Appends a frame chunk of `type` holding msg as its only (length-prefixed)
 * message; *moff and *mlen receive the message's slice in the frame. */
static uint64_t put_frame(uint8_t *buf, size_t *len, uint32_t type, const ProtobufCMessage *msg,
                          uint32_t *moff, uint32_t *mlen)
{
    size_t pn = protobuf_c_message_get_packed_size(msg);
    uint8_t *pk = malloc(pn + 16);
    size_t k = 0;
    for (size_t v = pn; ; v >>= 7) {
        pk[k++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
        if (v < 0x80) break;
    }
    protobuf_c_message_pack(msg, pk + k);
    ZSTD_CCtx *c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    uint64_t off = *len;
    size_t zn = ZSTD_compress2(c, buf + off + TRC_CHUNK_HDR_SIZE, ZSTD_compressBound(pn + k), pk, pn + k);
    assert_false(ZSTD_isError(zn));
    ZSTD_freeCCtx(c);
    free(pk);
    trc_put_le32(buf + off, type);
    trc_put_le32(buf + off + 4, 0);
    trc_put_le64(buf + off + 8, zn);
    *len = off + TRC_CHUNK_HDR_SIZE + zn;
    *moff = (uint32_t)k;
    *mlen = (uint32_t)pn;
    return off;
}

/* Copies the slice [off, off+n) of a decompressed frame. */
static uint8_t *slice_of(uint64_t chunk, uint32_t off, uint32_t n, size_t *outn)
{
    size_t fn;
    uint8_t *f = chunk_raw(chunk, &fn);
    assert_true((uint64_t)off + n <= fn);
    uint8_t *o = malloc(n + 1);
    memcpy(o, f + off, n);
    free(f);
    *outn = n;
    return o;
}

static void setup_base(void)
{
    write_base(path);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    file_len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    file = malloc(file_len);
    assert_int_equal(fread(file, 1, file_len, f), file_len);
    fclose(f);
    ix_off = trc_get_le64(file + file_len - TRC_TRAILER_SIZE);
    raw_ix = chunk_raw(ix_off, &raw_ix_n);
    Gtrace__Index *ix = gtrace__index__unpack(NULL, raw_ix_n, raw_ix);
    assert_non_null(ix);
    Gtrace__KernelIndex *k = ix->kernels[0];
    assert_int_equal(k->n_wg_frame, 1);
    raw_wg = slice_of(k->frame_offset[0], k->wg_rec_off[0], k->wg_rec_len[0], &raw_wg_n);
    raw_wd = slice_of(k->data_frame_offset[0], k->wg_data_off[0], k->wg_data_len[0], &raw_wd_n);
    gtrace__index__free_unpacked(ix, NULL);
}

/* Writes the trace with wg/wd replacing workgroup 0; returns 0 if the reader
 * loaded it (with and without data), -1 if it refused it. */
static int try_trace(Gtrace__Workgroup *wg, Gtrace__WorkgroupData *wd, char *err, size_t errlen)
{
    size_t cap = ix_off + 2 * (protobuf_c_message_get_packed_size(&wg->base) +
                               protobuf_c_message_get_packed_size(&wd->base)) + raw_ix_n * 2 + 4096;
    uint8_t *buf = malloc(cap);
    memcpy(buf, file, ix_off);
    size_t len = ix_off;
    uint32_t ro, rl, dof, dl;
    uint64_t o1 = put_frame(buf, &len, TRC_CHUNK_WORKGROUP, &wg->base, &ro, &rl);
    uint64_t o2 = put_frame(buf, &len, TRC_CHUNK_WG_DATA, &wd->base, &dof, &dl);
    Gtrace__Index *ix = gtrace__index__unpack(NULL, raw_ix_n, raw_ix);
    Gtrace__KernelIndex *k = ix->kernels[0];
    k->frame_offset[0] = o1;
    k->data_frame_offset[0] = o2;
    k->wg_rec_off[0] = ro;
    k->wg_rec_len[0] = rl;
    k->wg_data_off[0] = dof;
    k->wg_data_len[0] = dl;
    uint64_t io = put_chunk(buf, &len, TRC_CHUNK_INDEX, &ix->base);
    gtrace__index__free_unpacked(ix, NULL);
    trc_put_le64(buf + len, io);
    trc_put_le64(buf + len + 8, len + TRC_TRAILER_SIZE);
    memcpy(buf + len + 16, TRC_TRAILER_MAGIC, 8);
    len += TRC_TRAILER_SIZE;
    FILE *f = fopen(path2, "wb");
    assert_int_equal(fwrite(buf, 1, len, f), len);
    fclose(f);
    free(buf);

    trc_reader *r = trc_reader_open(path2, err, errlen);
    if (!r) fail_msg("open refused a trace with only workgroup damage: %s", err);
    int rc = 0;
    for (int with_data = 0; with_data <= 1 && rc == 0; with_data++) {
        trc_wg *g = trc_reader_load_wg_ex(r, 0, 0, with_data, err, errlen);
        if (!g) { rc = -1; break; }
        volatile uint64_t sum = 0;
        for (uint32_t v = 0; v < g->n_waves; v++) {
            const trc_wave *w = &g->waves[v];
            for (uint32_t k = 0; k < (w->n_branch + 7) / 8; k++) sum += w->branch_taken[k];
            for (uint32_t k = 0; k < w->n_indirect; k++) sum += w->indirect_target[k];
            for (uint32_t k = 0; k < w->n_exec; k++) sum += w->exec_at[k] + w->exec_val[k];
            for (uint32_t m = 0; m < w->n_mem; m++) {
                const trc_mem_op *o = &w->mem[m];
                uint32_t n = (uint32_t)__builtin_popcountll(o->exec);
                for (uint32_t k = 0; k < n; k++) sum += o->addr[k];
                if (o->load_data)
                    for (uint64_t k = 0; k < trc_mo_load_len(o->flags, n, o->bytes_per_lane); k++) sum += o->load_data[k];
                if (o->store_data)
                    for (uint64_t k = 0; k < trc_mo_store_len(o->flags, n, o->bytes_per_lane); k++) sum += o->store_data[k];
            }
        }
        trc_wg_free(g);
    }
    trc_reader_close(r);
    return rc;
}

/* Mutations: the first group always makes the record invalid. */
enum {
    M_BRANCH_LEN, M_DELTA_LEN, M_STRIDE_LEN, M_EXEC_LEN, M_WAVE_NO, M_DROP_WAVE, M_WGID_LEN,
    M_KERNEL, M_LOADLEN_LEN, M_LOADDATA_LEN, M_STOREDATA_LEN, M_DATA_WAVE_NO, M_FLAGS_LEN,
    M_BOTH_LOAD, M_BOTH_STORE,
    M_N_INVALID,
    /* may or may not stay decodable */
    M_MEM_EXEC = M_N_INVALID, M_ADDR_KIND, M_FLAGS, M_BYTES, M_LOAD_LEN, M_STORE_LEN, M_N_BRANCH,
    M_N_ALL
};

/* The data field a 0.2 writer fills (shuf4) or, for 0.1 input, the plain one. */
static ProtobufCBinaryData *load_field(Gtrace__WaveData *d)
{
    return d->load_data_shuf4.len ? &d->load_data_shuf4 : &d->load_data;
}
static ProtobufCBinaryData *store_field(Gtrace__WaveData *d)
{
    return d->store_data_shuf4.len ? &d->store_data_shuf4 : &d->store_data;
}

static int mutate(int kind, Gtrace__Workgroup *wg, Gtrace__WorkgroupData *wd)
{
    uint32_t v = (uint32_t)(mix() % wg->n_waves);
    Gtrace__Wave *w = wg->waves[v];
    Gtrace__WaveData *d = wd->waves[v];
    size_t j = mix() % w->n_mem_flags;
    switch (kind) {
    case M_BRANCH_LEN: w->branch_bits.len--; break;
    case M_DELTA_LEN: w->n_addr_delta--; break;
    case M_STRIDE_LEN: w->n_addr_stride--; break;
    case M_EXEC_LEN: w->n_exec_val--; break;
    case M_WAVE_NO: w->wave_in_wg += 1 + (uint32_t)(mix() % 5); break;
    case M_DROP_WAVE: wg->n_waves--; break;
    case M_WGID_LEN: wg->n_wg_id = 2; break;
    case M_KERNEL: wg->kernel_id += 1; break;
    case M_LOADLEN_LEN: d->n_load_len--; break;
    case M_LOADDATA_LEN: load_field(d)->len -= 1 + mix() % load_field(d)->len; break;
    case M_STOREDATA_LEN: store_field(d)->len -= 1 + mix() % store_field(d)->len; break;
    /* plain and shuffled copies of the same stream: ambiguous, refused */
    case M_BOTH_LOAD: d->load_data = d->load_data_shuf4; break;
    case M_BOTH_STORE: d->store_data = d->store_data_shuf4; break;
    case M_DATA_WAVE_NO: d->wave_in_wg ^= 1; break;
    case M_FLAGS_LEN: w->n_mem_flags--; break;
    case M_MEM_EXEC: w->mem_exec[j] = mix(); break;
    case M_ADDR_KIND: w->addr_kind[j] = (uint32_t)(mix() % 4); break;
    case M_FLAGS: w->mem_flags[j] = (uint32_t)mix() & (mix() & 1 ? 0x7f : 0xff); break;
    case M_BYTES: w->mem_bytes[j] = (uint32_t)(mix() % 3 ? mix() % 64 : mix()); break;
    case M_LOAD_LEN: d->load_len[j] = (uint32_t)(mix() % 3 ? mix() % 1024 : mix()); break;
    case M_STORE_LEN: d->store_len[j] = (uint32_t)(mix() % 3 ? mix() % 1024 : mix()); break;
    case M_N_BRANCH: w->n_branch = (uint32_t)mix(); break;
    }
    return kind < M_N_INVALID;
}

static void test_crafted(void **state)
{
    (void)state;
    setup_base();
    char err[512];
    /* the unmodified re-encoding loads */
    Gtrace__Workgroup *wg = gtrace__workgroup__unpack(NULL, raw_wg_n, raw_wg);
    Gtrace__WorkgroupData *wd = gtrace__workgroup_data__unpack(NULL, raw_wd_n, raw_wd);
    assert_non_null(wg);
    assert_non_null(wd);
    assert_int_equal(wg->waves[0]->n_addr_delta, 31 + 7); /* the two gathers are DELTAS-coded */
    if (try_trace(wg, wd, err, sizeof err) != 0) fail_msg("baseline: %s", err);
    gtrace__workgroup__free_unpacked(wg, NULL);
    gtrace__workgroup_data__free_unpacked(wd, NULL);

    int refused = 0, trials = 0;
    for (int t = 0; t < 600; t++) {
        int kind = t % M_N_ALL;
        wg = gtrace__workgroup__unpack(NULL, raw_wg_n, raw_wg);
        wd = gtrace__workgroup_data__unpack(NULL, raw_wd_n, raw_wd);
        /* keep the allocated counts so the messages free correctly */
        size_t nw = wg->n_waves;
        int must_fail = mutate(kind, wg, wd);
        err[0] = 0;
        int rc = try_trace(wg, wd, err, sizeof err);
        trials++;
        if (rc != 0) {
            refused++;
            if (!strstr(err, path2) || !strstr(err, "workgroup 0 of kernel 0"))
                fail_msg("mutation %d: message lacks file/workgroup: %s", kind, err);
        } else if (must_fail) {
            fail_msg("mutation %d accepted", kind);
        }
        wg->n_waves = nw;
        wg->n_wg_id = 3;
        for (size_t i = 0; i < wd->n_waves; i++) { /* undo the aliasing of M_BOTH_* */
            if (wd->waves[i]->load_data.data == wd->waves[i]->load_data_shuf4.data)
                wd->waves[i]->load_data = (ProtobufCBinaryData){0, NULL};
            if (wd->waves[i]->store_data.data == wd->waves[i]->store_data_shuf4.data)
                wd->waves[i]->store_data = (ProtobufCBinaryData){0, NULL};
        }
        for (size_t i = 0; i < nw; i++) wg->waves[i]->n_mem_flags = wg->waves[i]->n_mem_bytes;
        gtrace__workgroup__free_unpacked(wg, NULL);
        gtrace__workgroup_data__free_unpacked(wd, NULL);
    }
    print_message("# %d crafted workgroups: %d refused, %d decodable (none read out of bounds)\n",
                  trials, refused, trials - refused);
    free(raw_ix);
    free(raw_wg);
    free(raw_wd);
    free(file);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/trc502-%d.gtrace", tmp ? tmp : "/tmp", (int)getpid());
    snprintf(path2, sizeof path2, "%s/trc502-%d-crafted.gtrace", tmp ? tmp : "/tmp", (int)getpid());
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_crafted)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(path);
    unlink(path2);
    return rc;
}
