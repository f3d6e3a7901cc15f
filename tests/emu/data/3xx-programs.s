// Test programs for tests/emu/3xx-*.c. `// @prog NAME` starts a program.
// Regenerate 3xx-programs.h with: python3 tests/emu/data/gen-3xx-programs.py

// @prog salu_add64
s_add_u32 s2, s0, s4
s_addc_u32 s3, s1, s5
s_cselect_b64 s[6:7], -1, 0
s_sub_i32 s8, s9, s10
s_cselect_b32 s11, 1, 0
s_lshl_b64 s[12:13], s[0:1], 36
s_bfe_u32 s14, s15, 0x80004
s_movk_i32 s16, 0x8000
s_ashr_i32 s17, s16, 4
s_mul_i32 s18, s16, -3
s_min_u32 s19, s15, 77
s_xor_b64 s[20:21], s[0:1], -1
s_endpgm

// @prog salu_branch
s_mov_b32 s1, 0
s_cmp_lt_u32 s0, 10
s_cbranch_scc1 1
s_mov_b32 s1, 5
s_add_i32 s1, s1, 1
s_add_u32 s0, s0, 1
s_cmp_lt_u32 s0, 4
s_cbranch_scc1 -3
s_endpgm

// @prog salu_calls
s_getpc_b64 s[4:5]
s_add_u32 s4, s4, 16
s_addc_u32 s5, s5, 0
s_swappc_b64 s[30:31], s[4:5]
s_endpgm
s_mov_b32 s10, 42
s_setpc_b64 s[30:31]

// @prog salu_saveexec
v_cmp_gt_u32_e64 s[2:3], 10, v0
s_and_saveexec_b64 s[4:5], s[2:3]
v_mov_b32_e32 v1, 7
s_or_b64 exec, exec, s[4:5]
s_cbranch_execz 1
v_add_u32_e32 v1, vcc, 1, v1
s_endpgm

// @prog salu_hwreg
s_getreg_b32 s0, hwreg(HW_REG_MODE, 0, 32)
s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2), 3
s_getreg_b32 s1, hwreg(HW_REG_MODE, 4, 4)
s_mov_b32 s2, 0
s_setreg_b32 hwreg(HW_REG_MODE, 4, 2), s2
s_getreg_b32 s3, hwreg(HW_REG_MODE, 0, 32)
s_endpgm

// @prog salu_trap
s_mov_b32 s0, 1
s_trap 2
s_endpgm

// @prog salu_barrier
s_mov_b32 s0, 1
s_barrier
s_mov_b32 s0, 2
s_waitcnt vmcnt(0) lgkmcnt(0)
s_nop 3
s_sleep 1
s_sendmsg sendmsg(MSG_INTERRUPT)
s_endpgm

// @prog illegal_word
s_mov_b32 s0, 1
.long 0xffffffff
s_endpgm

// @prog unimpl_op
s_cbranch_g_fork s[0:1], s[2:3]
s_endpgm

// @prog valu_carry64
v_add_u32_e32 v4, vcc, v0, v2
v_addc_u32_e32 v5, vcc, v1, v3, vcc
v_add_u32_e64 v6, s[10:11], v0, v2
v_addc_u32_e64 v7, s[12:13], v1, v3, s[10:11]
v_sub_u32_e32 v8, vcc, v0, v2
v_subb_u32_e32 v9, vcc, v1, v3, vcc
v_subrev_u32_e64 v10, s[14:15], v0, v2
s_endpgm

// @prog valu_wide
v_mad_u64_u32 v[4:5], s[2:3], v0, v1, v[2:3]
v_mad_i64_i32 v[6:7], s[4:5], v0, v1, v[2:3]
v_lshlrev_b64 v[8:9], 33, v[2:3]
v_lshrrev_b64 v[10:11], v0, v[2:3]
v_ashrrev_i64 v[12:13], 4, v[2:3]
v_mul_lo_u32 v14, v0, v1
v_mul_hi_u32 v15, v0, v1
v_mad_u32_u24 v16, v0, v1, 5
v_bfe_u32 v17, v1, 8, 5
v_lshrrev_b32_e64 v18, 3, v1
v_ashrrev_i32_e32 v19, 31, v1
v_min_u32_e64 v20, v0, 9
s_endpgm

// @prog valu_lanes
v_mbcnt_lo_u32_b32 v1, -1, 0
v_mbcnt_hi_u32_b32 v1, -1, v1
v_readlane_b32 s0, v1, 5
s_mov_b32 s1, 63
v_readlane_b32 s2, v1, s1
v_writelane_b32 v2, s0, 7
v_readfirstlane_b32 s3, v1
v_cmp_eq_u32_e32 vcc, 3, v1
v_cndmask_b32_e64 v3, 10, 20, vcc
v_cmp_ne_u16_e64 s[4:5], 2, v1
v_cmp_lt_u64_e64 s[6:7], v[4:5], v[6:7]
v_cmpx_gt_u32_e32 vcc, 8, v1
v_mov_b32_e32 v8, 99
s_endpgm

