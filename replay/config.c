/*
 * config.c - the parameter table and its parsers.
 *
 * THE table below is the only place a parameter is declared (STYLE.md #12):
 * name, type, field, default, bounds, unit and description. Defaults describe
 * the AMD R9 Nano (Fiji) as modelled by MGSim (paper Table I and Sec. IV) and
 * the R9 Nano datasheet (64 CUs, 1 GHz, 4 GiB HBM at 512 GB/s); the preset
 * files in replay/configs/ repeat them with sources. Invariant: every key of
 * the table has a default that passes its own bounds.
 */
#include "rp_config.h"
#include "rp_um.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

enum ptype { PT_UINT, PT_SIZE, PT_FREQ, PT_LAT, PT_BW, PT_TOPO, PT_STR };

typedef struct param {
    const char *name;
    enum ptype type;
    size_t off;
    const char *def;
    uint64_t min, max; /* numeric bounds in the stored unit (bytes, Hz, count); 0,0 = none */
    const char *unit;
    const char *desc;
} param;

#define F(x) offsetof(rp_config, x)
static const param params[] = {
    {"topo.name", PT_STR, F(topo_name), "r9nano", 0, 0, "", "preset name (informational)"},
    {"topo.kind", PT_TOPO, F(topo_kind), "single", 0, 0, "single, unified, discrete",
     "single GPU; unified (U-MGPU: GPU 0's dispatcher drives all CUs, memory interleaved across GPUs); "
     "discrete (D-MGPU: one dispatcher per GPU, memory on the allocating device's GPU)"},
    {"topo.gpus", PT_UINT, F(gpus), "1", 1, 64, "count",
     "number of GPUs; with topo.kind = single, one monolithic GPU with this many times the shader arrays, "
     "L2 size and banks and DRAM channels (M-SGPU, MGSim Sec. IV-C)"},
    {"gpu.freq", PT_FREQ, F(gpu_freq), "1GHz", 1000000, 10000000000ull, "Hz",
     "core clock of CUs, caches and dispatcher (R9 Nano: 1 GHz, MGSim Table I)"},
    {"gpu.shader_arrays", PT_UINT, F(shader_arrays), "16", 1, 1024, "count",
     "shader arrays per GPU (each shares one L1 scalar cache; R9 Nano: 16)"},
    {"gpu.cus_per_sa", PT_UINT, F(cus_per_sa), "4", 1, 64, "count", "CUs per shader array (R9 Nano: 4, 64 CUs)"},
    {"cu.simds", PT_UINT, F(simds), "4", 1, 16, "count", "SIMD units per CU (GCN3: 4)"},
    {"cu.wave_slots", PT_UINT, F(wave_slots), "10", 1, 64, "count", "wavefront slots per SIMD (GCN3: 10)"},
    {"cu.vgprs", PT_UINT, F(vgprs), "256", 1, 4096, "registers",
     "VGPRs per lane per SIMD (GCN3: 64 KiB VGPR file = 256 x 64 lanes x 4 B)"},
    {"cu.sgprs", PT_UINT, F(sgprs), "800", 1, 100000, "registers", "SGPRs per SIMD (GCN3: 800)"},
    {"cu.lds_size", PT_SIZE, F(lds_size), "64KiB", 1024, 1ull << 24, "bytes", "LDS per CU (GCN3: 64 KiB)"},
    {"cu.salu_cycles", PT_UINT, F(salu_cycles), "1", 1, 1000, "cycles", "issue cost of a scalar ALU / branch instruction"},
    {"cu.valu_cycles", PT_UINT, F(valu_cycles), "4", 1, 1000, "cycles",
     "SIMD occupancy of a VALU wavefront instruction (16 lanes x 4 cycles = 64 work-items)"},
    {"cu.valu_f64_cycles", PT_UINT, F(valu_f64_cycles), "16", 1, 1000, "cycles",
     "SIMD occupancy of an F64 VALU instruction (Fiji FP64 is 1/16 rate: 64 cycles at full width; "
     "16 models the 1/4-rate FMA/ADD class)"},
    {"cu.valu_trans_cycles", PT_UINT, F(valu_trans_cycles), "16", 1, 1000, "cycles",
     "SIMD occupancy of a transcendental VALU instruction (quarter rate)"},
    {"cu.vmem_issue_cycles", PT_UINT, F(vmem_issue_cycles), "4", 1, 1000, "cycles",
     "minimum vector-memory unit occupancy per instruction (plus one cycle per extra coalesced line)"},
    {"cu.smem_issue_cycles", PT_UINT, F(smem_issue_cycles), "1", 1, 1000, "cycles", "scalar-memory issue cost"},
    {"cu.lds_latency", PT_LAT, F(lds_latency), "64cycles", 0, 0, "cycles or time",
     "LDS access latency without bank conflicts"},
    {"cu.lds_banks", PT_UINT, F(lds_banks), "32", 1, 1024, "count", "LDS banks of 4 bytes (GCN3: 32)"},
    {"cu.barrier_latency", PT_LAT, F(barrier_latency), "1cycles", 0, 0, "cycles or time",
     "time from the last wave reaching s_barrier to the release of all"},
    {"dispatcher.latency", PT_LAT, F(dispatch_latency), "10cycles", 0, 0, "cycles or time",
     "dispatcher-to-CU (and CU-to-dispatcher completion) message latency"},
    {"dispatcher.hw_queues", PT_UINT, F(dispatch_hw_queues), "4", 1, 1024, "queues",
     "hardware queues the streams of a GPU map onto (stream k > 0 on queue (k - 1) mod hw_queues; ROCm: "
     "GPU_MAX_HW_QUEUES, default 4); kernels of different queues run concurrently, 1 = one kernel at a time"},
    {"dispatcher.policy", PT_STR, F(dispatch_policy), "fifo", 0, 0, "fifo, interleave",
     "how kernels of different hardware queues share the dispatcher: fifo = a kernel starts once the one "
     "before it has handed out its last workgroup and takes the room left; interleave = it starts at once "
     "and the kernels take workgroup turns, round robin (model choices, not measured)"},
    {"dispatcher.wg_cycles", PT_UINT, F(dispatch_cycles), "4", 1, 100000, "cycles",
     "dispatcher occupancy per dispatched workgroup, at least (R9 Nano empty kernel, shared/hw-r9nano: "
     "4.0 ns per workgroup of 1 to 4 wavefronts at 1 GHz)"},
    {"dispatcher.wave_cycles", PT_UINT, F(dispatch_wave_cycles), "1", 0, 100000, "cycles",
     "dispatcher occupancy per wavefront of a workgroup when that is more than wg_cycles (R9 Nano empty "
     "kernel: 5.0, 6.0, 7.0 ns per workgroup of 5, 6, 7 wavefronts)"},
    {"l1v.size", PT_SIZE, F(l1v_size), "16KiB", 64, 1ull << 30, "bytes", "L1 vector cache per CU (MGSim Table I: 16 KB)"},
    {"l1v.assoc", PT_UINT, F(l1v_assoc), "4", 1, 256, "ways", "L1 vector cache associativity (4-way)"},
    {"l1v.line", PT_SIZE, F(l1v_line), "64B", 16, 4096, "bytes",
     "cache line size of every cache level (GCN3: 64 B; also the coalescing unit)"},
    {"l1v.mshrs", PT_UINT, F(l1v_mshrs), "16", 1, 4096, "entries", "L1V miss status holding registers (MGPUSim: 16)"},
    {"l1v.latency", PT_LAT, F(l1v_latency), "126cycles", 0, 0, "cycles or time",
     "L1V pipeline latency (texture address/data path; with l1v.bypass every load pays it on its way to the L2)"},
    {"l1s.size", PT_SIZE, F(l1s_size), "16KiB", 64, 1ull << 30, "bytes",
     "L1 scalar (constant) cache per shader array (MGSim Table I: 16 x 16 KB)"},
    {"l1s.assoc", PT_UINT, F(l1s_assoc), "4", 1, 256, "ways", "L1 scalar cache associativity"},
    {"l1s.mshrs", PT_UINT, F(l1s_mshrs), "16", 1, 4096, "entries", "L1 scalar cache MSHRs"},
    {"l1s.latency", PT_LAT, F(l1s_latency), "20cycles", 0, 0, "cycles or time", "L1 scalar cache hit latency"},
    {"l1i.size", PT_SIZE, F(l1i_size), "32KiB", 64, 1ull << 30, "bytes",
     "L1 instruction cache per shader array, shared by its CUs (MGSim Table I: 16 x 32 KB 4-way)"},
    {"l1i.assoc", PT_UINT, F(l1i_assoc), "4", 1, 256, "ways", "L1 instruction cache associativity (4-way)"},
    {"l1i.mshrs", PT_UINT, F(l1i_mshrs), "16", 1, 4096, "entries", "L1 instruction cache MSHRs (outstanding line misses)"},
    {"l1i.latency", PT_LAT, F(l1i_latency), "1cycles", 0, 0, "cycles or time",
     "L1 instruction cache hit latency (a miss adds the L2/DRAM round trip)"},
    {"l1i.launch_prefetch", PT_SIZE, F(l1i_launch_prefetch), "192B", 0, 1ull << 20, "bytes",
     "bytes of a kernel's code, from its entry, already in every L1I when its first wave fetches (the "
     "dispatch's code prefetch; fitted: the R9 Nano ALU probe's slope over all N needs its first 3 lines free)"},
    {"cu.ibuffer_entries", PT_UINT, F(ibuffer_entries), "64", 1, 1024, "dwords",
     "per-wavefront instruction buffer capacity in 4-byte words (GCN3 instructions are 1 or 2 words)"},
    {"cu.fetch_bytes", PT_UINT, F(fetch_bytes), "64", 4, 4096, "bytes",
     "bytes one instruction fetch brings into a wavefront's buffer (aligned; one fetch in flight per wave)"},
    {"cu.fetch_ahead", PT_UINT, F(fetch_ahead), "0", 0, 1, "0 or 1",
     "1: a wave's next chunk is fetched as soon as its buffer has room; 0: only while the wave waits (s_waitcnt, "
     "s_barrier, the grid barrier) or when it needs the chunk (a wave issuing back to back fetches on demand)"},
    {"cu.decode_cycles", PT_UINT, F(decode_cycles), "2", 0, 1000, "cycles",
     "cycles from an instruction leaving its unit to the wave's next issue (R9 Nano ALU probe: 5.9 ns per "
     "v_add_f32 inside one I-cache line, ../shared/hw-r9nano)"},
    {"l1v.bypass", PT_UINT, F(l1v_bypass), "1", 0, 1, "0 or 1",
     "1: vector loads never hit in the L1V (every access goes to the L2; MGSim Sec. VII-A finds the L1V "
     "effectively disabled under ROCm); its pipeline latency still applies"},
    {"l2.size", PT_SIZE, F(l2_size), "2MiB", 1024, 1ull << 34, "bytes",
     "L2 capacity per GPU, all banks together (R9 Nano: 2 MB)"},
    {"l2.banks", PT_UINT, F(l2_banks), "16", 1, 1024, "count", "L2 banks per GPU, address-interleaved"},
    {"l2.assoc", PT_UINT, F(l2_assoc), "16", 1, 256, "ways", "L2 associativity (16-way)"},
    {"l2.mshrs", PT_UINT, F(l2_mshrs), "64", 1, 65536, "entries", "MSHRs per L2 bank"},
    {"l2.latency", PT_LAT, F(l2_latency), "2cycles", 0, 0, "cycles or time", "L2 bank hit latency"},
    {"l2.interleave", PT_SIZE, F(l2_interleave), "256B", 16, 1ull << 30, "bytes",
     "address interleaving granularity across L2 banks"},
    {"noc.latency", PT_LAT, F(noc_latency), "4cycles", 0, 0, "cycles or time", "on-chip network latency between CU/L1 and L2 banks"},
    {"noc.bandwidth", PT_BW, F(noc_bandwidth), "64B/cycle", 0, 0, "B/s or B/cycle",
     "bandwidth of each on-chip link (into each L2 bank, back to each L1)"},
    {"noc.header_bytes", PT_UINT, F(header_bytes), "8", 0, 1024, "bytes", "header bytes added to every message on a link"},
    {"tlb.enable", PT_UINT, F(tlb_enable), "1", 0, 1, "0 or 1",
     "1: every access is translated (L1 vector TLB per CU, L1 scalar/instruction TLB per shader array, L2 TLB "
     "and page-table walker per GPU; Power et al., HPCA 2014; MGPUSim's R9 Nano builder); 0: addresses are "
     "physical and free"},
    {"tlb.page_size", PT_SIZE, F(tlb_page_size), "2MiB", 4096, 1ull << 30, "bytes",
     "largest page (GPUVM fragment) of device memory (hipMalloc, code objects, scratch); an allocation gets "
     "the largest power of two up to this that its size and alignment allow (Linux amdgpu on GFX8: 2 MiB "
     "fragments, gmc_v8_0.c amdgpu_vm_adjust_size(adev, 64, 9, 1, 40); MGPUSim: 4 KiB pages)"},
    {"tlb.host_page_size", PT_SIZE, F(tlb_host_page_size), "4KiB", 4096, 1ull << 30, "bytes",
     "page size of host memory (hipHostMalloc; x86-64 base pages: 4 KiB)"},
    {"tlb.l1v_entries", PT_UINT, F(tlb_l1v_entries), "64", 1, 1 << 20, "entries",
     "L1 vector TLB entries per CU (MGPUSim R9 Nano: 64, 1 set x 64 ways)"},
    {"tlb.l1v_ways", PT_UINT, F(tlb_l1v_ways), "64", 1, 1 << 20, "ways", "L1 vector TLB associativity (fully associative)"},
    {"tlb.l1v_mshrs", PT_UINT, F(tlb_l1v_mshrs), "4", 1, 4096, "entries",
     "L1 vector TLB misses (pages) outstanding at once (estimate)"},
    {"tlb.l1v_latency", PT_LAT, F(tlb_l1v_latency), "1cycles", 0, 0, "cycles or time",
     "L1 vector TLB lookup latency, added to every vector memory line request (MGPUSim R9 Nano: 1 cycle)"},
    {"tlb.l1s_entries", PT_UINT, F(tlb_l1s_entries), "64", 1, 1 << 20, "entries",
     "L1 scalar/instruction TLB entries per shader array (MGPUSim R9 Nano: 64, 1 set x 64 ways)"},
    {"tlb.l1s_ways", PT_UINT, F(tlb_l1s_ways), "64", 1, 1 << 20, "ways", "L1 scalar/instruction TLB associativity"},
    {"tlb.l1s_mshrs", PT_UINT, F(tlb_l1s_mshrs), "4", 1, 4096, "entries",
     "L1 scalar/instruction TLB misses outstanding at once (estimate, as tlb.l1v_mshrs)"},
    {"tlb.l1s_latency", PT_LAT, F(tlb_l1s_latency), "1cycles", 0, 0, "cycles or time",
     "L1 scalar/instruction TLB lookup latency, added to scalar loads and L1I misses (MGPUSim R9 Nano: 1 cycle)"},
    {"tlb.l2_entries", PT_UINT, F(tlb_l2_entries), "4096", 1, 1 << 24, "entries",
     "L2 TLB entries per GPU (MGPUSim R9 Nano: 64 sets x 64 ways)"},
    {"tlb.l2_ways", PT_UINT, F(tlb_l2_ways), "64", 1, 1 << 20, "ways", "L2 TLB associativity (MGPUSim R9 Nano: 64)"},
    {"tlb.l2_mshrs", PT_UINT, F(tlb_l2_mshrs), "64", 1, 65536, "entries",
     "L2 TLB misses (pages) outstanding at once (estimate)"},
    {"tlb.l2_latency", PT_LAT, F(tlb_l2_latency), "3cycles", 0, 0, "cycles or time",
     "L2 TLB lookup latency; one lookup per cycle (MGPUSim R9 Nano: 3 cycles); reached over the NoC (noc.latency "
     "each way)"},
    {"tlb.walkers", PT_UINT, F(tlb_walkers), "16", 1, 4096, "walks",
     "page-table walks in flight at once per GPU (MGPUSim's MMU: 16 requests in flight)"},
    {"tlb.levels", PT_UINT, F(tlb_levels), "2", 1, 4, "levels",
     "page-table levels walked from the root (GFX8 GPUVM: page directory + page table, 9-bit blocks; Linux "
     "amdgpu gmc_v8_0.c, amdgpu_vm_adjust_size(adev, 64, 9, 1, 40))"},
    {"tlb.pwc_entries", PT_UINT, F(tlb_pwc_entries), "16", 0, 65536, "entries",
     "page-walk cache per GPU: upper-level entries held, so a walk starts below them (Power et al., HPCA 2014; "
     "size an estimate)"},
    {"tlb.walk_level_latency", PT_LAT, F(tlb_walk_level_latency), "2cycles", 0, 0, "cycles or time",
     "walker's own work per level besides reading the entry through the L2 (estimate)"},
    {"tlb.iommu_latency", PT_LAT, F(tlb_iommu_latency), "500ns", 0, 0, "cycles or time",
     "added to the walk of a host page (hipHostMalloc) and, in D-MGPU, of a peer GPU's page: the "
     "IOMMU's translation (estimate; Vesely et al., ISPASS 2016: a GPU TLB miss serviced through the IOMMU is "
     "an order of magnitude slower than a CPU's)"},
    {"dram.channels", PT_UINT, F(dram_channels), "32", 1, 1024, "count",
     "DRAM channels per GPU, each with its own controller, banks and data bus (R9 Nano: 4 HBM1 stacks x 8 "
     "channels)"},
    {"dram.latency", PT_LAT, F(dram_latency), "288ns", 0, 0, "cycles (GPU) or time",
     "controller + PHY + fabric latency added to every DRAM access on top of the bank timing (calibrated: "
     "the R9 Nano dram_read probe, 461.1 ns per L2 miss, ../shared/hw-r9nano)"},
    {"dram.bandwidth", PT_BW, F(dram_bandwidth), "16GB/s", 0, 0, "B/s or B/cycle (GPU)",
     "data bus per DRAM channel; a line's burst takes line / bandwidth (HBM1: 128 bits x 1 Gbps = 16 GB/s; "
     "32 x 16 = 512 GB/s, R9 Nano datasheet)"},
    {"dram.interleave", PT_SIZE, F(dram_interleave), "4KiB", 64, 1ull << 30, "bytes",
     "address interleaving across DRAM channels (MGSim Sec. IV-C: 4 KB)"},
    {"dram.freq", PT_FREQ, F(dram_freq), "500MHz", 1000000, 4000000000ull, "Hz",
     "DRAM command clock; DRAM timings given in cycles count this clock (R9 Nano HBM1: 500 MHz DDR, 1 Gbps/pin)"},
    {"dram.banks", PT_UINT, F(dram_banks), "8", 1, 64, "count",
     "banks per DRAM channel (JESD235 HBM1, 1 Gb channel: 8 banks)"},
    {"dram.row_size", PT_SIZE, F(dram_row_size), "2KiB", 64, 1ull << 30, "bytes",
     "row (page) size per bank (JESD235 HBM1: 2 KB page)"},
    {"dram.bank_interleave", PT_SIZE, F(dram_bank_interleave), "2KiB", 64, 1ull << 30, "bytes",
     "within a channel, consecutive blocks of this size go to consecutive banks; the row is the rest "
     "(= row_size: row:bank:column mapping)"},
    {"dram.page_policy", PT_STR, F(dram_page_policy), "open", 0, 0, "open, closed",
     "open: rows stay open until a conflict or refresh (FR-FCFS favours row hits); closed: auto-precharge "
     "after every access"},
    {"dram.queue_depth", PT_UINT, F(dram_queue_depth), "32", 1, 65536, "entries",
     "requests per channel visible to the FR-FCFS scheduler; further requests wait in order"},
    {"dram.tCL", PT_LAT, F(dram_tCL), "14ns", 0, 0, "time or DRAM cycles",
     "read command to first data (JESD235 HBM1 at 500 MHz: CL = 7 tCK)"},
    {"dram.tCWL", PT_LAT, F(dram_tCWL), "8ns", 0, 0, "time or DRAM cycles",
     "write command to first data (HBM1: WL = 4 tCK)"},
    {"dram.tRCD", PT_LAT, F(dram_tRCD), "14ns", 0, 0, "time or DRAM cycles",
     "activate to read/write (HBM1: 7 tCK)"},
    {"dram.tRP", PT_LAT, F(dram_tRP), "14ns", 0, 0, "time or DRAM cycles", "precharge to activate (HBM1: 7 tCK)"},
    {"dram.tRAS", PT_LAT, F(dram_tRAS), "34ns", 0, 0, "time or DRAM cycles",
     "activate to precharge, same bank (HBM1: 17 tCK; tRC = tRAS + tRP = 48 ns)"},
    {"dram.tCCD", PT_LAT, F(dram_tCCD), "4ns", 0, 0, "time or DRAM cycles",
     "column command to column command (HBM1 BL4: 2 tCK); the data burst is line / dram.bandwidth"},
    {"dram.tRRD", PT_LAT, F(dram_tRRD), "8ns", 0, 0, "time or DRAM cycles",
     "activate to activate, different banks (HBM1: 4 tCK)"},
    {"dram.tFAW", PT_LAT, F(dram_tFAW), "40ns", 0, 0, "time or DRAM cycles",
     "window in which at most four activates issue (HBM1: 20 tCK)"},
    {"dram.tWR", PT_LAT, F(dram_tWR), "16ns", 0, 0, "time or DRAM cycles",
     "end of write data to precharge (HBM1: 8 tCK)"},
    {"dram.tRTP", PT_LAT, F(dram_tRTP), "14ns", 0, 0, "time or DRAM cycles",
     "read command to precharge (HBM1: 7 tCK)"},
    {"dram.tREFI", PT_LAT, F(dram_tREFI), "3900ns", 0, 0, "time or DRAM cycles",
     "refresh interval per channel (JESD235: 3.9 us); 0 = no refresh"},
    {"dram.tRFC", PT_LAT, F(dram_tRFC), "160ns", 0, 0, "time or DRAM cycles",
     "refresh cycle time: the channel is blocked and all rows close (JESD235 HBM1: 160 ns)"},
    {"um.policy", PT_STR, F(um_policy), "home", 0, 0, "home, interleave, first-touch, on-fault, access-counter",
     "placement of unified memory (hipMallocManaged, trace 2.1; in U-MGPU all device memory) across GPUs: home = "
     "where it was allocated (U-MGPU: interleaved); interleave = pages spread by mem.gpu_interleave; first-touch = "
     "the first GPU to use a page takes it (a fault and a move); on-fault = every GPU that uses a page another "
     "holds faults and takes it; access-counter = remote accesses allowed, a page moves after "
     "um.counter_threshold of them from one GPU (Griffin, HPCA 2020; NVIDIA Volta access counters). The moving "
     "policies need tlb.enable = 1 and replay as one partition"},
    {"um.replicate", PT_UINT, F(um_replicate), "0", 0, 1, "0 or 1",
     "unified memory, with first-touch, on-fault or access-counter: 1 = a GPU that reads a page another holds gets "
     "a read-only copy where the policy would move the page; a write drops every copy (a protection fault and a "
     "shootdown), as CUDA's read-mostly pages (cudaMemAdviseSetReadMostly) and Griffin's replication option"},
    {"um.page_size", PT_SIZE, F(um_page_size), "4KiB", 64, 1ull << 30, "bytes",
     "unified memory: the unit of placement, faults and moves (Griffin and MGPUSim: 4 KB pages)"},
    {"um.fault_latency", PT_LAT, F(um_fault_latency), "20us", 0, 0, "cycles or time",
     "unified memory: a GPU page fault's service by the host driver before the page moves (estimate: far faults "
     "take tens of microseconds, Zheng et al., HPCA 2016)"},
    {"um.shootdown_latency", PT_LAT, F(um_shootdown_latency), "2us", 0, 0, "cycles or time",
     "unified memory: invalidating the other GPUs' TLB entries of a page that moves (estimate: CPU TLB shootdowns "
     "cost a few microseconds, Amit, USENIX ATC 2017)"},
    {"um.counter_threshold", PT_UINT, F(um_counter_threshold), "32", 1, 65535, "accesses",
     "access-counter: remote line requests from one GPU to one page that move the page to it (estimate: half the "
     "64-byte lines of a 4 KiB page; NVIDIA's driver counts per 2 MiB region with a default threshold of 256, "
     "open-gpu-kernel-modules uvm_gpu_access_counters.c)"},
    {"mem.gpu_interleave", PT_SIZE, F(gpu_interleave), "4KiB", 64, 1ull << 30, "bytes",
     "unified topology: address interleaving across GPUs (MGSim Sec. IV-C: 4 KB)"},
    {"link.latency", PT_LAT, F(link_latency), "500ns", 0, 0, "cycles or time", "inter-GPU (PCIe/RDMA) one-way latency"},
    {"link.bandwidth", PT_BW, F(link_bandwidth), "16GB/s", 0, 0, "B/s or B/cycle",
     "inter-GPU bus bandwidth shared by all GPUs (MGSim Sec. IV-C: PCIe 16 GB/s)"},
    {"interconnect.kind", PT_STR, F(net_kind), "pcie-bus", 0, 0, "pcie-bus, pcie-tree, p2p-ring, p2p-all",
     "inter-GPU network: one shared bus (link.*, MGSim Sec. IV-C); a PCIe switch tree (GPU x16 links to "
     "switches, switches to the root complex; interconnect.pcie_*); point-to-point links in a ring "
     "(shorter way round) or all-to-all (interconnect.p2p_*)"},
    {"interconnect.gpus_per_switch", PT_UINT, F(net_gpus_per_switch), "2", 1, 64, "count",
     "pcie-tree: GPUs below each PCIe switch"},
    {"interconnect.pcie_bandwidth", PT_BW, F(pcie_bandwidth), "31500MB/s", 0, 0, "B/s or B/cycle",
     "pcie-tree: bandwidth of each link per direction (PCIe 4.0 x16: 16 GT/s x 16 lanes x 128/130 / 8 = 31.5 GB/s)"},
    {"interconnect.pcie_hop_latency", PT_LAT, F(pcie_hop_latency), "150ns", 0, 0, "cycles or time",
     "pcie-tree: latency of each link crossed (wire + switch port-to-port)"},
    {"interconnect.p2p_bandwidth", PT_BW, F(p2p_bandwidth), "25GB/s", 0, 0, "B/s or B/cycle",
     "p2p-ring/p2p-all: bandwidth of each point-to-point link per direction (NVLink 2.0: 25 GB/s)"},
    {"interconnect.p2p_latency", PT_LAT, F(p2p_latency), "100ns", 0, 0, "cycles or time",
     "p2p-ring/p2p-all: latency of each link crossed"},
    {"host.link_bandwidth", PT_BW, F(host_link_bandwidth), "16GB/s", 0, 0, "B/s or B/cycle",
     "host-GPU link per GPU and direction (R9 Nano: PCIe 3.0 x16, 8 GT/s x 16 x 128/130 / 8 = 15.75 GB/s)"},
    {"host.link_latency", PT_LAT, F(host_link_latency), "1us", 0, 0, "cycles or time",
     "host-GPU one-way transfer latency (DMA start to data landed)"},
    {"host.copy_overhead", PT_LAT, F(host_copy_overhead), "10us", 0, 0, "cycles or time",
     "runtime/driver cost of each host-issued copy or memset before its data moves"},
    {"host.launch_overhead", PT_LAT, F(host_launch_overhead), "5us", 0, 0, "cycles or time",
     "runtime cost of a kernel launch: the host is busy this long before the kernel is queued"},
    {"host.sdma_engines", PT_UINT, F(host_sdma_engines), "2", 1, 64, "count",
     "copy engines (SDMA) per GPU: each host copy and peer copy holds one until its transfer ends "
     "(Fiji: 2, Linux amdgpu sdma_v3_0)"},
    {"host.gap_percent", PT_UINT, F(host_gap_percent), "0", 0, 1000000, "percent",
     "host time between HIP calls, as recorded (trace 1.4): 0 = the host issues its next call at once, "
     "100 = as the recording measured it, 50 = a host twice as fast"},
    {"sample.enable", PT_UINT, F(sample_enable), "0", 0, 1, "0 or 1",
     "sampled replay (mgpu-replay --sample): each kernel runs in detail until its rate is stable, the rest of "
     "its workgroups is fast-forwarded (stores applied, time predicted with an error bound); one thread replays "
     "(all --threads when one GPU is cut into partitions: sim.gpu_partitions, or with a partition per GPU: u-mgpu, "
     "d-mgpu), the others of --threads decode and apply (by L2 bank) the fast-forwarded workgroups"},
    {"sample.tolerance", PT_UINT, F(sample_tolerance), "2", 1, 50, "percent",
     "sampled replay: a kernel's rate is stable when its last sample.stable windows are within this much "
     "of their mean (model choice)"},
    {"sample.window", PT_UINT, F(sample_window), "1", 1, 1000, "rounds",
     "sampled replay: length of a rate-measurement window, in rounds (as many workgroups done as the GPU "
     "held at once)"},
    {"sample.warmup", PT_UINT, F(sample_warmup), "1", 0, 1000, "windows",
     "sampled replay: windows discarded before the rate counts (cold caches)"},
    {"sample.period", PT_UINT, F(sample_period), "8", 0, 1000000, "rounds",
     "sampled replay: rounds of workgroups fast-forwarded at a time before the rate is measured again, times "
     "the windows per group that decided (0 = the whole rest of the kernel at once)"},
    {"sample.period_growth", PT_UINT, F(sample_period_growth), "2", 1, 16, "factor",
     "sampled replay: the next stretch is this many times longer (up to 1,000,000 rounds) when the rate measured "
     "after a stretch agrees within sample.tolerance with the one that predicted it, else as long as the first; "
     "1 = every stretch as long as the first"},
    {"sample.kernels", PT_UINT, F(sample_kernels), "2", 0, 8, "launches",
     "sampled replay, kernel level: launches alike (same kernel, grid, workgroup size) replayed in full before "
     "later ones are fast-forwarded whole; 0 = off"},
    {"sample.kernels_stream", PT_UINT, F(sample_kernels_stream), "4", 0, 1000000, "times the L2",
     "sampled replay, kernel level: the first launch of a group decides it alone (not sample.kernels of them) "
     "when it moved at least this many times its GPUs' L2 capacity through DRAM (it streams: what a launch finds "
     "in the L2 at its start is not what it reads), its launches fast-forwarded whole with a bound widened by "
     "the L2 capacity's DRAM time, as is the bound of launches decided by one launch that streams with "
     "sample.kernels = 1; 0 = off (model choice)"},
    {"sample.alike_vectors", PT_UINT, F(sample_alike_vectors), "5", 0, 50, "percent",
     "sampled replay, kernel level: launches of the same kernel, grid and workgroup size on one device whose "
     "arguments differ (a step number, the stages of a sort) are alike too when the vectors the trace gives of "
     "their first, middle and last workgroups (instructions per wave; vector, store, LDS and scalar memory ops "
     "per instruction; lanes and 64-byte lines per vector op; lines reused inside a wave; the distances between "
     "a work-item's successive vector accesses, in lines by powers of two) agree within this much; such a group "
     "decides on 3 launches (or sample.kernels if more), its bound is three times its spread or "
     "sample.tolerance, and the 4th, 8th, ... up to every 64th launch after a decision is replayed in detail "
     "again; 0 = only launches with the same arguments are alike; off with a dispatcher per GPU in partitions "
     "(d-mgpu) (model choice)"},
    {"sample.tail", PT_UINT, F(sample_tail), "1", 0, 1000, "rounds",
     "sampled replay, workgroup level: the last rounds of a kernel's workgroups run in detail after its last "
     "stretch, handed out as the workgroups in flight end (the stretch applies when those are done): the kernel's "
     "ramp-down and what its last workgroups leave in the L2 for the end-of-kernel write-back are a full replay's "
     "(a fast-forward leaves a workgroup's loads and stores side by side, where in detail a round's stores come "
     "after its loads); 0 = the last stretch reaches the kernel's end (model choice)"},
    {"sample.max_bound", PT_UINT, F(sample_max_bound), "20", 0, 1000, "percent",
     "sampled replay: no skip is taken that would give its kernel a bound wider than this share of the kernel's "
     "time: a launch fast-forwarded whole; a stretch of workgroups, by its share of the kernel's workgroups; the "
     "wave level, decided once for all of a kernel's waves when half of those in flight have measured (the widest "
     "measurement's halves' difference times the share of the kernel its skips cover); work refused so runs in "
     "detail (a kernel that skipped nothing says why: bound too wide); 0 = no limit (model choice: "
     "docs/timing-model.md)"},
    {"sample.stable", PT_UINT, F(sample_stable), "3", 2, 32, "windows",
     "sampled replay: windows whose rates must agree before the rest of a kernel is fast-forwarded"},
    {"sample.alike_groups", PT_UINT, F(sample_alike_groups), "1", 0, 32, "groups of windows",
     "sampled replay, workgroup level: a launch whose launches alike (sample.kernels) already had a stretch "
     "fast-forwarded switches once this many groups of windows after its warm-up agree within sample.tolerance "
     "with the rate that decided theirs, instead of sample.stable groups agreeing with each other; 0 = off (model "
     "choice)"},
    {"sample.waves", PT_UINT, F(sample_waves), "1", 0, 1, "0 or 1",
     "sampled replay, wave level: once every workgroup of a kernel has started, a wave that measured its time "
     "per instruction skips ahead (stores applied, the time predicted) to its last sample.wave_tail percent; "
     "for kernels of few rounds, where the workgroup level cannot act"},
    {"sample.wave_warmup", PT_UINT, F(sample_wave_warmup), "5", 0, 50, "percent",
     "sampled replay, wave level: share of a wave's recorded instructions run before its rate counts (model choice)"},
    {"sample.wave_measure", PT_UINT, F(sample_wave_measure), "20", 1, 50, "percent",
     "sampled replay, wave level: share of a wave's recorded instructions over which its time per instruction "
     "is measured, in two halves whose difference is its error (model choice)"},
    {"sample.wave_tail", PT_UINT, F(sample_wave_tail), "2", 0, 50, "percent",
     "sampled replay, wave level: share of a wave's recorded instructions at its end always run in detail"},
    {"sample.wave_min", PT_UINT, F(sample_wave_min), "256", 16, 100000000, "instructions",
     "sampled replay, wave level: waves with fewer recorded instructions run in full"},
    {"sim.watchdog", PT_LAT, F(watchdog), "10ms", 0, 0, "cycles or time",
     "stop with a state dump when simulated time advances this long without progress (0 = off)"},
    {"sim.gpu_partitions", PT_UINT, F(gpu_partitions), "1", 1, 65, "partitions",
     "parallel replay inside a GPU: 1 = each GPU is one partition (no cut); N >= 2 = the GPU's memory side (L2 "
     "banks, DRAM, RDMA engine, dispatcher) is one partition and its shader arrays (CUs with their L1V, L1S and "
     "L1I) are N - 1 more, meeting over the NoC links (lookahead: noc.latency and dispatcher.latency, both > 0). "
     "A model choice: messages that reach a port at the same picosecond from different partitions are ordered by "
     "partition, so results differ slightly from N = 1 (deterministic, the same for every --threads)"},
    {"sim.dram_partition", PT_UINT, F(dram_partition), "0", 0, 1, "0 or 1",
     "parallel replay inside a GPU, with sim.gpu_partitions >= 2: 1 = the GPU's DRAM channels are one more "
     "partition, apart from its L2 banks. The links between them take d = the lookahead rounded up to whole DRAM "
     "clocks each way, and dram.latency is shortened by 2d with the refresh schedule d later, so each channel sees "
     "every request d later and each response reaches the L2 when it did without the cut (same-picosecond ties "
     "aside; gpu[g].dram[c].access_ps is 2d lower). Needs dram.latency >= 2d"},
    {"sim.l2_partitions", PT_UINT, F(l2_partitions), "0", 0, 64, "partitions",
     "parallel replay inside a GPU, with sim.gpu_partitions >= 2 and sim.dram_partition = 1: S >= 1 = the GPU's "
     "L2 banks leave its memory side for S partitions of their own (bank b in partition floor(b S / l2.banks)), "
     "meeting the shader arrays over the NoC links and the DRAM over its links. Every link into which banks of "
     "several partitions send (the L1s' fills, the DRAM channels' inputs, the dispatcher's and RDMA engine's "
     "inputs) gets an input per sending partition with the latency into an arbiter with the bandwidth, and the "
     "kernel-end flush reaches the banks over the NoC (noc.latency later). A model variant of its own "
     "(same-picosecond arrivals ordered by partition; deterministic, the same for every --threads). 0 = the banks "
     "stay on the memory side"},
    {"sim.await_max_polls", PT_UINT, F(await_max_polls), "4194304", 1, 1000000000, "count",
     "iterations one wave may poll in one await (trace 1.2) before the replay gives the wait up as one that "
     "never ends here (the wave goes on as recorded; `check.await_give_ups` counts a difference), e.g. a "
     "configuration with too few CUs for the workgroups a wait needs (an estimate: about 10^9 cycles of "
     "polling); retried single iterations give up after at most 16384"},
    {"sim.cas_hold_max", PT_LAT, F(cas_hold_max), "10us", 0, 0, "cycles or time",
     "a compare-and-swap that succeeded in the recording (it returned its compare value) is held at the L2 "
     "until memory holds that value, so chains of them (CAS-loop counters and sums) apply in the recorded "
     "order and their results check clean; once its line has seen no atomic or write for this long it is "
     "performed anyway (`l2[b].cas_give_ups`; an estimate: several CAS-loop round trips); 0ns = never held "
     "(compare-and-swaps in the model's order)"},
    {"check.print", PT_UINT, F(check_print), "10", 0, 1000000, "count", "data mismatches printed in full"},
    {"debug.skip_l2_flush", PT_UINT, F(debug_skip_l2_flush), "0", 0, 1, "0 or 1",
     "test hook (injected model bug): 1 = the L2 write-back flush at kernel end and before a device-to-host "
     "copy writes nothing back, so the data check must report D2H mismatches; never set it for results"},
    {"debug.skip_ds2_write", PT_UINT, F(debug_skip_ds2_write), "0", 0, 1, "0 or 1",
     "test hook (injected model bug): 1 = the functional LDS drops the second element of every "
     "ds_write2/ds_write2st64, so the data check must report LDS load mismatches lane by lane; never set it "
     "for results"},
};
#define N_PARAMS (sizeof params / sizeof params[0])

