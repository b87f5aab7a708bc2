import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { guardedFetch, isRefusedAddress } from "./guarded-fetch";

let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((_req, res) => res.end("hello"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe("a guarded fetch", () => {
  it("never connects to an address the guard refuses, checked on what the name resolves to when connecting", async () => {
    let hits = 0;
    server.on("request", () => hits++);
    const loopbackRefused = guardedFetch((address) => address === "127.0.0.1" || address === "::1");
    const err = await loopbackRefused(`http://localhost:${port}/`).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isRefusedAddress(err)).toBe(true);
    expect(hits).toBe(0);
  });

  it("connects where the guard allows, and answers as fetch does", async () => {
    const anything = guardedFetch(() => false);
    const res = await anything(`http://localhost:${port}/`, { method: "POST", body: "x" });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("hello");
  });

  it("tells a refused address from other failures", async () => {
    const err = await guardedFetch(() => false)("http://127.0.0.1:1/").then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).not.toBeNull();
    expect(isRefusedAddress(err)).toBe(false);
  });
});
