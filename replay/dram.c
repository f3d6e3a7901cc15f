/*
 * dram.c - one DRAM channel: an HBM-style memory controller with per-bank
 * row buffers, FR-FCFS scheduling, command timing, the channel data bus and
 * periodic refresh. Timing only: the values live in the functional image
 * (rp_fmem); a request message is turned into its response and sent back.
 *
 * Model (R9 Nano defaults: JEDEC JESD235 HBM1, 500 MHz DDR, 128-bit channel,
 * 8 banks, 2 KB rows; see docs/timing-model.md):
 *  - Address: the channel bits are stripped (local = addr / (il * stride) * il
 *    + addr % il), then bank = (local / bank_interleave) % banks and
 *    row = bank-local address / row_size.
 *  - Queue: up to queue_depth requests are visible to the scheduler; more
 *    wait in the input port. The controller picks one request per decision:
 *    the oldest row hit if any, else the oldest request whose bank can take
 *    its first command (PRE or ACT) now (first-ready), else the oldest (FCFS).
 *  - Commands of the picked request are reserved at once, in pick order, on
 *    a row-command bus (ACT, PRE: one per tCK) and a column bus (RD/WR, tCCD
 *    apart), honouring per bank tRP, tRCD, tRAS, tRTP, tWR and per channel
 *    tRRD and tFAW; the data burst (line / bandwidth) follows tCL (reads) or
 *    tCWL (writes) after the column command and the data bus is FIFO.
 *    The next decision happens one tCK later, or when the picked request's
 *    first command issues, whichever is later: at most one picked request
 *    waits for its first command, so a row hit arriving meanwhile can still
 *    overtake older row misses.
 *  - Open page keeps the row open; closed page auto-precharges after the
 *    access (PRE at max(ACT + tRAS, RD + tRTP, write data end + tWR)).
 *  - Refresh k (k >= 1) occupies [phase + k*tREFI, + tRFC) and closes every
 *    row: a decision that falls into the window waits for its end. A
 *    request picked before the window finishes its commands (JEDEC lets a
 *    controller postpone a refresh). Refreshes are counted lazily, when the
 *    controller next acts.
 *  - The response leaves at data end + latency_ps (controller + PHY fixed
 *    latency), in completion order (monotone: the data bus is FIFO).
 *
 * Not modelled: read/write turnaround (tWTR, tRTW), bank groups (HBM2),
 * pseudo-channels, per-bank refresh, power-down.
 *
 * Invariants: q holds at most queue_depth messages; d is sorted by response
 * time; done_ev is pending iff d is non-empty.
 */
#include "rp_config.h"
#include "rp_dram.h"

#include <string.h>

static rp_time tmax(rp_time a, rp_time b) { return a > b ? a : b; }

void rp_dram_map(const rp_dram_spec *sp, uint64_t addr, uint32_t *bank, uint64_t *row)
{
    uint64_t il = sp->chan_interleave ? sp->chan_interleave : 1, st = sp->chan_stride ? sp->chan_stride : 1;
    uint64_t local = addr / (il * st) * il + addr % il;
    uint64_t bi = sp->bank_interleave ? sp->bank_interleave : 1;
    uint64_t blk = local / bi;
    *bank = (uint32_t)(blk % sp->banks);
    uint64_t in_bank = blk / sp->banks * bi + local % bi;
    *row = in_bank / (sp->row_size ? sp->row_size : 1);
}

/* Refresh windows that started at or before t: close every row. Returns the
 * earliest time >= t outside a refresh window. */
static rp_time refresh(rp_dram *d, rp_time t)
{
    const rp_dram_spec *sp = &d->spec;
    if (!sp->tREFI || t < sp->refresh_phase + sp->tREFI)
        return t;
    uint64_t k = (t - sp->refresh_phase) / sp->tREFI; /* last refresh started at or before t */
    if (k > d->refreshes_seen) {
        rp_time end = sp->refresh_phase + k * sp->tREFI + sp->tRFC;
        for (uint32_t b = 0; b < sp->banks; b++) {
            d->bank[b].open_row = 0;
            d->bank[b].act_ok = tmax(d->bank[b].act_ok, end);
        }
        d->st_refreshes += k - d->refreshes_seen;
        d->refreshes_seen = k;
    }
    rp_time start = sp->refresh_phase + k * sp->tREFI;
    return t < start + sp->tRFC ? start + sp->tRFC : t;
}

