#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tamper.py MUTATION IN OUT - one way of altering an audit log.

Used by tests/audit/run.sh: each mutation is something an attacker (or a
broken disk) could do to a real log; `gpusandbox audit verify` must say
which record and why. "rehash" mutations also recompute the altered
record's own hash, as a forger who knows the algorithm would.
"""
import hashlib
import json
import re
import sys

SUFFIX = re.compile(rb',"hash":"([0-9a-f]{64})"\}$')


def rehash(line):
    """The line with its hash recomputed over its (altered) text."""
    m = SUFFIX.search(line)
    body = line[:m.start()] + b"}"
    return line[:m.start()] + b',"hash":"' + hashlib.sha256(body).hexdigest().encode() + b'"}'


def first_sandbox(lines):
    return json.loads(lines[0])["sandbox"].encode()


def of_sandbox(lines, sb):
    return [i for i, l in enumerate(lines) if b'"sandbox":"' + sb + b'"' in l]


def chained(lines, sb, event, seq, extra=b""):
    """A record that follows the sandbox's last record, correctly hashed."""
    last = json.loads(lines[of_sandbox(lines, sb)[-1]])
    body = (b'{"time":"2026-01-01T00:00:00.000000Z","sandbox":"' + sb + b'","seq":' +
            str(seq).encode() + b',"event":"' + event + b'"' + extra +
            b',"prev":"' + last["hash"].encode() + b'"}')
    return body[:-1] + b',"hash":"' + hashlib.sha256(body).hexdigest().encode() + b'"}'


def forged_sandbox(sb, records):
    """A whole sandbox of its own: start .. seal, a valid chain."""
    out, prev = [], b"0" * 64
    for seq in range(records):
        event = b"start" if seq == 0 else b"seal" if seq == records - 1 else b"decision"
        extra = b',"records":' + str(seq).encode() if event == b"seal" else b""
        body = (b'{"time":"2026-01-01T00:00:00.000000Z","sandbox":"' + sb + b'","seq":' +
                str(seq).encode() + b',"event":"' + event + b'"' + extra + b',"prev":"' + prev + b'"}')
        prev = hashlib.sha256(body).hexdigest().encode()
        out.append(body[:-1] + b',"hash":"' + prev + b'"}')
    return out


def mutate(kind, lines):
    sb = first_sandbox(lines)
    mine = of_sandbox(lines, sb)
    mid = mine[len(mine) // 2]
    if kind == "edit":                 # a value changed, hash left as it was
        lines[mid] = lines[mid].replace(b'"seq":', b'"seq": ', 1)
    elif kind == "edit-rehash":        # changed and its own hash recomputed
        lines[mid] = rehash(lines[mid].replace(b'"time":"2', b'"time":"1', 1))
    elif kind == "delete":
        del lines[mid]
    elif kind == "delete-first":
        del lines[mine[0]]
    elif kind == "duplicate":
        lines.insert(mid, lines[mid])
    elif kind == "swap":
        a, b = mine[1], mine[2]
        lines[a], lines[b] = lines[b], lines[a]
    elif kind == "truncate-seal":      # the log cut after a whole record
        del lines[mine[-1]]
    elif kind == "after-seal":         # a well-chained record after the seal
        lines.append(chained(lines, sb, b"decision", len(mine)))
    elif kind == "insert-forged":      # a record in the middle, chained to its predecessor
        prev = json.loads(lines[mid - 1] if mid - 1 in mine else lines[mine[0]])
        seq = prev["seq"] + 1
        body = (b'{"time":"2026-01-01T00:00:00.000000Z","sandbox":"' + sb + b'","seq":' +
                str(seq).encode() + b',"event":"decision","prev":"' + prev["hash"].encode() + b'"}')
        forged = body[:-1] + b',"hash":"' + hashlib.sha256(body).hexdigest().encode() + b'"}'
        lines.insert(mine.index(mid) and mid, forged)
    elif kind == "bad-utf8":
        lines[mid] = lines[mid].replace(b'"event":"', b'"event":"\xff', 1)
    elif kind == "forged-sandbox":     # a complete sandbox of the forger's own
        lines.extend(forged_sandbox(b"f0f0f0f0f0f0f0f0", 4))
    else:
        raise SystemExit(f"unknown mutation {kind}")
    return lines


def main():
    kind, src, dst = sys.argv[1:4]
    data = open(src, "rb").read()
    lines = data.rstrip(b"\n").split(b"\n")
    if kind == "cut-line":             # a write cut short inside the last record
        out = data[:-40]
    else:
        out = b"\n".join(mutate(kind, lines)) + b"\n"
    open(dst, "wb").write(out)


main()
