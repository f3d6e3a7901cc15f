/*
 * gcn3-emu - run an unmodified HIP program on the GCN3 (gfx803) emulator.
 *
 *   gcn3-emu [--gpus N] [--threads T] [--record FILE] [--scratch-data] [--load-values full|hash] [--lds-values full|none] [--parallel-waits] [--timeout S] [--quiet] -- PROG ARGS...
 *
 * The launcher only sets up the environment: it finds our libamdhip64.so.5 in
 * ../lib/gcn3sim (installed) or ../lib (build tree) relative to its own
 * executable (/proc/self/exe), puts that
 * directory first on LD_LIBRARY_PATH (hipcc binaries have no RPATH, FACTS.md),
 * passes the options to the runtime in GCN3EMU_* variables and runs the
 * program, so its output and exit status pass through unchanged (a program
 * killed by signal S exits 128+S). Recording, the launcher waits for the
 * program and says so when it made no HIP call (no trace was written): a
 * program that is not a HIP program, or that does not load our runtime.
 *
 * --timeout S, a last resort for a run that must end: the launcher runs the
 * program as a child and, after S seconds, sends it SIGTERM (the runtime stops
 * the kernel in flight, prints where every wave is and exits after closing the
 * trace), then SIGKILL 10 s later if it is still there; exit status 124 (as
 * timeout(1)). The emulator reports a deadlock by itself (emu/exec
 * gcn_sched.c); the timeout also covers host code that never ends.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gcn3sim_version.h"

static const char usage[] =
    "usage: gcn3-emu [--gpus N] [--threads T] [--record FILE.gtrace] [--scratch-data] [--load-values full|hash] [--lds-values full|none] [--host-image on|off] [--parallel-waits] [--quiet] -- PROG [ARGS...]\n"
    "Run a HIP program built with hipcc --offload-arch=gfx803 on the GCN3 emulator.\n"
    "  --gpus N         number of emulated GPUs (1-16, default 1)\n"
    "  --threads T      emulator worker threads (default: online CPUs)\n"
    "  --record FILE    record a trace for mgpu-replay\n"
    "  --timeline FILE  write the host events and the kernels' emulation spans as Chrome\n"
    "                   trace-event JSON (Perfetto UI, chrome://tracing); wall-clock time\n"
    "  --timeout S      stop the program after S seconds (SIGTERM: where every wave is\n"
    "                   is printed and the trace closed; exit status 124)\n"
    "  --quiet          no per-kernel summary on stderr\n"
    "  --scratch-data   also record the values of private (scratch) loads and stores; by\n"
    "                   default they are left out: no other wave reads a wave's private\n"
    "                   memory, and they are most of an -O0 program's trace\n"
    "  --load-values full|hash\n"
    "                   full (default): record every load's values, the data check compares\n"
    "                   them lane by lane; hash: plain loads (not glc, atomic, scalar or\n"
    "                   private, not an await's poll) record a 64-bit hash of their values\n"
    "                   instead: smaller traces, faster recording; a difference then names\n"
    "                   the instruction, not the lane\n"
    "  --lds-values full|none\n"
    "                   full (default): record the values of LDS loads and stores, the data\n"
    "                   check compares the LDS loads; none: their addresses only (trace 2.3):\n"
    "                   the same replay timing, much smaller traces of LDS-heavy kernels and\n"
    "                   faster recording, but no check of LDS values\n"
    "  --host-image on|off\n"
    "                   on (default): a load (not LDS, private or atomic) whose values are\n"
    "                   what the host's copies and memsets wrote there records a flag\n"
    "                   instead of them (trace 2.6): the trace holds those copies, and the\n"
    "                   reader takes the values from them, so the data check is the same;\n"
    "                   off: every load keeps its values\n"
    "  --parallel-waits run kernels whose workgroups may wait on each other (glc loads,\n"
    "                   returning atomics, s_sleep) on every thread too: faster, but their\n"
    "                   traces then depend on --threads; by default they run on one thread\n"
    "  --progress       a progress line for long kernels (default: when stderr is a terminal);\n"
    "  --no-progress    none\n"
    "  --help           this text\n"
    "  --version        version and commit\n"
    "The HIP runtime is <prefix>/lib/gcn3sim/libamdhip64.so.5 (installed) or <build>/lib (build tree).\n";

static volatile sig_atomic_t alarm_fired;
static void on_alarm(int sig)
{
    (void)sig;
    alarm_fired = 1;
}

static int bad_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "gcn3-emu: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", usage);
    return 2;
}

/* The runtime opens the file: an absolute path survives the program's chdir.
 * NULL unsets the variable. */
static void set_path_env(const char *name, const char *path)
{
    if (!path) {
        unsetenv(name);
        return;
    }
    char abs[PATH_MAX];
    if (path[0] != '/' && getcwd(abs, sizeof abs) && strlen(abs) + strlen(path) + 2 < sizeof abs) {
        strcat(abs, "/");
        strcat(abs, path);
        setenv(name, abs, 1);
    } else {
        setenv(name, path, 1);
    }
}

