/*
 * um.c - unified memory across GPUs: the page table of governed pages and
 * the placement policies (rp_um.h).
 */
#include "rp_um.h"

#include <stdlib.h>
#include <string.h>

int rp_um_policy_parse(const char *name)
{
    static const char *const names[] = {"home", "interleave", "first-touch", "on-fault", "access-counter"};
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        if (!strcmp(name, names[i]))
            return i;
    return -1;
}

int rp_um_init(rp_um *u, const rp_um_spec *spec, const rp_um_ops *ops)
{
    memset(u, 0, sizeof *u);
    if (!spec->gpus || spec->gpus > 64 || (spec->policy == RP_UM_COUNTER && !spec->threshold))
        return -1;
    u->spec = *spec;
    u->ops = *ops;
    u->cap = 1024;
    u->tab = calloc(u->cap, sizeof *u->tab);
    u->counts = calloc(u->cap * spec->gpus, sizeof *u->counts);
    u->st = calloc(spec->gpus, sizeof *u->st);
    if (!u->tab || !u->counts || !u->st) {
        rp_um_fini(u);
        return -1;
    }
    return 0;
}

void rp_um_fini(rp_um *u)
{
    free(u->tab);
    free(u->counts);
    free(u->st);
    u->tab = NULL;
    u->counts = NULL;
    u->st = NULL;
}

static inline uint64_t slot_of(uint64_t key, uint64_t cap) { return (key * 0x9e3779b97f4a7c15ull >> 17) & (cap - 1); }

static const rp_um_page *find(const rp_um *u, uint64_t key)
{
    for (uint64_t i = slot_of(key, u->cap);; i = (i + 1) & (u->cap - 1)) {
        if (u->tab[i].key == key)
            return &u->tab[i];
        if (!u->tab[i].key)
            return NULL;
    }
}

static int grow(rp_um *u)
{
    uint64_t nc = u->cap * 2;
    rp_um_page *nt = calloc(nc, sizeof *nt);
    uint32_t *ncnt = calloc(nc * u->spec.gpus, sizeof *ncnt);
    if (!nt || !ncnt) {
        free(nt);
        free(ncnt);
        return -1;
    }
    for (uint64_t i = 0; i < u->cap; i++) {
        if (!u->tab[i].key)
            continue;
        uint64_t j = slot_of(u->tab[i].key, nc);
        while (nt[j].key)
            j = (j + 1) & (nc - 1);
        nt[j] = u->tab[i];
        memcpy(&ncnt[j * u->spec.gpus], &u->counts[i * u->spec.gpus], u->spec.gpus * sizeof *ncnt);
    }
    free(u->tab);
    free(u->counts);
    u->tab = nt;
    u->counts = ncnt;
    u->cap = nc;
    return 0;
}

/* The entry of key, made at home when new; NULL out of memory (the page
 * then stays at home: the caller's fallback). */
static rp_um_page *get(rp_um *u, uint64_t key, uint32_t home)
{
    if ((u->used + 1) * 2 > u->cap && grow(u))
        return NULL;
    uint64_t i = slot_of(key, u->cap);
    while (u->tab[i].key && u->tab[i].key != key)
        i = (i + 1) & (u->cap - 1);
    if (!u->tab[i].key) {
        u->tab[i] = (rp_um_page){key, (uint8_t)home, 0, 0, 0, 0};
        u->used++;
    }
    return &u->tab[i];
}

uint32_t rp_um_owner(const rp_um *u, uint64_t addr, uint32_t home)
{
    const rp_um_page *p = find(u, (addr >> u->spec.page_shift) + 1);
    return p ? p->owner : home;
}

uint32_t rp_um_serving(const rp_um *u, uint64_t addr, uint32_t home, uint32_t gpu)
{
    const rp_um_page *p = find(u, (addr >> u->spec.page_shift) + 1);
    if (!p)
        return home;
    return gpu < 64 && (p->replicas >> gpu & 1) ? gpu : p->owner;
}

static inline uint64_t page_addr(const rp_um *u, const rp_um_page *p) { return (p->key - 1) << u->spec.page_shift; }

/* Shoot page p down in every GPU but `but` (UINT32_MAX: none). */
static void shoot_all(rp_um *u, rp_um_page *p, uint32_t but)
{
    for (uint32_t g = 0; g < u->spec.gpus; g++)
        if (g != but) {
            u->ops.shootdown(u->ops.owner, g, page_addr(u, p), u->spec.page_shift);
            u->st[g].shootdowns++;
        }
}

/* Move page p to GPU `to`, starting at t; fault: a GPU page fault first;
 * shoot: the other GPUs' mappings are shot down (not when a protection
 * fault just did it). Returns when the page has arrived. */
static rp_time move(rp_um *u, rp_um_page *p, uint32_t to, rp_time t, bool fault, bool shoot)
{
    uint32_t from = p->owner;
    uint64_t bytes = 1ull << u->spec.page_shift;
    if (fault) {
        u->st[to].faults++;
        t += u->spec.fault_ps;
    }
    if (shoot) {
        shoot_all(u, p, to);
        t += u->spec.shootdown_ps;
    }
    p->owner = (uint8_t)to;
    p->pending = 0;
    memset(&u->counts[(size_t)(p - u->tab) * u->spec.gpus], 0, u->spec.gpus * sizeof *u->counts);
    t = u->ops.move(u->ops.owner, from, to, page_addr(u, p), bytes, t);
    u->st[to].migrations_in++;
    u->st[to].bytes_in += bytes;
    u->st[from].migrations_out++;
    return t;
}

/* A read-only copy of page p for GPU `to` (um.replicate); fault: a GPU page
 * fault first. The first copy shoots down every other GPU's (writable)
 * mappings. */
