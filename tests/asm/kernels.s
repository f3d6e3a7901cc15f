// GCN3 (gfx803) assembly kernels, one or more per encoding family, run by
// tests/emu/410-asm.c (assembled with llvm-mc -triple=amdgcn-amd-amdhsa -mcpu=gfx803
// -filetype=obj, linked with ld.lld -shared into a code object v4).
// Every kernel takes (u32 *in, u32 *out, u32 x) in its kernarg segment
// (s[0:1] = kernarg pointer, s2 = workgroup id x, v0 = work-item id x);
// 410-asm.c knows each kernel's expected output.
        .amdgcn_target "amdgcn-amd-amdhsa--gfx803"
        .text

// ---- k_scalar: SOP1, SOP2, SOPK, SOPC, SOPP, SMEM (loads and stores) ----
        .globl k_scalar
        .p2align 8
        .type k_scalar,@function
k_scalar:
        s_load_dwordx2 s[4:5], s[0:1], 0x8        // out
        s_load_dword s6, s[0:1], 0x10             // x
        s_waitcnt lgkmcnt(0)
        s_bcnt1_i32_b32 s8, s6                    // out[0]
        s_ff1_i32_b32 s9, s6                      // out[1]
        s_flbit_i32_b32 s10, s6                   // out[2]
        s_bfe_u32 s11, s6, 0x80004                // out[3] = (x >> 4) & 0xff
        s_store_dwordx4 s[8:11], s[4:5], 0x0
        s_brev_b32 s8, s6                         // out[4]
        s_mov_b32 s9, 0                           // out[5] = sum 0..9 by a loop
        s_mov_b32 s12, 0
loop:
        s_add_u32 s9, s9, s12
        s_add_u32 s12, s12, 1
        s_cmp_lt_u32 s12, 10
        s_cbranch_scc1 loop
        s_movk_i32 s10, 0xfffe                    // -2
        s_addk_i32 s10, 0x64                      // 98
        s_mulk_i32 s10, 0x3                       // out[6] = 294
        s_cmp_gt_i32 s6, 0
        s_cselect_b32 s11, 1, 2                   // out[7]
        s_store_dwordx4 s[8:11], s[4:5], 0x10
        s_getpc_b64 s[14:15]
        s_getpc_b64 s[16:17]
        s_sub_u32 s8, s16, s14                    // out[8] = 4
        s_getpc_b64 s[18:19]
        s_add_u32 s18, s18, callee - .            // s_getpc gave the address of this s_add: + (callee - here)
        s_addc_u32 s19, s19, 0
        s_swappc_b64 s[30:31], s[18:19]
        s_mov_b32 s9, s20                         // out[9] = 7 (set by callee)
        s_memtime s[22:23]
        s_nop 0
        s_memtime s[24:25]
        s_waitcnt lgkmcnt(0)
        s_cmp_gt_u32 s24, s22
        s_cselect_b32 s10, 1, 0                   // out[10] = 1: s_memtime is monotonic
        s_getreg_b32 s11, hwreg(HW_REG_MODE)      // out[11] = 0x3c0
        s_store_dwordx4 s[8:11], s[4:5], 0x20
        s_mov_b64 s[8:9], -1
        s_and_saveexec_b64 s[10:11], s[8:9]       // exec unchanged (full), saved
        s_bcnt1_i32_b64 s8, s[10:11]              // out[12] = 64
        s_quadmask_b32 s9, 0x00f000f1             // out[13] = quads 0, 1, 5 non-zero = 0x23
        s_sext_i32_i8 s10, 0x80                   // out[14] = 0xffffff80
        s_abs_i32 s11, -5                         // out[15] = 5
        s_store_dwordx4 s[8:11], s[4:5], 0x30
        s_dcache_wb
        s_endpgm
callee:
        s_mov_b32 s20, 7
        s_setpc_b64 s[30:31]

// ---- k_vector: VOP1, VOP2, VOPC, VOP3 and FLAT, 4 waves of 64 ----
        .globl k_vector
        .p2align 8
        .type k_vector,@function