static void respond(rp_dram *d, rp_msg *m)
{
    if (m->type == RP_MSG_WRITE) {
        m->type = RP_MSG_WRITE_ACK;
        m->payload = 0;
    } else {
        m->type = m->type == RP_MSG_ATOMIC ? RP_MSG_ATOMIC_RSP : RP_MSG_READ_RSP;
        m->payload = (uint16_t)d->spec.line;
    }
    m->dst = m->reply_port;
    rp_link_send(m->reply_link, m, d->eng->now);
}

static void dram_done(rp_event *ev, rp_engine *e)
{
    rp_dram *d = ev->owner;
    while (d->d_head && d->d_head->arrive <= e->now) {
        rp_msg *m = d->d_head;
        d->d_head = m->next;
        if (!d->d_head)
            d->d_tail = NULL;
        d->dn--;
        m->next = NULL;
        respond(d, m);
        e->progress++;
    }
    if (d->d_head)
        rp_engine_schedule(e, ev, d->d_head->arrive);
}

/* Move the requests that have arrived from the port into the scheduler
 * queue (up to its depth). */
static void fill_queue(rp_dram *d)
{
    rp_msg *m;
    while (d->qn < d->spec.queue_depth && rp_port_ready(&d->top, d->eng->now) && (m = rp_port_pop(&d->top))) {
        m->next = NULL;
        rp_dram_map(&d->spec, m->addr, &m->q_bank, &m->q_row); /* once: pick scans the queue often */
        if (d->q_tail)
            d->q_tail->next = m;
        else
            d->q_head = m;
        d->q_tail = m;
        d->qn++;
    }
}

/* Reserve the commands of m (picked at t); returns the first command's time. */
static rp_time schedule(rp_dram *d, rp_msg *m, rp_time t)
{
    const rp_dram_spec *sp = &d->spec;
    rp_clock clk = sp->clk;
    rp_time tck = clk.period_ps;
    uint32_t b = m->q_bank;
    uint64_t row = m->q_row;
    rp_dram_bank *bk = &d->bank[b];
    bool write = m->type == RP_MSG_WRITE;
    rp_time first;
    if (bk->open_row == row + 1) {
        d->st_row_hits++;
        first = RP_TIME_MAX;
    } else {
        rp_time act = t;
        if (bk->open_row) {
            d->st_row_conflicts++;
            rp_time pre = rp_clock_edge(clk, tmax(tmax(t, bk->pre_ok), d->row_next));
            d->row_next = pre + tck;
            act = pre + sp->tRP;
            first = pre;
        } else {
            d->st_row_misses++;
            first = RP_TIME_MAX;
        }
        act = tmax(tmax(act, bk->act_ok), tmax(d->row_next, d->act_next));
        act = tmax(act, d->faw[d->faw_i]); /* the 4th-last ACT's window has passed */
        act = rp_clock_edge(clk, act);
        d->faw[d->faw_i] = act + sp->tFAW;
        d->faw_i = (d->faw_i + 1) % 4;
        d->row_next = act + tck;
        d->act_next = act + sp->tRRD;
        bk->open_row = row + 1;
        bk->col_ok = act + sp->tRCD;
        bk->pre_ok = act + sp->tRAS;
        if (first == RP_TIME_MAX)
            first = act;
    }
    rp_time cas = write ? sp->tCWL : sp->tCL;
    rp_time col = tmax(tmax(t, bk->col_ok), d->col_next);
    if (d->data_free > col + cas)
        col = d->data_free - cas;
    col = rp_clock_edge(clk, col);
    d->col_next = col + sp->tCCD;
    rp_time data_end = col + cas + d->burst_ps;
    d->data_free = data_end;
    bk->pre_ok = tmax(bk->pre_ok, write ? data_end + sp->tWR : col + sp->tRTP);
    if (sp->closed_page) {
        bk->open_row = 0;
        bk->act_ok = tmax(bk->act_ok, bk->pre_ok + sp->tRP);
    }
    if (first == RP_TIME_MAX)
        first = col;
    /* statistics */
    uint64_t bytes = sp->line;
    if (write) {
        d->st_writes++;
        d->st_write_bytes += bytes;
    } else {
        d->st_reads++;
        d->st_read_bytes += bytes;
    }
    d->st_bytes += bytes;
    d->st_busy_cycles += (d->burst_ps + tck - 1) / tck;
    rp_time done = data_end + sp->latency_ps;
    d->st_queue_ps += t - m->arrive;
    d->st_access_ps += done - m->arrive;
    /* completion FIFO (monotone because the data bus is) */
    m->arrive = done;
    m->next = NULL;
    if (d->d_tail)
        d->d_tail->next = m;
    else
        d->d_head = m;
    d->d_tail = m;
    d->dn++;
    if (!d->done_ev.pending)
        rp_engine_schedule(d->eng, &d->done_ev, done);
    return first;
}

