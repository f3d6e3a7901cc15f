/*
 * gcn_md_yaml.c - code object v2 metadata: the YAML document in the
 * NT_AMD_AMDGPU_HSA_METADATA note (owner "AMD", type 10), parsed with libyaml.
 *
 * Source: LLVM AMDGPUUsage "Code Object V2 Metadata" (keys Version, Kernels,
 * Name, SymbolName, Args, Size, Align, ValueKind, CodeProps,
 * KernargSegmentSize, GroupSegmentFixedSize, PrivateSegmentFixedSize,
 * KernargSegmentAlign, WavefrontSize, NumSGPRs, NumVGPRs,
 * MaxFlatWorkGroupSize). v2 arguments carry no offsets: each argument starts
 * at the previous end rounded up to its Align, the layout the v2 ABI defines.
 *
 * Invariants: the input is untrusted; scalars are range-checked; the tree is
 * freed on every path.
 */
#include "gcn_loader.h"
#include "loader_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* Default when CodeProps has no MaxFlatWorkGroupSize: LLVM's default flat
 * work-group size range for kernels without attributes is 1..256
 * (AMDGPUUsage "amdgpu-flat-work-group-size"). */
#define V2_DEFAULT_MAX_FLAT_WG 256

typedef struct ydoc {
    yaml_document_t *d;
} ydoc;

static yaml_node_t *y_get(ydoc y, yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(y.d, p->key);
        if (k && k->type == YAML_SCALAR_NODE && k->data.scalar.length == strlen(key) &&
            memcmp(k->data.scalar.value, key, k->data.scalar.length) == 0)
            return yaml_document_get_node(y.d, p->value);
    }
    return NULL;
}

/* 0 ok, -1 missing, -2 not an unsigned 32-bit number. */
static int y_u32(ydoc y, yaml_node_t *map, const char *key, uint32_t *out)
{
    yaml_node_t *v = y_get(y, map, key);
    if (!v)
        return -1;
    if (v->type != YAML_SCALAR_NODE || !v->data.scalar.length || v->data.scalar.length > 20)
        return -2;
    char buf[24];
    memcpy(buf, v->data.scalar.value, v->data.scalar.length);
    buf[v->data.scalar.length] = 0;
    if (!isdigit((unsigned char)buf[0]))
        return -2;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(buf, &end, 0);
    if (errno || *end || n > UINT32_MAX)
        return -2;
    *out = (uint32_t)n;
    return 0;
}

/* 0 ok, -1 missing, -2 not a scalar or embedded NUL, -3 too long. */
static int y_str(ydoc y, yaml_node_t *map, const char *key, char *out, size_t cap)
{
    yaml_node_t *v = y_get(y, map, key);
    if (!v)
        return -1;
    if (v->type != YAML_SCALAR_NODE)
        return -2;
    size_t n = v->data.scalar.length;
    if (n >= cap)
        return -3;
    memcpy(out, v->data.scalar.value, n);
    out[n] = 0;
    return strlen(out) == n ? 0 : -2;
}

static const char *y_why(int rc)
{
    return rc == -1 ? "missing" : rc == -2 ? "has the wrong type or range" : "is too long";
}

/* v2 ValueKind (CamelCase) -> v3 .value_kind (snake_case). 0 ok, -1 too long
 * or not an identifier. */
static int value_kind_v3(const char *v2, char *out, size_t cap)
{
    if (!strcmp(v2, "HiddenMultiGridSyncArg")) { /* v3 spells "multigrid" as one word */
        snprintf(out, cap, "hidden_multigrid_sync_arg");
        return 0;
    }
    size_t o = 0;
    for (const char *p = v2; *p; p++) {
        if (!isalnum((unsigned char)*p))
            return -1;
        if (isupper((unsigned char)*p) && p != v2) {
            if (o + 1 >= cap)
                return -1;
            out[o++] = '_';
        }
        if (o + 1 >= cap)
            return -1;
        out[o++] = (char)tolower((unsigned char)*p);
    }
    out[o] = 0;
    return o ? 0 : -1;
}

