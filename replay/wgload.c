/*
 * wgload.c - workgroup records loaded ahead on a spare thread (rp_wgload.h).
 *
 * A replay of one partition runs its engine on one thread; loading each
 * workgroup's record at its start (reading and decompressing its frames,
 * decoding its waves) took 15% of km's replay on r9nano, 11% of conv's and
 * 7% of gd's (2-core VM, 2026-12-03). With --threads 2 or more a helper
 * loads the next workgroups of the kernel the replay last started one of,
 * in grid order (the order the dispatcher hands them out), while the
 * replay runs; the replay takes a record the helper holds (or waits for
 * one it is loading) and loads any other itself. A record is the same whoever loads it (trc_reader_load_wg),
 * so the results are those of one thread.
 */
#include "rp_wgload.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

enum { SL_EMPTY, SL_LOADING, SL_READY };

typedef struct slot {
    uint32_t kid, idx;
    int state;
    trc_wg *g; /* READY: the record, NULL when it could not be loaded (the replay loads it again, for the message) */
} slot;

struct rp_wgload {
    trc_reader *rd;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* the helper waits on it for work */
    pthread_cond_t done;    /* the replay waits on it for a record the helper is loading */
    bool helper_idle;       /* the helper waits on cv */
    bool main_waiting;      /* the replay waits on done */
    bool stop;
    bool off;           /* records load too fast to be worth a helper (RP_WGLOAD_MIN_NS): the replay loads them */
    uint64_t load_ns, loads; /* the helper's loading time and count */
    bool active;        /* a kernel to load ahead */
    uint32_t kid;       /* its id */
    uint32_t n_wg;      /* its workgroups */
    uint32_t last;      /* the workgroup the replay took last */
    uint32_t limit;     /* the helper loads workgroups in (last, limit): limit = last + 1 + RP_WGLOAD_DEPTH */
    slot s[RP_WGLOAD_DEPTH];
    uint64_t hits, misses;
};

static bool present(const rp_wgload *l, uint32_t idx)
{
    for (uint32_t j = 0; j < RP_WGLOAD_DEPTH; j++)
        if (l->s[j].state != SL_EMPTY && l->s[j].kid == l->kid && l->s[j].idx == idx)
            return true;
    return false;
}

/* The helper loads the furthest workgroup of the window (last, limit) it
 * does not hold: in a burst of starts (a kernel's first round) the replay
 * loads the near ones itself meanwhile, instead of waiting for the helper
 * to get ahead of it; between bursts it fills the window. */
static void *helper(void *arg)
{
    rp_wgload *l = arg;
    pthread_mutex_lock(&l->mu);
    while (!l->stop) {
        slot *f = NULL;
        uint32_t idx = 0;
        if (l->active && !l->off)
            for (uint32_t j = 0; j < RP_WGLOAD_DEPTH && !f; j++)
                if (l->s[j].state == SL_EMPTY)
                    f = &l->s[j];
        if (f) {
            uint32_t end = l->limit < l->n_wg ? l->limit : l->n_wg;
            for (idx = end; idx > l->last + 1 && present(l, idx - 1); idx--)
                ;
            if (idx <= l->last + 1)
                f = NULL; /* the window is held (or empty) */
            else
                idx--;
        }
        if (!f) {
            l->helper_idle = true;
            pthread_cond_wait(&l->cv, &l->mu);
            l->helper_idle = false;
            continue;
        }
        *f = (slot){.kid = l->kid, .idx = idx, .state = SL_LOADING};
        uint32_t kid = f->kid;
        pthread_mutex_unlock(&l->mu);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        trc_wg *g = trc_reader_load_wg(l->rd, kid, idx, NULL, 0);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        pthread_mutex_lock(&l->mu);
        l->load_ns += (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
        if (++l->loads == RP_WGLOAD_PROBE && l->load_ns < RP_WGLOAD_PROBE * RP_WGLOAD_MIN_NS)
            l->off = true; /* (what it holds is still taken) */
        f->g = g;
        f->state = SL_READY;
        if (l->main_waiting)
            pthread_cond_broadcast(&l->done);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

rp_wgload *rp_wgload_start(trc_reader *rd)
{
    rp_wgload *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->rd = rd;
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    pthread_cond_init(&l->done, NULL);
    if (pthread_create(&l->th, NULL, helper, l)) {
        pthread_mutex_destroy(&l->mu);
        pthread_cond_destroy(&l->cv);
        pthread_cond_destroy(&l->done);
        free(l);
        return NULL;
    }
    return l;
}

trc_wg *rp_wgload_take(rp_wgload *l, trc_reader *rd, uint32_t kernel_id, uint32_t i, char *err, size_t errlen)
{
    if (!l)
        return trc_reader_load_wg(rd, kernel_id, i, err, errlen);
    trc_wg *g = NULL;
    bool have = false;
    pthread_mutex_lock(&l->mu);
    for (uint32_t j = 0; j < RP_WGLOAD_DEPTH; j++) {
        slot *f = &l->s[j];
        if (f->state == SL_EMPTY || f->kid != kernel_id || f->idx != i)
            continue;
        while (f->state == SL_LOADING) { /* the helper is loading it: wait rather than load it twice */
            l->main_waiting = true;
            pthread_cond_wait(&l->done, &l->mu);
            l->main_waiting = false;
        }
        g = f->g;
        have = g != NULL;
        *f = (slot){0};
        break;
    }
    /* records the replay will not ask for: another kernel's, or workgroups
     * before this one (a sampled replay skipped them) */
    for (uint32_t j = 0; j < RP_WGLOAD_DEPTH; j++) {
        slot *f = &l->s[j];
        if (f->state == SL_READY && (f->kid != kernel_id || f->idx < i)) {
            trc_wg_free(f->g);
            *f = (slot){0};
        }
    }
    if (!l->active || l->kid != kernel_id) {
        trc_kernel_stats st;
        l->active = trc_reader_kernel_stats(l->rd, kernel_id, &st) == 0;
        l->kid = kernel_id;
        l->n_wg = l->active ? st.n_wg : 0;
    }
    l->last = i;
    l->limit = i + 1 + RP_WGLOAD_DEPTH;
    if (have)
        l->hits++;
    else
        l->misses++;
    /* wake an idle helper once half its slots are free (not at every take:
     * small records, vectoradd's, are taken faster than a wake-up costs) */
    uint32_t empty = 0;
    for (uint32_t j = 0; j < RP_WGLOAD_DEPTH; j++)
        empty += l->s[j].state == SL_EMPTY;
    if (l->helper_idle && !l->off && 2 * empty >= RP_WGLOAD_DEPTH)
        pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->mu);
    return have ? g : trc_reader_load_wg(rd, kernel_id, i, err, errlen);
}

void rp_wgload_stats(rp_wgload *l, uint64_t *hits, uint64_t *misses)
{
    *hits = *misses = 0;
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    *hits = l->hits;
    *misses = l->misses;
    pthread_mutex_unlock(&l->mu);
}

void rp_wgload_stop(rp_wgload *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    l->stop = true;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    pthread_join(l->th, NULL);
    for (uint32_t j = 0; j < RP_WGLOAD_DEPTH; j++)
        trc_wg_free(l->s[j].g); /* (a LOADING one finished before the join) */
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
    pthread_cond_destroy(&l->done);
    free(l);
}
