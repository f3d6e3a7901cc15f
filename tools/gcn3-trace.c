/*
 * gcn3-trace - inspect, check and repair .gtrace files (format:
 * docs/trace-format.md; user guide: docs/user-guide.md "Inspect a trace").
 *
 *   gcn3-trace info   TRACE [--json]
 *   gcn3-trace dump   TRACE [--kernel K] [--wg N] [--wave W] [--no-data] [--instr] [--json]
 *   gcn3-trace stats  TRACE [--kernel K] [--json]
 *   gcn3-trace verify TRACE [--no-walk]
 *   gcn3-trace salvage IN OUT
 *
 * Exit status: 0 ok, 1 damaged or unreadable trace (verify: the first problem
 * found, one line on stderr), 2 usage error.
 *
 * The dynamic instruction stream (stats, verify, dump --instr) is not stored
 * in the trace: it is rebuilt by walking each wavefront through its code
 * object's decoded .text from the kernel entry with the walker the replay
 * uses (gcn/gcn_walk.h: the rules for EXEC, branches, memory ops and the end
 * of a wave are written there once).
 *
 * Invariants: nothing read from the trace is trusted; every index is checked
 * before use and a walk can never run more than n_instr steps.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_getFrameHeader */
#include <zstd.h>

#include "gcn3sim_version.h"

#include "gcn/gcn_isa.h"
#include "gcn/gcn_operand.h"
#include "gcn/gcn_loader.h"
#include "gcn/gcn_walk.h"
#include "traceformat/trc.h"
#include "traceformat/trc_format.h"

#define ERRLEN 512

/* ======================================================================
 * Small helpers
 * ====================================================================== */

static const char *ev_name(trc_event_kind k)
{
    static const char *n[] = {"alloc", "free", "copy", "memset", "launch", "sync"};
    return (unsigned)k < sizeof n / sizeof *n ? n[k] : "?";
}
static const char *mem_kind_name(trc_mem_kind k)
{
    static const char *n[] = {"device", "host-pinned", "kernarg", "code", "scratch"};
    return (unsigned)k < sizeof n / sizeof *n ? n[k] : "?";
}
/* The kind an ALLOC/FREE shows: "managed" for a managed ALLOC (format 2.1). */
static const char *alloc_kind_name(const trc_event *e)
{
    return e->managed ? "managed" : mem_kind_name(e->mem_kind);
}
static const char *copy_kind_name(trc_copy_kind k)
{
    static const char *n[] = {"H2D", "D2H", "D2D", "init"};
    return (unsigned)k < sizeof n / sizeof *n ? n[k] : "?";
}
/* Printable, valid JSON string (bytes >= 0x80 as \u00XX, i.e. Latin-1). */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}
/* Same escaping for text output (kernel names, command lines are untrusted). */
static void text_str(FILE *f, const char *s, size_t max)
{
    size_t i = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && i < max; p++, i++) {
        if (*p < 0x20 || *p >= 0x7f) fprintf(f, "\\x%02x", *p);
        else fputc(*p, f);
    }
}

static void hex(FILE *f, const uint8_t *p, uint64_t n, uint64_t max)
{
    for (uint64_t i = 0; i < n && i < max; i++) fprintf(f, "%02x", p[i]);
    if (n > max) fprintf(f, "...(%" PRIu64 " bytes)", n);
}

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

