/*
 * trc_reader.c - reads and validates .gtrace files, format 1.x
 * (docs/trace-format.md).
 *
 * trc_reader_open() checks the file header, finds the index through the
 * trailer, and loads the header, code objects and host events into memory.
 * Workgroups are decoded on demand by trc_reader_load_wg(): the record (and
 * data) frame holding the workgroup is decompressed into a frame cache
 * (bounded, least recently used first out, entries in use pinned by a
 * reference count), the workgroup's message is unpacked from its slice and
 * copied into one self-contained trc_wg. The cache lock is never held while
 * decompressing, so threads decode different frames in parallel; a thread
 * that needs a frame another is decoding waits for it.
 *
 * Every length and offset in the file is untrusted: chunks must lie inside
 * the file before the index, frames must be single complete zstd frames with
 * a content checksum and a declared content size, protobuf messages must
 * unpack, and every array length is cross-checked before anything is indexed.
 * Nothing here asserts or exits on bad input.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ZSTD_getFrameHeader / ZSTD_decompressBound: stable since zstd 1.4, exported
 * by the shared library, but declared in the static-linking section. */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "traceformat/gtrace.pb-c.h"
#include "traceformat/trc_himg.h"
#include "traceformat/trc_internal.h"

typedef struct rkernel {
    trc_kernel_stats st;
    uint64_t *frame_off, *dframe_off; /* st.n_frames entries each */
    uint32_t *wg_frame, *rec_off, *rec_len, *data_off, *data_len; /* st.n_wg entries each */
    size_t slot_base;  /* first cache slot of this kernel: 3 per frame (record, data, store) */
    /* 2.4 store frames (KernelIndex.store_*): NULL when the kernel has none */
    uint64_t *sframe_off;               /* st.n_frames entries, 0: that frame has none */
    uint32_t *sto_off, *sto_len;        /* st.n_wg entries */
    /* 2.0 wave segments (KernelIndex.seg_*), sorted by (workgroup, wave) */
    uint32_t *seg_wg, *seg_wave;
    uint64_t *seg_off, *seg_doff;
} rkernel;

/* A decompressed frame in the cache. */
typedef struct fentry {
    size_t slot;
    uint8_t *data;
    size_t len;
    int ready;         /* 0 while a thread decompresses it */
    unsigned refs;
    struct fentry *prev, *next; /* LRU list of ready entries, most recent first */
} fentry;

struct trc_reader {
    char *path;
    int fd;
    uint64_t size;     /* file size in bytes */
    uint64_t data_end; /* offset of the index chunk: other chunks end before it */
    trc_header_info hdr;
    Gtrace__CodeObject **co;
    size_t n_co;
    Gtrace__Event **evm; /* unpacked messages: own the copy/kernarg bytes */
    uint8_t **evdata;    /* per event: un-shuffled copy data (format 0.2 data_shuf4) or NULL */
    trc_event *ev;
    size_t n_ev;
    rkernel *k;
    size_t nk;
    pthread_mutex_t err_mu;
    char err[512];
    /* frame cache, under cmu */
    pthread_mutex_t cmu;
    pthread_cond_t ccv;
    fentry **slot;     /* n_slots entries */
    size_t n_slots;
    fentry *lru_head, *lru_tail;
    size_t limit;
    int compact_strided;   /* trc_reader_set_compact_strided */
    trc_reader_cache_stats cst;
    /* 2.6: the host image of the events (trc_himg.h) for TRC_MO_HOST loads;
     * NULL in older traces (where the flag is refused) */
    trc_himg *himg;
};

