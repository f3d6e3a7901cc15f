/*
 * gcn_wave.h - architectural state of one wavefront and the contract between
 * the interpreter (emu/isa: decode + semantics + run loop) and the machine
 * (emu/exec: memory, workgroups, scheduling, dispatch).
 *
 * emu/isa implements gcn_wave_run(). emu/exec creates waves, sets the initial
 * state (AMDHSA ABI, LLVM AMDGPUUsage "Initial Kernel Execution State"),
 * schedules waves of a workgroup (s_barrier), and implements the gcn_mem_*
 * functions below that the memory instructions call.
 *
 * Scalar register file: s[] is indexed by the scalar operand code of the
 * encoding (GCN3 ISA manual Sec. 12.1 "SSRC/SDST"): 0..101 SGPRs,
 * 102/103 FLAT_SCRATCH lo/hi, 104/105 XNACK_MASK lo/hi, 106/107 VCC lo/hi,
 * 108..111 TBA/TMA, 112..123 TTMP0..11, 124 M0, 126/127 EXEC lo/hi.
 * Vector register file: v[r][lane], r < n_vgpr (<= 256), 64 lanes.
 *
 * Apertures (values the runtime also puts in amd_queue_t at +0x40/+0x44,
 * FACTS.md): a FLAT address whose upper 32 bits equal GCN_GROUP_APERTURE_HI is
 * an LDS offset; GCN_PRIVATE_APERTURE_HI marks a private (scratch) address.
 * Both lie above the 47-bit user address space, so they never alias a device
 * pointer (which is a host pointer).
 *
 * Private memory: the scratch V# in s[0:3] (private segment buffer) points at
 * the dispatch's scratch allocation with swizzle on (element size 4, index
 * stride 64; GCN3 ISA manual Sec. 8.1.4 "Buffer addressing"), and the wave's
 * byte offset into it is in the private-segment-wave-offset SGPR. A private
 * address P of lane L lives at
 *     scratch_base + scratch_wave_offset + (P / 4) * 256 + L * 4 + P % 4
 * for both MUBUF (through the V#) and FLAT (through the private aperture), so
 * the two paths agree byte for byte.
 */
#ifndef GCN_WAVE_H
#define GCN_WAVE_H

#include <stddef.h>
#include <stdint.h>

#include "gcn/gcn_isa.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GCN_WAVE_LANES 64
#define GCN_GROUP_APERTURE_HI   0x00010000u
#define GCN_PRIVATE_APERTURE_HI 0x00020000u

/*
 * The recorder interface: what the ISA layer reports of a wave's dynamic
 * behaviour while it is recorded (docs/trace-format.md "wavefront record":
 * branch outcomes, indirect targets, EXEC changes as (index of the next
 * instruction, EXEC), memory ops with per-lane addresses and data, the end of
 * the wave). The ISA layer knows nothing of the trace writer: emu/exec plugs
 * it in (gcn_launch.c); a test can plug in anything else. ctx is the
 * recorder's (for the trace: the workgroup's trc_wg_rec); wave is the wave's
 * index in its workgroup. Called from the thread running the wave.
 */
