# GCN3 trace-capture / trace-replay toolchain - the one top-level Makefile.
#
#   make deps    install missing Debian packages (sudo when not root)
#   make         build everything into $(BUILD)/  (bin/, lib/, tests/, bench/)
#   make test    unit tests (cmocka) + end-to-end tests on real HIP programs
#   make demo    deps + build + record and replay the benchmark programs
#   make bench   benchmark numbers (emulation / recording / replay speed)
#   make clean
#
# WERROR=1 (set by .ci/run) turns warnings into errors. BUILD=dir selects the
# build directory (several builds can coexist).

BUILD   ?= build
WERROR  ?= 0
CC      ?= cc
HIPCC   ?= hipcc
OPT     ?= -O2

DEB_PACKAGES := build-essential pkg-config libelf-dev libzstd-dev libxxhash-dev libprotobuf-c-dev \
	protobuf-c-compiler libcmocka-dev libmsgpack-dev libyaml-dev libinih-dev \
	libjansson-dev libssl-dev gnuplot-nox hipcc rocm-device-libs libamdhip64-dev llvm \
	openmpi-bin libopenmpi-dev librocprim-dev python3-protobuf python3-zstandard help2man time

WARN    := -Wall -Wextra -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN    += -Werror
endif
CFLAGS  ?= $(OPT) -g
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE -fPIC -fvisibility=hidden -pthread $(WARN) $(CFLAGS) \
	-I. -I$(BUILD)/gen
LDLIBS  := -lelf -lzstd -lxxhash -lprotobuf-c -lmsgpackc -lyaml -linih -ljansson -lpthread -lm

