/* 710-config: unit parsing, unknown keys with a suggestion, bounds, INI
 * sections, --set overrides, and that every preset in replay/configs loads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "replay/rp_config.h"

static void test_units(void **state)
{
    (void)state;
    uint64_t v;
    assert_int_equal(rp_parse_size("16KiB", &v), 0); assert_int_equal(v, 16384);
    assert_int_equal(rp_parse_size("16KB", &v), 0); assert_int_equal(v, 16384);
    assert_int_equal(rp_parse_size("2MiB", &v), 0); assert_int_equal(v, 2u << 20);
    assert_int_equal(rp_parse_size("64B", &v), 0); assert_int_equal(v, 64);
    assert_int_equal(rp_parse_size("64", &v), 0); assert_int_equal(v, 64);
    assert_int_equal(rp_parse_size("12 parsecs", &v), -1);
    assert_int_equal(rp_parse_freq("1GHz", &v), 0); assert_int_equal(v, 1000000000);
    assert_int_equal(rp_parse_freq("1.5GHz", &v), 0); assert_int_equal(v, 1500000000);
    assert_int_equal(rp_parse_freq("1000", &v), -1); /* unit required */
    rp_lat l;
    assert_int_equal(rp_parse_lat("100ns", &l), 0); assert_int_equal(l.v, 100000); assert_int_equal(l.cycles, 0);
    assert_int_equal(rp_parse_lat("300cycles", &l), 0); assert_int_equal(l.v, 300); assert_int_equal(l.cycles, 1);
    assert_int_equal(rp_parse_lat("1us", &l), 0); assert_int_equal(l.v, 1000000);
    assert_int_equal(rp_parse_lat("2.5cycles", &l), -1);
    rp_bw b;
    assert_int_equal(rp_parse_bw("16GB/s", &b), 0); assert_int_equal(b.v, 16000000000ull); assert_int_equal(b.per_cycle, 0);
    assert_int_equal(rp_parse_bw("64B/cycle", &b), 0); assert_int_equal(b.v, 64); assert_int_equal(b.per_cycle, 1);
    rp_clock c = rp_clock_make(1000000000);
    assert_int_equal(rp_bw_Bps(b, c), 64000000000ull);
    assert_int_equal(rp_lat_ps(l, c), 1000000);
}

static void test_unknown_key(void **state)
{
    (void)state;
    rp_config c;
    char err[256];
    rp_config_defaults(&c);
    assert_int_equal(rp_config_set(&c, "l2.latncy=3cycles", err, sizeof err), -1);
    assert_non_null(strstr(err, "unknown parameter 'l2.latncy'"));
    assert_non_null(strstr(err, "did you mean 'l2.latency'"));
    assert_int_equal(rp_config_set(&c, "zzzzzz=1", err, sizeof err), -1);
    assert_null(strstr(err, "did you mean"));
}

static void test_set_and_bounds(void **state)
{
    (void)state;
    rp_config c;
    char err[256];
    rp_config_defaults(&c);
    assert_int_equal(c.l2_banks, 16);
    assert_int_equal(c.gpu_freq, 1000000000);
    assert_int_equal(rp_config_set(&c, "l2.banks = 32", err, sizeof err), 0);
    assert_int_equal(c.l2_banks, 32);
    assert_int_equal(rp_config_set(&c, "topo.gpus=0", err, sizeof err), -1);
    assert_non_null(strstr(err, "out of range"));
    assert_int_equal(rp_config_set(&c, "l1v.size=lots", err, sizeof err), -1);
    assert_non_null(strstr(err, "expected a size"));
    assert_int_equal(rp_config_set(&c, "dram.latency=fast", err, sizeof err), -1);
    assert_int_equal(rp_config_set(&c, "topo.kind=discrete", err, sizeof err), 0);
    assert_int_equal(c.topo_kind, RP_TOPO_DISCRETE);
    assert_int_equal(rp_config_set(&c, "l1v.size=1000", err, sizeof err), 0);
    assert_int_equal(rp_config_validate(&c, err, sizeof err), -1); /* not line x assoc multiple */
}

static void test_ini_file(void **state)
{
    (void)state;
    char path[] = "/tmp/rp710-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "; test\n[l2]\nlatency = 80cycles ; comment\n[dram]\nbandwidth = 32GB/s\ncu.simds = 4\n"
               "[l1v]\nsise = 16KiB\n");
    fclose(f);
    rp_config c;
    char err[256];
    rp_config_defaults(&c);
    assert_int_equal(rp_config_load_file(&c, path, err, sizeof err), -1);
    assert_non_null(strstr(err, "did you mean 'l1v.size'"));
    assert_non_null(strstr(err, ":8:")); /* line of the bad key */
    assert_int_equal(c.l2_latency.v, 80);
    assert_int_equal(c.dram_bandwidth.v, 32000000000ull);
    unlink(path);
}

