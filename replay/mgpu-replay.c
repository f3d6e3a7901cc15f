/*
 * mgpu-replay - replay a .gtrace through the cycle-level timing model.
 *
 *   mgpu-replay --topo r9nano|m-sgpu|u-mgpu|d-mgpu|FILE.ini [--gpus N]
 *               [--set key=value]... [--stats FILE.json] [--threads T] [--quiet] TRACE
 *   mgpu-replay --sweep SWEEP.ini [--jobs J] [--out DIR] [--trace-cache SIZE] [--quiet] TRACE
 *               (under mpirun: points spread over ranks; docs/sweeps.md)
 *   mgpu-replay --list-params [--markdown]
 *
 * Presets are INI files found in $MGPU_REPLAY_CONFIGS, <exe>/../../replay/
 * configs (build tree), <exe>/../share/mgpu-replay/configs, ./replay/configs.
 * Exit status: 0 OK, 1 data mismatches, 2 usage/config/trace/simulation error.
 */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "replay/rp_config.h"
#include "replay/rp_sim.h"
#include "replay/rp_sweep.h"
#include "gcn3sim_version.h"
#include "traceformat/trc.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mgpu-replay [--topo r9nano|m-sgpu|u-mgpu|d-mgpu|FILE.ini] [--gpus N] [--set key=value]...\n"
            "                   [--stats FILE.json] [--threads T] [--quiet] [--list-stats] [--observe-counts]\n"
            "                   [--timeline FILE.json [--timeline-budget N]] [--progress|--no-progress]\n"
            "                   [--sample[=TOLERANCE]] TRACE\n"
            "       mgpu-replay --sweep SWEEP.ini [--jobs J] [--out DIR] [--trace-cache SIZE] [--quiet] [--yes] TRACE\n"
            "       mgpu-replay --list-params [--markdown]\n"
            "       mgpu-replay --version\n"
            "Replay a gcn3-emu trace on a cycle-level timing model of one or more GCN3 GPUs and check the\n"
            "data values its memory model delivers against the recording (docs/user-guide.md).\n"
            "  --topo defaults to the r9nano preset\n"
            "  --progress        a progress line on stderr (default: when stderr is a terminal)\n"
            "  --sample[=TOL]    sampled replay: each kernel in detail until its rate is stable within TOL percent\n"
            "                    (default 2), the rest fast-forwarded with its time predicted (sample.*; one thread\n"
            "                    replays, or --threads when one GPU is cut into partitions or on u-mgpu and d-mgpu;\n"
            "                    the others of --threads decode and apply what it fast-forwards)\n");
}

/* Transparent huge pages for the heap, on request (GCN3SIM_HUGEPAGES=1).
 * The replay touches a few hundred MiB of heap once (functional memory,
 * caches' arrays, decoded records). glibc's tunable glibc.malloc.hugetlb=1
 * (glibc 2.35+, "Memory Allocation Tunables" of the glibc manual) has malloc
 * madvise(MADV_HUGEPAGE) what it takes from the kernel: 50 times fewer page
 * faults, but each one zeroes 2 MiB and, with the kernel's THP defrag mode
 * "madvise" (Debian 12's default), may compact memory first. Until
 * 2026-12-03 this was the default (measured then: vectoradd 4x 2.72-2.81 s
 * without, 2.22-2.45 s with); re-measured on the 2-core VM (kernel 6.18) it
 * no longer pays: vectoradd 4x on u-mgpu 2.12-2.28 s without (46,000 faults,
 * 0.07 s system time), 2.22-2.46 s with (1,000 faults, 0.22-0.32 s); gd 4x on
 * m-sgpu 5.54 s against 6.14 s; aes (1x, after a few idle seconds) 0.11 s
 * against 0.24 s. A tunable is read when the process starts, so the replay
 * sets it and executes itself again (/proc/self/exe, the same arguments and
 * environment) before anything else; not when GLIBC_TUNABLES already names
 * the tunable, when the kernel's THP mode is "never" or unreadable, or under
 * MPI (a rank's launcher-provided state is left alone). If the exec fails the
 * replay goes on as it is. */
