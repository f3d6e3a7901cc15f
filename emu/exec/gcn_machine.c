/*
 * gcn_machine.c - the machine object, its persistent worker pool, and loaded
 * modules (code objects mapped into device memory and decoded once).
 *
 * Worker pool: n_threads threads created once at gcn_machine_create. A launch
 * posts a job (m->job, m->job_seq++) and waits until every worker reported
 * back; workers take workgroups from the job's atomic counter (gcn_launch.c).
 * Invariant: at most one job is posted at a time (gcn_launch is called from
 * one host thread at a time, gcn_exec.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "exec_internal.h"

/* Defined in gcn_launch.c. */
void gcn_worker_run_job(gcn_worker *wk, struct gcn_launch_job *job);

static void *worker_main(void *arg)
{
    gcn_worker *wk = arg;
    gcn_machine *m = wk->m;
    uint64_t seen = 0;
    pthread_mutex_lock(&m->pool_lock);
    for (;;) {
        while (!m->shutdown && m->job_seq == seen)
            pthread_cond_wait(&m->pool_wake, &m->pool_lock);
        if (m->shutdown)
            break;
        seen = m->job_seq;
        struct gcn_launch_job *job = m->job;
        pthread_mutex_unlock(&m->pool_lock);
        gcn_worker_run_job(wk, job);
        pthread_mutex_lock(&m->pool_lock);
        if (--m->workers_busy == 0)
            pthread_cond_broadcast(&m->pool_done);
    }
    pthread_mutex_unlock(&m->pool_lock);
    return NULL;
}

static void free_workers(gcn_machine *m)
{
    if (!m->workers)
        return;
    pthread_mutex_lock(&m->pool_lock);
    m->shutdown = 1;
    pthread_cond_broadcast(&m->pool_wake);
    pthread_mutex_unlock(&m->pool_lock);
    for (uint32_t i = 0; i < m->n_workers; i++) {
        gcn_worker *wk = &m->workers[i];
        if (wk->started)
            pthread_join(wk->thread, NULL);
        if (wk->rec)
            trc_wg_rec_destroy(wk->rec);
        free(wk->vgprs);
        free(wk->lds);
    }
    free(m->workers);
    m->workers = NULL;
}

gcn_machine *gcn_machine_create(const gcn_machine_config *cfg, char *err, size_t errlen)
{
    if (!cfg || cfg->n_gpus < 1 || cfg->n_threads < 1) {
        if (err)
            snprintf(err, errlen, "gcn_machine_create: need n_gpus >= 1 and n_threads >= 1 (got %u, %u)",
                     cfg ? cfg->n_gpus : 0, cfg ? cfg->n_threads : 0);
        return NULL;
    }
    gcn_machine *m = calloc(1, sizeof(*m));
    if (!m)
        goto nomem;
    m->cfg = *cfg;
    pthread_mutex_init(&m->mem_lock, NULL);
    pthread_mutex_init(&m->trace_lock, NULL);
    pthread_mutex_init(&m->pool_lock, NULL);
    pthread_cond_init(&m->pool_wake, NULL);
    pthread_cond_init(&m->pool_done, NULL);
    atomic_init(&m->table, NULL);
    atomic_init(&m->launches_active, 0);
    m->n_workers = cfg->n_threads;
    m->workers = calloc(m->n_workers, sizeof(gcn_worker));
    if (!m->workers)
        goto nomem;
    for (uint32_t i = 0; i < m->n_workers; i++) {
        gcn_worker *wk = &m->workers[i];
        wk->m = m;
        wk->index = i;
        wk->vgprs = calloc((size_t)GCN_MAX_WAVES_PER_WG * 256, sizeof(*wk->vgprs));
        wk->lds = calloc(1, GCN_MAX_LDS);
        if (!wk->vgprs || !wk->lds)
            goto nomem;
        if (cfg->trace) {
            wk->rec = trc_wg_rec_create();
            if (!wk->rec)
                goto nomem;
        }
    }
    for (uint32_t i = 0; i < m->n_workers; i++) {
        gcn_worker *wk = &m->workers[i];
        int rc = pthread_create(&wk->thread, NULL, worker_main, wk);
        if (rc) {
            if (err)
                snprintf(err, errlen, "gcn_machine_create: cannot start worker thread %u of %u: %s",
                         i, m->n_workers, strerror(rc));
            gcn_machine_destroy(m);
            return NULL;
        }
        wk->started = 1;
    }
    return m;
nomem:
    if (err)
        snprintf(err, errlen, "gcn_machine_create: out of memory (%u worker threads)", cfg->n_threads);
    gcn_machine_destroy(m);
    return NULL;
}

int gcn_machine_interrupt(gcn_machine *m, int signo)
{
    if (!m)
        return 0;
    atomic_int *stop = atomic_load(&m->stop_flag);
    if (!stop)
        return 0;
    atomic_store(&m->interrupt, signo);
    atomic_store(stop, 1);
    return 1;
}

