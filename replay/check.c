/*
 * check.c - the data-value check, an observer of the timing model (issue 14:
 * hooks). The model fires RP_HOOK_VALUE wherever its memory returns a value
 * that the trace recorded (perform.c: a load's lanes on a cache line, an LDS
 * load, an atomic's return, a device-to-host copy); this observer counts it,
 * compares it with the recording, puts every difference in exactly one
 * class (classify.c: mismatch, order-dependent, adopted) and fires
 * RP_HOOK_MISMATCH, whose observer (the reporter below) prints the
 * "mismatch:" / "note:" lines. Polls of awaits are not checks (the model's
 * own waiting, perform.c poll_seen) and never come here.
 *
 * Counters go to the running partition's rp_check (rp_chk), so the observer
 * is safe from every partition's thread; rp_sim_init attaches both.
 */
#include "rp_sim_internal.h"

#include <stdlib.h>
#include <string.h>

#define PRINT_BYTES 16

static void hexbytes(char *buf, size_t n, const uint8_t *p, size_t len)
{
    size_t o = 0;
    buf[0] = 0;
    if (len > PRINT_BYTES)
        len = PRINT_BYTES;
    /* little-endian value, most significant byte first */
    o += (size_t)snprintf(buf + o, n - o, "0x");
    for (size_t i = len; i-- > 0 && o < n;)
        o += (size_t)snprintf(buf + o, n - o, "%02x", p[i]);
}

/* memcmp(a, b, n) == 0, without a library call for the common sizes (a
 * lane's dword or qword; the check compares tens of millions). */
static inline bool same_bytes(const uint8_t *a, const uint8_t *b, uint32_t n)
{
    if (n == 4) {
        uint32_t x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return x == y;
    }
    if (n == 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return x == y;
    }
    return memcmp(a, b, n) == 0;
}

/* A difference: to the observers of RP_HOOK_MISMATCH. */
static void report(rp_sim *s, const rp_hook_ctx *c, const rp_access *a, const char *what, uint64_t addr,
                   const uint8_t *exp, const uint8_t *got, size_t len)
{
    rp_mismatch mm = {what, addr, exp, got, (uint32_t)len, !strncmp(what, "atomic", 6) || strchr(what, '('), 0, 0};
    RP_HOOK_FIRE(&s->hooks, RP_HOOK_MISMATCH, c->now, c->gpu, c->cu, a, &mm, s);
}

/* The data check's reporter: one "mismatch:" line per difference on the
 * sim's output, at most check.print of them (explained differences, those
 * whose value depends on the order the model chose or on memory the runtime
 * writes (classify.c), are shown apart as "note:", at most 3). Counts in
 * the running partition's rp_check, so it is safe from any partition's
 * thread. */
void rp_check_reporter(void *arg, const rp_hook_ctx *c)
{
    (void)arg;
    rp_sim *s = c->sim;
    const rp_mismatch *mm = c->detail;
    const rp_access *a = c->item;
    int atomic = mm->order_dependent;
    FILE *out = rp_out(s);
    if (!out || (atomic ? rp_chk(s)->atomic_printed >= 3 : rp_chk(s)->printed >= s->cfg.check_print))
        return;
    if (atomic)
        rp_chk(s)->atomic_printed++;
    else
        rp_chk(s)->printed++;
    if (!a) { /* a device-to-host copy */
        fprintf(out, "%s: %s from 0x%llx (%llu bytes): byte at 0x%llx expected 0x%02x got 0x%02x\n",
                atomic ? "note" : "mismatch", mm->what, (unsigned long long)mm->copy_src, (unsigned long long)mm->copy_size, (unsigned long long)mm->addr,
                mm->expected[0], mm->got[0]);
        return;
    }
    char e[48], g[48];
    hexbytes(e, sizeof e, mm->expected, mm->len);
    hexbytes(g, sizeof g, mm->got, mm->len);
    const rp_wave *w = a->w;
    const rp_wg *wg = w->wg;
    char kn[128];
    rp_printable(kn, sizeof kn, wg->k->launch.kernel_name);
    fprintf(out,
            "%s: %s kernel %u (%s) wg (%u,%u,%u) wave %u pc 0x%llx (%s) addr 0x%llx: expected %s got %s\n",
            atomic ? "note" : "mismatch", mm->what, wg->k->launch.kernel_id, kn, wg->tw->wg_id[0], wg->tw->wg_id[1],
            wg->tw->wg_id[2], w->walk.tw->wave_in_wg, (unsigned long long)a->in->pc, gcn_op_name(a->in->op),
            (unsigned long long)mm->addr, e, g);
}

