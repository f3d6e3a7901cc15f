/*
 * trc_himg.h - the host image (format 2.6, docs/trace-format.md Sec. 3.5
 * "Host-image loads"): what the host wrote into device memory, by event.
 *
 * A load flagged TRC_MO_HOST carries no values in the trace: they are the
 * bytes the host image holds at its lanes' addresses as of its kernel's
 * LAUNCH event, i.e. for each byte the value the last H2D or INIT copy or
 * memset before that event wrote there, unless a D2D copy wrote the byte or
 * a FREE freed it after that (then the byte is unknown). The writer flags a load only when
 * the values the emulator loaded equal its image (trc_himg_equal, at the
 * kernel's run: no event is written while a kernel runs); the reader
 * rebuilds the values from the trace's own events (trc_himg_read with the
 * launch event's index). Both sides build the image with the same calls,
 * in event order.
 *
 * Shape: per 4 KiB page of device addresses, the segments events wrote, in
 * event order (a segment: [lo, hi) of the page, the event's index, and its
 * bytes, a fill value, or "unknown"). Data bytes are not copied: the caller
 * keeps them alive as long as the image.
 */
#ifndef TRC_HIMG_H
#define TRC_HIMG_H

#include <stddef.h>
#include <stdint.h>

#include "traceformat/trc.h"

typedef struct trc_himg trc_himg;

/* What an event does to the image (the format's rule, one place for the
 * writer and the reader): an H2D or INIT copy writes its bytes, a memset its
 * value, a D2D copy or a FREE makes its bytes unknown; the rest (and any
 * event of size 0) leaves it alone. */
enum { TRC_HIMG_NONE, TRC_HIMG_DATA, TRC_HIMG_FILL, TRC_HIMG_FORGET };
static inline int trc_himg_effect(const trc_event *e)
{
    if (!e->size) return TRC_HIMG_NONE;
    if (e->kind == TRC_EV_MEMSET) return TRC_HIMG_FILL;
    if (e->kind == TRC_EV_FREE || (e->kind == TRC_EV_COPY && e->copy_kind == TRC_COPY_D2D)) return TRC_HIMG_FORGET;
    if (e->kind == TRC_EV_COPY && e->copy_kind != TRC_COPY_D2H) return TRC_HIMG_DATA;
    return TRC_HIMG_NONE;
}

/* Whether a memory op with these mem_flags may take its values from the
 * image: a plain load (not a store, atomic, LDS or private access; a scalar
 * load may). */
static inline int trc_himg_load_ok(uint32_t mem_flags)
{
    return (mem_flags & (TRC_MO_LOAD | TRC_MO_STORE | TRC_MO_ATOMIC | TRC_MO_LDS | TRC_MO_SCRATCH)) == TRC_MO_LOAD;
}

/* An image that keeps every event's segments (the reader's: reads as of any
 * event). */
trc_himg *trc_himg_create(void);
/* An image for reads as of now only (the writer's): a segment that covers
 * older ones of its page drops them, and release(ctx, tag) is called for
 * each dropped segment of data (tag: what the write that made it passed),
 * so that the caller can free bytes nothing points into any more. */
trc_himg *trc_himg_create_latest(void (*release)(void *ctx, uint32_t tag), void *ctx);
void trc_himg_destroy(trc_himg *h); /* accepts NULL */

/* Largest memset the image takes (1 GiB, a choice: a segment per 4 KiB
 * page); a larger one makes its bytes unknown instead (format rule, Sec. 3.5). */
#define TRC_HIMG_MAX_FILL ((uint64_t)1 << 30)

/* Event `ev` (index in program order; non-decreasing from call to call)
 * wrote [addr, addr + n): data (n bytes, kept by the caller; tag: the
 * caller's name for them, see trc_himg_create_latest), or with data NULL
 * the byte `fill` everywhere (over TRC_HIMG_MAX_FILL bytes: as
 * trc_himg_forget). Returns the segments it made (one per 4 KiB page it
 * touches; 0 when it made the bytes unknown instead: each holds `tag` until
 * dropped), or -1 (out of memory; the image is then unusable:
 * trc_himg_failed). A forget makes segments only on the pages that hold
 * some already; it returns 0 or -1. */
int trc_himg_write(trc_himg *h, uint64_t ev, uint64_t addr, uint64_t n, const uint8_t *data, uint8_t fill,
                   uint32_t tag);
/* Event ev wrote [addr, addr + n) with bytes the image does not know (a
 * D2D copy; a FREE). 0 or -1 (out of memory). */
int trc_himg_forget(trc_himg *h, uint64_t ev, uint64_t addr, uint64_t n);
/* Whether an allocation failed (every later read and compare fails). */
int trc_himg_failed(const trc_himg *h);

/* The n bytes at addr as of before event `before` (events with index <
 * before) into out. 0, or -1 when a byte is unknown (never written, or
 * forgotten). Thread-safe against other reads. */
int trc_himg_read(const trc_himg *h, uint64_t before, uint64_t addr, uint64_t n, uint8_t *out);
/* 1 when the n bytes at p equal the image's at addr as of now (all events
 * so far), else 0 (a byte differs or is unknown). */
int trc_himg_equal(const trc_himg *h, uint64_t addr, uint64_t n, const uint8_t *p);

#endif