static void seterr(char *err, size_t errlen, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void seterr(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
    if (!err || !errlen) return;
    int n = snprintf(err, errlen, "%s: ", path);
    if (n < 0 || (size_t)n >= errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
    uint8_t *b = buf;
    while (len) {
        ssize_t k = pread(fd, b, len, (off_t)off);
        if (k < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (k == 0) {
            errno = EIO; /* file shrank under us */
            return -1;
        }
        b += k;
        len -= (size_t)k;
        off += (uint64_t)k;
    }
    return 0;
}

const char *trc_chunk_type_name(uint32_t t)
{
    switch (t) {
    case TRC_CHUNK_HEADER: return "header";
    case TRC_CHUNK_CODE_OBJECT: return "code object";
    case TRC_CHUNK_EVENT: return "event";
    case TRC_CHUNK_WORKGROUP: return "record frame";
    case TRC_CHUNK_WG_DATA: return "data frame";
    case TRC_CHUNK_INDEX: return "index";
    case TRC_CHUNK_KERNEL_END: return "kernel-end";
    case TRC_CHUNK_SEGMENT: return "wave segment";
    case TRC_CHUNK_SEG_DATA: return "wave segment data";
    case TRC_CHUNK_WG_STORES: return "store frame";
    default: return "unknown";
    }
}

int trc_chunk_next(trc_chunk_iter *it, trc_chunk_info *c, char *err, size_t errlen)
{
    uint64_t off = it->off;
    if (off >= it->end)
        return 0;
    if (it->end - off < TRC_CHUNK_HDR_SIZE) {
        snprintf(err, errlen, "cut off inside the chunk header at byte %llu (chunks end at byte %llu)",
                 (unsigned long long)off, (unsigned long long)it->end);
        return -1;
    }
    uint8_t h[TRC_CHUNK_HDR_SIZE + sizeof c->head];
    uint64_t avail = it->end - off;
    size_t hn = avail < sizeof h ? (size_t)avail : sizeof h;
    if (pread_all(it->fd, h, hn, off) < 0) {
        snprintf(err, errlen, "read error at byte %llu: %s", (unsigned long long)off, strerror(errno));
        return -1;
    }
    c->off = off;
    c->type = trc_get_le32(h);
    c->flags = trc_get_le32(h + 4);
    c->size = trc_get_le64(h + 8);
    if (c->size > avail - TRC_CHUNK_HDR_SIZE) {
        snprintf(err, errlen, "cut off inside the chunk at byte %llu (%llu payload bytes run past byte %llu)",
                 (unsigned long long)off, (unsigned long long)c->size, (unsigned long long)it->end);
        return -1;
    }
    c->head_len = (uint32_t)(hn - TRC_CHUNK_HDR_SIZE < c->size ? hn - TRC_CHUNK_HDR_SIZE : c->size);
    memcpy(c->head, h + TRC_CHUNK_HDR_SIZE, c->head_len);
    it->off = off + TRC_CHUNK_HDR_SIZE + c->size;
    return 1;
}

/* The calling thread's zstd decompression context, made on first use and
 * kept for the thread's life (freed by its destructor): ZSTD_decompress makes
 * and frees one per call, about 3% of a sampled replay that reads a chunk
 * per fast-forwarded workgroup (km at 15 iterations, 2026-12-04). NULL when
 * out of memory: the caller falls back to ZSTD_decompress. */
static pthread_key_t dctx_key;
static pthread_once_t dctx_once = PTHREAD_ONCE_INIT;
static int dctx_key_ok;
static void dctx_free(void *p) { ZSTD_freeDCtx(p); }
static void dctx_init(void) { dctx_key_ok = pthread_key_create(&dctx_key, dctx_free) == 0; }
static ZSTD_DCtx *chunk_dctx(void)
{
    if (pthread_once(&dctx_once, dctx_init) != 0 || !dctx_key_ok)
        return NULL;
    ZSTD_DCtx *dc = pthread_getspecific(dctx_key);
    if (!dc && (dc = ZSTD_createDCtx()) != NULL && pthread_setspecific(dctx_key, dc) != 0) {
        ZSTD_freeDCtx(dc);
        dc = NULL;
    }
    return dc;
}

int trc_read_chunk_raw(int fd, const char *path, uint64_t off, uint64_t end, uint32_t want,
                       uint32_t *type_out_, uint8_t **out, size_t *outlen, uint64_t *chunk_bytes,
                       char *err, size_t errlen)
{
    uint32_t type = want;
    const char *cn = want ? trc_chunk_type_name(want) : "a";
    if (off < TRC_FILE_HDR_SIZE || off > end || end - off < TRC_CHUNK_HDR_SIZE) {
        seterr(err, errlen, path, "%s chunk offset %llu outside the file's chunk area (16..%llu)",
               cn, (unsigned long long)off, (unsigned long long)end);
        return -1;
    }
    /* the header, through the one chunk walker (trc_chunk_next) */
    trc_chunk_iter it = {fd, off, end};
    trc_chunk_info ci;
    char why0[200];
    if (trc_chunk_next(&it, &ci, why0, sizeof why0) != 1) {
        seterr(err, errlen, path, "%s chunk at byte %llu: %s", cn, (unsigned long long)off, why0);
        return -1;
    }
    uint32_t t = ci.type, flags = ci.flags;
    uint64_t size = ci.size;
    if (!want) {
        if (t < TRC_CHUNK_HEADER || t > TRC_CHUNK_MAX) {
            seterr(err, errlen, path, "chunk at byte %llu has unknown type %u",
                   (unsigned long long)off, t);
            return -1;
        }
        type = t;
        cn = trc_chunk_type_name(t);
    }
    if (t != type) {
        seterr(err, errlen, path, "chunk at byte %llu has type %u (%s), expected %u (%s)",
               (unsigned long long)off, t, trc_chunk_type_name(t), type, cn);
        return -1;
    }
    if (flags != 0) {
        seterr(err, errlen, path, "%s chunk at byte %llu has reserved flags 0x%x set",
               cn, (unsigned long long)off, flags);
        return -1;
    }
    if (size > SIZE_MAX - 1) {
        seterr(err, errlen, path, "%s chunk at byte %llu: payload size %llu runs past byte %llu",
               cn, (unsigned long long)off, (unsigned long long)size, (unsigned long long)end);
        return -1;
    }
    uint8_t *z = malloc(size ? size : 1);
    if (!z) {
        seterr(err, errlen, path, "%s chunk at byte %llu: out of memory (%llu bytes)", cn,
               (unsigned long long)off, (unsigned long long)size);
        return -1;
    }
    if (pread_all(fd, z, size, off + TRC_CHUNK_HDR_SIZE) < 0) {
        seterr(err, errlen, path, "read error at byte %llu: %s", (unsigned long long)off,
               strerror(errno));
        free(z);
        return -1;
    }
    uint8_t *raw = NULL;
    const char *why = NULL;
    ZSTD_frameHeader fh;
    size_t fsz = ZSTD_findFrameCompressedSize(z, size);
    if (ZSTD_isError(fsz)) {
        why = ZSTD_getErrorName(fsz);
    } else if (fsz != size) {
        why = "payload is not exactly one zstd frame";
    } else if (size < 5 || (z[4] & 0x18) != 0) {
        /* Frame_Header_Descriptor bit 4 is unused and bit 3 reserved (RFC
         * 8878 3.1.1.1.1); zstd writes both as 0, decoders ignore bit 4, so
         * a set bit is damage the checksum would not see. */
        why = "zstd frame header has unused/reserved bits set";
    } else if (ZSTD_getFrameHeader(&fh, z, size) != 0) {
        why = "bad zstd frame header";
    } else if (fh.frameType != ZSTD_frame || !fh.checksumFlag ||
               fh.frameContentSize == ZSTD_CONTENTSIZE_UNKNOWN || fh.dictID != 0) {
        why = "zstd frame lacks content size or checksum, or needs a dictionary";
    } else {
        unsigned long long bound = ZSTD_decompressBound(z, size);
        if (ZSTD_isError(bound) || bound == ZSTD_CONTENTSIZE_ERROR ||
            fh.frameContentSize > bound || fh.frameContentSize > TRC_MAX_FRAME_BYTES ||
            fh.frameContentSize > SIZE_MAX - 1) {
            why = "zstd frame content size is inconsistent with its blocks";
        } else if (fh.windowSize > (fh.frameContentSize < 1024 ? 1024 : fh.frameContentSize)) {
            /* zstd never writes a window larger than a known content size
             * (it sets Single_Segment instead); a larger one is damage. */
            why = "zstd frame window size larger than its content";
        } else {
            size_t rn = (size_t)fh.frameContentSize;
            raw = malloc(rn ? rn : 1);
            if (!raw) {
                why = "out of memory decompressing";
            } else {
                ZSTD_DCtx *dc = chunk_dctx();
                size_t got = dc ? ZSTD_decompressDCtx(dc, raw, rn, z, size) : ZSTD_decompress(raw, rn, z, size);
                if (ZSTD_isError(got)) why = ZSTD_getErrorName(got);
                else if (got != rn) why = "zstd frame decompressed to a different size than declared";
                else *outlen = rn;
            }
        }
    }
    free(z);
    if (why) {
        seterr(err, errlen, path, "%s chunk at byte %llu is corrupt: %s", cn,
               (unsigned long long)off, why);
        free(raw);
        return -1;
    }
    if (chunk_bytes) *chunk_bytes = TRC_CHUNK_HDR_SIZE + size;
    if (type_out_) *type_out_ = type;
    *out = raw;
    return 0;
}

/*
 * Reads the chunk at `off` which must have type `type` and end at or before
 * `end`; decompresses and unpacks it with `desc`. If `chunk_bytes` is given
 * it receives header + payload size. Returns the message (free with
 * protobuf_c_message_free_unpacked) or NULL with err set.
 */
static ProtobufCMessage *read_chunk(int fd, const char *path, uint64_t off, uint64_t end,
                                    uint32_t type, const ProtobufCMessageDescriptor *desc,
                                    uint64_t *chunk_bytes, char *err, size_t errlen)
{
    uint8_t *raw;
    size_t n;
    if (trc_read_chunk_raw(fd, path, off, end, type, NULL, &raw, &n, chunk_bytes, err, errlen) < 0)
        return NULL;
    ProtobufCMessage *msg = protobuf_c_message_unpack(desc, NULL, n, raw);
    free(raw);
    if (!msg)
        seterr(err, errlen, path, "%s chunk at byte %llu is corrupt: protobuf message does not decode",
               trc_chunk_type_name(type), (unsigned long long)off);
    return msg;
}


static void copy_str(char *dst, size_t cap, const char *src)
{
    if (!src) src = "";
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = 0;
}

void trc_reader_close(trc_reader *r)
{
    if (!r) return;
    if (r->fd >= 0) close(r->fd);
    for (size_t i = 0; i < r->n_co; i++)
        if (r->co[i]) protobuf_c_message_free_unpacked(&r->co[i]->base, NULL);
    free(r->co);
    for (size_t i = 0; i < r->n_ev; i++)
        if (r->evm[i]) protobuf_c_message_free_unpacked(&r->evm[i]->base, NULL);
    free(r->evm);
    if (r->evdata)
        for (size_t i = 0; i < r->n_ev; i++) free(r->evdata[i]);
    free(r->evdata);
    free(r->ev);
    trc_himg_destroy(r->himg);
    for (size_t i = 0; i < r->nk; i++) {
        rkernel *k = &r->k[i];
        free(k->frame_off); free(k->dframe_off); free(k->wg_frame);
        free(k->rec_off); free(k->rec_len); free(k->data_off); free(k->data_len);
        free(k->seg_wg); free(k->seg_wave); free(k->seg_off); free(k->seg_doff);
        free(k->sframe_off); free(k->sto_off); free(k->sto_len);
    }
    free(r->k);
    for (fentry *e = r->lru_head; e;) {
        fentry *n = e->next;
        free(e->data);
        free(e);
        e = n;
    }
    free(r->slot);
    pthread_mutex_destroy(&r->err_mu);
    pthread_mutex_destroy(&r->cmu);
    pthread_cond_destroy(&r->ccv);
    free(r->path);
    free(r);
}

#define TRUNC_MSG "truncated or incomplete trace (no index at end; was the emulator killed?); " \
                  "`gcn3-trace salvage` recovers its complete kernels"

const char *trc_event_problem(const Gtrace__Event *m)
{
    if ((unsigned)m->kind > TRC_EV_SYNC) return "unknown event kind";
    if (m->mem_kind > TRC_MEM_SCRATCH || m->copy_kind > TRC_COPY_INIT || m->value > 255)
        return "out-of-range memory/copy kind or value";
    if (m->has_data) {
        /* At most one of data / data_shuf4 (format 0.2) carries the bytes. */
        int shuf = m->data_shuf4.len != 0;
        size_t len = shuf ? m->data_shuf4.len : m->data.len;
        if (m->kind != GTRACE__EVENT_KIND__EV_COPY || len != m->size || (shuf && m->data.len))
            return "data bytes on a non-copy event or not matching its size";
    } else if (m->data.len || m->data_shuf4.len) {
        return "data bytes without has_data";
    }
    if ((m->kind == GTRACE__EVENT_KIND__EV_LAUNCH) != (m->launch != NULL))
        return m->launch ? "launch record on a non-launch event" : "launch record missing";
    if (m->launch && (m->launch->n_grid != 3 || m->launch->n_wg_size != 3 || m->launch->kernarg.len > UINT32_MAX))
        return "malformed launch record";
    if ((m->until_event || m->stream_wait || m->wait_stream || m->stream_nonblocking) &&
        m->kind != GTRACE__EVENT_KIND__EV_SYNC)
        return "stream-wait fields on a non-sync event";
    if (m->stream_nonblocking && (m->until_event || m->stream_wait || !m->stream))
        return "a non-blocking declaration that also waits, or of the null stream";
    if (m->managed && (m->kind != GTRACE__EVENT_KIND__EV_ALLOC || m->mem_kind != TRC_MEM_DEVICE))
        return "managed flag on an event that is not a device-memory ALLOC";
    return NULL;
}

/* Converts and validates one event message. */
static int take_event(trc_reader *r, size_t i, Gtrace__Event *m, char *err, size_t errlen)
{
    trc_event *e = &r->ev[i];
    memset(e, 0, sizeof *e);
    const char *why = trc_event_problem(m);
    if (why) {
        seterr(err, errlen, r->path, "event %zu (kind %d, size %llu): %s", i, (int)m->kind,
               (unsigned long long)m->size, why);
        return -1;
    }
    e->kind = (trc_event_kind)m->kind;
    e->device = m->device;
    e->stream = m->stream;
    e->addr = m->addr;
    e->src = m->src;
    e->size = m->size;
    e->mem_kind = (trc_mem_kind)m->mem_kind;
    e->copy_kind = (trc_copy_kind)m->copy_kind;
    e->value = (uint8_t)m->value;
    if (m->until_event > i) { /* a point after the sync itself: a damaged or hostile trace */
        seterr(err, errlen, r->path, "event %zu: sync waits for the work before event %llu, which follows it", i,
               (unsigned long long)m->until_event);
        return -1;
    }
    e->until_event = m->until_event;
    e->host_gap_ns = m->host_gap_ns;
    e->stream_wait = m->stream_wait != 0;
    e->wait_stream = m->wait_stream;
    e->stream_nonblocking = m->stream_nonblocking != 0;
    e->managed = m->managed != 0;
    if (m->has_data) { /* trc_event_problem checked: exactly size bytes in one of the two */
        int shuf = m->data_shuf4.len != 0;
        size_t len = shuf ? m->data_shuf4.len : m->data.len;
        if (shuf) {
            uint8_t *b = malloc(len);
            if (!b) {
                seterr(err, errlen, r->path, "event %zu: out of memory for %zu data bytes", i, len);
                return -1;
            }
            trc_unshuf4(b, m->data_shuf4.data, len);
            r->evdata[i] = b;
            e->data = b;
            /* the shuffled bytes are not read again: give them back now, not
             * when the reader closes (a second copy of every copy's data;
             * the message was unpacked with protobuf-c's default allocator,
             * malloc, and a NULL field is not freed again) */
            free(m->data_shuf4.data);
            m->data_shuf4.data = NULL;
            m->data_shuf4.len = 0;
        } else {
            e->data = m->data.data;
        }
    }
    if (m->launch) {
        Gtrace__Launch *l = m->launch;
        trc_launch *a = &e->launch;
        a->kernel_id = l->kernel_id;
        a->device = m->device;
        a->stream = m->stream;
        a->code_object_id = l->code_object_id;
        copy_str(a->kernel_name, sizeof a->kernel_name, l->kernel_name);
        a->entry_vaddr = l->entry_vaddr;
        memcpy(a->grid, l->grid, sizeof a->grid);
        memcpy(a->wg_size, l->wg_size, sizeof a->wg_size);
        a->waves_per_wg = l->waves_per_wg;
        a->group_segment_size = l->group_segment_size;
        a->private_segment_size = l->private_segment_size;
        a->vgpr_count = l->vgpr_count;
        a->sgpr_count = l->sgpr_count;
        a->kernarg_addr = l->kernarg_addr;
        a->kernarg_size = (uint32_t)l->kernarg.len;
        a->kernarg = l->kernarg.len ? l->kernarg.data : NULL;
    }
    return 0;
}

/* Copies and validates one kernel's index entry (from the index or a
 * kernel-end chunk). Frames must lie in [16, end); workgroups must map into
 * the frames in order. */
/* Kernel i's wave segments (format 2.0, KernelIndex.seg_*) into k, checked:
 * equal column lengths, none in a 1.x file, each of one of the n workgroups,
 * sorted by (workgroup, wave), chunk offsets inside [16, end). 0 or -1. */
static int take_segments(trc_reader *r, rkernel *k, const Gtrace__KernelIndex *ki, uint32_t i, size_t n, uint64_t end,
                         char *err, size_t errlen)
{
    const char *path = r->path;
    size_t ns = ki->n_seg_wg;
    if (ki->n_seg_wave != ns || ki->n_seg_offset != ns || ki->n_seg_data_offset != ns || ns > UINT32_MAX) {
        seterr(err, errlen, path, "index: wave-segment columns of kernel %u have different lengths", i);
        return -1;
    }
    if (ns && r->hdr.format_major < 2) {
        seterr(err, errlen, path, "index: kernel %u has wave segments, which format %u.%u does not have", i,
               r->hdr.format_major, r->hdr.format_minor);
        return -1;
    }
    for (size_t j = 0; j < ns; j++) {
        if (ki->seg_wg[j] >= n || (j && (ki->seg_wg[j] < ki->seg_wg[j - 1] ||
                                         (ki->seg_wg[j] == ki->seg_wg[j - 1] && ki->seg_wave[j] < ki->seg_wave[j - 1]))) ||
            ki->seg_offset[j] < TRC_FILE_HDR_SIZE || ki->seg_offset[j] >= end ||
            ki->seg_data_offset[j] < TRC_FILE_HDR_SIZE || ki->seg_data_offset[j] >= end) {
            seterr(err, errlen, path, "index: wave segment %zu of kernel %u is out of order or points outside the file",
                   j, i);
            return -1;
        }
    }
    k->seg_wg = malloc((ns + 1) * 4);
    k->seg_wave = malloc((ns + 1) * 4);
    k->seg_off = malloc((ns + 1) * 8);
    k->seg_doff = malloc((ns + 1) * 8);
    if (!k->seg_wg || !k->seg_wave || !k->seg_off || !k->seg_doff) {
        seterr(err, errlen, path, "out of memory");
        return -1;
    }
    if (ns) {
        memcpy(k->seg_wg, ki->seg_wg, ns * 4);
        memcpy(k->seg_wave, ki->seg_wave, ns * 4);
        memcpy(k->seg_off, ki->seg_offset, ns * 8);
        memcpy(k->seg_doff, ki->seg_data_offset, ns * 8);
    }
    k->st.n_segments = (uint32_t)ns;
    k->st.seg_bytes = ki->seg_bytes;
    return 0;
}

static int take_kernel_index(trc_reader *r, rkernel *k, const Gtrace__KernelIndex *ki, uint32_t i,
                             uint64_t end, char *err, size_t errlen)
{
    const char *path = r->path;
    size_t n = ki->n_wg_frame, nf = ki->n_frame_offset;
    if (ki->kernel_id != i || ki->launch_event >= r->n_ev ||
        r->ev[ki->launch_event].kind != TRC_EV_LAUNCH ||
        r->ev[ki->launch_event].launch.kernel_id != i || ki->n_data_frame_offset != nf ||
        ki->n_wg_rec_off != n || ki->n_wg_rec_len != n || ki->n_wg_data_off != n ||
        ki->n_wg_data_len != n || n > UINT32_MAX || nf > UINT32_MAX) {
        seterr(err, errlen, path, "index entry of kernel %u is inconsistent", i);
        return -1;
    }
    if (ki->end_chunk_offset && (ki->end_chunk_offset < TRC_FILE_HDR_SIZE || ki->end_chunk_offset >= end)) {
        seterr(err, errlen, path, "index: kernel-end chunk of kernel %u points outside the file", i);
        return -1;
    }
    for (size_t j = 0; j < nf; j++) {
        if (ki->frame_offset[j] < TRC_FILE_HDR_SIZE || ki->frame_offset[j] >= end ||
            ki->data_frame_offset[j] < TRC_FILE_HDR_SIZE || ki->data_frame_offset[j] >= end) {
            seterr(err, errlen, path, "index: frame %zu of kernel %u points outside the file", j, i);
            return -1;
        }
    }
    for (size_t j = 0; j < n; j++) {
        if (ki->wg_frame[j] >= nf || (j && ki->wg_frame[j] < ki->wg_frame[j - 1]) ||
            (uint64_t)ki->wg_rec_off[j] + ki->wg_rec_len[j] > UINT32_MAX ||
            (uint64_t)ki->wg_data_off[j] + ki->wg_data_len[j] > UINT32_MAX) {
            seterr(err, errlen, path, "index: workgroup %zu of kernel %u maps to a bad frame slice", j, i);
            return -1;
        }
    }
    if (take_segments(r, k, ki, i, n, end, err, errlen) < 0)
        return -1;
    /* 2.4 store frames: none (every column empty), or an offset per frame
     * and a slice per workgroup */
    if (ki->n_store_frame_offset || ki->n_wg_store_off || ki->n_wg_store_len) {
        if (ki->n_store_frame_offset != nf || ki->n_wg_store_off != n || ki->n_wg_store_len != n) {
            seterr(err, errlen, path, "index entry of kernel %u: store frame columns of the wrong length", i);
            return -1;
        }
        uint32_t ns = 0;
        for (size_t j = 0; j < nf; j++) {
            uint64_t o = ki->store_frame_offset[j];
            if (o && (o < TRC_FILE_HDR_SIZE || o >= end)) {
                seterr(err, errlen, path, "index: store frame %zu of kernel %u points outside the file", j, i);
                return -1;
            }
            ns += o != 0;
        }
        for (size_t j = 0; j < n; j++) {
            if ((uint64_t)ki->wg_store_off[j] + ki->wg_store_len[j] > UINT32_MAX) {
                seterr(err, errlen, path, "index: workgroup %zu of kernel %u maps to a bad store frame slice", j, i);
                return -1;
            }
        }
        k->sframe_off = malloc((nf + 1) * 8);
        k->sto_off = malloc((n + 1) * 4);
        k->sto_len = malloc((n + 1) * 4);
        if (!k->sframe_off || !k->sto_off || !k->sto_len) {
            seterr(err, errlen, path, "out of memory");
            return -1;
        }
        if (nf) memcpy(k->sframe_off, ki->store_frame_offset, nf * 8);
        if (n) {
            memcpy(k->sto_off, ki->wg_store_off, n * 4);
            memcpy(k->sto_len, ki->wg_store_len, n * 4);
        }
        k->st.n_store_frames = ns;
        k->st.store_bytes = ki->store_bytes;
        k->st.raw_store_bytes = ki->raw_store_bytes;
    }
    k->frame_off = malloc((nf + 1) * 8);
    k->dframe_off = malloc((nf + 1) * 8);
    k->wg_frame = malloc((n + 1) * 4);
    k->rec_off = malloc((n + 1) * 4);
    k->rec_len = malloc((n + 1) * 4);
    k->data_off = malloc((n + 1) * 4);
    k->data_len = malloc((n + 1) * 4);
    if (!k->frame_off || !k->dframe_off || !k->wg_frame || !k->rec_off || !k->rec_len ||
        !k->data_off || !k->data_len) {
        seterr(err, errlen, path, "out of memory");
        return -1;
    }
    if (nf) {
        memcpy(k->frame_off, ki->frame_offset, nf * 8);
        memcpy(k->dframe_off, ki->data_frame_offset, nf * 8);
    }
    if (n) {
        memcpy(k->wg_frame, ki->wg_frame, n * 4);
        memcpy(k->rec_off, ki->wg_rec_off, n * 4);
        memcpy(k->rec_len, ki->wg_rec_len, n * 4);
        memcpy(k->data_off, ki->wg_data_off, n * 4);
        memcpy(k->data_len, ki->wg_data_len, n * 4);
    }
    k->st.launch_event = ki->launch_event;
    k->st.n_wg = (uint32_t)n;
    k->st.n_frames = (uint32_t)nf;
    k->st.n_waves = ki->n_waves;
    k->st.n_instr = ki->n_instr;
    k->st.n_mem = ki->n_mem;
    k->st.wg_bytes = ki->wg_bytes;
    k->st.data_bytes = ki->data_bytes;
    k->st.raw_rec_bytes = ki->raw_rec_bytes;
    k->st.raw_data_bytes = ki->raw_data_bytes;
    k->st.ended = ki->ended;
    k->st.end_chunk_offset = ki->end_chunk_offset;
    trc_event *le = &r->ev[ki->launch_event];
    le->n_instr = ki->n_instr;
    le->n_wg = (uint32_t)n;
    return 0;
}

trc_reader *trc_reader_open(const char *path, char *err, size_t errlen)
{
    trc_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        seterr(err, errlen, path, "out of memory");
        free(r);
        return NULL;
    }
    pthread_mutex_init(&r->err_mu, NULL);
    pthread_mutex_init(&r->cmu, NULL);
    pthread_cond_init(&r->ccv, NULL);
    r->limit = TRC_READER_CACHE_DEFAULT;
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    Gtrace__Index *ix = NULL;
    Gtrace__Header *hm = NULL;
    if (r->fd < 0) {
        seterr(err, errlen, path, "cannot open trace: %s", strerror(errno));
        goto fail;
    }
    struct stat st;
    if (fstat(r->fd, &st) < 0) {
        seterr(err, errlen, path, "cannot stat: %s", strerror(errno));
        goto fail;
    }
    r->size = (uint64_t)st.st_size;

    /* File header. */
    uint8_t fh[TRC_FILE_HDR_SIZE] = {0};
    size_t have = r->size < sizeof fh ? (size_t)r->size : sizeof fh;
    if (pread_all(r->fd, fh, have, 0) < 0) {
        seterr(err, errlen, path, "read error: %s", strerror(errno));
        goto fail;
    }
    if (memcmp(fh, TRC_FILE_MAGIC, have < 8 ? have : 8) != 0) {
        seterr(err, errlen, path, "not a .gtrace file (bad magic)");
        goto fail;
    }
    if (have < sizeof fh) {
        seterr(err, errlen, path, TRUNC_MSG);
        goto fail;
    }
    uint32_t major = trc_get_le32(fh + 8), minor = trc_get_le32(fh + 12);
    if (major > TRC_FORMAT_MAJOR) {
        seterr(err, errlen, path,
               "trace format version %u.%u is newer than this reader (%u.%u); use a newer build",
               major, minor, TRC_FORMAT_MAJOR, TRC_FORMAT_MINOR);
        goto fail;
    }
    if (major < TRC_FORMAT_MAJOR_OLDEST) {
        seterr(err, errlen, path,
               "trace format version %u.%u (a pre-1.0 draft) is not readable by this reader (%u.%u); "
               "record the trace again",
               major, minor, TRC_FORMAT_MAJOR, TRC_FORMAT_MINOR);
        goto fail;
    }

    /* Trailer -> index. */
    uint8_t tr[TRC_TRAILER_SIZE];
    if (r->size < TRC_FILE_HDR_SIZE + TRC_TRAILER_SIZE ||
        pread_all(r->fd, tr, sizeof tr, r->size - TRC_TRAILER_SIZE) < 0 ||
        memcmp(tr + 16, TRC_TRAILER_MAGIC, 8) != 0 || trc_get_le64(tr + 8) != r->size) {
        seterr(err, errlen, path, TRUNC_MSG);
        goto fail;
    }
    uint64_t ixoff = trc_get_le64(tr), ixbytes = 0;
    uint64_t ixend = r->size - TRC_TRAILER_SIZE;
    ix = (Gtrace__Index *)read_chunk(r->fd, path, ixoff, ixend, TRC_CHUNK_INDEX,
                                     &gtrace__index__descriptor, &ixbytes, err, errlen);
    if (!ix) goto fail;
    if (ixoff + ixbytes != ixend) {
        seterr(err, errlen, path, "index chunk does not end at the trailer");
        goto fail;
    }
    r->data_end = ixoff;

    /* Header. */
    if (ix->header_offset != TRC_FILE_HDR_SIZE) {
        seterr(err, errlen, path, "index: header chunk not at byte 16");
        goto fail;
    }
    hm = (Gtrace__Header *)read_chunk(r->fd, path, ix->header_offset, r->data_end,
                                      TRC_CHUNK_HEADER, &gtrace__header__descriptor, NULL, err,
                                      errlen);
    if (!hm) goto fail;
    if (!hm->magic || strcmp(hm->magic, TRC_HEADER_MAGIC_STR) != 0 ||
        hm->format_major != major || hm->format_minor != minor) {
        seterr(err, errlen, path, "header chunk magic or version disagrees with the file header");
        goto fail;
    }
    copy_str(r->hdr.producer, sizeof r->hdr.producer, hm->producer);
    copy_str(r->hdr.producer_version, sizeof r->hdr.producer_version, hm->producer_version);
    copy_str(r->hdr.isa_target, sizeof r->hdr.isa_target, hm->isa_target);
    copy_str(r->hdr.command_line, sizeof r->hdr.command_line, hm->command_line);
    r->hdr.device_count = hm->device_count;
    r->hdr.lds_values_omitted = hm->lds_values_omitted;
    r->hdr.format_major = major;
    r->hdr.format_minor = minor;

    /* Code objects. */
    r->co = calloc(ix->n_code_object_offset + 1, sizeof *r->co);
    r->evm = calloc(ix->n_event_offset + 1, sizeof *r->evm);
    r->ev = calloc(ix->n_event_offset + 1, sizeof *r->ev);
    r->evdata = calloc(ix->n_event_offset + 1, sizeof *r->evdata);
    r->k = calloc(ix->n_kernels + 1, sizeof *r->k);
    if (!r->co || !r->evm || !r->ev || !r->evdata || !r->k) {
        seterr(err, errlen, path, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < ix->n_code_object_offset; i++) {
        Gtrace__CodeObject *c = (Gtrace__CodeObject *)read_chunk(
            r->fd, path, ix->code_object_offset[i], r->data_end, TRC_CHUNK_CODE_OBJECT,
            &gtrace__code_object__descriptor, NULL, err, errlen);
        if (!c) goto fail;
        r->co[r->n_co++] = c;
        if (c->id != i) {
            seterr(err, errlen, path, "code object %zu carries id %u", i, c->id);
            goto fail;
        }
    }
    /* Events. */
    for (size_t i = 0; i < ix->n_event_offset; i++) {
        Gtrace__Event *m = (Gtrace__Event *)read_chunk(r->fd, path, ix->event_offset[i],
                                                       r->data_end, TRC_CHUNK_EVENT,
                                                       &gtrace__event__descriptor, NULL, err, errlen);
        if (!m) goto fail;
        r->evm[r->n_ev++] = m;
        if (take_event(r, i, m, err, errlen) < 0) goto fail;
    }
    /* Kernels. */
    for (size_t i = 0; i < ix->n_kernels; i++) {
        Gtrace__KernelIndex *ki = ix->kernels[i];
        rkernel *k = &r->k[r->nk++];
        if (take_kernel_index(r, k, ki, (uint32_t)i, r->data_end, err, errlen) < 0) goto fail;
        k->slot_base = r->n_slots;
        r->n_slots += 3 * (size_t)k->st.n_frames;
    }
    r->slot = calloc(r->n_slots + 1, sizeof *r->slot);
    if (!r->slot) {
        seterr(err, errlen, path, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < r->n_ev; i++)
        if (r->ev[i].kind == TRC_EV_LAUNCH && r->ev[i].launch.kernel_id >= r->nk) {
            seterr(err, errlen, path, "launch event %zu names kernel %u missing from the index", i,
                   r->ev[i].launch.kernel_id);
            goto fail;
        }
    if (major > 2 || (major == 2 && minor >= 6)) {
        /* 2.6: what the host wrote, by event, for TRC_MO_HOST loads */
        if (!(r->himg = trc_himg_create())) {
            seterr(err, errlen, path, "out of memory");
            goto fail;
        }
        for (size_t i = 0; i < r->n_ev; i++) {
            const trc_event *e = &r->ev[i];
            switch (trc_himg_effect(e)) {
            case TRC_HIMG_FILL: trc_himg_write(r->himg, i, e->addr, e->size, NULL, e->value, 0); break;
            case TRC_HIMG_FORGET: trc_himg_forget(r->himg, i, e->addr, e->size); break;
            case TRC_HIMG_DATA: trc_himg_write(r->himg, i, e->addr, e->size, e->data, 0, 0); break;
            }
        }
        if (trc_himg_failed(r->himg)) {
            seterr(err, errlen, path, "out of memory");
            goto fail;
        }
    }
    protobuf_c_message_free_unpacked(&ix->base, NULL);
    protobuf_c_message_free_unpacked(&hm->base, NULL);
    return r;

fail:
    if (ix) protobuf_c_message_free_unpacked(&ix->base, NULL);
    if (hm) protobuf_c_message_free_unpacked(&hm->base, NULL);
    trc_reader_close(r);
    return NULL;
}

/* A copy taken under err_mu (loads on other threads may be writing it),
 * in a buffer of the calling thread. */
const char *trc_reader_error(const trc_reader *r)
{
    static _Thread_local char copy[sizeof r->err];
    if (!r)
        return "no trace reader";
    pthread_mutex_t *mu = (pthread_mutex_t *)&r->err_mu;
    pthread_mutex_lock(mu);
    memcpy(copy, r->err, sizeof copy);
    pthread_mutex_unlock(mu);
    return copy;
}
const trc_header_info *trc_reader_header(const trc_reader *r) { return &r->hdr; }
size_t trc_reader_n_code_objects(const trc_reader *r) { return r->n_co; }

const uint8_t *trc_reader_code_object(const trc_reader *r, size_t id, size_t *len)
{
    if (id >= r->n_co) {
        if (len) *len = 0;
        return NULL;
    }
    if (len) *len = r->co[id]->elf.len;
    return r->co[id]->elf.data;
}

uint64_t trc_reader_code_object_addr(const trc_reader *r, size_t id)
{
    return id < r->n_co ? r->co[id]->load_addr : 0;
}

size_t trc_reader_n_events(const trc_reader *r) { return r->n_ev; }
const trc_event *trc_reader_event(const trc_reader *r, size_t i)
{
    return i < r->n_ev ? &r->ev[i] : NULL;
}

size_t trc_reader_n_kernels(const trc_reader *r) { return r->nk; }

int trc_reader_kernel_stats(const trc_reader *r, uint32_t kernel_id, trc_kernel_stats *st)
{
    if (kernel_id >= r->nk) return -1;
    *st = r->k[kernel_id].st;
    return 0;
}

/* ---- workgroup decoding ----------------------------------------------------- */

/* Bump allocator over the single trc_wg allocation. */
typedef struct arena {
    uint8_t *p;
    size_t used, cap;
} arena;

static void *take(arena *a, size_t bytes)
{
    void *p = a->p + a->used;
    a->used += (bytes + 7) & ~(size_t)7;
    return p;
}

static size_t al8(uint64_t n) { return (size_t)((n + 7) & ~(uint64_t)7); }

/* Address slots memory op j of w takes in a loaded workgroup: one per
 * active lane (n), or one for a strided op of a compact reader. */
static inline uint64_t addr_slots(const Gtrace__Wave *w, size_t j, uint32_t n, int compact)
{
    return compact && w->addr_kind[j] == GTRACE__ADDR_KIND__ADDR_STRIDED && n ? 1 : n;
}

/* Validates wave i and returns the bytes it needs in the arena (or -1). */
static int64_t wave_size(const Gtrace__Wave *w, const Gtrace__WaveData *d, uint32_t i, int compact, int host_ok,
                         char *why, size_t whylen)
{
    size_t m = w->n_mem_flags;
    if (d && d->n_load_hash && d->n_load_hash != m) {
        snprintf(why, whylen, "wave %u: %zu load hashes for %zu memory ops", i, d->n_load_hash, m);
        return -1;
    }
    if (w->wave_in_wg != i) { snprintf(why, whylen, "wave %u is numbered %u", i, w->wave_in_wg); return -1; }
    if (w->branch_bits.len != ((uint64_t)w->n_branch + 7) / 8) {
        snprintf(why, whylen, "wave %u: %zu branch bytes for %u branches", i, w->branch_bits.len, w->n_branch);
        return -1;
    }
    if (w->n_exec_at_delta != w->n_exec_val || w->n_exec_val > UINT32_MAX ||
        w->n_indirect_target > UINT32_MAX || m > UINT32_MAX) {
        snprintf(why, whylen, "wave %u: exec/indirect/mem array lengths disagree", i);
        return -1;
    }
    if (w->n_mem_bytes != m || w->n_mem_exec != m || w->n_addr_kind != m ||
        w->n_addr_base_delta != m) {
        snprintf(why, whylen, "wave %u: memory-op columns have different lengths", i);
        return -1;
    }
    if (d && d->load_host.len) {
        /* 2.6 load_host: a bit per op, the padding zero, only in 2.6 traces */
        if (!host_ok || d->load_host.len != (m + 7) / 8 ||
            ((m & 7) && (d->load_host.data[m >> 3] >> (m & 7)))) {
            snprintf(why, whylen, "wave %u: %zu host-image bytes for %zu memory ops%s", i, d->load_host.len, m,
                     host_ok ? "" : " in a trace older than 2.6");
            return -1;
        }
    }
    uint64_t n_addr = 0, want_stride = 0, want_delta = 0, want_load = 0, want_store = 0, host = 0;
    for (size_t j = 0; j < m; j++) {
        uint32_t n = trc_popcount64(w->mem_exec[j]);
        if ((w->mem_flags[j] & ~TRC_MO_KNOWN) || w->mem_bytes[j] > TRC_MAX_BYTES_PER_LANE ||
            w->addr_kind[j] > GTRACE__ADDR_KIND__ADDR_DELTAS) {
            snprintf(why, whylen, "wave %u mem op %zu: bad flags, size or address kind", i, j);
            return -1;
        }
        if (d && d->load_host.len && (d->load_host.data[j >> 3] >> (j & 7) & 1)) {
            /* 2.6: a plain load whose values are the host image's */
            if (!trc_himg_load_ok(w->mem_flags[j]) || (d->n_load_len && d->load_len[j]) || (d->n_load_hash && d->load_hash[j])) {
                snprintf(why, whylen, "wave %u mem op %zu: a host-image bit on an op that is no plain load or has "
                         "values", i, j);
                return -1;
            }
            host += al8((uint64_t)n * w->mem_bytes[j]);
        }
        n_addr += addr_slots(w, j, n, compact);
        if (w->addr_kind[j] == GTRACE__ADDR_KIND__ADDR_STRIDED) want_stride += n >= 2;
        else want_delta += n ? n - 1 : 0;
        if (d) {
            uint32_t f = w->mem_flags[j], b = w->mem_bytes[j];
            uint32_t ll = d->n_load_len ? d->load_len[j] : 0; /* none in a 2.4 store frame */
            if ((ll && ll != trc_mo_load_len(f, n, b)) ||
                (d->store_len[j] && d->store_len[j] != trc_mo_store_len(f, n, b))) {
                snprintf(why, whylen, "wave %u mem op %zu: data length does not match the op", i, j);
                return -1;
            }
            if (d->n_load_hash && d->load_hash[j] &&
                (ll || (f & (TRC_MO_LOAD | TRC_MO_ATOMIC)) != TRC_MO_LOAD)) {
                snprintf(why, whylen, "wave %u mem op %zu: a load hash on an op that is no load or has values", i, j);
                return -1;
            }
            want_load += ll;
            want_store += d->store_len[j];
        }
    }
    if (w->n_addr_stride != want_stride || w->n_addr_delta != want_delta) {
        snprintf(why, whylen, "wave %u: address stream lengths disagree with the memory ops", i);
        return -1;
    }
    if (d && ((d->load_data.len && d->load_data_shuf4.len) ||
              (d->store_data.len && d->store_data_shuf4.len) ||
              d->load_data.len + d->load_data_shuf4.len != want_load ||
              d->store_data.len + d->store_data_shuf4.len != want_store)) {
        snprintf(why, whylen, "wave %u: data stream lengths disagree with the memory ops", i);
        return -1;
    }
    /* 1.2 awaits: equal lengths, each at least one instruction, sorted and
     * non-overlapping inside the wave's instructions (overflow-safe) */
    size_t na = w->n_await_at_delta;
    if (w->n_await_len != na || w->n_await_pc != na || na > UINT32_MAX ||
        (w->n_await_kind && w->n_await_kind != na)) {
        snprintf(why, whylen, "wave %u: await columns have different lengths", i);
        return -1;
    }
    uint64_t end = 0, at = 0;
    for (size_t j = 0; j < na; j++) {
        uint64_t d = w->await_at_delta[j], len = w->await_len[j];
        if (w->n_await_kind && w->await_kind[j] > TRC_AWAIT_RETRY) {
            snprintf(why, whylen, "wave %u await %zu: unknown kind %u", i, j, w->await_kind[j]);
            return -1;
        }
        if (d > w->n_instr || at > w->n_instr - d || (j && at + d < end) || len == 0 ||
            len > w->n_instr - (at + d)) {
            snprintf(why, whylen, "wave %u await %zu: instructions outside the wave's %llu or overlapping", i, j,
                     (unsigned long long)w->n_instr);
            return -1;
        }
        at += d;
        end = at + len;
    }
    uint64_t sz = al8(m * sizeof(trc_mem_op)) + al8(8 * (uint64_t)w->n_indirect_target) +
                  2 * al8(8 * (uint64_t)w->n_exec_val) + al8(8 * n_addr) +
                  al8(w->branch_bits.len) + al8(want_load) + al8(want_store) + 3 * al8(8 * (uint64_t)na) + al8(4 * (uint64_t)na) +
                  host;
    return (int64_t)sz;
}

/* w's ops into o. Their per-lane address deltas: w->addr_delta, or (a wave
 * of trc_fast_workgroup_lazy) the checked varints [dq, dend). no_lds_addr:
 * LDS ops get no addresses (TRC_WG_NO_LDS_ADDR). */
static int wave_fill(trc_wave *o, const Gtrace__Wave *w, const Gtrace__WaveData *d, int compact, int no_loads,
                     int no_lds_addr, const uint8_t *dq, const uint8_t *dend, const trc_himg *himg, uint64_t before,
                     arena *a)
{
    size_t m = w->n_mem_flags;
    o->wave_in_wg = w->wave_in_wg;
    o->n_instr = w->n_instr;
    o->n_branch = w->n_branch;
    uint8_t *bb = take(a, w->branch_bits.len);
    if (w->branch_bits.len) memcpy(bb, w->branch_bits.data, w->branch_bits.len);
    o->branch_taken = bb;
    o->n_indirect = (uint32_t)w->n_indirect_target;
    uint64_t *it = take(a, 8 * w->n_indirect_target);
    if (w->n_indirect_target) memcpy(it, w->indirect_target, 8 * w->n_indirect_target);
    o->indirect_target = it;
    o->n_exec = (uint32_t)w->n_exec_val;
    uint64_t *ea = take(a, 8 * w->n_exec_val), *ev = take(a, 8 * w->n_exec_val);
    uint64_t at = 0;
    for (size_t j = 0; j < w->n_exec_val; j++) {
        at += w->exec_at_delta[j];
        ea[j] = at;
        ev[j] = w->exec_val[j];
    }
    o->exec_at = ea;
    o->exec_val = ev;
    size_t na = w->n_await_at_delta;
    uint64_t *aa = take(a, 8 * na), *al = take(a, 8 * na), *ap = take(a, 8 * na);
    uint32_t *ak = take(a, 4 * na);
    uint64_t aat = 0;
    for (size_t j = 0; j < na; j++) {
        aat += w->await_at_delta[j];
        aa[j] = aat;
        al[j] = w->await_len[j];
        ap[j] = w->await_pc[j];
        ak[j] = w->n_await_kind ? w->await_kind[j] : TRC_AWAIT_WAIT;
    }
    o->await_kind = ak;
    o->n_await = (uint32_t)na;
    o->await_at = aa;
    o->await_len = al;
    o->await_pc = ap;
    o->n_mem = (uint32_t)m;
    trc_mem_op *mo = take(a, m * sizeof *mo);
    o->mem = mo;
    uint64_t n_addr = 0, nl = 0, ns = 0;
    for (size_t j = 0; j < m; j++) n_addr += addr_slots(w, j, trc_popcount64(w->mem_exec[j]), compact);
    if (d) {
        nl = no_loads ? 0 : d->load_data.len + d->load_data_shuf4.len; /* one of them is 0 (wave_size) */
        ns = d->store_data.len + d->store_data_shuf4.len;
    }
    uint64_t *addr = take(a, 8 * n_addr);
    uint8_t *ld = take(a, nl), *sd = take(a, ns);
    if (!nl) {
        /* no load values (none recorded, or TRC_WG_STORES_ONLY) */
    } else if (d->load_data_shuf4.len) trc_unshuf4(ld, d->load_data_shuf4.data, nl);
    else if (nl) memcpy(ld, d->load_data.data, nl);
    if (d && d->store_data_shuf4.len) trc_unshuf4(sd, d->store_data_shuf4.data, ns);
    else if (ns) memcpy(sd, d->store_data.data, ns);
    uint64_t base = 0;
    size_t si = 0, di = 0;
    for (size_t j = 0; j < m; j++) {
        uint32_t n = trc_popcount64(w->mem_exec[j]);
        base += (uint64_t)w->addr_base_delta[j];
        mo[j].flags = w->mem_flags[j];
        mo[j].bytes_per_lane = w->mem_bytes[j];
        mo[j].exec = w->mem_exec[j];
        mo[j].addr = addr;
        mo[j].addr_strided = 0;
        mo[j].addr_stride = 0;
        if (n && no_lds_addr && (mo[j].flags & TRC_MO_LDS)) {
            /* its addresses left out: step over its stream entries */
            mo[j].addr = NULL;
            if (w->addr_kind[j] == GTRACE__ADDR_KIND__ADDR_STRIDED)
                si += n >= 2;
            else if (dq)
                dq = trc_fast_deltas_skip(n - 1, dq, dend);
            else
                di += n - 1;
        } else if (n) {
            addr[0] = base;
            if (w->addr_kind[j] == GTRACE__ADDR_KIND__ADDR_STRIDED) {
                uint64_t s = n >= 2 ? (uint64_t)w->addr_stride[si++] : 0;
                if (compact) {
                    addr++; /* the first lane's address only (trc_mo_addr) */
                } else {
                    for (uint32_t k = 1; k < n; k++) addr[k] = addr[k - 1] + s;
                    addr += n;
                }
                mo[j].addr_strided = 1;
                mo[j].addr_stride = s;
            } else if (dq) {
                dq = trc_fast_deltas_fill(addr, n - 1, dq, dend);
                addr += n;
            } else {
                for (uint32_t k = 1; k < n; k++) addr[k] = addr[k - 1] + (uint64_t)w->addr_delta[di++];
                addr += n;
            }
        }
        mo[j].load_data = NULL;
        mo[j].store_data = NULL;
        mo[j].load_hash = d && d->n_load_hash && !no_loads ? d->load_hash[j] : 0;
        if (d && !no_loads && d->load_len[j]) {
            mo[j].load_data = ld;
            ld += d->load_len[j];
        }
        if (d && d->store_len[j]) {
            mo[j].store_data = sd;
            sd += d->store_len[j];
        }
        if (d && d->load_host.len && (d->load_host.data[j >> 3] >> (j & 7) & 1) && !no_loads) {
            mo[j].flags |= TRC_MO_HOST;
        }
        if ((mo[j].flags & TRC_MO_HOST) && n) {
            /* 2.6: its values are the host image's as of its kernel's launch
             * (runs of adjacent lanes read at once) */
            uint32_t b = mo[j].bytes_per_lane;
            uint8_t *hb = take(a, (size_t)n * b);
            /* strided at its lanes' size: one run (not scanned) */
            int one = mo[j].addr_strided && mo[j].addr_stride == b;
            for (uint32_t k = 0; k < n;) {
                uint64_t a0 = trc_mo_addr(&mo[j], k);
                uint32_t e = one ? n : k + 1;
                while (e < n && trc_mo_addr(&mo[j], e) == trc_mo_addr(&mo[j], e - 1) + b) e++;
                if (!himg || trc_himg_read(himg, before, a0, (uint64_t)(e - k) * b, hb + (size_t)k * b) < 0) return -1;
                k = e;
            }
            mo[j].load_data = hb;
        }
    }
    return 0;
}

/* ---- 2.0 wave segments ------------------------------------------------------ */

/* A merged wave: one Gtrace__Wave / Gtrace__WaveData whose arrays are plain
 * malloc'd concatenations of the segments' and the last part's columns (the
 * data un-shuffled), so wave_size/wave_fill read it like any other wave. */
static void merged_free(Gtrace__Wave *w, Gtrace__WaveData *d)
{
    if (w) {
        free(w->branch_bits.data); free(w->indirect_target); free(w->exec_at_delta); free(w->exec_val);
        free(w->mem_flags); free(w->mem_bytes); free(w->mem_exec); free(w->addr_kind);
        free(w->addr_base_delta); free(w->addr_stride); free(w->addr_delta);
        free(w->await_at_delta); free(w->await_len); free(w->await_pc); free(w->await_kind);
        free(w);
    }
    if (d) {
        free(d->load_len); free(d->store_len); free(d->load_data.data); free(d->store_data.data);
        free(d->load_hash); free(d->load_host.data);
        free(d);
    }
}

/* Concatenates column `f` (element type T) of the np parts into m->f. */
#define CAT_COL(m, parts, np, f, T)                                                   \
    do {                                                                              \
        size_t tot_ = 0;                                                              \
        for (size_t p_ = 0; p_ < (np); p_++) tot_ += (parts)[p_]->n_##f;              \
        (m)->n_##f = tot_;                                                            \
        (m)->f = tot_ ? malloc(tot_ * sizeof(T)) : NULL;                              \
        if (tot_ && !(m)->f) goto oom;                                                \
        for (size_t p_ = 0, o_ = 0; p_ < (np); o_ += (parts)[p_]->n_##f, p_++)        \
            if ((parts)[p_]->n_##f)                                                   \
                memcpy((m)->f + o_, (parts)[p_]->f, (parts)[p_]->n_##f * sizeof(T));  \
    } while (0)

/* One data stream (plain or shuf4) of every part, un-shuffled, concatenated. */
static int cat_stream(ProtobufCBinaryData *out, Gtrace__WaveData *const *parts, size_t np, int store)
{
    size_t tot = 0;
    for (size_t p = 0; p < np; p++)
        tot += store ? parts[p]->store_data.len + parts[p]->store_data_shuf4.len
                     : parts[p]->load_data.len + parts[p]->load_data_shuf4.len;
    out->len = tot;
    out->data = tot ? malloc(tot) : NULL;
    if (tot && !out->data) return -1;
    size_t o = 0;
    for (size_t p = 0; p < np; p++) {
        const ProtobufCBinaryData *pl = store ? &parts[p]->store_data : &parts[p]->load_data;
        const ProtobufCBinaryData *sh = store ? &parts[p]->store_data_shuf4 : &parts[p]->load_data_shuf4;
        if (pl->len && sh->len) return -2; /* both: wave_size's rule */
        if (sh->len) trc_unshuf4(out->data + o, sh->data, sh->len);
        else if (pl->len) memcpy(out->data + o, pl->data, pl->len);
        o += pl->len + sh->len;
    }
    return 0;
}

/* The wave made of the np parts pw (segments, then the last part): every
 * column concatenated (wave j). 0; -1 with why (a part is inconsistent);
 * -2 out of memory. *out is set on 0 only. */
static int cat_wave(Gtrace__Wave *const *pw, size_t np, uint32_t j, Gtrace__Wave **out, char *why, size_t whylen)
{
    Gtrace__Wave *m = NULL;
    int rc = -1;
    if (!(m = malloc(sizeof *m))) goto oom;
    gtrace__wave__init(m);
    m->wave_in_wg = j;
    m->n_instr = pw[np - 1]->n_instr; /* the last part holds the whole wave's count */
    uint64_t nb = 0, nbytes = 0;
    for (size_t p = 0; p < np; p++) {
        nb += pw[p]->n_branch;
        nbytes += pw[p]->branch_bits.len;
        if (pw[p]->branch_bits.len != ((uint64_t)pw[p]->n_branch + 7) / 8) {
            snprintf(why, whylen, "wave %u part %zu: %zu branch bytes for %u branches", j, p,
                     pw[p]->branch_bits.len, pw[p]->n_branch);
            goto bad;
        }
    }
    if (nb > UINT32_MAX) {
        snprintf(why, whylen, "wave %u: more than 2^32 branches", j);
        goto bad;
    }
    m->n_branch = (uint32_t)nb;
    m->branch_bits.len = nbytes;
    m->branch_bits.data = nbytes ? malloc(nbytes) : NULL;
    if (nbytes && !m->branch_bits.data) goto oom;
    for (size_t p = 0, o = 0; p < np; o += pw[p]->branch_bits.len, p++)
        if (pw[p]->branch_bits.len) memcpy(m->branch_bits.data + o, pw[p]->branch_bits.data, pw[p]->branch_bits.len);
    CAT_COL(m, pw, np, indirect_target, uint64_t);
    CAT_COL(m, pw, np, exec_at_delta, uint64_t);
    CAT_COL(m, pw, np, exec_val, uint64_t);
    CAT_COL(m, pw, np, mem_flags, uint32_t);
    CAT_COL(m, pw, np, mem_bytes, uint32_t);
    CAT_COL(m, pw, np, mem_exec, uint64_t);
    CAT_COL(m, pw, np, addr_kind, uint32_t);
    CAT_COL(m, pw, np, addr_base_delta, int64_t);
    CAT_COL(m, pw, np, addr_stride, int64_t);
    CAT_COL(m, pw, np, addr_delta, int64_t);
    CAT_COL(m, pw, np, await_at_delta, uint64_t);
    CAT_COL(m, pw, np, await_len, uint64_t);
    CAT_COL(m, pw, np, await_pc, uint64_t);
    /* await kinds: a part without the column has only WAIT awaits */
    int any_kind = 0;
    for (size_t p = 0; p < np; p++) any_kind |= pw[p]->n_await_kind != 0;
    if (any_kind) {
        m->n_await_kind = m->n_await_at_delta;
        if (m->n_await_kind && !(m->await_kind = malloc(m->n_await_kind * sizeof *m->await_kind))) goto oom;
        for (size_t p = 0, o = 0; p < np; o += pw[p]->n_await_at_delta, p++) {
            if (pw[p]->n_await_kind && pw[p]->n_await_kind != pw[p]->n_await_at_delta) {
                snprintf(why, whylen, "wave %u part %zu: await columns have different lengths", j, p);
                goto bad;
            }
            for (size_t a = 0; a < pw[p]->n_await_at_delta; a++)
                m->await_kind[o + a] = pw[p]->n_await_kind ? pw[p]->await_kind[a] : TRC_AWAIT_WAIT;
        }
    }
    *out = m;
    return 0;
oom:
    rc = -2;
bad:
    merged_free(m, NULL);
    return rc;
}

/* The data of the wave made of the np parts pd: load/store lengths and the
 * streams (un-shuffled) concatenated. 0; -1 with why; -2 out of memory. */
static int cat_wave_data(Gtrace__WaveData *const *pd, size_t np, uint32_t j, Gtrace__WaveData **out, char *why,
                         size_t whylen)
{
    Gtrace__WaveData *d = NULL;
    int rc = -1;
    if (!(d = malloc(sizeof *d))) goto oom;
    gtrace__wave_data__init(d);
    d->wave_in_wg = j;
    CAT_COL(d, pd, np, load_len, uint32_t);
    CAT_COL(d, pd, np, store_len, uint32_t);
    /* 2.2 load hashes: one per op where any part has them (zero elsewhere) */
    size_t nh = 0;
    for (size_t p = 0; p < np; p++) nh += pd[p]->n_load_hash;
    if (nh) {
        if (!(d->load_hash = calloc(d->n_load_len, sizeof *d->load_hash))) goto oom;
        d->n_load_hash = d->n_load_len;
        for (size_t p = 0, o = 0; p < np; o += pd[p]->n_load_len, p++)
            if (pd[p]->n_load_hash)
                memcpy(d->load_hash + o, pd[p]->load_hash, pd[p]->n_load_len * sizeof *d->load_hash);
    }
    /* 2.6 host-image bits: one per op where any part has them (zero elsewhere) */
    int any_host = 0;
    for (size_t p = 0; p < np; p++) any_host |= pd[p]->load_host.len != 0;
    if (any_host && d->n_load_len) {
        size_t nb = (d->n_load_len + 7) / 8;
        if (!(d->load_host.data = calloc(nb, 1))) goto oom;
        d->load_host.len = nb;
        for (size_t p = 0, o = 0; p < np; o += pd[p]->n_load_len, p++) {
            if (pd[p]->load_host.len && pd[p]->load_host.len != (pd[p]->n_load_len + 7) / 8) {
                snprintf(why, whylen, "wave %u part %zu: host-image bits for another number of ops", j, p);
                goto bad;
            }
            for (size_t b = 0; pd[p]->load_host.len && b < pd[p]->n_load_len; b++)
                if (pd[p]->load_host.data[b >> 3] >> (b & 7) & 1) d->load_host.data[(o + b) >> 3] |= (uint8_t)(1u << ((o + b) & 7));
        }
    }
    int e = cat_stream(&d->load_data, pd, np, 0);
    if (!e) e = cat_stream(&d->store_data, pd, np, 1);
    if (e == -1) goto oom;
    if (e == -2) {
        snprintf(why, whylen, "wave %u: data stream lengths disagree with the memory ops", j);
        goto bad;
    }
    *out = d;
    return 0;
oom:
    rc = -2;
bad:
    merged_free(NULL, d);
    return rc;
}

/* Wave j of workgroup i (its last part `tail`, and `dtail` when loading data)
 * has tail->n_segments segments: reads them (chunk types 8 and 9) and builds
 * the whole wave into *mw (and *md). 0, or -1 with why (corrupt) or lerr
 * (a chunk that does not read) set. */
static int merge_segments(trc_reader *r, const rkernel *k, uint32_t i, uint32_t j, const Gtrace__Workgroup *wg,
                          Gtrace__Wave *tail, Gtrace__WaveData *dtail, Gtrace__Wave **mw, Gtrace__WaveData **md,
                          char *why, size_t whylen, char *lerr, size_t lerrlen)
{
    size_t lo = 0, hi = k->st.n_segments;
    while (lo < hi) { /* first entry >= (i, j) */
        size_t mid = lo + (hi - lo) / 2;
        if (k->seg_wg[mid] < i || (k->seg_wg[mid] == i && k->seg_wave[mid] < j)) lo = mid + 1;
        else hi = mid;
    }
    size_t ns = 0;
    while (lo + ns < k->st.n_segments && k->seg_wg[lo + ns] == i && k->seg_wave[lo + ns] == j) ns++;
    if (ns != tail->n_segments) {
        snprintf(why, whylen, "wave %u has %u segments but the index lists %zu", j, tail->n_segments, ns);
        return -1;
    }
    int rc = -1;
    Gtrace__Workgroup **sg = calloc(ns, sizeof *sg);
    Gtrace__WorkgroupData **sd = dtail ? calloc(ns, sizeof *sd) : NULL;
    Gtrace__Wave **pw = calloc(ns + 1, sizeof *pw);
    Gtrace__WaveData **pd = dtail ? calloc(ns + 1, sizeof *pd) : NULL;
    Gtrace__Wave *m = NULL;
    Gtrace__WaveData *d = NULL;
    if (!sg || !pw || (dtail && (!sd || !pd))) goto oom;
    for (size_t s = 0; s < ns; s++) {
        sg[s] = (Gtrace__Workgroup *)read_chunk(r->fd, r->path, k->seg_off[lo + s], r->data_end, TRC_CHUNK_SEGMENT,
                                                &gtrace__workgroup__descriptor, NULL, lerr, lerrlen);
        if (!sg[s]) goto out;
        const Gtrace__Workgroup *g = sg[s];
        const Gtrace__Wave *w = g->n_waves == 1 ? g->waves[0] : NULL;
        if (g->kernel_id != wg->kernel_id || g->n_wg_id != 3 || memcmp(g->wg_id, wg->wg_id, 3 * sizeof *g->wg_id) ||
            !w || w->wave_in_wg != j || w->n_segments || w->n_instr || (w->n_branch & 7)) {
            snprintf(why, whylen, "wave %u segment %zu (chunk at byte %llu) does not belong to it", j, s,
                     (unsigned long long)k->seg_off[lo + s]);
            goto out;
        }
        pw[s] = g->waves[0];
        if (dtail) {
            sd[s] = (Gtrace__WorkgroupData *)read_chunk(r->fd, r->path, k->seg_doff[lo + s], r->data_end,
                                                        TRC_CHUNK_SEG_DATA, &gtrace__workgroup_data__descriptor,
                                                        NULL, lerr, lerrlen);
            if (!sd[s]) goto out;
            const Gtrace__WorkgroupData *gd = sd[s];
            if (gd->kernel_id != wg->kernel_id || gd->n_wg_id != 3 ||
                memcmp(gd->wg_id, wg->wg_id, 3 * sizeof *gd->wg_id) || gd->n_waves != 1 ||
                gd->waves[0]->wave_in_wg != j || gd->waves[0]->n_load_len != pw[s]->n_mem_flags ||
                gd->waves[0]->n_store_len != pw[s]->n_mem_flags ||
                (gd->waves[0]->n_load_hash && gd->waves[0]->n_load_hash != pw[s]->n_mem_flags)) {
                snprintf(why, whylen, "wave %u segment %zu data (chunk at byte %llu) does not match its records", j,
                         s, (unsigned long long)k->seg_doff[lo + s]);
                goto out;
            }
            pd[s] = gd->waves[0];
        }
    }
    pw[ns] = tail;
    if (dtail) pd[ns] = dtail;
    int e = cat_wave(pw, ns + 1, j, &m, why, whylen);
    if (!e && dtail)
        e = cat_wave_data(pd, ns + 1, j, &d, why, whylen);
    if (e == -2) goto oom;
    if (e) goto out;
    *mw = m;
    *md = d;
    m = NULL;
    d = NULL;
    rc = 0;
    goto out;
oom:
    snprintf(lerr, lerrlen, "%s: out of memory merging the segments of wave %u of workgroup %u", r->path, j, i);
out:
    merged_free(m, d);
    for (size_t s = 0; sg && s < ns; s++)
        if (sg[s]) protobuf_c_message_free_unpacked(&sg[s]->base, NULL);
    for (size_t s = 0; sd && s < ns; s++)
        if (sd[s]) protobuf_c_message_free_unpacked(&sd[s]->base, NULL);
    free(sg); free(sd); free(pw); free(pd);
    return rc;
}

static void record_err(trc_reader *r, const char *msg)
{
    pthread_mutex_lock(&r->err_mu);
    snprintf(r->err, sizeof r->err, "%s", msg);
    pthread_mutex_unlock(&r->err_mu);
}

/* ---- frame cache ------------------------------------------------------------ */

static void lru_unlink(trc_reader *r, fentry *e)
{
    if (e->prev) e->prev->next = e->next;
    else r->lru_head = e->next;
    if (e->next) e->next->prev = e->prev;
    else r->lru_tail = e->prev;
    e->prev = e->next = NULL;
}
static void lru_push(trc_reader *r, fentry *e)
{
    e->prev = NULL;
    e->next = r->lru_head;
    if (r->lru_head) r->lru_head->prev = e;
    else r->lru_tail = e;
    r->lru_head = e;
}

/* Drops unreferenced frames, least recently used first, until the cache
 * holds at most r->limit bytes. Caller holds cmu. */
static void evict(trc_reader *r)
{
    for (fentry *e = r->lru_tail; e && r->cst.bytes > r->limit;) {
        fentry *p = e->prev;
        if (!e->refs) {
            lru_unlink(r, e);
            r->slot[e->slot] = NULL;
            r->cst.bytes -= e->len;
            r->cst.evictions++;
            free(e->data);
            free(e);
        }
        e = p;
    }
}

/* Frame kinds of the cache: a record frame, its data frame, its 2.4 store
 * frame (the caller checked that it has one). */
enum { FR_REC = 0, FR_DATA = 1, FR_STORE = 2 };

/* Decompress frame f (of kind FR_*) of k into e, which the caller
 * put in its cache slot (not ready) and released cmu: e, ready and in the
 * LRU list (evicting for room when nobody holds it: e->refs 0), or NULL
 * with lerr set (the slot emptied). Threads waiting for it are woken. */
static fentry *fill_frame(trc_reader *r, const rkernel *k, uint32_t f, int kind, fentry *e, char *lerr,
                          size_t lerrlen)
{
    uint8_t *raw = NULL;
    size_t n = 0;
    int rc = trc_read_chunk_raw(r->fd, r->path,
                                kind == FR_STORE ? k->sframe_off[f] : kind == FR_DATA ? k->dframe_off[f] : k->frame_off[f],
                                r->data_end,
                                kind == FR_STORE ? TRC_CHUNK_WG_STORES : kind == FR_DATA ? TRC_CHUNK_WG_DATA : TRC_CHUNK_WORKGROUP,
                                NULL, &raw, &n, NULL, lerr, lerrlen);
    pthread_mutex_lock(&r->cmu);
    if (rc < 0) {
        r->slot[e->slot] = NULL;
        free(e);
        e = NULL;
    } else {
        e->data = raw;
        e->len = n;
        e->ready = 1;
        r->cst.decoded_bytes += n;
        r->cst.bytes += n;
        if (r->cst.bytes > r->cst.peak_bytes) r->cst.peak_bytes = r->cst.bytes;
        lru_push(r, e);
        if (!e->refs) evict(r);
    }
    pthread_cond_broadcast(&r->ccv);
    pthread_mutex_unlock(&r->cmu);
    return e;
}

/* Returns frame f (of kind FR_*) of kernel k decompressed, with a
 * reference taken (release with put_frame), or NULL with lerr set. */
static fentry *get_frame(trc_reader *r, const rkernel *k, uint32_t f, int kind, char *lerr,
                         size_t lerrlen)
{
    size_t s = k->slot_base + 3 * (size_t)f + (size_t)kind;
    pthread_mutex_lock(&r->cmu);
    fentry *e;
    for (;;) {
        e = r->slot[s];
        if (!e) break;
        if (e->ready) {
            e->refs++;
            lru_unlink(r, e);
            lru_push(r, e);
            r->cst.hits++;
            pthread_mutex_unlock(&r->cmu);
            return e;
        }
        pthread_cond_wait(&r->ccv, &r->cmu); /* another thread is decoding it */
    }
    e = calloc(1, sizeof *e);
    if (!e) {
        pthread_mutex_unlock(&r->cmu);
        seterr(lerr, lerrlen, r->path, "out of memory (frame cache)");
        return NULL;
    }
    e->slot = s;
    e->refs = 1;
    r->slot[s] = e;
    r->cst.misses++;
    pthread_mutex_unlock(&r->cmu);
    return fill_frame(r, k, f, kind, e, lerr, lerrlen);
}

static void put_frame(trc_reader *r, fentry *e)
{
    if (!e) return;
    pthread_mutex_lock(&r->cmu);
    e->refs--;
    evict(r);
    pthread_mutex_unlock(&r->cmu);
}

void trc_reader_set_compact_strided(trc_reader *r, int on) { r->compact_strided = on != 0; }

void trc_reader_set_cache_limit(trc_reader *r, size_t bytes)
{
    pthread_mutex_lock(&r->cmu);
    r->limit = bytes;
    evict(r);
    pthread_mutex_unlock(&r->cmu);
}

void trc_reader_get_cache_stats(trc_reader *r, trc_reader_cache_stats *st)
{
    pthread_mutex_lock(&r->cmu);
    *st = r->cst;
    pthread_mutex_unlock(&r->cmu);
}

typedef struct prefetch_job {
    trc_reader *r;
    const rkernel *k;
    uint32_t f0, nf;     /* frames f0 .. f0+nf-1 */
    int with_data;
    pthread_mutex_t mu;
    uint32_t next;       /* next task: frame (next / 2), data if odd */
    int failed;
    char err[512];
} prefetch_job;

static void *prefetch_main(void *arg)
{
    prefetch_job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->mu);
        uint32_t t = j->next;
        int stop = j->failed || t >= 2 * j->nf;
        if (!stop) j->next = t + (j->with_data ? 1 : 2);
        pthread_mutex_unlock(&j->mu);
        if (stop) break;
        char lerr[512];
        fentry *e = get_frame(j->r, j->k, j->f0 + t / 2, (int)(t & 1), lerr, sizeof lerr);
        if (!e) {
            pthread_mutex_lock(&j->mu);
            if (!j->failed) snprintf(j->err, sizeof j->err, "%s", lerr);
            j->failed = 1;
            pthread_mutex_unlock(&j->mu);
            break;
        }
        put_frame(j->r, e);
    }
    return NULL;
}

int trc_reader_prefetch(trc_reader *r, uint32_t kernel_id, uint32_t first, uint32_t n, int with_data,
                        unsigned threads, char *err, size_t errlen)
{
    if (kernel_id >= r->nk) {
        seterr(err, errlen, r->path, "no kernel %u in this trace", kernel_id);
        return -1;
    }
    const rkernel *k = &r->k[kernel_id];
    uint32_t nwg = k->st.n_wg;
    if (first >= nwg || !n) return 0;
    uint32_t last = n > nwg - first ? nwg - 1 : first + n - 1;
    prefetch_job j;
    memset(&j, 0, sizeof j);
    j.r = r;
    j.k = k;
    j.f0 = k->wg_frame[first];
    j.nf = k->wg_frame[last] - j.f0 + 1;
    j.with_data = with_data;
    pthread_mutex_init(&j.mu, NULL);
    unsigned nt = threads < 1 ? 1 : threads;
    if (nt > 64) nt = 64;
    if (nt > j.nf * (with_data ? 2u : 1u)) nt = j.nf * (with_data ? 2u : 1u);
    pthread_t th[64];
    unsigned started = 0;
    for (unsigned t = 1; t < nt; t++)
        if (pthread_create(&th[started], NULL, prefetch_main, &j) == 0) started++;
    prefetch_main(&j);
    for (unsigned t = 0; t < started; t++) pthread_join(th[t], NULL);
    pthread_mutex_destroy(&j.mu);
    if (j.failed) {
        if (err && errlen) snprintf(err, errlen, "%s", j.err);
        record_err(r, j.err);
        return -1;
    }
    return 0;
}

/* The frame kind with_data reads of frame f besides its records: FR_DATA,
 * FR_STORE (TRC_WG_STORES_ONLY where f has a 2.4 store frame), or -1. */
static int data_kind(const rkernel *k, uint32_t f, int with_data)
{
    if (!with_data) return -1;
    with_data &= ~TRC_WG_STORE_OPS;
    return with_data == TRC_WG_STORES_ONLY && k->sframe_off && k->sframe_off[f] ? FR_STORE : FR_DATA;
}

/* Whether with_data reads frame f's store frame alone (TRC_WG_STORE_OPS
 * on a 2.5 store frame, which carries its stores' ops). */
static int ops_only(const trc_reader *r, const rkernel *k, uint32_t f, int with_data)
{
    return (with_data & TRC_WG_STORE_OPS) && (with_data & ~TRC_WG_STORE_OPS) == TRC_WG_STORES_ONLY &&
           (r->hdr.format_major > 2 || (r->hdr.format_major == 2 && r->hdr.format_minor >= 5)) &&
           k->sframe_off && k->sframe_off[f];
}

int trc_reader_wg_busy(trc_reader *r, uint32_t kernel_id, uint32_t i, int with_data)
{
    if (kernel_id >= r->nk || i >= r->k[kernel_id].st.n_wg) return 0;
    const rkernel *k = &r->k[kernel_id];
    size_t s = k->slot_base + 3 * (size_t)k->wg_frame[i];
    int dk = data_kind(k, k->wg_frame[i], with_data), rec = !ops_only(r, k, k->wg_frame[i], with_data);
    pthread_mutex_lock(&r->cmu);
    int busy = (rec && r->slot[s] && !r->slot[s]->ready) || (dk > 0 && r->slot[s + dk] && !r->slot[s + dk]->ready);
    pthread_mutex_unlock(&r->cmu);
    return busy;
}

/* Decompress frame f (of kind FR_*) of k into the cache unless it
 * is there or being decompressed: 1 done, 0 nothing to do, -1 error. Never
 * waits for another thread. */
static int warm_frame(trc_reader *r, const rkernel *k, uint32_t f, int kind)
{
    size_t s = k->slot_base + 3 * (size_t)f + (size_t)kind;
    pthread_mutex_lock(&r->cmu);
    if (r->slot[s]) {
        pthread_mutex_unlock(&r->cmu);
        return 0;
    }
    fentry *e = calloc(1, sizeof *e);
    if (!e) {
        pthread_mutex_unlock(&r->cmu);
        return -1;
    }
    e->slot = s;
    r->slot[s] = e; /* (no reference: evictable once ready) */
    r->cst.misses++;
    pthread_mutex_unlock(&r->cmu);
    return fill_frame(r, k, f, kind, e, NULL, 0) ? 1 : -1;
}

int trc_reader_warm_after(trc_reader *r, uint32_t kernel_id, uint32_t i, uint32_t frames, int with_data)
{
    if (kernel_id >= r->nk || i >= r->k[kernel_id].st.n_wg) return 0;
    const rkernel *k = &r->k[kernel_id];
    uint32_t f0 = k->wg_frame[i], last = k->wg_frame[k->st.n_wg - 1];
    for (uint32_t f = f0 + 1; f <= last && f <= f0 + frames; f++) {
        int dk = data_kind(k, f, with_data);
        int r1 = ops_only(r, k, f, with_data) ? 0 : warm_frame(r, k, f, FR_REC);
        int r2 = dk > 0 ? warm_frame(r, k, f, dk) : 0;
        if (r1 < 0 || r2 < 0) return -1;
        if (r1 || r2) return 1;
    }
    return 0;
}

/* ---- loading a workgroup ---------------------------------------------------- */

int trc_fast_decode = 1;

/* The WorkgroupData at [off, off + len) of frame *fd (checked to lie inside
 * it; else NULL with why): through the fast decoder (*fast = 1: its data
 * values point into the frame, which the caller keeps until done), else
 * protobuf-c (*fast = 0: the frame is put back and *fd set to NULL). NULL
 * with why when the slice or the message is bad. */
static Gtrace__WorkgroupData *decode_wd(trc_reader *r, fentry **fd, uint32_t off, uint32_t len, const char *kind,
                                        uint32_t f, int *fast, char *why, size_t whylen)
{
    Gtrace__WorkgroupData *wd;
    *fast = 0;
    if ((uint64_t)off + len > (*fd)->len) {
        snprintf(why, whylen, "its slice %u+%u lies outside %s frame %u (%zu bytes)", off, len, kind, f, (*fd)->len);
        return NULL;
    }
    if (trc_fast_decode && (wd = trc_fast_workgroup_data((*fd)->data + off, len))) {
        *fast = 1;
        return wd;
    }
    wd = (Gtrace__WorkgroupData *)protobuf_c_message_unpack(&gtrace__workgroup_data__descriptor, NULL, len,
                                                             (*fd)->data + off);
    put_frame(r, *fd);
    *fd = NULL;
    if (!wd)
        snprintf(why, whylen, "its %s frame's WorkgroupData message does not decode", kind);
    return wd;
}

/* A loaded workgroup of n_waves waves in one allocation of total bytes
 * (header and wave array taken from *a, the rest for wave_fill). NULL
 * with why (too large) or lerr (out of memory). */
static trc_wg *wg_new(const trc_reader *r, uint64_t total, uint32_t kernel_id, uint32_t i, const uint32_t *wg_id,
                      size_t n_waves, uint32_t ops_only, arena *a, char *why, size_t whylen, char *lerr,
                      size_t lerrlen)
{
    if (total > SIZE_MAX) {
        snprintf(why, whylen, "workgroup too large for memory");
        return NULL;
    }
    trc_wg *out = malloc((size_t)total);
    if (!out) {
        seterr(lerr, lerrlen, r->path, "out of memory decoding workgroup %u of kernel %u", i, kernel_id);
        return NULL;
    }
    *a = (arena){(uint8_t *)out, 0, (size_t)total};
    take(a, sizeof(trc_wg));
    out->kernel_id = kernel_id;
    memcpy(out->wg_id, wg_id, sizeof out->wg_id);
    out->n_waves = (uint32_t)n_waves;
    out->ops_only = ops_only;
    out->waves = take(a, n_waves * sizeof(trc_wave));
    return out;
}

/* Workgroup i of k (in frame f) from its 2.5 store frame alone
 * (TRC_WG_STORE_OPS): each wave's WaveData.store_ops with the frame's
 * store values of those ops. The message is checked as a workgroup's
 * record and data are (wave_size), and: one store_ops per wave holding
 * exactly the ops whose store_len is not 0, none of them LDS, and nothing
 * but memory ops. NULL with a message in err (recorded) when it is
 * damaged. */
static trc_wg *load_ops(trc_reader *r, const rkernel *k, uint32_t kernel_id, uint32_t i, uint32_t f, char *err,
                        size_t errlen)
{
    char lerr[512], why[200];
    lerr[0] = why[0] = 0;
    fentry *fd = NULL;
    Gtrace__WorkgroupData *wd = NULL;
    int wd_fast = 0;
    trc_wg *out = NULL;
    Gtrace__WaveData *view = NULL;
    uint32_t *lens = NULL;
    uint32_t doff = k->sto_off[i], dlen = k->sto_len[i];
    if (!(fd = get_frame(r, k, f, FR_STORE, lerr, sizeof lerr))) goto done;
    if (!(wd = decode_wd(r, &fd, doff, dlen, "store", f, &wd_fast, why, sizeof why))) goto bad;
    const uint32_t *grid = r->ev[k->st.launch_event].launch.grid;
    if (wd->kernel_id != kernel_id || wd->n_wg_id != 3 || wd->n_waves == 0 || wd->n_waves > UINT32_MAX ||
        wd->wg_id[0] >= grid[0] || wd->wg_id[1] >= grid[1] || wd->wg_id[2] >= grid[2]) {
        snprintf(why, sizeof why, "store record header is inconsistent");
        goto bad;
    }
    size_t nl = 0;
    for (size_t j = 0; j < wd->n_waves; j++) nl += wd->waves[j]->n_store_len;
    view = calloc(wd->n_waves, sizeof *view);
    lens = malloc((nl ? nl : 1) * sizeof *lens);
    if (!view || !lens) {
        seterr(lerr, sizeof lerr, r->path, "out of memory decoding workgroup %u of kernel %u", i, kernel_id);
        goto done;
    }
    uint64_t total = al8(sizeof(trc_wg)) + al8((uint64_t)wd->n_waves * sizeof(trc_wave));
    for (size_t j = 0, o = 0; j < wd->n_waves; j++) {
        const Gtrace__WaveData *d = wd->waves[j];
        const Gtrace__Wave *w = d->store_ops;
        if (d->wave_in_wg != j || !w || d->n_load_len || d->n_load_hash || d->load_data.len ||
            d->load_data_shuf4.len) {
            snprintf(why, sizeof why, "wave %zu: store record is no 2.5 store frame's (numbering, store ops or "
                     "load fields)", j);
            goto bad;
        }
        if (w->n_branch || w->branch_bits.len || w->n_indirect_target || w->n_exec_val || w->n_exec_at_delta ||
            w->n_await_at_delta || w->n_await_len || w->n_await_pc || w->n_await_kind || w->n_segments) {
            snprintf(why, sizeof why, "wave %zu: its store ops hold more than memory ops", j);
            goto bad;
        }
        view[j] = *d;
        view[j].store_len = lens + o;
        view[j].n_store_len = 0;
        for (size_t m = 0; m < d->n_store_len; m++)
            if (d->store_len[m]) lens[o + view[j].n_store_len++] = d->store_len[m];
        o += view[j].n_store_len;
        if (view[j].n_store_len != w->n_mem_flags) {
            snprintf(why, sizeof why, "wave %zu: %zu store ops for %zu stored values", j, w->n_mem_flags,
                     view[j].n_store_len);
            goto bad;
        }
        for (size_t m = 0; m < w->n_mem_flags; m++)
            if (w->mem_flags[m] & TRC_MO_LDS) {
                snprintf(why, sizeof why, "wave %zu store op %zu: an LDS op in the store frame", j, m);
                goto bad;
            }
        int64_t s = wave_size(w, &view[j], (uint32_t)j, r->compact_strided, r->himg != NULL, why, sizeof why);
        if (s < 0) goto bad;
        total += (uint64_t)s;
    }
    arena a;
    if (!(out = wg_new(r, total, kernel_id, i, wd->wg_id, wd->n_waves, 1, &a, why, sizeof why, lerr, sizeof lerr))) {
        if (lerr[0]) goto done;
        goto bad;
    }
    for (size_t j = 0; j < wd->n_waves; j++)
        (void)wave_fill(&out->waves[j], wd->waves[j]->store_ops, &view[j], r->compact_strided, 1, 0, NULL, NULL, NULL,
                        0, &a); /* no loads: nothing from the host image */
    goto done;

bad:
    seterr(lerr, sizeof lerr, r->path, "workgroup %u of kernel %u is corrupt: %s", i, kernel_id, why);
done:
    put_frame(r, fd);
    free(view);
    free(lens);
    if (wd_fast) free(wd);
    else if (wd) protobuf_c_message_free_unpacked(&wd->base, NULL);
    if (!out) {
        record_err(r, lerr);
        if (err && errlen) snprintf(err, errlen, "%s", lerr);
    }
    return out;
}

trc_wg *trc_reader_load_wg_ex(trc_reader *r, uint32_t kernel_id, uint32_t i, int with_data,
                              char *err, size_t errlen)
{
    char lerr[512];
    Gtrace__Workgroup *wg = NULL;
    Gtrace__WorkgroupData *wd = NULL;
    fentry *fr = NULL, *fd = NULL;
    trc_wg *out = NULL;
    int wg_fast = 0, wd_fast = 0;     /* decoded by trc_fast_* (free(), not protobuf-c's free) */
    Gtrace__Wave **mw = NULL;         /* 2.0: merged long waves (NULL: none) */
    Gtrace__WaveData **md = NULL;
    char why[200];
    why[0] = 0;
    lerr[0] = 0;
    const int no_lds_addr = !!(with_data & TRC_WG_NO_LDS_ADDR);
    with_data &= ~TRC_WG_NO_LDS_ADDR;
    if (kernel_id >= r->nk || i >= r->k[kernel_id].st.n_wg) {
        seterr(lerr, sizeof lerr, r->path, "no workgroup %u of kernel %u in this trace", i, kernel_id);
        goto done;
    }
    rkernel *k = &r->k[kernel_id];
    uint32_t f = k->wg_frame[i];
    if (ops_only(r, k, f, with_data))
        return load_ops(r, k, kernel_id, i, f, err, errlen);
    with_data &= ~TRC_WG_STORE_OPS;
    if (!(fr = get_frame(r, k, f, FR_REC, lerr, sizeof lerr))) goto done;
    if ((uint64_t)k->rec_off[i] + k->rec_len[i] > fr->len) {
        snprintf(why, sizeof why, "its slice %u+%u lies outside record frame %u (%zu bytes)",
                 k->rec_off[i], k->rec_len[i], f, fr->len);
        goto bad;
    }
    /* the fast decoder's address deltas stay in the frame, kept until done
     * (not for a wave in segments: merge_segments concatenates decoded
     * columns) */
    if (trc_fast_decode && (wg = trc_fast_workgroup_lazy(fr->data + k->rec_off[i], k->rec_len[i]))) {
        wg_fast = 1;
        for (size_t j = 0; j < wg->n_waves; j++)
            if (wg->waves[j]->n_segments) {
                free(wg);
                wg = trc_fast_workgroup(fr->data + k->rec_off[i], k->rec_len[i]);
                break;
            }
    }
    if (!wg) {
        wg_fast = 0;
        wg = (Gtrace__Workgroup *)protobuf_c_message_unpack(&gtrace__workgroup__descriptor, NULL,
                                                            k->rec_len[i], fr->data + k->rec_off[i]);
    }
    if (!wg_fast) {
        put_frame(r, fr);
        fr = NULL;
    }
    if (!wg) {
        snprintf(why, sizeof why, "its Workgroup message does not decode");
        goto bad;
    }
    int sto = 0; /* its values come from its 2.4 store frame (TRC_WG_STORES_ONLY) */
    if (with_data) {
        int dk = data_kind(k, f, with_data);
        if (dk == FR_STORE) {
            /* a wave in segments has its values in the segments' data chunks: the data frame's way */
            sto = 1;
            for (size_t j = 0; j < wg->n_waves; j++)
                if (wg->waves[j]->n_segments) sto = 0;
            if (!sto) dk = FR_DATA;
        }
        uint32_t doff = sto ? k->sto_off[i] : k->data_off[i], dlen = sto ? k->sto_len[i] : k->data_len[i];
        if (!(fd = get_frame(r, k, f, dk, lerr, sizeof lerr))) goto done;
        if (!(wd = decode_wd(r, &fd, doff, dlen, sto ? "store" : "data", f, &wd_fast, why, sizeof why))) goto bad;
    }
    const uint32_t *grid = r->ev[k->st.launch_event].launch.grid;
    if (wg->kernel_id != kernel_id || wg->n_wg_id != 3 || wg->wave_count != wg->n_waves ||
        wg->n_waves > UINT32_MAX || wg->wg_id[0] >= grid[0] || wg->wg_id[1] >= grid[1] ||
        wg->wg_id[2] >= grid[2]) {
        snprintf(why, sizeof why, "workgroup record header is inconsistent");
        goto bad;
    }
    if (wd && (wd->kernel_id != kernel_id || wd->n_wg_id != 3 ||
               memcmp(wd->wg_id, wg->wg_id, 3 * sizeof *wg->wg_id) != 0 ||
               wd->n_waves != wg->n_waves)) {
        snprintf(why, sizeof why, "data record does not belong to the workgroup record");
        goto bad;
    }
    uint64_t total = al8(sizeof(trc_wg)) + al8((uint64_t)wg->n_waves * sizeof(trc_wave));
    for (size_t j = 0; j < wg->n_waves; j++) {
        const Gtrace__WaveData *d = wd ? wd->waves[j] : NULL;
        if (d && (d->wave_in_wg != j || d->n_load_len != (sto ? 0 : wg->waves[j]->n_mem_flags) ||
                  d->n_store_len != wg->waves[j]->n_mem_flags ||
                  (d->n_load_hash && (sto || d->n_load_hash != wg->waves[j]->n_mem_flags)) ||
                  (sto && (d->load_data.len || d->load_data_shuf4.len)))) {
            snprintf(why, sizeof why, "wave %zu: %s record does not match the wave record", j, sto ? "store" : "data");
            goto bad;
        }
        for (size_t m = 0; sto && m < d->n_store_len; m++) {
            if (d->store_len[m] && (wg->waves[j]->mem_flags[m] & TRC_MO_LDS)) {
                snprintf(why, sizeof why, "wave %zu mem op %zu: an LDS op's values in the store frame", j, m);
                goto bad;
            }
        }
        if (wg->waves[j]->n_segments) { /* 2.0: a long wave in segments */
            if (!mw && (!(mw = calloc(wg->n_waves, sizeof *mw)) || !(md = calloc(wg->n_waves, sizeof *md)))) {
                seterr(lerr, sizeof lerr, r->path, "out of memory decoding workgroup %u of kernel %u", i, kernel_id);
                goto done;
            }
            if (merge_segments(r, k, i, (uint32_t)j, wg, wg->waves[j], wd ? wd->waves[j] : NULL, &mw[j], &md[j],
                               why, sizeof why, lerr, sizeof lerr) < 0) {
                if (lerr[0]) goto done;
                goto bad;
            }
        }
        const Gtrace__Wave *wj = mw && mw[j] ? mw[j] : wg->waves[j];
        if (mw && mw[j]) d = md[j];
        int64_t s = wave_size(wj, d, (uint32_t)j, r->compact_strided, r->himg != NULL, why, sizeof why);
        if (s < 0) goto bad;
        total += (uint64_t)s;
    }
    arena a;
    if (!(out = wg_new(r, total, kernel_id, i, wg->wg_id, wg->n_waves, 0, &a, why, sizeof why, lerr, sizeof lerr))) {
        if (lerr[0]) goto done;
        goto bad;
    }
    uint64_t before = k->st.launch_event; /* 2.6: the host image as of the launch */
    for (size_t j = 0; j < wg->n_waves; j++) {
        int no_loads = with_data == TRC_WG_STORES_ONLY, rc;
        const uint8_t *dq = NULL, *dend = NULL;
        if (mw && mw[j])
            rc = wave_fill(&out->waves[j], mw[j], md[j], r->compact_strided, no_loads, no_lds_addr, NULL, NULL, r->himg,
                           before, &a);
        else {
            if (wg_fast) trc_fast_wave_delta(wg->waves[j], &dq, &dend);
            rc = wave_fill(&out->waves[j], wg->waves[j], wd ? wd->waves[j] : NULL, r->compact_strided, no_loads,
                           no_lds_addr, dq, dend, r->himg, before, &a);
        }
        if (rc < 0) {
            trc_wg_free(out);
            out = NULL;
            snprintf(why, sizeof why, "wave %zu: a host-image load reads bytes the host image does not hold before "
                     "the kernel's launch", j);
            goto bad;
        }
    }
    goto done;

bad:
    seterr(lerr, sizeof lerr, r->path, "workgroup %u of kernel %u is corrupt: %s", i, kernel_id, why);
done:
    put_frame(r, fr);
    put_frame(r, fd);
    for (size_t j = 0; mw && wg && j < wg->n_waves; j++) merged_free(mw[j], md ? md[j] : NULL);
    free(mw);
    free(md);
    if (wg_fast) free(wg);
    else if (wg) protobuf_c_message_free_unpacked(&wg->base, NULL);
    if (wd_fast) free(wd);
    else if (wd) protobuf_c_message_free_unpacked(&wd->base, NULL);
    if (!out) {
        record_err(r, lerr);
        if (err && errlen) snprintf(err, errlen, "%s", lerr);
    }
    return out;
}

trc_wg *trc_reader_load_wg(trc_reader *r, uint32_t kernel_id, uint32_t i, char *err, size_t errlen)
{
    return trc_reader_load_wg_ex(r, kernel_id, i, 1, err, errlen);
}

void trc_wg_free(trc_wg *wg) { free(wg); }
