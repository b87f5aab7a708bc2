import pg from "pg";
import type { Caller } from "../lib/http";
import { expectOk } from "../lib/http";
import type { Setup } from "../lib/org";
import type { CpuReport } from "../lib/procs";
import { figure, type Figure } from "../lib/report";
import { summarize, type LatencySummary } from "../lib/stats";
import { calibrate, paired, type Calibration, type Calibrator } from "../lib/calibrate";

/**
 * Scenario 4: GET /messages through the gateway on a channel holding M messages: the newest
 * page of a channel narrow, a page around an anchor deep in the history, and a full-text
 * search. Sending M messages through the API would take minutes, so they are bulk-loaded
 * into the messaging schema with one INSERT ... SELECT (same columns and search vector as a
 * send writes), plus the subscribers' usermessage rows.
 */

export interface HistoryOptions {
  messages: number;
  subscribers: number;
  requests: number;
  runs: number;
}

const WORDS = [
  "apple", "river", "stone", "cloud", "garden", "rocket", "window", "forest", "pencil", "engine",
  "silver", "harbor", "candle", "meadow", "planet", "violin", "mirror", "desert", "castle", "ladder",
];
/** In about 1 message in 1,000: the search has to find a few needles, not return everything. */
const RARE_WORD = "zeppelin";

interface Query {
  name: string;
  params: (ctx: { channel: string; maxId: number; minId: number }) => Record<string, unknown>;
}

const QUERIES: Query[] = [
  {
    name: "channel narrow, newest 100",
    params: ({ channel }) => ({ narrow: [{ operator: "channel", operand: channel }], anchor: "newest", num_before: 100, num_after: 0 }),
  },
  {
    name: "channel narrow, 50+50 around an old anchor",
    params: ({ channel, maxId, minId }) => ({
      narrow: [{ operator: "channel", operand: channel }],
      anchor: String(minId + Math.floor((maxId - minId) * Math.random() * 0.5)),
      num_before: 50,
      num_after: 50,
    }),
  },
  {
    name: `channel + full-text search "${RARE_WORD}", newest 100`,
    params: ({ channel }) => ({
      narrow: [{ operator: "channel", operand: channel }, { operator: "search", operand: RARE_WORD }],
      anchor: "newest",
      num_before: 100,
      num_after: 0,
    }),
  },
  {
    name: `full-text search "river garden" (all channels), newest 100`,
    params: () => ({ narrow: [{ operator: "search", operand: "river garden" }], anchor: "newest", num_before: 100, num_after: 0 }),
  },
];

export async function runHistory(setup: Setup, opts: HistoryOptions, calib: Calibrator | null, log: (s: string) => void): Promise<{ figures: Figure[]; raw: unknown }> {
  const org = await setup.createOrg(`hist${opts.messages}`, opts.subscribers, 4);
  const channel = `bench-history`;
  const streamId = (await setup.createChannels(org, [channel], org.users.map((u) => u.userId))).get(channel)!;
  log(`  history: bulk-loading ${opts.messages} messages`);
  const t0 = performance.now();
  const { minId, maxId } = await bulkLoad(setup.target.vars.DATABASE_URL, org.realmId, streamId, [org.owner.userId, ...org.users.map((u) => u.userId)], opts.messages);
  log(`  history: loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s (ids ${minId}..${maxId})`);

  const reader: Caller = setup.gateway(org.users[0]);
  const ctx = { channel, maxId, minId };
  for (const q of QUERIES) for (let i = 0; i < 5; i++) await fetchOnce(reader, q, ctx); // warm-up

  await setup.target.profileStart();
  const runs: Array<{ byQuery: Record<string, LatencySummary & { found: number }>; cpu: CpuReport }> = [];
  const cals: Calibration[] = [];
  for (let run = 0; run < opts.runs; run++) {
    cals.push(await calibrate(calib));
    const cpu = setup.cpuWindow();
    const byQuery: Record<string, LatencySummary & { found: number }> = {};
    for (const q of QUERIES) {
      const lat: number[] = [];
      let found = 0;
      for (let i = 0; i < opts.requests; i++) {
        const r = await fetchOnce(reader, q, ctx);
        lat.push(r.ms);
        found = r.found;
      }
      byQuery[q.name] = { ...summarize(lat), found };
    }
    runs.push({ byQuery, cpu: cpu.stop() });
    log(`  history run ${run + 1}: ${QUERIES.map((q) => `${q.name.split(",")[0]} p50 ${byQuery[q.name].p50.toFixed(1)} ms`).join("; ")}`);
  }
  await setup.target.profileStop("history");
  const sc = `history M=${opts.messages}`;
  const b50 = paired.p50(cals);
  const b99 = paired.p99(cals);
  const figures: Figure[] = [];
  for (const q of QUERIES) {
    figures.push(figure(sc, `GET /messages ${q.name}: p50`, "ms", runs.map((r) => r.byQuery[q.name].p50), { baseline: b50 }));
    figures.push(
      figure(sc, `GET /messages ${q.name}: p99`, "ms", runs.map((r) => r.byQuery[q.name].p99), {
        baseline: b99,
        note: `${runs[0]?.byQuery[q.name].found ?? 0} messages returned`,
      }),
    );
  }
  figures.push(figure(sc, "load generator CPU", "cores", runs.map((r) => r.cpu.loadGenCores)));
  return { figures, raw: { options: opts, calibrations: cals, min_id: minId, max_id: maxId, runs } };
}