typedef struct gcn_recorder_ops {
    void (*branch)(void *ctx, uint32_t wave, int taken);
    void (*indirect)(void *ctx, uint32_t wave, uint64_t target_vaddr);
    void (*exec)(void *ctx, uint32_t wave, uint64_t dyn_index, uint64_t exec);
    /* flags: GCN_MO_*; addr: indexed by lane, read for the lanes in exec;
     * load/store: active lanes' bytes in lane order (NULL: none) */
    void (*mem)(void *ctx, uint32_t wave, uint32_t flags, uint32_t bytes_per_lane, uint64_t exec,
                const uint64_t *addr, const void *load, const void *store);
    void (*wave_end)(void *ctx, uint32_t wave, uint64_t n_instr);
    /* Awaits (optional: NULL, no awaits are recorded; "Awaits" below). dyn
     * is n_instr at a loop head. await_mark: the wave is at the head of a
     * loop (a possible template starts here); await_commit: back at the head
     * at head_pc with the same state, the iteration since the last mark is an
     * await's template (returns 1, or 0 when the recorder does not keep it);
     * await_drop: one more identical iteration ended at dyn, forget it;
     * await_end: the state changed. */
    void (*await_mark)(void *ctx, uint32_t wave, uint64_t dyn);
    int (*await_commit)(void *ctx, uint32_t wave, uint64_t dyn, uint64_t head_pc);
    void (*await_drop)(void *ctx, uint32_t wave, uint64_t dyn);
    void (*await_end)(void *ctx, uint32_t wave);
    /* Retry awaits (optional): retry_mark, the wave entered a loop head other
     * than by its back-edge; retry_commit, it left that loop (head_pc) after
     * that single iteration, at dyn (returns 1 when the recorder kept it). */
    void (*retry_mark)(void *ctx, uint32_t wave, uint64_t dyn);
    int (*retry_commit)(void *ctx, uint32_t wave, uint64_t dyn, uint64_t head_pc);
} gcn_recorder_ops;
typedef struct gcn_recorder {
    const gcn_recorder_ops *ops; /* NULL: not recording */
    void *ctx;
    /* the recorder keeps the data values of private (GCN_MO_SCRATCH) ops
     * (gcn3-emu --scratch-data); 0: it drops them, so a caller may pass
     * NULL data for such ops without gathering it */
    int scratch_data;
} gcn_recorder;

/* Flags of a recorded memory op. The values are those of the trace format's
 * TRC_MO_* (traceformat/trc.h), so the trace recorder passes them through;
 * emu/exec/gcn_launch.c checks at compile time that they agree. */
enum {
    GCN_MO_LOAD    = 1u << 0,
    GCN_MO_STORE   = 1u << 1,
    GCN_MO_ATOMIC  = 1u << 2, /* store: operands (cmpswap: src then cmp per lane), load: pre-op values */
    GCN_MO_LDS     = 1u << 3, /* addresses are LDS offsets */
    GCN_MO_SMEM    = 1u << 4, /* scalar: one address, data = the access's bytes */
    GCN_MO_SCRATCH = 1u << 5, /* private memory (addresses are its backing store) */
    GCN_MO_CMPSWAP = 1u << 6, /* with ATOMIC: store holds 2 * bytes_per_lane per lane */
    /* Not a trace flag (the trace recorder takes it off): with ATOMIC, a
     * VMEM/FLAT atomic without return (glc = 0). Its pre-op values are not
     * the program's to see and depend on the order of workgroups, so the
     * trace keeps none (their order is the replay's), and a race-free
     * kernel's trace is the same for any --threads (issue 15). */
    GCN_MO_NORET   = 1u << 7,
    /* Not a trace flag either: a VMEM/FLAT load with glc = 1 (a volatile or
     * atomic load: it may poll another wave's progress). Under
     * --load-values=hash it keeps its values (trc_wg_rec_hash_loads). */
    GCN_MO_GLC     = 1u << 8,
    /* Not a trace flag: a hint that every active lane l's address is
     * addr[first] + 4 * (l - first) (first: the lowest active lane), as the
     * caller computed it (a unit-stride dword block, a private-segment
     * access where every lane uses the same offset). The trace recorder then
     * skips its own stride test (TRC_REC_LINEAR4); a wrong hint records wrong
     * addresses, so set it only where the address formula guarantees it
     * (tests/emu/3xx_wave_harness.h checks every hinted op). */
    GCN_MO_LINEAR4 = 1u << 9,
};

/* Scalar operand codes of special registers (index into gcn_wave.s). */
enum {
    GCN_SREG_FLAT_SCR_LO = 102, GCN_SREG_FLAT_SCR_HI = 103,
    GCN_SREG_XNACK_LO = 104, GCN_SREG_XNACK_HI = 105,
    GCN_SREG_VCC_LO = 106, GCN_SREG_VCC_HI = 107,
    GCN_SREG_TBA_LO = 108, GCN_SREG_TTMP0 = 112,
    GCN_SREG_M0 = 124,
    GCN_SREG_EXEC_LO = 126, GCN_SREG_EXEC_HI = 127,
};

