/*
 * gcn_mem.c - device memory of the functional machine and the address
 * translation the memory instructions call (gcn_mem_global, gcn_mem_flat).
 *
 * Memory model (DESIGN.md Sec. 4): every allocation is its own anonymous
 * mapping (zeroed, page aligned, so 256-byte aligned), so a device pointer is
 * a host pointer. The allocation table (see exec_internal.h) is a sorted
 * array republished copy-on-write; waves read it without locks.
 *
 * Invariants: table entries never overlap (they are distinct mappings);
 * entry.size >= 1; a table reachable from m->table is never freed while a
 * launch is in flight.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "exec_internal.h"

static uint64_t page_size(void)
{
    static uint64_t ps;
    if (!ps) {
        long v = sysconf(_SC_PAGESIZE);
        ps = v > 0 ? (uint64_t)v : 4096;
    }
    return ps;
}

int gcn_trace_event(gcn_machine *m, const trc_event *ev)
{
    if (m->cfg.on_event)
        m->cfg.on_event(ev);
    if (!m->cfg.trace)
        return 0;
    pthread_mutex_lock(&m->trace_lock);
    int rc = trc_writer_event(m->cfg.trace, ev);
    pthread_mutex_unlock(&m->trace_lock);
    return rc;
}

/* Index of the last entry with base <= addr, or -1. */
static long table_floor(const gcn_mem_table *t, uint64_t addr)
{
    long lo = 0, hi = (long)t->n - 1, ans = -1;
    while (lo <= hi) {
        long mid = lo + (hi - lo) / 2;
        if (t->e[mid].base <= addr) {
            ans = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return ans;
}

static int table_find(const gcn_mem_table *t, uint64_t addr, uint64_t len, gcn_mem_entry *out,
                      int *partial)
{
    if (partial)
        *partial = 0;
    if (!t || t->n == 0)
        return 0;
    long i = table_floor(t, addr);
    if (i < 0)
        return 0;
    const gcn_mem_entry *e = &t->e[i];
    uint64_t off = addr - e->base;
    if (off >= e->size)
        return 0;
    if (len > e->size - off) {
        if (partial)
            *partial = 1;
        *out = *e;
        return 0;
    }
    *out = *e;
    return 1;
}

int gcn_mem_lookup(gcn_machine *m, uint64_t addr, uint64_t len, gcn_mem_entry *out, int *partial)
{
    const gcn_mem_table *t = atomic_load_explicit(&m->table, memory_order_acquire);
    return table_find(t, addr, len, out, partial);
}

static void free_retired_locked(gcn_machine *m)
{
    if (atomic_load(&m->launches_active) != 0)
        return;
    gcn_mem_table *t = m->retired;
    m->retired = NULL;
    while (t) {
        gcn_mem_table *n = t->next_retired;
        free(t);
        t = n;
    }
}

void gcn_mem_reclaim(gcn_machine *m)
{
    pthread_mutex_lock(&m->mem_lock);
    free_retired_locked(m);
    pthread_mutex_unlock(&m->mem_lock);
}

/* Publish a copy of the current table with `add` inserted (add != NULL) or
 * the entry at base `remove` deleted. Caller holds mem_lock. Returns 0, -1 on
 * ENOMEM. */
static int republish_locked(gcn_machine *m, const gcn_mem_entry *add, uint64_t remove)
{
    gcn_mem_table *old = atomic_load_explicit(&m->table, memory_order_relaxed);
    size_t n_old = old ? old->n : 0;
    size_t n_new = add ? n_old + 1 : n_old - 1;
    gcn_mem_table *t = malloc(sizeof(*t) + (n_new ? n_new : 1) * sizeof(gcn_mem_entry));
    if (!t)
        return -1;
    t->n = n_new;
    t->next_retired = NULL;
    size_t j = 0;
    int inserted = 0;
    for (size_t i = 0; i < n_old; i++) {
        if (add && !inserted && add->base < old->e[i].base) {
            t->e[j++] = *add;
            inserted = 1;
        }
        if (!add && old->e[i].base == remove)
            continue;
        t->e[j++] = old->e[i];
    }
    if (add && !inserted)
        t->e[j++] = *add;
    atomic_store(&m->table, t); /* seq_cst: pairs with launches_active (see header) */
    if (old) {
        old->next_retired = m->retired;
        m->retired = old;
    }
    free_retired_locked(m);
    return 0;
}

#define GCN_MEM_HUGE ((uint64_t)2 << 20) /* x86-64 transparent huge page, bytes */

/* Map `map` bytes at the next address of device's window (see
 * exec_internal.h); huge: 2 MiB-aligned with transparent huge pages advised.
 * NULL when the window is exhausted or the range is in use. */
static void *va_reserve(gcn_machine *m, uint32_t device, uint64_t map, int huge)
{
#if defined(__SANITIZE_THREAD__)
    /* ThreadSanitizer's shadow memory covers the window (and its mmap
     * interceptor aborts on a fixed address there): mmap's placement instead */
    return NULL;
#endif
    if (device >= sizeof m->va_next / sizeof m->va_next[0])
        return NULL;
    uint64_t align = huge ? GCN_MEM_HUGE : 65536;
    pthread_mutex_lock(&m->mem_lock);
    uint64_t lo = GCN_VA_BASE + device * GCN_VA_WINDOW;
    uint64_t a = m->va_next[device] ? m->va_next[device] : lo;
    a = (a + align - 1) & ~(align - 1);
    void *p = NULL;
    if (map <= GCN_VA_WINDOW && a - lo <= GCN_VA_WINDOW - map) {
        p = mmap((void *)(uintptr_t)a, map, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
        if (p == MAP_FAILED) {
            p = NULL;
        } else if (p != (void *)(uintptr_t)a) { /* kernels before 4.17 ignore NOREPLACE */
            munmap(p, map);
            p = NULL;
        } else {
            /* one 64 KiB guard gap, so that running off the end faults */
            m->va_next[device] = a + map + 65536;
        }
    }
    pthread_mutex_unlock(&m->mem_lock);
    if (p && huge)
        (void)madvise(p, map, MADV_HUGEPAGE); /* advice only: fine if THP is off */
    return p;
}

void *gcn_mem_alloc(gcn_machine *m, uint32_t device, size_t size, trc_mem_kind kind)
{
    return gcn_mem_alloc_ex(m, device, size, kind, 0);
}

void *gcn_mem_alloc_ex(gcn_machine *m, uint32_t device, size_t size, trc_mem_kind kind, unsigned flags)
{
    if (!m || device >= m->cfg.n_gpus)
        return NULL;
    if ((flags & ~(unsigned)GCN_ALLOC_MANAGED) || ((flags & GCN_ALLOC_MANAGED) && kind != TRC_MEM_DEVICE))
        return NULL;
    uint64_t sz = size ? size : 1; /* like malloc(0): a distinct, valid pointer */
    uint64_t ps = page_size();
    if (sz > UINT64_MAX - ps)
        return NULL;
    uint64_t map = (sz + ps - 1) & ~(ps - 1);
    /* NORESERVE: scratch of big dispatches is sized for every wave but mostly
     * untouched; untouched pages cost nothing. */
    void *p = va_reserve(m, device, map, map >= GCN_MEM_HUGE && kind != TRC_MEM_SCRATCH);
    if (!p) {
        if (map >= GCN_MEM_HUGE && kind != TRC_MEM_SCRATCH && map <= UINT64_MAX - GCN_MEM_HUGE) {
            /* Buffers of 2 MiB and more: 2 MiB-aligned and transparent huge
             * pages advised, so that a kernel's first touch of an output buffer
             * takes one page fault per 2 MiB instead of per 4 KiB. Scratch is
             * left on small pages (sparsely touched). */
            uint8_t *r = mmap(NULL, map + GCN_MEM_HUGE, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (r == MAP_FAILED)
                return NULL;
            uintptr_t a = ((uintptr_t)r + GCN_MEM_HUGE - 1) & ~(uintptr_t)(GCN_MEM_HUGE - 1);
            size_t head = a - (uintptr_t)r, tail = GCN_MEM_HUGE - head;
            if (head)
                munmap(r, head);
            if (tail)
                munmap((uint8_t *)a + map, tail);
            p = (void *)a;
            (void)madvise(p, map, MADV_HUGEPAGE); /* advice only: fine if THP is off */
        } else {
            p = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
            if (p == MAP_FAILED)
                return NULL;
        }
    }
    gcn_mem_entry e = {.base = (uint64_t)(uintptr_t)p, .size = sz, .map_size = map,
                       .device = device, .kind = kind};
    pthread_mutex_lock(&m->mem_lock);
    int rc = republish_locked(m, &e, 0);
    pthread_mutex_unlock(&m->mem_lock);
    if (rc) {
        munmap(p, map);
        return NULL;
    }
    trc_event ev = {.kind = TRC_EV_ALLOC, .device = device, .addr = e.base, .size = sz,
                    .mem_kind = kind, .managed = (flags & GCN_ALLOC_MANAGED) != 0};
    /* A writer failure is sticky in the writer and reported by the next launch
     * (GCN_LAUNCH_TRACE_ERROR) and by trc_writer_close(); the memory is fine. */
    (void)gcn_trace_event(m, &ev);
    return p;
}

int gcn_mem_free(gcn_machine *m, void *p)
{
    if (!m || !p)
        return -1;
    uint64_t a = (uint64_t)(uintptr_t)p;
    pthread_mutex_lock(&m->mem_lock);
    gcn_mem_entry e;
    const gcn_mem_table *t = atomic_load_explicit(&m->table, memory_order_relaxed);
    if (!table_find(t, a, 1, &e, NULL) || e.base != a) {
        pthread_mutex_unlock(&m->mem_lock);
        return -1;
    }
    if (republish_locked(m, NULL, a)) {
        pthread_mutex_unlock(&m->mem_lock);
        return -1;
    }
    /* Quarantine: keep the range reserved, drop its pages; unmap the range
     * freed GCN_MEM_QUARANTINE frees ago. */
    madvise(p, e.map_size, MADV_DONTNEED);
    mprotect(p, e.map_size, PROT_NONE);
    uint32_t slot = m->quarantine_next++ % GCN_MEM_QUARANTINE;
    void *old_p = m->quarantine[slot].p;
    uint64_t old_size = m->quarantine[slot].size;
    m->quarantine[slot].p = p;
    m->quarantine[slot].size = e.map_size;
    pthread_mutex_unlock(&m->mem_lock);
    if (old_p)
        munmap(old_p, old_size);
    trc_event ev = {.kind = TRC_EV_FREE, .device = e.device, .addr = e.base, .size = e.size,
                    .mem_kind = e.kind};
    (void)gcn_trace_event(m, &ev);
    return 0;
}

int gcn_mem_find(gcn_machine *m, uint64_t addr, uint64_t len, gcn_alloc_info *out)
{
    if (!m)
        return 0;
    gcn_mem_entry e;
    pthread_mutex_lock(&m->mem_lock);
    int ok = table_find(atomic_load_explicit(&m->table, memory_order_relaxed), addr,
                        len ? len : 1, &e, NULL);
    pthread_mutex_unlock(&m->mem_lock);
    if (!ok)
        return 0;
    if (out) {
        out->base = e.base;
        out->size = e.size;
        out->device = e.device;
        out->kind = e.kind;
    }
    return 1;
}

/* ---- address translation for the interpreter --------------------------- */

gcn_machine *gcn_wave_machine(const gcn_wave *w)
{
    return w->wg ? w->wg->m : NULL;
}

static void *fault(gcn_wave *w, uint64_t addr, uint32_t len, int write, uint32_t lane,
                   uint64_t pc, const char *why)
{
    w->status = GCN_WAVE_FAULT;
    snprintf(w->err, sizeof(w->err),
             "memory fault in kernel %s: wg (%u,%u,%u) wave %u lane %u pc 0x%" PRIx64
             ": %s of %u bytes at 0x%" PRIx64 " %s",
             w->kernel_name ? w->kernel_name : "?", w->wg_id[0], w->wg_id[1], w->wg_id[2],
             w->wave_in_wg, lane, pc, write ? "write" : "read", len, addr, why);
    return NULL;
}

void *gcn_mem_global(gcn_wave *w, uint64_t addr, uint32_t len, int write, uint32_t lane,
                     uint64_t pc)
{
    gcn_mem_cache *c = w->mem_cache;
    uint64_t l = len ? len : 1;
    if (c)
        for (unsigned i = 0; i < GCN_MEM_CACHE_WAYS; i++)
            if (addr >= c->base[i] && addr < c->end[i] && l <= c->end[i] - addr)
                return (void *)(uintptr_t)addr;
    gcn_machine *m = gcn_wave_machine(w);
    gcn_mem_entry e;
    int partial = 0;
    if (m && gcn_mem_lookup(m, addr, l, &e, &partial)) {
        if (c) {
            unsigned i = c->next++ % GCN_MEM_CACHE_WAYS;
            c->base[i] = e.base;
            c->end[i] = e.base + e.size;
        }
        return (void *)(uintptr_t)addr;
    }
    if (partial) {
        char why[128];
        snprintf(why, sizeof(why), "runs past the end of allocation [0x%" PRIx64 ", 0x%" PRIx64 ")",
                 e.base, e.base + e.size);
        return fault(w, addr, len, write, lane, pc, why);
    }
    uint32_t hi = (uint32_t)(addr >> 32);
    if (hi == GCN_GROUP_APERTURE_HI || hi == GCN_PRIVATE_APERTURE_HI)
        return fault(w, addr, len, write, lane, pc,
                     "is an LDS/private aperture address used by a global (non-FLAT) access");
    return fault(w, addr, len, write, lane, pc, "outside every allocation");
}

void *gcn_mem_flat(gcn_wave *w, uint64_t addr, uint32_t len, int write, uint32_t lane,
                   uint64_t pc, gcn_flat_kind *kind, uint64_t *trace_addr)
{
    uint32_t hi = (uint32_t)(addr >> 32);
    uint32_t lo = (uint32_t)addr;
    char why[160];
    if (hi == GCN_GROUP_APERTURE_HI) {
        if (kind)
            *kind = GCN_FLAT_LDS;
        if ((uint64_t)lo + len > w->lds_size) {
            snprintf(why, sizeof(why), "(LDS offset 0x%x) outside the workgroup's %u bytes of LDS",
                     lo, w->lds_size);
            return fault(w, addr, len, write, lane, pc, why);
        }
        if (trace_addr)
            *trace_addr = lo;
        return w->lds + lo;
    }
    if (hi == GCN_PRIVATE_APERTURE_HI) {
        if (kind)
            *kind = GCN_FLAT_PRIVATE;
        /* Swizzled scratch (gcn_wave.h; ISA manual Sec. 8.1.4, element size 4,
         * index stride 64): dword P/4 of lane L at (P/4)*256 + L*4. */
        uint64_t priv = ((uint64_t)w->private_size + 3) & ~3ull;
        if (!w->scratch_base || (uint64_t)lo + len > priv) {
            snprintf(why, sizeof(why),
                     "(private offset 0x%x) outside the work-item's %u bytes of private memory",
                     lo, w->private_size);
            return fault(w, addr, len, write, lane, pc, why);
        }
        if ((lo & 3u) + len > 4u) {
            /* Consecutive dwords of one lane are 256 bytes apart: one host
             * pointer cannot cover them. The interpreter splits private
             * accesses into dword pieces. */
            snprintf(why, sizeof(why),
                     "(private offset 0x%x) crosses a swizzled dword; the interpreter must split "
                     "private FLAT accesses per dword", lo);
            return fault(w, addr, len, write, lane, pc, why);
        }
        uint64_t a = w->scratch_base + w->scratch_wave_offset + (uint64_t)(lo >> 2) * 256u +
                     (uint64_t)lane * 4u + (lo & 3u);
        if (trace_addr)
            *trace_addr = a;
        return (void *)(uintptr_t)a;
    }
    if (kind)
        *kind = GCN_FLAT_GLOBAL;
    if (trace_addr)
        *trace_addr = addr;
    return gcn_mem_global(w, addr, len, write, lane, pc);
}