// @prog valu_float
v_add_f32_e32 v2, v0, v1
v_add_f32_e64 v3, |v0|, -v1
v_add_f32_e64 v4, v0, v1 clamp
v_mul_f32_e64 v5, v0, v1 mul:2
v_mul_f32_e64 v6, v0, v1 div:2
v_cvt_f32_u32_e32 v7, v10
v_cvt_u32_f32_e32 v8, v0
v_cvt_i32_f32_e32 v9, v1
v_mac_f32_e32 v11, v0, v1
v_madak_f32 v12, v0, v1, 0x40000000
v_cvt_f64_f32_e32 v[14:15], v0
v_add_f64 v[16:17], v[14:15], 1.0
v_cvt_f32_f64_e32 v18, v[16:17]
v_fma_f32 v19, v0, v1, 0.5
v_cmp_lt_f32_e64 s[0:1], v0, v1
v_rcp_f32_e32 v20, v0
v_floor_f32_e32 v21, v1
s_endpgm

// @prog valu_fdiv
v_div_scale_f32 v2, s[4:5], v1, v1, v0
v_div_scale_f32 v3, vcc, v0, v1, v0
v_rcp_f32_e32 v4, v2
s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2), 3
v_fma_f32 v5, -v2, v4, 1.0
v_fma_f32 v4, v5, v4, v4
v_mul_f32_e32 v5, v3, v4
v_fma_f32 v6, -v2, v5, v3
v_fma_f32 v5, v6, v4, v5
v_fma_f32 v2, -v2, v5, v3
s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2), 0
v_div_fmas_f32 v2, v2, v4, v5
v_div_fixup_f32 v0, v2, v1, v0
s_endpgm

// @prog mem_smem
s_load_dwordx2 s[4:5], s[0:1], 0x8
s_load_dword s6, s[0:1], 0x0
s_waitcnt lgkmcnt(0)
s_endpgm

// @prog mem_flat
flat_load_dword v4, v[0:1]
flat_load_dwordx2 v[5:6], v[0:1]
flat_load_ubyte v7, v[0:1]
flat_load_sbyte v8, v[0:1]
flat_load_ushort v9, v[0:1]
flat_store_dword v[2:3], v4
flat_store_byte v[2:3], v10
flat_load_dwordx4 v[12:15], v[0:1]
s_waitcnt vmcnt(0)
s_endpgm

// @prog mem_atomics
flat_atomic_add v[0:1], v4
flat_atomic_add v5, v[0:1], v4 glc
flat_atomic_add_x2 v[2:3], v[6:7]
flat_atomic_cmpswap_x2 v[8:9], v[2:3], v[10:13] glc
flat_atomic_umax v[0:1], v14
s_waitcnt vmcnt(0)
s_endpgm

// @prog mem_mubuf
buffer_store_dword v1, off, s[0:3], s5 offset:16
buffer_load_dword v2, off, s[0:3], s5 offset:16
buffer_store_dword v3, v4, s[0:3], s5 offen offset:4
buffer_load_dword v5, v4, s[0:3], s5 offen offset:4
buffer_store_dwordx2 v[6:7], off, s[0:3], s5 offset:32
buffer_load_dwordx2 v[8:9], off, s[0:3], s5 offset:32
buffer_store_byte v10, off, s[0:3], s5 offset:41
buffer_load_ubyte v11, off, s[0:3], s5 offset:41
buffer_wbinvl1_vol
s_waitcnt vmcnt(0)
s_endpgm

// @prog mem_flat_apertures
flat_store_dword v[0:1], v4
flat_load_dword v5, v[0:1]
flat_store_dword v[2:3], v6
flat_load_dword v7, v[2:3]
flat_store_dwordx2 v[2:3], v[8:9]
flat_load_dwordx2 v[10:11], v[2:3]
s_waitcnt vmcnt(0) lgkmcnt(0)
s_endpgm

// @prog mem_ds
ds_write_b32 v0, v1 offset:4
ds_read_b32 v2, v0 offset:4
ds_write2_b32 v0, v1, v3 offset0:64 offset1:65
ds_read2_b32 v[4:5], v0 offset0:64 offset1:65
ds_add_u32 v6, v7
ds_add_rtn_u32 v8, v6, v7
ds_bpermute_b32 v9, v10, v1
ds_write_b64 v0, v[12:13] offset:1024
ds_read_b64 v[14:15], v0 offset:1024
s_waitcnt lgkmcnt(0)
s_endpgm

