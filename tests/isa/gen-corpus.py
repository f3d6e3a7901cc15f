#!/usr/bin/env python3
"""Generate tests/isa/gfx803-corpus.s: every opcode of gcn/gcn3.def in its
operand variants, as LLVM 14 prints and assembles them.

For each op of the table (and the VOP3 form of every VOP1/VOP2/VOPC/VINTRP op,
the SDWA and DPP forms of every VOP1/VOP2/VOPC op) the generator builds
encodings whose fields take representative values: SGPRs, VGPRs, every special
register (VCC, EXEC, M0, FLAT_SCRATCH, XNACK_MASK, TBA, TMA, TTMP, SCC, VCCZ,
EXECZ), inline integer and float constants, literals, VOP3 abs/neg/clamp/omod,
SDWA selects/sext/neg/abs/clamp, every DPP control, DS offsets and gds, MUBUF
offen/idxen/glc/slc/lds/tfe, MTBUF formats, MIMG dmask/unorm/da/r128/lwe,
SMEM imm/SGPR offsets and glc, FLAT glc/slc/tfe, EXP targets.  llvm-mc
--disassemble keeps the encodings LLVM decodes to exactly those bytes; the
texts are then assembled back with llvm-mc and kept only when they reproduce
the same bytes, so the corpus is valid assembler input whose every line is
LLVM's own disassembly.  Output lines: "TEXT ; encoding: [0x..,...]".

Usage: gen-corpus.py [--def gcn/gcn3.def] [--out tests/isa/gfx803-corpus.s]
Deterministic (seeded); needs llvm-mc (LLVM 14, `make deps`).
"""
import argparse, random, re, subprocess, sys

MC = ["llvm-mc", "-arch=amdgcn", "-mcpu=gfx803", "-show-encoding"]

def load_def(path):
    ops = []
    for l in open(path):
        m = re.match(r'GCN_OP\((\w+),\s*FMT\((\w+)\), OPC\((0x[0-9a-f]+)\).*SW\((\d),(\d),(\d)\), ATTR\(([^)]*)\)', l)
        if m:
            ops.append(dict(name=m.group(1), fmt=m.group(2), opc=int(m.group(3), 16),
                            sw=[int(m.group(i)) for i in (4, 5, 6)], attr=m.group(7)))
    return ops

R = random.Random(0x6cf803)
# scalar source codes (SSRC, GCN3 ISA manual 12.1): SGPRs, specials, inline ints/floats, vccz/execz/scc
SREGS = [0, 1, 2, 3, 4, 5, 10, 17, 64, 100, 101]
SPECIAL = [102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 116, 119, 122, 123, 124, 126, 127]
INL_INT = [128, 129, 130, 160, 192, 193, 200, 208]
INL_FLT = [240, 241, 242, 243, 244, 245, 246, 247, 248]
ZFLAGS = [251, 252, 253]
LITS = [0x12345678, 0x3f800000, 0x40490fdb, 0xffff, 0x8000, 0x64, 0xfffffff0, 0x3c00, 0xbf800000, 0x7fc00000,
        0x3e22f983, 0x1, 0x40, 0x41, 0xffffffff, 0x3fe00000, 0x40000000, 0x80000000]

def pick(*groups):
    g = R.choice(groups)
    return R.choice(g)

def ssrc(allow_lit=True):
    c = pick(SREGS, SREGS, SPECIAL, INL_INT, INL_FLT, ZFLAGS, [255] if allow_lit else INL_INT)
    return c

def even(c):
    return c & ~1 if c < 102 else c

def sdst():
    return pick(SREGS, SREGS, [102, 104, 106, 108, 110, 112, 116, 120, 124, 126, 107, 127])

def vsrc():  # 9-bit VOP source: VGPR or scalar code
    if R.random() < 0.4:
        return 256 + R.choice([0, 1, 2, 7, 31, 128, 254, 255])
    return ssrc()

def vgpr():
    return R.choice([0, 1, 2, 3, 5, 8, 16, 100, 200, 250, 252, 255])