static uint64_t grid_wgs(const trc_launch *l)
{
    return (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
}

/* ======================================================================
 * Chunk scan: the file framing (docs/trace-format.md Sec. 1), read
 * directly so that info can report compressed vs raw sizes and verify can
 * check every frame, including frames the index does not reach.
 * ====================================================================== */

#ifndef TRC_CHUNK_MAX
#define TRC_CHUNK_MAX 6u
#endif
#define N_CHUNK_TYPES ((int)TRC_CHUNK_MAX + 1) /* types 1..TRC_CHUNK_MAX, [0] unused */

typedef struct chunk_scan {
    uint64_t file_size;
    uint64_t index_offset;
    uint64_t n[N_CHUNK_TYPES];
    uint64_t comp[N_CHUNK_TYPES]; /* payload bytes (compressed), chunk headers excluded */
    uint64_t raw[N_CHUNK_TYPES];  /* decompressed content bytes */
} chunk_scan;

static const char *chunk_type_name(unsigned t)
{
    static const char *n[] = {"?", "header", "code-object", "event", "record-frame",
                              "data-frame", "index", "kernel-end", "wave-segment", "segment-data", "store-frame"};
    return t < (unsigned)N_CHUNK_TYPES && t < sizeof n / sizeof *n ? n[t] : "?";
}

static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
    uint8_t *p = buf;
    while (len) {
        ssize_t k = pread(fd, p, len, (off_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k, len -= (size_t)k, off += (uint64_t)k;
    }
    return 0;
}

/*
 * Walk every chunk from the first one to the index, checking the framing:
 * the header chunk first, the index exactly where the trailer says and
 * nowhere else, known types, reserved flags zero, payloads inside the file.
 * full = 1 also reads every payload through the reader's own chunk check
 * (trc_read_chunk_raw: exactly one zstd frame with content size and
 * checksum, decompressed, checksum verified); otherwise only the zstd frame
 * header is read (for the sizes). Returns 0, or -1 with a one-line message.
 */
static int scan_chunks(const char *path, int full, chunk_scan *cs, char *err, size_t errlen)
{
    memset(cs, 0, sizeof *cs);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    int rc = -1;
    struct stat sb;
    if (fstat(fd, &sb) != 0) goto ioerr;
    cs->file_size = (uint64_t)sb.st_size;
    if (cs->file_size < TRC_FILE_HDR_SIZE + TRC_TRAILER_SIZE + TRC_CHUNK_HDR_SIZE) {
        snprintf(err, errlen, "%s: %" PRIu64 " bytes: too short for a trace", path, cs->file_size);
        goto done;
    }
    uint8_t tr[TRC_TRAILER_SIZE];
    if (read_at(fd, tr, sizeof tr, cs->file_size - TRC_TRAILER_SIZE)) goto ioerr;
    if (memcmp(tr + 16, TRC_TRAILER_MAGIC, 8) != 0) {
        snprintf(err, errlen, "%s: no trailer at byte %" PRIu64 " (truncated or incomplete trace)", path,
                 cs->file_size - TRC_TRAILER_SIZE);
        goto done;
    }
    uint64_t index_off = trc_get_le64(tr), fsz = trc_get_le64(tr + 8);
    uint64_t end = cs->file_size - TRC_TRAILER_SIZE;
    if (fsz != cs->file_size || index_off < TRC_FILE_HDR_SIZE || index_off > end - TRC_CHUNK_HDR_SIZE) {
        snprintf(err, errlen, "%s: trailer inconsistent (index at %" PRIu64 ", size %" PRIu64 ", file %" PRIu64 ")",
                 path, index_off, fsz, cs->file_size);
        goto done;
    }
    cs->index_offset = index_off;
    trc_chunk_iter it = {fd, TRC_FILE_HDR_SIZE, end};
    for (;;) {
        uint64_t off = it.off;
        int is_index = off == index_off;
        uint64_t limit = is_index ? end : index_off;
        if (off > limit || limit - off < TRC_CHUNK_HDR_SIZE) {
            snprintf(err, errlen, "%s: chunk header at byte %" PRIu64 " runs past byte %" PRIu64 " (the index)", path, off,
                     index_off);
            goto done;
        }
        it.end = limit; /* a chunk before the index ends before it */
        trc_chunk_info ci;
        char cerr[256];
        if (trc_chunk_next(&it, &ci, cerr, sizeof cerr) <= 0) {
            snprintf(err, errlen, "%s: %s", path, cerr);
            goto done;
        }
        uint32_t type = ci.type, flags = ci.flags;
        uint64_t size = ci.size;
        if (type == 0 || type >= (uint32_t)N_CHUNK_TYPES) {
            snprintf(err, errlen, "%s: chunk at byte %" PRIu64 ": unknown type %u", path, off, type);
            goto done;
        }
        if (is_index != (type == TRC_CHUNK_INDEX) || (off == TRC_FILE_HDR_SIZE) != (type == TRC_CHUNK_HEADER)) {
            snprintf(err, errlen, "%s: %s chunk at byte %" PRIu64 " where %s", path, chunk_type_name(type), off,
                     is_index                    ? "the trailer points to the index"
                     : off == TRC_FILE_HDR_SIZE ? "the header chunk must be"
                                                : "only the first/last chunk may be the header/index");
            goto done;
        }
        if (flags != 0) {
            snprintf(err, errlen, "%s: %s chunk at byte %" PRIu64 ": reserved flags 0x%x are not 0", path,
                     chunk_type_name(type), off, flags);
            goto done;
        }
        if (is_index && off + TRC_CHUNK_HDR_SIZE + size != end) {
            snprintf(err, errlen, "%s: index chunk at byte %" PRIu64 " does not end at the trailer", path, off);
            goto done;
        }
        uint64_t raw = 0;
        if (full) {
            uint8_t *out = NULL;
            size_t outlen = 0;
            uint32_t got_type = 0;
            if (trc_read_chunk_raw(fd, path, off, limit, type, &got_type, &out, &outlen, NULL, err, errlen) != 0)
                goto done;
            free(out);
            raw = outlen;
        } else {
            ZSTD_frameHeader fh;
            if (ZSTD_getFrameHeader(&fh, ci.head, ci.head_len) != 0 || fh.frameType != ZSTD_frame ||
                fh.frameContentSize == ZSTD_CONTENTSIZE_UNKNOWN) {
                snprintf(err, errlen, "%s: %s chunk at byte %" PRIu64 ": payload is not a zstd frame with a content size",
                         path, chunk_type_name(type), off);
                goto done;
            }
            raw = fh.frameContentSize;
        }
        cs->n[type]++;
        cs->comp[type] += size;
        cs->raw[type] += raw;
        if (is_index) break;
        it.end = end;
    }
    rc = 0;
    goto done;
ioerr:
    snprintf(err, errlen, "%s: read error: %s", path, errno ? strerror(errno) : "unexpected end of file");
done:
    close(fd);
    return rc;
}

/* ======================================================================
 * Code objects: parsed and decoded once per trace
 * ====================================================================== */

/* Opcode classes of the instruction mix (a coarser view than opcodes,
 * finer than units): derived from the unit, the flags and the mnemonic. */
enum {
    CLS_SALU, CLS_SMEM, CLS_BRANCH, CLS_WAITCNT, CLS_BARRIER, CLS_SPECIAL,
    CLS_VALU_INT, CLS_VALU_F16, CLS_VALU_F32, CLS_VALU_F64, CLS_VALU_TRANS, CLS_VALU_CMP,
    CLS_VALU_CVT, CLS_VALU_LANE,
    CLS_VMEM_LOAD, CLS_VMEM_STORE, CLS_VMEM_ATOMIC, CLS_VMEM_OTHER,
    CLS_LDS_LOAD, CLS_LDS_STORE, CLS_LDS_ATOMIC, CLS_LDS_OTHER,
    CLS_EXPORT, CLS_INVALID,
    CLS_COUNT
};
static const char *const cls_names[CLS_COUNT] = {
    "salu", "smem", "branch", "waitcnt", "barrier", "special",
    "valu-int", "valu-f16", "valu-f32", "valu-f64", "valu-trans", "valu-cmp",
    "valu-cvt", "valu-lane",
    "vmem-load", "vmem-store", "vmem-atomic", "vmem-other",
    "lds-load", "lds-store", "lds-atomic", "lds-other",
    "export", "invalid",
};

static uint8_t class_of(const gcn_insn *in)
{
    uint32_t fl = in->flags;
    if (fl & GCN_IF_INVALID) return CLS_INVALID;
    switch (in->unit) {
    case GCN_UNIT_SALU: return CLS_SALU;
    case GCN_UNIT_SMEM: return CLS_SMEM;
    case GCN_UNIT_BRANCH: return CLS_BRANCH;
    case GCN_UNIT_EXPORT: return CLS_EXPORT;
    case GCN_UNIT_SPECIAL:
        return fl & GCN_IF_WAITCNT ? CLS_WAITCNT : fl & GCN_IF_BARRIER ? CLS_BARRIER : CLS_SPECIAL;
    case GCN_UNIT_VMEM:
        return fl & GCN_IF_ATOMIC ? CLS_VMEM_ATOMIC : fl & GCN_IF_STORE ? CLS_VMEM_STORE
             : fl & GCN_IF_LOAD ? CLS_VMEM_LOAD : CLS_VMEM_OTHER;
    case GCN_UNIT_LDS:
        return fl & GCN_IF_ATOMIC ? CLS_LDS_ATOMIC : fl & GCN_IF_STORE ? CLS_LDS_STORE
             : fl & GCN_IF_LOAD ? CLS_LDS_LOAD : CLS_LDS_OTHER;
    case GCN_UNIT_VALU:
        switch (gcn_op_info_of(in->op)->vcls) { /* the VCLS column of gcn/gcn3.def */
        case GCN_VCLS_LANE: return CLS_VALU_LANE;
        case GCN_VCLS_TRANS: return CLS_VALU_TRANS;
        case GCN_VCLS_CMP: return CLS_VALU_CMP;
        case GCN_VCLS_CVT: return CLS_VALU_CVT;
        case GCN_VCLS_F64: return CLS_VALU_F64;
        case GCN_VCLS_F32: return CLS_VALU_F32;
        case GCN_VCLS_F16: return CLS_VALU_F16;
        default: return CLS_VALU_INT;
        }
    default: return CLS_SPECIAL;
    }
}

typedef struct prog {
    int tried;
    gcn_program *p;
    uint8_t *cls;          /* class per instruction index */
    gcn_code_object *co;
    char err[ERRLEN];      /* why p is NULL */
} prog;

typedef struct progs {
    trc_reader *r;
    size_t n;
    prog *v;
} progs;

static int progs_init(progs *ps, trc_reader *r)
{
    ps->r = r;
    ps->n = trc_reader_n_code_objects(r);
    ps->v = calloc(ps->n ? ps->n : 1, sizeof *ps->v);
    return ps->v ? 0 : -1;
}
static void progs_free(progs *ps)
{
    for (size_t i = 0; i < ps->n; i++) {
        gcn_program_free(ps->v[i].p);
        gcn_co_free(ps->v[i].co);
        free(ps->v[i].cls);
    }
    free(ps->v);
}

/* Decoded program of code object id, or NULL with the reason in err. */
static const prog *prog_get(progs *ps, uint32_t id, char *err, size_t errlen)
{
    if (id >= ps->n) {
        snprintf(err, errlen, "code object %u does not exist (the trace has %zu)", id, ps->n);
        return NULL;
    }
    prog *g = &ps->v[id];
    if (!g->tried) {
        g->tried = 1;
        size_t len = 0;
        const uint8_t *elf = trc_reader_code_object(ps->r, id, &len);
        char e[ERRLEN];
        if (!elf) {
            snprintf(g->err, sizeof g->err, "code object %u: missing from the trace", id);
        } else if (gcn_co_parse(elf, len, &g->co, e, sizeof e) != GCN_LD_OK) {
            snprintf(g->err, sizeof g->err, "code object %u: %.400s", id, e);
            g->co = NULL;
        } else if (!(g->p = gcn_program_decode(gcn_target_find(g->co->target), g->co->text, g->co->text_size, g->co->text_vaddr)) ||
                   !(g->cls = malloc(g->p->n_insn ? g->p->n_insn : 1))) {
            snprintf(g->err, sizeof g->err, "code object %u: out of memory decoding .text", id);
            gcn_program_free(g->p);
            g->p = NULL;
        } else {
            for (size_t i = 0; i < g->p->n_insn; i++) g->cls[i] = class_of(&g->p->insn[i]);
        }
    }
    if (!g->p) {
        snprintf(err, errlen, "%s", g->err);
        return NULL;
    }
    return g;
}

/* Program and entry index of a launch, or NULL with a message. */
static const prog *launch_prog(progs *ps, const trc_launch *l, uint32_t *entry, char *err, size_t errlen)
{
    char e[ERRLEN];
    const prog *g = prog_get(ps, l->code_object_id, e, sizeof e);
    if (!g) {
        snprintf(err, errlen, "kernel %u: %.400s", l->kernel_id, e);
        return NULL;
    }
    const gcn_insn *in = gcn_program_at(g->p, l->entry_vaddr);
    if (!in) {
        snprintf(err, errlen, "kernel %u: entry 0x%" PRIx64 " is not an instruction of code object %u", l->kernel_id,
                 l->entry_vaddr, l->code_object_id);
        return NULL;
    }
    *entry = (uint32_t)(in - g->p->insn);
    return g;
}

/* ======================================================================
 * Options and opening
 * ====================================================================== */

typedef struct opts {
    long kernel, wg, wave;
    int json, with_data, instr, no_walk;
} opts;

static int usage_to(FILE *f, int rc)
{
    fprintf(f,
            "usage: gcn3-trace info TRACE [--json]\n"
            "       gcn3-trace dump TRACE [--kernel K] [--wg N] [--wave W] [--no-data] [--instr] [--json]\n"
            "       gcn3-trace stats TRACE [--kernel K] [--json]\n"
            "       gcn3-trace verify TRACE [--no-walk]\n"
            "       gcn3-trace salvage IN OUT\n"
            "  --kernel K  kernel id (launch order)\n"
            "  --wg N      workgroup index in grid order (z, y, x)\n"
            "  --wave W    wavefront in the workgroup\n"
            "  --no-data   do not read data values\n"
            "  --instr     also list each wave's dynamic instructions (walked through the code object)\n"
            "  --no-walk   verify: skip the code objects and the wavefront walks (format checks only)\n"
            "Inspect a gcn3-emu .gtrace trace: header and host events (info), wavefront records (dump),\n"
            "per-kernel statistics (stats), a full consistency check (verify), or copy what a damaged\n"
            "trace still holds into a readable one (salvage). --help, --version.\n");
    return rc;
}

static int usage(void) { return usage_to(stderr, 2); }

static int parse_num(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 0);
    if (!*s || *end || v < 0 || errno) return -1;
    *out = v;
    return 0;
}

/* Kernel stats with bounds: launch_event checked against the events. */
static const trc_launch *kernel_launch(trc_reader *r, uint32_t k, trc_kernel_stats *st)
{
    if (trc_reader_kernel_stats(r, k, st) != 0) return NULL;
    if (st->launch_event >= trc_reader_n_events(r)) return NULL;
    const trc_event *e = trc_reader_event(r, st->launch_event);
    return e && e->kind == TRC_EV_LAUNCH ? &e->launch : NULL;
}

/* ======================================================================
 * info
 * ====================================================================== */

static int cmd_info(trc_reader *r, const char *path, const opts *o)
{
    const trc_header_info *h = trc_reader_header(r);
    char err[ERRLEN];
    chunk_scan cs;
    int have_scan = scan_chunks(path, 0, &cs, err, sizeof err) == 0;
    if (!have_scan) fprintf(stderr, "gcn3-trace: sizes unavailable: %s\n", err);
    size_t nco = trc_reader_n_code_objects(r), nev = trc_reader_n_events(r), nk = trc_reader_n_kernels(r);
    size_t cnt[6] = {0}, n_managed = 0;
    uint64_t copy_bytes = 0;
    for (size_t i = 0; i < nev; i++) {
        const trc_event *e = trc_reader_event(r, i);
        if ((unsigned)e->kind < 6) cnt[e->kind]++;
        n_managed += e->managed; /* 2.1: managed ALLOCs */
        if (e->kind == TRC_EV_COPY && e->data) copy_bytes += e->size;
    }
    uint64_t ti = 0, tm = 0, tw = 0, td = 0, twv = 0, twg = 0;
    for (uint32_t k = 0; k < nk; k++) {
        trc_kernel_stats st;
        if (!kernel_launch(r, k, &st)) continue;
        ti += st.n_instr, tm += st.n_mem, tw += st.wg_bytes, td += st.data_bytes, twv += st.n_waves, twg += st.n_wg;
    }
    uint64_t comp_all = 0, raw_all = 0;
    if (have_scan)
        for (int t = 1; t < N_CHUNK_TYPES; t++) comp_all += cs.comp[t], raw_all += cs.raw[t];

    FILE *f = stdout;
    if (o->json) {
        fprintf(f, "{\n  \"trace\": ");
        json_str(f, path);
        fprintf(f, ",\n  \"format\": \"%u.%u\",\n  \"producer\": ", h->format_major, h->format_minor);
        json_str(f, h->producer);
        fprintf(f, ",\n  \"producer_version\": ");
        json_str(f, h->producer_version);
        fprintf(f, ",\n  \"isa_target\": ");
        json_str(f, h->isa_target);
        fprintf(f, ",\n  \"device_count\": %u,\n  \"lds_values\": \"%s\",\n  \"command_line\": ", h->device_count,
                h->lds_values_omitted ? "none" : "full");
        json_str(f, h->command_line);
        fprintf(f, ",\n  \"code_objects\": [");
        for (size_t i = 0; i < nco; i++) {
            size_t len = 0;
            trc_reader_code_object(r, i, &len);
            fprintf(f, "%s{\"id\": %zu, \"bytes\": %zu, \"load_addr\": %" PRIu64 "}", i ? ", " : "", i, len,
                    trc_reader_code_object_addr(r, i));
        }
        fprintf(f, "],\n  \"events\": {\"total\": %zu, \"alloc\": %zu, \"managed_alloc\": %zu, \"free\": %zu, "
                   "\"copy\": %zu, \"copy_data_bytes\": %" PRIu64 ", \"memset\": %zu, \"launch\": %zu, \"sync\": %zu},\n",
                nev, cnt[0], n_managed, cnt[1], cnt[2], copy_bytes, cnt[3], cnt[4], cnt[5]);
        fprintf(f, "  \"kernels\": [");
        for (uint32_t k = 0; k < nk; k++) {
            trc_kernel_stats st;
            const trc_launch *l = kernel_launch(r, k, &st);
            if (!l) continue;
            fprintf(f, "%s\n    {\"id\": %u, \"name\": ", k ? "," : "", k);
            json_str(f, l->kernel_name);
            fprintf(f, ", \"device\": %u, \"stream\": %u, \"code_object\": %u, \"grid\": [%u, %u, %u], "
                       "\"wg_size\": [%u, %u, %u], \"workgroups\": %u, \"waves\": %" PRIu64 ", "
                       "\"wavefront_instructions\": %" PRIu64 ", \"memory_ops\": %" PRIu64 ", "
                       "\"record_bytes\": %" PRIu64 ", \"data_bytes\": %" PRIu64 ", "
                       "\"record_bytes_per_instr\": %.4f, \"data_bytes_per_instr\": %.4f, \"frames\": %u, "
                       "\"raw_record_bytes\": %" PRIu64 ", \"raw_data_bytes\": %" PRIu64 ", "
                       "\"compression_ratio\": %.3f, \"segments\": %u, \"segment_bytes\": %" PRIu64 ", "
                       "\"store_frames\": %u, \"store_bytes\": %" PRIu64 ", \"raw_store_bytes\": %" PRIu64 ", "
                       "\"ended\": %s}",
                    l->device, l->stream, l->code_object_id, l->grid[0], l->grid[1], l->grid[2], l->wg_size[0],
                    l->wg_size[1], l->wg_size[2], st.n_wg, st.n_waves, st.n_instr, st.n_mem, st.wg_bytes,
                    st.data_bytes, ratio(st.wg_bytes, st.n_instr), ratio(st.data_bytes, st.n_instr), st.n_frames,
                    st.raw_rec_bytes, st.raw_data_bytes,
                    ratio(st.raw_rec_bytes + st.raw_data_bytes, st.wg_bytes + st.data_bytes), st.n_segments,
                    st.seg_bytes, st.n_store_frames, st.store_bytes, st.raw_store_bytes, st.ended ? "true" : "false");
        }
        fprintf(f, "\n  ],\n  \"total\": {\"workgroups\": %" PRIu64 ", \"waves\": %" PRIu64
                   ", \"wavefront_instructions\": %" PRIu64 ", \"memory_ops\": %" PRIu64
                   ", \"record_bytes\": %" PRIu64 ", \"data_bytes\": %" PRIu64
                   ", \"record_bytes_per_instr\": %.4f, \"data_bytes_per_instr\": %.4f}",
                twg, twv, ti, tm, tw, td, ratio(tw, ti), ratio(td, ti));
        if (have_scan) {
            fprintf(f, ",\n  \"file_bytes\": %" PRIu64 ",\n  \"chunks\": {", cs.file_size);
            for (int t = 1; t < N_CHUNK_TYPES; t++)
                fprintf(f, "%s\"%s\": {\"count\": %" PRIu64 ", \"compressed\": %" PRIu64 ", \"raw\": %" PRIu64
                           ", \"ratio\": %.3f}",
                        t > 1 ? ", " : "", chunk_type_name(t), cs.n[t], cs.comp[t], cs.raw[t],
                        ratio(cs.raw[t], cs.comp[t]));
            fprintf(f, "},\n  \"compression_ratio\": %.3f", ratio(raw_all, comp_all));
        }
        fprintf(f, "\n}\n");
        return 0;
    }

    printf("trace        %s\n", path);
    printf("format       %u.%u\n", h->format_major, h->format_minor);
    printf("producer     ");
    text_str(f, h->producer, 64);
    printf(" ");
    text_str(f, h->producer_version, 32);
    printf("\nisa target   ");
    text_str(f, h->isa_target, 64);
    printf("\ndevices      %u\n", h->device_count);
    if (h->lds_values_omitted)
        printf("lds values   none recorded (gcn3-emu --lds-values none: LDS accesses hold addresses only)\n");
    printf("command line ");
    text_str(f, h->command_line, sizeof h->command_line);
    printf("\ncode objects %zu:", nco);
    for (size_t i = 0; i < nco; i++) {
        size_t len = 0;
        trc_reader_code_object(r, i, &len);
        printf(" [%zu] %zu bytes", i, len);
        if (trc_reader_code_object_addr(r, i)) printf(" at 0x%" PRIx64, trc_reader_code_object_addr(r, i));
    }
    printf("\nevents       %zu: %zu alloc", nev, cnt[0]);
    if (n_managed) printf(" (%zu managed)", n_managed);
    printf(", %zu free, %zu copy (%" PRIu64 " data bytes), %zu memset, %zu launch, %zu sync\n", cnt[1], cnt[2],
           copy_bytes, cnt[3], cnt[4], cnt[5]);
    printf("kernels      %zu\n", nk);
    printf("  %-4s %-32s %-12s %6s %12s %10s %10s %10s %8s %8s %6s\n", "id", "name", "grid", "wgs", "wf-instr",
           "mem-ops", "rec-bytes", "data-bytes", "B/instr", "data B/i", "ratio");
    for (uint32_t k = 0; k < nk; k++) {
        trc_kernel_stats st;
        const trc_launch *l = kernel_launch(r, k, &st);
        if (!l) {
            printf("  %-4u (no launch event)\n", k);
            continue;
        }
        char grid[48];
        snprintf(grid, sizeof grid, "%ux%ux%u", l->grid[0], l->grid[1], l->grid[2]);
        printf("  %-4u ", k);
        char nm[40];
        size_t nl = strnlen(l->kernel_name, sizeof nm - 1);
        memcpy(nm, l->kernel_name, nl);
        nm[nl] = 0;
        for (char *c = nm; *c; c++)
            if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f) *c = '?';
        printf("%-32.32s %-12s %6u %12" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %8.3f %8.3f %5.2fx%s\n",
               nm, grid, st.n_wg, st.n_instr, st.n_mem, st.wg_bytes, st.data_bytes, ratio(st.wg_bytes, st.n_instr),
               ratio(st.data_bytes, st.n_instr),
               ratio(st.raw_rec_bytes + st.raw_data_bytes, st.wg_bytes + st.data_bytes),
               st.ended ? "" : "  (not ended)");
        if (st.n_segments)
            printf("       long waves in %u wave segments, %" PRIu64 " bytes (records and data, format 2.0)\n",
                   st.n_segments, st.seg_bytes);
    }
    printf("total        %" PRIu64 " workgroups, %" PRIu64 " waves, %" PRIu64 " wavefront-instr, %" PRIu64
           " mem ops\n",
           twg, twv, ti, tm);
    printf("             records %" PRIu64 " bytes (%.3f B/instr), data values %" PRIu64 " bytes (%.3f B/instr)\n", tw,
           ratio(tw, ti), td, ratio(td, ti));
    if (have_scan) {
        printf("file         %" PRIu64 " bytes; compressed -> raw (ratio):\n", cs.file_size);
        for (int t = 1; t < N_CHUNK_TYPES; t++)
            printf("  %-15s %8" PRIu64 " chunks %12" PRIu64 " -> %12" PRIu64 " (%.2fx)\n", chunk_type_name(t),
                   cs.n[t], cs.comp[t], cs.raw[t], ratio(cs.raw[t], cs.comp[t]));
        printf("  %-15s %8s        %12" PRIu64 " -> %12" PRIu64 " (%.2fx)\n", "all", "", comp_all, raw_all,
               ratio(raw_all, comp_all));
    }
    return 0;
}