/* ---- unit parsers --------------------------------------------------------- */

/* Split "  16 KiB " into number and suffix (spaces allowed). */
static int split_num(const char *s, double *num, uint64_t *inum, int *is_int, char *suf, size_t suflen)
{
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s) && *s != '.')
        return -1;
    char *end;
    errno = 0;
    unsigned long long iv = strtoull(s, &end, 0);
    *is_int = 1;
    if (*end == '.' || *end == 'e' || *end == 'E' || errno) {
        *num = strtod(s, &end);
        *is_int = 0;
    } else {
        *num = (double)iv;
    }
    *inum = iv;
    while (isspace((unsigned char)*end))
        end++;
    size_t n = strlen(end);
    while (n && isspace((unsigned char)end[n - 1]))
        n--;
    if (n >= suflen)
        return -1;
    memcpy(suf, end, n);
    suf[n] = 0;
    return 0;
}

static int scale(double num, uint64_t inum, int is_int, uint64_t mul, uint64_t div, uint64_t *out)
{
    if (is_int && div == 1) {
        if (mul && inum > UINT64_MAX / mul)
            return -1;
        *out = inum * mul;
        return 0;
    }
    double v = num * (double)mul / (double)div;
    if (v < 0 || v > 1.8e19)
        return -1;
    *out = (uint64_t)(v + 0.5);
    return 0;
}