// @prog mem_ds_oob
ds_read_b32 v2, v0
s_endpgm

// @prog mem_ds_wrap
ds_write_b32 v0, v1 offset:8
ds_read_b32 v2, v0 offset:8
s_waitcnt lgkmcnt(0)
s_endpgm

// @prog mem_fault
flat_load_dword v4, v[0:1]
s_endpgm

// @prog salu_bits
s_bcnt1_i32_b64 s10, s[0:1]
s_bcnt0_i32_b32 s11, s2
s_ff1_i32_b32 s12, s3
s_ff0_i32_b64 s13, s[0:1]
s_flbit_i32_b32 s14, s2
s_flbit_i32 s15, s4
s_flbit_i32_i64 s16, s[0:1]
s_quadmask_b64 s[18:19], s[0:1]
s_wqm_b64 s[20:21], s[0:1]
s_bfe_i32 s22, s2, 0x40000
s_bfe_u64 s[24:25], s[0:1], 0x200010
s_bfm_b64 s[26:27], 36, 4
s_absdiff_i32 s28, s4, s2
s_cmpk_lt_i32 s4, 0x0
s_cselect_b32 s29, 1, 0
s_addk_i32 s30, 0x1
s_cselect_b32 s31, 1, 0
s_min_i32 s32, s4, s2
s_cselect_b32 s33, 1, 0
s_andn2_b64 s[34:35], s[0:1], s[0:1]
s_cselect_b32 s36, 1, 0
s_ashr_i64 s[38:39], s[0:1], 60
s_not_b32 s40, -1
s_cselect_b32 s41, 1, 0
s_mov_b32 m0, 2
s_movrels_b32 s42, s0
s_movreld_b32 s43, s2
s_endpgm

// @prog salu_saveexec_all
s_or_saveexec_b64 s[10:11], s[0:1]
s_cselect_b32 s30, 1, 0
s_mov_b64 exec, s[2:3]
s_xor_saveexec_b64 s[12:13], s[0:1]
s_mov_b64 s[40:41], exec
s_mov_b64 exec, s[2:3]
s_andn2_saveexec_b64 s[14:15], s[0:1]
s_mov_b64 s[42:43], exec
s_mov_b64 exec, s[2:3]
s_orn2_saveexec_b64 s[16:17], s[0:1]
s_mov_b64 s[44:45], exec
s_mov_b64 exec, s[2:3]
s_nand_saveexec_b64 s[18:19], s[0:1]
s_mov_b64 s[46:47], exec
s_mov_b64 exec, s[2:3]
s_nor_saveexec_b64 s[20:21], s[0:1]
s_mov_b64 s[48:49], exec
s_mov_b64 exec, s[2:3]
s_xnor_saveexec_b64 s[22:23], s[0:1]
s_mov_b64 s[50:51], exec
s_mov_b64 exec, s[2:3]
s_and_saveexec_b64 s[24:25], 0
s_cselect_b32 s31, 1, 0
s_mov_b64 exec, s[2:3]
s_endpgm

// @prog salu_modes
s_mov_b32 m0, 0
s_set_gpr_idx_on s5, gpr_idx(SRC0,DST)
v_mov_b32_e32 v1, v0
s_set_gpr_idx_off
s_set_gpr_idx_on s5, gpr_idx(SRC0)
s_set_gpr_idx_idx s6
v_mov_b32_e32 v20, v0
s_set_gpr_idx_mode gpr_idx(DST)
v_mov_b32_e32 v22, 7
s_set_gpr_idx_off
s_setvskip 1, 0
v_mov_b32_e32 v30, 5
s_setvskip 0, 0
v_mov_b32_e32 v31, 6
s_getreg_b32 s10, hwreg(HW_REG_MODE)
s_getreg_b32 s11, hwreg(HW_REG_LDS_ALLOC)
s_getreg_b32 s12, hwreg(HW_REG_HW_ID)
s_cmp_eq_u32 0, 0
s_getreg_b32 s13, hwreg(HW_REG_STATUS, 0, 1)
s_cbranch_cdbgsys 1
s_mov_b32 s14, 1
s_memtime s[16:17]
s_memrealtime s[18:19]
s_memtime s[20:21]
s_endpgm

// @prog gfx_exp
exp mrt0 v0, v0, v0, v0 done vm
s_endpgm

// @prog gfx_image
image_sample v[0:3], v[4:5], s[8:15], s[16:19] dmask:0xf
s_endpgm

// @prog gfx_interp
v_interp_p1_f32 v1, v0, attr0.x
s_endpgm

