#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/agent/run.sh [CASE...] - `gpusandbox agent` and `gpusandbox profile`
# with real OCI runtimes (runc, crun) against the fake driver.
#
# Each case runs in its own with-fake-nvidia (a fresh fake, so its stats are
# the case's alone): a busybox-static rootfs holding the static clients
# (tests/adv static_raw, tests/agent holder), the fake's files bind-mounted
# as /dev/nvidia* of the container, the profile from `gpusandbox profile`,
# the agent on a socket with a policy of mem = 1g. Every case is judged by
# the FAKE DRIVER's account (GS_FAKE_STATS), never by the agent's word, and
# every defence has a baseline-* case showing the attack succeeds without
# it (no profile: the runtime never hands the listener to anyone).
#
#   quota-R           static_raw in a container: the fake's peak stays at 1 GiB;
#                     the container's audit log ends with a summary in which
#                     every charge was released, and its refusal's call
#                     stack (read in the container's root) names main
#   exec-R            init holds 768 MiB; `R exec` static_raw gets 256 MiB more
#                     at most (one sandbox, one quota for both)
#   noagent-R         profile names a socket nobody serves: the container is
#                     not created and nothing reaches the fake
#   keyring-R         (R: runc, crun, podman) the profile of `gpusandbox
#                     profile` without --base keeps the runtimes' default
#                     refusals: the container's add_key (tests/agent
#                     keyprobe) fails with the default's EPERM, and its
#                     static_raw stays within the quota.
#                     baseline-keyring-R: the profile made on an allow-all
#                     base (what `gpusandbox profile` wrote before):
#                     add_key runs
#   podmanbase-podman --base podman's own default profile (archMap, includes):
#                     podman takes the profile (before, it refused one with
#                     both archMap and architectures), add_key fails with
#                     podman's ENOSYS, static_raw within the quota
#   agentkill-R       the agent is SIGKILLed while the container holds memory:
#                     its later calls fail with ENOSYS and none reaches the fake
#   stale-R           a profile whose trap set is not the agent's: refused,
#                     the container killed before any allocation
#   i386-R            tests/adv compat_i386: 512 MiB natively, then 256 MiB
#                     chunks through the i386 and x32 ABIs: the peak stays
#                     at 1 GiB (the profile lists and traps every ABI)
#   two-runc          two containers at once under one agent, each holding
#                     768 MiB then asking for 512 MiB more: one quota each
#                     (each gets 256 MiB more; the fake's peak is 1.5 to 2 GiB),
#                     both sandboxes torn down afterwards; while both hold
#                     768 MiB, the agent's --metrics-file is a valid
#                     exposition naming both containers, whose memory adds
#                     up to the fake's
#   gpunode-runc      a fake of two GPUs with --gpu-node-check (the driver's
#                     nv_is_gpu_accessible): container A (nvidiactl, nvidia0)
#                     keeps making devices on GPU 0, so the agent keeps
#                     borrowing its nvidia0; container B (nvidiactl, nvidia1)
#                     tries devices on GPU 0 for 4 s and at least
#                     GPUNODE_MIN_ATTEMPTS times meanwhile: the fake
#                     grants B none (device_unentitled_grants 0, B refused
#                     with INSUFFICIENT_PERMISSIONS). Its baseline runs the
#                     agent with GPUSANDBOX_TEST_SHARED_TABLE_DEVICE_ALLOC
#                     (device allocations made in the agent's shared fd
#                     table with the borrow, as before any defence): B wins
#                     (it stops at the first win; judged by
#                     device_unentitled_grants >= 1)
#   gpunode-stall-runc  container A (nvidiactl, nvidia0) makes an RM_CONTROL on
#                     its nvidia0 fd whose NVOS54 lies in a page mapped from
#                     tests/sm/stallfs (bind-mounted in; reads answer only
#                     when the harness releases them, GPUNODE_STALL_MS
#                     capping a hang), so the agent's worker for A waits in
#                     its read of A's memory holding its dup of A's nvidia0;
#                     once the read is stalling (stallfs's mark), container
#                     B (nvidia1) makes GPUNODE_OWN devices on its own GPU
#                     and a client on a fresh control file: all done before
#                     A's call returns (stallfs had not answered, A's mark
#                     still absent and the fake's device_node_grants at
#                     least GPUNODE_OWN when B ends; B's end time before
#                     A's, one clock); then the read is released: an
#                     order, no duration. Against an agent with
#                     the process-wide GPU-node lock (main before the private
#                     table; GPUSANDBOX=that binary) B waits out A's stall
#                     and the case fails
#   named-runc        a profile naming policy "small" (512m) in --policy-dir:
#                     that quota, not the default's 1 GiB
#   unnamed-runc      a profile naming a policy the node lacks: refused,
#                     the container killed before any allocation
#   sysadmin-R        a container whose bounding set has CAP_SYS_ADMIN (the
#                     driver would trust it): killed before any call reaches
#                     the driver
#   peers-runc        hostile peers hold connections to the agent (one sends
#                     nothing, one trickles a byte every 100 ms, one sends
#                     garbage, one an endless state): a container started
#                     meanwhile runs under its quota, and finishes while the
#                     silent and trickling peers are still held (each peer's
#                     own clock says how long the agent kept it: about the
#                     5 s hello timeout; the huge one was cut at the size bound)
#   k8s-runc          a container whose config.json carries containerd's
#                     annotations (io.kubernetes.cri.*, and a CRI-O key that
#                     must lose to them): its audit log is
#                     POD_NAMESPACE_CONTAINER-ID.jsonl and its start record's
#                     labels name the pod, namespace, uid, container and id
#   k8scrio-runc      CRI-O's annotations (io.kubernetes.pod.*), one of them
#                     ("../x") not a plain name: that one is left out and
#                     the log is ID.jsonl in the audit dir, nowhere else
#   managed-R         a policy with managed = deny, its profile made with
#                     --policy: tests/adv's managed in the container gets
#                     EPERM for every mmap shaped like a UVM mapping and for
#                     remap_file_pages, OK for other shared mappings; its
#                     i386 calls are killed (the profile leaves x86 out: the
#                     old mmap hides its arguments); the refusals audited
#   baseline-managed-R  no profile: the UVM-shaped mappings and remap reach the
#                     device (the fake's FUSE file answers ENODEV), never EPERM
#   p2panswer-runc    a named policy with p2p-register = answer: the
#                     container's CUDA-shaped pairs (tests/p2p's p2p_pairs)
#                     all see NV_OK, the fake performs none of their
#                     registrations, the start record says "answer"
#   p2pperform-runc   the baseline: a named policy with p2p-register =
#                     perform, the fake performs every registration
#   p2pdefault-runc   the default policy (no p2p group: p2p-register auto
#                     is none): the container's P2P object is answered
#                     NV_ERR_NOT_SUPPORTED, the fake makes none and
#                     performs no registration, the pairs still run
#   uvmhold-runc      tests/adv's uvm_hold free in the container: 768 MiB
#                     mapped through UVM (the profile traps the map), its
#                     handle freed, 768 MiB again: the fake never holds
#                     more than 1 GiB, and the second allocation fits (the
#                     agent took the mapping back). baseline-uvmhold-runc:
#                     no profile, no agent: the fake holds 1.5 GiB
#   asuser-runc       uvm_hold free in a container with a user namespace of
#                     its own (uid 0 in it is USERNS_HOST_UID on the host),
#                     the agent started with --uvm-map as-user: the maps
#                     made as that uid (by the fake: one OS_SECURITY_TOKEN
#                     share made, no client of the agent's), the quota
#                     held and the mapping taken back as under uvmhold
#   asuser-hostns-runc  the same agent, a container in the host's user
#                     namespace: its maps go by dup (no token policy; the
#                     agent's client made), said on the agent's stderr
#   uvmchannel-runc   tests/adv's uvm_channel free in the container, under a
#                     policy of 4 channel groups (the profile traps
#                     UVM_REGISTER_CHANNEL): 8 groups made, their channels
#                     registered with UVM, the groups freed: the fake never
#                     holds more than 4.
#                     baseline-uvmchannel-runc: no profile, no agent: the
#                     fake holds all 8
#   asuserchannel-runc  uvmchannel-runc's case in asuser-runc's container
#                     and agent: the groups let go, and every registration
#                     made by the agent as the container's uid (the fake's
#                     uvm_channel_registrations_by_other: 8)
#   uvmrestart-runc   uvm_hold free across an agent restart: 768 MiB mapped
#                     through UVM by the agent, which is then SIGKILLed and
#                     started again on the keeper; the workload frees the
#                     handle (UVM still holds the memory) and asks for 768
#                     MiB more: refused (NO_MEMORY), the fake never holds
#                     more than 1 GiB; the resumed agent says it keeps the
#                     pin. An agent that does not journal pins (GPUSANDBOX=
#                     a build before 43fa56d) grants it: the fake holds
#                     1.5 GiB
#   uvmkill-runc      uvm_hold intr: the agent SIGKILLed while the fake
#                     performs the map of A (768 MiB), and the mapper then
#                     gives its call up (SIGUSR1, no SA_RESTART: EINTR),
#                     so the next agent has no call to answer; the fake
#                     has made the mapping. The resumed agent rebuilds the
#                     pin taken before the map, so after A's handle is
#                     freed B (768 MiB) is refused: the fake never holds
#                     more than 1 GiB.
#                     baseline-uvmkill-runc: no pin while the driver maps
#                     (GPUSANDBOX_TEST_NO_PIN_IN_FLIGHT): B is granted and
#                     the fake holds 1.5 GiB
#   stalehandle-runc  the container's video memory mapped through UVM (the
#                     agent shares it with its own client to map it), the
#                     agent SIGKILLed and started again on the keeper (its
#                     client dead, the container alive); then
#                     tests/agent's stale_client on the host, outside any
#                     sandbox, takes every free client handle from the
#                     fake's base and tries to dup the container's memory
#                     into each client: by the fake, once the agent
#                     answered the map no CLIENT share policy was left on
#                     any memory and one on the container's client object
#                     (the agent's one share per client, kept), every dup
#                     is refused (INSUFFICIENT_PERMISSIONS: the policy's
#                     client is held by the keeper), the scan covered
#                     every client handle the fake handed out, and the
#                     memory goes with the container's handle.
#                     baseline-stalehandle-runc: the agent never revokes a
#                     per-memory share (GPUSANDBOX_TEST_KEEP_SHARE; the
#                     client share is never revoked while the client
#                     lives) nor hands its own client to the keeper (see
#                     stalekill): the attacker's
#                     client at the dead client's handle dups the memory,
#                     and the fake still holds it after the container freed
#                     its handle and exited
#   stalestop-runc    the same container; the agent stopped (SIGTERM) while
#                     it performs the map (the fake sleeps in it) and started
#                     again on the keeper: by the fake, once the agent has
#                     exited (it let the call in flight finish) no CLIENT
#                     share policy on any memory, one on the container's
#                     client object naming the agent's client, which the
#                     keeper holds, and the attacker's dups are refused
#   stalekill-runc    the same container; the agent SIGKILLed while it
#                     performs the map (the fake sleeps in it), so between
#                     the share and its revoke: by the fake, a CLIENT
#                     share policy outlives the dead agent; before another
#                     agent starts, the attacker scans as in stalehandle:
#                     the policy's client is still held (the keeper holds
#                     the agent's own client), every dup is refused, and
#                     the resumed agent answers the map and lets the
#                     memory go with the container's handle.
#                     baseline-stalekill-runc: the agent does not hand its
#                     client to the keeper (GPUSANDBOX_TEST_OWN_CLIENT_
#                     UNKEPT): the attacker's client at the dead client's
#                     handle dups the memory and holds it after the
#                     container exits
#   mmapless-runc     the same policy with a profile made without --policy
#                     (no mmap traps): refused, the container killed
#   restart-runc      the agent, started with --keeper, is SIGKILLed while it
#                     performs the init's first allocation (the fake sleeps
#                     in it) and started again on the same keeper: the
#                     call completes once (the fake holds exactly the three
#                     chunks asked for: the dead agent's object freed, the
#                     call performed again), an exec'd process gets the one
#                     chunk left under 1 GiB, the init one more then
#                     NO_MEMORY; one sandbox, resumed; the audit log one
#                     intact chain. baseline-restart-runc: the same
#                     without a keeper: ENOSYS, and a fresh quota for the
#                     exec'd process (the fake holds more than 1 GiB)
#   restartrelease-runc  an exec'd process holding 512 MiB exits while no
#                     agent runs: the restarted agent takes the clients'
#                     release watches back from the keeper and releases its
#                     charge (the init then gets 768 MiB more, by the fake)
#   restartstale-runc the state the keeper holds names another trap set (as
#                     an agent of another version writes it): the restarted
#                     agent kills the container; nothing more reaches the fake
#   keeperkill-runc   the keeper killed, then the agent: the container's
#                     later calls fail with ENOSYS, none reaches the fake
#   keeperpeer-runc   peers of another uid (HELLO, DROP of the container)
#                     and root peers sending garbage or a wrong magic with
#                     fds get nothing from the keeper; the agent restarted
#                     after them resumes the container with its charges
#   abandon-runc      runc 1.1 (no WAIT_KILLABLE_RECV): the task is signalled
#                     while the agent performs its first allocation (the
#                     fake sleeps in it); the kernel drops the notification
#                     and the task retries. The agent frees the object the
#                     task never received: the retry succeeds, and once the
#                     task has freed every handle it was given the fake
#                     holds no video memory; the undo is audited
#   midcall-runc      the agent is SIGKILLed while it performs the container's
#                     first allocation (the fake sleeps in it; its stats file
#                     cannot be read meanwhile, which is how the harness knows
#                     the call is in flight): the task gets ENOSYS, the call
#                     completes in the driver (the fake's peak is that one
#                     chunk), nothing more reaches the fake, and the chunk is
#                     released with the container's file. Without a keeper the
#                     agent does not survive restarts; this is the fail-closed
#                     half. baseline-midcall-runc: without the profile every
#                     call reaches the driver
#   quota-podman      quota-R through podman 4.3 (--rootfs, --runtime runc,
#                     --security-opt seccomp=PROFILE): podman passes the
#                     profile's listenerPath through; baseline-quota-podman
#                     without the profile exceeds the quota
#   quota-containerd  quota-R through Debian's containerd 1.6 (a daemon of the
#                     case's own, CRI plugin off) and `ctr run --rootfs
#                     --seccomp --seccomp-profile PROFILE` (runc underneath):
#                     containerd reads the profile into the OCI spec with its
#                     listenerPath; baseline-quota-containerd without the
#                     profile exceeds the quota. keyring-containerd and its
#                     baseline as keyring-R
#   killable-crun     crun with SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#   runc-flags        runc 1.1.5 refuses the flag (why it is an option)
#   flood-runc        (issue #32) an attacker container makes 2500 clients,
#                     each on a file of its own and used once, under an
#                     agent started with a soft open-file limit of 1024 and
#                     a hard one of 4096: the agent raises its limit (its
#                     log), the fake counts 1024 clients for the attacker
#                     (then INSUFFICIENT_RESOURCES: the default bound), and
#                     a victim container beside it makes its 3 clients and
#                     2 pairs of 2 MiB. baseline-flood-runc: the policy
#                     lifts the bounds (clients, files = unlimited) and the
#                     soft limit is the hard one: the attacker gets more
#                     than 1024 and the victim is not served
#   storm-runc        an attacker holds 2000 idle threads while a victim
#                     makes 20 clients: none of the victim's searches for
#                     its fd table's sharers compares more than its own
#                     tasks (the agent's teardown line, most_in_one) nor
#                     walks the host; the victim is served.
#                     baseline-storm-runc: GPUSANDBOX_TEST_QUIESCE_FULL_WALK,
#                     a search compares every attacker thread
#   objects-runc      a named policy of objects = 64: the container's
#                     video memory objects are refused with
#                     INSUFFICIENT_RESOURCES once it holds 64 (the fake
#                     holds at most 64 objects; the refusal audited).
#                     baseline-objects-runc: the agent's default bound, all
#                     100 made
#   second-crun       tests/adv's second_client in a container (crun, its
#                     profile with --wait-killable): client A and 512 MiB
#                     under it, client B on A's file (made by the caller
#                     from the agent's page, by injection) and 512 MiB
#                     under B; 256 MiB more under A refused (NO_MEMORY): by
#                     the fake, peak 1 GiB and 2 clients at once; a dup of
#                     A's memory into B passes the fake's same-process
#                     policy; B freed, a third client made.
#                     baseline-second-crun: the agent without its receiver
#                     of the injection (GPUSANDBOX_TEST_AGENT_NO_INJECT, as
#                     main was): B refused (NOT_SUPPORTED), 1 client
#   secondbusy-crun   second_client clients (three clients on A's file, each
#                     injection held 200 ms by GPUSANDBOX_TEST_INJECT_DELAY_US)
#                     and static_raw started beside it in the same
#                     container (one listener): the receiver of an
#                     injection keeps static_raw's calls and the worker
#                     serves them after (the agent's teardown line: calls
#                     kept >= 1); all three clients made, static_raw held
#                     to the quota (the fake's peak 1 GiB, NO_MEMORY)
#   secondflip-crun   second_client flip proc in a container: the struct of
#                     an RM_ALLOC flips between a client and 1 GiB under
#                     client A (768 MiB held), written by another process
#                     that maps the same page, SECONDFLIP_TRIES times with
#                     the agent's look widened (GPUSANDBOX_TEST_LOOK_DELAY_US):
#                     the client flips go the injected way (audited), the
#                     fake's peak stays within 1 GiB.
#                     baseline-secondflip-crun: a second client continued
#                     from the workload's struct
#                     (GPUSANDBOX_TEST_SECOND_CLIENT_CONTINUE): a flip to
#                     1 GiB under A wins, the fake's peak passes 1 GiB
#   secondnokill-runc second_client under runc 1.1, whose filter has no
#                     WAIT_KILLABLE_RECV: the injection's interrupt may end
#                     the caller's wait (its call restarted); the agent then
#                     says so and refuses second clients on that listener
#                     from then on, so B is refused (NOT_SUPPORTED, 1 client
#                     by the fake) instead of being lost at every retry.
#                     Where our answer reaches the caller first, B is made
#                     by injection (2 clients, audited). Either way the
#                     container ends
#   injectkept-crun   second_client clients with static_raw beside it (as
#                     secondbusy), each injection held 3 s; the agent (with
#                     a keeper) SIGKILLed while the receiver keeps a call of
#                     static_raw's: the restarted agent answers it from its
#                     state slot ("answered the call the previous agent had
#                     in flight"), static_raw ends held to the quota (the
#                     fake's peak 1 GiB, NO_MEMORY), the injection's caller
#                     killed with the agent.
#                     baseline-injectkept-crun: the kept calls not recorded
#                     (GPUSANDBOX_TEST_INJECT_KEPT_UNRECORDED): static_raw
#                     never gets its answer (it has not ended when the
#                     harness gives up on it)
#   injectkill-crun   the agent (with a keeper) SIGKILLed while it injects a
#                     second client (GPUSANDBOX_TEST_INJECT_DELAY_US holds
#                     the caller stopped after the page is written): the
#                     caller dies with its tracer (PTRACE_O_EXITKILL: its
#                     shell sees 137, it printed nothing after the call),
#                     no second client by the fake; the agent started
#                     again on the keeper serves the container, whose next
#                     process gets the quota (the fake's peak stays 1 GiB).
#                     baseline-injectkill-crun: without EXITKILL
#                     (GPUSANDBOX_TEST_INJECT_NO_EXITKILL) the caller runs
#                     on from the registers it was left with: its ioctl
#                     returns the page's address, neither 0 nor -errno
#   bench-runc        only when named (tests/bench/tenantbench.sh): figures
#
# R is runc and crun. A runtime that is not installed is skipped (said so);
# with neither, the tier exits 125 (SKIP) like the other tiers.
# Prints PASS/FAIL per case and "N passed, M failed" last. GS_AGENT_KEEP=1
# keeps the work folder (/tmp/gs-agent.*) for reading.
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
# GPUSANDBOX: another build to test (e.g. an older one, to see a case fail).
GS=${GPUSANDBOX:-$ROOT/build/gpusandbox}
# GPUSANDBOX_SWITCHED: the test build, which alone honours the
# GPUSANDBOX_TEST_* switches (include/test_switch.h): the agent of a case
# that sets one (AGENT_ENV, the baselines) is this one.
GS_SWITCHED=${GPUSANDBOX_SWITCHED:-$ROOT/build/switches/gpusandbox}
HOLDER=$ROOT/build/tests/agent/holder
PEER=$ROOT/build/tests/agent/peer
MANAGED=$ROOT/build/tests/agent/managed
ABANDON=$ROOT/build/tests/agent/abandon
P2P=$ROOT/build/tests/agent/p2p_pairs
UVMHOLD=$ROOT/build/tests/agent/uvm_hold
UVMCHANNEL=$ROOT/build/tests/agent/uvm_channel
UVMVICTIM=$ROOT/build/tests/agent/uvm_victim
STALE=$ROOT/build/tests/agent/stale_client
KEYPROBE=$ROOT/build/tests/agent/keyprobe
# podman's own default profile, the --base of podmanbase-podman.
PODMAN_DEFAULT_PROFILE=/usr/share/containers/seccomp.json
STALE_SCAN=512          # client handles the attacker tries from the fake's base
NV_ERR_INSUFFICIENT_PERMISSIONS=0x1b  # include/nvrm_abi.h
STOP_MAP_SLEEP_MS=1500  # stalestop-runc: the fake's map, during which the agent is stopped
P2P_PAIRS=10
# asuser-runc: the container's uid 0 on the host, and its range's size.
USERNS_HOST_UID=200000
USERNS_SIZE=65536
GPUNODE=$ROOT/build/tests/agent/gpunode
GPUNODE_RACE_MS=4000    # B's device attempts on GPU 0 (the baseline wins in well under 1 s)
GPUNODE_PAD=400         # A's fds above its nvidia0: each borrow holds it through 400 reads
GPUNODE_MIN_ATTEMPTS=100
GPUNODE_STALL_MS=45000  # gpunode-stall-runc: a hang's cap on A's stalled read
                        # (the harness releases it once B ended)