int rp_parse_size(const char *s, uint64_t *out)
{
    double n; uint64_t i; int ii; char suf[16];
    if (split_num(s, &n, &i, &ii, suf, sizeof suf))
        return -1;
    /* Sizes are binary: K, KB and KiB all mean 1024 (cache sizes are written
     * "16KB" in datasheets and mean 16384). */
    static const struct { const char *s; uint64_t m; } u[] = {
        {"", 1}, {"B", 1}, {"K", 1024}, {"KB", 1024}, {"KiB", 1024}, {"M", 1 << 20},
        {"MB", 1 << 20}, {"MiB", 1 << 20}, {"G", 1ull << 30}, {"GB", 1ull << 30},
        {"GiB", 1ull << 30}, {"T", 1ull << 40}, {"TB", 1ull << 40}, {"TiB", 1ull << 40}};
    for (size_t k = 0; k < sizeof u / sizeof u[0]; k++)
        if (!strcasecmp(suf, u[k].s))
            return scale(n, i, ii, u[k].m, 1, out);
    return -1;
}

int rp_parse_freq(const char *s, uint64_t *out)
{
    double n; uint64_t i; int ii; char suf[16];
    if (split_num(s, &n, &i, &ii, suf, sizeof suf))
        return -1;
    static const struct { const char *s; uint64_t m; } u[] = {
        {"Hz", 1}, {"kHz", 1000}, {"MHz", 1000000}, {"GHz", 1000000000}};
    for (size_t k = 0; k < sizeof u / sizeof u[0]; k++)
        if (!strcasecmp(suf, u[k].s))
            return scale(n, i, ii, u[k].m, 1, out) || *out == 0 ? -1 : 0;
    return -1;
}

