/*
 * gcn3-trace - inspect .gtrace files (format: docs/trace-format.md).
 *
 *   gcn3-trace info TRACE
 *       header, code objects, event counts, and per kernel: name, grid,
 *       workgroups, wavefront instructions, memory ops, compressed bytes and
 *       bytes per wavefront-instruction (records and data values apart).
 *   gcn3-trace dump TRACE [--kernel K] [--wg N] [--no-data]
 *       host events and wavefront records as text; --kernel/--wg restrict
 *       the wavefront records to one kernel / one workgroup (commit order).
 *
 * Exit status: 0 ok, 1 damaged or unreadable trace, 2 usage error.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traceformat/trc.h"
#include "traceformat/trc_internal.h"

static const char *ev_name(trc_event_kind k)
{
    static const char *n[] = {"alloc", "free", "copy", "memset", "launch", "sync"};
    return (unsigned)k < sizeof n / sizeof *n ? n[k] : "?";
}
static const char *mem_kind_name(trc_mem_kind k)
{
    static const char *n[] = {"device", "host-pinned", "kernarg", "code", "scratch"};
    return (unsigned)k < sizeof n / sizeof *n ? n[k] : "?";
}
static const char *copy_kind_name(trc_copy_kind k)
{
    static const char *n[] = {"H2D", "D2H", "D2D", "init"};
    return (unsigned)k < sizeof n / sizeof *n ? n[k] : "?";
}

static int usage(void)
{
    fprintf(stderr, "usage: gcn3-trace info TRACE\n"
                    "       gcn3-trace dump TRACE [--kernel K] [--wg N] [--no-data]\n");
    return 2;
}

static int cmd_info(trc_reader *r)
{
    const trc_header_info *h = trc_reader_header(r);
    printf("format       %u.%u\n", h->format_major, h->format_minor);
    printf("producer     %s %s\n", h->producer, h->producer_version);
    printf("isa target   %s\n", h->isa_target);
    printf("devices      %u\n", h->device_count);
    printf("command line %s\n", h->command_line);
    size_t nco = trc_reader_n_code_objects(r);
    printf("code objects %zu\n", nco);
    for (size_t i = 0; i < nco; i++) {
        size_t len;
        trc_reader_code_object(r, i, &len);
        printf("  [%zu] %zu bytes\n", i, len);
    }
    size_t cnt[6] = {0};
    uint64_t copy_bytes = 0;
    for (size_t i = 0; i < trc_reader_n_events(r); i++) {
        const trc_event *e = trc_reader_event(r, i);
        if ((unsigned)e->kind < 6) cnt[e->kind]++;
        if (e->kind == TRC_EV_COPY && e->data) copy_bytes += e->size;
    }
    printf("events       %zu: %zu alloc, %zu free, %zu copy (%" PRIu64 " data bytes), %zu memset, "
           "%zu launch, %zu sync\n",
           trc_reader_n_events(r), cnt[0], cnt[1], cnt[2], copy_bytes, cnt[3], cnt[4], cnt[5]);
    uint64_t ti = 0, tm = 0, tw = 0, td = 0;
    printf("kernels      %zu\n", trc_reader_n_kernels(r));
    printf("  %-4s %-32s %-14s %6s %12s %10s %10s %10s %8s %8s\n", "id", "name", "grid", "wgs",
           "wf-instr", "mem-ops", "rec-bytes", "data-bytes", "B/instr", "+data");
    for (uint32_t k = 0; k < trc_reader_n_kernels(r); k++) {
        trc_kernel_stats st;
        trc_reader_kernel_stats(r, k, &st);
        const trc_launch *l = &trc_reader_event(r, st.launch_event)->launch;
        char grid[48];
        snprintf(grid, sizeof grid, "%ux%ux%u", l->grid[0], l->grid[1], l->grid[2]);
        double d = st.n_instr ? (double)st.n_instr : 1.0;
        printf("  %-4u %-32.32s %-14s %6u %12" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64
               " %8.3f %8.3f%s\n",
               k, l->kernel_name, grid, st.n_wg, st.n_instr, st.n_mem, st.wg_bytes, st.data_bytes,
               (double)st.wg_bytes / d, (double)(st.wg_bytes + st.data_bytes) / d,
               st.ended ? "" : "  (not ended)");
        ti += st.n_instr;
        tm += st.n_mem;
        tw += st.wg_bytes;
        td += st.data_bytes;
    }
    double d = ti ? (double)ti : 1.0;
    printf("total        %" PRIu64 " wavefront-instr, %" PRIu64 " mem ops, %" PRIu64
           " record bytes (%.3f B/instr), %" PRIu64 " data bytes (%.3f B/instr)\n",
           ti, tm, tw, (double)tw / d, td, (double)td / d);
    return 0;
}

static void hex(const uint8_t *p, uint64_t n, uint64_t max)
{
    for (uint64_t i = 0; i < n && i < max; i++) printf("%02x", p[i]);
    if (n > max) printf("...(%" PRIu64 " bytes)", n);
}

static void dump_event(size_t i, const trc_event *e)
{
    printf("event %zu %s dev=%u stream=%u", i, ev_name(e->kind), e->device, e->stream);
    switch (e->kind) {
    case TRC_EV_ALLOC:
    case TRC_EV_FREE:
        printf(" addr=0x%" PRIx64 " size=%" PRIu64 " kind=%s\n", e->addr, e->size, mem_kind_name(e->mem_kind));
        break;
    case TRC_EV_COPY:
        printf(" %s dst=0x%" PRIx64 " src=0x%" PRIx64 " size=%" PRIu64 " data=", copy_kind_name(e->copy_kind),
               e->addr, e->src, e->size);
        if (e->data) hex(e->data, e->size, 32);
        else printf("none");
        printf("\n");
        break;
    case TRC_EV_MEMSET:
        printf(" dst=0x%" PRIx64 " size=%" PRIu64 " value=0x%02x\n", e->addr, e->size, e->value);
        break;
    case TRC_EV_SYNC:
        printf("\n");
        break;
    case TRC_EV_LAUNCH: {
        const trc_launch *l = &e->launch;
        printf(" kernel=%u %s code_object=%u entry=0x%" PRIx64 " grid=%ux%ux%u wg=%ux%ux%u waves/wg=%u "
               "lds=%u scratch=%u vgpr=%u sgpr=%u kernarg@0x%" PRIx64 "[%u]=",
               l->kernel_id, l->kernel_name, l->code_object_id, l->entry_vaddr, l->grid[0], l->grid[1],
               l->grid[2], l->wg_size[0], l->wg_size[1], l->wg_size[2], l->waves_per_wg,
               l->group_segment_size, l->private_segment_size, l->vgpr_count, l->sgpr_count,
               l->kernarg_addr, l->kernarg_size);
        hex(l->kernarg, l->kernarg_size, 64);
        printf(" n_wg=%u n_instr=%" PRIu64 "\n", e->n_wg, e->n_instr);
        break;
    }
    }
}

static void dump_wg(const trc_wg *g, uint32_t i)
{
    printf("kernel %u wg #%u id=(%u,%u,%u) waves=%u\n", g->kernel_id, i, g->wg_id[0], g->wg_id[1],
           g->wg_id[2], g->n_waves);
    for (uint32_t v = 0; v < g->n_waves; v++) {
        const trc_wave *w = &g->waves[v];
        printf("  wave %u: %" PRIu64 " instr, %u branches, %u indirect, %u exec changes, %u mem ops\n",
               w->wave_in_wg, w->n_instr, w->n_branch, w->n_indirect, w->n_exec, w->n_mem);
        if (w->n_branch) {
            printf("    branches ");
            for (uint32_t b = 0; b < w->n_branch; b++)
                putchar((w->branch_taken[b >> 3] >> (b & 7)) & 1 ? 'T' : 'n');
            printf("\n");
        }
        for (uint32_t k = 0; k < w->n_indirect; k++) printf("    indirect -> 0x%" PRIx64 "\n", w->indirect_target[k]);
        for (uint32_t k = 0; k < w->n_exec; k++)
            printf("    exec @%" PRIu64 " = 0x%016" PRIx64 "\n", w->exec_at[k], w->exec_val[k]);
        for (uint32_t m = 0; m < w->n_mem; m++) {
            const trc_mem_op *o = &w->mem[m];
            uint32_t n = (uint32_t)__builtin_popcountll(o->exec);
            printf("    mem %u:%s%s%s%s%s%s%s bytes=%u exec=0x%016" PRIx64, m,
                   o->flags & TRC_MO_LOAD ? " load" : "", o->flags & TRC_MO_STORE ? " store" : "",
                   o->flags & TRC_MO_ATOMIC ? " atomic" : "", o->flags & TRC_MO_CMPSWAP ? " cmpswap" : "",
                   o->flags & TRC_MO_LDS ? " lds" : "", o->flags & TRC_MO_SMEM ? " smem" : "",
                   o->flags & TRC_MO_SCRATCH ? " scratch" : "", o->bytes_per_lane, o->exec);
            printf(" addr=");
            for (uint32_t k = 0; k < n; k++) {
                if (k == 8 && n > 9) {
                    printf(",...,0x%" PRIx64, o->addr[n - 1]);
                    break;
                }
                printf("%s0x%" PRIx64, k ? "," : "", o->addr[k]);
            }
            if (o->load_data) {
                printf(" load=");
                hex(o->load_data, trc_mo_load_len(o->flags, n, o->bytes_per_lane), 32);
            }
            if (o->store_data) {
                printf(" store=");
                hex(o->store_data, trc_mo_store_len(o->flags, n, o->bytes_per_lane), 32);
            }
            printf("\n");
        }
    }
}

static int cmd_dump(trc_reader *r, long kernel, long wg, int with_data)
{
    if (kernel < 0 && wg < 0)
        for (size_t i = 0; i < trc_reader_n_events(r); i++) dump_event(i, trc_reader_event(r, i));
    int rc = 0;
    for (uint32_t k = 0; k < trc_reader_n_kernels(r); k++) {
        if (kernel >= 0 && (uint32_t)kernel != k) continue;
        trc_kernel_stats st;
        trc_reader_kernel_stats(r, k, &st);
        if (wg >= 0 && (uint64_t)wg >= st.n_wg) {
            fprintf(stderr, "gcn3-trace: kernel %u has %u workgroups; no --wg %ld\n", k, st.n_wg, wg);
            rc = 2;
            continue;
        }
        for (uint32_t i = 0; i < st.n_wg; i++) {
            if (wg >= 0 && (uint32_t)wg != i) continue;
            char err[512];
            trc_wg *g = trc_reader_load_wg_ex(r, k, i, with_data, err, sizeof err);
            if (!g) {
                fprintf(stderr, "gcn3-trace: %s\n", err);
                return 1;
            }
            dump_wg(g, i);
            trc_wg_free(g);
        }
    }
    if (kernel >= 0 && (size_t)kernel >= trc_reader_n_kernels(r)) {
        fprintf(stderr, "gcn3-trace: no kernel %ld (trace has %zu)\n", kernel, trc_reader_n_kernels(r));
        return 2;
    }
    return rc;
}

static int parse_num(const char *s, long *out)
{
    char *end;
    long v = strtol(s, &end, 0);
    if (!*s || *end || v < 0) return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) return usage();
    const char *cmd = argv[1], *path = argv[2];
    long kernel = -1, wg = -1;
    int with_data = 1;
    if (strcmp(cmd, "info") != 0 && strcmp(cmd, "dump") != 0) return usage();
    for (int i = 3; i < argc; i++) {
        if (!strcmp(cmd, "dump") && !strcmp(argv[i], "--kernel") && i + 1 < argc) {
            if (parse_num(argv[++i], &kernel)) return usage();
        } else if (!strcmp(cmd, "dump") && !strcmp(argv[i], "--wg") && i + 1 < argc) {
            if (parse_num(argv[++i], &wg)) return usage();
        } else if (!strcmp(cmd, "dump") && !strcmp(argv[i], "--no-data")) {
            with_data = 0;
        } else {
            fprintf(stderr, "gcn3-trace: unknown argument '%s'\n", argv[i]);
            return usage();
        }
    }
    char err[512];
    trc_reader *r = trc_reader_open(path, err, sizeof err);
    if (!r) {
        fprintf(stderr, "gcn3-trace: %s\n", err);
        return 1;
    }
    int rc = !strcmp(cmd, "info") ? cmd_info(r) : cmd_dump(r, kernel, wg, with_data);
    trc_reader_close(r);
    return rc;
}
