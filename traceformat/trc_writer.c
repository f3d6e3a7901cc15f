/*
 * trc_writer.c - writes .gtrace files, format 2.0 (docs/trace-format.md): the
 * file, its chunks and the workgroup pipeline. Recording a workgroup is
 * trc_rec.c, encoding and compressing them trc_encode.c
 * (trc_writer_internal.h).
 *
 * The file is a file header, a sequence of chunks (each one zstd frame with
 * content checksum), an index chunk and a fixed-size trailer. Chunks are
 * appended at w->pos under w->mu.
 *
 * Workgroups: an emulator thread records a workgroup into its trc_wg_rec
 * and commits it: it encodes the workgroup (hand-written proto3 encoder,
 * data byte-plane shuffled in the same pass) into a `piece`, without any
 * lock; the piece joins its kernel's reorder list until every workgroup
 * before it in grid order has been committed; in-order pieces are gathered
 * into the kernel's open `batch`, which is sealed when its encoded records
 * reach TRC_FRAME_REC_BYTES or its data TRC_FRAME_DATA_BYTES (or at the
 * kernel's end). A sealed batch gets a global sequence number and goes to a
 * background compressor thread (or, with no spare CPU, is compressed by the
 * thread that sealed it), which streams its pieces through zstd into one
 * record frame and one data frame; compressed batches are appended strictly
 * in sequence order. Frame
 * boundaries therefore depend only on the recorded content, so a race-free
 * program gives the same bytes for any emulator thread count. At the
 * kernel's end its open batch is sealed and a kernel-end item queued behind
 * it; when the item's turn comes the appender writes the kernel-end chunk
 * (its KernelIndex) and flushes the write buffer, so a cut file keeps every
 * kernel whose end is in (trc_salvage). trc_writer_end_kernel waits only for
 * the previous kernel's end: compressing a kernel's last frames overlaps the
 * program's next steps (the next kernel). Host chunks (events, code objects)
 * written while sealed items are still waiting join the same sequence, so
 * they land where a writer that waited at every kernel end would put them:
 * the file does not depend on timing.
 *
 * Chunks are staged in a write buffer (w->wbuf, TRC_WBUF_SIZE bytes) and
 * written with one write() per buffer-full; the buffer is flushed when full,
 * after the header, at every kernel end and at close.
 *
 * Invariants:
 *  - w->pos is the file offset where the next chunk goes; every byte before
 *    it was written successfully or sits in w->wbuf (else w->failed is set);
 *    w->pos == w->flushed + w->wbuf.n.
 *  - after the first error (w->failed) every call fails fast with the first
 *    message; nothing is written afterwards.
 *  - a batch is on exactly one of: a kernel's open slot, the compress queue,
 *    a compressor's hands, the done list, the free list; w->inflight counts
 *    sealed frame batches not yet appended. Sequenced items (frame batches,
 *    kernel ends, queued host chunks: batch.kind) are appended in seq order;
 *    app_seq == next_seq when nothing sealed waits for the file.
 *  - memory: the reorder lists hold at most one piece per emulator thread
 *    beyond the oldest unfinished workgroup (workgroups are handed out in
 *    grid order); committers wait while more than TRC_MAX_INFLIGHT(n_bg)
 *    batches are sealed but not yet in the file.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <zstd.h>

#include "traceformat/gtrace.pb-c.h"
#include "traceformat/trc_himg.h"
#include "traceformat/trc_writer_internal.h"

/* ---- writer --------------------------------------------------------------- */

#define TRC_BG_THREADS 4u
/* Sealed batches allowed between the emulator and the file before commits
 * wait: enough to keep every compressor busy. */
#define TRC_MAX_INFLIGHT(nbg) (2u * (nbg) + 2u)

typedef struct wkernel {
    uint32_t launch_event;
    uint32_t grid[3];
    uint64_t n_lin;          /* workgroups in the grid */
    uint64_t next_lin;       /* lowest linear id not yet taken into a batch */
    piece *pending;          /* committed ahead of next_lin, sorted by lin */
    batch *open;
    u64v frame_off, dframe_off;
    u32v wg_frame, rec_off, rec_len, data_off, data_len;
    uint64_t n_instr, n_mem, wg_bytes, data_bytes, n_waves, raw_rec, raw_data;
    uint64_t end_off;        /* kernel-end chunk offset (0: not written) */
    int ended;
    /* 2.0 wave segments in the file (KernelIndex.seg_*) */
    u32v seg_wg, seg_wave;
    u64v seg_off, seg_doff;
    uint64_t seg_bytes;
    /* 2.4 store frames (KernelIndex.store_*): an offset per frame (0: none)
     * and a slice per workgroup, listed only when any_sto */
    u64v sframe_off;
    u32v sto_off, sto_len;
    uint64_t sto_bytes, raw_sto;
    int any_sto;
} wkernel;

struct trc_writer {
    char *path;
    uint64_t host_gap_ns;    /* trc_writer_host_gap, not yet carried by an event (event thread) */
    int fd;
    int closed;
    pthread_mutex_t mu;      /* everything below that is shared */
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
    /* the appender's (under mu): kernel-end chunks, built when their turn comes */
    ZSTD_CCtx *cz_end;
    u8v pack_end, z_end;
    uint64_t last_end_seq;   /* seq of the latest kernel-end item (0: none); under mu */
    size_t queued_host;      /* compressed bytes of host chunks waiting for their turn; under mu */
    uint64_t n_queued;       /* host chunks that waited (trc_writer_test_queued); under mu */
    int hold;                /* trc_writer_test_hold: compressors take no batch; under mu */
    ZSTD_CCtx *cz_rec, *cz_dat; /* frames compressed by the event thread (inline mode) */
    u8v pack, z;
    /* workgroup pipeline (see the top of the file); under mu */
    piece *p_free;
    batch *b_free, *q_head, *q_tail, *done;
    uint64_t next_seq, app_seq;
    unsigned inflight;
    pthread_cond_t cv_job, cv_space, cv_app;
    pthread_t bg[TRC_BG_THREADS];
    unsigned n_bg;
    int stop;
    size_t frame_rec_bytes, frame_data_bytes; /* batch sealing thresholds */
    /* 2.0 wave segments: recorders spill them (trc_writer_spill) to an
     * unlinked file beside the trace; append_ready copies them into the
     * trace with their workgroup, so the trace does not depend on the order
     * threads spilled in */
    size_t seg_rec_bytes, seg_data_bytes;
    int spill_fd;            /* -1 until the first segment */
    uint64_t spill_pos;      /* end of the reserved spill bytes; under mu */
    u8v spill_buf;           /* append_ready's copy buffer; under mu */
    /* 2.6 host image (trc_himg.h), changed by the event thread only while
     * no kernel is open (kopen, under mu); its copies' bytes are kept here */
    trc_himg *himg;
    int himg_off;            /* atomic: 1 once it no longer matches (trc_writer_himg) */
    unsigned kopen;          /* kernels begun and not ended; under mu */
    struct himg_buf { uint8_t *p; size_t n; uint32_t refs; } *keep; /* copies' bytes, by tag */
    size_t n_keep, cap_keep, himg_bytes;
    uint32_t keep_free;      /* a slot of keep whose bytes were freed (UINT32_MAX: none) */
};

