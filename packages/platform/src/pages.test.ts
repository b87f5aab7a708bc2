import { describe, expect, it } from "vitest";
import { z } from "zod";
import { p, route } from "@chat/contracts";
import { ApiError } from "./errors";
import { INTERNAL_HEADERS } from "./identity";
import { createMemoryLogger } from "./logger";
import { errorPage, pageUrlTest } from "./pages";
import { createServer, registerRoute } from "./server";

const TOKEN = "test-internal-token-0123456789";

const Page = route({ method: "POST", path: "/accounts/thing/{key}", service: "accounts", auth: "none", page: true, params: { key: p.str().path(), name: p.str() }, response: z.any() });
const Api = route({ method: "POST", path: "/things/{key}", service: "accounts", auth: "none", params: { key: p.str().path(), name: p.str() }, response: z.any() });

/** A page and an API route whose handlers refuse a name of "refuse" with markup in the message. */
function build() {
  const { log } = createMemoryLogger("test", "silent");
  const app = createServer({ name: "test", logger: log, internalToken: TOKEN, pageRoutes: [Page, Api] });
  for (const def of [Page, Api]) {
    registerRoute(app, def, ({ params }) => {
      if (params.name === "refuse") throw new ApiError("RATE_LIMIT_HIT", "No <b>more</b> today", { extra: { "retry-after": 90 }, headers: { "Retry-After": "90" } });
      return {};
    });
  }
  return app;
}

const post = (app: ReturnType<typeof build>, url: string, form: string) =>
  app.inject({ method: "POST", url, headers: { [INTERNAL_HEADERS.token]: TOKEN, "content-type": "application/x-www-form-urlencoded" }, payload: form });

function expectPage(res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, text: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
  expect(res.headers["cache-control"]).toBe("no-store");
  expect(res.headers[INTERNAL_HEADERS.requestId]).toEqual(expect.any(String));
  expect(res.body).toMatch(/^<!DOCTYPE html>/);
  expect(res.body).toContain(text);
}

describe("errors at a page's path are pages", () => {
  it("a handler's error: its status, headers and message, escaped, with when to try again", async () => {
    const app = build();
    const res = await post(app, "/api/v1/accounts/thing/k", "name=refuse");
    expectPage(res, 429, "No &lt;b&gt;more&lt;/b&gt; today");
    expect(res.body).not.toContain("<b>");
    expect(res.body).toContain("Too many requests");
    expect(res.body).toContain("Try again in 2 minutes.");
    expect(res.headers["retry-after"]).toBe("90");

    const api = await post(app, "/api/v1/things/k", "name=refuse");
    expect(api.statusCode).toBe(429);
    expect(api.headers["content-type"]).toMatch(/^application\/json/);
    expect(api.json()).toEqual({ result: "error", msg: "No <b>more</b> today", code: "RATE_LIMIT_HIT", "retry-after": 90 });
  });

  it("a parameter refused, a path segment too long, a path that is no route: pages there, JSON elsewhere", async () => {
    const app = build();
    expectPage(await post(app, "/api/v1/accounts/thing/k", "name=a%00b"), 400, "name must not contain null bytes");
    expectPage(await post(app, `/api/v1/accounts/thing/${"k".repeat(3000)}`, "name=x"), 414, "URL path segment too long");
    expectPage(await post(app, "/api/v1/accounts/thing/k/more", "name=x"), 404, "Not Found");

    const bad = await post(app, "/api/v1/things/k", "name=a%00b");
    expect([bad.statusCode, bad.json()]).toEqual([400, { result: "error", msg: "name must not contain null bytes", code: "BAD_REQUEST" }]);
    const long = await post(app, `/api/v1/things/${"k".repeat(3000)}`, "name=x");
    expect([long.statusCode, long.json()]).toEqual([414, { result: "error", msg: "URL path segment too long", code: "BAD_REQUEST" }]);
    const none = await post(app, "/api/v1/things/k/more", "name=x");
    expect([none.statusCode, none.json()]).toEqual([404, { result: "error", msg: "Not Found", code: "BAD_REQUEST" }]);
  });
});

describe("pageUrlTest", () => {
  it("is true below a page's first path segment, at the root and below /api/v1, query string or not", () => {
    const isPage = pageUrlTest([Page, Api]);
    for (const url of ["/accounts/thing/k", "/api/v1/accounts/thing/k?x=1", "/accounts/", "/accounts", "/api/v1/accounts/other"]) expect(isPage(url), url).toBe(true);
    for (const url of ["/things/k", "/api/v1/things/k", "/api/v1", "/", "/accountsx/y", "/api/v1/accounts-x"]) expect(isPage(url), url).toBe(false);
  });
});

describe("errorPage", () => {
  it("titles the page by its status", () => {
    expect(errorPage(new ApiError(null, "Method Not Allowed", { status: 405 }))).toContain("<h1>Method not allowed</h1>");
    expect(errorPage(new ApiError(null, "Internal server error", { status: 500 }))).toContain("<h1>Something went wrong</h1>");
    expect(errorPage(new ApiError("BAD_REQUEST", "Not Found", { status: 404 }))).toContain("<h1>Page not found</h1>");
  });
});
