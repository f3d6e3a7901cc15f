"""gcn3sim: read gcn3-emu traces and mgpu-replay results from Python.

    import gcn3sim
    t = gcn3sim.open_trace("app.gtrace")        # .gtrace, format 1.x (docs/trace-format.md)
    t.header, t.events, t.kernels              # plain dicts
    for wg in t.workgroups(0, with_data=True):  # kernel 0, grid order
        for w in wg.waves:
            w.n_instr, w.branches, w.exec, w.mem, w.awaits
    stats = gcn3sim.load_stats("run.json")      # mgpu-replay --stats
    rows = gcn3sim.kernels_table(stats)         # pandas.DataFrame when pandas is installed
    sweep = gcn3sim.load_sweep("DIR/results.csv")

Needs only Debian's python3-protobuf and python3-zstandard. The protobuf
schema comes with the package as a descriptor set (gtrace.desc, made from
traceformat/gtrace.proto by protoc-c --descriptor_set_out; make test checks
that the two agree). Every damaged or unexpected input raises TraceError with
the file and what is wrong; nothing is guessed.
"""

import bisect
import csv
import json
import mmap
import os
import struct
from collections import namedtuple

__all__ = [
    "TraceError", "Trace", "Workgroup", "Wave", "MemOp", "Await",
    "open_trace", "load_stats", "load_sweep", "kernels_table",
    "MO_LOAD", "MO_STORE", "MO_ATOMIC", "MO_LDS", "MO_SMEM", "MO_SCRATCH", "MO_CMPSWAP", "MO_HOST",
]

__version__ = "0.1"

# Memory op flags (TRC_MO_*, docs/trace-format.md Sec. 3.4)
MO_LOAD, MO_STORE, MO_ATOMIC, MO_LDS, MO_SMEM, MO_SCRATCH, MO_CMPSWAP, MO_HOST = (1 << i for i in range(8))
_MO_NAMES = ("load", "store", "atomic", "lds", "smem", "scratch", "cmpswap", "host")

_FILE_MAGIC = b"GTRACE\0\0"
_END_MAGIC = b"GTRCEND\0"
_CH_HEADER, _CH_CODE, _CH_EVENT, _CH_RECORDS, _CH_DATA, _CH_INDEX, _CH_KEND, _CH_SEG, _CH_SEG_DATA = range(1, 10)
_EVENT_KINDS = ("alloc", "free", "copy", "memset", "launch", "sync")
_MEM_KINDS = ("device", "host", "kernarg", "code", "scratch")
_COPY_KINDS = ("h2d", "d2h", "d2d", "init")
_MAX_MAJOR = 2  # reads 1.x and 2.x (2.0: wave segments, 2.1: managed allocations)


class TraceError(Exception):
    """A trace that cannot be read: truncated, corrupt, or of a newer major version."""


Await = namedtuple("Await", "at len pc kind")
Await.__doc__ = "An await (format 1.2): dynamic instructions [at, at+len), loop head pc, kind 'wait' or 'retry'."


class MemOp(namedtuple("MemOp", "flags bytes_per_lane exec addrs load store")):
    """One executed memory instruction of a wave.

    flags: MO_* bits; bytes_per_lane: bytes per active lane (SMEM: total);
    exec: the 64-bit lane mask; addrs: one address per active lane, lane 0
    upward (LDS: byte offsets); load/store: the recorded bytes (None when the
    workgroup was read without data or nothing was recorded; a host-image
    load, MO_HOST, format 2.6: the bytes the trace's copies and memsets left
    at its addresses before its kernel's launch).
    """

    __slots__ = ()

    @property
    def flag_names(self):
        return [n for i, n in enumerate(_MO_NAMES) if self.flags & (1 << i)]


class Wave:
    """One wavefront's record: n_instr, branches (bools, in order), indirect
    (s_setpc targets), exec ([(dyn_index, mask)]), mem ([MemOp]), awaits ([Await])."""

    __slots__ = ("wave_in_wg", "n_instr", "branches", "indirect", "exec", "mem", "awaits")

    def __repr__(self):
        return "Wave(%d, n_instr=%d, %d branches, %d mem ops, %d awaits)" % (
            self.wave_in_wg, self.n_instr, len(self.branches), len(self.mem), len(self.awaits))


