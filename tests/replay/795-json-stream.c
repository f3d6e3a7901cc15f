/* rp_json_dump_file_stream (replay/stats.c): a document whose array member
 * is written element by element is byte for byte the one jansson writes
 * with the array filled (rp_json_dump_file), for indents 1, 2 and 4, no
 * elements, one, many; elements with nested objects and arrays, strings
 * holding newlines, quotes and the member's own text; the member first,
 * in the middle and last. A member that is not there, or an element that
 * cannot be made, fails (-1). mgpu-replay writes its stats JSON's
 * "kernels" this way. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "replay/rp_stats.h"

static json_t *element(size_t i, void *arg)
{
    size_t fail_at = arg ? *(size_t *)arg : SIZE_MAX;
    if (i == fail_at)
        return NULL;
    json_t *o = json_object(), *a = json_array(), *in = json_object();
    json_object_set_new(o, "id", json_integer((json_int_t)i));
    json_object_set_new(o, "name", json_string(i % 2 ? "line\nbreak \"q\" \"kernels\": []" : "plain"));
    json_object_set_new(o, "rate", json_real(1.0 / (double)(i + 3)));
    for (size_t k = 0; k < i % 4; k++)
        json_array_append_new(a, json_integer((json_int_t)(k * 7)));
    json_object_set_new(o, "list", a);
    json_object_set_new(in, "deep", i % 3 ? json_null() : json_true());
    json_object_set_new(in, "empty", json_object());
    json_object_set_new(o, "nested", in);
    return o;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)n + 1);
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    if (p)
        p[n] = 0;
    fclose(f);
    return p;
}

/* root {a, <key at position pos of 3>, b, c}; filled: the array holds n elements */
static json_t *root(size_t pos, size_t n, int filled)
{
    json_t *r = json_object(), *arr = json_array();
    for (size_t i = 0; filled && i < n; i++)
        json_array_append_new(arr, element(i, NULL));
    const char *names[3] = {"a", "b", "c"};
    for (size_t k = 0, j = 0; k < 4; k++) {
        if (k == pos) {
            json_object_set_new(r, "kernels", arr);
            continue;
        }
        json_t *v = j == 1 ? json_string("\"kernels\": []") : json_integer((json_int_t)j);
        json_object_set_new(r, names[j++], v);
    }
    return r;
}

static void test_same_bytes(void **state)
{
    (void)state;
    char a[64], b[64];
    snprintf(a, sizeof a, "/tmp/rp-json-stream-%ld.a", (long)getpid());
    snprintf(b, sizeof b, "/tmp/rp-json-stream-%ld.b", (long)getpid());
    static const size_t ns[] = {0, 1, 2, 7};
    static const int inds[] = {1, 2, 4};
    int checked = 0;
    for (size_t ii = 0; ii < 3; ii++)
        for (size_t pos = 0; pos < 4; pos++)
            for (size_t ni = 0; ni < 4; ni++) {
                size_t flags = JSON_INDENT(inds[ii]) | JSON_PRESERVE_ORDER;
                json_t *full = root(pos, ns[ni], 1), *empty = root(pos, ns[ni], 0);
                assert_int_equal(rp_json_dump_file(full, a, flags), 0);
                assert_int_equal(rp_json_dump_file_stream(empty, b, flags, "kernels", ns[ni], element, NULL), 0);
                char *x = slurp(a), *y = slurp(b);
                assert_non_null(x);
                assert_non_null(y);
                if (strcmp(x, y))
                    fail_msg("indent %d, member at %zu, %zu elements:\n%s\n--- streamed:\n%s", inds[ii], pos, ns[ni], x,
                             y);
                checked++;
                free(x);
                free(y);
                json_decref(full);
                json_decref(empty);
            }
    unlink(a);
    unlink(b);
    assert_int_equal(checked, 48);
}

static void test_failures(void **state)
{
    (void)state;
    char b[64];
    snprintf(b, sizeof b, "/tmp/rp-json-stream-%ld.f", (long)getpid());
    size_t flags = JSON_INDENT(1) | JSON_PRESERVE_ORDER, at = 2;
    json_t *r = root(1, 4, 0);
    assert_int_equal(rp_json_dump_file_stream(r, b, flags, "kernels", 4, element, &at), -1); /* element 2 fails */
    assert_int_equal(rp_json_dump_file_stream(r, b, flags, "streams", 4, element, NULL), -1); /* no such member */
    assert_int_equal(rp_json_dump_file_stream(r, b, JSON_COMPACT, "kernels", 4, element, NULL), -1); /* no indent */
    assert_int_equal(rp_json_dump_file_stream(r, "/nonexistent-dir/x.json", flags, "kernels", 4, element, NULL), -1);
    json_decref(r);
    unlink(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_bytes),
        cmocka_unit_test(test_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
