#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""tests/agent/cri/cri.py SOCKET COMMAND ... - the kubelet's side of the CRI
(runtime.v1, tests/agent/cri/runtime.proto) for tests/agent/walk.sh, so that
containerd's CRI plugin makes the container's OCI config as it does on a
cluster: the pod's annotations go through its pod_annotations filter, the
pod's names become its io.kubernetes.cri.* annotations, and the Localhost
seccomp profile is read from the path the kubelet would give.

  start SPEC.json OUT   runs the pod sandbox (host network: no CNI here)
                        and creates and starts its container; writes
                        OUT/pod.id and OUT/container.id. SPEC: {"pod":
                        {"name", "namespace", "uid", "annotations"},
                        "container": {"name", "image", "command",
                        "mounts": [[host, container], ...], "seccomp":
                        PATH, "log_dir": DIR}}
  wait ID TIMEOUT_S     until the container has exited: prints its exit
                        code (exit 0), or "timeout" (exit 1)
  remove POD_ID ID      stops and removes the container and the pod

Debian's python3-grpcio and python3-protobuf (hence /usr/bin/python3, not
another interpreter on PATH); the message classes are made with protoc
(protobuf-compiler) at each start, into a temporary folder.
"""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
WAIT_STEP_S = 0.1
CALL_TIMEOUT_S = 60


def load_messages():
    out = tempfile.mkdtemp(prefix="gs-cri-pb.")
    atexit.register(shutil.rmtree, out, True)
    subprocess.run(["protoc", "-I", HERE, "--python_out=" + out, os.path.join(HERE, "runtime.proto")], check=True)
    sys.path.insert(0, out)
    import runtime_pb2
    return runtime_pb2


pb = load_messages()


def call(channel, method, request, response_class):
    rpc = channel.unary_unary("/runtime.v1.RuntimeService/" + method,
                              request_serializer=lambda m: m.SerializeToString(),
                              response_deserializer=response_class.FromString)
    return rpc(request, timeout=CALL_TIMEOUT_S)


def sandbox_config(pod, log_dir):
    return pb.PodSandboxConfig(
        metadata=pb.PodSandboxMetadata(name=pod["name"], namespace=pod["namespace"], uid=pod["uid"]),
        log_directory=log_dir,
        annotations=pod.get("annotations", {}),
        linux=pb.LinuxPodSandboxConfig(security_context=pb.LinuxSandboxSecurityContext(
            namespace_options=pb.NamespaceOption(network=pb.NODE))))


def container_config(c):
    profile = pb.SecurityProfile(profile_type=pb.SecurityProfile.Localhost, localhost_ref=c["seccomp"])
    return pb.ContainerConfig(
        metadata=pb.ContainerMetadata(name=c["name"]),
        image=pb.ImageSpec(image=c["image"]),
        command=c["command"],
        mounts=[pb.Mount(host_path=h, container_path=p) for h, p in c.get("mounts", [])],
        log_path=c["name"] + ".log",
        linux=pb.LinuxContainerConfig(security_context=pb.LinuxContainerSecurityContext(
            namespace_options=pb.NamespaceOption(network=pb.NODE, pid=pb.CONTAINER),
            seccomp_profile_path="localhost/" + c["seccomp"], seccomp=profile)))


def start(channel, spec_path, out):
    with open(spec_path) as f:
        spec = json.load(f)
    sbc = sandbox_config(spec["pod"], spec["container"]["log_dir"])
    pod_id = call(channel, "RunPodSandbox", pb.RunPodSandboxRequest(config=sbc), pb.RunPodSandboxResponse).pod_sandbox_id
    with open(os.path.join(out, "pod.id"), "w") as f:
        f.write(pod_id + "\n")
    cid = call(channel, "CreateContainer", pb.CreateContainerRequest(
        pod_sandbox_id=pod_id, config=container_config(spec["container"]), sandbox_config=sbc),
        pb.CreateContainerResponse).container_id
    with open(os.path.join(out, "container.id"), "w") as f:
        f.write(cid + "\n")
    call(channel, "StartContainer", pb.StartContainerRequest(container_id=cid), pb.StartContainerResponse)
    return 0


def wait(channel, cid, timeout_s):
    end = time.monotonic() + float(timeout_s)
    while time.monotonic() < end:
        st = call(channel, "ContainerStatus", pb.ContainerStatusRequest(container_id=cid),
                  pb.ContainerStatusResponse).status
        if st.state == pb.CONTAINER_EXITED:
            print(st.exit_code)
            return 0
        time.sleep(WAIT_STEP_S)
    print("timeout")
    return 1


def remove(channel, pod_id, cid):
    if cid:
        call(channel, "StopContainer", pb.StopContainerRequest(container_id=cid, timeout=0), pb.StopContainerResponse)
        call(channel, "RemoveContainer", pb.RemoveContainerRequest(container_id=cid), pb.RemoveContainerResponse)
    call(channel, "StopPodSandbox", pb.StopPodSandboxRequest(pod_sandbox_id=pod_id), pb.StopPodSandboxResponse)
    call(channel, "RemovePodSandbox", pb.RemovePodSandboxRequest(pod_sandbox_id=pod_id), pb.RemovePodSandboxResponse)
    return 0


def main():
    sock, cmd, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    with grpc.insecure_channel("unix://" + sock) as channel:
        try:
            if cmd == "start":
                return start(channel, *args)
            if cmd == "wait":
                return wait(channel, *args)
            if cmd == "remove":
                return remove(channel, args[0], args[1] if len(args) > 1 else "")
        except grpc.RpcError as e:
            print("%s: %s: %s" % (cmd, e.code().name, e.details()), file=sys.stderr)
            return 1
    print("usage: cri.py SOCKET start|wait|remove ...", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