GPUNODE_STALL_IN=/stall # where A's bundle binds the stalling file
GPUNODE_OWN=20          # B's devices on its own GPU during the stall
# make_bundle's BUNDLE_EXTRA for container B: GPU 1's node where A has GPU 0's.
ONLY_NVIDIA1='.mounts |= map(if .destination == "/dev/nvidia0"
	then .destination = "/dev/nvidia1" | .source = ($m + "/nvidia1") else . end)'
STALLFS=$ROOT/tests/sm/stallfs
ABANDON_SLEEP_MS=1500   # the fake's first allocation
ABANDON_SIGNAL_MS=400   # the signal, well inside it
COMPAT=$ROOT/build/tests/agent/compat_i386
STATIC_RAW=$ROOT/build/tests/adv/static_raw
WITH_FAKE=$ROOT/tests/fakedrv/with-fake-nvidia
TENANT=$ROOT/build/tests/agent/tenant
# flood-runc: the agent's open-file limits (soft as systemd gives a
# service, hard as the case's node allows), the attacker's clients (each
# on a file of its own: two of the agent's fds apiece unbounded, so
# 2 x FLOOD_CLIENTS > FLOOD_HARD, while a container at the default bounds,
# 1024 clients and 2048 files, fits with room to spare) and its own limit.
FLOOD_SOFT=1024
FLOOD_HARD=4096
FLOOD_CLIENTS=2500
FLOOD_DEFAULT_CLIENTS=1024  # GS_AGENT_DEFAULT_CLIENTS (agent_limits.h)
FLOOD_RLIMIT='.process.rlimits = [{ type: "RLIMIT_NOFILE", hard: 8192, soft: 8192 }]'
FLOOD_WAIT_STEPS=3000       # x 0.02 s: the flood's clients, on a loaded machine
VICTIM_CLIENTS=3
VICTIM_PAIRS=2
# storm-runc: the attacker's idle threads, the victim's clients; the most
# tasks one of the victim's searches may compare (its own: it has one).
STORM_THREADS=2000
STORM_CLIENTS=20
STORM_OWN_MAX=4
# objects-runc: the bound a named policy sets, the objects the container
# tries (2 MiB each, well under mem = 1g).
OBJECTS_BOUND=64
OBJECTS_TRIED=100
OBJECTS_SESSION=3       # the client, device and subdevice its session holds first
BENCH_CLIENTS=20        # bench-runc's victim
BENCH_PAIRS=50
SECOND=$ROOT/build/tests/agent/second_client
INJECTKILL_DELAY_US=3000000  # the caller held after the page is written ...
INJECTKILL_AT=0.5            # ... and the agent killed this far into it (s)
BUSY_DELAY_US=200000         # secondbusy-crun: each injection held this long
SECONDFLIP_TRIES=300         # secondflip-crun: the flipped calls (tests/adv: 600)
SECONDFLIP_LOOK_US=50000     # the look's window, widened as tests/adv does
# The flipper: another process mapping the page (proc), or, by hand only,
# a thread (thread: its baseline is not reliably sensitive, tests/adv).
SECONDFLIP_HOW=${SECONDFLIP_HOW:-proc}
SKIP=125
QUOTA=$((1024 << 20))
CHUNK=$((256 << 20))
CASE_TIMEOUT=60
WAIT_STEPS=250          # x 0.02 s: 5 s for a socket, a file, a state
. tests/agent/lib.sh
FAKE_VIDMEM=16g
PEER_HELD_MS=4000       # the agent's hello timeout is 5 s (agent_conn.h)
PEER_HUGE_MAX=$((8 << 20))  # the state's bound is 1 MiB, plus socket buffers

