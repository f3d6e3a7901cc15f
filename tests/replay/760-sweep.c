/* 760-sweep: expansion of sweep value lists and ranges (arithmetic,
 * geometric, with units), rejection of bad ranges, sweep files in cross and
 * list mode (point count, dimension order, per-point configuration), and
 * one-line errors naming file, line and key for bad keys and values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "replay/rp_sweep.h"

static void expect_list(const char *spec, const char *const *want, size_t n)
{
    char **v = NULL, err[256] = "";
    size_t got = 0;
    int r = rp_sweep_expand(spec, &v, &got, err, sizeof err);
    if (r)
        fail_msg("'%s': %s", spec, err);
    assert_int_equal(got, n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(v[i], want[i]);
    rp_sweep_free_values(v, got);
}

static void expect_error(const char *spec, const char *needle)
{
    char **v = NULL, err[256] = "";
    size_t n = 0;
    assert_int_equal(rp_sweep_expand(spec, &v, &n, err, sizeof err), -1);
    if (!strstr(err, needle))
        fail_msg("'%s': error '%s' lacks '%s'", spec, err, needle);
    assert_null(strchr(err, '\n'));
}

static void test_lists(void **state)
{
    (void)state;
    expect_list("1MiB,2MiB , 4MiB", (const char *[]){"1MiB", "2MiB", "4MiB"}, 3);
    expect_list("single", (const char *[]){"single"}, 1);
    expect_list("2,4", (const char *[]){"2", "4"}, 2);
    expect_error("1,,2", "empty value");
    expect_error("1,", "empty value");
}

static void test_ranges(void **state)
{
    (void)state;
    expect_list("16GB/s..128GB/s*2", (const char *[]){"16GB/s", "32GB/s", "64GB/s", "128GB/s"}, 4);
    expect_list("50cycles..100cycles+25cycles", (const char *[]){"50cycles", "75cycles", "100cycles"}, 3);
    expect_list("50cycles..100cycles+25", (const char *[]){"50cycles", "75cycles", "100cycles"}, 3);
    expect_list("1..4", (const char *[]){"1", "2", "3", "4"}, 4);
    /* The end is included only when reached; not reached: stop below it. */
    expect_list("1..10*3", (const char *[]){"1", "3", "9"}, 3);
    expect_list("0..10+4", (const char *[]){"0", "4", "8"}, 3);
    /* Decimal steps and factors. */
    expect_list("0.5GHz..1.5GHz+0.25GHz", (const char *[]){"0.5GHz", "0.75GHz", "1GHz", "1.25GHz", "1.5GHz"}, 5);
    expect_list("16..54*1.5", (const char *[]){"16", "24", "36", "54"}, 4);
    /* Ranges mixed with plain values keep the written order. */
    expect_list("1, 8..32*2, 3", (const char *[]){"1", "8", "16", "32", "3"}, 5);
    expect_list("4..4", (const char *[]){"4"}, 1);
    expect_error("16GB/s..128MB/s*2", "same unit");
    expect_error("8..4", "start is above the end");
    expect_error("1..8*1", "factor > 1");
    expect_error("0..8*2", "start > 0");
    expect_error("1..8+0", "positive");
    expect_error("1cycles..8cycles+2ns", "step unit");
    expect_error("1..8*2x", "plain factor");
    expect_error("abc..def", "numbers");
    expect_error("1..100000", "more than");
}

static char tmpdir[64];

static int presets(const char *name, char *out, size_t n, void *ctx)
{
    (void)ctx;
    if (strchr(name, '/'))
        snprintf(out, n, "%s", name);
    else
        snprintf(out, n, "replay/configs/%s.ini", name);
    return access(out, R_OK) ? -1 : 0;
}

static const char *write_ini(const char *name, const char *text)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_cross(void **state)
{
    (void)state;
    const char *p = write_ini("cross.ini", "[sweep]\n"
                                           "base = u-mgpu, d-mgpu\n"
                                           "gpus = 1,2,4\n"
                                           "[params]\n"
                                           "l2.size = 1MiB,2MiB\n"
                                           "link.bandwidth = 16GB/s..64GB/s*2\n");
    char err[512] = "";
    rp_sweep *sw = rp_sweep_load(p, presets, NULL, err, sizeof err);
    if (!sw)
        fail_msg("%s", err);
    assert_int_equal(sw->n_points, 2 * 3 * 2 * 3);
    assert_int_equal(sw->n_dims, 4);
    assert_string_equal(sw->dims[0].col, "topo");
    assert_string_equal(sw->dims[1].col, "gpus");
    assert_string_equal(sw->dims[2].key, "l2.size");
    assert_int_equal(sw->dims[3].line, 6);
    /* Last dimension fastest. */
    assert_string_equal(rp_sweep_value(sw, 0, 3), "16GB/s");
    assert_string_equal(rp_sweep_value(sw, 1, 3), "32GB/s");
    assert_string_equal(rp_sweep_value(sw, 3, 2), "2MiB");
    assert_string_equal(rp_sweep_value(sw, 6, 1), "2");
    assert_string_equal(rp_sweep_value(sw, 17, 0), "u-mgpu");
    assert_string_equal(rp_sweep_value(sw, 18, 0), "d-mgpu");
    rp_config c;
    assert_int_equal(rp_sweep_point_config(sw, 35, &c, err, sizeof err), 0);
    assert_int_equal(c.topo_kind, RP_TOPO_DISCRETE);
    assert_int_equal(c.gpus, 4);
    assert_int_equal(c.l2_size, 2u << 20);
    assert_int_equal(c.link_bandwidth.v, 64000000000ull);
    assert_int_equal(rp_sweep_point_config(sw, 0, &c, err, sizeof err), 0);
    assert_int_equal(c.topo_kind, RP_TOPO_UNIFIED);
    assert_int_equal(c.gpus, 1);
    assert_int_equal(c.l2_size, 1u << 20);
    rp_sweep_free(sw);
}

