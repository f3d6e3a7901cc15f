/*
 * sweep_mpi.c - MPI for configuration sweeps (rp_sweep.h): points are spread
 * over ranks round-robin (point i runs on rank i % size), every rank runs its
 * points on its own worker threads, and rank 0 gathers the rows and writes
 * the CSV.
 *
 * Built with the flags of `mpicc --showme:compile` and RP_HAVE_MPI=1 when
 * mk/sweep.mk finds an MPI installation; otherwise the functions below work
 * for a plain (single-process) run and refuse to run under mpirun with a
 * message saying what is missing. MPI is initialised only when the process
 * was started by mpirun (its environment says so), so a plain run never
 * touches the MPI runtime. Only the main thread calls MPI
 * (MPI_THREAD_FUNNELED); rows travel as bytes (all ranks run the same binary,
 * so the struct layout is the same).
 */
#include "rp_sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(RP_HAVE_MPI) && RP_HAVE_MPI
#include <mpi.h>
#define HAVE_MPI 1
#else
#define HAVE_MPI 0
#endif

static unsigned env_uint(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? (unsigned)strtoul(v, NULL, 10) : 0;
}

int rp_mpi_launched(void)
{
    /* Open MPI's mpirun, and PMI/PMIx launchers (MPICH's hydra, srun). */
    return env_uint("OMPI_COMM_WORLD_SIZE") > 0 || env_uint("PMI_SIZE") > 0 || getenv("PMIX_RANK") != NULL;
}

unsigned rp_mpi_local_size(void)
{
    unsigned n = env_uint("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (!n)
        n = env_uint("MPI_LOCALNRANKS");
    return n ? n : 1;
}

#if HAVE_MPI
static int mpi_up;

int rp_mpi_init(int *argc, char ***argv, unsigned *rank, unsigned *size, char *err, size_t errlen)
{
    int provided = 0, r = 0, s = 1;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        snprintf(err, errlen, "MPI_Init_thread failed");
        return -1;
    }
    mpi_up = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    *rank = (unsigned)r;
    *size = (unsigned)s;
    return 0;
}

int rp_mpi_any(int flag)
{
    if (!mpi_up)
        return flag != 0;
    int in = flag != 0, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    return out;
}

int rp_mpi_gather_rows(rp_sweep_row *rows, size_t n, unsigned rank, unsigned size, char *err, size_t errlen)
{
    if (!mpi_up || size <= 1)
        return 0;
    size_t mine = 0;
    for (size_t i = rank; i < n; i += size)
        mine++;
    rp_sweep_row *send = malloc((mine ? mine : 1) * sizeof *send);
    int *counts = NULL, *displs = NULL;
    rp_sweep_row *recv = NULL;
    int fail = !send;
    if (rank == 0) {
        counts = calloc(size, sizeof *counts);
        displs = calloc(size, sizeof *displs);
        recv = malloc((n ? n : 1) * sizeof *recv);
        fail |= !counts || !displs || !recv;
        if (!fail) {
            size_t off = 0;
            for (unsigned r = 0; r < size; r++) {
                size_t c = r < n ? (n - r + size - 1) / size : 0;
                if (c * sizeof(rp_sweep_row) > (size_t)0x7fffffff || off * sizeof(rp_sweep_row) > (size_t)0x7fffffff)
                    fail = 1;
                counts[r] = (int)(c * sizeof(rp_sweep_row));
                displs[r] = (int)(off * sizeof(rp_sweep_row));
                off += c;
            }
        }
    }
    if (rp_mpi_any(fail)) {
        snprintf(err, errlen, "MPI: cannot gather %zu result rows (out of memory or too many)", n);
        free(send), free(counts), free(displs), free(recv);
        return -1;
    }
    size_t k = 0;
    for (size_t i = rank; i < n; i += size)
        send[k++] = rows[i];
    int rc = MPI_Gatherv(send, (int)(mine * sizeof *send), MPI_BYTE, recv, counts, displs, MPI_BYTE, 0,
                         MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS && rank == 0) {
        /* Rank r's rows are r, r+size, ... in order. */
        for (unsigned r = 0; r < size; r++) {
            const rp_sweep_row *src = (const rp_sweep_row *)((const char *)recv + displs[r]);
            size_t c = (size_t)counts[r] / sizeof *src;
            for (size_t j = 0; j < c; j++)
                rows[r + j * size] = src[j];
        }
    }
    free(send), free(counts), free(displs), free(recv);
    if (rc != MPI_SUCCESS) {
        snprintf(err, errlen, "MPI_Gatherv of the result rows failed (error %d)", rc);
        return -1;
    }
    return 0;
}

void rp_mpi_finalize(void)
{
    if (mpi_up)
        MPI_Finalize();
    mpi_up = 0;
}

#else /* no MPI at build time */

int rp_mpi_init(int *argc, char ***argv, unsigned *rank, unsigned *size, char *err, size_t errlen)
{
    (void)argc, (void)argv;
    unsigned n = env_uint("OMPI_COMM_WORLD_SIZE");
    if (!n)
        n = env_uint("PMI_SIZE");
    *rank = 0;
    *size = 1;
    if (n <= 1)
        return 0; /* one rank: nothing to spread */
    snprintf(err, errlen,
             "started by mpirun with %u ranks, but this mgpu-replay was built without MPI "
             "(no mpicc when it was built: install libopenmpi-dev and rebuild)",
             n);
    return -1;
}

int rp_mpi_any(int flag) { return flag != 0; }

int rp_mpi_gather_rows(rp_sweep_row *rows, size_t n, unsigned rank, unsigned size, char *err, size_t errlen)
{
    (void)rows, (void)n, (void)rank;
    if (size > 1) {
        snprintf(err, errlen, "built without MPI: cannot gather rows from %u ranks", size);
        return -1;
    }
    return 0;
}

void rp_mpi_finalize(void) {}

#endif