# One case inside one with-fake-nvidia (inside NAME RUNTIME).
. tests/agent/inside.sh

if [ "${1:-}" = --inside ]; then
	shift
	inside "$@"
	exit 0
fi

# ---- outside: set up, run the cases, judge by the fake's stats ------------

skip() { echo "agent: SKIP: $*"; exit "$SKIP"; }
[ "$(id -u)" = 0 ] || skip "needs root (runtimes, FUSE fake driver)"
command -v jq >/dev/null || skip "jq is not installed (scripts/install-deps.sh)"
BUSYBOX=$(command -v busybox)
# Static: the rootfs has no loader (readelf is binutils', in build-essential).
if [ -z "$BUSYBOX" ] || readelf -l "$BUSYBOX" 2>/dev/null | grep -q INTERP; then
	skip "busybox-static is not installed (scripts/install-deps.sh)"
fi
for f in "$GS" "$GS_SWITCHED" "$SECOND" "$TENANT" "$STALLFS" "$HOLDER" "$STATIC_RAW" "$COMPAT" "$PEER" "$MANAGED" "$ABANDON" "$P2P" "$GPUNODE" "$UVMHOLD" "$UVMVICTIM" "$STALE" "$UVMCHANNEL" "$KEYPROBE"; do
	[ -x "$f" ] || { echo "agent: $f is not built (make all tests)"; exit 2; }
