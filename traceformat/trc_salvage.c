/*
 * trc_salvage.c - recovers the complete kernels of a cut-off .gtrace file
 * (docs/trace-format.md Sec. 6, "Crash safety and salvage").
 *
 * A writer that dies (killed emulator, full disk) leaves a file without its
 * index and trailer, possibly ending inside a chunk. Every chunk is
 * self-describing (type, size, checksummed zstd frame) and the writer puts a
 * kernel-end chunk (the kernel's KernelIndex) after each kernel's frames and
 * flushes, so a forward scan finds everything that is intact:
 *
 *   1. scan chunks from byte 16, decompressing each one (frame checksums),
 *      until the file ends or a chunk is cut off or damaged;
 *   2. keep the prefix [0, P) where P is the end of the last intact chunk,
 *      or the launch event of the first kernel without an intact kernel-end
 *      chunk if that comes earlier (so every kept launch has all its
 *      workgroups, and the host timeline stays in program order);
 *   3. copy that prefix byte for byte and append a new index (code objects,
 *      events and kernels of the prefix) and trailer.
 *
 * Invariants: offsets in the output equal those in the input (a prefix is
 * copied), so kernel-end entries are valid index entries unchanged. Nothing
 * here asserts or exits on bad input; the output is removed on any error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "traceformat/gtrace.pb-c.h"
#include "traceformat/trc_internal.h"

static void sfail(char *err, size_t errlen, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void sfail(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
    if (!err || !errlen) return;
    int n = snprintf(err, errlen, "%s: ", path);
    if (n < 0 || (size_t)n >= errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

typedef struct u64list {
    uint64_t *p;
    size_t n, cap;
} u64list;

static int push64(u64list *l, uint64_t v)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? 2 * l->cap : 64;
        uint64_t *np = realloc(l->p, nc * sizeof *np);
        if (!np) return -1;
        l->p = np;
        l->cap = nc;
    }
    l->p[l->n++] = v;
    return 0;
}

/* Is v in the sorted list l? */
static int has64(const u64list *l, uint64_t v)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (l->p[m] < v) lo = m + 1;
        else hi = m;
    }
    return lo < l->n && l->p[lo] == v;
}

typedef struct skernel {
    uint64_t launch_off;     /* offset of its LAUNCH event chunk */
    uint32_t launch_event;
    uint64_t end_off;        /* offset of its kernel-end chunk, or UINT64_MAX */
    Gtrace__KernelIndex *ki; /* from the kernel-end chunk */
} skernel;

/* Writes all of buf; returns 0 or -1 with err naming the file. */
static int out_write(int fd, const char *path, uint64_t *at, const void *buf, size_t len, char *err,
                     size_t errlen)
{
    const uint8_t *b = buf;
    while (len) {
        ssize_t k = write(fd, b, len > (1u << 30) ? (1u << 30) : len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            sfail(err, errlen, path, "write error at byte %llu: %s", (unsigned long long)*at,
                  k < 0 ? strerror(errno) : "wrote nothing");
            return -1;
        }
        b += k;
        len -= (size_t)k;
        *at += (uint64_t)k;
    }
    return 0;
}

