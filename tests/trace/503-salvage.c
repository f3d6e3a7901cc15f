/*
 * 503-salvage - a trace cut off at any byte opens with a clear one-line
 * message, and trc_salvage() recovers every complete kernel before the cut
 * (docs/trace-format.md Sec. 6).
 *
 * The trace comes from the golden generator (tests/trace/data/gen.h) with
 * small frames, so each kernel has several frames. For cuts at every byte
 * of the first chunks, at every chunk boundary and its neighbours, and at
 * a stride through the rest, the test checks:
 *  - trc_reader_open refuses the cut file with one line naming the file
 *    and saying it is truncated;
 *  - trc_salvage fails (naming the file) only when the header chunk is cut;
 *    otherwise its output opens, holds exactly the kernels whose kernel-end
 *    chunk lies before the cut and the events before the first incomplete
 *    kernel's launch, and decodes to the same content as the original's
 *    corresponding prefix (every field, data values included).
 * Also: a complete trace is copied unchanged; a damaged frame stops the scan
 * there; bad arguments and write errors (/dev/full) fail with messages
 * naming the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "traceformat/gtrace.pb-c.h"
#include "tests/trace/data/gen.h"

static char path[512], cut[512], out[512];
static uint8_t *file;
static size_t file_len;

typedef struct chunk { uint64_t off, end; uint32_t type; int launch; } chunk;
static chunk ch[4096];
static size_t nch;

static void spit(const char *p, const uint8_t *b, size_t n)
{
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
}

static void setup(void)
{
    char err[512];
    if (gen_trace(path, 2, 5, 1024, 4096, 1, err, sizeof err) != 0) fail_msg("%s", err);
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    file_len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    file = malloc(file_len);
    assert_int_equal(fread(file, 1, file_len, f), file_len);
    fclose(f);
    /* framing walk; launches found by decoding events */
    int fd = open(path, O_RDONLY);
    nch = 0;
    for (uint64_t off = TRC_FILE_HDR_SIZE; off < file_len - TRC_TRAILER_SIZE;) {
        uint32_t t;
        uint8_t *raw;
        size_t n;
        uint64_t cb;
        if (trc_read_chunk_raw(fd, path, off, file_len - TRC_TRAILER_SIZE, 0, &t, &raw, &n, &cb, err,
                               sizeof err) != 0)
            fail_msg("%s", err);
        int launch = 0;
        if (t == TRC_CHUNK_EVENT) {
            Gtrace__Event *e = gtrace__event__unpack(NULL, n, raw);
            assert_non_null(e);
            launch = e->launch != NULL;
            gtrace__event__free_unpacked(e, NULL);
        }
        free(raw);
        assert_true(nch < sizeof ch / sizeof *ch);
        ch[nch++] = (chunk){off, off + cb, t, launch};
        off += cb;
    }
    close(fd);
}

/* What salvage must keep for a cut at byte `c`: events and kernels. */
static void expected(uint64_t c, size_t *nco, size_t *ne, size_t *nk)
{
    uint64_t valid = TRC_FILE_HDR_SIZE;
    for (size_t i = 0; i < nch && ch[i].end <= c && ch[i].type != TRC_CHUNK_INDEX; i++) valid = ch[i].end;
    /* P: the launch of the first kernel whose kernel-end chunk is not intact */
    uint64_t P = valid;
    size_t k = 0;
    for (size_t i = 0; i < nch; i++) {
        if (ch[i].type == TRC_CHUNK_EVENT && ch[i].launch) {
            /* its kernel-end chunk: the next one of type 7 */
            size_t j = i;
            while (j < nch && ch[j].type != TRC_CHUNK_KERNEL_END) j++;
            if (j == nch || ch[j].end > valid) {
                if (ch[i].off < P) P = ch[i].off;
                break;
            }
            k++;
        }
    }
    *ne = 0;
    *nk = 0;
    *nco = 0;
    for (size_t i = 0; i < nch; i++) {
        if (ch[i].type == TRC_CHUNK_CODE_OBJECT && ch[i].off < P) (*nco)++;
        if (ch[i].type == TRC_CHUNK_EVENT && ch[i].off < P) {
            (*ne)++;
            if (ch[i].launch) (*nk)++;
        }
    }
    (void)k;
}