static void test_list_mode(void **state)
{
    (void)state;
    const char *p = write_ini("list.ini", "[sweep]\n"
                                          "base = r9nano\n"
                                          "mode = list\n"
                                          "[params]\n"
                                          "gpu.cus_per_sa = 1,2,4\n"
                                          "l2.latency = 50cycles..100cycles+25cycles\n"
                                          "l1v.size = 16KiB\n");
    char err[512] = "";
    rp_sweep *sw = rp_sweep_load(p, presets, NULL, err, sizeof err);
    if (!sw)
        fail_msg("%s", err);
    assert_int_equal(sw->n_points, 3);
    rp_config c;
    assert_int_equal(rp_sweep_point_config(sw, 2, &c, err, sizeof err), 0);
    assert_int_equal(c.cus_per_sa, 4);
    assert_int_equal(c.l2_latency.v, 100);
    assert_int_equal(c.l2_latency.cycles, 1);
    assert_int_equal(c.l1v_size, 16384);
    rp_sweep_free(sw);

    p = write_ini("list-bad.ini", "[sweep]\nbase = r9nano\nmode = list\n[params]\n"
                                  "gpu.cus_per_sa = 1,2,4\nl2.size = 1MiB,2MiB\n");
    sw = rp_sweep_load(p, presets, NULL, err, sizeof err);
    assert_null(sw);
    assert_non_null(strstr(err, ":6: mode = list"));
}

static void expect_load_error(const char *text, const char *needle)
{
    char err[512] = "";
    const char *p = write_ini("bad.ini", text);
    rp_sweep *sw = rp_sweep_load(p, presets, NULL, err, sizeof err);
    if (sw)
        fail_msg("accepted: %s", text);
    if (!strstr(err, needle))
        fail_msg("error '%s' lacks '%s'", err, needle);
    assert_null(strchr(err, '\n'));
}

static void test_errors(void **state)
{
    (void)state;
    char want[160];
    snprintf(want, sizeof want, "%s/bad.ini:4: unknown parameter 'l2.sise' (did you mean 'l2.size'?)", tmpdir);
    expect_load_error("[sweep]\nbase = r9nano\n[params]\nl2.sise = 1MiB\n", want);
    snprintf(want, sizeof want, "%s/bad.ini:5: l2.assoc = 'x': expected an unsigned integer", tmpdir);
    expect_load_error("[sweep]\nbase = r9nano\n[params]\nl2.size = 1MiB\nl2.assoc = 4,x\n", want);
    expect_load_error("[sweep]\nbase = r9nano\n[params]\ngpu.cus_per_sa = 1..100\n", "out of range");
    expect_load_error("[sweep]\nbase = r9nano\n[params]\nlink.bandwidth = 16GB/s..1MB/s*2\n", ":4: link.bandwidth");
    expect_load_error("[sweep]\nbase = r9nano\nbogus = 1\n", ":3: unknown key 'bogus' in [sweep]");
    expect_load_error("[sweep]\nbase = nosuchpreset\n", ":2: base preset 'nosuchpreset' not found");
    expect_load_error("[params]\nl2.size = 1MiB\n", "no base preset");
    expect_load_error("[sweep]\nbase = r9nano\nmode = zip\n", ":3: mode = zip");
    expect_load_error("[sweep]\nbase = r9nano\n[params]\nl2.size = 1MiB\nl2.size = 2MiB\n", "given twice");
    expect_load_error("[sweep]\nbase = r9nano\n[other]\nx = 1\n", "[other]");
    /* Cross-parameter validation of every point, before anything runs. */
    expect_load_error("[sweep]\nbase = r9nano\n[params]\nl2.size = 2MiB,3000KiB\n", "point 1 (topo=r9nano l2.size=3000KiB)");
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/760-sweep-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    const char *names[] = {"cross.ini", "list.ini", "list-bad.ini", "bad.ini"};
    char p[128];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", tmpdir, names[i]);
        unlink(p);
    }
    rmdir(tmpdir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lists),     cmocka_unit_test(test_ranges),  cmocka_unit_test(test_cross),
        cmocka_unit_test(test_list_mode), cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
