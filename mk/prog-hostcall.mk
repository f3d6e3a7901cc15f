# Device-side services through the hostcall buffer (issue 4): device printf,
# assert, malloc/free. Test programs tests/programs/{printf,assert,device_malloc}.hip
# (plus printf at -O0: call stacks in scratch), built into $(BUILD)/programs/ and
# run by tests/e2e/programs-hostcall.sh.
HOSTCALL_PROGS := printf assert device_malloc
HOSTCALL_BINS := $(patsubst %,$(BUILD)/programs/%,$(HOSTCALL_PROGS))

programs: $(HOSTCALL_BINS) $(BUILD)/programs/printf-O0

$(HOSTCALL_BINS): $(BUILD)/programs/%: tests/programs/%.hip
	@mkdir -p $(dir $@)
	$(HIPCC) --offload-arch=gfx803 -O2 -o $@ $< $(HIPLIBS_$*)

$(BUILD)/programs/printf-O0: tests/programs/printf.hip
	@mkdir -p $(dir $@)
	$(HIPCC) --offload-arch=gfx803 -O0 -o $@ $<