static void hugepages_reexec(char **argv)
{
    const char *opt = getenv("GCN3SIM_HUGEPAGES"), *tun = getenv("GLIBC_TUNABLES");
    if (!opt || strcmp(opt, "1") || (tun && strstr(tun, "glibc.malloc.hugetlb")) ||
        getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK"))
        return;
    char mode[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f)
        return;
    size_t n = fread(mode, 1, sizeof mode - 1, f);
    fclose(f);
    mode[n] = 0;
    if (!strstr(mode, "[always]") && !strstr(mode, "[madvise]"))
        return;
    char buf[4096];
    int w = snprintf(buf, sizeof buf, "%s%sglibc.malloc.hugetlb=1", tun && *tun ? tun : "", tun && *tun ? ":" : "");
    if (w < 0 || (size_t)w >= sizeof buf || setenv("GLIBC_TUNABLES", buf, 1))
        return;
    execv("/proc/self/exe", argv);
    /* not executed (no /proc?): go on with 4 KiB pages, the environment as it was */
    if (tun)
        setenv("GLIBC_TUNABLES", tun, 1);
    else
        unsetenv("GLIBC_TUNABLES");
}

/* a and b name the same existing file (device and inode, not names). */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* --observe-counts: an observer on every point that counts how often it
 * fired (from any partition's thread: atomic). */
static void count_point(void *arg, const rp_hook_ctx *c)
{
    (void)c;
    __atomic_add_fetch((uint64_t *)arg, 1, __ATOMIC_RELAXED);
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

/* ---- sweeps (rp_sweep.h, docs/sweeps.md) ---------------------------------- */

typedef struct preset_ctx {
    const char *argv0;
    char dir[PATH_MAX]; /* directory of the sweep file */
} preset_ctx;

/* A preset name, or a path relative to the working directory or else to the
 * sweep file's directory. */
static int sweep_preset(const char *name, char *out, size_t n, void *arg)
{
    preset_ctx *c = arg;
    if (find_preset(name, c->argv0, out, n))
        return -1;
    if ((strchr(name, '/') || strstr(name, ".ini")) && access(out, R_OK) && name[0] != '/') {
        char alt[PATH_MAX + 256];
        snprintf(alt, sizeof alt, "%.4000s/%.200s", c->dir, name);
        if (access(alt, R_OK) == 0)
            snprintf(out, n, "%s", alt);
    }
    return 0;
}

/* A sweep larger than this runs only with --yes: a typo in a range must not
 * start a day of simulation without a word. */
#define SWEEP_CONFIRM_POINTS 10000

static int sweep_main(int *argc, char ***argv, const char *sweep, const char *trace, const char *out_dir,
                      long jobs, const char *cache, int quiet, int yes)
{
    char err[1024];
    unsigned rank = 0, size = 1;
    int launched = rp_mpi_launched();
    if (launched && rp_mpi_init(argc, argv, &rank, &size, err, sizeof err)) {
        fprintf(stderr, "mgpu-replay: %s\n", err);
        return 2;
    }
    char who[32] = "";
    if (size > 1)
        snprintf(who, sizeof who, " rank %u", rank);
    int status = 2;
    rp_sweep *sw = NULL;
    trc_reader *rd = NULL;
    rp_sweep_row *rows = NULL;
    preset_ctx pc = {(*argv)[0], "."};
    snprintf(pc.dir, sizeof pc.dir, "%s", sweep);
    char *sl = strrchr(pc.dir, '/');
    if (sl)
        *sl = 0;
    else
        snprintf(pc.dir, sizeof pc.dir, ".");
    char dir[PATH_MAX];
    if (out_dir)
        snprintf(dir, sizeof dir, "%s", out_dir);
    else {
        /* Default: <sweep file name without .ini>.sweep in the working directory. */
        const char *b = strrchr(sweep, '/') ? strrchr(sweep, '/') + 1 : sweep;
        size_t l = strlen(b);
        if (l > 4 && !strcmp(b + l - 4, ".ini"))
            l -= 4;
        snprintf(dir, sizeof dir, "%.*s.sweep", (int)(l > 200 ? 200 : l), b);
    }
    uint64_t cache_bytes = 0;
    if (cache && rp_parse_size(cache, &cache_bytes)) {
        if (rank == 0)
            fprintf(stderr, "mgpu-replay: --trace-cache '%s': expected a size such as 2GiB\n", cache);
        rp_mpi_any(1);
        goto out;
    }
    /* Deterministic steps: every rank gets the same result; rank 0 speaks. */
    sw = rp_sweep_load(sweep, sweep_preset, &pc, err, sizeof err);
    if (!sw && rank == 0)
        fprintf(stderr, "mgpu-replay: %s\n", err);
    if (rp_mpi_any(!sw))
        goto out;
    if (sw->n_points > SWEEP_CONFIRM_POINTS && !yes) {
        if (rank == 0)
            fprintf(stderr, "mgpu-replay: %s has %zu points (more than %d): add --yes to run them all\n", sweep,
                    sw->n_points, SWEEP_CONFIRM_POINTS);
        rp_mpi_any(1);
        goto out;
    }
    rd = trc_reader_open(trace, err, sizeof err);
    if (!rd)
        fprintf(stderr, "mgpu-replay%s: %s\n", who, err);
    else
        trc_reader_set_compact_strided(rd, 1); /* the replay reads lane addresses with trc_mo_addr */
    rows = calloc(sw->n_points, sizeof *rows);
    if (!rows)
        fprintf(stderr, "mgpu-replay: out of memory (%zu points)\n", sw->n_points);
    if (rp_mpi_any(!rd || !rows))
        goto out;
    /* Decode once: a frame cache that holds the whole trace (a quarter of
     * the memory, at most 16 GiB, unless --trace-cache says otherwise), so
     * that the points never decode a frame twice. */
    if (!cache) {
        long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        cache_bytes = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz / 4 : (uint64_t)TRC_READER_CACHE_DEFAULT;
        if (cache_bytes > (16ull << 30))
            cache_bytes = 16ull << 30;
    }
    trc_reader_set_cache_limit(rd, (size_t)cache_bytes);
    if (jobs <= 0) {
        long nc = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = (nc > 0 ? nc : 1) / (long)rp_mpi_local_size();
        if (jobs < 1)
            jobs = 1;
    }
    rp_sweep_opts o = {trace, dir, (unsigned)jobs, rank, size, quiet ? NULL : stderr};
    rp_sweep_summary sum;
    int rf = rp_sweep_run(sw, rd, &o, rows, &sum, err, sizeof err);
    if (rf)
        fprintf(stderr, "mgpu-replay: %s\n", err);
    if (rp_mpi_any(rf))
        goto out;
    if (!quiet) {
        trc_reader_cache_stats cs;
        trc_reader_get_cache_stats(rd, &cs);
        fprintf(stderr,
                "sweep%s: %zu of %zu points: %zu run, %zu reused, %zu errors, %zu with data mismatches; "
                "%.2f s wall on %ld jobs, %.2f s of replays (%.2fx)\n",
                who, sum.mine, sw->n_points, sum.run, sum.reused,
                sum.errors, sum.mismatches, sum.wall_s, jobs, sum.cpu_s, sum.wall_s > 0 ? sum.cpu_s / sum.wall_s : 0.0);
        fprintf(stderr,
                "sweep%s: trace frames: %llu decoded (%.1f MiB), %llu cache hits, %llu evictions%s\n",
                who, (unsigned long long)cs.misses,
                (double)cs.decoded_bytes / 1048576.0, (unsigned long long)cs.hits, (unsigned long long)cs.evictions,
                cs.evictions ? " (raise --trace-cache to decode each frame once)" : "");
    }
    if (rp_mpi_gather_rows(rows, sw->n_points, rank, size, err, sizeof err)) {
        fprintf(stderr, "mgpu-replay: %s\n", err);
        goto out;
    }
    status = 0;
    if (rank == 0) {
        char csv[PATH_MAX + 16];
        snprintf(csv, sizeof csv, "%.*s/results.csv", PATH_MAX - 16, dir);
        if (rp_sweep_write_csv(sw, rows, csv, err, sizeof err)) {
            fprintf(stderr, "mgpu-replay: %s\n", err);
            status = 2;
        } else if (!quiet)
            fprintf(stderr, "sweep: wrote %s (%zu points)\n", csv, sw->n_points);
    }
    for (size_t i = 0; i < sw->n_points && status != 2; i++)
        if (i % size == rank || rank == 0) {
            if (rows[i].status == RP_SWEEP_ERROR || rows[i].status == RP_SWEEP_PENDING)
                status = 2;
            else if (rows[i].status == RP_SWEEP_MISMATCH)
                status = 1;
        }
out:
    free(rows);
    trc_reader_close(rd);
    rp_sweep_free(sw);
    rp_mpi_finalize();
    return status;
}

/* One replay of TRACE on one machine: the configuration (--topo, --gpus,
 * --set), the run, the report and the stats JSON. Exit status as main's. */
/* The progress line (--progress): on a terminal one line rewritten in place
 * and cleared at the end, otherwise one line per report and a last one when
 * the run ends (for logs). */
static void show_progress(void *arg, const rp_progress *p)
{
    int tty = *(const int *)arg;
    if (p->final && tty) {
        fputs("\r\033[K", stderr);
        return;
    }
    double done = (double)p->instr_done, total = (double)p->instr_total;
    double frac = p->final ? 1.0 : total > 0 ? (done < total ? done / total : 1.0) : 0.0;
    double rate = p->wall_s > 0 ? done / p->wall_s : 0;
    char eta[32] = "-";
    if (p->final)
        snprintf(eta, sizeof eta, "0 s (ended after %.1f s)", p->wall_s);
    else if (rate > 0 && done < total)
        snprintf(eta, sizeof eta, "%.0f s", (total - done) / rate);
    fprintf(stderr, "%smgpu-replay: %5.1f%%  %u/%u kernels  %.2f of %.2f M wavefront-instr  %.2f M/s  "
                    "%.3f us simulated  ETA %s%s",
            tty ? "\r\033[K" : "", 100 * frac, p->kernels_done, p->kernels_total, done * 1e-6, total * 1e-6,
            rate * 1e-6, (double)p->sim_ps * 1e-6, eta, tty ? "" : "\n");
    fflush(stderr);
}

static int progress_mode = -1; /* --progress 1, --no-progress 0, default -1: when stderr is a terminal */

static int replay_one(const char *argv0, const char *topo, const char *stats, const char *trace, const char **sets,
                      int n_sets, long gpus, long threads, int quiet, int list_stats, int observe,
                      const char *timeline, long tl_budget)
{
    char err[512];
    rp_config cfg;
    rp_config_defaults(&cfg);
    /* One source of truth: without --topo the machine is the r9nano preset
     * file, not the built-in defaults (which only seed the presets). */
    if (!topo)
        topo = "r9nano";
    if (stats && same_file(stats, trace)) {
        fprintf(stderr, "mgpu-replay: --stats %s is the trace itself: refusing to overwrite the recording\n", stats);
        return 2;
    }
    if (timeline && same_file(timeline, trace)) {
        fprintf(stderr, "mgpu-replay: --timeline %s is the trace itself: refusing to overwrite the recording\n",
                timeline);
        return 2;
    }
    {
        /* the installed presets' directory, where `base = NAME` of a file of
         * the user's own is looked up */
        char preset_dir[PATH_MAX + 64] = "";
        if (find_preset("r9nano", argv0, preset_dir, sizeof preset_dir) == 0) {
            char *sl = strrchr(preset_dir, '/');
            if (sl)
                *sl = 0;
            else
                snprintf(preset_dir, sizeof preset_dir, ".");
        }
        char path[PATH_MAX + 64];
        if (find_preset(topo, argv0, path, sizeof path)) {
            fprintf(stderr,
                    "mgpu-replay: topology '%s' not found (presets: r9nano m-sgpu u-mgpu d-mgpu in replay/configs/; "
                    "set MGPU_REPLAY_CONFIGS or give an .ini path)\n",
                    topo);
            return 2;
        }
        if (rp_config_load_file_ex(&cfg, path, *preset_dir ? preset_dir : NULL, err, sizeof err)) {
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
    trc_reader_set_compact_strided(rd, 1); /* the replay reads lane addresses with trc_mo_addr */
    rp_sim *s = rp_sim_create(&cfg, rd, quiet ? NULL : stdout, err, sizeof err);
    if (!s) {
        fprintf(stderr, "mgpu-replay: %s\n", err);
        trc_reader_close(rd);
        return 2;
    }
    if (list_stats) {
        rp_sim_list_stats(s, stdout);
        rp_sim_destroy(s);
        trc_reader_close(rd);
        return 0;
    }
    rp_sim_set_threads(s, threads ? (uint32_t)threads : 1);
    if (threads > 1) {
        /* say why the threads asked for will not all be used (stderr: the
         * output stays the same for every --threads) */
        rp_sim_summary pre;
        rp_sim_get_summary(s, &pre);
        if (cfg.sample_enable && pre.threads <= 1)
            fprintf(stderr,
                    "mgpu-replay: note: --threads %ld: a sampled replay runs on one thread (unless one GPU is cut "
                    "into partitions: --set sim.gpu_partitions=5, or u-mgpu's or d-mgpu's GPUs are); %ld more decode the "
                    "workgroups it fast-forwards and apply them beside it, each its share of the L2 banks\n",
                    threads, threads - 1);
        else if (pre.partitions == 1)
            fprintf(stderr,
                    "mgpu-replay: note: --threads %ld: this topology is one partition, so one thread replays it "
                    "(another loads its workgroups' records ahead); --set sim.gpu_partitions=5 --set "
                    "sim.dram_partition=1 cuts each GPU into 6 that threads share (a model variant of its own: "
                    "docs/timing-model.md)\n",
                    threads);
    }
    static int tty;
    tty = isatty(STDERR_FILENO);
    if (progress_mode == 1 || (progress_mode < 0 && tty))
        rp_sim_set_progress(s, show_progress, &tty, 0.5);
    static uint64_t seen[RP_HOOK_COUNT];
    if (observe)
        for (int p = 0; p < RP_HOOK_COUNT; p++)
            if (rp_sim_observe(s, (rp_hook_point)p, count_point, &seen[p])) {
                fprintf(stderr, "mgpu-replay: cannot observe %s\n", rp_hook_name((unsigned)p));
                return 2;
            }
    if (timeline && rp_sim_timeline(s, (uint64_t)tl_budget)) {
        fprintf(stderr, "mgpu-replay: out of memory for the timeline\n");
        rp_sim_destroy(s);
        trc_reader_close(rd);
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int r = rp_sim_run(s);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    rp_sim_summary sum;
    rp_sim_get_summary(s, &sum);
    if (!quiet) {
        printf("topology %s: %u GPU(s) x %u CUs at %.3f GHz\n", sum.topo_name, sum.gpus, sum.cus_per_gpu,
               (double)sum.gpu_freq_hz / 1e9);
        rp_sim_report(s, stdout);
        printf("replay: %.3f s wall, %.2f M wavefront-instr/s (%u thread(s), %u partition(s), %llu windows of %.1f ns)\n",
               wall, wall > 0 ? (double)sum.wavefront_instructions / wall / 1e6 : 0.0, sum.threads, sum.partitions,
               (unsigned long long)sum.windows, (double)sum.lookahead_ps / 1e3);
        if (sum.partitions > 1 && sum.crit_events)
            printf("partitions: %llu events, %llu on the critical path: any --threads at most %.2fx faster (events "
                   "counted alike)\n",
                   (unsigned long long)sum.part_events, (unsigned long long)sum.crit_events,
                   (double)sum.part_events / (double)sum.crit_events);
    }
    if (observe) {
        printf("observed:");
        for (int p = 0; p < RP_HOOK_COUNT; p++)
            printf(" %s %llu%s", rp_hook_name((unsigned)p), (unsigned long long)seen[p], p + 1 < RP_HOOK_COUNT ? "," : "\n");
    }
    int status = 0;
    if (r) {
        fprintf(stderr, "mgpu-replay: %s\n", rp_sim_error(s));
        status = 2;
    }
    if (stats && rp_sim_write_json(s, stats, trace)) {
        fprintf(stderr, "mgpu-replay: %s\n", rp_sim_error(s));
        status = 2;
    }
    if (timeline && rp_sim_write_timeline(s, timeline)) {
        fprintf(stderr, "mgpu-replay: %s\n", rp_sim_error(s));
        status = 2;
    }
    const rp_check *c = &sum.check;
    if (!status && (c->load_mismatches || c->lds_mismatches || c->d2h_mismatches || c->walk_errors ||
                    c->await_give_ups))
        status = 1;
    if (quiet && status == 1)
        fprintf(stderr, "mgpu-replay: data check failed: %llu load, %llu LDS, %llu D2H mismatches, %llu walk errors\n",
                (unsigned long long)c->load_mismatches, (unsigned long long)c->lds_mismatches,
                (unsigned long long)c->d2h_mismatches, (unsigned long long)c->walk_errors);
    rp_sim_destroy(s);
    trc_reader_close(rd);
    return status;
}

int main(int argc, char **argv)
{
    const char *topo = NULL, *stats = NULL, *trace = NULL;
    const char *sweep = NULL, *out_dir = NULL, *cache = NULL;
    long jobs = 0;
    const char *sets[256];
    int n_sets = 0, quiet = 0, list = 0, md = 0, list_stats = 0, observe = 0, yes = 0;
    const char *timeline = NULL;
    long tl_budget = 0;
    long gpus = -1, threads = 0;
    hugepages_reexec(argv);
    /* Workgroup records, trace frames and fast-forward action lists are
     * decoded and freed continually: keep freed memory in the process (no
     * trimming, no mmap per large block) so that the replay does not pay a
     * page fault + page clear per decoded workgroup. 32 MiB is the largest
     * mmap threshold glibc accepts on 64-bit hosts (HEAP_MAX_SIZE / 2,
     * mallopt(3)); until 2026-12-03 this asked for 64 MiB, which mallopt
     * refused, while the trim threshold it did set turned glibc's dynamic
     * threshold off: every block of 128 KiB or more was mmapped and cleared
     * anew (sampled km at 15 iterations: 14% of the run in clear_page;
     * vectoradd at the bench size: 26%). */
    if (!mallopt(M_MMAP_THRESHOLD, 32 << 20) || !mallopt(M_TRIM_THRESHOLD, 512 << 20))
        fprintf(stderr, "mgpu-replay: note: mallopt refused the heap thresholds (slower, the same results)\n");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--topo") && i + 1 < argc)
            topo = argv[++i];
        else if (!strncmp(a, "--topo=", 7))
            topo = a + 7;
        else if (!strcmp(a, "--gpus") && i + 1 < argc) {
            char *end;
            errno = 0;
            gpus = strtol(argv[++i], &end, 10);
            if (!*argv[i] || *end || errno || gpus < 1 || gpus > 64) {
                fprintf(stderr, "mgpu-replay: --gpus '%s': expected a number of GPUs from 1 to 64\n", argv[i]);
                return 2;
            }
        }
        else if (!strcmp(a, "--sample") || !strncmp(a, "--sample=", 9)) {
            static char tol[96];
            if (n_sets > 254) {
                fprintf(stderr, "mgpu-replay: too many --set options (max 256)\n");
                return 2;
            }
            sets[n_sets++] = "sample.enable=1";
            if (a[8] == '=') { /* checked with the other settings: sample.tolerance is 1..50 */
                snprintf(tol, sizeof tol, "sample.tolerance=%.60s", a + 9);
                sets[n_sets++] = tol;
            }
        } else if (!strcmp(a, "--set") && i + 1 < argc) {
            if (n_sets == 256) {
                fprintf(stderr, "mgpu-replay: too many --set options (max 256)\n");
                return 2;
            }
            sets[n_sets++] = argv[++i];
        } else if (!strcmp(a, "--stats") && i + 1 < argc)
            stats = argv[++i];
        else if (!strcmp(a, "--quiet"))
            quiet = 1;
        else if (!strcmp(a, "--progress"))
            progress_mode = 1;
        else if (!strcmp(a, "--no-progress"))
            progress_mode = 0;
        else if (!strcmp(a, "--sweep") && i + 1 < argc)
            sweep = argv[++i];
        else if (!strcmp(a, "--out") && i + 1 < argc)
            out_dir = argv[++i];
        else if (!strcmp(a, "--trace-cache") && i + 1 < argc)
            cache = argv[++i];
        else if (!strcmp(a, "--jobs") && i + 1 < argc) {
            char *end;
            jobs = strtol(argv[++i], &end, 10);
            if (*end || jobs < 1 || jobs > 4096) {
                fprintf(stderr, "mgpu-replay: --jobs '%s': expected a number of threads from 1 to 4096\n", argv[i]);
                return 2;
            }
        }
        else if (!strcmp(a, "--threads") && i + 1 < argc) {
            char *end;
            threads = strtol(argv[++i], &end, 10);
            if (*end || threads < 1 || threads > 1024) {
                fprintf(stderr, "mgpu-replay: --threads '%s': expected a number of threads from 1 to 1024\n",
                        argv[i]);
                return 2;
            }
        }
        else if (!strcmp(a, "--list-params"))
            list = 1;
        else if (!strcmp(a, "--list-stats"))
            list_stats = 1;
        else if (!strcmp(a, "--observe-counts"))
            observe = 1;
        else if (!strcmp(a, "--yes"))
            yes = 1;
        else if (!strcmp(a, "--timeline") && i + 1 < argc)
            timeline = argv[++i];
        else if (!strcmp(a, "--timeline-budget") && i + 1 < argc) {
            char *end;
            errno = 0;
            tl_budget = strtol(argv[++i], &end, 10);
            if (!*argv[i] || *end || errno || tl_budget < 1 || tl_budget > 100000000) {
                fprintf(stderr, "mgpu-replay: --timeline-budget '%s': expected a number of spans from 1 to 10^8\n",
                        argv[i]);
                return 2;
            }
        }
        else if (!strcmp(a, "--markdown"))
            md = 1;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            printf("mgpu-replay %s (commit %s)\n", GCN3SIM_VERSION, GCN3SIM_COMMIT);
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
    if (sweep) {
        if (threads) {
            fprintf(stderr, "mgpu-replay: --threads parallelises one replay; a sweep runs its points in parallel "
                            "with --jobs\n");
            return 2;
        }
        if (topo || stats || n_sets || gpus >= 0) {
            fprintf(stderr, "mgpu-replay: --sweep takes its configurations from the sweep file "
                            "(no --topo, --gpus, --set or --stats; use [sweep] base/gpus and [params])\n");
            return 2;
        }
        return sweep_main(&argc, &argv, sweep, trace, out_dir, jobs, cache, quiet, yes);
    }
    if (out_dir || cache || jobs) {
        fprintf(stderr, "mgpu-replay: --out, --jobs and --trace-cache go with --sweep\n");
        return 2;
    }
    return replay_one(argv[0], topo, stats, trace, sets, n_sets, gpus, threads, quiet, list_stats, observe, timeline,
                      tl_budget);
}
