/*
 * rp_engine.h - discrete-event engine of the replay timing model (prefix rp_).
 *
 * Time is an integer number of picoseconds (rp_time). Events are embedded in
 * the structs of their owners (no allocation per event) and ordered by
 * (time, priority, insertion order), so a run is deterministic. Scheduling an
 * event into the past, or an event that is already pending, is refused.
 * Cancelling or moving an event earlier (rp_engine_wake) leaves a stale queue
 * entry that still points at the event until its old time is reached: the
 * memory of an event that was ever cancelled or moved must stay valid while
 * the engine runs (components live as long as the simulation; wavefront
 * events, which are freed early, are only ever scheduled and fired).
 *
 * Components (CUs, caches, DRAM controllers, ...) talk only through links:
 * a link carries messages (rp_msg) to a destination port with a latency and a
 * bandwidth; messages queue on the link (FIFO, serialised at the bandwidth),
 * then land in the destination port's queue and the port's owner is notified.
 * A component with nothing to do schedules nothing (MGSim paper, DP-6).
 *
 * A watchdog detects "no progress": when the event queue runs dry while work
 * is pending, or when simulated time advances by `watchdog_ps` without any
 * component reporting progress, the engine dumps the state of every
 * registered component and stops with an error.
 *
 * Thread-safety: one engine per thread; nothing is global. A parallel
 * replay runs one engine per partition (replay/parallel.c); links that cross
 * partitions hand their messages over through rp_xq queues between
 * synchronisation windows.
 */
#ifndef RP_ENGINE_H
#define RP_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rp_hooks.h"
#include <stdio.h>

typedef uint64_t rp_time; /* picoseconds */
#define RP_TIME_MAX UINT64_MAX

/* Event priorities: at equal time, lower runs first. Few, each with a reason. */
enum rp_prio {
    RP_PRIO_DELIVER = 0,   /* link deliveries: a component woken at t sees every message that arrived at t */
    RP_PRIO_COMPONENT = 1, /* component work (CU issue, cache pipeline, dispatcher) */
    RP_PRIO_ARRIVE = 2,    /* a component woken by a message arriving at that instant at a pull port
                            * (rp_port.arrive): after the components already due then, where the
                            * message's delivery event used to wake it */
    RP_PRIO_HOST = 3,      /* host timeline: acts only after all device activity at the same instant
                            * (kept in the heap, not the ring: rare) */
};

typedef struct rp_engine rp_engine;
typedef struct rp_event rp_event;
typedef void (*rp_handler)(rp_event *ev, rp_engine *e);

/* An event, embedded in its owner. Initialise with rp_event_init. */
struct rp_event {
    rp_time time;
    uint64_t seq;      /* insertion order, assigned by schedule; names its live heap entry */
    uint8_t prio;
    uint8_t pending;
    rp_handler fn;
    void *owner;
};

void rp_event_init(rp_event *ev, rp_handler fn, void *owner, enum rp_prio prio);

/* A registered component: a name (hierarchical, e.g. "gpu[1].cu[3].l1v") and
 * an optional dump callback for deadlock reports. Embedded in its owner. */
typedef struct rp_component rp_component;
struct rp_component {
    char name[48];
    void (*dump)(rp_component *c, FILE *f); /* may be NULL */
    rp_component *next;
};

/* A heap entry: the ordering key is stored inline so that sifting never
 * touches the events themselves. key = prio << 56 | seq. */
typedef struct rp_hent {
    rp_time time;
    uint64_t key;
    rp_event *ev;
} rp_hent;

/* Near-future ring (engine.c): events due less than RP_RING_PS after `now`
 * go into per-picosecond slots, one FIFO per priority (insertion order is
 * seq order, so a FIFO is sorted); later events go into the heap. 16,384 ps:
 * of km's 41 M events (1x, r9nano), 8.45 M are due 4 ns or more ahead, 7.38 M
 * of them 4-16 ns, which a 4,096-ps ring sent to the heap; 65,536 ps was no
 * faster. */
#define RP_RING_BITS 14
#define RP_RING_PS (1u << RP_RING_BITS)
#define RP_RING_WORDS (RP_RING_PS / 64)  /* bitmap words of slots */
#define RP_RING_SUMW (RP_RING_WORDS / 64) /* summary words (one bit per bitmap word) */
typedef struct rp_rq {    /* a ring FIFO: head and tail side by side (one host cache line) */
    uint32_t head, tail;  /* entries in rent; UINT32_MAX = empty */
} rp_rq;
typedef struct rp_rent {  /* a ring entry: event and the seq it was scheduled under */
    rp_event *ev;
    uint64_t seq;
    uint32_t next;        /* next entry of the FIFO (or free list); UINT32_MAX = none */
} rp_rent;

