import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { REPO_ROOT } from "@chat/testkit";
import { ingressAllowed, objectName, validateObjects, type K8sObject } from "./k8s-schema";

/**
 * Renders every kustomize overlay with `kubectl kustomize` (offline) and checks the objects
 * against the Kubernetes schemas and against what operators rely on: probes, resources,
 * security, graceful termination, disruption budgets, autoscaling, network isolation, ingress
 * settings for long polls, Prometheus scraping and the migration job.
 * `.ci/run` provides kubectl (as $KUBECTL) on machines without one.
 */

const KUBECTL = process.env.KUBECTL || "kubectl";
const OVERLAYS_DIR = path.join(REPO_ROOT, "k8s", "overlays");
const OVERLAYS = readdirSync(OVERLAYS_DIR).sort();
const SERVICES = { gateway: 9991, accounts: 9992, messaging: 9993, events: 9994, scheduler: 9995 } as const;
const SCALED_OUT = ["gateway", "events", "messaging"];
const LONG_POLL_SECONDS = 90;

function render(dir: string): K8sObject[] {
  let out: string;
  try {
    out = execFileSync(KUBECTL, ["kustomize", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (err) {
    const e = err as { code?: string; stderr?: string };
    if (e.code === "ENOENT") throw new Error(`${KUBECTL} not found: install kubectl (>= 1.27) or set KUBECTL; .ci/run does it for CI`);
    throw new Error(`kubectl kustomize ${dir} failed:\n${e.stderr}`);
  }
  return parseAllDocuments(out)
    .map((d) => d.toJS() as K8sObject)
    .filter(Boolean);
}

const rendered = new Map<string, K8sObject[]>();
beforeAll(() => {
  for (const o of OVERLAYS) rendered.set(o, render(path.join(OVERLAYS_DIR, o)));
});

it("has the trial (in-cluster infrastructure) and external (managed infrastructure) overlays", () => {
  expect(OVERLAYS).toEqual(expect.arrayContaining(["trial", "external"]));
});

it("the schema check catches unknown fields, missing required fields and wrong types", () => {
  const bad: K8sObject[] = [
    { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "typo" }, spec: { replicaz: 2, selector: {}, template: { spec: { containers: [{ name: "a" }] } } } },
    { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "no-selector" }, spec: { template: { spec: { containers: [{ name: "a" }] } } } },
    { apiVersion: "v1", kind: "Service", metadata: { name: "port-type" }, spec: { ports: [{ port: "http" }] } },
    { apiVersion: "v1", kind: "Pod", metadata: { name: "container-name" }, spec: { containers: [{ image: "x" }] } },
  ];
  const problems = validateObjects(bad, REPO_ROOT);
  expect(problems.find((p) => p.startsWith("Deployment/typo") && p.includes("replicaz"))).toBeDefined();
  expect(problems.find((p) => p.startsWith("Deployment/no-selector") && p.includes("selector"))).toBeDefined();
  expect(problems.find((p) => p.startsWith("Service/port-type"))).toBeDefined();
  expect(problems.find((p) => p.startsWith("Pod/container-name") && p.includes("name"))).toBeDefined();
});

describe.each(OVERLAYS)("overlay %s", (overlay) => {
  const objects = () => rendered.get(overlay)!;
  const find = (kind: string, name: string) => objects().find((o) => o.kind === kind && o.metadata.name === name);
  const all = (kind: string) => objects().filter((o) => o.kind === kind);
  const deployment = (s: string) => find("Deployment", `chat-${s}`)!;
  const config = () => {
    const cm = all("ConfigMap").find((c) => c.metadata.name.startsWith("chat-config"));
    return (cm?.data ?? {}) as Record<string, string>;
  };

  it("renders only objects that match the Kubernetes schemas", () => {
    expect(objects().length).toBeGreaterThan(20);
    expect(validateObjects(objects(), REPO_ROOT)).toEqual([]);
  });

  it("references only ConfigMaps, Secrets, claims and accounts that it defines", () => {
    const names = (kind: string) => new Set(all(kind).map((o) => o.metadata.name));
    for (const o of objects()) {
      const pod = o.kind === "Job" || o.kind === "Deployment" || o.kind === "StatefulSet" ? o.spec.template.spec : null;
      if (!pod) continue;
      for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
        for (const ref of c.envFrom ?? []) {
          if (ref.configMapRef) expect(names("ConfigMap"), `${objectName(o)} ${ref.configMapRef.name}`).toContain(ref.configMapRef.name);
          if (ref.secretRef) expect(names("Secret"), `${objectName(o)} ${ref.secretRef.name}`).toContain(ref.secretRef.name);
        }
      }
      for (const v of pod.volumes ?? []) {
        if (v.persistentVolumeClaim) expect(names("PersistentVolumeClaim")).toContain(v.persistentVolumeClaim.claimName);
      }
      if (pod.serviceAccountName) expect(names("ServiceAccount")).toContain(pod.serviceAccountName);
    }
  });

  it.each(Object.entries(SERVICES))("%s: probes, resources, security, graceful termination, metrics", (service, port) => {
    const d = deployment(service);
    expect(d, `Deployment chat-${service}`).toBeDefined();
    const pod = d.spec.template.spec;
    const main = pod.containers.find((c: any) => c.name === service);
    expect(main.image).toMatch(new RegExp(`(^|/)team-chat/${service}:`));
    expect(main.ports).toEqual([expect.objectContaining({ containerPort: port })]);
    expect(main.readinessProbe.httpGet.path).toBe("/ready");
    expect(main.livenessProbe.httpGet.path).toBe("/health");
    for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
      expect(c.resources.requests.cpu, c.name).toBeDefined();
      expect(c.resources.requests.memory, c.name).toBeDefined();
      expect(c.resources.limits.memory, c.name).toBeDefined();
      expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } });
    }
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
    expect(pod.automountServiceAccountToken).toBe(false);
    // Long polls end with a heartbeat within the service's grace; the pod must outlive both.
    const preStop = Number(main.lifecycle.preStop.exec.command.at(-1));
    const grace = Number(config().SHUTDOWN_GRACE_SECONDS);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(LONG_POLL_SECONDS);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(preStop + grace);
    expect(d.spec.template.metadata.annotations).toMatchObject({ "prometheus.io/scrape": "true", "prometheus.io/port": String(port), "prometheus.io/path": "/metrics" });
    // Pods start only after the release's migrations.
    expect(pod.initContainers.map((c: any) => c.command.join(" "))).toContain("chat migrate --wait 600");
  });

  it.each(Object.entries(SERVICES))("%s: a Service and a PodDisruptionBudget select its pods", (service, port) => {
    const labels = deployment(service).spec.template.metadata.labels;
    const svc = find("Service", `chat-${service}`)!;
    expect(Object.entries(svc.spec.selector).every(([k, v]) => labels[k] === v)).toBe(true);
    expect(svc.spec.ports[0].port).toBe(port);
    const pdb = all("PodDisruptionBudget").find((p) => Object.entries(p.spec.selector.matchLabels).every(([k, v]) => labels[k] === v));
    expect(pdb, `PDB for ${service}`).toBeDefined();
  });

  it("autoscales gateway, events and messaging; the others run a fixed count", () => {
    const targets = all("HorizontalPodAutoscaler").map((h) => h.spec.scaleTargetRef.name).sort();
    expect(targets).toEqual(SCALED_OUT.map((s) => `chat-${s}`).sort());
    for (const s of SCALED_OUT) expect(deployment(s).spec.replicas).toBeUndefined();
    for (const s of ["accounts", "scheduler"]) expect(deployment(s).spec.replicas).toBeGreaterThanOrEqual(1);
  });

  it("runs migrations once per release in a Job", () => {
    const job = find("Job", "chat-migrate")!;
    expect(job).toBeDefined();
    expect(job.spec.template.spec.containers[0].command).toEqual(["chat", "migrate"]);
    expect(job.spec.template.spec.restartPolicy).toBe("OnFailure");
  });

  it("lets only the gateway take outside traffic; services accept the gateway and each other", () => {
    const policies = all("NetworkPolicy");
    const pod = (s: string) => deployment(s).spec.template.metadata.labels as Record<string, string>;
    expect(ingressAllowed(policies, pod("gateway"), 9991, "internet")).toBe(true);
    for (const s of ["accounts", "messaging", "events", "scheduler"] as const) {
      const port = SERVICES[s];
      expect(ingressAllowed(policies, pod(s), port, "internet"), `internet -> ${s}`).toBe(false);
      expect(ingressAllowed(policies, pod(s), port, { namespace: { "kubernetes.io/metadata.name": "other" } }), `other ns -> ${s}`).toBe(false);
      expect(ingressAllowed(policies, pod(s), port, { pod: pod("gateway") }), `gateway -> ${s}`).toBe(true);
      for (const peer of ["accounts", "messaging", "events", "scheduler"]) {
        expect(ingressAllowed(policies, pod(s), port, { pod: pod(peer) }), `${peer} -> ${s}`).toBe(true);
      }
      expect(ingressAllowed(policies, pod(s), port, { pod: { app: "intruder" } }), `stranger pod -> ${s}`).toBe(false);
      expect(ingressAllowed(policies, pod(s), port, { namespace: { "kubernetes.io/metadata.name": "monitoring" } }), `prometheus -> ${s}`).toBe(true);
    }
    for (const infra of all("StatefulSet").concat(all("Deployment")).filter((o) => o.metadata.labels?.["app.kubernetes.io/part-of"] === "team-chat-infra")) {
      const labels = infra.spec.template.metadata.labels;
      const port = infra.spec.template.spec.containers[0].ports[0].containerPort;
      expect(ingressAllowed(policies, labels, port, { pod: pod("messaging") }), `messaging -> ${objectName(infra)}`).toBe(true);
      expect(ingressAllowed(policies, labels, port, "internet"), `internet -> ${objectName(infra)}`).toBe(false);
    }
  });

  it("keeps the internal token and connection URLs in a Secret", () => {
    const secret = all("Secret").find((s) => s.metadata.name.startsWith("chat-secrets"))!;
    const keys = Object.keys({ ...secret.data, ...secret.stringData });
    expect(keys).toEqual(expect.arrayContaining(["INTERNAL_TOKEN", "DATABASE_URL", "REDIS_URL", "AMQP_URL"]));
    expect(Object.keys(config())).not.toContain("INTERNAL_TOKEN");
  });

  it("routes the gateway through an Ingress without buffering and with long timeouts for /api/v1/events", () => {
    const ingresses = all("Ingress");
    const backends = ingresses.flatMap((i) => i.spec.rules.flatMap((r: any) => r.http.paths.map((p: any) => ({ ingress: i, path: p }))));
    expect(backends.length).toBeGreaterThan(0);
    for (const b of backends) expect(b.path.backend.service).toEqual({ name: "chat-gateway", port: { number: 9991 } });
    const events = backends.find((b) => b.path.path === "/api/v1/events")!;
    expect(events).toBeDefined();
    const a = events.ingress.metadata.annotations;
    expect(a["nginx.ingress.kubernetes.io/proxy-buffering"]).toBe("off");
    expect(Number(a["nginx.ingress.kubernetes.io/proxy-read-timeout"])).toBeGreaterThan(LONG_POLL_SECONDS);
    for (const i of ingresses) expect(Number(i.metadata.annotations?.["nginx.ingress.kubernetes.io/proxy-read-timeout"])).toBeGreaterThan(LONG_POLL_SECONDS);
  });
});