/* A load difference of class cl counted and reported; `hashed`: a hashed
 * load (trace 2.2), one difference for the instruction whose got/exp are the
 * hashes (n = 8) and whose lane is not known. */
static void load_diff_count(rp_sim *s, const rp_hook_ctx *c, const rp_access *a, rp_diff_class cl, bool hashed,
                            const uint8_t *got, const uint8_t *exp, uint64_t lo, uint32_t n)
{
    rp_kernel *k = a->w->wg->k;
    switch (cl) {
    case RP_DIFF_ORDER:
        rp_chk(s)->load_order++;
        __atomic_add_fetch(&k->order_loads, 1, __ATOMIC_RELAXED);
        report(s, c, a,
               hashed ? "load, hashed values (order-dependent: another wave of the kernel, or a kernel of another "
                        "stream, writes it)"
                      : "load (order-dependent: another wave of the kernel, or a kernel of another stream, writes it)",
               lo, exp, got, n);
        break;
    case RP_DIFF_ADOPTED:
        rp_chk(s)->load_adopted++;
        __atomic_add_fetch(&k->adopted_loads, 1, __ATOMIC_RELAXED);
        report(s, c, a,
               hashed ? "load, hashed values (adopted: memory the runtime writes during the kernel)"
                      : "load (adopted: memory the runtime writes during the kernel)",
               lo, exp, got, n);
        break;
    default:
        rp_chk(s)->load_mismatches++;
        __atomic_add_fetch(&k->mismatches, 1, __ATOMIC_RELAXED);
        report(s, c, a, hashed ? "load, hashed values (a lane differs; record with --load-values full to see which)"
                               : "load",
               lo, exp, got, n);
    }
}

/* A VMEM/SMEM load's bytes [lo, lo + n) that differ: their class. */
static void load_differs(rp_sim *s, const rp_hook_ctx *c, const rp_access *a, const uint8_t *got,
                         const uint8_t *exp, uint64_t lo, uint32_t n)
{
    if (!same_bytes(got, exp, n))
        load_diff_count(s, c, a, rp_classify_load(s, a->w, lo, n), false, got, exp, lo, n);
}

/* A hashed load (trace 2.2) whose hash differs: one difference for the
 * instruction (the lane is not known), classed by its lanes' addresses: any
 * lane order-dependent makes it so, then any adopted, else a mismatch. */
static void hash_differs(rp_sim *s, const rp_hook_ctx *c, const rp_access *a, const rp_value *v)
{
    const trc_mem_op *op = a->op;
    rp_diff_class cl = RP_DIFF_MISMATCH;
    for (uint32_t i = 0; i < v->lanes && cl != RP_DIFF_ORDER; i++) {
        rp_diff_class li = rp_classify_load(s, a->w, trc_mo_addr(op, i), op->bytes_per_lane);
        if (li == RP_DIFF_ORDER || (li == RP_DIFF_ADOPTED && cl == RP_DIFF_MISMATCH))
            cl = li;
    }
    load_diff_count(s, c, a, cl, true, v->got, v->expected, v->addr, 8);
}

/* A device-to-host block that differs: the class of its first differing
 * byte decides. */
