/*
 * 506-fastpb - the reader's own decoder of Workgroup and WorkgroupData
 * messages (traceformat/trc_fastpb.c) gives what protobuf-c gives:
 *  - every golden file (formats 1.0 to 2.2) decodes to the same content with
 *    it and with protobuf-c alone (trc_fast_decode = 0);
 *  - random messages packed by protobuf-c (every field, values of every
 *    width, negative deltas, empty and long arrays) decode field for field
 *    the same;
 *  - a mutated message (bytes flipped, cut short) that it decodes, protobuf-c
 *    decodes to the same fields (it may give up where protobuf-c does not:
 *    then the reader uses protobuf-c);
 *  - encodings the writer never makes (a repeated scalar unpacked, a field
 *    twice, an unknown field, a 64-bit value in a 32-bit field) are left to
 *    protobuf-c: NULL;
 *  - a reader that keeps only the first address of a strided op
 *    (trc_reader_set_compact_strided: mgpu-replay's) gives every lane the
 *    address a full one gives (trc_mo_addr).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/trace/data/gen.h"
#include "traceformat/gtrace.pb-c.h"
#include "traceformat/trc_internal.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
/* a value of a random width: mostly small, sometimes up to 64 bits */
static uint64_t rnd_val(void)
{
    switch (rnd() % 4) {
    case 0: return rnd() % 128;
    case 1: return rnd() % 65536;
    case 2: return rnd() >> (rnd() % 64);
    default: return rnd();
    }
}

static const char *golden(const char *name)
{
    static char p[1024];
    const char *d = getenv("TRC_GOLDEN_DIR");
    snprintf(p, sizeof p, "%s/%s", d ? d : "tests/trace/data", name);
    return p;
}

static uint64_t content(const char *path, int fast)
{
    char err[512];
    trc_fast_decode = fast;
    trc_reader *r = trc_reader_open(path, err, sizeof err);
    if (!r)
        fail_msg("%s", err);
    uint64_t h = gen_content_hash(r, SIZE_MAX, SIZE_MAX, SIZE_MAX, err, sizeof err);
    if (h == (uint64_t)-1)
        fail_msg("%s", err);
    trc_reader_close(r);
    trc_fast_decode = 1;
    return h;
}

static void test_golden_files(void **state)
{
    (void)state;
    static const char *names[] = {"golden-1.0.gtrace", "golden-1.1.gtrace", "golden-1.2.gtrace", "golden-1.3.gtrace",
                                  "golden-1.4.gtrace", "golden-2.0.gtrace", "golden-2.1.gtrace", "golden-2.2.gtrace",
                                  "golden-2.3.gtrace"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        uint64_t a = content(golden(names[i]), 1), b = content(golden(names[i]), 0);
        if (a != b)
            fail_msg("%s: content 0x%016llx with the fast decoder, 0x%016llx with protobuf-c", names[i],
                     (unsigned long long)a, (unsigned long long)b);
    }
}

/* ---- random messages -------------------------------------------------------- */

