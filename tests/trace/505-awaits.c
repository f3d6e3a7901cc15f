/*
 * 505-awaits - the recorder's await rules (format 1.2, traceformat/trc_rec.c),
 * written with trc_rec_* and read back:
 *  - WAIT: a template kept by trc_rec_await_commit, an identical repeat
 *    dropped (not recorded, not counted in n_instr or later EXEC indices);
 *  - a template holding an atomic without return is not kept;
 *  - RETRY: a loop's only iteration kept when it is a pure poll (a load, or a
 *    compare-and-swap with a constant compare value), not kept when it stores,
 *    when its compare value is what a load of the same address just returned
 *    (a CAS loop), or when it overlaps an earlier await;
 *  - the kinds column is written once a RETRY exists (older awaits WAIT);
 *  - format 2.0 wave segments: a wave cut into segments just before a wait
 *    keeps its await (same record as the whole wave, the first segment's
 *    awaits WAIT without a kinds column, the last part's a RETRY); a cut
 *    inside a marked iteration gives the mark up; a wave is never cut while
 *    it drops the repeats of a template.
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

#include "traceformat/trc.h"
#include "traceformat/trc_internal.h"

static char path[600];
/* > 0: the recorder streams waves in segments at this many data bytes */
static size_t seg_data;

/* One kernel of one workgroup of 6 one-lane waves, each recorded by rec(). */
static trc_reader *write_and_read(void (*rec)(trc_wg_rec *g, uint32_t v), uint32_t nw)
{
    char err[512];
    trc_header_info h;
    memset(&h, 0, sizeof h);
    snprintf(h.producer, sizeof h.producer, "505-awaits");
    snprintf(h.isa_target, sizeof h.isa_target, "amdgcn-amd-amdhsa--gfx803");
    h.device_count = 1;
    trc_writer *w = trc_writer_open(path, &h, err, sizeof err);
    if (!w) fail_msg("%s", err);
    uint8_t co[64] = {0x7f, 'E', 'L', 'F'};
    assert_int_equal(trc_writer_code_object(w, co, sizeof co, 0x1000), 0);
    trc_launch l;
    memset(&l, 0, sizeof l);
    snprintf(l.kernel_name, sizeof l.kernel_name, "k");
    l.grid[0] = l.grid[1] = l.grid[2] = 1;
    l.wg_size[0] = 64 * nw;
    l.wg_size[1] = l.wg_size[2] = 1;
    l.waves_per_wg = nw;
    assert_int_equal(trc_writer_begin_kernel(w, &l), 0);
    trc_wg_rec *g = trc_wg_rec_create();
    uint32_t id[3] = {0, 0, 0};
    trc_wg_rec_begin(g, l.kernel_id, id, nw);
    if (seg_data) {
        trc_writer_set_segment_limits(w, 1u << 20, seg_data);
        trc_wg_rec_stream(g, w);
    }
    for (uint32_t v = 0; v < nw; v++) {
        trc_rec_exec(g, v, 0, 1);
        rec(g, v);
    }
    if (trc_wg_commit(w, g) != 0) fail_msg("%s", trc_writer_error(w));
    trc_wg_rec_destroy(g);
    assert_int_equal(trc_writer_end_kernel(w, l.kernel_id), 0);
    assert_int_equal(trc_writer_close(w), 0);
    trc_writer_destroy(w);
    trc_reader *r = trc_reader_open(path, err, sizeof err);
    if (!r) fail_msg("%s", err);
    return r;
}

static const uint64_t A_FLAG = 0x5000, A_LOCK = 0x6000;

static void poll(trc_wg_rec *g, uint32_t v, uint32_t value)
{
    uint64_t a = A_FLAG;
    trc_rec_mem(g, v, TRC_MO_LOAD, 4, 1, &a, &value, NULL);
}

static void cas(trc_wg_rec *g, uint32_t v, uint32_t old, uint32_t src, uint32_t cmp)
{
    uint64_t a = A_LOCK;
    uint32_t st[2] = {src, cmp};
    trc_rec_mem(g, v, TRC_MO_LOAD | TRC_MO_STORE | TRC_MO_ATOMIC | TRC_MO_CMPSWAP, 4, 1, &a, &old, st);
}

