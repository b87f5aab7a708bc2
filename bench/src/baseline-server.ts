/**
 * The bare fastify baseline, run as its own process (like a service): a JSON endpoint, a
 * form-posting endpoint, and held requests that answer only when released, so idle long polls
 * and their release can be compared with the events service. Prints its port on stdout.
 */
import formbody from "@fastify/formbody";
import Fastify from "fastify";

const app = Fastify({ logger: false, keepAliveTimeout: 120_000, requestTimeout: 0 });
await app.register(formbody);

const ok = { result: "success", msg: "" };
app.get("/ok", async () => ok);
app.post("/ok", async (req) => ({ ...ok, id: Object.keys((req.body as object) ?? {}).length }));

let held: Array<() => void> = [];
app.get("/hold", (req, reply) => {
  held.push(() => reply.send({ ...ok, events: [{ id: 0, type: "heartbeat" }] }));
});
app.get("/held", async () => ({ ...ok, held: held.length }));
app.post("/release", async () => {
  const n = held.length;
  const all = held;
  held = [];
  for (const send of all) send();
  return { ...ok, released: n };
});
app.get("/mem", async () => {
  const m = process.memoryUsage();
  return { ...ok, rss: m.rss, heap_used: m.heapUsed };
});
app.post("/gc", async () => {
  (globalThis as { gc?: () => void }).gc?.();
  return ok;
});

const address = await app.listen({ host: "127.0.0.1", port: Number(process.env.PORT ?? 0) });
process.stdout.write(`${new URL(address).port}\n`);
process.on("SIGTERM", () => void app.close().then(() => process.exit(0)));
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