int rp_parse_lat(const char *s, rp_lat *out)
{
    double n; uint64_t i; int ii; char suf[16];
    if (split_num(s, &n, &i, &ii, suf, sizeof suf))
        return -1;
    if (!strcasecmp(suf, "cycles") || !strcasecmp(suf, "cycle") || !strcasecmp(suf, "cy")) {
        if (!ii)
            return -1;
        out->v = i;
        out->cycles = 1;
        return 0;
    }
    static const struct { const char *s; uint64_t m; } u[] = {
        {"ps", 1}, {"ns", 1000}, {"us", 1000000}, {"ms", 1000000000}, {"s", 1000000000000ull}};
    for (size_t k = 0; k < sizeof u / sizeof u[0]; k++)
        if (!strcasecmp(suf, u[k].s)) {
            out->cycles = 0;
            return scale(n, i, ii, u[k].m, 1, &out->v);
        }
    return -1;
}

int rp_parse_bw(const char *s, rp_bw *out)
{
    double n; uint64_t i; int ii; char suf[24];
    if (split_num(s, &n, &i, &ii, suf, sizeof suf))
        return -1;
    if (!strcasecmp(suf, "B/cycle") || !strcasecmp(suf, "B/cy")) {
        if (!ii)
            return -1;
        out->v = i;
        out->per_cycle = 1;
        return 0;
    }
    /* Bandwidths are decimal, as in datasheets: 16 GB/s = 16e9 B/s. */
    static const struct { const char *s; uint64_t m; } u[] = {
        {"B/s", 1}, {"KB/s", 1000}, {"MB/s", 1000000}, {"GB/s", 1000000000},
        {"TB/s", 1000000000000ull}, {"KiB/s", 1024}, {"MiB/s", 1 << 20}, {"GiB/s", 1ull << 30}};
    for (size_t k = 0; k < sizeof u / sizeof u[0]; k++)
        if (!strcasecmp(suf, u[k].s)) {
            out->per_cycle = 0;
            return scale(n, i, ii, u[k].m, 1, &out->v);
        }
    return -1;
}

