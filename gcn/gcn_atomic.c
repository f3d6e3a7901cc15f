/*
 * gcn_atomic.c - the arithmetic of GCN3 memory atomics (FLAT, MUBUF, DS),
 * shared by the emulator (inside its host compare-and-swap loops) and the
 * replay (which applies recorded atomics to its functional memory image), so
 * that both compute the same new value by construction.
 *
 * Source: AMD GCN3 ISA manual, Sec. 9 (MUBUF atomics), 10 (FLAT), 11 (DS
 * ATOMIC_* pseudocode); inc/dec wrap as there.
 */
#include "gcn_isa.h"

#include <math.h>
#include <string.h>

gcn_atomic_op gcn_atomic_of_name(const char *nm)
{
    const char *p = strstr(nm, "atomic_");
    if (p)
        p += 7;
    else if (!strncmp(nm, "ds_", 3))
        p = nm + 3;
    else
        return GCN_AT_NONE;
    /* without "_rtn": ds_min_rtn_i32 is ds_min_i32 that returns the old value */
    char buf[64];
    size_t k = 0;
    for (; *p && k + 1 < sizeof buf; p++) {
        if (!strncmp(p, "_rtn", 4)) { p += 3; continue; }
        buf[k++] = *p;
    }
    buf[k] = 0;
    p = buf;
    /* longest-prefix first where one name starts another (add_f32 / add) */
    static const struct { const char *s; gcn_atomic_op op; } t[] = {
        {"cmpswap", GCN_AT_CMPSWAP}, {"cmpst", GCN_AT_CMPSWAP}, {"swap", GCN_AT_SWAP},
        {"wrxchg", GCN_AT_SWAP},     {"add_f", GCN_AT_FADD},    {"add", GCN_AT_ADD},
        {"rsub", GCN_AT_RSUB},       {"sub", GCN_AT_SUB},       {"smin", GCN_AT_SMIN},
        {"min_i", GCN_AT_SMIN},      {"umin", GCN_AT_UMIN},     {"min_u", GCN_AT_UMIN},
        {"min_f", GCN_AT_FMIN},      {"fmin", GCN_AT_FMIN},     {"smax", GCN_AT_SMAX},
        {"max_i", GCN_AT_SMAX},      {"umax", GCN_AT_UMAX},     {"max_u", GCN_AT_UMAX},
        {"max_f", GCN_AT_FMAX},      {"fmax", GCN_AT_FMAX},     {"and", GCN_AT_AND},
        {"or", GCN_AT_OR},           {"xor", GCN_AT_XOR},       {"inc", GCN_AT_INC},
        {"dec", GCN_AT_DEC},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strncmp(p, t[i].s, strlen(t[i].s)))
            return t[i].op;
    return GCN_AT_UNKNOWN;
}

static double fp_of(uint64_t b, unsigned bytes)
{
    if (bytes >= 8) {
        double d;
        memcpy(&d, &b, 8);
        return d;
    }
    uint32_t u = (uint32_t)b;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint64_t bits_of(double v, unsigned bytes)
{
    if (bytes >= 8) {
        uint64_t b;
        memcpy(&b, &v, 8);
        return b;
    }
    float f = (float)v; /* exact: v is a float sum/min/max computed in double */
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

uint64_t gcn_atomic_apply(gcn_atomic_op op, unsigned bytes, uint64_t old, uint64_t src, uint64_t cmp)
{
    uint64_t mask = bytes >= 8 ? ~0ull : (1ull << (8 * bytes)) - 1;
    old &= mask, src &= mask, cmp &= mask;
    int64_t so = bytes >= 8 ? (int64_t)old : (int64_t)(int32_t)old;
    int64_t ss = bytes >= 8 ? (int64_t)src : (int64_t)(int32_t)src;
    uint64_t r;
    switch (op) {
    case GCN_AT_SWAP: r = src; break;
    case GCN_AT_CMPSWAP: r = old == cmp ? src : old; break;
    case GCN_AT_ADD: r = old + src; break;
    case GCN_AT_SUB: r = old - src; break;
    case GCN_AT_RSUB: r = src - old; break;
    case GCN_AT_SMIN: r = so < ss ? old : src; break;
    case GCN_AT_UMIN: r = old < src ? old : src; break;
    case GCN_AT_SMAX: r = so > ss ? old : src; break;
    case GCN_AT_UMAX: r = old > src ? old : src; break;
    case GCN_AT_AND: r = old & src; break;
    case GCN_AT_OR: r = old | src; break;
    case GCN_AT_XOR: r = old ^ src; break;
    case GCN_AT_INC: r = old >= src ? 0 : old + 1; break;
    case GCN_AT_DEC: r = (old == 0 || old > src) ? src : old - 1; break;
    case GCN_AT_FADD:
        if (bytes >= 8) {
            r = bits_of(fp_of(old, 8) + fp_of(src, 8), 8);
        } else { /* single-precision add, rounded as float */
            float a = (float)fp_of(old, 4), b = (float)fp_of(src, 4);
            r = bits_of(a + b, 4);
        }
        break;
    case GCN_AT_FMIN: r = bits_of(fmin(fp_of(old, bytes), fp_of(src, bytes)), bytes); break;
    case GCN_AT_FMAX: r = bits_of(fmax(fp_of(old, bytes), fp_of(src, bytes)), bytes); break;
    default: r = old; break;
    }
    return r & mask;
}