# ---- sources ---------------------------------------------------------------
GCN_SRC    := $(wildcard gcn/*.c)
EXEC_SRC   := $(wildcard emu/isa/*.c emu/exec/*.c)
HIP_SRC    := $(wildcard emu/hip/*.c)
TRC_SRC    := $(wildcard traceformat/*.c)
PROTO      := $(wildcard traceformat/*.proto)
PROTO_C    := $(patsubst traceformat/%.proto,$(BUILD)/gen/traceformat/%.pb-c.c,$(PROTO))
PROTO_H    := $(PROTO_C:.c=.h)
RP_SRC     := $(filter-out replay/mgpu-replay.c,$(wildcard replay/*.c))
TOOL_SRC   := $(wildcard tools/*.c)
UNIT_SRC   := $(wildcard tests/gcn/*.c tests/emu/*.c tests/trace/*.c tests/replay/*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

LIBGCN  := $(BUILD)/lib/libgcn.a
LIBTRC  := $(BUILD)/lib/libtrc.a
LIBEXEC := $(BUILD)/lib/libgcnexec.a
LIBRP   := $(BUILD)/lib/librp.a
LIBHIP  := $(BUILD)/lib/libamdhip64.so.5
EMU     := $(BUILD)/bin/gcn3-emu
REPLAY  := $(BUILD)/bin/mgpu-replay
TOOLS   := $(patsubst tools/%.c,$(BUILD)/bin/%,$(TOOL_SRC))
UNIT    := $(patsubst tests/%.c,$(BUILD)/tests/%,$(UNIT_SRC))

BENCH_SRC := $(wildcard benchmarks/*.hip)
BENCH_O2  := $(patsubst benchmarks/%.hip,$(BUILD)/bench/%,$(BENCH_SRC))
BENCH_O0  := $(patsubst benchmarks/%.hip,$(BUILD)/bench/%-O0,$(BENCH_SRC))
# -O1 and -O3 builds of the first benchmark programs (the ISA tests run them too)
BENCH_OX  := $(foreach p,vectoradd reduction transpose,$(BUILD)/bench/$(p)-O1 $(BUILD)/bench/$(p)-O3)

.SECONDARY: $(PROTO_C) $(PROTO_H)

.PHONY: all deps test unit e2e demo bench clean programs asan test-asan test-tsan check-layering
all: $(LIBHIP) $(EMU) $(REPLAY) $(TOOLS) $(UNIT)

# ---- dependencies ----------------------------------------------------------
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing$$missing"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "make deps: all Debian packages present"; fi

# ---- generated protobuf-c code ---------------------------------------------
$(BUILD)/gen/traceformat/%.pb-c.c $(BUILD)/gen/traceformat/%.pb-c.h: traceformat/%.proto
	@mkdir -p $(BUILD)/gen/traceformat
	protoc-c --c_out=$(BUILD)/gen traceformat/$*.proto

# ---- objects ---------------------------------------------------------------
$(BUILD)/obj/%.o: %.c $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Wno-unused-parameter -c $< -o $@

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# ---- libraries -------------------------------------------------------------
$(LIBGCN): $(call obj,$(GCN_SRC))
	@mkdir -p $(dir $@); rm -f $@; ar rcs $@ $^
$(LIBTRC): $(call obj,$(TRC_SRC)) $(patsubst $(BUILD)/gen/%.c,$(BUILD)/obj/gen/%.o,$(PROTO_C))
	@mkdir -p $(dir $@); rm -f $@; ar rcs $@ $^
$(LIBEXEC): $(call obj,$(EXEC_SRC))
	@mkdir -p $(dir $@); rm -f $@; ar rcs $@ $^
$(LIBRP): $(call obj,$(RP_SRC))
	@mkdir -p $(dir $@); rm -f $@; ar rcs $@ $^

# Our HIP runtime. The version script gives every symbol the hip_4.2 ... hip_5.2
# version nodes of the real library (FACTS.md: without hip_4.2 the dynamic
# loader rejects the program) and exports only HIP symbols.
$(LIBHIP): $(call obj,$(HIP_SRC)) $(LIBEXEC) $(LIBTRC) $(LIBGCN) emu/hip/libamdhip64.map
	@mkdir -p $(dir $@)
	$(CC) -shared -pthread -Wl,-soname,libamdhip64.so.5 -Wl,--version-script=emu/hip/libamdhip64.map \
	  -o $@ $(call obj,$(HIP_SRC)) $(LIBEXEC) $(LIBTRC) $(LIBGCN) $(LDLIBS)
	ln -sf libamdhip64.so.5 $(BUILD)/lib/libamdhip64.so

$(EMU): $(call obj,emu/gcn3-emu.c)
	@mkdir -p $(dir $@)
	$(CC) -pthread -o $@ $^ $(LDLIBS)

$(REPLAY): $(call obj,replay/mgpu-replay.c) $(LIBRP) $(LIBTRC) $(LIBGCN)
	@mkdir -p $(dir $@)
	$(CC) -pthread -o $@ $^ $(LDLIBS)

$(BUILD)/bin/%: $(BUILD)/obj/tools/%.o $(LIBRP) $(LIBTRC) $(LIBEXEC) $(LIBGCN)
	@mkdir -p $(dir $@)
	$(CC) -pthread -o $@ $< -Wl,--start-group $(filter %.a,$^) -Wl,--end-group $(LDLIBS)

# ---- unit tests (cmocka): one binary per tests/<area>/NNN-name.c -----------
$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(LIBRP) $(LIBEXEC) $(LIBTRC) $(LIBGCN)
	@mkdir -p $(dir $@)
	$(CC) -pthread -o $@ $< -Wl,--start-group $(filter %.a,$^) -Wl,--end-group $(LDLIBS) -lcmocka

# ---- HIP programs (real, built by Debian's hipcc for gfx803) ---------------
# HIPLIBS_<name> adds host libraries for program <name> (e.g. HIPLIBS_aes := -lcrypto).
programs: $(BENCH_O2) $(BENCH_O0) $(BENCH_OX) $(BUILD)/bench-other/vectoradd-gfx906
$(BUILD)/bench/%: benchmarks/%.hip
	@mkdir -p $(dir $@)
	$(HIPCC) --offload-arch=gfx803 -O2 -o $@ $< $(HIPLIBS_$*)
$(BUILD)/bench/%-O0: benchmarks/%.hip
	@mkdir -p $(dir $@)
	$(HIPCC) --offload-arch=gfx803 -O0 -o $@ $< $(HIPLIBS_$*)
$(BUILD)/bench/%-O1: benchmarks/%.hip
	@mkdir -p $(dir $@)
	$(HIPCC) --offload-arch=gfx803 -O1 -o $@ $< $(HIPLIBS_$*)
$(BUILD)/bench/%-O3: benchmarks/%.hip
	@mkdir -p $(dir $@)
	$(HIPCC) --offload-arch=gfx803 -O3 -o $@ $< $(HIPLIBS_$*)

# A program for another GPU (gfx906): the e2e tests check that it is refused.
$(BUILD)/bench-other/vectoradd-gfx906: benchmarks/vectoradd.hip
	@mkdir -p $(dir $@)
	$(HIPCC) --offload-arch=gfx906 -O2 -o $@ $<

# ---- per-area fragments (mk/*.mk: extra programs, fuzz targets, ...) ------
-include $(sort $(wildcard mk/*.mk))

# ---- test / demo / bench ---------------------------------------------------
unit: $(UNIT)
	@fail=0; for t in $(UNIT); do echo "== $$t"; TEST_BUILD=$(BUILD) $$t || fail=1; done; \
	[ $$fail = 0 ] || { echo "unit tests FAILED"; exit 1; }

e2e: all programs
	@fail=0; for t in tests/e2e/run.sh $(filter-out tests/e2e/run.sh,$(sort $(wildcard tests/e2e/*.sh))); do \
	  echo "== $$t"; BUILD=$(BUILD) bash $$t || fail=1; done; \
	[ $$fail = 0 ] || { echo "e2e tests FAILED"; exit 1; }

# the include graph follows the rooms' arrows (docs/architecture.md)
check-layering:
	bash tools/check-layering.sh

test: deps
	bash tools/check-layering.sh
	$(MAKE) all programs
	$(MAKE) unit
	$(MAKE) test-asan
	$(MAKE) e2e

demo: deps
	$(MAKE) all programs
	BUILD=$(BUILD) bash tools/demo.sh

bench: deps
	$(MAKE) all programs
	BUILD=$(BUILD) bash benchmarks/run-bench.sh

# WERROR=0: gcc's -O1 sanitizer builds warn differently (format-truncation
# guesses); the -Werror build of make test is the regular one
ASAN_FLAGS := BUILD=build-asan WERROR=0 CFLAGS="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer" LDLIBS="$(LDLIBS) -fsanitize=address,undefined"
asan:
	$(MAKE) $(ASAN_FLAGS) all

# the multithreaded emulator tests and the partitioned (parallel) replay
# tests under ThreadSanitizer; any report fails (not part of make test)
TSAN_FLAGS := BUILD=build-tsan WERROR=0 CFLAGS="-O1 -g -fsanitize=thread -fno-omit-frame-pointer" \
	LDLIBS="$(LDLIBS) -fsanitize=thread"
TSAN_TESTS := emu/330-atomic emu/400-memory emu/403-launch emu/404-record replay/600-events replay/720-fmem \
	replay/750-net replay/780-wgload trace/500-roundtrip trace/504-golden
test-tsan:
	$(MAKE) $(TSAN_FLAGS) all
	@fail=0; for t in $(TSAN_TESTS); do echo "== build-tsan/tests/$$t"; \
	  TSAN_OPTIONS=halt_on_error=1:exitcode=66 TEST_BUILD=build-tsan build-tsan/tests/$$t || fail=1; done; \
	BUILD=$(BUILD) TSAN_BUILD=build-tsan bash tests/tsan/programs.sh || fail=1; \
	[ $$fail = 0 ] || { echo "test-tsan FAILED"; exit 1; }

# the unit tests under AddressSanitizer + UndefinedBehaviorSanitizer (make test
# runs them; any report fails the test)
test-asan:
	$(MAKE) $(ASAN_FLAGS) all
	ASAN_OPTIONS=abort_on_error=0:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  $(MAKE) $(ASAN_FLAGS) unit
	BUILD=$(BUILD) ASAN_BUILD=build-asan bash tests/asan/programs.sh

clean:
	rm -rf $(BUILD) build-asan build-tsan out