done
RUNTIMES=""
for r in runc crun; do
	if command -v "$r" >/dev/null; then
		RUNTIMES="$RUNTIMES $r"
	else
		echo "agent: $r is not installed: its cases are skipped"
	fi
done
[ -n "$RUNTIMES" ] || skip "neither runc nor crun is installed (scripts/install-deps.sh)"

tmp=$(mktemp -d /tmp/gs-agent.XXXXXX)
# An agent killed in a case leaves its containers' logs append-only
# (supervisor/audit/audit_guard.h): the flags come off before the removal.
trap '[ -n "${GS_AGENT_KEEP:-}" ] || { command -v chattr >/dev/null && find "$tmp" -name '*.jsonl' -type f -exec chattr -f -a {} + 2>/dev/null; rm -rf "$tmp"; }' EXIT
ROOTFS=$tmp/rootfs
# Traversable by a container's uid that is not the host's root
# (asuser-runc's user namespace); nothing in it is listed by others.
chmod 0711 "$tmp"
mkdir -p "$ROOTFS"/bin "$ROOTFS"/dev "$ROOTFS"/proc "$ROOTFS"/sys "$ROOTFS"/tmp
cp "$BUSYBOX" "$ROOTFS/bin/busybox"
for a in sh sleep cat echo; do ln -s busybox "$ROOTFS/bin/$a"; done
cp "$STATIC_RAW" "$SECOND" "$TENANT" "$HOLDER" "$COMPAT" "$MANAGED" "$ABANDON" "$P2P" "$GPUNODE" "$UVMHOLD" "$UVMVICTIM" "$UVMCHANNEL" "$KEYPROBE" \
	"$ROOTFS/bin/"

