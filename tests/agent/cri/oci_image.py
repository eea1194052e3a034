#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/agent/cri/oci_image.py ROOTFS NAME OUT.tar [ENTRYPOINT...] - an
OCI image archive (image-layout: oci-layout, index.json, blobs/sha256) of
one uncompressed layer holding ROOTFS, named NAME for `ctr image import`
(the io.containerd.image.name annotation). No registry is reachable here,
so the images containerd's CRI plugin runs (the pod's sandbox and its
container) are made from tests/agent's busybox root this way.
"""
import hashlib
import io
import json
import platform
import sys
import tarfile

ARCH = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())


def layer_of(rootfs):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        # Owned by root whatever the files here are: as an image's would be.
        def as_root(info):
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            return info
        t.add(rootfs, arcname=".", filter=as_root)
    return buf.getvalue()


def blob(out, data, media_type, extra=None):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    info = tarfile.TarInfo("blobs/sha256/" + digest.split(":")[1])
    info.size = len(data)
    out.addfile(info, io.BytesIO(data))
    desc = {"mediaType": media_type, "digest": digest, "size": len(data)}
    desc.update(extra or {})
    return desc


def add_file(out, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    out.addfile(info, io.BytesIO(data))


def main():
    rootfs, name, path, entry = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    layer = layer_of(rootfs)
    config = {
        "architecture": ARCH, "os": "linux",
        "config": {"Entrypoint": entry} if entry else {},
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer).hexdigest()]},
    }
    with tarfile.open(path, "w") as out:
        ldesc = blob(out, layer, "application/vnd.oci.image.layer.v1.tar")
        cdesc = blob(out, json.dumps(config).encode(), "application/vnd.oci.image.config.v1+json")
        manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "config": cdesc, "layers": [ldesc]}
        mdesc = blob(out, json.dumps(manifest).encode(), "application/vnd.oci.image.manifest.v1+json",
                     {"platform": {"architecture": ARCH, "os": "linux"},
                      "annotations": {"io.containerd.image.name": name,
                                      "org.opencontainers.image.ref.name": name.rsplit(":", 1)[-1]}})
        add_file(out, "oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}).encode())
        add_file(out, "index.json", json.dumps({"schemaVersion": 2, "manifests": [mdesc]}).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