// @prog smem_store
s_store_dword s4, s[0:1], 0x0
s_store_dwordx2 s[6:7], s[0:1], 0x8
s_buffer_store_dword s4, s[8:11], 0x10
s_buffer_store_dword s5, s[8:11], 0x40
s_buffer_load_dword s12, s[8:11], 0x10
s_buffer_load_dwordx2 s[14:15], s[8:11], 0x3c
s_dcache_wb
s_atc_probe 0, s[0:1], 0x0
s_endpgm

// @prog ds_more
ds_write2st64_b32 v0, v1, v2 offset0:1 offset1:2
ds_read2st64_b32 v[4:5], v0 offset0:1 offset1:2
ds_read_i8 v6, v0 offset:256
ds_read_u16 v7, v0 offset:256
ds_mskor_rtn_b32 v8, v3, v10, v11
ds_wrap_rtn_b32 v9, v3, v12, v13 offset:4
ds_cmpst_rtn_b32 v14, v3, v15, v16 offset:8
ds_cmpst_rtn_f32 v17, v3, v18, v19 offset:12
ds_wrxchg2_rtn_b32 v[20:21], v3, v22, v23 offset0:8 offset1:9
ds_condxchg32_rtn_b64 v[24:25], v3, v[26:27] offset:48
ds_max_rtn_i32 v28, v3, v29 offset:56
ds_dec_rtn_u32 v30, v3, v31 offset:60
s_waitcnt lgkmcnt(0)
s_endpgm

// @prog ds_src2
ds_add_src2_u32 v0 offset:1
ds_write_src2_b32 v1 offset:32768
ds_max_src2_u32 v2 offset:32767
s_waitcnt lgkmcnt(0)
s_endpgm

// @prog ds_counter
s_mov_b32 m0, 0x100
ds_append v1 offset:4
ds_consume v2 offset:8
s_waitcnt lgkmcnt(0)
s_endpgm

// @prog ds_xlane
ds_swizzle_b32 v1, v0 offset:swizzle(QUAD_PERM,3,2,1,0)
ds_swizzle_b32 v2, v0 offset:swizzle(BITMASK_PERM,"00p11")
ds_permute_b32 v3, v4, v0
ds_bpermute_b32 v5, v4, v0
s_waitcnt lgkmcnt(0)
s_endpgm

// @prog ds_gds
ds_add_u32 v0, v1 gds
s_endpgm

// @prog buf_ops
buffer_store_dword v1, v0, s[0:3], 0 offen
buffer_load_dword v2, v0, s[0:3], s4 offen offset:4
buffer_store_byte v1, v0, s[0:3], 0 offen offset:1024
buffer_load_sbyte v3, v0, s[0:3], 0 offen offset:1024
buffer_load_dword v5, v6, s[8:11], 0 idxen
buffer_atomic_cmpswap v[10:11], v0, s[0:3], 0 offen offset:2048 glc
buffer_atomic_add_x2 v[12:13], v7, s[0:3], 0 offen offset:3072 glc
buffer_atomic_umax v14, v0, s[0:3], 0 offen offset:2560
s_waitcnt vmcnt(0)
s_endpgm

// @prog buf_format
tbuffer_store_format_xyzw v[10:13], v0, s[0:3], dfmt:10, nfmt:0, 0 offen
tbuffer_load_format_xyzw v[14:17], v0, s[0:3], dfmt:10, nfmt:0, 0 offen
tbuffer_store_format_xy v[18:19], v0, s[0:3], dfmt:5, nfmt:7, 0 offen offset:512
tbuffer_load_format_xyzw v[20:23], v0, s[0:3], dfmt:5, nfmt:7, 0 offen offset:512
tbuffer_load_format_xy v[24:25], v0, s[0:3], dfmt:9, nfmt:5, 0 offen offset:1024
buffer_load_format_xyzw v[26:29], v0, s[4:7], 0 offen offset:512
buffer_load_format_d16_xy v[30:31], v0, s[0:3], 0 offen offset:512
buffer_store_format_x v1, v0, s[4:7], 0 offen offset:1536
s_waitcnt vmcnt(0)
s_endpgm

// @prog flat_atomics_all
flat_atomic_swap v10, v[0:1], v2 glc
flat_atomic_sub v11, v[0:1], v2 glc
flat_atomic_smin v12, v[0:1], v3 glc
flat_atomic_umax v13, v[0:1], v3 glc
flat_atomic_and v[0:1], v4
flat_atomic_or v[0:1], v5
flat_atomic_xor v14, v[0:1], v5 glc
flat_atomic_inc v15, v[6:7], v8 glc
flat_atomic_dec v16, v[6:7], v8 glc
flat_atomic_smax_x2 v[18:19], v[20:21], v[22:23] glc
flat_atomic_cmpswap_x2 v[24:25], v[20:21], v[26:29] glc
s_waitcnt vmcnt(0) lgkmcnt(0)
s_endpgm