passed=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; for f in err agent.err exec.err; do [ -s "$dir/$f" ] && sed 's/^/    /' "$dir/$f" | tail -5; done; failed=$((failed + 1)); }
st() { awk -v k="$2" '$1 == k { print $2 }' "$1/stats" 2>/dev/null; }
val() { grep -oE "(^|[ (])$2=[^ )]*" "$1" 2>/dev/null | tail -1 | sed 's/^.*=//'; }

run_case() {  # run_case NAME RUNTIME
	dir=$tmp/$1
	mkdir -p "$dir"
	local fake_extra=()
	case "$1" in *gpunode-runc|gpunode-stall-runc) fake_extra=(--gpus 2 --gpu-node-check) ;; esac
	# The stalling file system, mounted before the fake (whose mount
	# namespace, and so the containers', copies the mounts).
	local stallfs_pid=
	if [ "$1" = gpunode-stall-runc ]; then
		mkdir -p "$dir/mnt" "$dir/stallstate"
		"$STALLFS" "$dir/mnt" "$GPUNODE_STALL_MS" "$dir/stallstate" 2>"$dir/stallfs.err" &
		stallfs_pid=$!
		wait_for -e "$dir/mnt/stall" || { fail "$1" "stallfs did not come up"; return 1; }
	fi
	case "$1" in abandon-runc|midcall-runc|baseline-midcall-runc|restart-runc|baseline-restart-runc) fake_extra=(--alloc-sleep-ms "$ABANDON_SLEEP_MS") ;; esac
	case "$1" in stalestop-runc|stalekill-runc|baseline-stalekill-runc|uvmkill-runc|baseline-uvmkill-runc) fake_extra=(--map-sleep-ms "$STOP_MAP_SLEEP_MS") ;; esac
	GS_FAKE_STATS_OUT=$dir/stats timeout "$CASE_TIMEOUT" "$WITH_FAKE" --vidmem "$FAKE_VIDMEM" "${fake_extra[@]}" -- \
		"$0" --inside "$1" "$2" "$dir" "$ROOTFS" >"$dir/harness.out" 2>&1
	local rc=$?
	if [ -n "$stallfs_pid" ]; then
		fusermount3 -u "$dir/mnt" 2>/dev/null || umount -l "$dir/mnt" 2>/dev/null
		wait "$stallfs_pid" 2>/dev/null
	fi
	[ "$rc" = "$SKIP" ] && { echo "agent: SKIP: $(tail -1 "$dir/harness.out")"; exit "$SKIP"; }
	[ -s "$dir/stats" ] || { fail "$1" "no stats from the fake (harness exit $rc)"; return 1; }
	return 0
}