void gcn_machine_destroy(gcn_machine *m)
{
    if (!m)
        return;
    free_workers(m);
    /* Allocations still live are released with the machine (the program
     * exits without freeing them); no FREE events: the timeline ends here. */
    gcn_mem_table *t = atomic_load(&m->table);
    if (t) {
        for (size_t i = 0; i < t->n; i++)
            munmap((void *)(uintptr_t)t->e[i].base, t->e[i].map_size);
        free(t);
    }
    for (uint32_t i = 0; i < GCN_MEM_QUARANTINE; i++)
        if (m->quarantine[i].p)
            munmap(m->quarantine[i].p, m->quarantine[i].size);
    gcn_mem_table *r = m->retired;
    while (r) {
        gcn_mem_table *n = r->next_retired;
        free(r);
        r = n;
    }
    pthread_cond_destroy(&m->pool_wake);
    pthread_cond_destroy(&m->pool_done);
    pthread_mutex_destroy(&m->pool_lock);
    pthread_mutex_destroy(&m->trace_lock);
    pthread_mutex_destroy(&m->mem_lock);
    free(m);
}

/* ---- modules ------------------------------------------------------------- */

gcn_module *gcn_module_load(gcn_machine *m, gcn_code_object *co, char *err, size_t errlen)
{
    if (!m || !co) {
        if (err)
            snprintf(err, errlen, "gcn_module_load: no machine or code object");
        return NULL;
    }
    gcn_module *mod = calloc(1, sizeof(*mod));
    if (!mod) {
        if (err)
            snprintf(err, errlen, "gcn_module_load: out of memory");
        return NULL;
    }
    mod->trace_co_id = -1;
    if (co->image_size == 0 || !co->text || co->text_size == 0) {
        if (err)
            snprintf(err, errlen, "gcn_module_load: code object (%s) has no loadable image or no .text",
                     co->target);
        free(mod);
        return NULL;
    }
    mod->image = gcn_mem_alloc(m, 0, co->image_size, TRC_MEM_CODE);
    if (!mod->image) {
        if (err)
            snprintf(err, errlen, "gcn_module_load: cannot allocate %" PRIu64 " bytes for the code image",
                     co->image_size);
        free(mod);
        return NULL;
    }
    gcn_co_map_image(co, mod->image);
    if (m->cfg.trace) {
        trc_event ev = {.kind = TRC_EV_COPY, .device = 0, .addr = (uint64_t)(uintptr_t)mod->image,
                        .size = co->image_size, .copy_kind = TRC_COPY_INIT, .data = mod->image};
        pthread_mutex_lock(&m->trace_lock);
        int rc = trc_writer_event(m->cfg.trace, &ev);
        if (rc == 0)
            mod->trace_co_id = trc_writer_code_object(m->cfg.trace, co->elf, co->elf_size,
                                                        (uint64_t)(uintptr_t)mod->image);
        /* a failed writer (full disk) only stops the recording: the module
         * loads and its kernels run unrecorded */
        const char *msg = (rc != 0 || mod->trace_co_id < 0) && !trc_writer_failed(m->cfg.trace)
                              ? trc_writer_error(m->cfg.trace)
                              : NULL;
        if (msg && err)
            snprintf(err, errlen, "gcn_module_load: trace: %s", msg);
        pthread_mutex_unlock(&m->trace_lock);
        if (msg) {
            gcn_mem_free(m, mod->image);
            free(mod);
            return NULL;
        }
    }
    /* gcn_co_parse accepted only targets whose encodings we decode */
    mod->prog = gcn_program_decode(gcn_target_find(co->target), co->text, co->text_size, co->text_vaddr);
    if (!mod->prog) {
        if (err)
            snprintf(err, errlen, "gcn_module_load: out of memory decoding %" PRIu64 " bytes of .text",
                     co->text_size);
        gcn_mem_free(m, mod->image);
        free(mod);
        return NULL;
    }
    mod->kernel_sync = calloc(co->n_kernels ? co->n_kernels : 1, sizeof *mod->kernel_sync);
    if (!mod->kernel_sync) {
        if (err)
            snprintf(err, errlen, "gcn_module_load: out of memory");
        gcn_program_free(mod->prog);
        gcn_mem_free(m, mod->image);
        free(mod);
        return NULL;
    }
    for (uint32_t i = 0; i < co->n_kernels; i++)
        mod->kernel_sync[i].reasons =
            gcn_program_sync_reasons(mod->prog, co->kernels[i].entry_vaddr, &mod->kernel_sync[i].pc);
    mod->co = co;
    return mod;
}

void gcn_module_unload(gcn_machine *m, gcn_module *mod)
{
    if (!mod)
        return;
    if (m && mod->image)
        gcn_mem_free(m, mod->image);
    gcn_program_free(mod->prog);
    free(mod->kernel_sync);
    gcn_co_free(mod->co);
    free(mod);
}

const gcn_code_object *gcn_module_co(const gcn_module *mod)
{
    return mod ? mod->co : NULL;
}

uint64_t gcn_module_base(const gcn_module *mod)
{
    return mod ? (uint64_t)(uintptr_t)mod->image : 0;
}