/* dyn counts below are the emulator's instruction counts */
static void rec_waves(trc_wg_rec *g, uint32_t v)
{
    uint64_t a = A_FLAG;
    uint32_t one = 1;
    switch (v) {
    case 0: /* WAIT: template [2,5), a repeat [5,8) dropped, way out [8,11) */
        trc_rec_await_mark(g, v, 2);
        poll(g, v, 0);
        trc_rec_branch(g, v, 1);
        assert_int_equal(trc_rec_await_commit(g, v, 5, 0x1100), 1);
        poll(g, v, 0);
        trc_rec_branch(g, v, 1);
        trc_rec_await_drop(g, v, 8);
        poll(g, v, 1);
        trc_rec_branch(g, v, 0);
        trc_rec_await_end(g, v);
        trc_rec_exec(g, v, 9, 3);       /* record index 6 */
        trc_rec_wave_end(g, v, 12);     /* 9 recorded */
        break;
    case 1: /* a template with an atomic without return is not kept */
        trc_rec_await_mark(g, v, 2);
        trc_rec_mem(g, v, TRC_MO_STORE | TRC_MO_ATOMIC, 4, 1, &a, NULL, &one);
        assert_int_equal(trc_rec_await_commit(g, v, 5, 0x1100), 0);
        trc_rec_wave_end(g, v, 8);
        break;
    case 2: /* RETRY: a pure poll, then a constant-compare CAS (lock) */
        trc_rec_retry_mark(g, v, 1);
        poll(g, v, 7);
        trc_rec_branch(g, v, 0);
        assert_int_equal(trc_rec_retry_commit(g, v, 4, 0x1100), 1);
        poll(g, v, 0);                  /* a load of the flag, not of the lock */
        trc_rec_retry_mark(g, v, 5);
        cas(g, v, 0, 1, 0);
        trc_rec_branch(g, v, 0);
        assert_int_equal(trc_rec_retry_commit(g, v, 9, 0x1200), 1);
        trc_rec_wave_end(g, v, 11);
        break;
    case 3: /* RETRY not kept: the iteration stores */
        trc_rec_retry_mark(g, v, 1);
        poll(g, v, 7);
        trc_rec_mem(g, v, TRC_MO_STORE, 4, 1, &a, NULL, &one);
        assert_int_equal(trc_rec_retry_commit(g, v, 4, 0x1100), 0);
        trc_rec_wave_end(g, v, 6);
        break;
    case 4: { /* RETRY not kept: a CAS loop (compare value = what a load just returned) */
        uint64_t l = A_LOCK;
        uint32_t old = 41;
        trc_rec_mem(g, v, TRC_MO_LOAD, 4, 1, &l, &old, NULL);
        trc_rec_retry_mark(g, v, 2);
        cas(g, v, 41, 42, 41);
        trc_rec_branch(g, v, 0);
        assert_int_equal(trc_rec_retry_commit(g, v, 6, 0x1100), 0);
        trc_rec_wave_end(g, v, 8);
        break;
    }
    case 5: /* a WAIT, then a RETRY whose mark lies inside it: not kept; a later one is, kinds WAIT, RETRY */
        trc_rec_retry_mark(g, v, 1);
        trc_rec_await_mark(g, v, 2);
        poll(g, v, 0);
        trc_rec_branch(g, v, 1);
        assert_int_equal(trc_rec_await_commit(g, v, 5, 0x1100), 1);
        poll(g, v, 1);
        trc_rec_branch(g, v, 0);
        trc_rec_await_end(g, v);
        assert_int_equal(trc_rec_retry_commit(g, v, 8, 0x1100), 0);
        trc_rec_retry_mark(g, v, 9);
        poll(g, v, 3);
        trc_rec_branch(g, v, 0);
        assert_int_equal(trc_rec_retry_commit(g, v, 12, 0x1300), 1);
        trc_rec_wave_end(g, v, 14);
        break;
    }
}