static rp_time replicate(rp_um *u, rp_um_page *p, uint32_t to, rp_time t, bool fault)
{
    uint64_t bytes = 1ull << u->spec.page_shift;
    if (fault) {
        u->st[to].faults++;
        t += u->spec.fault_ps;
    }
    if (!p->replicas) {
        shoot_all(u, p, to);
        t += u->spec.shootdown_ps;
        u->n_replicated++;
    }
    p->replicas |= 1ull << to;
    p->pending = 0;
    memset(&u->counts[(size_t)(p - u->tab) * u->spec.gpus], 0, u->spec.gpus * sizeof *u->counts);
    t = u->ops.copy(u->ops.owner, p->owner, to, page_addr(u, p), bytes, t);
    u->st[to].replicas_in++;
    u->st[to].bytes_in += bytes;
    return t;
}

/* Drop every copy of page p (no time). */
static void drop_copies(rp_um *u, rp_um_page *p)
{
    for (uint32_t g = 0; g < u->spec.gpus; g++)
        if (p->replicas >> g & 1)
            u->ops.drop(u->ops.owner, g, page_addr(u, p), 1ull << u->spec.page_shift);
    p->replicas = 0;
    u->n_replicated--;
}

static rp_time walk(rp_um *u, rp_um_page *p, uint32_t gpu, bool write, bool *ro, rp_time now);

rp_time rp_um_walk(rp_um *u, uint32_t gpu, uint64_t addr, uint32_t home, bool write, bool *ro, bool *retry,
                   rp_time now)
{
    *ro = false;
    *retry = false;
    if (!rp_um_moves(u->spec.policy) || gpu >= u->spec.gpus)
        return now;
    rp_um_page *p = get(u, (addr >> u->spec.page_shift) + 1, home);
    if (!p)
        return now;
    if (p->busy_until > now) { /* another walk is servicing the page: after it */
        *retry = true;
        return p->busy_until + 1;
    }
    rp_time t = walk(u, p, gpu, write, ro, now);
    if (t > now)
        p->busy_until = t;
    return t;
}

/* rp_um_walk of page p, not being serviced. */
static rp_time walk(rp_um *u, rp_um_page *p, uint32_t gpu, bool write, bool *ro, rp_time now)
{
    bool first = !p->touched, faulted = false;
    p->touched = 1;
    rp_time t = now;
    if (u->spec.replicate && p->replicas) {
        if (!write) { /* every mapping of a page with copies is read-only */
            *ro = true;
            if (p->owner == gpu || (p->replicas >> gpu & 1))
                return now;
            if (u->spec.policy == RP_UM_COUNTER && p->pending != gpu + 1)
                return now; /* a remote read-only mapping */
            t = replicate(u, p, gpu, t, u->spec.policy != RP_UM_COUNTER);
            u->st[gpu].fault_ps += u->spec.policy != RP_UM_COUNTER ? t - now : 0;
            return t;
        }
        /* a protection fault: the copies go, every other mapping with them */
        u->st[gpu].faults++;
        u->st[gpu].collapses++;
        t += u->spec.fault_ps;
        shoot_all(u, p, gpu);
        t += u->spec.shootdown_ps;
        drop_copies(u, p);
        faulted = true;
    }
    if (p->owner != gpu) {
        /* take: the policy moves the page here (a read under um.replicate
         * copies it instead; first-touch copies what it would leave remote) */
        bool take, fault, copy = u->spec.replicate && !write;
        switch (u->spec.policy) {
        case RP_UM_FIRST_TOUCH: take = first || copy; fault = true; copy = copy && !first; break;
        case RP_UM_ON_FAULT: take = true; fault = true; break;
        default: take = p->pending == gpu + 1; fault = false; break; /* access-counter */
        }
        if (take && copy) {
            t = replicate(u, p, gpu, t, fault);
            *ro = true;
            faulted |= fault;
        } else if (take) {
            t = move(u, p, gpu, t, fault && !faulted, !faulted);
            faulted |= fault;
        }
    }
    if (faulted)
        u->st[gpu].fault_ps += t - now;
    return t;
}

void rp_um_host_write(rp_um *u, uint64_t addr, uint64_t n)
{
    if (!u->n_replicated || !n)
        return;
    uint64_t first = addr >> u->spec.page_shift;
    uint64_t last = (addr + n - 1 < addr ? UINT64_MAX : addr + n - 1) >> u->spec.page_shift;
    if (last - first >= u->cap) { /* a range larger than the table: scan the table */
        for (uint64_t i = 0; i < u->cap && u->n_replicated; i++) {
            rp_um_page *p = &u->tab[i];
            if (p->key && p->replicas && p->key - 1 >= first && p->key - 1 <= last)
                drop_copies(u, p);
        }
        return;
    }
    for (uint64_t k = first; k <= last && u->n_replicated; k++) {
        rp_um_page *p = (rp_um_page *)find(u, k + 1);
        if (p && p->replicas)
            drop_copies(u, p);
    }
}

void rp_um_remote(rp_um *u, uint32_t gpu, uint64_t addr, uint32_t home)
{
    if (u->spec.policy != RP_UM_COUNTER || gpu >= u->spec.gpus)
        return;
    rp_um_page *p = get(u, (addr >> u->spec.page_shift) + 1, home);
    if (!p || p->owner == gpu || p->pending)
        return;
    u->st[gpu].remote_counted++;
    uint32_t *c = &u->counts[(size_t)(p - u->tab) * u->spec.gpus + gpu];
    if (++*c < u->spec.threshold)
        return;
    p->pending = (uint8_t)(gpu + 1);
    u->ops.shootdown(u->ops.owner, gpu, (p->key - 1) << u->spec.page_shift, u->spec.page_shift);
}