/* ---- table access --------------------------------------------------------- */

static const char *topo_names[] = {"single", "unified", "discrete"};

static unsigned edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 99;
    unsigned d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (unsigned)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            unsigned c = d[i - 1][j - 1] + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            if (d[i - 1][j] + 1 < c)
                c = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < c)
                c = d[i][j - 1] + 1;
            d[i][j] = c;
        }
    return d[la][lb];
}

static const param *find_param(const char *key)
{
    for (size_t i = 0; i < N_PARAMS; i++)
        if (!strcmp(params[i].name, key))
            return &params[i];
    return NULL;
}

static const char *suggest(const char *key)
{
    const char *best = NULL;
    unsigned bd = 99;
    for (size_t i = 0; i < N_PARAMS; i++) {
        unsigned d = edit_distance(key, params[i].name);
        /* A key whose last component matches is a good suggestion too. */
        const char *dot = strrchr(params[i].name, '.'), *kdot = strrchr(key, '.');
        if (dot && kdot && !strcmp(dot, kdot) && d > 2)
            d = 3;
        if (d < bd) {
            bd = d;
            best = params[i].name;
        }
    }
    return bd <= 4 ? best : NULL;
}

static int set_param(rp_config *c, const param *p, const char *value, const char *origin,
                     char *err, size_t errlen)
{
    char *base = (char *)c + p->off;
    uint64_t v = 0;
    int bad = 0;
    switch (p->type) {
    case PT_UINT: {
        char *end;
        while (isspace((unsigned char)*value))
            value++;
        errno = 0;
        v = strtoull(value, &end, 0);
        while (isspace((unsigned char)*end))
            end++;
        bad = *value == 0 || *end != 0 || errno || *value == '-';
        break;
    }
    case PT_SIZE: bad = rp_parse_size(value, &v); break;
    case PT_FREQ: bad = rp_parse_freq(value, &v); break;
    case PT_LAT: {
        rp_lat l;
        if (rp_parse_lat(value, &l)) {
            snprintf(err, errlen, "%s: %s = '%s': expected a latency such as 100ns or 300cycles", origin,
                     p->name, value);
            return -1;
        }
        *(rp_lat *)base = l;
        return 0;
    }
    case PT_BW: {
        rp_bw b;
        if (rp_parse_bw(value, &b)) {
            snprintf(err, errlen, "%s: %s = '%s': expected a bandwidth such as 16GB/s or 64B/cycle", origin,
                     p->name, value);
            return -1;
        }
        *(rp_bw *)base = b;
        return 0;
    }
    case PT_TOPO:
        for (unsigned i = 0; i < 3; i++)
            if (!strcasecmp(value, topo_names[i])) {
                *(uint32_t *)base = i;
                return 0;
            }
        snprintf(err, errlen, "%s: %s = '%s': expected single, unified or discrete", origin, p->name, value);
        return -1;
    case PT_STR:
        snprintf(base, 64, "%s", value);
        return 0;
    }
    if (bad) {
        static const char *what[] = {"an unsigned integer", "a size such as 16KiB", "a frequency such as 1GHz"};
        snprintf(err, errlen, "%s: %s = '%s': expected %s", origin, p->name, value, what[p->type]);
        return -1;
    }
    if ((p->min || p->max) && (v < p->min || v > p->max)) {
        snprintf(err, errlen, "%s: %s = '%s' is out of range [%" PRIu64 ", %" PRIu64 "] %s", origin, p->name,
                 value, p->min, p->max, p->unit);
        return -1;
    }
    /* Fields are uint32_t or uint64_t: use the declared width. */
    switch (p->off) {
    case F(gpu_freq): case F(lds_size): case F(l1v_size): case F(l1s_size): case F(l2_size): case F(l1i_size):
    case F(l2_interleave): case F(dram_interleave): case F(gpu_interleave): case F(dram_freq):
    case F(tlb_page_size): case F(tlb_host_page_size): case F(um_page_size):
        *(uint64_t *)base = v;
        break;
    default:
        if (v > UINT32_MAX) {
            snprintf(err, errlen, "%s: %s = '%s' is too large", origin, p->name, value);
            return -1;
        }
        *(uint32_t *)base = (uint32_t)v;
    }
    return 0;
}

