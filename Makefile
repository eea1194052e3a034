# gpusandbox - top-level Makefile.
# `make` builds the launcher/supervisor; `make check` runs every CI tier.

CC      ?= cc
PKGS    := libseccomp libcap json-c
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-format-nonliteral \
           -fstack-protector-strong -D_FORTIFY_SOURCE=2 -Iinclude -Iarch -Ipolicy -Isupervisor
LDLIBS  += $(shell pkg-config --libs $(PKGS)) -pthread
CFLAGS  += $(shell pkg-config --cflags $(PKGS)) -pthread $(EXTRA_CFLAGS)
LDFLAGS += $(EXTRA_LDFLAGS)
BUILD   := build

SUPERVISOR_SRCS := supervisor/main.c supervisor/launch.c supervisor/filter.c \
                   supervisor/sandbox.c supervisor/executor.c supervisor/exec_common.c supervisor/exec_control.c supervisor/exec_visibility.c supervisor/exec_policy.c supervisor/exec_managed.c supervisor/gpu_uuid.c supervisor/ledger.c \
                   supervisor/compute_share.c supervisor/sm_controller.c supervisor/rm_own.c \
                   supervisor/audit.c supervisor/audit_verify.c supervisor/sha256.c supervisor/utf8.c \
                   supervisor/rm_decode.c supervisor/rm_tables.c \
                   supervisor/error.c policy/quota.c policy/groups.c policy/policy.c policy/learn.c arch/arch.c
# Everything but main: linked into the unit tests too.
CORE_SRCS := $(filter-out supervisor/main.c,$(SUPERVISOR_SRCS))
CORE_OBJS := $(CORE_SRCS:%.c=$(BUILD)/%.o)

GPUSANDBOX := $(BUILD)/gpusandbox

UNIT_TESTS := $(BUILD)/tests/unit/test_rm_tables $(BUILD)/tests/unit/test_core $(BUILD)/tests/unit/test_policy \
              $(BUILD)/tests/unit/test_learn $(BUILD)/tests/unit/test_audit

# The policy parser's fuzz target. CI replays the corpus through a plain
# driver (with ASan/UBSan where the compiler has them); `make fuzz` builds
# the libFuzzer binary when clang is installed.
FUZZ_POLICY_SRCS := tests/fuzz/fuzz_policy.c policy/policy.c policy/groups.c policy/quota.c \
                    supervisor/rm_tables.c
SANITIZE := $(shell echo 'int main(void){return 0;}' | \
              $(CC) -x c -fsanitize=address,undefined -o /dev/null - 2>/dev/null && \
              echo -fsanitize=address,undefined -fno-sanitize-recover=all)
POLICY_REPLAY := $(BUILD)/tests/fuzz/policy_replay
# The ledger's target: operation sequences checked against a model.
FUZZ_LEDGER_SRCS := tests/fuzz/fuzz_ledger.c supervisor/ledger.c
LEDGER_REPLAY := $(BUILD)/tests/fuzz/ledger_replay

# The audit verifier's target: hostile logs.
FUZZ_VERIFY_SRCS := tests/fuzz/fuzz_audit_verify.c supervisor/audit_verify.c supervisor/sha256.c \
                    supervisor/utf8.c
VERIFY_REPLAY := $(BUILD)/tests/fuzz/audit_verify_replay

