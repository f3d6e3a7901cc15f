/*
 * sweep.c - configuration sweeps (rp_sweep.h, docs/sweeps.md): parse a sweep
 * file, expand value lists and ranges into points, validate every point
 * before anything runs, replay the points on worker threads that share one
 * trace reader, write one stats JSON per point and a CSV of all points.
 *
 * Invariants:
 * - Everything that reaches the CSV is an integer stored in the point's JSON
 *   "sweep.row" object (ratios are computed when the CSV is written), so a
 *   resumed sweep and a fresh one, with any number of threads or MPI ranks,
 *   give byte-identical CSV files.
 * - A run-<index>.json exists only when complete: it is written under a
 *   temporary name and renamed. It is reused only if its configuration,
 *   point values and trace match the point's.
 * - "Decode once": all workers share the caller's trc_reader, whose frame
 *   cache is thread-safe (trc.h); a frame another worker is decoding is
 *   waited for, not decoded twice. The caller sizes the cache so that it
 *   holds the trace (no evictions, reported in the summary).
 * - Each rp_sim is private to its worker; the replay library has no global
 *   mutable state (the ISA tables are initialised under pthread_once).
 */
#include "rp_sweep.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rp_sim_internal.h"

/* ---- value lists and ranges ------------------------------------------------- */

static void trim(char *s)
{
    size_t n = strlen(s), a = 0;
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    while (isspace((unsigned char)s[a]))
        a++;
    memmove(s, s + a, n - a + 1);
}

typedef struct num {
    double d;
    uint64_t u;
    int is_int;
    char suf[32];
} num;

/* "16GB/s" -> 16, "GB/s". A leading sign is not accepted (no parameter is
 * negative). Returns 0 or -1. */
static int parse_num(const char *s, num *o, int allow_suffix)
{
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s) && !(*s == '.' && isdigit((unsigned char)s[1])))
        return -1;
    const char *p = s;
    while (isdigit((unsigned char)*p))
        p++;
    if (*p == '.' && isdigit((unsigned char)p[1])) {
        char *end;
        o->d = strtod(s, &end);
        o->is_int = o->d == floor(o->d) && o->d < 1.8e19;
        o->u = o->is_int ? (uint64_t)o->d : 0;
        p = end;
    } else {
        char *end;
        errno = 0;
        o->u = strtoull(s, &end, 10);
        if (errno)
            return -1;
        o->d = (double)o->u;
        o->is_int = 1;
        p = end;
    }
    while (isspace((unsigned char)*p))
        p++;
    size_t n = strlen(p);
    while (n && isspace((unsigned char)p[n - 1]))
        n--;
    if (n >= sizeof o->suf || (n && !allow_suffix))
        return -1;
    memcpy(o->suf, p, n);
    o->suf[n] = 0;
    for (size_t i = 0; i < n; i++)
        if (isspace((unsigned char)o->suf[i]) || o->suf[i] == '+' || o->suf[i] == '*')
            return -1;
    return 0;
}

typedef struct vlist {
    char **v;
    size_t n, cap;
} vlist;

static int vl_push(vlist *l, const char *s)
{
    if (l->n == RP_SWEEP_MAX_VALUES)
        return -2;
    if (l->n == l->cap) {
        size_t nc = l->cap ? 2 * l->cap : 8;
        char **nv = realloc(l->v, nc * sizeof *nv);
        if (!nv)
            return -1;
        l->v = nv;
        l->cap = nc;
    }
    if (!(l->v[l->n] = strdup(s)))
        return -1;
    l->n++;
    return 0;
}

static int vl_push_num(vlist *l, double d, const char *suf)
{
    char b[96];
    double r = nearbyint(d);
    if (fabs(d - r) <= 1e-9 * fmax(1.0, fabs(d)) && r < 1.8e19)
        snprintf(b, sizeof b, "%" PRIu64 "%s", (uint64_t)r, suf);
    else
        snprintf(b, sizeof b, "%.10g%s", d, suf);
    return vl_push(l, b);
}

static int vl_push_u(vlist *l, uint64_t u, const char *suf)
{
    char b[96];
    snprintf(b, sizeof b, "%" PRIu64 "%s", u, suf);
    return vl_push(l, b);
}