/* ======================================================================
 * dump
 * ====================================================================== */

static void dump_event_text(size_t i, const trc_event *e)
{
    printf("event %zu %s dev=%u stream=%u", i, ev_name(e->kind), e->device, e->stream);
    if (e->host_gap_ns)
        printf(" host_gap=%" PRIu64 "ns", e->host_gap_ns);
    switch (e->kind) {
    case TRC_EV_ALLOC:
    case TRC_EV_FREE:
        printf(" addr=0x%" PRIx64 " size=%" PRIu64 " kind=%s\n", e->addr, e->size, alloc_kind_name(e));
        break;
    case TRC_EV_COPY:
        printf(" %s dst=0x%" PRIx64 " src=0x%" PRIx64 " size=%" PRIu64 " data=", copy_kind_name(e->copy_kind), e->addr,
               e->src, e->size);
        if (e->data) hex(stdout, e->data, e->size, 32);
        else printf("none");
        printf("\n");
        break;
    case TRC_EV_MEMSET:
        printf(" dst=0x%" PRIx64 " size=%" PRIu64 " value=0x%02x\n", e->addr, e->size, e->value);
        break;
    case TRC_EV_SYNC:
        if (e->until_event)
            printf(" until_event=%" PRIu64, e->until_event);
        if (e->stream_wait)
            printf(" waiting_stream=%u", e->wait_stream);
        if (e->stream_nonblocking)
            printf(" declares_nonblocking");
        printf("\n");
        break;
    case TRC_EV_LAUNCH: {
        const trc_launch *l = &e->launch;
        printf(" kernel=%u ", l->kernel_id);
        text_str(stdout, l->kernel_name, sizeof l->kernel_name);
        printf(" code_object=%u entry=0x%" PRIx64 " grid=%ux%ux%u wg=%ux%ux%u waves/wg=%u "
               "lds=%u scratch=%u vgpr=%u sgpr=%u kernarg@0x%" PRIx64 "[%u]=",
               l->code_object_id, l->entry_vaddr, l->grid[0], l->grid[1], l->grid[2], l->wg_size[0], l->wg_size[1],
               l->wg_size[2], l->waves_per_wg, l->group_segment_size, l->private_segment_size, l->vgpr_count,
               l->sgpr_count, l->kernarg_addr, l->kernarg_size);
        if (l->kernarg) hex(stdout, l->kernarg, l->kernarg_size, 64);
        printf(" n_wg=%u n_instr=%" PRIu64 "\n", e->n_wg, e->n_instr);
        break;
    }
    default:
        printf(" (unknown kind %d)\n", (int)e->kind);
    }
}

