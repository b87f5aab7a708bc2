import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { RealmExportClientEvent } from "@chat/contracts";
import { serviceClient } from "@chat/testkit";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildApp } from "../src/app";
import { makeNextExport } from "../src/actions/realm-export-archive";
import { realmExportRoutes } from "../src/routes/realm-exports";
import { LocalDirectoryStorage } from "../src/storage";
import { claimRealmExport } from "../src/store/realm-exports";
import { untar } from "./archive";
import { expectError, startMessaging, type Messaging, type Org, type TestUser } from "./helpers";

/**
 * Public data exports (Zulip's /export/realm) in messaging: the requests and their limits, the
 * background job that makes the archive (claims, leases, retries) and what the archive holds.
 * The job runs when a test says so (`make`), with the test's clock.
 */

let m: Messaging;
let org: Org;
let other: Org;
let dir: string;
let storage: LocalDirectoryStorage;
let app: FastifyInstance;
let call: ReturnType<typeof serviceClient>;
const LEASE = { EXPORT_LEASE_SECONDS: 60 };

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  other = await m.createOrg();
  dir = await mkdtemp(path.join(os.tmpdir(), "exports-"));
  storage = new LocalDirectoryStorage(dir);
  app = buildApp(m.deps, { plugins: [realmExportRoutes(storage, { kick: () => {} })] });
  await app.ready();
  call = serviceClient(app, m.deps.config.INTERNAL_TOKEN);
});
afterAll(async () => {
  await app?.close();
  await m?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  // Each test starts with the organization's week of exports behind it.
  m.clock.advance(8 * 86_400_000);
  await m.outbox();
});

const as = (who: TestUser) => who.as;
const create = (who: TestUser) => call("POST", "/export/realm", { as: as(who) });
const list = async (who: TestUser) => (await m.ok(await call("GET", "/export/realm", { as: as(who) }))).exports;
const remove = (who: TestUser, id: number | string) => call("DELETE", `/export/realm/${id}`, { as: as(who) });
const make = () => makeNextExport(m.deps, storage, LEASE);

/** The `realm_export` events written since the last read, each checked against the contract. */
async function exportEvents() {
  return (await m.clientEvents()).filter((e) => e.type === "messaging.realm_export.changed").map((e) => ({ users: e.users, event: RealmExportClientEvent.parse(e.event) }));
}

