/*
 * hip_hostcall.c - device-side services through the hostcall buffer: device
 * printf/fprintf (and so the message of a failed assert), and device
 * malloc/free.
 *
 * Protocol (facts taken from ROCm-Device-Libs 5.2 ockl bitcode,
 * __ockl_hostcall_internal, and ROCclr's hostcall listener):
 *
 *   A kernel that uses a service has the hidden argument
 *   hidden_hostcall_buffer: the device address of a buffer
 *     +0  u64 headers     device address of n packet headers (24 bytes each)
 *     +8  u64 payloads    device address of n payloads (64 lanes x 8 u64 = 4 KiB)
 *     +16 u64 doorbell    hsa_signal_t: address of an amd_signal_t (the device
 *                         atomically adds 1 to its value at +8; the sendmsg
 *                         interrupt is skipped while event_mailbox_ptr (+16) is 0)
 *     +24 u64 free_stack  lock-free stack of free packets
 *     +32 u64 ready_stack lock-free stack of packets waiting for the host
 *     +40 u64 index_mask  n - 1 (n a power of two)
 *   A stack value is a packet index in its low bits (& index_mask) plus a tag
 *   above them (bumped by index_mask + 1 on every reuse, against ABA); 0 is
 *   the empty stack, so packet 0 is never handed out. Header: u64 next (the
 *   stack link), u64 activemask (EXEC of the calling wave), u32 service,
 *   u32 control (bit 0: ready for the host).
 *
 *   One lane of a wave pops a free packet (CAS, s_sleep 1 between retries),
 *   every active lane writes its 8 u64 arguments into its payload slot, the
 *   wave sets service/activemask/control = 1, pushes the packet onto the
 *   ready stack, rings the doorbell, and polls control bit 0 with s_sleep 1
 *   until the host clears it; then each lane reads its 2 u64 results from
 *   payload slot words 0 and 1 and the packet goes back to the free stack.
 *
 *   Services: 1 FUNCTION_CALL (not used by HIP), 2 PRINTF, 3 DEVMEM.
 *   PRINTF: every packet carries a message descriptor in word 0 (bit 0 BEGIN,
 *   bit 1 END, bits 5..7 the number of data words in words 1..7, bits 8..63
 *   the message id the host gave back for BEGIN). The assembled message is a
 *   control word (bit 0: stderr), the format string (NUL included) padded to
 *   8 bytes, then the arguments: integers/pointers/doubles one u64 each,
 *   %s strings inline (NUL included) padded to 8 bytes. The host answers a
 *   packet that is not the END with the descriptor carrying the message id,
 *   and the END with printf's return value (characters written).
 *   DEVMEM: word 0 a pointer, word 1 a size: (0, size) allocates and answers
 *   the address (0 when out of memory); (ptr, 0) frees and answers 0. ockl's
 *   __ockl_dm_alloc serves blocks up to 3 KiB from 2 MiB slabs it requests
 *   this way and asks the host directly for bigger ones.
 *
 * Emulator side: the machine yields a wave at s_sleep and calls
 * hip_hostcall_serve (gcn_machine_config.on_wave_sleep) from a worker thread
 * before resuming it; the service then answers every packet on every
 * device's ready stack. A wave waits for its answer, so the values it gets do
 * not depend on the worker-thread count; the order in which *different*
 * workgroups' lines appear (and the addresses device malloc returns) can,
 * with more than one worker thread, as on hardware.
 *
 * Device assert: HIP 5.2's __assert_fail prints "file:line: function:
 * Device-side assertion `expr' failed." through fprintf(stderr) and then
 * executes s_trap 2, which fails the launch (hipErrorLaunchFailure); the
 * runtime names the kernel and repeats the assertion text
 * (hip_hostcall_report_trap).
 *
 * Locking: one mutex (hc.mu) guards all state here; it is taken by worker
 * threads in hip_hostcall_serve and by the API thread in
 * hip_hostcall_buffer; nothing here takes rt.mu (the launching thread holds
 * it while the workers run).
 */
