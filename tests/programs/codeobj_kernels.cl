// codeobj_kernels.cl - the kernels of module_kernels.hip that
// codeobj_versions.hip runs (vadd, vadd_g, global g), in OpenCL C as older
// precompiled .hsaco files are (e.g. the kernels other simulators ship):
// built with `clang -target amdgcn-amd-amdhsa -mcpu=gfx803
// -mcode-object-version=2` into a code object v2 (YAML metadata, hidden
// global-offset arguments, amd_kernel_code_t descriptors).
global int g[4];

kernel void vadd(global const float *a, global const float *b, global float *c, int n)
{
    int i = get_global_id(0);
    if (i < n)
        c[i] = a[i] + b[i];
}

kernel void vadd_g(global int *out, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = i * g[i & 3];
}
