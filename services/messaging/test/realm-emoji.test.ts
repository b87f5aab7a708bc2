import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { deflateSync } from "node:zlib";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RealmEmojiClientEvent } from "@chat/contracts";
import { identityHeaders, INTERNAL_HEADERS, type Identity } from "@chat/platform";
import { serviceClient } from "@chat/testkit";
import type { FastifyInstance } from "fastify";
import { expectZulipEvent } from "@chat/testkit/openapi";
import { buildApp, ROUTE_PLUGINS } from "../src/app";
import { encodePng } from "../src/lib/image";
import { realmEmojiRoutes } from "../src/routes/realm-emoji";
import { LocalDirectoryStorage } from "../src/storage";
import { expectError, startMessaging, type Messaging, type Org, type TestUser } from "./helpers";

/**
 * Custom emoji as Zulip's realm_emoji views answer them: GET /realm/emoji, uploads with Zulip's
 * checks, deactivation, the realm_emoji events (the whole dictionary, to everyone in the
 * organization), register's realm_emoji, and the images where source_url and still_url point.
 */
let m: Messaging;
let org: Org;
let other: Org;
let app: FastifyInstance;
let dir: string;
const MAX_BYTES = 64 * 1024;

beforeAll(async () => {
  m = await startMessaging();
  dir = await mkdtemp(path.join(os.tmpdir(), "emoji-"));
  // Messaging as main.ts mounts it: the custom emoji routes over the uploads' storage.
  app = buildApp(m.deps, { plugins: [...ROUTE_PLUGINS, realmEmojiRoutes(new LocalDirectoryStorage(dir), { maxBytes: MAX_BYTES })] });
  await app.ready();
  org = await m.createOrg();
  other = await m.createOrg();
}, 60_000);
afterAll(async () => {
  await app?.close();
  await m?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  await m.outbox();
});

const token = () => m.deps.config.INTERNAL_TOKEN;
const as = (u: TestUser | Identity): Identity => ("as" in u ? u.as : u);

async function upload(user: TestUser | Identity, name: string, files: Array<{ body: Buffer; type: string; filename?: string }>) {
  const form = new FormData();
  files.forEach((f, i) => form.append(`file${i}`, new Blob([new Uint8Array(f.body)], { type: f.type }), f.filename ?? "emoji"));
  const req = new Request("http://local/", { method: "POST", body: form });
  const res = await app.inject({
    method: "POST",
    url: `/api/v1/realm/emoji/${encodeURIComponent(name)}`,
    headers: { ...identityHeaders(as(user), token()), "content-type": req.headers.get("content-type")! },
    payload: Buffer.from(await req.arrayBuffer()),
  });
  return { status: res.statusCode, body: res.json() };
}
const call = (method: "GET" | "DELETE", url: string, user: TestUser) =>
  app.inject({ method, url: `/api/v1${url}`, headers: identityHeaders(user.as, token()) }).then((res) => ({ status: res.statusCode, body: res.json() }));
/** An image request as the gateway passes it on: public, so without anyone's identity. */
async function download(url: string) {
  const res = await app.inject({ method: "GET", url: `/api/v1${url}`, headers: { [INTERNAL_HEADERS.token]: token() } });
  return { status: res.statusCode, body: res.rawPayload, type: res.headers["content-type"] };
}
const list = async (user: TestUser) => (await m.ok(await call("GET", "/realm/emoji", user))).emoji;

const png = () => encodePng(2, 2, new Uint8Array(16).fill(200));
/** A 1x1 GIF whose frames are red then blue (uncompressed LZW: a clear code before each index). */
function animatedGif(): Buffer {
  const frame = (index: number) => [0x21, 0xf9, 4, 0, 10, 0, 0, 0, 0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 4 | (index << 3) | (5 << 6) & 0xff, (5 << 6) >> 8, 0];
  return Buffer.from([...Buffer.from("GIF89a", "latin1"), 1, 0, 1, 0, 0x80, 0, 0, 0xff, 0, 0, 0, 0, 0xff, ...frame(0), ...frame(1), 0x3b]);
}

/** The realm_emoji events written since the last read, checked against our contract and Zulip's schema. */
async function emojiEvents() {
  const events = (await m.clientEvents()).filter((e) => e.event.type === "realm_emoji");
  for (const e of events) {
    RealmEmojiClientEvent.parse(e.event);
    expectZulipEvent(e.event);
  }
  return events;
}

const orgUsers = (o: Org) => [o.owner, o.admin, o.moderator, o.member, o.member2, o.guest, o.bot].map((u) => u.user_id).sort((a, b) => a - b);

