import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startStack, type Stack } from "./stack";

/**
 * A port that was free when the stack picked it can be bound by someone else (another test
 * file's stack) before the service binds it. That process's `/ready` must not pass for the
 * service's: the stack starts on other ports instead.
 */
describe("startStack and a port taken before the service binds it", () => {
  let impostor: http.Server;
  let takenPort: number;
  let stack: Stack | undefined;

  beforeAll(async () => {
    impostor = http.createServer((req, res) => {
      res.writeHead(req.url === "/ready" ? 200 : 404, { "content-type": "application/json" });
      res.end(JSON.stringify({ status: "ready", service: "impostor" }));
    });
    await new Promise<void>((resolve) => impostor.listen(0, "127.0.0.1", resolve));
    takenPort = (impostor.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await stack?.stop();
    await new Promise((resolve) => impostor.close(resolve));
  });

  it("waits for its own service and starts it on another port", async () => {
    let handedOut = 0;
    // The first port handed out is the one already taken, as if it had been taken meanwhile.
    const portSource = async () => (handedOut++ === 0 ? takenPort : freePort());
    stack = await startStack({ services: ["accounts"], portSource });
    expect(handedOut).toBeGreaterThan(5);
    expect(stack.ports.accounts).not.toBe(takenPort);
    const health = await fetch(`${stack.urls.accounts}/health`);
    expect(await health.json()).toEqual({ status: "ok", service: "accounts" });
  }, 120_000);
});