/* Bytes of copies the writer keeps for its host image at most (an estimate
 * of what a recording machine spares, 1 GiB); beyond, copies' bytes are
 * forgotten (loads from them keep their values). */
#define TRC_HIMG_MAX_BYTES ((size_t)1 << 30)

static void bg_start(trc_writer *w, int req);
static void bg_stop(trc_writer *w);

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


ZSTD_CCtx *trc_new_cctx(int level)
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

/* Compresses the packed message in pack into z (reused). Returns the
 * compressed size, or 0 with *why set. */
static size_t compress_packed(ZSTD_CCtx *c, const u8v *pack, u8v *z, const char **why)
{
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
    return compress_packed(c, pack, z, why);
}

/* Packs, compresses (level TRC_ZSTD_LEVEL) and appends one message at once:
 * the header at open, the index at close (nothing else waits then). */
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

static void append_ready(trc_writer *w);

/* A batch for a sequenced item (from the free list); NULL out of memory.
 * Caller holds w->mu. */
static batch *new_batch_locked(trc_writer *w, int kind)
{
    batch *b = w->b_free;
    if (b) w->b_free = b->next;
    else if (!(b = calloc(1, sizeof *b))) return NULL;
    b->next = NULL;
    b->kind = kind;
    return b;
}

/* Host chunks queued behind unwritten frames, in compressed bytes, beyond
 * which the event thread waits for the file to catch up (bounded memory
 * when a program copies much while the compressors are behind). */
#define TRC_MAX_QUEUED_HOST ((size_t)64 << 20)

/* Packs (msg; NULL: w->pack holds it packed already), compresses (c: the
 * event thread's context) and appends one host chunk in program order: at
 * once when nothing sealed before it is still waiting for the file, else as
 * the next item of the sequenced stream (the
 * appender writes it after everything sealed before it: the file is the
 * same either way). Its offset goes to offv->p[index]; returns the index
 * (offv->n before the call), or -1. Called from the event thread. */
static int64_t put_msg(trc_writer *w, ZSTD_CCtx *c, uint32_t type, const ProtobufCMessage *msg, u64v *offv)
{
    const char *why = NULL;
    if (!(msg ? pack_compress(c, msg, &w->pack, &w->z, &why) : compress_packed(c, &w->pack, &w->z, &why))) {
        wfail_locked(w, "cannot encode record: %s", why);
        return -1;
    }
    pthread_mutex_lock(&w->mu);
    while (!w->failed && w->queued_host > TRC_MAX_QUEUED_HOST && w->app_seq < w->next_seq)
        pthread_cond_wait(&w->cv_app, &w->mu);
    int64_t idx = -1;
    if (w->failed) {
        /* first error already recorded */
    } else if (grow((void **)&offv->p, &offv->cap, offv->n + 1, 8) < 0) {
        wfail(w, "%s", "out of memory");
    } else if (w->app_seq == w->next_seq) {
        uint64_t off;
        if (append_chunk(w, type, w->z.p, w->z.n, &off) == 0) {
            idx = (int64_t)offv->n;
            offv->p[offv->n++] = off;
        }
    } else {
        batch *b = new_batch_locked(w, TRC_BATCH_CHUNK);
        if (!b || grow((void **)&b->zr.p, &b->zr.cap, w->z.n + 1, 1) < 0) {
            if (b) {
                b->next = w->b_free;
                w->b_free = b;
            }
            wfail(w, "%s", "out of memory (queued host chunk)");
        } else {
            memcpy(b->zr.p, w->z.p, w->z.n);
            b->zr.n = w->z.n;
            b->chunk_type = type;
            b->offv = offv;
            b->off_idx = offv->n;
            idx = (int64_t)offv->n;
            offv->p[offv->n++] = 0; /* set when appended */
            w->queued_host += b->zr.n;
            w->n_queued++;
            b->seq = w->next_seq++;
            b->next = w->done;
            w->done = b;
            append_ready(w);
        }
    }
    pthread_mutex_unlock(&w->mu);
    return idx;
}

static void copy_str(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = 0;
}

/* The host image dropped a segment of kept copy bytes `tag`: the last one
 * frees them (a later copy over all of them, or their FREE). */
