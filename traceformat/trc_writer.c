/*
 * trc_writer.c - writes .gtrace files (format: docs/trace-format.md).
 *
 * The file is a file header, a sequence of chunks (each one zstd frame with
 * content checksum holding one protobuf message), an index chunk and a
 * fixed-size trailer. Chunks are appended at w->pos under w->mu; everything
 * expensive (protobuf packing, zstd compression) happens before the lock in
 * the calling thread with that thread's own buffers and ZSTD_CCtx.
 *
 * Invariants:
 *  - w->pos is the file offset where the next chunk goes; every byte before
 *    it was written successfully (else w->failed is set).
 *  - after the first error (w->failed) every call fails fast with the first
 *    message; nothing is written afterwards.
 *  - a trc_wg_rec is used by one thread; in steady state (buffers grown to
 *    the workgroup's size) recording and committing allocate nothing except
 *    what protobuf-c/zstd need (zstd reuses the CCtx; packing uses our
 *    buffers).
 */
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

typedef struct wkernel {
    uint32_t launch_event;
    u64v wg_off, data_off;
    uint64_t n_instr, n_mem, wg_bytes, data_bytes, n_waves;
    int ended;
} wkernel;

struct trc_writer {
    char *path;
    int fd;
    int closed;
    pthread_mutex_t mu;
    uint64_t pos;
    int failed;
    char err[512];
    uint64_t header_off;
    u64v code_off, event_off;
    wkernel *k;
    size_t nk, capk;
    /* event-side scratch (event calls come from one thread at a time) */
    ZSTD_CCtx *cctx;
    u8v pack, z;
};

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

/* Writes all of buf at w->pos; handles short writes and EINTR. Caller holds
 * w->mu (or is single-threaded). */
