/*
 * trc.h - the .gtrace trace format: writer (used by the emulator) and reader
 * (used by mgpu-replay and tools). Format specification: docs/trace-format.md.
 *
 * What a trace holds (DESIGN.md Sec. 5): a header; each code object once; the
 * host-side timeline in program order (allocations, copies and memsets with
 * their data, kernel launches, synchronisations); per kernel, per workgroup,
 * per wavefront the dynamic behaviour the code object cannot tell: branch
 * outcomes, indirect branch targets, EXEC changes, per-lane addresses of every
 * memory instruction, and the data loaded/stored.
 *
 * Addresses: device addresses are the emulator's (64-bit, byte). Code
 * addresses (PCs, branch targets) are ELF virtual addresses inside the code
 * object. LDS addresses are byte offsets in the workgroup's LDS.
 *
 * Errors: functions returning int return 0 on success and -1 on failure, with
 * a one-line message available from trc_writer_error()/trc_reader_error()
 * naming the file and what went wrong (write error / disk full, truncated
 * file, bad checksum, newer major version, ...). Nothing is ever silently
 * truncated; after a writer error every later call fails fast.
 *
 * Thread-safety: trc_writer_* event functions must be called from one thread
 * at a time (the HIP runtime serialises them). trc_wg_* recording buffers are
 * owned by one thread each; trc_wg_commit() may be called concurrently from
 * many emulator threads, in any order: the writer puts workgroups into the
 * file in grid order, grouped into frames by content size only, so a
 * race-free program gives a byte-identical trace for any thread count.
 * A trc_reader may be used from many threads once opened:
 * trc_reader_load_wg() and trc_reader_prefetch() are thread-safe and decode
 * different frames in parallel; decompressed frames are kept in a bounded
 * LRU cache (trc_reader_set_cache_limit).
 */
#ifndef TRC_H
#define TRC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The format this build writes. It reads every 1.x and 2.x up to this one
 * (2.0 = 1.4 + wave segments, 2.1 = 2.0 + managed allocations, 2.2 = 2.1 +
 * hashed loads, 2.3 = 2.2 + LDS values left out, 2.4 = 2.3 + store frames,
 * 2.5 = 2.4 + the stores' ops in store frames, 2.6 = 2.5 + host-image loads,
 * docs/trace-format.md Sec. 5). */
#define TRC_FORMAT_MAJOR 2
#define TRC_FORMAT_MINOR 6
/* The oldest major version this build reads. */
#define TRC_FORMAT_MAJOR_OLDEST 1

/* ---- Shared record types -------------------------------------------------- */

typedef struct trc_header_info {
    char producer[64];      /* "gcn3-emu" */
    char producer_version[32];
    char isa_target[64];    /* "amdgcn-amd-amdhsa--gfx803" */
    uint32_t device_count;  /* GPUs the emulator exposed */
    char command_line[1024];
    uint32_t format_major, format_minor; /* filled by the reader */
    /* 2.3: 1 when no LDS op carries data values (gcn3-emu --lds-values none,
     * trc_wg_rec_lds_data); 0 in older traces */
    uint32_t lds_values_omitted;
} trc_header_info;

typedef enum trc_mem_kind {
    TRC_MEM_DEVICE = 0,   /* hipMalloc (and hipMallocManaged: trc_event.managed, 2.1) */
    TRC_MEM_HOST_PINNED,  /* hipHostMalloc */
    TRC_MEM_KERNARG,      /* kernarg segment, dispatch packet, queue (written by the runtime) */
    TRC_MEM_CODE,         /* loaded code-object image (globals, constants) */
    TRC_MEM_SCRATCH,      /* private-segment backing store of a dispatch */
} trc_mem_kind;

typedef enum trc_copy_kind {
    TRC_COPY_H2D = 0,     /* data: the bytes written to the device (size bytes) */
    TRC_COPY_D2H,         /* data: the bytes the host received (size bytes) */
    TRC_COPY_D2D,         /* data: NULL (the replay copies from its own image) */
    TRC_COPY_INIT,        /* runtime-side initialisation of device memory (kernarg, code image); data: bytes */
} trc_copy_kind;

typedef enum trc_event_kind {
    TRC_EV_ALLOC = 0,
    TRC_EV_FREE,
    TRC_EV_COPY,
    TRC_EV_MEMSET,
    TRC_EV_LAUNCH,
    TRC_EV_SYNC,
} trc_event_kind;