def lit_words(codes):
    return [R.choice(LITS)] if 255 in codes else []

def sop(op):
    f, o = op['fmt'], op['opc']
    out = []
    for i in range(14):
        if f == 'SOP2':
            d, a, b = sdst(), ssrc(), ssrc()
            if R.random() < 0.6: a, b = even(a), even(b)
            if a == 255 and b == 255: b = 1
            w = 0x80000000 | o << 23 | d << 16 | b << 8 | a
            out.append([w] + lit_words([a, b]))
        elif f == 'SOPK':
            d = sdst()
            simm = R.choice([0, 1, 0x7fff, 0x8000, 0xffff, 0x1234, R.getrandbits(16), R.getrandbits(16),
                             1 | R.randrange(32) << 6 | R.randrange(32) << 11, R.randrange(1, 8) | R.randrange(32) << 6])
            w = 0xb0000000 | o << 23 | d << 16 | simm
            out.append([w] + ([R.choice(LITS)] if op['name'] == 's_setreg_imm32_b32' else []))
        elif f == 'SOP1':
            d, a = sdst(), ssrc()
            if R.random() < 0.6: a = even(a)
            w = 0xbe800000 | d << 16 | o << 8 | a
            out.append([w] + lit_words([a]))
        elif f == 'SOPC':
            a, b = ssrc(), ssrc()
            if a == 255 and b == 255: b = 2
            w = 0xbf000000 | o << 16 | b << 8 | a
            out.append([w] + lit_words([a, b]))
        elif f == 'SOPP':
            simm = 0 if i == 0 else R.choice([0, 1, 2, 3, 0xffff, 0xfffe, 0x7f, 0x3f70, 0x0f70, 0xc07f, 0x0070, 0x0f7f, 0x10,
                             0x22, 0x12, 0x3, R.getrandbits(16), R.getrandbits(16), R.getrandbits(8)])
            out.append([0xbf800000 | o << 16 | simm])
    return out

def smem(op):
    o, out = op['opc'], []
    for i in range(10):
        imm = R.random() < 0.7
        glc = R.random() < 0.3
        sbase = R.choice([0, 1, 2, 3, 4, 8, 20, 50])
        sd = R.choice([0, 4, 8, 12, 16, 20, 24, 32, 40, 48, 96, 100, 102, 104, 106, 112, 124, 126])
        w0 = 0xc0000000 | o << 18 | imm << 17 | glc << 16 | sd << 6 | sbase
        w1 = R.choice([0, 4, 0x10, 0xfff, 0xfffff, R.getrandbits(20)]) if imm else R.choice([0, 5, 17, 106, 124, 101])
        out.append([w0, w1])
    return out

def sdwa_word(v0, fmt):
    w = v0 | R.randrange(7) << 8 | R.randrange(3) << 11 | (R.random() < 0.3) << 13 | R.randrange(7) << 16
    if R.random() < 0.3: w |= 1 << 19
    if R.random() < 0.3: w |= 1 << 20
    if R.random() < 0.3: w |= 1 << 21
    w |= R.randrange(7) << 24
    if R.random() < 0.3: w |= 1 << 27
    if R.random() < 0.3: w |= 1 << 28
    if R.random() < 0.3: w |= 1 << 29
    return w

DPP_CTRL = ([0x000, 0x0e4, 0x01b, 0x0ff, 0x039] + list(range(0x101, 0x110)) + list(range(0x111, 0x120)) +
            list(range(0x121, 0x130)) + [0x130, 0x134, 0x138, 0x13c, 0x140, 0x141, 0x142, 0x143])

def dpp_word(v0):
    w = v0 | R.choice(DPP_CTRL) << 8 | (R.random() < 0.3) << 19
    for b in (20, 21, 22, 23):
        if R.random() < 0.25: w |= 1 << b
    w |= R.choice([0xf, 0xf, 0x0, 0x1, 0xa, R.randrange(16)]) << 24
    w |= R.choice([0xf, 0xf, 0x0, 0x3, 0x5, R.randrange(16)]) << 28
    return w