describe("uploading a custom emoji", () => {
  it("lists it keyed by id, serves its image and tells everyone in the organization", async () => {
    expect(await list(org.member)).toEqual({});
    await m.ok(await upload(org.member, "Party Parrot", [{ body: png(), type: "image/png" }]));
    const emoji = await list(org.guest);
    const [id] = Object.keys(emoji);
    expect(emoji).toEqual({
      [id]: {
        id,
        name: "party_parrot",
        source_url: expect.stringMatching(new RegExp(`^/user_avatars/${org.realmId}/emoji/images/${id}-[\\w-]{16}\\.png$`)),
        still_url: null,
        deactivated: false,
        author_id: org.member.user_id,
      },
    });
    const events = await emojiEvents();
    expect(events).toHaveLength(1);
    expect(events[0].type).toBe("messaging.realm_emoji.updated");
    expect(events[0].event).toEqual({ type: "realm_emoji", op: "update", realm_emoji: emoji });
    const audience = [...events[0].users].sort((a: number, b: number) => a - b);
    expect(audience).toEqual(expect.arrayContaining(orgUsers(org)));
    expect(audience.some((u: number) => orgUsers(other).includes(u))).toBe(false);
    expect((await m.outbox()).length).toBe(0);

    // The image, to anyone who has its URL (image tags carry no credentials), as Zulip serves
    // them; a name without its random token, or under another organization, is a 404.
    const image = await download(emoji[id].source_url);
    expect(image.status).toBe(200);
    expect(image.type).toBe("image/png");
    expect(image.body.equals(png())).toBe(true);
    expect((await download(`/user_avatars/${org.realmId}/emoji/images/${id}.png`)).status).toBe(404);
    expect((await download(emoji[id].source_url.replace(`/${org.realmId}/`, `/${other.realmId}/`))).status).toBe(404);
    expect((await download(`/user_avatars/${org.realmId}/emoji/images/999999.png`)).status).toBe(404);
    expect(await list(other.member)).toEqual({});
  });

  it("an animated GIF gets a still image (a PNG of its first frame) at still_url", async () => {
    await m.ok(await upload(org.member, "blinker", [{ body: animatedGif(), type: "image/gif" }]));
    const emoji = Object.values(await list(org.member)).find((e: any) => e.name === "blinker") as any;
    expect(emoji.source_url).toMatch(new RegExp(`^/user_avatars/${org.realmId}/emoji/images/${emoji.id}-[\\w-]{16}\\.gif$`));
    expect(emoji.still_url).toBe(emoji.source_url.replace("/images/", "/images/still/").replace(/\.gif$/, ".png"));
    const gif = await download(emoji.source_url);
    expect([gif.status, gif.type, gif.body.equals(animatedGif())]).toEqual([200, "image/gif", true]);
    const still = await download(emoji.still_url);
    expect((await download(`/user_avatars/${org.realmId}/emoji/images/still/${emoji.id}.png`)).status).toBe(404);
    expect([still.status, still.type]).toEqual([200, "image/png"]);
    const idat = still.body.indexOf("IDAT", 0, "latin1");
    expect(still.body.subarray(idat + 4, idat + 4 + still.body.readUInt32BE(idat - 4)).equals(deflateSync(Buffer.from([0, 255, 0, 0, 255])))).toBe(true);
    // A still image exists for animated emoji only.
    const party = Object.values(await list(org.member)).find((e: any) => e.name === "party_parrot") as any;
    expect((await download(party.source_url.replace("/images/", "/images/still/"))).status).toBe(404);
  });

  it("answers Zulip's errors, in its order, and stores nothing", async () => {
    const before = await m.count("realm_emoji");
    const ok = [{ body: png(), type: "image/png" }];
    expectError(await upload(org.guest, "mine", ok), 400, "BAD_REQUEST", "Not allowed for guest users");
    expectError(await upload(org.bot, "mine", ok), 400, "BAD_REQUEST", "This endpoint does not accept bot requests.");
    expectError(await upload(org.member, "bad!name", ok), 400, "BAD_REQUEST", "Invalid characters in emoji name");
    expectError(await upload(org.member, "dots.too", ok), 400, "BAD_REQUEST", "Invalid characters in emoji name");
    expectError(await upload(org.member, "trailing_", ok), 400, "BAD_REQUEST", "Emoji names must end with either a letter or digit.");
    expectError(await upload(org.member2, "party_parrot", ok), 400, "BAD_REQUEST", "A custom emoji with this name already exists.");
    expectError(await upload(org.member, "fresh", []), 400, "BAD_REQUEST", "You must upload exactly one file.");
    expectError(await upload(org.member, "fresh", [...ok, ...ok]), 400, "BAD_REQUEST", "You must upload exactly one file.");
    expectError(await upload(org.member, "smile", ok), 400, "BAD_REQUEST", "Only administrators can override default emoji.");
    expectError(await upload(org.member, "fresh", [{ body: Buffer.alloc(MAX_BYTES + 1, 1), type: "image/png" }]), 400, "BAD_REQUEST", "Uploaded file is larger than the allowed limit of 0.0625 MiB");
    expectError(await upload(org.member, "fresh", [{ body: Buffer.from("hello"), type: "text/plain" }]), 400, "BAD_IMAGE", "Invalid image format");
    expectError(await upload(org.member, "fresh", [{ body: Buffer.from("<svg/>"), type: "image/svg+xml" }]), 400, "BAD_IMAGE", "Invalid image format");
    expectError(await upload(org.member, "fresh", [{ body: Buffer.from("not really a png"), type: "image/png" }]), 400, "BAD_IMAGE", "Could not decode image; did you upload an image file?");
    expect(await m.count("realm_emoji")).toBe(before);
    expect(await emojiEvents()).toEqual([]);
    // An administrator may take a Unicode emoji's name.
    await m.ok(await upload(org.admin, "smile", ok));
  });

  it("follows the organization's add_custom_emoji_policy, as PATCH /realm sets it", async () => {
    const accounts = serviceClient(m.accountsApp, token());
    await m.ok(await accounts("PATCH", "/realm", { as: org.admin.as, params: { add_custom_emoji_policy: 2 } }));
    try {
      expectError(await upload(org.moderator, "admins_only", [{ body: png(), type: "image/png" }]), 400, "BAD_REQUEST", "Insufficient permission");
      await m.ok(await upload(org.admin, "admins_only", [{ body: png(), type: "image/png" }]));
      await m.ok(await accounts("PATCH", "/realm", { as: org.admin.as, params: { add_custom_emoji_policy: 4 } }));
      await m.ok(await upload(org.moderator, "moderators_too", [{ body: png(), type: "image/png" }]));
      expectError(await upload(org.member, "not_members", [{ body: png(), type: "image/png" }]), 400, "BAD_REQUEST", "Insufficient permission");
    } finally {
      await m.ok(await accounts("PATCH", "/realm", { as: org.admin.as, params: { add_custom_emoji_policy: 1 } }));
    }
  });
});