/* A kernel launch as recorded. */
typedef struct trc_launch {
    uint32_t kernel_id;       /* 0,1,2... in launch order; assigned by the writer */
    uint32_t device;          /* program-visible device index */
    uint32_t stream;          /* 0 = null stream */
    uint32_t code_object_id;  /* from trc_writer_code_object() */
    char kernel_name[256];    /* mangled .name */
    uint64_t entry_vaddr;     /* ELF vaddr of the first instruction */
    uint32_t grid[3];         /* workgroups in x, y, z */
    uint32_t wg_size[3];      /* work-items per workgroup in x, y, z */
    uint32_t waves_per_wg;    /* ceil(wg items / 64) */
    uint32_t group_segment_size;   /* LDS bytes per workgroup (static + dynamic) */
    uint32_t private_segment_size; /* scratch bytes per work-item */
    uint32_t vgpr_count, sgpr_count; /* per wavefront, from the kernel descriptor */
    uint64_t kernarg_addr;    /* device address of the kernarg segment */
    uint32_t kernarg_size;
    const uint8_t *kernarg;   /* kernarg_size bytes */
} trc_launch;

typedef struct trc_event {
    trc_event_kind kind;
    uint32_t device;
    uint32_t stream;
    /* ALLOC/FREE: addr,size,mem_kind. COPY: dst,src,size,copy_kind,data.
     * MEMSET: dst,size,value (byte). LAUNCH: launch. SYNC: device. */
    uint64_t addr, src, size;
    trc_mem_kind mem_kind;
    trc_copy_kind copy_kind;
    uint8_t value;
    const uint8_t *data;      /* COPY data (size bytes) or NULL; owned by the trace object */
    trc_launch launch;
    uint64_t n_instr;         /* LAUNCH, reader side: total wavefront instructions */
    uint32_t n_wg;            /* LAUNCH, reader side: workgroups recorded */
    /* SYNC (format 1.3): wait for the work of `stream` issued before event
     * index until_event (0: all of it); stream_wait: stream wait_stream waits
     * (hipStreamWaitEvent), not the host */
    uint64_t until_event;
    uint8_t stream_wait;
    uint32_t wait_stream;
    /* SYNC (format 1.3): declares `stream` non-blocking (hipStreamNonBlocking:
     * not synchronised with the null stream); nothing waits */
    uint8_t stream_nonblocking;
    /* Reader side (format 1.4): the wall time (ns) the program's host code
     * ran outside the HIP runtime between the previous HIP call and the one
     * that wrote this event, as the recording machine measured it; 0 when
     * not recorded. Writers set it with trc_writer_host_gap(). */
    uint64_t host_gap_ns;
    /* ALLOC (format 2.1): managed memory (hipMallocManaged); mem_kind is then
     * TRC_MEM_DEVICE (what a 2.0 reader sees). 0 on every other event and in
     * older traces; the reader refuses it on a non-ALLOC event or with
     * another mem_kind. */
    uint8_t managed;
} trc_event;

/* Memory-op record flags. */
enum {
    TRC_MO_LOAD    = 1u << 0,
    TRC_MO_STORE   = 1u << 1,
    TRC_MO_ATOMIC  = 1u << 2, /* store_data = operands (cmpswap: src then cmp per lane), load_data = pre-op values
                               * (absent for an atomic without return: docs/trace-format.md Sec. 3.5) */
    TRC_MO_LDS     = 1u << 3, /* addresses are LDS offsets */
    TRC_MO_SMEM    = 1u << 4, /* scalar: one address, data = mem_bytes total */
    TRC_MO_SCRATCH = 1u << 5, /* private memory (addresses are its backing store) */
    TRC_MO_CMPSWAP = 1u << 6, /* with ATOMIC: store_data holds 2*bytes_per_lane per lane (src, then cmp) */
    TRC_MO_HOST    = 1u << 7, /* reader side, never in a file's mem_flags (2.6, WaveData.load_host): a plain
                               * load whose values the trace left out as the host image's (docs/trace-format.md
                               * Sec. 3.5 "Host-image loads"); the reader rebuilt them into load_data. Set only
                               * on ops of a workgroup loaded with its data */
};

