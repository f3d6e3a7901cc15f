import subprocess, re, json
def b(w): return ",".join("0x%02x"%((w>>(8*i))&0xff) for i in range(4))
d=json.load(open('enum.json'))
extra = {'SOPK':[(0x14,[0xB0000000|(0x14<<23), 0x1234]), (0x15,[0xB0000000|(0x15<<23), 0x1234])],
 'VOP2':[(o,[(o<<25)|0x100, 0x3f800000]) for o in (0x17,0x18,0x24,0x25)],
 'SMEM':[(o,[0xC0000000|(o<<18)|(1<<17), 0]) for o in range(0x20,0x28)]+[(o,[0xC0000000|(o<<18), 0]) for o in range(0x20,0x28)],
}
for f,lst in extra.items():
    lines=[",".join(b(w) for w in ws) for o,ws in lst]
    r = subprocess.run(["llvm-mc","--disassemble","-arch=amdgcn","-mcpu=gfx803","-show-encoding"],input="\n".join(lines)+"\n",capture_output=True,text=True)
    enc={}
    for l in r.stdout.splitlines():
        m = re.match(r'\s+(\S.*?)\s*; encoding: \[(.*)\]', l)
        if m: enc.setdefault(m.group(2), m.group(1))
    for o,ws in lst:
        k=",".join(b(w) for w in ws)
        if k in enc and str(o) not in d[f]: d[f][str(o)]=enc[k]; print(f,o,enc[k])
json.dump(d, open("enum.json","w"), indent=0)
