import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ClientNotice, DomainEnvelope, EXCHANGE } from "./envelope";
import { ErrorCodes } from "./errors";
import { p } from "./params";
import { empty, fastifyPath, PATH_PARAM_PATTERNS, success } from "./route";
import { allRoutes, publicRoutes } from "./routes/index";
import { ZULIP_FEATURE_LEVEL } from "./version";

describe("domain-event envelope", () => {
  const ok = { id: "6f1c1c3e-8a2b-4c6e-9f1a-2b3c4d5e6f70", type: "accounts.user.created", version: 1, occurred_at: "2026-01-01T00:00:00.000Z", realm_id: 3, payload: {} };

  it("accepts a well-formed envelope and names the exchange", () => {
    expect(DomainEnvelope.parse(ok)).toEqual(ok);
    expect(DomainEnvelope.parse({ ...ok, type: "accounts.api_key.reset" }).type).toBe("accounts.api_key.reset");
    expect(EXCHANGE).toBe("chat.domain");
  });

  it.each([
    ["id", { id: "not-a-uuid" }],
    ["type", { type: "accounts.user" }],
    ["type", { type: "Accounts.User.Created" }],
    ["version", { version: 0 }],
    ["realm_id", { realm_id: "3" }],
    ["payload", { payload: [] }],
  ])("rejects a bad %s", (_field, patch) => {
    expect(DomainEnvelope.safeParse({ ...ok, ...patch }).success).toBe(false);
  });

  it("ClientNotice carries an event with a type, its audience, and optional routing hints", () => {
    const notice = { event: { type: "message", message: { id: 1 } }, users: [4, { id: 5, flags: ["read"] }], public_stream_id: 9, sender_queue: { queue_id: "q", local_id: "1.01" } };
    expect(ClientNotice.parse(notice)).toEqual(notice);
    expect(ClientNotice.safeParse({ event: { op: "add" }, users: [] }).success).toBe(false);
    expect(ClientNotice.safeParse({ event: { type: "x" }, users: [{ id: 1 }] }).success).toBe(false);
  });
});

describe("error codes", () => {
  it("carry Zulip's HTTP statuses", () => {
    expect(ErrorCodes).toMatchObject({
      BAD_REQUEST: 400,
      REQUEST_VARIABLE_MISSING: 400,
      REQUEST_CONFUSING_VAR: 400,
      BAD_EVENT_QUEUE_ID: 400,
      UNAUTHORIZED: 401,
      USER_DEACTIVATED: 401,
      REALM_DEACTIVATED: 401,
      AUTHENTICATION_FAILED: 401,
      NONEXISTENT_SUBDOMAIN: 404,
      RATE_LIMIT_HIT: 429,
      SERVICE_UNAVAILABLE: 503,
      REQUEST_TOO_LARGE: 413,
      ANOMALOUS_WEBHOOK_PAYLOAD: 400,
      // Zulip's one "error" that succeeds: an integration's sender must not retry an event it does not handle.
      UNSUPPORTED_WEBHOOK_EVENT_TYPE: 200,
      MISSING_HTTP_EVENT_HEADER: 400,
    });
    for (const [code, status] of Object.entries(ErrorCodes)) if (code !== "UNSUPPORTED_WEBHOOK_EVENT_TYPE") expect(status).toBeGreaterThanOrEqual(400);
  });
});

describe("params DSL", () => {
  it("builds specs immutably", () => {
    const base = p.str();
    const topic = base.alias("subject").required();
    expect(base).toMatchObject({ kind: "string", isRequired: false, aliases: [] });
    expect(topic).toMatchObject({ kind: "string", isRequired: true, aliases: ["subject"] });
    expect(p.bool().default(false)).toMatchObject({ kind: "bool", defaultValue: false });
    expect(p.int().path()).toMatchObject({ kind: "int", inPath: true, isRequired: true });
    expect(p.json(z.array(z.number())).nullable()).toMatchObject({ kind: "json", isNullable: true });
    expect(p.str().alias("a").alias("b").aliases).toEqual(["a", "b"]);
  });
});

describe("route table", () => {
  it("maps Zulip paths to fastify paths under /api/v1", () => {
    expect(fastifyPath({ path: "/users/{user_id}/status" })).toBe("/api/v1/users/:user_id/status");
    expect(fastifyPath({ path: "/messages/{message_id}/reactions" })).toBe("/api/v1/messages/:message_id/reactions");
  });

  it("success bodies are strict", () => {
    expect(success({ a: z.number() }).safeParse({ a: 1, b: 2 }).success).toBe(false);
    expect(empty.safeParse({}).success).toBe(true);
    expect(empty.safeParse({ x: 1 }).success).toBe(false);
  });

  it("has one route per method and path, each with a valid definition; the public table holds no internal route", () => {
    // Placeholders at one position can be told apart only by a pattern (as the services' routers do).
    const keys = allRoutes.map((r) => `${r.method} ${r.path.replace(/\{(\w+)\}/g, (_m, name: string) => `{${PATH_PARAM_PATTERNS[name] ?? ""}}`)}`);
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
    for (const r of allRoutes) {
      expect(r.path).toMatch(/^\//);
      expect(["GET", "POST", "PATCH", "PUT", "DELETE"]).toContain(r.method);
      expect(["gateway", "accounts", "messaging", "events", "scheduler"]).toContain(r.service);
      // Every {placeholder} is declared as a path parameter, and vice versa.
      const placeholders = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      const pathParams = Object.entries(r.params).filter(([, s]) => s.inPath).map(([n]) => n).sort();
      expect(pathParams, `${r.method} ${r.path}`).toEqual(placeholders);
    }
    expect(publicRoutes.some((r) => r.auth === "internal" || r.path.startsWith("/internal/"))).toBe(false);
  });

  it("speaks feature level 267", () => {
    expect(ZULIP_FEATURE_LEVEL).toBe(267);
  });
});