static void himg_release(void *ctx, uint32_t tag)
{
    trc_writer *w = ctx;
    struct himg_buf *b = &w->keep[tag];
    if (--b->refs) return;
    free(b->p);
    w->himg_bytes -= b->n;
    b->p = NULL;
    b->n = 0;
    b->refs = w->keep_free; /* the free list goes through refs */
    w->keep_free = tag;
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
    pthread_cond_init(&w->cv_job, NULL);
    pthread_cond_init(&w->cv_space, NULL);
    pthread_cond_init(&w->cv_app, NULL);
    w->next_seq = w->app_seq = 1;
    w->frame_rec_bytes = TRC_FRAME_REC_BYTES;
    w->frame_data_bytes = TRC_FRAME_DATA_BYTES;
    w->seg_rec_bytes = TRC_SEG_REC_BYTES;
    w->seg_data_bytes = TRC_SEG_DATA_BYTES;
    w->spill_fd = -1;
    w->fd = -1;
    w->keep_free = UINT32_MAX;
    if (!(w->himg = trc_himg_create_latest(himg_release, w)))
        w->himg_off = 1; /* matches nothing: every load keeps its values */
    w->cctx = trc_new_cctx(TRC_ZSTD_LEVEL);
    w->cctx_data = trc_new_cctx(TRC_ZSTD_LEVEL_DATA);
    w->cz_rec = trc_new_cctx(TRC_ZSTD_LEVEL_REC);
    w->cz_dat = trc_new_cctx(TRC_ZSTD_LEVEL_DATA);
    w->cz_end = trc_new_cctx(TRC_ZSTD_LEVEL);
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
    if (!w->cctx || !w->cctx_data || !w->cz_rec || !w->cz_dat || !w->cz_end || !w->wbuf.p) {
        if (err && errlen) snprintf(err, errlen, "%s: cannot create zstd context", path);
        trc_writer_destroy(w);
        return NULL;
    }
    /* A file-size limit (RLIMIT_FSIZE) must surface as a write error naming
     * the file (EFBIG), not kill the process with SIGXFSZ: ignore that
     * signal unless the program handles it itself. */
    struct sigaction old;
    if (sigaction(SIGXFSZ, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
        old.sa_handler == SIG_DFL)
        signal(SIGXFSZ, SIG_IGN);
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
    m.lds_values_omitted = h->lds_values_omitted != 0;

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

int trc_writer_failed(const trc_writer *w)
{
    return !w || __atomic_load_n(&w->failed, __ATOMIC_ACQUIRE);
}

static int fail_fast(trc_writer *w)
{
    if (w->closed) {
        wfail_locked(w, "%s", "trace writer used after close");
        return -1;
    }
    return w->failed ? -1 : 0;
}

int trc_writer_code_object(trc_writer *w, const void *elf, size_t len, uint64_t load_addr)
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
    m.load_addr = load_addr;
    int64_t id = put_msg(w, w->cctx, TRC_CHUNK_CODE_OBJECT, &m.base, &w->code_off);
    if (id < 0) return -1;
    assert(id == (int64_t)m.id);
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
    m.until_event = ev->until_event;
    m.stream_wait = ev->stream_wait != 0;
    m.wait_stream = ev->wait_stream;
    m.stream_nonblocking = ev->stream_nonblocking != 0;
    m.managed = ev->managed != 0; /* 2.1 */
    m.host_gap_ns = w->host_gap_ns; /* trc_writer_host_gap: carried by the next event */
    w->host_gap_ns = 0;
    if (ev->kind == TRC_EV_COPY && ev->data && ev->size) {
        /* The copy's bytes, byte-plane shuffled, go straight into the packed
         * message (no staging copy). proto3 packs fields in number order: the
         * message is its fields below data_shuf4 (13), that field, then its
         * fields above it, each part packed by protobuf-c (504-golden pins
         * the bytes). */
        Gtrace__Event hi = GTRACE__EVENT__INIT;
        hi.until_event = m.until_event, m.until_event = 0;
        hi.stream_wait = m.stream_wait, m.stream_wait = 0;
        hi.wait_stream = m.wait_stream, m.wait_stream = 0;
        hi.stream_nonblocking = m.stream_nonblocking, m.stream_nonblocking = 0;
        hi.host_gap_ns = m.host_gap_ns, m.host_gap_ns = 0;
        hi.managed = m.managed, m.managed = 0;
        /* a field added to Event (gtrace.proto) must be split here too */
        assert(gtrace__event__descriptor.n_fields == 19);
        m.has_data = 1;
        size_t lo_n = protobuf_c_message_get_packed_size(&m.base), hi_n = protobuf_c_message_get_packed_size(&hi.base);
        size_t n = (size_t)ev->size;
        uint8_t hdr[16];
        size_t nh = (size_t)(put_varint(put_tag(hdr, 13, 2), ev->size) - hdr);
        if (ev->size > SIZE_MAX - lo_n - nh - hi_n - 1 ||
            grow((void **)&w->pack.p, &w->pack.cap, lo_n + nh + n + hi_n + 1, 1) < 0) {
            wfail_locked(w, "%s", "out of memory staging copy data");
            return -1;
        }
        uint8_t *q = w->pack.p + protobuf_c_message_pack(&m.base, w->pack.p);
        memcpy(q, hdr, nh);
        trc_shuf4(q + nh, ev->data, n);
        q += nh + n;
        q += protobuf_c_message_pack(&hi.base, q);
        w->pack.n = (size_t)(q - w->pack.p);
        return put_msg(w, w->cctx_data, TRC_CHUNK_EVENT, NULL, &w->event_off);
    }
    int data_chunk = 0;
    if (ev->kind == TRC_EV_COPY && ev->data) {
        m.has_data = 1; /* an empty copy: data_shuf4 stays empty */
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
    return put_msg(w, data_chunk ? w->cctx_data : w->cctx, TRC_CHUNK_EVENT, &m.base, &w->event_off);
}

void trc_writer_host_gap(trc_writer *w, uint64_t ns)
{
    w->host_gap_ns = w->host_gap_ns > UINT64_MAX - ns ? UINT64_MAX : w->host_gap_ns + ns;
}

const struct trc_himg *trc_writer_himg(trc_writer *w)
{
    return w->himg && !__atomic_load_n(&w->himg_off, __ATOMIC_ACQUIRE) ? w->himg : NULL;
}

/* The host image takes event ev (index ei) as a 2.6 reader will
 * (trc_himg.h): H2D and INIT copies' bytes (a copy kept here) and memsets
 * write, D2D copies make their bytes unknown. An event while a kernel is open
 * turns matching off for good instead (recorders may be reading the image). */
static void himg_event(trc_writer *w, const trc_event *ev, uint64_t ei)
{
    int eff = trc_himg_effect(ev);
    if (!trc_writer_himg(w) || eff == TRC_HIMG_NONE) return;
    pthread_mutex_lock(&w->mu);
    unsigned open = w->kopen;
    pthread_mutex_unlock(&w->mu);
    if (open) {
        __atomic_store_n(&w->himg_off, 1, __ATOMIC_RELEASE);
        return;
    }
    int rc;
    if (eff == TRC_HIMG_FILL) {
        rc = trc_himg_write(w->himg, ei, ev->addr, ev->size, NULL, ev->value, 0);
    } else if (eff == TRC_HIMG_FORGET || !ev->data || ev->size > TRC_HIMG_MAX_BYTES - w->himg_bytes) {
        rc = trc_himg_forget(w->himg, ei, ev->addr, ev->size);
    } else {
        /* keep a copy of the bytes (the program's buffer changes), named by
         * its slot in w->keep; each page segment holds a reference */
        uint8_t *b = NULL;
        uint32_t tag = w->keep_free;
        if (tag == UINT32_MAX && w->n_keep < UINT32_MAX &&
            (w->n_keep < w->cap_keep || grow((void **)&w->keep, &w->cap_keep, w->n_keep + 1, sizeof *w->keep) == 0))
            tag = (uint32_t)w->n_keep++, w->keep[tag] = (struct himg_buf){NULL, 0, UINT32_MAX};
        if (tag != UINT32_MAX && (b = malloc((size_t)ev->size))) {
            if (tag == w->keep_free) w->keep_free = w->keep[tag].refs;
            memcpy(b, ev->data, (size_t)ev->size);
            w->keep[tag] = (struct himg_buf){b, (size_t)ev->size, 1};
            w->himg_bytes += (size_t)ev->size;
            rc = trc_himg_write(w->himg, ei, ev->addr, ev->size, b, 0, tag);
            /* a reference per segment made (none: the bytes went unknown) */
            if (rc >= 0) {
                w->keep[tag].refs = (uint32_t)rc + 1;
                himg_release(w, tag);
            }
        } else {
            rc = trc_himg_forget(w->himg, ei, ev->addr, ev->size); /* no memory to keep it: unknown */
        }
    }
    if (rc < 0) __atomic_store_n(&w->himg_off, 1, __ATOMIC_RELEASE);
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
    int64_t ei = put_event(w, ev);
    if (ei < 0) return -1;
    himg_event(w, ev, (uint64_t)ei);
    return 0;
}

size_t trc_writer_n_events(const trc_writer *w) { return w->event_off.n; }

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
    memcpy(k->grid, l->grid, sizeof k->grid);
    k->n_lin = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
    w->nk = id + 1u;
    w->kopen++;
    pthread_mutex_unlock(&w->mu);
    return 0;
}

void trc_writer_set_frame_limits(trc_writer *w, size_t rec_bytes, size_t data_bytes)
{
    pthread_mutex_lock(&w->mu);
    w->frame_rec_bytes = rec_bytes ? rec_bytes : 1;
    w->frame_data_bytes = data_bytes ? data_bytes : 1;
    pthread_mutex_unlock(&w->mu);
}

void trc_writer_set_segment_limits(trc_writer *w, size_t rec_bytes, size_t data_bytes)
{
    w->seg_rec_bytes = rec_bytes ? rec_bytes : 1;
    w->seg_data_bytes = data_bytes ? data_bytes : 1;
}

void trc_writer_segment_limits(const trc_writer *w, size_t *rec_bytes, size_t *data_bytes)
{
    *rec_bytes = w->seg_rec_bytes;
    *data_bytes = w->seg_data_bytes;
}

/* Writes all of buf at off of fd. 0 or -1 (errno). */
static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
    const uint8_t *p = buf;
    while (len) {
        ssize_t k = pwrite(fd, p, len, (off_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            if (k == 0) errno = ENOSPC;
            return -1;
        }
        p += k;
        len -= (size_t)k;
        off += (uint64_t)k;
    }
    return 0;
}

/* Creates the spill file: an unlinked temporary beside the trace (the same
 * file system, so a full disk shows as it would for the trace). Caller
 * holds w->mu. 0 or -1 (writer failed). */
static int spill_open(trc_writer *w)
{
    size_t n = strlen(w->path) + 16;
    char *t = malloc(n);
    if (!t) {
        wfail(w, "%s", "out of memory (spill file name)");
        return -1;
    }
    snprintf(t, n, "%s.spillXXXXXX", w->path);
    int fd = mkostemp(t, O_CLOEXEC);
    if (fd < 0) {
        wfail(w, "cannot create the wave-segment spill file %s: %s", t, strerror(errno));
        free(t);
        return -1;
    }
    unlink(t);
    free(t);
    w->spill_fd = fd;
    return 0;
}

int trc_writer_spill(trc_writer *w, const u8v *zr, const u8v *zd, uint64_t *off)
{
    pthread_mutex_lock(&w->mu);
    int ok = !w->failed && (w->spill_fd >= 0 || spill_open(w) == 0);
    uint64_t o = w->spill_pos;
    if (ok) w->spill_pos += zr->n + zd->n;
    pthread_mutex_unlock(&w->mu);
    if (!ok) return -1;
    if (pwrite_all(w->spill_fd, zr->p, zr->n, o) < 0 || pwrite_all(w->spill_fd, zd->p, zd->n, o + zr->n) < 0) {
        wfail_locked(w, "wave-segment spill file: write error: %s", strerror(errno));
        return -1;
    }
    *off = o;
    return 0;
}

/* Copies the n bytes at spill offset off into the trace as one chunk of
 * `type`. Caller holds w->mu. 0 or -1 (writer failed). */
static int append_spilled(trc_writer *w, uint32_t type, uint64_t off, size_t n, uint64_t *at)
{
    if (grow((void **)&w->spill_buf.p, &w->spill_buf.cap, n + 1, 1) < 0) {
        wfail(w, "%s", "out of memory (wave segment)");
        return -1;
    }
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(w->spill_fd, w->spill_buf.p + got, n - got, (off_t)(off + got));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            wfail(w, "wave-segment spill file: read error at byte %llu: %s", (unsigned long long)(off + got),
                  k ? strerror(errno) : "cut short");
            return -1;
        }
        got += (size_t)k;
    }
    return append_chunk(w, type, w->spill_buf.p, n, at);
}

