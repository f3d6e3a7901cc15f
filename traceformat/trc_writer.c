/*
 * trc_writer.c - writes .gtrace files (format: docs/trace-format.md).
 *
 * The file is a file header, a sequence of chunks (each one zstd frame with
 * content checksum holding one protobuf message), an index chunk and a
 * fixed-size trailer. Chunks are appended at w->pos under w->mu; everything
 * expensive happens outside that lock: a committing emulator thread swaps
 * its recorded waves into a job from a bounded pool (TRC_BG_JOBS), and
 * background compressor threads (bg_main) encode them (hand-written proto3
 * encoder, data streams byte-plane shuffled), compress and append them; with
 * no spare CPU the committing thread does that itself with its own
 * ZSTD_CCtx.
 *
 * Chunks are staged in a write buffer (w->wbuf, TRC_WBUF_SIZE bytes) and
 * written with one write() per buffer-full instead of two per chunk; the
 * buffer is flushed when full, at the end of every kernel and at close, so a
 * killed emulator loses at most the unflushed tail of the running kernel
 * (the file is then detectably incomplete, as before).
 *
 * Invariants:
 *  - w->pos is the file offset where the next chunk goes; every byte before
 *    it was written successfully or sits in w->wbuf (else w->failed is set);
 *    w->pos == w->flushed + w->wbuf.n.
 *  - after the first error (w->failed) every call fails fast with the first
 *    message; nothing is written afterwards.
 *  - a trc_wg_rec is used by one thread; in steady state (buffers grown to
 *    the workgroup's size, in the recorder and in every job) recording and
 *    committing allocate nothing (zstd reuses its CCtx; encoding uses the
 *    job's buffers).
 *  - a job is on exactly one of: the free list, the queue, a compressor's
 *    hands (q_busy counts those); all under qmu.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#include "traceformat/gtrace.pb-c.h"
#include "traceformat/trc_internal.h"

/* ---- growable arrays ------------------------------------------------------ */

/* Grows *p (elements of `elem` bytes, capacity *cap) to hold `need`; doubles
 * so appends are amortised O(1). Returns 0 or -1 (out of memory). */
static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap : 16;
    while (nc < need) {
        if (nc > SIZE_MAX / 2 / elem) return -1;
        nc *= 2;
    }
    void *np = realloc(*p, nc * elem);
    if (!np) return -1;
    *p = np;
    *cap = nc;
    return 0;
}

#define VEC(T) struct { T *p; size_t n, cap; }
typedef VEC(uint64_t) u64v;
typedef VEC(int64_t) i64v;
typedef VEC(uint32_t) u32v;
typedef VEC(uint8_t) u8v;

/* ---- writer --------------------------------------------------------------- */

/* One encoded workgroup on its way to the file (background compression). */
typedef struct wseg {
    size_t off, len;
} wseg;
struct wave_rec;
typedef struct wjob {
    /* the workgroup's recorded waves, swapped out of its trc_wg_rec at commit
     * (the recorder gets this job's previous, already grown, buffers back),
     * so the emulator thread neither copies nor encodes */
    struct wave_rec *w;
    uint32_t cap_waves, wg_id[3];
    uint32_t kernel_id, n_waves;
    uint64_t n_instr, n_mem;
    u8v rec, dat; /* encoded Workgroup / WorkgroupData messages */
    /* byte ranges of dat holding data streams still in plain order: the
     * compressing thread byte-plane shuffles them (trc_shuf4) on the way to
     * zstd, so the emulator thread only memcpys */
    wseg *seg;
    size_t nseg, segcap;
    struct wjob *next;
} wjob;

/* Background compressors and the bounded pool of jobs they share: commits
 * block when all TRC_BG_JOBS jobs are queued or being compressed, so memory
 * stays bounded by TRC_BG_JOBS encoded workgroups. */
#define TRC_BG_THREADS 4u
#define TRC_BG_JOBS    32u

struct trc_writer;
static void bg_start(struct trc_writer *w, int want);
static void bg_drain(struct trc_writer *w);
static void bg_stop(struct trc_writer *w);

typedef struct wkernel {
    uint32_t launch_event;
    u64v wg_off, data_off;
    u64v wg_key;       /* (z, y, x) of each committed workgroup, packed for sorting */
    uint64_t n_instr, n_mem, wg_bytes, data_bytes, n_waves;
    int ended;
} wkernel;

/* Workgroups are committed in whatever order the emulator's threads finish
 * them; the index lists them in grid order (z, then y, then x), so a trace's
 * logical content, and every replay of it, does not depend on the number of
 * emulator threads. key: z (16 bits), y (16 bits), x (32 bits); a grid
 * wider than that keeps commit order (sort_ok = 0). */
static int wg_key_of(const uint32_t id[3], uint64_t *key)
{
    if (id[1] > 0xffff || id[2] > 0xffff)
        return 0;
    *key = ((uint64_t)id[2] << 48) | ((uint64_t)id[1] << 32) | id[0];
    return 1;
}

typedef struct wg_sort_item { uint64_t key, wg_off, data_off; } wg_sort_item;

static int wg_sort_cmp(const void *a, const void *b)
{
    uint64_t x = ((const wg_sort_item *)a)->key, y = ((const wg_sort_item *)b)->key;
    return x < y ? -1 : x > y;
}

/* Reorder k's workgroup offsets into grid order; returns -1 when out of memory. */
static int sort_kernel_wgs(wkernel *k)
{
    size_t n = k->wg_off.n;
    if (n < 2 || k->wg_key.n != n)
        return 0;
    wg_sort_item *it = malloc(n * sizeof *it);
    if (!it)
        return -1;
    for (size_t i = 0; i < n; i++)
        it[i] = (wg_sort_item){k->wg_key.p[i], k->wg_off.p[i], k->data_off.p[i]};
    qsort(it, n, sizeof *it, wg_sort_cmp);
    for (size_t i = 0; i < n; i++) {
        k->wg_key.p[i] = it[i].key;
        k->wg_off.p[i] = it[i].wg_off;
        k->data_off.p[i] = it[i].data_off;
    }
    free(it);
    return 0;
}

struct trc_writer {
    char *path;
    int fd;
    int closed;
    pthread_mutex_t mu;
    uint64_t pos;      /* logical end: flushed + wbuf.n */
    uint64_t flushed;  /* bytes actually written to fd */
    u8v wbuf;          /* staged bytes, capacity TRC_WBUF_SIZE; under mu */
    int failed;
    char err[512];
    uint64_t header_off;
    u64v code_off, event_off;
    wkernel *k;
    size_t nk, capk;
    /* event-side scratch (event calls come from one thread at a time) */
    ZSTD_CCtx *cctx, *cctx_data;
    u8v pack, z, shuf;
    /* background compression (see bg_main); queue fields under qmu */
    pthread_t bg[TRC_BG_THREADS];
    unsigned n_bg;
    pthread_mutex_t qmu;
    pthread_cond_t q_cv_job, q_cv_free, q_cv_idle;
    wjob *q_head, *q_tail, *q_free;
    unsigned q_busy;
    int q_stop;
};

/* Write-buffer size: large enough that write() calls are rare (a workgroup's
 * chunks are typically 0.1-10 KB), small enough to be irrelevant in memory. */
#define TRC_WBUF_SIZE (1u << 20)

