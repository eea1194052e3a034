#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/deploy/doc_manifests.py DOC OUT_JSON - the manifests of DOC's
"Several pods on one GPU" section (docs/kubernetes.md): every ```yaml block
there parses, they hold the three set-ups (the device plugin's
time-slicing config, whose own YAML parses and says replicas > 1 of
nvidia.com/gpu; a HAMi pod; a DRA ResourceClaimTemplate and the pod that
uses it), and their documents go to OUT_JSON for cel_docs.cjs. Prints
PASS/FAIL per check."""
import json, re, sys
import yaml

doc, out = sys.argv[1], sys.argv[2]
text = open(doc).read()
section = re.search(r"^## Several pods on one GPU\n(.*?)(?=^## )", text, re.M | re.S)
passed = failed = 0


def check(name, ok, why=""):
    global passed, failed
    passed, failed = (passed + 1, failed) if ok else (passed, failed + 1)
    print("PASS doc %s" % name if ok else "FAIL doc %s: %s" % (name, why))


blocks = re.findall(r"^```yaml\n(.*?)^```", section.group(1), re.M | re.S) if section else []
check("yaml-blocks", len(blocks) == 3, "want 3 yaml blocks in the section, found %d" % len(blocks))
docs = []
for i, b in enumerate(blocks):
    try:
        docs += [d for d in yaml.safe_load_all(b) if d]
        check("parses-%d" % i, True)
    except yaml.YAMLError as e:
        check("parses-%d" % i, False, str(e).replace("\n", " "))
kinds = sorted(d.get("kind", "?") for d in docs)
check("kinds", kinds == ["ConfigMap", "Pod", "Pod", "Pod", "ResourceClaimTemplate"], "kinds %s" % kinds)
cms = [d for d in docs if d.get("kind") == "ConfigMap"]
try:
    cfg = yaml.safe_load(cms[0]["data"]["any"])
    res = cfg["sharing"]["timeSlicing"]["resources"][0]
    check("time-slicing-config", cfg["version"] == "v1" and res["name"] == "nvidia.com/gpu" and
          isinstance(res["replicas"], int) and res["replicas"] > 1, "config %s" % cfg)
except (IndexError, KeyError, TypeError, yaml.YAMLError) as e:
    check("time-slicing-config", False, "%s: %s" % (type(e).__name__, e))
with open(out, "w") as fh:
    json.dump(docs, fh)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