/* ---- kernel end, close ------------------------------------------------------ */


static void bg_stop(trc_writer *w);
static void flush_kernel_locked(trc_writer *w, wkernel *k, batch **mine);
static void compress_batch(trc_writer *w, batch *b, ZSTD_CCtx *c_rec, ZSTD_CCtx *c_dat);

/* Fills t (arrays borrowed from k) with kernel i's index entry. */
static void kernel_index_of(const wkernel *k, uint32_t i, Gtrace__KernelIndex *t)
{
    Gtrace__KernelIndex z = GTRACE__KERNEL_INDEX__INIT;
    *t = z;
    t->kernel_id = i;
    t->launch_event = k->launch_event;
    t->n_instr = k->n_instr;
    t->n_mem = k->n_mem;
    t->wg_bytes = k->wg_bytes;
    t->data_bytes = k->data_bytes;
    t->n_waves = k->n_waves;
    t->ended = k->ended;
    t->n_frame_offset = k->frame_off.n;
    t->frame_offset = k->frame_off.p;
    t->n_data_frame_offset = k->dframe_off.n;
    t->data_frame_offset = k->dframe_off.p;
    t->n_wg_frame = k->wg_frame.n;
    t->wg_frame = k->wg_frame.p;
    t->n_wg_rec_off = k->rec_off.n;
    t->wg_rec_off = k->rec_off.p;
    t->n_wg_rec_len = k->rec_len.n;
    t->wg_rec_len = k->rec_len.p;
    t->n_wg_data_off = k->data_off.n;
    t->wg_data_off = k->data_off.p;
    t->n_wg_data_len = k->data_len.n;
    t->wg_data_len = k->data_len.p;
    t->raw_rec_bytes = k->raw_rec;
    t->raw_data_bytes = k->raw_data;
    t->end_chunk_offset = k->end_off;
    t->n_seg_wg = k->seg_wg.n;
    t->seg_wg = k->seg_wg.p;
    t->n_seg_wave = k->seg_wave.n;
    t->seg_wave = k->seg_wave.p;
    t->n_seg_offset = k->seg_off.n;
    t->seg_offset = k->seg_off.p;
    t->n_seg_data_offset = k->seg_doff.n;
    t->seg_data_offset = k->seg_doff.p;
    t->seg_bytes = k->seg_bytes;
    if (k->any_sto) {
        t->n_store_frame_offset = k->sframe_off.n;
        t->store_frame_offset = k->sframe_off.p;
        t->n_wg_store_off = k->sto_off.n;
        t->wg_store_off = k->sto_off.p;
        t->n_wg_store_len = k->sto_len.n;
        t->wg_store_len = k->sto_len.p;
        t->store_bytes = k->sto_bytes;
        t->raw_store_bytes = k->raw_sto;
    }
}