static void wfail(trc_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Records the first error; caller holds w->mu or is the only thread. */
static void wfail(trc_writer *w, const char *fmt, ...)
{
    if (w->failed) return;
    w->failed = 1;
    int n = snprintf(w->err, sizeof w->err, "%s: ", w->path);
    if (n < 0 || (size_t)n >= sizeof w->err) n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err + n, sizeof w->err - (size_t)n, fmt, ap);
    va_end(ap);
}

static void wfail_locked(trc_writer *w, const char *fmt, const char *a)
{
    pthread_mutex_lock(&w->mu);
    wfail(w, fmt, a);
    pthread_mutex_unlock(&w->mu);
}

/* Writes all of buf to the file at w->flushed; handles short writes and
 * EINTR. Caller holds w->mu (or is single-threaded). */
static int write_fd(trc_writer *w, const void *buf, size_t len)
{
    const uint8_t *b = buf;
    while (len) {
        ssize_t k = write(w->fd, b, len > (1u << 30) ? (1u << 30) : len);
        if (k < 0) {
            if (errno == EINTR) continue;
            wfail(w, "write error at byte %llu: %s", (unsigned long long)w->flushed, strerror(errno));
            return -1;
        }
        if (k == 0) {
            wfail(w, "write error at byte %llu: wrote nothing", (unsigned long long)w->flushed);
            return -1;
        }
        b += k;
        len -= (size_t)k;
        w->flushed += (uint64_t)k;
    }
    return 0;
}

/* Writes the staged bytes out. Caller holds w->mu. */
static int flush_wbuf(trc_writer *w)
{
    if (!w->wbuf.n) return 0;
    size_t n = w->wbuf.n;
    w->wbuf.n = 0;
    return write_fd(w, w->wbuf.p, n);
}

/* Appends buf at w->pos through the write buffer (large pieces go straight
 * to the file). Caller holds w->mu (or is single-threaded). */
static int write_all(trc_writer *w, const void *buf, size_t len)
{
    if (w->wbuf.n + len > w->wbuf.cap) {
        if (flush_wbuf(w) < 0) return -1;
        if (len > w->wbuf.cap) {
            if (write_fd(w, buf, len) < 0) return -1;
            w->pos += len;
            return 0;
        }
    }
    memcpy(w->wbuf.p + w->wbuf.n, buf, len);
    w->wbuf.n += len;
    w->pos += len;
    return 0;
}

/* Appends one chunk (header + compressed payload); returns its offset via
 * *off. Caller holds w->mu. */
static int append_chunk(trc_writer *w, uint32_t type, const uint8_t *payload, size_t len,
                        uint64_t *off)
{
    if (w->failed) return -1;
    uint8_t h[TRC_CHUNK_HDR_SIZE];
    trc_put_le32(h, type);
    trc_put_le32(h + 4, 0);
    trc_put_le64(h + 8, len);
    *off = w->pos;
    if (write_all(w, h, sizeof h) < 0) return -1;
    return write_all(w, payload, len);
}

static ZSTD_CCtx *new_cctx(int level)
{
    ZSTD_CCtx *c = ZSTD_createCCtx();
    if (!c) return NULL;
    if (ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1))) {
        ZSTD_freeCCtx(c);
        return NULL;
    }
    return c;
}

/* Packs msg into pack and compresses it into z (both reused). Returns the
 * compressed size, or 0 with *why set. */
static size_t pack_compress(ZSTD_CCtx *c, const ProtobufCMessage *msg, u8v *pack, u8v *z,
                            const char **why)
{
    size_t len = protobuf_c_message_get_packed_size(msg);
    if (grow((void **)&pack->p, &pack->cap, len + 1, 1) < 0) {
        *why = "out of memory packing a record";
        return 0;
    }
    pack->n = protobuf_c_message_pack(msg, pack->p);
    size_t bound = ZSTD_compressBound(pack->n);
    if (grow((void **)&z->p, &z->cap, bound, 1) < 0) {
        *why = "out of memory compressing a record";
        return 0;
    }
    size_t zn = ZSTD_compress2(c, z->p, z->cap, pack->p, pack->n);
    if (ZSTD_isError(zn)) {
        *why = ZSTD_getErrorName(zn);
        return 0;
    }
    z->n = zn;
    return zn;
}

/* Packs, compresses and appends one message from the event thread. */
static int write_msg_c(trc_writer *w, ZSTD_CCtx *c, uint32_t type, const ProtobufCMessage *msg,
                       uint64_t *off)
{
    const char *why = NULL;
    if (!pack_compress(c, msg, &w->pack, &w->z, &why)) {
        wfail_locked(w, "cannot encode record: %s", why);
        return -1;
    }
    pthread_mutex_lock(&w->mu);
    int rc = append_chunk(w, type, w->z.p, w->z.n, off);
    pthread_mutex_unlock(&w->mu);
    return rc;
}

static int write_msg(trc_writer *w, uint32_t type, const ProtobufCMessage *msg, uint64_t *off)
{
    return write_msg_c(w, w->cctx, type, msg, off);
}

static void copy_str(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = 0;
}

trc_writer *trc_writer_open(const char *path, const trc_header_info *h, char *err, size_t errlen)
{
    return trc_writer_open_ex(path, h, -1, err, errlen);
}

trc_writer *trc_writer_open_ex(const char *path, const trc_header_info *h, int bg_threads, char *err,
                               size_t errlen)
{
    trc_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        if (err && errlen) snprintf(err, errlen, "%s: out of memory", path);
        free(w);
        return NULL;
    }
    pthread_mutex_init(&w->mu, NULL);
    pthread_mutex_init(&w->qmu, NULL);
    pthread_cond_init(&w->q_cv_job, NULL);
    pthread_cond_init(&w->q_cv_free, NULL);
    pthread_cond_init(&w->q_cv_idle, NULL);
    w->fd = -1;
    w->cctx = new_cctx(TRC_ZSTD_LEVEL);
    w->cctx_data = new_cctx(TRC_ZSTD_LEVEL_DATA);
    w->wbuf.p = malloc(TRC_WBUF_SIZE);
    w->wbuf.cap = w->wbuf.p ? TRC_WBUF_SIZE : 0;
    if (w->cctx_data) {
        /* Copy payloads (MBs, compressed on the host thread while no kernel
         * runs) are split over zstd's own worker threads; same frame format.
         * Best effort: a libzstd without threads keeps compressing inline. */
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        if (cpus > 1)
            (void)ZSTD_CCtx_setParameter(w->cctx_data, ZSTD_c_nbWorkers, cpus > 4 ? 4 : (int)cpus);
    }
    if (!w->cctx || !w->cctx_data || !w->wbuf.p) {
        if (err && errlen) snprintf(err, errlen, "%s: cannot create zstd context", path);
        trc_writer_destroy(w);
        return NULL;
    }
    w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (w->fd < 0) {
        if (err && errlen) snprintf(err, errlen, "%s: cannot create trace: %s", path, strerror(errno));
        w->closed = 1;
        trc_writer_destroy(w);
        return NULL;
    }
    uint8_t fh[TRC_FILE_HDR_SIZE];
    memcpy(fh, TRC_FILE_MAGIC, 8);
    trc_put_le32(fh + 8, TRC_FORMAT_MAJOR);
    trc_put_le32(fh + 12, TRC_WRITE_FORMAT_MINOR);

    /* Local copies guarantee NUL termination of the caller's fixed arrays. */
    char producer[sizeof h->producer], pver[sizeof h->producer_version],
        isa[sizeof h->isa_target], cmd[sizeof h->command_line];
    copy_str(producer, sizeof producer, h->producer);
    copy_str(pver, sizeof pver, h->producer_version);
    copy_str(isa, sizeof isa, h->isa_target);
    copy_str(cmd, sizeof cmd, h->command_line);
    Gtrace__Header m = GTRACE__HEADER__INIT;
    m.magic = (char *)TRC_HEADER_MAGIC_STR;
    m.format_major = TRC_FORMAT_MAJOR;
    m.format_minor = TRC_WRITE_FORMAT_MINOR;
    m.producer = producer;
    m.producer_version = pver;
    m.isa_target = isa;
    m.device_count = h->device_count;
    m.command_line = cmd;

    if (write_all(w, fh, sizeof fh) < 0 ||
        write_msg(w, TRC_CHUNK_HEADER, &m.base, &w->header_off) < 0 || flush_wbuf(w) < 0) {
        if (err && errlen) snprintf(err, errlen, "%s", w->err);
        trc_writer_destroy(w);
        return NULL;
    }
    bg_start(w, bg_threads);
    return w;
}

