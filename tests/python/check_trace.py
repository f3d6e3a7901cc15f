"""tests/python/check_trace.py TRACE GCN3_TRACE: the Python package's view of
TRACE (python/gcn3sim) equals gcn3-trace's (dump --json, stats --json):
header, every event, every kernel's launch and counts, and every wave of
every workgroup (branches, indirect targets, EXEC changes, each memory op's
flags, lane mask, per-lane addresses, load and store bytes, awaits).
Prints one summary line; exits 1 with the first difference."""
import json
import subprocess
import sys

import gcn3sim

path, tool = sys.argv[1], sys.argv[2]


def run(*args):
    return json.loads(subprocess.run([tool, *args, path], check=True, capture_output=True).stdout)


def fail(what):
    print("check_trace: %s: %s" % (path, what))
    sys.exit(1)


ref = run("dump", "--json")
with gcn3sim.open_trace(path) as t:
    if t.format != ref["format"]:
        fail("format %s, gcn3-trace says %s" % (t.format, ref["format"]))
    if len(t.events) != len(ref["events"]):
        fail("%d events, gcn3-trace lists %d" % (len(t.events), len(ref["events"])))
    for e, r in zip(t.events, ref["events"]):
        if e["kind"] != r["kind"] or e["device"] != r["device"] or e["stream"] != r["stream"]:
            fail("event %d: %s, gcn3-trace: %s" % (e["index"], e, r))
        if e.get("host_gap_ns", 0) != r.get("host_gap_ns", 0):
            fail("event %d: host_gap_ns %s, gcn3-trace %s" % (e["index"], e.get("host_gap_ns"), r.get("host_gap_ns")))
        if e["kind"] == "sync":
            for key in ("until_event", "stream_wait", "wait_stream", "stream_nonblocking"):
                if e[key] != r[key]:
                    fail("sync %d: %s = %r, gcn3-trace %r" % (e["index"], key, e[key], r[key]))
        if (e.get("mem_kind") == "managed") != (r.get("mem_kind") == "managed"):
            fail("event %d: mem_kind %s, gcn3-trace %s" % (e["index"], e.get("mem_kind"), r.get("mem_kind")))
        key = "dst" if e["kind"] in ("copy", "memset") else "addr"
        if e["kind"] in ("alloc", "free", "copy", "memset") and (e[key] != int(r[key], 16) or e["size"] != r["size"]):
            fail("event %d: addr/size %s, gcn3-trace %s" % (e["index"], e, r))
        if e["kind"] == "launch":
            for key in ("kernel_id", "kernel_name", "grid", "wg_size", "waves_per_wg", "vgprs", "sgprs"):
                if e[key] != r[key]:
                    fail("launch %d: %s = %r, gcn3-trace %r" % (e["index"], key, e[key], r[key]))
            if e["kernarg"].hex() != r["kernarg"] or e["entry"] != int(r["entry"], 16):
                fail("launch %d: kernarg or entry differ" % e["index"])
    kernels = {k["kernel_id"]: k for k in t.kernels}
    waves = mem_ops = 0
    instr = {}
    for rw in ref["workgroups"]:
        g = t.workgroup(rw["kernel"], rw["wg"], with_data=True)
        if g.wg_id != rw["wg_id"] or len(g.waves) != len(rw["waves"]):
            fail("kernel %d wg %d: id %s / %d waves, gcn3-trace %s / %d"
                 % (rw["kernel"], rw["wg"], g.wg_id, len(g.waves), rw["wg_id"], len(rw["waves"])))
        for v, rv in zip(g.waves, rw["waves"]):
            where = "kernel %d wg %d wave %d" % (rw["kernel"], rw["wg"], rv["wave"])
            if v.n_instr != rv["n_instr"]:
                fail("%s: n_instr %d, gcn3-trace %d" % (where, v.n_instr, rv["n_instr"]))
            if "".join("T" if b else "n" for b in v.branches) != rv["branches"]:
                fail("%s: branch outcomes differ" % where)
            if v.indirect != [int(x, 16) for x in rv["indirect"]]:
                fail("%s: indirect targets differ" % where)
            if v.exec != [(x["at"], int(x["value"], 16)) for x in rv["exec"]]:
                fail("%s: EXEC changes differ" % where)
            if len(v.mem) != len(rv["mem"]):
                fail("%s: %d memory ops, gcn3-trace %d" % (where, len(v.mem), len(rv["mem"])))
            for m, rm in zip(v.mem, rv["mem"]):
                w2 = "%s op %d" % (where, rm["index"])
                if sorted(m.flag_names) != sorted(rm["flags"]) or m.bytes_per_lane != rm["bytes_per_lane"] \
                        or m.exec != int(rm["exec"], 16):
                    fail("%s: flags/bytes/exec differ" % w2)
                if m.addrs != [int(a, 16) for a in rm["addr"]]:
                    fail("%s: lane addresses differ" % w2)
                if (m.load.hex() if m.load is not None else None) != rm.get("load") or \
                        (m.store.hex() if m.store is not None else None) != rm.get("store"):
                    fail("%s: data differ" % w2)
            aw = [(a["at"], a["len"], int(a["head"], 16), a["kind"]) for a in rv.get("awaits", [])]
            if [tuple(a) for a in v.awaits] != aw:
                fail("%s: awaits %s, gcn3-trace %s" % (where, v.awaits, aw))
            waves += 1
            mem_ops += len(v.mem)
            instr[rw["kernel"]] = instr.get(rw["kernel"], 0) + v.n_instr
    for kid, n in instr.items():
        if kernels[kid]["n_instr"] != n:
            fail("kernel %d: index says %d instructions, its waves hold %d" % (kid, kernels[kid]["n_instr"], n))
    awaits = sum(len(w.awaits) for k in kernels for g in t.workgroups(k) for w in g.waves)
print("check_trace: %s: %d events, %d kernels, %d waves, %d memory ops, %d awaits: as gcn3-trace"
      % (path, len(t.events), len(kernels), waves, mem_ops, awaits))
