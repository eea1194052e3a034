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

# ---- inside one with-fake-nvidia: one case --------------------------------



# bundle ARGS_JSON PROFILE(or "") : $D/bundle/config.json for runtime $RT
make_bundle() {
	local args=$1 profile=$2 seccomp=null
	mkdir -p "$D/bundle" "$D/ctmp"
	(cd "$D/bundle" && "$RT" spec 2>/dev/null) || (cd "$D/bundle" && runc spec) || return 1
	[ -n "$profile" ] && seccomp=$(cat "$profile")
	jq --argjson args "$args" --argjson sc "$seccomp" --arg m "$GS_FAKE_MOUNT" \
		--arg root "$ROOTFS" --arg tmp "$D/ctmp" '
		.process.terminal = false | .process.args = $args |
		.root = { path: $root, readonly: true } |
		.mounts += [ { destination: "/tmp", type: "bind", source: $tmp, options: ["rbind", "rw"] } ] +
		           [ "nvidiactl", "nvidia0", "nvidia-uvm" |
		             { destination: ("/dev/" + .), type: "bind", source: ($m + "/" + .), options: ["bind"] } ] |
		if $sc == null then del(.linux.seccomp) else .linux.seccomp = $sc end |
		'"${BUNDLE_EXTRA:-.}" \
		"$D/bundle/config.json" >"$D/config.new" && mv "$D/config.new" "$D/bundle/config.json"
}

start_agent() {
	printf 'mem = 1g\n%s' "${AGENT_POLICY_EXTRA:-}" >"$D/policy"
	mkdir -p "$D/policies"
	printf 'mem = 512m\n' >"$D/policies/small.policy"
	# A restarted agent appends to the same log (stop_agent counts it),
	# and is waited for by its own socket, not a dead one's.
	rm -f "$SOCK"
	local gs=$GS
	[ -n "${AGENT_ENV:-}" ] && gs=$GS_SWITCHED
	# shellcheck disable=SC2086 # AGENT_ARGS: words of options
	${AGENT_WRAP:-} ${AGENT_ENV:+env $AGENT_ENV} "$gs" agent --socket "$SOCK" --policy "$D/policy" --policy-dir "$D/policies" --audit-dir "$D" \
		--metrics-file "$D/agent.prom" ${KEEPER:+--keeper "$KSOCK"} ${AGENT_ARGS:-} 2>>"$D/agent.err" &
	AGENT=$!
	wait_for -S "$SOCK"
}

start_keeper() {
	"$GS" keeper --socket "$KSOCK" 2>>"$D/keeper.err" &
	KEEPER=$!
	wait_for -S "$KSOCK"
}

# Waits until the fake is inside a call that sleeps (its stats cannot be
# read meanwhile: it serves one request at a time); the step it got there
# goes to FILE as KEY=step (default $D/stop, stopped_at_step).
wait_fake_asleep() {
	local i
	for ((i = 0; i < WAIT_STEPS; i++)); do
		timeout 0.2 cat "$GS_FAKE_STATS" >/dev/null 2>&1 || break
		sleep 0.02
	done
	echo "${2:-stopped_at_step}=$i" >"${1:-$D/stop}"
}

# The agent SIGKILLed while the fake sleeps in the container's first
# allocation.
kill_agent_midcall() {
	wait_fake_asleep "$D/kill" killed_at_step
	kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
}

# Teardown follows the runtime's exit (when the last listener hangs up,
# then the files' release): wait for one "torn down" per sandbox made.
all_torn_down() {
	[ "$(grep -c ': sandbox [0-9a-f]*, init pid' "$D/agent.err")" = "$(grep -c 'torn down' "$D/agent.err")" ]
}