typedef enum gcn_wave_status {
    GCN_WAVE_RUNNING = 0,
    GCN_WAVE_BARRIER,  /* stopped at s_barrier (pc already past it) */
    GCN_WAVE_SLEEP,    /* yielded at s_sleep (pc already past it): the scheduler
                        * may run other waves / host services, then resumes it */
    GCN_WAVE_DONE,     /* executed s_endpgm */
    GCN_WAVE_FAULT,    /* memory fault: message in err */
    GCN_WAVE_ILLEGAL,  /* invalid or unimplemented instruction: message in err */
    GCN_WAVE_TRAP,     /* s_trap: message in err */
    GCN_WAVE_GWS_BARRIER, /* stopped at ds_gws_barrier (pc already past it): waits in
                        * the Global Wave Sync unit for gws_count waves of the
                        * dispatch at resource gws_resource; only a cooperative
                        * launch's scheduler can release it (emu/exec gcn_launch.c) */
    GCN_WAVE_SPIN,     /* yielded at a loop back-edge (pc = the branch target, the wave
                        * resumes there): stuck = 1 when the wave makes no progress
                        * (see "Forward progress" below), 0 when its time slice
                        * (slice_end) ran out or *preempt was set */
} gcn_wave_status;

/*
 * Forward progress. A wave that waits for another wave (a spin on a flag, a
 * lock, a look-back) must let the waves it waits for run, also on one thread.
 * The interpreter watches the targets of taken backward branches (loops): it
 * follows one loop head (the back-edge target seen most recently after 64
 * back-edges elsewhere) and every GCN_SPIN_CHECK_EVERY-th time the loop comes
 * back to that head it hashes the wave's whole state (gcn_wave_state_hash:
 * pc, SCC, the SGPRs incl. EXEC/VCC/M0, and, once the scalar state repeated,
 * every VGPR of every lane). When the hash equals the one of the
 * previous check the loop made no progress in those iterations (its loads
 * returned what they returned before and it computed the same registers:
 * a fixed point that only another wave's store can end), and the wave yields
 * with status GCN_WAVE_SPIN, stuck = 1, state_hash = that hash. s_sleep
 * does the same test (stuck, state_hash) and stops with GCN_WAVE_SLEEP.
 * A loop that does not repeat its state (a counter, s_memtime) never looks
 * stuck; such a wave still yields when n_instr reaches slice_end or *preempt
 * is set (stuck = 0; looked at with the loop test, so within 64 back-edges),
 * so a wait on a clock also ends. The scheduler (emu/exec) decides from the
 * stuck waves' hashes across its rounds whether the whole dispatch deadlocked.
 *
 * Awaits (recorded waves, when the recorder has the await ops): at every
 * taken back-edge the interpreter compares the wave's state at the loop head
 * with its state at the previous return to the same head (scalar half first,
 * VGPRs only when that is equal). An iteration that left the state as it
 * found it (its loads returned what they returned before, nothing else
 * changed) becomes the template of an await (await_commit), and every further
 * iteration that does so again is dropped from the record (await_drop): the
 * trace holds the wait once, after at most two recorded iterations, and the
 * replay repeats it until its own memory changes (trace format 1.2). The
 * first iteration that ends with another state (the wave saw memory change)
 * ends the await and is recorded. Waves that are not recorded pay nothing.
 *
 * Retry awaits: a loop that a recorded wave entered and left after a single
 * iteration (a look-back whose predecessor was already done, a lock that was
 * free) is offered to the recorder (retry_mark at the head, which the decoder
 * marks GCN_IF_LOOP_HEAD; retry_commit at the not-taken back-edge): if the
 * iteration is a pure poll, the replay repeats it while its polls read other
 * data than recorded, i.e. while on the configured machine the wave would
 * still be waiting.
 */