/* FR-FCFS at time t: the oldest row hit; else the oldest request whose bank
 * can take its first command (PRE or ACT) now; else the oldest. */
static rp_msg *pick(rp_dram *d, rp_time t)
{
    rp_msg *prev = NULL, *hit = NULL, *hit_prev = NULL, *ready = NULL, *ready_prev = NULL;
    for (rp_msg *m = d->q_head; m; prev = m, m = m->next) {
        const rp_dram_bank *bk = &d->bank[m->q_bank];
        uint64_t row = m->q_row;
        if (bk->open_row == row + 1) {
            hit = m;
            hit_prev = prev;
            break;
        }
        if (!ready && (bk->open_row ? bk->pre_ok : bk->act_ok) <= t) {
            ready = m;
            ready_prev = prev;
        }
    }
    if (!hit) {
        hit = ready ? ready : d->q_head;
        hit_prev = ready ? ready_prev : NULL;
    }
    if (hit_prev)
        hit_prev->next = hit->next;
    else
        d->q_head = hit->next;
    if (d->q_tail == hit)
        d->q_tail = hit_prev;
    hit->next = NULL;
    d->qn--;
    return hit;
}

/* Nothing queued now: sleep until the port's next request arrives (its
 * arrival woke ev unless ev was pending then). */
static void dram_sleep(rp_dram *d, rp_event *ev, rp_engine *e)
{
    if (d->top.head && !ev->pending)
        rp_engine_schedule(e, ev, rp_clock_edge(d->spec.clk, tmax(d->top.head->arrive, tmax(e->now, d->next_pick))));
}

static void dram_run(rp_event *ev, rp_engine *e)
{
    rp_dram *d = ev->owner;
    fill_queue(d);
    if (!d->q_head) {
        dram_sleep(d, ev, e);
        return;
    }
    rp_time t = tmax(e->now, d->next_pick);
    t = refresh(d, t);
    if (t > e->now) {
        rp_engine_schedule(e, ev, rp_clock_edge(d->spec.clk, t));
        return;
    }
    rp_msg *m = pick(d, t);
    rp_time first = schedule(d, m, t);
    e->progress++;
    d->next_pick = rp_clock_edge(d->spec.clk, tmax(t + d->spec.clk.period_ps, first));
    fill_queue(d);
    if (d->q_head)
        rp_engine_schedule(e, ev, d->next_pick);
    else
        dram_sleep(d, ev, e);
}

/* A request reaches the port at t (>= now; a pull port, see rp_port): the
 * scheduler looks at it at its first decision from t. */
static void dram_arrive(rp_port *p, rp_engine *e, rp_time t)
{
    rp_dram *d = p->owner;
    rp_engine_wake(e, &d->ev, rp_clock_edge(d->spec.clk, tmax(t, tmax(e->now, d->next_pick))));
}

/* A request appended to the port directly: it is there now. */
static void dram_notify(rp_port *p, rp_engine *e) { dram_arrive(p, e, e->now); }

static void dram_dump(rp_component *comp, FILE *f)
{
    rp_dram *d = (rp_dram *)comp;
    if (!d->qn && !d->dn && !d->top.n)
        return;
    fprintf(f, "  %s: queue %u/%u, port %u, in flight %u, next decision at %llu ps\n", d->comp.name, d->qn,
            d->spec.queue_depth, d->top.n, d->dn, (unsigned long long)d->next_pick);
}

int rp_dram_init_spec(rp_dram *d, rp_engine *e, const char *name, const rp_dram_spec *spec)
{
    memset(d, 0, sizeof *d);
    if (spec->banks < 1 || spec->banks > RP_DRAM_MAX_BANKS || spec->queue_depth < 1 || spec->line == 0 ||
        spec->clk.period_ps == 0 || (spec->tREFI && spec->tRFC >= spec->tREFI))
        return -1;
    d->eng = e;
    d->spec = *spec;
    if (spec->bytes_per_s)
        d->burst_ps = ((uint64_t)spec->line * 1000000000000ull + spec->bytes_per_s - 1) / spec->bytes_per_s;
    d->top.owner = d;
    d->top.notify = dram_notify;
    d->top.arrive = dram_arrive;
    rp_event_init(&d->ev, dram_run, d, RP_PRIO_COMPONENT);
    rp_event_init(&d->done_ev, dram_done, d, RP_PRIO_COMPONENT);
    rp_link_init(&d->in, e, &d->top, 0, 0, 0);
    rp_engine_add_component(e, &d->comp, name, dram_dump);
    d->in.name = d->comp.name; /* "gpu[g].dram[c]": a timeline's DRAM bandwidth */
    return 0;
}

