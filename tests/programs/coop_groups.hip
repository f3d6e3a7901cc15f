// coop_groups.hip - cooperative groups: thread_block sync, tiled partitions
// (tiled_partition(block, 16) reductions with thread_rank/size/shfl_down), and
// a grid-wide sync (this_grid().sync()) in a kernel started with
// hipLaunchCooperativeKernel, sized from the occupancy query as the HIP
// samples do; a grid larger than can be resident must be refused.
#include "samples_check.h"
#include <hip/hip_cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void tiles(const int *in, int *tile_sums, int *block_sums)
{
    cg::thread_block b = cg::this_thread_block();
    __shared__ int s[256];
    int t = b.thread_rank();
    s[t] = in[blockIdx.x * 256 + t];
    b.sync();
    cg::thread_group tile = cg::tiled_partition(b, 16);
    int v = s[t];
    for (int off = tile.size() / 2; off > 0; off /= 2) { // tree in LDS per tile
        s[t] = v;
        tile.sync();
        if (tile.thread_rank() < (unsigned)off) v += s[t + off];
        tile.sync();
    }
    if (tile.thread_rank() == 0) tile_sums[blockIdx.x * 16 + t / 16] = v;
    b.sync();
    if (t == 0) {
        int sum = 0;
        for (int i = 0; i < 256; i++) sum += in[blockIdx.x * 256 + i];
        block_sums[blockIdx.x] = sum;
    }
}

// Phase 1 writes, grid sync, phase 2 reads other workgroups' results: wrong
// without the grid-wide barrier.
__global__ void grid_sum(int *data, int *partial, int *total, int rounds)
{
    cg::grid_group g = cg::this_grid();
    unsigned n = g.size();
    unsigned i = g.thread_rank();
    for (int r = 0; r < rounds; r++) {
        data[i] += r + 1;
        g.sync();
        if (threadIdx.x == 0) {
            int s = 0;
            for (unsigned k = 0; k < blockDim.x; k++) s += data[blockIdx.x * blockDim.x + k];
            partial[blockIdx.x] = s;
        }
        g.sync();
        if (i == 0) {
            int s = 0;
            for (unsigned b = 0; b < gridDim.x; b++) s += partial[b];
            total[r] = s;
        }
        g.sync();
    }
    (void)n;
}

int main()
{
    int coop = 0;
    CHECK(hipDeviceGetAttribute(&coop, hipDeviceAttributeCooperativeLaunch, 0));
    EXPECT(coop == 1, "cooperative launch attribute %d", coop);

    // tiled partitions
    const int nb = 8;
    int hin[nb * 256];
    for (int i = 0; i < nb * 256; i++) hin[i] = (i * 7) % 23 - 5;
    int *din, *dtile, *dblock;
    CHECK(hipMalloc((void **)&din, sizeof hin));
    CHECK(hipMalloc((void **)&dtile, nb * 16 * sizeof(int)));
    CHECK(hipMalloc((void **)&dblock, nb * sizeof(int)));
    CHECK(hipMemcpy(din, hin, sizeof hin, hipMemcpyHostToDevice));
    hipLaunchKernelGGL(tiles, dim3(nb), dim3(256), 0, 0, din, dtile, dblock);
    CHECK(hipGetLastError());
    int htile[nb * 16], hblock[nb];
    CHECK(hipMemcpy(htile, dtile, sizeof htile, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(hblock, dblock, sizeof hblock, hipMemcpyDeviceToHost));
    for (int b = 0; b < nb; b++) {
        int bs = 0;
        for (int t = 0; t < 16; t++) {
            int s = 0;
            for (int k = 0; k < 16; k++) s += hin[b * 256 + t * 16 + k];
            EXPECT(htile[b * 16 + t] == s, "tile %d of block %d: %d, expected %d", t, b, htile[b * 16 + t], s);
            bs += s;
        }
        EXPECT(hblock[b] == bs, "block %d: %d, expected %d", b, hblock[b], bs);
    }

    // grid sync
    int per_cu = 0, cus = 0, block = 128;
    CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_cu, (const void *)grid_sum, block, 0));
    CHECK(hipDeviceGetAttribute(&cus, hipDeviceAttributeMultiprocessorCount, 0));
    EXPECT(per_cu >= 1, "occupancy %d", per_cu);
    int grid = 2 * cus; // resident: at most per_cu * cus
    const int rounds = 3;
    int n = grid * block;
    int *dd, *dp, *dt;
    CHECK(hipMalloc((void **)&dd, n * sizeof(int)));
    CHECK(hipMalloc((void **)&dp, grid * sizeof(int)));
    CHECK(hipMalloc((void **)&dt, rounds * sizeof(int)));
    CHECK(hipMemset(dd, 0, n * sizeof(int)));
    int rr = rounds;
    void *args[] = {&dd, &dp, &dt, &rr};
    CHECK(hipLaunchCooperativeKernel((const void *)grid_sum, dim3(grid), dim3(block), args, 0, 0));
    CHECK(hipDeviceSynchronize());
    int ht[rounds];
    CHECK(hipMemcpy(ht, dt, sizeof ht, hipMemcpyDeviceToHost));
    int acc = 0;
    for (int r = 0; r < rounds; r++) {
        acc += r + 1;
        EXPECT(ht[r] == acc * n, "grid sum round %d: %d, expected %d", r, ht[r], acc * n);
    }

    // too large to be co-resident: refused, not hung
    hipError_t e = hipLaunchCooperativeKernel((const void *)grid_sum, dim3(per_cu * cus + 1), dim3(block),
                                              args, 0, 0);
    EXPECT(e == hipErrorCooperativeLaunchTooLarge, "oversized cooperative launch gave %s", hipGetErrorName(e));
    (void)hipGetLastError();

    CHECK(hipFree(din));
    CHECK(hipFree(dtile));
    CHECK(hipFree(dblock));
    CHECK(hipFree(dd));
    CHECK(hipFree(dp));
    CHECK(hipFree(dt));
    printf("coop_groups: PASS (grid sync over %d workgroups, %d per CU resident)\n", grid, per_cu);
    return 0;
}