#define GCN_SPIN_CHECK_EVERY 16u

struct gcn_wg; /* exec-private workgroup */

typedef struct gcn_wave {
    uint32_t s[128];           /* scalar registers by operand code (see above) */
    uint32_t (*v)[GCN_WAVE_LANES]; /* v[r][lane]; storage owned by exec */
    uint32_t n_vgpr;           /* allocated VGPRs (from the kernel descriptor) */
    uint32_t n_sgpr;           /* SGPRs the kernel uses (s0..), for the await hashes; 0: all 102 */
    uint64_t pc;               /* ELF vaddr of the next instruction */
    uint32_t scc;              /* 0 or 1 */
    uint32_t mode;             /* HW_REG_MODE (ISA manual Sec. 3.5.2 / Table 3.4) */
    uint32_t trapsts;          /* HW_REG_TRAPSTS */
    uint32_t status;           /* gcn_wave_status */
    uint64_t n_instr;          /* dynamic instructions executed so far */
    uint32_t gws_count;        /* status GWS_BARRIER: waves the barrier waits for (data0 + 1) */
    uint32_t gws_resource;     /* status GWS_BARRIER: GWS resource id (offset + M0[21:16], 0..63) */

    /* forward progress (see above); all zero at creation is valid */
    uint64_t slice_end;        /* set by exec: yield (SPIN, stuck 0) once n_instr >= slice_end; 0: never */
    const int *preempt;        /* set by exec: yield (SPIN, stuck 0) at a back-edge while *preempt != 0; NULL: never */
    uint64_t state_hash;       /* status SPIN with stuck 1, or SLEEP: hash of the whole wave state */
    uint8_t stuck;             /* status SPIN/SLEEP: the state repeats (see above) */
    uint8_t spin_valid;        /* bit 0: spin_shash, bit 1: spin_hash hold the previous check's at spin_pc */
    uint32_t spin_hits, spin_miss; /* back-edges to spin_pc / elsewhere since the last change */
    uint64_t spin_pc;          /* loop head watched */
    uint64_t spin_shash, spin_hash; /* scalar-state / whole-state hash at the last check at spin_pc */
    uint64_t sleep_pc, sleep_hash; /* the same for s_sleep */
    uint8_t aw_state;          /* await: 0 none, 2 dropping repeats of a template */
    uint8_t aw_have;           /* await: bit 0 aw_shash, bit 1 aw_hash hold the last arrival's */
    uint64_t aw_pc;            /* await: the loop head last returned to */
    uint64_t aw_shash, aw_hash; /* await: scalar (+ one lane of the VGPRs) / whole state hash at the last arrival */
    uint64_t aw_dyn, aw_len;   /* await: n_instr at the last arrival at the head; template length */
    uint64_t rt_head;          /* retry await: loop head entered (not by its back-edge) and not
                                * returned to since; 0: none */
    uint8_t at_back_edge;      /* the wave yielded (SPIN) at a back-edge: it resumes at a loop head
                                * it came back to */
    uint8_t guard_set;         /* guard poll (gcn_sem.c guard_load): a glc load that read non-zero,
                                * marked as a retry await's start; guard_pc its pc, guard_dyn its index */
    uint64_t guard_pc, guard_dyn;
    uint64_t aw_done_pc;       /* loop head of the last WAIT await committed (its way out is the
                                * await's: no guard poll while the wave is at that loop, aw_pc) */

    /* set by exec at creation, read by the interpreter */
    const gcn_program *prog;   /* decoded code object text */
    uint64_t image_base;       /* host/device address of ELF vaddr 0 (s_getpc returns image_base + vaddr) */
    const char *kernel_name;
    uint32_t wg_id[3];         /* workgroup id */
    uint32_t wave_in_wg;       /* index of this wave in its workgroup */
    uint32_t wave_global;      /* index of this wave in the dispatch */
    uint8_t *lds;              /* workgroup LDS */
    uint32_t lds_size;         /* bytes */
    uint64_t scratch_base;     /* device address of the dispatch scratch allocation (0: none) */
    uint64_t scratch_wave_offset; /* bytes: this wave's slice */
    uint32_t private_size;     /* bytes per work-item */
    uint64_t hw_id;            /* value of HW_REG_HW_ID for s_getreg */
    gcn_recorder rec;          /* rec.ops NULL when not recording */
    struct gcn_wg *wg;         /* exec-private */
    void *mem_cache;           /* exec-private per-wave allocation lookup cache */
    uint64_t yield_hash;       /* exec-private: state_hash at the wave's previous yield */
    char err[384];             /* one-line message when status is FAULT/ILLEGAL/TRAP */
} gcn_wave;

