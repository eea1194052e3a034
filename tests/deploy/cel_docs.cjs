// SPDX-License-Identifier: MIT
// tests/deploy/cel_docs.cjs DEPLOY_DOCS_JSON DOC_DOCS_JSON - the manifests
// of docs/kubernetes.md's "Several pods on one GPU" (doc_manifests.py)
// against deploy/'s admission policies and their own CEL (cel_eval.cjs):
// every pod is admitted by gpusandbox-gpu-pods; the HAMi pod is admitted by
// gpusandbox-quota-request, the others not matched by it; each pod's
// gpusandbox.io/mem is a valid size, and equal to its DRA claim's memory
// request; the claim's device selector picks an H200 and not an A100.
// Prints PASS/FAIL per check, "N passed, M failed".
"use strict";
const fs = require("fs");
const { admission, evaluate, toCel } = require("./cel_eval.cjs");

const deploy = JSON.parse(fs.readFileSync(process.argv[2], "utf8")).map((d) => d.doc);
const docs = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
const vap = (name) => deploy.find((d) => d.kind === "ValidatingAdmissionPolicy" && d.metadata.name === name);
let passed = 0, failed = 0;
const result = (name, ok, why) => {
  if (ok) { passed++; console.log(`PASS doc ${name}`); } else { failed++; console.log(`FAIL doc ${name}: ${why}`); }
};
// A size as gpusandbox reads it (k/m/g/t binary) and a Quantity, in bytes.
const UNIT = { "": 1n, k: 1n << 10n, m: 1n << 20n, g: 1n << 30n, t: 1n << 40n,
  Ki: 1n << 10n, Mi: 1n << 20n, Gi: 1n << 30n, Ti: 1n << 40n };
const bytes = (s) => { const m = /^([0-9]+)([a-zA-Z]*)$/.exec(String(s)); return m && UNIT[m[2]] ? BigInt(m[1]) * UNIT[m[2]] : null; };

const pods = docs.filter((d) => d.kind === "Pod");
const claim = docs.find((d) => d.kind === "ResourceClaimTemplate");
for (const p of pods) {
  const name = p.metadata.name;
  const gpu = admission(vap("gpusandbox-gpu-pods"), p);
  result(`${name} gpu-pods`, gpu === "admit", gpu);
  const hami = p.spec.containers.some((c) => c.resources && c.resources.limits && "nvidia.com/gpumem" in c.resources.limits);
  const quota = admission(vap("gpusandbox-quota-request"), p);
  result(`${name} quota-request`, quota === (hami ? "admit" : "skip"), quota);
  const mem = p.metadata.annotations && p.metadata.annotations["gpusandbox.io/mem"];
  result(`${name} mem annotation`, bytes(mem) !== null, `not a size: ${mem}`);
  if (p.spec.resourceClaims) {
    const req = claim.spec.spec.devices.requests[0].exactly.capacity.requests.memory;
    result(`${name} mem is its claim's`, bytes(mem) === bytes(req), `${mem} vs the claim's ${req}`);
  }
}
const sel = claim.spec.spec.devices.requests[0].exactly.selectors[0].cel.expression;
const device = (product) => toCel({ driver: "gpu.nvidia.com", attributes: { "gpu.nvidia.com": { productName: product } } });
const h200 = evaluate(sel, { device: device("NVIDIA H200") });
const a100 = evaluate(sel, { device: device("NVIDIA A100-SXM4-80GB") });
result("claim selector", h200 === true && a100 === false, `H200: ${JSON.stringify(h200)}, A100: ${JSON.stringify(a100)}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