#include "hip_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HC_PACKETS 1024u         /* power of two; >= 16 waves x worker threads + 1 */
#define HC_PAYLOAD_BYTES 4096u   /* 64 lanes x 8 u64 */
#define HC_HEADER_BYTES 24u
#define HC_SIGNAL_OFF 64u        /* amd_signal_t inside the buffer allocation */
#define HC_HEADERS_OFF 256u
#define HC_PAYLOADS_OFF 32768u   /* >= HC_HEADERS_OFF + HC_PACKETS * 24, 4 KiB aligned */
#define HC_BYTES (HC_PAYLOADS_OFF + (uint64_t)HC_PACKETS * HC_PAYLOAD_BYTES)

enum { SVC_FUNCTION_CALL = 1, SVC_PRINTF = 2, SVC_DEVMEM = 3 };
enum { DESC_BEGIN = 1, DESC_END = 2 };

/* A printf message being assembled (one per lane that called printf). */
typedef struct hc_msg {
    int used;
    uint64_t *w;
    size_t n, cap;
} hc_msg;

static struct {
    pthread_mutex_t mu;
    uint8_t *buf[HIP_MAX_GPUS];   /* per device, allocated at first use */
    hc_msg *msgs;                 /* id = index + 1 */
    size_t n_msgs;
    char last_stderr[HIP_MAX_GPUS][512]; /* last device fprintf(stderr) of the launch */
    int warned_fcall;
} hc = {.mu = PTHREAD_MUTEX_INITIALIZER};

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static void wr64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

uint64_t hip_hostcall_buffer(uint32_t device)
{
    if (device >= HIP_MAX_GPUS)
        return 0;
    pthread_mutex_lock(&hc.mu);
    hc.last_stderr[device][0] = 0; /* a new launch: forget the last one's assert text */
    uint8_t *b = hc.buf[device];
    pthread_mutex_unlock(&hc.mu);
    if (b)
        return (uint64_t)(uintptr_t)b;
    b = gcn_mem_alloc(hip_rt_state.m, device, HC_BYTES, TRC_MEM_KERNARG);
    if (!b) {
        fprintf(stderr, "gcn3-emu: cannot allocate the %" PRIu64
                        "-byte hostcall buffer of device %u (printf/assert/malloc in kernels)\n",
                HC_BYTES, device);
        return 0;
    }
    uint64_t base = (uint64_t)(uintptr_t)b;
    wr64(b + 0, base + HC_HEADERS_OFF);
    wr64(b + 8, base + HC_PAYLOADS_OFF);
    wr64(b + 16, base + HC_SIGNAL_OFF);
    wr64(b + 24, 1); /* packet 1 on top; 0 means empty */
    wr64(b + 32, 0);
    wr64(b + 40, HC_PACKETS - 1);
    /* amd_signal_t (ROCr amd_hsa_signal.h): kind AMD_SIGNAL_KIND_USER (1),
     * value 0, no event mailbox (so the device sends no interrupt). */
    wr64(b + HC_SIGNAL_OFF, 1);
    for (uint32_t i = 1; i < HC_PACKETS; i++)
        wr64(b + HC_HEADERS_OFF + (uint64_t)i * HC_HEADER_BYTES, i + 1 < HC_PACKETS ? i + 1 : 0);
    /* The replay starts from the runtime's writes: the initialised head of the
     * buffer (the payloads are zero, as allocated). */
    trc_event ev = {.kind = TRC_EV_COPY, .device = device, .addr = base, .size = HC_PAYLOADS_OFF,
                    .copy_kind = TRC_COPY_INIT, .data = b};
    hip_trace_event(&ev);
    pthread_mutex_lock(&hc.mu);
    __atomic_store_n(&hc.buf[device], b, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&hc.mu);
    return base;
}

/* ---- printf -------------------------------------------------------------------- */

static hc_msg *msg_new(uint64_t *id)
{
    size_t i;
    for (i = 0; i < hc.n_msgs; i++)
        if (!hc.msgs[i].used)
            break;
    if (i == hc.n_msgs) {
        hc_msg *m = realloc(hc.msgs, (hc.n_msgs + 16) * sizeof *m);
        if (!m)
            return NULL;
        memset(m + hc.n_msgs, 0, 16 * sizeof *m);
        hc.msgs = m;
        hc.n_msgs += 16;
    }
    hc.msgs[i].used = 1;
    hc.msgs[i].n = 0;
    *id = i + 1;
    return &hc.msgs[i];
}

