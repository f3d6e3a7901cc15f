import subprocess, re, json, sys
def b(w): return ",".join("0x%02x"%((w>>(8*i))&0xff) for i in range(4))
fmts = {
 'SOP2': (range(0x60), lambda o: [0x80000000|(o<<23)]),
 'SOPK': (range(0x1d), lambda o: [0xB0000000|(o<<23)]),
 'SOP1': (range(256), lambda o: [0xBE800000|(o<<8)]),
 'SOPC': (range(128), lambda o: [0xBF000000|(o<<16)]),
 'SOPP': (range(128), lambda o: [0xBF800000|(o<<16)]),
 'SMEM': (range(256), lambda o: [0xC0000000|(o<<18)|(1<<17), 0]),
 'VOP2': (range(0x3e), lambda o: [(o<<25)|0x100]),
 'VOP1': (range(256), lambda o: [0x7E000000|(o<<9)|0x100]),
 'VOPC': (range(256), lambda o: [0x7C000000|(o<<17)|0x100]),
 'VOP3': (range(1024), lambda o: [0xD0000000|(o<<16), 0]),
 'VINTRP': (range(4), lambda o: [0xD4000000|(o<<16)]),
 'DS': (range(256), lambda o: [0xD8000000|(o<<17), 0]),
 'MUBUF': (range(128), lambda o: [0xE0000000|(o<<18), 0]),
 'MTBUF': (range(16), lambda o: [0xE8000000|(o<<15), 0]),
 'FLAT': (range(128), lambda o: [0xDC000000|(o<<18), 0]),
 'MIMG': (range(128), lambda o: [0xF0000000|(o<<18), 0]),
}
out = {}
for f,(rng,mk) in fmts.items():
    cand = {}
    lines=[]
    for o in rng:
        ws = mk(o); cand[o]=ws
        lines.append(",".join(b(w) for w in ws))
    r = subprocess.run(["llvm-mc","--disassemble","-arch=amdgcn","-mcpu=gfx803","-show-encoding"],input="\n".join(lines)+"\n",capture_output=True,text=True)
    enc2txt = {}
    for l in r.stdout.splitlines():
        m = re.match(r'\s+(\S.*?)\s*; encoding: \[(.*)\]', l)
        if m: enc2txt.setdefault(m.group(2), m.group(1))
    res = {}
    for o,ws in cand.items():
        k = ",".join(b(w) for w in ws)
        if k in enc2txt: res[o]=enc2txt[k]
    out[f]=res
    print(f, len(res), file=sys.stderr)
json.dump(out, open("enum.json","w"), indent=0)
