/*
 * rp_stats.h - the statistics registry of the timing model (STYLE.md #13):
 * components register their counters by pointer with a name, unit and
 * description when they are built; the hot paths do `st->hits++`; the
 * registry snapshots them per kernel and writes them to the stats JSON under
 * stable dotted names ("gpu[1].cu[3].l1v.read_hits").
 */
#ifndef RP_STATS_H
#define RP_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct rp_stat {
    char *name;        /* "gpu[0].cu[3].l1v.read_hits" */
    uint64_t *ptr;     /* the counter, incremented in place on the hot path */
    const char *unit;  /* "count", "bytes", "ps" */
    const char *desc;  /* one line: what it counts (static string) */
    int32_t part;      /* partition whose thread updates it (parallel replay); -1: the host / serial code */
} rp_stat;

typedef struct rp_stats {
    rp_stat *v;
    size_t n, cap;
    int32_t reg_part;  /* partition + 1 recorded for counters registered from now on (0: host) */
} rp_stats;

/* Register counter ptr under prefix.name with its unit and a one-line
 * description (both static strings). Returns 0 or -1 (out of memory). */
int rp_stats_add(rp_stats *s, const char *prefix, const char *name, uint64_t *ptr, const char *unit,
                 const char *desc);
/* Print every registered counter: name, unit, description (one per line). */
void rp_stats_list(const rp_stats *s, FILE *f);
void rp_stats_snapshot(const rp_stats *s, uint64_t *out); /* out: s->n values */
/* Snapshot only the counters of partition `part` (match) or of every other
 * partition and the host (!match); the others' entries of out are kept.
 * delta: store value - out[i] instead of value. */
void rp_stats_snapshot_part(const rp_stats *s, uint64_t *out, int32_t part, bool match, bool delta);
void rp_stats_fini(rp_stats *s);

/* Write a jansson value to the file at path (created or truncated), as
 * json_dump_file(json, path, flags) writes it, byte for byte, through a
 * 256 KiB buffer: json_dump_file hands each token to fwrite (4% of a
 * many-kernel replay with --stats). Returns 0, or -1 when the file cannot
 * be opened, a write fails or memory runs out (errno set by the failing
 * call; the file may then be partly written: callers write to a temporary
 * name and rename it). */
struct json_t;
int rp_json_dump_file(const struct json_t *json, const char *path, size_t flags);
/* As rp_json_dump_file, but json's member `key` (an empty array in json)
 * is written element by element: element i = make(i, arg) (NULL: failure),
 * dumped and released before the next is made, so that the whole array never
 * exists at once. The same bytes as dumping json with the array filled, for
 * flags with JSON_INDENT(n), n >= 1, and key a member of json itself (jansson's
 * layout: an element of that array at depth 2, its lines indented 2n more
 * than when dumped alone). 0, or -1 (cannot write, out of memory, make
 * failed, no such member). */
int rp_json_dump_file_stream(const struct json_t *json, const char *path, size_t flags, const char *key, size_t n,
                             struct json_t *(*make)(size_t i, void *arg), void *arg);

#endif
