# SPDX-License-Identifier: MIT
#
# tests/tests.mk - test client programs (RM client library, adversarial
# quota tests, trace replayer). Included by the top-level Makefile, which
# provides CC, ALL_CFLAGS (with -Iinclude), BUILD and optionally LDFLAGS.
#
# Defines TEST_CLIENT_BINS: every binary built here, under build/tests/.
# Runners (they build nothing, run `make` first):
#   tests/adv/run.sh      adversarial quota tests against the fake driver
#   tests/replay/run.sh   trace replay against the fake driver
#   tests/sm/run.sh       compute share (--sm) against the fake driver
#   tests/learn/run.sh    learning mode (--learn) against the fake driver
#   tests/p2p/run.sh      --p2p-register against the fake driver

TESTS_BUILD      := $(BUILD)/tests
# The clients send the sizes of the driver the fake plays: gpusandbox's own
# per-version tables (rmc_ctrl_size).
TESTS_LIB_OBJ    := $(TESTS_BUILD)/lib/rmclient.o $(TESTS_BUILD)/lib/rm_tables.o
TESTS_ADV_OBJ    := $(TESTS_BUILD)/adv/adv.o
TESTS_CLIENT_CFLAGS = $(ALL_CFLAGS) -Itests/lib -Itests/adv
TESTS_HDRS       := include/nvrm_abi.h include/nvuvm_abi.h include/nvrm_monitoring.h include/test_clock.h tests/lib/rmclient.h tests/lib/uuid_text.h tests/adv/adv.h \
                    tests/fakedrv/fake_rm.h

# Dynamically linked adversarial programs.
TESTS_ADV_DYN    := race_size xfer nvos21 forged_words vidheap fork_both \
                    fd_pass dup_free close_reopen client_reuse client_refree client_flip second_client client_fdswap io_uring odd_size channels fb_report gpus compat_i386 kill_super outlive broker \
                    policy_verdicts engines video_sessions learn_needs managed lone_channels own_driver per_gpu audit_hostile handle_zero \
                    dmabuf share_import fd_export pid_list group_dup dup_cross grown_tail retry_loop default_caps slow_call quick_return clients dupcache \
                    uvm_hold uvm_share uvm_ctlfd continue_swap uvm_channel sem_surf audit_reach smi_views exec_again \
                    token_neighbour
# Statically linked ones: raw ioctls from a binary no preload library can
# reach.
TESTS_ADV_STATIC := static_raw

TESTS_ADV_BINS   := $(addprefix $(TESTS_BUILD)/adv/,$(TESTS_ADV_DYN) $(TESTS_ADV_STATIC))
TESTS_REPLAY_BIN := $(TESTS_BUILD)/replay/replay
TESTS_SM_BIN     := $(TESTS_BUILD)/sm/sm_workload
# tests/sm/escape.sh's attacks on --sm (issue #32).
TESTS_SM_ESCAPE  := $(TESTS_BUILD)/sm/sm_escape
# The fake-driver microbenchmark's client (scripts/bench-fake.sh).
TESTS_BENCH_BIN  := $(TESTS_BUILD)/bench/rmbench
# tests/p2p's client: CUDA's pair with its P2P registration controls.
TESTS_P2P_BIN    := $(TESTS_BUILD)/p2p/p2p_pairs
# The ledger's share, in process (the fake slows down with its objects).
TESTS_LEDGER_BENCH := $(TESTS_BUILD)/bench/ledgerbench
# The quiesce's walk of /proc with many host processes (root).
TESTS_QUIESCE_BENCH := $(TESTS_BUILD)/bench/quiescebench
TESTS_HOLD_BENCH := $(TESTS_BUILD)/bench/holdbench
# A device allocation's private fd table (root; links the core).
TESTS_PRIVTABLE_BENCH := $(TESTS_BUILD)/bench/privtablebench