static void dump_event_json(size_t i, const trc_event *e)
{
    printf("    {\"index\": %zu, \"kind\": \"%s\", \"device\": %u, \"stream\": %u", i, ev_name(e->kind), e->device,
           e->stream);
    if (e->host_gap_ns)
        printf(", \"host_gap_ns\": %" PRIu64, e->host_gap_ns);
    switch (e->kind) {
    case TRC_EV_ALLOC:
    case TRC_EV_FREE:
        printf(", \"addr\": \"0x%" PRIx64 "\", \"size\": %" PRIu64 ", \"mem_kind\": \"%s\"", e->addr, e->size,
               alloc_kind_name(e));
        break;
    case TRC_EV_COPY:
        printf(", \"copy_kind\": \"%s\", \"dst\": \"0x%" PRIx64 "\", \"src\": \"0x%" PRIx64 "\", \"size\": %" PRIu64,
               copy_kind_name(e->copy_kind), e->addr, e->src, e->size);
        if (e->data) {
            printf(", \"data\": \"");
            hex(stdout, e->data, e->size, e->size);
            printf("\"");
        }
        break;
    case TRC_EV_MEMSET:
        printf(", \"dst\": \"0x%" PRIx64 "\", \"size\": %" PRIu64 ", \"value\": %u", e->addr, e->size, e->value);
        break;
    case TRC_EV_LAUNCH: {
        const trc_launch *l = &e->launch;
        printf(", \"kernel_id\": %u, \"kernel_name\": ", l->kernel_id);
        json_str(stdout, l->kernel_name);
        printf(", \"code_object\": %u, \"entry\": \"0x%" PRIx64 "\", \"grid\": [%u, %u, %u], \"wg_size\": [%u, %u, %u], "
               "\"waves_per_wg\": %u, \"lds_bytes\": %u, \"scratch_bytes\": %u, \"vgprs\": %u, \"sgprs\": %u, "
               "\"kernarg_addr\": \"0x%" PRIx64 "\", \"kernarg\": \"",
               l->code_object_id, l->entry_vaddr, l->grid[0], l->grid[1], l->grid[2], l->wg_size[0], l->wg_size[1],
               l->wg_size[2], l->waves_per_wg, l->group_segment_size, l->private_segment_size, l->vgpr_count,
               l->sgpr_count, l->kernarg_addr);
        if (l->kernarg) hex(stdout, l->kernarg, l->kernarg_size, l->kernarg_size);
        printf("\", \"n_wg\": %u, \"n_instr\": %" PRIu64, e->n_wg, e->n_instr);
        break;
    }
    case TRC_EV_SYNC:
        printf(", \"until_event\": %" PRIu64 ", \"stream_wait\": %s, \"wait_stream\": %u, \"stream_nonblocking\": %s",
               e->until_event, e->stream_wait ? "true" : "false", e->wait_stream,
               e->stream_nonblocking ? "true" : "false");
        break;
    default:
        break;
    }
    printf("}");
}

static void mo_flags_text(uint32_t fl, char *buf, size_t n, int json)
{
    static const struct { uint32_t bit; const char *name; } names[] = {
        {TRC_MO_LOAD, "load"}, {TRC_MO_STORE, "store"},   {TRC_MO_ATOMIC, "atomic"},   {TRC_MO_CMPSWAP, "cmpswap"},
        {TRC_MO_LDS, "lds"},   {TRC_MO_SMEM, "smem"},     {TRC_MO_SCRATCH, "scratch"},  {TRC_MO_HOST, "host"},
    };
    size_t o = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (fl & names[i].bit) {
            int k = json ? snprintf(buf + o, n - o, "%s\"%s\"", o ? ", " : "", names[i].name)
                         : snprintf(buf + o, n - o, " %s", names[i].name);
            if (k < 0 || (size_t)k >= n - o) return;
            o += (size_t)k;
        }
}

/* Number of addresses of a memory op (SMEM: one). */
static uint32_t mo_naddr(const trc_mem_op *o)
{
    return o->flags & TRC_MO_SMEM ? 1 : (uint32_t)__builtin_popcountll(o->exec);
}

static void dump_mem(const trc_mem_op *o, uint32_t m, int json, const char *ind)
{
    uint32_t n = mo_naddr(o);
    char fl[128];
    mo_flags_text(o->flags, fl, sizeof fl, json);
    if (json) {
        printf("%s{\"index\": %u, \"flags\": [%s], \"bytes_per_lane\": %u, \"exec\": \"0x%016" PRIx64 "\", \"addr\": [",
               ind, m, fl, o->bytes_per_lane, o->exec);
        for (uint32_t k = 0; k < n; k++) printf("%s\"0x%" PRIx64 "\"", k ? ", " : "", o->addr[k]);
        printf("]");
        if (o->load_data) {
            printf(", \"load\": \"");
            uint64_t len = trc_mo_load_len(o->flags, n, o->bytes_per_lane);
            hex(stdout, o->load_data, len, len);
            printf("\"");
        }
        if (o->store_data) {
            printf(", \"store\": \"");
            uint64_t len = trc_mo_store_len(o->flags, n, o->bytes_per_lane);
            hex(stdout, o->store_data, len, len);
            printf("\"");
        }
        printf("}");
        return;
    }
    printf("%smem %u:%s bytes=%u exec=0x%016" PRIx64 " addr=", ind, m, fl, o->bytes_per_lane, o->exec);
    for (uint32_t k = 0; k < n; k++) {
        if (k == 8 && n > 9) {
            printf(",...,0x%" PRIx64, o->addr[n - 1]);
            break;
        }
        printf("%s0x%" PRIx64, k ? "," : "", o->addr[k]);
    }
    if (o->load_data) {
        printf(" load=");
        hex(stdout, o->load_data, trc_mo_load_len(o->flags, n, o->bytes_per_lane), 32);
    }
    if (o->store_data) {
        printf(" store=");
        hex(stdout, o->store_data, trc_mo_store_len(o->flags, n, o->bytes_per_lane), 32);
    }
    printf("\n");
}

/* The dynamic instruction list of one wave (dump --instr). */
static int dump_instr(const prog *g, uint32_t entry, const trc_wave *w, int json, char *err, size_t errlen)
{
    gcn_walk wk;
    gcn_walk_init(&wk, g->p, entry, w);
    const gcn_insn *in;
    const trc_mem_op *op;
    int rc;
    uint32_t mem_seen = 0;
    if (json) printf(", \"instructions\": [");
    while ((rc = gcn_walk_next(&wk, &in, &op)) == 1) {
        char dis[160];
        gcn_disasm(in, dis, sizeof dis);
        if (json) {
            printf("%s\n          {\"pc\": \"0x%" PRIx64 "\", \"asm\": ", wk.dyn > 1 ? "," : "", in->pc);
            json_str(stdout, dis);
            printf(", \"exec\": \"0x%016" PRIx64 "\"", wk.exec);
            if (op) printf(", \"mem\": %u", mem_seen);
            printf("}");
        } else {
            printf("    %8" PRIu64 "  0x%06" PRIx64 "  exec=%016" PRIx64 "  %-48s", wk.dyn - 1, in->pc, wk.exec, dis);
            if (op) printf("  [mem %u]", mem_seen);
            printf("\n");
        }
        if (op) mem_seen++;
    }
    if (json) printf("]");
    if (rc < 0) {
        snprintf(err, errlen, "%s", wk.err);
        return -1;
    }
    return 0;
}

static int dump_wg(trc_reader *r, progs *ps, const trc_launch *l, const trc_wg *g, uint32_t i, const opts *o,
                   int first, char *err, size_t errlen)
{
    const prog *pg = NULL;
    uint32_t entry = 0;
    if (o->instr && !(pg = launch_prog(ps, l, &entry, err, errlen))) return -1;
    int json = o->json;
    if (json)
        printf("%s\n    {\"kernel\": %u, \"wg\": %u, \"wg_id\": [%u, %u, %u], \"waves\": [", first ? "" : ",",
               g->kernel_id, i, g->wg_id[0], g->wg_id[1], g->wg_id[2]);
    else
        printf("kernel %u wg #%u id=(%u,%u,%u) waves=%u\n", g->kernel_id, i, g->wg_id[0], g->wg_id[1], g->wg_id[2],
               g->n_waves);
    int wfirst = 1;
    for (uint32_t v = 0; v < g->n_waves; v++) {
        if (o->wave >= 0 && (uint32_t)o->wave != v) continue;
        const trc_wave *w = &g->waves[v];
        if (json) {
            printf("%s\n        {\"wave\": %u, \"n_instr\": %" PRIu64 ", \"branches\": \"", wfirst ? "" : ",",
                   w->wave_in_wg, w->n_instr);
            for (uint32_t b = 0; b < w->n_branch; b++) putchar((w->branch_taken[b >> 3] >> (b & 7)) & 1 ? 'T' : 'n');
            printf("\", \"indirect\": [");
            for (uint32_t k = 0; k < w->n_indirect; k++) printf("%s\"0x%" PRIx64 "\"", k ? ", " : "", w->indirect_target[k]);
            printf("], \"exec\": [");
            for (uint32_t k = 0; k < w->n_exec; k++)
                printf("%s{\"at\": %" PRIu64 ", \"value\": \"0x%016" PRIx64 "\"}", k ? ", " : "", w->exec_at[k],
                       w->exec_val[k]);
            printf("], \"mem\": [");
            for (uint32_t m = 0; m < w->n_mem; m++) {
                printf("%s", m ? ",\n          " : "\n          ");
                dump_mem(&w->mem[m], m, 1, "");
            }
            printf("]");
            if (w->n_await) {
                printf(", \"awaits\": [");
                for (uint32_t k = 0; k < w->n_await; k++)
                    printf("%s{\"at\": %" PRIu64 ", \"len\": %" PRIu64 ", \"head\": \"0x%" PRIx64 "\", \"kind\": \"%s\"}",
                           k ? ", " : "", w->await_at[k], w->await_len[k], w->await_pc[k],
                           w->await_kind[k] == TRC_AWAIT_RETRY ? "retry" : "wait");
                printf("]");
            }
            if (o->instr && dump_instr(pg, entry, w, 1, err, errlen)) return -1;
            printf("}");
            wfirst = 0;
            continue;
        }
        printf("  wave %u: %" PRIu64 " instr, %u branches, %u indirect, %u exec changes, %u mem ops\n", w->wave_in_wg,
               w->n_instr, w->n_branch, w->n_indirect, w->n_exec, w->n_mem);
        if (w->n_branch) {
            printf("    branches ");
            for (uint32_t b = 0; b < w->n_branch; b++) putchar((w->branch_taken[b >> 3] >> (b & 7)) & 1 ? 'T' : 'n');
            printf("\n");
        }
        for (uint32_t k = 0; k < w->n_indirect; k++) printf("    indirect -> 0x%" PRIx64 "\n", w->indirect_target[k]);
        for (uint32_t k = 0; k < w->n_exec; k++)
            printf("    exec @%" PRIu64 " = 0x%016" PRIx64 "\n", w->exec_at[k], w->exec_val[k]);
        for (uint32_t k = 0; k < w->n_await; k++)
            printf("    await @%" PRIu64 " len %" PRIu64 " head 0x%" PRIx64 "%s\n", w->await_at[k], w->await_len[k],
                   w->await_pc[k], w->await_kind[k] == TRC_AWAIT_RETRY ? " retry" : "");
        for (uint32_t m = 0; m < w->n_mem; m++) dump_mem(&w->mem[m], m, 0, "    ");
        if (o->instr && dump_instr(pg, entry, w, 0, err, errlen)) return -1;
    }
    if (json) printf("]}");
    (void)r;
    return 0;
}

