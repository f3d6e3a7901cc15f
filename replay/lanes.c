/* The schedule of ordered jobs applied by every lane (rp_lanes.h). */
#include "replay/rp_lanes.h"

#include <stdlib.h>

int rp_lanes_init(rp_lanes *l, uint32_t lanes, uint32_t q)
{
    *l = (rp_lanes){.lanes = lanes ? lanes : 1, .q = q ? q : 1};
    l->next = calloc(l->lanes, sizeof *l->next);
    l->slot = calloc(l->q, sizeof *l->slot);
    if (!l->next || !l->slot) {
        rp_lanes_fini(l);
        return -1;
    }
    return 0;
}

void rp_lanes_fini(rp_lanes *l)
{
    free(l->next);
    free(l->slot);
    l->next = NULL;
    l->slot = NULL;
}

void rp_lanes_start(rp_lanes *l, uint32_t count)
{
    l->count = l->stop_at = count;
    l->claimed = l->released = l->busy = 0;
    for (uint32_t i = 0; i < l->lanes; i++)
        l->next[i] = 0;
    for (uint32_t i = 0; i < l->q; i++)
        l->slot[i] = (rp_lanes_slot){0};
}

/* May job be claimed now: the next undecoded one, its slot free? */
static bool claimable(const rp_lanes *l, uint32_t job)
{
    return job == l->claimed && job < l->stop_at && job < l->released + l->q;
}

static rp_lanes_step claim(rp_lanes *l, uint32_t job)
{
    rp_lanes_slot *d = &l->slot[job % l->q];
    d->job = job;
    d->ready = false;
    d->lanes_done = 0;
    l->claimed++;
    l->busy++;
    return (rp_lanes_step){RP_LANES_DECODE, job};
}

rp_lanes_step rp_lanes_pick(rp_lanes *l, uint32_t lane, bool (*would_wait)(void *ctx, uint32_t job), void *ctx)
{
    uint32_t j = l->next[lane];
    /* (a lane ahead of the others finds its slot still holding job j - q) */
    const rp_lanes_slot *d = &l->slot[j % l->q];
    if (j < l->stop_at && d->ready && d->job == j) {
        l->busy++;
        return (rp_lanes_step){RP_LANES_APPLY, j};
    }
    if (!claimable(l, l->claimed))
        return (rp_lanes_step){RP_LANES_NONE, 0};
    if (would_wait && would_wait(ctx, l->claimed)) {
        l->busy++;
        return (rp_lanes_step){RP_LANES_WARM, l->claimed};
    }
    return claim(l, l->claimed);
}

bool rp_lanes_applied(rp_lanes *l, uint32_t lane, uint32_t job, bool failed)
{
    l->busy--;
    l->next[lane] = job + 1;
    bool first = false;
    if (failed && job < l->stop_at) {
        l->stop_at = job;
        first = true;
    }
    rp_lanes_slot *d = &l->slot[job % l->q];
    if (++d->lanes_done == l->lanes)
        while (l->released < l->claimed && l->slot[l->released % l->q].lanes_done == l->lanes) {
            rp_lanes_slot *r = &l->slot[l->released % l->q];
            r->ready = false;
            r->lanes_done = 0;
            l->released++;
        }
    return first;
}

void rp_lanes_decoded(rp_lanes *l, uint32_t job)
{
    l->busy--;
    l->slot[job % l->q].ready = true;
}

rp_lanes_step rp_lanes_warmed(rp_lanes *l, uint32_t job, bool did)
{
    l->busy--;
    /* while the lock was let go, other threads may have claimed jobs up to
     * the last free slot, or a failure stopped the run: claim only what is
     * still free (claiming job with its slot in use overwrote a job a lane
     * had still to apply, and that lane waited for ever) */
    if (did || !claimable(l, job))
        return (rp_lanes_step){RP_LANES_NONE, 0};
    return claim(l, job);
}

bool rp_lanes_done(const rp_lanes *l)
{
    if (l->busy)
        return false;
    for (uint32_t i = 0; i < l->lanes; i++)
        if (l->next[i] < l->stop_at)
            return false;
    return true;
}