describe("deactivating a custom emoji", () => {
  it("by its author or an administrator; it stays listed, deactivated, and its image stays", async () => {
    await m.ok(await upload(org.member, "wave_hello", [{ body: png(), type: "image/png" }]));
    await m.ok(await upload(org.member2, "other_one", [{ body: png(), type: "image/png" }]));
    await m.outbox();
    expectError(await call("DELETE", "/realm/emoji/wave_hello", org.member2), 400, "BAD_REQUEST", "Must be an organization administrator or emoji author");
    await m.ok(await call("DELETE", "/realm/emoji/wave_hello", org.member));
    await m.ok(await call("DELETE", "/realm/emoji/other_one", org.admin));
    const emoji = await list(org.member);
    const wave = Object.values(emoji).find((e: any) => e.name === "wave_hello") as any;
    expect(wave).toMatchObject({ deactivated: true, author_id: org.member.user_id });
    const events = await emojiEvents();
    expect(events).toHaveLength(2);
    expect(events[1].event.realm_emoji).toEqual(emoji);
    expect((await download(wave.source_url)).status).toBe(200);

    expectError(await call("DELETE", "/realm/emoji/wave_hello", org.member), 404, "BAD_REQUEST", "Emoji 'wave_hello' does not exist");
    expectError(await call("DELETE", "/realm/emoji/never_was", org.admin), 404, "BAD_REQUEST", "Emoji 'never_was' does not exist");
    expectError(await call("DELETE", "/realm/emoji/party_parrot", other.owner), 404, "BAD_REQUEST", "Emoji 'party_parrot' does not exist");
    expect(await emojiEvents()).toEqual([]);

    // The name is free again: a new emoji with a new id.
    await m.ok(await upload(org.member2, "wave_hello", [{ body: png(), type: "image/png" }]));
    const again = Object.values(await list(org.member)).filter((e: any) => e.name === "wave_hello");
    expect(again.map((e: any) => e.deactivated).sort()).toEqual([false, true]);
  });
});

