/*
 * 21x_hip_dl.h - shared by the 21x HIP runtime tests: our libamdhip64.so.5 is
 * dlopen'ed from $TEST_BUILD/lib (default build/lib) after the GCN3EMU_*
 * variables are set (two GPUs, two threads, quiet, no recording), as the
 * gcn3-emu launcher would; FN(hipX) looks an entry point up with its
 * prototype from the HIP header and fails the test when it is not exported.
 * Include after <cmocka.h> and <hip/hip_runtime_api.h>.
 */
#ifndef TESTS_EMU_21X_HIP_DL_H
#define TESTS_EMU_21X_HIP_DL_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static void *lib;

#define FN(name) ((__typeof__(&name))sym(#name))
static void *sym(const char *name)
{
    void *p = dlsym(lib, name);
    if (!p)
        fail_msg("libamdhip64.so.5 does not export %s", name);
    return p;
}

static int setup(void **state)
{
    (void)state;
    const char *b = getenv("TEST_BUILD");
    char path[512];
    snprintf(path, sizeof path, "%s/lib/libamdhip64.so.5", b && *b ? b : "build");
    setenv("GCN3EMU_GPUS", "2", 1);
    setenv("GCN3EMU_THREADS", "2", 1);
    setenv("GCN3EMU_QUIET", "1", 1);
    unsetenv("GCN3EMU_RECORD");
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "cannot load %s: %s\n", path, dlerror());
        return -1;
    }
    return 0;
}

#endif