/* Expands one "A..B[+S|*F]" item into l. */
static int expand_range(const char *item, const char *dots, vlist *l, char *err, size_t errlen)
{
    char a[128], b[128], st[128] = "";
    char op = '+';
    size_t la = (size_t)(dots - item);
    const char *rest = dots + 2;
    const char *opp = strpbrk(rest, "+*");
    size_t lb = opp ? (size_t)(opp - rest) : strlen(rest);
    if (la >= sizeof a || lb >= sizeof b || (opp && strlen(opp + 1) >= sizeof st)) {
        snprintf(err, errlen, "range '%s' is too long", item);
        return -1;
    }
    memcpy(a, item, la);
    a[la] = 0;
    memcpy(b, rest, lb);
    b[lb] = 0;
    if (opp) {
        op = *opp;
        snprintf(st, sizeof st, "%s", opp + 1);
    }
    num A, B, S;
    if (parse_num(a, &A, 1) || parse_num(b, &B, 1)) {
        snprintf(err, errlen, "range '%s': endpoints must be numbers with an optional unit (e.g. 16GB/s..128GB/s)",
                 item);
        return -1;
    }
    if (strcmp(A.suf, B.suf)) {
        snprintf(err, errlen, "range '%s': both endpoints must use the same unit ('%s' vs '%s')", item, A.suf,
                 B.suf);
        return -1;
    }
    if (A.d > B.d) {
        snprintf(err, errlen, "range '%s': the start is above the end", item);
        return -1;
    }
    if (!opp) {
        S.d = 1;
        S.u = 1;
        S.is_int = 1;
        S.suf[0] = 0;
    } else if (parse_num(st, &S, op == '+')) {
        snprintf(err, errlen, "range '%s': step '%c%s' must be %s", item, op, st,
                 op == '+' ? "a number with the endpoints' unit or none (e.g. +25cycles)" : "a plain factor (e.g. *2)");
        return -1;
    } else if (S.suf[0] && strcmp(S.suf, A.suf)) {
        snprintf(err, errlen, "range '%s': step unit '%s' differs from the endpoints' '%s'", item, S.suf, A.suf);
        return -1;
    }
    int r = 0;
    if (op == '+') {
        if (S.d <= 0) {
            snprintf(err, errlen, "range '%s': the step must be positive", item);
            return -1;
        }
        if (A.is_int && B.is_int && S.is_int) {
            for (uint64_t v = A.u; v <= B.u && !r; v += S.u) {
                r = vl_push_u(l, v, A.suf);
                if (v > UINT64_MAX - S.u)
                    break;
            }
        } else {
            for (uint64_t k = 0; !r; k++) {
                double v = A.d + (double)k * S.d;
                if (v > B.d * (1 + 1e-12) + 1e-12)
                    break;
                r = vl_push_num(l, v, A.suf);
            }
        }
    } else {
        if (S.d <= 1 || A.d <= 0) {
            snprintf(err, errlen, "range '%s': a geometric range needs a factor > 1 and a start > 0", item);
            return -1;
        }
        if (A.is_int && B.is_int && S.is_int) {
            for (uint64_t v = A.u; v <= B.u && !r; v *= S.u) {
                r = vl_push_u(l, v, A.suf);
                if (v > UINT64_MAX / S.u)
                    break;
            }
        } else {
            for (int k = 0; !r; k++) {
                double v = A.d * pow(S.d, k);
                if (v > B.d * (1 + 1e-12))
                    break;
                r = vl_push_num(l, v, A.suf);
            }
        }
    }
    if (r == -2)
        snprintf(err, errlen, "range '%s' gives more than %d values", item, RP_SWEEP_MAX_VALUES);
    else if (r)
        snprintf(err, errlen, "out of memory");
    return r ? -1 : 0;
}

static int expand(const char *spec, int ranges, char ***vals, size_t *n, char *err, size_t errlen)
{
    vlist l = {0};
    char *buf = strdup(spec);
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int r = 0;
    char *p = buf;
    /* strtok would merge empty items: walk the commas by hand. */
    for (;;) {
        char *c = strchr(p, ',');
        if (c)
            *c = 0;
        char item[512];
        snprintf(item, sizeof item, "%s", p);
        trim(item);
        if (!item[0]) {
            snprintf(err, errlen, "'%s': empty value in the list", spec);
            r = -1;
            break;
        }
        const char *dots = ranges ? strstr(item, "..") : NULL;
        if (dots)
            r = expand_range(item, dots, &l, err, errlen);
        else if ((r = vl_push(&l, item)) != 0) {
            if (r == -2)
                snprintf(err, errlen, "'%s' has more than %d values", spec, RP_SWEEP_MAX_VALUES);
            else
                snprintf(err, errlen, "out of memory");
        }
        if (r || !c)
            break;
        p = c + 1;
    }
    free(buf);
    if (r) {
        rp_sweep_free_values(l.v, l.n);
        return -1;
    }
    *vals = l.v;
    *n = l.n;
    return 0;
}