k_vector:
        s_load_dwordx4 s[4:7], s[0:1], 0x0        // in, out
        s_lshl_b32 s8, s2, 6
        v_add_u32_e32 v1, vcc, s8, v0             // gid
        v_lshlrev_b32_e32 v2, 2, v1
        s_waitcnt lgkmcnt(0)
        v_mov_b32_e32 v3, s5
        v_add_u32_e32 v2, vcc, s4, v2
        v_addc_u32_e32 v3, vcc, 0, v3, vcc
        flat_load_dword v4, v[2:3]                // a = in[gid]
        s_waitcnt vmcnt(0) lgkmcnt(0)
        v_mad_u32_u24 v10, v4, 5, 7               // o0 = a*5 + 7
        v_cvt_f32_u32_e32 v5, v4
        v_mul_f32_e32 v5, 0.5, v5
        v_cvt_u32_f32_e32 v11, v5                 // o1 = a / 2 (trunc)
        v_cmp_gt_u32_e32 vcc, 0x64, v4            // 100 > a
        v_mov_b32_e32 v9, 0x64
        v_cndmask_b32_e32 v12, v4, v9, vcc        // o2 = a < 100 ? 100 : a
        v_xor_b32_e32 v6, 0xff, v4
        v_lshlrev_b32_e32 v6, 3, v6
        v_bfe_u32 v13, v6, 4, 8                   // o3 = ((a ^ 0xff) << 3 >> 4) & 0xff
        v_lshlrev_b32_e32 v7, 4, v1
        v_mov_b32_e32 v8, s7
        v_add_u32_e32 v7, vcc, s6, v7
        v_addc_u32_e32 v8, vcc, 0, v8, vcc
        flat_store_dwordx4 v[7:8], v[10:13]
        s_endpgm

// ---- k_lds: DS (write/read/read2/atomic/bpermute/swizzle), 2 waves, s_barrier ----
        .globl k_lds
        .p2align 8
        .type k_lds,@function
k_lds:
        s_load_dwordx2 s[4:5], s[0:1], 0x8
        s_mov_b32 m0, -1
        v_lshlrev_b32_e32 v1, 2, v0               // tid*4
        v_lshlrev_b32_e32 v2, 1, v0               // tid*2
        ds_write_b32 v1, v2                       // lds[tid] = 2*tid
        v_mov_b32_e32 v3, 0x200
        v_mov_b32_e32 v4, 1
        ds_add_u32 v3, v4                         // lds[128] += 1
        s_waitcnt lgkmcnt(0)
        s_barrier
        v_xor_b32_e32 v5, 4, v1
        ds_read_b32 v10, v5                       // o0 = lds[tid ^ 1] = 2*(tid^1)
        v_and_b32_e32 v6, -8, v1
        ds_read2_b32 v[6:7], v6 offset1:1         // pair
        s_waitcnt lgkmcnt(0)
        v_add_u32_e32 v11, vcc, v6, v7            // o1 = 2*(tid&~1) + 2*(tid|1)
        v_add_u32_e32 v8, vcc, 4, v1              // byte address of lane+1 (mod 64 in bpermute)
        ds_bpermute_b32 v12, v8, v0               // o2 = (lane+1)%64 + wave base
        ds_swizzle_b32 v13, v0 offset:swizzle(QUAD_PERM,1,0,3,2) // o3 = tid ^ 1
        ds_read_b32 v14, v3                       // counter: 128 after the barrier
        s_waitcnt lgkmcnt(0)
        v_lshlrev_b32_e32 v9, 4, v0
        v_mov_b32_e32 v16, s5
        v_add_u32_e32 v15, vcc, s4, v9
        v_addc_u32_e32 v16, vcc, 0, v16, vcc
        flat_store_dwordx4 v[15:16], v[10:13]
        v_cmp_eq_u32_e32 vcc, 0, v0
        s_and_saveexec_b64 s[8:9], vcc
        v_mov_b32_e32 v15, s4
        v_mov_b32_e32 v16, s5
        v_add_u32_e32 v15, vcc, 0x800, v15
        v_addc_u32_e32 v16, vcc, 0, v16, vcc
        flat_store_dword v[15:16], v14            // out[512] = counter (thread 0)
        s_endpgm

