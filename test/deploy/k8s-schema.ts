import path from "node:path";
import ts from "typescript";

/**
 * Offline validation of Kubernetes objects against the API's own schema, as carried by the
 * `kubernetes-types` package (TypeScript types generated from the Kubernetes OpenAPI document):
 * each object becomes a typed object literal, so the compiler reports unknown fields (excess
 * properties), missing required fields and wrong types, with the path to the field.
 */

/** apiVersion -> module of kubernetes-types. */
const MODULES: Record<string, string> = {
  v1: "core/v1",
  "apps/v1": "apps/v1",
  "batch/v1": "batch/v1",
  "policy/v1": "policy/v1",
  "autoscaling/v2": "autoscaling/v2",
  "networking.k8s.io/v1": "networking/v1",
  "rbac.authorization.k8s.io/v1": "rbac/v1",
};

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: any;
}

export const objectName = (o: K8sObject) => `${o.kind}/${o.metadata?.name}`;

/** Returns one message per problem; empty when every object is valid. */
export function validateObjects(objects: K8sObject[], root: string): string[] {
  const problems: string[] = [];
  const lines: string[] = [];
  const owners: Array<{ from: number; to: number; object: K8sObject }> = [];
  objects.forEach((o, i) => {
    const mod = MODULES[o.apiVersion];
    if (!mod || !/^[A-Z][A-Za-z]+$/.test(o.kind ?? "")) {
      problems.push(`${objectName(o)}: unknown apiVersion/kind ${o.apiVersion} ${o.kind}`);
      return;
    }
    const from = lines.length + 1;
    lines.push(`import type { ${o.kind} as T${i} } from "kubernetes-types/${mod}";`);
    lines.push(...`export const o${i}: T${i} = ${JSON.stringify(o, null, 2)};`.split("\n"));
    owners.push({ from, to: lines.length, object: o });
  });
  const file = path.join(root, "__k8s_objects__.ts");
  const source = lines.join("\n");
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: [],
    skipLibCheck: true,
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, ...rest) =>
    path.resolve(name) === file ? ts.createSourceFile(name, source, lang, true) : getSourceFile(name, lang, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => path.resolve(name) === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  for (const d of [...program.getSyntacticDiagnostics(), ...program.getSemanticDiagnostics()]) {
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    const owner = owners.find((x) => line >= x.from && line <= x.to);
    const text = ts.flattenDiagnosticMessageText(d.messageText, " ");
    const where = owner ? `${objectName(owner.object)} (${(d.file?.text.split("\n")[line - 1] ?? "").trim()})` : `line ${line}`;
    problems.push(`${where}: ${text}`);
  }
  return problems;
}

// --- NetworkPolicy semantics (ingress only), enough to ask "may A reach B on port P?" ------

interface Selector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

export function selects(sel: Selector | undefined, labels: Record<string, string>): boolean {
  if (!sel) return false;
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of sel.matchExpressions ?? []) {
    const has = e.key in labels;
    if (e.operator === "In" && !(has && e.values!.includes(labels[e.key]))) return false;
    if (e.operator === "NotIn" && has && e.values!.includes(labels[e.key])) return false;
    if (e.operator === "Exists" && !has) return false;
    if (e.operator === "DoesNotExist" && has) return false;
  }
  return true;
}

/** A traffic source: a pod of the same namespace, or something outside (namespace labels). */
export type Source = { pod: Record<string, string> } | { namespace: Record<string, string> } | "internet";

export function ingressAllowed(policies: K8sObject[], target: Record<string, string>, port: number, source: Source): boolean {
  const applying = policies.filter((p) => selects(p.spec.podSelector, target) && (p.spec.policyTypes ?? ["Ingress"]).includes("Ingress"));
  if (applying.length === 0) return true;
  return applying.some((p) =>
    (p.spec.ingress ?? []).some((rule: any) => {
      const portOk = !rule.ports || rule.ports.some((rp: any) => rp.port === port);
      if (!portOk) return false;
      if (!rule.from || rule.from.length === 0) return true;
      return rule.from.some((peer: any) => {
        if (peer.ipBlock) return source === "internet";
        if (typeof source === "object" && "pod" in source) return !peer.namespaceSelector && selects(peer.podSelector, source.pod);
        if (typeof source === "object" && "namespace" in source) return !peer.podSelector && selects(peer.namespaceSelector, source.namespace);
        return false;
      });
    }),
  );
}
