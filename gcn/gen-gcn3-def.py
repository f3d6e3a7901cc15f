#!/usr/bin/env python3
"""Generate gcn/gcn3.def from the opcode enumeration of llvm-mc (LLVM 14) that
gen-gcn3-enum.py writes (gcn/gcn3-llvm-enum.json: every opcode number of every
gfx803 encoding, with zero operand fields or, for opcodes that only exist with a
bit set, the gds / lds / literal form; plus the VOP1/VOP2/VOPC opcodes that have
SDWA and DPP forms).  gcn3.def is committed and is the single source of truth;
change it by changing this generator (or the enumeration) and regenerating:
    python3 gcn/gen-gcn3-def.py gcn/gcn3-llvm-enum.json > gcn/gcn3.def
The output depends only on the json (no sets iterated, no randomness). The last
four columns (AOP, ELEM, SEG, VCLS) are derived below from the mnemonic once, here,
so that no C code guesses a property from a name at run time.
Usage: gen-gcn3-def.py enum.json > gcn3.def"""
import json, re, sys
d = json.load(open(sys.argv[1]))
d['VOP1'].setdefault('0', 'v_nop'); d['VOP1'].setdefault('53', 'v_clrexcp')
d['MUBUF'].pop('113', None)  # LLVM 14 also decodes 0x71 as buffer_wbinvl1 (gfx7 number): keep 0x3e
VOP3B = {'v_add_u32','v_sub_u32','v_subrev_u32','v_addc_u32','v_subb_u32','v_subbrev_u32',
         'v_div_scale_f32','v_div_scale_f64','v_mad_u64_u32','v_mad_i64_i32'}
def w(tok):
    tok = tok.strip()
    m = re.match(r'[sv]\[(\d+):(\d+)\]', tok)
    if m: return int(m.group(2)) - int(m.group(1)) + 1
    if tok == 'vcc': return 2
    return 1
def split(text):
    p = text.split(None, 1)
    return p[0], ([] if len(p) < 2 else [t.strip() for t in p[1].split(',')])
def membytes(n):
    for k, v in (('dwordx16',64),('dwordx8',32),('dwordx4',16),('dwordx3',12),('dwordx2',8),('dword',4),
                 ('ubyte',1),('sbyte',1),('byte',1),('ushort',2),('sshort',2),('short',2)):
        if k in n: return v
    return 0
def dsbytes(n, ops):
    if n.startswith('ds_read') or n.startswith('ds_write') or n.startswith('ds_wrxchg'):
        m = re.search(r'_(b|i|u)(8|16|32|64|96|128)$', n)
        b = int(m.group(2)) // 8 if m else 4
        if '2' in n.split('_')[1]: b *= 2
        return b
    if n in ('ds_nop','ds_swizzle_b32','ds_permute_b32','ds_bpermute_b32','ds_consume','ds_append'): return 4 if 'perm' in n or 'swiz' in n else 0
    if n in GDS_ONLY: return 0
    return 8 if re.search(r'64$', n) else 4
rows = []
def add(name, fmt, opc, unit, flags, mem, dw, sw, attr):
    sw = (list(sw) + [0,0,0])[:3]
    rows.append((name, fmt, opc, unit, '|'.join(flags) or '0', mem, dw, sw, '|'.join(attr) or '0'))
# DS opcodes that only exist with gds=1 (global wave sync and ordered count, GCN3 ISA
# manual Sec. 9.x "GWS"): no LDS access; they name data0 in the ADDR field (LLVM 14 VI)
GDS_ONLY = ('ds_gws_init','ds_gws_sema_v','ds_gws_sema_br','ds_gws_sema_p','ds_gws_barrier',
            'ds_gws_sema_release_all','ds_ordered_count')