static void test_rules(void **state)
{
    (void)state;
    trc_reader *r = write_and_read(rec_waves, 6);
    char err[512];
    trc_wg *g = trc_reader_load_wg(r, 0, 0, err, sizeof err);
    if (!g) fail_msg("%s", err);
    const trc_wave *w = &g->waves[0];
    assert_int_equal(w->n_await, 1);
    assert_int_equal(w->await_at[0], 2);
    assert_int_equal(w->await_len[0], 3);
    assert_int_equal(w->await_pc[0], 0x1100);
    assert_int_equal(w->await_kind[0], TRC_AWAIT_WAIT);
    assert_int_equal(w->n_instr, 9);
    assert_int_equal(w->n_mem, 2);          /* template and way out; the repeat is gone */
    assert_int_equal(w->n_branch, 2);
    assert_int_equal(w->branch_taken[0] & 3, 1); /* T (template), n (way out) */
    assert_int_equal(w->n_exec, 2);
    assert_int_equal(w->exec_at[1], 6);
    assert_int_equal(*(const uint32_t *)w->mem[1].load_data, 1);
    assert_int_equal(g->waves[1].n_await, 0);
    w = &g->waves[2];
    assert_int_equal(w->n_await, 2);
    assert_int_equal(w->await_kind[0], TRC_AWAIT_RETRY);
    assert_int_equal(w->await_kind[1], TRC_AWAIT_RETRY);
    assert_int_equal(w->await_at[1], 5);
    assert_int_equal(w->await_len[1], 4);
    assert_int_equal(w->await_pc[1], 0x1200);
    assert_int_equal(g->waves[3].n_await, 0);
    assert_int_equal(g->waves[4].n_await, 0);
    w = &g->waves[5];
    assert_int_equal(w->n_await, 2);
    assert_int_equal(w->await_kind[0], TRC_AWAIT_WAIT);
    assert_int_equal(w->await_kind[1], TRC_AWAIT_RETRY);
    assert_int_equal(w->await_at[1], 9);
    trc_wg_free(g);
    trc_reader_close(r);
}

/* Wave 0: 10 polls (40 data bytes: with seg_data = 40 the wave is cut right
 * after them), then a WAIT (template, one repeat dropped, way out) and a
 * RETRY. Wave 1: 9 polls, a loop head marked, a 10th poll in the iteration
 * (cut there with seg_data = 40: the mark is given up), back at the head.
 * Wave 2: a WAIT whose dropped repeat would pass the limit (state 2: not
 * cut), then one more poll that passes it. dyn: one instruction per poll. */
static void rec_segmented(trc_wg_rec *g, uint32_t v)
{
    for (uint32_t i = 0; i < (v == 1 ? 9u : v == 2 ? 8u : 10u); i++) poll(g, v, 100 + i);
    switch (v) {
    case 0:
        trc_rec_await_mark(g, v, 12);
        poll(g, v, 0);
        trc_rec_branch(g, v, 1);
        assert_int_equal(trc_rec_await_commit(g, v, 15, 0x1100), 1);
        poll(g, v, 0);
        trc_rec_branch(g, v, 1);
        trc_rec_await_drop(g, v, 18);
        poll(g, v, 1);
        trc_rec_branch(g, v, 0);
        trc_rec_await_end(g, v);
        trc_rec_exec(g, v, 19, 3);
        trc_rec_retry_mark(g, v, 20);
        poll(g, v, 7);
        trc_rec_branch(g, v, 0);
        assert_int_equal(trc_rec_retry_commit(g, v, 23, 0x1200), 1);
        trc_rec_wave_end(g, v, 25);
        break;
    case 1:
        trc_rec_await_mark(g, v, 11);
        poll(g, v, 0);
        trc_rec_branch(g, v, 1);
        assert_int_equal(trc_rec_await_commit(g, v, 14, 0x1100), seg_data ? 0 : 1);
        trc_rec_await_end(g, v);
        trc_rec_wave_end(g, v, 16);
        break;
    case 2:
        trc_rec_await_mark(g, v, 10);
        poll(g, v, 0);              /* 36 bytes */
        trc_rec_branch(g, v, 1);
        assert_int_equal(trc_rec_await_commit(g, v, 13, 0x1100), 1);
        poll(g, v, 0);              /* 40: a repeat, in state 2 */
        trc_rec_branch(g, v, 1);
        trc_rec_await_drop(g, v, 16);
        trc_rec_await_end(g, v);
        poll(g, v, 5);              /* 40 again, now cut */
        trc_rec_wave_end(g, v, 18);
        break;
    }
}

