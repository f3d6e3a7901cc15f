/*
 * trace_reader_fuzz.c - libFuzzer target for the .gtrace reader
 * (traceformat/trc_reader.c) and, when the library has it, trc_salvage().
 *
 * Each input is written to an in-memory file (memfd) and opened by path
 * through /proc/self/fd, exactly as a user's file would be. Then everything
 * the reader hands out is decoded and touched: header strings, every code
 * object's bytes, every event with its copy data and kernarg bytes, and every workgroup of every kernel with and
 * without data values, reading every byte of every array at the length the
 * reader claims (so ASan sees any lie). Bad input must only produce errors:
 * a crash, a sanitizer report, a leak, or one of the property checks below
 * failing (abort) is a finding.
 *
 * Properties checked:
 *  - every failing call leaves a NUL-terminated, non-empty one-line message;
 *  - salvage (when implemented) either fails with a message or writes a
 *    trace: of a cut or damaged input (st.complete = 0) one that the reader
 *    opens and whose every workgroup loads; of a complete input (copied as
 *    is) one that reads back exactly as well as the input did.
 *
 * Structure-aware mutation: every chunk payload carries a zstd content
 * checksum, so byte-level mutations almost never get past the frame check.
 * LLVMFuzzerCustomMutator below therefore also mutates *inside* a chunk:
 * it decompresses a random chunk, lets libFuzzer mutate the protobuf
 * content, recompresses it (with checksum), and rewrites the chunk offsets
 * held by later index and kernel-end chunks (and the trailer) so that the
 * file stays consistent apart from the mutation. Other rounds mutate the raw
 * bytes or cut the file at a random byte (what salvage must handle).
 *
 * Build: `make fuzz` (mk/fuzz.mk), run: tests/e2e/fuzz.sh or
 *   build/fuzz/trace_reader_fuzz -dict=fuzz/trace_reader.dict CORPUS_DIR
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <zstd.h>

#include "traceformat/gtrace.pb-c.h"
#include "traceformat/trc.h"
#include "fuzz/fuzz_check.h"
#include "traceformat/trc_format.h"

#pragma weak trc_salvage

/* Work caps per input, so that a valid index naming millions of workgroups
 * does not turn one input into a timeout (each load is still exercised). */
#define MAX_WG_LOADS 512u

static volatile uint64_t sink; /* keeps the touching loops alive */

static void touch(const void *p, uint64_t n)
{
    const uint8_t *b = p;
    uint64_t s = 0;
    for (uint64_t i = 0; i < n; i++) s += b[i];
    sink += s;
}

static void touch_wave(const trc_wave *w)
{
    touch(w->branch_taken, ((uint64_t)w->n_branch + 7) / 8);
    touch(w->indirect_target, (uint64_t)w->n_indirect * sizeof *w->indirect_target);
    touch(w->exec_at, (uint64_t)w->n_exec * sizeof *w->exec_at);
    touch(w->exec_val, (uint64_t)w->n_exec * sizeof *w->exec_val);
    touch(w->await_at, (uint64_t)w->n_await * sizeof *w->await_at);
    touch(w->await_len, (uint64_t)w->n_await * sizeof *w->await_len);
    touch(w->await_pc, (uint64_t)w->n_await * sizeof *w->await_pc);
    for (uint32_t a = 0; a < w->n_await; a++)
        if (w->await_len[a] == 0 || w->await_at[a] + w->await_len[a] > w->n_instr ||
            (a && w->await_at[a] < w->await_at[a - 1] + w->await_len[a - 1])) {
            fprintf(stderr, "fuzz property failed: the reader passed an await outside its wave or overlapping\n");
            abort();
        }
    for (uint32_t m = 0; m < w->n_mem; m++) {
        const trc_mem_op *o = &w->mem[m];
        uint32_t n = o->flags & TRC_MO_SMEM ? 1 : (uint32_t)__builtin_popcountll(o->exec);
        touch(o->addr, (uint64_t)n * sizeof *o->addr);
        if (o->load_data) touch(o->load_data, trc_mo_load_len(o->flags, n, o->bytes_per_lane));
        if (o->store_data) touch(o->store_data, trc_mo_store_len(o->flags, n, o->bytes_per_lane));
    }
}

/* Open path and exercise everything. Returns 0 if it opened and every
 * workgroup loaded, 1 if a workgroup was rejected, 2 if the open failed. */
