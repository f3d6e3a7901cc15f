// printf.hip - device printf through the hostcall buffer (gcn3-emu issue 4).
// Prints ints, floats, strings (%s from a device buffer and from literals),
// per-thread lines from a few threads, and checks printf's return value.
// The e2e script (tests/e2e/programs-hostcall.sh) compares stdout with the
// expected lines; the program itself checks what the device saw.
#include <hip/hip_runtime.h>
#include <stdio.h>

#define CHECK(x)                                                                    \
    do {                                                                            \
        hipError_t e_ = (x);                                                        \
        if (e_ != hipSuccess) {                                                     \
            printf("FAIL %s: %s\n", #x, hipGetErrorString(e_));                     \
            return 1;                                                               \
        }                                                                           \
    } while (0)

__global__ void hello(int *ret, const char *word)
{
    int n = printf("hello from the device: int %d unsigned %u hex 0x%x long %ld\n", -42, 4000000000u,
                   0xbeef, -1234567890123L);
    ret[0] = n;
    ret[1] = printf("float %.3f double %g sci %.2e char %c pct %%\n", 1.5f, 0.25, 12345.678, 'Z');
    ret[2] = printf("string '%s' literal '%s' width [%5d] [%-4s]\n", word, "lit", 7, "ab");
    ret[3] = printf("a long format string that needs more than one packet of fifty-six bytes to "
                    "reach the host: %d %d %d %d %d %d %d %d %d\n", 1, 2, 3, 4, 5, 6, 7, 8, 9);
}

__global__ void per_thread(int *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x % 16 == 3) {
        printf("thread %d block %d value %.1f\n", t, (int)blockIdx.x, t * 0.5f);
        out[t] = 1;
    }
}

int main()
{
    int *d_ret, *d_out;
    char *d_word;
    const char word[] = "device-buffer";
    CHECK(hipMalloc(&d_ret, 4 * sizeof(int)));
    CHECK(hipMalloc(&d_out, 256 * sizeof(int)));
    CHECK(hipMalloc(&d_word, sizeof word));
    CHECK(hipMemcpy(d_word, word, sizeof word, hipMemcpyHostToDevice));
    CHECK(hipMemset(d_out, 0, 256 * sizeof(int)));
    hipLaunchKernelGGL(hello, dim3(1), dim3(1), 0, 0, d_ret, d_word);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    fflush(stdout);
    hipLaunchKernelGGL(per_thread, dim3(2), dim3(128), 0, 0, d_out);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    fflush(stdout);
    int ret[4], out[256];
    CHECK(hipMemcpy(ret, d_ret, sizeof ret, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(out, d_out, sizeof out, hipMemcpyDeviceToHost));
    /* printf returns the number of characters printed */
    int want[4] = {
        snprintf(NULL, 0, "hello from the device: int %d unsigned %u hex 0x%x long %ld\n", -42,
                 4000000000u, 0xbeef, -1234567890123L),
        snprintf(NULL, 0, "float %.3f double %g sci %.2e char %c pct %%\n", 1.5f, 0.25, 12345.678, 'Z'),
        snprintf(NULL, 0, "string '%s' literal '%s' width [%5d] [%-4s]\n", word, "lit", 7, "ab"),
        snprintf(NULL, 0, "a long format string that needs more than one packet of fifty-six bytes to "
                          "reach the host: %d %d %d %d %d %d %d %d %d\n", 1, 2, 3, 4, 5, 6, 7, 8, 9)};
    int bad = 0;
    for (int i = 0; i < 4; i++)
        if (ret[i] != want[i]) {
            printf("FAIL printf %d returned %d, expected %d\n", i, ret[i], want[i]);
            bad = 1;
        }
    for (int t = 0; t < 256; t++)
        if (out[t] != (t % 16 == 3)) {
            printf("FAIL out[%d] = %d\n", t, out[t]);
            bad = 1;
            break;
        }
    CHECK(hipFree(d_ret));
    CHECK(hipFree(d_out));
    CHECK(hipFree(d_word));
    printf(bad ? "FAIL\n" : "PASS\n");
    return bad;
}
