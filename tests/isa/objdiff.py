#!/usr/bin/env python3
"""Differential test of gcn3-objdump against llvm-objdump (LLVM 14), gfx803.

  objdiff.py corpus OBJDUMP CORPUS.s WORKDIR [--min PCT]
      Assemble the opcode corpus (tests/isa/gfx803-corpus.s, one label per
      instruction) with llvm-mc into an ELF object, disassemble it with both
      tools and compare the instruction text of every line.
  objdiff.py random OBJDUMP WORKDIR [--per-class N] [--seed S] [--min PCT]
      Random instruction words of every encoding class (the class's fixed
      bits set, every other bit random, then two random words that serve as
      literal / second dword), one symbol per case; compares the first
      instruction of every case. Agreement is reported over all words and over
      the words LLVM decodes ("valid"); --min applies to the valid ones.

Whitespace and "//" comments are ignored. Exit 1 when agreement is below --min
(corpus default 100, random default 99.5) or when gcn3-objdump fails/crashes.
"""
import argparse, os, random, re, subprocess, sys

MC = ["llvm-mc", "-arch=amdgcn", "-mcpu=gfx803", "-filetype=obj"]
LLVM_OBJDUMP = ["llvm-objdump", "-d", "--mcpu=gfx803"]

def parse(text):
    """objdump output -> [(symbol, [instruction texts])]"""
    out, cur = [], None
    for l in text.splitlines():
        m = re.match(r'^[0-9a-f]+ <(.*)>:$', l)
        if m:
            cur = (m.group(1), [])
            out.append(cur)
            continue
        if cur is None or not l.startswith('\t'):
            continue
        t = re.sub(r'\s*//.*$', '', l).strip()
        t = re.sub(r'\s+', ' ', t)
        if t:
            cur[1].append(t)
    return out

def disassemble(objdump, obj):
    a = subprocess.run(LLVM_OBJDUMP + [obj], capture_output=True, text=True)
    if a.returncode:
        sys.exit("objdiff: llvm-objdump failed: " + a.stderr.strip())
    b = subprocess.run([objdump, obj], capture_output=True, text=True)
    if b.returncode:
        print("objdiff: gcn3-objdump exited with %d: %s" % (b.returncode, b.stderr.strip()[:300]))
        sys.exit(1)
    return parse(a.stdout), parse(b.stdout)

def assemble(src, obj):
    r = subprocess.run(MC + ["-o", obj, src], capture_output=True, text=True)
    if r.returncode:
        sys.exit("objdiff: llvm-mc failed on %s: %s" % (src, r.stderr.strip()[:500]))

def corpus(a):
    lines = [l.split(';')[0].strip() for l in open(a.corpus)]
    lines = [l for l in lines if l]
    src = os.path.join(a.workdir, "corpus.s")
    with open(src, "w") as f:
        f.write(".text\n")
        for i, l in enumerate(lines):
            f.write("i%d:\n\t%s\n" % (i, l))
    obj = os.path.join(a.workdir, "corpus.o")
    assemble(src, obj)
    L, O = disassemble(a.objdump, obj)
    if len(L) != len(lines) or len(O) != len(L):
        print("objdiff corpus: symbol counts differ: corpus %d, llvm %d, ours %d" % (len(lines), len(L), len(O)))
        return 1
    bad = 0
    for (ls, li), (os_, oi) in zip(L, O):
        if ls != os_ or li != oi:
            if bad < a.show:
                print("  MISMATCH %s\n    llvm: %s\n    ours: %s" % (ls, " | ".join(li), " | ".join(oi)))
            bad += 1
    n = len(L)
    pct = 100.0 * (n - bad) / n
    print("objdiff corpus: %d instructions, %d agree, %d differ: %.3f%% agreement" % (n, n - bad, bad, pct))
    return 0 if pct >= a.min else 1

# encoding class -> (fixed bits, opcode field (shift, count) or None)
def classes(R):
    def rnd(bits): return R.getrandbits(bits)
    return {
        'SOP2':   lambda: 0x80000000 | R.randrange(0x60) << 23 | rnd(23),
        'SOPK':   lambda: 0xb0000000 | R.randrange(0x1d) << 23 | rnd(23),
        'SOP1':   lambda: 0xbe800000 | rnd(23),
        'SOPC':   lambda: 0xbf000000 | rnd(23),
        'SOPP':   lambda: 0xbf800000 | rnd(23),
        'SMEM':   lambda: 0xc0000000 | rnd(26),
        'VOP2':   lambda: R.randrange(0x3e) << 25 | rnd(25),
        'VOP1':   lambda: 0x7e000000 | rnd(25),
        'VOPC':   lambda: 0x7c000000 | rnd(25),
        'VOP-lit': lambda: [R.randrange(0x3e) << 25, 0x7e000000, 0x7c000000][R.randrange(3)] | (rnd(25) & ~0x1ff) | 0xff,
        'SDWA':   lambda: [R.randrange(0x3e) << 25, 0x7e000000, 0x7c000000][R.randrange(3)] | (rnd(25) & ~0x1ff) | 0xf9,
        'DPP':    lambda: [R.randrange(0x3e) << 25, 0x7e000000, 0x7c000000][R.randrange(3)] | (rnd(25) & ~0x1ff) | 0xfa,
        'VOP3':   lambda: 0xd0000000 | rnd(26),
        'VINTRP': lambda: 0xd4000000 | rnd(26),
        'DS':     lambda: 0xd8000000 | rnd(26),
        'FLAT':   lambda: 0xdc000000 | rnd(26),
        'MUBUF':  lambda: 0xe0000000 | rnd(26),
        'MTBUF':  lambda: 0xe8000000 | rnd(26),
        'MIMG':   lambda: 0xf0000000 | rnd(26),
        'EXP':    lambda: 0xc4000000 | rnd(26),
    }