static int msg_append(hc_msg *m, const uint64_t *w, size_t n)
{
    if (m->n + n > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 32;
        while (cap < m->n + n)
            cap *= 2;
        uint64_t *p = realloc(m->w, cap * sizeof *p);
        if (!p)
            return -1;
        m->w = p;
        m->cap = cap;
    }
    memcpy(m->w + m->n, w, n * sizeof *w);
    m->n += n;
    return 0;
}

/* Growable output line. */
typedef struct hc_out {
    char *s;
    size_t n, cap;
    int bad;
} hc_out;

static void out_add(hc_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_add(hc_out *o, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0 || o->bad) {
        o->bad = 1;
        va_end(ap2);
        return;
    }
    if (o->n + (size_t)k + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 256;
        while (cap < o->n + (size_t)k + 1)
            cap *= 2;
        char *s = realloc(o->s, cap);
        if (!s) {
            o->bad = 1;
            va_end(ap2);
            return;
        }
        o->s = s;
        o->cap = cap;
    }
    vsnprintf(o->s + o->n, (size_t)k + 1, fmt, ap2);
    va_end(ap2);
    o->n += (size_t)k;
}

/* A string stored inline in the message at word *i (NUL included, padded to
 * 8 bytes); advances *i. Never reads past the message. */
static const char *msg_string(const uint64_t *w, size_t n, size_t *i, char *tmp, size_t tmpsz)
{
    if (*i >= n)
        return NULL;
    const char *s = (const char *)(w + *i);
    size_t max = (n - *i) * 8, len = strnlen(s, max);
    *i += len / 8 + 1;
    if (len < max)
        return s;
    /* no NUL before the end of the message: copy what there is */
    size_t k = len < tmpsz - 1 ? len : tmpsz - 1;
    memcpy(tmp, s, k);
    tmp[k] = 0;
    return tmp;
}

/* Format the message (after its control word) as C printf would; the
 * argument conversions follow the format string's conversion specifiers.
 * Returns the characters written, -1 on a malformed message. */
static long format_message(const uint64_t *w, size_t n, hc_out *o)
{
    char tmp[4096];
    size_t i = 0;
    const char *fmt = msg_string(w, n, &i, tmp, sizeof tmp);
    if (!fmt)
        return -1;
    char fmtcopy[4096];
    if (fmt == tmp) {
        snprintf(fmtcopy, sizeof fmtcopy, "%s", tmp);
        fmt = fmtcopy;
    }
    const char *p = fmt;
    while (*p) {
        const char *pct = strchr(p, '%');
        if (!pct) {
            out_add(o, "%s", p);
            break;
        }
        if (pct > p)
            out_add(o, "%.*s", (int)(pct - p), p);
        if (pct[1] == '%') {
            out_add(o, "%%");
            p = pct + 2;
            continue;
        }
        /* [flags][width][.precision][length]conversion */
        const char *q = pct + 1;
        q += strspn(q, "-+ #0'");
        int star_args[2], n_star = 0;
        for (int part = 0; part < 2; part++) {
            if (part == 1) {
                if (*q != '.')
                    break;
                q++;
            }
            if (*q == '*') {
                if (i >= n)
                    return (long)o->n;
                star_args[n_star++] = (int)w[i++];
                q++;
            } else {
                q += strspn(q, "0123456789");
            }
        }
        const char *len_start = q;
        q += strspn(q, "hlLqjzt");
        char conv = *q;
        if (!conv || !strchr("diouxXfFeEgGaAcspn", conv)) {
            /* undefined behaviour in C: print the rest literally */
            out_add(o, "%s", pct);
            break;
        }
        int wide = 0;
        for (const char *l = len_start; l < q; l++)
            if (strchr("lLqjzt", *l))
                wide = 1;
        /* rebuild the spec without its length modifier, then add ours */
        char spec[64];
        size_t head = (size_t)(len_start - pct);
        if (head > sizeof spec - 4)
            head = sizeof spec - 4;
        memcpy(spec, pct, head);
        size_t k = head;
        p = q + 1;
        if (conv == 'n') {
            i++; /* ignored, its argument skipped (as ROCclr does) */
            continue;
        }
        if (conv == 's') {
            spec[k++] = 's';
            spec[k] = 0;
            const char *s = msg_string(w, n, &i, tmp, sizeof tmp);
            if (!s)
                return (long)o->n;
            if (n_star == 2)
                out_add(o, spec, star_args[0], star_args[1], s);
            else if (n_star == 1)
                out_add(o, spec, star_args[0], s);
            else
                out_add(o, spec, s);
            continue;
        }
        if (i >= n)
            return (long)o->n; /* fewer arguments than conversions */
        uint64_t v = w[i++];
#define HC_EMIT(...)                                                                 \
    do {                                                                             \
        if (n_star == 2)                                                             \
            out_add(o, spec, star_args[0], star_args[1], __VA_ARGS__);               \
        else if (n_star == 1)                                                        \
            out_add(o, spec, star_args[0], __VA_ARGS__);                             \
        else                                                                         \
            out_add(o, spec, __VA_ARGS__);                                           \
    } while (0)
        _Pragma("GCC diagnostic push");
        _Pragma("GCC diagnostic ignored \"-Wformat-nonliteral\"");
        if (strchr("fFeEgGaA", conv)) {
            double d;
            memcpy(&d, &v, 8);
            spec[k++] = conv;
            spec[k] = 0;
            HC_EMIT(d);
        } else if (conv == 'p') {
            spec[k++] = 'p';
            spec[k] = 0;
            HC_EMIT((void *)(uintptr_t)v);
        } else if (conv == 'c') {
            spec[k++] = 'c';
            spec[k] = 0;
            HC_EMIT((int)v);
        } else if (wide) {
            spec[k++] = 'l';
            spec[k++] = 'l';
            spec[k++] = conv;
            spec[k] = 0;
            HC_EMIT((long long)v);
        } else {
            /* int, short, char: the device passes the promoted int; the
             * h/hh modifiers are kept so that printf truncates */
            size_t ml = (size_t)(q - len_start);
            memcpy(spec + k, len_start, ml);
            k += ml;
            spec[k++] = conv;
            spec[k] = 0;
            HC_EMIT((int)(uint32_t)v);
        }
        _Pragma("GCC diagnostic pop");
#undef HC_EMIT
    }
    return o->bad ? -1 : (long)o->n;
}

