/*
 * gcn_occupancy.c - workgroups per CU (gcn_occupancy.h).
 */
#include "gcn_occupancy.h"

#include <string.h>

#define OCC_MAX_SIMDS 64u

uint32_t gcn_wgs_per_cu(const gcn_cu_limits *lim, uint32_t waves_per_wg, uint32_t vgprs, uint32_t sgprs,
                        uint64_t lds_bytes)
{
    if (!lim || !lim->simds || lim->simds > OCC_MAX_SIMDS)
        return 0;
    uint32_t slots[OCC_MAX_SIMDS], vg[OCC_MAX_SIMDS], sg[OCC_MAX_SIMDS];
    for (uint32_t s = 0; s < lim->simds; s++) {
        slots[s] = lim->wave_slots;
        vg[s] = lim->vgprs;
        sg[s] = lim->sgprs;
    }
    uint64_t lds_left = lim->lds, lds = gcn_lds_alloc(lds_bytes);
    uint32_t v = gcn_vgpr_alloc(vgprs), s_ = gcn_sgpr_alloc(sgprs), n = waves_per_wg ? waves_per_wg : 1u;
    uint32_t wgs = 0;
    for (;;) {
        if (lds > lds_left)
            return wgs;
        for (uint32_t i = 0; i < n; i++) {
            int best = -1;
            for (uint32_t s = 0; s < lim->simds; s++)
                if (slots[s] && vg[s] >= v && sg[s] >= s_ && (best < 0 || slots[s] > slots[best]))
                    best = (int)s;
            if (best < 0)
                return wgs;
            slots[best]--;
            vg[best] -= v;
            sg[best] -= s_;
        }
        lds_left -= lds;
        wgs++; /* ends: every workgroup takes at least one wave slot */
    }
}
