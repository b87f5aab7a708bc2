import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { createLogger, createPool, createServer, identityHeaders, InternalClient, ManualClock, type Pool } from "@chat/platform";
import { serviceClient } from "@chat/testkit";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app";
import { AccountsClient, MessagingClient } from "../src/clients/services";
import type { SchedulerDeps } from "../src/deps";
import { DeliveryLoop } from "../src/workers/delivery-loop";
import { UploadCleanup } from "../src/workers/upload-cleanup";
import { FileReaper } from "../../messaging/src/actions/attachments";
import { attachmentRoutes } from "../../messaging/src/routes/attachments";
import { LocalDirectoryStorage } from "../../messaging/src/storage";
import { startMessaging, type Messaging, type Org } from "../../messaging/test/helpers";

/**
 * The scheduler against the real messaging and accounts apps: validation and rendering come
 * from messaging's check, delivery goes through its idempotent internal send, and the failure
 * notice comes from the organization's real notification bot.
 */
let m: Messaging;
let org: Org;
let pool: Pool;
let clock: ManualClock;
let deps: SchedulerDeps;
let app: FastifyInstance;
let call: ReturnType<typeof serviceClient>;

beforeAll(async () => {
  m = await startMessaging();
  await m.env.migrate("scheduler");
  await m.app.listen({ host: "127.0.0.1", port: 0 });
  const messagingUrl = `http://127.0.0.1:${(m.app.server.address() as AddressInfo).port}`;
  const token = m.deps.config.INTERNAL_TOKEN;
  pool = createPool(m.env.databaseUrl, "scheduler", 8);
  clock = new ManualClock(new Date("2031-06-01T09:00:00Z"));
  deps = {
    pool,
    clock,
    log: createLogger("scheduler", "silent"),
    messaging: new MessagingClient(new InternalClient(messagingUrl, token)),
    accounts: new AccountsClient(new InternalClient(m.deps.config.ACCOUNTS_URL, token)),
  };
  app = buildApp({ config: { INTERNAL_TOKEN: token, VALIDATE_RESPONSES: true }, deps });
  await app.ready();
  call = serviceClient(app, token);
  org = await m.createOrg();
});
afterAll(async () => {
  await app?.close();
  await pool?.end();
  await m?.close();
});

const at = (secondsFromNow: number) => Math.floor(clock.now().getTime() / 1000) + secondsFromNow;

async function messagesWith(content: string): Promise<Array<{ id: number; sender_id: number }>> {
  const { rows } = await m.deps.pool.query("SELECT id, sender_id FROM messages WHERE content = $1 ORDER BY id", [content]);
  return rows.map((r) => ({ id: Number(r.id), sender_id: Number(r.sender_id) }));
}

