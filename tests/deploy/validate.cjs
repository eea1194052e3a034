// SPDX-License-Identifier: MIT
// tests/deploy/validate.cjs DOCS_JSON - each document of deploy/ against
// the Kubernetes OpenAPI schema of its kind, offline (kubernetes-models,
// pinned in package.json: types, required fields, enums, formats; it does
// not refuse unknown fields). Then negative controls: broken copies of the
// DaemonSet and the admission policy must be refused, so a pass means
// something. Prints PASS/FAIL per check and "N passed, M failed".
"use strict";
const fs = require("fs");
const models = {
  "v1/Namespace": () => require("kubernetes-models/v1/Namespace").Namespace,
  "v1/ServiceAccount": () => require("kubernetes-models/v1/ServiceAccount").ServiceAccount,
  "v1/ConfigMap": () => require("kubernetes-models/v1/ConfigMap").ConfigMap,
  "v1/Pod": () => require("kubernetes-models/v1/Pod").Pod,
  "apps/v1/DaemonSet": () => require("kubernetes-models/apps/v1/DaemonSet").DaemonSet,
  "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy": () =>
    require("kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy").ValidatingAdmissionPolicy,
  "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding": () =>
    require("kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding")
      .ValidatingAdmissionPolicyBinding,
};
let passed = 0, failed = 0;
const result = (name, ok, why) => {
  if (ok) { passed++; console.log(`PASS ${name}`); } else { failed++; console.log(`FAIL ${name}: ${why}`); }
};
const validate = (doc) => {
  const key = `${doc.apiVersion}/${doc.kind}`;
  if (!models[key]) return `no schema for ${key}`;
  try { new (models[key]())(doc).validate(); return null; } catch (e) { return e.message.slice(0, 300); }
};
const docs = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
for (const { file, doc } of docs) {
  const why = validate(doc);
  result(`schema ${file} ${doc.kind}/${doc.metadata.name}`, why === null, why);
}
const clone = (o) => JSON.parse(JSON.stringify(o));
const find = (kind) => clone(docs.find((d) => d.doc.kind === kind).doc);
const broken = [
  ["DaemonSet without a selector", (() => { const d = find("DaemonSet"); delete d.spec.selector; return d; })()],
  ["DaemonSet with hostPID as a string", (() => { const d = find("DaemonSet"); d.spec.template.spec.hostPID = "yes"; return d; })()],
  ["DaemonSet with a hostPath type unknown", (() => { const d = find("DaemonSet"); d.spec.template.spec.volumes[0].hostPath.type = 7; return d; })()],
  ["policy with a numeric expression", (() => { const d = find("ValidatingAdmissionPolicy"); d.spec.validations[0].expression = 1; return d; })()],
  ["binding without a policyName type", (() => { const d = find("ValidatingAdmissionPolicyBinding"); d.spec.validationActions = "Deny"; return d; })()],
];
for (const [name, doc] of broken) result(`refuses ${name}`, validate(doc) !== null, "accepted");
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