static void test_segments(void **state)
{
    (void)state;
    char err[512];
    trc_reader *r[2];
    trc_wg *g[2];
    for (int k = 0; k < 2; k++) {
        seg_data = k ? 40 : 0;
        r[k] = write_and_read(rec_segmented, 3);
        g[k] = trc_reader_load_wg(r[k], 0, 0, err, sizeof err);
        if (!g[k]) fail_msg("%s", err);
    }
    seg_data = 0;
    trc_kernel_stats st;
    assert_int_equal(trc_reader_kernel_stats(r[0], 0, &st), 0);
    assert_int_equal(st.n_segments, 0);
    assert_int_equal(trc_reader_kernel_stats(r[1], 0, &st), 0);
    assert_int_equal(st.n_segments, 3); /* one per wave */
    /* wave 0: the same record either way */
    const trc_wave *a = &g[0]->waves[0], *b = &g[1]->waves[0];
    assert_int_equal(b->n_await, 2);
    assert_int_equal(b->await_at[0], 12);
    assert_int_equal(b->await_kind[0], TRC_AWAIT_WAIT);
    assert_int_equal(b->await_kind[1], TRC_AWAIT_RETRY);
    assert_int_equal(b->await_at[1], 17);
    assert_int_equal(b->n_instr, 22);
    assert_int_equal(a->n_instr, b->n_instr);
    assert_int_equal(a->n_await, b->n_await);
    assert_memory_equal(a->await_at, b->await_at, 8 * a->n_await);
    assert_memory_equal(a->await_len, b->await_len, 8 * a->n_await);
    assert_memory_equal(a->await_pc, b->await_pc, 8 * a->n_await);
    assert_memory_equal(a->await_kind, b->await_kind, 4 * a->n_await);
    assert_int_equal(a->n_exec, b->n_exec);
    assert_memory_equal(a->exec_at, b->exec_at, 8 * a->n_exec);
    assert_int_equal(a->n_branch, b->n_branch);
    assert_int_equal(a->n_mem, b->n_mem);
    for (uint32_t m = 0; m < a->n_mem; m++) {
        assert_int_equal(a->mem[m].addr[0], b->mem[m].addr[0]);
        assert_memory_equal(a->mem[m].load_data, b->mem[m].load_data, 4);
    }
    /* wave 1: cut inside the marked iteration, the await given up */
    assert_int_equal(g[0]->waves[1].n_await, 1);
    assert_int_equal(g[1]->waves[1].n_await, 0);
    assert_int_equal(g[1]->waves[1].n_mem, 10);
    assert_int_equal(g[1]->waves[1].n_instr, 16);
    /* wave 2: not cut while dropping the repeat; the same record either way */
    a = &g[0]->waves[2];
    b = &g[1]->waves[2];
    assert_int_equal(b->n_await, 1);
    assert_int_equal(b->await_at[0], 10);
    assert_int_equal(b->n_mem, 10);
    assert_int_equal(a->n_mem, b->n_mem);
    assert_int_equal(a->n_instr, b->n_instr);
    assert_int_equal(*(const uint32_t *)b->mem[9].load_data, 5);
    for (int k = 0; k < 2; k++) {
        trc_wg_free(g[k]);
        trc_reader_close(r[k]);
    }
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/trc505-%d.gtrace", tmp ? tmp : "/tmp", (int)getpid());
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_rules), cmocka_unit_test(test_segments)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(path);
    return rc;
}
