// rocprim_ops.hip - Debian's librocprim-dev (header-only rocPRIM 5.3, built
// with -std=c++17 for gfx803) as a real library workload with waits between
// workgroups: rocprim::inclusive_scan (single-pass, decoupled look-back: each
// workgroup polls its predecessors' status flags) and rocprim::radix_sort_keys
// (whose scans use look-back too). Results checked against the host.
//   rocprim_ops [n]   (default 1,000,000 elements)
#include "samples_check.h"
#include <rocprim/rocprim.hpp>
#include <algorithm>
#include <vector>

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)atol(argv[1]) : 1000000;
    std::vector<int> in(n), keys(n);
    for (size_t i = 0; i < n; i++) {
        in[i] = (int)(i % 7) - 3;
        keys[i] = (int)((i * 2654435761u) % 1000003u) - 500000;
    }
    int *d_in, *d_out, *d_kin, *d_kout;
    CHECK(hipMalloc(&d_in, n * 4));
    CHECK(hipMalloc(&d_out, n * 4));
    CHECK(hipMalloc(&d_kin, n * 4));
    CHECK(hipMalloc(&d_kout, n * 4));
    CHECK(hipMemcpy(d_in, in.data(), n * 4, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(d_kin, keys.data(), n * 4, hipMemcpyHostToDevice));

    size_t scan_bytes = 0, sort_bytes = 0;
    CHECK(rocprim::inclusive_scan(nullptr, scan_bytes, d_in, d_out, n, rocprim::plus<int>()));
    CHECK(rocprim::radix_sort_keys(nullptr, sort_bytes, d_kin, d_kout, n));
    void *tmp;
    CHECK(hipMalloc(&tmp, std::max(scan_bytes, sort_bytes)));
    CHECK(rocprim::inclusive_scan(tmp, scan_bytes, d_in, d_out, n, rocprim::plus<int>()));
    CHECK(rocprim::radix_sort_keys(tmp, sort_bytes, d_kin, d_kout, n));
    CHECK(hipDeviceSynchronize());

    std::vector<int> out(n), kout(n);
    CHECK(hipMemcpy(out.data(), d_out, n * 4, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(kout.data(), d_kout, n * 4, hipMemcpyDeviceToHost));
    long long s = 0;
    for (size_t i = 0; i < n; i++) {
        s += in[i];
        EXPECT(out[i] == (int)s, "scan[%zu] = %d, want %lld", i, out[i], s);
    }
    std::sort(keys.begin(), keys.end());
    for (size_t i = 0; i < n; i++)
        EXPECT(kout[i] == keys[i], "sorted[%zu] = %d, want %d", i, kout[i], keys[i]);
    printf("PASS rocprim_ops: inclusive_scan and radix_sort_keys of %zu elements\n", n);
    return 0;
}