/* One executed memory instruction of a wavefront. */
typedef struct trc_mem_op {
    uint32_t flags;          /* TRC_MO_* */
    uint32_t bytes_per_lane; /* VMEM/LDS: bytes per active lane; SMEM: total bytes */
    uint64_t exec;           /* active lanes (SMEM: 1) */
    const uint64_t *addr;    /* one address per active lane, in lane order (SMEM: 1); of a strided
                              * op read by a compact reader (trc_reader_set_compact_strided) the
                              * first only: read lane addresses with trc_mo_addr */
    const uint8_t *load_data;  /* LOAD/ATOMIC: popcount(exec)*bytes_per_lane bytes, else NULL */
    const uint8_t *store_data; /* STORE: popcount*bytes_per_lane; ATOMIC: operands (x2 for cmpswap) */
    uint64_t load_hash;      /* 2.2: non-zero: load_data left out, its XXH3-64 (trc_load_hash) instead */
    uint64_t addr_stride;    /* reader: when addr_strided, addr[k] = addr[0] + k * addr_stride (mod 2^64) */
    uint8_t addr_strided;    /* reader: the record's addresses are STRIDED (0: DELTAS, or not known) */
} trc_mem_op;

/* Address of active lane k (k < popcount(exec); SMEM: k = 0) of op, from any
 * reader (a compact one keeps only the first address of a strided op). */
static inline uint64_t trc_mo_addr(const trc_mem_op *op, uint32_t k)
{
    return op->addr_strided ? op->addr[0] + (uint64_t)k * op->addr_stride : op->addr[k];
}

/* Set bits of x (active lanes of an EXEC mask). Without -mpopcnt (the
 * x86-64 baseline Debian builds for) __builtin_popcountll is a call into
 * libgcc, 5-7% of decoding a trace's workgroups: this is the bit-parallel
 * sum inline (Warren, Hacker's Delight, 2nd ed., 5-1). */
static inline uint32_t trc_popcount64(uint64_t x)
{
#ifdef __POPCNT__
    return (uint32_t)__builtin_popcountll(x);
#else
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (uint32_t)((x * 0x0101010101010101ull) >> 56);
#endif
}

/* Decoded dynamic record of one wavefront (reader side). */
typedef struct trc_wave {
    uint32_t wave_in_wg;     /* 0.. waves_per_wg-1 */
    uint64_t n_instr;        /* dynamic instructions executed, s_endpgm included */
    uint32_t n_branch;       /* conditional branches executed */
    const uint8_t *branch_taken; /* n_branch bits, LSB first: bit i = outcome of i-th s_cbranch */
    uint32_t n_indirect;
    const uint64_t *indirect_target; /* ELF vaddr of each s_setpc/s_swappc target, in order */
    uint32_t n_exec;
    const uint64_t *exec_at;   /* dynamic instruction index from which exec_val[i] holds */
    const uint64_t *exec_val;  /* EXEC value; exec_at[0] == 0 gives the initial EXEC */
    uint32_t n_mem;
    const trc_mem_op *mem;     /* in execution order */
    /* 1.2: awaits, sorted (docs/trace-format.md "awaits"): await i is one
     * iteration of a wait loop whose head is at ELF vaddr await_pc[i], the
     * dynamic instructions [await_at[i], await_at[i] + await_len[i]) of the
     * record, which the emulator saw repeat without a change (the repeats are
     * not in the record). Absent (n_await 0) in older traces. */
    uint32_t n_await;
    const uint64_t *await_at, *await_len, *await_pc;
    const uint32_t *await_kind; /* TRC_AWAIT_WAIT or TRC_AWAIT_RETRY */
} trc_wave;

/* Kinds of an await (docs/trace-format.md "awaits"). */
enum { TRC_AWAIT_WAIT = 0, TRC_AWAIT_RETRY = 1 };

typedef struct trc_wg {
    uint32_t kernel_id;
    uint32_t wg_id[3];
    uint32_t n_waves;
    trc_wave *waves;
    /* 1: loaded with TRC_WG_STORE_OPS from a 2.5 store frame: each wave has
     * its n_instr and only the ops that store outside the LDS (no branches,
     * EXEC changes or awaits: it cannot be walked) */
    uint32_t ops_only;
    /* private storage follows */
} trc_wg;

/* ---- Writer --------------------------------------------------------------- */

typedef struct trc_writer trc_writer;

