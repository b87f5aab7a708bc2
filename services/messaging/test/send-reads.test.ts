import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { selectStreamSendContext } from "../src/store/send-context";
import { startMessaging, type Messaging, type Org } from "./helpers";

/**
 * What a channel send reads before it writes must cost the same in a busy organization as in a
 * new one: it looks up one topic of one channel, never the organization's messages or every
 * user's topic settings. PostgreSQL keeps a prepared statement's generic plan until the
 * table's statistics change, and a plan made while the tables were small (a new deployment,
 * or a server without autovacuum, like the test machine's) is still used when they are large;
 * so the statement is planned here on small tables, the tables are filled, and the same plan
 * is run again with its buffer reads counted.
 */
let m: Messaging;
let org: Org;
let client: pg.PoolClient;
let streamId: number;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  streamId = await m.createStream(org.owner, "busy channel", [org.owner, org.member]);
  await m.send(org.member, { type: "stream", to: streamId, topic: "first", content: "hello" });
  client = await m.deps.pool.connect();
});
afterAll(async () => {
  client?.release();
  await m?.close();
});

/** The statement selectStreamSendContext runs, as text and values. */
async function sendReadStatement(stream: number | string, topic: string): Promise<{ text: string; values: unknown[] }> {
  let captured: { text: string; values: unknown[] } | null = null;
  const recorder = {
    query: async (text: string, values: unknown[]) => {
      captured = { text, values };
      return client.query(text, values);
    },
  };
  await selectStreamSendContext(recorder as never, org.realmId, org.member.user_id, stream, topic);
  return captured!;
}

/** Shared buffers a plan node and its children touched, from EXPLAIN's JSON. */
function buffers(node: Record<string, any>): number {
  return (node["Shared Hit Blocks"] ?? 0) + (node["Shared Read Blocks"] ?? 0);
}

describe("a channel send's reads", () => {
  it("touch a few pages however many messages the organization has and topic settings the deployment has", async () => {
    // The channel by id and by name are two statements; a topic with messages and a new one.
    const cases = [
      { stream: streamId, topic: "busy topic" },
      { stream: "busy channel", topic: "busy topic" },
      { stream: streamId, topic: "new topic" },
      { stream: "busy channel", topic: "new topic" },
    ];
    await client.query("SET plan_cache_mode = force_generic_plan");
    const planned: Array<{ name: string; args: string; label: string }> = [];
    for (const [i, c] of cases.entries()) {
      const { text, values } = await sendReadStatement(c.stream, c.topic);
      const name = `send_read_${i}`;
      const args = values.map((v) => (typeof v === "number" ? String(v) : `'${String(v).replace(/'/g, "''")}'`)).join(", ");
      await client.query(`PREPARE ${name} AS ${text}`);
      await client.query(`EXECUTE ${name}(${args})`);
      planned.push({ name, args, label: `channel ${typeof c.stream}, ${c.topic}` });
    }
    const { rows: recipient } = await client.query("SELECT id FROM recipients WHERE stream_id = $1", [streamId]);
    await client.query(
      `INSERT INTO messages (realm_id, sender_id, recipient_id, stream_id, topic, content, rendered_content, sending_client, date_sent, search_tsv)
       SELECT $1, $2, $3, $4, CASE WHEN i % 2 = 0 THEN 'busy topic' ELSE 'other ' || (i % 50) END, 'm' || i, '<p>m' || i || '</p>', 'test', now(), ''
         FROM generate_series(1, 6000) AS i`,
      [org.realmId, org.member.user_id, recipient[0].id, streamId],
    );
    await client.query(
      `INSERT INTO user_topics (realm_id, user_id, stream_id, topic_name, visibility_policy, last_updated)
       SELECT $1, 1000000 + i, $2, 'someone''s topic ' || i, 3, now() FROM generate_series(1, 20000) AS i`,
      [org.realmId, streamId],
    );
    try {
      for (const p of planned) {
        const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE ${p.name}(${p.args})`);
        const plan = rows[0]["QUERY PLAN"][0].Plan;
        expect(buffers(plan), `${p.label}: ${JSON.stringify(plan)}`).toBeLessThan(100);
      }
    } finally {
      for (const p of planned) await client.query(`DEALLOCATE ${p.name}`);
      await client.query("RESET plan_cache_mode");
    }
  });

  it("still see whether the topic exists and who follows it", async () => {
    await client.query(
      "INSERT INTO user_topics (realm_id, user_id, stream_id, topic_name, visibility_policy, last_updated) VALUES ($1, $2, $3, 'Busy Topic', 3, now())",
      [org.realmId, org.owner.user_id, streamId],
    );
    const busy = await selectStreamSendContext(m.deps.pool, org.realmId, org.member.user_id, streamId, "BUSY topic");
    expect(busy.topic?.existed).toBe(true);
    expect(busy.topic?.policies.get(org.owner.user_id)).toBe(3);
    const fresh = await selectStreamSendContext(m.deps.pool, org.realmId, org.member.user_id, streamId, "never used");
    expect(fresh.topic).toEqual({ existed: false, policies: new Map() });
  });
});