const char *trc_writer_error(const trc_writer *w)
{
    return w ? w->err : "no trace writer";
}

static int fail_fast(trc_writer *w)
{
    if (w->closed) {
        wfail_locked(w, "%s", "trace writer used after close");
        return -1;
    }
    return w->failed ? -1 : 0;
}

int trc_writer_code_object(trc_writer *w, const void *elf, size_t len)
{
    if (fail_fast(w)) return -1;
    if (w->code_off.n >= INT32_MAX) {
        wfail_locked(w, "%s", "too many code objects");
        return -1;
    }
    Gtrace__CodeObject m = GTRACE__CODE_OBJECT__INIT;
    m.id = (uint32_t)w->code_off.n;
    m.elf.data = (uint8_t *)elf;
    m.elf.len = elf ? len : 0;
    uint64_t off;
    if (grow((void **)&w->code_off.p, &w->code_off.cap, w->code_off.n + 1, 8) < 0) {
        wfail_locked(w, "%s", "out of memory");
        return -1;
    }
    if (write_msg(w, TRC_CHUNK_CODE_OBJECT, &m.base, &off) < 0) return -1;
    w->code_off.p[w->code_off.n++] = off;
    return (int)m.id;
}

/* Writes an event chunk and remembers its offset; returns its event index. */
static int64_t put_event(trc_writer *w, const trc_event *ev)
{
    Gtrace__Event m = GTRACE__EVENT__INIT;
    Gtrace__Launch l = GTRACE__LAUNCH__INIT;
    char kname[sizeof ev->launch.kernel_name];
    m.kind = (Gtrace__EventKind)ev->kind;
    m.device = ev->device;
    m.stream = ev->stream;
    m.addr = ev->addr;
    m.src = ev->src;
    m.size = ev->size;
    m.mem_kind = (uint32_t)ev->mem_kind;
    m.copy_kind = (uint32_t)ev->copy_kind;
    m.value = ev->value;
    int data_chunk = 0;
    if (ev->kind == TRC_EV_COPY && ev->data) {
        m.has_data = 1;
        if (ev->size > SIZE_MAX - 1 ||
            grow((void **)&w->shuf.p, &w->shuf.cap, (size_t)ev->size + 1, 1) < 0) {
            wfail_locked(w, "%s", "out of memory staging copy data");
            return -1;
        }
        trc_shuf4(w->shuf.p, ev->data, (size_t)ev->size);
        m.data_shuf4.data = w->shuf.p;
        m.data_shuf4.len = ev->size;
        data_chunk = 1;
    }
    if (ev->kind == TRC_EV_LAUNCH) {
        const trc_launch *a = &ev->launch;
        l.kernel_id = a->kernel_id;
        l.code_object_id = a->code_object_id;
        copy_str(kname, sizeof kname, a->kernel_name);
        l.kernel_name = kname;
        l.entry_vaddr = a->entry_vaddr;
        l.n_grid = 3;
        l.grid = (uint32_t *)a->grid;
        l.n_wg_size = 3;
        l.wg_size = (uint32_t *)a->wg_size;
        l.waves_per_wg = a->waves_per_wg;
        l.group_segment_size = a->group_segment_size;
        l.private_segment_size = a->private_segment_size;
        l.vgpr_count = a->vgpr_count;
        l.sgpr_count = a->sgpr_count;
        l.kernarg_addr = a->kernarg_addr;
        if (a->kernarg_size && !a->kernarg) {
            wfail_locked(w, "%s", "launch event has kernarg_size but no kernarg bytes");
            return -1;
        }
        l.kernarg.data = (uint8_t *)a->kernarg;
        l.kernarg.len = a->kernarg_size;
        m.launch = &l;
    }
    if (grow((void **)&w->event_off.p, &w->event_off.cap, w->event_off.n + 1, 8) < 0) {
        wfail_locked(w, "%s", "out of memory");
        return -1;
    }
    uint64_t off;
    if (write_msg_c(w, data_chunk ? w->cctx_data : w->cctx, TRC_CHUNK_EVENT, &m.base, &off) < 0) return -1;
    /* event_off is also read by trc_writer_close only; the event thread
     * owns it, so no lock. */
    w->event_off.p[w->event_off.n] = off;
    return (int64_t)w->event_off.n++;
}

int trc_writer_event(trc_writer *w, const trc_event *ev)
{
    if (fail_fast(w)) return -1;
    switch (ev->kind) {
    case TRC_EV_ALLOC: case TRC_EV_FREE: case TRC_EV_MEMSET: case TRC_EV_SYNC:
        break;
    case TRC_EV_COPY:
        if ((ev->copy_kind == TRC_COPY_H2D || ev->copy_kind == TRC_COPY_D2H ||
             ev->copy_kind == TRC_COPY_INIT) && ev->size && !ev->data) {
            wfail_locked(w, "%s", "copy event without its data (H2D/D2H/INIT copies carry their bytes)");
            return -1;
        }
        break;
    case TRC_EV_LAUNCH:
        wfail_locked(w, "%s", "launch events go through trc_writer_begin_kernel, not trc_writer_event");
        return -1;
    default:
        wfail_locked(w, "%s", "unknown event kind");
        return -1;
    }
    return put_event(w, ev) < 0 ? -1 : 0;
}

int trc_writer_begin_kernel(trc_writer *w, trc_launch *l)
{
    if (fail_fast(w)) return -1;
    pthread_mutex_lock(&w->mu);
    if (w->nk >= UINT32_MAX || grow((void **)&w->k, &w->capk, w->nk + 1, sizeof *w->k) < 0) {
        wfail(w, "%s", "out of memory (kernel table)");
        pthread_mutex_unlock(&w->mu);
        return -1;
    }
    uint32_t id = (uint32_t)w->nk;
    pthread_mutex_unlock(&w->mu);

    l->kernel_id = id;
    trc_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = TRC_EV_LAUNCH;
    ev.device = l->device;
    ev.stream = l->stream;
    ev.launch = *l;
    int64_t ei = put_event(w, &ev);
    if (ei < 0) return -1;

    pthread_mutex_lock(&w->mu);
    wkernel *k = &w->k[id];
    memset(k, 0, sizeof *k);
    k->launch_event = (uint32_t)ei;
    w->nk = id + 1u;
    pthread_mutex_unlock(&w->mu);
    return 0;
}