/* Create/truncate path and write the header. NULL on failure with the
 * message in err. If SIGXFSZ has its default action it is set to ignored,
 * so that a file-size limit becomes a write error (EFBIG) naming the file
 * instead of killing the process. */
trc_writer *trc_writer_open(const char *path, const trc_header_info *h, char *err, size_t errlen);
/* Write the index and trailer and close. Returns -1 if anything failed at any
 * point (the message from trc_writer_error stays valid until destroy). */
int trc_writer_close(trc_writer *w);
void trc_writer_destroy(trc_writer *w); /* accepts NULL; closes if still open */
const char *trc_writer_error(const trc_writer *w);
/* Has the writer failed (sticky: full disk, I/O error, a bad record)? Then
 * every later call fails fast, writes nothing, and the file holds what was
 * flushed before: every kernel that ended (trc_salvage recovers them).
 * Thread-safe. */
int trc_writer_failed(const trc_writer *w);

/* Store a code object's ELF bytes once, with the device address its image
 * was loaded at (format 1.1; the start of its TRC_MEM_CODE allocation, so
 * that fetch address = pc + load_addr); returns its id (>= 0) or -1. */
int trc_writer_code_object(trc_writer *w, const void *elf, size_t len, uint64_t load_addr);

int trc_writer_event(trc_writer *w, const trc_event *ev); /* ALLOC/FREE/COPY/MEMSET/SYNC */
/* Host-timeline events written so far: the index the next one gets (a SYNC's
 * until_event refers to it). Call from the thread that writes events. */
size_t trc_writer_n_events(const trc_writer *w);
/* Host time (ns, format 1.4) the program spent outside the runtime since the
 * last call: added up, and carried by the next event written (LAUNCH
 * included) as its host_gap_ns. Call from the thread that writes events. */
void trc_writer_host_gap(trc_writer *w, uint64_t ns);
/* Start a kernel: fills l->kernel_id. Its workgroups are committed with
 * trc_wg_commit() (from any threads) before trc_writer_end_kernel(). */
int trc_writer_begin_kernel(trc_writer *w, trc_launch *l);
/* End a kernel: its last frames are sealed and its kernel-end chunk queued
 * behind them; background compressors finish them while the program goes
 * on (events written meanwhile wait in program order behind them: the file
 * is the same as if the call had waited). Returns once the previous
 * kernel's end is in the file (written and flushed), so at most one ended
 * kernel is not yet there; trc_writer_close writes everything. With no
 * background compressor (one CPU) the kernel's end is in the file on
 * return. -1 when the writer has failed (a failure while finishing this
 * kernel shows at a later call or at close). */
int trc_writer_end_kernel(trc_writer *w, uint32_t kernel_id);

/* Per-workgroup recording buffer, owned by one emulator thread; reusable. */
typedef struct trc_wg_rec trc_wg_rec;
trc_wg_rec *trc_wg_rec_create(void);
void trc_wg_rec_destroy(trc_wg_rec *g); /* accepts NULL */
/* Reset for a new workgroup of kernel_id with n_waves wavefronts. */
void trc_wg_rec_begin(trc_wg_rec *g, uint32_t kernel_id, const uint32_t wg_id[3], uint32_t n_waves);
/* Format 2.0: let the waves of g stream out while they run. Once a wave's
 * records reach TRC_SEG_REC_BYTES (256 KiB) or its data values
 * TRC_SEG_DATA_BYTES (1 MiB) the part recorded so far is compressed and
 * spilled to w as a wave segment (docs/trace-format.md Sec. 1.5), so the
 * recorder's memory is bounded by those sizes per wave, not by how long the
 * wave runs. The segments reach the file with their workgroup, in grid
 * order, so the file does not depend on the thread count. Without this call
 * (or with w NULL) waves are kept whole. Call after trc_wg_rec_begin; g must
 * later be committed to the same w. */
void trc_wg_rec_stream(trc_wg_rec *g, trc_writer *w);
/* Whether the data values of private (TRC_MO_SCRATCH) memory ops are
 * recorded (1, what trc_wg_rec_begin sets) or left out (0: their load_len and
 * store_len are 0, "none recorded", docs/trace-format.md Sec. 3.5). No other
 * wave reads a wave's private memory, so the replay's data check of shared
 * memory does not need them; they are most of an -O0 program's data. Call
 * after trc_wg_rec_begin. */
