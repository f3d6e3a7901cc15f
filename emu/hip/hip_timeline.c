/*
 * hip_timeline.c - gcn3-emu --timeline FILE.json (issue 18 scope 1): the host
 * side and the kernel spans of an emulated run as Chrome trace-event JSON
 * (the format Perfetto UI and chrome://tracing open).
 *
 *   process 0 "host": one track per HIP stream (tid = stream id, 0 = the
 *     null stream) with an instant per host event the runtime sees (the
 *     events a trace records: allocations, frees, copies with direction and
 *     bytes, memsets, synchronisations, runtime initialisation copies)
 *   process 1 + d "GPU d (emulated)": one track "kernels" with a span per
 *     kernel, from the launch to the end of its emulation (wall clock), with
 *     grid, workgroup size, wavefronts, wavefront instructions and the status
 *
 * Timestamps are microseconds of wall-clock time (CLOCK_MONOTONIC) since the
 * runtime started: this is the emulator's time, not the modelled GPU's
 * (mgpu-replay --timeline gives that). Events are kept in memory and written
 * when the program exits (also after a failed kernel or a signal that the
 * runtime handles); at most GCN3EMU_TIMELINE_BUDGET events (default 10^6),
 * the rest counted as dropped in otherData. A write error is reported on
 * stderr with the file named; the program's exit status stands.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>

#include <jansson.h>

#include "emu/hip/hip_internal.h"
#include "gcn3sim_version.h"

static struct {
    pthread_mutex_t mu;
    char *path;
    char *buf; /* ",\n"-separated JSON objects */
    size_t len, cap;
    uint64_t n, budget, dropped;
    unsigned gpus_seen; /* bit d: GPU d had a kernel */
    uint64_t streams_seen[4]; /* streams 0..255 with a host event */
    struct timespec t0;
} tl = {.mu = PTHREAD_MUTEX_INITIALIZER};

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - tl.t0.tv_sec) * 1e6 + (double)(t.tv_nsec - tl.t0.tv_nsec) / 1e3;
}

double hip_tl_now(void) { return tl.path ? now_us() : 0; }

int hip_tl_on(void) { return tl.path != NULL; }

void hip_tl_open(const char *path)
{
    if (!path || !*path)
        return;
    tl.path = strdup(path);
    tl.budget = 1000000;
    const char *b = getenv("GCN3EMU_TIMELINE_BUDGET");
    if (b && *b) {
        char *end;
        unsigned long long v = strtoull(b, &end, 10);
        if (!*end && v > 0)
            tl.budget = v;
    }
    clock_gettime(CLOCK_MONOTONIC, &tl.t0);
}

/* Appends one event object (printf format) under tl.mu. */
static void add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void add(const char *fmt, ...)
{
    if (tl.n >= tl.budget) {
        tl.dropped++;
        return;
    }
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = tl.cap - tl.len;
        int k = vsnprintf(tl.buf ? tl.buf + tl.len : NULL, tl.buf ? room : 0, fmt, ap);
        va_end(ap);
        if (k < 0)
            return;
        if (tl.buf && (size_t)k + 3 < room) {
            tl.len += (size_t)k;
            memcpy(tl.buf + tl.len, ",\n", 3);
            tl.len += 2;
            tl.n++;
            return;
        }
        size_t nc = tl.cap ? tl.cap * 2 : 1 << 16;
        while (nc < tl.len + (size_t)k + 8)
            nc *= 2;
        char *nb = realloc(tl.buf, nc);
        if (!nb) { /* out of memory: drop, counted */
            tl.dropped++;
            return;
        }
        tl.buf = nb;
        tl.cap = nc;
    }
}

/* s as a JSON string literal, quotes included, encoded by jansson (free()
 * it); "\"?\"" for bytes that are not UTF-8 or out of memory. */
static char *jstr(const char *s)
{
    json_t *j = json_string(s);
    char *r = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    json_decref(j);
    return r ? r : strdup("\"?\"");
}