int rp_config_apply(rp_config *c, const char *key, const char *value, const char *origin,
                    char *err, size_t errlen)
{
    const param *p = find_param(key);
    if (!p) {
        const char *s = suggest(key);
        if (s)
            snprintf(err, errlen, "%s: unknown parameter '%s' (did you mean '%s'?)", origin, key, s);
        else
            snprintf(err, errlen, "%s: unknown parameter '%s' (see mgpu-replay --list-params)", origin, key);
        return -1;
    }
    return set_param(c, p, value, origin, err, errlen);
}

void rp_config_defaults(rp_config *c)
{
    char err[256];
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < N_PARAMS; i++)
        set_param(c, &params[i], params[i].def, "default", err, sizeof err);
}

int rp_config_set(rp_config *c, const char *kv, char *err, size_t errlen)
{
    const char *eq = strchr(kv, '=');
    if (!eq) {
        snprintf(err, errlen, "--set '%s': expected key=value", kv);
        return -1;
    }
    char key[128];
    size_t n = (size_t)(eq - kv);
    while (n && isspace((unsigned char)kv[n - 1]))
        n--;
    if (n >= sizeof key)
        n = sizeof key - 1;
    memcpy(key, kv, n);
    key[n] = 0;
    const char *val = eq + 1;
    while (isspace((unsigned char)*val))
        val++;
    return rp_config_apply(c, key, val, "--set", err, errlen);
}