struct rp_engine {
    rp_hent *heap;         /* 4-ary min-heap; may hold stale entries (see engine.c) */
    rp_rent *rent;         /* ring entry pool */
    uint32_t rcap, rfree;  /* pool size, free list head */
    rp_rq *rq;             /* [RP_RING_PS * 3]: FIFO per (slot, prio) */
    uint64_t rbits[RP_RING_WORDS]; /* slot has entries */
    uint64_t rsum[RP_RING_SUMW];   /* word of rbits non-zero */
    uint32_t rwords;       /* words of rbits non-zero */
    int64_t rfirst;        /* while rfirst_ok: the ring's first non-empty slot from now (-1: empty) */
    int rfirst_ok;
    size_t hn, cap;        /* entries in the heap (live + stale), allocated */
    size_t n;              /* pending events */
    int root_free;         /* while a handler runs: heap[0] is its spent entry, free to reuse */
    uint64_t seq;
    rp_time now;
    uint64_t n_events;     /* handled so far */
    uint64_t progress;     /* bumped by components when they retire work */
    rp_time watchdog_ps;   /* 0 = off */
    rp_component *comps, **comps_tail;
    const rp_hooks *hooks; /* observation points (rp_hooks.h); NULL: none (component tests) */
    void *hook_sim;        /* the rp_sim the hooks report (rp_hook_ctx.sim) */
    char err[256];
};

/* Clock domain: a frequency turned into a period in picoseconds. */
typedef struct rp_clock {
    uint64_t period_ps;
} rp_clock;

/* Period of freq_hz rounded to the nearest picosecond (1 GHz -> 1000 ps). */
static inline rp_clock rp_clock_make(uint64_t freq_hz)
{
    rp_clock c = {(1000000000000ull + freq_hz / 2) / freq_hz};
    if (c.period_ps == 0)
        c.period_ps = 1;
    return c;
}
static inline rp_time rp_cycles(rp_clock c, uint64_t n) { return c.period_ps * n; }
/* First clock edge at or after t. */
static inline rp_time rp_clock_edge(rp_clock c, rp_time t)
{
    return (t + c.period_ps - 1) / c.period_ps * c.period_ps;
}

int rp_engine_init(rp_engine *e);
void rp_engine_fini(rp_engine *e);
void rp_engine_add_component(rp_engine *e, rp_component *c, const char *name,
                             void (*dump)(rp_component *, FILE *));

/* Schedule ev at absolute time t (ps). Returns 0, or -1 with e->err set when
 * t < now ("scheduling into the past") or ev is already pending. */
int rp_engine_schedule(rp_engine *e, rp_event *ev, rp_time t);
/* Schedule unless already pending at an earlier-or-equal time; if pending
 * later, move it earlier. For "wake me at t" notifications. */
void rp_engine_wake(rp_engine *e, rp_event *ev, rp_time t);
void rp_engine_cancel(rp_engine *e, rp_event *ev);
static inline bool rp_engine_empty(const rp_engine *e) { return e->n == 0; }

/* Handle the earliest event. Returns false when the queue is empty. */
bool rp_engine_step(rp_engine *e);
/* Handle the earliest event if it is due before `limit` (ps). Returns false
 * when the queue is empty or its earliest event is at or after limit. */
bool rp_engine_step_before(rp_engine *e, rp_time limit);
/* Handle every event due before `limit` (ps), as rp_engine_step_before in a
 * loop, looking at *stop (when not NULL) every 1024 events and returning
 * when it is set. Returns the events handled. */
uint64_t rp_engine_run_before(rp_engine *e, rp_time limit, const int *stop);
/* Time of the earliest pending event (ps), RP_TIME_MAX when none. Drops the
 * stale entries it meets (no event runs). */
rp_time rp_engine_next_time(rp_engine *e);
/* Move now forward to t (no-op when t <= now). The caller guarantees that
 * no event is pending before t (a partition at a synchronisation point). */
void rp_engine_advance(rp_engine *e, rp_time t);

/* Run until done() returns true (checked after each event) or the queue is
 * empty. Returns 0 when done, -1 on deadlock/no progress (component states
 * dumped to `dump`, message in e->err). */