void hip_tl_event(const trc_event *ev)
{
    if (!tl.path)
        return;
    static const char *const copy_kind[] = {"H2D", "D2H", "D2D", "init"};
    static const char *const mem_kind[] = {"device", "host", "kernarg", "code", "scratch"};
    double ts = now_us();
    pthread_mutex_lock(&tl.mu);
    if (ev->stream < 256)
        tl.streams_seen[ev->stream / 64] |= 1ull << (ev->stream % 64);
    switch (ev->kind) {
    case TRC_EV_ALLOC:
    case TRC_EV_FREE:
        add("{\"name\": \"%s\", \"cat\": \"memory\", \"ph\": \"i\", \"s\": \"t\", \"ts\": %.3f, \"pid\": 0, \"tid\": "
            "%u, \"args\": {\"device\": %u, \"addr\": \"0x%llx\", \"bytes\": %llu, \"kind\": \"%s\"}}",
            ev->kind == TRC_EV_ALLOC ? "alloc" : "free", ts, ev->stream, ev->device, (unsigned long long)ev->addr,
            (unsigned long long)ev->size,
            ev->managed ? "managed" : ev->mem_kind < 5 ? mem_kind[ev->mem_kind] : "?");
        break;
    case TRC_EV_COPY:
        add("{\"name\": \"copy %s\", \"cat\": \"copy\", \"ph\": \"i\", \"s\": \"t\", \"ts\": %.3f, \"pid\": 0, "
            "\"tid\": %u, \"args\": {\"device\": %u, \"dst\": \"0x%llx\", \"src\": \"0x%llx\", \"bytes\": %llu}}",
            ev->copy_kind < 4 ? copy_kind[ev->copy_kind] : "?", ts, ev->stream, ev->device,
            (unsigned long long)ev->addr, (unsigned long long)ev->src, (unsigned long long)ev->size);
        break;
    case TRC_EV_MEMSET:
        add("{\"name\": \"memset\", \"cat\": \"copy\", \"ph\": \"i\", \"s\": \"t\", \"ts\": %.3f, \"pid\": 0, \"tid\": "
            "%u, \"args\": {\"device\": %u, \"dst\": \"0x%llx\", \"bytes\": %llu, \"value\": %u}}",
            ts, ev->stream, ev->device, (unsigned long long)ev->addr, (unsigned long long)ev->size, ev->value);
        break;
    case TRC_EV_SYNC:
        add("{\"name\": \"synchronize\", \"cat\": \"sync\", \"ph\": \"i\", \"s\": \"t\", \"ts\": %.3f, \"pid\": 0, "
            "\"tid\": %u, \"args\": {\"device\": %u}}",
            ts, ev->stream, ev->device);
        break;
    default: /* launches are spans: hip_tl_kernel */
        break;
    }
    pthread_mutex_unlock(&tl.mu);
}

void hip_tl_kernel(uint32_t device, uint32_t stream, const char *name, const uint32_t grid[3],
                   const uint32_t wg_size[3], double t0_us, double t1_us, uint64_t waves, uint64_t wave_instructions,
                   const char *status)
{
    if (!tl.path)
        return;
    char *n = jstr(name);
    pthread_mutex_lock(&tl.mu);
    if (device < 32)
        tl.gpus_seen |= 1u << device;
    add("{\"name\": %s, \"cat\": \"kernel\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, \"pid\": %u, \"tid\": 0, "
        "\"args\": {\"stream\": %u, \"grid\": [%u, %u, %u], \"wg_size\": [%u, %u, %u], \"workgroups\": %llu, "
        "\"wavefronts\": %llu, \"wavefront_instructions\": %llu, \"status\": \"%s\"}}",
        n, t0_us, t1_us > t0_us ? t1_us - t0_us : 0, 1 + device, stream, grid[0], grid[1], grid[2], wg_size[0],
        wg_size[1], wg_size[2], (unsigned long long)grid[0] * grid[1] * grid[2], (unsigned long long)waves,
        (unsigned long long)wave_instructions, status);
    pthread_mutex_unlock(&tl.mu);
    free(n);
}

int hip_tl_close(const char *command_line)
{
    if (!tl.path)
        return 0;
    pthread_mutex_lock(&tl.mu);
    uint64_t budget = tl.budget, n_events = tl.n;
    tl.budget = UINT64_MAX; /* the track names always fit */
    /* track names: the host's streams, each GPU that ran a kernel */
    add("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": {\"name\": \"host\"}}");
    for (unsigned s = 0; s < 256; s++)
        if (tl.streams_seen[s / 64] >> (s % 64) & 1)
            add("{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": %u, \"args\": {\"name\": "
                "\"%s %u\"}}",
                s, s ? "stream" : "null stream", s);
    for (unsigned d = 0; d < 32; d++)
        if (tl.gpus_seen >> d & 1) {
            add("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %u, \"args\": {\"name\": \"GPU %u "
                "(emulated)\"}}",
                1 + d, d);
            add("{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %u, \"tid\": 0, \"args\": {\"name\": "
                "\"kernels\"}}",
                1 + d);
        }
    char *cl = jstr(command_line ? command_line : "");
    int rc = 0;
    FILE *f = fopen(tl.path, "w");
    if (!f) {
        fprintf(stderr, "gcn3-emu: timeline %s: cannot write: %m\n", tl.path);
        rc = -1;
    } else {
        fputs("{\"traceEvents\": [\n", f);
        if (tl.len > 2)
            fwrite(tl.buf, 1, tl.len - 2, f); /* without the last ",\n" */
        fprintf(f,
                "\n], \"displayTimeUnit\": \"ms\", \"otherData\": {\"producer\": \"gcn3-emu %s (commit %s)\", "
                "\"clock\": \"wall clock of the emulation, us\", \"command_line\": %s, \"events\": %llu, "
                "\"dropped_events\": %llu}}\n",
                GCN3SIM_VERSION, GCN3SIM_COMMIT, cl, (unsigned long long)n_events, (unsigned long long)tl.dropped);
        if (ferror(f) | fclose(f)) {
            fprintf(stderr, "gcn3-emu: timeline %s: write error (disk full?)\n", tl.path);
            rc = -1;
        } else if (tl.dropped) {
            fprintf(stderr, "gcn3-emu: timeline %s: %llu events beyond the budget of %llu were dropped "
                            "(GCN3EMU_TIMELINE_BUDGET)\n",
                    tl.path, (unsigned long long)tl.dropped, (unsigned long long)budget);
        }
    }
    free(cl);
    free(tl.buf);
    tl.buf = NULL;
    tl.len = tl.cap = 0;
    free(tl.path);
    tl.path = NULL;
    pthread_mutex_unlock(&tl.mu);
    return rc;
}
