// Test programs for tests/emu/31x-*.c (issue 3 VALU: f16, SDWA/DPP, misc).
// `// @prog NAME` starts a program. Regenerate 31x-programs.h with:
//   python3 tests/emu/data/gen-3xx-programs.py 31x

// @prog f16_vop2
v_add_f16_e32 v10, v0, v1
v_sub_f16_e32 v11, v0, v1
v_subrev_f16_e32 v12, v0, v1
v_mul_f16_e32 v13, v0, v1
v_max_f16_e32 v14, v0, v1
v_min_f16_e32 v15, v0, v1
v_ldexp_f16_e32 v16, v0, v3
v_mac_f16_e32 v17, v0, v1
v_mad_f16 v18, v0, v1, v2
v_fma_f16 v19, v0, v1, v2
v_div_fixup_f16 v20, v0, v1, v2
s_endpgm

// @prog f16_mods
v_add_f16_e64 v10, -v0, |v1|
v_mul_f16_e64 v11, v0, v1 clamp
v_add_f16_e64 v12, v0, v1 mul:2
v_fma_f16 v13, -|v0|, v1, -v2 div:2
v_madak_f16 v14, v0, v1, 0x4200
v_madmk_f16 v15, v0, 0x3800, v1
v_add_f16_e32 v16, 0x3c00, v0
v_add_f16_e32 v17, 1.0, v0
v_mul_f16_e32 v18, 0.15915494, v0
v_add_f16_e32 v19, 1, v0
v_sub_f16_e64 v20, 2.0, v0 mul:4
s_endpgm

// @prog f16_unary
v_rcp_f16_e32 v10, v0
v_sqrt_f16_e32 v11, v0
v_rsq_f16_e32 v12, v0
v_log_f16_e32 v13, v0
v_exp_f16_e32 v14, v0
v_sin_f16_e32 v15, v0
v_cos_f16_e32 v16, v0
v_floor_f16_e32 v17, v0
v_ceil_f16_e32 v18, v0
v_trunc_f16_e32 v19, v0
v_rndne_f16_e32 v20, v0
v_fract_f16_e32 v21, v0
v_frexp_mant_f16_e32 v22, v0
v_frexp_exp_i16_f16_e32 v23, v0
v_cvt_u16_f16_e32 v24, v0
v_cvt_i16_f16_e32 v25, v0
v_cvt_f16_u16_e32 v26, v1
v_cvt_f16_i16_e32 v27, v1
s_endpgm

// @prog f16_cmp
v_cmp_lt_f16_e64 s[0:1], v0, v1
v_cmp_eq_f16_e64 s[2:3], v0, v1
v_cmp_le_f16_e64 s[4:5], v0, v1
v_cmp_gt_f16_e64 s[6:7], v0, v1
v_cmp_lg_f16_e64 s[8:9], v0, v1
v_cmp_ge_f16_e64 s[10:11], v0, v1
v_cmp_o_f16_e64 s[12:13], v0, v1
v_cmp_u_f16_e64 s[14:15], v0, v1
v_cmp_nge_f16_e64 s[16:17], v0, v1
v_cmp_nlg_f16_e64 s[18:19], v0, v1
v_cmp_ngt_f16_e64 s[20:21], v0, v1
v_cmp_nle_f16_e64 s[22:23], v0, v1
v_cmp_neq_f16_e64 s[24:25], v0, v1
v_cmp_nlt_f16_e64 s[26:27], v0, v1
v_cmp_tru_f16_e64 s[28:29], v0, v1
v_cmp_f_f16_e64 s[30:31], v0, v1
v_cmp_class_f16_e64 s[32:33], v0, v2
v_cmp_lt_f16_e64 s[34:35], -v0, |v1|
v_cmp_eq_f16_e32 vcc, 1.0, v0
s_mov_b64 s[36:37], vcc
v_cmp_class_f16_e32 vcc, v0, v2
s_mov_b64 s[38:39], vcc
v_cmpx_gt_f16_e32 vcc, v0, v1
s_endpgm

// @prog f16_round
s_setreg_b32 hwreg(HW_REG_MODE, 2, 2), s0
v_add_f16_e32 v10, v0, v1
v_mul_f16_e32 v11, v0, v1
v_fma_f16 v12, v0, v1, v2
v_mad_f16 v13, v0, v1, v2
v_cvt_f16_u16_e32 v14, v3
v_sqrt_f16_e32 v15, v0
s_endpgm