/* Seals everything a kernel that was never ended has committed: pending
 * pieces (in grid order, across gaps left by workgroups never committed) and
 * the open batch; batches this thread must compress itself (no background
 * threads) are compressed here. trc_writer_close then waits for the file to
 * take them with everything else. Called without w->mu. */
static void seal_unended_kernel(trc_writer *w, uint32_t kernel_id)
{
    batch *mine = NULL;
    pthread_mutex_lock(&w->mu);
    flush_kernel_locked(w, &w->k[kernel_id], &mine);
    pthread_mutex_unlock(&w->mu);
    while (mine) {
        batch *b = mine;
        mine = b->next;
        compress_batch(w, b, w->cz_rec, w->cz_dat);
    }
}

/* A thread that would wait for the compressors (a kernel's end, a commit
 * held back) compresses the oldest queued batch itself instead, with its
 * own zstd contexts (c_rec, c_dat: the levels of the background ones, so
 * the bytes are the same whoever compresses). Caller holds w->mu; returns
 * with it held; 1 if it compressed one, 0 when the queue is empty. */
static int help_locked(trc_writer *w, ZSTD_CCtx *c_rec, ZSTD_CCtx *c_dat)
{
    batch *b = w->q_head;
    if (!b || w->hold || !c_rec || !c_dat) return 0;
    w->q_head = b->next;
    if (!w->q_head) w->q_tail = NULL;
    pthread_mutex_unlock(&w->mu);
    compress_batch(w, b, c_rec, c_dat);
    pthread_mutex_lock(&w->mu);
    return 1;
}

/* Appends kernel kernel_id's kernel-end chunk (its frames are all in: the
 * item comes after its last batch) and flushes the write buffer, so that a
 * file cut afterwards keeps the kernel. Caller holds w->mu. */
static void append_kernel_end(trc_writer *w, uint32_t kernel_id)
{
    if (w->failed) return;
    wkernel *k = &w->k[kernel_id];
    Gtrace__KernelIndex t;
    kernel_index_of(k, kernel_id, &t);
    const char *why = NULL;
    if (!pack_compress(w->cz_end, &t.base, &w->pack_end, &w->z_end, &why)) {
        wfail(w, "cannot encode record: %s", why);
        return;
    }
    uint64_t off;
    if (append_chunk(w, TRC_CHUNK_KERNEL_END, w->z_end.p, w->z_end.n, &off) < 0) return;
    k->end_off = off;
    flush_wbuf(w);
}

/* Seals the kernel's last batch and queues its kernel-end chunk behind it;
 * the compressors and the appender finish them while the program goes on.
 * Returns once the previous kernel's end is in the file: at most one ended
 * kernel is not yet there (trc.h). With no background compressor this
 * thread compresses the kernel's batches: the end is written on return. */
int trc_writer_end_kernel(trc_writer *w, uint32_t kernel_id)
{
    if (fail_fast(w)) return -1;
    batch *mine = NULL;
    pthread_mutex_lock(&w->mu);
    if (kernel_id >= w->nk) {
        wfail(w, "end of kernel %u that was never begun", kernel_id);
        pthread_mutex_unlock(&w->mu);
        return -1;
    }
    if (w->k[kernel_id].ended) {
        wfail(w, "kernel %u ended twice", kernel_id);
        pthread_mutex_unlock(&w->mu);
        return -1;
    }
    wkernel *k = &w->k[kernel_id];
    flush_kernel_locked(w, k, &mine);
    k->ended = 1; /* no commit after this (trc_wg_commit refuses them) */
    if (w->kopen) w->kopen--;
    uint64_t prev = w->last_end_seq;
    batch *e = new_batch_locked(w, TRC_BATCH_END);
    if (!e) {
        wfail(w, "%s", "out of memory (kernel end)");
    } else {
        e->kernel_id = kernel_id;
        e->seq = w->next_seq++;
        w->last_end_seq = e->seq;
        e->next = w->done;
        w->done = e;
        append_ready(w);
    }
    pthread_mutex_unlock(&w->mu);
    while (mine) {
        batch *b = mine;
        mine = b->next;
        compress_batch(w, b, w->cz_rec, w->cz_dat);
    }
    pthread_mutex_lock(&w->mu);
    while (!w->failed && w->app_seq <= prev)
        if (!help_locked(w, w->cz_rec, w->cz_dat))
            pthread_cond_wait(&w->cv_app, &w->mu);
    int rc = w->failed ? -1 : 0;
    pthread_mutex_unlock(&w->mu);
    return rc;
}

