/*
 * 501-damage: damaged and unwritable traces.
 *  - a trace cut at every byte position is refused with the "truncated or
 *    incomplete trace" message;
 *  - a trace with any single byte flipped is refused (at open or when the
 *    damaged workgroup is loaded), never crashes, never reads out of bounds
 *    (run under -fsanitize=address to check the latter);
 *  - a newer major version is refused with a clear message;
 *  - writing to /dev/full, or past RLIMIT_FSIZE, fails with a message naming
 *    the file.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "traceformat/trc.h"
#include "traceformat/trc_internal.h"

static char path[256], path2[256];

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A small trace with every chunk type. n_wg workgroups. Returns 0 if every
 * writer call succeeded, else -1 with the first error in err. */
static int write_small(const char *p, int n_wg, char *err, size_t errlen)
{
    trc_header_info h;
    memset(&h, 0, sizeof h);
    strcpy(h.producer, "gcn3-emu");
    strcpy(h.isa_target, "amdgcn-amd-amdhsa--gfx803");
    h.device_count = 1;
    trc_writer *w = trc_writer_open(p, &h, err, errlen);
    if (!w) return -1;
    int rc = 0;
    uint8_t co[300], data[200];
    uint64_t s = 7;
    for (size_t i = 0; i < sizeof co; i++) co[i] = (uint8_t)(i * 7);
    for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)mix(&s);
    if (trc_writer_code_object(w, co, sizeof co, 0x100000) < 0) rc = -1;
    trc_event e;
    memset(&e, 0, sizeof e);
    e.kind = TRC_EV_ALLOC;
    e.addr = 0x10000;
    e.size = 4096;
    if (trc_writer_event(w, &e) < 0) rc = -1;
    e.kind = TRC_EV_COPY;
    e.copy_kind = TRC_COPY_H2D;
    e.size = sizeof data;
    e.data = data;
    if (trc_writer_event(w, &e) < 0) rc = -1;
    trc_launch l;
    memset(&l, 0, sizeof l);
    strcpy(l.kernel_name, "k");
    l.grid[0] = (uint32_t)n_wg;
    l.grid[1] = l.grid[2] = 1;
    l.wg_size[0] = 128;
    l.wg_size[1] = l.wg_size[2] = 1;
    l.waves_per_wg = 2;
    uint8_t ka[16] = {1, 2, 3};
    l.kernarg = ka;
    l.kernarg_size = sizeof ka;
    if (trc_writer_begin_kernel(w, &l) < 0) rc = -1;
    trc_wg_rec *g = trc_wg_rec_create();
    for (int i = 0; i < n_wg; i++) {
        uint32_t id[3] = {(uint32_t)i, 0, 0};
        trc_wg_rec_begin(g, l.kernel_id, id, 2);
        for (uint32_t v = 0; v < 2; v++) {
            uint64_t addr[64];
            for (int k = 0; k < 64; k++) addr[k] = 0x10000 + 4u * (unsigned)k + (mix(&s) % 3 == 0 ? 64 : 0);
            uint8_t ld[256];
            for (size_t k = 0; k < sizeof ld; k++) ld[k] = (uint8_t)mix(&s);
            trc_rec_exec(g, v, 0, ~0ull);
            trc_rec_mem(g, v, TRC_MO_LOAD, 4, ~0ull, addr, ld, NULL);
            trc_rec_branch(g, v, 1);
            trc_rec_indirect(g, v, 0x1234);
            /* values that compress (a small share of the data): the
             * kernel gets a store frame, with its ops (2.5) */
            uint8_t st[32];
            for (size_t k = 0; k < sizeof st; k++) st[k] = (uint8_t)(k & 3);
            trc_rec_mem(g, v, TRC_MO_STORE, 4, 0xff, addr, NULL, st);
            trc_rec_wave_end(g, v, 10 + v);
        }
        if (trc_wg_commit(w, g) < 0) rc = -1;
    }
    trc_wg_rec_destroy(g);
    if (trc_writer_end_kernel(w, l.kernel_id) < 0) rc = -1;
    if (trc_writer_close(w) < 0) rc = -1;
    if (rc && err && errlen) snprintf(err, errlen, "%s", trc_writer_error(w));
    trc_writer_destroy(w);
    return rc;
}