int trc_writer_end_kernel(trc_writer *w, uint32_t kernel_id)
{
    if (fail_fast(w)) return -1;
    bg_drain(w); /* the kernel's queued workgroups go in before its end */
    pthread_mutex_lock(&w->mu);
    int rc = 0;
    if (w->failed) {
        rc = -1;
    } else if (kernel_id >= w->nk) {
        wfail(w, "end of kernel %u that was never begun", kernel_id);
        rc = -1;
    } else if (w->k[kernel_id].ended) {
        wfail(w, "kernel %u ended twice", kernel_id);
        rc = -1;
    } else {
        w->k[kernel_id].ended = 1;
        rc = flush_wbuf(w);
    }
    pthread_mutex_unlock(&w->mu);
    return rc;
}

int trc_writer_close(trc_writer *w)
{
    if (!w) return -1;
    if (w->closed) return w->failed ? -1 : 0;
    bg_stop(w); /* drains the queue, then joins the compressors */
    w->closed = 1;
    int rc = w->failed ? -1 : 0;
    if (!w->failed) {
        Gtrace__Index ix = GTRACE__INDEX__INIT;
        ix.header_offset = w->header_off;
        ix.n_code_object_offset = w->code_off.n;
        ix.code_object_offset = w->code_off.p;
        ix.n_event_offset = w->event_off.n;
        ix.event_offset = w->event_off.p;
        Gtrace__KernelIndex *ks = calloc(w->nk ? w->nk : 1, sizeof *ks);
        Gtrace__KernelIndex **kp = calloc(w->nk ? w->nk : 1, sizeof *kp);
        if (!ks || !kp) {
            wfail(w, "%s", "out of memory writing the index");
        } else {
            for (size_t i = 0; i < w->nk; i++) {
                wkernel *k = &w->k[i];
                if (sort_kernel_wgs(k) < 0)
                    wfail(w, "%s", "out of memory sorting the workgroup index");
                Gtrace__KernelIndex t = GTRACE__KERNEL_INDEX__INIT;
                t.kernel_id = (uint32_t)i;
                t.launch_event = k->launch_event;
                t.n_wg_offset = k->wg_off.n;
                t.wg_offset = k->wg_off.p;
                t.n_data_offset = k->data_off.n;
                t.data_offset = k->data_off.p;
                t.n_instr = k->n_instr;
                t.n_mem = k->n_mem;
                t.wg_bytes = k->wg_bytes;
                t.data_bytes = k->data_bytes;
                t.n_waves = k->n_waves;
                t.ended = k->ended;
                ks[i] = t;
                kp[i] = &ks[i];
            }
            ix.n_kernels = w->nk;
            ix.kernels = kp;
            uint64_t off;
            /* The index is written even if a kernel was not ended, so the
             * trace stays readable; the missing end is still an error. */
            if (write_msg(w, TRC_CHUNK_INDEX, &ix.base, &off) == 0) {
                uint8_t t[TRC_TRAILER_SIZE];
                trc_put_le64(t, off);
                trc_put_le64(t + 8, w->pos + TRC_TRAILER_SIZE);
                memcpy(t + 16, TRC_TRAILER_MAGIC, 8);
                if (write_all(w, t, sizeof t) == 0) flush_wbuf(w);
            }
            for (size_t i = 0; i < w->nk && !w->failed; i++)
                if (!w->k[i].ended) wfail(w, "kernel %zu was begun but never ended", i);
        }
        free(ks);
        free(kp);
        rc = w->failed ? -1 : 0;
    }
    if (w->fd >= 0) {
        if (close(w->fd) < 0 && !w->failed) {
            wfail(w, "close failed: %s", strerror(errno));
            rc = -1;
        }
        w->fd = -1;
    }
    return rc;
}

void trc_writer_destroy(trc_writer *w)
{
    if (!w) return;
    if (!w->closed) trc_writer_close(w);
    if (w->fd >= 0) close(w->fd);
    for (size_t i = 0; i < w->nk; i++) {
        free(w->k[i].wg_off.p);
        free(w->k[i].wg_key.p);
        free(w->k[i].data_off.p);
    }
    free(w->k);
    free(w->code_off.p);
    free(w->event_off.p);
    free(w->pack.p);
    free(w->z.p);
    free(w->shuf.p);
    free(w->wbuf.p);
    ZSTD_freeCCtx(w->cctx);
    ZSTD_freeCCtx(w->cctx_data);
    bg_stop(w);
    pthread_cond_destroy(&w->q_cv_job);
    pthread_cond_destroy(&w->q_cv_free);
    pthread_cond_destroy(&w->q_cv_idle);
    pthread_mutex_destroy(&w->qmu);
    pthread_mutex_destroy(&w->mu);
    free(w->path);
    free(w);
}

/* ---- per-workgroup recording ---------------------------------------------- */

typedef struct wave_rec {
    uint64_t n_instr;
    int ended;
    uint32_t n_branch;
    u8v branch;
    u64v indirect;
    u64v exec_at_delta, exec_val;
    uint64_t last_exec_at;
    u32v mflags, mbytes, akind;
    u64v mexec;
    i64v abase, astride, adelta;
    uint64_t last_base;
    u32v load_len, store_len;
    u8v load, store;
} wave_rec;

struct trc_wg_rec {
    uint32_t kernel_id, wg_id[3], n_waves;
    wave_rec *w;
    uint32_t cap_waves;
    int bad;
    char bad_msg[160];
    ZSTD_CCtx *cctx, *cctx_data;
    wjob job;         /* encoded messages when compressing inline */
    u8v z1, z2, sh;   /* compressed Workgroup / WorkgroupData, shuffled data; inline */
};

trc_wg_rec *trc_wg_rec_create(void)
{
    trc_wg_rec *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->cctx = new_cctx(TRC_ZSTD_LEVEL_REC);
    g->cctx_data = new_cctx(TRC_ZSTD_LEVEL_DATA);
    if (!g->cctx || !g->cctx_data) {
        ZSTD_freeCCtx(g->cctx);
        ZSTD_freeCCtx(g->cctx_data);
        free(g);
        return NULL;
    }
    return g;
}

static void free_waves(wave_rec *w, uint32_t cap)
{
    for (uint32_t i = 0; i < cap; i++) {
        wave_rec *v = &w[i];
        free(v->branch.p); free(v->indirect.p); free(v->exec_at_delta.p); free(v->exec_val.p);
        free(v->mflags.p); free(v->mbytes.p); free(v->akind.p); free(v->mexec.p);
        free(v->abase.p); free(v->astride.p); free(v->adelta.p);
        free(v->load_len.p); free(v->store_len.p); free(v->load.p); free(v->store.p);
    }
    free(w);
}

void trc_wg_rec_destroy(trc_wg_rec *g)
{
    if (!g) return;
    free_waves(g->w, g->cap_waves);
    ZSTD_freeCCtx(g->cctx);
    ZSTD_freeCCtx(g->cctx_data);
    free(g->job.rec.p);
    free(g->job.dat.p);
    free(g->job.seg);
    free(g->sh.p);
    free(g->z1.p);
    free(g->z2.p);
    free(g);
}

