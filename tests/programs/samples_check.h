// samples_check.h - error check shared by the HIP sample programs (tests/programs).
#pragma once
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                      \
    do {                                                                              \
        hipError_t e_ = (x);                                                          \
        if (e_ != hipSuccess) {                                                       \
            printf("FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #x, hipGetErrorString(e_)); \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

#define EXPECT(c, ...)                                                                \
    do {                                                                              \
        if (!(c)) {                                                                   \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #c);                       \
            printf(__VA_ARGS__);                                                      \
            printf("\n");                                                             \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)
