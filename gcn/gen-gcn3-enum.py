#!/usr/bin/env python3
"""Enumerate every opcode number of every gfx803 encoding through LLVM's
disassembler (llvm-mc 14) and write enum.json ({FMT: {opc: "text"}}), the input
of gen-gcn3-def.py. Opcodes that only disassemble with a literal or another
operand form are retried with those forms (EXTRA: literals, glc, gds, lds). Also
lists the VOP1/VOP2/VOPC opcodes that have SDWA and DPP forms (keys "SDWA", "DPP").
gcn3-llvm-enum.json is the committed output (written here as ./enum.json); then
gen-gcn3-def.py turns it into gcn3.def."""
import json, re, subprocess, sys

def b(w):
    return ",".join("0x%02x" % ((w >> (8 * i)) & 0xff) for i in range(4))

FMTS = {
    'SOP2': (range(0x60), lambda o: [0x80000000 | (o << 23)]),
    'SOPK': (range(0x1d), lambda o: [0xB0000000 | (o << 23)]),
    'SOP1': (range(256), lambda o: [0xBE800000 | (o << 8)]),
    'SOPC': (range(128), lambda o: [0xBF000000 | (o << 16)]),
    'SOPP': (range(128), lambda o: [0xBF800000 | (o << 16)]),
    'SMEM': (range(256), lambda o: [0xC0000000 | (o << 18) | (1 << 17), 0]),
    'VOP2': (range(0x3e), lambda o: [(o << 25) | 0x100]),
    'VOP1': (range(256), lambda o: [0x7E000000 | (o << 9) | 0x100]),
    'VOPC': (range(256), lambda o: [0x7C000000 | (o << 17) | 0x100]),
    'VOP3': (range(1024), lambda o: [0xD0000000 | (o << 16), 0]),
    'VINTRP': (range(4), lambda o: [0xD4000000 | (o << 16)]),
    'DS': (range(256), lambda o: [0xD8000000 | (o << 17), 0]),
    'MUBUF': (range(128), lambda o: [0xE0000000 | (o << 18), 0]),
    'MTBUF': (range(16), lambda o: [0xE8000000 | (o << 15), 0]),
    'FLAT': (range(128), lambda o: [0xDC000000 | (o << 18), 0]),
    'MIMG': (range(128), lambda o: [0xF0000000 | (o << 18), 0]),
}
# second chance: forms with a literal (s_*k, v_madmk/madak...) or imm/glc bits
EXTRA = {
    'SOPK': [(o, [0xB0000000 | (o << 23), 0x1234]) for o in (0x14, 0x15)],
    'VOP2': [(o, [(o << 25) | 0x100, 0x3f800000]) for o in (0x17, 0x18, 0x24, 0x25)],
    'SMEM': [(o, [0xC0000000 | (o << 18) | (1 << 17), 0]) for o in range(0x20, 0x28)]
          + [(o, [0xC0000000 | (o << 18), 0]) for o in range(0x20, 0x28)],
    # gds=1: ds_gws_*, ds_ordered_count only exist in the GDS form
    'DS': [(o, [0xD8000000 | (o << 17) | (1 << 16), 0]) for o in range(256)],
    # lds=1: buffer_store_lds_dword only exists in the LDS form
    'MUBUF': [(o, [0xE0000000 | (o << 18) | (1 << 16), 0]) for o in range(128)],
}
# SDWA (src0 = 0xf9) and DPP (src0 = 0xfa) forms of VOP1/VOP2/VOPC: selects DWORD,
# quad_perm identity, all rows/banks; an opcode has the form when LLVM decodes it
BASE = {'VOP2': lambda o, s: (o << 25) | s, 'VOP1': lambda o, s: 0x7E000000 | (o << 9) | s,
        'VOPC': lambda o, s: 0x7C000000 | (o << 17) | s}
FORMS = {'SDWA': (0xf9, [0x06060600, 0x00060600, 0x06060000]), 'DPP': (0xfa, [0xff00e400])}

def disassemble(cands):
    """cands: [(opc, words)] -> {opc: text} for the words LLVM decodes exactly."""
    r = subprocess.run(["llvm-mc", "--disassemble", "-arch=amdgcn", "-mcpu=gfx803", "-show-encoding"],
                       input="\n".join(",".join(b(w) for w in ws) for _, ws in cands) + "\n",
                       capture_output=True, text=True)
    enc = {}
    for l in r.stdout.splitlines():
        m = re.match(r'\s+(\S.*?)\s*; encoding: \[(.*)\]', l)
        if m:
            enc.setdefault(m.group(2), m.group(1))
    res = {}
    for o, ws in cands:
        k = ",".join(b(w) for w in ws)
        if k in enc and o not in res:
            res[o] = enc[k]
    return res

out = {}
for f, (rng, mk) in FMTS.items():
    res = disassemble([(o, mk(o)) for o in rng])
    for o, txt in disassemble(EXTRA.get(f, [])).items():
        res.setdefault(o, txt)
    out[f] = {str(o): t for o, t in sorted(res.items())}
    print(f, len(res), file=sys.stderr)
for form, (src, w1s) in FORMS.items():
    out[form] = {}
    for f, mk in BASE.items():
        rng = FMTS[f][0]
        res = disassemble([(o, [mk(o, src), w1]) for o in rng for w1 in w1s])
        out[form][f] = sorted(res)
        print(form, f, len(res), file=sys.stderr)
json.dump(out, open("enum.json", "w"), indent=0)
