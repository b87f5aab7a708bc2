import { describe, expect, it } from "vitest";
import { z } from "zod";
import { p, publicRoutes, route, type RouteDef } from "@chat/contracts";
import { Router, upstreamUrl } from "./router";

const r = (method: RouteDef["method"], path: string, params: RouteDef["params"] = {}, auth: RouteDef["auth"] = "user") =>
  route({ method, path, service: "accounts", auth, params, response: z.object({}) });

const table = [
  r("GET", "/users"),
  r("POST", "/users"),
  r("GET", "/users/me"),
  r("DELETE", "/users/me"),
  r("GET", "/users/{user_id}", { user_id: p.int().path() }),
  r("PATCH", "/users/{user_id}", { user_id: p.int().path() }),
  r("GET", "/users/{email}", { email: p.str().path() }),
  r("GET", "/messages/{message_id}/history", { message_id: p.int().path() }),
  r("GET", "/user_uploads/{realm}/{file}", { realm: p.str().path(), file: p.str().path() }),
  r("POST", "/internal/authenticate", {}, "internal"),
  r("GET", "/hidden", {}, "internal"),
];
const router = new Router(table);
const path = (m: ReturnType<Router["match"]>) => (m.kind === "route" ? `${m.route.method} ${m.route.path}` : m);

describe("Router", () => {
  it("matches literal paths and strips the query string", () => {
    expect(path(router.match("GET", "/api/v1/users?client_gravatar=true"))).toBe("GET /users");
    expect(path(router.match("post", "/api/v1/users"))).toBe("POST /users");
  });

  it("prefers a literal segment over a placeholder", () => {
    expect(path(router.match("GET", "/api/v1/users/me"))).toBe("GET /users/me");
    expect(path(router.match("DELETE", "/api/v1/users/me"))).toBe("DELETE /users/me");
  });

  it("matches integer placeholders on digits only; string placeholders take the rest", () => {
    expect(path(router.match("GET", "/api/v1/users/42"))).toBe("GET /users/{user_id}");
    expect(path(router.match("GET", "/api/v1/users/iago%40zulip.com"))).toBe("GET /users/{email}");
    // An email placeholder takes only what looks like an address.
    expect(router.match("GET", "/api/v1/users/iago")).toEqual({ kind: "not_found" });
    expect(path(router.match("GET", "/api/v1/messages/7/history"))).toBe("GET /messages/{message_id}/history");
    expect(router.match("GET", "/api/v1/messages/seven/history")).toEqual({ kind: "not_found" });
  });

  it("answers 405 with every method the path allows, sorted", () => {
    expect(router.match("PUT", "/api/v1/users")).toEqual({ kind: "method_not_allowed", allowed: ["GET", "POST"] });
    expect(router.match("POST", "/api/v1/users/12")).toEqual({ kind: "method_not_allowed", allowed: ["GET", "PATCH"] });
    // `/users/me` is served by its own route; `/users/{email}` also matches it.
    expect(router.match("PATCH", "/api/v1/users/me")).toEqual({ kind: "method_not_allowed", allowed: ["DELETE", "GET"] });
  });

  it("serves HEAD with the GET route", () => {
    expect(path(router.match("HEAD", "/api/v1/users"))).toBe("GET /users");
  });

  it("finds nothing outside /api/v1, for extra or missing segments, or bad escapes", () => {
    for (const url of ["/users", "/api/v1", "/api/v1/", "/api/v1/users/", "/api/v1/users/1/2", "/api/v2/users", "/api/v1/users/%E0%A4%A"]) {
      expect(router.match("GET", url), url).toEqual({ kind: "not_found" });
    }
  });

  it("never routes service-to-service paths", () => {
    expect(router.match("POST", "/api/v1/internal/authenticate")).toEqual({ kind: "not_found" });
    expect(router.match("GET", "/api/v1/hidden")).toEqual({ kind: "not_found" });
  });

  it("serves /user_uploads/ at the root as well, under the /api/v1 route", () => {
    expect(path(router.match("GET", "/user_uploads/2/a.png"))).toBe("GET /user_uploads/{realm}/{file}");
    expect(upstreamUrl("/user_uploads/2/a.png?x=1")).toBe("/api/v1/user_uploads/2/a.png?x=1");
    expect(upstreamUrl("/api/v1/users")).toBe("/api/v1/users");
  });

  it("routes every public route of the contracts to itself", () => {
    const real = new Router(publicRoutes);
    for (const def of publicRoutes) {
      const value = (name: string) => (def.params[name]?.kind === "int" ? "17" : name === "email" ? "x%40y.test" : "x");
      const sample = def.path.replace(/\{(\w+)\}/g, (_m, name: string) => value(name));
      const m = real.match(def.method, `/api/v1${sample}`);
      expect(m.kind, `${def.method} ${def.path}`).toBe("route");
      if (m.kind === "route") expect(`${m.route.method} ${m.route.path} ${m.route.service}`).toBe(`${def.method} ${def.path} ${def.service}`);
    }
  });
});
