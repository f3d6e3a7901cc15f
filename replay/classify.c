/*
 * classify.c - the data check's classes (issue 15 scope 4). Every difference
 * between a value the timing model's memory delivered and the one the
 * emulator recorded falls in exactly one class:
 *
 *  - adopted: a load from memory the runtime writes while kernels run
 *    (allocations of kind TRC_MEM_KERNARG: kernarg segments, dispatch packets,
 *    queues and the hostcall buffer of device printf/malloc, whose answers
 *    and ready flags the host writes during the kernel, which no trace event
 *    places in time);
 *  - order-dependent: a load of a location that another wavefront of the
 *    same kernel writes (stores or atomics, from the trace's records): its
 *    value depends on the order of the two, which is the model's, not the
 *    emulator's (look-back scans, flags, values under a lock, ockl's device
 *    heap). A device-to-host byte whose last writing kernel wrote it from more
 *    than one wavefront, at least one of them with a store or a
 *    compare-and-swap (a counter under a lock, a CAS-loop counter the replay
 *    cannot re-execute), likewise: the final value is whichever wrote last.
 *    Atomic arithmetic is applied by the model, so sums by atomics must check
 *    clean. Atomic returns are order-dependent as before (perform.c);
 *    A load of a location that a kernel of another stream writes is
 *    order-dependent too: the model may run the two kernels side by side
 *    where the emulator ran them one after the other (neither on the null
 *    stream, which is ordered with every stream);
 *  - mismatch: everything else, always a timing-model bug (exit status 1):
 *    a location no other wave of the kernel writes, read wrong, is stale data
 *    (debug.skip_l2_flush=1 is caught there and in the D2H copies).
 *
 * A kernel's write map (dword -> the wave that writes it, or "several") is
 * built from its records the first time one of its loads differs (so a clean
 * replay never pays for it), under s->wmap_mu, and kept until the end. It
 * holds at most RP_WMAP_MAX dwords; beyond that a location it does not know
 * is classified a mismatch (conservative). Thread-safe: partitions classify
 * concurrently.
 */
#include "rp_sim_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct rp_wmap rp_wmap;
#define RP_WMAP_MAX (1u << 24)
/* a write map's value: the writer (wg index * 16 + wave in wg) in bits 0-30,
 * WM_SEVERAL there for more than one wave; WM_STORED when a write that puts a
 * value of its own (a store, a compare-and-swap) was among them, so the final
 * value depends on which came last (atomic arithmetic does not) */
#define WM_SEVERAL 0x7fffffffu
#define WM_STORED 0x80000000u
#define WM_WHO(v) ((v) & WM_SEVERAL)

struct rp_wmap {
    uint64_t *key;            /* dword index + 1; 0 = empty */
    uint32_t *who;            /* writer and WM_STORED (above) */
    size_t cap, n;
    bool incomplete;          /* over RP_WMAP_MAX: unknown dwords are not "unwritten" */
};

static inline size_t wm_hash(uint64_t k, size_t cap) { return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1); }

static int wm_grow(rp_wmap *m)
{
    size_t nc = m->cap ? m->cap * 2 : 1024;
    uint64_t *nk = calloc(nc, sizeof *nk);
    uint32_t *nw = malloc(nc * sizeof *nw);
    if (!nk || !nw) {
        free(nk);
        free(nw);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->key[i]) {
            size_t j = wm_hash(m->key[i], nc);
            while (nk[j])
                j = (j + 1) & (nc - 1);
            nk[j] = m->key[i];
            nw[j] = m->who[i];
        }
    free(m->key);
    free(m->who);
    m->key = nk, m->who = nw, m->cap = nc;
    return 0;
}

static void wm_put(rp_wmap *m, uint64_t dword, uint32_t who)
{
    if (m->incomplete)
        return;
    if ((m->n + 1) * 2 > m->cap) {
        if (m->n >= RP_WMAP_MAX || wm_grow(m)) {
            m->incomplete = true;
            return;
        }
    }
    uint64_t k = dword + 1;
    size_t j = wm_hash(k, m->cap);
    while (m->key[j] && m->key[j] != k)
        j = (j + 1) & (m->cap - 1);
    if (!m->key[j]) {
        m->key[j] = k;
        m->who[j] = who;
        m->n++;
    } else {
        uint32_t st = (m->who[j] | who) & WM_STORED;
        m->who[j] = (WM_WHO(m->who[j]) == WM_WHO(who) ? WM_WHO(who) : WM_SEVERAL) | st;
    }
}

