import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { p, route, success } from "@chat/contracts";
import { ApiError } from "./errors";
import type { Identity } from "./identity";
import { encodeParams, InternalClient } from "./internal-client";
import { createMemoryLogger } from "./logger";
import { createServer, registerRoute } from "./server";

const TOKEN = "internal-client-token-0123456789";
const BOB: Identity = { userId: 12, realmId: 4, role: 200, isBot: false, email: "böb+1@example.com", client: "ZulipMobile" };

const upstream = createServer({ name: "upstream", logger: createMemoryLogger().log, internalToken: TOKEN, validateResponses: true });
registerRoute(
  upstream,
  route({
    method: "POST",
    path: "/things",
    service: "messaging",
    auth: "user",
    params: { name: p.str().required(), ids: p.json(z.array(z.number().int())), flag: p.bool() },
    response: success({ who: z.object({ id: z.number(), realm: z.number(), role: z.number(), email: z.string(), client: z.string() }), name: z.string(), ids: z.array(z.number()).optional(), flag: z.boolean().optional() }),
  }),
  ({ params, identity }) => ({ who: { id: identity.userId, realm: identity.realmId, role: identity.role, email: identity.email, client: identity.client }, ...params }),
);
registerRoute(
  upstream,
  route({ method: "GET", path: "/things/{id}", service: "messaging", auth: "none", params: { id: p.int().path(), mode: p.str() }, response: success({ id: z.number() }) }),
  async ({ params }) => {
    if (params.mode === "missing") throw new ApiError("STREAM_DOES_NOT_EXIST", "Channel with ID '5' does not exist", { extra: { stream_id: 5 } });
    if (params.mode === "crash") throw new Error("bug");
    if (params.mode === "slow") await new Promise((r) => setTimeout(r, 1000));
    return { id: params.id };
  },
);
upstream.get("/api/v1/html", async (_req, reply) => reply.type("text/html").send("<html>oops</html>"));

let base = "";
beforeAll(async () => {
  await upstream.listen({ port: 0, host: "127.0.0.1" });
  base = `http://127.0.0.1:${(upstream.server.address() as AddressInfo).port}`;
});
afterAll(() => upstream.close());

async function failure(call: Promise<unknown>): Promise<ApiError> {
  try {
    await call;
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error("expected the call to fail");
}

describe("InternalClient", () => {
  it("sends the token, the caller's identity and Zulip-encoded form parameters", async () => {
    const client = new InternalClient(base, TOKEN);
    const res = await client.call("POST", "/things", { identity: BOB, params: { name: "x y", ids: [1, 2], flag: true, skipped: undefined } });
    expect(res).toEqual({
      result: "success",
      msg: "",
      who: { id: 12, realm: 4, role: 200, email: "böb+1@example.com", client: "ZulipMobile" },
      name: "x y",
      ids: [1, 2],
      flag: true,
    });
  });

  it("sends GET parameters in the query string", async () => {
    const client = new InternalClient(base, TOKEN);
    expect(await client.call("GET", "/things/9", { params: { mode: "fine" } })).toEqual({ result: "success", msg: "", id: 9 });
  });

  it("turns an error envelope into the same ApiError (status, code, msg, extra)", async () => {
    const err = await failure(new InternalClient(base, TOKEN).call("GET", "/things/1", { params: { mode: "missing" } }));
    expect(err.status).toBe(400);
    expect(err.body()).toEqual({ result: "error", msg: "Channel with ID '5' does not exist", code: "STREAM_DOES_NOT_EXIST", stream_id: 5 });
    const denied = await failure(new InternalClient(base, "wrong-token-0123456789").call("GET", "/things/1"));
    expect(denied.status).toBe(401);
    expect(denied.code).toBe("UNAUTHORIZED");
  });

  it("answers 503 SERVICE_UNAVAILABLE when the peer is down, broken, too slow or not speaking JSON", async () => {
    const cases = [
      () => new InternalClient("http://127.0.0.1:1", TOKEN).call("GET", "/things/1"),
      () => new InternalClient(base, TOKEN).call("GET", "/things/1", { params: { mode: "crash" } }),
      () => new InternalClient(base, TOKEN).call("GET", "/things/1", { params: { mode: "slow" }, timeoutMs: 100 }),
      () => new InternalClient(base, TOKEN).call("GET", "/html"),
    ];
    for (const c of cases) {
      const err = await failure(c());
      expect(err.status).toBe(503);
      expect(err.code).toBe("SERVICE_UNAVAILABLE");
      expect(err.headers["Retry-After"]).toBe("5");
    }
  });

  it("sends a read again when its connection breaks before the answer (a replica that just died behind a Service); a write not", async () => {
    // In front of the upstream: after `dies(n)`, its open connections break and it resets the
    // next n it accepts, as a Service does whose endpoint just died; it passes the others through.
    let failing = 0;
    const accepted: string[] = [];
    const open = new Set<net.Socket>();
    const dies = (n: number) => {
      for (const s of open) s.resetAndDestroy();
      open.clear();
      failing = n;
      accepted.length = 0;
    };
    const front = net.createServer((client) => {
      if (failing > 0) {
        failing--;
        accepted.push("reset");
        client.once("data", () => client.resetAndDestroy());
        return;
      }
      accepted.push("passed");
      open.add(client);
      const up = net.connect((upstream.server.address() as AddressInfo).port, "127.0.0.1");
      client.pipe(up).pipe(client);
      client.on("error", () => up.destroy());
      up.on("error", () => client.destroy());
    });
    await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
    const client = new InternalClient(`http://127.0.0.1:${(front.address() as AddressInfo).port}`, TOKEN);
    try {
      dies(2);
      expect(await client.call("GET", "/things/7", { params: { mode: "fine" } })).toEqual({ result: "success", msg: "", id: 7 });
      expect(accepted).toEqual(["reset", "reset", "passed"]);

      dies(1);
      const read = await client.call("POST", "/things", { identity: BOB, params: { name: "a read" }, readOnly: true });
      expect(read).toMatchObject({ name: "a read" });

      // A write may have been done by the peer that died: the caller hears 503, nothing is repeated.
      dies(1);
      const err = await failure(client.call("POST", "/things", { identity: BOB, params: { name: "a write" } }));
      expect(err.status).toBe(503);
      expect(accepted).toEqual(["reset"]);

      // Three broken connections in a row: the peer is taken as down.
      dies(3);
      expect((await failure(client.call("GET", "/things/7"))).status).toBe(503);
    } finally {
      front.close();
    }
  });

  it("encodeParams: strings raw, everything else JSON, undefined dropped", () => {
    expect(encodeParams({ s: "a b", n: 5, b: false, l: [1], o: { a: null }, u: undefined, z: null }).toString()).toBe(
      "s=a+b&n=5&b=false&l=%5B1%5D&o=%7B%22a%22%3Anull%7D&z=null",
    );
  });
});