static uint8_t *slurp(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)len + 1);
    assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return b;
}

static void spit(const char *p, const uint8_t *b, size_t n)
{
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static uint64_t hmix(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}
#define HV(h, v) do { uint64_t v_ = (uint64_t)(v); h = hmix(h, &v_, 8); } while (0)

/* Opens p and loads everything; returns 0 if all of it reads, else -1 with
 * the message in err. *digest: hash of everything decoded. */
static int read_everything(const char *p, char *err, size_t errlen, uint64_t *digest)
{
    uint64_t h = 0xcbf29ce484222325ull;
    trc_reader *r = trc_reader_open(p, err, errlen);
    if (!r) return -1;
    int rc = 0;
    const trc_header_info *hd = trc_reader_header(r);
    h = hmix(h, hd, sizeof *hd);
    for (size_t i = 0; i < trc_reader_n_code_objects(r); i++) {
        size_t len;
        const uint8_t *b = trc_reader_code_object(r, i, &len);
        h = hmix(h, b, len);
        HV(h, len);
    }
    for (size_t i = 0; i < trc_reader_n_events(r) && rc == 0; i++) {
        const trc_event *e = trc_reader_event(r, i);
        HV(h, e->kind); HV(h, e->device); HV(h, e->stream); HV(h, e->addr); HV(h, e->src);
        HV(h, e->size); HV(h, e->mem_kind); HV(h, e->copy_kind); HV(h, e->value);
        HV(h, e->n_instr); HV(h, e->n_wg);
        if (e->data) h = hmix(h, e->data, e->size);
        if (e->kind != TRC_EV_LAUNCH) continue;
        trc_launch l = e->launch;
        h = hmix(h, l.kernarg, l.kernarg_size);
        l.kernarg = NULL;
        h = hmix(h, &l, sizeof l);
        for (uint32_t j = 0; j < e->n_wg; j++) {
            trc_wg *wg = trc_reader_load_wg(r, e->launch.kernel_id, j, err, errlen);
            if (!wg) { rc = -1; break; }
            HV(h, wg->kernel_id); HV(h, wg->wg_id[0]); HV(h, wg->wg_id[1]); HV(h, wg->wg_id[2]);
            for (uint32_t v = 0; v < wg->n_waves; v++) {
                const trc_wave *w = &wg->waves[v];
                HV(h, w->wave_in_wg); HV(h, w->n_instr); HV(h, w->n_branch);
                h = hmix(h, w->branch_taken, (w->n_branch + 7) / 8);
                h = hmix(h, w->indirect_target, 8 * (size_t)w->n_indirect);
                h = hmix(h, w->exec_at, 8 * (size_t)w->n_exec);
                h = hmix(h, w->exec_val, 8 * (size_t)w->n_exec);
                for (uint32_t m = 0; m < w->n_mem; m++) {
                    const trc_mem_op *o = &w->mem[m];
                    uint32_t n = (uint32_t)__builtin_popcountll(o->exec);
                    HV(h, o->flags); HV(h, o->bytes_per_lane); HV(h, o->exec);
                    h = hmix(h, o->addr, 8 * (size_t)n);
                    if (o->load_data) h = hmix(h, o->load_data, trc_mo_load_len(o->flags, n, o->bytes_per_lane));
                    if (o->store_data) h = hmix(h, o->store_data, trc_mo_store_len(o->flags, n, o->bytes_per_lane));
                }
            }
            trc_wg_free(wg);
            /* what a fast-forward reads: the 2.4 store frame where there is one */
            if (!(wg = trc_reader_load_wg_ex(r, e->launch.kernel_id, j, TRC_WG_STORES_ONLY, err, errlen))) {
                rc = -1;
                break;
            }
            for (uint32_t v = 0; v < wg->n_waves; v++)
                for (uint32_t m = 0; m < wg->waves[v].n_mem; m++) {
                    const trc_mem_op *o = &wg->waves[v].mem[m];
                    uint32_t n = (uint32_t)__builtin_popcountll(o->exec);
                    if (o->store_data) h = hmix(h, o->store_data, trc_mo_store_len(o->flags, n, o->bytes_per_lane));
                }
            trc_wg_free(wg);
            /* and without loads: the 2.5 store frame alone, its ops with their addresses */
            if (!(wg = trc_reader_load_wg_ex(r, e->launch.kernel_id, j, TRC_WG_STORES_ONLY | TRC_WG_STORE_OPS, err,
                                             errlen))) {
                rc = -1;
                break;
            }
            for (uint32_t v = 0; v < wg->n_waves; v++) {
                HV(h, wg->waves[v].n_instr);
                for (uint32_t m = 0; m < wg->waves[v].n_mem; m++) {
                    const trc_mem_op *o = &wg->waves[v].mem[m];
                    uint32_t n = (uint32_t)__builtin_popcountll(o->exec);
                    HV(h, o->flags); HV(h, o->exec);
                    if (o->addr && !(o->flags & TRC_MO_LDS)) h = hmix(h, o->addr, 8 * (size_t)n);
                    if (o->store_data) h = hmix(h, o->store_data, trc_mo_store_len(o->flags, n, o->bytes_per_lane));
                }
            }
            trc_wg_free(wg);
        }
    }
    trc_reader_close(r);
    *digest = h;
    return rc;
}

static void test_intact(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(write_small(path, 3, err, sizeof err), 0);
    uint64_t d;
    if (read_everything(path, err, sizeof err, &d) != 0) fail_msg("%s", err);
    /* every chunk type: a store frame too */
    trc_reader *r = trc_reader_open(path, err, sizeof err);
    if (!r) fail_msg("%s", err);
    trc_kernel_stats st;
    assert_int_equal(trc_reader_kernel_stats(r, 0, &st), 0);
    assert_int_equal(st.n_store_frames, 1);
    trc_reader_close(r);
}

static void test_truncation(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(write_small(path, 3, err, sizeof err), 0);
    size_t n;
    uint8_t *b = slurp(path, &n);
    assert_true(n > 500);
    for (size_t cut = 0; cut < n; cut++) {
        spit(path2, b, cut);
        err[0] = 0;
        trc_reader *r = trc_reader_open(path2, err, sizeof err);
        if (r) fail_msg("cut at %zu of %zu: opened", cut, n);
        if (strncmp(err, path2, strlen(path2)) != 0 ||
            !strstr(err, "truncated or incomplete trace (no index at end; was the emulator killed?)"))
            fail_msg("cut at %zu: unexpected message: %s", cut, err);
    }
    free(b);
}

static void test_corruption(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(write_small(path, 3, err, sizeof err), 0);
    size_t n;
    uint8_t *b = slurp(path, &n);
    uint64_t good;
    assert_int_equal(read_everything(path, err, sizeof err, &good), 0);
    static const uint8_t masks[] = {0x01, 0x10, 0x80, 0xff};
    size_t undetected = 0, tried = 0;
    /* Kernel-end chunks are redundant copies of index entries that only
     * salvage (and gcn3-trace verify) read: the reader never sees them, so
     * corrupting them cannot fail a read. Skip their bytes. */
    uint8_t *skip = calloc(n, 1);
    for (uint64_t off = TRC_FILE_HDR_SIZE; off + TRC_CHUNK_HDR_SIZE <= n - TRC_TRAILER_SIZE;) {
        uint64_t sz = trc_get_le64(b + off + 8);
        if (trc_get_le32(b + off) == TRC_CHUNK_KERNEL_END) memset(skip + off, 1, TRC_CHUNK_HDR_SIZE + sz);
        off += TRC_CHUNK_HDR_SIZE + sz;
    }
    for (size_t pos = 0; pos < n; pos++) {
        if (skip[pos]) continue;
        for (size_t mi = 0; mi < sizeof masks; mi++) {
            b[pos] ^= masks[mi];
            spit(path2, b, n);
            b[pos] ^= masks[mi];
            tried++;
            err[0] = 0;
            uint64_t d = 0;
            if (read_everything(path2, err, sizeof err, &d) == 0) {
                /* zstd's entropy-coded blocks have a few bits that do not
                 * change the decoded bytes (the content checksum then still
                 * matches); such a flip is harmless, but only if what was
                 * decoded is exactly the original. */
                undetected++;
                if (d != good) fail_msg("byte %zu ^ 0x%02x: read succeeded with different content", pos, masks[mi]);
            } else if (strncmp(err, path2, strlen(path2)) != 0) {
                fail_msg("byte %zu: message does not name the file: %s", pos, err);
            }
        }
    }
    print_message("# %zu single-byte corruptions: %zu refused, %zu decoded identically (no effect)\n",
                  tried, tried - undetected, undetected);
    assert_true(undetected * 100 < tried);
    free(skip);
    free(b);
}

static void test_newer_major(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(write_small(path, 1, err, sizeof err), 0);
    size_t n;
    uint8_t *b = slurp(path, &n);
    trc_put_le32(b + 8, TRC_FORMAT_MAJOR + 1);
    spit(path2, b, n);
    assert_null(trc_reader_open(path2, err, sizeof err));
    assert_non_null(strstr(err, "is newer than this reader"));
    /* naming both versions: the file's and this reader's (2.1: its minor too) */
    char want[128];
    snprintf(want, sizeof want, "version %u.%u is newer than this reader (%u.%u)", TRC_FORMAT_MAJOR + 1,
             TRC_WRITE_FORMAT_MINOR, TRC_FORMAT_MAJOR, TRC_FORMAT_MINOR);
    if (!strstr(err, want)) fail_msg("\"%s\" lacks \"%s\"", err, want);
    /* and a file that is not a trace at all */
    memcpy(b, "\x7f" "ELF", 4);
    spit(path2, b, n);
    assert_null(trc_reader_open(path2, err, sizeof err));
    assert_non_null(strstr(err, "not a .gtrace file"));
    free(b);
    assert_null(trc_reader_open("/nonexistent/x.gtrace", err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent/x.gtrace: cannot open"));
}

static void test_dev_full(void **state)
{
    (void)state;
    char err[512] = "";
    trc_header_info h;
    memset(&h, 0, sizeof h);
    trc_writer *w = trc_writer_open("/dev/full", &h, err, sizeof err);
    assert_null(w);
    assert_non_null(strstr(err, "/dev/full"));
    assert_non_null(strstr(err, strerror(ENOSPC)));
}

/* Disk fills mid-trace (RLIMIT_FSIZE in a child): some call fails with a
 * message naming the file, and the partial file is refused as truncated. */
static void test_fsize_limit(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {3000, 3000};
        setrlimit(RLIMIT_FSIZE, &rl);
        char err[512] = "";
        int rc = write_small(path, 40, err, sizeof err);
        if (rc == 0) _exit(10);
        if (!strstr(err, path) || !strstr(err, strerror(EFBIG))) {
            fprintf(stderr, "unexpected: %s\n", err);
            _exit(11);
        }
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    char err[512];
    assert_null(trc_reader_open(path, err, sizeof err));
    assert_non_null(strstr(err, "truncated or incomplete trace"));
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/trc501-%d.gtrace", tmp ? tmp : "/tmp", (int)getpid());
    snprintf(path2, sizeof path2, "%s/trc501-%d-damaged.gtrace", tmp ? tmp : "/tmp", (int)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intact),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_corruption),
        cmocka_unit_test(test_newer_major),
        cmocka_unit_test(test_dev_full),
        cmocka_unit_test(test_fsize_limit),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(path);
    unlink(path2);
    return rc;
}
