# gpusandbox - top-level Makefile.
# `make` builds the launcher/supervisor; `make check` runs every CI tier.

CC      ?= cc
PKGS    := libseccomp libcap json-c
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-format-nonliteral \
           -fstack-protector-strong -D_FORTIFY_SOURCE=2 -Iinclude -Iarch -Ipolicy -Isupervisor
LDLIBS  += $(shell pkg-config --libs $(PKGS)) -pthread
CFLAGS  += $(shell pkg-config --cflags $(PKGS)) -pthread
BUILD   := build

SUPERVISOR_SRCS := supervisor/main.c supervisor/launch.c supervisor/filter.c \
                   supervisor/sandbox.c supervisor/executor.c supervisor/exec_common.c supervisor/exec_control.c supervisor/exec_visibility.c supervisor/exec_policy.c supervisor/gpu_uuid.c supervisor/ledger.c \
                   supervisor/audit.c supervisor/rm_decode.c supervisor/rm_tables.c \
                   supervisor/error.c policy/quota.c policy/groups.c policy/policy.c arch/arch.c
# Everything but main: linked into the unit tests too.
CORE_SRCS := $(filter-out supervisor/main.c,$(SUPERVISOR_SRCS))
CORE_OBJS := $(CORE_SRCS:%.c=$(BUILD)/%.o)

GPUSANDBOX := $(BUILD)/gpusandbox

UNIT_TESTS := $(BUILD)/tests/unit/test_rm_tables $(BUILD)/tests/unit/test_core $(BUILD)/tests/unit/test_policy

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

tests: $(UNIT_TESTS) $(TEST_CLIENT_BINS) $(FAKEDRV_BIN) $(FAKEDRV_SELFTEST)

check: all tests
	./tests/run-tests.sh

check-unit: $(UNIT_TESTS)
	@for t in $(UNIT_TESTS); do echo "== $$t"; $$t || exit 1; done

clean:
	rm -rf $(BUILD)

# A binary with libseccomp, libcap and json-c linked in, for machines that do
# not have them (the GPU tier runs it on the device machine).
STATIC_LIBS := -Wl,-Bstatic -lseccomp -lcap -ljson-c -Wl,-Bdynamic -pthread
$(BUILD)/gpusandbox-static: $(BUILD)/supervisor/main.o $(CORE_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(STATIC_LIBS)
