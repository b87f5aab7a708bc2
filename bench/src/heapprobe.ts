import { startTarget } from "./lib/target";
import { Setup } from "./lib/org";
import { Inspector } from "./lib/inspector";
import { createPool, expectOk } from "./lib/http";
import { mapLimit, sleep } from "./lib/stats";
import { serviceMemory } from "./lib/metrics";
const C = 2000;
const target = await startTarget();
const setup = new Setup(target);
try {
  const org = await setup.createOrg("heap", 50, 8);
  const regPool = createPool(target.urls.events, { connections: 16 });
  const queues = await mapLimit(Array.from({ length: C }, (_, i) => i), 16, async (i) => {
    const user = org.users[i % 50];
    const r = expectOk(await setup.direct(org, user, regPool).get("/events", { dont_block: true, event_types: ["message"] }), "reg");
    return { user, id: (r as any).queue_id };
  });
  await target.gc("events");
  const m0 = await serviceMemory(target.urls.events);
  // find port
  const port = Number((process.env.X ?? ""));
  const insp = await (target as any).__inspector?.("events");
  const pool = createPool(target.urls.events, { connections: C, timeoutMs: 600000 });
  const i = await Inspector.connect(Number(target.vars.__EVENTS_INSPECT));
  await i.call("HeapProfiler.enable");
  await i.call("HeapProfiler.startSampling", { samplingInterval: 512 });
  const polls = queues.map((q) => setup.direct(org, q.user, pool).get("/events", { queue_id: q.id, last_event_id: -1 }).catch(() => {}));
  await sleep(8000);
  await target.gc("events");
  const m1 = await serviceMemory(target.urls.events);
  console.log("per poll heap", (m1.heapUsed - m0.heapUsed) / C, "rss", (m1.rss - m0.rss) / C);
  const { profile } = await i.call<any>("HeapProfiler.stopSampling");
  // aggregate self size by function/url
  const agg = new Map<string, number>();
  const walk = (node: any, stack: string[]) => {
    const f = node.callFrame;
    const name = `${f.functionName || "(anon)"} ${f.url.replace(/^.*node_modules\/\.pnpm\/[^/]+\/node_modules\//, "").replace(/^.*\/work\/main\//, "")}:${f.lineNumber + 1}`;
    const s = [...stack, name];
    if (node.selfSize > 0) {
      const key = s.slice(-4).join(" < ");
      agg.set(key, (agg.get(key) ?? 0) + node.selfSize);
    }
    for (const c of node.children) walk(c, s);
  };
  walk(profile.head, []);
  const rows = [...agg.entries()].sort((a, b) => b[1] - a[1]).slice(0, 40);
  for (const [k, v] of rows) console.log((v / C).toFixed(0).padStart(6), "B/poll ", k.split(" < ").reverse().join(" < ").slice(0, 400));
  i.close();
  await pool.destroy();
} finally {
  await setup.close();
  await target.stop();
}