static int exercise(const char *path)
{
    char err[512];
    trc_reader *r = trc_reader_open(path, err, sizeof err);
    if (!r) {
        check_msg(err, sizeof err, "trc_reader_open");
        return 2;
    }
    const trc_header_info *h = trc_reader_header(r);
    touch(h, sizeof *h);
    if (!memchr(h->producer, 0, sizeof h->producer) || !memchr(h->command_line, 0, sizeof h->command_line) ||
        !memchr(h->isa_target, 0, sizeof h->isa_target) || !memchr(h->producer_version, 0, sizeof h->producer_version)) {
        fprintf(stderr, "fuzz property failed: header string not NUL-terminated\n");
        abort();
    }
    for (size_t i = 0; i < trc_reader_n_code_objects(r); i++) {
        size_t len = 0;
        const uint8_t *elf = trc_reader_code_object(r, i, &len);
        if (!elf) continue;
        touch(elf, len);
    }
    for (size_t i = 0; i < trc_reader_n_events(r); i++) {
        const trc_event *e = trc_reader_event(r, i);
        if (!e) continue;
        if (e->kind == TRC_EV_COPY && e->data) touch(e->data, e->size);
        if (e->kind == TRC_EV_LAUNCH) {
            if (e->launch.kernarg) touch(e->launch.kernarg, e->launch.kernarg_size);
            if (!memchr(e->launch.kernel_name, 0, sizeof e->launch.kernel_name)) {
                fprintf(stderr, "fuzz property failed: kernel name not NUL-terminated\n");
                abort();
            }
        }
    }
    int bad = 0;
    uint32_t loads = 0;
    for (uint32_t k = 0; k < trc_reader_n_kernels(r); k++) {
        trc_kernel_stats st;
        if (trc_reader_kernel_stats(r, k, &st) != 0) {
            bad = 1;
            continue;
        }
        for (uint32_t i = 0; i < st.n_wg && loads < MAX_WG_LOADS; i++, loads++) {
            /* with data, stores only (the 2.4 store frame where there is one),
             * the store frame's ops alone (2.5), records only */
            static const int modes[4] = {1, TRC_WG_STORES_ONLY, TRC_WG_STORES_ONLY | TRC_WG_STORE_OPS, 0};
            for (int mi = 0; mi < 4; mi++) {
                int with_data = modes[mi];
                trc_wg *g = trc_reader_load_wg_ex(r, k, i, with_data, err, sizeof err);
                if (!g) {
                    check_msg(err, sizeof err, "trc_reader_load_wg");
                    bad = 1;
                    break;
                }
                for (uint32_t v = 0; v < g->n_waves; v++) touch_wave(&g->waves[v]);
                trc_wg_free(g);
            }
        }
    }
    /* Out-of-range requests must fail cleanly too. */
    trc_wg *g = trc_reader_load_wg(r, (uint32_t)trc_reader_n_kernels(r), 0, err, sizeof err);
    if (g) {
        fprintf(stderr, "fuzz property failed: loaded a workgroup of a kernel that does not exist\n");
        abort();
    }
    trc_reader_close(r);
    return bad;
}

static int in_fd = -1, out_fd = -1;
static char in_path[64], out_path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (in_fd < 0) {
        in_fd = memfd_create("gtrace-fuzz-in", 0);
        out_fd = memfd_create("gtrace-fuzz-out", 0);
        if (in_fd < 0 || out_fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(in_path, sizeof in_path, "/proc/self/fd/%d", in_fd);
        snprintf(out_path, sizeof out_path, "/proc/self/fd/%d", out_fd);
    }
    if (ftruncate(in_fd, 0) != 0) abort();
    for (size_t off = 0; off < size;) {
        ssize_t n = pwrite(in_fd, data + off, size - off, (off_t)off);
        if (n <= 0) abort();
        off += (size_t)n;
    }
    int in_rc = exercise(in_path);
    /* TRC_FUZZ_SALVAGE=off leaves salvage out; =lax runs it (sanitizers
     * still watch it) without checking that its output reads back, to fuzz
     * past a known salvage finding. Default: strict. */
    static int salvage_mode = -1; /* 0 off, 1 lax, 2 strict */
    if (salvage_mode < 0) {
        const char *m = getenv("TRC_FUZZ_SALVAGE");
        salvage_mode = !m ? 2 : !strcmp(m, "off") ? 0 : !strcmp(m, "lax") ? 1 : 2;
    }
    if (trc_salvage && salvage_mode) {
        char err[512];
        trc_salvage_stats st;
        if (ftruncate(out_fd, 0) != 0) abort();
        if (trc_salvage(in_path, out_path, &st, err, sizeof err) != 0) {
            check_msg(err, sizeof err, "trc_salvage");
        } else {
            int out_rc = exercise(out_path);
            if (salvage_mode == 2 && (st.complete ? out_rc != in_rc : out_rc != 0)) {
                fprintf(stderr, "fuzz property failed: trc_salvage succeeded (complete=%d) but its output %s "
                                "(input: %d)\n",
                        st.complete, out_rc == 2 ? "does not open" : "has a workgroup that does not load", in_rc);
                abort();
            }
        }
    }
    return 0;
}

/* The structure-aware mutator (shared with replay_fuzz.c). */
#include "fuzz/trace_mutator.h"