/* The writers of a dword (WM_WHO, WM_STORED), or WM_NONE when none. */
#define WM_NONE (WM_SEVERAL - 1)
static uint32_t wm_get(const rp_wmap *m, uint64_t dword)
{
    if (!m->cap)
        return WM_NONE;
    uint64_t k = dword + 1;
    size_t j = wm_hash(k, m->cap);
    while (m->key[j]) {
        if (m->key[j] == k)
            return m->who[j];
        j = (j + 1) & (m->cap - 1);
    }
    return WM_NONE;
}

static void wm_free(rp_wmap *m)
{
    if (!m)
        return;
    free(m->key);
    free(m->who);
    free(m);
}

/* Kernel k's write map, built on first use (NULL: out of memory or a trace
 * error, then nothing is explained). */
static const rp_wmap *wmap_of(rp_sim *s, rp_kernel *k)
{
    rp_wmap *m = __atomic_load_n(&k->wmap, __ATOMIC_ACQUIRE);
    if (m)
        return m;
    pthread_mutex_lock(&s->wmap_mu);
    m = k->wmap;
    if (!m && !k->wmap_failed) {
        m = calloc(1, sizeof *m);
        char err[256];
        for (uint32_t i = 0; m && i < k->n_wg; i++) {
            trc_wg *wg = trc_reader_load_wg_ex(s->rd, k->launch.kernel_id, i, 0, err, sizeof err);
            if (!wg) {
                wm_free(m);
                m = NULL;
                break;
            }
            for (uint32_t v = 0; v < wg->n_waves; v++) {
                const trc_wave *tw = &wg->waves[v];
                uint32_t me = i < (1u << 26) ? i * 16 + (tw->wave_in_wg & 15) : WM_SEVERAL;
                for (uint32_t j = 0; j < tw->n_mem; j++) {
                    const trc_mem_op *op = &tw->mem[j];
                    if (!(op->flags & (TRC_MO_STORE | TRC_MO_ATOMIC)) || (op->flags & (TRC_MO_LDS | TRC_MO_SCRATCH)))
                        continue;
                    uint32_t who = me;
                    if (!(op->flags & TRC_MO_ATOMIC) || (op->flags & TRC_MO_CMPSWAP))
                        who |= WM_STORED;
                    uint32_t n = (op->flags & TRC_MO_SMEM) ? 1 : trc_popcount64(op->exec);
                    uint32_t b = op->bytes_per_lane ? op->bytes_per_lane : 1;
                    for (uint32_t l = 0; l < n; l++)
                        for (uint64_t d = trc_mo_addr(op, l) >> 2; d <= (trc_mo_addr(op, l) + b - 1) >> 2; d++)
                            wm_put(m, d, who);
                }
            }
            trc_wg_free(wg);
        }
        if (m)
            __atomic_store_n(&k->wmap, m, __ATOMIC_RELEASE);
        else
            k->wmap_failed = true;
    }
    pthread_mutex_unlock(&s->wmap_mu);
    return m;
}

/* Is [addr, addr + n) inside an allocation the runtime writes? */
bool rp_adopted(const rp_sim *s, uint64_t addr, uint64_t n)
{
    return n && rp_alloc_holds(s->rt_ranges, s->n_rt_ranges, addr, n);
}