def vop_native(op):
    f, o, out = op['fmt'], op['opc'], []
    for i in range(12):
        s0 = vsrc()
        if op['sw'][0] == 2 and s0 < 102: s0 = even(s0)
        vd, v1 = vgpr(), vgpr()
        if f == 'VOP2': w = o << 25 | vd << 17 | v1 << 9 | s0
        elif f == 'VOP1': w = 0x7e000000 | vd << 17 | o << 9 | s0
        else: w = 0x7c000000 | o << 17 | v1 << 9 | s0
        ws = [w]
        if s0 == 255 or op['name'] in ('v_madmk_f32', 'v_madak_f32', 'v_madmk_f16', 'v_madak_f16'):
            ws.append(R.choice(LITS))
        out.append(ws)
    for i in range(6):  # SDWA
        vd, v1 = vgpr(), vgpr()
        base = {'VOP2': o << 25 | vd << 17 | v1 << 9, 'VOP1': 0x7e000000 | vd << 17 | o << 9,
                'VOPC': 0x7c000000 | o << 17 | v1 << 9}[f]
        out.append([base | 0xf9, sdwa_word(vgpr(), f)])
    for i in range(6):  # DPP
        vd, v1 = vgpr(), vgpr()
        base = {'VOP2': o << 25 | vd << 17 | v1 << 9, 'VOP1': 0x7e000000 | vd << 17 | o << 9,
                'VOPC': 0x7c000000 | o << 17 | v1 << 9}[f]
        out.append([base | 0xfa, dpp_word(vgpr())])
    return out

def vop3(op, opc3):
    out = []
    vop3b = 'VOP3B' in op['attr']
    for i in range(14):
        srcs = []
        for k in range(3):
            c = vsrc()
            if c == 255: c = R.choice(INL_INT + INL_FLT)
            if op['sw'][k] == 2 and c < 102: c = even(c)
            srcs.append(c)
        vd = R.choice([0, 1, 2, 4, 8, 100, 254, 255])
        if op['fmt'] == 'VOPC' or op['name'] in ('v_readlane_b32', 'v_readfirstlane_b32'):
            vd = R.choice([0, 2, 4, 10, 100, 102, 104, 106, 108, 110, 112, 124, 126])
        w0 = 0xd0000000 | opc3 << 16 | vd
        if vop3b:
            w0 |= R.choice([0, 2, 4, 100, 102, 104, 106, 112, 126]) << 8
        else:
            w0 |= R.choice([0, 0, 0, 1, 2, 4, 7, R.randrange(8)]) << 8
        if R.random() < 0.3: w0 |= 1 << 15
        if i % 4 == 1:  # unused source fields must be zero
            srcs = [c if op['sw'][k] or k == 0 else 0 for k, c in enumerate(srcs)]
        w1 = srcs[0] | srcs[1] << 9 | srcs[2] << 18
        if i % 2:  # integer ops take no abs/neg/omod: half the variants have none
            w0 &= ~(0x7 << 8) if not vop3b else ~0
        else:
            w1 |= R.choice([0, 0, 0, 1, 2, 3]) << 27
            w1 |= R.choice([0, 0, 0, 1, 2, 4, 7, R.randrange(8)]) << 29
        out.append([w0, w1])
    return out

def vintrp(op):
    return [[0xd4000000 | vgpr() << 18 | op['opc'] << 16 | R.randrange(64) << 10 | R.randrange(4) << 8 |
             (R.randrange(3) if op['name'] == 'v_interp_mov_f32' else vgpr())] for i in range(8)]

