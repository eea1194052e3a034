#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""scrape.py URL DEADLINE_S FILE OUT: scrapes a node_exporter whose textfile
collector reads FILE (retrying until it answers, for at most DEADLINE_S
seconds), writes the page to OUT, and checks what it exports:
  - node_textfile_scrape_error is 0 (the collector took the file);
  - every sample of FILE is exported once, with its labels (as a set) and
    its value;
  - FILE has no (name, label set) twice (the collector would refuse it);
  - gpusandbox_refusals_total has samples for at least two GPUs with one
    outcome and reason (the case this tier makes); left out with
    --file-only (tests/agent/walk.sh: one container, no refusal yet).
Prints "ok: N samples" (exit 0) or each problem (exit 1)."""
import sys
import time
import urllib.request



def parse_labels(text):
    """'a="x",b="y\\""' -> frozenset of (name, unescaped value)."""
    labels, i = [], 0
    while i < len(text):
        eq = text.index("=", i)
        name = text[i:eq].strip().lstrip(",").strip()
        j, value = eq + 2, []
        while text[j] != '"':
            if text[j] == "\\":
                j += 1
                value.append({"n": "\n"}.get(text[j], text[j]))
            else:
                value.append(text[j])
            j += 1
        # An empty value is no label (Prometheus' data model): the
        # collector gives every sample of a family the family's label
        # names, empty where a sample had none.
        if value:
            labels.append((name, "".join(value)))
        i = j + 1
        while i < len(text) and text[i] in ", ":
            i += 1
    return frozenset(labels)


def parse_samples(text):
    """[((name, label set), value)] of every sample line."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        series, value = line.rsplit(" ", 1) if "}" not in line else line.rsplit("}", 1)
        if "{" in series:
            name, labels = series.split("{", 1)
            key = (name, parse_labels(labels))
        else:
            key = (series.strip(), frozenset())
        out.append((key, float(value.split()[0])))
    return out


def scrape(url, deadline_s):
    end = time.monotonic() + deadline_s
    last = None
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                return r.read().decode()
        except OSError as e:
            last = e
            time.sleep(0.1)
    raise SystemExit(f"no answer from {url} within {deadline_s} s: {last}")


def main():
    args = sys.argv[1:]
    file_only = args[:1] == ["--file-only"]
    if file_only:
        args = args[1:]
    url, deadline, path, out = args[0], float(args[1]), args[2], args[3]
    page = scrape(url, deadline)
    with open(out, "w") as f:
        f.write(page)
    with open(path) as f:
        mine = parse_samples(f.read())
    theirs = parse_samples(page)
    problems = []
    seen = {}
    for key, value in mine:
        if key in seen:
            problems.append(f"{path}: {key} twice")
        seen[key] = value
    exported = dict(theirs)
    err = [v for (name, labels), v in theirs if name == "node_textfile_scrape_error"]
    if err != [0.0]:
        problems.append(f"node_textfile_scrape_error {err} (the collector refused the file)")
    for key, value in seen.items():
        if exported.get(key) != value:
            problems.append(f"{key}: file {value}, exported {exported.get(key)}")
    gpus = {}
    for (name, labels), _ in mine:
        if name == "gpusandbox_refusals_total":
            d = dict(labels)
            if "gpu" in d:
                gpus.setdefault((d.get("outcome"), d.get("reason")), set()).add(d["gpu"])
    if not file_only and not any(len(g) >= 2 for g in gpus.values()):
        problems.append(f"no refusal reason on two GPUs: {gpus}")
    if problems:
        print("\n".join(problems))
        return 1
    print(f"ok: {len(seen)} samples")
    return 0


if __name__ == "__main__":
    sys.exit(main())