int rp_sweep_expand(const char *spec, char ***vals, size_t *n, char *err, size_t errlen)
{
    return expand(spec, 1, vals, n, err, errlen);
}

void rp_sweep_free_values(char **vals, size_t n)
{
    if (!vals)
        return;
    for (size_t i = 0; i < n; i++)
        free(vals[i]);
    free(vals);
}

/* ---- the sweep file ------------------------------------------------------------ */

typedef struct pctx {
    rp_sweep *sw;
    FILE *f;
    int line;          /* line last read (libinih reads one line per call) */
    int failed, fail_line;
    char msg[768];     /* error text without "file:line: " */
    char *base_spec;
    int base_line;
    char *mode;
    int mode_line;
    rp_config scratch; /* defaults: checks each value's type and bounds */
} pctx;

static char *line_reader(char *str, int num, void *stream)
{
    pctx *x = stream;
    char *r = fgets(str, num, x->f);
    if (r)
        x->line++;
    return r;
}

static int add_dim(pctx *x, const char *key, const char *col, const char *value, int ranges)
{
    rp_sweep *sw = x->sw;
    for (size_t d = 0; d < sw->n_dims; d++)
        if (!strcmp(sw->dims[d].key, key)) {
            snprintf(x->msg, sizeof x->msg, "%s: given twice (first on line %d)", key, sw->dims[d].line);
            return -1;
        }
    rp_sweep_dim *nd = realloc(sw->dims, (sw->n_dims + 1) * sizeof *nd);
    if (!nd) {
        snprintf(x->msg, sizeof x->msg, "out of memory");
        return -1;
    }
    sw->dims = nd;
    rp_sweep_dim *d = &sw->dims[sw->n_dims];
    memset(d, 0, sizeof *d);
    snprintf(d->key, sizeof d->key, "%s", key);
    snprintf(d->col, sizeof d->col, "%s", col);
    d->line = x->line;
    char e[512];
    if (expand(value, ranges, &d->vals, &d->n, e, sizeof e)) {
        snprintf(x->msg, sizeof x->msg, "%s = %s: %s", key, value, e);
        return -1;
    }
    sw->n_dims++;
    /* Type and bounds of every value, before anything runs. */
    if (strcmp(key, "topo"))
        for (size_t i = 0; i < d->n; i++)
            if (rp_config_apply(&x->scratch, key, d->vals[i], "@", e, sizeof e)) {
                snprintf(x->msg, sizeof x->msg, "%s", !strncmp(e, "@: ", 3) ? e + 3 : e);
                return -1;
            }
    return 0;
}

static int ini_cb(void *user, const char *section, const char *name, const char *value)
{
    pctx *x = user;
    if (x->failed)
        return 0;
    int bad = 0;
    if (!strcmp(section, "sweep")) {
        if (!strcmp(name, "base")) {
            free(x->base_spec);
            x->base_spec = strdup(value);
            x->base_line = x->line;
        } else if (!strcmp(name, "gpus")) {
            bad = add_dim(x, "topo.gpus", "gpus", value, 1);
        } else if (!strcmp(name, "mode")) {
            free(x->mode);
            x->mode = strdup(value);
            x->mode_line = x->line;
        } else {
            snprintf(x->msg, sizeof x->msg, "unknown key '%s' in [sweep] (expected base, gpus or mode)", name);
            bad = 1;
        }
    } else if (!strcmp(section, "params")) {
        if (!strcmp(name, "topo.gpus"))
            bad = add_dim(x, "topo.gpus", "gpus", value, 1);
        else if (!strcmp(name, "topo"))
            bad = (snprintf(x->msg, sizeof x->msg, "'topo' is not a parameter: give presets as [sweep] base"), 1);
        else
            bad = add_dim(x, name, name, value, 1);
    } else {
        snprintf(x->msg, sizeof x->msg, "%s%s%s: keys belong in [sweep] or [params]", section[0] ? "[" : "",
                 section[0] ? section : "key outside a section", section[0] ? "]" : "");
        bad = 1;
    }
    if (bad) {
        x->failed = 1;
        x->fail_line = x->line;
        return 0;
    }
    return 1;
}