describe("scheduling with messaging's checks", () => {
  it("renders with messaging and refuses what a send would refuse", async () => {
    const stream = await m.createStream(org.member, `sched-${Date.now()}`, [org.member]);
    const ok = await call("POST", "/scheduled_messages", {
      as: org.member.as,
      params: { type: "channel", to: stream, topic: "later", content: "**soon**", scheduled_delivery_timestamp: at(60) },
    });
    expect(ok.status).toBe(200);
    const list = await call("GET", "/scheduled_messages", { as: org.member.as });
    expect(list.body.scheduled_messages.find((s: any) => s.scheduled_message_id === ok.body.scheduled_message_id)).toMatchObject({
      rendered_content: "<p><strong>soon</strong></p>",
      content: "**soon**",
    });

    const secret = await m.createStream(org.admin, `secret-${Date.now()}`, [org.admin], { invite_only: true });
    const refused = async (to: number) => {
      const res = await call("POST", "/scheduled_messages", { as: org.member.as, params: { type: "stream", to, topic: "t", content: "x", scheduled_delivery_timestamp: at(60) } });
      expect(res.status).toBe(400);
      return res.body;
    };
    // A private channel the sender is not in answers as a missing one, as a send does.
    for (const to of [999_999, secret]) {
      expect(await refused(to)).toEqual({ result: "error", code: "STREAM_DOES_NOT_EXIST", msg: `Channel with ID '${to}' does not exist`, stream_id: to });
    }
    const badUser = await call("POST", "/scheduled_messages", { as: org.member.as, params: { type: "direct", to: [999_999], content: "x", scheduled_delivery_timestamp: at(60) } });
    expect(badUser.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Invalid user ID 999999" });
  });
});

describe("delivery through messaging", () => {
  it("delivers once, even when the scheduler dies after the send", async () => {
    const content = `scheduled hello ${Date.now()}`;
    const res = await call("POST", "/scheduled_messages", {
      as: org.member.as,
      params: { type: "direct", to: [org.member2.user_id], content, scheduled_delivery_timestamp: at(30) },
    });
    expect(res.status).toBe(200);
    clock.advance(30_000);
    const dying = new DeliveryLoop(deps, { intervalMs: 50, concurrency: 1, hooks: { afterSend: () => Promise.reject(new Error("killed")) } });
    expect((await dying.runPass()).error).toBe("killed");
    expect(await messagesWith(content)).toHaveLength(1);
    expect(await new DeliveryLoop(deps, { intervalMs: 50, concurrency: 1 }).runPass()).toEqual({ delivered: 1, failed: 0 });
    const sent = await messagesWith(content);
    expect(sent).toEqual([{ id: expect.any(Number), sender_id: org.member.user_id }]);
    const { rows } = await pool.query("SELECT delivered_message_id FROM scheduled_messages WHERE id = $1", [res.body.scheduled_message_id]);
    expect(Number(rows[0].delivered_message_id)).toBe(sent[0].id);
    // The recipient sees it like any message.
    const got = await m.call("GET", `/messages/${sent[0].id}`, org.member2);
    expect(got.body.message.content).toBe(`<p>${content}</p>`);
  });

  it("an edit after a delivery the scheduler could not record is refused; the message stays as sent", async () => {
    await pool.query("DELETE FROM scheduled_messages WHERE NOT delivered");
    const content = `before the crash ${Date.now()}`;
    const res = await call("POST", "/scheduled_messages", {
      as: org.member.as,
      params: { type: "direct", to: [org.member2.user_id], content, scheduled_delivery_timestamp: at(30) },
    });
    const id = res.body.scheduled_message_id;
    clock.advance(30_000);
    const dying = new DeliveryLoop(deps, { intervalMs: 50, concurrency: 1, hooks: { afterSend: () => Promise.reject(new Error("killed")) } });
    expect((await dying.runPass()).error).toBe("killed");
    const [sent] = await messagesWith(content);
    expect(sent).toBeDefined();

    const edit = await call("PATCH", `/scheduled_messages/${id}`, { as: org.member.as, params: { content: "an edit too late" } });
    expect(edit.status).toBe(400);
    expect(edit.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Scheduled message was already sent" });
    const { rows } = await pool.query("SELECT delivered, delivered_message_id FROM scheduled_messages WHERE id = $1", [id]);
    expect(rows[0]).toEqual({ delivered: true, delivered_message_id: sent.id });
    const { rows: removes } = await pool.query("SELECT type FROM outbox WHERE (payload->>'scheduled_message_id')::bigint = $1 AND payload->'client'->'event'->>'op' = 'remove'", [id]);
    expect(removes.map((r) => r.type)).toEqual(["scheduler.scheduled_message.delivered"]);
    // Deleting it now removes nothing more.
    expect((await call("DELETE", `/scheduled_messages/${id}`, { as: org.member.as })).status).toBe(200);
    const { rows: after } = await pool.query("SELECT count(*)::int AS n FROM outbox WHERE (payload->>'scheduled_message_id')::bigint = $1 AND payload->'client'->'event'->>'op' = 'remove'", [id]);
    expect(after[0].n).toBe(1);
    expect(await new DeliveryLoop(deps, { intervalMs: 50, concurrency: 1 }).runPass()).toEqual({ delivered: 0, failed: 0 });
    expect(await messagesWith("an edit too late")).toEqual([]);
    expect(await messagesWith(content)).toHaveLength(1);
  });

  it("an edit of a due message messaging never accepted applies", async () => {
    await pool.query("DELETE FROM scheduled_messages WHERE NOT delivered");
    const content = `never sent ${Date.now()}`;
    const res = await call("POST", "/scheduled_messages", {
      as: org.member.as,
      params: { type: "direct", to: [org.member2.user_id], content, scheduled_delivery_timestamp: at(30) },
    });
    clock.advance(30_000);
    const edited = `${content}, edited`;
    const edit = await call("PATCH", `/scheduled_messages/${res.body.scheduled_message_id}`, { as: org.member.as, params: { content: edited } });
    expect(edit.status, JSON.stringify(edit.body)).toBe(200);
    expect(await new DeliveryLoop(deps, { intervalMs: 50, concurrency: 1 }).runPass()).toEqual({ delivered: 1, failed: 0 });
    expect(await messagesWith(edited)).toHaveLength(1);
    expect(await messagesWith(content)).toEqual([]);
  });

  it("two replicas racing deliver every message exactly once", async () => {
    await pool.query("DELETE FROM scheduled_messages WHERE NOT delivered");
    const stream = await m.createStream(org.member, `race-${Date.now()}`, [org.member, org.member2]);
    const contents: string[] = [];
    for (let i = 0; i < 20; i++) {
      contents.push(`race ${Date.now()} #${i}`);
      const res = await call("POST", "/scheduled_messages", {
        as: org.member.as,
        params: { type: "stream", to: stream, topic: "race", content: contents[i], scheduled_delivery_timestamp: at(10 + (i % 3)) },
      });
      expect(res.status).toBe(200);
    }
    clock.advance(60_000);
    const pool2 = createPool(m.env.databaseUrl, "scheduler", 8);
    try {
      const [a, b] = await Promise.all([
        new DeliveryLoop(deps, { intervalMs: 50, concurrency: 3 }).runPass(),
        new DeliveryLoop({ ...deps, pool: pool2 }, { intervalMs: 50, concurrency: 3 }).runPass(),
      ]);
      expect(a.delivered + b.delivered).toBe(20);
    } finally {
      await pool2.end();
    }
    for (const c of contents) expect(await messagesWith(c)).toHaveLength(1);
  });

  it("fails when the sender lost access, keeps the reason, and the notification bot tells them", async () => {
    const name = `private-${Date.now()}`;
    const stream = await m.createStream(org.admin, name, [org.admin, org.member], { invite_only: true });
    const content = `for the private channel ${Date.now()}`;
    const res = await call("POST", "/scheduled_messages", {
      as: org.member.as,
      params: { type: "stream", to: stream, topic: "t", content, scheduled_delivery_timestamp: at(60) },
    });
    expect(res.status).toBe(200);
    await m.ok(await m.call("DELETE", "/users/me/subscriptions", org.member, { subscriptions: JSON.stringify([name]) }));
    clock.advance(60_000);
    expect(await new DeliveryLoop(deps, { intervalMs: 50, concurrency: 1 }).runPass()).toEqual({ delivered: 0, failed: 1 });
    expect(await messagesWith(content)).toEqual([]);
    const mine = (await call("GET", "/scheduled_messages", { as: org.member.as })).body.scheduled_messages;
    expect(mine.find((s: any) => s.scheduled_message_id === res.body.scheduled_message_id)).toMatchObject({ failed: true });
    const { rows } = await pool.query("SELECT failure_message FROM scheduled_messages WHERE id = $1", [res.body.scheduled_message_id]);
    expect(rows[0].failure_message).toMatch(/does not exist|Not authorized/);

    const { rows: notices } = await m.deps.pool.query(
      "SELECT m.sender_id, m.content FROM messages m JOIN usermessages um ON um.message_id = m.id AND um.user_id = $1 WHERE m.content LIKE 'The message you scheduled for%' ORDER BY m.id DESC LIMIT 1",
      [org.member.user_id],
    );
    expect(notices).toHaveLength(1);
    expect(notices[0].content).toContain(rows[0].failure_message);
    const bot = await deps.accounts.getNotificationBotId(org.realmId);
    expect(Number(notices[0].sender_id)).toBe(bot);
  });
});

describe("read state of a delivered message for its sender", () => {
  it("a reminder to oneself arrives unread, unless asked otherwise; to others it starts read as the client's sends do", async () => {
    const web = { ...org.member.as, client: "website" };
    const stamp = Date.now();
    const cases = [
      { content: `note to self ${stamp}`, to: [org.member.user_id], read_by_sender: undefined, read: false },
      { content: `note to self, read ${stamp}`, to: [org.member.user_id], read_by_sender: true, read: true },
      { content: `to a colleague ${stamp}`, to: [org.member2.user_id], read_by_sender: undefined, read: true },
    ];
    for (const c of cases) {
      const res = await call("POST", "/scheduled_messages", {
        as: web,
        params: { type: "direct", to: c.to, content: c.content, scheduled_delivery_timestamp: at(30), read_by_sender: c.read_by_sender },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    clock.advance(30_000);
    expect(await new DeliveryLoop(deps, { intervalMs: 50, concurrency: 1 }).runPass()).toEqual({ delivered: 3, failed: 0 });
    for (const c of cases) {
      const [sent] = await messagesWith(c.content);
      const got = await m.call("GET", `/messages/${sent.id}`, org.member);
      expect(got.status).toBe(200);
      expect(got.body.message.flags.includes("read"), c.content).toBe(c.read);
    }
  });
});

describe("unused-upload clean-up timer", () => {
  it("asks messaging to delete uploads older than the retention that no message links", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "cleanup-"));
    const storage = new LocalDirectoryStorage(dir);
    const token = m.deps.config.INTERNAL_TOKEN;
    const files = createServer({ name: "messaging", logger: m.deps.log, internalToken: token, validateResponses: true });
    const mod = { storage, maxUploadBytes: 1024, reaper: new FileReaper({ pool: m.deps.pool, log: m.deps.log, storage }) };
    attachmentRoutes(mod)(files, m.deps);
    await files.listen({ host: "127.0.0.1", port: 0 });
    try {
      const upload = async (name: string) => {
        const form = new FormData();
        form.append("f", new Blob(["x"]), name);
        const req = new Request("http://local/", { method: "POST", body: form });
        const res = await files.inject({
          method: "POST",
          url: "/api/v1/user_uploads",
          headers: { ...identityHeaders(org.member.as, token), "content-type": req.headers.get("content-type")! },
          payload: Buffer.from(await req.arrayBuffer()),
        });
        return res.json().url as string;
      };
      const old = await upload("old.txt");
      const later = await upload("for later.txt");
      m.clock.advance(30 * 86_400_000);
      await upload("young.txt");
      const url = `http://127.0.0.1:${(files.server.address() as AddressInfo).port}`;
      clock.set(m.clock.now());
      // A message scheduled far ahead links an upload no sent message links yet: it stays (Zulip).
      const scheduled = await call("POST", "/scheduled_messages", {
        as: org.member.as,
        params: { type: "direct", to: [org.member2.user_id], content: `[for later](${later})`, scheduled_delivery_timestamp: at(90 * 86_400) },
      });
      expect(scheduled.status, JSON.stringify(scheduled.body)).toBe(200);
      const cleanup = new UploadCleanup({ ...deps, messaging: new MessagingClient(new InternalClient(url, token)) }, { intervalMs: 60_000, retentionDays: 10 });
      expect(await cleanup.runOnce()).toBe(1);
      const { rows } = await m.deps.pool.query("SELECT path_id FROM attachments WHERE owner_id = $1", [org.member.user_id]);
      const left = rows.map((r) => `/user_uploads/${r.path_id}`);
      expect(left).not.toContain(old);
      expect(left).toContain(later.replace("for%20later", "for later"));
      expect(left.some((u) => u.endsWith("young.txt"))).toBe(true);
      expect(await cleanup.runOnce()).toBe(0);
      await call("DELETE", `/scheduled_messages/${scheduled.body.scheduled_message_id}`, { as: org.member.as });
    } finally {
      mod.reaper.stop();
      await files.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
