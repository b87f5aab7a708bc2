import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createServer, identityHeaders, type Identity } from "@chat/platform";
import { serviceClient } from "@chat/testkit";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attachmentHooks, FileReaper } from "../src/actions/attachments";
import { attachmentRoutes, type AttachmentsModule } from "../src/routes/attachments";
import { LocalDirectoryStorage } from "../src/storage";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

/**
 * Attachments with the real messaging app: uploads linked by real sends, released by real
 * deletions, downloads checked against real message access.
 */
let m: Messaging;
let org: Org;
let files: FastifyInstance;
let mod: AttachmentsModule;
let dir: string;

beforeAll(async () => {
  m = await startMessaging();
  dir = await mkdtemp(path.join(os.tmpdir(), "uploads-"));
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

const filesCall = () => serviceClient(files, m.deps.config.INTERNAL_TOKEN);

async function upload(as: Identity, name: string, body: string): Promise<string> {
  const form = new FormData();
  form.append("file", new Blob([body], { type: "text/plain" }), name);
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
async function download(as: Identity, url: string) {
  const res = await files.inject({ method: "GET", url: `/api/v1${url}`, headers: identityHeaders(as, m.deps.config.INTERNAL_TOKEN) });
  return { status: res.statusCode, body: res.body };
}
async function attachmentsOf(as: Identity) {
  return (await filesCall()("GET", "/attachments", { as })).body.attachments as any[];
}
async function onDisk(): Promise<number> {
  // A deletion in progress can remove a directory while it is being listed: list again.
  for (let attempt = 0; ; attempt++) {
    try {
      return (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).length;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT" || attempt >= 20) throw err;
    }
  }
}

describe("uploads in messages", () => {
  it("upload -> reference in a direct message -> download by the recipients only -> deleted with the message", async () => {
    const url = await upload(org.member.as, "plan.txt", "the plan");
    const id = await m.send(org.member, { type: "direct", to: JSON.stringify([org.member2.user_id, org.admin.user_id]), content: `[plan.txt](${url})` });
    const [att] = await attachmentsOf(org.member.as);
    expect(att.messages.map((x: any) => x.id)).toEqual([id]);

    expect(await download(org.member2.as, url)).toEqual({ status: 200, body: "the plan" });
    expect((await download(org.admin.as, url)).status).toBe(200);
    expect((await download(org.moderator.as, url)).status).toBe(404);
    expect((await download(org.owner.as, url)).status).toBe(404);

    // Members cannot delete messages; the admin can, and the upload goes with its last link.
    expectError(await m.call("DELETE", `/messages/${id}`, org.member), 400, "BAD_REQUEST");
    expect(await attachmentsOf(org.member.as)).toHaveLength(1);
    await m.ok(await m.call("DELETE", `/messages/${id}`, org.admin));
    expect(await attachmentsOf(org.member.as)).toEqual([]);
    expect((await download(org.member.as, url)).status).toBe(404);
    for (let i = 0; i < 50 && (await onDisk()) > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await onDisk()).toBe(0);
  });

  it("public channels share the file with members but not with guests outside the channel", async () => {
    const channel = `files-${Date.now()}`;
    await m.createStream(org.member, channel, [org.member]);
    const url = await upload(org.member.as, "chart.txt", "numbers");
    await m.send(org.member, { type: "stream", to: channel, topic: "charts", content: `see ${url}` });
    expect((await download(org.moderator.as, url)).status).toBe(200);
    expect((await download(org.guest.as, url)).status).toBe(404);
  });

  it("a message in a topic its sender already follows claims the upload too", async () => {
    // The first message sets the sender's topic policy; the second one changes nothing else,
    // so it is written in one statement, which must still claim the upload.
    const channel = `follow-${Date.now()}`;
    await m.createStream(org.member, channel, [org.member]);
    await m.send(org.member, { type: "stream", to: channel, topic: "again", content: "first" });
    const url = await upload(org.member.as, "again.txt", "twice");
    const id = await m.send(org.member, { type: "stream", to: channel, topic: "again", content: `here: ${url}` });
    const [att] = (await attachmentsOf(org.member.as)).filter((a) => a.name === "again.txt");
    expect(att.messages.map((x: any) => x.id)).toEqual([id]);
    expect((await download(org.moderator.as, url)).status).toBe(200);
  });

  it("private channels share the file with subscribers only", async () => {
    const channel = `secret-${Date.now()}`;
    await m.createStream(org.member, channel, [org.member, org.guest], { invite_only: true });
    const url = await upload(org.member.as, "secret.txt", "shh");
    await m.send(org.member, { type: "stream", to: channel, topic: "t", content: url });
    expect((await download(org.guest.as, url)).status).toBe(200);
    expect((await download(org.member2.as, url)).status).toBe(404);
  });

  it("another user's message cannot claim an upload they cannot see", async () => {
    const url = await upload(org.member.as, "mine.txt", "private");
    await m.send(org.member2, { type: "direct", to: JSON.stringify([org.moderator.user_id]), content: url });
    const [att] = (await attachmentsOf(org.member.as)).filter((a) => a.name === "mine.txt");
    expect(att.messages).toEqual([]);
    expect((await download(org.moderator.as, url)).status).toBe(404);
  });

  it("emits attachment events the contracts accept", async () => {
    await m.outbox();
    const url = await upload(org.member.as, "e.txt", "x");
    await m.send(org.member, { type: "direct", to: JSON.stringify([org.member2.user_id]), content: url });
    const types = (await m.outbox()).map((e) => e.type);
    expect(types).toEqual(["messaging.attachment.uploaded", "messaging.message.sent", "messaging.attachment.updated"]);
  });
});

describe("POST /internal/messages/check (for the scheduler)", () => {
  it("validates like a send, stores nothing, and renders", async () => {
    const channel = `check-${Date.now()}`;
    const streamId = await m.createStream(org.member, channel, [org.member]);
    const before = await m.count("messages");
    const ok = await m.call("POST", "/internal/messages/check", org.member, { type: "stream", to: String(streamId), topic: "t", content: "**hi**  " });
    expect(ok.body).toEqual({ result: "success", msg: "", content: "**hi**", topic: "t", rendered_content: "<p><strong>hi</strong></p>" });
    const dm = await m.call("POST", "/internal/messages/check", org.member, { type: "private", to: JSON.stringify([org.member2.user_id]), content: "yo" });
    expect(dm.body).toMatchObject({ topic: null, content: "yo" });
    expectError(await m.call("POST", "/internal/messages/check", org.member, { type: "stream", to: "999999", topic: "t", content: "x" }), 400, "STREAM_DOES_NOT_EXIST");
    expect((await m.call("POST", "/internal/messages/check", org.member, { type: "stream", to: "999999", topic: "t", content: "x" })).body.stream_id).toBe(999999);
    expectError(await m.call("POST", "/internal/messages/check", org.member, { type: "private", to: "[999999]", content: "x" }), 400, "BAD_REQUEST", "Invalid user ID 999999");
    expect(await m.count("messages")).toBe(before);
  });
});