$(VERIFY_REPLAY): tests/fuzz/replay_main.c $(FUZZ_VERIFY_SRCS) $(wildcard include/*.h supervisor/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANITIZE) -o $@ tests/fuzz/replay_main.c $(FUZZ_VERIFY_SRCS) \
		$(shell pkg-config --libs json-c)

$(LEDGER_REPLAY): tests/fuzz/replay_main.c $(FUZZ_LEDGER_SRCS) $(wildcard include/*.h supervisor/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANITIZE) -o $@ tests/fuzz/replay_main.c $(FUZZ_LEDGER_SRCS)

$(POLICY_REPLAY): tests/fuzz/replay_main.c $(FUZZ_POLICY_SRCS) $(wildcard include/*.h policy/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANITIZE) -o $@ tests/fuzz/replay_main.c $(FUZZ_POLICY_SRCS)

.PHONY: fuzz
fuzz: $(FUZZ_POLICY_SRCS) $(FUZZ_LEDGER_SRCS) $(FUZZ_VERIFY_SRCS)
	@command -v clang >/dev/null || { echo "make fuzz: clang is not installed" >&2; exit 1; }
	@mkdir -p $(BUILD)/fuzz
	clang $(filter-out -D_FORTIFY_SOURCE=2,$(CFLAGS)) -fsanitize=fuzzer,address,undefined \
		-o $(BUILD)/fuzz/fuzz_policy $(FUZZ_POLICY_SRCS)
	clang $(filter-out -D_FORTIFY_SOURCE=2,$(CFLAGS)) -fsanitize=fuzzer,address,undefined \
		-o $(BUILD)/fuzz/fuzz_ledger $(FUZZ_LEDGER_SRCS)
	clang $(filter-out -D_FORTIFY_SOURCE=2,$(CFLAGS)) -fsanitize=fuzzer,address,undefined \
		-o $(BUILD)/fuzz/fuzz_audit_verify $(FUZZ_VERIFY_SRCS) $(shell pkg-config --libs json-c)
	@echo "run: $(BUILD)/fuzz/fuzz_policy tests/fuzz/corpus/policy"
	@echo "run: $(BUILD)/fuzz/fuzz_ledger -timeout=5 tests/fuzz/corpus/ledger"
	@echo "run: $(BUILD)/fuzz/fuzz_audit_verify -timeout=5 tests/fuzz/corpus/audit"

.PHONY: all tests clean check check-unit
all: $(GPUSANDBOX)

$(BUILD)/%.o: %.c $(wildcard include/*.h arch/*.h policy/*.h supervisor/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(GPUSANDBOX): $(BUILD)/supervisor/main.o $(CORE_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/unit/%: tests/unit/%.c $(CORE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(CORE_OBJS) $(LDLIBS)

-include tests/fakedrv/fakedrv.mk
-include tests/tests.mk

tests: $(UNIT_TESTS) $(POLICY_REPLAY) $(LEDGER_REPLAY) $(VERIFY_REPLAY) $(TEST_CLIENT_BINS) $(FAKEDRV_BIN) $(FAKEDRV_SELFTEST)

check: all tests
	./tests/run-tests.sh

check-unit: $(UNIT_TESTS)
	@for t in $(UNIT_TESTS); do echo "== $$t"; $$t || exit 1; done

clean:
	rm -rf $(BUILD)

# ThreadSanitizer: the supervisor's threads (notify, compute share, main)
# share the audit log and the sandbox state. Builds build-tsan/gpusandbox
# and runs a few fake-driver cases with it: --sm (two threads writing the
# log) and the adversarial races. Needs root and /dev/fuse, like the tiers.
# Not part of `make check`: the --sm cases still report the compute-share
# races of issue #17 item 13 (gs_sm_reassert, sb->sm set after the notify
# thread starts, thread_err).
TSAN_CASES_SM := sm50 fail
TSAN_CASES_ADV := race_size:size client_flip audit_hostile
.PHONY: tsan
tsan:
	$(MAKE) BUILD=build-tsan EXTRA_CFLAGS="-fsanitize=thread -O1" EXTRA_LDFLAGS=-fsanitize=thread \
		build-tsan/gpusandbox
	TSAN_OPTIONS="halt_on_error=1 exitcode=66" GPUSANDBOX=build-tsan/gpusandbox \
		setarch -R tests/adv/run.sh $(TSAN_CASES_ADV)
	TSAN_OPTIONS="halt_on_error=1 exitcode=66" GPUSANDBOX=build-tsan/gpusandbox \
		setarch -R tests/sm/run.sh $(TSAN_CASES_SM)

# A binary with libseccomp, libcap and json-c linked in, for machines that do
# not have them (the GPU tier runs it on the device machine).
STATIC_LIBS := -Wl,-Bstatic -lseccomp -lcap -ljson-c -Wl,-Bdynamic -pthread
$(BUILD)/gpusandbox-static: $(BUILD)/supervisor/main.o $(CORE_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(STATIC_LIBS)