/* Copies [0, n) of fd_in to fd_out. */
static int copy_prefix(int fi, const char *in, int fo, const char *out, uint64_t n, uint64_t *at,
                       char *err, size_t errlen)
{
    enum { BUF = 1 << 20 };
    uint8_t *buf = malloc(BUF);
    if (!buf) {
        sfail(err, errlen, out, "out of memory");
        return -1;
    }
    uint64_t off = 0;
    int rc = 0;
    while (off < n && rc == 0) {
        size_t want = n - off < BUF ? (size_t)(n - off) : BUF;
        ssize_t k = pread(fi, buf, want, (off_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            sfail(err, errlen, in, "read error at byte %llu: %s", (unsigned long long)off,
                  k < 0 ? strerror(errno) : "file shrank");
            rc = -1;
            break;
        }
        rc = out_write(fo, out, at, buf, (size_t)k, err, errlen);
        off += (uint64_t)k;
    }
    free(buf);
    return rc;
}

/* Complete input: copy it unchanged. */
static int copy_whole(const char *in, const char *out, trc_reader *r, uint64_t size,
                      trc_salvage_stats *st, char *err, size_t errlen)
{
    st->complete = 1;
    st->valid_bytes = size;
    st->n_code_objects = (uint32_t)trc_reader_n_code_objects(r);
    st->n_events = (uint32_t)trc_reader_n_events(r);
    st->n_kernels = (uint32_t)trc_reader_n_kernels(r);
    for (uint32_t i = 0; i < st->n_kernels; i++) {
        trc_kernel_stats ks;
        if (trc_reader_kernel_stats(r, i, &ks) == 0) st->n_wg += ks.n_wg;
    }
    trc_reader_close(r);
    int fi = open(in, O_RDONLY | O_CLOEXEC);
    if (fi < 0) {
        sfail(err, errlen, in, "cannot open: %s", strerror(errno));
        return -1;
    }
    int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fo < 0) {
        sfail(err, errlen, out, "cannot create: %s", strerror(errno));
        close(fi);
        return -1;
    }
    struct stat sx;
    int regular = fstat(fo, &sx) == 0 && S_ISREG(sx.st_mode);
    uint64_t at = 0;
    int rc = copy_prefix(fi, in, fo, out, size, &at, err, errlen);
    close(fi);
    if (close(fo) < 0 && rc == 0) {
        sfail(err, errlen, out, "close failed: %s", strerror(errno));
        rc = -1;
    }
    if (rc < 0 && regular) unlink(out);
    st->out_bytes = at;
    return rc;
}

/* Writes [0, P) of the input, then an index of the first keep_co code
 * objects, keep_ev events and keep_k kernels, then the trailer. */