class Workgroup:
    """One workgroup: kernel_id, index (grid order), wg_id (x, y, z), waves."""

    __slots__ = ("kernel_id", "index", "wg_id", "waves")

    def __repr__(self):
        return "Workgroup(kernel %d, index %d, id %s, %d waves)" % (
            self.kernel_id, self.index, tuple(self.wg_id), len(self.waves))


_msgs = None


def _messages():
    """The gtrace protobuf message classes, built from gtrace.desc once."""
    global _msgs
    if _msgs is None:
        from google.protobuf import descriptor_pb2, descriptor_pool
        from google.protobuf import message_factory
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gtrace.desc")
        try:
            with open(path, "rb") as f:
                fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
        except OSError as e:
            raise TraceError("gcn3sim: the trace schema %s is missing: %s" % (path, e)) from None
        pool = descriptor_pool.DescriptorPool()
        for fd in fds.file:
            pool.Add(fd)
        out = {}
        for name in ("Header", "CodeObject", "Event", "Workgroup", "WorkgroupData", "Index", "KernelIndex"):
            d = pool.FindMessageTypeByName("gtrace." + name)
            if hasattr(message_factory, "GetMessageClass"):
                out[name] = message_factory.GetMessageClass(d)
            else:
                out[name] = message_factory.MessageFactory(pool).GetPrototype(d)
        _msgs = out
    return _msgs


def _unshuf4(b):
    """Inverse of the byte-plane shuffle (docs/trace-format.md, "shuf4")."""
    n = len(b)
    w = n // 4
    out = bytearray(n)
    for k in range(4):
        out[k:4 * w:4] = b[k * w:(k + 1) * w]
    out[4 * w:] = b[4 * w:]
    return bytes(out)


def _varint(buf, pos, end):
    shift = result = 0
    while True:
        if pos >= end or shift > 63:
            raise ValueError("bad varint")
        c = buf[pos]
        pos += 1
        result |= (c & 0x7F) << shift
        if c < 0x80:
            return result, pos
        shift += 7