static void d2h_differs(rp_sim *s, const rp_hook_ctx *c, const rp_value *v)
{
    const trc_event *ev = v->copy;
    for (uint32_t j = 0; j < v->len; j++)
        if (v->got[j] != v->expected[j]) {
            rp_diff_class cl = rp_classify_d2h(s, v->addr + j);
            if (cl == RP_DIFF_ORDER)
                rp_chk(s)->d2h_order++;
            else if (cl == RP_DIFF_ADOPTED)
                rp_chk(s)->d2h_adopted++;
            else
                rp_chk(s)->d2h_mismatches++;
            rp_mismatch mm = {cl == RP_DIFF_ORDER     ? "D2H copy (order-dependent: written by several waves)"
                              : cl == RP_DIFF_ADOPTED ? "D2H copy (adopted: runtime memory)"
                                                      : "D2H copy",
                              v->addr + j, v->expected + j, v->got + j, 1, cl != RP_DIFF_MISMATCH,
                              ev->src, ev->size};
            RP_HOOK_FIRE(&s->hooks, RP_HOOK_MISMATCH, c->now, UINT32_MAX, UINT32_MAX, NULL, &mm, s);
            return;
        }
}

/* The observer of RP_HOOK_VALUE. */
void rp_check_observe(void *arg, const rp_hook_ctx *c)
{
    (void)arg;
    rp_sim *s = c->sim;
    const rp_value *v = c->detail;
    const rp_access *a = c->item;
    rp_check *chk = rp_chk(s);
    switch (v->kind) {
    case RP_VALUE_LOAD:
        if (!v->expected) { /* the trace holds no values (private memory recorded without them) */
            chk->loads_unrecorded += v->lanes;
            return;
        }
        chk->loads_checked += v->lanes;
        if (same_bytes(v->got, v->expected, v->len))
            return;
        if (v->stride < v->len) /* several lanes: each is a difference of its own */
            for (uint32_t o = 0; o < v->len; o += v->stride)
                load_differs(s, c, a, v->got + o, v->expected + o, v->addr + o, v->stride);
        else
            load_differs(s, c, a, v->got, v->expected, v->addr, v->len);
        return;
    case RP_VALUE_LDS:
        chk->lds_checked += v->lanes;
        if (same_bytes(v->got, v->expected, v->len))
            return;
        for (uint32_t o = 0; o < v->len; o += v->stride)
            if (!same_bytes(v->got + o, v->expected + o, v->stride)) {
                chk->lds_mismatches++;
                __atomic_add_fetch(&a->w->wg->k->mismatches, 1, __ATOMIC_RELAXED);
                report(s, c, a, "lds load", v->addr + o, v->expected + o, v->got + o, v->stride);
            }
        return;
    case RP_VALUE_LOAD_HASH:
        chk->loads_checked += v->lanes;
        chk->loads_hashed += v->lanes;
        if (!same_bytes(v->got, v->expected, 8))
            hash_differs(s, c, a, v);
        return;
    case RP_VALUE_LDS_HASH:
        chk->lds_checked += v->lanes;
        chk->loads_hashed += v->lanes;
        if (!same_bytes(v->got, v->expected, 8)) {
            chk->lds_mismatches++;
            __atomic_add_fetch(&a->w->wg->k->mismatches, 1, __ATOMIC_RELAXED);
            report(s, c, a, "lds load, hashed values (a lane differs; record with --load-values full to see which)",
                   v->addr, v->expected, v->got, 8);
        }
        return;
    case RP_VALUE_ATOMIC:
        chk->atomics_checked++;
        if (same_bytes(v->got, v->expected, v->len))
            return;
        /* Atomic return values depend on the order of competing atomics:
         * reported apart, not a data error. */
        chk->atomic_mismatches++;
        __atomic_add_fetch(&a->w->wg->k->atomic_mismatches, 1, __ATOMIC_RELAXED);
        report(s, c, a, "atomic return (order-dependent)", v->addr, v->expected, v->got, v->len);
        return;
    case RP_VALUE_D2H:
        chk->d2h_checked++;
        if (memcmp(v->got, v->expected, v->len))
            d2h_differs(s, c, v);
        return;
    }
}