void rp_dram_init(rp_dram *d, rp_engine *e, const char *name, rp_time latency_ps, uint64_t bytes_per_s,
                  uint32_t line)
{
    /* 1 ps clock and zero timings: the only constraints left are the data
     * bus (FIFO at bytes_per_s) and the fixed latency. */
    rp_dram_spec sp = {.clk = {1}, .line = line, .bytes_per_s = bytes_per_s, .latency_ps = latency_ps,
                       .banks = 1, .queue_depth = 1u << 30, .row_size = 1ull << 62,
                       .bank_interleave = 1ull << 62, .chan_interleave = 1, .chan_stride = 1};
    rp_dram_init_spec(d, e, name, &sp);
}

void rp_dram_register_stats(rp_dram *d, rp_stats *s)
{
    const char *p = d->comp.name;
    rp_stats_add(s, p, "reads", &d->st_reads, "count", "read requests served");
    rp_stats_add(s, p, "writes", &d->st_writes, "count", "write requests served");
    rp_stats_add(s, p, "read_bytes", &d->st_read_bytes, "bytes", "bytes read");
    rp_stats_add(s, p, "write_bytes", &d->st_write_bytes, "bytes", "bytes written");
    rp_stats_add(s, p, "bytes", &d->st_bytes, "bytes", "bytes moved on the data bus");
    rp_stats_add(s, p, "row_hits", &d->st_row_hits, "count", "accesses to the open row");
    rp_stats_add(s, p, "row_misses", &d->st_row_misses, "count", "accesses to a precharged bank (activate)");
    rp_stats_add(s, p, "row_conflicts", &d->st_row_conflicts, "count", "accesses that closed another open row (precharge + activate)");
    rp_stats_add(s, p, "refreshes", &d->st_refreshes, "count", "refresh commands");
    rp_stats_add(s, p, "busy_cycles", &d->st_busy_cycles, "dram cycles", "command-clock cycles the data bus was busy");
    rp_stats_add(s, p, "queue_ps", &d->st_queue_ps, "ps", "sum of the time requests waited in the queue");
    rp_stats_add(s, p, "access_ps", &d->st_access_ps, "ps", "sum of the request latencies (arrival to response)");
}

void rp_dram_spec_from_config(rp_dram_spec *sp, const rp_config *c, rp_clock gpu_clk, uint32_t ch,
                              uint64_t chan_stride)
{
    rp_clock dc = rp_clock_make(c->dram_freq);
    memset(sp, 0, sizeof *sp);
    sp->clk = dc;
    sp->line = c->l1v_line;
    sp->bytes_per_s = rp_bw_Bps(c->dram_bandwidth, gpu_clk);
    sp->latency_ps = rp_lat_ps(c->dram_latency, gpu_clk);
    sp->banks = c->dram_banks;
    sp->queue_depth = c->dram_queue_depth;
    sp->row_size = c->dram_row_size;
    sp->bank_interleave = c->dram_bank_interleave;
    sp->chan_interleave = c->dram_interleave;
    sp->chan_stride = chan_stride;
    sp->closed_page = !strcmp(c->dram_page_policy, "closed");
    sp->tCL = rp_lat_ps(c->dram_tCL, dc);
    sp->tCWL = rp_lat_ps(c->dram_tCWL, dc);
    sp->tRCD = rp_lat_ps(c->dram_tRCD, dc);
    sp->tRP = rp_lat_ps(c->dram_tRP, dc);
    sp->tRAS = rp_lat_ps(c->dram_tRAS, dc);
    sp->tCCD = rp_lat_ps(c->dram_tCCD, dc);
    sp->tRRD = rp_lat_ps(c->dram_tRRD, dc);
    sp->tFAW = rp_lat_ps(c->dram_tFAW, dc);
    sp->tWR = rp_lat_ps(c->dram_tWR, dc);
    sp->tRTP = rp_lat_ps(c->dram_tRTP, dc);
    sp->tREFI = rp_lat_ps(c->dram_tREFI, dc);
    sp->tRFC = rp_lat_ps(c->dram_tRFC, dc);
    sp->refresh_phase = c->dram_channels ? sp->tREFI * ch / c->dram_channels : 0;
}