#define ARR(T, name, n, gen)                                                                  \
    do {                                                                                      \
        w->n_##name = (n);                                                                    \
        w->name = w->n_##name ? calloc(w->n_##name, sizeof(T)) : NULL;                        \
        for (size_t i_ = 0; i_ < w->n_##name; i_++)                                           \
            w->name[i_] = (T)(gen);                                                           \
    } while (0)

static size_t rnd_len(void) { return rnd() % 5 == 0 ? 0 : rnd() % 5 == 0 ? 200 + rnd() % 300 : rnd() % 12; }

static Gtrace__Wave *rnd_wave(uint32_t i)
{
    Gtrace__Wave *w = malloc(sizeof *w);
    *w = (Gtrace__Wave)GTRACE__WAVE__INIT;
    w->wave_in_wg = i;
    w->n_instr = rnd_val();
    w->n_branch = (uint32_t)rnd_val();
    w->branch_bits.len = rnd_len();
    w->branch_bits.data = w->branch_bits.len ? malloc(w->branch_bits.len) : NULL;
    for (size_t j = 0; j < w->branch_bits.len; j++)
        w->branch_bits.data[j] = (uint8_t)rnd();
    size_t m = rnd_len();
    ARR(uint64_t, indirect_target, rnd_len(), rnd_val());
    ARR(uint64_t, exec_at_delta, rnd_len(), rnd_val());
    ARR(uint64_t, exec_val, rnd_len(), rnd());
    ARR(uint32_t, mem_flags, m, rnd_val());
    ARR(uint32_t, mem_bytes, m, rnd_val());
    ARR(uint64_t, mem_exec, m, rnd());
    ARR(uint32_t, addr_kind, m, rnd() % 3);
    ARR(int64_t, addr_base_delta, m, (int64_t)rnd_val() * (rnd() & 1 ? -1 : 1));
    ARR(int64_t, addr_stride, rnd_len(), (int64_t)rnd_val() * (rnd() & 1 ? -1 : 1));
    ARR(int64_t, addr_delta, rnd_len(), rnd() % 7 == 0 ? INT64_MIN : (int64_t)rnd_val() * (rnd() & 1 ? -1 : 1));
    size_t na = rnd_len();
    ARR(uint64_t, await_at_delta, na, rnd_val());
    ARR(uint64_t, await_len, na, rnd_val());
    ARR(uint64_t, await_pc, na, rnd_val());
    ARR(uint32_t, await_kind, rnd() & 1 ? na : 0, rnd() % 2);
    w->n_segments = rnd() % 4 == 0 ? (uint32_t)rnd_val() : 0;
    return w;
}

static Gtrace__WaveData *rnd_wave_data(uint32_t i)
{
    Gtrace__WaveData *w = malloc(sizeof *w);
    *w = (Gtrace__WaveData)GTRACE__WAVE_DATA__INIT;
    w->wave_in_wg = i;
    size_t m = rnd_len();
    ARR(uint32_t, load_len, m, rnd_val());
    ARR(uint32_t, store_len, m, rnd_val());
    ARR(uint64_t, load_hash, rnd() & 1 ? m : 0, rnd());
    ProtobufCBinaryData *b[] = {&w->load_data, &w->store_data, &w->load_data_shuf4, &w->store_data_shuf4};
    for (int k = 0; k < 4; k++) {
        b[k]->len = rnd_len();
        b[k]->data = b[k]->len ? malloc(b[k]->len) : NULL;
        for (size_t j = 0; j < b[k]->len; j++)
            b[k]->data[j] = (uint8_t)rnd();
    }
    return w;
}

#define SAME_ARR(a, b, name)                                                                              \
    ((a)->n_##name == (b)->n_##name &&                                                                    \
     (!(a)->n_##name || !memcmp((a)->name, (b)->name, (a)->n_##name * sizeof *(a)->name)))
#define SAME_BIN(a, b, name) \
    ((a)->name.len == (b)->name.len && (!(a)->name.len || !memcmp((a)->name.data, (b)->name.data, (a)->name.len)))

static bool same_wave(const Gtrace__Wave *a, const Gtrace__Wave *b)
{
    return a->wave_in_wg == b->wave_in_wg && a->n_instr == b->n_instr && a->n_branch == b->n_branch &&
           a->n_segments == b->n_segments && SAME_BIN(a, b, branch_bits) && SAME_ARR(a, b, indirect_target) &&
           SAME_ARR(a, b, exec_at_delta) && SAME_ARR(a, b, exec_val) && SAME_ARR(a, b, mem_flags) &&
           SAME_ARR(a, b, mem_bytes) && SAME_ARR(a, b, mem_exec) && SAME_ARR(a, b, addr_kind) &&
           SAME_ARR(a, b, addr_base_delta) && SAME_ARR(a, b, addr_stride) && SAME_ARR(a, b, addr_delta) &&
           SAME_ARR(a, b, await_at_delta) && SAME_ARR(a, b, await_len) && SAME_ARR(a, b, await_pc) &&
           SAME_ARR(a, b, await_kind);
}

static bool same_wg(const Gtrace__Workgroup *a, const Gtrace__Workgroup *b)
{
    if (a->kernel_id != b->kernel_id || a->wave_count != b->wave_count || !SAME_ARR(a, b, wg_id) ||
        a->n_waves != b->n_waves)
        return false;
    for (size_t i = 0; i < a->n_waves; i++)
        if (!same_wave(a->waves[i], b->waves[i]))
            return false;
    return true;
}

static bool same_wd(const Gtrace__WorkgroupData *a, const Gtrace__WorkgroupData *b)
{
    if (a->kernel_id != b->kernel_id || !SAME_ARR(a, b, wg_id) || a->n_waves != b->n_waves)
        return false;
    for (size_t i = 0; i < a->n_waves; i++) {
        const Gtrace__WaveData *x = a->waves[i], *y = b->waves[i];
        if (x->wave_in_wg != y->wave_in_wg || !SAME_ARR(x, y, load_len) || !SAME_ARR(x, y, store_len) ||
            !SAME_ARR(x, y, load_hash) || !SAME_BIN(x, y, load_data) || !SAME_BIN(x, y, store_data) ||
            !SAME_BIN(x, y, load_data_shuf4) || !SAME_BIN(x, y, store_data_shuf4))
            return false;
    }
    return true;
}

/* The lazy decode l (trc_fast_workgroup_lazy) of what f decoded: the same
 * message, its address deltas still varints that trc_fast_deltas_fill
 * decodes to f's and trc_fast_deltas_skip steps over as fill does. */
static bool same_lazy(const Gtrace__Workgroup *f, const Gtrace__Workgroup *l)
{
    if (f->n_waves != l->n_waves)
        return false;
    for (size_t i = 0; i < f->n_waves; i++) {
        const Gtrace__Wave *a = f->waves[i];
        Gtrace__Wave b = *l->waves[i];
        const uint8_t *q, *end;
        bool lazy = trc_fast_wave_delta(l->waves[i], &q, &end);
        if (lazy != (a->n_addr_delta > 0) || (lazy && b.addr_delta))
            return false;
        if (lazy) {
            size_t n = b.n_addr_delta;
            uint64_t *addr = malloc((n + 1) * sizeof *addr);
            addr[0] = rnd();
            if (trc_fast_deltas_fill(addr, (uint32_t)n, q, end) != end)
                return false;
            for (size_t k = 0; k < n; k++)
                if (addr[k + 1] - addr[k] != (uint64_t)a->addr_delta[k])
                    return false;
            for (int t = 0; t < 4; t++) { /* a skip lands where a fill of as many ends */
                uint32_t c = (uint32_t)(rnd() % (n + 1));
                if (trc_fast_deltas_skip(c, q, end) != trc_fast_deltas_fill(addr, c, q, end))
                    return false;
            }
            free(addr);
            b.addr_delta = a->addr_delta; /* the rest compared as decoded */
        }
        if (!same_wave(a, &b))
            return false;
    }
    return true;
}

/* Both decoders on p[0..n): 1 fast decoded it (and protobuf-c to the same),
 * 0 fast left it to protobuf-c. The lazy fast decode takes what the fast
 * one takes, alike. */
static int compare_wg(const uint8_t *p, size_t n)
{
    Gtrace__Workgroup *f = trc_fast_workgroup(p, n);
    Gtrace__Workgroup *s = gtrace__workgroup__unpack(NULL, n, p);
    Gtrace__Workgroup *l = trc_fast_workgroup_lazy(p, n);
    if (f && !s)
        fail_msg("the fast decoder took a %zu-byte Workgroup protobuf-c rejects", n);
    if (f && !same_wg(f, s))
        fail_msg("a %zu-byte Workgroup decodes differently", n);
    if (!f != !l)
        fail_msg("the lazy fast decoder %s a %zu-byte Workgroup the fast one %s", l ? "took" : "rejected", n,
                 f ? "took" : "rejects");
    if (f && !same_lazy(f, l))
        fail_msg("a %zu-byte Workgroup decodes differently with its address deltas left for later", n);
    free(l);
    int r = f != NULL;
    free(f);
    if (s)
        gtrace__workgroup__free_unpacked(s, NULL);
    return r;
}

static int compare_wd(const uint8_t *p, size_t n)
{
    Gtrace__WorkgroupData *f = trc_fast_workgroup_data(p, n);
    Gtrace__WorkgroupData *s = gtrace__workgroup_data__unpack(NULL, n, p);
    if (f && !s)
        fail_msg("the fast decoder took a %zu-byte WorkgroupData protobuf-c rejects", n);
    if (f && !same_wd(f, s))
        fail_msg("a %zu-byte WorkgroupData decodes differently", n);
    int r = f != NULL;
    free(f);
    if (s)
        gtrace__workgroup_data__free_unpacked(s, NULL);
    return r;
}

static void free_wg(Gtrace__Workgroup *g)
{
    for (size_t i = 0; i < g->n_waves; i++) {
        Gtrace__Wave *w = g->waves[i];
        free(w->branch_bits.data), free(w->indirect_target), free(w->exec_at_delta), free(w->exec_val);
        free(w->mem_flags), free(w->mem_bytes), free(w->mem_exec), free(w->addr_kind), free(w->addr_base_delta);
        free(w->addr_stride), free(w->addr_delta), free(w->await_at_delta), free(w->await_len), free(w->await_pc);
        free(w->await_kind), free(w);
    }
    free(g->waves);
}

static void free_wd(Gtrace__WorkgroupData *g)
{
    for (size_t i = 0; i < g->n_waves; i++) {
        Gtrace__WaveData *w = g->waves[i];
        free(w->load_len), free(w->store_len), free(w->load_hash), free(w->load_data.data);
        free(w->store_data.data), free(w->load_data_shuf4.data), free(w->store_data_shuf4.data), free(w);
    }
    free(g->waves);
}

static void test_random_messages(void **state)
{
    (void)state;
    int fast = 0, mutated_fast = 0;
    for (int it = 0; it < 400; it++) {
        uint32_t id[3] = {(uint32_t)rnd_val(), (uint32_t)rnd_val(), (uint32_t)rnd_val()};
        size_t nw = rnd() % 5;
        Gtrace__Workgroup g = GTRACE__WORKGROUP__INIT;
        g.kernel_id = (uint32_t)rnd_val();
        g.n_wg_id = rnd() % 8 ? 3 : rnd() % 5;
        g.wg_id = id;
        g.wave_count = (uint32_t)nw;
        g.n_waves = nw;
        g.waves = nw ? calloc(nw, sizeof *g.waves) : NULL;
        for (size_t i = 0; i < nw; i++)
            g.waves[i] = rnd_wave((uint32_t)i);
        Gtrace__WorkgroupData d = GTRACE__WORKGROUP_DATA__INIT;
        d.kernel_id = g.kernel_id;
        d.n_wg_id = g.n_wg_id;
        d.wg_id = id;
        d.n_waves = nw;
        d.waves = nw ? calloc(nw, sizeof *d.waves) : NULL;
        for (size_t i = 0; i < nw; i++)
            d.waves[i] = rnd_wave_data((uint32_t)i);
        for (int kind = 0; kind < 2; kind++) {
            size_t n = kind ? gtrace__workgroup_data__get_packed_size(&d) : gtrace__workgroup__get_packed_size(&g);
            uint8_t *b = malloc(n + 1);
            if (kind)
                gtrace__workgroup_data__pack(&d, b);
            else
                gtrace__workgroup__pack(&g, b);
            /* what protobuf-c writes is what the writer writes: always the fast path */
            if (!(kind ? compare_wd(b, n) : compare_wg(b, n)))
                fail_msg("iteration %d: the fast decoder gave up on a %zu-byte message protobuf-c packed", it, n);
            fast++;
            for (int mu = 0; mu < 8; mu++) {
                uint8_t *c = malloc(n + 1);
                memcpy(c, b, n);
                size_t cn = n;
                if (mu == 0 && n)
                    cn = rnd() % n; /* cut short */
                else if (n)
                    for (int f = 0; f < 1 + mu % 3; f++)
                        c[rnd() % n] ^= (uint8_t)(1u << (rnd() % 8));
                mutated_fast += kind ? compare_wd(c, cn) : compare_wg(c, cn);
                free(c);
            }
            free(b);
        }
        free_wg(&g);
        free_wd(&d);
    }
    print_message("%d messages decoded by both; %d of 6400 mutated ones decoded by both alike\n", fast,
                  mutated_fast);
}

/* ---- encodings left to protobuf-c ------------------------------------------- */

static void test_left_to_protobuf_c(void **state)
{
    (void)state;
    /* Workgroup {kernel_id 7, wg_id [1,2,3], wave_count 1, waves [Wave {wave_in_wg 0, mem_flags [5]}]} */
    static const uint8_t ok[] = {0x08, 7, 0x12, 3, 1, 2, 3, 0x18, 1, 0x22, 5, 0x08, 0, 0x42, 1, 5};
    assert_int_equal(compare_wg(ok, sizeof ok), 1);
    /* mem_flags unpacked (wire type 0): valid protobuf, not the writer's */
    static const uint8_t unpacked[] = {0x08, 7, 0x12, 3, 1, 2, 3, 0x18, 1, 0x22, 6, 0x08, 0, 0x40, 5, 0x40, 6};
    assert_int_equal(compare_wg(unpacked, sizeof unpacked), 0);
    Gtrace__Workgroup *s = gtrace__workgroup__unpack(NULL, sizeof unpacked, unpacked);
    assert_non_null(s);
    assert_int_equal(s->waves[0]->n_mem_flags, 2);
    gtrace__workgroup__free_unpacked(s, NULL);
    /* kernel_id twice (the last one wins in protobuf) */
    static const uint8_t twice[] = {0x08, 7, 0x08, 9, 0x12, 3, 1, 2, 3};
    assert_int_equal(compare_wg(twice, sizeof twice), 0);
    /* a packed field twice in one wave (protobuf concatenates them) */
    static const uint8_t twice_rep[] = {0x22, 7, 0x08, 0, 0x42, 1, 5, 0x42, 1, 6};
    assert_int_equal(compare_wg(twice_rep, sizeof twice_rep), 0);
    /* an unknown field (number 30, varint) in a wave */
    static const uint8_t unknown[] = {0x22, 5, 0x08, 0, 0xf0, 0x01, 1};
    assert_int_equal(compare_wg(unknown, sizeof unknown), 0);
    /* wave_in_wg of 2^32 (a uint32 field) */
    static const uint8_t wide[] = {0x22, 6, 0x08, 0x80, 0x80, 0x80, 0x80, 0x10};
    assert_int_equal(compare_wg(wide, sizeof wide), 0);
    /* a varint of 11 bytes */
    static const uint8_t longv[] = {0x22, 12, 0x10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    assert_int_equal(compare_wg(longv, sizeof longv), 0);
    /* sint64 extremes and the largest uint64 decode alike */
    Gtrace__Wave w = GTRACE__WAVE__INIT;
    int64_t bd[3] = {INT64_MIN, INT64_MAX, -1};
    w.n_addr_base_delta = 3;
    w.addr_base_delta = bd;
    w.n_instr = UINT64_MAX;
    Gtrace__Wave *wp = &w;
    Gtrace__Workgroup g = GTRACE__WORKGROUP__INIT;
    g.n_waves = 1;
    g.waves = &wp;
    uint8_t buf[256];
    size_t n = gtrace__workgroup__pack(&g, buf);
    assert_int_equal(compare_wg(buf, n), 1);
    Gtrace__Workgroup *f = trc_fast_workgroup(buf, n);
    assert_non_null(f);
    assert_true(f->waves[0]->addr_base_delta[0] == INT64_MIN && f->waves[0]->addr_base_delta[1] == INT64_MAX &&
                f->waves[0]->addr_base_delta[2] == -1 && f->waves[0]->n_instr == UINT64_MAX);
    free(f);
}

/* A compact reader (trc_reader_set_compact_strided) gives every lane the
 * same address through trc_mo_addr as a full one does through addr[k]. */
static void test_compact_strided(void **state)
{
    (void)state;
    static const char *names[] = {"golden-1.0.gtrace", "golden-2.0.gtrace", "golden-2.2.gtrace", "golden-2.3.gtrace"};
    for (size_t f = 0; f < sizeof names / sizeof *names; f++) {
        char err[512];
        trc_reader *full = trc_reader_open(golden(names[f]), err, sizeof err);
        if (!full)
            fail_msg("%s", err);
        trc_reader *cpt = trc_reader_open(golden(names[f]), err, sizeof err);
        if (!cpt)
            fail_msg("%s", err);
        trc_reader_set_compact_strided(cpt, 1);
        uint64_t lanes = 0, strided = 0;
        for (uint32_t k = 0; k < trc_reader_n_kernels(full); k++) {
            trc_kernel_stats st;
            assert_int_equal(trc_reader_kernel_stats(full, k, &st), 0);
            for (uint32_t i = 0; i < st.n_wg; i++) {
                trc_wg *a = trc_reader_load_wg(full, k, i, err, sizeof err), *b = trc_reader_load_wg(cpt, k, i, err, sizeof err);
                if (!a || !b)
                    fail_msg("%s", err);
                assert_int_equal(a->n_waves, b->n_waves);
                for (uint32_t v = 0; v < a->n_waves; v++) {
                    assert_int_equal(a->waves[v].n_mem, b->waves[v].n_mem);
                    for (uint32_t j = 0; j < a->waves[v].n_mem; j++) {
                        const trc_mem_op *x = &a->waves[v].mem[j], *y = &b->waves[v].mem[j];
                        assert_true(x->flags == y->flags && x->exec == y->exec &&
                                    x->addr_strided == y->addr_strided && x->addr_stride == y->addr_stride);
                        uint32_t n = x->flags & TRC_MO_SMEM ? 1 : trc_popcount64(x->exec);
                        strided += x->addr_strided && n > 1;
                        for (uint32_t l = 0; l < n; l++, lanes++) {
                            assert_true(trc_mo_addr(x, l) == x->addr[l]);
                            assert_true(trc_mo_addr(y, l) == x->addr[l]);
                        }
                    }
                }
                trc_wg_free(a);
                trc_wg_free(b);
            }
        }
        if (!strided)
            fail_msg("%s: no strided memory op with two lanes or more: the test checks nothing", names[f]);
        print_message("%s: %llu lane addresses alike, %llu strided ops\n", names[f], (unsigned long long)lanes,
                      (unsigned long long)strided);
        trc_reader_close(full);
        trc_reader_close(cpt);
    }
}

/* Address deltas at the edges of a varint: 10 bytes (INT64_MIN, zigzag
 * 2^64 - 1), and the encodings both fast decoders must refuse alike: 11
 * bytes, 10 bytes past 64 bits, cut off at the end of the field. */
static void test_lazy_delta_edges(void **state)
{
    (void)state;
    int64_t d[20];
    for (int i = 0; i < 20; i++)
        d[i] = i % 3 == 0 ? INT64_MIN : i % 3 == 1 ? INT64_MAX : -(int64_t)i * 1000003;
    for (size_t n = 0; n <= 20; n++) {
        Gtrace__Wave w = GTRACE__WAVE__INIT, *wp = &w;
        w.n_addr_delta = n;
        w.addr_delta = n ? d : NULL;
        Gtrace__Workgroup g = GTRACE__WORKGROUP__INIT;
        g.n_waves = 1;
        g.waves = &wp;
        uint8_t buf[512];
        size_t len = gtrace__workgroup__pack(&g, buf);
        assert_int_equal(compare_wg(buf, len), 1);
    }
    /* Workgroup {waves [Wave {addr_delta [...]}]}: field 4 (len), inside it field 14 (tag 0x72) */
    static const uint8_t ten[] = {0x22, 13, 0x72, 11, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    assert_int_equal(compare_wg(ten, sizeof ten), 1);
    static const uint8_t eleven[] = {0x22, 14, 0x72, 12, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x80, 0x01};
    assert_int_equal(compare_wg(eleven, sizeof eleven), 0);
    static const uint8_t wide[] = {0x22, 13, 0x72, 11, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    assert_int_equal(compare_wg(wide, sizeof wide), 0);
    static const uint8_t cut[] = {0x22, 5, 0x72, 3, 0x02, 0x04, 0x80};
    assert_int_equal(compare_wg(cut, sizeof cut), 0);
    /* runs of continuation bytes across the eight-byte words count_varints reads */
    for (size_t lead = 0; lead < 9; lead++) {
        for (size_t vl = 1; vl <= 11; vl++) {
            uint8_t m[64];
            size_t k = 0, body = lead + vl;
            m[k++] = 0x22;
            m[k++] = (uint8_t)(body + 2);
            m[k++] = 0x72;
            m[k++] = (uint8_t)body;
            for (size_t i = 0; i < lead; i++)
                m[k++] = (uint8_t)(i * 7 % 0x80); /* one-byte varints */
            for (size_t i = 0; i + 1 < vl; i++)
                m[k++] = 0x81;
            m[k++] = vl == 10 ? 0x01 : 0x05; /* 10 bytes: fits 64 bits only with 1 */
            int want = vl <= 10;
            if (compare_wg(m, k) != want)
                fail_msg("%zu one-byte varints then one of %zu bytes: expected %s", lead, vl,
                         want ? "decoded" : "left to protobuf-c");
        }
    }
}

/* TRC_WG_NO_LDS_ADDR: every op as without it, but the LDS ops' addresses
 * (none: addr NULL); the golden traces' LDS ops with per-lane deltas and
 * strided ones are stepped over. */
static void test_no_lds_addr(void **state)
{
    (void)state;
    static const char *names[] = {"golden-2.0.gtrace", "golden-2.3.gtrace", "golden-2.4.gtrace"};
    uint64_t lds = 0, other = 0;
    for (size_t f = 0; f < sizeof names / sizeof *names; f++) {
        char err[512];
        trc_reader *r = trc_reader_open(golden(names[f]), err, sizeof err);
        if (!r)
            fail_msg("%s", err);
        for (uint32_t k = 0; k < trc_reader_n_kernels(r); k++) {
            trc_kernel_stats st;
            assert_int_equal(trc_reader_kernel_stats(r, k, &st), 0);
            for (uint32_t i = 0; i < st.n_wg; i++) {
                for (int mode = 0; mode < 2; mode++) {
                    int wd = mode ? TRC_WG_STORES_ONLY : 1;
                    trc_wg *a = trc_reader_load_wg_ex(r, k, i, wd, err, sizeof err);
                    trc_wg *b = trc_reader_load_wg_ex(r, k, i, wd | TRC_WG_NO_LDS_ADDR, err, sizeof err);
                    if (!a || !b)
                        fail_msg("%s", err);
                    assert_int_equal(a->n_waves, b->n_waves);
                    for (uint32_t v = 0; v < a->n_waves; v++) {
                        assert_int_equal(a->waves[v].n_mem, b->waves[v].n_mem);
                        assert_int_equal(a->waves[v].n_instr, b->waves[v].n_instr);
                        for (uint32_t j = 0; j < a->waves[v].n_mem; j++) {
                            const trc_mem_op *x = &a->waves[v].mem[j], *y = &b->waves[v].mem[j];
                            uint32_t n = x->flags & TRC_MO_SMEM ? 1 : trc_popcount64(x->exec), bytes = n * x->bytes_per_lane;
                            assert_true(x->flags == y->flags && x->exec == y->exec && x->load_hash == y->load_hash);
                            assert_true(!x->load_data == !y->load_data && !x->store_data == !y->store_data);
                            if (x->load_data)
                                assert_memory_equal(x->load_data, y->load_data, trc_mo_load_len(x->flags, n, x->bytes_per_lane));
                            if (x->store_data)
                                assert_memory_equal(x->store_data, y->store_data, trc_mo_store_len(x->flags, n, x->bytes_per_lane));
                            (void)bytes;
                            if (n && (x->flags & TRC_MO_LDS)) {
                                assert_null(y->addr);
                                lds++;
                                continue;
                            }
                            assert_true(x->addr_strided == y->addr_strided && x->addr_stride == y->addr_stride);
                            for (uint32_t l = 0; l < n; l++)
                                assert_true(trc_mo_addr(x, l) == trc_mo_addr(y, l));
                            other += n > 0;
                        }
                    }
                    trc_wg_free(a);
                    trc_wg_free(b);
                }
            }
        }
        trc_reader_close(r);
    }
    if (!lds || !other)
        fail_msg("%llu LDS ops, %llu others: the test checks nothing", (unsigned long long)lds,
                 (unsigned long long)other);
    print_message("%llu LDS ops without addresses, %llu other ops alike\n", (unsigned long long)lds,
                  (unsigned long long)other);
}

/* trc_reader_error: the last failed load's message, "" before any. */
static void test_reader_error(void **state)
{
    (void)state;
    char err[512];
    trc_reader *r = trc_reader_open(golden("golden-2.4.gtrace"), err, sizeof err);
    if (!r)
        fail_msg("%s", err);
    assert_string_equal(trc_reader_error(r), "");
    trc_kernel_stats st;
    assert_int_equal(trc_reader_kernel_stats(r, 0, &st), 0);
    assert_null(trc_reader_load_wg_ex(r, 0, st.n_wg, TRC_WG_STORES_ONLY | TRC_WG_NO_LDS_ADDR, err, sizeof err));
    assert_non_null(strstr(err, "no workgroup"));
    assert_string_equal(trc_reader_error(r), err);
    trc_reader_close(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_files),
        cmocka_unit_test(test_random_messages),
        cmocka_unit_test(test_left_to_protobuf_c),
        cmocka_unit_test(test_compact_strided),
        cmocka_unit_test(test_lazy_delta_edges),
        cmocka_unit_test(test_no_lds_addr),
        cmocka_unit_test(test_reader_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