static uint64_t prefix_hash(const char *p, size_t nco, size_t ne, size_t nk)
{
    char err[512];
    trc_reader *r = trc_reader_open(p, err, sizeof err);
    if (!r) fail_msg("%s", err);
    uint64_t h = gen_content_hash(r, nco, ne, nk, err, sizeof err);
    if (h == (uint64_t)-1) fail_msg("%s", err);
    trc_reader_close(r);
    return h;
}

static void check_cut(uint64_t c)
{
    char err[512];
    spit(cut, file, (size_t)c);
    trc_reader *r = trc_reader_open(cut, err, sizeof err);
    if (r) fail_msg("cut at %llu: opened", (unsigned long long)c);
    if (strncmp(err, cut, strlen(cut)) != 0 || strchr(err, '\n') ||
        (!strstr(err, "truncated") && !(c < 8 && strstr(err, "magic"))))
        fail_msg("cut at %llu: message: %s", (unsigned long long)c, err);
    trc_salvage_stats st;
    int rc = trc_salvage(cut, out, &st, err, sizeof err);
    uint64_t header_end = ch[0].end;
    if (c < header_end) {
        if (rc == 0) fail_msg("cut at %llu (inside the header): salvage succeeded", (unsigned long long)c);
        if (strncmp(err, cut, strlen(cut)) != 0 || strchr(err, '\n'))
            fail_msg("cut at %llu: salvage message: %s", (unsigned long long)c, err);
        assert_int_equal(access(out, F_OK), -1); /* no partial output */
        return;
    }
    if (rc != 0) fail_msg("cut at %llu: salvage failed: %s", (unsigned long long)c, err);
    size_t ne, nk, nco;
    expected(c, &nco, &ne, &nk);
    if (st.n_events != ne || st.n_kernels != nk || st.n_code_objects != nco || st.complete || !st.cut[0])
        fail_msg("cut at %llu: salvage kept %u events, %u kernels; expected %zu, %zu",
                 (unsigned long long)c, st.n_events, st.n_kernels, ne, nk);
    r = trc_reader_open(out, err, sizeof err);
    if (!r) fail_msg("cut at %llu: salvaged trace does not open: %s", (unsigned long long)c, err);
    assert_int_equal(trc_reader_n_events(r), ne);
    assert_int_equal(trc_reader_n_kernels(r), nk);
    trc_reader_close(r);
    static uint64_t memo_h[3][64][GEN_NK + 1];
    static int memo_ok[3][64][GEN_NK + 1];
    assert_true(ne < 64 && nco < 3);
    if (!memo_ok[nco][ne][nk]) {
        memo_h[nco][ne][nk] = prefix_hash(path, nco, ne, nk);
        memo_ok[nco][ne][nk] = 1;
    }
    if (prefix_hash(out, SIZE_MAX, SIZE_MAX, SIZE_MAX) != memo_h[nco][ne][nk])
        fail_msg("cut at %llu: salvaged content differs from the original", (unsigned long long)c);
    assert_int_equal(st.out_bytes, (uint64_t)({ struct stat sb; stat(out, &sb); sb.st_size; }));
}

static void test_cuts(void **state)
{
    (void)state;
    setup();
    size_t n = 0;
    uint64_t prev = 0;
    for (uint64_t c = 0; c < file_len; c++) {
        int at_boundary = 0;
        for (size_t i = 0; i < nch && !at_boundary; i++)
            at_boundary = c + 1 >= ch[i].off && c <= ch[i].off + 1;
        if (c < ch[1].end + 2 || at_boundary || c >= file_len - TRC_TRAILER_SIZE - 2 || c - prev >= 97) {
            check_cut(c);
            prev = c;
            n++;
        }
    }
    print_message("# %zu cuts of a %zu-byte trace (%zu chunks, %d kernels): all refused by the reader, "
                  "all salvaged as expected\n", n, file_len, nch, GEN_NK);
    unlink(cut);
    unlink(out);
}

