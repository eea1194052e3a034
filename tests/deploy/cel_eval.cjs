// SPDX-License-Identifier: MIT
// tests/deploy/cel_eval.cjs - a ValidatingAdmissionPolicy evaluated offline
// with @bufbuild/cel (with the strings extension, and a model of
// Kubernetes' quantity library: quantity(string).asInteger(), for the
// decimal and binary suffixes Kubernetes canonicalizes resource limits to,
// "3k" for 3000; fractions are an error, as asInteger() is there). Objects
// become CEL maps, so has() and field access behave as on Kubernetes'
// unset fields (errors unless guarded). Kubernetes' own CEL environment
// (its type checking, its cost limits) is not run here.
"use strict";
const { run, celFunc, celMethod, CelScalar } = require("@bufbuild/cel");
const { strings } = require("@bufbuild/cel/ext");

const SUFFIX = { "": 1n, k: 1000n, M: 1000n ** 2n, G: 1000n ** 3n, T: 1000n ** 4n, P: 1000n ** 5n,
  Ki: 1024n, Mi: 1024n ** 2n, Gi: 1024n ** 3n, Ti: 1024n ** 4n, Pi: 1024n ** 5n };
// The model keeps a quantity as its text; asInteger() reads it.
const quantity = [
  celFunc("quantity", [CelScalar.STRING], CelScalar.STRING, (s) => {
    if (!/^[0-9]+(k|M|G|T|P|Ki|Mi|Gi|Ti|Pi)?$/.test(s)) throw new Error(`quantity: not a whole quantity: ${s}`);
    return s;
  }),
  celMethod("asInteger", CelScalar.STRING, [], CelScalar.INT, function () {
    const m = /^([0-9]+)([A-Za-z]*)$/.exec(this);
    return BigInt(m[1]) * SUFFIX[m[2]];
  }),
];
const funcs = [...strings, ...quantity];

const toCel = (v) => Array.isArray(v) ? v.map(toCel) : v === null ? null :
  typeof v === "object" ? new Map(Object.entries(v).map(([k, x]) => [k, toCel(x)])) :
  typeof v === "number" && Number.isInteger(v) ? BigInt(v) : v;

const evaluate = (expr, bindings) => {
  try {
    const r = run(expr, bindings, { funcs });
    return typeof r === "boolean" || r === null || typeof r === "object" || typeof r === "string" ? r
      : { error: `not a bool: ${r}` };
  } catch (e) {
    return { error: e.message };
  }
};

// "skip" (no match), "admit", or "deny: validation N[: message]".
function admission(vap, pod) {
  const object = toCel(pod);
  for (const m of vap.spec.matchConditions) {
    const r = evaluate(m.expression, { object });
    if (r !== true && r !== false) return `deny: matchCondition ${m.name}: ${r.error}`;
    if (r === false) return "skip";
  }
  const variables = new Map();
  for (const v of vap.spec.variables || []) {
    const r = evaluate(v.expression, { object, variables });
    if (r && r.error) return `deny: variable ${v.name}: ${r.error}`;
    variables.set(v.name, r);
  }
  for (const [i, v] of vap.spec.validations.entries()) {
    const r = evaluate(v.expression, { object, variables });
    if (r === true) continue;
    if (r && r.error) return `deny: validation ${i} (error: ${r.error})`;
    if (!v.messageExpression) return `deny: validation ${i}`;
    const msg = evaluate(v.messageExpression, { object, variables });
    return `deny: validation ${i}: ${typeof msg === "string" ? msg : `(message error: ${msg && msg.error})`}`;
  }
  return "admit";
}

module.exports = { admission, evaluate, toCel };
