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

/* b on path, opened for writing with its buffer: 0, or -1 (jbuf_close
 * still to be called). */
static int jbuf_open(jbuf *b, const char *path)
{
    *b = (jbuf){fopen(path, "w"), malloc(256 << 10), 0, 256 << 10, 0};
    return b->f && b->p ? 0 : -1;
}

/* Flush (when r is 0) and close b; r, or -1 when the flush or the close fails. */
static int jbuf_close(jbuf *b, int r)
{
    if (!r && jbuf_flush(b))
        r = -1;
    free(b->p);
    if (b->f && fclose(b->f) != 0)
        r = -1;
    return r;
}

/* jbuf_put with pad[0..npad) after every newline (an element dumped alone
 * placed deeper in its document). */
typedef struct {
    jbuf *b;
    const char *pad;
    size_t npad;
} jpad;

static int jpad_put(const char *buf, size_t size, void *data)
{
    jpad *x = data;
    const char *p = buf, *end = buf + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t k = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        if (jbuf_put(p, k, x->b) || (nl && jbuf_put(x->pad, x->npad, x->b)))
            return -1;
        p += k;
    }
    return 0;
}

int rp_json_dump_file_stream(const struct json_t *json, const char *path, size_t flags, const char *key, size_t n,
                             struct json_t *(*make)(size_t i, void *arg), void *arg)
{
    size_t ind = flags & 0x1F; /* JSON_INDENT(n) (jansson: JSON_MAX_INDENT) */
    char *head = ind ? json_dumps(json, flags) : NULL;
    char marker[256], pad[2 * 0x1F + 2];
    int w = snprintf(marker, sizeof marker, "\n%*s\"%s\": []", (int)ind, "", key);
    const char *at = head && w > 0 && (size_t)w < sizeof marker ? strstr(head, marker) : NULL;
    if (!at) {
        free(head);
        return -1;
    }
    jbuf b;
    int r = jbuf_open(&b, path);
    size_t pre = (size_t)(at - head) + (size_t)w - 2; /* up to and including the key's ": " */
    if (!r)
        r = jbuf_put(head, pre, &b) || jbuf_put("[", 1, &b) ? -1 : 0;
    memset(pad, ' ', sizeof pad);
    jpad jp = {&b, pad, 2 * ind};
    for (size_t i = 0; i < n && !r; i++) {
        /* jansson's array: "[", newline and the element's indent, elements
         * joined by "," and the same, then a newline, the key's indent, "]" */
        if (jbuf_put(i ? ",\n" : "\n", i ? 2 : 1, &b) || jbuf_put(pad, 2 * ind, &b)) {
            r = -1;
            break;
        }
        struct json_t *o = make(i, arg);
        if (!o || json_dump_callback(o, jpad_put, &jp, flags))
            r = -1;
        json_decref(o);
    }
    if (!r && n)
        r = jbuf_put("\n", 1, &b) || jbuf_put(pad, ind, &b) ? -1 : 0;
    if (!r)
        r = jbuf_put("]", 1, &b) || jbuf_put(at + w, strlen(at + w), &b) ? -1 : 0;
    free(head);
    return jbuf_close(&b, r);
}

int rp_json_dump_file(const struct json_t *json, const char *path, size_t flags)
{
    jbuf b;
    int r = jbuf_open(&b, path);
    if (!r && json_dump_callback(json, jbuf_put, &b, flags))
        r = -1;
    return jbuf_close(&b, r);
}
