// 31x-atomopt.hip - atomicAdd compiled with the LLVM atomic optimizer: DPP row_shr/row_bcast scan + wave_shr:1.
// Build: hipcc --offload-arch=gfx803 -O2 -mllvm --amdgpu-atomic-optimizations=true 31x-atomopt.hip -o atom; run: gcn3-emu -- ./atom.
#include <hip/hip_runtime.h>
#include <stdio.h>
__global__ void k(const unsigned *x, unsigned *sum, unsigned *pre, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && (x[i] & 3)) pre[i] = atomicAdd(sum, x[i]);
}
int main() {
  const int n = 100000;
  static unsigned x[n], pre[n]; unsigned sum = 0, *dx, *ds, *dp;
  unsigned long long want = 0;
  for (int i = 0; i < n; i++) { x[i] = (i * 2654435761u) >> 20; if (x[i] & 3) want += x[i]; }
  hipMalloc(&dx, sizeof x); hipMalloc(&ds, 4); hipMalloc(&dp, sizeof pre);
  hipMemcpy(dx, x, sizeof x, hipMemcpyHostToDevice); hipMemcpy(ds, &sum, 4, hipMemcpyHostToDevice);
  hipMemset(dp, 0xff, sizeof pre);
  hipLaunchKernelGGL(k, dim3((n + 255) / 256), dim3(256), 0, 0, dx, ds, dp, n);
  hipMemcpy(&sum, ds, 4, hipMemcpyDeviceToHost); hipMemcpy(pre, dp, sizeof pre, hipMemcpyDeviceToHost);
  /* the returned old values must be distinct and each < total */
  int bad = sum != (unsigned)want;
  for (int i = 0; i < n; i++) if ((x[i] & 3) && pre[i] + x[i] > sum) bad++;
  printf("atom: sum %u want %u: %s\n", sum, (unsigned)want, bad ? "FAIL" : "PASS");
  return bad != 0;
}