/** The archive behind an export URL, as file name -> bytes. */
async function archive(url: string): Promise<Map<string, Buffer>> {
  const pathId = new URL(url).pathname.replace(/^\/user_avatars\//, "");
  const file = await storage.get(pathId);
  expect(file, `no file at ${pathId}`).not.toBeNull();
  const chunks: Buffer[] = [];
  for await (const c of file!.stream) chunks.push(c as Buffer);
  return untar(Buffer.concat(chunks));
}
const jsonOf = (entries: Map<string, Buffer>, name: string) => JSON.parse(entries.get(name)!.toString("utf8"));

describe("POST /export/realm and the job", () => {
  it("an administrator's export is made in the background and announced to them alone, pending then with its URL", async () => {
    const channel = await m.createStream(org.owner, "export public", [org.owner, org.member]);
    await m.createStream(org.owner, "export private", [org.owner, org.member], { invite_only: true });
    const kept = await m.send(org.member, { type: "stream", to: "export public", topic: "t", content: "public words" });
    await m.send(org.member, { type: "stream", to: "export private", topic: "t", content: "private words" });
    await m.send(org.member, { type: "direct", to: JSON.stringify([org.owner.user_id]), content: "direct words" });
    await m.ok(await m.call("POST", `/messages/${kept}/reactions`, org.owner, { emoji_name: "smile" }));
    await m.outbox();

    // Fractional seconds, as Zulip's datetime_to_timestamp of the request time.
    const asked = m.clock.now().getTime() / 1000;
    const { id } = await m.ok(await create(org.admin));
    expect(id).toEqual(expect.any(Number));
    const [pending] = await exportEvents();
    expect(pending.users).toEqual([org.admin.user_id]);
    const mine = pending.event.exports.find((e) => e.id === id)!;
    expect(mine).toEqual({ id, acting_user_id: org.admin.user_id, export_time: asked, deleted_timestamp: null, failed_timestamp: null, export_url: null, pending: true });

    expect(await make()).toBe(true);
    expect(await make()).toBe(false);
    const [done] = await exportEvents();
    expect(done.users).toEqual([org.admin.user_id]);
    const made = done.event.exports.find((e) => e.id === id)!;
    expect(made).toMatchObject({ id, pending: false, failed_timestamp: null, deleted_timestamp: null });
    expect(made.export_url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:9991/user_avatars/exports/${org.realmId}/[A-Za-z0-9_-]{24}/zulip-export-[0-9a-f]{12}\\.tar\\.gz$`));
    expect(await list(org.owner)).toContainEqual(made);

    const files = await archive(made.export_url!);
    expect([...files.keys()].sort()).toEqual(["attachments.json", "messages-000001.json", "realm.json"]);
    const realm = jsonOf(files, "realm.json");
    expect(realm).toMatchObject({ export_type: "public", realm: { id: org.realmId, string_id: org.slug } });
    expect(realm.channels.map((c: any) => c.name)).toEqual(["export public"]);
    expect(realm.channels[0]).toMatchObject({ stream_id: channel, subscribers: [org.owner.user_id, org.member.user_id].sort((a, b) => a - b) });
    expect(realm.users.map((u: any) => u.user_id)).toContain(org.member.user_id);
    expect(JSON.stringify(realm.users)).not.toContain("delivery_email");
    const { messages } = jsonOf(files, "messages-000001.json");
    expect(messages.map((x: any) => x.content)).toEqual(["public words"]);
    expect(messages[0]).toMatchObject({ id: kept, sender_id: org.member.user_id, stream_id: channel, topic: "t", reactions: [{ user_id: org.owner.user_id, emoji_name: "smile" }] });
    expect(JSON.stringify(jsonOf(files, "realm.json"))).not.toContain(other.slug);
  });

  it("members and moderators may neither list nor ask for exports, and nothing is written", async () => {
    for (const who of [org.member, org.moderator, org.guest]) {
      expectError(await create(who), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
      expectError(await call("GET", "/export/realm", { as: as(who) }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    }
    expect(await exportEvents()).toEqual([]);
  });

  it("five exports a week, failed and deleted ones counted: the sixth is refused until a week has passed", async () => {
    const before = await m.count("realm_exports");
    for (let i = 0; i < 5; i++) await m.ok(await create(other.owner));
    expectError(await create(other.admin), 400, "BAD_REQUEST", "Exceeded rate limit.");
    expect(await m.count("realm_exports")).toBe(before + 5);
    // The other organization's week is its own.
    await m.ok(await create(org.owner));
    m.clock.advance(7 * 86_400_000 + 1000);
    await m.ok(await create(other.admin));
    while (await make());
  });

  it("an export whose process died is made by another once its lease runs out; three failed attempts give it up", async () => {
    const { id } = await m.ok(await create(org.owner));
    // A process claims it and dies.
    expect((await claimRealmExport(m.deps.pool, m.clock.now(), new Date(0)))?.id).toBe(id);
    expect(await make()).toBe(false);
    m.clock.advance(61_000);
    expect(await make()).toBe(true);
    expect((await list(org.owner)).find((e: any) => e.id === id)).toMatchObject({ pending: false, failed_timestamp: null, export_url: expect.any(String) });

    const second = (await m.ok(await create(org.owner))).id;
    await m.outbox();
    for (let i = 0; i < 3; i++) {
      expect((await claimRealmExport(m.deps.pool, m.clock.now(), m.clock.now()))?.id).toBe(second);
      m.clock.advance(61_000);
    }
    expect(await make()).toBe(true);
    const failed = (await list(org.owner)).find((e: any) => e.id === second);
    expect(failed).toEqual({ ...failed, pending: false, export_url: null, failed_timestamp: m.clock.now().getTime() / 1000 });
    const [event] = await exportEvents();
    expect(event.users).toEqual([org.owner.user_id]);
    expect(event.event.exports.find((e) => e.id === second)).toEqual(failed);
  });

  it("a build that fails (the storage refuses the file) marks the export failed and tells its administrator", async () => {
    const { id } = await m.ok(await create(org.owner));
    await m.outbox();
    const broken = Object.assign(Object.create(storage), { put: async () => Promise.reject(new Error("disk full")) });
    expect(await makeNextExport(m.deps, broken, LEASE)).toBe(true);
    const failed = (await list(org.owner)).find((e: any) => e.id === id);
    expect(failed).toMatchObject({ pending: false, export_url: null, failed_timestamp: expect.any(Number) });
    const [event] = await exportEvents();
    expect(event.event.exports.find((e) => e.id === id)).toEqual(failed);
  });

  it("one interrupted by a service that did not answer is tried again a minute later", async () => {
    const { id } = await m.ok(await create(org.owner));
    const unreachable = Object.assign(Object.create(storage), {
      put: async () => Promise.reject(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })),
    });
    expect(await makeNextExport(m.deps, unreachable, LEASE)).toBe(true);
    expect((await list(org.owner)).find((e: any) => e.id === id)).toMatchObject({ pending: true, failed_timestamp: null });
    expect(await make()).toBe(false);
    m.clock.advance(61_000);
    expect(await make()).toBe(true);
    expect((await list(org.owner)).find((e: any) => e.id === id)).toMatchObject({ pending: false, export_url: expect.any(String) });
  });

  it("a stopping process hands its export back untouched", async () => {
    await m.send(org.member, { type: "stream", to: "export public", topic: "t", content: "more" });
    const { id } = await m.ok(await create(org.owner));
    const stopping = new AbortController();
    stopping.abort();
    expect(await makeNextExport(m.deps, storage, LEASE, stopping.signal)).toBe(false);
    expect((await list(org.owner)).find((e: any) => e.id === id)).toMatchObject({ pending: true, failed_timestamp: null });
    // Not an attempt: the next process makes it at once.
    expect(await make()).toBe(true);
    expect((await list(org.owner)).find((e: any) => e.id === id)).toMatchObject({ pending: false, export_url: expect.any(String) });
  });
});

describe("DELETE /export/realm/{id}", () => {
  it("removes a made export's file and keeps it listed with its deletion time; Zulip's errors otherwise", async () => {
    const { id } = await m.ok(await create(org.admin));
    expectError(await remove(org.admin, id), 400, "BAD_REQUEST", "Export still in progress");
    await make();
    const made = (await list(org.admin)).find((e: any) => e.id === id);
    const pathId = new URL(made.export_url).pathname.replace(/^\/user_avatars\//, "");
    expect(await storage.get(pathId)).not.toBeNull();
    await m.outbox();

    // Another organization's administrator cannot reach it.
    expectError(await remove(other.owner, id), 400, "BAD_REQUEST", "Invalid data export ID");
    expectError(await remove(org.member, id), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    expect(await exportEvents()).toEqual([]);

    await m.ok(await remove(org.owner, id));
    const deleted = (await list(org.admin)).find((e: any) => e.id === id);
    expect(deleted).toEqual({ ...made, export_url: null, deleted_timestamp: m.clock.now().getTime() / 1000 });
    expect(await storage.get(pathId)).toBeNull();
    // The administrator who deleted it hears of it (their list changed).
    const [event] = await exportEvents();
    expect(event.users).toEqual([org.owner.user_id]);
    expect(event.event.exports.find((e) => e.id === id)).toEqual(deleted);

    expectError(await remove(org.owner, id), 400, "BAD_REQUEST", "Export already deleted");
    expectError(await remove(org.owner, 999_999_999), 400, "BAD_REQUEST", "Invalid data export ID");
  });

  it("a failed export has nothing to delete", async () => {
    const { id } = await m.ok(await create(org.owner));
    for (let i = 0; i < 3; i++) {
      await claimRealmExport(m.deps.pool, m.clock.now(), m.clock.now());
      m.clock.advance(61_000);
    }
    await make();
    expectError(await remove(org.owner, id), 400, "BAD_REQUEST", "Export failed, nothing to delete");
  });
});