struct ini_ctx {
    rp_config *c;
    const char *path;
    char *err;
    size_t errlen;
    int failed;
    int line;
    int n_keys;   /* entries applied so far (topo.base must come first) */
    int depth;    /* base-preset nesting */
    const char *preset_dir; /* where `base = NAME` finds presets not next to the file (NULL: none) */
};

static int load_file_depth(rp_config *c, const char *path, int depth, const char *preset_dir, char *err,
                           size_t errlen);

/* `[topo] base = NAME`: load preset NAME first (NAME.ini next to this file,
 * else in the installed presets' directory; or a path, relative to this
 * file's directory), so that a preset states only how it differs from its
 * base (m-sgpu, u-mgpu and d-mgpu are R9 Nanos). Must be the file's first
 * entry. */
static int load_base(struct ini_ctx *x, const char *value)
{
    if (x->n_keys) {
        snprintf(x->err, x->errlen, "%s: topo.base must be the first entry of the file", x->path);
        return -1;
    }
    if (x->depth >= 4) {
        snprintf(x->err, x->errlen, "%s: topo.base nested more than 4 deep (a cycle?)", x->path);
        return -1;
    }
    char path[1024];
    const char *slash = strrchr(x->path, '/');
    int dl = slash ? (int)(slash - x->path) + 1 : 0;
    const char *ext = strlen(value) > 4 && !strcmp(value + strlen(value) - 4, ".ini") ? "" : ".ini";
    if (value[0] == '/')
        snprintf(path, sizeof path, "%s", value);
    else
        snprintf(path, sizeof path, "%.*s%s%s", dl, x->path, value, strchr(value, '/') ? "" : ext);
    if (!strchr(value, '/') && access(path, R_OK) != 0 && x->preset_dir) {
        char pre[1024];
        snprintf(pre, sizeof pre, "%s/%s%s", x->preset_dir, value, ext);
        if (access(pre, R_OK) == 0)
            snprintf(path, sizeof path, "%s", pre);
    }
    return load_file_depth(x->c, path, x->depth + 1, x->preset_dir, x->err, x->errlen);
}

static int ini_cb(void *user, const char *section, const char *name, const char *value)
{
    struct ini_ctx *x = user;
    if (x->failed)
        return 0;
    char key[160], origin[320];
    /* A dotted name is a full key even inside a section. */
    if (section && *section && !strchr(name, '.'))
        snprintf(key, sizeof key, "%s.%s", section, name);
    else
        snprintf(key, sizeof key, "%s", name);
    snprintf(origin, sizeof origin, "%s", x->path);
    if (!strcmp(key, "topo.base")) {
        if (load_base(x, value)) {
            x->failed = 1;
            return 0;
        }
        x->n_keys++;
        return 1;
    }
    if (rp_config_apply(x->c, key, value, origin, x->err, x->errlen)) {
        x->failed = 1;
        return 0;
    }
    x->n_keys++;
    return 1;
}

int rp_config_load_file(rp_config *c, const char *path, char *err, size_t errlen)
{
    return load_file_depth(c, path, 0, NULL, err, errlen);
}

int rp_config_load_file_ex(rp_config *c, const char *path, const char *preset_dir, char *err, size_t errlen)
{
    return load_file_depth(c, path, 0, preset_dir, err, errlen);
}

/* Configuration files are small text files: anything else (a device, a pipe,
 * a directory, a huge file) is refused before it is read. */
#define RP_CONFIG_MAX_BYTES (1u << 20)

static int load_file_depth(rp_config *c, const char *path, int depth, const char *preset_dir, char *err,
                           size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open configuration file: %s", path, strerror(errno));
        return -1;
    }
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size > RP_CONFIG_MAX_BYTES) {
        snprintf(err, errlen, "%s: not a configuration file (%s)", path,
                 !S_ISREG(sb.st_mode) ? "not a regular file" : "larger than 1 MiB");
        fclose(f);
        return -1;
    }
    struct ini_ctx x = {c, path, err, errlen, 0, 0, 0, depth, preset_dir};
    char sub[256];
    int r = ini_parse_file(f, ini_cb, &x);
    fclose(f);
    if (x.failed) {
        /* Prefix the line number libinih reports. */
        snprintf(sub, sizeof sub, "%s", err);
        size_t pl = strlen(path);
        if (!strncmp(sub, path, pl) && sub[pl] == ':')
            snprintf(err, errlen, "%s:%d:%s", path, r, sub + pl + 1);
        return -1;
    }
    if (r != 0) {
        snprintf(err, errlen, "%s:%d: INI syntax error", path, r);
        return -1;
    }
    return 0;
}

static int is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