static int write_all(trc_writer *w, const void *buf, size_t len)
{
    const uint8_t *b = buf;
    while (len) {
        ssize_t k = write(w->fd, b, len > (1u << 30) ? (1u << 30) : len);
        if (k < 0) {
            if (errno == EINTR) continue;
            wfail(w, "write error at byte %llu: %s", (unsigned long long)w->pos, strerror(errno));
            return -1;
        }
        if (k == 0) {
            wfail(w, "write error at byte %llu: wrote nothing", (unsigned long long)w->pos);
            return -1;
        }
        b += k;
        len -= (size_t)k;
        w->pos += (uint64_t)k;
    }
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

static ZSTD_CCtx *new_cctx(void)
{
    ZSTD_CCtx *c = ZSTD_createCCtx();
    if (!c) return NULL;
    if (ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, TRC_ZSTD_LEVEL)) ||
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
static int write_msg(trc_writer *w, uint32_t type, const ProtobufCMessage *msg, uint64_t *off)
{
    const char *why = NULL;
    if (!pack_compress(w->cctx, msg, &w->pack, &w->z, &why)) {
        wfail_locked(w, "cannot encode record: %s", why);
        return -1;
    }
    pthread_mutex_lock(&w->mu);
    int rc = append_chunk(w, type, w->z.p, w->z.n, off);
    pthread_mutex_unlock(&w->mu);
    return rc;
}

static void copy_str(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = 0;
}

trc_writer *trc_writer_open(const char *path, const trc_header_info *h, char *err, size_t errlen)
{
    trc_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        if (err && errlen) snprintf(err, errlen, "%s: out of memory", path);
        free(w);
        return NULL;
    }
    pthread_mutex_init(&w->mu, NULL);
    w->fd = -1;
    w->cctx = new_cctx();
    if (!w->cctx) {
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
    trc_put_le32(fh + 12, TRC_FORMAT_MINOR);

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
    m.format_minor = TRC_FORMAT_MINOR;
    m.producer = producer;
    m.producer_version = pver;
    m.isa_target = isa;
    m.device_count = h->device_count;
    m.command_line = cmd;

    if (write_all(w, fh, sizeof fh) < 0 ||
        write_msg(w, TRC_CHUNK_HEADER, &m.base, &w->header_off) < 0) {
        if (err && errlen) snprintf(err, errlen, "%s", w->err);
        trc_writer_destroy(w);
        return NULL;
    }
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
    if (ev->kind == TRC_EV_COPY && ev->data) {
        m.has_data = 1;
        m.data.data = (uint8_t *)ev->data;
        m.data.len = ev->size;
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
    if (write_msg(w, TRC_CHUNK_EVENT, &m.base, &off) < 0) return -1;
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
    pthread_mutex_lock(&w->mu);
    int rc = 0;
    if (kernel_id >= w->nk) {
        wfail(w, "end of kernel %u that was never begun", kernel_id);
        rc = -1;
    } else if (w->k[kernel_id].ended) {
        wfail(w, "kernel %u ended twice", kernel_id);
        rc = -1;
    } else {
        w->k[kernel_id].ended = 1;
    }
    pthread_mutex_unlock(&w->mu);
    return rc;
}

int trc_writer_close(trc_writer *w)
{
    if (!w) return -1;
    if (w->closed) return w->failed ? -1 : 0;
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
                write_all(w, t, sizeof t);
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
        free(w->k[i].data_off.p);
    }
    free(w->k);
    free(w->code_off.p);
    free(w->event_off.p);
    free(w->pack.p);
    free(w->z.p);
    ZSTD_freeCCtx(w->cctx);
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
    Gtrace__Wave *pw;
    Gtrace__Wave **ppw;
    Gtrace__WaveData *pd;
    Gtrace__WaveData **ppd;
    ZSTD_CCtx *cctx;
    u8v pack, z1, z2;
};

trc_wg_rec *trc_wg_rec_create(void)
{
    trc_wg_rec *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->cctx = new_cctx();
    if (!g->cctx) {
        free(g);
        return NULL;
    }
    return g;
}

void trc_wg_rec_destroy(trc_wg_rec *g)
{
    if (!g) return;
    for (uint32_t i = 0; i < g->cap_waves; i++) {
        wave_rec *v = &g->w[i];
        free(v->branch.p); free(v->indirect.p); free(v->exec_at_delta.p); free(v->exec_val.p);
        free(v->mflags.p); free(v->mbytes.p); free(v->akind.p); free(v->mexec.p);
        free(v->abase.p); free(v->astride.p); free(v->adelta.p);
        free(v->load_len.p); free(v->store_len.p); free(v->load.p); free(v->store.p);
    }
    free(g->w);
    free(g->pw);
    free(g->ppw);
    free(g->pd);
    free(g->ppd);
    ZSTD_freeCCtx(g->cctx);
    free(g->pack.p);
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
        Gtrace__Wave *pw = nw ? realloc(g->pw, n_waves * sizeof *pw) : NULL;
        if (pw) g->pw = pw;
        Gtrace__Wave **ppw = pw ? realloc(g->ppw, n_waves * sizeof *ppw) : NULL;
        if (ppw) g->ppw = ppw;
        Gtrace__WaveData *pd = ppw ? realloc(g->pd, n_waves * sizeof *pd) : NULL;
        if (pd) g->pd = pd;
        Gtrace__WaveData **ppd = pd ? realloc(g->ppd, n_waves * sizeof *ppd) : NULL;
        if (ppd) g->ppd = ppd;
        if (nw) {
            g->w = nw;
            memset(nw + g->cap_waves, 0, (n_waves - g->cap_waves) * sizeof *nw);
            if (ppd) g->cap_waves = n_waves;
        }
        if (!ppd) {
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
    uint64_t a[64];
    uint32_t n = 0;
    for (uint64_t m = exec; m; m &= m - 1) a[n++] = addr[__builtin_ctzll(m)];

    PUSH(g, wave, v->mflags, flags);
    PUSH(g, wave, v->mbytes, bytes_per_lane);
    PUSH(g, wave, v->mexec, exec);
    uint64_t base = n ? a[0] : v->last_base;
    PUSH(g, wave, v->abase, (int64_t)(base - v->last_base));
    v->last_base = base;
    if (n >= 2) {
        uint64_t s = a[1] - a[0];
        uint32_t k = 2;
        while (k < n && a[k] - a[k - 1] == s) k++;
        if (k == n) {
            PUSH(g, wave, v->akind, GTRACE__ADDR_KIND__ADDR_STRIDED);
            PUSH(g, wave, v->astride, (int64_t)s);
        } else {
            PUSH(g, wave, v->akind, GTRACE__ADDR_KIND__ADDR_DELTAS);
            if (v->adelta.n + n > v->adelta.cap &&
                grow((void **)&v->adelta.p, &v->adelta.cap, v->adelta.n + n, 8) < 0) {
                rec_bad(g, "out of memory recording addresses", wave);
                return;
            }
            for (uint32_t i = 1; i < n; i++) v->adelta.p[v->adelta.n++] = (int64_t)(a[i] - a[i - 1]);
        }
    } else {
        PUSH(g, wave, v->akind, GTRACE__ADDR_KIND__ADDR_STRIDED);
    }
    uint64_t ll = load_data ? trc_mo_load_len(flags, n, bytes_per_lane) : 0;
    uint64_t sl = store_data ? trc_mo_store_len(flags, n, bytes_per_lane) : 0;
    PUSH(g, wave, v->load_len, (uint32_t)ll);
    PUSH(g, wave, v->store_len, (uint32_t)sl);
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
        Gtrace__Wave m = GTRACE__WAVE__INIT;
        m.wave_in_wg = i;
        m.n_instr = v->n_instr;
        m.n_branch = v->n_branch;
        m.branch_bits.data = v->branch.p;
        m.branch_bits.len = v->branch.n;
        m.n_indirect_target = v->indirect.n;
        m.indirect_target = v->indirect.p;
        m.n_exec_at_delta = v->exec_at_delta.n;
        m.exec_at_delta = v->exec_at_delta.p;
        m.n_exec_val = v->exec_val.n;
        m.exec_val = v->exec_val.p;
        m.n_mem_flags = v->mflags.n;
        m.mem_flags = v->mflags.p;
        m.n_mem_bytes = v->mbytes.n;
        m.mem_bytes = v->mbytes.p;
        m.n_mem_exec = v->mexec.n;
        m.mem_exec = v->mexec.p;
        m.n_addr_kind = v->akind.n;
        m.addr_kind = v->akind.p;
        m.n_addr_base_delta = v->abase.n;
        m.addr_base_delta = v->abase.p;
        m.n_addr_stride = v->astride.n;
        m.addr_stride = v->astride.p;
        m.n_addr_delta = v->adelta.n;
        m.addr_delta = v->adelta.p;
        g->pw[i] = m;
        g->ppw[i] = &g->pw[i];

        Gtrace__WaveData d = GTRACE__WAVE_DATA__INIT;
        d.wave_in_wg = i;
        d.n_load_len = v->load_len.n;
        d.load_len = v->load_len.p;
        d.n_store_len = v->store_len.n;
        d.store_len = v->store_len.p;
        d.load_data.data = v->load.p;
        d.load_data.len = v->load.n;
        d.store_data.data = v->store.p;
        d.store_data.len = v->store.n;
        g->pd[i] = d;
        g->ppd[i] = &g->pd[i];
    }
    Gtrace__Workgroup wg = GTRACE__WORKGROUP__INIT;
    wg.kernel_id = g->kernel_id;
    wg.n_wg_id = 3;
    wg.wg_id = g->wg_id;
    wg.wave_count = g->n_waves;
    wg.n_waves = g->n_waves;
    wg.waves = g->ppw;
    Gtrace__WorkgroupData wd = GTRACE__WORKGROUP_DATA__INIT;
    wd.kernel_id = g->kernel_id;
    wd.n_wg_id = 3;
    wd.wg_id = g->wg_id;
    wd.n_waves = g->n_waves;
    wd.waves = g->ppd;

    const char *why = NULL;
    if (!pack_compress(g->cctx, &wg.base, &g->pack, &g->z1, &why) ||
        !pack_compress(g->cctx, &wd.base, &g->pack, &g->z2, &why)) {
        wfail_locked(w, "cannot encode workgroup: %s", why);
        return -1;
    }

    pthread_mutex_lock(&w->mu);
    int rc = -1;
    wkernel *k = g->kernel_id < w->nk ? &w->k[g->kernel_id] : NULL;
    if (w->failed) {
        /* first error already recorded */
    } else if (!k) {
        wfail(w, "workgroup committed for kernel %u that was never begun", g->kernel_id);
    } else if (k->ended) {
        wfail(w, "workgroup committed for kernel %u after its end", g->kernel_id);
    } else if (grow((void **)&k->wg_off.p, &k->wg_off.cap, k->wg_off.n + 1, 8) < 0 ||
               grow((void **)&k->data_off.p, &k->data_off.cap, k->data_off.n + 1, 8) < 0) {
        wfail(w, "%s", "out of memory (workgroup index)");
    } else {
        uint64_t o1, o2;
        if (append_chunk(w, TRC_CHUNK_WORKGROUP, g->z1.p, g->z1.n, &o1) == 0 &&
            append_chunk(w, TRC_CHUNK_WG_DATA, g->z2.p, g->z2.n, &o2) == 0) {
            k->wg_off.p[k->wg_off.n++] = o1;
            k->data_off.p[k->data_off.n++] = o2;
            k->n_instr += n_instr;
            k->n_mem += n_mem;
            k->n_waves += g->n_waves;
            k->wg_bytes += TRC_CHUNK_HDR_SIZE + g->z1.n;
            k->data_bytes += TRC_CHUNK_HDR_SIZE + g->z2.n;
            rc = 0;
        }
    }
    pthread_mutex_unlock(&w->mu);
    return rc;
}