void trc_wg_rec_scratch_data(trc_wg_rec *g, int keep);
/* Format 2.3: whether the data values of LDS (TRC_MO_LDS) memory ops are
 * recorded (1, what trc_wg_rec_begin sets) or left out (0: their load_len and
 * store_len are 0 and they are never hashed; gcn3-emu --lds-values none,
 * docs/trace-format.md Sec. 3.5). The LDS is private to a workgroup, so the
 * replay's timing does not depend on its values; it loses the check of LDS
 * loads. The trace's header must say so (trc_header_info.lds_values_omitted).
 * Call after trc_wg_rec_begin. */
void trc_wg_rec_lds_data(trc_wg_rec *g, int keep);
/* Format 2.2: whether plain loads keep their values (0, what
 * trc_wg_rec_begin sets) or carry only a 64-bit hash of them (1:
 * gcn3-emu --load-values=hash; docs/trace-format.md Sec. 3.5 "Hashed loads").
 * Hashed: a LOAD op that is not ATOMIC, SMEM, SCRATCH or glc
 * (TRC_REC_KEEP_VALUES from the caller) and is not part of an await or retry
 * template (nor the way out of a WAIT await). Decided when the wave's records
 * are encoded, so the recorder's hot path is unchanged. Call after
 * trc_wg_rec_begin. */
void trc_wg_rec_hash_loads(trc_wg_rec *g, int on);
/* Format 2.6: whether plain loads whose values equal w's host image (what
 * the H2D and INIT copies and memsets written to w so far left at their
 * addresses, unless D2D copies or FREEs came after; docs/trace-format.md
 * Sec. 3.5 "Host-image loads") are recorded
 * as TRC_MO_HOST without their values (w: the writer g commits to), or keep
 * them (w NULL, what trc_wg_rec_begin sets). A LOAD that is not ATOMIC, LDS
 * or SCRATCH qualifies (SMEM included); the writer stops matching for good
 * once an event is written while a kernel is open (between
 * trc_writer_begin_kernel and trc_writer_end_kernel); it keeps a copy of
 * the copies' bytes still in its image, up to 1 GiB at once (an estimate of
 * what a recording machine spares; beyond, a copy's bytes never match). Call after
 * trc_wg_rec_begin. */
void trc_wg_rec_host_image(trc_wg_rec *g, trc_writer *w);
/* trc_rec_mem flag (never stored): keep this op's load values even when
 * loads are hashed (a glc load: a volatile or atomic load may be a poll). */
#define TRC_REC_KEEP_VALUES (1u << 31)
/* trc_rec_mem flag (never stored): the caller guarantees that every active
 * lane l's address is addr[first] + 4 * (l - first) (first: the lowest
 * active lane); with active lanes that are contiguous the recorder then
 * stores the op as strided by 4 without testing the addresses (the same
 * record the test gives: a speed hint only). A wrong hint records wrong
 * addresses. */
#define TRC_REC_LINEAR4 (1u << 30)
/* The hash of a hashed load (format 2.2): XXH3_64bits with seed 0 of the
 * op's n * bytes_per_lane load bytes (what load_data would hold), 1 where
 * that is 0 (0 means "not hashed"). */
uint64_t trc_load_hash(const void *data, size_t n);
/* Recording calls for wavefront `wave` (0..n_waves-1) of the current workgroup. */
void trc_rec_branch(trc_wg_rec *g, uint32_t wave, int taken);
void trc_rec_indirect(trc_wg_rec *g, uint32_t wave, uint64_t target_vaddr);
void trc_rec_exec(trc_wg_rec *g, uint32_t wave, uint64_t dyn_index, uint64_t exec);
/* addr: 64 entries indexed by lane (only lanes set in exec are read; SMEM: addr[0]).
 * load_data/store_data: packed data of the active lanes in lane order, or NULL. */
void trc_rec_mem(trc_wg_rec *g, uint32_t wave, uint32_t flags, uint32_t bytes_per_lane,
                 uint64_t exec, const uint64_t *addr, const void *load_data,
                 const void *store_data);
void trc_rec_wave_end(trc_wg_rec *g, uint32_t wave, uint64_t n_instr);
/* Compress and append the workgroup; thread-safe. Returns 0 or -1. */
int trc_wg_commit(trc_writer *w, trc_wg_rec *g);