int rp_config_validate(const rp_config *c, char *err, size_t errlen)
{
    uint64_t line = c->l1v_line;
    if (!is_pow2(line)) {
        snprintf(err, errlen, "config: l1v.line = %" PRIu64 " must be a power of two", line);
        return -1;
    }
    struct { const char *n; uint64_t size; uint32_t assoc; uint32_t div; } caches[] = {
        {"l1v", c->l1v_size, c->l1v_assoc, 1}, {"l1s", c->l1s_size, c->l1s_assoc, 1},
        {"l2", c->l2_size, c->l2_assoc, c->l2_banks}, {"l1i", c->l1i_size, c->l1i_assoc, 1}};
    for (int i = 0; i < 4; i++) {
        uint64_t per = caches[i].size / caches[i].div;
        if (per % (line * caches[i].assoc) || per / (line * caches[i].assoc) == 0) {
            snprintf(err, errlen,
                     "config: %s.size (%" PRIu64 " B per bank) is not a multiple of line x assoc (%" PRIu64 " B)",
                     caches[i].n, per, line * caches[i].assoc);
            return -1;
        }
    }
    if (c->gpu_partitions > 1 && (!c->noc_latency.v || !c->dispatch_latency.v || c->gpu_partitions - 1 > c->shader_arrays)) {
        snprintf(err, errlen,
                 "config: sim.gpu_partitions = %u needs noc.latency > 0, dispatcher.latency > 0 (the links the cut "
                 "crosses) and at most gpu.shader_arrays + 1 = %u partitions",
                 c->gpu_partitions, c->shader_arrays + 1);
        return -1;
    }
    if (c->l2_partitions && (c->gpu_partitions < 2 || !c->dram_partition || c->l2_partitions > c->l2_banks)) {
        snprintf(err, errlen,
                 "config: sim.l2_partitions = %u needs sim.gpu_partitions >= 2, sim.dram_partition = 1 and at most "
                 "l2.banks = %u partitions",
                 c->l2_partitions, c->l2_banks);
        return -1;
    }
    if (c->dram_partition && c->gpu_partitions < 2) {
        snprintf(err, errlen,
                 "config: sim.dram_partition = 1 needs sim.gpu_partitions >= 2 (the DRAM's links take the lookahead of "
                 "the cut inside the GPU)");
        return -1;
    }
    if (c->tlb_enable) {
        struct { const char *n; uint32_t e, w; } t[] = {{"l1v", c->tlb_l1v_entries, c->tlb_l1v_ways},
                                                        {"l1s", c->tlb_l1s_entries, c->tlb_l1s_ways},
                                                        {"l2", c->tlb_l2_entries, c->tlb_l2_ways}};
        for (int i = 0; i < 3; i++)
            if (t[i].e % t[i].w) {
                snprintf(err, errlen, "config: tlb.%s_entries = %u is not a multiple of tlb.%s_ways = %u", t[i].n,
                         t[i].e, t[i].n, t[i].w);
                return -1;
            }
        uint64_t ps[2] = {c->tlb_page_size, c->tlb_host_page_size};
        for (int i = 0; i < 2; i++)
            if (!is_pow2(ps[i])) {
                snprintf(err, errlen, "config: tlb.%s = %" PRIu64 " B: expected a power of two (4KiB, 64KiB, 2MiB)",
                         i ? "host_page_size" : "page_size", ps[i]);
                return -1;
            }
    }
    {
        int um = rp_um_policy_parse(c->um_policy);
        if (um < 0) {
            snprintf(err, errlen,
                     "config: um.policy = '%s': expected home, interleave, first-touch, on-fault or access-counter",
                     c->um_policy);
            return -1;
        }
        if (!is_pow2(c->um_page_size) || c->um_page_size < line) {
            snprintf(err, errlen, "config: um.page_size = %" PRIu64 " B: expected a power of two >= l1v.line",
                     c->um_page_size);
            return -1;
        }
        if (c->um_replicate && c->sample_enable) {
            snprintf(err, errlen, "config: um.replicate = 1 with sampled replay (sample.enable = 1): fast-forwarded "
                                  "stores would leave read-only copies stale; replay in full");
            return -1;
        }
        if (c->um_replicate && !rp_um_moves(um)) {
            snprintf(err, errlen,
                     "config: um.replicate = 1 needs um.policy first-touch, on-fault or access-counter (not %s)",
                     c->um_policy);
            return -1;
        }
        if (rp_um_moves(um) && (!c->tlb_enable || c->gpu_partitions > 1)) {
            snprintf(err, errlen,
                     "config: um.policy = %s moves pages in the page-table walker: it needs tlb.enable = 1 and "
                     "sim.gpu_partitions = 1",
                     c->um_policy);
            return -1;
        }
    }
    if (!is_pow2(c->fetch_bytes) || c->fetch_bytes > line || c->ibuffer_entries * 4ull < c->fetch_bytes) {
        snprintf(err, errlen,
                 "config: cu.fetch_bytes = %u must be a power of two <= l1v.line and <= 4 x cu.ibuffer_entries",
                 c->fetch_bytes);
        return -1;
    }
    if (c->l2_interleave < line || c->dram_interleave < line || c->gpu_interleave < line) {
        snprintf(err, errlen, "config: l2.interleave, dram.interleave and mem.gpu_interleave must be >= l1v.line");
        return -1;
    }
    if (strcmp(c->dispatch_policy, "fifo") && strcmp(c->dispatch_policy, "interleave")) {
        snprintf(err, errlen, "config: dispatcher.policy = '%s': expected fifo or interleave", c->dispatch_policy);
        return -1;
    }
    if (strcmp(c->dram_page_policy, "open") && strcmp(c->dram_page_policy, "closed")) {
        snprintf(err, errlen, "config: dram.page_policy = '%s': expected open or closed", c->dram_page_policy);
        return -1;
    }
    rp_clock dclk = rp_clock_make(c->dram_freq);
    if (c->dram_tREFI.v && rp_lat_ps(c->dram_tRFC, dclk) >= rp_lat_ps(c->dram_tREFI, dclk)) {
        snprintf(err, errlen, "config: dram.tRFC must be shorter than dram.tREFI (or dram.tREFI = 0: no refresh)");
        return -1;
    }
    if (c->topo_kind != RP_TOPO_SINGLE && c->gpus < 1) {
        snprintf(err, errlen, "config: topo.gpus must be >= 1");
        return -1;
    }
    return 0;
}

static void fmt_value(const rp_config *c, const param *p, char *buf, size_t n)
{
    const char *base = (const char *)c + p->off;
    switch (p->type) {
    case PT_STR: snprintf(buf, n, "%s", base); break;
    case PT_TOPO: snprintf(buf, n, "%s", topo_names[*(const uint32_t *)base % 3]); break;
    case PT_LAT: {
        const rp_lat *l = (const rp_lat *)base;
        if (l->cycles)
            snprintf(buf, n, "%" PRIu64 "cycles", l->v);
        else if (l->v % 1000 == 0)
            snprintf(buf, n, "%" PRIu64 "ns", l->v / 1000);
        else
            snprintf(buf, n, "%" PRIu64 "ps", l->v);
        break;
    }
    case PT_BW: {
        const rp_bw *b = (const rp_bw *)base;
        if (b->per_cycle)
            snprintf(buf, n, "%" PRIu64 "B/cycle", b->v);
        else
            snprintf(buf, n, "%" PRIu64 "B/s", b->v);
        break;
    }
    case PT_FREQ: snprintf(buf, n, "%" PRIu64 "Hz", *(const uint64_t *)base); break;
    case PT_SIZE:
    case PT_UINT:
        switch (p->off) {
        case F(gpu_freq): case F(lds_size): case F(l1v_size): case F(l1s_size): case F(l2_size): case F(l1i_size):
        case F(l2_interleave): case F(dram_interleave): case F(gpu_interleave):
        case F(tlb_page_size): case F(tlb_host_page_size): case F(um_page_size):
            snprintf(buf, n, "%" PRIu64 "%s", *(const uint64_t *)base, p->type == PT_SIZE ? "B" : "");
            break;
        default:
            snprintf(buf, n, "%" PRIu32 "%s", *(const uint32_t *)base, p->type == PT_SIZE ? "B" : "");
        }
        break;
    }
}

void rp_config_foreach(const rp_config *c, void (*fn)(void *arg, const char *key, const char *val), void *arg)
{
    char buf[96];
    for (size_t i = 0; i < N_PARAMS; i++) {
        fmt_value(c, &params[i], buf, sizeof buf);
        fn(arg, params[i].name, buf);
    }
}

void rp_config_list(FILE *f, int markdown)
{
    static const char *tn[] = {"uint", "size", "freq", "latency", "bandwidth", "enum", "string"};
    if (markdown) {
        fprintf(f, "| key | type | default | bounds | unit | description |\n|---|---|---|---|---|---|\n");
    }
    for (size_t i = 0; i < N_PARAMS; i++) {
        const param *p = &params[i];
        char b[64] = "-";
        if (p->min || p->max)
            snprintf(b, sizeof b, "%" PRIu64 "..%" PRIu64, p->min, p->max);
        if (markdown)
            fprintf(f, "| `%s` | %s | `%s` | %s | %s | %s |\n", p->name, tn[p->type], p->def, b, p->unit, p->desc);
        else
            fprintf(f, "%-22s %-9s %-10s %-22s %s\n    %s\n", p->name, tn[p->type], p->def, b, p->unit, p->desc);
    }
}