# The verdict on each case (judge NAME RUNTIME).
. tests/agent/judge.sh

want() {  # want NAME: selected by the command line?
	[ ${#SELECTED[@]} -eq 0 ] && return 0
	local s
	for s in "${SELECTED[@]}"; do [ "$s" = "$1" ] && return 0; done
	return 1
}
SELECTED=("$@")

for r in $RUNTIMES; do
	for c in quota baseline-quota exec baseline-exec noagent agentkill baseline-agentkill stale i386 baseline-i386 sysadmin baseline-sysadmin managed baseline-managed keyring baseline-keyring; do
		name=$c-$r
		want "$name" || continue
		run_case "$name" "$r" && judge "$name" "$r"
	done
done
if command -v podman >/dev/null && case " $RUNTIMES " in *" runc "*) true ;; *) false ;; esac; then
	for name in quota-podman baseline-quota-podman keyring-podman baseline-keyring-podman podmanbase-podman; do
		want "$name" && run_case "$name" podman && judge "$name" podman
	done
else
	echo "agent: podman (or runc under it) is not installed: its cases are skipped"
fi
# containerd is only this tier's: installed here when missing.
scripts/install-test-pkgs.sh containerd >/dev/null 2>&1 ||
	echo "agent: containerd could not be installed (scripts/install-test-pkgs.sh)"
