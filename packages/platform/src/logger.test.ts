import { p, route, success } from "@chat/contracts";
import { describe, expect, it } from "vitest";
import { createMemoryLogger, redactUrl } from "./logger";
import { INTERNAL_HEADERS } from "./identity";
import { createServer, registerRoute } from "./server";

/** Request logs must not carry the secrets some paths are made of (links mails carry, export tokens). */

describe("request logs", () => {
  it("show a link's key as [secret], through fastify's request log, and keep other paths whole", async () => {
    const { log, lines } = createMemoryLogger("logtest", "info");
    const app = createServer({ name: "logtest", logger: log, internalToken: "t".repeat(32) });
    const Page = route({ method: "GET", path: "/accounts/password/reset/{key}", service: "accounts", auth: "none", params: { key: p.str().path() }, response: success({}) });
    registerRoute(app, Page, async () => ({}));
    await app.ready();
    const res = await app.inject({ method: "GET", url: "/api/v1/accounts/password/reset/Sup3rS3cretKey?x=1", headers: { [INTERNAL_HEADERS.token]: "t".repeat(32) } });
    expect(res.statusCode).toBe(200);
    await app.close();
    const logged = JSON.stringify(lines);
    expect(logged).not.toContain("Sup3rS3cretKey");
    expect(lines.find((l) => l.msg === "incoming request")?.req).toMatchObject({ method: "GET", url: "/api/v1/accounts/password/reset/[secret]?x=1" });
  });

  it("redacts each kind of secret path, with or without the /api/v1 prefix", () => {
    expect(redactUrl("/accounts/do_confirm/abc")).toBe("/accounts/do_confirm/[secret]");
    expect(redactUrl("/api/v1/accounts/do_confirm_signup/abc")).toBe("/api/v1/accounts/do_confirm_signup/[secret]");
    expect(redactUrl("/accounts/confirm_new_email/abc")).toBe("/accounts/confirm_new_email/[secret]");
    expect(redactUrl("/join/abc/")).toBe("/join/[secret]/");
    expect(redactUrl("/user_avatars/exports/12/tok3n/export.tar.gz")).toBe("/user_avatars/exports/12/[secret]/export.tar.gz");
    expect(redactUrl("/accounts/password/reset/")).toBe("/accounts/password/reset/");
    expect(redactUrl("/api/v1/messages?anchor=newest")).toBe("/api/v1/messages?anchor=newest");
  });

  it("redacts an integration URL's api_key, wherever it is in the query", () => {
    expect(redactUrl("/api/v1/external/json?api_key=K3y&stream=alerts")).toBe("/api/v1/external/json?api_key=[secret]&stream=alerts");
    expect(redactUrl("/api/v1/external/json?stream=a&api_key=K3y")).toBe("/api/v1/external/json?stream=a&api_key=[secret]");
    expect(redactUrl("/api/v1/external/json?my_api_key=x")).toBe("/api/v1/external/json?my_api_key=x");
    // The query parser decodes a parameter's name, so the key is the key under any spelling of it.
    expect(redactUrl("/api/v1/external/json?api%5Fkey=K3y&%61pi_key=K3y&api_key")).toBe("/api/v1/external/json?api%5Fkey=[secret]&%61pi_key=[secret]&api_key");
    expect(redactUrl("/api/v1/external/json?%E0%A4%A=x&api_key=K3y")).toBe("/api/v1/external/json?%E0%A4%A=x&api_key=[secret]");
  });
});