// ---- k_buffer: MUBUF (offen, idxen, out of range, atomics with return) and MTBUF ----
        .globl k_buffer
        .p2align 8
        .type k_buffer,@function
k_buffer:
        s_load_dwordx2 s[4:5], s[0:1], 0x8
        s_waitcnt lgkmcnt(0)
        s_mov_b32 s8, s4                          // V# 1: raw, whole 4 KiB of out
        s_and_b32 s9, s5, 0xffff
        s_mov_b32 s10, 0x1000
        s_mov_b32 s11, 0x27fac                    // dst_sel xyzw, 32-bit float format
        s_add_u32 s12, s4, 0x400                  // V# 2: stride 4 from out + 1 KiB
        s_addc_u32 s13, s5, 0
        s_and_b32 s13, s13, 0xffff
        s_or_b32 s13, s13, 0x40000
        s_mov_b32 s14, 64                         // 64 records
        s_mov_b32 s15, 0x27fac
        s_mov_b32 s16, s4                         // V# 3: only 16 bytes in range
        s_and_b32 s17, s5, 0xffff
        s_mov_b32 s18, 16
        s_mov_b32 s19, 0x27fac
        v_lshlrev_b32_e32 v1, 2, v0               // byte offset tid*4
        v_add_u32_e32 v2, vcc, 0x3e8, v0          // 1000 + tid
        buffer_store_dword v2, v1, s[8:11], 0 offen          // out[tid] = 1000 + tid
        s_waitcnt vmcnt(0)
        buffer_load_dword v3, v1, s[8:11], 0 offen offset:4  // out[tid+1]
        s_waitcnt vmcnt(0)
        buffer_store_dword v3, v0, s[12:15], 0 idxen         // out[256 + tid] = 1001 + tid
        v_mov_b32_e32 v4, 1
        buffer_atomic_add v4, off, s[8:11], 0 offset:2048 glc  // out[512] += 1, old value back
        s_waitcnt vmcnt(0)
        buffer_store_dword v4, v1, s[8:11], 0 offen offset:2304 // out[576 + tid] = old
        v_mov_b32_e32 v20, v0
        v_add_u32_e32 v21, vcc, 1, v0
        v_add_u32_e32 v22, vcc, 2, v0
        v_mov_b32_e32 v23, 0xff
        tbuffer_store_format_xyzw v[20:23], v1, s[8:11], dfmt:10, nfmt:4, 0 offen offset:2560 // out[640+tid] = bytes
        s_waitcnt vmcnt(0)
        tbuffer_load_format_xy v[24:25], v1, s[8:11], dfmt:5, nfmt:4, 0 offen offset:2560 // 16_16 uint
        s_waitcnt vmcnt(0)
        v_add_u32_e32 v26, vcc, v24, v25
        buffer_store_dword v26, v1, s[8:11], 0 offen offset:2816 // out[704+tid] = x + y
        buffer_load_dword v27, v1, s[16:19], 0 offen         // lanes >= 4 out of range: 0
        s_waitcnt vmcnt(0)
        buffer_store_dword v27, v1, s[8:11], 0 offen offset:3072 // out[768+tid]
        s_endpgm

// ---- faults: s_trap, a store outside every allocation, an invalid word, graphics ----
        .globl k_trap
        .p2align 8
        .type k_trap,@function
k_trap:
        s_trap 2
        s_endpgm

        .globl k_fault
        .p2align 8
        .type k_fault,@function
k_fault:
        v_mov_b32_e32 v1, 0x1000
        v_mov_b32_e32 v2, 0
        flat_store_dword v[1:2], v0
        s_endpgm

        .globl k_illegal
        .p2align 8
        .type k_illegal,@function