static int cmd_dump(trc_reader *r, const char *path, const opts *o)
{
    int filtered = o->kernel >= 0 || o->wg >= 0 || o->wave >= 0;
    size_t nk = trc_reader_n_kernels(r);
    if (o->kernel >= 0 && (size_t)o->kernel >= nk) {
        fprintf(stderr, "gcn3-trace: no kernel %ld (the trace has %zu)\n", o->kernel, nk);
        return 2;
    }
    progs ps;
    if (progs_init(&ps, r)) {
        fprintf(stderr, "gcn3-trace: out of memory\n");
        return 1;
    }
    if (o->json) {
        const trc_header_info *h = trc_reader_header(r);
        printf("{\n  \"trace\": ");
        json_str(stdout, path);
        printf(",\n  \"format\": \"%u.%u\",\n  \"events\": [", h->format_major, h->format_minor);
    }
    if (!filtered)
        for (size_t i = 0; i < trc_reader_n_events(r); i++) {
            if (o->json) {
                printf(i ? ",\n" : "\n");
                dump_event_json(i, trc_reader_event(r, i));
            } else {
                dump_event_text(i, trc_reader_event(r, i));
            }
        }
    if (o->json) printf("\n  ],\n  \"workgroups\": [");
    int rc = 0, first = 1, matched = 0;
    for (uint32_t k = 0; k < nk && rc == 0; k++) {
        if (o->kernel >= 0 && (uint32_t)o->kernel != k) continue;
        trc_kernel_stats st;
        const trc_launch *l = kernel_launch(r, k, &st);
        if (!l) {
            fprintf(stderr, "gcn3-trace: %s: kernel %u has no launch event\n", path, k);
            rc = 1;
            break;
        }
        for (uint32_t i = 0; i < st.n_wg; i++) {
            if (o->wg >= 0 && (uint32_t)o->wg != i) continue;
            char err[ERRLEN];
            trc_wg *g = trc_reader_load_wg_ex(r, k, i, o->with_data, err, sizeof err);
            if (!g) {
                fprintf(stderr, "gcn3-trace: %s\n", err);
                rc = 1;
                break;
            }
            if (o->wave < 0 || (uint64_t)o->wave < g->n_waves) matched = 1;
            if (dump_wg(r, &ps, l, g, i, o, first, err, sizeof err)) {
                fflush(stdout);
                fprintf(stderr, "gcn3-trace: %s: kernel %u wg %u: %s\n", path, k, i, err);
                rc = 1;
            }
            first = 0;
            trc_wg_free(g);
            if (rc) break;
        }
    }
    if (o->json) printf("\n  ]\n}\n");
    progs_free(&ps);
    if (rc == 0 && (o->wg >= 0 || o->wave >= 0) && !matched) {
        fprintf(stderr, "gcn3-trace: no workgroup/wave matches --wg %ld --wave %ld\n", o->wg, o->wave);
        return 2;
    }
    return rc;
}

/* ======================================================================
 * stats
 * ====================================================================== */

/* Memory footprint at byte granularity: 64-byte line -> bytes read/written. */
typedef struct line_ent {
    uint64_t key;           /* line number + 1; 0 = empty */
    uint64_t rmask, wmask;  /* bit b: byte b of the line */
} line_ent;
typedef struct line_map {
    line_ent *e;
    size_t cap, n;          /* cap: power of two */
} line_map;

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static line_ent *lm_get(line_map *m, uint64_t line)
{
    if (2 * (m->n + 1) > m->cap) {
        size_t nc = m->cap ? 2 * m->cap : 1024;
        line_ent *ne = calloc(nc, sizeof *ne);
        if (!ne) return NULL;
        for (size_t i = 0; i < m->cap; i++)
            if (m->e[i].key) {
                size_t j = mix64(m->e[i].key) & (nc - 1);
                while (ne[j].key) j = (j + 1) & (nc - 1);
                ne[j] = m->e[i];
            }
        free(m->e);
        m->e = ne;
        m->cap = nc;
    }
    uint64_t key = line + 1;
    size_t j = mix64(key) & (m->cap - 1);
    while (m->e[j].key && m->e[j].key != key) j = (j + 1) & (m->cap - 1);
    if (!m->e[j].key) {
        m->e[j].key = key;
        m->n++;
    }
    return &m->e[j];
}

static int lm_touch(line_map *m, uint64_t addr, uint64_t len, int rd, int wr)
{
    while (len) {
        uint64_t line = addr >> 6, b = addr & 63, k = 64 - b < len ? 64 - b : len;
        uint64_t mask = k == 64 ? ~0ull : ((1ull << k) - 1) << b;
        line_ent *e = lm_get(m, line);
        if (!e) return -1;
        if (rd) e->rmask |= mask;
        if (wr) e->wmask |= mask;
        len -= k;
        addr += k;
        if (!addr) break; /* wrapped at 2^64 */
    }
    return 0;
}

typedef struct footprint {
    uint64_t lines, lines_read, lines_written, bytes, bytes_read, bytes_written;
} footprint;

static footprint lm_sum(const line_map *m)
{
    footprint f = {0};
    for (size_t i = 0; i < m->cap; i++) {
        const line_ent *e = &m->e[i];
        if (!e->key) continue;
        f.lines++;
        f.lines_read += e->rmask != 0;
        f.lines_written += e->wmask != 0;
        f.bytes += (uint64_t)__builtin_popcountll(e->rmask | e->wmask);
        f.bytes_read += (uint64_t)__builtin_popcountll(e->rmask);
        f.bytes_written += (uint64_t)__builtin_popcountll(e->wmask);
    }
    return f;
}

typedef struct kstats {
    uint64_t n_wg, n_waves, n_instr;
    uint64_t unit[GCN_UNIT_COUNT], fmt[GCN_FMT_COUNT], cls[CLS_COUNT];
    uint64_t op[GCN_OP_COUNT];
    uint64_t valu_lanes;         /* sum over VALU instructions of active lanes */
    uint64_t br_cond, br_taken, br_indirect, exec_changes;
    uint64_t ops_vmem, ops_smem, ops_lds, ops_scratch;
    uint64_t moved_read, moved_written;       /* global (non-LDS) bytes moved */
    uint64_t lds_read, lds_written, scratch_bytes;
    uint64_t rec_bytes, data_bytes;
    line_map lines;
} kstats;

static void ks_add(kstats *t, const kstats *k)
{
    t->n_wg += k->n_wg, t->n_waves += k->n_waves, t->n_instr += k->n_instr;
    for (int i = 0; i < GCN_UNIT_COUNT; i++) t->unit[i] += k->unit[i];
    for (int i = 0; i < GCN_FMT_COUNT; i++) t->fmt[i] += k->fmt[i];
    for (int i = 0; i < CLS_COUNT; i++) t->cls[i] += k->cls[i];
    for (int i = 0; i < GCN_OP_COUNT; i++) t->op[i] += k->op[i];
    t->valu_lanes += k->valu_lanes;
    t->br_cond += k->br_cond, t->br_taken += k->br_taken, t->br_indirect += k->br_indirect;
    t->exec_changes += k->exec_changes;
    t->ops_vmem += k->ops_vmem, t->ops_smem += k->ops_smem, t->ops_lds += k->ops_lds, t->ops_scratch += k->ops_scratch;
    t->moved_read += k->moved_read, t->moved_written += k->moved_written;
    t->lds_read += k->lds_read, t->lds_written += k->lds_written, t->scratch_bytes += k->scratch_bytes;
    t->rec_bytes += k->rec_bytes, t->data_bytes += k->data_bytes;
}

/* Account one memory op; also into `all` (the trace-wide footprint). */
static int ks_mem(kstats *s, line_map *all, const gcn_insn *in, const trc_mem_op *op)
{
    uint32_t n = mo_naddr(op);
    uint64_t bytes = (uint64_t)n * op->bytes_per_lane;
    int rd = (op->flags & (TRC_MO_LOAD | TRC_MO_ATOMIC)) != 0, wr = (op->flags & (TRC_MO_STORE | TRC_MO_ATOMIC)) != 0;
    if (op->flags & TRC_MO_SMEM) s->ops_smem++;
    else if (in->unit == GCN_UNIT_LDS) s->ops_lds++;
    else s->ops_vmem++;
    if (op->flags & TRC_MO_LDS) {
        if (rd) s->lds_read += bytes;
        if (wr) s->lds_written += bytes;
        return 0;
    }
    if (op->flags & TRC_MO_SCRATCH) {
        s->ops_scratch++;
        s->scratch_bytes += bytes;
    }
    if (rd) s->moved_read += bytes;
    if (wr) s->moved_written += bytes;
    for (uint32_t k = 0; k < n; k++)
        if (lm_touch(&s->lines, op->addr[k], op->bytes_per_lane, rd, wr) ||
            lm_touch(all, op->addr[k], op->bytes_per_lane, rd, wr))
            return -1;
    return 0;
}

/* Walk every wave of kernel k; fills *s. -1 with a message. */
static int stats_kernel(trc_reader *r, progs *ps, uint32_t k, kstats *s, line_map *all, char *err, size_t errlen)
{
    trc_kernel_stats st;
    const trc_launch *l = kernel_launch(r, k, &st);
    if (!l) {
        snprintf(err, errlen, "kernel %u has no launch event", k);
        return -1;
    }
    s->rec_bytes = st.wg_bytes;
    s->data_bytes = st.data_bytes;
    uint32_t entry;
    const prog *g = launch_prog(ps, l, &entry, err, errlen);
    if (!g) return -1;
    for (uint32_t i = 0; i < st.n_wg; i++) {
        trc_wg *wg = trc_reader_load_wg_ex(r, k, i, 0, err, errlen);
        if (!wg) return -1;
        s->n_wg++;
        for (uint32_t v = 0; v < wg->n_waves; v++) {
            const trc_wave *tw = &wg->waves[v];
            s->n_waves++;
            s->exec_changes += tw->n_exec;
            gcn_walk w;
            gcn_walk_init(&w, g->p, entry, tw);
            const gcn_insn *in;
            const trc_mem_op *op;
            int rc;
            while ((rc = gcn_walk_next(&w, &in, &op)) == 1) {
                s->unit[in->unit < GCN_UNIT_COUNT ? in->unit : GCN_UNIT_SPECIAL]++;
                s->fmt[in->fmt < GCN_FMT_COUNT ? in->fmt : 0]++;
                s->cls[g->cls[in - g->p->insn]]++;
                if (in->op < GCN_OP_COUNT) s->op[in->op]++;
                if (in->unit == GCN_UNIT_VALU) s->valu_lanes += (uint64_t)__builtin_popcountll(w.exec);
                if (in->flags & GCN_IF_BR_COND) s->br_cond++;
                if (in->flags & GCN_IF_BR_INDIRECT) s->br_indirect++;
                if (op && ks_mem(s, all, in, op)) {
                    snprintf(err, errlen, "out of memory (footprint)");
                    trc_wg_free(wg);
                    return -1;
                }
            }
            s->n_instr += w.dyn;
            for (uint32_t b = 0; b < tw->n_branch; b++) s->br_taken += (tw->branch_taken[b >> 3] >> (b & 7)) & 1;
            if (rc < 0) {
                snprintf(err, errlen, "kernel %u wg %u wave %u: %.400s", k, i, v, w.err);
                trc_wg_free(wg);
                return -1;
            }
        }
        trc_wg_free(wg);
    }
    return 0;
}