int rp_engine_run(rp_engine *e, bool (*done)(void *), void *arg, FILE *dump);

void rp_engine_dump(rp_engine *e, FILE *f);

/* ---- Messages, ports and links ------------------------------------------ */

typedef struct rp_msg rp_msg;
typedef struct rp_port rp_port;
typedef struct rp_link rp_link;

/* Message types of the memory protocol. */
enum rp_msg_type {
    RP_MSG_READ = 0, RP_MSG_WRITE, RP_MSG_ATOMIC, /* requests, one cache line each */
    RP_MSG_READ_RSP, RP_MSG_WRITE_ACK, RP_MSG_ATOMIC_RSP,
    RP_MSG_FLUSH, RP_MSG_FLUSH_ACK,  /* L2 write-back flush at kernel end */
    RP_MSG_INVAL,                    /* L1 invalidate at kernel start (acked with FLUSH_ACK) */
    RP_MSG_WG_ASSIGN, RP_MSG_WG_DONE, /* dispatcher <-> CU */
    RP_MSG_GWS_ARRIVE, RP_MSG_GWS_RELEASE, /* grid barrier of a kernel over partitions (cu.c gws_arrive) */
    RP_MSG_XLATE, RP_MSG_XLATE_RSP,  /* L1 TLB <-> L2 TLB: addr = page, lane_mask = log2 page size (tlb.c) */
    RP_MSG_FF_APPLY,                 /* CU -> dispatcher: a skipped wave's stores for the memory side (ctx:
                                      * sample.c's batch; sampled replay with the GPU cut into partitions) */
};

struct rp_access; /* what the requester wants done functionally (rp_gpu.h) */

struct rp_msg {
    /* first 64 bytes: what every hop reads (the pool aligns messages to 128
     * bytes: this line and the next are one pair for the host's adjacent-line
     * prefetcher) */
    rp_msg *next;          /* queue link (port or link FIFO or MSHR waiters) */
    rp_time arrive;        /* while on a link: arrival time */
    uint8_t type;
    uint8_t src_gpu;       /* GPU the request came from (inter-GPU routing) */
    uint16_t payload;      /* data bytes carried (for bandwidth) */
    uint32_t q_bank;       /* while queued in a DRAM controller: its bank (with q_row) */
    uint64_t addr;         /* line address (memory) */
    uint64_t lane_mask;    /* lanes of the access served by this line */
    struct rp_access *acc; /* functional side / requester context */
    uint8_t *data;         /* READ_RSP to a cache: snapshot of the line (rp_lbufs buffer, released by the
                            * receiver); in a cache's READ request: cache.c's marker asking for it. A
                            * forwarder that builds new messages may copy it both ways or leave it NULL */
    void *ctx;             /* component-private (e.g. the request this one serves) */
    /* second line */
    rp_link *reply_link;   /* where the response goes */
    rp_port *reply_port;   /* destination of the response on that link (NULL: link default) */
    rp_port *dst;          /* destination on a shared link (NULL: link default) */
    uint8_t net_dst;       /* interconnect: GPU the message is bound for (net.c routers) */
    rp_link *fwd;          /* held by an L1 TLB (tlb.c): the link it leaves on once translated */
    uint64_t q_row;        /* while queued in a DRAM controller: its row (rp_dram_map, once per request) */
    rp_time held_since;    /* an atomic an L2 holds until its recorded turn (cache.c "Compare-and-swap
                            * in the recorded order"): when it was first held, + 1; 0: never held */
} __attribute__((aligned(128)));

/* Free list of messages so that the hot path never calls malloc. */
typedef struct rp_msg_pool {
    rp_msg *free;
    void **chunks;
    size_t n_chunks;
    uint64_t live;
} rp_msg_pool;

rp_msg *rp_msg_alloc(rp_msg_pool *p); /* zeroed; NULL only when out of memory */
void rp_msg_free(rp_msg_pool *p, rp_msg *m);
void rp_msg_pool_fini(rp_msg_pool *p);

/* A port: an input queue owned by a component. notify is called (at the
 * delivery time, priority DELIVER) after messages were appended.
 *
 * A port with `arrive` set is a pull port: a link hands it each message
 * when the message is sent (or, on a link that crosses partitions, when the
 * receiving partition drains it), no delivery event: the port keeps its
 * messages in arrival order (rp_msg.arrive; equal arrivals in the order
 * handed over) and calls arrive(p, e, t) with the arrival time t >= now,
 * which wakes the owner at t or later; the owner takes a message only once
 * it has arrived (rp_port_ready). Its notify is then called only by code
 * that appends to the port directly. A component whose wake-up is all its
 * notify does takes this form: a link delivery was a third of all events
 * (km 1x on r9nano: 13.7 M of 40.9 M; caches, DRAM controllers and the CU's
 * response port are pull ports). */
