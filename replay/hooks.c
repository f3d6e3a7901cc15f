/*
 * hooks.c - the observation points' registry (rp_hooks.h).
 */
#include "rp_hooks.h"

#include <stddef.h>

int rp_hooks_attach(rp_hooks *h, rp_hook_point p, rp_hook_fn fn, void *arg)
{
    if ((unsigned)p >= RP_HOOK_COUNT || !fn || h->n[p] >= RP_HOOK_MAX_OBSERVERS)
        return -1;
    h->obs[p][h->n[p]].fn = fn;
    h->obs[p][h->n[p]].arg = arg;
    h->n[p]++;
    return 0;
}

void rp_hooks_call(const rp_hooks *h, const rp_hook_ctx *c)
{
    for (uint32_t i = 0; i < h->n[c->point]; i++)
        h->obs[c->point][i].fn(h->obs[c->point][i].arg, c);
}

const char *rp_hook_name(unsigned p)
{
    static const char *const n[RP_HOOK_COUNT] = {
        [RP_HOOK_KERNEL_START] = "kernel.start", [RP_HOOK_KERNEL_END] = "kernel.end",
        [RP_HOOK_WG_START] = "workgroup.start",  [RP_HOOK_WG_END] = "workgroup.end",
        [RP_HOOK_WAVE_ISSUE] = "wave.issue",     [RP_HOOK_WAVE_RETIRE] = "wave.retire",
        [RP_HOOK_ACCESS_ISSUE] = "access.issue", [RP_HOOK_ACCESS_DONE] = "access.done",
        [RP_HOOK_LINK_SEND] = "link.send",       [RP_HOOK_MISMATCH] = "check.mismatch",
        [RP_HOOK_CACHE_ACCESS] = "cache.access", [RP_HOOK_HOST_COPY] = "host.copy",
        [RP_HOOK_VALUE] = "check.value",
    };
    return p < RP_HOOK_COUNT ? n[p] : "?";
}
