/*
 * fuzz_check.h - property checks shared by the fuzz targets.
 */
#ifndef FUZZ_CHECK_H
#define FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A failing call must leave a NUL-terminated, non-empty, one-line message in
 * err[0..cap); abort() (a finding) otherwise. */
static void check_msg(const char *err, size_t cap, const char *what)
{
    size_t n = strnlen(err, cap);
    if (n == 0 || n == cap || memchr(err, '\n', n)) {
        fprintf(stderr, "fuzz property failed: %s: error message empty, unterminated or multi-line: '%.*s'\n", what,
                (int)(n < cap ? n : cap - 1), err);
        abort();
    }
}

#endif