def ds(op):
    out = []
    for i in range(16):
        off = R.choice([0, 0, 1, 4, 0xff, 0x100, 0xffff, 0x1004, R.getrandbits(16)])
        gds = R.random() < 0.2
        if op['name'].startswith('ds_gws_') or op['name'] == 'ds_ordered_count':
            gds = 1  # GDS-only ops (global wave sync, ordered count) exist only with gds=1
        w0 = 0xd8000000 | op['opc'] << 17 | gds << 16 | off
        w1 = vgpr() << 24 | vgpr() << 16 | vgpr() << 8 | vgpr()
        # unused operand fields must be zero: every subset of vdst/data1/data0 cleared
        w1 &= ~sum(0xff << s for k, s in enumerate((24, 16, 8, 0)) if (i >> k) & 1)
        out.append([w0, w1])
    return out

def flat(op):
    out = []
    for i in range(10):
        w0 = 0xdc000000 | op['opc'] << 18 | (R.random() < 0.3) << 17 | (R.random() < 0.4) << 16
        w1 = vgpr() << 24 | (R.random() < 0.1) << 23 | vgpr() << 8 | vgpr()
        out.append([w0, w1])
    return out

def soff():
    return R.choice([0, 1, 5, 101, 102, 106, 124, 126, 128, 129, 192, 193, 208, 240])

def mubuf(op):
    out = []
    for i in range(12):
        w0 = 0xe0000000 | op['opc'] << 18 | (R.random() < 0.3) << 17 | (R.random() < 0.1) << 16
        w0 |= (R.random() < 0.3) << 14 | (R.random() < 0.4) << 13 | (R.random() < 0.4) << 12
        w0 |= R.choice([0, 0, 4, 0xfff, R.getrandbits(12)])
        w1 = soff() << 24 | (R.random() < 0.1) << 23 | R.choice([0, 1, 2, 4, 24]) << 16 | vgpr() << 8 | vgpr()
        if op['name'] == 'buffer_store_lds_dword':  # only the lds form, no vaddr/vdata/tfe
            w0 = (w0 | 1 << 16) & ~0x3000
            w1 &= ~0x80ffff
        out.append([w0, w1])
    return out

def mtbuf(op):
    out = []
    for i in range(12):
        w0 = 0xe8000000 | R.randrange(8) << 23 | R.randrange(16) << 19 | op['opc'] << 15
        w0 |= (R.random() < 0.3) << 14 | (R.random() < 0.4) << 13 | (R.random() < 0.4) << 12
        w0 |= R.choice([0, 0, 4, 0xfff, R.getrandbits(12)])
        w1 = soff() << 24 | (R.random() < 0.1) << 23 | (R.random() < 0.3) << 22 | R.choice([0, 1, 4]) << 16
        w1 |= vgpr() << 8 | vgpr()
        out.append([w0, w1])
    return out

def mimg(op):
    out = []
    for i in range(24):
        w0 = 0xf0000000 | (R.random() < 0.3) << 25 | op['opc'] << 18 | (R.random() < 0.2) << 17
        w0 |= (R.random() < 0.2) << 16 | (R.random() < 0.2) << 15 | (R.random() < 0.3) << 14
        w0 |= (R.random() < 0.3) << 13 | (R.random() < 0.3) << 12 | R.choice([1, 1, 3, 7, 15, 5, 8, 2, 1, 3]) << 8
        if i % 3 == 0: w0 &= ~(0x2000000 | 0x38000 | 0x4000)  # no slc/lwe/tfe/r128/da
        w1 = R.choice([0, 1, 4]) << 21 | R.choice([0, 2, 4, 8]) << 16 | vgpr() << 8 | vgpr()
        if R.random() < 0.2: w1 |= 1 << 31
        out.append([w0, w1])
    if 'atomic' in op['name']:  # one plain form, so that no atomic depends on the draws above
        out.append([0xf0000000 | op['opc'] << 18 | (3 if 'cmpswap' in op['name'] else 1) << 8, 0x0201])
    return out

def exp(op):
    out = []
    for i in range(24):
        tgt = R.choice([0, 1, 7, 8, 9, 12, 13, 15, 16, 20, 31, 32, 35, 63])
        w0 = 0xc4000000 | (R.random() < 0.3) << 12 | (R.random() < 0.4) << 11 | (R.random() < 0.3) << 10
        w0 |= tgt << 4 | R.choice([0, 1, 3, 5, 15, 0xa])
        out.append([w0, vgpr() << 24 | vgpr() << 16 | vgpr() << 8 | vgpr()])
    return out

