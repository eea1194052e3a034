// SPDX-License-Identifier: MIT
// tests/deploy/cel.cjs DOCS_JSON - the admission policy's CEL, evaluated
// offline (cel_eval.cjs) against pods made from deploy/example-pod.yaml:
// its matchConditions decide whether a pod is a GPU pod, its variables are
// computed, then each validation must hold. An evaluation error counts as
// a refusal (failurePolicy: Fail). Prints PASS/FAIL per pod, "N passed,
// M failed".
"use strict";
const fs = require("fs");
const { admission } = require("./cel_eval.cjs");

const docs = JSON.parse(fs.readFileSync(process.argv[2], "utf8")).map((d) => d.doc);
const vap = docs.find((d) => d.kind === "ValidatingAdmissionPolicy" && d.metadata.name === "gpusandbox-gpu-pods");
const example = docs.find((d) => d.kind === "Pod");
const pod = (edit) => { const p = JSON.parse(JSON.stringify(example)); edit(p); return p; };
const c0 = (p) => p.spec.containers[0];
const sc = (c) => (c.securityContext = c.securityContext || {});
const cases = [
  ["the example pod", example, "admit"],
  ["no seccomp profile", pod((p) => delete p.spec.securityContext), "deny: validation 0"],
  ["RuntimeDefault", pod((p) => (p.spec.securityContext.seccompProfile = { type: "RuntimeDefault" })), "deny: validation 0"],
  ["another Localhost file", pod((p) => (p.spec.securityContext.seccompProfile.localhostProfile = "other/gpu.json")), "deny: validation 0"],
  ["a path out of gpusandbox/", pod((p) => (p.spec.securityContext.seccompProfile.localhostProfile = "gpusandbox/../x.json")), "deny: validation 0"],
  ["a named policy's profile", pod((p) => (p.spec.securityContext.seccompProfile.localhostProfile = "gpusandbox/small.json")), "admit"],
  ["a container overriding with Unconfined", pod((p) => (sc(c0(p)).seccompProfile = { type: "Unconfined" })), "deny: validation 0"],
  ["the profile on the container only", pod((p) => { sc(c0(p)).seccompProfile = p.spec.securityContext.seccompProfile; delete p.spec.securityContext; }), "admit"],
  ["an init container overriding", pod((p) => (p.spec.initContainers = [{ name: "i", image: "x", securityContext: { seccompProfile: { type: "RuntimeDefault" } } }])), "deny: validation 0"],
  ["privileged", pod((p) => (sc(c0(p)).privileged = true)), "deny: validation 1"],
  ["privileged: false", pod((p) => (sc(c0(p)).privileged = false)), "admit"],
  ["adds sys_admin", pod((p) => (sc(c0(p)).capabilities = { add: ["sys_admin"] })), "deny: validation 2"],
  ["adds ALL", pod((p) => (sc(c0(p)).capabilities = { add: ["ALL"] })), "deny: validation 2"],
  ["adds NET_ADMIN", pod((p) => (sc(c0(p)).capabilities = { add: ["NET_ADMIN"] })), "admit"],
  ["a forged pod-name annotation", pod((p) => (p.metadata.annotations = { "io.kubernetes.pod.name": "x" })), "deny: validation 3"],
  ["CRI-O's seccomp notifier", pod((p) => (p.metadata.annotations = { "seccomp-notifier-action.crio.io": "stop" })), "deny: validation 3"],
  ["an ordinary annotation", pod((p) => (p.metadata.annotations = { "team": "ml" })), "admit"],
  ["no GPU asked for", pod((p) => { delete c0(p).resources; delete p.spec.securityContext; }), "skip"],
  ["NVIDIA_VISIBLE_DEVICES without a GPU limit", pod((p) => { delete c0(p).resources; delete p.spec.securityContext; c0(p).env = [{ name: "NVIDIA_VISIBLE_DEVICES", value: "all" }]; }), "deny: validation 0"],
  ["a DRA claim without the profile", pod((p) => { delete c0(p).resources; delete p.spec.securityContext;
    p.spec.resourceClaims = [{ name: "gpu", resourceClaimTemplateName: "gpu-20g" }]; c0(p).resources = { claims: [{ name: "gpu" }] }; }), "deny: validation 0"],
  ["a DRA claim with the profile", pod((p) => { delete c0(p).resources;
    p.spec.resourceClaims = [{ name: "gpu", resourceClaimTemplateName: "gpu-20g" }]; c0(p).resources = { claims: [{ name: "gpu" }] }; }), "admit"],
  ["a GPU request, not a limit", pod((p) => { c0(p).resources = { requests: { "nvidia.com/gpu": 1 } }; delete p.spec.securityContext; }), "deny: validation 0"],
];
let passed = 0, failed = 0;
for (const [name, p, want] of cases) {
  const got = admission(vap, p);
  const ok = want.startsWith("deny") ? got.startsWith(want) && !got.includes("error") : got === want;
  if (ok) { passed++; console.log(`PASS cel ${name}: ${got}`); }
  else { failed++; console.log(`FAIL cel ${name}: got "${got}", want "${want}"`); }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