static inline uint64_t gcn_exec_mask(const gcn_wave *w)
{
    return (uint64_t)w->s[GCN_SREG_EXEC_LO] | ((uint64_t)w->s[GCN_SREG_EXEC_HI] << 32);
}
static inline void gcn_set_exec(gcn_wave *w, uint64_t e)
{
    w->s[GCN_SREG_EXEC_LO] = (uint32_t)e;
    w->s[GCN_SREG_EXEC_HI] = (uint32_t)(e >> 32);
}
static inline uint64_t gcn_vcc(const gcn_wave *w)
{
    return (uint64_t)w->s[GCN_SREG_VCC_LO] | ((uint64_t)w->s[GCN_SREG_VCC_HI] << 32);
}

/* Hash of the whole architectural state of a wave (pc, SCC, MODE, the SGPRs
 * s[0..n_sgpr) the kernel uses and the special registers s[102..127],
 * v[0..n_vgpr) of all 64 lanes): equal states give equal hashes. */
uint64_t gcn_wave_state_hash(const gcn_wave *w);

/*
 * Run the wave from w->pc until it stops: s_barrier (status BARRIER), s_sleep
 * (SLEEP), a loop that makes no progress or a time slice that ran out (SPIN),
 * ds_gws_barrier (GWS_BARRIER), s_endpgm (DONE) or an error (FAULT/ILLEGAL/TRAP with w->err set, naming kernel, PC,
 * encoding / address and lane). Returns the new status. Reports the wave's
 * dynamic behaviour to w->rec when w->rec.ops is set (gcn_recorder_ops).
 * Implemented by emu/isa.
 */
gcn_wave_status gcn_wave_run(gcn_wave *w);

/* ---- implemented by emu/exec ------------------------------------------- */

/*
 * Translate a global (non-aperture) address range for a lane access. Returns
 * the host pointer (a device pointer is a host pointer) or NULL after setting
 * w->status = GCN_WAVE_FAULT and w->err ("memory fault in kernel K: wg (x,y,z)
 * wave W lane L pc 0x...: read of 4 bytes at 0x... outside every allocation").
 * pc: vaddr of the faulting instruction; write: 0 read, 1 write.
 */
void *gcn_mem_global(gcn_wave *w, uint64_t addr, uint32_t len, int write, uint32_t lane,
                     uint64_t pc);

/* Kind of a FLAT address. */
typedef enum gcn_flat_kind { GCN_FLAT_GLOBAL = 0, GCN_FLAT_LDS, GCN_FLAT_PRIVATE } gcn_flat_kind;

/*
 * Translate a FLAT address of lane `lane`: global, LDS aperture or private
 * aperture (with the swizzle above). Returns the host pointer, or NULL after
 * raising a fault (out of LDS, out of the wave's private slice, or outside
 * every allocation). *kind tells which; *trace_addr receives the address to
 * record (global: addr; LDS: LDS offset; private: backing-store address).
 */
void *gcn_mem_flat(gcn_wave *w, uint64_t addr, uint32_t len, int write, uint32_t lane,
                   uint64_t pc, gcn_flat_kind *kind, uint64_t *trace_addr);

#ifdef __cplusplus
}
#endif
#endif
