import { describe, expect, it } from "vitest";
import { publicRoutes } from "@chat/contracts";
import { Router } from "./router";

/**
 * The password reset pages share a prefix: `/accounts/password/reset/` (the form asking for the
 * address: a trailing slash, an empty last segment) and `/accounts/password/reset/{reset_key}`.
 * The empty segment is the literal route's, never an empty key.
 */
describe("Router: the password reset pages", () => {
  const router = new Router(publicRoutes);
  const path = (m: ReturnType<Router["match"]>) => (m.kind === "route" ? `${m.route.method} ${m.route.path}` : m);

  it("the trailing-slash path is the address form, at the root as under /api/v1", () => {
    for (const prefix of ["", "/api/v1"]) {
      expect(path(router.match("GET", `${prefix}/accounts/password/reset/`))).toBe("GET /accounts/password/reset/");
      expect(path(router.match("POST", `${prefix}/accounts/password/reset/`))).toBe("POST /accounts/password/reset/");
    }
  });

  it("a key after the slash is the new-password form", () => {
    expect(path(router.match("GET", "/accounts/password/reset/AbC-123_x"))).toBe("GET /accounts/password/reset/{reset_key}");
    expect(path(router.match("POST", "/accounts/password/reset/AbC-123_x?x=1"))).toBe("POST /accounts/password/reset/{reset_key}");
  });

  it("other methods are not allowed; deeper or shorter paths are not found", () => {
    expect(router.match("DELETE", "/accounts/password/reset/")).toEqual({ kind: "method_not_allowed", allowed: ["GET", "POST"] });
    expect(router.match("GET", "/accounts/password/reset/key/more")).toEqual({ kind: "not_found" });
    expect(router.match("GET", "/accounts/password")).toEqual({ kind: "not_found" });
  });
});