def rand(a):
    R = random.Random(a.seed)
    cls = classes(R)
    cases = []
    for name, gen in cls.items():
        for i in range(a.per_class):
            cases.append((name, [gen(), R.getrandbits(32), R.getrandbits(32)]))
    def build(idx, tag):
        src = os.path.join(a.workdir, "random-%s.s" % tag)
        with open(src, "w") as f:
            f.write(".text\n")
            for i in idx:
                ws = cases[i][1]
                f.write("r%d:\n\t.long 0x%08x, 0x%08x, 0x%08x\n" % (i, ws[0], ws[1], ws[2]))
        obj = os.path.join(a.workdir, "random-%s.o" % tag)
        assemble(src, obj)
        return obj
    # both tools read the same objects (branch targets print as the chunk's labels)
    llvm, ours, crashed, failed = {}, {}, [], []
    def run_ours(obj):
        b = subprocess.run([a.objdump, obj], capture_output=True, text=True)
        if b.returncode:
            failed.append("gcn3-objdump exited with %d: %s" % (b.returncode, b.stderr.strip()[:300]))
        ours.update({sym: ins for sym, ins in parse(b.stdout)})
    def run_llvm(idx):
        if not idx: return
        obj = build(idx, "chunk")
        r = subprocess.run(LLVM_OBJDUMP + [obj], capture_output=True, text=True)
        if r.returncode == 0:
            llvm.update({sym: ins for sym, ins in parse(r.stdout)})
            run_ours(obj)
        elif len(idx) == 1:
            crashed.append(idx[0])
            run_ours(obj)
        elif len(idx) > 64:
            for k in range(0, len(idx), 64): run_llvm(idx[k:k + 64])
        else:
            run_llvm(idx[:len(idx) // 2]); run_llvm(idx[len(idx) // 2:])
    # known crash: an SDWA select of 7 (reserved) aborts LLVM 14's printer
    def sel7(ws):
        return (ws[0] & 0x1ff) == 0xf9 and 7 in ((ws[1] >> 8) & 7, (ws[1] >> 16) & 7, (ws[1] >> 24) & 7)
    todo = [i for i in range(len(cases)) if not sel7(cases[i][1])]
    crashed += [i for i in range(len(cases)) if sel7(cases[i][1])]
    run_ours(build(crashed, "sel7"))
    for k in range(0, len(todo), 2000):
        run_llvm(todo[k:k + 2000])
    if crashed:
        print("objdiff random: llvm-objdump crashes on %d words (left out): %s" %
              (len(crashed), " ".join("%08x:%08x" % tuple(cases[i][1][:2]) for i in crashed[:8])))
    if failed:
        print("objdiff random: " + failed[0])
        return 1
    L = [("r%d" % i, llvm.get("r%d" % i)) for i in range(len(cases))]
    O = [("r%d" % i, ours.get("r%d" % i, [])) for i in range(len(cases))]
    st = {}
    shown = 0
    for (name, ws), (ls, li), (os_, oi) in zip(cases, L, O):
        s = st.setdefault(name, [0, 0, 0, 0])  # all, agree, llvm-valid, agree among valid
        if li is None: continue  # llvm-objdump crashed on it
        l0 = li[0] if li else ''
        o0 = oi[0] if oi else ''
        valid = not l0.startswith('.long') and l0 != '...'
        s[0] += 1
        s[1] += l0 == o0
        s[2] += valid
        s[3] += valid and l0 == o0
        if l0 != o0 and shown < a.show:
            shown += 1
            print("  MISMATCH %-7s %08x %08x %08x\n    llvm: %s\n    ours: %s" % (name, ws[0], ws[1], ws[2], l0, o0))
    tot = [sum(v[k] for v in st.values()) for k in range(4)]
    for name, v in st.items():
        print("  %-8s %5d words %6.2f%% agree; %5d valid for llvm, %6.2f%% agree" %
              (name, v[0], 100.0 * v[1] / v[0], v[2], 100.0 * v[3] / max(v[2], 1)))
    pct_all = 100.0 * tot[1] / tot[0]
    pct_valid = 100.0 * tot[3] / max(tot[2], 1)
    print("objdiff random: %d words, %.3f%% agreement; %d valid for llvm, %.3f%% agreement" %
          (tot[0], pct_all, tot[2], pct_valid))
    return 0 if pct_valid >= a.min else 1

def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest='mode', required=True)
    c = sub.add_parser('corpus')
    c.add_argument('objdump'); c.add_argument('corpus'); c.add_argument('workdir')
    c.add_argument('--min', type=float, default=100.0)
    r = sub.add_parser('random')
    r.add_argument('objdump'); r.add_argument('workdir')
    r.add_argument('--per-class', type=int, default=3000)
    r.add_argument('--seed', type=int, default=803)
    r.add_argument('--min', type=float, default=99.5)
    for p in (c, r):
        p.add_argument('--show', type=int, default=20)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    sys.exit(corpus(a) if a.mode == 'corpus' else rand(a))

if __name__ == '__main__':
    main()