int trc_writer_close(trc_writer *w)
{
    if (!w) return -1;
    if (w->closed) return w->failed ? -1 : 0;
    /* Kernels begun but not ended still get their workgroups written (the
     * missing end is reported below). */
    for (size_t i = 0; i < w->nk && !w->failed; i++)
        if (!w->k[i].ended) seal_unended_kernel(w, (uint32_t)i);
    /* every sequenced item (frames, kernel ends, host chunks) in the file */
    pthread_mutex_lock(&w->mu);
    while (!w->failed && w->app_seq < w->next_seq)
        pthread_cond_wait(&w->cv_app, &w->mu);
    pthread_mutex_unlock(&w->mu);
    bg_stop(w);
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
                kernel_index_of(&w->k[i], (uint32_t)i, &ks[i]);
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
    if (w->spill_fd >= 0) {
        close(w->spill_fd);
        w->spill_fd = -1;
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

void trc_free_piece(piece *p)
{
    free(p->segs.p);
    free(p->erec.p);
    free(p->edat.p);
    free(p->esto.p);
    free(p);
}
static void free_batch(batch *b)
{
    while (b->head) {
        piece *p = b->head;
        b->head = p->next;
        trc_free_piece(p);
    }
    free(b->zr.p); free(b->zd.p); free(b->zp.p);
    free(b->roff.p); free(b->rlen.p); free(b->doff.p); free(b->dlen.p);
    free(b->zs.p); free(b->soff.p); free(b->slen.p);
    free(b);
}
static void free_batch_list(batch *b)
{
    while (b) {
        batch *n = b->next;
        free_batch(b);
        b = n;
    }
}

void trc_writer_destroy(trc_writer *w)
{
    if (!w) return;
    if (!w->closed) trc_writer_close(w);
    bg_stop(w);
    if (w->fd >= 0) close(w->fd);
    if (w->spill_fd >= 0) close(w->spill_fd);
    free(w->spill_buf.p);
    for (size_t i = 0; i < w->nk; i++) {
        wkernel *k = &w->k[i];
        free(k->frame_off.p); free(k->dframe_off.p); free(k->wg_frame.p);
        free(k->sframe_off.p); free(k->sto_off.p); free(k->sto_len.p);
        free(k->rec_off.p); free(k->rec_len.p); free(k->data_off.p); free(k->data_len.p);
        free(k->seg_wg.p); free(k->seg_wave.p); free(k->seg_off.p); free(k->seg_doff.p);
        while (k->pending) {
            piece *p = k->pending;
            k->pending = p->next;
            trc_free_piece(p);
        }
        if (k->open) free_batch(k->open);
    }
    while (w->p_free) {
        piece *p = w->p_free;
        w->p_free = p->next;
        trc_free_piece(p);
    }
    trc_himg_destroy(w->himg);
    for (size_t i = 0; i < w->n_keep; i++) free(w->keep[i].p);
    free(w->keep);
    free_batch_list(w->b_free);
    free_batch_list(w->q_head);
    free_batch_list(w->done);
    free(w->k);
    free(w->code_off.p);
    free(w->event_off.p);
    free(w->pack.p);
    free(w->z.p);
    free(w->wbuf.p);
    ZSTD_freeCCtx(w->cctx);
    ZSTD_freeCCtx(w->cctx_data);
    ZSTD_freeCCtx(w->cz_rec);
    ZSTD_freeCCtx(w->cz_dat);
    ZSTD_freeCCtx(w->cz_end);
    free(w->pack_end.p);
    free(w->z_end.p);
    pthread_cond_destroy(&w->cv_job);
    pthread_cond_destroy(&w->cv_space);
    pthread_cond_destroy(&w->cv_app);
    pthread_mutex_destroy(&w->mu);
    free(w->path);
    free(w);
}

/* Copies the spilled wave segments of b's workgroups from the spill file
 * into the trace (ahead of b's frames) and indexes them. Caller holds w->mu.
 * 0 or -1 (writer failed). */
static int append_segments(trc_writer *w, wkernel *k, const batch *b)
{
    size_t j = k->wg_frame.n; /* the batch's first workgroup, grid order */
    for (const piece *p = b->head; p; p = p->next, j++) {
        for (size_t s = 0; s < p->segs.n; s++) {
            const seg_ref *r = &p->segs.p[s];
            uint64_t o1, o2;
            if (k->seg_wg.n >= UINT32_MAX ||
                grow((void **)&k->seg_wg.p, &k->seg_wg.cap, k->seg_wg.n + 1, 4) < 0 ||
                grow((void **)&k->seg_wave.p, &k->seg_wave.cap, k->seg_wave.n + 1, 4) < 0 ||
                grow((void **)&k->seg_off.p, &k->seg_off.cap, k->seg_off.n + 1, 8) < 0 ||
                grow((void **)&k->seg_doff.p, &k->seg_doff.cap, k->seg_doff.n + 1, 8) < 0) {
                wfail(w, "%s", "out of memory (wave-segment index)");
                return -1;
            }
            if (append_spilled(w, TRC_CHUNK_SEGMENT, r->spill_off, r->zr_len, &o1) < 0 ||
                append_spilled(w, TRC_CHUNK_SEG_DATA, r->spill_off + r->zr_len, r->zd_len, &o2) < 0)
                return -1;
#ifdef FALLOC_FL_PUNCH_HOLE
            /* the spilled copy is no longer needed: give its disk space back (best effort) */
            (void)fallocate(w->spill_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)r->spill_off,
                            (off_t)r->zr_len + r->zd_len);
#endif
            k->seg_wg.p[k->seg_wg.n++] = (uint32_t)j;
            k->seg_wave.p[k->seg_wave.n++] = r->wave;
            k->seg_off.p[k->seg_off.n++] = o1;
            k->seg_doff.p[k->seg_doff.n++] = o2;
            k->seg_bytes += 2 * TRC_CHUNK_HDR_SIZE + r->zr_len + r->zd_len;
        }
    }
    return 0;
}

/* Appends every compressed batch whose turn has come (seq order) and
 * recycles it. Caller holds w->mu. */
static void append_ready(trc_writer *w)
{
    for (;;) {
        batch **pp = &w->done, *b = NULL;
        for (; *pp; pp = &(*pp)->next)
            if ((*pp)->seq == w->app_seq) {
                b = *pp;
                *pp = b->next;
                break;
            }
        if (!b) break;
        if (b->kind != TRC_BATCH_FRAMES) {
            if (b->kind == TRC_BATCH_END) {
                append_kernel_end(w, b->kernel_id);
            } else {
                uint64_t off;
                if (!w->failed && append_chunk(w, b->chunk_type, b->zr.p, b->zr.n, &off) == 0)
                    b->offv->p[b->off_idx] = off;
                w->queued_host -= b->zr.n;
                if (b->zr.cap > TRC_WBUF_SIZE) { /* a large copy's payload: not kept for reuse */
                    free(b->zr.p);
                    b->zr.p = NULL;
                    b->zr.cap = 0;
                }
                b->zr.n = 0;
            }
            b->kind = TRC_BATCH_FRAMES;
            b->next = w->b_free;
            w->b_free = b;
            w->app_seq++;
            continue;
        }
        wkernel *k = &w->k[b->kernel_id];
        uint64_t o1, o2, o3 = 0;
        size_t need = k->wg_frame.n + b->n;
        if (w->failed || b->failed) {
            /* first error already recorded; the batch is dropped */
        } else if (grow((void **)&k->frame_off.p, &k->frame_off.cap, k->frame_off.n + 1, 8) < 0 ||
                   grow((void **)&k->dframe_off.p, &k->dframe_off.cap, k->dframe_off.n + 1, 8) < 0 ||
                   grow((void **)&k->wg_frame.p, &k->wg_frame.cap, need, 4) < 0 ||
                   grow((void **)&k->rec_off.p, &k->rec_off.cap, need, 4) < 0 ||
                   grow((void **)&k->rec_len.p, &k->rec_len.cap, need, 4) < 0 ||
                   grow((void **)&k->data_off.p, &k->data_off.cap, need, 4) < 0 ||
                   grow((void **)&k->data_len.p, &k->data_len.cap, need, 4) < 0 ||
                   grow((void **)&k->sframe_off.p, &k->sframe_off.cap, k->sframe_off.n + 1, 8) < 0 ||
                   grow((void **)&k->sto_off.p, &k->sto_off.cap, need, 4) < 0 ||
                   grow((void **)&k->sto_len.p, &k->sto_len.cap, need, 4) < 0) {
            wfail(w, "%s", "out of memory (workgroup index)");
        } else if (k->frame_off.n >= UINT32_MAX) {
            wfail(w, "kernel %u has too many frames", b->kernel_id);
        } else if (append_segments(w, k, b) == 0 &&
                   append_chunk(w, TRC_CHUNK_WORKGROUP, b->zr.p, b->zr.n, &o1) == 0 &&
                   append_chunk(w, TRC_CHUNK_WG_DATA, b->zd.p, b->zd.n, &o2) == 0 &&
                   (!b->has_sto || append_chunk(w, TRC_CHUNK_WG_STORES, b->zs.p, b->zs.n, &o3) == 0)) {
            uint32_t f = (uint32_t)k->frame_off.n;
            k->frame_off.p[k->frame_off.n++] = o1;
            k->dframe_off.p[k->dframe_off.n++] = o2;
            k->sframe_off.p[k->sframe_off.n++] = o3;
            if (b->has_sto) {
                k->any_sto = 1;
                k->sto_bytes += TRC_CHUNK_HDR_SIZE + b->zs.n;
                k->raw_sto += b->raw_sto;
            }
            size_t i = 0;
            for (piece *p = b->head; p; p = p->next, i++) {
                size_t j = k->wg_frame.n++;
                k->wg_frame.p[j] = f;
                k->rec_off.p[j] = b->roff.p[i];
                k->rec_len.p[j] = b->rlen.p[i];
                k->data_off.p[j] = b->doff.p[i];
                k->data_len.p[j] = b->dlen.p[i];
                k->sto_off.p[j] = b->has_sto ? b->soff.p[i] : 0;
                k->sto_len.p[j] = b->has_sto ? b->slen.p[i] : 0;
                k->n_instr += p->n_instr;
                k->n_mem += p->n_mem;
                k->n_waves += p->n_waves;
            }
            k->rec_off.n = k->rec_len.n = k->data_off.n = k->data_len.n = k->wg_frame.n;
            k->sto_off.n = k->sto_len.n = k->wg_frame.n;
            k->wg_bytes += TRC_CHUNK_HDR_SIZE + b->zr.n;
            k->data_bytes += TRC_CHUNK_HDR_SIZE + b->zd.n;
            k->raw_rec += b->raw_rec;
            k->raw_data += b->raw_dat;
        }
        /* recycle */
        if (b->tail) {
            b->tail->next = w->p_free;
            w->p_free = b->head;
        }
        b->head = b->tail = NULL;
        b->n = 0;
        b->est_rec = b->est_dat = 0;
        b->failed = 0;
        b->has_sto = 0;
        b->next = w->b_free;
        w->b_free = b;
        w->app_seq++;
        w->inflight--;
    }
    pthread_cond_broadcast(&w->cv_space);
    pthread_cond_broadcast(&w->cv_app);
}

/* Encodes and compresses b (without w->mu), then hands it to the appender. */
static void compress_batch(trc_writer *w, batch *b, ZSTD_CCtx *c_rec, ZSTD_CCtx *c_dat)
{
    const char *why = NULL;
    if (!w->failed && trc_encode_batch(b, c_rec, c_dat, &why) < 0) {
        b->failed = 1;
        wfail_locked(w, "cannot encode workgroup frame: %s", why);
    }
    pthread_mutex_lock(&w->mu);
    b->next = w->done;
    w->done = b;
    append_ready(w);
    pthread_mutex_unlock(&w->mu);
}

/* Seals k's open batch: gives it the next sequence number and queues it for
 * a compressor, or (no background threads) onto *mine for the caller to
 * compress. Caller holds w->mu. */
static void seal_locked(trc_writer *w, wkernel *k, batch **mine)
{
    batch *b = k->open;
    if (!b) return;
    k->open = NULL;
    b->seq = w->next_seq++;
    w->inflight++;
    b->next = NULL;
    if (w->n_bg) {
        if (w->q_tail) w->q_tail->next = b;
        else w->q_head = b;
        w->q_tail = b;
        pthread_cond_signal(&w->cv_job);
    } else {
        /* keep seq order on the caller's list */
        batch **pp = mine;
        while (*pp) pp = &(*pp)->next;
        *pp = b;
    }
}

/* Adds the in-order piece p to k's open batch, sealing it when full. Caller
 * holds w->mu. Returns -1 when out of memory. */
static int take_piece_locked(trc_writer *w, wkernel *k, uint32_t kernel_id, piece *p, batch **mine)
{
    if (!k->open) {
        batch *b = w->b_free;
        if (b) w->b_free = b->next;
        else if (!(b = calloc(1, sizeof *b))) return -1;
        b->next = NULL;
        b->kernel_id = kernel_id;
        k->open = b;
    }
    batch *b = k->open;
    p->next = NULL;
    if (b->tail) b->tail->next = p;
    else b->head = p;
    b->tail = p;
    b->n++;
    b->est_rec += p->erec.n;
    b->est_dat += p->edat.n;
    k->next_lin = p->lin + 1;
    if (b->est_rec >= w->frame_rec_bytes || b->est_dat >= w->frame_data_bytes)
        seal_locked(w, k, mine);
    return 0;
}

/* Moves every pending piece of k (gaps and all) into batches and seals the
 * open one. Caller holds w->mu. */
static void flush_kernel_locked(trc_writer *w, wkernel *k, batch **mine)
{
    uint32_t kernel_id = (uint32_t)(k - w->k);
    while (k->pending) {
        piece *p = k->pending;
        k->pending = p->next;
        if (take_piece_locked(w, k, kernel_id, p, mine) < 0) {
            wfail(w, "%s", "out of memory (frame batch)");
            trc_free_piece(p);
        }
    }
    seal_locked(w, k, mine);
}

/* Background compressor: takes sealed batches from the queue, encodes and
 * compresses them with its own zstd contexts. */
static void *bg_main(void *arg)
{
    trc_writer *w = arg;
    ZSTD_CCtx *c_rec = trc_new_cctx(TRC_ZSTD_LEVEL_REC), *c_dat = trc_new_cctx(TRC_ZSTD_LEVEL_DATA);
    if (!c_rec || !c_dat) wfail_locked(w, "%s", "cannot create zstd context for the background compressor");
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->stop && (!w->q_head || w->hold)) pthread_cond_wait(&w->cv_job, &w->mu);
        if (!w->q_head) break; /* stopping and drained */
        batch *b = w->q_head;
        w->q_head = b->next;
        if (!w->q_head) w->q_tail = NULL;
        pthread_mutex_unlock(&w->mu);
        if (!c_rec || !c_dat) b->failed = 1;
        compress_batch(w, b, c_rec, c_dat);
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    ZSTD_freeCCtx(c_rec);
    ZSTD_freeCCtx(c_dat);
    return NULL;
}