static int parse_count(const char *opt, const char *v, long lo, long hi)
{
    char *end;
    errno = 0;
    long n = v ? strtol(v, &end, 10) : 0;
    if (!v || errno || *end || n < lo || n > hi) {
        fprintf(stderr, "gcn3-emu: %s needs a number in [%ld, %ld], got \"%s\"\n%s", opt, lo, hi,
                v ? v : "", usage);
        return -1;
    }
    return (int)n;
}

/* Transparent huge pages for the program's heap: glibc.malloc.hugetlb=1
 * (glibc 2.35+, "Memory Allocation Tunables" of the glibc manual) added to
 * the program's GLIBC_TUNABLES, so that malloc madvise(MADV_HUGEPAGE)s what
 * it takes from the kernel. The emulated device memory and the recorder's
 * buffers are touched once each: gd at the bench's 4x size took 53,000 page
 * faults recording and 15,000 with the tunable, 16,000 and 3,800 without
 * recording. Not when GLIBC_TUNABLES already names it, when
 * GCN3SIM_HUGEPAGES=0, or when the kernel's THP mode is "never" or
 * unreadable. */
static void hugepages_env(void)
{
    const char *opt = getenv("GCN3SIM_HUGEPAGES"), *tun = getenv("GLIBC_TUNABLES");
    if ((opt && !strcmp(opt, "0")) || (tun && strstr(tun, "glibc.malloc.hugetlb")))
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
    if (w > 0 && (size_t)w < sizeof buf)
        setenv("GLIBC_TUNABLES", buf, 1);
}

