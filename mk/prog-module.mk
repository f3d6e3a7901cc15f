# Module-API, device-global and code-object-version test programs
# (tests/programs/module_*, device_globals*, codeobj_*; run by
# tests/e2e/programs-module.sh). Everything goes to $(BUILD)/programs/.
#
#   module_launch        host program; loads module_kernels.co (hipcc --genco)
#   device_globals       two translation units (two fat binaries) with
#                        __device__/__constant__ variables
#   codeobj_versions     loads the code objects of $(BUILD)/programs/codeobj/:
#     module_kernels.v{2,3,4}.co    hipcc --genco -mcode-object-version=N (bundles)
#     module_kernels.v{4,5}.hsaco   bare ELF: hipcc -S, clang-15 -c, ld.lld-15
#                                   (hipcc's own link step uses lld 14, which
#                                   cannot link v5 objects)
#     codeobj_kernels.v{2,3}.hsaco  OpenCL C, clang-15 -target amdgcn-amd-amdhsa
#     *.gfx906.*                    for the refusal checks
CLANG15 ?= clang-15
LLD15   ?= ld.lld-15
PROGMOD := $(BUILD)/programs
CODEOBJ := $(PROGMOD)/codeobj
OCL_LIBS := --rocm-device-lib-path=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode

PROGMOD_ALL := $(PROGMOD)/module_launch $(PROGMOD)/module_kernels.co $(PROGMOD)/device_globals \
	$(PROGMOD)/codeobj_versions \
	$(foreach v,2 3 4,$(CODEOBJ)/module_kernels.v$(v).co) \
	$(foreach v,4 5,$(CODEOBJ)/module_kernels.v$(v).hsaco) \
	$(foreach v,2 3,$(CODEOBJ)/codeobj_kernels.v$(v).hsaco) \
	$(CODEOBJ)/module_kernels.gfx906.co $(CODEOBJ)/codeobj_kernels.v2.gfx906.hsaco

.PHONY: programs-module
programs-module: $(PROGMOD_ALL)
programs: programs-module

$(PROGMOD)/module_launch: tests/programs/module_launch.hip
	@mkdir -p $(dir $@)
	$(HIPCC) --offload-arch=gfx803 -O2 -o $@ $<
$(PROGMOD)/device_globals: tests/programs/device_globals.hip tests/programs/device_globals_b.hip
	@mkdir -p $(dir $@)
	$(HIPCC) --offload-arch=gfx803 -O2 -o $@ $^
$(PROGMOD)/codeobj_versions: tests/programs/codeobj_versions.hip
	@mkdir -p $(dir $@)
	$(HIPCC) --offload-arch=gfx803 -O2 -o $@ $<

$(PROGMOD)/module_kernels.co: tests/programs/module_kernels.hip
	@mkdir -p $(dir $@)
	$(HIPCC) --genco --offload-arch=gfx803 -O2 -o $@ $<
$(CODEOBJ)/module_kernels.v%.co: tests/programs/module_kernels.hip
	@mkdir -p $(dir $@)
	$(HIPCC) --genco --offload-arch=gfx803 -O2 -mcode-object-version=$* -o $@ $<
$(CODEOBJ)/module_kernels.gfx906.co: tests/programs/module_kernels.hip
	@mkdir -p $(dir $@)
	$(HIPCC) --genco --offload-arch=gfx906 -O2 -o $@ $<
$(CODEOBJ)/module_kernels.v%.hsaco: tests/programs/module_kernels.hip
	@mkdir -p $(dir $@)
	$(HIPCC) --offload-arch=gfx803 -O2 --cuda-device-only -S -mcode-object-version=$* -o $@.s $<
	$(CLANG15) -target amdgcn-amd-amdhsa -mcpu=gfx803 -mcode-object-version=$* -c -o $@.o $@.s
	$(LLD15) -shared -o $@ $@.o
	rm -f $@.s $@.o
$(CODEOBJ)/codeobj_kernels.v%.hsaco: tests/programs/codeobj_kernels.cl
	@mkdir -p $(dir $@)
	$(CLANG15) -target amdgcn-amd-amdhsa -mcpu=gfx803 -mcode-object-version=$* -cl-std=CL2.0 -O2 \
	  $(OCL_LIBS) -o $@ $<
$(CODEOBJ)/codeobj_kernels.v2.gfx906.hsaco: tests/programs/codeobj_kernels.cl
	@mkdir -p $(dir $@)
	$(CLANG15) -target amdgcn-amd-amdhsa -mcpu=gfx906 -mcode-object-version=2 -cl-std=CL2.0 -O2 \
	  $(OCL_LIBS) -o $@ $<