# The agent tier's client: static, because it runs in a busybox container.
TESTS_AGENT_HOLDER := $(TESTS_BUILD)/agent/holder
# tests/adv's managed, linked statically for the container (managed = deny).
TESTS_AGENT_MANAGED := $(TESTS_BUILD)/agent/managed
# A task signalled while the agent performs its allocation (static).
TESTS_AGENT_ABANDON := $(TESTS_BUILD)/agent/abandon
# A hostile or slow peer of the agent's socket (runs on the host).
TESTS_AGENT_PEER := $(TESTS_BUILD)/agent/peer
# tests/adv's compat_i386, linked statically for the container.
TESTS_AGENT_COMPAT := $(TESTS_BUILD)/agent/compat_i386
# tests/p2p's p2p_pairs, linked statically for the container.
TESTS_AGENT_P2P := $(TESTS_BUILD)/agent/p2p_pairs
# tests/adv's uvm_hold, linked statically for the container.
TESTS_AGENT_UVMHOLD := $(TESTS_BUILD)/agent/uvm_hold
# tests/adv's second_client, linked statically for the container.
TESTS_AGENT_SECOND := $(TESTS_BUILD)/agent/second_client
# tests/adv's uvm_channel, linked statically for the container.
TESTS_AGENT_UVMCHANNEL := $(TESTS_BUILD)/agent/uvm_channel
# tests/sm's sm_workload, linked statically for the container (agent --sm).
TESTS_AGENT_SM := $(TESTS_BUILD)/agent/sm_workload
# A refused call made with its stack pointer in a stalling page (static).
TESTS_AGENT_STACKSTALL := $(TESTS_BUILD)/agent/stackstall
# Device allocations of two containers racing on one GPU's node (static).
TESTS_AGENT_GPUNODE := $(TESTS_BUILD)/agent/gpunode
# A tenant's memory mapped through UVM (static), and the attacker on the
# host that takes dead clients' handles to dup it (stalehandle-runc).
TESTS_AGENT_UVMVICTIM := $(TESTS_BUILD)/agent/uvm_victim
TESTS_AGENT_STALE := $(TESTS_BUILD)/agent/stale_client
# A system call the runtimes' default profile refuses (add_key), static.
TESTS_AGENT_KEYPROBE := $(TESTS_BUILD)/agent/keyprobe
# A container that floods the agent with clients, one with idle threads,
# and their victim (flood-runc, storm-runc; tests/bench/tenantbench.sh).
TESTS_AGENT_TENANT := $(TESTS_BUILD)/agent/tenant
# rmbench, linked statically for the container (scripts/bench-agent.sh).
TESTS_AGENT_RMBENCH := $(TESTS_BUILD)/agent/rmbench

TEST_CLIENT_BINS := $(TESTS_ADV_BINS) $(TESTS_REPLAY_BIN) $(TESTS_SM_BIN) $(TESTS_SM_ESCAPE) $(TESTS_BENCH_BIN) $(TESTS_P2P_BIN) $(TESTS_LEDGER_BENCH) $(TESTS_QUIESCE_BENCH) $(TESTS_HOLD_BENCH) $(TESTS_PRIVTABLE_BENCH) $(TESTS_AGENT_HOLDER) $(TESTS_AGENT_COMPAT) \
                    $(TESTS_AGENT_PEER) $(TESTS_AGENT_MANAGED) $(TESTS_AGENT_ABANDON) $(TESTS_AGENT_SM) \
                    $(TESTS_AGENT_STACKSTALL) $(TESTS_AGENT_P2P) $(TESTS_AGENT_GPUNODE) $(TESTS_AGENT_UVMHOLD) \
                    $(TESTS_AGENT_UVMVICTIM) $(TESTS_AGENT_STALE) $(TESTS_AGENT_UVMCHANNEL) $(TESTS_AGENT_KEYPROBE) \
                    $(TESTS_AGENT_TENANT) $(TESTS_AGENT_RMBENCH) $(TESTS_AGENT_SECOND)

$(TESTS_BUILD)/lib/rmclient.o: tests/lib/rmclient.c $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) -c -o $@ $<

$(TESTS_BUILD)/lib/rm_tables.o: include/rm_tables.c $(TESTS_HDRS) $(wildcard include/nvrm/*.def include/nvrm/v*/*.def)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) -c -o $@ $<

$(TESTS_ADV_OBJ): tests/adv/adv.c $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) -c -o $@ $<