k_illegal:
        s_nop 0
        .long 0xffffffff
        s_endpgm

        .globl k_graphics
        .p2align 8
        .type k_graphics,@function
k_graphics:
        exp mrt0 v0, v0, v0, v0 done vm
        s_endpgm

        .rodata
.macro KD name, vgprs, sgprs, lds
        .p2align 6
        .amdhsa_kernel \name
        .amdhsa_user_sgpr_kernarg_segment_ptr 1
        .amdhsa_system_sgpr_workgroup_id_x 1
        .amdhsa_next_free_vgpr \vgprs
        .amdhsa_next_free_sgpr \sgprs
        .amdhsa_group_segment_fixed_size \lds
        .amdhsa_reserve_vcc 1
        .amdhsa_reserve_flat_scratch 0
        .end_amdhsa_kernel
.endm
        KD k_scalar, 8, 40, 0
        KD k_vector, 16, 16, 0
        KD k_lds, 20, 16, 1024
        KD k_buffer, 32, 24, 0
        KD k_trap, 4, 8, 0
        KD k_fault, 4, 8, 0
        KD k_illegal, 4, 8, 0
        KD k_graphics, 4, 8, 0

        .amdgpu_metadata
---
amdhsa.version: [ 1, 1 ]
amdhsa.kernels:
  - .name: k_scalar
    .symbol: k_scalar.kd
    .kernarg_segment_size: 24
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 40
    .vgpr_count: 32
    .max_flat_workgroup_size: 256
    .args:
      - { .name: in, .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global }
      - { .name: out, .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global }
      - { .name: x, .size: 4, .offset: 16, .value_kind: by_value }
  - .name: k_vector
    .symbol: k_vector.kd
    .kernarg_segment_size: 24
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 40
    .vgpr_count: 32
    .max_flat_workgroup_size: 256
    .args:
      - { .name: in, .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global }
      - { .name: out, .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global }
      - { .name: x, .size: 4, .offset: 16, .value_kind: by_value }
  - .name: k_lds
    .symbol: k_lds.kd
    .kernarg_segment_size: 24
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 1024
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 40
    .vgpr_count: 32
    .max_flat_workgroup_size: 256
    .args:
      - { .name: in, .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global }
      - { .name: out, .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global }
      - { .name: x, .size: 4, .offset: 16, .value_kind: by_value }
  - .name: k_buffer
    .symbol: k_buffer.kd
    .kernarg_segment_size: 24
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 40
    .vgpr_count: 32
    .max_flat_workgroup_size: 256
    .args:
      - { .name: in, .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global }
      - { .name: out, .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global }
      - { .name: x, .size: 4, .offset: 16, .value_kind: by_value }
  - .name: k_trap
    .symbol: k_trap.kd
    .kernarg_segment_size: 24
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 40
    .vgpr_count: 32
    .max_flat_workgroup_size: 256
    .args:
      - { .name: in, .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global }
      - { .name: out, .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global }
      - { .name: x, .size: 4, .offset: 16, .value_kind: by_value }
  - .name: k_fault
    .symbol: k_fault.kd
    .kernarg_segment_size: 24
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 40
    .vgpr_count: 32
    .max_flat_workgroup_size: 256
    .args:
      - { .name: in, .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global }
      - { .name: out, .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global }
      - { .name: x, .size: 4, .offset: 16, .value_kind: by_value }
  - .name: k_illegal
    .symbol: k_illegal.kd
    .kernarg_segment_size: 24
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 40
    .vgpr_count: 32
    .max_flat_workgroup_size: 256
    .args:
      - { .name: in, .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global }
      - { .name: out, .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global }
      - { .name: x, .size: 4, .offset: 16, .value_kind: by_value }
  - .name: k_graphics
    .symbol: k_graphics.kd
    .kernarg_segment_size: 24
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 40
    .vgpr_count: 32
    .max_flat_workgroup_size: 256
    .args:
      - { .name: in, .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global }
      - { .name: out, .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global }
      - { .name: x, .size: 4, .offset: 16, .value_kind: by_value }
...
        .end_amdgpu_metadata