static void test_complete_and_damaged(void **state)
{
    (void)state;
    char err[512];
    trc_salvage_stats st;
    /* complete: copied unchanged */
    assert_int_equal(trc_salvage(path, out, &st, err, sizeof err), 0);
    assert_int_equal(st.complete, 1);
    assert_int_equal(st.n_kernels, GEN_NK);
    size_t n;
    FILE *f = fopen(out, "rb");
    uint8_t *b = malloc(file_len + 1);
    n = fread(b, 1, file_len + 1, f);
    fclose(f);
    assert_int_equal(n, file_len);
    assert_memory_equal(b, file, file_len);
    free(b);
    /* a damaged record frame of kernel 1 (trailer cut off): kernel 0 survives */
    size_t fi = 0, launches = 0;
    for (size_t i = 0; i < nch; i++) {
        if (ch[i].type == TRC_CHUNK_EVENT && ch[i].launch) launches++;
        if (launches == 2 && ch[i].type == TRC_CHUNK_WORKGROUP) {
            fi = i;
            break;
        }
    }
    assert_true(fi > 0);
    uint8_t *d = malloc(file_len);
    memcpy(d, file, file_len);
    d[(ch[fi].off + ch[fi].end) / 2] ^= 0x40;
    spit(cut, d, file_len - 1);
    free(d);
    assert_int_equal(trc_salvage(cut, out, &st, err, sizeof err), 0);
    assert_int_equal(st.n_kernels, 1);
    assert_int_equal(st.n_kernels_dropped, 1);
    assert_non_null(strstr(st.cut, "corrupt"));
    trc_reader *r = trc_reader_open(out, err, sizeof err);
    assert_non_null(r);
    assert_int_equal(trc_reader_n_kernels(r), 1);
    trc_reader_close(r);
    unlink(cut);
    unlink(out);
}

static void test_errors(void **state)
{
    (void)state;
    char err[512];
    /* same file */
    assert_int_equal(trc_salvage(path, path, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "different file"));
    /* missing input */
    assert_int_equal(trc_salvage("/nonexistent/x.gtrace", out, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/x.gtrace"));
    /* not a trace */
    spit(cut, (const uint8_t *)"hello, world, this is not a trace at all", 40);
    assert_int_equal(trc_salvage(cut, out, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "bad magic"));
    /* newer major version */
    uint8_t *d = malloc(file_len);
    memcpy(d, file, file_len);
    trc_put_le32(d + 8, TRC_FORMAT_MAJOR + 1);
    spit(cut, d, file_len / 2);
    assert_int_equal(trc_salvage(cut, out, NULL, err, sizeof err), -1);
    char newer[32];
    snprintf(newer, sizeof newer, "%u.%u", TRC_FORMAT_MAJOR + 1, TRC_FORMAT_MINOR);
    assert_non_null(strstr(err, newer));
    char rerr[512];
    trc_reader *r = trc_reader_open(cut, rerr, sizeof rerr);
    assert_null(r);
    assert_non_null(strstr(rerr, "newer than this reader"));
    free(d);
    /* write error: the output device is full, a cut input and a complete one */
    spit(cut, file, file_len - 100);
    struct stat sb;
    if (stat("/dev/full", &sb) == 0) {
        assert_int_equal(trc_salvage(cut, "/dev/full", NULL, err, sizeof err), -1);
        assert_non_null(strstr(err, "/dev/full"));
        assert_true(strstr(err, "write error") != NULL);
        assert_int_equal(trc_salvage(path, "/dev/full", NULL, err, sizeof err), -1);
        assert_non_null(strstr(err, "/dev/full"));
        assert_int_equal(stat("/dev/full", &sb), 0); /* never removed */
    }
    unlink(cut);
    unlink(out);
    unlink(path);
    free(file);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/trc503-%d.gtrace", tmp ? tmp : "/tmp", (int)getpid());
    snprintf(cut, sizeof cut, "%s/trc503-%d-cut.gtrace", tmp ? tmp : "/tmp", (int)getpid());
    snprintf(out, sizeof out, "%s/trc503-%d-out.gtrace", tmp ? tmp : "/tmp", (int)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cuts),
        cmocka_unit_test(test_complete_and_damaged),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