typedef struct rank { uint32_t op; uint64_t n; } rank;
static int rank_cmp(const void *a, const void *b)
{
    const rank *x = a, *y = b;
    if (x->n != y->n) return x->n < y->n ? 1 : -1;
    return x->op < y->op ? -1 : x->op > y->op;
}

static void print_counts_text(const char *title, const uint64_t *c, int n, const char *(*name)(unsigned), uint64_t total)
{
    printf("  %-10s", title);
    int col = 12;
    for (int i = 0; i < n; i++) {
        if (!c[i]) continue;
        char buf[96];
        int k = snprintf(buf, sizeof buf, " %s %" PRIu64 " (%.1f%%)", name((unsigned)i), c[i], 100.0 * ratio(c[i], total));
        if (col + k > 110) {
            printf("\n  %-10s", "");
            col = 12;
        }
        printf("%s", buf);
        col += k;
    }
    printf("\n");
}
static const char *unit_name(unsigned u) { return gcn_unit_name(u); }
static const char *cls_name(unsigned c) { return c < CLS_COUNT ? cls_names[c] : "?"; }

static void print_counts_json(const char *title, const uint64_t *c, int n, const char *(*name)(unsigned))
{
    printf("\"%s\": {", title);
    int first = 1;
    for (int i = 0; i < n; i++) {
        if (!c[i]) continue;
        printf("%s\"%s\": %" PRIu64, first ? "" : ", ", name((unsigned)i), c[i]);
        first = 0;
    }
    printf("}");
}

static void print_stats(const kstats *s, int json, int top)
{
    footprint f = lm_sum(&s->lines);
    uint64_t nvalu = s->unit[GCN_UNIT_VALU];
    if (json) {
        printf("\"workgroups\": %" PRIu64 ", \"waves\": %" PRIu64 ", \"wavefront_instructions\": %" PRIu64 ",\n      \"mix\": {",
               s->n_wg, s->n_waves, s->n_instr);
        print_counts_json("unit", s->unit, GCN_UNIT_COUNT, unit_name);
        printf(",\n        ");
        print_counts_json("format", s->fmt, GCN_FMT_COUNT, gcn_fmt_name);
        printf(",\n        ");
        print_counts_json("class", s->cls, CLS_COUNT, cls_name);
        printf(",\n        ");
        print_counts_json("opcode", s->op, GCN_OP_COUNT, gcn_op_name);
        printf("},\n      \"control\": {\"conditional_branches\": %" PRIu64 ", \"taken\": %" PRIu64
               ", \"indirect_branches\": %" PRIu64 ", \"exec_changes\": %" PRIu64 ", \"valu_active_lanes_avg\": %.3f},\n",
               s->br_cond, s->br_taken, s->br_indirect, s->exec_changes, ratio(s->valu_lanes, nvalu));
        printf("      \"memory\": {\"ops_vmem\": %" PRIu64 ", \"ops_smem\": %" PRIu64 ", \"ops_lds\": %" PRIu64
               ", \"ops_scratch\": %" PRIu64 ", \"bytes_loaded\": %" PRIu64 ", \"bytes_stored\": %" PRIu64
               ", \"scratch_bytes\": %" PRIu64 ", \"lds_bytes_read\": %" PRIu64 ", \"lds_bytes_written\": %" PRIu64
               ",\n        \"footprint\": {\"line_bytes\": 64, \"lines\": %" PRIu64 ", \"lines_read\": %" PRIu64
               ", \"lines_written\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"bytes_read\": %" PRIu64
               ", \"bytes_written\": %" PRIu64 "}},\n",
               s->ops_vmem, s->ops_smem, s->ops_lds, s->ops_scratch, s->moved_read, s->moved_written, s->scratch_bytes,
               s->lds_read, s->lds_written, f.lines, f.lines_read, f.lines_written, f.bytes, f.bytes_read,
               f.bytes_written);
        printf("      \"trace_bytes\": {\"records\": %" PRIu64 ", \"data\": %" PRIu64
               ", \"records_per_instr\": %.4f, \"data_per_instr\": %.4f}",
               s->rec_bytes, s->data_bytes, ratio(s->rec_bytes, s->n_instr), ratio(s->data_bytes, s->n_instr));
        return;
    }
    printf("  %" PRIu64 " workgroups, %" PRIu64 " waves, %" PRIu64 " wavefront-instr (%.1f per wave)\n", s->n_wg,
           s->n_waves, s->n_instr, ratio(s->n_instr, s->n_waves));
    print_counts_text("unit", s->unit, GCN_UNIT_COUNT, unit_name, s->n_instr);
    print_counts_text("format", s->fmt, GCN_FMT_COUNT, gcn_fmt_name, s->n_instr);
    print_counts_text("class", s->cls, CLS_COUNT, cls_name, s->n_instr);
    rank *rk = malloc(GCN_OP_COUNT * sizeof *rk);
    if (rk) {
        int n = 0;
        for (int i = 0; i < GCN_OP_COUNT; i++)
            if (s->op[i]) rk[n++] = (rank){(uint32_t)i, s->op[i]};
        qsort(rk, (size_t)n, sizeof *rk, rank_cmp);
        printf("  %-10s", "opcodes");
        int col = 12;
        for (int i = 0; i < n && i < top; i++) {
            char buf[96];
            int k = snprintf(buf, sizeof buf, " %s %" PRIu64, gcn_op_name(rk[i].op), rk[i].n);
            if (col + k > 110) {
                printf("\n  %-10s", "");
                col = 12;
            }
            printf("%s", buf);
            col += k;
        }
        if (n > top) printf(" ... (%d opcodes)", n);
        printf("\n");
        free(rk);
    }
    printf("  %-10s %" PRIu64 " conditional branches (%" PRIu64 " taken), %" PRIu64 " indirect, %" PRIu64
           " EXEC changes, VALU active lanes %.1f of 64\n",
           "control", s->br_cond, s->br_taken, s->br_indirect, s->exec_changes, ratio(s->valu_lanes, nvalu));
    printf("  %-10s %" PRIu64 " vmem + %" PRIu64 " smem + %" PRIu64 " lds ops (%" PRIu64 " scratch); loaded %" PRIu64
           " B, stored %" PRIu64 " B; lds read %" PRIu64 " B, written %" PRIu64 " B\n",
           "memory", s->ops_vmem, s->ops_smem, s->ops_lds, s->ops_scratch, s->moved_read, s->moved_written, s->lds_read,
           s->lds_written);
    printf("  %-10s %" PRIu64 " lines of 64 B (%" PRIu64 " read, %" PRIu64 " written); %" PRIu64 " distinct bytes (%" PRIu64
           " read, %" PRIu64 " written)\n",
           "footprint", f.lines, f.lines_read, f.lines_written, f.bytes, f.bytes_read, f.bytes_written);
    printf("  %-10s records %" PRIu64 " B (%.3f B/instr), data values %" PRIu64 " B (%.3f B/instr)\n", "trace",
           s->rec_bytes, ratio(s->rec_bytes, s->n_instr), s->data_bytes, ratio(s->data_bytes, s->n_instr));
}

static int cmd_stats(trc_reader *r, const char *path, const opts *o)
{
    size_t nk = trc_reader_n_kernels(r);
    if (o->kernel >= 0 && (size_t)o->kernel >= nk) {
        fprintf(stderr, "gcn3-trace: no kernel %ld (the trace has %zu)\n", o->kernel, nk);
        return 2;
    }
    progs ps;
    kstats *tot = calloc(1, sizeof *tot), *s = calloc(1, sizeof *s);
    if (!tot || !s || progs_init(&ps, r)) {
        fprintf(stderr, "gcn3-trace: out of memory\n");
        free(tot);
        free(s);
        return 1;
    }
    int rc = 0, first = 1;
    if (o->json) {
        printf("{\n  \"trace\": ");
        json_str(stdout, path);
        printf(",\n  \"kernels\": [");
    }
    for (uint32_t k = 0; k < nk; k++) {
        if (o->kernel >= 0 && (uint32_t)o->kernel != k) continue;
        char err[ERRLEN];
        memset(s, 0, sizeof *s);
        if (stats_kernel(r, &ps, k, s, &tot->lines, err, sizeof err)) {
            fflush(stdout);
            fprintf(stderr, "gcn3-trace: %s: %s\n", path, err);
            free(s->lines.e);
            rc = 1;
            break;
        }
        trc_kernel_stats st;
        const trc_launch *l = kernel_launch(r, k, &st);
        if (o->json) {
            printf("%s\n    {\"id\": %u, \"name\": ", first ? "" : ",", k);
            json_str(stdout, l->kernel_name);
            printf(", ");
            print_stats(s, 1, 0);
            printf("}");
        } else {
            printf("kernel %u ", k);
            text_str(stdout, l->kernel_name, 200);
            printf(" grid %ux%ux%u wg %ux%ux%u\n", l->grid[0], l->grid[1], l->grid[2], l->wg_size[0], l->wg_size[1],
                   l->wg_size[2]);
            print_stats(s, 0, 12);
        }
        first = 0;
        line_map keep = tot->lines;
        ks_add(tot, s);
        tot->lines = keep;
        free(s->lines.e);
    }
    if (rc == 0) {
        if (o->json) {
            printf("\n  ],\n  \"total\": {");
            print_stats(tot, 1, 0);
            printf("}\n}\n");
        } else if (o->kernel < 0 && nk > 1) {
            printf("all kernels (footprint: union)\n");
            print_stats(tot, 0, 16);
        }
    } else if (o->json) {
        printf("\n  ]\n}\n");
    }
    free(tot->lines.e);
    free(tot);
    free(s);
    progs_free(&ps);
    return rc;
}

/* ======================================================================
 * verify
 * ====================================================================== */

typedef struct vctx {
    const char *path;
    char msg[1024];
} vctx;