rp_diff_class rp_classify_load(rp_sim *s, const rp_wave *w, uint64_t addr, uint32_t n)
{
    if (!s->rd) /* a component test's machine without a trace: nothing explains */
        return RP_DIFF_MISMATCH;
    if (rp_adopted(s, addr, n))
        return RP_DIFF_ADOPTED;
    const rp_wmap *m = wmap_of(s, w->wg->k);
    if (!m || !n)
        return RP_DIFF_MISMATCH;
    uint32_t me = w->wg->index < (1u << 26) ? w->wg->index * 16 + (w->walk.tw->wave_in_wg & 15) : WM_SEVERAL;
    for (uint64_t d = addr >> 2; d <= (addr + n - 1) >> 2; d++) {
        uint32_t who = wm_get(m, d);
        if (who != WM_NONE && (WM_WHO(who) == WM_SEVERAL || WM_WHO(who) != me))
            return RP_DIFF_ORDER;
    }
    /* a kernel of another stream that writes it (not ordered with this one:
     * rp_kernels_ordered): the two may run side by side in the model where
     * the emulator ran them one after the other.
     * s->kernels only grows while the host acts alone (parallel.c). */
    const rp_kernel *k = w->wg->k;
    for (size_t i = 0; i < s->n_kernels; i++) {
        rp_kernel *k2 = s->kernels[i];
        if (k2 == k || rp_kernels_ordered(k, k2))
            continue;
        const rp_wmap *m2 = wmap_of(s, k2);
        for (uint64_t d = addr >> 2; m2 && d <= (addr + n - 1) >> 2; d++)
            if (wm_get(m2, d) != WM_NONE)
                return RP_DIFF_ORDER;
    }
    return RP_DIFF_MISMATCH;
}

rp_diff_class rp_classify_d2h(rp_sim *s, uint64_t addr)
{
    if (!s->rd)
        return RP_DIFF_MISMATCH;
    if (rp_adopted(s, addr, 1))
        return RP_DIFF_ADOPTED;
    /* the last kernel that wrote the byte decides: several writers, order */
    for (size_t i = s->n_kernels; i-- > 0;) {
        rp_kernel *k = s->kernels[i];
        if (!k->done)
            continue;
        const rp_wmap *m = wmap_of(s, k);
        if (!m)
            return RP_DIFF_MISMATCH;
        uint32_t who = wm_get(m, addr >> 2);
        if (who != WM_NONE && WM_WHO(who) == WM_SEVERAL && (who & WM_STORED))
            return RP_DIFF_ORDER;
        if (who != WM_NONE || m->incomplete)
            return RP_DIFF_MISMATCH;
    }
    return RP_DIFF_MISMATCH;
}

static int range_cmp(const void *a, const void *b)
{
    const rp_alloc *x = a, *y = b;
    return x->addr != y->addr ? (x->addr < y->addr ? -1 : 1) : (x->size < y->size) - (x->size > y->size);
}

int rp_classify_init(rp_sim *s)
{
    pthread_mutex_init(&s->wmap_mu, NULL);
    if (!s->rd)
        return 0;
    size_t ne = trc_reader_n_events(s->rd);
    for (size_t i = 0; i < ne; i++) {
        const trc_event *ev = trc_reader_event(s->rd, i);
        if (ev->kind != TRC_EV_ALLOC || ev->mem_kind != TRC_MEM_KERNARG || !ev->size)
            continue;
        if ((s->n_rt_ranges & (s->n_rt_ranges - 1)) == 0) { /* 0, 1, 2, 4, ...: grow */
            rp_alloc *r = realloc(s->rt_ranges, (s->n_rt_ranges ? 2 * s->n_rt_ranges : 1) * sizeof *r);
            if (!r)
                return -1;
            s->rt_ranges = r;
        }
        s->rt_ranges[s->n_rt_ranges++] = (rp_alloc){ev->addr, ev->size, ev->device, (uint8_t)ev->mem_kind, 0};
    }
    if (s->n_rt_ranges > 1)
        qsort(s->rt_ranges, s->n_rt_ranges, sizeof *s->rt_ranges, range_cmp);
    return 0;
}

void rp_classify_fini(rp_sim *s)
{
    for (size_t i = 0; i < s->n_kernels; i++) {
        wm_free(s->kernels[i]->wmap);
        s->kernels[i]->wmap = NULL;
    }
    free(s->rt_ranges);
    s->rt_ranges = NULL;
    s->n_rt_ranges = 0;
    pthread_mutex_destroy(&s->wmap_mu);
}
