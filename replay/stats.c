/*
 * stats.c - the statistics registry (rp_stats.h).
 */
#include "rp_stats.h"

#include <stdlib.h>
#include <string.h>

int rp_stats_add(rp_stats *s, const char *prefix, const char *name, uint64_t *ptr, const char *unit,
                 const char *desc)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? 2 * s->cap : 256;
        rp_stat *v = realloc(s->v, nc * sizeof *v);
        if (!v)
            return -1;
        s->v = v;
        s->cap = nc;
    }
    size_t l = strlen(prefix) + strlen(name) + 2;
    char *nm = malloc(l);
    if (!nm)
        return -1;
    snprintf(nm, l, "%s%s%s", prefix, *prefix ? "." : "", name);
    s->v[s->n++] = (rp_stat){nm, ptr, unit, desc, s->reg_part - 1};
    return 0;
}

void rp_stats_snapshot(const rp_stats *s, uint64_t *out)
{
    for (size_t i = 0; i < s->n; i++)
        out[i] = *s->v[i].ptr;
}

void rp_stats_snapshot_part(const rp_stats *s, uint64_t *out, int32_t part, bool match, bool delta)
{
    for (size_t i = 0; i < s->n; i++)
        if ((s->v[i].part == part) == match)
            out[i] = delta ? *s->v[i].ptr - out[i] : *s->v[i].ptr;
}

void rp_stats_fini(rp_stats *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].name);
    free(s->v);
    memset(s, 0, sizeof *s);
}

void rp_stats_list(const rp_stats *s, FILE *f)
{
    for (size_t i = 0; i < s->n; i++)
        fprintf(f, "%-48s %-12s %s\n", s->v[i].name, s->v[i].unit, s->v[i].desc ? s->v[i].desc : "");
}
