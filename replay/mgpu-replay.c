/*
 * mgpu-replay - replay a .gtrace through the cycle-level timing model.
 *
 *   mgpu-replay --topo r9nano|m-sgpu|u-mgpu|d-mgpu|FILE.ini [--gpus N]
 *               [--set key=value]... [--stats FILE.json] [--quiet] TRACE
 *   mgpu-replay --list-params [--markdown]
 *
 * Presets are INI files found in $MGPU_REPLAY_CONFIGS, <exe>/../../replay/
 * configs (build tree), <exe>/../share/mgpu-replay/configs, ./replay/configs.
 * Exit status: 0 OK, 1 data mismatches, 2 usage/config/trace/simulation error.
 */
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "replay/rp_config.h"
#include "replay/rp_sim.h"
#include "traceformat/trc.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mgpu-replay --topo r9nano|m-sgpu|u-mgpu|d-mgpu|FILE.ini [--gpus N] [--set key=value]...\n"
            "                   [--stats FILE.json] [--quiet] TRACE\n"
            "       mgpu-replay --list-params [--markdown]\n");
}

static int find_preset(const char *name, const char *argv0, char *out, size_t n)
{
    if (strchr(name, '/') || strstr(name, ".ini")) {
        snprintf(out, n, "%s", name);
        return 0;
    }
    char exe[PATH_MAX] = "";
    ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (l > 0) {
        exe[l] = 0;
        char *sl = strrchr(exe, '/');
        if (sl)
            *sl = 0;
    } else if (argv0) {
        snprintf(exe, sizeof exe, "%s", argv0);
        char *sl = strrchr(exe, '/');
        if (sl)
            *sl = 0;
        else
            snprintf(exe, sizeof exe, ".");
    }
    const char *env = getenv("MGPU_REPLAY_CONFIGS");
    char cand[4][4200];
    int nc = 0;
    if (env)
        snprintf(cand[nc++], sizeof cand[0], "%.3900s/%.100s.ini", env, name);
    snprintf(cand[nc++], sizeof cand[0], "%.3900s/../../replay/configs/%.100s.ini", exe, name);
    snprintf(cand[nc++], sizeof cand[0], "%.3900s/../share/mgpu-replay/configs/%.100s.ini", exe, name);
    snprintf(cand[nc++], sizeof cand[0], "replay/configs/%.100s.ini", name);
    for (int i = 0; i < nc; i++)
        if (access(cand[i], R_OK) == 0) {
            snprintf(out, n, "%.4000s", cand[i]);
            return 0;
        }
    return -1;
}

int main(int argc, char **argv)
{
    const char *topo = NULL, *stats = NULL, *trace = NULL;
    const char *sets[256];
    int n_sets = 0, quiet = 0, list = 0, md = 0;
    long gpus = -1;
    /* Workgroup records are decoded and freed continually: keep freed memory
     * in the process (no trimming, no mmap per large block) so that the
     * replay does not pay a page fault + page clear per decoded workgroup. */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--topo") && i + 1 < argc)
            topo = argv[++i];
        else if (!strncmp(a, "--topo=", 7))
            topo = a + 7;
        else if (!strcmp(a, "--gpus") && i + 1 < argc)
            gpus = strtol(argv[++i], NULL, 10);
        else if (!strcmp(a, "--set") && i + 1 < argc) {
            if (n_sets == 256) {
                fprintf(stderr, "mgpu-replay: too many --set options (max 256)\n");
                return 2;
            }
            sets[n_sets++] = argv[++i];
        } else if (!strcmp(a, "--stats") && i + 1 < argc)
            stats = argv[++i];
        else if (!strcmp(a, "--quiet"))
            quiet = 1;
        else if (!strcmp(a, "--list-params"))
            list = 1;
        else if (!strcmp(a, "--markdown"))
            md = 1;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "mgpu-replay: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        } else if (!trace)
            trace = a;
        else {
            fprintf(stderr, "mgpu-replay: more than one trace given ('%s', '%s')\n", trace, a);
            return 2;
        }
    }
    if (list) {
        rp_config_list(stdout, md);
        return 0;
    }
    if (!trace) {
        usage(stderr);
        return 2;
    }
    char err[512];
    rp_config cfg;
    rp_config_defaults(&cfg);
    if (topo) {
        char path[PATH_MAX + 64];
        if (find_preset(topo, argv[0], path, sizeof path)) {
            fprintf(stderr,
                    "mgpu-replay: topology '%s' not found (presets: r9nano m-sgpu u-mgpu d-mgpu in replay/configs/; "
                    "set MGPU_REPLAY_CONFIGS or give an .ini path)\n",
                    topo);
            return 2;
        }
        if (rp_config_load_file(&cfg, path, err, sizeof err)) {
            fprintf(stderr, "mgpu-replay: %s\n", err);
            return 2;
        }
    }
    if (gpus >= 0) {
        char kv[64];
        snprintf(kv, sizeof kv, "topo.gpus=%ld", gpus);
        if (rp_config_set(&cfg, kv, err, sizeof err)) {
            fprintf(stderr, "mgpu-replay: --gpus: %s\n", err);
            return 2;
        }
    }
    for (int i = 0; i < n_sets; i++)
        if (rp_config_set(&cfg, sets[i], err, sizeof err)) {
            fprintf(stderr, "mgpu-replay: %s\n", err);
            return 2;
        }
    if (rp_config_validate(&cfg, err, sizeof err)) {
        fprintf(stderr, "mgpu-replay: %s\n", err);
        return 2;
    }
    trc_reader *rd = trc_reader_open(trace, err, sizeof err);
    if (!rd) {
        fprintf(stderr, "mgpu-replay: %s\n", err);
        return 2;
    }
    rp_sim *s = calloc(1, sizeof *s);
    if (!s || rp_sim_init(s, &cfg, rd, quiet ? NULL : stdout)) {
        fprintf(stderr, "mgpu-replay: %s\n", s ? s->err : "out of memory");
        trc_reader_close(rd);
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int r = rp_sim_run(s);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    uint64_t instr = 0;
    for (size_t i = 0; i < s->n_kernels; i++)
        instr += s->kernels[i]->n_instr;
    if (!quiet) {
        printf("topology %s: %u GPU(s) x %u CUs at %.3f GHz\n", cfg.topo_name, s->n_gpus,
               cfg.shader_arrays * cfg.cus_per_sa, (double)cfg.gpu_freq / 1e9);
        rp_sim_report(s, stdout);
        printf("replay: %.3f s wall, %.2f M wavefront-instr/s\n", wall, wall > 0 ? (double)instr / wall / 1e6 : 0.0);
    }
    int status = 0;
    if (r) {
        fprintf(stderr, "mgpu-replay: %s\n", s->err);
        status = 2;
    }
    if (stats && rp_sim_write_json(s, stats, trace)) {
        fprintf(stderr, "mgpu-replay: %s\n", s->err);
        status = 2;
    }
    const rp_check *c = &s->check;
    if (!status && (c->load_mismatches || c->lds_mismatches || c->d2h_mismatches || c->walk_errors))
        status = 1;
    if (quiet && status == 1)
        fprintf(stderr, "mgpu-replay: data check failed: %llu load, %llu LDS, %llu D2H mismatches, %llu walk errors\n",
                (unsigned long long)c->load_mismatches, (unsigned long long)c->lds_mismatches,
                (unsigned long long)c->d2h_mismatches, (unsigned long long)c->walk_errors);
    rp_sim_fini(s);
    free(s);
    trc_reader_close(rd);
    return status;
}