int main(int argc, char **argv)
{
    const char *gpus = NULL, *threads = NULL, *record = NULL, *timeline = NULL, *load_values = NULL, *lds_values = NULL, *host_image = NULL;
    int quiet = 0, i = 1, timeout_s = 0, progress = -1, scratch_data = 0, parallel_waits = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            i++;
            break;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            printf("gcn3-emu %s (commit %s)\n", GCN3SIM_VERSION, GCN3SIM_COMMIT);
            return 0;
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            quiet = 1;
        } else if (!strcmp(a, "--scratch-data")) {
            scratch_data = 1;
        } else if (!strcmp(a, "--parallel-waits")) {
            parallel_waits = 1;
        } else if (!strcmp(a, "--progress")) {
            progress = 1;
        } else if (!strcmp(a, "--no-progress")) {
            progress = 0;
        } else if (!strcmp(a, "--gpus") || !strcmp(a, "--threads") || !strcmp(a, "--record") ||
                   !strcmp(a, "--timeout") || !strcmp(a, "--timeline") || !strcmp(a, "--load-values") ||
                   !strcmp(a, "--lds-values") || !strcmp(a, "--host-image")) {
            if (i + 1 >= argc)
                return bad_usage("%s needs a value", a);
            const char *v = argv[++i];
            if (!strcmp(a, "--gpus")) {
                if (parse_count(a, v, 1, 16) < 0)
                    return 2;
                gpus = v;
            } else if (!strcmp(a, "--threads")) {
                if (parse_count(a, v, 1, 1024) < 0)
                    return 2;
                threads = v;
            } else if (!strcmp(a, "--timeout")) {
                if ((timeout_s = parse_count(a, v, 1, 100000000)) < 0)
                    return 2;
            } else if (!strcmp(a, "--timeline")) {
                timeline = v;
            } else if (!strcmp(a, "--load-values")) {
                if (strcmp(v, "full") && strcmp(v, "hash"))
                    return bad_usage("--load-values %s: expected full or hash", v);
                load_values = v;
            } else if (!strcmp(a, "--lds-values")) {
                if (strcmp(v, "full") && strcmp(v, "none"))
                    return bad_usage("--lds-values %s: expected full or none", v);
                lds_values = v;
            } else if (!strcmp(a, "--host-image")) {
                if (strcmp(v, "on") && strcmp(v, "off"))
                    return bad_usage("--host-image %s: expected on or off", v);
                host_image = v;
            } else {
                record = v;
            }
        } else if (a[0] == '-') {
            return bad_usage("unknown option %s", a);
        } else {
            break; /* the program; "--" is optional */
        }
    }
    if (i >= argc)
        return bad_usage("%s", "no program given after --");

    /* <prefix>/bin/gcn3-emu -> <prefix>/lib/gcn3sim (make install), else
     * <build>/bin/gcn3-emu -> <build>/lib */
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        fprintf(stderr, "gcn3-emu: cannot read /proc/self/exe: %s\n", strerror(errno));
        return 2;
    }
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = 0;
    char libdir[PATH_MAX + 16];
    char lib[PATH_MAX + 48];
    struct stat sb;
    snprintf(libdir, sizeof libdir, "%s/../lib/gcn3sim", exe);
    snprintf(lib, sizeof lib, "%s/libamdhip64.so.5", libdir);
    if (stat(lib, &sb) != 0) {
        snprintf(libdir, sizeof libdir, "%s/../lib", exe);
        snprintf(lib, sizeof lib, "%s/libamdhip64.so.5", libdir);
        if (stat(lib, &sb) != 0) {
            fprintf(stderr, "gcn3-emu: %s/../lib/gcn3sim/libamdhip64.so.5 not found, nor %s (%s); build it with make\n",
                    exe, lib, strerror(errno));
            return 2;
        }
    }
    char real[PATH_MAX];
    const char *dir = realpath(libdir, real) ? real : libdir;
    const char *old = getenv("LD_LIBRARY_PATH");
    size_t len = strlen(dir) + (old ? strlen(old) : 0) + 2;
    char *ldp = malloc(len);
    if (!ldp)
        return 2;
    snprintf(ldp, len, "%s%s%s", dir, old && *old ? ":" : "", old && *old ? old : "");
    setenv("LD_LIBRARY_PATH", ldp, 1);
    free(ldp);

    hugepages_env();
    if (gpus)
        setenv("GCN3EMU_GPUS", gpus, 1);
    if (threads)
        setenv("GCN3EMU_THREADS", threads, 1);
    set_path_env("GCN3EMU_RECORD", record);
    set_path_env("GCN3EMU_TIMELINE", timeline);
    if (quiet)
        setenv("GCN3EMU_QUIET", "1", 1);
    if (scratch_data)
        setenv("GCN3EMU_SCRATCH_DATA", "1", 1);
    if (parallel_waits)
        setenv("GCN3EMU_PARALLEL_WAITS", "1", 1);
    if (load_values)
        setenv("GCN3EMU_LOAD_VALUES", load_values, 1);
    if (lds_values)
        setenv("GCN3EMU_LDS_VALUES", lds_values, 1);
    if (host_image)
        setenv("GCN3EMU_HOST_IMAGE", host_image, 1);
    setenv("GCN3EMU_PROGRESS", progress == 1 || (progress < 0 && isatty(STDERR_FILENO)) ? "1" : "0", 1);

    /* Command line for the trace header: the program and its arguments. */
    size_t cl = 1;
    for (int j = i; j < argc; j++)
        cl += strlen(argv[j]) + 1;
    char *cmd = malloc(cl);
    if (!cmd)
        return 2;
    cmd[0] = 0;
    for (int j = i; j < argc; j++) {
        if (j > i)
            strcat(cmd, " ");
        strcat(cmd, argv[j]);
    }
    setenv("GCN3EMU_CMDLINE", cmd, 1);
    free(cmd);

    if (!record && !timeout_s) {
        execvp(argv[i], argv + i);
        fprintf(stderr, "gcn3-emu: cannot run %s: %s\n", argv[i], strerror(errno));
        return 127;
    }
    /* Recording or a timeout: run it as a child, then check that a trace was
     * written. */
    const char *rec_path = getenv("GCN3EMU_RECORD");
    struct stat before;
    int existed = rec_path && stat(rec_path, &before) == 0;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "gcn3-emu: cannot start %s: %s\n", argv[i], strerror(errno));
        return 2;
    }
    if (pid == 0) {
        execvp(argv[i], argv + i);
        fprintf(stderr, "gcn3-emu: cannot run %s: %s\n", argv[i], strerror(errno));
        _exit(127);
    }
    /* the terminal's ^C and ^\ go to the program; the launcher waits for it */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    int ws, timed_out = 0;
    if (timeout_s) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_alarm; /* no SA_RESTART: waitpid returns EINTR */
        sigaction(SIGALRM, &sa, NULL);
        alarm((unsigned)timeout_s);
    }
    while (waitpid(pid, &ws, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "gcn3-emu: waiting for %s: %s\n", argv[i], strerror(errno));
            return 2;
        }
        if (alarm_fired && !timed_out) {
            timed_out = 1;
            fprintf(stderr, "gcn3-emu: %s still runs after --timeout %d s: stopping it (SIGTERM)\n", argv[i],
                    timeout_s);
            kill(pid, SIGTERM);
            alarm_fired = 0;
            alarm(10);
        } else if (alarm_fired) {
            fprintf(stderr, "gcn3-emu: %s did not stop 10 s after SIGTERM: killing it (SIGKILL)\n", argv[i]);
            kill(pid, SIGKILL);
            alarm_fired = 0;
        }
    }
    alarm(0);
    int rc = WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : 2;
    if (rc == 127 && WIFEXITED(ws))
        return rc; /* could not run it: said above */
    if (timed_out)
        rc = 124;
    if (!rec_path)
        return rc;
    struct stat after;
    int written = stat(rec_path, &after) == 0 &&
                  !(existed && after.st_ino == before.st_ino && after.st_dev == before.st_dev &&
                    after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
    if (!written)
        fprintf(stderr,
                "gcn3-emu: %s made no HIP call: nothing was recorded to %s (is it a HIP program built with "
                "hipcc --offload-arch=gfx803?)\n",
                argv[i], rec_path);
    return rc;
}
