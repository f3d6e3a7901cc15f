/*
 * loader_internal.h - helpers shared by the loader's translation units.
 */
#ifndef GCN_LOADER_INTERNAL_H
#define GCN_LOADER_INTERNAL_H

#include "gcn_loader.h"

/* Write a one-line message (printf format) into err[errlen] when err is
 * non-NULL, and return st: `return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen, ...)`. */
gcn_ld_status gcn_ld_fail(gcn_ld_status st, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
