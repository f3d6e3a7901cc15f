# HIP sample programs (tests/programs/*.hip, in the style of the public HIP
# samples), built by Debian's hipcc for gfx803 into $(BUILD)/programs/ and run
# by tests/e2e/programs-samples.sh under gcn3-emu.
SAMPLE_PROGS := streams_events warp_ops coop_groups dyn_shared peer_copy zero_copy pitch2d \
	oob_store managed cas_own handles contexts spin_wait rocprim_ops sync_patterns empty_kernel \
	streams_overlap streams_halo sample_deep sample_warm sample_steps sample_swing sample_waves sample_ff_atomic long_waves tear64 page_stride um_multi
# rocPRIM (Debian's librocprim-dev, header-only) needs C++17
HIPLIBS_rocprim_ops := -std=c++17
HIPLIBS_streams_overlap := -pthread
SAMPLE_BINS  := $(patsubst %,$(BUILD)/programs/%,$(SAMPLE_PROGS))

programs: $(SAMPLE_BINS)
$(BUILD)/programs/%: tests/programs/%.hip tests/programs/samples_check.h
	@mkdir -p $(dir $@)
	$(HIPCC) --offload-arch=gfx803 -O2 -o $@ $< $(HIPLIBS_$*)
