/*
 * stats.c - the statistics registry (rp_stats.h).
 */
#include "rp_stats.h"

#include <jansson.h>
#include <stdio.h>
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

typedef struct jbuf {
    FILE *f;
    char *p;
    size_t n, cap;
    int failed;
} jbuf;

static int jbuf_flush(jbuf *b)
{
    if (b->n && fwrite(b->p, 1, b->n, b->f) != b->n)
        b->failed = 1;
    b->n = 0;
    return b->failed ? -1 : 0;
}

static int jbuf_put(const char *buf, size_t size, void *data)
{
    jbuf *b = data;
    if (b->n + size > b->cap && jbuf_flush(b))
        return -1;
    if (size > b->cap) {
        if (fwrite(buf, 1, size, b->f) != size)
            b->failed = 1;
        return b->failed ? -1 : 0;
    }
    memcpy(b->p + b->n, buf, size);
    b->n += size;
    return 0;
}

int rp_json_dump_file(const struct json_t *json, const char *path, size_t flags)
{
    jbuf b = {fopen(path, "w"), malloc(256 << 10), 0, 256 << 10, 0};
    int r = -1;
    if (b.f && b.p && json_dump_callback(json, jbuf_put, &b, flags) == 0 && jbuf_flush(&b) == 0)
        r = 0;
    free(b.p);
    if (b.f && fclose(b.f) != 0)
        r = -1;
    return r;
}