def candidates(ops):
    cands = []  # (op name, words)
    for op in ops:
        f = op['fmt']
        if f in ('SOP2', 'SOPK', 'SOP1', 'SOPC', 'SOPP'): ws = sop(op)
        elif f == 'SMEM': ws = smem(op)
        elif f in ('VOP1', 'VOP2', 'VOPC'):
            ws = vop_native(op)
            if 'GCN_A_E64' in op['attr']:
                ws += vop3(op, {'VOPC': 0, 'VOP2': 0x100, 'VOP1': 0x140}[f] + op['opc'])
        elif f == 'VOP3': ws = vop3(op, op['opc'])
        elif f == 'VINTRP':
            ws = vintrp(op) + vop3(op, 0x270 + op['opc'])
        elif f == 'DS': ws = ds(op)
        elif f == 'FLAT': ws = flat(op)
        elif f == 'MUBUF': ws = mubuf(op)
        elif f == 'MTBUF': ws = mtbuf(op)
        elif f == 'MIMG': ws = mimg(op)
        elif f == 'EXP': ws = exp(op)
        else: ws = []
        cands += [(op['name'], w) for w in ws]
    return cands

# forms the field generators rarely hit, written as assembly (assembled first)
EXTRA_ASM = """
v_mqsad_u32_u8 v[0:3], v[4:5], v6, v[8:11]
v_mqsad_u32_u8 v[10:13], s[4:5], 1, v[0:3] clamp
v_interp_p1ll_f16 v0, v1, attr0.x
v_interp_p1ll_f16 v5, v255, attr31.w
v_interp_p1lv_f16 v0, v1, attr1.y, v2
v_interp_p2_f16 v0, v1, attr2.z, v3
v_mbcnt_lo_u32_b32 v0, -1, 0
v_mbcnt_lo_u32_b32 v1, s4, v2
v_mbcnt_hi_u32_b32 v1, -1, v1
ds_nop
ds_append v1
ds_consume v2 offset:4 gds
image_atomic_sub v1, v2, s[0:7] dmask:0x1 unorm glc
image_atomic_smin v1, v2, s[0:7] dmask:0x1 glc
image_atomic_umin v1, v[2:3], s[4:11] dmask:0x1 unorm da
image_atomic_umax v[1:2], v2, s[0:7] dmask:0x3 unorm glc
image_atomic_or v1, v2, s[0:7] dmask:0x1 unorm glc slc
image_atomic_cmpswap v[4:5], v[2:3], s[8:15] dmask:0x3 unorm glc
image_atomic_add v4, v[2:5], s[8:15] dmask:0x1 unorm
s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2), 3
s_setreg_imm32_b32 hwreg(HW_REG_TRAPSTS), 0xdeadbeef
s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)
s_waitcnt vmcnt(15) lgkmcnt(15)
s_sendmsg sendmsg(MSG_INTERRUPT)
s_sendmsg sendmsg(MSG_GS, GS_OP_EMIT, 1)
s_sendmsg sendmsg(MSG_GS_DONE, GS_OP_NOP)
s_sendmsg sendmsg(MSG_SYSMSG, SYSMSG_OP_ECC_ERR_INTERRUPT)
s_sendmsghalt sendmsg(MSG_INTERRUPT)
s_getreg_b32 s0, hwreg(HW_REG_HW_ID, 0, 32)
s_getreg_b32 s1, hwreg(HW_REG_IB_STS, 3, 7)
s_setreg_b32 hwreg(HW_REG_MODE, 0, 8), s2
s_set_gpr_idx_on s0, gpr_idx(SRC0,DST)
s_set_gpr_idx_on 1, gpr_idx(SRC1,SRC2)
s_set_gpr_idx_mode gpr_idx(SRC0)
v_mov_b32 v0, 0x3e22f983
v_add_f16 v0, 0x3c00, v1
v_add_f16 v0, 0x1234, v1
v_fma_f64 v[0:1], v[2:3], v[4:5], 1.0
v_add_f64 v[0:1], -v[2:3], |s[4:5]| clamp div:2
v_mul_f64 v[0:1], v[2:3], 0.5 mul:4
v_min_f64 v[0:1], vcc, v[2:3]
v_max_f64 v[0:1], flat_scratch, v[4:5]
v_ldexp_f64 v[0:1], v[2:3], v4
v_mul_lo_u32 v0, v1, s2
v_mul_hi_u32 v0, 64, v2
v_mul_hi_i32 v0, -16, v2
v_bcnt_u32_b32 v0, v1, 0
v_bfm_b32 v0, 5, 7
v_lshlrev_b64 v[0:1], 2, v[0:1]
v_lshrrev_b64 v[0:1], s2, v[4:5]
v_ashrrev_i64 v[0:1], 63, v[4:5]
v_cvt_pknorm_i16_f32 v0, v1, v2
v_cvt_pknorm_u16_f32 v0, -v1, |v2|
v_cvt_pkrtz_f16_f32 v0, v1, s2
v_cvt_pk_u16_u32 v0, v1, v2
v_cvt_pk_i16_i32 v0, s1, v2
v_ldexp_f32 v0, v1, v2
v_writelane_b32 v0, m0, 63
v_readlane_b32 s0, v1, s2
v_readlane_b32 vcc_lo, v1, 0
v_trig_preop_f64 v[0:1], v[2:3], v4
v_div_scale_f32 v0, vcc, v1, v2, v3
v_div_scale_f64 v[0:1], s[4:5], v[2:3], v[4:5], v[6:7]
v_div_fmas_f32 v0, v1, v2, v3
v_mad_u64_u32 v[0:1], s[2:3], v2, v3, v[4:5]
v_add_u32_e64 v0, s[0:1], v1, v2
v_addc_u32_e64 v0, s[0:1], v1, v2, s[2:3]
v_cndmask_b32_e64 v0, v1, v2, s[4:5]
v_cmp_eq_f32_e64 s[0:1], -v1, |v2|
v_cmp_class_f32_e64 s[2:3], v1, 3
v_cmpx_lt_i32_e64 s[4:5], v1, 5
flat_atomic_cmpswap_x2 v[0:1], v[2:3], v[4:7] glc
flat_atomic_add v0, v[2:3], v4 glc slc
buffer_atomic_add v1, v2, s[4:7], 0 offen glc
buffer_load_dword v1, off, s[0:3], s5 offset:4095
buffer_store_dword v1, off, s[0:3], s5 offset:16 glc slc
buffer_load_dword v1, v[2:3], s[0:3], 0 idxen offen
buffer_load_dword v1, off, s[4:7], 0 lds
tbuffer_load_format_x v0, off, s[0:3], dfmt:1, nfmt:2, 0
tbuffer_store_format_xyzw v[0:3], v4, s[8:11], dfmt:14, nfmt:7, s2 idxen offset:12 glc slc
exp mrt0 v0, v1, v2, v3 done vm
exp pos0 v0, off, off, off
exp param5 v1, v2, off, off compr
exp null off, off, off, off
v_add_f32_sdwa v0, v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_0 src1_sel:DWORD
v_mov_b32_dpp v0, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
v_add_f32_dpp v0, -v1, |v2| row_shl:1 row_mask:0xa bank_mask:0x1 bound_ctrl:0
v_mov_b32_dpp v0, v1 row_bcast:15 row_mask:0xa bank_mask:0xf
v_mov_b32_dpp v0, v1 wave_ror:1 row_mask:0xf bank_mask:0xf
s_mov_b32 s0, 0x12345678
s_mov_b64 s[0:1], -1
s_mov_b64 tba, s[2:3]
s_mov_b64 tma, ttmp[4:5]
s_mov_b32 m0, vccz
s_mov_b32 s0, execz
s_mov_b32 s0, scc
s_movk_i32 s0, 0x8000
s_cmpk_eq_u32 s3, 0xffff
s_cbranch_vccz 65535
s_branch 3
s_endpgm
s_nop 7
"""