void rp_sweep_free(rp_sweep *sw)
{
    if (!sw)
        return;
    for (size_t d = 0; d < sw->n_dims; d++)
        rp_sweep_free_values(sw->dims[d].vals, sw->dims[d].n);
    free(sw->dims);
    free(sw->bases);
    free(sw);
}

size_t rp_sweep_value_index(const rp_sweep *sw, size_t i, size_t d)
{
    const rp_sweep_dim *dim = &sw->dims[d];
    if (!sw->cross)
        return dim->n == 1 ? 0 : i;
    for (size_t e = sw->n_dims; e-- > d + 1;)
        i /= sw->dims[e].n;
    return i % dim->n;
}

int rp_sweep_point_config(const rp_sweep *sw, size_t i, rp_config *out, char *err, size_t errlen)
{
    *out = sw->bases[rp_sweep_value_index(sw, i, 0)];
    for (size_t d = 1; d < sw->n_dims; d++) {
        char origin[1100];
        snprintf(origin, sizeof origin, "%s:%d", sw->path, sw->dims[d].line);
        if (rp_config_apply(out, sw->dims[d].key, rp_sweep_value(sw, i, d), origin, err, errlen))
            return -1;
    }
    return 0;
}

static void point_desc(const rp_sweep *sw, size_t i, char *b, size_t n)
{
    size_t o = 0;
    b[0] = 0;
    for (size_t d = 0; d < sw->n_dims && o < n; d++)
        o += (size_t)snprintf(b + o, n - o, "%s%s=%s", d ? " " : "", sw->dims[d].col, rp_sweep_value(sw, i, d));
}