static void rec_bad(trc_wg_rec *g, const char *what, uint32_t wave)
{
    if (g->bad) return;
    g->bad = 1;
    snprintf(g->bad_msg, sizeof g->bad_msg, "%s (kernel %u, workgroup %u,%u,%u, wave %u)", what,
             g->kernel_id, g->wg_id[0], g->wg_id[1], g->wg_id[2], wave);
}

void trc_wg_rec_begin(trc_wg_rec *g, uint32_t kernel_id, const uint32_t wg_id[3], uint32_t n_waves)
{
    g->kernel_id = kernel_id;
    memcpy(g->wg_id, wg_id, sizeof g->wg_id);
    g->bad = 0;
    g->bad_msg[0] = 0;
    if (n_waves > g->cap_waves) {
        wave_rec *nw = realloc(g->w, n_waves * sizeof *nw);
        if (nw) {
            g->w = nw;
            memset(nw + g->cap_waves, 0, (n_waves - g->cap_waves) * sizeof *nw);
            g->cap_waves = n_waves;
        } else {
            g->n_waves = 0;
            rec_bad(g, "out of memory for wave buffers", n_waves);
            return;
        }
    }
    g->n_waves = n_waves;
    for (uint32_t i = 0; i < n_waves; i++) {
        wave_rec *v = &g->w[i];
        v->n_instr = 0;
        v->ended = 0;
        v->n_branch = 0;
        v->branch.n = v->indirect.n = v->exec_at_delta.n = v->exec_val.n = 0;
        v->last_exec_at = 0;
        v->mflags.n = v->mbytes.n = v->akind.n = v->mexec.n = 0;
        v->abase.n = v->astride.n = v->adelta.n = 0;
        v->last_base = 0;
        v->load_len.n = v->store_len.n = v->load.n = v->store.n = 0;
    }
}

/* Append helpers; a failed growth marks the workgroup bad (reported at
 * commit). The `likely` path is one compare and one store. */
#define PUSH(g, wave, vec, val)                                                     \
    do {                                                                            \
        if ((vec).n == (vec).cap &&                                                 \
            grow((void **)&(vec).p, &(vec).cap, (vec).n + 1, sizeof *(vec).p) < 0) { \
            rec_bad(g, "out of memory recording", wave);                            \
            return;                                                                 \
        }                                                                           \
        (vec).p[(vec).n++] = (val);                                                 \
    } while (0)

static inline wave_rec *wave_of(trc_wg_rec *g, uint32_t wave)
{
    if (wave >= g->n_waves) {
        rec_bad(g, "recording for a wave index beyond the workgroup's wave count", wave);
        return NULL;
    }
    return &g->w[wave];
}

void trc_rec_branch(trc_wg_rec *g, uint32_t wave, int taken)
{
    wave_rec *v = wave_of(g, wave);
    if (!v) return;
    uint32_t i = v->n_branch;
    if ((i & 7) == 0) PUSH(g, wave, v->branch, 0);
    if (taken) v->branch.p[i >> 3] |= (uint8_t)(1u << (i & 7));
    v->n_branch = i + 1;
}

void trc_rec_indirect(trc_wg_rec *g, uint32_t wave, uint64_t target_vaddr)
{
    wave_rec *v = wave_of(g, wave);
    if (!v) return;
    PUSH(g, wave, v->indirect, target_vaddr);
}

void trc_rec_exec(trc_wg_rec *g, uint32_t wave, uint64_t dyn_index, uint64_t exec)
{
    wave_rec *v = wave_of(g, wave);
    if (!v) return;
    if (dyn_index < v->last_exec_at) {
        rec_bad(g, "EXEC changes recorded out of order", wave);
        return;
    }
    PUSH(g, wave, v->exec_at_delta, dyn_index - v->last_exec_at);
    v->last_exec_at = dyn_index;
    PUSH(g, wave, v->exec_val, exec);
}

static int append_bytes(trc_wg_rec *g, uint32_t wave, u8v *vec, const void *src, size_t n)
{
    if (vec->n + n > vec->cap && grow((void **)&vec->p, &vec->cap, vec->n + n, 1) < 0) {
        rec_bad(g, "out of memory recording data", wave);
        return -1;
    }
    memcpy(vec->p + vec->n, src, n);
    vec->n += n;
    return 0;
}

/* Makes room for one more memory op in the seven per-op columns of v (they
 * always hold the same count). Returns 0 or -1 (workgroup marked bad). */
static int reserve_mem_op(trc_wg_rec *g, uint32_t wave, wave_rec *v)
{
    size_t need = v->mflags.n + 1;
    if (need <= v->mflags.cap && need <= v->mbytes.cap && need <= v->akind.cap &&
        need <= v->mexec.cap && need <= v->abase.cap && need <= v->load_len.cap &&
        need <= v->store_len.cap)
        return 0;
    if (grow((void **)&v->mflags.p, &v->mflags.cap, need, 4) < 0 ||
        grow((void **)&v->mbytes.p, &v->mbytes.cap, need, 4) < 0 ||
        grow((void **)&v->akind.p, &v->akind.cap, need, 4) < 0 ||
        grow((void **)&v->mexec.p, &v->mexec.cap, need, 8) < 0 ||
        grow((void **)&v->abase.p, &v->abase.cap, need, 8) < 0 ||
        grow((void **)&v->load_len.p, &v->load_len.cap, need, 4) < 0 ||
        grow((void **)&v->store_len.p, &v->store_len.cap, need, 4) < 0) {
        rec_bad(g, "out of memory recording", wave);
        return -1;
    }
    return 0;
}

/* Hot path: called for every executed memory instruction. In steady state it
 * allocates nothing; a full-EXEC op reads the caller's address array in
 * place (no gather) and the stride test is a branch-free reduction. */