/* Starts the background compressors: `req` of them, or with req < 0 one per
 * spare CPU; at most TRC_BG_THREADS; with none, the thread that seals a
 * batch compresses it. A failure to start threads just means fewer. */
static void bg_start(trc_writer *w, int req)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned want = req >= 0 ? (unsigned)req : cpus > 1 ? (unsigned)(cpus - 1) : 0;
    if (want > TRC_BG_THREADS) want = TRC_BG_THREADS;
    for (unsigned i = 0; i < want; i++) {
        if (pthread_create(&w->bg[i], NULL, bg_main, w) != 0) break;
        w->n_bg++;
    }
}

void trc_writer_test_hold(trc_writer *w, int on)
{
    pthread_mutex_lock(&w->mu);
    w->hold = on;
    pthread_cond_broadcast(&w->cv_job);
    pthread_mutex_unlock(&w->mu);
}

uint64_t trc_writer_test_queued(trc_writer *w)
{
    pthread_mutex_lock(&w->mu);
    uint64_t n = w->n_queued;
    pthread_mutex_unlock(&w->mu);
    return n;
}

static void bg_stop(trc_writer *w)
{
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_broadcast(&w->cv_job);
    pthread_mutex_unlock(&w->mu);
    for (unsigned i = 0; i < w->n_bg; i++) pthread_join(w->bg[i], NULL);
    w->n_bg = 0;
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
            trc_rec_bad(g, "workgroup committed before all its waves ended", i);
            wfail_locked(w, "%s", g->bad_msg);
            return -1;
        }
        n_instr += v->n_instr;
        n_mem += v->mem_spilled + v->mflags.n;
    }
    if (g->segs.n && g->wr != w) {
        trc_rec_bad(g, "workgroup with wave segments committed to another writer", 0);
        wfail_locked(w, "%s", g->bad_msg);
        return -1;
    }
    /* Encode in this thread, without any lock, into the recorder's spare
     * piece (buffers reused from earlier workgroups). */
    piece *p = g->spare;
    if (!p && !(p = g->spare = calloc(1, sizeof *p))) {
        wfail_locked(w, "%s", "out of memory (workgroup queue)");
        return -1;
    }
    if (trc_encode_piece(g, p) < 0) {
        wfail_locked(w, "%s", "cannot encode workgroup: out of memory");
        return -1;
    }
    p->n_waves = g->n_waves;
    p->kernel_id = g->kernel_id;
    memcpy(p->wg_id, g->wg_id, sizeof p->wg_id);
    p->n_instr = n_instr;
    p->n_mem = n_mem;
    /* its spilled segments, by wave (in spill order within a wave) */
    p->segs.n = 0;
    if (g->segs.n && grow((void **)&p->segs.p, &p->segs.cap, g->segs.n, sizeof *p->segs.p) < 0) {
        wfail_locked(w, "%s", "out of memory (wave segments)");
        return -1;
    }
    for (uint32_t i = 0; i < g->n_waves && g->segs.n; i++)
        for (size_t s = 0; s < g->segs.n; s++)
            if (g->segs.p[s].wave == i) p->segs.p[p->segs.n++] = g->segs.p[s];
    g->segs.n = 0;
    batch *mine = NULL;
    pthread_mutex_lock(&w->mu);
    wkernel *k = g->kernel_id < w->nk ? &w->k[g->kernel_id] : NULL;
    const uint32_t *id = g->wg_id;
    uint64_t lin = 0;
    if (k)
        lin = id[0] + (uint64_t)k->grid[0] * (id[1] + (uint64_t)k->grid[1] * id[2]);
    if (w->failed) {
        /* first error already recorded */
    } else if (!k) {
        wfail(w, "workgroup committed for kernel %u that was never begun", g->kernel_id);
    } else if (k->ended) {
        wfail(w, "workgroup committed for kernel %u after its end", g->kernel_id);
    } else if (id[0] >= k->grid[0] || id[1] >= k->grid[1] || id[2] >= k->grid[2]) {
        wfail(w, "workgroup (%u,%u,%u) committed for kernel %u lies outside its grid (%u,%u,%u)",
              id[0], id[1], id[2], g->kernel_id, k->grid[0], k->grid[1], k->grid[2]);
    } else {
        piece **pp = &k->pending;
        while (*pp && (*pp)->lin < lin) pp = &(*pp)->next;
        if (lin < k->next_lin || (*pp && (*pp)->lin == lin)) {
            wfail(w, "workgroup (%u,%u,%u) of kernel %u committed twice", id[0], id[1], id[2],
                  g->kernel_id);
        } else {
            g->spare = w->p_free; /* NULL: allocated at the next commit */
            if (w->p_free) w->p_free = w->p_free->next;
            p->lin = lin;
            if (lin == k->next_lin) {
                int oom = take_piece_locked(w, k, g->kernel_id, p, &mine) < 0;
                if (oom) trc_free_piece(p);
                while (!oom && k->pending && k->pending->lin == k->next_lin) {
                    piece *q = k->pending;
                    k->pending = q->next;
                    oom = take_piece_locked(w, k, g->kernel_id, q, &mine) < 0;
                    if (oom) trc_free_piece(q);
                }
                if (oom) wfail(w, "%s", "out of memory (frame batch)");
            } else {
                p->next = *pp;
                *pp = p;
            }
        }
    }
    /* Back-pressure: while the compressors are behind, help them or wait. */
    while (w->n_bg && !w->failed && w->inflight > TRC_MAX_INFLIGHT(w->n_bg))
        if (!help_locked(w, g->cctx, g->cctx_data))
            pthread_cond_wait(&w->cv_space, &w->mu);
    pthread_mutex_unlock(&w->mu);
    while (mine) {
        batch *b = mine;
        mine = b->next;
        compress_batch(w, b, g->cctx, g->cctx_data);
    }
    return w->failed ? -1 : 0;
}