if command -v containerd >/dev/null && command -v ctr >/dev/null &&
	case " $RUNTIMES " in *" runc "*) true ;; *) false ;; esac; then
	for name in quota-containerd baseline-quota-containerd keyring-containerd baseline-keyring-containerd; do
		want "$name" && run_case "$name" containerd && judge "$name" containerd
	done
else
	echo "agent: containerd (or ctr, or runc under it) is not installed: its cases are skipped"
fi
case " $RUNTIMES " in *" crun "*)
	for name in killable-crun second-crun baseline-second-crun secondbusy-crun secondflip-crun baseline-secondflip-crun injectkept-crun baseline-injectkept-crun injectkill-crun baseline-injectkill-crun; do
		want "$name" && run_case "$name" crun && judge "$name" crun
	done ;;
esac
case " $RUNTIMES " in *" runc "*)
	for name in secondnokill-runc flood-runc baseline-flood-runc storm-runc baseline-storm-runc objects-runc baseline-objects-runc runc-flags gpunode-runc baseline-gpunode-runc gpunode-stall-runc two-runc named-runc unnamed-runc p2panswer-runc p2pperform-runc p2pdefault-runc uvmhold-runc baseline-uvmhold-runc asuser-runc asuser-hostns-runc asuserchannel-runc uvmchannel-runc baseline-uvmchannel-runc uvmrestart-runc uvmkill-runc baseline-uvmkill-runc stalehandle-runc baseline-stalehandle-runc stalestop-runc stalekill-runc baseline-stalekill-runc peers-runc k8s-runc k8scrio-runc mmapless-runc abandon-runc midcall-runc baseline-midcall-runc restart-runc baseline-restart-runc restartrelease-runc restartstale-runc keeperkill-runc keeperpeer-runc; do
		want "$name" && run_case "$name" runc && judge "$name" runc
	done ;;
esac

# tests/bench/tenantbench.sh's figures: only when named.
case " ${SELECTED[*]-} $RUNTIMES " in *" bench-runc "*" runc "*) run_case bench-runc runc && judge bench-runc runc ;; esac

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
