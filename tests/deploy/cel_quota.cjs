// SPDX-License-Identifier: MIT
// tests/deploy/cel_quota.cjs DOCS_JSON - deploy/quota-policy.yaml's CEL,
// evaluated offline (cel_eval.cjs) against HAMi-style pods: a pod whose
// gpusandbox.io/mem and gpusandbox.io/sm annotations are what its
// nvidia.com/gpumem and nvidia.com/gpucores limits say is admitted, any
// other refused by the validation it must fail (its message evaluated
// too), and a pod without those limits is not matched. Limits are given
// both as the author writes them (3000) and as Kubernetes canonicalizes
// them before admission ("3k"). Prints PASS/FAIL per pod, "N passed,
// M failed".
"use strict";
const fs = require("fs");
const { admission } = require("./cel_eval.cjs");

const docs = JSON.parse(fs.readFileSync(process.argv[2], "utf8")).map((d) => d.doc);
const vap = docs.find((d) => d.kind === "ValidatingAdmissionPolicy" && d.metadata.name === "gpusandbox-quota-request");
const ctr = (name, limits) => ({ name, image: "x", resources: { limits: { "nvidia.com/gpu": 1, ...limits } } });
const hami = (annotations, ...containers) => ({
  apiVersion: "v1", kind: "Pod",
  metadata: { name: "p", namespace: "ml", ...(annotations ? { annotations } : {}) },
  spec: { containers: containers.length ? containers : [ctr("cuda", { "nvidia.com/gpumem": 3000 })] },
});
const MEM = "gpusandbox.io/mem", SM = "gpusandbox.io/sm";
const cases = [
  ["gpumem 3000 and mem=3000m", hami({ [MEM]: "3000m" }), "admit"],
  ["gpumem \"3k\" (canonical) and mem=3000m", hami({ [MEM]: "3000m" }, ctr("cuda", { "nvidia.com/gpumem": "3k" })), "admit"],
  ["gpumem and gpucores 30, both annotated", hami({ [MEM]: "3000m", [SM]: "30" },
    ctr("cuda", { "nvidia.com/gpumem": 3000, "nvidia.com/gpucores": 30 })), "admit"],
  ["two containers of the same size", hami({ [MEM]: "3000m" },
    ctr("a", { "nvidia.com/gpumem": 3000 }), ctr("b", { "nvidia.com/gpumem": "3k" })), "admit"],
  ["gpumem without the annotation", hami(null), "deny: validation 1: the annotation gpusandbox.io/mem must be \"3000m\""],
  ["an annotation above the limit", hami({ [MEM]: "40g" }), "deny: validation 1"],
  ["an annotation below the limit", hami({ [MEM]: "2000m" }), "deny: validation 1"],
  ["the same size in other units", hami({ [MEM]: "3000Mi" }), "deny: validation 1"],
  ["two containers of different sizes", hami({ [MEM]: "3000m" },
    ctr("a", { "nvidia.com/gpumem": 3000 }), ctr("b", { "nvidia.com/gpumem": 6000 })), "deny: validation 0"],
  ["gpucores without sm", hami({ [MEM]: "3000m" },
    ctr("cuda", { "nvidia.com/gpumem": 3000, "nvidia.com/gpucores": 30 })), "deny: validation 2: the annotation gpusandbox.io/sm must be \"30\""],
  ["gpucores 30, sm 100", hami({ [SM]: "100" }, ctr("cuda", { "nvidia.com/gpucores": 30 })), "deny: validation 2"],
  ["gpucores 0 (the agent takes no 0 share)", hami({ [SM]: "0" }, ctr("cuda", { "nvidia.com/gpucores": 0 })), "deny: validation 2"],
  ["a forged gpumem limit in an init container only", (() => {
    const p = hami({ [MEM]: "3000m" });
    p.spec.initContainers = [ctr("init", { "nvidia.com/gpumem": 9000 })];
    return p;
  })(), "deny: validation 0"],
  ["no gpumem/gpucores (time-slicing): not matched", hami({ [MEM]: "4g" }, ctr("cuda", {})), "skip"],
];
let passed = 0, failed = 0;
if (!vap) {
  console.log("FAIL cel-quota: no ValidatingAdmissionPolicy gpusandbox-quota-request in deploy/");
  process.exit(1);
}
for (const [name, p, want] of cases) {
  const got = admission(vap, p);
  const ok = want.startsWith("deny") ? got.startsWith(want) && !got.includes("error") : got === want;
  if (ok) { passed++; console.log(`PASS cel-quota ${name}: ${got}`); }
  else { failed++; console.log(`FAIL cel-quota ${name}: got "${got}", want "${want}"`); }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