FORMS = {f: {k: set(v) for k, v in d.get(f, {}).items()} for f in ('SDWA', 'DPP')}
# LLVM 14 also decodes a DPP v_nop (src0 0xfa, v0); the decoder treats v_nop as a
# fixed word (gcn_decode.c operands_valid), so that form stays out of the table
FORMS['DPP'].get('VOP1', set()).discard(0)
TRANS = ('_exp_','_log_','_rcp_','_rsq_','_sqrt_','_sin_','_cos_')
vop3 = {int(k): v for k, v in d['VOP3'].items()}
seen3 = set()
for fmt in ('SOP2','SOPK','SOP1','SOPC','SOPP','SMEM','VOP2','VOP1','VOPC','VOP3','VINTRP','DS','MUBUF','MTBUF','FLAT','MIMG'):
    for opc in sorted(int(k) for k in d[fmt]):
        name, ops = split(d[fmt][str(opc)])
        name = re.sub(r'_e(32|64)$', '', name)
        fl, attr, unit, mem, dw, sw = [], [], 'SALU', 0, 0, [0,0,0]
        if fmt in ('SOP2','SOP1','SOPK','SOPC','SOPP'):
            ws = [w(o) for o in ops if re.match(r'[sv]', o)]
            if fmt == 'SOP2':
                if name in ('s_cbranch_g_fork','s_rfe_restore_b64'): sw = ws + [0]
                else: dw, sw = ws[0], ws[1:] + [0]
            elif fmt == 'SOP1':
                if name in ('s_setpc_b64','s_rfe_b64','s_cbranch_join','s_set_gpr_idx_idx'): sw = [ws[0],0,0]
                elif name == 's_getpc_b64': dw = 2
                else: dw, sw = ws[0], [ws[1],0,0]
            elif fmt == 'SOPC': sw = ws[:2] + [0]
            elif fmt == 'SOPK':
                dw = 1
            if name.startswith('s_cbranch_') or name == 's_branch':
                unit = 'BRANCH'; fl.append('GCN_IF_BR_JUMP' if name == 's_branch' else 'GCN_IF_BR_COND')
                if name in ('s_cbranch_g_fork','s_cbranch_join','s_cbranch_i_fork'): fl = []
            if name in ('s_setpc_b64','s_swappc_b64'): unit = 'BRANCH'; fl.append('GCN_IF_BR_INDIRECT')
            if fmt == 'SOPP' and unit != 'BRANCH': unit = 'SPECIAL'
            if name == 's_endpgm': fl.append('GCN_IF_ENDPGM')
            if name == 's_barrier': fl.append('GCN_IF_BARRIER')
            if name == 's_waitcnt': fl.append('GCN_IF_WAITCNT')
            if name == 's_sleep': fl.append('GCN_IF_SLEEP')
            if 'saveexec' in name: fl.append('GCN_IF_WRITES_EXEC')
        elif fmt == 'SMEM':
            unit = 'SMEM'; mem = membytes(name)
            if 'load' in name: fl.append('GCN_IF_LOAD'); dw = mem // 4
            elif 'store' in name: fl.append('GCN_IF_STORE'); sw = [mem // 4, 0, 0]
            elif name in ('s_memtime','s_memrealtime'): dw = 2
        elif fmt in ('VOP1','VOP2','VOPC','VOP3','VINTRP'):
            unit = 'VALU'
            base = {'VOPC':0,'VOP2':0x100,'VOP1':0x140}.get(fmt)
            t3 = None
            if base is not None and base + opc in vop3:
                attr.append('GCN_A_E64'); seen3.add(base + opc); t3 = vop3[base + opc]
            if fmt == 'VOP3':
                if opc in seen3 or name in ('v_interp_p1_f32','v_interp_p2_f32','v_interp_mov_f32'): continue
                t3 = d[fmt][str(opc)]
            if t3 is not None:
                _, o3 = split(t3)
                ws = [w(o) for o in o3]
                if fmt == 'VOPC': dw, sw = 2, ws[1:3] + [0]
                elif name in VOP3B: attr.append('GCN_A_VOP3B'); dw, sw = ws[0], (ws[2:] + [0,0,0])[:3]
                elif ws: dw, sw = ws[0], (ws[1:] + [0,0,0])[:3]
            else:
                ws = [w(o) for o in ops]
                if name in ('v_madmk_f32','v_madak_f32','v_madmk_f16','v_madak_f16'): dw, sw = 1, [1,1,1]
                elif ws: dw, sw = ws[0], (ws[1:] + [0,0,0])[:3]
            if name == 'v_readfirstlane_b32' or name == 'v_readlane_b32': pass
            if fmt == 'VINTRP': attr.append('GCN_A_E64')
            if fmt == 'VOPC' and 'cmpx' in name: fl.append('GCN_IF_WRITES_EXEC')
            if 'f64' in name: fl.append('GCN_IF_F64')
            if any(t in name + '_' for t in TRANS): fl.append('GCN_IF_TRANS')
            if name in VOP3B and 'GCN_A_VOP3B' not in attr: attr.append('GCN_A_VOP3B')
            for form in ('SDWA', 'DPP'):
                if opc in FORMS[form].get(fmt, ()): attr.append('GCN_A_' + form)
        elif fmt == 'DS':
            unit = 'LDS'; mem = dsbytes(name, ops)
            if name in GDS_ONLY:
                fl.append('GCN_IF_GDS')
                ws = [w(o) for o in ops if o != 'gds']
                dw = ws[0] if name == 'ds_ordered_count' else 0
                if name == 'ds_ordered_count': ws = ws[1:]
                add(name, fmt, opc, unit, fl, 0, dw, ws, attr)
                continue
            if 'src2' in name or name in ('ds_nop','ds_consume','ds_append','ds_swizzle_b32','ds_permute_b32','ds_bpermute_b32'): pass
            elif name.startswith('ds_read'): fl.append('GCN_IF_LOAD')
            elif name.startswith('ds_write'): fl.append('GCN_IF_STORE')
            else:
                fl += ['GCN_IF_LOAD','GCN_IF_STORE','GCN_IF_ATOMIC']
                if '_rtn_' in name: fl.append('GCN_IF_ATOMIC_RTN')
            ws = [w(o) for o in ops]
            rtn = name.startswith('ds_read') or '_rtn_' in name or name in ('ds_swizzle_b32','ds_permute_b32','ds_bpermute_b32','ds_consume','ds_append')
            if rtn and ws: dw, ws = ws[0], ws[1:]
            sw = (ws + [0,0,0])[:3]   # addr, data0, data1
        elif fmt in ('MUBUF','MTBUF','FLAT','MIMG'):
            unit = 'VMEM'; mem = membytes(name)
            nregs = None
            if 'format' in name or fmt == 'MTBUF':
                nc = {'x':1,'xy':2,'xyz':3,'xyzw':4}[name.split('_')[-1]]; mem = nc * (2 if 'd16' in name else 4)
                nregs = nc  # gfx803 has unpacked D16: one VGPR per component
            if fmt == 'FLAT': fl.append('GCN_IF_FLAT')
            if 'atomic' in name:
                mem = 8 if name.endswith('_x2') else 4
                fl += ['GCN_IF_LOAD','GCN_IF_STORE','GCN_IF_ATOMIC']
            elif name == 'buffer_store_lds_dword': fl.append('GCN_IF_STORE'); mem = 4  # LDS -> memory, no VGPR
            elif 'load' in name: fl.append('GCN_IF_LOAD'); dw = nregs or (mem + 3) // 4
            elif 'store' in name: fl.append('GCN_IF_STORE'); sw = [0, nregs or (mem + 3) // 4, 0]
            elif 'wbinvl1' in name: fl.append('GCN_IF_MEM_FENCE')
            if 'atomic' in name:
                n = 2 if name.endswith('_x2') else 1
                sw = [0, n * (2 if 'cmpswap' in name else 1), 0]; dw = n
            if fmt == 'MIMG': sw[0] = w(ops[1])  # vaddr as LLVM 14 disassembles it
        add(name, fmt, opc, unit, fl, mem, dw, sw, attr)
add('exp', 'EXP', 0, 'EXPORT', [], 0, 0, [0,0,0], [])
names = [r[0] for r in rows]
dup = {n for n in names if names.count(n) > 1}
print('/* gcn3.def - THE instruction table of GCN3 (gfx803): every opcode once (STYLE.md #1).')
print(' *')
print(' * Opcode numbers: LLVM 14 AMDGPU backend (VI encodings), enumerated by gen-gcn3-enum.py')
print(' * with `llvm-mc --disassemble -mcpu=gfx803` over every opcode of every format (and the')
print(' * gds / lds / SDWA / DPP forms).  Fields (each named by its wrapper macro):')
print(' *   name           mnemonic (enum GCN_OP_<name>, string "<name>"; VOP1/2/C ones without _e32/_e64)')
print(' *   FMT(f)         native encoding: SOP2 SOPK SOP1 SOPC SOPP SMEM VOP2 VOP1 VOPC VOP3 VINTRP DS MUBUF MTBUF FLAT MIMG')
print(' *   OPC(n)         opcode field in that encoding (VOP3 form of VOPC/VOP2/VOP1: 0x000/0x100/0x140 + n)')
print(' *   UNIT(u)        gcn_unit timing class')
print(' *   FLAGS(f)       static GCN_IF_* flags (decode adds glc-dependent ATOMIC_RTN, dst-dependent WRITES_EXEC)')
print(' *   MEM(n)         bytes per lane (VMEM/DS) or in total (SMEM)')
print(' *   DW(n)          destination width in dwords (VMEM/DS: vdst)')
print(' *   SW(a,b,c)      source widths in dwords (DS: addr,data0,data1; VMEM: -,vdata,-; MIMG: vaddr as LLVM 14')
print(' *                  disassembles it,vdata,-). D16 formats: one VGPR per component (gfx803 has unpacked D16)')
print(' *                  GDS-only DS ops (GCN_IF_GDS): SW(data0,0,0), data0 encoded in the ADDR field')
print(' *   ATTR(a)        decoder attributes: GCN_A_E64 has a VOP3 form, GCN_A_VOP3B carry/sdst form,')
print(' *                  GCN_A_SDWA / GCN_A_DPP has SDWA / DPP forms (those LLVM 14 accepts for gfx803)')
print(' *   AOP(a)         atomic operation (gcn_atomic_op, GCN_AT_<a>): NONE unless FLAGS has GCN_IF_ATOMIC')
print(' *   ELEM(b,n,s)    n elements of b bytes per lane (ds_read2/write2/wrxchg2: 2; SMEM: 1 of MEM bytes);')
print(' *                  s: DS offset unit in elements (64 for the st64 forms, else 1)')
print(' *   SEG(s)         memory addressed (gcn_seg, GCN_SEG_<s>): SCALAR GLOBAL FLAT IMAGE LDS XLANE LDSCTR GDS NONE')
print(' *   VCLS(c)        VALU class (gcn_vcls, GCN_VCLS_<c>): INT F16 F32 F64 TRANS CMP CVT LANE, NONE off the VALU')
print(' *')
print(' * GENERATED by gcn/gen-gcn3-def.py from gcn/gcn3-llvm-enum.json: edit those, not this file.')
print(' */')
# ---- the derived columns: properties the replay and the tools used to guess
# from mnemonics at run time, decided here once and reviewable in the table ----
ATOMIC_PREFIX = [('cmpswap','CMPSWAP'),('cmpst','CMPSWAP'),('swap','SWAP'),('wrxchg','SWAP'),('add_f','FADD'),
    ('add','ADD'),('rsub','RSUB'),('sub','SUB'),('smin','SMIN'),('min_i','SMIN'),('umin','UMIN'),('min_u','UMIN'),
    ('min_f','FMIN'),('fmin','FMIN'),('smax','SMAX'),('max_i','SMAX'),('umax','UMAX'),('max_u','UMAX'),
    ('max_f','FMAX'),('fmax','FMAX'),('and','AND'),('or','OR'),('xor','XOR'),('inc','INC'),('dec','DEC')]
def aop(name, flags):
    """Atomic operation (gcn_atomic_op without GCN_AT_) of an op with GCN_IF_ATOMIC: the
    family after 'atomic_' (FLAT/MUBUF/MIMG) or 'ds_' (DS) without '_rtn', longest prefix
    first; UNKNOWN for the DS ops that gcn_atomic_op has no arithmetic for (mskor, wrap,
    condxchg32)."""
    if 'GCN_IF_ATOMIC' not in flags.split('|'): return 'NONE'
    i = name.find('atomic_')
    rest = name[i + 7:] if i >= 0 else name[3:] if name.startswith('ds_') else None
    if rest is None: return 'NONE'
    rest = rest.replace('_rtn', '')   # ds_min_rtn_i32 is ds_min_i32 returning the old value
    for pre, op in ATOMIC_PREFIX:
        if rest.startswith(pre): return op
    return 'UNKNOWN'
def elem(name, fmt, mem, flags):
    """(bytes, count, offset scale) of the elements one lane moves: ds_read2/write2/wrxchg2 move
    two elements of mem/2 bytes at offset0/offset1 in units of the element size (x64 for the
    st64 forms); atomics one element of 4 or 8 bytes; other memory ops one
    element of mem bytes (SMEM: the whole access); (0, 0) when the op moves no memory."""
    if mem == 0: return (0, 0, 1)
    if fmt == 'DS' and re.match(r'ds_(read2|write2|wrxchg2)', name):
        return (mem // 2, 2, 64 if 'st64' in name else 1)
    return (mem, 1, 1)
def seg(name, fmt, flags):
    """Memory the op addresses: SCALAR (SMEM), GLOBAL (MUBUF/MTBUF: a buffer, or scratch at run
    time), FLAT (global, LDS or private: decided per lane at run time), IMAGE (MIMG), LDS (DS
    data ops, whose values the replay's LDS model checks), XLANE (DS cross-lane ops through the
    LDS crossbar: permute, bpermute, swizzle; no memory), LDSCTR (append/consume: an M0
    counter), GDS (global data share ops), NONE."""
    fl = flags.split('|')
    if fmt == 'SMEM': return 'SCALAR' if ({'GCN_IF_LOAD','GCN_IF_STORE'} & set(fl)) else 'NONE'
    if fmt in ('MUBUF','MTBUF'): return 'GLOBAL' if ({'GCN_IF_LOAD','GCN_IF_STORE'} & set(fl)) else 'NONE'
    if fmt == 'FLAT': return 'FLAT'
    if fmt == 'MIMG': return 'IMAGE'
    if fmt != 'DS': return 'NONE'
    if 'permute' in name or 'swizzle' in name: return 'XLANE'
    if 'append' in name or 'consume' in name: return 'LDSCTR'
    if 'gws' in name or 'ordered' in name: return 'GDS'
    if name == 'ds_nop': return 'NONE'
    return 'LDS'
def vcls(name, unit, flags):
    """VALU class (gcn3-trace's instruction mix): LANE (v_readlane/v_writelane/v_readfirstlane),
    TRANS (quarter-rate transcendental), CMP (v_cmp*/v_cmpx*), CVT, F64, F32, F16, INT; NONE for
    other units. First match in that order."""
    if unit != 'VALU': return 'NONE'
    fl = flags.split('|')
    if 'lane' in name: return 'LANE'
    if 'GCN_IF_TRANS' in fl: return 'TRANS'
    if name.startswith('v_cmp'): return 'CMP'
    if name.startswith('v_cvt'): return 'CVT'
    if 'GCN_IF_F64' in fl or '_f64' in name: return 'F64'
    if '_f32' in name: return 'F32'
    if '_f16' in name: return 'F16'
    return 'INT'
for r in rows:
    name = r[0] if r[0] not in dup else r[0] + '_' + r[1].lower() + '%d' % r[2]
    eb, ec, es = elem(r[0], r[1], r[5], r[4])
    print('GCN_OP(%-26s FMT(%s), OPC(0x%03x), UNIT(%s), FLAGS(%s), MEM(%d), DW(%d), SW(%d,%d,%d), ATTR(%s), '
          'AOP(%s), ELEM(%d,%d,%d), SEG(%s), VCLS(%s))' %
          (name + ',', r[1], r[2], r[3], r[4], r[5], r[6], r[7][0], r[7][1], r[7][2], r[8],
           aop(r[0], r[4]), eb, ec, es, seg(r[0], r[1], r[4]), vcls(r[0], r[3], r[4])))