/* One lane's PRINTF packet: payload words w[0..7]. Writes the answer to w[0]. */
static void serve_printf(uint32_t device, uint64_t *w)
{
    uint64_t desc = w[0];
    size_t len = (size_t)(desc >> 5 & 7);
    uint64_t id = desc >> 8;
    hc_msg *m = NULL;
    if (desc & DESC_BEGIN) {
        m = msg_new(&id);
    } else if (id >= 1 && id <= hc.n_msgs && hc.msgs[id - 1].used) {
        m = &hc.msgs[id - 1];
    }
    if (!m) {
        fprintf(stderr, "gcn3-emu: device printf: message id %" PRIu64 " unknown (descriptor 0x%" PRIx64
                        "); output lost\n", id, desc);
        w[0] = UINT64_MAX;
        return;
    }
    if (msg_append(m, w + 1, len)) {
        fprintf(stderr, "gcn3-emu: device printf: out of memory; output lost\n");
        m->used = 0;
        w[0] = UINT64_MAX;
        return;
    }
    if (!(desc & DESC_END)) {
        w[0] = id << 8;
        return;
    }
    m->used = 0;
    long r = -1;
    if (m->n >= 1 && !(m->w[0] & ~1ull)) {
        hc_out o = {0};
        r = format_message(m->w + 1, m->n - 1, &o);
        if (r >= 0 && o.n) {
            FILE *f = m->w[0] & 1 ? stderr : stdout;
            fwrite(o.s, 1, o.n, f);
            if (f == stderr) {
                /* remembered for the launch failure message (assert) */
                size_t k = o.n < sizeof hc.last_stderr[0] - 1 ? o.n : sizeof hc.last_stderr[0] - 1;
                memcpy(hc.last_stderr[device], o.s, k);
                while (k && (o.s[k - 1] == '\n'))
                    k--;
                hc.last_stderr[device][k] = 0;
            }
        }
        free(o.s);
    }
    if (r < 0)
        fprintf(stderr, "gcn3-emu: device printf: malformed message (%zu words, control 0x%" PRIx64 ")\n",
                m->n, m->n ? m->w[0] : 0);
    w[0] = (uint64_t)(int64_t)r;
}

/* ---- malloc/free ------------------------------------------------------------- */

