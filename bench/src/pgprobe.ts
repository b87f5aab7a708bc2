import pg from "pg";
import { startTarget } from "./lib/target";
import { Setup } from "./lib/org";
import { createPool } from "./lib/http";
import { closedLoop } from "./lib/load";
const target = await startTarget();
const setup = new Setup(target);
const dbName = new URL(target.vars.DATABASE_URL).pathname.slice(1);
try {
  const org = await setup.createOrg("pg", 10, 4);
  const streamId = (await setup.createChannels(org, ["pgc"], org.users.map((u) => u.userId))).get("pgc")!;
  const admin = new pg.Client({ connectionString: target.vars.DATABASE_URL });
  await admin.connect();
  // warm
  const pool = createPool(target.gatewayUrl, { connections: 4 });
  const senders = org.users.slice(0, 4).map((u) => setup.gateway(u, pool));
  await closedLoop(4, 3000, async (w, seq) => { const r = await senders[w].post("/messages", { type: "stream", to: streamId, topic: "bench", content: "warm " + seq }); return r.status === 200 ? null : "err"; });
  await admin.query(`ALTER DATABASE "${dbName}" SET log_min_duration_statement = 0`);
  await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [dbName]);
  await new Promise((r) => setTimeout(r, 1000));
  console.log("MARK-START", dbName);
  const res = await closedLoop(4, 5000, async (w, seq) => { const r = await senders[w].post("/messages", { type: "stream", to: streamId, topic: "bench", content: "m " + seq }); return r.status === 200 ? null : "err " + JSON.stringify(r.body); });
  await new Promise((r) => setTimeout(r, 1000));
  await admin.query(`ALTER DATABASE "${dbName}" RESET log_min_duration_statement`);
  console.log("sends", res.ok, res.errors, res.errorSamples);
  await admin.end();
  await pool.close();
} finally {
  await setup.close();
  await target.stop();
}