struct rp_port {
    rp_msg *head, *tail;
    uint32_t n;
    void (*notify)(rp_port *p, rp_engine *e);
    void (*arrive)(rp_port *p, rp_engine *e, rp_time t);
    void *owner;
};

/* Append m to the FIFO list (*head, *tail) linked by rp_msg.next. */
static inline void rp_msg_append(rp_msg **head, rp_msg **tail, rp_msg *m)
{
    m->next = NULL;
    if (*tail)
        (*tail)->next = m;
    else
        *head = m;
    *tail = m;
}

static inline rp_msg *rp_port_peek(rp_port *p) { return p->head; }
/* Has p's first message arrived by now? (A port that is not a pull port
 * holds only arrived messages.) */
static inline bool rp_port_ready(const rp_port *p, rp_time now) { return p->head && p->head->arrive <= now; }
/* Arrival time of p's first message; RP_TIME_MAX when p is empty. */
static inline rp_time rp_port_next(const rp_port *p) { return p->head ? p->head->arrive : RP_TIME_MAX; }
static inline rp_msg *rp_port_pop(rp_port *p)
{
    rp_msg *m = p->head;
    if (m) {
        p->head = m->next;
        if (!p->head)
            p->tail = NULL;
        else
            __builtin_prefetch(p->head); /* popped next, often after other events */
        p->n--;
        m->next = NULL;
    }
    return m;
}

/* A cross-partition queue (parallel replay, replay/parallel.c): the
 * messages one partition sent during a synchronisation window on links that
 * deliver into another partition. The sender appends to buf[w] while the
 * receiver drains buf[w ^ 1] (filled during the previous window); the
 * coordinator flips w between windows, when no partition runs. Every entry's
 * arrival time is at least the window's end (links crossing partitions have
 * a latency >= the lookahead window), so draining it at the start of the
 * next window schedules nothing into the receiver's past. */
typedef struct rp_xent {
    struct rp_link *l;
    rp_msg *m;
} rp_xent;
/* The queues a partition wrote to in the current window (appended at
 * their first message), or those a partition has to drain: most pairs of
 * partitions exchange nothing in a window, and the window loop visits only
 * these instead of every pair. */
typedef struct rp_xq_list {
    struct rp_xq **v;
    size_t n, cap;
    int oom;                   /* an append to it, or to one of its queues, failed */
} rp_xq_list;
/* One buffer of a queue between partitions. */
typedef struct rp_xbuf {
    rp_xent *buf;
    size_t n, cap;
    rp_time min_arrive;        /* earliest arrival in the buffer; meaningful only when n > 0 */
} rp_xbuf;
/* During a window the sender writes one buffer and the receiver empties the
 * other, on different cores: 64 bytes (a host cache line) of padding lie
 * between the buffers, and after the second, so that neither shares a line
 * with the other (or with the next queue of an array: what they share is
 * read only). */
typedef struct rp_xq {
    rp_xbuf b0;
    char pad0_[64];
    rp_xbuf b1;
    char pad1_[64];
    uint32_t w;                /* buffer the sender appends to (0: b0, 1: b1) */
    int oom;                   /* an append failed (out of memory) */
    rp_xq_list *written;       /* the sender's list of queues written this window (NULL: none kept) */
    uint32_t to;               /* the receiving partition */
} rp_xq;
/* Buffer i (0 or 1) of q. */
static inline rp_xbuf *rp_xq_buf(rp_xq *q, uint32_t i) { return i ? &q->b1 : &q->b0; }
/* Deliver the messages of q's drain buffer into their links (receiver side,
 * in send order; each link's FIFO stays ordered by arrival) and empty it. */
void rp_xq_drain(rp_xq *q);
/* Between windows: the buffer written during the last window becomes the
 * drain buffer (the old drain buffer is empty by then). */
void rp_xq_flip(rp_xq *q);
void rp_xq_fini(rp_xq *q);
/* Append q to l; -1 when out of memory. */
int rp_xq_list_push(rp_xq_list *l, rp_xq *q);
void rp_xq_list_fini(rp_xq_list *l);

