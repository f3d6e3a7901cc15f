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

// @prog mem_fault
flat_load_dword v4, v[0:1]
s_endpgm