$(addprefix $(TESTS_BUILD)/adv/,$(TESTS_ADV_DYN)): $(TESTS_BUILD)/adv/%: tests/adv/%.c \
		$(TESTS_LIB_OBJ) $(TESTS_ADV_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -pthread -o $@ $< $(TESTS_ADV_OBJ) $(TESTS_LIB_OBJ)

$(addprefix $(TESTS_BUILD)/adv/,$(TESTS_ADV_STATIC)): $(TESTS_BUILD)/adv/%: tests/adv/%.c \
		$(TESTS_LIB_OBJ) $(TESTS_ADV_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -static -o $@ $< $(TESTS_ADV_OBJ) $(TESTS_LIB_OBJ)

$(TESTS_AGENT_HOLDER): tests/agent/holder.c $(TESTS_LIB_OBJ) $(TESTS_ADV_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -static -o $@ $< $(TESTS_ADV_OBJ) $(TESTS_LIB_OBJ)

$(TESTS_AGENT_KEYPROBE): tests/agent/keyprobe.c
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -static -o $@ $<

$(TESTS_AGENT_TENANT): tests/agent/tenant.c $(TESTS_LIB_OBJ) $(TESTS_ADV_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -static -pthread -o $@ $< $(TESTS_ADV_OBJ) $(TESTS_LIB_OBJ)

$(TESTS_AGENT_MANAGED): tests/adv/managed.c $(TESTS_LIB_OBJ) $(TESTS_ADV_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -static -o $@ $< $(TESTS_ADV_OBJ) $(TESTS_LIB_OBJ)

$(TESTS_AGENT_UVMHOLD): tests/adv/uvm_hold.c $(TESTS_LIB_OBJ) $(TESTS_ADV_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -static -pthread -o $@ $< $(TESTS_ADV_OBJ) $(TESTS_LIB_OBJ)

$(TESTS_AGENT_SECOND): tests/adv/second_client.c $(TESTS_LIB_OBJ) $(TESTS_ADV_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -static -pthread -o $@ $< $(TESTS_ADV_OBJ) $(TESTS_LIB_OBJ)

$(TESTS_AGENT_UVMCHANNEL): tests/adv/uvm_channel.c $(TESTS_LIB_OBJ) $(TESTS_ADV_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -static -pthread -o $@ $< $(TESTS_ADV_OBJ) $(TESTS_LIB_OBJ)

$(TESTS_AGENT_RMBENCH): tests/bench/rmbench.c $(TESTS_LIB_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -static -o $@ $< $(TESTS_LIB_OBJ)

$(TESTS_AGENT_P2P): tests/p2p/p2p_pairs.c $(TESTS_LIB_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -static -o $@ $< $(TESTS_LIB_OBJ)

$(TESTS_AGENT_ABANDON): tests/agent/abandon.c $(TESTS_LIB_OBJ) $(TESTS_ADV_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -static -o $@ $< $(TESTS_ADV_OBJ) $(TESTS_LIB_OBJ)

$(TESTS_AGENT_GPUNODE): tests/agent/gpunode.c $(TESTS_LIB_OBJ) $(TESTS_ADV_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -static -o $@ $< $(TESTS_ADV_OBJ) $(TESTS_LIB_OBJ)

$(TESTS_AGENT_UVMVICTIM): tests/agent/uvm_victim.c $(TESTS_LIB_OBJ) $(TESTS_ADV_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -static -o $@ $< $(TESTS_ADV_OBJ) $(TESTS_LIB_OBJ)

# The fake's client handle base is what it scans from (fake_rm.h).
$(TESTS_AGENT_STALE): tests/agent/stale_client.c $(TESTS_LIB_OBJ) $(TESTS_HDRS) tests/fakedrv/fake_rm.h
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) -Itests/fakedrv $(LDFLAGS) -o $@ $< $(TESTS_LIB_OBJ)

$(TESTS_AGENT_PEER): tests/agent/peer.c
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -o $@ $<

$(TESTS_AGENT_COMPAT): tests/adv/compat_i386.c $(TESTS_LIB_OBJ) $(TESTS_ADV_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -static -o $@ $< $(TESTS_ADV_OBJ) $(TESTS_LIB_OBJ)

$(TESTS_SM_BIN): tests/sm/sm_workload.c $(TESTS_LIB_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -pthread -o $@ $< $(TESTS_LIB_OBJ)

$(TESTS_SM_ESCAPE): tests/sm/sm_escape.c $(TESTS_LIB_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -o $@ $< $(TESTS_LIB_OBJ)

$(TESTS_AGENT_STACKSTALL): tests/agent/stackstall.c $(TESTS_LIB_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -static -o $@ $< $(TESTS_LIB_OBJ)

$(TESTS_AGENT_SM): tests/sm/sm_workload.c $(TESTS_LIB_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -static -pthread -o $@ $< $(TESTS_LIB_OBJ)

$(TESTS_P2P_BIN): tests/p2p/p2p_pairs.c $(TESTS_LIB_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -o $@ $< $(TESTS_LIB_OBJ)

$(TESTS_BENCH_BIN): tests/bench/rmbench.c $(TESTS_LIB_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -o $@ $< $(TESTS_LIB_OBJ)

$(TESTS_LEDGER_BENCH): tests/bench/ledgerbench.c supervisor/core/ledger/ledger.c supervisor/core/ledger/ledger_table.c supervisor/core/ledger/ledger_files.c \
		supervisor/core/ledger/ledger_pins.c supervisor/core/ledger/ledger_holds.c supervisor/core/ledger/ledger_snapshot.c supervisor/core/ledger/ledger_sm.c supervisor/core/ledger/ledger.h \
		supervisor/core/ledger/ledger_watch.h supervisor/core/ledger/ledger_pins.h supervisor/core/ledger/ledger_obj.h tests/bench/bench_util.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ tests/bench/ledgerbench.c supervisor/core/ledger/ledger.c supervisor/core/ledger/ledger_table.c \
		supervisor/core/ledger/ledger_files.c supervisor/core/ledger/ledger_pins.c supervisor/core/ledger/ledger_holds.c supervisor/core/ledger/ledger_snapshot.c supervisor/core/ledger/ledger_sm.c

# The benches of the quiesce (quiesce.c and what it calls, in process),
# with the test switches (quiescebench's GPUSANDBOX_TEST_QUIESCE_FULL_WALK).
QUIESCE_BENCH_SRCS := supervisor/core/tasks/quiesce.c supervisor/core/tasks/inject.c supervisor/core/tasks/sharers.c supervisor/core/tasks/proc_dir.c supervisor/core/tasks/taskset.c supervisor/core/tasks/taskset_cgroup.c supervisor/core/tasks/host_pids.c
$(TESTS_QUIESCE_BENCH) $(TESTS_HOLD_BENCH): $(TESTS_BUILD)/bench/%: tests/bench/%.c $(QUIESCE_BENCH_SRCS) \
		supervisor/core/tasks/quiesce.h supervisor/core/tasks/inject.h supervisor/core/tasks/taskset.h supervisor/core/tasks/host_pids.h tests/bench/bench_util.h \
		include/test_switch.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(GS_SWITCHES_CPPFLAGS) $(LDFLAGS) -pthread -o $@ $< $(QUIESCE_BENCH_SRCS)

$(TESTS_PRIVTABLE_BENCH): tests/bench/privtablebench.c $(CORE_SWITCHED_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(CORE_SWITCHED_OBJS) $(LDLIBS)

$(TESTS_REPLAY_BIN): tests/replay/replay.c $(TESTS_LIB_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -pthread -o $@ $< $(TESTS_LIB_OBJ)

.PHONY: test-clients
test-clients: $(TEST_CLIENT_BINS)

# The audit forger computes the log's hash chain with the supervisor's own
# SHA-256, as a workload could with any implementation.
TESTS_ADV_FORGE := $(TESTS_BUILD)/adv/audit_forge
TEST_CLIENT_BINS += $(TESTS_ADV_FORGE)
$(TESTS_ADV_FORGE): tests/adv/audit_forge.c supervisor/audit/sha256.c supervisor/audit/sha256.h \
		$(TESTS_LIB_OBJ) $(TESTS_ADV_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) -Isupervisor/audit $(LDFLAGS) -o $@ $< supervisor/audit/sha256.c \
		$(TESTS_ADV_OBJ) $(TESTS_LIB_OBJ)

# tests/audit's programs: a known call chain (compiled -O0 -g with frame
# pointers, so its refusal's stack names each function) and an
# allocation loop for the record counts and the per-call cost.
TESTS_AUDIT_BINS := $(TESTS_BUILD)/audit/stack_chain $(TESTS_BUILD)/audit/alloc_loop \
                    $(TESTS_BUILD)/audit/stack_hostile $(TESTS_BUILD)/audit/stack_fp
TEST_CLIENT_BINS += $(TESTS_AUDIT_BINS)
$(TESTS_BUILD)/audit/stack_chain: tests/audit/stack_chain.c $(TESTS_LIB_OBJ) $(TESTS_ADV_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) -O0 -g -fno-omit-frame-pointer -fno-inline $(LDFLAGS) -o $@ $< \
		$(TESTS_ADV_OBJ) $(TESTS_LIB_OBJ)
# stack_fp: callers without frame pointers, a wrapper with them (see the file).
$(TESTS_BUILD)/audit/stack_fp: tests/audit/stack_fp.c $(TESTS_LIB_OBJ) $(TESTS_ADV_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) -O1 -g -fomit-frame-pointer -fasynchronous-unwind-tables -fno-inline \
		$(LDFLAGS) -o $@ $< $(TESTS_ADV_OBJ) $(TESTS_LIB_OBJ)
$(TESTS_BUILD)/audit/stack_hostile: tests/audit/stack_hostile.c $(TESTS_LIB_OBJ) $(TESTS_ADV_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -o $@ $< $(TESTS_ADV_OBJ) $(TESTS_LIB_OBJ)
$(TESTS_BUILD)/audit/alloc_loop: tests/audit/alloc_loop.c $(TESTS_LIB_OBJ) $(TESTS_ADV_OBJ) $(TESTS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TESTS_CLIENT_CFLAGS) $(LDFLAGS) -o $@ $< $(TESTS_ADV_OBJ) $(TESTS_LIB_OBJ)