/* A link: FIFO with latency and bandwidth; queueing (unbounded) rather than
 * back-pressure, so a sender never blocks; the queue delay is the model of
 * contention. Arrival = max(ready, busy) + size/bandwidth + latency, so
 * arrival times are monotone and the FIFO stays ordered (except on a link
 * made unordered: ready + latency). */
struct rp_link {
    /* written by the receiver's side (delivery) */
    rp_event ev;
    rp_msg *head, *tail;
    /* read only once wired (64 bytes or more: a link that crosses partitions
     * is written by the sender's core and the receiver's, and the two
     * written parts never share a host cache line) */
    rp_engine *eng;        /* engine of the destination (delivery events) */
    rp_port *dst;          /* default destination */
    rp_engine *src_eng;    /* engine of the sender (its `now`); == eng unless the link crosses partitions */
    rp_xq *xq;             /* non-NULL: crosses partitions; sends go through this queue */
    rp_time latency_ps;
    uint64_t bytes_per_s;  /* 0 = infinite bandwidth */
    const char *name;      /* set on links a timeline shows as bandwidth (inter-GPU links, DRAM inputs); else NULL */
    struct rp_fan *fan;    /* non-NULL: senders in several partitions, each on its own input (rp_link_fan) */
    uint32_t header_bytes; /* added to each message's payload on the wire */
    uint8_t unordered;     /* rp_link_unordered: no departure order (no bandwidth, into a pull port) */
    /* written by the sender's side */
    rp_time busy_until;
    uint64_t st_msgs, st_bytes; /* statistics */
    char pad_[64];         /* apart from the next link's receiver part (links in arrays) */
};

/* A fan-in (rp_link_fan): n input links with the latency, into an arbiter
 * that forwards onto the link, which keeps the bandwidth (rp_port_forward). */
typedef struct rp_fan {
    rp_port arb;
    uint32_t n;
    rp_link in[];
} rp_fan;

/* The fan-in input the calling thread sends on (parallel.c sets it to the
 * slot of the partition it runs; UINT32_MAX outside one). */
extern _Thread_local uint32_t rp_link_fan_slot;

/* Give l senders in several partitions: n inputs with l's latency and no
 * bandwidth, on l's engine, into an arbiter port that forwards what arrives
 * onto l, which keeps its bandwidth and loses its latency (for one sender the
 * same arrival times; rp_port_forward). A send on l then goes out on input
 * rp_link_fan_slot (the caller makes each input cross from its sender's
 * partition); a send from a thread without a slot below n is a wiring error
 * and aborts. Returns the fan (the caller frees it), or NULL out of memory.
 * Each message takes one more delivery event (the arbiter's). */
struct rp_fan *rp_link_fan(rp_link *l, uint32_t n);

void rp_link_init(rp_link *l, rp_engine *e, rp_port *dst, rp_time latency_ps,
                  uint64_t bytes_per_s, uint32_t header_bytes);
/* Let l keep no order between its messages: each arrives at its own ready
 * time + latency, however late the message sent before it leaves (a link
 * without bandwidth into a pull port, which takes messages in arrival order
 * whatever order they come in; for independent messages, e.g. the responses
 * of a CU's vector and scalar caches: the L1V answers 126 cycles after a
 * request enters its pipeline, the L1S 20, and one ordered link made a scalar
 * load's data wait for a vector load's). A link with bandwidth, or into a
 * port with a delivery event, is a wiring error (abort). */
void rp_link_unordered(rp_link *l);
/* Make l cross partitions: senders run on src_eng, deliveries on l->eng;
 * sends are queued in q (the sender's queue towards l->eng's partition).
 * The caller guarantees latency_ps >= the synchronisation window. */
void rp_link_cross(rp_link *l, rp_engine *src_eng, rp_xq *q);
/* Send m into the link; it is ready to leave at `ready` (>= now). */
void rp_link_send(rp_link *l, rp_msg *m, rp_time ready);
/* A port's notify that sends everything it receives on over the link that
 * owns it (p->owner), at once, in arrival order: an arbiter. Senders' links
 * of latency L and no bandwidth into it, then one link of bandwidth B and no
 * latency out of it, give every message the arrival time one shared link of
 * latency L and bandwidth B gives it (max(t + L, previous arrival) + size /
 * B = max(t, previous departure) + size / B + L), while each sender may be in
 * a partition of its own (sim.gpu_partitions; tests/replay/600-events.c). */
void rp_port_forward(rp_port *p, rp_engine *e);

#endif
