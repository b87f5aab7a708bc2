import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ExpiredMessagesDeleteEvent } from "@chat/contracts";
import { createServer, identityHeaders, type Identity } from "@chat/platform";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attachmentHooks, FileReaper } from "../src/actions/attachments";
import { effectiveRetention, runRetentionOnce } from "../src/jobs/retention";
import { attachmentRoutes, type AttachmentsModule } from "../src/routes/attachments";
import { LocalDirectoryStorage } from "../src/storage";
import { startMessaging, type Messaging, type Org } from "./helpers";

/**
 * The retention job against the real messaging app (and accounts for the organization's
 * setting), with uploads mounted so released attachments can be checked. The clock moves;
 * nothing sleeps.
 */
let m: Messaging;
let org: Org;
let files: FastifyInstance;
let mod: AttachmentsModule;
let dir: string;
const DAY = 86_400_000;

beforeAll(async () => {
  m = await startMessaging();
  dir = await mkdtemp(path.join(os.tmpdir(), "retention-"));
  const storage = new LocalDirectoryStorage(dir);
  mod = { storage, maxUploadBytes: 1024 * 1024, reaper: new FileReaper({ pool: m.deps.pool, log: m.deps.log, storage }) };
  m.deps.hooks = attachmentHooks(mod.reaper);
  files = createServer({ name: "messaging", logger: m.deps.log, internalToken: m.deps.config.INTERNAL_TOKEN, validateResponses: true });
  attachmentRoutes(mod)(files, m.deps);
  await files.ready();
  org = await m.createOrg();
});
afterAll(async () => {
  mod?.reaper.stop();
  await files?.close();
  await m?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function upload(as: Identity, name: string): Promise<string> {
  const form = new FormData();
  form.append("file", new Blob(["hello"], { type: "text/plain" }), name);
  const req = new Request("http://local/", { method: "POST", body: form });
  const res = await files.inject({
    method: "POST",
    url: "/api/v1/user_uploads",
    headers: { ...identityHeaders(as, m.deps.config.INTERNAL_TOKEN), "content-type": req.headers.get("content-type")! },
    payload: Buffer.from(await req.arrayBuffer()),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().url;
}
const attachments = async (as: Identity) =>
  (await files.inject({ method: "GET", url: "/api/v1/attachments", headers: identityHeaders(as, m.deps.config.INTERNAL_TOKEN) })).json().attachments;

async function exists(ids: number[]): Promise<number[]> {
  const { rows } = await m.deps.pool.query("SELECT id FROM messages WHERE id = ANY($1::bigint[]) ORDER BY id", [ids]);
  return rows.map((r) => Number(r.id));
}

/** The retention client events written since the last outbox read, checked against their contract. */
async function expiredEvents() {
  const out = (await m.clientEvents()).filter((e) => e.type === "messaging.messages.expired");
  for (const e of out) expect(ExpiredMessagesDeleteEvent.safeParse(e.event).success, JSON.stringify(e.event)).toBe(true);
  return out;
}

describe("effective retention", () => {
  it("a channel's own days win; null inherits; -1 and null mean forever", () => {
    expect(effectiveRetention(5, 30)).toBe(5);
    expect(effectiveRetention(null, 30)).toBe(30);
    expect(effectiveRetention(-1, 30)).toBeNull();
    expect(effectiveRetention(null, null)).toBeNull();
    expect(effectiveRetention(null, -1)).toBeNull();
  });
});

describe("the retention job", () => {
  let inherit: number;
  let forever: number;
  let short: number;
  const sent: Record<string, number[]> = { inherit: [], forever: [], short: [], dm: [] };
  let uploadUrl: string;

  beforeAll(async () => {
    const everyone = [org.owner, org.member, org.member2];
    inherit = await m.createStream(org.owner, "inherits", everyone);
    forever = await m.createStream(org.owner, "keeps", everyone, { message_retention_days: JSON.stringify("unlimited") });
    short = await m.createStream(org.owner, "short", [org.owner, org.member], { message_retention_days: 1 });
    uploadUrl = await upload(org.member.as, "notes.txt");
    sent.inherit.push(await m.send(org.member, { type: "stream", to: inherit, topic: "a", content: `see [notes](${uploadUrl})` }));
    sent.inherit.push(await m.send(org.member, { type: "stream", to: inherit, topic: "b", content: "second topic" }));
    sent.forever.push(await m.send(org.member, { type: "stream", to: forever, topic: "a", content: "kept" }));
    sent.short.push(await m.send(org.member, { type: "stream", to: short, topic: "t", content: "short 1" }));
    sent.short.push(await m.send(org.owner, { type: "stream", to: short, topic: "t", content: "short 2" }));
    sent.dm.push(await m.send(org.member, { type: "private", to: [org.member2.user_id], content: "psst" }));
    // A newer message in the inheriting channel outlives the others.
    m.clock.advance(20 * DAY);
    sent.inherit.push(await m.send(org.member2, { type: "stream", to: inherit, topic: "a", content: "later" }));
    await m.clientEvents();
  });

  it("keeps everything while the organization keeps messages forever", async () => {
    // 20 days after the first messages.
    await m.setRealmSetting(org.realmId, "message_retention_days", null);
    // Only the channel with its own 1-day policy expires.
    expect(await runRetentionOnce(m.deps)).toBe(2);
    expect(await exists(sent.short)).toEqual([]);
    const [e] = await expiredEvents();
    expect(e.event).toEqual({ type: "delete_message", message_type: "stream", message_ids: sent.short, stream_id: short, topic: "t" });
    expect(e.users).toEqual([org.owner.user_id, org.member.user_id].sort((a, b) => a - b));
    expect(await exists([...sent.inherit, ...sent.forever, ...sent.dm])).toEqual([...sent.inherit, ...sent.forever, ...sent.dm].sort((a, b) => a - b));
    // Nothing left to do: a second pass deletes nothing.
    expect(await runRetentionOnce(m.deps)).toBe(0);
    expect(await expiredEvents()).toEqual([]);
  });

  it("the organization's days apply to inheriting channels and direct messages, not to 'unlimited' ones", async () => {
    m.clock.advance(10 * DAY + 1000);
    // Now 30 days after the first messages and 10 days after the later one.
    await m.setRealmSetting(org.realmId, "message_retention_days", 30);
    expect(await attachments(org.member.as)).toHaveLength(1);
    expect(await runRetentionOnce(m.deps)).toBe(3);
    expect(await exists([...sent.inherit, ...sent.forever, ...sent.dm])).toEqual([sent.forever[0], sent.inherit[2]]);
    // Their recipients' rows went with them (unread counts and starred lists read these).
    const expired = [sent.inherit[0], sent.inherit[1], ...sent.dm];
    const left = await m.deps.pool.query("SELECT count(*)::int AS n FROM usermessages WHERE message_id = ANY($1::bigint[])", [expired]);
    expect(left.rows[0].n).toBe(0);
    const got = await expiredEvents();
    expect(got.map((e) => e.event)).toEqual([
      { type: "delete_message", message_type: "stream", message_ids: [sent.inherit[0]], stream_id: inherit, topic: "a" },
      { type: "delete_message", message_type: "stream", message_ids: [sent.inherit[1]], stream_id: inherit, topic: "b" },
      { type: "delete_message", message_type: "private", message_ids: sent.dm },
    ]);
    expect(got[2].users).toEqual([org.member.user_id, org.member2.user_id].sort((a, b) => a - b));
    // The upload only the expired message linked is released.
    expect(await attachments(org.member.as)).toEqual([]);
    const { streams } = await m.ok(await m.call("GET", "/streams", org.owner));
    expect(streams.find((s: any) => s.stream_id === inherit).first_message_id).toBe(sent.inherit[2]);
  });

  it("deletes in batches and in a second organization independently", async () => {
    const other = await m.createOrg();
    const s = await m.createStream(other.owner, "busy", [other.owner, other.member], { message_retention_days: 2 });
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push(await m.send(other.member, { type: "stream", to: s, topic: `t${i % 2}`, content: `m${i}` }));
    await m.clientEvents();
    m.clock.advance(3 * DAY);
    expect(await runRetentionOnce(m.deps, 2)).toBe(5);
    expect(await exists(ids)).toEqual([]);
    const got = await expiredEvents();
    // Five messages in three batches, each batch one event per topic.
    const otherEvents = got.filter((e) => e.event.stream_id === s);
    expect(otherEvents.flatMap((e) => e.event.message_ids).sort((a, b) => a - b)).toEqual(ids);
    expect(otherEvents.length).toBeGreaterThanOrEqual(3);
    expect(otherEvents.every((e) => e.users.join() === [other.owner.user_id, other.member.user_id].sort((a, b) => a - b).join())).toBe(true);
    // The first organization's later message is 13 days old: kept.
    expect(got.filter((e) => e.event.stream_id === inherit)).toEqual([]);
    expect(await exists([sent.inherit[2]])).toEqual([sent.inherit[2]]);
  });
});

describe("retention longer than dates reach", () => {
  it("an organization keeping messages 2^31 - 1 days neither fails the pass nor stops the others", async () => {
    const far = await m.createOrg();
    await m.createStream(far.owner, "far", [far.owner]);
    const kept = await m.send(far.owner, { type: "stream", to: "far", topic: "t", content: "kept for ages" });
    await m.setRealmSetting(far.realmId, "message_retention_days", 2 ** 31 - 1);
    const near = await m.createOrg();
    await m.createStream(near.owner, "near", [near.owner], { message_retention_days: 1 });
    const expiring = await m.send(near.owner, { type: "stream", to: "near", topic: "t", content: "gone tomorrow" });
    m.clock.advance(2 * DAY);
    await runRetentionOnce(m.deps);
    expect(await exists([kept, expiring])).toEqual([kept]);
  });
});
