import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProxy, type TcpProxy } from "./proxy";

/** An echo server stands in for PostgreSQL / Redis / RabbitMQ. */
let echo: net.Server;
let echoPort: number;
let proxy: TcpProxy;

beforeAll(async () => {
  echo = net.createServer((s) => {
    s.on("error", () => {}); // resets are what the tests cause
    s.pipe(s);
  });
  await new Promise<void>((r) => echo.listen(0, "127.0.0.1", r));
  echoPort = (echo.address() as net.AddressInfo).port;
  proxy = await startProxy({ host: "127.0.0.1", port: echoPort });
});

afterAll(async () => {
  await proxy.close();
  await new Promise((r) => echo.close(r));
});

interface Conn {
  socket: net.Socket;
  data: () => string;
  closed: Promise<string>;
}

function connect(): Promise<Conn> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(proxy.port, proxy.host);
    let data = "";
    socket.on("data", (c) => (data += c));
    const closed = new Promise<string>((r) => {
      socket.on("error", (e: NodeJS.ErrnoException) => r(e.code ?? "error"));
      socket.on("close", () => r("closed"));
    });
    socket.once("connect", () => resolve({ socket, data: () => data, closed }));
    socket.once("error", reject);
  });
}

async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("TCP proxy", () => {
  it("forwards both ways and counts connections", async () => {
    const c = await connect();
    c.socket.write("hello");
    await until(() => c.data() === "hello");
    await until(() => proxy.connections === 1);
    c.socket.end();
    await c.closed;
    await until(() => proxy.connections === 0);
  });

  it("cut() resets every open connection; new ones still work", async () => {
    const [a, b] = await Promise.all([connect(), connect()]);
    await until(() => proxy.connections === 2);
    proxy.cut();
    expect(await a.closed).toMatch(/ECONNRESET|closed/);
    expect(await b.closed).toMatch(/ECONNRESET|closed/);
    const c = await connect();
    c.socket.write("again");
    await until(() => c.data() === "again");
    c.socket.destroy();
  });

  it("block() makes the target look down until unblock()", async () => {
    const open = await connect();
    proxy.block();
    await open.closed;
    const refused = await connect();
    expect(await refused.closed).toMatch(/ECONNRESET|closed/);
    proxy.unblock();
    const c = await connect();
    c.socket.write("up");
    await until(() => c.data() === "up");
    c.socket.destroy();
  });

  it("setLatency() delays each direction, keeping byte order", async () => {
    proxy.setLatency(150);
    const c = await connect();
    const t0 = Date.now();
    for (const part of ["a", "b", "c", "d"]) c.socket.write(part);
    await until(() => c.data() === "abcd");
    // Two hops (to the target and back), each delayed.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(280);
    proxy.setLatency(0);
    c.socket.destroy();
  });

  it("pause() holds traffic on open connections; resume() delivers it in order", async () => {
    const c = await connect();
    proxy.pause();
    c.socket.write("one,");
    c.socket.write("two");
    await new Promise((r) => setTimeout(r, 200));
    expect(c.data()).toBe("");
    proxy.resume();
    await until(() => c.data() === "one,two");
    c.socket.destroy();
  });

  it("url() points a connection string at the proxy", () => {
    expect(proxy.url("amqp://guest:guest@127.0.0.1:5672")).toBe(`amqp://guest:guest@127.0.0.1:${proxy.port}`);
    expect(proxy.url("postgres://postgres@127.0.0.1:5432/db?x=1")).toBe(`postgres://postgres@127.0.0.1:${proxy.port}/db?x=1`);
    expect(proxy.url("http://127.0.0.1:9992")).toBe(`http://127.0.0.1:${proxy.port}`);
  });
});
