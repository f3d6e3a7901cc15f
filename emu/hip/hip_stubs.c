/*
 * hip_stubs.c - the HIP_STUB entries of hip_api.def: exported functions that
 * are not implemented. Each prints "gcn3-emu: NAME is not implemented" on
 * stderr and returns hipErrorNotSupported (STYLE.md #8: never a fake
 * success).
 *
 * This file deliberately does not include the HIP header: the stubs are
 * defined as `int NAME(void)`, which conflicts with nothing and is
 * ABI-compatible with every hipError_t-returning prototype on x86-64 SysV
 * (arguments are ignored, hipError_t is an int-sized enum returned in eax).
 * gen-hip-api.py only generates stubs for functions returning hipError_t.
 */
#define HIP_EXPORT __attribute__((visibility("default")))

int hip_not_implemented(const char *name);

#define HIP_IMPL(name, node)
#define HIP_STUB(name, node) \
    HIP_EXPORT int name(void) { return hip_not_implemented(#name); }
#include "hip_api.def"
