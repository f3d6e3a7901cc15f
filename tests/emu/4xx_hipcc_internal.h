/*
 * 4xx_hipcc_internal.h - helper for the exec tests (tests/emu/4xx-*): build a
 * real gfx803 code object from a HIP source string with Debian's hipcc
 * ($HIPCC, default "hipcc"; about a second per build) and parse it.
 *
 * Real inputs, not hand-made ELF: the bytes are what hipcc emits for the
 * programs the emulator runs (FACTS.md).
 */
#ifndef TESTS_EMU_4XX_HIPCC_INTERNAL_H
#define TESTS_EMU_4XX_HIPCC_INTERNAL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gcn/gcn_loader.h"

/* Compile `src` at optimisation `opt` ("-O2") into a bare ELF code object
 * and parse it. NULL with a message on stderr when anything fails. */
static inline gcn_code_object *t4_build_co(const char *src, const char *opt)
{
    char dir[] = "/tmp/gcn-exec-test-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return NULL;
    }
    char path[256], out[256], cmd[1024];
    snprintf(path, sizeof(path), "%s/k.hip", dir);
    snprintf(out, sizeof(out), "%s/k.co", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return NULL;
    }
    fputs(src, f);
    fclose(f);
    const char *hipcc = getenv("HIPCC");
    snprintf(cmd, sizeof(cmd),
             "%s --offload-arch=gfx803 %s --cuda-device-only --no-gpu-bundle-output -c %s -o %s",
             hipcc && *hipcc ? hipcc : "hipcc", opt, path, out);
    gcn_code_object *co = NULL;
    if (system(cmd) != 0) {
        fprintf(stderr, "t4_build_co: '%s' failed\n", cmd);
    } else if ((f = fopen(out, "rb")) != NULL) {
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        unsigned char *buf = malloc((size_t)n);
        if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
            char err[512];
            if (gcn_co_parse(buf, (size_t)n, &co, err, sizeof(err)) != GCN_LD_OK)
                fprintf(stderr, "t4_build_co: %s\n", err), co = NULL;
        }
        free(buf);
        fclose(f);
    }
    unlink(path);
    unlink(out);
    rmdir(dir);
    return co;
}

#endif
