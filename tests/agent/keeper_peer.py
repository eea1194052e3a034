#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""keeper_peer.py SOCKET CONTAINER_ID - hostile peers of `gpusandbox keeper`.

Each peer connects to the keeper's socket on its own, sends one thing and
reads what comes back for a second. A peer of another uid (65534) sends a
HELLO (which would be answered with every listener the keeper holds) and
a DROP of the container (which would end its restart survival); root peers
send garbage and a record of the right size with a wrong magic and fds.
Prints "peer NAME got=N fds=M ok" when nothing came back, LEAK otherwise.
The message layout is supervisor/agent/keeper_proto.h's.
"""
import os
import socket
import struct
import sys

MAGIC = 0x6B707367
OP_HELLO, OP_DROP = 1, 4
ID_MAX = 128
NOBODY = 65534
READ_S = 1.0


def record(op, nfds, cid=b"", magic=MAGIC):
    return struct.pack("<4I%ds" % ID_MAX, magic, op, 0, nfds, cid)


def peer(path, name, data, fds, uid):
    """Runs in a child (setuid is for good); reports on a pipe."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        line = f"peer {name} error\n"
        try:
            if uid is not None:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.settimeout(READ_S)
            s.connect(path)
            sent = [os.pidfd_open(os.getpid())] if fds == "self" else [os.open("/dev/null", os.O_RDONLY) for _ in range(fds)]
            try:
                socket.send_fds(s, [data], sent)
            except OSError:
                pass
            got = nfds = 0
            try:
                while True:
                    m, f, _, _ = socket.recv_fds(s, 4096, 8)
                    if not m and not f:
                        break
                    got += 1
                    nfds += len(f)
            except OSError:
                pass
            line = f"peer {name} got={got} fds={nfds} {'ok' if got == 0 and nfds == 0 else 'LEAK'}\n"
        except OSError as e:
            line = f"peer {name} error={e}\n"
        os.write(w, line.encode())
        os._exit(0)
    os.close(w)
    out = os.read(r, 4096).decode()
    os.close(r)
    os.waitpid(pid, 0)
    sys.stdout.write(out)


def main():
    path, cid = sys.argv[1], sys.argv[2].encode()
    peer(path, "wronguid-hello", record(OP_HELLO, 1), "self", NOBODY)
    peer(path, "wronguid-drop", record(OP_DROP, 0, cid), 0, NOBODY)
    peer(path, "garbage", os.urandom(200), 0, None)
    peer(path, "badmagic", record(OP_HELLO, 2, magic=0x41414141), 2, None)


if __name__ == "__main__":
    main()
