// 31x-half.hip - compiled f16 arithmetic (v_*_f16, v_or_b32_sdwa) checked against host _Float16.
// Build: hipcc --offload-arch=gfx803 -O2 31x-half.hip -o half; run: gcn3-emu -- ./half (prints PASS).
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <stdio.h>
#include <math.h>
__global__ void k(const __half2 *a, const __half2 *b, __half2 *o, float *f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half2 x = a[i], y = b[i];
  __half2 r = __hfma2(x, y, __hadd2(x, y));
  r = __hmul2(r, __float2half2_rn(0.5f));
  __half2 d2 = __hsub2(x, y); o[i] = __halves2half2(__hgt(__low2half(r), __low2half(d2)) ? __low2half(r) : __low2half(d2), __hgt(__high2half(r), __high2half(d2)) ? __high2half(r) : __high2half(d2));
  f[i] = __half2float(__low2half(x)) * __half2float(__high2half(y)) + (float)(__hlt(__low2half(x), __high2half(y)));
}
int main() {
  const int n = 4096;
  static __half2 a[4096], b[4096], o[4096]; static float f[4096];
  __half2 *da, *db, *dout; float *df;
  hipMalloc(&da, n * 4); hipMalloc(&db, n * 4); hipMalloc(&dout, n * 4); hipMalloc(&df, n * 4);
  for (int i = 0; i < n; i++) {
    a[i] = __halves2half2(__float2half((i % 97) / 8.0f - 6), __float2half((i % 13) / 4.0f));
    b[i] = __halves2half2(__float2half((i % 31) / 16.0f - 1), __float2half((i % 7) - 3.0f));
  }
  hipMemcpy(da, a, n * 4, hipMemcpyHostToDevice); hipMemcpy(db, b, n * 4, hipMemcpyHostToDevice);
  hipLaunchKernelGGL(k, dim3(n / 256), dim3(256), 0, 0, da, db, dout, df, n);
  hipMemcpy(o, dout, n * 4, hipMemcpyDeviceToHost); hipMemcpy(f, df, n * 4, hipMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < n; i++) {
    for (int h = 0; h < 2; h++) {
      _Float16 x = (_Float16)(h ? __high2float(a[i]) : __low2float(a[i]));
      _Float16 y = (_Float16)(h ? __high2float(b[i]) : __low2float(b[i]));
      _Float16 s = x + y;
      _Float16 r = (_Float16)fmaf((float)x, (float)y, (float)s); /* f16 fma: a*b exact in float, one more rounding */
      r = r * (_Float16)0.5f;
      _Float16 d = x - y;
      _Float16 want = r > d ? r : d;
      float got = h ? __high2float(o[i]) : __low2float(o[i]);
      if (got != (float)want) { if (bad < 5) printf("bad %d.%d: %g want %g\n", i, h, got, (float)want); bad++; }
    }
    float wf = __low2float(a[i]) * __high2float(b[i]) + (__low2float(a[i]) < __high2float(b[i]) ? 1.0f : 0.0f);
    if (f[i] != wf) { if (bad < 5) printf("badf %d: %g want %g\n", i, f[i], wf); bad++; }
  }
  printf("half: %s (%d bad)\n", bad ? "FAIL" : "PASS", bad);
  return bad != 0;
}
