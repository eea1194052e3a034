#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_prom.py FILE - checks a Prometheus text exposition strictly.

The rules of https://prometheus.io/docs/instrumenting/exposition_formats/
(text format 0.0.4) and of the naming conventions gpusandbox follows:
- every line is a "# HELP name text", a "# TYPE name type" or a sample
  "name{label="value",...} value", and the file ends with a newline;
- names match [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]*
  (not starting with __); label values escape only \\\\, \\" and \\n;
- each family has one HELP and one TYPE, both before its first sample, and
  its samples are together; no series (name and label set) appears twice;
- a counter's name ends in _total and its values are finite and >= 0;
  a gauge's name does not end in _total; every name starts gpusandbox_;
- the file is valid UTF-8.
Prints "ok N families M samples", or the first problem with its line
number (exit 1). With --json, prints the samples as JSON for the caller's
value checks instead of the count.
"""
import json
import math
import re
import sys

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


class Bad(Exception):
    pass


def parse_labels(s, i, lineno):
    """Parses {a="x",b="y"} from s[i] == "{"; returns (dict, index after })."""
    labels = {}
    i += 1
    while True:
        if i < len(s) and s[i] == "}":
            return labels, i + 1
        m = LABEL.match(s, i)
        if not m:
            raise Bad(f"line {lineno}: bad label name at column {i + 1}")
        name = m.group(0)
        if name.startswith("__"):
            raise Bad(f"line {lineno}: label {name} is reserved")
        if name in labels:
            raise Bad(f"line {lineno}: label {name} twice")
        i = m.end()
        if s[i:i + 2] != '="':
            raise Bad(f"line {lineno}: label {name} without =\"")
        i += 2
        val = []
        while True:
            if i >= len(s):
                raise Bad(f"line {lineno}: label {name}'s value is not closed")
            c = s[i]
            if c == "\\":
                nxt = s[i + 1:i + 2]
                if nxt not in ("\\", '"', "n"):
                    raise Bad(f"line {lineno}: bad escape \\{nxt} in label {name}")
                val.append("\n" if nxt == "n" else nxt)
                i += 2
            elif c == '"':
                i += 1
                break
            elif c == "\n":
                raise Bad(f"line {lineno}: raw newline in label {name}")
            else:
                val.append(c)
                i += 1
        labels[name] = "".join(val)
        if i < len(s) and s[i] == ",":
            i += 1
        elif i < len(s) and s[i] == "}":
            continue
        else:
            raise Bad(f"line {lineno}: expected , or }} after label {name}")


def check(data):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Bad(f"not UTF-8: {e}")
    if not text.endswith("\n"):
        raise Bad("the file does not end with a newline")
    helps, types, seen_samples, series = {}, {}, [], set()
    samples = []
    for lineno, line in enumerate(text[:-1].split("\n"), 1):
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) < 3 or parts[0] != "#" or parts[1] not in ("HELP", "TYPE"):
                raise Bad(f"line {lineno}: a comment that is neither HELP nor TYPE")
            kind, name = parts[1], parts[2]
            if not NAME.fullmatch(name):
                raise Bad(f"line {lineno}: bad metric name {name!r}")
            table = helps if kind == "HELP" else types
            if name in table:
                raise Bad(f"line {lineno}: second {kind} for {name}")
            if name in seen_samples:
                raise Bad(f"line {lineno}: {kind} for {name} after its samples")
            text_part = parts[3] if len(parts) == 4 else ""
            if kind == "TYPE" and text_part not in TYPES:
                raise Bad(f"line {lineno}: bad type {text_part!r}")
            if kind == "HELP" and not text_part:
                raise Bad(f"line {lineno}: empty HELP for {name}")
            table[name] = text_part
            continue
        m = NAME.match(line)
        if not m:
            raise Bad(f"line {lineno}: not a sample: {line[:60]!r}")
        name, i = m.group(0), m.end()
        labels = {}
        if i < len(line) and line[i] == "{":
            labels, i = parse_labels(line, i, lineno)
        if line[i:i + 1] != " ":
            raise Bad(f"line {lineno}: no space before the value")
        fields = line[i + 1:].split(" ")
        if len(fields) not in (1, 2):
            raise Bad(f"line {lineno}: extra fields after the value")
        try:
            value = float(fields[0])
        except ValueError:
            raise Bad(f"line {lineno}: bad value {fields[0]!r}")
        if name not in types or name not in helps:
            raise Bad(f"line {lineno}: sample of {name} before its HELP and TYPE")
        if seen_samples and seen_samples[-1] != name and name in seen_samples:
            raise Bad(f"line {lineno}: samples of {name} are not together")
        if not seen_samples or seen_samples[-1] != name:
            seen_samples.append(name)
        key = (name, tuple(sorted(labels.items())))
        if key in series:
            raise Bad(f"line {lineno}: series {name}{labels} twice")
        series.add(key)
        if not name.startswith("gpusandbox_"):
            raise Bad(f"line {lineno}: {name} lacks the gpusandbox_ prefix")
        if types[name] == "counter":
            if not name.endswith("_total"):
                raise Bad(f"line {lineno}: counter {name} does not end in _total")
            if not math.isfinite(value) or value < 0:
                raise Bad(f"line {lineno}: counter {name} = {value}")
        elif name.endswith("_total"):
            raise Bad(f"line {lineno}: {types[name]} {name} ends in _total")
        samples.append({"name": name, "labels": labels, "value": value})
    for name in types:
        if name not in helps:
            raise Bad(f"{name} has a TYPE but no HELP")
    return types, samples


def main():
    args = sys.argv[1:]
    as_json = args[:1] == ["--json"]
    if as_json:
        args = args[1:]
    if len(args) != 1:
        print("usage: check_prom.py [--json] FILE", file=sys.stderr)
        return 2
    try:
        types, samples = check(open(args[0], "rb").read())
    except Bad as e:
        print(f"{args[0]}: {e}")
        return 1
    print(json.dumps(samples) if as_json else f"ok {len(types)} families {len(samples)} samples")
    return 0


if __name__ == "__main__":
    sys.exit(main())