// @prog sdwa
v_add_u32_sdwa v10, vcc, v0, v1 dst_sel:BYTE_1 dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:WORD_1
v_mov_b32_sdwa v11, v0 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_2
v_mov_b32_sdwa v12, v0 dst_sel:BYTE_1 dst_unused:UNUSED_SEXT src0_sel:BYTE_3
v_mov_b32_sdwa v13, sext(v0) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_0
v_add_f16_sdwa v14, v2, v3 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_1 src1_sel:WORD_0
v_mul_f32_sdwa v15, -v4, |v5| dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD
v_and_b32_sdwa v16, v0, v1 dst_sel:WORD_0 dst_unused:UNUSED_SEXT src0_sel:WORD_1 src1_sel:BYTE_2
v_add_f32_sdwa v17, v4, v5 clamp dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD
v_cmp_gt_u32_sdwa vcc, v0, v1 src0_sel:BYTE_0 src1_sel:BYTE_0
s_mov_b64 s[20:21], vcc
v_cvt_f32_u32_sdwa v18, v0 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1
v_mac_f32_sdwa v19, v4, v5 dst_sel:DWORD dst_unused:UNUSED_PRESERVE src0_sel:DWORD src1_sel:DWORD
v_sub_u16_sdwa v20, v0, v1 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:BYTE_1 src1_sel:BYTE_0
s_endpgm

// @prog dpp
v_mov_b32_dpp v10, v0 quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v11, v0 row_shl:1 row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v12, v0 row_shr:3 row_mask:0xf bank_mask:0xf bound_ctrl:0
v_mov_b32_dpp v13, v0 row_ror:5 row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v14, v0 wave_shl:1 row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v15, v0 wave_rol:1 row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v16, v0 wave_shr:1 row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v17, v0 wave_ror:1 row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v18, v0 row_mirror row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v19, v0 row_half_mirror row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v20, v0 row_bcast:15 row_mask:0xa bank_mask:0xf
v_mov_b32_dpp v21, v0 row_bcast:31 row_mask:0xc bank_mask:0xf
v_add_u32_dpp v22, vcc, v0, v1 row_shr:1 row_mask:0xf bank_mask:0xe bound_ctrl:0
v_add_f32_dpp v23, -v2, |v3| quad_perm:[1,1,1,1] row_mask:0x5 bank_mask:0xf
v_mov_b32_dpp v24, v0 row_shl:15 row_mask:0xf bank_mask:0xf bound_ctrl:0
v_add_f16_dpp v25, v4, v5 row_ror:1 row_mask:0xf bank_mask:0x9
s_endpgm

// @prog dpp_scan
v_add_u32_dpp v1, vcc, v1, v1 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:0
s_nop 1
v_add_u32_dpp v1, vcc, v1, v1 row_shr:2 row_mask:0xf bank_mask:0xf bound_ctrl:0
s_nop 1
v_add_u32_dpp v1, vcc, v1, v1 row_shr:4 row_mask:0xf bank_mask:0xe
s_nop 1
v_add_u32_dpp v1, vcc, v1, v1 row_shr:8 row_mask:0xf bank_mask:0xc
s_nop 1
v_add_u32_dpp v1, vcc, v1, v1 row_bcast:15 row_mask:0xa bank_mask:0xf
s_nop 1
v_add_u32_dpp v1, vcc, v1, v1 row_bcast:31 row_mask:0xc bank_mask:0xf
v_readlane_b32 s0, v1, 63
s_endpgm

// @prog misc_pack
v_cvt_pk_u8_f32 v10, v0, v1, v2
v_cvt_pkaccum_u8_f32 v11, v0, v1
v_cvt_pknorm_i16_f32 v12, v0, v3
v_cvt_pknorm_u16_f32 v13, v0, v3
v_cvt_pk_u16_u32 v14, v4, v5
v_cvt_pk_i16_i32 v15, v4, v5
v_cvt_off_f32_i4_e32 v16, v4
v_lerp_u8 v17, v4, v5, v6
v_sad_hi_u8 v18, v4, v5, v6
v_msad_u8 v19, v4, v5, v6
v_cubeid_f32 v20, v0, v3, v7
v_cubesc_f32 v21, v0, v3, v7
v_cubetc_f32 v22, v0, v3, v7
v_cubema_f32 v23, v0, v3, v7
v_clrexcp_e32
s_endpgm

// @prog misc_qsad
v_qsad_pk_u16_u8 v[10:11], v[0:1], v2, v[4:5]
v_mqsad_pk_u16_u8 v[12:13], v[0:1], v2, v[4:5]
v_mqsad_u32_u8 v[16:19], v[0:1], v2, v[4:7]
v_trig_preop_f64 v[20:21], v[8:9], v3
s_endpgm

// @prog misc_interp
v_interp_p2_f16 v1, v2, attr0.x, v3
s_endpgm

// @prog round_f32
v_add_f32_e32 v2, v0, v1
v_mul_f32_e32 v3, v0, v1
v_fma_f32 v4, v0, v1, v5
v_mad_f32 v6, v0, v1, v5
v_add_f64 v[8:9], v[10:11], v[12:13]
v_rndne_f32_e32 v7, v0
v_cvt_f32_u32_e32 v14, v15
s_endpgm

// @prog round_e2e
s_setreg_b32 hwreg(HW_REG_MODE, 0, 4), s0
v_add_f32_e32 v2, v0, v1
v_fma_f32 v4, v0, v1, v5
v_add_f16_e32 v6, v7, v8
s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 0
v_add_f32_e32 v3, v0, v1
s_endpgm
