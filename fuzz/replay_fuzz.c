/*
 * replay_fuzz.c - libFuzzer target driving the whole replay on a small
 * machine: trace reader -> wave walker (with awaits) -> timing model -> data
 * check, from a mutated .gtrace (issue 20: a shared trace is untrusted input).
 *
 * Each input is written to an in-memory file (memfd) and opened by path, as
 * mgpu-replay opens a user's file; a trace the reader accepts is replayed on
 * r9nano shrunk to 2 shader arrays of 1 CU (and, every other input, on a
 * 2-GPU u-mgpu of the same size), with the watchdog at 200 us of simulated
 * time and awaits stopped after 64 polls, so that no input runs long. Bad input must only produce errors: a
 * crash, a sanitizer report, a leak, or a property below failing (abort) is a
 * finding.
 *
 * Properties checked: a failed create or run leaves a NUL-terminated,
 * non-empty one-line message; a run that returns 0 reports D2H mismatches
 * that do not exceed the blocks checked.
 *
 * The mutator is fuzz/trace_mutator.h (shared with trace_reader_fuzz.c).
 * Build: `make fuzz` (mk/fuzz.mk); run: tests/e2e/fuzz.sh or
 *   build/fuzz/replay_fuzz -dict=fuzz/trace_reader.dict CORPUS_DIR
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "replay/rp_config.h"
#include "replay/rp_sim.h"
#include "traceformat/trc.h"
#include "fuzz/fuzz_check.h"

static const char *const small[] = {"gpu.shader_arrays=2", "gpu.cus_per_sa=1", "sim.watchdog=200us",
                                    "l2.banks=2", "dram.channels=2", "sim.await_max_polls=64"};

static void replay(const char *path, int unified)
{
    char err[512];
    rp_config cfg;
    rp_config_defaults(&cfg);
    if (unified) {
        if (rp_config_set(&cfg, "topo.kind=unified", err, sizeof err) ||
            rp_config_set(&cfg, "topo.gpus=2", err, sizeof err))
            return;
    }
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++)
        if (rp_config_set(&cfg, small[i], err, sizeof err))
            return; /* a key this build does not have: nothing to fuzz with */
    if (rp_config_validate(&cfg, err, sizeof err))
        return;
    trc_reader *rd = trc_reader_open(path, err, sizeof err);
    if (!rd)
        return;
    rp_sim *s = rp_sim_create(&cfg, rd, NULL, err, sizeof err);
    if (!s) {
        check_msg(err, sizeof err, "rp_sim_create");
        trc_reader_close(rd);
        return;
    }
    rp_sim_set_threads(s, 1);
    if (rp_sim_run(s) != 0) {
        const char *e = rp_sim_error(s);
        check_msg(e, strlen(e) + 1, "rp_sim_run");
    } else {
        rp_sim_summary sum;
        rp_sim_get_summary(s, &sum);
        const rp_check *c = &sum.check;
        /* (load and LDS mismatches are counted per line part of a lane, checks
         * per lane: a lane that crosses a line may count twice) */
        if (c->d2h_mismatches > c->d2h_checked || c->lds_mismatches > 2 * c->lds_checked + c->lds_unchecked) {
            fprintf(stderr, "fuzz property failed: more mismatches than checks (loads %llu/%llu, lds %llu/%llu, "
                            "d2h %llu/%llu, polls %llu/%llu)\n",
                    (unsigned long long)c->load_mismatches, (unsigned long long)c->loads_checked,
                    (unsigned long long)c->lds_mismatches, (unsigned long long)c->lds_checked,
                    (unsigned long long)c->d2h_mismatches, (unsigned long long)c->d2h_checked,
                    (unsigned long long)c->poll_changes, (unsigned long long)c->polls_checked);
            abort();
        }
    }
    rp_sim_destroy(s);
    trc_reader_close(rd);
}

static int in_fd = -1;
static char in_path[64];
static unsigned n_inputs;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (in_fd < 0) {
        in_fd = memfd_create("gtrace-replay-fuzz", 0);
        if (in_fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(in_path, sizeof in_path, "/proc/self/fd/%d", in_fd);
    }
    if (ftruncate(in_fd, 0) != 0) abort();
    for (size_t off = 0; off < size;) {
        ssize_t n = pwrite(in_fd, data + off, size - off, (off_t)off);
        if (n <= 0) abort();
        off += (size_t)n;
    }
    replay(in_path, (n_inputs++ & 1) != 0);
    return 0;
}

#include "fuzz/trace_mutator.h"