stop_agent() {
	[ -n "${AGENT:-}" ] || return 0
	local i
	for ((i = 0; i < WAIT_STEPS && ${#D} > 0; i++)); do
		all_torn_down && break
		sleep 0.02
	done
	kill "$AGENT" 2>/dev/null
	wait "$AGENT" 2>/dev/null
	AGENT=
}

stop_all() {
	stop_agent
	if [ -n "${CONTAINERD:-}" ]; then
		kill "$CONTAINERD" 2>/dev/null
		wait "$CONTAINERD" 2>/dev/null
		CONTAINERD=
	fi
	[ -n "${KEEPER:-}" ] || return 0
	kill "$KEEPER" 2>/dev/null
	wait "$KEEPER" 2>/dev/null
	KEEPER=
}

rt() { "$RT" --root "$D/state" "$@"; }

stat_now() { awk -v k="$1" '$1 == k { print $2 }' "$GS_FAKE_STATS"; }

# run ARGS_JSON PROFILE: the container in the foreground; its exit in $D/rc
run_fg() {
	make_bundle "$1" "$2" || { echo "bundle failed" >"$D/rc"; return; }
	(cd "$D/bundle" && timeout 30 "$RT" --root "$D/state" run "gs-$CASE") >"$D/out" 2>"$D/err"
	echo $? >"$D/rc"
	rt delete -f "gs-$CASE" >/dev/null 2>&1
}

# run_podman ARGS... : podman (runc underneath) on the same rootfs, the
# fake's files bind-mounted, the profile ($P_PODMAN) or podman's default
# seccomp; its exit in $D/rc. No systemd, journald or network here, and
# root lacks CAP_SYS_RESOURCE (shared/reference/container-hook.md 2.4).
run_podman() {
	local sc=()
	[ -n "${P_PODMAN:-}" ] && sc=(--security-opt "seccomp=$P_PODMAN") || sc=(--security-opt seccomp=unconfined)
	timeout 30 podman --root "$D/storage" --runroot "$D/run" --runtime runc --cgroup-manager=cgroupfs \
		--events-backend=file run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 \
		-v "$GS_FAKE_MOUNT/nvidiactl:/dev/nvidiactl" -v "$GS_FAKE_MOUNT/nvidia0:/dev/nvidia0" \
		-v "$GS_FAKE_MOUNT/nvidia-uvm:/dev/nvidia-uvm" "${sc[@]}" --rootfs "$ROOTFS" "$@" \
		>"$D/out" 2>"$D/err" </dev/null
	echo $? >"$D/rc"
}

# containerd for one case: a daemon of its own (root, state and socket in
# $D, the CRI plugin off), in the case's mount namespace (the fake's).
start_containerd() {
	printf 'version = 2\nroot = "%s"\nstate = "%s"\n[grpc]\n  address = "%s"\n[plugins."io.containerd.grpc.v1.cri"]\n  disable = true\n' \
		"$D/croot" "$D/cstate" "$D/containerd.sock" >"$D/containerd.toml"
	containerd --config "$D/containerd.toml" >"$D/containerd.log" 2>&1 &
	CONTAINERD=$!
	wait_for -S "$D/containerd.sock"
}

# run_ctr ARGS... : `ctr run` (runc underneath) on the same rootfs, the fake's
# files bind-mounted, the profile ($P_CTR) or no seccomp; its exit in $D/rc.
run_ctr() {
	local sc=() n
	[ -n "${P_CTR:-}" ] && sc=(--seccomp --seccomp-profile "$P_CTR")
	start_containerd || { echo "containerd did not start: $(tail -1 "$D/containerd.log")" >"$D/rc"; return; }
	local mounts=()
	for n in nvidiactl nvidia0 nvidia-uvm; do
		mounts+=(--mount "type=bind,src=$GS_FAKE_MOUNT/$n,dst=/dev/$n,options=rbind:rw")
	done
	timeout 30 ctr --address "$D/containerd.sock" run --rm --rootfs "${sc[@]}" "${mounts[@]}" \
		"$ROOTFS" "gs-$CASE" "$@" >"$D/out" 2>"$D/err" </dev/null
	echo $? >"$D/rc"
}

# run_bg ARGS_JSON PROFILE: detached; returns when it is running
run_bg() {
	make_bundle "$1" "$2" || return 1
	(cd "$D/bundle" && "$RT" --root "$D/state" run -d "gs-$CASE") >"$D/out" 2>"$D/err" </dev/null
}

wait_stopped() {
	local i
	for ((i = 0; i < WAIT_STEPS; i++)); do
		[ "$(rt state "gs-$CASE" 2>/dev/null | jq -r .status)" = running ] || break
		sleep 0.02
	done
	rt delete -f "gs-$CASE" >/dev/null 2>&1
}

wait_stopped_id() {  # wait_stopped_id ID: as wait_stopped, another container
	local i
	for ((i = 0; i < WAIT_STEPS; i++)); do
		[ "$(rt state "$1" 2>/dev/null | jq -r .status)" = running ] || break
		sleep 0.02
	done
	rt delete -f "$1" >/dev/null 2>&1
}

profile() {  # profile OUT [profile options]
	local out=$1
	shift
	"$GS" profile --listener "$SOCK" "$@" >"$out" 2>>"$D/err.profile"
}

# The attacker on the host (stalehandle, stalestop, stalekill), outside
# any sandbox: takes client handles from the fake's base and tries to dup
# the container's memory (named in the file $1), holding what it got
# until stale_finish. ATK is its pid.
stale_scan() {
	local victim mem
	victim=$(grep -o 'client=0x[0-9a-f]*' "$1" | cut -d= -f2)
	mem=$(grep -o 'memory=0x[0-9a-f]*' "$1" | cut -d= -f2)
	"$STALE" "$victim" "$mem" "$STALE_SCAN" "$D/attack.hold" >"$D/attack.out" 2>&1 &
	ATK=$!
	wait_for -e "$D/attack.hold.ready" || wait_for -e "$D/attack.hold.ready" ||
		{ echo "the attacker never finished its scan" >"$D/rc"; kill "$ATK"; return 1; }
}

# After the restart: the attacker's scan, then stale_finish.
stale_attack() {
	stale_scan "$D/ctmp/go.ready" && stale_finish
}

# The attacker holds what it got while the container frees its handle,
# unmaps and exits; the fake's vidmem_used once the container is gone
# goes to $D/after.
stale_finish() {
	local i
	# Its memory is the driver's to free now, unless the attacker's
	# dup holds it.
	: >"$D/ctmp/go"
	wait_stopped
	for ((i = 0; i < WAIT_STEPS; i++)); do
		[ "$(stat_now gpu0.vidmem_used)" = 0 ] && break
		sleep 0.02
	done
	echo "vidmem_used=$(stat_now gpu0.vidmem_used)" >"$D/after"
	: >"$D/attack.hold"
	wait "$ATK"
	echo 0 >"$D/rc"
}

# Container NAME (gs-CASE-NAME) in $top/NAME, detached: make_bundle's args
# and BUNDLE_EXTRA.
run_neighbour() {  # run_neighbour NAME ARGS_JSON
	D=$top/$1
	mkdir -p "$D"
	make_bundle "$2" "$p" || { D=$top; return 1; }
	(cd "$D/bundle" && "$RT" --root "$top/state" run -d "gs-$CASE-$1") >"$D/out" 2>"$D/err" </dev/null
	D=$top
}

# The victim, in the foreground beside the attacker: its output in
# $top/victim.out, its exit in $top/victim.rc.
run_victim() {  # run_victim ARGS_JSON
	D=$top/victim
	mkdir -p "$D"
	make_bundle "$1" "$p" || { D=$top; echo bundle >"$top/victim.rc"; return 1; }
	(cd "$D/bundle" && timeout 30 "$RT" --root "$top/state" run "gs-$CASE-victim") >"$top/victim.out" 2>"$D/err" </dev/null
	echo $? >"$top/victim.rc"
	D=$top rt delete -f "gs-$CASE-victim" >/dev/null 2>&1
	D=$top
}

# The attacker lets go; every sandbox is torn down (the agent's summary
# lines are then in agent.err).
release_attacker() {
	: >"$top/attacker/ctmp/stop"
	wait_stopped_id "gs-$CASE-attacker"
	stop_agent
	cp "$top/attacker/out" "$top/attacker.out" 2>/dev/null
}

# flood-runc: the attacker makes FLOOD_CLIENTS clients, each on a file of
# its own, and holds them; then the victim makes its clients and pairs.
# The agent starts with a soft open-file limit of FLOOD_SOFT. Baseline: no
# bound on a container's clients and files (its policy says unlimited),
# and a soft limit already at the hard one, which the agent cannot raise.
neighbours_flood() {
	local top=$D i
	if [ -n "$BASELINE" ]; then
		AGENT_WRAP="prlimit --nofile=$FLOOD_HARD:$FLOOD_HARD"
		AGENT_POLICY_EXTRA=$'clients = unlimited\nfiles = unlimited\n'
	else
		AGENT_WRAP="prlimit --nofile=$FLOOD_SOFT:$FLOOD_HARD"
	fi
	profile "$p" && start_agent || return
	BUNDLE_EXTRA=$FLOOD_RLIMIT run_neighbour attacker \
		'["/bin/tenant", "flood", "'"$FLOOD_CLIENTS"'", "/tmp/stop"]' || { echo "attacker bundle" >"$top/rc"; return; }
	for ((i = 0; i < FLOOD_WAIT_STEPS; i++)); do
		[ -e "$top/attacker/ctmp/stop.ready" ] && break
		sleep 0.02
	done
	[ -e "$top/attacker/ctmp/stop.ready" ] || { echo "the attacker never finished its flood" >"$top/rc"; return; }
	echo "clients_live=$(stat_now clients_live)" >"$top/after-flood"
	run_victim '["/bin/tenant", "victim", "'"$VICTIM_CLIENTS"'", "'"$VICTIM_PAIRS"'"]'
	release_attacker
	echo 0 >"$top/rc"
}

# storm-runc: the attacker holds STORM_THREADS idle threads while the
# victim makes STORM_CLIENTS clients (each a search for its fd table's
# sharers). Baseline: GPUSANDBOX_TEST_QUIESCE_FULL_WALK, every search
# walks the host's tasks (as before issue #32).
neighbours_storm() {
	local top=$D
	AGENT_ENV=${BASELINE:+GPUSANDBOX_TEST_QUIESCE_FULL_WALK=1}
	profile "$p" && start_agent || return
	run_neighbour attacker '["/bin/tenant", "storm", "'"$STORM_THREADS"'", "/tmp/stop"]' ||
		{ echo "attacker bundle" >"$top/rc"; return; }
	wait_for -e "$top/attacker/ctmp/stop.ready" || wait_for -e "$top/attacker/ctmp/stop.ready" ||
		{ echo "the attacker never made its threads" >"$top/rc"; return; }
	run_victim '["/bin/tenant", "victim", "'"$STORM_CLIENTS"'", "'"$VICTIM_PAIRS"'"]'
	release_attacker
	echo 0 >"$top/rc"
}

# bench-runc (tests/bench/tenantbench.sh, never in the tier): the victim's
# clients and pairs beside TENANT_BENCH_NEIGHBOURS storm containers, with
# every search walking the host when TENANT_BENCH_FULL_WALK is set.
neighbours_bench() {
	local top=$D i
	AGENT_ENV=${TENANT_BENCH_FULL_WALK:+GPUSANDBOX_TEST_QUIESCE_FULL_WALK=1}
	profile "$p" && start_agent || return
	for ((i = 0; i < ${TENANT_BENCH_NEIGHBOURS:-0}; i++)); do
		run_neighbour "n$i" '["/bin/tenant", "storm", "'"$STORM_THREADS"'", "/tmp/stop"]' &&
			{ wait_for -e "$top/n$i/ctmp/stop.ready" || wait_for -e "$top/n$i/ctmp/stop.ready"; } ||
			{ echo "neighbour $i never made its threads" >"$top/rc"; return; }
	done
	run_victim '["/bin/tenant", "victim", "'"$BENCH_CLIENTS"'", "'"$BENCH_PAIRS"'"]'
	for ((i = 0; i < ${TENANT_BENCH_NEIGHBOURS:-0}; i++)); do
		: >"$top/n$i/ctmp/stop"
		wait_stopped_id "gs-$CASE-n$i"
	done
	echo 0 >"$top/rc"
}

# The container's second_client (a child of its init, exec'd: a child
# not yet exec'd still has its shell's command line): its host pid.
child_running() {  # child_running INIT
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		case "$(tr '\0' ' ' </proc/"$c"/cmdline 2>/dev/null)" in
		"/bin/second_client "*) echo "$c"; return 0 ;;
		esac
	done
	return 1
}

# Is task PID in a ptrace stop ('t' in its stat)?
traced_stop() {
	local st
	st=$(sed 's/.*) //' /proc/"$1"/stat 2>/dev/null | cut -d' ' -f1)
	[ "$st" = t ]
}

# Until the container's second_client is seen stopped for an injection;
# else says so in $D/rc.
injection_seen() {
	local init child="" i
	init=$(rt state "gs-$CASE" | jq -r .pid)
	for ((i = 0; i < WAIT_STEPS; i++)); do
		[ -n "$child" ] || child=$(child_running "$init")
		[ -n "$child" ] && traced_stop "$child" && return 0
		sleep 0.02
	done
	echo "the caller was never seen stopped for an injection" >"$D/rc"
	return 1
}

# injectkill-crun, injectkept-crun: the agent (with a keeper) killed
# INJECTKILL_AT into an injection held INJECTKILL_DELAY_US, then started
# again on the keeper. The container runs ARGS_JSON, whose last step
# writes /tmp/raw.rc; BASELINE_SWITCH is set for the baseline.
kill_mid_injection() {  # kill_mid_injection BASELINE_SWITCH ARGS_JSON
	AGENT_ENV="GPUSANDBOX_TEST_INJECT_DELAY_US=$INJECTKILL_DELAY_US${BASELINE:+ $1=1}"
	profile "$p" --wait-killable && start_keeper && start_agent || return
	run_bg "$2" "$p" || { echo "run -d failed" >"$D/rc"; return; }
	injection_seen || return
	sleep "$INJECTKILL_AT"
	kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
	start_agent || return
	# baseline-injectkept-crun's never comes: judged by its absence.
	wait_for -e "$D/ctmp/raw.rc" || wait_for -e "$D/ctmp/raw.rc"
	rt kill "gs-$CASE" KILL 2>/dev/null
	wait_stopped
	echo 0 >"$D/rc"
}

inside() {
	CASE=$1 RT=$2 D=$3 ROOTFS=$4
	SOCK=$D/agent.sock
	KSOCK=$D/keeper.sock
	AGENT= KEEPER= CONTAINERD=
	trap stop_all EXIT
	[ "$RT" = crun ] && { crun_hybrid_workaround || { echo "crun workaround failed" >"$D/rc"; return; }; }
	local base=${CASE#baseline-} p=""
	BASELINE=
	[ "$base" != "$CASE" ] && BASELINE=1
	base=${base%-"$RT"}
	[ "$CASE" = runc-flags ] && base=flags
	case "$CASE" in baseline-*) ;; *) p=$D/profile.json ;; esac
	# Its baseline is the agent making device allocations in its shared fd
	# table, not no agent.
	[ "$base" = gpunode ] && p=$D/profile.json
	# The neighbours' baselines are agents without the defence.
	case "$base" in flood|storm|objects|second|secondbusy|secondflip|secondnokill|injectkill|injectkept) p=$D/profile.json ;; esac
	case "$base" in
	quota)
		[ -n "$p" ] && { profile "$p" && start_agent || return; }
		if [ "$RT" = podman ]; then
			P_PODMAN=$p run_podman /bin/static_raw
		elif [ "$RT" = containerd ]; then
			P_CTR=$p run_ctr /bin/static_raw
		else
			run_fg '["/bin/static_raw"]' "$p"
		fi ;;
	exec)
		[ -n "$p" ] && { profile "$p" && start_agent || return; }
		run_bg '["/bin/holder", "3", "/tmp/go", "0"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || { echo "holder never ready" >"$D/rc"; return; }
		rt exec "gs-$CASE" /bin/static_raw >"$D/exec.out" 2>"$D/exec.err"
		echo $? >"$D/rc"
		: >"$D/ctmp/go"
		wait_stopped ;;
	noagent)
		profile "$p" || return
		run_fg '["/bin/static_raw"]' "$p" ;;
	keyring|podmanbase)
		# A system call the runtimes' default profiles refuse (add_key),
		# then a GPU client, in one container. keyring: the profile of
		# `gpusandbox profile` without --base; its baseline: made on an
		# allow-all base (what that wrote before it kept the runtime's
		# default). podmanbase: --base podman's own default profile.
		p=$D/profile.json
		if [ "$base" = podmanbase ]; then
			profile "$p" --base "$PODMAN_DEFAULT_PROFILE" || { echo "profile failed" >"$D/rc"; return; }
		elif [ -n "$BASELINE" ]; then
			echo '{"defaultAction": "SCMP_ACT_ALLOW"}' >"$D/allow-all.json"
			profile "$p" --base "$D/allow-all.json" || { echo "profile failed" >"$D/rc"; return; }
		else
			profile "$p" || { echo "profile failed" >"$D/rc"; return; }
		fi
		start_agent || return
		if [ "$RT" = podman ]; then
			P_PODMAN=$p run_podman /bin/sh -c '/bin/keyprobe; /bin/static_raw'
		elif [ "$RT" = containerd ]; then
			P_CTR=$p run_ctr /bin/sh -c '/bin/keyprobe; /bin/static_raw'
		else
			run_fg '["/bin/sh", "-c", "/bin/keyprobe; /bin/static_raw"]' "$p"
		fi ;;
	agentkill)
		[ -n "$p" ] && { profile "$p" && start_agent || return; }
		run_bg '["/bin/holder", "1", "/tmp/go", "3"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || { echo "holder never ready" >"$D/rc"; return; }
		echo "allocs_ok=$(stat_now allocs_ok) ioctls=$(stat_now ioctls)" >"$D/before"
		[ -n "$AGENT" ] && { kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=; }
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	stale)
		profile "$D/good.json" || return
		jq '.listenerMetadata = "gpusandbox;traps=0000000000000000"' "$D/good.json" >"$p"
		start_agent || return
		run_fg '["/bin/static_raw"]' "$p" ;;
	i386)
		[ -n "$p" ] && { profile "$p" && start_agent || return; }
		run_fg '["/bin/compat_i386"]' "$p" ;;
	two)
		# Two containers at once, each its own sandbox and quota.
		profile "$p" && start_agent || return
		local top=$D x
		for x in a b; do
			D=$top/$x
			mkdir -p "$D"
			make_bundle '["/bin/holder", "3", "/tmp/go", "2"]' "$p" || { echo "bundle $x" >"$top/rc"; return; }
			(cd "$D/bundle" && "$RT" --root "$top/state" run -d "gs-two-$x") >"$D/out" 2>"$D/err" </dev/null
		done
		for x in a b; do
			wait_for -e "$top/$x/ctmp/go.ready" || { echo "holder $x never ready" >"$top/rc"; D=$top; return; }
		done
		# Both hold 768 MiB: the agent's metrics file (rewritten every
		# second) shows each container's, beside the fake's account.
		wait_for_metrics() { [ "$(grep -c "^gpusandbox_memory_used_bytes{.*} $((3 * CHUNK))\$" "$top/agent.prom")" = 2 ]; }
		for ((x = 0; x < 3 * WAIT_STEPS; x++)); do wait_for_metrics 2>/dev/null && break; sleep 0.02; done
		cp "$top/agent.prom" "$top/agent-mid.prom"
		cp "$GS_FAKE_STATS" "$top/stats-mid"
		for x in a b; do : >"$top/$x/ctmp/go"; done
		for x in a b; do
			D=$top/$x CASE=two-$x
			D=$top wait_stopped_id "gs-two-$x"
		done
		D=$top CASE=two
		stop_agent
		cat "$top/a/out" "$top/b/out" >"$top/out"
		echo 0 >"$top/rc" ;;
	flood)
		neighbours_flood ;;
	storm)
		neighbours_storm ;;
	bench)
		neighbours_bench ;;
	objects)
		# A policy bounding the container's RM objects; the baseline's is
		# the agent's default (2^19). The fake's count while it holds.
		printf 'mem = 1g\nobjects = %s\n' "$OBJECTS_BOUND" >"$D/objects.policy"
		mkdir -p "$D/policies" && cp "$D/objects.policy" "$D/policies/objects.policy"
		if [ -n "$BASELINE" ]; then
			profile "$p" && start_agent || return
		else
			profile "$p" --policy-name objects && start_agent || return
		fi
		run_bg '["/bin/tenant", "objects", "'"$OBJECTS_TRIED"'", "/tmp/go"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || wait_for -e "$D/ctmp/go.ready" || { echo "never ready" >"$D/rc"; return; }
		echo "objects_live=$(stat_now objects_live)" >"$D/held"
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	gpunode)
		# A (nvidia0) keeps making devices on GPU 0, so the agent keeps
		# borrowing its nvidia0; B (nvidia1 only) tries devices on GPU 0
		# meanwhile. The baseline's agent makes them in its shared table.
		local top=$D
		AGENT_ENV=${BASELINE:+GPUSANDBOX_TEST_SHARED_TABLE_DEVICE_ALLOC=1}
		profile "$p" && start_agent || return
		D=$top/a && mkdir -p "$D"
		make_bundle '["/bin/gpunode", "hold", "0", "/tmp/stop", "'"$GPUNODE_PAD"'"]' "$p" ||
			{ echo "bundle a" >"$top/rc"; D=$top; return; }
		(cd "$D/bundle" && "$RT" --root "$top/state" run -d "gs-gpunode-a") >"$D/out" 2>"$D/err" </dev/null
		wait_for -e "$D/ctmp/stop.ready" || { echo "A never made a device" >"$top/rc"; D=$top; return; }
		D=$top/b && mkdir -p "$D"
		BUNDLE_EXTRA=$ONLY_NVIDIA1 \
			make_bundle '["/bin/gpunode", "race", "0", "'"$GPUNODE_RACE_MS"'", "'"$GPUNODE_MIN_ATTEMPTS"'"]' "$p" ||
			{ echo "bundle b" >"$top/rc"; D=$top; return; }
		(cd "$D/bundle" && timeout 30 "$RT" --root "$top/state" run "gs-gpunode-b") >"$top/b.out" 2>"$D/err" </dev/null
		echo $? >"$top/rc"
		"$RT" --root "$top/state" delete -f gs-gpunode-b >/dev/null 2>&1
		: >"$top/a/ctmp/stop"
		D=$top wait_stopped_id gs-gpunode-a
		cp "$top/a/out" "$top/a.out" 2>/dev/null
		D=$top
		stop_agent
		cat "$top/a.out" "$top/b.out" >"$top/out" 2>/dev/null ;;
	gpunode-stall)
		# A's call on its nvidia0 stalls in the agent's read of its
		# memory (stallfs) while the worker holds A's GPU-node dup; B
		# (nvidia1) makes devices on its own GPU and a first call on a
		# fresh file meanwhile, and notes what the fake granted by then.
		local top=$D
		profile "$p" && start_agent || return
		D=$top/a && mkdir -p "$D"
		BUNDLE_EXTRA='.mounts += [ { destination: "'"$GPUNODE_STALL_IN"'", type: "bind",
			source: "'"$top/mnt/stall"'", options: ["bind"] } ]' \
			make_bundle '["/bin/gpunode", "stall", "'"$GPUNODE_STALL_IN"'", "/tmp/stall"]' "$p" ||
			{ echo "bundle a" >"$top/rc"; D=$top; return; }
		(cd "$D/bundle" && "$RT" --root "$top/state" run -d "gs-stall-a") >"$D/out" 2>"$D/err" </dev/null
		wait_for -e "$D/ctmp/stall.start" || { echo "A never started its call" >"$top/rc"; D=$top; return; }
		# The agent's worker is in its read of A's memory.
		wait_for -e "$top/stallstate/stalling" || { echo "A's call never stalled" >"$top/rc"; D=$top; return; }
		D=$top/b && mkdir -p "$D"
		BUNDLE_EXTRA=$ONLY_NVIDIA1 \
			make_bundle '["/bin/gpunode", "own", "1", "'"$GPUNODE_OWN"'"]' "$p" ||
			{ echo "bundle b" >"$top/rc"; D=$top; return; }
		(cd "$D/bundle" && timeout 30 "$RT" --root "$top/state" run "gs-stall-b") >"$top/b.out" 2>"$D/err" </dev/null
		echo $? >"$top/rc"
		# The fake's account and A's mark at B's end.
		awk '$1 == "device_node_grants" { print $2 }' "$GS_FAKE_STATS" >"$top/grants-at-b-end"
		[ -e "$top/a/ctmp/stall.done" ] && : >"$top/a-done-at-b-end"
		[ -e "$top/stallstate/answered" ] && : >"$top/answered-at-b-end"
		: >"$top/stallstate/release"
		"$RT" --root "$top/state" delete -f gs-stall-b >/dev/null 2>&1
		D=$top wait_stopped_id gs-stall-a
		cp "$top/a/out" "$top/a.out" 2>/dev/null
		D=$top
		stop_agent
		cat "$top/a.out" "$top/b.out" >"$top/out" 2>/dev/null ;;
	named)
		profile "$p" --policy-name small && start_agent || return
		run_fg '["/bin/static_raw"]' "$p" ;;
	unnamed)
		profile "$p" --policy-name nosuch && start_agent || return
		run_fg '["/bin/static_raw"]' "$p" ;;
	sysadmin)
		[ -n "$p" ] && { profile "$p" && start_agent || return; }
		BUNDLE_EXTRA='.process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN"])' \
			run_fg '["/bin/static_raw"]' "$p" ;;
	k8s)
		profile "$p" && start_agent || return
		BUNDLE_EXTRA='.annotations = {
			"io.kubernetes.cri.sandbox-name": "trainer-7f9c", "io.kubernetes.cri.sandbox-namespace": "ml",
			"io.kubernetes.cri.sandbox-uid": "0b7e8f0c-1d2e-4f3a-9b8c-7d6e5f4a3b2c",
			"io.kubernetes.cri.container-name": "cuda", "io.kubernetes.pod.name": "decoy" }' \
			run_fg '["/bin/static_raw"]' "$p" ;;
	k8scrio)
		profile "$p" && start_agent || return
		BUNDLE_EXTRA='.annotations = {
			"io.kubernetes.pod.name": "infer-0", "io.kubernetes.pod.namespace": "serving",
			"io.kubernetes.pod.uid": "5c0a2e34-8f1b-4b6d-a1e2-3f4a5b6c7d8e",
			"io.kubernetes.container.name": "../x" }' \
			run_fg '["/bin/static_raw"]' "$p" ;;
	managed)
		mkdir -p "$D/policies"
		printf 'mem = 1g\nmanaged = deny\n' >"$D/policies/deny.policy"
		[ -n "$p" ] && { profile "$p" --policy-name deny --policy "$D/policies/deny.policy" && start_agent || return; }
		run_fg '["/bin/managed"]' "$p" ;;
	p2panswer)
		mkdir -p "$D/policies"
		printf 'mem = 1g\np2p-register = answer\n' >"$D/policies/p2p.policy"
		profile "$p" --policy-name p2p && start_agent || return
		run_fg '["/bin/p2p_pairs", "'"$P2P_PAIRS"'"]' "$p" ;;
	p2pperform)
		mkdir -p "$D/policies"
		printf 'mem = 1g\np2p-register = perform\n' >"$D/policies/p2p.policy"
		profile "$p" --policy-name p2p && start_agent || return
		run_fg '["/bin/p2p_pairs", "'"$P2P_PAIRS"'"]' "$p" ;;
	p2pdefault)
		profile "$p" && start_agent || return
		run_fg '["/bin/p2p_pairs", "'"$P2P_PAIRS"'"]' "$p" ;;
	uvmhold)
		[ -n "$p" ] && { profile "$p" && start_agent || return; }
		run_fg '["/bin/uvm_hold", "free"]' "$p" ;;
	asuser | asuser-hostns | asuserchannel)
		# asuser: a user namespace of the container's own, its uid 0
		# the host's USERNS_HOST_UID (the rootfs is read-only and
		# world-readable, the fake's nodes 0666). proc and sysfs are
		# bound from the host's, cgroup and mqueue left out: a machine
		# that is itself a container (masked /proc paths) refuses new
		# ones in a user namespace, and the case needs none of them.
		[ "$base" != asuser-hostns ] && BUNDLE_EXTRA='.mounts |= map(
				if .type == "proc" then { destination: "/proc", type: "bind", source: "/proc", options: ["rbind"] }
				elif .type == "sysfs" then { destination: "/sys", type: "bind", source: "/sys", options: ["rbind", "ro"] }
				elif .type == "cgroup" or .type == "mqueue" then empty else . end) |
			.linux.namespaces += [{ type: "user" }] |
			.linux.uidMappings = [{ containerID: 0, hostID: '"$USERNS_HOST_UID"', size: '"$USERNS_SIZE"' }] |
			.linux.gidMappings = [{ containerID: 0, hostID: '"$USERNS_HOST_UID"', size: '"$USERNS_SIZE"' }]'
		if [ "$base" = asuserchannel ]; then
			mkdir -p "$D/policies"
			printf 'mem = 1g\nchannel-groups = 4\nchannels = 8\n' >"$D/policies/chan.policy"
			profile "$p" --policy-name chan && AGENT_ARGS="--uvm-map as-user" start_agent || return
			run_fg '["/bin/uvm_channel", "free"]' "$p"
		else
			profile "$p" && AGENT_ARGS="--uvm-map as-user" start_agent || return
			run_fg '["/bin/uvm_hold", "free"]' "$p"
		fi ;;
	uvmchannel)
		mkdir -p "$D/policies"
		printf 'mem = 1g\nchannel-groups = 4\nchannels = 8\n' >"$D/policies/chan.policy"
		[ -n "$p" ] && { profile "$p" --policy-name chan && start_agent || return; }
		run_fg '["/bin/uvm_channel", "free"]' "$p" ;;
	uvmrestart)
		# The map made by the agent before its restart, the free and
		# the second allocation judged by the resumed one.
		profile "$p" && start_keeper && start_agent || return
		run_bg '["/bin/uvm_hold", "free", "/tmp/go"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || { echo "uvm_hold never mapped" >"$D/rc"; return; }
		echo "vidmem_used=$(stat_now gpu0.vidmem_used) uvm_mappings=$(stat_now uvm_mappings)" >"$D/before"
		kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
		start_agent || return
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	uvmkill)
		# The agent dies in the driver's map of A and the mapper gives
		# its call up before another agent could answer it: the commit
		# that pins A never ran. The baseline's agents take no pin while
		# the driver maps.
		AGENT_ENV=${BASELINE:+GPUSANDBOX_TEST_NO_PIN_IN_FLIGHT=1}
		p=$D/profile.json
		profile "$p" && start_keeper && start_agent || return
		run_bg '["/bin/uvm_hold", "intr", "/tmp/go"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_fake_asleep
		kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
		kill -USR1 "$(rt state "gs-$CASE" | jq -r .pid)" || { echo "no mapper to signal" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || { echo "the map never gave up" >"$D/rc"; return; }
		echo "vidmem_used=$(stat_now gpu0.vidmem_used) uvm_mappings=$(stat_now uvm_mappings)" >"$D/before"
		start_agent || return
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	stalehandle)
		# The container's memory mapped through the agent's own client,
		# the agent SIGKILLed and started again on the keeper, then an
		# attacker on the host (outside any sandbox) takes client handles
		# to dup that memory. The baseline differs only in its agent,
		# which never revokes the share (GPUSANDBOX_TEST_KEEP_SHARE) and
		# does not hand its own client to the keeper either
		# (GPUSANDBOX_TEST_OWN_CLIENT_UNKEPT): either defence alone
		# holds here (the kept client stands in for the revoke).
		p=$D/profile.json
		AGENT_ENV=${BASELINE:+GPUSANDBOX_TEST_KEEP_SHARE=1 GPUSANDBOX_TEST_OWN_CLIENT_UNKEPT=1}
		profile "$p" && start_keeper && start_agent || return
		run_bg '["/bin/uvm_victim", "/tmp/go"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || wait_for -e "$D/ctmp/go.ready" || { echo "victim never ready" >"$D/rc"; return; }
		# The fake's CLIENT policies once the agent has answered the map.
		echo "$(cat "$D/ctmp/go.ready") policies=$(stat_now share_client_policies)" \
			"obj_policies=$(stat_now share_object_policies) uvm_maps=$(stat_now uvm_maps)" >"$D/before"
		kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
		start_agent || return
		stale_attack ;;
	stalestop)
		# The agent stopped as a service manager stops it (SIGTERM)
		# while it performs the container's map (the fake sleeps in it:
		# its stats cannot be read meanwhile), then started again on the
		# keeper; then the attacker as in stalehandle. The share must be
		# revoked before the agent exits.
		p=$D/profile.json
		profile "$p" && start_keeper && start_agent || return
		run_bg '["/bin/uvm_victim", "/tmp/go"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_fake_asleep
		kill -TERM "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
		# The fake's CLIENT policies once the agent is gone.
		echo "policies=$(stat_now share_client_policies) obj_policies=$(stat_now share_object_policies)" >"$D/before"
		start_agent || return
		wait_for -e "$D/ctmp/go.ready" || wait_for -e "$D/ctmp/go.ready" || { echo "victim never ready" >"$D/rc"; return; }
		stale_attack ;;
	stalekill)
		# The agent SIGKILLed while the fake performs the container's
		# map: after the share, before its revoke. Its thread in the
		# fake leaves only with the fake's answer, so once it has exited
		# the share is in place and will not be revoked by it. The
		# attacker strikes before another agent starts (the map still
		# unanswered: it takes the handles from go.pre); then a new
		# agent resumes the container and answers the map. The baseline
		# differs only in its agents, which do not hand their own client
		# to the keeper (GPUSANDBOX_TEST_OWN_CLIENT_UNKEPT).
		p=$D/profile.json
		AGENT_ENV=${BASELINE:+GPUSANDBOX_TEST_OWN_CLIENT_UNKEPT=1}
		profile "$p" && start_keeper && start_agent || return
		run_bg '["/bin/uvm_victim", "/tmp/go"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_fake_asleep
		kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
		# The fake's CLIENT policies once the agent is gone.
		echo "policies=$(stat_now share_client_policies)" >"$D/before"
		wait_for -e "$D/ctmp/go.pre" || { echo "victim never allocated" >"$D/rc"; return; }
		stale_scan "$D/ctmp/go.pre" || return
		start_agent || return
		wait_for -e "$D/ctmp/go.ready" || wait_for -e "$D/ctmp/go.ready" || { echo "victim never mapped" >"$D/rc"; return; }
		stale_finish ;;
	mmapless)
		mkdir -p "$D/policies"
		printf 'mem = 1g\nmanaged = deny\n' >"$D/policies/deny.policy"
		profile "$p" --policy-name deny && start_agent || return
		run_fg '["/bin/managed"]' "$p" ;;
	midcall)
		[ -n "$p" ] && { profile "$p" && start_agent || return; }
		run_bg '["/bin/holder", "1", "/tmp/go", "2"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		if [ -n "$p" ]; then
			# In flight: the single-threaded fake sleeps in the call, and
			# a read of its stats waits for it.
			local i
			for ((i = 0; i < WAIT_STEPS; i++)); do
				timeout 0.2 cat "$GS_FAKE_STATS" >/dev/null 2>&1 || break
				sleep 0.02
			done
			kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
			echo "killed_at_step=$i" >"$D/kill"
		fi
		wait_for -e "$D/ctmp/go.ready" || wait_for -e "$D/ctmp/go.ready" || { echo "holder never ready" >"$D/rc"; return; }
		echo "ioctls=$(stat_now ioctls) allocs_ok=$(stat_now allocs_ok)" >"$D/before"
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	restart)
		# With a keeper (baseline: without), the agent killed in the
		# middle of the init's first allocation and started again; then
		# an exec'd process fills the quota, then the init asks for more.
		# The baseline has the profile too: what it lacks is the keeper.
		p=$D/profile.json
		profile "$p" || return
		[ -n "$BASELINE" ] || start_keeper || return
		start_agent || return
		run_bg '["/bin/holder", "3", "/tmp/go", "2"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		kill_agent_midcall
		start_agent || return
		wait_for -e "$D/ctmp/go.ready" || wait_for -e "$D/ctmp/go.ready" || { echo "holder never ready" >"$D/rc"; return; }
		echo "vidmem_used=$(stat_now gpu0.vidmem_used) allocs_ok=$(stat_now allocs_ok)" >"$D/before"
		rt exec "gs-$CASE" /bin/static_raw >"$D/exec.out" 2>"$D/exec.err"
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	restartrelease)
		# An exec'd process holding 512 MiB exits while no agent runs:
		# its file's release frees the memory in the driver, and the
		# restarted agent must learn it (the client's release watch,
		# kept by the keeper) or the container keeps paying for it.
		profile "$p" && start_keeper && start_agent || return
		run_bg '["/bin/holder", "1", "/tmp/go", "3"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || { echo "holder never ready" >"$D/rc"; return; }
		rt exec "gs-$CASE" /bin/holder 2 /tmp/go2 0 >"$D/exec.out" 2>"$D/exec.err" &
		local ex=$!
		wait_for -e "$D/ctmp/go2.ready" || { echo "exec'd holder never ready" >"$D/rc"; return; }
		kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
		: >"$D/ctmp/go2"
		wait "$ex"
		echo "vidmem_used=$(stat_now gpu0.vidmem_used)" >"$D/before"
		start_agent || return
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	restartstale)
		# The held state says another trap set (as an agent of another
		# version would have written it): the next agent kills the
		# container instead of resuming it. The memfd is reached as
		# root reaches any process's fds (/proc/PID/fd of the keeper).
		profile "$p" && start_keeper && start_agent || return
		run_bg '["/bin/holder", "1", "/tmp/go", "3"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || { echo "holder never ready" >"$D/rc"; return; }
		local f memfd=""
		for f in /proc/"$KEEPER"/fd/*; do
			case "$(readlink "$f")" in *memfd:gpusandbox-state*) memfd=$f ;; esac
		done
		python3 -c '
import sys, struct, zlib
TRAPS, CRC = 248, 1660   # agent_state.h GS_STATE_IDENT_TRAPS_AT, _CRC_AT
with open(sys.argv[1], "r+b") as f:
    h = bytearray(f.read(CRC + 4))
    (t,) = struct.unpack_from("<Q", h, TRAPS)
    struct.pack_into("<Q", h, TRAPS, t ^ 1)
    struct.pack_into("<I", h, CRC, zlib.crc32(bytes(h[:CRC])))
    f.seek(0)
    f.write(h)
' "$memfd" || { echo "no state memfd in the keeper" >"$D/rc"; return; }
		kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
		# allocs before the new agent; ioctls after it (it probes the
		# driver at start, and has resumed or killed before it listens).
		local allocs
		allocs=$(stat_now allocs_ok)
		start_agent || return
		echo "allocs_ok=$allocs ioctls=$(stat_now ioctls)" >"$D/before"
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	keeperkill)
		# The keeper killed, then the agent: nothing holds the listener.
		profile "$p" && start_keeper && start_agent || return
		run_bg '["/bin/holder", "1", "/tmp/go", "3"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || { echo "holder never ready" >"$D/rc"; return; }
		kill -KILL "$KEEPER"; wait "$KEEPER" 2>/dev/null; KEEPER=
		echo "allocs_ok=$(stat_now allocs_ok) ioctls=$(stat_now ioctls)" >"$D/before"
		kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	keeperpeer)
		# Hostile peers on the keeper's socket while it holds a
		# container; then the agent is restarted and must resume it.
		profile "$p" && start_keeper && start_agent || return
		run_bg '["/bin/holder", "3", "/tmp/go", "2"]' "$p" || { echo "run -d failed" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || { echo "holder never ready" >"$D/rc"; return; }
		# 0666 for the test only, so that another uid can reach the
		# keeper's own check (SO_PEERCRED) rather than the file mode.
		chmod 0666 "$KSOCK"
		chmod o+x "$D" "$(dirname "$D")"
		python3 "$ROOT/tests/agent/keeper_peer.py" "$KSOCK" "gs-$CASE" >"$D/peers.out" 2>&1
		kill -KILL "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
		start_agent || return
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	abandon)
		profile "$p" && start_agent || return
		run_bg "[\"/bin/abandon\", \"/tmp/go\", \"$ABANDON_SIGNAL_MS\"]" "$p" ||
			{ echo "run -d failed" >"$D/rc"; return; }
		wait_for -e "$D/ctmp/go.ready" || wait_for -e "$D/ctmp/go.ready" || { echo "never ready" >"$D/rc"; return; }
		echo "vidmem_used=$(stat_now gpu0.vidmem_used) allocs_ok=$(stat_now allocs_ok)" >"$D/after"
		: >"$D/ctmp/go"
		wait_stopped
		echo 0 >"$D/rc" ;;
	peers)
		profile "$p" && start_agent || return
		local mode pids=()
		for mode in silent trickle garbage huge silent silent; do
			"$PEER" "$SOCK" "$mode" >>"$D/peers.out" 2>&1 &
			pids+=($!)
		done
		run_fg '["/bin/static_raw"]' "$p"
		# Still held by the agent when the container is done?
		local alive=0 pid
		for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=$((alive + 1)); done
		echo "alive_after_container=$alive" >"$D/peers.alive"
		wait "${pids[@]}" ;;
	killable)
		profile "$p" --wait-killable && start_agent || return
		run_fg '["/bin/static_raw"]' "$p" ;;
	second)
		# Injection needs a caller's wait that our interrupt cannot end.
		AGENT_ENV=${BASELINE:+GPUSANDBOX_TEST_AGENT_NO_INJECT=1}
		profile "$p" --wait-killable && start_agent || return
		run_fg '["/bin/second_client"]' "$p" ;;
	secondnokill)
		# runc 1.1 takes no WAIT_KILLABLE_RECV: the profile asks none.
		profile "$p" && start_agent || return
		run_fg '["/bin/second_client"]' "$p" ;;
	secondbusy)
		AGENT_ENV=GPUSANDBOX_TEST_INJECT_DELAY_US=$BUSY_DELAY_US
		profile "$p" --wait-killable && start_agent || return
		run_fg '["/bin/sh", "-c", "/bin/second_client clients >/tmp/sc.out & sleep 0.1; /bin/static_raw >/tmp/raw.out; echo raw_rc=$? >/tmp/raw.rc; wait"]' "$p"
		stop_agent ;;
	secondflip)
		AGENT_ENV="GPUSANDBOX_TEST_LOOK_DELAY_US=$SECONDFLIP_LOOK_US${BASELINE:+ GPUSANDBOX_TEST_SECOND_CLIENT_CONTINUE=1}"
		profile "$p" --wait-killable && start_agent || return
		run_fg '["/bin/second_client", "flip", "'"$SECONDFLIP_HOW"'", "'"$SECONDFLIP_TRIES"'"]' "$p" ;;
	injectkill)
		# The caller's shell says how it ended; a next process fills
		# the quota.
		kill_mid_injection GPUSANDBOX_TEST_INJECT_NO_EXITKILL \
			'["/bin/sh", "-c", "/bin/second_client midinject >/tmp/mid.out; echo midinject_rc=$? >/tmp/mid.rc; /bin/static_raw >/tmp/raw.out; echo raw_rc=$? >/tmp/raw.rc"]' ;;
	injectkept)
		# static_raw beside the injections: a call of its is kept.
		kill_mid_injection GPUSANDBOX_TEST_INJECT_KEPT_UNRECORDED \
			'["/bin/sh", "-c", "/bin/second_client clients >/tmp/sc.out & sleep 0.1; /bin/static_raw >/tmp/raw.out; echo raw_rc=$? >/tmp/raw.rc; wait"]' ;;
	flags)
		profile "$p" --wait-killable && start_agent || return
		run_fg '["/bin/static_raw"]' "$p" ;;
	esac
	cp "$D"/out "$D/container.out" 2>/dev/null
}

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

peak_within() {  # the fake's own peak
	local peak
	peak=$(st "$dir" gpu0.vidmem_peak)
	[ -n "$peak" ] && [ "$peak" -le "$QUOTA" ] || { why="fake's peak $peak > quota $QUOTA"; return 1; }
}

# The stale-handle cases' attacker (stale_scan): its scan covered every
# client handle the fake handed out, every dup it tried was refused as RM
# refuses a client the memory is not shared with, the container's own
# calls went through, and its memory went with its handle.
stale_refused() {
	[ "$(val "$dir/attack.out" taken)" -ge 1 ] && [ "$(val "$dir/attack.out" covered)" = 1 ] &&
		[ "$(val "$dir/attack.out" dups_ok)" = 0 ] &&
		[ "$(val "$dir/attack.out" dup)" = "$NV_ERR_INSUFFICIENT_PERMISSIONS" ] &&
		grep -q '^first=0x0 map=0x0 free=0x0$' "$dir/container.out" &&
		[ "$(val "$dir/after" vidmem_used)" = 0 ]
}

# Their baselines: the attacker's dup went through and still holds the
# memory after the container freed its handle and exited.
stale_won() {
	[ "$(val "$dir/attack.out" dups_ok)" -ge 1 ] && [ "$(val "$dir/attack.out" dup)" = 0x0 ] &&
		grep -q '^first=0x0 map=0x0 free=0x0$' "$dir/container.out" &&
		[ "$(val "$dir/after" vidmem_used)" = "$CHUNK" ]
}

judge() {  # judge NAME RUNTIME
	local name=$1 peak rc nomem why=""
	peak=$(st "$dir" gpu0.vidmem_peak)
	rc=$(cat "$dir/rc" 2>/dev/null)
	case "$name" in
	quota-*|killable-crun)
		nomem=$(val "$dir/container.out" nomem)
		# podman names the container by its own 64-hex id: the one log.
		local log=$dir/gs-$name.jsonl
		[ "$name" = quota-podman ] && log=$(ls "$dir"/*.jsonl 2>/dev/null | head -1)
		peak_within && [ "$rc" = 0 ] && [ "${nomem:-0}" -ge 1 ] &&
			[ "$(val "$dir/container.out" realloc)" = 0x0 ] &&
			grep -q '"event":"start"' "$log" 2>/dev/null &&
			grep -q '"event":"summary".*"usage_at_exit":{"0":0}' "$log" &&
			grep '"verdict":"deny"' "$log" | grep -q '"stack":\[[^]]*"main+0x' ||
			why=${why:-"rc=$rc nomem=$nomem realloc=$(val "$dir/container.out" realloc), or no audit log, or no stack naming main in its deny record"} ;;
	baseline-quota-*)
		[ "$rc" = 0 ] && [ "${peak:-0}" -gt "$QUOTA" ] || why="attack did not exceed the quota: peak=$peak rc=$rc" ;;
	exec-*)
		local held got
		held=$(grep -o '^first ok=[0-9]*' "$dir/container.out" | sed 's/.*=//')
		got=$(val "$dir/exec.out" allocated)
		peak_within && [ "$held" = 3 ] && [ "${got:-9}" -le 1 ] &&
			[ "$(val "$dir/exec.out" nomem)" -ge 1 ] &&
			[ "$(grep -c 'sandbox [0-9a-f]*, init pid' "$dir/agent.err")" = 1 ] ||
			why=${why:-"init held $held chunks, exec got $got, sandboxes $(grep -c 'sandbox [0-9a-f]*, init' "$dir/agent.err")"} ;;
	baseline-exec-*)
		[ "${peak:-0}" -gt "$QUOTA" ] || why="exec did not exceed the quota without the agent: peak=$peak" ;;
	noagent-*)
		[ "$rc" != 0 ] && [ "$(st "$dir" allocs_ok)" = 0 ] && [ "$(st "$dir" clients_live)" = 0 ] ||
			why="rc=$rc allocs_ok=$(st "$dir" allocs_ok) ioctls=$(st "$dir" ioctls)" ;;
	agentkill-*)
		local b_allocs b_ioctls
		b_allocs=$(val "$dir/before" allocs_ok)
		b_ioctls=$(val "$dir/before" ioctls)
		[ "$(val "$dir/container.out" first_refusal)" = "errno:ENOSYS" ] &&
			[ "$(grep '^then' "$dir/container.out" | grep -o 'ok=[0-9]*')" = ok=0 ] &&
			[ "$(st "$dir" allocs_ok)" = "$b_allocs" ] && [ "$(st "$dir" ioctls)" = "$b_ioctls" ] &&
			[ "$peak" = "$CHUNK" ] ||
			why="then: $(grep '^then' "$dir/container.out"); allocs_ok $b_allocs -> $(st "$dir" allocs_ok), ioctls $b_ioctls -> $(st "$dir" ioctls)" ;;
	baseline-agentkill-*)
		[ "$(grep '^then' "$dir/container.out" | grep -o 'ok=[0-9]*')" = ok=3 ] ||
			why="without the profile the later calls did not reach the driver: $(grep '^then' "$dir/container.out")" ;;
	stale-*)
		[ "$(st "$dir" allocs_ok)" = 0 ] && grep -q "not this agent's trap set" "$dir/agent.err" ||
			why="allocs_ok=$(st "$dir" allocs_ok), agent said: $(tail -1 "$dir/agent.err")" ;;
	i386-*)
		peak_within && [ "$rc" = 0 ] && [ "$(val "$dir/container.out" native)" = 0x0 ] &&
			[ "${peak:-0}" -ge $((512 << 20)) ] &&
			[ "$(val <(grep '^abi=i386 ' "$dir/container.out") end)" = exit:0 ] &&
			[ "$(val <(grep '^abi=i386 ' "$dir/container.out") nomem)" -ge 1 ] ||
			why=${why:-"rc=$rc native=$(val "$dir/container.out" native): $(grep '^abi=' "$dir/container.out" | tr '\n' ' ')"} ;;
	baseline-i386-*)
		[ "${peak:-0}" -gt "$QUOTA" ] || why="the 32-bit calls did not exceed the quota without the agent: peak=$peak" ;;
	two-runc)
		# Both held 768 MiB at once; the last chunks may not overlap.
		[ "$rc" = 0 ] && [ "${peak:-0}" -ge $((1536 << 20)) ] && [ "$peak" -le $((2048 << 20)) ] &&
			[ "$(grep -c '^first ok=3 ' "$dir/container.out")" = 2 ] &&
			[ "$(grep -c '^then ok=1 refused=1 first_refusal=NO_MEMORY' "$dir/container.out")" = 2 ] &&
			[ "$(grep -c 'torn down' "$dir/agent.err")" = 2 ] &&
			grep -q 'stopping with 0 container' "$dir/agent.err" &&
			python3 "$ROOT/tests/metrics/check_prom.py" "$dir/agent-mid.prom" >/dev/null &&
			[ "$(grep -cE '^gpusandbox_sandbox_info\{sandbox="[0-9a-f]+",container="gs-two-[ab]",pod="",namespace="",container_name=""\} 1$' "$dir/agent-mid.prom")" = 2 ] &&
			[ "$(awk '/^gpusandbox_memory_used_bytes\{/ { n += $2 } END { print n }' "$dir/agent-mid.prom")" = \
			  "$(awk '$1 == "gpu0.vidmem_used" { print $2 }' "$dir/stats-mid")" ] ||
			why="rc=$rc peak=$peak: $(tr '\n' ' ' <"$dir/container.out") agent: $(grep -c 'torn down' "$dir/agent.err") torn down; metrics: $(grep -c '^gpusandbox_memory_used_bytes' "$dir/agent-mid.prom" 2>&1) used series, $(python3 "$ROOT/tests/metrics/check_prom.py" "$dir/agent-mid.prom" 2>&1)" ;;
	peers-runc)
		# The container is judged as quota-*; the peers by their own clocks.
		local held_silent held_trickle held_garbage sent_huge alive
		held_silent=$(grep '^peer silent ' "$dir/peers.out" | grep -o 'held_ms=[0-9]*' | sed 's/.*=//' | sort -n | head -1)
		held_trickle=$(val <(grep '^peer trickle ' "$dir/peers.out") held_ms)
		held_garbage=$(val <(grep '^peer garbage ' "$dir/peers.out") held_ms)
		sent_huge=$(val <(grep '^peer huge ' "$dir/peers.out") sent)
		alive=$(val "$dir/peers.alive" alive_after_container)
		nomem=$(val "$dir/container.out" nomem)
		peak_within && [ "$rc" = 0 ] && [ "${nomem:-0}" -ge 1 ] &&
			[ "$(grep -c '^peer ' "$dir/peers.out")" = 6 ] &&
			[ "${held_silent:-0}" -ge $((PEER_HELD_MS)) ] && [ "${held_trickle:-0}" -ge $((PEER_HELD_MS)) ] &&
			[ "${held_garbage:-99999}" -lt $((PEER_HELD_MS)) ] &&
			[ "${sent_huge:-0}" -gt $((1 << 20)) ] && [ "$sent_huge" -lt $((PEER_HUGE_MAX)) ] &&
			[ "${alive:-0}" -ge 4 ] &&
			[ "$(grep -c 'refused a connection' "$dir/agent.err")" = 6 ] ||
			why=${why:-"rc=$rc nomem=$nomem alive=$alive peers: $(tr '\n' ' ' <"$dir/peers.out")"} ;;
	managed-*)
		local k want out=$dir/container.out log=$dir/gs-$name.jsonl
		for k in uvm_fixed=EPERM uvm_hint=EPERM uvm_validate=EPERM remap=EPERM file_shared=OK anon_shared=OK i386=unavailable; do
			want=${k#*=}; k=${k%%=*}
			[ "$(val "$out" "$k")" = "$want" ] || why=${why:-"$k=$(val "$out" "$k"), want $want"}
		done
		for k in uvm_offset0 uvm_readonly; do
			[ -n "$(val "$out" $k)" ] && [ "$(val "$out" $k)" != EPERM ] || why=${why:-"$k=$(val "$out" $k)"}
		done
		# Four refusals (three mmaps, folded into one record and a
		# "suppressed" count, and remap_file_pages), all audited.
		[ -n "$why" ] || { [ "$rc" = 0 ] && grep -q '"resource":"managed"' "$log" &&
			[ "$(jq -s '[.[] | select(.event == "summary")][0].decisions.refused' "$log")" -ge 4 ] &&
			grep -q '"managed":"deny"' "$log"; } || why=${why:-"rc=$rc, or the refusals are not audited"} ;;
	baseline-managed-*)
		# The fake's nvidia-uvm (a FUSE file) answers a shared mapping
		# with ENODEV: the calls reached the device, nothing stopped them.
		local k
		for k in uvm_fixed uvm_hint remap; do
			[ -n "$(val "$dir/container.out" $k)" ] && [ "$(val "$dir/container.out" $k)" != EPERM ] ||
				why=${why:-"$k was refused without the agent: $(tr '\n' ' ' <"$dir/container.out")"}
		done ;;
	p2panswer-runc | p2pperform-runc)
		# By the fake's own count: none performed under answer, every
		# one under the default; the container saw NV_OK either way.
		local mode=perform performed=$P2P_PAIRS log=$dir/gs-$name.jsonl
		[ "$name" = p2panswer-runc ] && mode=answer performed=0
		[ "$rc" = 0 ] && grep -q "^p2p_object=0x0 pairs_ok=$P2P_PAIRS reg_ok=$P2P_PAIRS unreg_ok=$P2P_PAIRS " "$dir/container.out" &&
			[ "$(st "$dir" p2p_registered)" = "$performed" ] && [ "$(st "$dir" p2p_unregistered)" = "$performed" ] &&
			grep -q "\"p2p_register\":\"$mode\"" "$log" ||
			why="rc=$rc registered=$(st "$dir" p2p_registered) (want $performed): $(head -c 200 "$dir/container.out")" ;;
	p2pdefault-runc)
		local log=$dir/gs-$name.jsonl
		[ "$rc" = 0 ] && grep -q "^p2p_object=0x56 pairs_ok=$P2P_PAIRS reg_ok=0 unreg_ok=0" "$dir/container.out" &&
			[ "$(st "$dir" p2p_objects_made)" = 0 ] && [ "$(st "$dir" p2p_registered)" = 0 ] &&
			grep -q '"p2p_register":"none"' "$log" ||
			why="rc=$rc objects=$(st "$dir" p2p_objects_made) registered=$(st "$dir" p2p_registered): $(head -c 200 "$dir/container.out")" ;;
	uvmhold-runc)
		peak_within && [ "$rc" = 0 ] &&
			grep -q '^mode=free first=0x0 map=0x0 free=0x0 second=0x0 ' "$dir/container.out" &&
			[ "$(st "$dir" uvm_mappings)" = 0 ] ||
			why=${why:-"rc=$rc mappings=$(st "$dir" uvm_mappings): $(head -c 200 "$dir/container.out")"} ;;
	asuser-runc | asuser-hostns-runc)
		# By the fake's counts (the final ones, after the container's
		# client is gone): under as-user one token share made and no client of the
		# agent's (clients_peak 1, the container's); in the host's
		# namespace neither, the agent's client made for the dup.
		local tokens=1 peak_clients=1 said="UVM maps made as uid $USERNS_HOST_UID" start='"uvm_map":"as-user"'
		[ "$name" = asuser-hostns-runc ] &&
			tokens=0 peak_clients=2 said="UVM maps by dup: it runs in the host's user namespace" start='"uvm_map":"dup"'
		peak_within && [ "$rc" = 0 ] &&
			grep -q '^mode=free first=0x0 map=0x0 free=0x0 second=0x0 ' "$dir/container.out" &&
			[ "$(st "$dir" uvm_mappings)" = 0 ] && [ "$(st "$dir" token_shares)" = "$tokens" ] &&
			[ "$(st "$dir" clients_peak)" = "$peak_clients" ] && grep -q "$said" "$dir/agent.err" &&
			grep -q "$start" "$dir"/gs-"$name".jsonl ||
			why=${why:-"rc=$rc mappings=$(st "$dir" uvm_mappings) token shares=$(st "$dir" token_shares) (want $tokens) clients_peak=$(st "$dir" clients_peak) (want $peak_clients): $(head -c 200 "$dir/container.out")"} ;;
	baseline-uvmhold-runc)
		[ "$rc" = 0 ] && [ "${peak:-0}" -gt "$QUOTA" ] &&
			grep -q '^mode=free first=0x0 map=0x0 free=0x0 second=0x0 ' "$dir/container.out" ||
			why="without the agent the mapping did not hold the memory: peak=$peak rc=$rc $(head -c 200 "$dir/container.out")" ;;
	uvmchannel-runc)
		# By the fake (its stats are outside the container): every
		# registration made, and the groups let go as they were freed.
		[ "$rc" = 0 ] && [ "$(st "$dir" gpu0.channel_groups_peak)" -le 4 ] &&
			grep -q '^rounds=8 alloc_ok=8 reg_ok=8 ' "$dir/container.out" ||
			why="rc=$rc groups peak $(st "$dir" gpu0.channel_groups_peak): $(grep -E '^(rounds|fake)' "$dir/container.out" | tr '\n' ' ')" ;;
	asuserchannel-runc)
		# By the fake: the groups let go as under uvmchannel-runc, and
		# every registration made by the agent as the container's uid
		# (a process other than the client's creator), none continued.
		[ "$rc" = 0 ] && [ "$(st "$dir" gpu0.channel_groups_peak)" -le 4 ] &&
			grep -q '^rounds=8 alloc_ok=8 reg_ok=8 ' "$dir/container.out" &&
			[ "$(st "$dir" uvm_channel_registrations_by_other)" = 8 ] ||
			why="rc=$rc groups peak $(st "$dir" gpu0.channel_groups_peak), registrations by the agent $(st "$dir" uvm_channel_registrations_by_other) of 8: $(grep -E '^(rounds|fake)' "$dir/container.out" | tr '\n' ' ')" ;;
	baseline-uvmchannel-runc)
		[ "$rc" = 0 ] && [ "$(st "$dir" gpu0.channel_groups_peak)" -gt 4 ] &&
			grep -q '^rounds=8 alloc_ok=8 reg_ok=8 ' "$dir/container.out" ||
			why="without the agent the registrations did not hold the groups: peak $(st "$dir" gpu0.channel_groups_peak) rc=$rc" ;;
	uvmrestart-runc|uvmkill-runc)
		# By the fake: A mapped before the restart (768 MiB held, one
		# mapping), its handle freed after it, B refused; peak 1 GiB at
		# most. uvmkill: the mapping made while no agent could commit
		# it, and the call given up (EINTR).
		local line='^mode=free first=0x0 map=0x0 free=0x0 second=0x51 '
		[ "$name" = uvmkill-runc ] && line='^mode=intr first=0x0 map=0xe0000004 free=0x0 second=0x51 '
		peak_within && [ "$(val "$dir/before" vidmem_used)" = $((3 * CHUNK)) ] &&
			[ "$(val "$dir/before" uvm_mappings)" = 1 ] &&
			grep -q "$line" "$dir/container.out" &&
			[ "$(grep -c 'resumed sandbox' "$dir/agent.err")" = 1 ] &&
			grep -q ': 1 UVM mapping pin(s) from before the restart' "$dir/agent.err" ||
			why=${why:-"before: $(cat "$dir/before" 2>/dev/null); $(head -c 200 "$dir/container.out"); peak=$peak resumed=$(grep -c 'resumed sandbox' "$dir/agent.err")"} ;;
	baseline-uvmkill-runc)
		# Without the pin: B granted while the mapping holds A, and
		# the fake's peak passes the quota.
		grep -q '^mode=intr first=0x0 map=0xe0000004 free=0x0 second=0x0 ' "$dir/container.out" &&
			[ -n "$peak" ] && [ "$peak" -gt "$QUOTA" ] ||
			why="the given-up map won nothing: before: $(cat "$dir/before" 2>/dev/null); $(head -c 200 "$dir/container.out"); peak=$peak" ;;
	stalehandle-runc)
		# By the fake: the map made, and once the agent had answered it
		# no CLIENT share policy on any memory and one on the
		# container's client object (one share per client, issue #31,
		# kept for the client's life); after the restart the attacker
		# took free handles, its scan covered every client handle the
		# fake had handed out, and every dup it tried was refused: the
		# policy's client (the dead agent's) is held by the keeper; the
		# memory went with the container's handle.
		[ "$(val "$dir/before" map)" = 0x0 ] && [ "$(val "$dir/before" policies)" = 1 ] &&
			[ "$(val "$dir/before" obj_policies)" = 0 ] &&
			[ "$(val "$dir/before" uvm_maps)" = 1 ] &&
			stale_refused &&
			[ "$(grep -c 'resumed sandbox' "$dir/agent.err")" = 1 ] ||
			why="before: $(cat "$dir/before" 2>/dev/null); attack: $(cat "$dir/attack.out" 2>/dev/null); container: $(head -c 200 "$dir/container.out"); after: $(cat "$dir/after" 2>/dev/null); resumed=$(grep -c 'resumed sandbox' "$dir/agent.err")" ;;
	stalestop-runc)
		# By the fake: the agent was stopped while the fake performed
		# its map (its stats unreadable); once it had exited no CLIENT
		# share policy was left on any memory, the one on the
		# container's client object names the agent's client, which the
		# keeper holds, and after the restart every dup the attacker
		# tried was refused, its scan covering every client handle the
		# fake had handed out.
		[ "$(val "$dir/stop" stopped_at_step)" -lt "$WAIT_STEPS" ] && [ "$(val "$dir/before" policies)" = 1 ] &&
			[ "$(val "$dir/before" obj_policies)" = 0 ] &&
			stale_refused ||
			why="$(cat "$dir/stop" 2>/dev/null); once stopped: $(cat "$dir/before" 2>/dev/null); attack: $(cat "$dir/attack.out" 2>/dev/null); container: $(head -c 200 "$dir/container.out"); after: $(cat "$dir/after" 2>/dev/null)" ;;
	baseline-stalehandle-runc)
		# Without the revoke: the policy outlived the agent's client,
		# the attacker's client at that handle dup'ed the memory, and
		# the fake still holds it after the container freed its handle
		# and exited.
		[ "$(val "$dir/before" map)" = 0x0 ] && [ "$(val "$dir/before" policies)" -ge 1 ] &&
			stale_won ||
			why="the stale handle won nothing: before: $(cat "$dir/before" 2>/dev/null); attack: $(cat "$dir/attack.out" 2>/dev/null); container: $(head -c 200 "$dir/container.out"); after: $(cat "$dir/after" 2>/dev/null)" ;;
	stalekill-runc)
		# By the fake: the agent was killed while the fake performed
		# its map (its stats unreadable), a CLIENT share policy outlived
		# it, and still every dup the attacker tried was refused, its
		# scan covering every client handle the fake had handed out (the
		# policy's client was held); the resumed agent answered the map
		# and the memory went with the container's handle.
		[ "$(val "$dir/stop" stopped_at_step)" -lt "$WAIT_STEPS" ] && [ "$(val "$dir/before" policies)" -ge 1 ] &&
			stale_refused &&
			[ "$(grep -c 'resumed sandbox' "$dir/agent.err")" = 1 ] ||
			why="$(cat "$dir/stop" 2>/dev/null); once killed: $(cat "$dir/before" 2>/dev/null); attack: $(cat "$dir/attack.out" 2>/dev/null); container: $(head -c 200 "$dir/container.out"); after: $(cat "$dir/after" 2>/dev/null); resumed=$(grep -c 'resumed sandbox' "$dir/agent.err")" ;;
	baseline-stalekill-runc)
		# Without the kept client: the dead agent's handle was free,
		# the attacker's client there dup'ed the memory, and the fake
		# still holds it after the container freed its handle and
		# exited.
		[ "$(val "$dir/before" policies)" -ge 1 ] &&
			stale_won ||
			why="the dead agent's handle won nothing: $(cat "$dir/stop" 2>/dev/null); once killed: $(cat "$dir/before" 2>/dev/null); attack: $(cat "$dir/attack.out" 2>/dev/null); container: $(head -c 200 "$dir/container.out"); after: $(cat "$dir/after" 2>/dev/null)" ;;
	mmapless-runc)
		[ "$rc" != 0 ] && ! grep -q '=EPERM' "$dir/container.out" && grep -q "does not trap mmap" "$dir/agent.err" ||
			why="rc=$rc, agent said: $(grep -m1 refused "$dir/agent.err")" ;;
	midcall-runc)
		[ "$(grep '^first' "$dir/container.out")" = "first ok=0 refused=1 first_refusal=errno:ENOSYS" ] &&
			[ "$(grep '^then' "$dir/container.out" | grep -o 'ok=[0-9]*')" = ok=0 ] &&
			[ "$(st "$dir" ioctls)" = "$(val "$dir/before" ioctls)" ] &&
			[ "$peak" = "$CHUNK" ] && [ "$(st "$dir" gpu0.vidmem_used)" = 0 ] ||
			why="$(tr '\n' ' ' <"$dir/container.out") $(cat "$dir/kill" 2>/dev/null); ioctls $(val "$dir/before" ioctls) -> $(st "$dir" ioctls), peak=$peak used=$(st "$dir" gpu0.vidmem_used)" ;;
	baseline-midcall-runc)
		[ "$(grep '^first' "$dir/container.out" | grep -o 'ok=[0-9]*')" = ok=1 ] &&
			[ "$(grep '^then' "$dir/container.out" | grep -o 'ok=[0-9]*')" = ok=2 ] ||
			why="without the profile the calls did not reach the driver: $(tr '\n' ' ' <"$dir/container.out")" ;;
	restart-runc)
		# By the fake: after the restart exactly the three chunks the
		# init asked for are held (the interrupted call made once, no
		# object leaked); the exec'd process gets the one chunk left
		# under 1 GiB; the init's last two: one, then NO_MEMORY. One
		# sandbox, resumed, never a second; its audit log one intact
		# chain across the restart, the undo in it.
		[ "$(grep '^first' "$dir/container.out")" = "first ok=3 refused=0 first_refusal=none" ] &&
			[ "$(val "$dir/before" vidmem_used)" = $((3 * CHUNK)) ] &&
			[ "$(val "$dir/exec.out" allocated)" = 1 ] && [ "$(val "$dir/exec.out" nomem)" -ge 1 ] &&
			[ "$(grep '^then' "$dir/container.out")" = "then ok=1 refused=1 first_refusal=NO_MEMORY" ] &&
			peak_within && [ "$(st "$dir" gpu0.vidmem_used)" = 0 ] &&
			[ "$(grep -c ': sandbox [0-9a-f]*, init pid' "$dir/agent.err")" = 1 ] &&
			[ "$(grep -c 'resumed sandbox' "$dir/agent.err")" = 1 ] &&
			[ "$(grep -c '"event":"start"' "$dir/gs-$name.jsonl")" = 1 ] &&
			grep -q '"call":"RM_FREE".*"the agent restarted while it performed' "$dir/gs-$name.jsonl" &&
			"$GS" audit verify "$dir/gs-$name.jsonl" >/dev/null 2>&1 ||
			why=${why:-"audit: $("$GS" audit verify "$dir/gs-$name.jsonl" 2>&1 | tail -1); $(tr '\n' ' ' <"$dir/container.out") exec: $(tr '\n' ' ' <"$dir/exec.out" 2>/dev/null) before: $(cat "$dir/before" 2>/dev/null) $(cat "$dir/kill" 2>/dev/null) peak=$peak used=$(st "$dir" gpu0.vidmem_used) sandboxes=$(grep -c ': sandbox [0-9a-f]*, init pid' "$dir/agent.err") resumed=$(grep -c 'resumed sandbox' "$dir/agent.err")"} ;;
	baseline-restart-runc)
		# Without a keeper the init loses its GPU (ENOSYS), and the
		# restarted agent gives an exec'd process a fresh quota: the
		# fake holds more than 1 GiB for the container.
		[ "$(grep '^first' "$dir/container.out" | grep -o 'first_refusal=.*')" = "first_refusal=errno:ENOSYS" ] &&
			[ "$(val "$dir/exec.out" allocated)" -ge 4 ] && [ "${peak:-0}" -gt "$QUOTA" ] ||
			why="$(tr '\n' ' ' <"$dir/container.out") exec: $(tr '\n' ' ' <"$dir/exec.out" 2>/dev/null) peak=$peak" ;;
	restartrelease-runc)
		# By the fake: the exec'd holder's 512 MiB were freed while no
		# agent ran (256 MiB held then); after the restart the init gets
		# 3 chunks more (1 GiB in all), not 1 as with the dead client
		# still charged; peak 1 GiB.
		[ "$(grep '^first' "$dir/exec.out")" = "first ok=2 refused=0 first_refusal=none" ] &&
			[ "$(val "$dir/before" vidmem_used)" = "$CHUNK" ] &&
			[ "$(grep '^then' "$dir/container.out")" = "then ok=3 refused=0 first_refusal=none" ] &&
			[ "$peak" = "$QUOTA" ] &&
			grep -q '2 of 2 client release watch(es) taken back' "$dir/agent.err" ||
			why="exec: $(tr '\n' ' ' <"$dir/exec.out" 2>/dev/null) init: $(tr '\n' ' ' <"$dir/container.out") before: $(cat "$dir/before" 2>/dev/null) peak=$peak; $(grep -m1 'taken back' "$dir/agent.err")" ;;
	restartstale-runc)
		# Killed at resume: its later calls never ran (no "then" line),
		# and nothing more reached the fake after the restart.
		[ "$(grep -c '^then' "$dir/container.out")" = 0 ] &&
			grep -q "cannot be resumed: it runs under trap set" "$dir/agent.err" &&
			[ "$(st "$dir" allocs_ok)" = "$(val "$dir/before" allocs_ok)" ] &&
			[ "$(st "$dir" ioctls)" = "$(val "$dir/before" ioctls)" ] ||
			why="$(tr '\n' ' ' <"$dir/container.out"); agent: $(grep -m1 'resume' "$dir/agent.err"); allocs_ok $(val "$dir/before" allocs_ok) -> $(st "$dir" allocs_ok)" ;;
	keeperkill-runc)
		local b_allocs b_ioctls
		b_allocs=$(val "$dir/before" allocs_ok)
		b_ioctls=$(val "$dir/before" ioctls)
		[ "$(val "$dir/container.out" first_refusal)" = "errno:ENOSYS" ] &&
			[ "$(grep '^then' "$dir/container.out" | grep -o 'ok=[0-9]*')" = ok=0 ] &&
			[ "$(st "$dir" allocs_ok)" = "$b_allocs" ] && [ "$(st "$dir" ioctls)" = "$b_ioctls" ] &&
			[ "$peak" = "$CHUNK" ] ||
			why="then: $(grep '^then' "$dir/container.out"); allocs_ok $b_allocs -> $(st "$dir" allocs_ok), ioctls $b_ioctls -> $(st "$dir" ioctls)" ;;
	keeperpeer-runc)
		# The peers got nothing and changed nothing: the restarted agent
		# resumed the container with its charges (one chunk more, then
		# NO_MEMORY, by the fake's peak).
		[ "$(grep -c '^peer .* ok$' "$dir/peers.out")" = 4 ] &&
			[ "$(grep -c 'refused a peer' "$dir/keeper.err")" -ge 1 ] &&
			[ "$(grep -c 'resumed sandbox' "$dir/agent.err")" = 1 ] &&
			[ "$(grep '^then' "$dir/container.out")" = "then ok=1 refused=1 first_refusal=NO_MEMORY" ] &&
			[ "$peak" = "$QUOTA" ] ||
			why="peers: $(tr '\n' ' ' <"$dir/peers.out") then: $(grep '^then' "$dir/container.out") peak=$peak resumed=$(grep -c 'resumed sandbox' "$dir/agent.err")" ;;
	abandon-runc)
		local log=$dir/gs-$name.jsonl out=$dir/container.out
		# first: the retried call got the object; more: 3 more chunks
		# filled the 1 GiB quota; after freeing: nothing left.
		[ "$(val "$out" first)" = NV_OK ] && [ "$(val "$out" signals)" = 1 ] && [ "$(val "$out" more)" = 3 ] &&
			[ "$(val "$out" freed)" = 4 ] && [ "$(val "$dir/after" vidmem_used)" = 0 ] &&
			grep -q '"call":"RM_FREE".*abandoned the call' "$log" ||
			why="$(cat "$out" 2>/dev/null) after: $(cat "$dir/after" 2>/dev/null); audited undo: $(grep -c 'abandoned the call' "$log" 2>/dev/null)" ;;
	k8s-runc)
		local log=$dir/trainer-7f9c_ml_cuda-gs-$name.jsonl
		peak_within && [ "$rc" = 0 ] && [ -s "$log" ] &&
			[ "$(head -1 "$log" | jq -c .labels)" = '{"container.id":"gs-k8s-runc","kubernetes.pod.name":"trainer-7f9c","kubernetes.pod.namespace":"ml","kubernetes.pod.uid":"0b7e8f0c-1d2e-4f3a-9b8c-7d6e5f4a3b2c","kubernetes.container.name":"cuda"}' ] ||
			why=${why:-"rc=$rc, logs: $(cd "$dir" && ls ./*.jsonl | tr '\n' ' ') labels: $(head -1 "$log" 2>/dev/null | jq -c .labels)"} ;;
	k8scrio-runc)
		local log=$dir/gs-$name.jsonl
		peak_within && [ "$rc" = 0 ] && [ -s "$log" ] && [ "$(ls "$dir"/*.jsonl | wc -l)" = 1 ] &&
			[ "$(head -1 "$log" | jq -c .labels)" = '{"container.id":"gs-k8scrio-runc","kubernetes.pod.name":"infer-0","kubernetes.pod.namespace":"serving","kubernetes.pod.uid":"5c0a2e34-8f1b-4b6d-a1e2-3f4a5b6c7d8e"}' ] &&
			grep -q 'annotation io.kubernetes.container.name is not a plain name' "$dir/agent.err" &&
			[ ! -e "$dir/../x" ] && [ -z "$(find "$tmp" -name '*x-gs-*' 2>/dev/null)" ] ||
			why=${why:-"rc=$rc, logs: $(cd "$dir" && ls ./*.jsonl | tr '\n' ' ') labels: $(head -1 "$log" 2>/dev/null | jq -c .labels)"} ;;
	named-runc)
		[ "$rc" = 0 ] && [ "${peak:-0}" = $((512 << 20)) ] && [ "$(val "$dir/container.out" nomem)" -ge 1 ] ||
			why="rc=$rc peak=$peak (want the named policy's 512 MiB)" ;;
	unnamed-runc)
		[ "$rc" != 0 ] && [ "$(st "$dir" allocs_ok)" = 0 ] && grep -q "nosuch.policy" "$dir/agent.err" ||
			why="rc=$rc allocs_ok=$(st "$dir" allocs_ok), agent said: $(grep -m1 refused "$dir/agent.err")" ;;
	sysadmin-*)
		[ "$rc" != 0 ] && [ "$(st "$dir" allocs_ok)" = 0 ] && grep -q "may hold CAP_SYS_ADMIN" "$dir/agent.err" ||
			why="rc=$rc allocs_ok=$(st "$dir" allocs_ok), agent said: $(grep -m1 container "$dir/agent.err")" ;;
	baseline-sysadmin-*)
		[ "$rc" = 0 ] && [ "${peak:-0}" -gt "$QUOTA" ] || why="the privileged container did not run: rc=$rc peak=$peak" ;;
	gpunode-runc|baseline-gpunode-runc)
		# Judged by the fake: a grant to B is one whose client's process
		# holds no node of GPU 0 (device_unentitled_grants).
		local unent attempts held
		unent=$(st "$dir" device_unentitled_grants)
		attempts=$(val "$dir/b.out" attempts)
		held=$(val "$dir/a.out" devices)
		if [ "$name" = gpunode-runc ]; then
			[ "$rc" = 0 ] && [ "${unent:-1}" = 0 ] && [ "$(val "$dir/b.out" wins)" = 0 ] &&
				[ "${attempts:-0}" -ge "$GPUNODE_MIN_ATTEMPTS" ] && [ "${held:-0}" -ge 1 ] &&
				[ "$(val "$dir/b.out" refused)" = status:0x1b ] ||
				why="B got a device on GPU 0: rc=$rc unentitled=$unent attempts=$attempts wins=$(val "$dir/b.out" wins) A's devices=$held"
		else
			[ "$rc" = 0 ] && [ "${unent:-0}" -ge 1 ] && [ "${held:-0}" -ge 1 ] ||
				why="the race never won in the shared table: rc=$rc unentitled=$unent attempts=$attempts A's devices=$held"
		fi ;;
	gpunode-stall-runc)
		# B's own clock and the fake's account, both at B's end, while
		# A's call was still stalled.
		local a0 a1 b1 grants
		a0=$(val "$dir/a.out" start) a1=$(val "$dir/a.out" end) b1=$(val "$dir/b.out" end)
		grants=$(cat "$dir/grants-at-b-end" 2>/dev/null)
		if [ -z "$a0" ] || [ -z "$a1" ] || [ ! -e "$dir/stallstate/stalling" ]; then
			why="A's call did not stall (start=$a0 end=$a1, stallfs's mark: $(ls "$dir/stallstate" | tr '\n' ' ')): the case proves nothing"
		else
			[ "$rc" = 0 ] && [ "$(val "$dir/b.out" devices)" = "$GPUNODE_OWN" ] &&
				[ "$(val "$dir/b.out" client)" = NV_OK ] && [ -n "$b1" ] && [ "$b1" -lt "$a1" ] &&
				[ ! -e "$dir/a-done-at-b-end" ] && [ ! -e "$dir/answered-at-b-end" ] &&
				[ "${grants:-0}" -ge "$GPUNODE_OWN" ] ||
				why="B waited for A's stall: rc=$rc B: $(cat "$dir/b.out" 2>/dev/null); A: start=$a0 end=$a1; fake's grants at B's end: $grants"
		fi ;;
	keyring-*|baseline-keyring-*|podmanbase-podman)
		# add_key refused as the profile's base refuses it (the default's
		# EPERM; podman's default: ENOSYS), or run (the allow-all
		# baseline); the GPU client held to its quota either way.
		local want_key="add_key=errno 1"
		case "$name" in baseline-*) want_key="add_key=ok" ;; podmanbase-*) want_key="add_key=errno 38" ;; esac
		nomem=$(val "$dir/container.out" nomem)
		peak_within && [ "$rc" = 0 ] && [ "${nomem:-0}" -ge 1 ] && grep -qx "$want_key" "$dir/container.out" ||
			why=${why:-"rc=$rc nomem=$nomem, want $want_key: $(grep add_key "$dir/container.out"; tail -2 "$dir/err" 2>/dev/null)"} ;;
	flood-runc|baseline-flood-runc)
		# The attacker's clients by the fake's count; the victim's by its
		# own (each an NV_OK from the fake: a client is continued).
		local live ok vok
		live=$(val "$dir/after-flood" clients_live)
		ok=$(val "$dir/attacker.out" ok)
		vok=$(val "$dir/victim.out" clients_ok)
		if [ "$name" = flood-runc ]; then
			[ "$rc" = 0 ] && [ "$live" = "$FLOOD_DEFAULT_CLIENTS" ] && [ "$ok" = "$FLOOD_DEFAULT_CLIENTS" ] &&
				[ "$(val "$dir/attacker.out" first_refusal)" = INSUFFICIENT_RESOURCES ] &&
				[ "$(cat "$dir/victim.rc" 2>/dev/null)" = 0 ] && [ "$vok" = "$VICTIM_CLIENTS" ] &&
				[ "$(val "$dir/victim.out" pairs_ok)" = "$VICTIM_PAIRS" ] &&
				grep -q "gpusandbox agent: open files: $FLOOD_HARD " "$dir/agent.err" ||
				why="rc=$rc fake's clients after the flood: $live; attacker: $(cat "$dir/attacker.out" 2>/dev/null); victim (rc $(cat "$dir/victim.rc" 2>/dev/null)): $(cat "$dir/victim.out" 2>/dev/null)"
		else
			[ "$rc" = 0 ] && [ "${live:-0}" -gt "$FLOOD_DEFAULT_CLIENTS" ] &&
				{ [ "$(cat "$dir/victim.rc" 2>/dev/null)" != 0 ] || [ "${vok:-0}" -lt "$VICTIM_CLIENTS" ]; } ||
				why="the flood did not deny the victim: rc=$rc fake's clients after the flood: $live; victim (rc $(cat "$dir/victim.rc" 2>/dev/null)): $(cat "$dir/victim.out" 2>/dev/null)"
		fi ;;
	storm-runc|baseline-storm-runc)
		# What the victim's searches compared (the agent's summary of its
		# container), beside the attacker's threads; the victim served.
		local line searches unb most
		line=$(grep "container gs-$name-victim: sharer searches=" "$dir/agent.err" | tail -1)
		searches=$(val <(echo "$line") searches) unb=$(val <(echo "$line") unbounded)
		most=$(val <(echo "$line") most_in_one)
		if [ "$(val "$dir/attacker.out" threads)" != "$STORM_THREADS" ] || [ "${searches:-0}" -lt "$STORM_CLIENTS" ]; then
			why="no storm, or no searches: attacker $(cat "$dir/attacker.out" 2>/dev/null); victim's line: $line"
		elif [ "$name" = storm-runc ]; then
			[ "$rc" = 0 ] && [ "$unb" = 0 ] && [ "${most:-$STORM_THREADS}" -le "$STORM_OWN_MAX" ] &&
				[ "$(cat "$dir/victim.rc" 2>/dev/null)" = 0 ] &&
				[ "$(val "$dir/victim.out" clients_ok)" = "$STORM_CLIENTS" ] ||
				why="rc=$rc victim's searches: $line; victim (rc $(cat "$dir/victim.rc" 2>/dev/null)): $(cat "$dir/victim.out" 2>/dev/null)"
		else
			[ "$rc" = 0 ] && [ "${most:-0}" -ge "$STORM_THREADS" ] ||
				why="the victim's searches did not walk the attacker's threads: rc=$rc $line"
		fi ;;
	objects-runc|baseline-objects-runc)
		# By the fake's count while the container held what it got.
		local live ok
		live=$(val "$dir/held" objects_live) ok=$(val "$dir/out" ok)
		if [ "$name" = objects-runc ]; then
			[ "$rc" = 0 ] && [ -n "$live" ] && [ "$live" -le "$OBJECTS_BOUND" ] &&
				[ "$ok" = $((OBJECTS_BOUND - OBJECTS_SESSION)) ] &&
				[ "$(val "$dir/out" first_refusal)" = INSUFFICIENT_RESOURCES ] &&
				grep -q '"reason":"object limit reached (policy key objects)"' "$dir"/gs-objects-runc.jsonl ||
				why="rc=$rc fake's objects while held: $live; container: $(cat "$dir/out" 2>/dev/null)"
		else
			[ "$rc" = 0 ] && [ "$ok" = "$OBJECTS_TRIED" ] && [ "${live:-0}" -gt "$OBJECTS_BOUND" ] ||
				why="rc=$rc fake's objects while held: $live; container: $(cat "$dir/out" 2>/dev/null)"
		fi ;;
	bench-runc)
		local walk=bounded
		[ -n "${TENANT_BENCH_FULL_WALK:-}" ] && walk=host
		echo "bench neighbours=${TENANT_BENCH_NEIGHBOURS:-0} threads_each=$STORM_THREADS walk=$walk" \
			"$(cat "$dir/victim.out" 2>/dev/null)"
		[ "$rc" = 0 ] && [ "$(cat "$dir/victim.rc" 2>/dev/null)" = 0 ] ||
			why="rc=$rc victim (rc $(cat "$dir/victim.rc" 2>/dev/null)): $(cat "$dir/victim.out" 2>/dev/null)" ;;
	second-crun)
		local want="mem_a=NV_OK second=NV_OK device_b=NV_OK mem_b=NV_OK over=NO_MEMORY dup=NV_OK free_b=NV_OK third=NV_OK"
		local got="" k
		for k in mem_a second device_b mem_b over dup free_b third; do got="$got $k=$(val "$dir/container.out" "$k")"; done
		[ "$rc" = 0 ] && [ "${got# }" = "$want" ] && [ "$peak" = "$QUOTA" ] && [ "$(st "$dir" clients_peak)" -ge 2 ] &&
			grep -q '"reason":"a second client on the control file, made by the caller' "$dir/gs-$name.jsonl" ||
			why="rc=$rc got${got}, peak $peak, clients_peak $(st "$dir" clients_peak); want $want, peak $QUOTA, 2 clients, the injection audited" ;;
	secondnokill-runc)
		# No livelock (the container ended), and one of the two ways:
		# our answer reached the caller before our interrupt (B made by
		# injection, audited), or the interrupt won: the agent said so
		# and the restarted call was refused as before injection.
		local second
		second=$(val "$dir/container.out" second)
		if [ "$second" = NV_OK ]; then
			[ "$rc" = 0 ] && [ "$(st "$dir" clients_peak)" = 2 ] && peak_within &&
				grep -q '"reason":"a second client on the control file, made by the caller' "$dir/gs-$name.jsonl" ||
				why=${why:-"rc=$rc B made but clients_peak $(st "$dir" clients_peak), or not audited as injected"}
		else
			[ "$rc" = 0 ] && [ "$second" = NOT_SUPPORTED ] && [ "$(st "$dir" clients_peak)" = 1 ] &&
				grep -q "second clients on this listener are refused" "$dir/agent.err" &&
				grep -q '"reason":"one client per open control file' "$dir/gs-$name.jsonl" ||
				why="rc=$rc second=$second clients_peak $(st "$dir" clients_peak), or the agent did not say the listener's waits are interruptible"
		fi ;;
	baseline-second-crun)
		[ "$rc" = 0 ] && [ "$(val "$dir/container.out" second)" = NOT_SUPPORTED ] && [ "$(st "$dir" clients_peak)" = 1 ] ||
			why="rc=$rc second=$(val "$dir/container.out" second) clients_peak $(st "$dir" clients_peak): want NOT_SUPPORTED, 1" ;;
	secondbusy-crun)
		local c=$dir/ctmp kept
		kept=$(grep -o 'calls kept during injections=[0-9]*' "$dir/agent.err" | tail -1 | sed 's/.*=//')
		[ "$rc" = 0 ] && [ "${kept:-0}" -ge 1 ] && [ "$(val "$c/sc.out" second)" = NV_OK ] &&
			[ "$(val "$c/sc.out" third)" = NV_OK ] && [ "$(val "$c/sc.out" fourth)" = NV_OK ] &&
			peak_within && [ "$(val "$c/raw.out" nomem)" -ge 1 ] && [ "$(val "$c/raw.rc" raw_rc)" = 0 ] ||
			why=${why:-"rc=$rc kept=$kept clients: $(cat "$c/sc.out" 2>/dev/null | tr '\n' ' ') static_raw: $(cat "$c/raw.out" "$c/raw.rc" 2>/dev/null | tr '\n' ' ')"} ;;
	secondflip-crun)
		# Both paths raced, 768 MiB held: the peak is the assertion.
		local injected
		injected=$(grep -c '"reason":"a second client on the control file, made by the caller' "$dir/gs-$name.jsonl")
		peak_within && [ "$rc" = 0 ] && [ "$injected" -ge 10 ] && [ "$(val "$dir/container.out" flip_refused)" -ge 100 ] &&
			[ "${peak:-0}" -ge $((3 * CHUNK)) ] ||
			why=${why:-"not exercised: rc=$rc $(grep -o 'flip_ok=.*' "$dir/container.out") injected=$injected peak=$peak"} ;;
	baseline-secondflip-crun)
		[ "${peak:-0}" -gt "$QUOTA" ] ||
			why="second client continued: the fake's peak $peak, $(grep -o 'flip_ok=.*' "$dir/container.out"): not sensitive" ;;
	injectkept-crun|baseline-injectkept-crun)
		local c=$dir/ctmp answered
		answered=$(grep -c "answered the call the previous agent had in flight" "$dir/agent.err")
		if [ "$name" = injectkept-crun ]; then
			[ "$rc" = 0 ] && [ "$answered" -ge 1 ] && [ "$(val "$c/raw.rc" raw_rc)" = 0 ] &&
				[ "$(val "$c/raw.out" nomem)" -ge 1 ] && peak_within ||
				why=${why:-"rc=$rc answered=$answered static_raw: $(cat "$c/raw.out" "$c/raw.rc" 2>/dev/null | tr '\n' ' ')"}
		else
			[ "$rc" = 0 ] && [ "$answered" = 0 ] && [ ! -e "$c/raw.rc" ] ||
				why="rc=$rc answered=$answered static_raw: $(cat "$c/raw.out" "$c/raw.rc" 2>/dev/null | tr '\n' ' '): want it never answered"
		fi ;;
	injectkill-crun)
		# Killed with its tracer: 128 + SIGKILL, nothing printed after
		# the call; the restarted agent held the quota for the next one.
		local c=$dir/ctmp
		[ "$rc" = 0 ] && [ "$(val "$c/mid.out" mem_a)" = NV_OK ] && [ "$(val "$c/mid.rc" midinject_rc)" = 137 ] &&
			! grep -q lived_on "$c/mid.out" && [ "$(st "$dir" clients_peak)" = 1 ] && peak_within &&
			[ "$(val "$c/raw.out" nomem)" -ge 1 ] && [ "$(val "$c/raw.rc" raw_rc)" = 0 ] ||
			why=${why:-"rc=$rc caller: $(cat "$c/mid.out" "$c/mid.rc" 2>/dev/null | tr '\n' ' ') clients_peak $(st "$dir" clients_peak); next: $(cat "$c/raw.out" "$c/raw.rc" 2>/dev/null | tr '\n' ' ')"} ;;
	baseline-injectkill-crun)
		# It ran on: its ioctl returned what our mmap had left in rax.
		local c=$dir/ctmp ret
		ret=$(val "$c/mid.out" ret)
		[ "$rc" = 0 ] && [ "$(val "$c/mid.out" lived_on)" = 1 ] && [ "$ret" != 0 ] &&
			[ $((ret)) -gt 0 ] ||
			why="rc=$rc caller: $(cat "$c/mid.out" "$c/mid.rc" 2>/dev/null | tr '\n' ' '): want it to live on with a return neither 0 nor -errno" ;;
	runc-flags)
		[ "$rc" != 0 ] && [ "$(st "$dir" allocs_ok)" = 0 ] ||
			why="runc accepted the flag (rc=$rc): update the profile's advice" ;;
	esac
	[ -z "$why" ] && pass "$name" || fail "$name" "$why"
}

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