static int vfail(vctx *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int vfail(vctx *v, const char *fmt, ...)
{
    int n = snprintf(v->msg, sizeof v->msg, "%s: ", v->path);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->msg + n, sizeof v->msg - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

/* Checks one loaded workgroup against its launch and the code object. */
/* 2.4: workgroup i of kernel k as its store frame gives it (what a
 * fast-forward reads, where its frame has one) against the data frame's
 * (full, already loaded): the same ops, the same values for every store and
 * atomic outside the LDS, none for the LDS. */
static int verify_stores(vctx *v, trc_reader *r, uint32_t k, uint32_t i, const trc_wg *full)
{
    char err[512];
    trc_wg *s = trc_reader_load_wg_ex(r, k, i, TRC_WG_STORES_ONLY, err, sizeof err);
    if (!s) return vfail(v, "%s", err);
    int rc = 0;
    if (s->n_waves != full->n_waves) rc = vfail(v, "kernel %u workgroup %u: store values of another workgroup", k, i);
    for (uint32_t w = 0; w < full->n_waves && !rc; w++) {
        const trc_wave *a = &full->waves[w], *b = &s->waves[w];
        if (a->n_mem != b->n_mem) {
            rc = vfail(v, "kernel %u workgroup %u wave %u: store values of another wave", k, i, w);
            break;
        }
        for (uint32_t m = 0; m < a->n_mem && !rc; m++) {
            const trc_mem_op *x = &a->mem[m], *y = &b->mem[m];
            uint64_t n = x->store_data ? trc_mo_store_len(x->flags, trc_popcount64(x->exec), x->bytes_per_lane) : 0;
            int lds = (x->flags & TRC_MO_LDS) != 0;
            if (lds ? y->store_data != NULL
                    : (!x->store_data) != (!y->store_data) || (n && memcmp(x->store_data, y->store_data, n)))
                rc = vfail(v, "kernel %u workgroup %u wave %u mem op %u: the store frame's values differ from the data "
                           "frame's", k, i, w, m);
        }
    }
    trc_wg_free(s);
    if (rc) return rc;
    /* 2.5: the store frame's own ops (what a fast-forward without loads
     * reads): the wave's n_instr, and exactly its ops that store outside the
     * LDS, with the same flags, EXEC, addresses and values */
    if (!(s = trc_reader_load_wg_ex(r, k, i, TRC_WG_STORES_ONLY | TRC_WG_STORE_OPS, err, sizeof err)))
        return vfail(v, "%s", err);
    if (s->ops_only && s->n_waves != full->n_waves)
        rc = vfail(v, "kernel %u workgroup %u: store ops of another workgroup", k, i);
    for (uint32_t w = 0; s->ops_only && w < full->n_waves && !rc; w++) {
        const trc_wave *a = &full->waves[w], *b = &s->waves[w];
        uint32_t o = 0;
        if (a->n_instr != b->n_instr) {
            rc = vfail(v, "kernel %u workgroup %u wave %u: the store frame says %llu instructions, the record %llu",
                       k, i, w, (unsigned long long)b->n_instr, (unsigned long long)a->n_instr);
            break;
        }
        for (uint32_t m = 0; m < a->n_mem && !rc; m++) {
            const trc_mem_op *x = &a->mem[m];
            if (!x->store_data || (x->flags & TRC_MO_LDS)) continue;
            const trc_mem_op *y = o < b->n_mem ? &b->mem[o] : NULL;
            uint32_t n = trc_popcount64(x->exec);
            int same = y && y->flags == x->flags && y->exec == x->exec && y->bytes_per_lane == x->bytes_per_lane &&
                       y->store_data && !memcmp(x->store_data, y->store_data,
                                                trc_mo_store_len(x->flags, n, x->bytes_per_lane));
            for (uint32_t l = 0; same && l < n; l++) same = trc_mo_addr(x, l) == trc_mo_addr(y, l);
            if (!same)
                rc = vfail(v, "kernel %u workgroup %u wave %u mem op %u: the store frame's op %u differs from the "
                           "record's (flags, EXEC, addresses or values)", k, i, w, m, o);
            o++;
        }
        if (!rc && o != b->n_mem)
            rc = vfail(v, "kernel %u workgroup %u wave %u: the store frame has %u store ops, the record %u", k, i, w,
                       b->n_mem, o);
    }
    trc_wg_free(s);
    return rc;
}

static int verify_wg(vctx *v, const trc_launch *l, const prog *g, uint32_t entry, uint32_t k, uint32_t i,
                     const trc_wg *wg, uint64_t *n_instr, uint64_t *n_mem, uint8_t *seen)
{
    if (wg->kernel_id != k) return vfail(v, "kernel %u wg %u: the frame says kernel %u", k, i, wg->kernel_id);
    for (int d = 0; d < 3; d++)
        if (wg->wg_id[d] >= l->grid[d])
            return vfail(v, "kernel %u wg %u: id (%u,%u,%u) outside the grid %ux%ux%u", k, i, wg->wg_id[0],
                         wg->wg_id[1], wg->wg_id[2], l->grid[0], l->grid[1], l->grid[2]);
    if (seen) {
        uint64_t lin = ((uint64_t)wg->wg_id[2] * l->grid[1] + wg->wg_id[1]) * l->grid[0] + wg->wg_id[0];
        if (seen[lin >> 3] & (1u << (lin & 7)))
            return vfail(v, "kernel %u wg %u: workgroup (%u,%u,%u) recorded twice", k, i, wg->wg_id[0], wg->wg_id[1],
                         wg->wg_id[2]);
        seen[lin >> 3] |= (uint8_t)(1u << (lin & 7));
    }
    if (wg->n_waves != l->waves_per_wg)
        return vfail(v, "kernel %u wg %u: %u wavefronts, the launch says %u per workgroup", k, i, wg->n_waves,
                     l->waves_per_wg);
    for (uint32_t w = 0; w < wg->n_waves; w++) {
        const trc_wave *tw = &wg->waves[w];
        if (tw->wave_in_wg != w) return vfail(v, "kernel %u wg %u: wave %u is numbered %u", k, i, w, tw->wave_in_wg);
        for (uint32_t e = 0; e < tw->n_exec; e++)
            if ((e && tw->exec_at[e] < tw->exec_at[e - 1]) || tw->exec_at[e] >= tw->n_instr)
                return vfail(v, "kernel %u wg %u wave %u: EXEC change %u at instruction %" PRIu64
                             " out of order or past the wave's %" PRIu64 " instructions",
                             k, i, w, e, tw->exec_at[e], tw->n_instr);
        for (uint32_t m = 0; m < tw->n_mem; m++) {
            const trc_mem_op *o = &tw->mem[m];
            if ((o->flags & TRC_MO_SMEM) && (o->flags & (TRC_MO_LDS | TRC_MO_SCRATCH)))
                return vfail(v, "kernel %u wg %u wave %u mem op %u: SMEM op flagged LDS/scratch", k, i, w, m);
            if (!(o->flags & (TRC_MO_LOAD | TRC_MO_STORE | TRC_MO_ATOMIC)))
                return vfail(v, "kernel %u wg %u wave %u mem op %u: neither load, store nor atomic", k, i, w, m);
        }
        *n_instr += tw->n_instr;
        *n_mem += tw->n_mem;
        if (!g) continue; /* --no-walk */
        gcn_walk wk;
        gcn_walk_init(&wk, g->p, entry, tw);
        const gcn_insn *in;
        const trc_mem_op *op;
        int rc;
        while ((rc = gcn_walk_next(&wk, &in, &op)) == 1) {
            if (!op) continue;
            int smem_in = in->unit == GCN_UNIT_SMEM, smem_op = (op->flags & TRC_MO_SMEM) != 0;
            if (smem_in != smem_op || (in->unit == GCN_UNIT_LDS && !(op->flags & TRC_MO_LDS)))
                return vfail(v, "kernel %u wg %u wave %u: pc 0x%" PRIx64 " %s got memory op %u of another kind (%s%s)",
                             k, i, w, in->pc, gcn_op_name(in->op), wk.mem_i - 1, smem_op ? "smem" : "vector",
                             op->flags & TRC_MO_LDS ? ", lds" : "");
        }
        if (rc < 0) return vfail(v, "kernel %u wg %u wave %u: %s", k, i, w, wk.err);
    }
    return 0;
}

static int verify(trc_reader *r, const char *path, int walk, vctx *v, chunk_scan *cs, uint64_t *tot_instr)
{
    char err[ERRLEN];
    /* 1. Framing: every chunk, every zstd frame checksum, nothing unindexed. */
    if (scan_chunks(path, 1, cs, err, sizeof err)) {
        snprintf(v->msg, sizeof v->msg, "%s", err);
        return -1;
    }
    size_t nco = trc_reader_n_code_objects(r), nev = trc_reader_n_events(r), nk = trc_reader_n_kernels(r);
    if (cs->n[TRC_CHUNK_HEADER] != 1) return vfail(v, "%" PRIu64 " header chunks", cs->n[TRC_CHUNK_HEADER]);
    if (cs->n[TRC_CHUNK_CODE_OBJECT] != nco)
        return vfail(v, "%" PRIu64 " code-object chunks in the file, the index lists %zu", cs->n[TRC_CHUNK_CODE_OBJECT], nco);
    if (cs->n[TRC_CHUNK_EVENT] != nev)
        return vfail(v, "%" PRIu64 " event chunks in the file, the index lists %zu", cs->n[TRC_CHUNK_EVENT], nev);
    /* 2. Host events and kernel ids. */
    size_t nlaunch = 0;
    for (size_t i = 0; i < nev; i++) {
        const trc_event *e = trc_reader_event(r, i);
        if (!e) return vfail(v, "event %zu unreadable", i);
        if ((unsigned)e->kind > TRC_EV_SYNC) return vfail(v, "event %zu: unknown kind %d", i, (int)e->kind);
        if (e->kind == TRC_EV_COPY && e->copy_kind != TRC_COPY_D2D && !e->data && e->size)
            return vfail(v, "event %zu: %s copy of %" PRIu64 " bytes without its data", i, copy_kind_name(e->copy_kind),
                         e->size);
        if (e->kind != TRC_EV_LAUNCH) continue;
        const trc_launch *l = &e->launch;
        if (l->kernel_id != nlaunch)
            return vfail(v, "event %zu: launch of kernel id %u, expected %zu (ids count launches)", i, l->kernel_id,
                         nlaunch);
        if (nlaunch >= nk) return vfail(v, "event %zu: launch of kernel %u, the index has %zu kernels", i, l->kernel_id, nk);
        trc_kernel_stats st;
        if (trc_reader_kernel_stats(r, l->kernel_id, &st) || st.launch_event != i)
            return vfail(v, "kernel %u: the index points to event %u, the launch is event %zu", l->kernel_id,
                         st.launch_event, i);
        nlaunch++;
    }
    if (nlaunch != nk) return vfail(v, "%zu launches, the index has %zu kernels", nlaunch, nk);
    /* 3. Code objects: parse and decode each; launches refer to real kernels. */
    progs ps;
    if (progs_init(&ps, r)) return vfail(v, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < nco && !rc && walk; i++)
        if (!prog_get(&ps, (uint32_t)i, err, sizeof err)) rc = vfail(v, "%s", err);
    uint64_t total_frames = 0, total_segs = 0, total_sto = 0;
    *tot_instr = 0;
    for (uint32_t k = 0; k < nk && !rc; k++) {
        trc_kernel_stats st;
        const trc_launch *l = kernel_launch(r, k, &st);
        uint32_t entry = 0;
        const prog *g = NULL;
        if (l->code_object_id >= nco) {
            rc = vfail(v, "kernel %u: code object %u does not exist (the trace has %zu)", k, l->code_object_id, nco);
            break;
        }
        if (walk && !(g = launch_prog(&ps, l, &entry, err, sizeof err))) {
            rc = vfail(v, "%s", err);
            break;
        }
        const gcn_kernel *gk = g ? gcn_co_find_kernel(ps.v[l->code_object_id].co, l->kernel_name) : NULL;
        if (g && !gk) {
            rc = vfail(v, "kernel %u: code object %u has no kernel named %.200s", k, l->code_object_id, l->kernel_name);
            break;
        }
        if (gk && gk->entry_vaddr != l->entry_vaddr) {
            rc = vfail(v, "kernel %u: entry 0x%" PRIx64 ", code object %u says 0x%" PRIx64, k, l->entry_vaddr,
                       l->code_object_id, gk->entry_vaddr);
            break;
        }
        uint64_t items = (uint64_t)l->wg_size[0] * l->wg_size[1] * l->wg_size[2];
        if (l->waves_per_wg != (items + 63) / 64) {
            rc = vfail(v, "kernel %u: %u waves per workgroup for %" PRIu64 " work-items", k, l->waves_per_wg, items);
            break;
        }
        if (!st.ended) {
            rc = vfail(v, "kernel %u: the writer never saw its end (incomplete kernel)", k);
            break;
        }
        uint64_t gw = grid_wgs(l);
        if (st.n_wg != gw) {
            rc = vfail(v, "kernel %u: %u workgroups recorded, the grid %ux%ux%u has %" PRIu64, k, st.n_wg, l->grid[0],
                       l->grid[1], l->grid[2], gw);
            break;
        }
        uint8_t *seen = gw <= ((uint64_t)1 << 34) ? calloc((size_t)((gw + 7) / 8) + 1, 1) : NULL;
        uint64_t n_instr = 0, n_mem = 0, n_waves = 0;
        for (uint32_t i = 0; i < st.n_wg && !rc; i++) {
            trc_wg *wg = trc_reader_load_wg_ex(r, k, i, 1, err, sizeof err);
            if (!wg) {
                snprintf(v->msg, sizeof v->msg, "%s", err);
                rc = -1;
                break;
            }
            n_waves += wg->n_waves;
            rc = verify_wg(v, l, g, entry, k, i, wg, &n_instr, &n_mem, seen);
            if (!rc && st.n_store_frames) rc = verify_stores(v, r, k, i, wg);
            trc_wg_free(wg);
        }
        free(seen);
        if (rc) break;
        const trc_event *le = trc_reader_event(r, st.launch_event);
        if (n_instr != st.n_instr || n_instr != le->n_instr || n_mem != st.n_mem || n_waves != st.n_waves) {
            rc = vfail(v, "kernel %u: workgroups hold %" PRIu64 " instructions, %" PRIu64 " memory ops, %" PRIu64
                       " waves; the index says %" PRIu64 ", %" PRIu64 ", %" PRIu64,
                       k, n_instr, n_mem, n_waves, st.n_instr, st.n_mem, st.n_waves);
            break;
        }
        total_frames += st.n_frames;
        total_segs += st.n_segments;
        total_sto += st.n_store_frames;
        *tot_instr += n_instr;
    }
    progs_free(&ps);
    if (rc) return rc;
    /* 4. Index vs frames: every frame in the file is reached from the index
     * (the reader checked each one it was sent to), one kernel-end chunk
     * per ended kernel. */
    if (cs->n[TRC_CHUNK_WORKGROUP] != total_frames || cs->n[TRC_CHUNK_WG_DATA] != total_frames)
        return vfail(v, "%" PRIu64 " record and %" PRIu64 " data frames in the file, the index reaches %" PRIu64
                     " of each",
                     cs->n[TRC_CHUNK_WORKGROUP], cs->n[TRC_CHUNK_WG_DATA], total_frames);
    if (cs->n[TRC_CHUNK_WG_STORES] != total_sto)
        return vfail(v, "%" PRIu64 " store frames in the file, the index reaches %" PRIu64, cs->n[TRC_CHUNK_WG_STORES],
                     total_sto);
    if (cs->n[TRC_CHUNK_SEGMENT] != total_segs || cs->n[TRC_CHUNK_SEG_DATA] != total_segs)
        return vfail(v, "%" PRIu64 " wave-segment and %" PRIu64 " segment-data chunks in the file, the index reaches %" PRIu64
                     " of each",
                     cs->n[TRC_CHUNK_SEGMENT], cs->n[TRC_CHUNK_SEG_DATA], total_segs);
#ifdef TRC_CHUNK_KERNEL_END
    if (cs->n[TRC_CHUNK_KERNEL_END] != nk)
        return vfail(v, "%" PRIu64 " kernel-end chunks in the file for %zu ended kernels", cs->n[TRC_CHUNK_KERNEL_END],
                     nk);
#endif
    return 0;
}

static int cmd_verify(const char *path, int walk)
{
    char err[ERRLEN];
    trc_reader *r = trc_reader_open(path, err, sizeof err);
    if (!r) {
        fprintf(stderr, "gcn3-trace: verify: %s\n", err);
        return 1;
    }
    vctx v = {.path = path};
    chunk_scan cs;
    uint64_t ni = 0;
    int rc = verify(r, path, walk, &v, &cs, &ni);
    if (rc) {
        fprintf(stderr, "gcn3-trace: verify: %s\n", v.msg);
    } else {
        uint64_t nchunks = 0, nwg = 0;
        for (int t = 1; t < N_CHUNK_TYPES; t++) nchunks += cs.n[t];
        for (uint32_t k = 0; k < trc_reader_n_kernels(r); k++) {
            trc_kernel_stats st;
            if (trc_reader_kernel_stats(r, k, &st) == 0) nwg += st.n_wg;
        }
        printf("%s: OK: %" PRIu64 " chunks checked, %zu code objects, %zu events, %zu kernels, %" PRIu64
               " workgroups, %" PRIu64 " wavefront instructions %s\n",
               path, nchunks, trc_reader_n_code_objects(r), trc_reader_n_events(r), trc_reader_n_kernels(r),
               nwg, ni, walk ? "walked" : "(not walked: --no-walk)");
    }
    trc_reader_close(r);
    return rc ? 1 : 0;
}

/* ======================================================================
 * salvage
 * ====================================================================== */

static int cmd_salvage(const char *in, const char *out)
{
    char err[ERRLEN];
    trc_salvage_stats st;
    memset(&st, 0, sizeof st);
    if (trc_salvage(in, out, &st, err, sizeof err) != 0) {
        fprintf(stderr, "gcn3-trace: salvage: %s\n", err);
        return 1;
    }
    if (st.complete)
        printf("%s: complete trace (index and trailer intact); rewritten to %s (%" PRIu64 " bytes)\n", in, out,
               st.out_bytes);
    else
        printf("%s: %s\n", in, st.cut[0] ? st.cut : "cut");
    printf("kept %u code objects, %u events, %u kernels (%" PRIu64 " workgroups); dropped %u incomplete kernels; "
           "%" PRIu64 " of %" PRIu64 " input bytes usable; wrote %s (%" PRIu64 " bytes)\n",
           st.n_code_objects, st.n_events, st.n_kernels, st.n_wg, st.n_kernels_dropped, st.valid_bytes, st.in_bytes,
           out, st.out_bytes);
    return 0;
}

/* ======================================================================
 * main
 * ====================================================================== */

int main(int argc, char **argv)
{
    if (argc < 2) return usage();
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) return usage_to(stdout, 0);
    if (!strcmp(cmd, "--version")) {
        printf("gcn3-trace %s (commit %s)\n", GCN3SIM_VERSION, GCN3SIM_COMMIT);
        return 0;
    }
    int is_info = !strcmp(cmd, "info"), is_dump = !strcmp(cmd, "dump"), is_stats = !strcmp(cmd, "stats"),
        is_verify = !strcmp(cmd, "verify"), is_salvage = !strcmp(cmd, "salvage");
    if (!is_info && !is_dump && !is_stats && !is_verify && !is_salvage) {
        fprintf(stderr, "gcn3-trace: unknown command '%s'\n", cmd);
        return usage();
    }
    opts o = {.kernel = -1, .wg = -1, .wave = -1, .with_data = 1};
    const char *pos[2] = {NULL, NULL};
    int npos = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        int has_val = i + 1 < argc;
        if (a[0] != '-' || !a[1]) {
            if (npos == (is_salvage ? 2 : 1)) {
                fprintf(stderr, "gcn3-trace: %s: unexpected argument '%s'\n", cmd, a);
                return usage();
            }
            pos[npos++] = a;
        } else if (!strcmp(a, "--json") && (is_info || is_dump || is_stats)) {
            o.json = 1;
        } else if (!strcmp(a, "--kernel") && (is_dump || is_stats) && has_val) {
            if (parse_num(argv[++i], &o.kernel)) return usage();
        } else if (!strcmp(a, "--wg") && is_dump && has_val) {
            if (parse_num(argv[++i], &o.wg)) return usage();
        } else if (!strcmp(a, "--wave") && is_dump && has_val) {
            if (parse_num(argv[++i], &o.wave)) return usage();
        } else if (!strcmp(a, "--no-data") && is_dump) {
            o.with_data = 0;
        } else if (!strcmp(a, "--no-walk") && is_verify) {
            o.no_walk = 1;
        } else if (!strcmp(a, "--instr") && is_dump) {
            o.instr = 1;
        } else {
            fprintf(stderr, "gcn3-trace: %s: unknown or incomplete option '%s'\n", cmd, a);
            return usage();
        }
    }
    if (npos != (is_salvage ? 2 : 1)) return usage();
    const char *path = pos[0];
    if (is_salvage) return cmd_salvage(pos[0], pos[1]);
    if (is_verify) return cmd_verify(path, !o.no_walk);
    char err[ERRLEN];
    trc_reader *r = trc_reader_open(path, err, sizeof err);
    if (!r) {
        fprintf(stderr, "gcn3-trace: %s\n", err);
        return 1;
    }
    int rc = is_info ? cmd_info(r, path, &o) : is_dump ? cmd_dump(r, path, &o) : cmd_stats(r, path, &o);
    trc_reader_close(r);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "gcn3-trace: write error on standard output\n");
        return 1;
    }
    return rc;
}