static void test_presets(void **state)
{
    (void)state;
    const char *names[] = {"r9nano", "m-sgpu", "u-mgpu", "d-mgpu"};
    for (int i = 0; i < 4; i++) {
        char p[256], err[256];
        snprintf(p, sizeof p, "replay/configs/%s.ini", names[i]);
        if (access(p, R_OK)) /* run from the repository root */
            skip();
        rp_config c;
        rp_config_defaults(&c);
        if (rp_config_load_file(&c, p, err, sizeof err))
            fail_msg("%s", err);
        assert_int_equal(rp_config_validate(&c, err, sizeof err), 0);
        assert_string_equal(c.topo_name, names[i]);
        /* every preset is an R9 Nano per GPU (topo.base = r9nano) */
        assert_int_equal(c.shader_arrays * c.cus_per_sa, 64);
        assert_int_equal(c.l1v_bypass, 1);
        if (i == 1) /* m-sgpu: one GPU of 4 R9 Nanos' resources (scaled in rp_sim_init) */
            assert_int_equal(c.topo_kind, RP_TOPO_SINGLE);
        if (i >= 1)
            assert_int_equal(c.gpus, 4);
    }
}

static void test_base_errors(void **state)
{
    (void)state;
    char dir[] = "/tmp/rp710-XXXXXX", p[320], err[512];
    assert_non_null(mkdtemp(dir));
    snprintf(p, sizeof p, "%s/a.ini", dir);
    FILE *f = fopen(p, "w");
    fprintf(f, "[topo]\nbase = b\n");
    fclose(f);
    char q[320];
    snprintf(q, sizeof q, "%s/b.ini", dir);
    f = fopen(q, "w");
    fprintf(f, "[topo]\nbase = a\n");
    fclose(f);
    rp_config c;
    rp_config_defaults(&c);
    assert_int_equal(rp_config_load_file(&c, p, err, sizeof err), -1); /* a -> b -> a ... */
    assert_non_null(strstr(err, "nested"));
    f = fopen(q, "w");
    fprintf(f, "[l2]\nlatency = 33cycles\n[topo]\nbase = a\n");
    fclose(f);
    assert_int_equal(rp_config_load_file(&c, q, err, sizeof err), -1);
    assert_non_null(strstr(err, "first entry"));
    f = fopen(q, "w");
    fprintf(f, "[l2]\nlatency = 33cycles\n");
    fclose(f);
    f = fopen(p, "w");
    fprintf(f, "[topo]\nbase = b\nname = a\n[l2]\nbanks = 8\n");
    fclose(f);
    rp_config_defaults(&c);
    assert_int_equal(rp_config_load_file(&c, p, err, sizeof err), 0);
    assert_int_equal(c.l2_latency.v, 33);
    assert_int_equal(c.l2_banks, 8);
    assert_string_equal(c.topo_name, "a");
    unlink(p);
    unlink(q);
    rmdir(dir);
}

/* One source of truth (issue 20): the built-in defaults are the r9nano
 * preset, value for value, so a machine built without a file is the one
 * r9nano.ini describes (mgpu-replay loads the preset anyway). */
static const char *dkeys[1024];
static char dvals[1024][128];
static int dn, di, ddiff;
static void collect(void *arg, const char *k, const char *v)
{
    (void)arg;
    if (dn < 1024) {
        dkeys[dn] = k;
        snprintf(dvals[dn++], sizeof dvals[0], "%s", v);
    }
}
static void compare(void *arg, const char *k, const char *v)
{
    (void)arg;
    if (di < dn && strcmp(dvals[di], v)) {
        print_message("%s: default %s, r9nano.ini %s\n", k, dvals[di], v);
        ddiff++;
    }
    di++;
}
static void test_defaults_are_r9nano(void **state)
{
    (void)state;
    static rp_config a, b;
    char err[256];
    rp_config_defaults(&a);
    rp_config_defaults(&b);
    assert_int_equal(rp_config_load_file(&b, "replay/configs/r9nano.ini", err, sizeof err), 0);
    dn = di = ddiff = 0;
    rp_config_foreach(&a, collect, NULL);
    rp_config_foreach(&b, compare, NULL);
    assert_true(dn > 50);
    assert_int_equal(di, dn);
    assert_int_equal(ddiff, 0);
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_units), cmocka_unit_test(test_unknown_key),
        cmocka_unit_test(test_set_and_bounds), cmocka_unit_test(test_ini_file),
        cmocka_unit_test(test_presets), cmocka_unit_test(test_base_errors),
        cmocka_unit_test(test_defaults_are_r9nano),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