/* Awaits (format 1.2, docs/trace-format.md "awaits"). `dyn` is the
 * emulator's count of the wave's executed instructions (the index of the next
 * one), at a loop head in each call; the recorder turns it into a record
 * index (instructions it dropped are not counted).
 *  - trc_rec_await_mark: the wave is at a loop head: an await's template may
 *    start here.
 *  - trc_rec_await_commit: back at the head (ELF vaddr head_pc) with the
 *    state of the mark: the iteration since the mark becomes an await (start,
 *    length, head); 1, or 0 when it was not kept (it holds an atomic without
 *    return: not the same iteration again).
 *  - trc_rec_await_drop: back at the head with the same state again: the
 *    iteration since the template's end (or the previous drop) is removed
 *    from the record.
 *  - trc_rec_await_end: the state changed; what follows is recorded as usual. */
void trc_rec_await_mark(trc_wg_rec *g, uint32_t wave, uint64_t dyn);
int trc_rec_await_commit(trc_wg_rec *g, uint32_t wave, uint64_t dyn, uint64_t head_pc);
/* Retry awaits: trc_rec_retry_mark: the wave entered a loop head (not by its
 * back-edge); trc_rec_retry_commit: it left that loop (head_pc) at dyn after
 * that one iteration: the iteration becomes a RETRY await if it is a pure
 * poll (it loads, stores nothing, no atomic without return, no
 * compare-and-swap whose compare value a load just before it returned) and
 * overlaps no other await; returns 1 when kept. */
void trc_rec_retry_mark(trc_wg_rec *g, uint32_t wave, uint64_t dyn);
int trc_rec_retry_commit(trc_wg_rec *g, uint32_t wave, uint64_t dyn, uint64_t head_pc);
void trc_rec_await_drop(trc_wg_rec *g, uint32_t wave, uint64_t dyn);
void trc_rec_await_end(trc_wg_rec *g, uint32_t wave);

/* ---- Reader --------------------------------------------------------------- */

typedef struct trc_reader trc_reader;

/* Open and validate header, index and trailer. NULL with a message in err
 * (e.g. "out/a.gtrace: truncated at byte 1234: no index (was the emulator
 * killed?)"). */
trc_reader *trc_reader_open(const char *path, char *err, size_t errlen);
void trc_reader_close(trc_reader *r); /* accepts NULL */
/* The last load error (of any thread): a copy in the calling thread's buffer,
 * valid until its next call; "" when none. */
const char *trc_reader_error(const trc_reader *r);

const trc_header_info *trc_reader_header(const trc_reader *r);
size_t trc_reader_n_code_objects(const trc_reader *r);
const uint8_t *trc_reader_code_object(const trc_reader *r, size_t id, size_t *len);
/* Device address code object id was loaded at; 0 when the trace does not say
 * (format 1.0: the id-th TRC_MEM_CODE allocation event holds it) or id is out
 * of range. */
uint64_t trc_reader_code_object_addr(const trc_reader *r, size_t id);
size_t trc_reader_n_events(const trc_reader *r);
const trc_event *trc_reader_event(const trc_reader *r, size_t i); /* program order */

/* Workgroup i (0..n_wg-1, in grid order: z, then y, then x) of a kernel,
 * decoded into one self-contained allocation; caller frees with trc_wg_free.
 * The frames it comes from are decompressed on demand into the reader's
 * frame cache. NULL on error (corrupt frame: message from trc_reader_error,
 * which is then per-thread undefined; use err). Thread-safe. */
trc_wg *trc_reader_load_wg(trc_reader *r, uint32_t kernel_id, uint32_t i, char *err, size_t errlen);
void trc_wg_free(trc_wg *wg); /* accepts NULL */

/* Default bound of the decompressed-frame cache, bytes. A replay loads
 * workgroups in grid order, so it uses each frame (<= 1 MiB of data values,
 * 128 KiB of records: TRC_FRAME_*_BYTES) for a stretch of consecutive
 * workgroups and rarely again; the cache needs to hold the frames of the
 * kernels running at once. Measured (mgpu-replay, 2026-12-02): 16 MiB
 * decodes every frame as often as 64 MiB did on r9nano (gd, km, aes, conv
 * 1x), d-mgpu (gd 1x on 4 GPUs) and u-mgpu (gd 4x: 504 frames; 8 MiB: 514,
 * 4 MiB: 542) and sampled (km 4x), and a smaller cache reuses the memory of
 * evicted frames instead of touching new pages: peak memory of the r9nano
 * replays 122 -> 81 MB (gd), 133 -> 81 MB (km), 139 -> 91 MB (conv), wall
 * time the same or less (gd 1.05-1.36 -> 1.05-1.06 s, km 3.40-3.56 ->
 * 3.36-3.42 s). An estimate for more concurrent kernels than that. */