async function fetchOnce(c: Caller, q: Query, ctx: { channel: string; maxId: number; minId: number }) {
  const r = await c.get("/messages", q.params(ctx));
  const body = expectOk(r, `GET /messages (${q.name})`) as { messages: unknown[] };
  return { ms: r.ms, found: body.messages.length };
}

/**
 * Inserts `count` channel messages from the given senders, round robin, with the search vector
 * a send computes, and one usermessage row (read) per subscriber per message.
 */
async function bulkLoad(databaseUrl: string, realmId: number, streamId: number, userIds: number[], count: number) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query("SELECT id FROM messaging.recipients WHERE realm_id = $1 AND stream_id = $2", [realmId, streamId]);
    if (rows.length === 0) throw new Error("the channel has no recipient row: has the messaging schema changed?");
    const recipientId = Number(rows[0].id);
    await client.query("BEGIN");
    const inserted = await client.query(
      `WITH src AS (
         SELECT i,
                'topic ' || (i % 20) AS topic,
                'Message ' || i || ': the ' || ($5::text[])[1 + (i * 7) % 20] || ' and the ' || ($5::text[])[1 + (i * 13) % 20]
                  || ' near the ' || ($5::text[])[1 + (i * 3) % 20] || CASE WHEN i % 1000 = 0 THEN ' ${RARE_WORD}' ELSE '' END AS content
           FROM generate_series(1, $4::int) AS i
       )
       INSERT INTO messaging.messages (realm_id, sender_id, recipient_id, stream_id, topic, content, rendered_content, sending_client,
                                       date_sent, search_tsv)
       SELECT $1, ($6::bigint[])[1 + i % array_length($6::bigint[], 1)], $2, $3, topic, content, '<p>' || content || '</p>', 'ChatBench',
              now() - ($4::int - i) * interval '1 second',
              setweight(to_tsvector('english', topic), 'A') || to_tsvector('english', content)
         FROM src ORDER BY i
       RETURNING id`,
      [realmId, recipientId, streamId, count, WORDS, userIds],
    );
    let minId = Infinity;
    let maxId = 0;
    for (const r of inserted.rows) {
      const id = Number(r.id);
      if (id < minId) minId = id;
      if (id > maxId) maxId = id;
    }
    await client.query(
      `INSERT INTO messaging.usermessages (realm_id, user_id, message_id, flags)
       SELECT $1, u, m.id, 1 FROM messaging.messages m CROSS JOIN unnest($2::bigint[]) AS u
        WHERE m.realm_id = $1 AND m.stream_id = $3 AND m.id BETWEEN $4 AND $5`,
      [realmId, userIds, streamId, minId, maxId],
    );
    await client.query("UPDATE messaging.streams SET first_message_id = COALESCE(first_message_id, $3) WHERE realm_id = $1 AND id = $2", [realmId, streamId, minId]);
    await client.query("COMMIT");
    await client.query("ANALYZE messaging.messages");
    await client.query("ANALYZE messaging.usermessages");
    return { minId, maxId };
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    await client.end();
  }
}