rp_sweep *rp_sweep_load(const char *path, rp_sweep_preset_fn resolve, void *ctx, char *err, size_t errlen)
{
    pctx x;
    memset(&x, 0, sizeof x);
    rp_config_defaults(&x.scratch);
    rp_sweep *sw = calloc(1, sizeof *sw);
    if (!sw) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    snprintf(sw->path, sizeof sw->path, "%s", path);
    x.sw = sw;
    x.f = fopen(path, "r");
    if (!x.f) {
        snprintf(err, errlen, "%s: cannot open the sweep file: %s", path, strerror(errno));
        rp_sweep_free(sw);
        return NULL;
    }
    /* topo first: reserve dims[0]. */
    sw->dims = calloc(1, sizeof *sw->dims);
    if (!sw->dims) {
        fclose(x.f);
        rp_sweep_free(sw);
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    snprintf(sw->dims[0].key, sizeof sw->dims[0].key, "topo");
    snprintf(sw->dims[0].col, sizeof sw->dims[0].col, "topo");
    sw->n_dims = 1;
    int r = ini_parse_stream(line_reader, &x, ini_cb, &x);
    fclose(x.f);
    if (x.failed || r) {
        if (x.failed)
            snprintf(err, errlen, "%s:%d: %s", path, x.fail_line, x.msg);
        else
            snprintf(err, errlen, "%s:%d: INI syntax error", path, r > 0 ? r : x.line);
        goto fail;
    }
    /* Presets: dims[0]. */
    if (!x.base_spec) {
        snprintf(err, errlen, "%s: no base preset ([sweep] base = r9nano, a preset name or an .ini path)", path);
        goto fail;
    }
    {
        char e[512];
        rp_sweep_dim *d0 = &sw->dims[0];
        d0->line = x.base_line;
        if (expand(x.base_spec, 0, &d0->vals, &d0->n, e, sizeof e)) {
            snprintf(err, errlen, "%s:%d: base = %s: %s", path, x.base_line, x.base_spec, e);
            goto fail;
        }
        sw->bases = calloc(d0->n, sizeof *sw->bases);
        if (!sw->bases) {
            snprintf(err, errlen, "%s: out of memory", path);
            goto fail;
        }
        for (size_t i = 0; i < d0->n; i++) {
            char file[4200];
            if (resolve(d0->vals[i], file, sizeof file, ctx)) {
                snprintf(err, errlen, "%s:%d: base preset '%s' not found (r9nano, m-sgpu, u-mgpu, d-mgpu or an .ini path)",
                         path, x.base_line, d0->vals[i]);
                goto fail;
            }
            rp_config_defaults(&sw->bases[i]);
            if (rp_config_load_file(&sw->bases[i], file, e, sizeof e)) {
                snprintf(err, errlen, "%s:%d: base: %s", path, x.base_line, e);
                goto fail;
            }
        }
    }
    /* gpus right after topo, so that it is the second loop of the cross product. */
    for (size_t d = 2; d < sw->n_dims; d++)
        if (!strcmp(sw->dims[d].key, "topo.gpus")) {
            rp_sweep_dim t = sw->dims[d];
            memmove(&sw->dims[2], &sw->dims[1], (d - 1) * sizeof t);
            sw->dims[1] = t;
        }
    if (!x.mode || !strcmp(x.mode, "cross"))
        sw->cross = 1;
    else if (!strcmp(x.mode, "list"))
        sw->cross = 0;
    else {
        snprintf(err, errlen, "%s:%d: mode = %s: expected cross or list", path, x.mode_line, x.mode);
        goto fail;
    }
    if (sw->cross) {
        uint64_t n = 1;
        for (size_t d = 0; d < sw->n_dims; d++) {
            n *= sw->dims[d].n;
            if (n > RP_SWEEP_MAX_POINTS) {
                snprintf(err, errlen, "%s: the cross product has more than %d points", path, RP_SWEEP_MAX_POINTS);
                goto fail;
            }
        }
        sw->n_points = (size_t)n;
    } else {
        size_t n = 1, first = 0;
        for (size_t d = 0; d < sw->n_dims; d++) {
            if (sw->dims[d].n == 1)
                continue;
            if (n != 1 && sw->dims[d].n != n) {
                snprintf(err, errlen,
                         "%s:%d: mode = list: %s has %zu values but %s has %zu (lists are zipped: give each key the "
                         "same number of values, or one)",
                         path, sw->dims[d].line, sw->dims[d].key, sw->dims[d].n, sw->dims[first].key, n);
                goto fail;
            }
            n = sw->dims[d].n;
            first = d;
        }
        sw->n_points = n;
    }
    /* Every point's configuration, before anything runs. */
    for (size_t i = 0; i < sw->n_points; i++) {
        rp_config c;
        char e[512], desc[512];
        if (rp_sweep_point_config(sw, i, &c, e, sizeof e)) {
            snprintf(err, errlen, "%s", e);
            goto fail;
        }
        if (rp_config_validate(&c, e, sizeof e)) {
            point_desc(sw, i, desc, sizeof desc);
            snprintf(err, errlen, "%s: point %zu (%s): %s", path, i, desc, e);
            goto fail;
        }
    }
    free(x.base_spec);
    free(x.mode);
    return sw;
fail:
    free(x.base_spec);
    free(x.mode);
    rp_sweep_free(sw);
    return NULL;
}

/* ---- running the points ------------------------------------------------------------ */

typedef struct runner {
    const rp_sweep *sw;
    trc_reader *rd;
    const rp_sweep_opts *o;
    rp_sweep_row *rows;
    size_t *mine, n_mine, next, done;
    uint64_t trace_bytes;
    double t0; /* wall clock at the start (s): the progress lines' ETA */
    pthread_mutex_t mu;
    rp_sweep_summary *sum;
} runner;

static const char *status_name(int st)
{
    switch (st) {
    case RP_SWEEP_OK: return "ok";
    case RP_SWEEP_MISMATCH: return "mismatch";
    case RP_SWEEP_ERROR: return "error";
    default: return "pending";
    }
}

/* The row's integer fields, by name: the JSON "sweep.row" object. */
#define ROW_FIELDS(X)                                                                                      \
    X(gpus) X(kernels) X(period_ps) X(time_ps) X(kernel_ps) X(kernel_cycles) X(instructions) X(l1v_hits)   \
    X(l1v_accesses) X(l2_hits) X(l2_accesses) X(dram_bytes) X(link_bytes) X(mismatches) X(atomic_diffs)  \
    X(skipped) X(bound_ps) X(sampled_kernels)

static void cfg_cmp(void *arg, const char *key, const char *val)
{
    void **a = arg;
    json_t *cfg = a[0];
    int *same = a[1];
    const char *v = json_string_value(json_object_get(cfg, key));
    if (!v || strcmp(v, val))
        *same = 0;
}

/* 1 and the row filled if path is a complete JSON of this very point. */
static int try_reuse(runner *R, size_t i, const rp_config *cfg, const char *path, rp_sweep_row *row, int *existed)
{
    *existed = access(path, F_OK) == 0;
    if (!*existed)
        return 0;
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root)
        return 0;
    int ok = 0;
    json_t *sj = json_object_get(root, "sweep"), *rj = json_object_get(sj, "row"),
           *pj = json_object_get(sj, "point"), *cj = json_object_get(root, "config");
    const char *tr = json_string_value(json_object_get(sj, "trace"));
    const char *st = json_string_value(json_object_get(sj, "status"));
    if (!json_is_object(rj) || !json_is_object(pj) || !json_is_object(cj) || !tr || !st)
        goto out;
    if (json_integer_value(json_object_get(sj, "index")) != (json_int_t)i ||
        strcmp(tr, R->o->trace_path ? R->o->trace_path : "") ||
        (uint64_t)json_integer_value(json_object_get(sj, "trace_bytes")) != R->trace_bytes)
        goto out;
    for (size_t d = 0; d < R->sw->n_dims; d++) {
        const char *v = json_string_value(json_object_get(pj, R->sw->dims[d].col));
        if (!v || strcmp(v, rp_sweep_value(R->sw, i, d)))
            goto out;
    }
    int same = 1;
    void *arg[2] = {cj, &same};
    rp_config_foreach(cfg, cfg_cmp, arg);
    if (!same)
        goto out;
    memset(row, 0, sizeof *row);
    row->index = i;
#define GET(f)                                                                                             \
    {                                                                                                      \
        json_t *v = json_object_get(rj, #f);                                                               \
        if (!json_is_integer(v))                                                                           \
            goto out;                                                                                      \
        row->f = (__typeof__(row->f))json_integer_value(v);                                                \
    }
    ROW_FIELDS(GET)
#undef GET
    if (!strcmp(st, "ok"))
        row->status = RP_SWEEP_OK;
    else if (!strcmp(st, "mismatch"))
        row->status = RP_SWEEP_MISMATCH;
    else
        goto out;
    row->reused = 1;
    ok = 1;
out:
    json_decref(root);
    return ok;
}

static void fill_row(rp_sim *s, rp_sweep_row *row)
{
    row->gpus = s->n_gpus;
    row->kernels = (uint32_t)s->n_kernels;
    row->period_ps = s->clk.period_ps;
    row->time_ps = rp_sim_now(s);
    for (size_t k = 0; k < s->n_kernels; k++) {
        const rp_kernel *kk = s->kernels[k];
        row->kernel_ps += kk->end - kk->start;
        row->kernel_cycles += (kk->end - kk->start) / s->clk.period_ps;
        row->instructions += kk->n_instr;
    }
    if (s->cfg.sample_enable) {
        /* the skipped instructions count too (rp_sample_summary: the
         * trace's instructions of the kernels that ran), so that ipc is the
         * predicted one; the counters below cover the detailed work only */
        rp_sample_sum ss;
        rp_sample_summary(s, &ss);
        row->instructions = ss.instr;
        row->skipped = ss.skipped;
        row->bound_ps = ss.bound_ps;
        row->sampled_kernels = ss.sampled;
    }
    /* Whole-run totals over all GPUs: a pseudo-kernel spanning them. */
    static const rp_kernel zero;
    rp_kernel all = zero;
    all.gpu_first = 0;
    all.gpu_count = s->n_gpus;
    rp_ksum t = {0};
    rp_ksum_take(s, &all, &t, -1, false); /* every partition's GPUs */
    row->l1v_hits = t.l1v_hits;
    row->l1v_accesses = t.l1v_accesses;
    row->l2_hits = t.l2_hits;
    row->l2_accesses = t.l2_accesses;
    row->dram_bytes = t.dram_bytes;
    row->link_bytes = t.link_bytes;
    const rp_check *c = &s->check;
    row->mismatches = c->load_mismatches + c->lds_mismatches + c->d2h_mismatches + c->walk_errors;
    row->atomic_diffs = c->atomic_mismatches;
    row->status = row->mismatches ? RP_SWEEP_MISMATCH : RP_SWEEP_OK;
}

/* The point's stats JSON with its "sweep" object last (rp_sim_write_json_with:
 * a temporary file renamed). */
static int write_point_json(runner *R, size_t i, rp_sim *s, const char *path, char *err, size_t errlen)
{
    const rp_sweep_row *row = &R->rows[i];
    json_t *sj = json_object(), *pj = json_object(), *rj = json_object();
    json_object_set_new(sj, "index", json_integer((json_int_t)i));
    json_object_set_new(sj, "sweep_file", json_string(R->sw->path));
    json_object_set_new(sj, "trace", json_string(R->o->trace_path ? R->o->trace_path : ""));
    json_object_set_new(sj, "trace_bytes", json_integer((json_int_t)R->trace_bytes));
    for (size_t d = 0; d < R->sw->n_dims; d++)
        json_object_set_new(pj, R->sw->dims[d].col, json_string(rp_sweep_value(R->sw, i, d)));
    json_object_set_new(sj, "point", pj);
    json_object_set_new(sj, "status", json_string(status_name(row->status)));
#define PUT(f) json_object_set_new(rj, #f, json_integer((json_int_t)row->f));
    ROW_FIELDS(PUT)
#undef PUT
    json_object_set_new(sj, "row", rj);
    if (rp_sim_write_json_with(s, path, R->o->trace_path, "sweep", sj)) {
        snprintf(err, errlen, "%s", s->err);
        return -1;
    }
    return 0;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void run_point(runner *R, size_t i)
{
    const rp_sweep_opts *o = R->o;
    rp_sweep_row *row = &R->rows[i];
    char path[1100], err[1024] = "";
    rp_config cfg;
    memset(row, 0, sizeof *row);
    row->index = i;
    snprintf(path, sizeof path, "%.1000s/run-%zu.json", o->dir, i);
    double t0 = now_s();
    int existed = 0;
    if (rp_sweep_point_config(R->sw, i, &cfg, err, sizeof err)) {
        row->status = RP_SWEEP_ERROR;
    } else if (!try_reuse(R, i, &cfg, path, row, &existed)) {
        memset(row, 0, sizeof *row);
        row->index = i;
        row->gpus = cfg.gpus;
        rp_sim *s = calloc(1, sizeof *s);
        if (!s) {
            snprintf(err, sizeof err, "out of memory");
            row->status = RP_SWEEP_ERROR;
        } else if (rp_sim_init(s, &cfg, R->rd, NULL) || rp_sim_run(s)) {
            snprintf(err, sizeof err, "%s", s->err);
            row->status = RP_SWEEP_ERROR;
        } else {
            fill_row(s, row);
            if (write_point_json(R, i, s, path, err, sizeof err))
                row->status = RP_SWEEP_ERROR;
        }
        if (s) {
            rp_sim_fini(s);
            free(s);
        }
        row->wall_s = now_s() - t0;
    }
    pthread_mutex_lock(&R->mu);
    size_t k = ++R->done;
    rp_sweep_summary *sum = R->sum;
    if (row->status == RP_SWEEP_ERROR)
        sum->errors++;
    else if (row->reused)
        sum->reused++;
    else
        sum->run++;
    if (row->status == RP_SWEEP_MISMATCH)
        sum->mismatches++;
    sum->cpu_s += row->wall_s;
    if (o->log) {
        char desc[512], who[32] = "";
        point_desc(R->sw, i, desc, sizeof desc);
        if (o->nranks > 1)
            snprintf(who, sizeof who, " rank %u", o->rank);
        /* progress (issue 18): the wall time so far and, from its mean per
         * point done, what the remaining points need */
        char eta[64] = "";
        if (k < R->n_mine) {
            double el = now_s() - R->t0;
            snprintf(eta, sizeof eta, "; %.0f s elapsed, ETA %.0f s", el, el / (double)k * (double)(R->n_mine - k));
        }
        if (row->status == RP_SWEEP_ERROR)
            fprintf(o->log, "sweep%s: [%zu/%zu] point %zu (%s): error: %s%s\n", who, k, R->n_mine, i, desc, err, eta);
        else
            fprintf(o->log, "sweep%s: [%zu/%zu] point %zu (%s): %" PRIu64 " cycles, %s, %s%s%s\n", who, k,
                    R->n_mine, i, desc, row->time_ps / (row->period_ps ? row->period_ps : 1),
                    status_name(row->status), row->reused ? "reused " : "",
                    row->reused ? path : (snprintf(err, sizeof err, "%.2f s", row->wall_s), err), eta);
        if (existed && !row->reused && row->status != RP_SWEEP_ERROR)
            fprintf(o->log, "sweep%s: %s was incomplete or from another sweep: ran the point again\n", who, path);

        fflush(o->log);
    }
    pthread_mutex_unlock(&R->mu);
}

static void *worker(void *arg)
{
    runner *R = arg;
    for (;;) {
        pthread_mutex_lock(&R->mu);
        size_t k = R->next < R->n_mine ? R->next++ : SIZE_MAX;
        pthread_mutex_unlock(&R->mu);
        if (k == SIZE_MAX)
            return NULL;
        run_point(R, R->mine[k]);
    }
}

int rp_sweep_run(const rp_sweep *sw, trc_reader *rd, const rp_sweep_opts *o, rp_sweep_row *rows,
                 rp_sweep_summary *sum, char *err, size_t errlen)
{
    memset(sum, 0, sizeof *sum);
    if (mkdir(o->dir, 0777) && errno != EEXIST) {
        snprintf(err, errlen, "%.800s: cannot create the output directory: %s", o->dir, strerror(errno));
        return -1;
    }
    runner R;
    memset(&R, 0, sizeof R);
    R.sw = sw;
    R.rd = rd;
    R.o = o;
    R.rows = rows;
    R.sum = sum;
    struct stat st;
    if (o->trace_path && stat(o->trace_path, &st) == 0)
        R.trace_bytes = (uint64_t)st.st_size;
    unsigned nr = o->nranks ? o->nranks : 1;
    R.mine = malloc((sw->n_points / nr + 1) * sizeof *R.mine);
    if (!R.mine) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = o->rank; i < sw->n_points; i += nr)
        R.mine[R.n_mine++] = i;
    sum->mine = R.n_mine;
    pthread_mutex_init(&R.mu, NULL);
    unsigned jobs = o->jobs ? o->jobs : 1;
    if (jobs > R.n_mine)
        jobs = R.n_mine ? (unsigned)R.n_mine : 1;
    double t0 = now_s();
    R.t0 = t0;
    pthread_t *th = calloc(jobs, sizeof *th);
    unsigned started = 0;
    if (th && jobs > 1)
        for (unsigned t = 0; t < jobs; t++)
            if (pthread_create(&th[started], NULL, worker, &R) == 0)
                started++;
    if (!started)
        worker(&R); /* one job, or no thread could start: run here */
    for (unsigned t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    free(th);
    sum->wall_s = now_s() - t0;
    pthread_mutex_destroy(&R.mu);
    free(R.mine);
    return 0;
}

/* ---- CSV ---------------------------------------------------------------------- */

static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

int rp_sweep_write_csv(const rp_sweep *sw, const rp_sweep_row *rows, const char *path, char *err, size_t errlen)
{
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%.1100s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, errlen, "%.800s: cannot write the CSV: %s", tmp, strerror(errno));
        return -1;
    }
    int gd = -1;
    for (size_t d = 1; d < sw->n_dims; d++)
        if (!strcmp(sw->dims[d].key, "topo.gpus"))
            gd = (int)d;
    fputs("index,topo,gpus", f);
    for (size_t d = 1; d < sw->n_dims; d++)
        if ((int)d != gd) {
            fputc(',', f);
            csv_field(f, sw->dims[d].col);
        }
    fputs(",status,kernels,cycles,time_ps,kernel_cycles,kernel_time_ps,instructions,ipc,l1v_hit_rate,"
          "l2_hit_rate,dram_bytes,link_bytes,mismatches,sampled_kernels,skipped_instructions,kernel_time_bound_ps\n",
          f);
    for (size_t i = 0; i < sw->n_points; i++) {
        const rp_sweep_row *r = &rows[i];
        rp_config c;
        char e[512];
        fprintf(f, "%zu,", i);
        csv_field(f, rp_sweep_value(sw, i, 0));
        uint32_t g = r->gpus;
        if (!g)
            g = rp_sweep_point_config(sw, i, &c, e, sizeof e) ? 0 : c.gpus;
        fprintf(f, ",%" PRIu32, g);
        for (size_t d = 1; d < sw->n_dims; d++)
            if ((int)d != gd) {
                fputc(',', f);
                csv_field(f, rp_sweep_value(sw, i, d));
            }
        fprintf(f, ",%s", status_name(r->status));
        if (r->status == RP_SWEEP_OK || r->status == RP_SWEEP_MISMATCH)
            fprintf(f,
                    ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.4f,%.4f,%.4f,%" PRIu64
                    ",%" PRIu64 ",%" PRIu64 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 "\n",
                    r->kernels, r->period_ps ? r->time_ps / r->period_ps : 0, r->time_ps, r->kernel_cycles,
                    r->kernel_ps, r->instructions, ratio(r->instructions, r->kernel_cycles),
                    ratio(r->l1v_hits, r->l1v_accesses), ratio(r->l2_hits, r->l2_accesses), r->dram_bytes,
                    r->link_bytes, r->mismatches, r->sampled_kernels, r->skipped, r->bound_ps);
        else
            fputs(",,,,,,,,,,,,,,,\n", f);
    }
    if (ferror(f) | fclose(f) || rename(tmp, path)) {
        snprintf(err, errlen, "%.800s: cannot write the CSV: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}