static int write_output(int fd, const char *in_path, int fo, const char *out_path, uint64_t P,
                        const u64list *co, size_t keep_co, const u64list *ev, size_t keep_ev,
                        skernel *ks, size_t keep_k, uint64_t *at, char *err, size_t errlen)
{
    if (copy_prefix(fd, in_path, fo, out_path, P, at, err, errlen) < 0) return -1;
    Gtrace__Index ix = GTRACE__INDEX__INIT;
    Gtrace__KernelIndex **kp = calloc(keep_k + 1, sizeof *kp);
    if (!kp) {
        sfail(err, errlen, out_path, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < keep_k; i++) {
        kp[i] = ks[i].ki;
        kp[i]->end_chunk_offset = ks[i].end_off;
    }
    ix.header_offset = TRC_FILE_HDR_SIZE;
    ix.n_code_object_offset = keep_co;
    ix.code_object_offset = co->p;
    ix.n_event_offset = keep_ev;
    ix.event_offset = ev->p;
    ix.n_kernels = keep_k;
    ix.kernels = kp;
    size_t pn = gtrace__index__get_packed_size(&ix);
    uint8_t *pack = malloc(pn + 1), *zb = malloc(ZSTD_compressBound(pn));
    ZSTD_CCtx *cz = ZSTD_createCCtx();
    size_t zn = 0;
    if (pack && zb && cz) {
        gtrace__index__pack(&ix, pack);
        ZSTD_CCtx_setParameter(cz, ZSTD_c_compressionLevel, TRC_ZSTD_LEVEL);
        ZSTD_CCtx_setParameter(cz, ZSTD_c_checksumFlag, 1);
        ZSTD_CCtx_setParameter(cz, ZSTD_c_contentSizeFlag, 1);
        zn = ZSTD_compress2(cz, zb, ZSTD_compressBound(pn), pack, pn);
    }
    free(kp);
    int rc = -1;
    if (!pack || !zb || !cz || ZSTD_isError(zn)) {
        sfail(err, errlen, out_path, "cannot encode the index");
    } else {
        uint8_t ch[TRC_CHUNK_HDR_SIZE], tr[TRC_TRAILER_SIZE];
        uint64_t ixoff = *at;
        trc_put_le32(ch, TRC_CHUNK_INDEX);
        trc_put_le32(ch + 4, 0);
        trc_put_le64(ch + 8, zn);
        trc_put_le64(tr, ixoff);
        trc_put_le64(tr + 8, ixoff + TRC_CHUNK_HDR_SIZE + zn + TRC_TRAILER_SIZE);
        memcpy(tr + 16, TRC_TRAILER_MAGIC, 8);
        if (out_write(fo, out_path, at, ch, sizeof ch, err, errlen) == 0 &&
            out_write(fo, out_path, at, zb, zn, err, errlen) == 0 &&
            out_write(fo, out_path, at, tr, sizeof tr, err, errlen) == 0)
            rc = 0;
    }
    free(pack);
    free(zb);
    ZSTD_freeCCtx(cz);
    return rc;
}

/* What the scan of a damaged file found (step 1 of trc_salvage). */
typedef struct scan_state {
    u64list co, ev, rframes, dframes, sframes; /* chunk offsets by kind */
    skernel *ks;                      /* kernels by id: launch and kernel-end chunks */
    size_t nks, capks;
    uint64_t valid;                   /* bytes before the first chunk not accepted */
} scan_state;

/* Step 1: walk the chunks from the first one while they are complete and
 * consistent, noting every chunk's offset by kind; st->cut says where and why
 * the walk stopped. Returns 0, or -1 on a fatal error (message in err). */
static int scan(int fd, const char *in_path, uint64_t size, uint32_t major, uint32_t minor, scan_state *sc,
                trc_salvage_stats *st, char *err, size_t errlen)
{
    trc_chunk_iter it = {fd, TRC_FILE_HDR_SIZE, size};
    uint64_t off = TRC_FILE_HDR_SIZE; /* everything before it is accepted */
    int have_header = 0;
    for (;;) {
        trc_chunk_info ci;
        int more = trc_chunk_next(&it, &ci, st->cut, sizeof st->cut);
        if (more == 0) {
            snprintf(st->cut, sizeof st->cut, "file ends at byte %llu after a complete chunk (no index)",
                     (unsigned long long)it.off);
            break;
        }
        if (more < 0) {
            if (!strncmp(st->cut, "read error", 10)) {
                sfail(err, errlen, in_path, "%s", st->cut);
                return -1;
            }
            break; /* the cut: everything before it is complete */
        }
        off = ci.off;
        uint32_t type = 0;
        uint8_t *raw = NULL;
        size_t n = 0;
        uint64_t cb = 0;
        char cerr[512];
        if (trc_read_chunk_raw(fd, in_path, off, size, 0, &type, &raw, &n, &cb, cerr, sizeof cerr) < 0) {
            if (!have_header) {
                sfail(err, errlen, in_path, "header chunk unreadable, nothing to salvage (%s)", cerr);
                return -1;
            }
            snprintf(st->cut, sizeof st->cut, "damaged chunk: %.200s", cerr);
            break;
        }
        const char *bad = NULL;
        if (!have_header) {
            Gtrace__Header *hm =
                type == TRC_CHUNK_HEADER ? gtrace__header__unpack(NULL, n, raw) : NULL;
            if (!hm || !hm->magic || strcmp(hm->magic, TRC_HEADER_MAGIC_STR) != 0 ||
                hm->format_major != major || hm->format_minor != minor) {
                if (hm) gtrace__header__free_unpacked(hm, NULL);
                free(raw);
                sfail(err, errlen, in_path, "first chunk is not a valid header; nothing to salvage");
                return -1;
            }
            gtrace__header__free_unpacked(hm, NULL);
            have_header = 1;
        } else if (type == TRC_CHUNK_HEADER) {
            bad = "a second header chunk";
        } else if (type == TRC_CHUNK_CODE_OBJECT) {
            Gtrace__CodeObject *c = gtrace__code_object__unpack(NULL, n, raw);
            if (!c || c->id != sc->co.n) bad = "code object chunk does not decode or has the wrong id";
            else if (push64(&sc->co, off) < 0) bad = "out of memory";
            if (c) gtrace__code_object__free_unpacked(c, NULL);
        } else if (type == TRC_CHUNK_EVENT) {
            Gtrace__Event *e = gtrace__event__unpack(NULL, n, raw);
            if (!e) {
                bad = "event chunk does not decode";
            } else if (trc_event_problem(e)) {
                bad = trc_event_problem(e);
            } else if (e->launch && e->launch->kernel_id != sc->nks) {
                bad = "launch event inconsistent with the launches before it";
            } else {
                if (e->launch) {
                    if (sc->nks == sc->capks) {
                        size_t nc = sc->capks ? 2 * sc->capks : 16;
                        skernel *np = realloc(sc->ks, nc * sizeof *np);
                        if (!np) bad = "out of memory";
                        else {
                            sc->ks = np;
                            sc->capks = nc;
                        }
                    }
                    if (!bad)
                        sc->ks[sc->nks++] = (skernel){off, (uint32_t)sc->ev.n, UINT64_MAX, NULL};
                }
                if (!bad && push64(&sc->ev, off) < 0) bad = "out of memory";
            }
            if (e) gtrace__event__free_unpacked(e, NULL);
        } else if (type == TRC_CHUNK_WORKGROUP) {
            if (push64(&sc->rframes, off) < 0) bad = "out of memory";
        } else if (type == TRC_CHUNK_WG_DATA) {
            if (push64(&sc->dframes, off) < 0) bad = "out of memory";
        } else if (type == TRC_CHUNK_WG_STORES) {
            if (push64(&sc->sframes, off) < 0) bad = "out of memory";
        } else if (type == TRC_CHUNK_KERNEL_END) {
            Gtrace__KernelIndex *ki = gtrace__kernel_index__unpack(NULL, n, raw);
            size_t nf = ki ? ki->n_frame_offset : 0;
            if (!ki || ki->kernel_id >= sc->nks || sc->ks[ki->kernel_id].ki ||
                ki->launch_event != sc->ks[ki->kernel_id].launch_event ||
                ki->n_data_frame_offset != nf || ki->n_wg_rec_off != ki->n_wg_frame ||
                ki->n_wg_rec_len != ki->n_wg_frame || ki->n_wg_data_off != ki->n_wg_frame ||
                ki->n_wg_data_len != ki->n_wg_frame) {
                bad = "kernel-end chunk inconsistent";
            } else {
                for (size_t j = 0; j < nf && !bad; j++)
                    if (!has64(&sc->rframes, ki->frame_offset[j]) || !has64(&sc->dframes, ki->data_frame_offset[j]))
                        bad = "kernel-end chunk names a frame that is not an intact earlier frame";
                for (size_t j = 0; j < ki->n_wg_frame && !bad; j++)
                    if (ki->wg_frame[j] >= nf) bad = "kernel-end chunk maps a workgroup to a missing frame";
                /* 2.4 store frames: none, or one entry per frame (0: none) */
                if (!bad && ki->n_store_frame_offset && ki->n_store_frame_offset != nf)
                    bad = "kernel-end chunk inconsistent";
                for (size_t j = 0; j < ki->n_store_frame_offset && !bad; j++)
                    if (ki->store_frame_offset[j] && !has64(&sc->sframes, ki->store_frame_offset[j]))
                        bad = "kernel-end chunk names a frame that is not an intact earlier frame";
            }
            if (!bad) {
                ki->ended = 1;
                sc->ks[ki->kernel_id].ki = ki;
                sc->ks[ki->kernel_id].end_off = off;
            } else if (ki) {
                gtrace__kernel_index__free_unpacked(ki, NULL);
            }
        } else if (type == TRC_CHUNK_INDEX) {
            free(raw);
            snprintf(st->cut, sizeof st->cut, "index chunk at byte %llu but no valid trailer",
                     (unsigned long long)off);
            break;
        }
        free(raw);
        if (bad) {
            snprintf(st->cut, sizeof st->cut, "chunk at byte %llu: %s", (unsigned long long)off, bad);
            break;
        }
        off = it.off;
    }
    st->valid_bytes = off;
    sc->valid = off;
    if (!have_header) { /* cut before the header chunk was complete (found by fuzz/trace_reader_fuzz) */
        sfail(err, errlen, in_path, "%s; the header chunk is incomplete, nothing to salvage", st->cut);
        return -1;
    }
    return 0;
}

int trc_salvage(const char *in_path, const char *out_path, trc_salvage_stats *stp, char *err,
                size_t errlen)
{
    trc_salvage_stats dummy;
    trc_salvage_stats *st = stp ? stp : &dummy;
    memset(st, 0, sizeof *st);
    struct stat si, so;
    if (stat(in_path, &si) < 0) {
        sfail(err, errlen, in_path, "cannot open trace: %s", strerror(errno));
        return -1;
    }
    if (strcmp(in_path, out_path) == 0 ||
        (stat(out_path, &so) == 0 && so.st_dev == si.st_dev && so.st_ino == si.st_ino)) {
        sfail(err, errlen, out_path, "salvage output must be a different file than its input");
        return -1;
    }
    st->in_bytes = (uint64_t)si.st_size;

    char rerr[512];
    trc_reader *r = trc_reader_open(in_path, rerr, sizeof rerr);
    if (r) return copy_whole(in_path, out_path, r, st->in_bytes, st, err, errlen);

    int fd = open(in_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        sfail(err, errlen, in_path, "cannot open trace: %s", strerror(errno));
        return -1;
    }
    uint64_t size = st->in_bytes;
    int rc = -1, fo = -1, created = 0;
    u64list co = {0}, ev = {0}, rframes = {0}, dframes = {0}, sframes = {0};
    skernel *ks = NULL;
    size_t nks = 0;

    uint8_t fh[TRC_FILE_HDR_SIZE];
    if (size < TRC_FILE_HDR_SIZE || pread(fd, fh, sizeof fh, 0) != (ssize_t)sizeof fh) {
        sfail(err, errlen, in_path, "only %llu bytes: too short to hold a trace header; nothing to salvage",
              (unsigned long long)size);
        goto out;
    }
    if (memcmp(fh, TRC_FILE_MAGIC, 8) != 0) {
        sfail(err, errlen, in_path, "not a .gtrace file (bad magic)");
        goto out;
    }
    uint32_t major = trc_get_le32(fh + 8), minor = trc_get_le32(fh + 12);
    if (major > TRC_FORMAT_MAJOR || major < TRC_FORMAT_MAJOR_OLDEST) {
        sfail(err, errlen, in_path, "trace format version %u.%u cannot be salvaged by this build (%u.%u)",
              major, minor, TRC_FORMAT_MAJOR, TRC_FORMAT_MINOR);
        goto out;
    }

    /* 1. Scan. */
    scan_state sc = {0};
    int sr = scan(fd, in_path, size, major, minor, &sc, st, err, errlen);
    co = sc.co, ev = sc.ev, rframes = sc.rframes, dframes = sc.dframes, sframes = sc.sframes; /* freed at out */
    ks = sc.ks, nks = sc.nks;
    if (sr < 0)
        goto out;
    uint64_t off = sc.valid;

    /* 2. The prefix to keep: up to the first kernel that did not end. */
    uint64_t P = off;
    for (int attempt = 0;; attempt++) {
        for (int changed = 1; changed;) {
            changed = 0;
            for (size_t i = 0; i < nks; i++) {
                if (ks[i].launch_off < P && (!ks[i].ki || ks[i].end_off >= P)) {
                    P = ks[i].launch_off;
                    changed = 1;
                }
            }
        }
        size_t keep_co = 0, keep_ev = 0, keep_k = 0;
        while (keep_co < co.n && co.p[keep_co] < P) keep_co++;
        while (keep_ev < ev.n && ev.p[keep_ev] < P) keep_ev++;
        while (keep_k < nks && ks[keep_k].launch_off < P) keep_k++;
        st->n_code_objects = (uint32_t)keep_co;
        st->n_events = (uint32_t)keep_ev;
        st->n_kernels = (uint32_t)keep_k;
        st->n_kernels_dropped = (uint32_t)(nks - keep_k);
        st->n_wg = 0;
        for (size_t i = 0; i < keep_k; i++) st->n_wg += ks[i].ki->n_wg_frame;

        /* 3. Write prefix + index + trailer. */
        if (fo >= 0) close(fo);
        fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fo < 0) {
            sfail(err, errlen, out_path, "cannot create: %s", strerror(errno));
            goto out;
        }
        struct stat sx;
        created = fstat(fo, &sx) == 0 && S_ISREG(sx.st_mode); /* never unlink a device */
        uint64_t at = 0;
        if (write_output(fd, in_path, fo, out_path, P, &co, keep_co, &ev, keep_ev, ks, keep_k, &at, err,
                         errlen) < 0)
            goto out;
        int c = close(fo);
        fo = -1;
        if (c < 0) {
            sfail(err, errlen, out_path, "close failed: %s", strerror(errno));
            goto out;
        }
        st->out_bytes = at;

        /* 4. Read the output back as a replay would: every kept kernel's
         * workgroups with their data. Frames passed their checksums, but
         * their content may still be invalid; the first kernel that does
         * not load entirely is dropped with everything after it. */
        char verr[512];
        uint64_t bad_at = UINT64_MAX;
        trc_reader *o = trc_reader_open(out_path, verr, sizeof verr);
        if (!o) {
            /* an event or code object the reader refuses: keep only what
             * precedes the first chunk kept (the header) if nothing helps */
            if (attempt > (int)nks + 1 || P <= TRC_FILE_HDR_SIZE) {
                sfail(err, errlen, in_path, "salvaged content does not read back: %.300s", verr);
                goto out;
            }
            bad_at = keep_ev ? ev.p[keep_ev - 1] : (keep_co ? co.p[keep_co - 1] : TRC_FILE_HDR_SIZE);
        } else {
            for (uint32_t k = 0; k < keep_k && bad_at == UINT64_MAX; k++) {
                /* as a replay reads it, and, where it has 2.4 store frames, as a
                 * fast-forward does */
                int sto = ks[k].ki->n_store_frame_offset != 0;
                for (uint32_t i = 0; i < ks[k].ki->n_wg_frame; i++) {
                    trc_wg *g = trc_reader_load_wg(o, k, i, verr, sizeof verr);
                    if (g && sto) {
                        trc_wg_free(g);
                        g = trc_reader_load_wg_ex(o, k, i, TRC_WG_STORES_ONLY, verr, sizeof verr);
                    }
                    if (!g) {
                        bad_at = ks[k].launch_off;
                        break;
                    }
                    trc_wg_free(g);
                }
            }
            trc_reader_close(o);
        }
        if (bad_at == UINT64_MAX) break;
        if (bad_at < P) P = bad_at;
        else P = P > TRC_FILE_HDR_SIZE ? P - 1 : P; /* cannot happen; guarantees progress */
        snprintf(st->cut, sizeof st->cut, "content at byte %llu does not decode: %.200s",
                 (unsigned long long)bad_at, verr);
    }
    rc = 0;

out:
    if (fo >= 0) close(fo);
    if (rc < 0 && created) unlink(out_path); /* no partial output (never the input: checked above) */
    close(fd);
    for (size_t i = 0; i < nks; i++)
        if (ks[i].ki) gtrace__kernel_index__free_unpacked(ks[i].ki, NULL);
    free(ks);
    free(co.p);
    free(ev.p);
    free(rframes.p);
    free(dframes.p);
    free(sframes.p);
    return rc;
}