static void serve_devmem(uint32_t device, uint64_t *w)
{
    uint64_t ptr = w[0], size = w[1];
    if (!ptr) {
        void *p = size ? gcn_mem_alloc(hip_rt_state.m, device, size, TRC_MEM_DEVICE) : NULL;
        w[0] = (uint64_t)(uintptr_t)p; /* NULL: malloc returns NULL */
    } else {
        if (gcn_mem_free(hip_rt_state.m, (void *)(uintptr_t)ptr) != 0)
            fprintf(stderr, "gcn3-emu: device free(0x%" PRIx64 "): not a block device malloc returned\n", ptr);
        w[0] = 0;
    }
}

/* ---- the service ---------------------------------------------------------------- */

static void serve_packet(uint32_t device, uint8_t *b, uint32_t idx)
{
    uint8_t *hdr = b + HC_HEADERS_OFF + (uint64_t)idx * HC_HEADER_BYTES;
    uint64_t *pl = (uint64_t *)(void *)(b + HC_PAYLOADS_OFF + (uint64_t)idx * HC_PAYLOAD_BYTES);
    uint64_t active = rd64(hdr + 8);
    uint32_t service;
    memcpy(&service, hdr + 16, 4);
    for (uint32_t lane = 0; lane < 64; lane++) {
        if (!(active >> lane & 1))
            continue;
        uint64_t *w = pl + (size_t)lane * 8;
        switch (service) {
        case SVC_PRINTF: serve_printf(device, w); break;
        case SVC_DEVMEM: serve_devmem(device, w); break;
        case SVC_FUNCTION_CALL:
            if (!hc.warned_fcall)
                fprintf(stderr, "gcn3-emu: hostcall service FUNCTION_CALL (__ockl_call_host_function) is "
                                "not implemented; the device gets 0\n");
            hc.warned_fcall = 1;
            w[0] = w[1] = 0;
            break;
        default:
            fprintf(stderr, "gcn3-emu: hostcall service %u is unknown (device %u); the device gets 0\n",
                    service, device);
            w[0] = w[1] = 0;
            break;
        }
    }
    /* release: the answers are visible before the device sees control bit 0 clear */
    uint32_t *ctrl = (uint32_t *)(void *)(hdr + 20);
    __atomic_fetch_and(ctrl, ~1u, __ATOMIC_RELEASE);
}

void hip_hostcall_serve(void *arg)
{
    (void)arg;
    /* Cheap check first: waves also sleep in spin loops of their own (and in
     * the hostcall's CAS retries); only take the lock when a packet waits. */
    int pending = 0;
    for (uint32_t d = 0; d < HIP_MAX_GPUS && !pending; d++) {
        uint8_t *b = __atomic_load_n(&hc.buf[d], __ATOMIC_ACQUIRE);
        pending = b && __atomic_load_n((uint64_t *)(void *)(b + 32), __ATOMIC_RELAXED) != 0;
    }
    if (!pending)
        return;
    pthread_mutex_lock(&hc.mu);
    for (uint32_t d = 0; d < HIP_MAX_GPUS; d++) {
        uint8_t *b = hc.buf[d];
        if (!b)
            continue;
        uint64_t *ready = (uint64_t *)(void *)(b + 32);
        if (!__atomic_load_n(ready, __ATOMIC_RELAXED))
            continue;
        uint64_t top = __atomic_exchange_n(ready, 0, __ATOMIC_ACQUIRE);
        /* the stack is last-in first-out: serve in push order */
        uint32_t order[HC_PACKETS], n = 0;
        while (top && n < HC_PACKETS) {
            uint32_t idx = (uint32_t)(top & (HC_PACKETS - 1));
            order[n++] = idx;
            top = rd64(b + HC_HEADERS_OFF + (uint64_t)idx * HC_HEADER_BYTES);
        }
        while (n)
            serve_packet(d, b, order[--n]);
    }
    pthread_mutex_unlock(&hc.mu);
}

void hip_hostcall_report_trap(uint32_t device, const char *kernel)
{
    if (device >= HIP_MAX_GPUS)
        return;
    pthread_mutex_lock(&hc.mu);
    if (hc.last_stderr[device][0])
        fprintf(stderr, "gcn3-emu: kernel %s stopped after a device-side message (assert): %s\n", kernel,
                hc.last_stderr[device]);
    pthread_mutex_unlock(&hc.mu);
}