class Trace:
    """A .gtrace file opened for reading (memory-mapped; use as a context
    manager or call close()). Attributes: path, format ("1.2"), header (dict),
    events (list of dicts, program order), kernels (list of dicts: the
    launch's fields plus n_wg, n_instr, n_mem, n_waves, ended)."""

    def __init__(self, path):
        self.path = str(path)
        self._zd = None
        try:
            self._f = open(self.path, "rb")
        except OSError as e:
            raise TraceError("%s: cannot open: %s" % (self.path, e.strerror)) from None
        try:
            size = os.fstat(self._f.fileno()).st_size
            if size < 16 + 24:
                raise TraceError("%s: %d bytes: too short for a trace (truncated?)" % (self.path, size))
            self._m = mmap.mmap(self._f.fileno(), 0, access=mmap.ACCESS_READ)
            self._open(size)
        except Exception:
            self.close()
            raise

    # -- framing ---------------------------------------------------------
    def _err(self, what):
        return TraceError("%s: %s" % (self.path, what))

    def _chunk(self, off, want):
        """Decompressed payload of the chunk at byte offset off (type want)."""
        m = self._m
        if off + 16 > len(m):
            raise self._err("chunk at offset %d runs past the end of the file" % off)
        typ, flags, size = struct.unpack_from("<IIQ", m, off)
        if typ != want:
            raise self._err("chunk at offset %d has type %d, expected %d" % (off, typ, want))
        if flags != 0:
            raise self._err("chunk at offset %d has reserved flags 0x%x" % (off, flags))
        if size > len(m) - off - 16:
            raise self._err("chunk at offset %d: %d payload bytes run past the end of the file" % (off, size))
        if self._zd is None:
            import zstandard
            self._zd = zstandard.ZstdDecompressor()
        try:
            return self._zd.decompress(m[off + 16:off + 16 + size])
        except Exception as e:  # zstandard.ZstdError: corrupt frame, bad checksum
            raise self._err("chunk at offset %d: zstd frame does not decompress: %s" % (off, e)) from None

    def _parse(self, name, payload, off):
        cls = _messages()[name]
        try:
            return cls.FromString(payload)
        except Exception as e:  # google.protobuf.message.DecodeError
            raise self._err("chunk at offset %d: not a valid %s message: %s" % (off, name, e)) from None

    def _open(self, size):
        m = self._m
        magic, major, minor = struct.unpack_from("<8sII", m, 0)
        if magic != _FILE_MAGIC:
            raise self._err("not a .gtrace file (bad magic)")
        if major > _MAX_MAJOR:
            raise self._err("format %d.%d is newer than this reader (major %d)" % (major, minor, _MAX_MAJOR))
        self.format = "%d.%d" % (major, minor)
        self._ver = (major, minor)
        idx_off, file_size, end = struct.unpack_from("<QQ8s", m, size - 24)
        if end != _END_MAGIC or file_size != size:
            raise self._err("no trailer: the file is truncated or still being written "
                            "(gcn3-trace salvage recovers what it holds)")
        if idx_off + 16 > size - 24:
            raise self._err("trailer points past the end of the file (index at %d)" % idx_off)
        ix = self._parse("Index", self._chunk(idx_off, _CH_INDEX), idx_off)
        self._index = ix
        h = self._parse("Header", self._chunk(ix.header_offset, _CH_HEADER), ix.header_offset)
        if h.magic != "gtrace" or h.format_major != major or h.format_minor != minor:
            raise self._err("header does not match the file header (magic %r, format %d.%d)"
                            % (h.magic, h.format_major, h.format_minor))
        self.header = {
            "producer": h.producer, "producer_version": h.producer_version, "isa_target": h.isa_target,
            "device_count": h.device_count, "command_line": h.command_line, "format": self.format,
            # format 2.3: True when no LDS access carries values (gcn3-emu --lds-values none)
            "lds_values_omitted": bool(h.lds_values_omitted),
        }
        self.events = [self._event(i, off) for i, off in enumerate(ix.event_offset)]
        launches = {e["kernel_id"]: e for e in self.events if e["kind"] == "launch"}
        self.kernels = []
        self._kix = {}
        for k in ix.kernels:
            if k.kernel_id not in launches:
                raise self._err("index lists kernel %d without a launch event" % k.kernel_id)
            n = len(k.wg_frame)
            if not (len(k.wg_rec_off) == len(k.wg_rec_len) == len(k.wg_data_off) == len(k.wg_data_len) == n) \
                    or len(k.frame_offset) != len(k.data_frame_offset) \
                    or any(f >= len(k.frame_offset) for f in k.wg_frame):
                raise self._err("kernel %d: inconsistent workgroup index" % k.kernel_id)
            ns = len(k.seg_wg)
            if not (len(k.seg_wave) == len(k.seg_offset) == len(k.seg_data_offset) == ns) \
                    or any(g >= n for g in k.seg_wg) or (ns and major < 2):
                raise self._err("kernel %d: inconsistent wave-segment index" % k.kernel_id)
            d = dict(launches[k.kernel_id])
            d.update(n_wg=n, n_instr=k.n_instr, n_mem=k.n_mem, n_waves=k.n_waves, ended=k.ended,
                     n_segments=ns)
            self.kernels.append(d)
            self._kix[k.kernel_id] = k
        self._frames = {}
        self._hidx = None  # format 2.6: _host_events

    def _event(self, i, off):
        e = self._parse("Event", self._chunk(off, _CH_EVENT), off)
        if e.kind >= len(_EVENT_KINDS):
            raise self._err("event %d: unknown kind %d" % (i, e.kind))
        d = {"index": i, "kind": _EVENT_KINDS[e.kind], "device": e.device, "stream": e.stream}
        k = d["kind"]
        if e.managed and (k != "alloc" or e.mem_kind != 0):
            raise self._err("event %d: managed flag on an event that is not a device-memory ALLOC" % i)
        if k in ("alloc", "free"):
            # format 2.1: a managed ALLOC (hipMallocManaged) shows mem_kind "managed"
            d.update(addr=e.addr, size=e.size,
                     mem_kind="managed" if e.managed else
                     _MEM_KINDS[e.mem_kind] if e.mem_kind < len(_MEM_KINDS) else e.mem_kind)
        elif k == "copy":
            d.update(dst=e.addr, src=e.src, size=e.size,
                     copy_kind=_COPY_KINDS[e.copy_kind] if e.copy_kind < len(_COPY_KINDS) else e.copy_kind)
            if e.has_data:
                if e.data and e.data_shuf4:
                    raise self._err("event %d: both data and data_shuf4" % i)
                data = bytes(e.data) if e.data else _unshuf4(bytes(e.data_shuf4))
                if len(data) != e.size:
                    raise self._err("event %d: copy of %d bytes carries %d" % (i, e.size, len(data)))
                d["data"] = data
        elif k == "memset":
            d.update(dst=e.addr, size=e.size, value=e.value)
        elif k == "launch":
            if not e.HasField("launch"):
                raise self._err("event %d: launch without its launch record" % i)
            l = e.launch
            if len(l.grid) != 3 or len(l.wg_size) != 3:
                raise self._err("event %d: launch grid/wg_size must have 3 entries" % i)
            d.update(kernel_id=l.kernel_id, kernel_name=l.kernel_name, code_object=l.code_object_id,
                     entry=l.entry_vaddr, grid=list(l.grid), wg_size=list(l.wg_size), waves_per_wg=l.waves_per_wg,
                     lds_bytes=l.group_segment_size, scratch_bytes=l.private_segment_size, vgprs=l.vgpr_count,
                     sgprs=l.sgpr_count, kernarg_addr=l.kernarg_addr, kernarg=bytes(l.kernarg))
        if e.host_gap_ns:
            # format 1.4: host time (ns) outside the runtime before this call
            d["host_gap_ns"] = e.host_gap_ns
        if k == "sync":
            # format 1.3: the work of `stream` before event until_event (0: all of
            # it); with stream_wait, stream wait_stream waits, not the host
            d.update(until_event=e.until_event, stream_wait=e.stream_wait, wait_stream=e.wait_stream,
                     stream_nonblocking=e.stream_nonblocking)
        return d

    # -- public ----------------------------------------------------------
    def code_object(self, i):
        """(ELF image bytes, load address) of code object i."""
        offs = self._index.code_object_offset
        if not 0 <= i < len(offs):
            raise IndexError("code object %d of %d" % (i, len(offs)))
        co = self._parse("CodeObject", self._chunk(offs[i], _CH_CODE), offs[i])
        return bytes(co.elf), co.load_addr

    @property
    def n_code_objects(self):
        return len(self._index.code_object_offset)

    def _frame(self, k, f, data):
        key = (k.kernel_id, f, data)
        buf = self._frames.get(key)
        if buf is None:
            off = (k.data_frame_offset if data else k.frame_offset)[f]
            buf = self._chunk(off, _CH_DATA if data else _CH_RECORDS)
            if len(self._frames) >= 8:  # a small cache: workgroups() walks frames in order
                self._frames.pop(next(iter(self._frames)))
            self._frames[key] = buf
        return buf

    def workgroup(self, kernel_id, i, with_data=False):
        """Workgroup i (grid order, 0-based) of kernel kernel_id."""
        k = self._kix.get(kernel_id)
        if k is None:
            raise KeyError("kernel %d is not in %s" % (kernel_id, self.path))
        if not 0 <= i < len(k.wg_frame):
            raise IndexError("kernel %d has %d recorded workgroups, not %d" % (kernel_id, len(k.wg_frame), i))
        f = k.wg_frame[i]
        buf = self._frame(k, f, False)
        o, n = k.wg_rec_off[i], k.wg_rec_len[i]
        if o + n > len(buf):
            raise self._err("kernel %d workgroup %d: record past the end of its frame" % (kernel_id, i))
        rec = self._parse("Workgroup", buf[o:o + n], k.frame_offset[f])
        data = None
        if with_data:
            dbuf = self._frame(k, f, True)
            o, n = k.wg_data_off[i], k.wg_data_len[i]
            if o + n > len(dbuf):
                raise self._err("kernel %d workgroup %d: data past the end of its frame" % (kernel_id, i))
            data = self._parse("WorkgroupData", dbuf[o:o + n], k.data_frame_offset[f])
        for j, w in enumerate(rec.waves):
            if w.n_segments:
                self._merge_segments(k, i, j, rec, data)
        return self._decode_wg(kernel_id, i, rec, data)

    def _merge_segments(self, k, i, j, rec, data):
        """Format 2.0: wave j of workgroup i is its segments (chunk types 8
        and 9) followed by its last part; every column simply continues, so
        the wave is their concatenation (docs/trace-format.md Sec. 1.5)."""
        where = "kernel %d workgroup %d wave %d" % (k.kernel_id, i, j)
        segs = [s for s in range(len(k.seg_wg)) if k.seg_wg[s] == i and k.seg_wave[s] == j]
        tail = rec.waves[j]
        if len(segs) != tail.n_segments:
            raise self._err("%s: %d segments, the index lists %d" % (where, tail.n_segments, len(segs)))
        parts, dparts = [], []
        for s in segs:
            g = self._parse("Workgroup", self._chunk(k.seg_offset[s], _CH_SEG), k.seg_offset[s])
            if g.kernel_id != rec.kernel_id or list(g.wg_id) != list(rec.wg_id) or len(g.waves) != 1 \
                    or g.waves[0].wave_in_wg != j or g.waves[0].n_segments or g.waves[0].n_branch % 8:
                raise self._err("%s: segment at offset %d does not belong to it" % (where, k.seg_offset[s]))
            parts.append(g.waves[0])
            if data is not None:
                gd = self._parse("WorkgroupData", self._chunk(k.seg_data_offset[s], _CH_SEG_DATA),
                                 k.seg_data_offset[s])
                if gd.kernel_id != rec.kernel_id or list(gd.wg_id) != list(rec.wg_id) or len(gd.waves) != 1 \
                        or gd.waves[0].wave_in_wg != j:
                    raise self._err("%s: segment data at offset %d does not belong to it"
                                    % (where, k.seg_data_offset[s]))
                dparts.append(gd.waves[0])
        parts.append(tail)
        m = type(tail)()
        kinds = any(len(p.await_kind) for p in parts)
        for p in parts:
            for f in ("indirect_target", "exec_at_delta", "exec_val", "mem_flags", "mem_bytes", "mem_exec",
                      "addr_kind", "addr_base_delta", "addr_stride", "addr_delta", "await_at_delta",
                      "await_len", "await_pc"):
                getattr(m, f).extend(getattr(p, f))
            if kinds:
                m.await_kind.extend(p.await_kind if len(p.await_kind) else [0] * len(p.await_at_delta))
        m.wave_in_wg, m.n_instr = j, tail.n_instr
        m.n_branch = sum(p.n_branch for p in parts)
        m.branch_bits = b"".join(bytes(p.branch_bits) for p in parts)
        rec.waves[j].CopyFrom(m)
        if data is not None:
            dparts.append(data.waves[j])
            md = type(data.waves[j])()
            md.wave_in_wg = j
            for p in dparts:
                if len(p.load_len) != len(p.store_len):
                    raise self._err("%s: segment data lengths differ" % where)
                md.load_len.extend(p.load_len)
                md.store_len.extend(p.store_len)
            if any(len(p.load_host) for p in dparts):
                # format 2.6: the parts' host-image bits, one per op, in op order
                bits, o = bytearray((len(md.load_len) + 7) // 8), 0
                for p in dparts:
                    hb = bytes(p.load_host)
                    if hb and len(hb) != (len(p.load_len) + 7) // 8:
                        raise self._err("%s: segment host-image bits for another number of ops" % where)
                    for b in range(len(p.load_len) if hb else 0):
                        if hb[b >> 3] >> (b & 7) & 1:
                            bits[(o + b) >> 3] |= 1 << ((o + b) & 7)
                    o += len(p.load_len)
                md.load_host = bytes(bits)
            md.load_data = b"".join(bytes(p.load_data) if p.load_data else _unshuf4(bytes(p.load_data_shuf4))
                                    for p in dparts)
            md.store_data = b"".join(bytes(p.store_data) if p.store_data else _unshuf4(bytes(p.store_data_shuf4))
                                     for p in dparts)
            data.waves[j].CopyFrom(md)

    def workgroups(self, kernel_id, with_data=False):
        """Every recorded workgroup of kernel kernel_id, in grid order."""
        k = self._kix.get(kernel_id)
        if k is None:
            raise KeyError("kernel %d is not in %s" % (kernel_id, self.path))
        for i in range(len(k.wg_frame)):
            yield self.workgroup(kernel_id, i, with_data)

    # -- decoding (docs/trace-format.md Sec. 3.4-3.5) ---------------------
    def _decode_wg(self, kernel_id, i, rec, data):
        where = "kernel %d workgroup %d" % (kernel_id, i)
        if rec.kernel_id != kernel_id or len(rec.wg_id) != 3 or len(rec.waves) != rec.wave_count:
            raise self._err("%s: record does not match the index" % where)
        g = Workgroup()
        g.kernel_id, g.index, g.wg_id = kernel_id, i, list(rec.wg_id)
        wdata = None
        if data is not None:
            if data.kernel_id != kernel_id or list(data.wg_id) != g.wg_id or len(data.waves) != len(rec.waves):
                raise self._err("%s: data does not match its record" % where)
            wdata = list(data.waves)
        before = self.kernels[kernel_id]["index"] if kernel_id < len(self.kernels) else 0
        g.waves = [self._decode_wave(where, j, w, wdata[j] if wdata else None, before)
                   for j, w in enumerate(rec.waves)]
        return g

    @staticmethod
    def _himg_effect(e):
        """Format 2.6: what event e does to the host image (the C reader's
        trc_himg_effect, with its TRC_HIMG_MAX_FILL): "data" (an H2D or INIT
        copy), "fill" (a memset of at most 1 GiB), "forget" (a D2D copy, a
        FREE, a larger memset) or None."""
        k = e["kind"]
        if not (k in ("memset", "free") or (k == "copy" and e["copy_kind"] != "d2h")) or not e["size"]:
            return None
        if k == "free" or (k == "copy" and e["copy_kind"] == "d2d") or (k == "memset" and e["size"] > 1 << 30):
            return "forget"
        return "fill" if k == "memset" else "data"

    def _host_events(self):
        """Format 2.6: the events that write device memory, indexed by the 4 KiB
        pages they touch (page -> event indices, in order), built once. A FREE,
        a D2D copy or a memset over 1 GiB (the C reader's TRC_HIMG_MAX_FILL)
        makes bytes unknown, and is listed only on pages a write lists (a FREE
        of a dispatch's scratch covers gigabytes of nothing)."""
        if self._hidx is not None:
            return self._hidx
        idx, forgets = {}, []
        for e in self.events:
            eff = self._himg_effect(e)
            if eff is None:
                continue
            lo = e["addr"] if e["kind"] == "free" else e["dst"]
            if eff == "forget":
                forgets.append((e["index"], lo, lo + e["size"]))
            else:
                for pn in range(lo >> 12, ((lo + e["size"] - 1) >> 12) + 1):
                    idx.setdefault(pn, []).append(e["index"])
        for i, lo, hi in forgets:
            first, last = lo >> 12, (hi - 1) >> 12
            pns = range(first, last + 1) if last - first < len(idx) else sorted(idx)
            for pn in pns:
                if first <= pn <= last and pn in idx:
                    idx[pn].append(i)
        for lst in idx.values():
            lst.sort()
        self._hidx = idx
        return idx

    def _host_image(self, where, before, addr, n):
        """Format 2.6: the n bytes at addr as the host image holds them before
        event `before` (docs/trace-format.md Sec. 3.5 "Host-image loads"):
        per byte, what the last H2D or INIT copy or memset before it wrote
        there; a D2D copy, a FREE or a memset over 1 GiB after that, or no such
        event, leaves it unknown."""
        idx, out = self._host_events(), bytearray(n)
        a = addr
        while a < addr + n:
            pn = a >> 12
            end = min(addr + n, (pn + 1) << 12)
            lst = idx.get(pn, [])
            left = set(range(a, end))
            for j in range(bisect.bisect_left(lst, before) - 1, -1, -1):
                if not left:
                    break
                e = self.events[lst[j]]
                lo = e["addr"] if e["kind"] == "free" else e["dst"]
                hit = [x for x in range(max(a, lo), min(end, lo + e["size"])) if x in left]
                if not hit:
                    continue
                if self._himg_effect(e) == "forget":
                    raise self._err("%s: a host-image load reads bytes a FREE, D2D copy or memset over 1 GiB "
                                    "(event %d) left unknown" % (where, e["index"]))
                if len(hit) == hit[-1] - hit[0] + 1:  # one run: a slice
                    x0, x1 = hit[0], hit[-1] + 1
                    out[x0 - addr:x1 - addr] = bytes([e["value"]]) * (x1 - x0) if e["kind"] == "memset" \
                        else e["data"][x0 - lo:x1 - lo]
                else:
                    for x in hit:
                        out[x - addr] = e["value"] if e["kind"] == "memset" else e["data"][x - lo]
                left.difference_update(hit)
            if left:
                raise self._err("%s: a host-image load reads bytes no copy or memset wrote before the launch" % where)
            a = end
        return bytes(out)

    def _decode_wave(self, where, j, w, d, before=0):
        where = "%s wave %d" % (where, j)
        v = Wave()
        v.wave_in_wg, v.n_instr = w.wave_in_wg, w.n_instr
        bits = bytes(w.branch_bits)
        if len(bits) != (w.n_branch + 7) // 8:
            raise self._err("%s: %d branch bytes for %d branches" % (where, len(bits), w.n_branch))
        v.branches = [bool(bits[b >> 3] >> (b & 7) & 1) for b in range(w.n_branch)]
        v.indirect = list(w.indirect_target)
        if len(w.exec_at_delta) != len(w.exec_val):
            raise self._err("%s: exec_at and exec_val differ in length" % where)
        at, v.exec = 0, []
        for dl, val in zip(w.exec_at_delta, w.exec_val):
            at += dl
            v.exec.append((at, val))
        m = len(w.mem_flags)
        if not (len(w.mem_bytes) == len(w.mem_exec) == len(w.addr_kind) == len(w.addr_base_delta) == m):
            raise self._err("%s: memory op columns differ in length" % where)
        loads = stores = None
        if d is not None:
            if len(d.load_len) != m or len(d.store_len) != m:
                raise self._err("%s: data lengths do not match its %d memory ops" % (where, m))
            if (d.load_data and d.load_data_shuf4) or (d.store_data and d.store_data_shuf4):
                raise self._err("%s: both plain and shuf4 data" % where)
            loads = bytes(d.load_data) if d.load_data else _unshuf4(bytes(d.load_data_shuf4))
            stores = bytes(d.store_data) if d.store_data else _unshuf4(bytes(d.store_data_shuf4))
            if sum(d.load_len) != len(loads) or sum(d.store_len) != len(stores):
                raise self._err("%s: data streams do not add up to their lengths" % where)
        host = bytes(d.load_host) if d is not None else b""
        if host and (self._ver < (2, 6) or len(host) != (m + 7) // 8 or (m & 7 and host[m >> 3] >> (m & 7))):
            raise self._err("%s: %d host-image bytes for %d memory ops (format %s)" % (where, len(host), m, self.format))
        base = si = di = lo = so = 0
        strides, deltas = w.addr_stride, w.addr_delta
        v.mem = []
        mask64 = (1 << 64) - 1
        for i in range(m):
            ex = w.mem_exec[i]
            n = bin(ex).count("1")
            base = (base + w.addr_base_delta[i]) & mask64
            if w.addr_kind[i] == 0:
                s = 0
                if n >= 2:
                    if si >= len(strides):
                        raise self._err("%s: address strides run out at op %d" % (where, i))
                    s = strides[si]
                    si += 1
                addrs = [(base + k * s) & mask64 for k in range(n)]
            elif w.addr_kind[i] == 1:
                addrs = [base] if n else []
                for _ in range(n - 1):
                    if di >= len(deltas):
                        raise self._err("%s: address deltas run out at op %d" % (where, i))
                    addrs.append((addrs[-1] + deltas[di]) & mask64)
                    di += 1
            else:
                raise self._err("%s: op %d has unknown address kind %d" % (where, i, w.addr_kind[i]))
            ld = st = None
            f = w.mem_flags[i]
            if host and host[i >> 3] >> (i & 7) & 1:
                # format 2.6: a plain load whose values are the host image's
                if (f & (MO_LOAD | MO_STORE | MO_ATOMIC | MO_LDS | MO_SCRATCH)) != MO_LOAD or d.load_len[i] \
                        or (len(d.load_hash) and d.load_hash[i]):
                    raise self._err("%s: op %d has a host-image bit but is no plain load or has values" % (where, i))
                f |= MO_HOST
            if d is not None:
                if f & MO_HOST and n:
                    b = w.mem_bytes[i]
                    parts, k = [], 0
                    while k < n:  # runs of adjacent lanes read at once
                        e = k + 1
                        while e < n and addrs[e] == addrs[e - 1] + b:
                            e += 1
                        parts.append(self._host_image("%s op %d" % (where, i), before, addrs[k], (e - k) * b))
                        k = e
                    ld = b"".join(parts)
                if d.load_len[i]:
                    ld = loads[lo:lo + d.load_len[i]]
                    lo += d.load_len[i]
                if d.store_len[i]:
                    st = stores[so:so + d.store_len[i]]
                    so += d.store_len[i]
            v.mem.append(MemOp(f, w.mem_bytes[i], ex, addrs, ld, st))
        if si != len(strides) or di != len(deltas):
            raise self._err("%s: address streams hold more entries than its ops use" % where)
        na = len(w.await_at_delta)
        if len(w.await_len) != na or len(w.await_pc) != na or len(w.await_kind) not in (0, na):
            raise self._err("%s: await columns differ in length" % where)
        at, v.awaits = 0, []
        for a in range(na):
            at += w.await_at_delta[a]
            kind = w.await_kind[a] if w.await_kind else 0
            v.awaits.append(Await(at, w.await_len[a], w.await_pc[a], "retry" if kind == 1 else "wait"))
        return v

    def close(self):
        m = getattr(self, "_m", None)
        if m is not None:
            m.close()
            self._m = None
        f = getattr(self, "_f", None)
        if f is not None:
            f.close()
            self._f = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "Trace(%r, format %s, %d events, %d kernels)" % (self.path, self.format, len(self.events),
                                                               len(self.kernels))


def open_trace(path):
    """Open a .gtrace file (gcn3-emu --record); raises TraceError."""
    return Trace(path)


def load_stats(path):
    """The statistics JSON of mgpu-replay --stats (or of one sweep point) as a dict:
    trace, config, kernels (list), totals, check (docs/user-guide.md)."""
    with open(path, "r", encoding="utf-8") as f:
        try:
            d = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError("%s: not mgpu-replay statistics JSON: %s" % (path, e)) from None
    for key in ("kernels", "totals", "check"):
        if key not in d:
            raise ValueError("%s: not mgpu-replay statistics JSON (no %r)" % (path, key))
    return d


def _pandas():
    try:
        import pandas
        return pandas
    except ImportError:
        return None


def kernels_table(stats):
    """One row per kernel of a load_stats() result (its counters flattened as
    counters.NAME): a pandas.DataFrame when pandas is installed, else a list of dicts."""
    rows = []
    for k in stats["kernels"]:
        r = {key: val for key, val in k.items() if not isinstance(val, (dict, list))}
        for key, val in (k.get("counters") or {}).items():
            r["counters." + key] = val
        rows.append(r)
    pd = _pandas()
    return pd.DataFrame(rows) if pd is not None else rows


def _num(s):
    for conv in (int, float):
        try:
            return conv(s)
        except ValueError:
            pass
    return s


def load_sweep(path):
    """A sweep's results.csv (mgpu-replay --sweep, docs/sweeps.md): a
    pandas.DataFrame when pandas is installed, else a list of dicts with
    numbers converted."""
    pd = _pandas()
    if pd is not None:
        return pd.read_csv(path)
    with open(path, newline="", encoding="utf-8") as f:
        return [{k: _num(v) for k, v in row.items()} for row in csv.DictReader(f)]