static gcn_ld_status parse_args(ydoc y, yaml_node_t *args, gcn_kernel *k, char *err, size_t errlen)
{
    if (!args)
        return GCN_LD_OK;
    if (args->type != YAML_SEQUENCE_NODE)
        return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                    "code object v2 metadata: kernel %s: Args is not a sequence", k->name);
    size_t n = (size_t)(args->data.sequence.items.top - args->data.sequence.items.start);
    if (!n)
        return GCN_LD_OK;
    if (n > 4096)
        return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                    "code object v2 metadata: kernel %s: %zu arguments is implausible", k->name, n);
    k->args = calloc(n, sizeof *k->args);
    if (!k->args)
        return gcn_ld_fail(GCN_LD_ENOMEM, err, errlen, "code object v2 metadata: out of memory");
    k->n_args = (uint32_t)n;
    uint64_t off = 0;
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *a = yaml_document_get_node(y.d, args->data.sequence.items.start[i]);
        gcn_kernel_arg *ar = &k->args[i];
        if (!a || a->type != YAML_MAPPING_NODE)
            return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                        "code object v2 metadata: kernel %s arg %zu is not a mapping", k->name, i);
        uint32_t size = 0, align = 0;
        int rc;
        if ((rc = y_u32(y, a, "Size", &size)))
            return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                        "code object v2 metadata: kernel %s arg %zu: Size %s", k->name, i, y_why(rc));
        if ((rc = y_u32(y, a, "Align", &align)) == -2 ||
            (rc == 0 && (align == 0 || (align & (align - 1)) || align > 256)))
            return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                        "code object v2 metadata: kernel %s arg %zu: Align is not a power of two "
                        "up to 256",
                        k->name, i);
        if (rc == -1)
            align = 1; /* older producers omit Align for packed hidden args */
        char kind[64];
        if ((rc = y_str(y, a, "ValueKind", kind, sizeof kind)))
            return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                        "code object v2 metadata: kernel %s arg %zu: ValueKind %s", k->name, i,
                        y_why(rc));
        if (value_kind_v3(kind, ar->value_kind, sizeof ar->value_kind))
            return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                        "code object v2 metadata: kernel %s arg %zu: ValueKind \"%s\" is not a "
                        "known identifier",
                        k->name, i, kind);
        char nm[sizeof ar->name];
        if (y_str(y, a, "Name", nm, sizeof nm) == 0)
            memcpy(ar->name, nm, sizeof nm);
        off = (off + align - 1) & ~(uint64_t)(align - 1);
        if (off + size > k->kernarg_segment_size)
            return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                        "code object v2 metadata: kernel %s arg %zu [%llu, +%u) extends past "
                        "KernargSegmentSize %u",
                        k->name, i, (unsigned long long)off, size, k->kernarg_segment_size);
        ar->offset = (uint32_t)off;
        ar->size = size;
        off += size;
    }
    return GCN_LD_OK;
}

static gcn_ld_status parse_kernel(ydoc y, yaml_node_t *km, gcn_kernel *k, size_t ki, char *err,
                                  size_t errlen)
{
    int rc;
    if (!km || km->type != YAML_MAPPING_NODE)
        return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                    "code object v2 metadata: Kernels[%zu] is not a mapping", ki);
    if ((rc = y_str(y, km, "Name", k->name, sizeof k->name)))
        return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                    "code object v2 metadata: Kernels[%zu] Name %s", ki, y_why(rc));
    /* v2 kernels are found by their name: the symbol (STT_AMDGPU_HSA_KERNEL)
     * labels the amd_kernel_code_t. SymbolName ("name@kd") is not an ELF
     * symbol. */
    snprintf(k->symbol, sizeof k->symbol, "%s", k->name);
    yaml_node_t *cp = y_get(y, km, "CodeProps");
    if (!cp || cp->type != YAML_MAPPING_NODE)
        return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                    "code object v2 metadata: kernel %s: CodeProps missing or not a mapping",
                    k->name);
    static const struct {
        const char *key;
        size_t off;
        int required;
    } props[] = {
        {"KernargSegmentSize", offsetof(gcn_kernel, kernarg_segment_size), 1},
        {"KernargSegmentAlign", offsetof(gcn_kernel, kernarg_segment_align), 0},
        {"GroupSegmentFixedSize", offsetof(gcn_kernel, group_segment_fixed_size), 0},
        {"PrivateSegmentFixedSize", offsetof(gcn_kernel, private_segment_fixed_size), 0},
        {"WavefrontSize", offsetof(gcn_kernel, wavefront_size), 0},
        {"NumSGPRs", offsetof(gcn_kernel, sgpr_count), 0},
        {"NumVGPRs", offsetof(gcn_kernel, vgpr_count), 0},
        {"MaxFlatWorkGroupSize", offsetof(gcn_kernel, max_flat_workgroup_size), 0},
    };
    k->wavefront_size = 64;
    k->kernarg_segment_align = 8;
    k->max_flat_workgroup_size = V2_DEFAULT_MAX_FLAT_WG;
    for (size_t j = 0; j < sizeof props / sizeof props[0]; j++) {
        uint32_t v;
        rc = y_u32(y, cp, props[j].key, &v);
        if (rc == -1 && !props[j].required)
            continue;
        if (rc)
            return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                        "code object v2 metadata: kernel %s: CodeProps.%s %s", k->name,
                        props[j].key, y_why(rc));
        memcpy((char *)k + props[j].off, &v, sizeof v);
    }
    if (k->wavefront_size != 64)
        return gcn_ld_fail(GCN_LD_UNSUPPORTED, err, errlen,
                    "code object v2 metadata: kernel %s: WavefrontSize %u, GCN3 runs wave64 only",
                    k->name, k->wavefront_size);
    if (!k->max_flat_workgroup_size || k->max_flat_workgroup_size > 1024)
        return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                    "code object v2 metadata: kernel %s: MaxFlatWorkGroupSize %u out of [1, 1024]",
                    k->name, k->max_flat_workgroup_size);
    return parse_args(y, y_get(y, km, "Args"), k, err, errlen);
}