#define TRC_READER_CACHE_DEFAULT (16u << 20)
/* Bound the cache of decompressed frames to `bytes` (0 = keep no frame after
 * the load that needed it). Frames being decoded from are never evicted, so
 * memory may exceed the bound by the frames in use (one or two per thread
 * inside trc_reader_load_wg). Least recently used frames go first. */
void trc_reader_set_cache_limit(trc_reader *r, size_t bytes);
/* on != 0: workgroups loaded from now on keep only the first address of a
 * strided memory op (addr_strided) instead of one per lane: less to write
 * and to keep (most vector accesses are strided), for a reader whose users
 * read addresses with trc_mo_addr. Default 0. */
void trc_reader_set_compact_strided(trc_reader *r, int on);
/* Decompress into the cache, with up to `threads` threads in parallel
 * (0 or 1: in the calling thread), the frames holding workgroups
 * first..first+n-1 of a kernel (clamped to the kernel's workgroups); record
 * frames always, data frames if with_data. Returns when done: 0, or -1 with
 * a message in err (a corrupt frame). Useful before loading a batch of
 * workgroups; frames beyond the cache bound are decoded and dropped. */
int trc_reader_prefetch(trc_reader *r, uint32_t kernel_id, uint32_t first, uint32_t n, int with_data,
                        unsigned threads, char *err, size_t errlen);

/* For threads that load workgroups side by side (mgpu-replay's sampled
 * fast-forward): trc_reader_wg_busy says whether another thread is
 * decompressing a frame that workgroup i of a kernel needs (its record
 * frame; with_data, its data frame too: with TRC_WG_STORES_ONLY its 2.4
 * store frame instead where it has one, as trc_reader_load_wg_ex reads), so
 * that loading it now would wait;
 * trc_reader_warm_after decompresses into the cache, without waiting for
 * any thread, the frames of the first workgroup at or after i whose frames
 * are neither cached nor being decompressed, among the `frames` frames
 * that follow i's own, and returns 1 when it decompressed one, 0 when there
 * was none to do, -1 on a corrupt frame (not recorded: the load that needs
 * it reports it). Neither changes what any load returns. */
int trc_reader_wg_busy(trc_reader *r, uint32_t kernel_id, uint32_t i, int with_data);
int trc_reader_warm_after(trc_reader *r, uint32_t kernel_id, uint32_t i, uint32_t frames, int with_data);

typedef struct trc_reader_cache_stats {
    uint64_t hits, misses;     /* frame lookups served from / not from the cache */
    uint64_t decoded_bytes;    /* decompressed bytes produced, all frames */
    uint64_t evictions;
    size_t bytes, peak_bytes;  /* decompressed bytes held now / at most */
} trc_reader_cache_stats;
void trc_reader_get_cache_stats(trc_reader *r, trc_reader_cache_stats *st);


/* ---- Salvage -------------------------------------------------------------- */

/* What trc_salvage() found and kept. */
typedef struct trc_salvage_stats {
    uint64_t in_bytes;          /* size of the input file, bytes */
    uint64_t valid_bytes;       /* input bytes up to the end of the last intact chunk */
    int complete;               /* 1: the input had a valid index and trailer (copied as is) */
    uint32_t n_code_objects;    /* code objects kept */
    uint32_t n_events;          /* host-timeline events kept (launches included) */
    uint32_t n_kernels;         /* kernels kept: every workgroup present and the kernel ended */
    uint32_t n_kernels_dropped; /* kernels launched before the cut but incomplete */
    uint64_t n_wg;              /* workgroups kept, all kernels */
    uint64_t out_bytes;         /* size of the output file, bytes */
    char cut[256];              /* one line: where and why the input stops ("" if complete) */
} trc_salvage_stats;

