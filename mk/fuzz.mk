# Fuzz targets (libFuzzer). `make fuzz` builds $(BUILD)/fuzz/trace_reader_fuzz:
# the trace library (traceformat/*.c + the generated protobuf-c code),
# compiled again with clang-15 and
# -fsanitize=fuzzer-no-link,address,undefined into $(BUILD)/fuzz/obj (the gcc
# libraries in $(BUILD)/lib are not instrumented). tests/e2e/fuzz.sh runs a
# short campaign in `make test`; longer runs: see fuzz/trace_reader_fuzz.c.

FUZZ_CC     ?= clang-15
FUZZ_SAN    := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -pthread -Wall -Wextra -Wno-unused-parameter \
	$(FUZZ_SAN) -I. -I$(BUILD)/gen
FUZZ_LIB_SRC := $(TRC_SRC)
FUZZ_LIB_OBJ := $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(FUZZ_LIB_SRC)) \
	$(patsubst $(BUILD)/gen/%.c,$(BUILD)/fuzz/obj/gen/%.o,$(PROTO_C))
# replay_fuzz also drives the replay: the gcn room and the replay, instrumented too
FUZZ_RP_OBJ := $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(GCN_SRC) $(RP_SRC))
FUZZ_TARGETS := $(patsubst fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard fuzz/*_fuzz.c))

.PHONY: fuzz
fuzz: $(FUZZ_TARGETS)

# Library code: coverage instrumentation without libFuzzer's main.
$(BUILD)/fuzz/obj/%.o: %.c $(PROTO_H)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(BUILD)/fuzz/obj/gen/%.o: $(BUILD)/gen/%.c $(PROTO_H)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(BUILD)/fuzz/replay_fuzz: $(BUILD)/fuzz/obj/fuzz/replay_fuzz.o $(FUZZ_LIB_OBJ) $(FUZZ_RP_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -pthread -o $@ $^ $(LDLIBS)

$(BUILD)/fuzz/%: $(BUILD)/fuzz/obj/fuzz/%.o $(FUZZ_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -pthread -o $@ $^ -lzstd -lxxhash -lprotobuf-c -lpthread -lm

-include $(shell find $(BUILD)/fuzz/obj -name '*.d' 2>/dev/null)
