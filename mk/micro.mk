# Micro-benchmarks of the replay's calibration against the R9 Nano (MGSim
# paper Sec. VI-B / VII-A): benchmarks/micro/*.hip -> $(BUILD)/micro/<name>.
# benchmarks/micro/run.sh records and replays them and prints measured vs
# paper; tests/e2e/micro.sh fails when a figure is off by more than 5%.
MICRO_SRC  := $(wildcard benchmarks/micro/*.hip)
MICRO_PROG := $(patsubst benchmarks/micro/%.hip,$(BUILD)/micro/%,$(MICRO_SRC))

.PHONY: micro validation
programs: $(MICRO_PROG)
micro: $(MICRO_PROG)

$(BUILD)/micro/%: benchmarks/micro/%.hip $(wildcard benchmarks/micro/*.h)
	@mkdir -p $(dir $@)
	$(HIPCC) --offload-arch=gfx803 -O2 -o $@ $<

# docs/validation.md tables (the R9 Nano probes, the paper's prose figures)
# and docs/validation.svg (gnuplot); a table is spliced in only if its run passed
validation: $(MICRO_PROG) $(EMU) $(REPLAY) $(LIBHIP) $(BUILD)/programs/empty_kernel
	BUILD=$(BUILD) bash benchmarks/micro/hw-probes.sh --full --out $(BUILD)/hw-probes
	python3 benchmarks/micro/splice.py hw-table $(BUILD)/hw-probes/table.md docs/validation.md
	BUILD=$(BUILD) bash benchmarks/micro/run.sh --docs --table $(BUILD)/micro/table.md
	python3 benchmarks/micro/splice.py paper-table $(BUILD)/micro/table.md docs/validation.md