gcn_ld_status gcn_md_parse_yaml(gcn_code_object *co, const char *text, size_t len, char *err,
                                size_t errlen)
{
    if (!co || !text)
        return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                    "code object v2 metadata: NULL argument");
    if (co->kernels || co->n_kernels)
        return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                    "code object v2 metadata: kernels already parsed");
    len = strnlen(text, len); /* the note's text is NUL-padded */
    yaml_parser_t p;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&p))
        return gcn_ld_fail(GCN_LD_ENOMEM, err, errlen, "code object v2 metadata: out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    if (!yaml_parser_load(&p, &doc)) {
        gcn_ld_status st = gcn_ld_fail(
            GCN_LD_BAD_METADATA, err, errlen,
            "code object v2 metadata: NT_AMD_AMDGPU_HSA_METADATA is not valid YAML: %s at line %zu",
            p.problem ? p.problem : "parse error", (size_t)p.problem_mark.line + 1);
        yaml_parser_delete(&p);
        return st;
    }
    yaml_parser_delete(&p);
    ydoc y = {&doc};
    gcn_ld_status st = GCN_LD_OK;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    yaml_node_t *ver = y_get(y, root, "Version");
    yaml_node_t *ks = y_get(y, root, "Kernels");
    if (!root || root->type != YAML_MAPPING_NODE) {
        st = gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                  "code object v2 metadata: the document is not a mapping");
        goto out;
    }
    if (ver) {
        yaml_node_t *maj = NULL;
        if (ver->type == YAML_SEQUENCE_NODE && ver->data.sequence.items.top > ver->data.sequence.items.start)
            maj = yaml_document_get_node(&doc, ver->data.sequence.items.start[0]);
        if (!maj || maj->type != YAML_SCALAR_NODE || maj->data.scalar.length != 1 ||
            maj->data.scalar.value[0] != '1') {
            st = gcn_ld_fail(GCN_LD_UNSUPPORTED, err, errlen,
                      "code object v2 metadata: Version is not [ 1, x ]");
            goto out;
        }
    }
    if (!ks) /* a code object without kernels */
        goto out;
    if (ks->type != YAML_SEQUENCE_NODE) {
        st = gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                  "code object v2 metadata: Kernels is not a sequence");
        goto out;
    }
    size_t n = (size_t)(ks->data.sequence.items.top - ks->data.sequence.items.start);
    if (n > 65536) {
        st = gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                  "code object v2 metadata: %zu kernels is implausible", n);
        goto out;
    }
    if (n) {
        co->kernels = calloc(n, sizeof *co->kernels);
        if (!co->kernels) {
            st = gcn_ld_fail(GCN_LD_ENOMEM, err, errlen, "code object v2 metadata: out of memory");
            goto out;
        }
    }
    co->n_kernels = (uint32_t)n;
    for (size_t i = 0; i < n && st == GCN_LD_OK; i++) {
        co->kernels[i].co = co;
        st = parse_kernel(y, yaml_document_get_node(&doc, ks->data.sequence.items.start[i]),
                          &co->kernels[i], i, err, errlen);
    }
out:
    yaml_document_delete(&doc);
    return st;
}