def hexb(ws):
    return ",".join("0x%02x" % ((w >> (8 * i)) & 0xff) for w in ws for i in range(4))

def run(cmd, text):
    return subprocess.run(cmd, input=text, capture_output=True, text=True)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--def', dest='deff', default='gcn/gcn3.def')
    ap.add_argument('--out', default='tests/isa/gfx803-corpus.s')
    a = ap.parse_args()
    ops = load_def(a.deff)
    cands = candidates(ops)
    ra = run(MC, EXTRA_ASM)
    if ra.returncode or 'error' in ra.stderr:
        sys.exit("gen-corpus: EXTRA_ASM does not assemble:\n" + ra.stderr)
    for m in re.finditer(r'; encoding: \[(.*)\]', ra.stdout):
        b = [int(x, 16) for x in m.group(1).split(',')]
        cands.append(('asm', [b[i] | b[i+1] << 8 | b[i+2] << 16 | b[i+3] << 24 for i in range(0, len(b), 4)]))
    order = {o['name']: i for i, o in enumerate(ops)}
    # 1. LLVM's disassembly of each candidate (one per line; keep exact-length decodes)
    r = run(MC + ["--disassemble"], "\n".join(hexb(w) for _, w in cands) + "\n")
    # every instruction LLVM prints is valid, with its canonical encoding (fields LLVM
    # ignores come back as zero); words LLVM rejects are skipped
    kept, seen = [], set()
    for l in r.stdout.splitlines():
        m = re.match(r'\s+(\S.*?)\s*; encoding: \[(.*)\]', l)
        # LLVM 14 also decodes MIMG words with bit 0 set as the gfx10 *_g16 ops: not gfx803
        if m and m.group(2) not in seen and '_g16 ' not in m.group(1):
            seen.add(m.group(2))
            kept.append((m.group(1), m.group(2)))
    # 2. assemble the texts back; keep those that reproduce the bytes
    r = run(MC, "\n".join(t for t, _ in kept) + "\n")
    bad_lines = {int(m.group(1)) for m in re.finditer(r'<stdin>:(\d+):\d+: error', r.stderr)}
    outs = [m.group(1) for m in re.finditer(r'; encoding: \[(.*)\]', r.stdout)]
    good, j = [], 0
    for i, (t, enc) in enumerate(kept):
        if i + 1 in bad_lines: continue
        if j < len(outs) and outs[j] == enc: good.append((t, enc))
        j += 1
    names = {o['name'] for o in ops}
    covered = set()
    for t, _ in good:
        mn = t.split()[0]
        base = re.sub(r'_(e32|e64|sdwa|dpp)$', '', mn)
        covered.add(base if base in names else mn)
    missing = [o['name'] for o in ops if o['name'] not in covered]
    good.sort(key=lambda g: order.get(re.sub(r'_(e32|e64|sdwa|dpp)$', '', g[0].split()[0]), 1 << 30))
    with open(a.out, 'w') as f:
        f.write("; gfx803 opcode corpus: generated by tests/isa/gen-corpus.py from gcn/gcn3.def (do not edit).\n")
        f.write("; Each line is LLVM 14's disassembly of the encoding shown, and assembles back to it.\n")
        f.write("; %d instructions, %d of %d table ops.\n" % (len(good), len(names & covered), len(ops)))
        if missing: f.write("; table ops without a corpus line: %s\n" % " ".join(missing))
        for t, enc in good:
            f.write("%s ; encoding: [%s]\n" % (t, enc))
    print("gen-corpus: %d candidates, %d decoded by llvm, %d round-trip; %d/%d ops covered; missing: %s" %
          (len(cands), len(kept), len(good), len(names & covered), len(ops), " ".join(missing) or "none"), file=sys.stderr)

if __name__ == '__main__':
    main()