void trc_rec_mem(trc_wg_rec *g, uint32_t wave, uint32_t flags, uint32_t bytes_per_lane,
                 uint64_t exec, const uint64_t *addr, const void *load_data,
                 const void *store_data)
{
    wave_rec *v = wave_of(g, wave);
    if (!v) return;
    if (flags & ~TRC_MO_KNOWN) {
        rec_bad(g, "memory op with unknown flag bits", wave);
        return;
    }
    if (bytes_per_lane > TRC_MAX_BYTES_PER_LANE) {
        rec_bad(g, "memory op with more than 4096 bytes per lane", wave);
        return;
    }
    uint64_t buf[64];
    const uint64_t *a;
    uint32_t n;
    if (exec == ~0ull) {
        a = addr;
        n = 64;
    } else {
        n = 0;
        for (uint64_t m = exec; m; m &= m - 1) buf[n++] = addr[__builtin_ctzll(m)];
        a = buf;
    }
    if (reserve_mem_op(g, wave, v) < 0) return;
    size_t j = v->mflags.n;
    v->mflags.p[j] = flags;
    v->mbytes.p[j] = bytes_per_lane;
    v->mexec.p[j] = exec;
    uint64_t base = n ? a[0] : v->last_base;
    v->abase.p[j] = (int64_t)(base - v->last_base);
    v->last_base = base;
    uint32_t kind = GTRACE__ADDR_KIND__ADDR_STRIDED;
    if (n >= 2) {
        uint64_t s = a[1] - a[0], diff = 0;
        uint32_t k = 2;
#ifdef __SSE2__
        /* two lanes per step: (a[k] - a[k-1]) ^ s accumulated with OR */
        __m128i vs = _mm_set1_epi64x((long long)s), acc = _mm_setzero_si128();
        for (; k + 2 <= n; k += 2) {
            __m128i cur = _mm_loadu_si128((const __m128i *)(a + k));
            __m128i prev = _mm_loadu_si128((const __m128i *)(a + k - 1));
            acc = _mm_or_si128(acc, _mm_xor_si128(_mm_sub_epi64(cur, prev), vs));
        }
        uint64_t lo = (uint64_t)_mm_cvtsi128_si64(acc);
        uint64_t hi = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(acc, acc));
        diff = lo | hi;
#endif
        for (; k < n; k++) diff |= (a[k] - a[k - 1]) ^ s;
        if (diff == 0) {
            PUSH(g, wave, v->astride, (int64_t)s);
        } else {
            kind = GTRACE__ADDR_KIND__ADDR_DELTAS;
            if (v->adelta.n + n > v->adelta.cap &&
                grow((void **)&v->adelta.p, &v->adelta.cap, v->adelta.n + n, 8) < 0) {
                rec_bad(g, "out of memory recording addresses", wave);
                return;
            }
            int64_t *d = v->adelta.p + v->adelta.n;
            for (uint32_t k = 1; k < n; k++) d[k - 1] = (int64_t)(a[k] - a[k - 1]);
            v->adelta.n += n - 1;
        }
    }
    v->akind.p[j] = kind;
    uint64_t ll = load_data ? trc_mo_load_len(flags, n, bytes_per_lane) : 0;
    uint64_t sl = store_data ? trc_mo_store_len(flags, n, bytes_per_lane) : 0;
    v->load_len.p[j] = (uint32_t)ll;
    v->store_len.p[j] = (uint32_t)sl;
    size_t nn = j + 1;
    v->mflags.n = v->mbytes.n = v->mexec.n = v->abase.n = v->akind.n = nn;
    v->load_len.n = v->store_len.n = nn;
    if (ll && append_bytes(g, wave, &v->load, load_data, ll) < 0) return;
    if (sl && append_bytes(g, wave, &v->store, store_data, sl) < 0) return;
}

void trc_rec_wave_end(trc_wg_rec *g, uint32_t wave, uint64_t n_instr)
{
    wave_rec *v = wave_of(g, wave);
    if (!v) return;
    if (v->ended) {
        rec_bad(g, "wave ended twice", wave);
        return;
    }
    v->n_instr = n_instr;
    v->ended = 1;
}

/* ---- direct protobuf encoding of the workgroup messages --------------------
 *
 * Workgroup and WorkgroupData are encoded here by hand instead of through
 * protobuf-c's descriptor-driven packer (which cost ~10% of recording time):
 * the output is ordinary proto3 wire format for gtrace.proto (fields in
 * number order, zero scalars and empty repeated fields omitted, repeated
 * scalars packed), decoded by the reader with protobuf-c as before.
 * Capacity: callers reserve an upper bound first (enc_bound_*), so the put_*
 * helpers never check. Length-delimited submessages are written with a
 * 5-byte length hole that is closed up afterwards (sizes < 2^35). */