describe("register", () => {
  it("realm_emoji is the organization's dictionary, deactivated ones included", async () => {
    const state = await m.ok(await m.call("POST", "/internal/register_state/messaging", org.member, { fetch_event_types: JSON.stringify(["realm_emoji"]) }));
    expect(state.realm_emoji).toEqual(await list(org.member));
    expect(Object.keys(state.realm_emoji).length).toBeGreaterThan(3);
    const foreign = await m.ok(await m.call("POST", "/internal/register_state/messaging", other.member, { fetch_event_types: JSON.stringify(["realm_emoji"]) }));
    expect(foreign.realm_emoji).toEqual({});
    const none = await m.ok(await m.call("POST", "/internal/register_state/messaging", org.member, { fetch_event_types: JSON.stringify(["message"]) }));
    expect(none).not.toHaveProperty("realm_emoji");
  });
});

describe("custom emoji in messages", () => {
  it(":name: renders as Zulip's img.emoji while the emoji is active, in its organization only", async () => {
    const own = await m.createOrg();
    const elsewhere = await m.createOrg();
    await m.createStream(own.owner, "general", [own.owner, own.member]);
    await m.createStream(elsewhere.owner, "general", [elsewhere.owner]);
    await m.ok(await upload(own.member, "ship_it", [{ body: png(), type: "image/png" }]));
    await m.ok(await upload(own.admin, "smile", [{ body: png(), type: "image/png" }]));
    const byName = new Map(Object.values(await list(own.member)).map((e: any) => [e.name, e.source_url as string]));
    const content = ":ship_it: and :smile: `:ship_it:`";
    const fetched = async (who: TestUser) => {
      const id = await m.send(who, { type: "stream", to: "general", topic: "emoji", content });
      return (await m.ok(await m.call("GET", `/messages/${id}`, who))).message.content as string;
    };
    // A custom emoji shadows the Unicode one of its name, as in Zulip.
    const expected =
      `<p><img alt=":ship_it:" class="emoji" src="${byName.get("ship_it")}" title="ship it"> and ` +
      `<img alt=":smile:" class="emoji" src="${byName.get("smile")}" title="smile"> <code>:ship_it:</code></p>`;
    expect(await fetched(own.member)).toBe(expected);
    expect((await m.ok(await m.call("POST", "/messages/render", own.member, { content }))).rendered).toBe(expected);
    expect(await fetched(elsewhere.owner)).toBe(
      '<p>:ship_it: and <span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span> <code>:ship_it:</code></p>',
    );
    // Deactivated: new messages show the name as typed (old ones keep their image).
    await m.ok(await call("DELETE", "/realm/emoji/ship_it", own.member));
    expect(await fetched(own.member)).toContain("<p>:ship_it: and <img");
  });
});

describe("custom emoji in channel descriptions", () => {
  it("render as in messages (Zulip renders descriptions with the organization's Markdown), on creation and on change; no image preview", async () => {
    const own = await m.createOrg();
    await m.createStream(own.owner, "general", [own.owner]);
    await m.ok(await upload(own.member, "ship_it", [{ body: png(), type: "image/png" }]));
    await m.createLinkifier(own.admin, "#(?P<id>[0-9]+)", "https://tracker.example/{id}");
    const src = new Map(Object.values(await list(own.member)).map((e: any) => [e.name, e.source_url as string])).get("ship_it");
    const img = `<img alt=":ship_it:" class="emoji" src="${src}" title="ship it">`;
    await m.outbox();
    await m.ok(await m.call("POST", "/users/me/subscriptions", own.member, { subscriptions: JSON.stringify([{ name: "launches", description: ":ship_it: see #12" }]) }));
    const created = (await m.clientEvents()).find((e) => e.event.type === "stream" && e.event.op === "create")!;
    const rendered = `<p>${img} see <a href="https://tracker.example/12">#12</a></p>`;
    expect(created.event.streams[0].rendered_description).toBe(rendered);
    const id = created.event.streams[0].stream_id as number;
    expect((await m.ok(await m.call("GET", `/streams/${id}`, own.member))).stream.rendered_description).toBe(rendered);

    const photo = "/user_uploads/1/ab/cd/photo.png";
    await m.ok(await m.call("PATCH", `/streams/${id}`, own.admin, { description: `:ship_it: #**general** [photo.png](${photo})` }));
    const update = (await m.clientEvents()).find((e) => e.event.type === "stream" && e.event.property === "description")!;
    const general = (await m.ok(await m.call("GET", "/get_stream_id", own.admin, { stream: "general" }))).stream_id;
    expect(update.event.rendered_description).toBe(
      `<p>${img} <a class="stream" data-stream-id="${general}" href="/#narrow/channel/${general}-general">#general</a> <a href="${photo}">photo.png</a></p>`,
    );
  });
});