/* Recover a trace cut off at any byte (killed emulator, full disk): scan
 * in_path chunk by chunk from the start (checking every frame's checksum),
 * stop at the first incomplete or damaged chunk, and write to out_path a
 * valid trace of the same format version holding the header, the code
 * objects, and the host timeline up to the cut or up to the launch of the
 * first kernel whose kernel-end chunk is missing, whichever comes first,
 * with every kernel launched in it (all complete). The kept chunks are
 * copied byte for byte; a new index and trailer follow. A complete input
 * (trc_reader_open succeeds) is copied unchanged. out_path must differ
 * from in_path. st (may be NULL) receives what was kept. Returns 0 on
 * success, -1 with a one-line message naming the file in err (input not a
 * trace, its header chunk damaged, newer major version, output write
 * error, ...). */
int trc_salvage(const char *in_path, const char *out_path, trc_salvage_stats *st, char *err,
                size_t errlen);

/* What the index says of one kernel (gcn3-trace info/stats, the fuzzer). */
typedef struct trc_kernel_stats {
    uint32_t launch_event;  /* index of the LAUNCH event */
    uint32_t n_wg;          /* workgroups recorded */
    uint64_t n_waves;
    uint64_t n_instr;       /* wavefront instructions */
    uint64_t n_mem;         /* memory ops */
    uint64_t wg_bytes;      /* compressed record frames, chunk headers included */
    uint64_t data_bytes;    /* compressed data frames, chunk headers included */
    int ended;
    uint32_t n_frames;      /* record frames (= data frames) */
    uint64_t raw_rec_bytes; /* decompressed record frame bytes */
    uint64_t raw_data_bytes;/* decompressed data frame bytes */
    uint64_t end_chunk_offset; /* its kernel-end chunk (0: none), for verify */
    uint32_t n_segments;    /* 2.0: wave-segment chunk pairs (long waves), all workgroups */
    uint64_t seg_bytes;     /* their compressed bytes, chunk headers included (records and data) */
    uint32_t n_store_frames;  /* 2.4: store frames (at most n_frames) */
    uint64_t store_bytes;     /* their compressed bytes, chunk headers included */
    uint64_t raw_store_bytes; /* decompressed */
} trc_kernel_stats;

/* Kernels in the trace (launches), and the index entry of one: 0, or -1 for
 * an unknown kernel id. */
size_t trc_reader_n_kernels(const trc_reader *r);
int trc_reader_kernel_stats(const trc_reader *r, uint32_t kernel_id, trc_kernel_stats *st);
/* As trc_reader_load_wg; with_data = 0 skips the data chunk (mem ops then
 * have load_data = store_data = NULL), so a timing-only replay never
 * decompresses data values; with_data = TRC_WG_STORES_ONLY leaves the load
 * values out (load_data NULL, load_hash 0): what a fast-forward that only
 * applies stores and atomics needs. It reads the workgroup's 2.4 store frame
 * where there is one (docs/trace-format.md Sec. 1.6: only the values of
 * stores and atomics outside the LDS; LDS ops then have store_data NULL
 * too), else the data frame without un-shuffling and copying the loads'
 * bytes. */
#define TRC_WG_STORES_ONLY 2
/* Or'ed into with_data (of trc_reader_load_wg_ex only): LDS ops come
 * without addresses (addr NULL, addr_strided 0), which the reader then
 * steps over instead of decoding: for a caller that never reads them (the
 * fast-forward of a sampled replay applies no LDS op). */
#define TRC_WG_NO_LDS_ADDR 4
/* Or'ed into TRC_WG_STORES_ONLY (of trc_reader_load_wg_ex, _wg_busy and
 * _warm_after): where the workgroup's store frame carries its stores' ops
 * (format 2.5, docs/trace-format.md Sec. 1.6), read that frame alone, not
 * the record frame: the workgroup comes with ops_only = 1, each wave with
 * its n_instr and only its memory ops that store outside the LDS (stores
 * and atomics, with EXEC, addresses and store_data, in op order). Else (no
 * store frame, or one of 2.4) as without it. For a fast-forward that only
 * applies stores: km at 131,072 points and 15 iterations, whose launches
 * are fast-forwarded whole, reads 25 MB of store frames instead of 520 MB
 * of record and store frames. */
#define TRC_WG_STORE_OPS 8
trc_wg *trc_reader_load_wg_ex(trc_reader *r, uint32_t kernel_id, uint32_t i, int with_data,
                              char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