static inline uint8_t *put_varint(uint8_t *q, uint64_t v)
{
    while (v >= 0x80) {
        *q++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *q++ = (uint8_t)v;
    return q;
}
static inline uint8_t *put_tag(uint8_t *q, uint32_t field, uint32_t wt)
{
    return put_varint(q, (uint64_t)field << 3 | wt);
}
static inline uint8_t *put_u64(uint8_t *q, uint32_t field, uint64_t v)
{
    return v ? put_varint(put_tag(q, field, 0), v) : q;
}
static inline uint8_t *put_bytes(uint8_t *q, uint32_t field, const void *b, size_t n)
{
    if (!n) return q;
    q = put_varint(put_tag(q, field, 2), n);
    memcpy(q, b, n);
    return q + n;
}
/* Opens a length-delimited field: returns where its body starts. */
static inline uint8_t *len_open(uint8_t *q, uint32_t field, uint8_t **hole)
{
    q = put_tag(q, field, 2);
    *hole = q;
    return q + 5;
}
/* Closes it: writes the body length into the hole and moves the body down. */
static inline uint8_t *len_close(uint8_t *hole, uint8_t *end)
{
    size_t len = (size_t)(end - (hole + 5));
    uint8_t tmp[10];
    size_t k = (size_t)(put_varint(tmp, len) - tmp);
    memmove(hole + k, hole + 5, len);
    memcpy(hole, tmp, k);
    return hole + k + len;
}
#define PUT_PACKED(q, field, arr, n, ENC)                           \
    do {                                                            \
        if (n) {                                                    \
            uint8_t *hole_;                                         \
            uint8_t *b_ = len_open(q, field, &hole_);               \
            for (size_t i_ = 0; i_ < (n); i_++) b_ = ENC(b_, (arr)[i_]); \
            q = len_close(hole_, b_);                               \
        }                                                           \
    } while (0)
static inline uint8_t *enc_varint(uint8_t *q, uint64_t v) { return put_varint(q, v); }
static inline uint8_t *enc_sint(uint8_t *q, int64_t v)
{
    return put_varint(q, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}
static inline uint8_t *enc_fixed64(uint8_t *q, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(q, &v, 8);
#else
    trc_put_le64(q, v);
#endif
    return q + 8;
}

/* Upper bound of the encoded Workgroup / WorkgroupData sizes. */
static size_t enc_bound_wg(const trc_wg_rec *g)
{
    size_t b = 64;
    for (uint32_t i = 0; i < g->n_waves; i++) {
        const wave_rec *v = &g->w[i];
        b += 128 + v->branch.n +
             10 * (v->indirect.n + 2 * v->exec_val.n + 5 * v->mflags.n + v->astride.n + v->adelta.n);
    }
    return b;
}
static size_t enc_bound_wd(const trc_wg_rec *g)
{
    size_t b = 64;
    for (uint32_t i = 0; i < g->n_waves; i++) {
        const wave_rec *v = &g->w[i];
        b += 64 + 10 * 2 * v->mflags.n + v->load.n + v->store.n;
    }
    return b;
}

static uint8_t *enc_wg_id(uint8_t *q, const uint32_t id[3])
{
    uint8_t *hole;
    uint8_t *b = len_open(q, 2, &hole);
    for (int i = 0; i < 3; i++) b = put_varint(b, id[i]);
    return len_close(hole, b);
}

/* gtrace.Workgroup with its Waves. */
static uint8_t *enc_workgroup(uint8_t *q, const trc_wg_rec *g)
{
    q = put_u64(q, 1, g->kernel_id);
    q = enc_wg_id(q, g->wg_id);
    q = put_u64(q, 3, g->n_waves);
    for (uint32_t i = 0; i < g->n_waves; i++) {
        const wave_rec *v = &g->w[i];
        uint8_t *hole;
        uint8_t *b = len_open(q, 4, &hole);
        b = put_u64(b, 1, i);
        b = put_u64(b, 2, v->n_instr);
        b = put_u64(b, 3, v->n_branch);
        b = put_bytes(b, 4, v->branch.p, v->branch.n);
        PUT_PACKED(b, 5, v->indirect.p, v->indirect.n, enc_varint);
        PUT_PACKED(b, 6, v->exec_at_delta.p, v->exec_at_delta.n, enc_varint);
        PUT_PACKED(b, 7, v->exec_val.p, v->exec_val.n, enc_fixed64);
        PUT_PACKED(b, 8, v->mflags.p, v->mflags.n, enc_varint);
        PUT_PACKED(b, 9, v->mbytes.p, v->mbytes.n, enc_varint);
        PUT_PACKED(b, 10, v->mexec.p, v->mexec.n, enc_fixed64);
        PUT_PACKED(b, 11, v->akind.p, v->akind.n, enc_varint);
        PUT_PACKED(b, 12, v->abase.p, v->abase.n, enc_sint);
        PUT_PACKED(b, 13, v->astride.p, v->astride.n, enc_sint);
        PUT_PACKED(b, 14, v->adelta.p, v->adelta.n, enc_sint);
        q = len_close(hole, b);
    }
    return q;
}

static inline size_t vlen(uint64_t v)
{
    size_t k = 1;
    while (v >= 0x80) {
        v >>= 7;
        k++;
    }
    return k;
}
/* Encoded size of a packed varint field (0 when empty). */
static size_t packed_u32_size(const uint32_t *a, size_t n)
{
    if (!n) return 0;
    size_t l = 0;
    for (size_t i = 0; i < n; i++) l += vlen(a[i]);
    return 1 + vlen(l) + l;
}

/* gtrace.WorkgroupData; data bytes go in the shuf4 fields, copied here in
 * plain order with their ranges noted in j->seg (j->seg has room for
 * 2 * n_waves entries) and shuffled later by shuffle_segments().
 * WaveData sizes are computed exactly first so the data bytes are written
 * once, in place (no length hole to close). */
static uint8_t *enc_workgroup_data(uint8_t *q, const trc_wg_rec *g, wjob *j)
{
    uint8_t *q0 = q;
    j->nseg = 0;
    q = put_u64(q, 1, g->kernel_id);
    q = enc_wg_id(q, g->wg_id);
    for (uint32_t i = 0; i < g->n_waves; i++) {
        const wave_rec *v = &g->w[i];
        size_t sz = (i ? 1 + vlen(i) : 0) + packed_u32_size(v->load_len.p, v->load_len.n) +
                    packed_u32_size(v->store_len.p, v->store_len.n) +
                    (v->load.n ? 1 + vlen(v->load.n) + v->load.n : 0) +
                    (v->store.n ? 1 + vlen(v->store.n) + v->store.n : 0);
        uint8_t *b = put_varint(put_tag(q, 3, 2), sz);
        uint8_t *body = b;
        b = put_u64(b, 1, i);
        PUT_PACKED(b, 2, v->load_len.p, v->load_len.n, enc_varint);
        PUT_PACKED(b, 3, v->store_len.p, v->store_len.n, enc_varint);
        if (v->load.n) {
            b = put_varint(put_tag(b, 6, 2), v->load.n);
            memcpy(b, v->load.p, v->load.n);
            j->seg[j->nseg++] = (wseg){(size_t)(b - q0), v->load.n};
            b += v->load.n;
        }
        if (v->store.n) {
            b = put_varint(put_tag(b, 7, 2), v->store.n);
            memcpy(b, v->store.p, v->store.n);
            j->seg[j->nseg++] = (wseg){(size_t)(b - q0), v->store.n};
            b += v->store.n;
        }
        assert((size_t)(b - body) == sz);
        q = b;
    }
    return q;
}

/* Compresses pack->p[0..pack->n) into z. Returns 0 or -1 with *why. */
static int compress_into(ZSTD_CCtx *c, const u8v *pack, u8v *z, const char **why)
{
    size_t bound = ZSTD_compressBound(pack->n);
    if (grow((void **)&z->p, &z->cap, bound, 1) < 0) {
        *why = "out of memory compressing a record";
        return -1;
    }
    size_t zn = ZSTD_compress2(c, z->p, z->cap, pack->p, pack->n);
    if (ZSTD_isError(zn)) {
        *why = ZSTD_getErrorName(zn);
        return -1;
    }
    z->n = zn;
    return 0;
}

/* Compresses one encoded workgroup (rec = Workgroup, dat = WorkgroupData)
 * and appends its two chunks; the tail of trc_wg_commit, run either in the
 * committing thread or in a background compressor. Returns 0 or -1. */
/* Copies src to dst (same length), byte-plane shuffling the ranges in seg. */
static void shuffle_segments(uint8_t *dst, const uint8_t *src, size_t n, const wseg *seg,
                             size_t nseg)
{
    size_t at = 0;
    for (size_t i = 0; i < nseg; i++) {
        memcpy(dst + at, src + at, seg[i].off - at);
        trc_shuf4(dst + seg[i].off, src + seg[i].off, seg[i].len);
        at = seg[i].off + seg[i].len;
    }
    memcpy(dst + at, src + at, n - at);
}

static int finish_wg(trc_writer *w, const wjob *j, ZSTD_CCtx *c_rec, ZSTD_CCtx *c_dat, u8v *z1,
                     u8v *z2, u8v *sh)
{
    const char *why = NULL;
    if (grow((void **)&sh->p, &sh->cap, j->dat.n + 1, 1) < 0) {
        wfail_locked(w, "%s", "cannot encode workgroup: out of memory");
        return -1;
    }
    shuffle_segments(sh->p, j->dat.p, j->dat.n, j->seg, j->nseg);
    sh->n = j->dat.n;
    if (compress_into(c_rec, &j->rec, z1, &why) < 0 || compress_into(c_dat, sh, z2, &why) < 0) {
        wfail_locked(w, "cannot encode workgroup: %s", why);
        return -1;
    }
    pthread_mutex_lock(&w->mu);
    int rc = -1;
    wkernel *k = j->kernel_id < w->nk ? &w->k[j->kernel_id] : NULL;
    if (w->failed) {
        /* first error already recorded */
    } else if (!k) {
        wfail(w, "workgroup committed for kernel %u that was never begun", j->kernel_id);
    } else if (k->ended) {
        wfail(w, "workgroup committed for kernel %u after its end", j->kernel_id);
    } else if (grow((void **)&k->wg_off.p, &k->wg_off.cap, k->wg_off.n + 1, 8) < 0 ||
               grow((void **)&k->data_off.p, &k->data_off.cap, k->data_off.n + 1, 8) < 0) {
        wfail(w, "%s", "out of memory (workgroup index)");
    } else {
        uint64_t o1, o2;
        if (append_chunk(w, TRC_CHUNK_WORKGROUP, z1->p, z1->n, &o1) == 0 &&
            append_chunk(w, TRC_CHUNK_WG_DATA, z2->p, z2->n, &o2) == 0) {
            uint64_t key;
            if (k->wg_key.n == k->wg_off.n && wg_key_of(j->wg_id, &key) &&
                grow((void **)&k->wg_key.p, &k->wg_key.cap, k->wg_key.n + 1, 8) == 0)
                k->wg_key.p[k->wg_key.n++] = key;
            k->wg_off.p[k->wg_off.n++] = o1;
            k->data_off.p[k->data_off.n++] = o2;
            k->n_instr += j->n_instr;
            k->n_mem += j->n_mem;
            k->n_waves += j->n_waves;
            k->wg_bytes += TRC_CHUNK_HDR_SIZE + z1->n;
            k->data_bytes += TRC_CHUNK_HDR_SIZE + z2->n;
            rc = 0;
        }
    }
    pthread_mutex_unlock(&w->mu);
    return rc;
}

static int encode_wg(trc_wg_rec *g, wjob *j);

/* Background compressor: takes recorded workgroups from the queue, encodes,
 * compresses and appends them with its own zstd contexts and buffers. */
static void *bg_main(void *arg)
{
    trc_writer *w = arg;
    ZSTD_CCtx *c_rec = new_cctx(TRC_ZSTD_LEVEL_REC), *c_dat = new_cctx(TRC_ZSTD_LEVEL_DATA);
    u8v z1 = {0}, z2 = {0}, sh = {0};
    if (!c_rec || !c_dat) wfail_locked(w, "%s", "cannot create zstd context for the background compressor");
    pthread_mutex_lock(&w->qmu);
    for (;;) {
        while (!w->q_head && !w->q_stop) pthread_cond_wait(&w->q_cv_job, &w->qmu);
        if (!w->q_head) break; /* stopping and drained */
        wjob *j = w->q_head;
        w->q_head = j->next;
        if (!w->q_head) w->q_tail = NULL;
        w->q_busy++;
        pthread_mutex_unlock(&w->qmu);
        if (c_rec && c_dat && !w->failed) {
            trc_wg_rec view; /* the fields the encoder reads */
            memset(&view, 0, sizeof view);
            view.kernel_id = j->kernel_id;
            memcpy(view.wg_id, j->wg_id, sizeof view.wg_id);
            view.n_waves = j->n_waves;
            view.w = j->w;
            if (encode_wg(&view, j) < 0)
                wfail_locked(w, "%s", "cannot encode workgroup: out of memory");
            else
                finish_wg(w, j, c_rec, c_dat, &z1, &z2, &sh);
        }
        pthread_mutex_lock(&w->qmu);
        w->q_busy--;
        j->next = w->q_free;
        w->q_free = j;
        pthread_cond_signal(&w->q_cv_free);
        if (!w->q_head && !w->q_busy) pthread_cond_broadcast(&w->q_cv_idle);
    }
    pthread_mutex_unlock(&w->qmu);
    ZSTD_freeCCtx(c_rec);
    ZSTD_freeCCtx(c_dat);
    free(z1.p);
    free(z2.p);
    free(sh.p);
    return NULL;
}

/* Waits until every queued workgroup has been appended (or dropped after an
 * error). */
static void bg_drain(trc_writer *w)
{
    if (!w->n_bg) return;
    pthread_mutex_lock(&w->qmu);
    while (w->q_head || w->q_busy) pthread_cond_wait(&w->q_cv_idle, &w->qmu);
    pthread_mutex_unlock(&w->qmu);
}

/* Starts the background compressors: `req` of them, or with req < 0 one per
 * spare CPU; at most TRC_BG_THREADS; with none, trc_wg_commit compresses
 * inline. A failure to start threads just means fewer of them. */
static void bg_start(trc_writer *w, int req)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned want = req >= 0 ? (unsigned)req : cpus > 1 ? (unsigned)(cpus - 1) : 0;
    if (want > TRC_BG_THREADS) want = TRC_BG_THREADS;
    for (unsigned i = 0; i < TRC_BG_JOBS && want; i++) {
        wjob *j = calloc(1, sizeof *j);
        if (!j) break;
        j->next = w->q_free;
        w->q_free = j;
    }
    if (!w->q_free) return;
    for (unsigned i = 0; i < want; i++) {
        if (pthread_create(&w->bg[i], NULL, bg_main, w) != 0) break;
        w->n_bg++;
    }
}

static void bg_stop(trc_writer *w)
{
    pthread_mutex_lock(&w->qmu);
    w->q_stop = 1;
    pthread_cond_broadcast(&w->q_cv_job);
    pthread_mutex_unlock(&w->qmu);
    for (unsigned i = 0; i < w->n_bg; i++) pthread_join(w->bg[i], NULL);
    w->n_bg = 0;
    while (w->q_free) {
        wjob *j = w->q_free;
        w->q_free = j->next;
        free(j->rec.p);
        free(j->dat.p);
        free(j->seg);
        free_waves(j->w, j->cap_waves);
        free(j);
    }
}

/* Encodes the workgroup into j's buffers. Returns 0 or -1 (out of memory). */
static int encode_wg(trc_wg_rec *g, wjob *j)
{
    size_t b1 = enc_bound_wg(g), b2 = enc_bound_wd(g);
    if (grow((void **)&j->rec.p, &j->rec.cap, b1 + 1, 1) < 0 ||
        grow((void **)&j->dat.p, &j->dat.cap, b2 + 1, 1) < 0 ||
        grow((void **)&j->seg, &j->segcap, 2 * (size_t)g->n_waves + 1, sizeof *j->seg) < 0)
        return -1;
    j->rec.n = (size_t)(enc_workgroup(j->rec.p, g) - j->rec.p);
    j->dat.n = (size_t)(enc_workgroup_data(j->dat.p, g, j) - j->dat.p);
    j->kernel_id = g->kernel_id;
    j->n_waves = g->n_waves;
    return 0;
}

int trc_wg_commit(trc_writer *w, trc_wg_rec *g)
{
    if (fail_fast(w)) return -1;
    if (g->bad) {
        wfail_locked(w, "%s", g->bad_msg);
        return -1;
    }
    uint64_t n_instr = 0, n_mem = 0;
    for (uint32_t i = 0; i < g->n_waves; i++) {
        wave_rec *v = &g->w[i];
        if (!v->ended) {
            rec_bad(g, "workgroup committed before all its waves ended", i);
            wfail_locked(w, "%s", g->bad_msg);
            return -1;
        }
        n_instr += v->n_instr;
        n_mem += v->mflags.n;
    }
    if (!w->n_bg) { /* inline: encode and compress in this thread */
        if (encode_wg(g, &g->job) < 0) {
            wfail_locked(w, "%s", "cannot encode workgroup: out of memory");
            return -1;
        }
        g->job.n_instr = n_instr;
        g->job.n_mem = n_mem;
        return finish_wg(w, &g->job, g->cctx, g->cctx_data, &g->z1, &g->z2, &g->sh);
    }
    /* Background: take a free job (bounded pool: wait for one), swap the
     * recorded waves into it, queue it. An error in encoding, compressing or
     * writing it is reported by the next writer call (every call fails fast
     * after the first error) and at the latest by
     * trc_writer_end_kernel/trc_writer_close. */
    pthread_mutex_lock(&w->qmu);
    while (!w->q_free) pthread_cond_wait(&w->q_cv_free, &w->qmu);
    wjob *j = w->q_free;
    w->q_free = j->next;
    pthread_mutex_unlock(&w->qmu);
    wave_rec *tw = j->w;
    uint32_t tc = j->cap_waves;
    j->w = g->w;
    j->cap_waves = g->cap_waves;
    j->n_waves = g->n_waves;
    j->kernel_id = g->kernel_id;
    memcpy(j->wg_id, g->wg_id, sizeof j->wg_id);
    j->n_instr = n_instr;
    j->n_mem = n_mem;
    j->next = NULL;
    g->w = tw;
    g->cap_waves = tc;
    g->n_waves = 0;
    pthread_mutex_lock(&w->qmu);
    if (w->q_tail) w->q_tail->next = j;
    else w->q_head = j;
    w->q_tail = j;
    pthread_cond_signal(&w->q_cv_job);
    pthread_mutex_unlock(&w->qmu);
    return w->failed ? -1 : 0;
}
