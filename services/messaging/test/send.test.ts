import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

let m: Messaging;
let org: Org;
let other: Org;
let general: number;
let secret: number;
let otherStream: number;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  other = await m.createOrg();
  general = await m.createStream(org.owner, "general", [org.owner, org.admin, org.moderator, org.member, org.member2, org.guest]);
  secret = await m.createStream(org.owner, "secret", [org.owner, org.member], { invite_only: true });
  otherStream = await m.createStream(other.owner, "elsewhere", [other.owner]);
  await m.outbox();
});
afterAll(async () => m?.close());
// Each test looks only at the events it caused.
beforeEach(async () => {
  await m.outbox();
});

const messageCount = () => m.count("messages");

describe("POST /messages to a channel", () => {
  it("sends by name and emits a message event with per-recipient flags", async () => {
    const id = await m.send(org.member, { type: "stream", to: "general", topic: "greetings", content: "hello **all** of you" });
    const events = await m.clientEvents();
    const msg = events.find((e) => e.type === "messaging.message.sent")!;
    expect(msg.event.message).toMatchObject({
      id,
      type: "stream",
      stream_id: general,
      display_recipient: "general",
      subject: "greetings",
      content: "<p>hello <strong>all</strong> of you</p>",
      content_type: "text/html",
      sender_id: org.member.user_id,
      sender_full_name: "Mel Member",
      sender_email: org.member.email,
      sender_realm_str: org.slug,
      client: "test",
    });
    expect(msg.event.markdown_content).toBe("hello **all** of you");
    expect(msg.notice.public_stream_id).toBe(general);
    expect(msg.notice.sender_queue).toBeUndefined();
    const ids = msg.users.map((u: { id: number }) => u.id).sort((a: number, b: number) => a - b);
    expect(ids).toEqual([org.owner, org.admin, org.moderator, org.member, org.member2, org.guest].map((u) => u.user_id).sort((a, b) => a - b));
    // An API client's own message starts unread (Zulip's client-name heuristic).
    expect(msg.users.find((u: { id: number }) => u.id === org.member.user_id).flags).toEqual([]);
  });

  it("accepts the channel by id, as JSON text, as a one-element list, and `subject`/`channel` aliases", async () => {
    for (const to of [String(general), '"general"', '["general"]', "GENERAL"]) {
      await m.send(org.member, { type: "channel", to, subject: "aliases", content: `via ${to}` });
    }
    const res = await m.ok(await m.call("GET", "/messages", org.member, { anchor: "newest", num_before: 4, narrow: [["topic", "aliases"]] }));
    expect(res.messages.map((x: any) => x.content)).toEqual(['<p>via ' + general + "</p>", "<p>via &quot;general&quot;</p>", "<p>via [&quot;general&quot;]</p>", "<p>via GENERAL</p>"]);
    expect(res.messages.every((x: any) => x.stream_id === general)).toBe(true);
  });

  it("read_by_sender: explicit value, and the default for interactive clients", async () => {
    await m.send(org.member, { type: "stream", to: "general", topic: "t", content: "x", read_by_sender: true });
    let ev = (await m.clientEvents()).find((e) => e.type === "messaging.message.sent")!;
    expect(ev.users.find((u: any) => u.id === org.member.user_id).flags).toEqual(["read"]);
    const web = { ...org.member.as, client: "website" };
    await m.ok(await m.call("POST", "/messages", web, { type: "stream", to: "general", topic: "t", content: "y" }));
    ev = (await m.clientEvents()).find((e) => e.type === "messaging.message.sent")!;
    expect(ev.users.find((u: any) => u.id === org.member.user_id).flags).toEqual(["read"]);
  });

  it("a `client` parameter in the body names the client (the gateway only sees the query string's)", async () => {
    const res = await m.ok(await m.call("POST", "/messages", org.member, { type: "stream", to: "general", topic: "t", content: "from the app", client: "ZulipMobile" }));
    expect(res.ignored_parameters_unsupported).toBeUndefined();
    const ev = (await m.clientEvents()).find((e) => e.type === "messaging.message.sent")!;
    expect(ev.event.message.client).toBe("ZulipMobile");
    expect(ev.users.find((u: any) => u.id === org.member.user_id).flags).toEqual(["read"]);
  });

  it("local echo: queue_id + local_id name the sender's queue; local_id is required with queue_id", async () => {
    await m.send(org.member, { type: "stream", to: "general", topic: "t", content: "echo", queue_id: "q-1", local_id: "17.01" });
    const ev = (await m.clientEvents()).find((e) => e.type === "messaging.message.sent")!;
    expect(ev.notice.sender_queue).toEqual({ queue_id: "q-1", local_id: "17.01" });
    const before = await messageCount();
    const res = await m.call("POST", "/messages", org.member, { type: "stream", to: "general", topic: "t", content: "x", queue_id: "q-1" });
    expectError(res, 400, "REQUEST_VARIABLE_MISSING", "Missing 'local_id' argument");
    expect(await messageCount()).toBe(before);
  });

  it("truncates over-long content and topics as Zulip does", async () => {
    const id = await m.send(org.member, { type: "stream", to: "general", topic: "x".repeat(70), content: "a".repeat(10010) });
    const res = await m.ok(await m.call("GET", `/messages/${id}`, org.member, { apply_markdown: false }));
    expect(res.message.subject).toBe("x".repeat(57) + "...");
    expect(res.raw_content.length).toBe(10000);
    expect(res.raw_content.endsWith("\n[message truncated]")).toBe(true);
    expect(res.message.content_type).toBe("text/x-markdown");
  });

  it("refuses bad input with Zulip's errors and stores nothing", async () => {
    const before = await messageCount();
    const cases: Array<[Record<string, unknown>, number, string, string | RegExp]> = [
      [{ to: "general", topic: "t", content: "x" }, 400, "REQUEST_VARIABLE_MISSING", "Missing 'type' argument"],
      [{ type: "stream", topic: "t", content: "x" }, 400, "REQUEST_VARIABLE_MISSING", "Missing 'to' argument"],
      [{ type: "stream", to: "general", topic: "t" }, 400, "REQUEST_VARIABLE_MISSING", "Missing 'content' argument"],
      [{ type: "carrier-pigeon", to: "general", topic: "t", content: "x" }, 400, "BAD_REQUEST", "Invalid message type"],
      [{ type: "stream", to: "general", content: "x" }, 400, "BAD_REQUEST", "Missing topic"],
      [{ type: "stream", to: "general", topic: "   ", content: "x" }, 400, "BAD_REQUEST", "Topic can't be empty!"],
      [{ type: "stream", to: "general", topic: "t", content: "  \n " }, 400, "BAD_REQUEST", "Message must not be empty"],
      [{ type: "stream", to: "general", topic: "t", content: "a\u0000b" }, 400, "BAD_REQUEST", /null bytes/],
      [{ type: "stream", to: "general", topic: "a\u0000b", content: "x" }, 400, "BAD_REQUEST", /null bytes/],
      [{ type: "stream", to: "general", topic: "t", subject: "u", content: "x" }, 400, "REQUEST_CONFUSING_VAR", /Can't decide between/],
      [{ type: "stream", to: "{}", topic: "t", content: "x" }, 400, "BAD_REQUEST", "Invalid data type for channel"],
      // A float is not an id, even an integral one (Python's json, so Zulip, reads these as floats).
      [{ type: "stream", to: `${general}.0`, topic: "t", content: "x" }, 400, "BAD_REQUEST", "Invalid data type for channel"],
      [{ type: "stream", to: `[${general}e0]`, topic: "t", content: "x" }, 400, "BAD_REQUEST", "Invalid data type for channel"],
      [{ type: "stream", to: "read_by_sender", topic: "t", content: "x", read_by_sender: "yes" }, 400, "BAD_REQUEST", /read_by_sender is not/],
    ];
    for (const [params, status, code, msg] of cases) expectError(await m.call("POST", "/messages", org.member, params), status, code, msg);
    expect(await messageCount()).toBe(before);
  });

  it("a missing channel answers STREAM_DOES_NOT_EXIST with `stream` or `stream_id`", async () => {
    const res = await m.call("POST", "/messages", org.member, { type: "stream", to: "nowhere", topic: "t", content: "x" });
    expectError(res, 400, "STREAM_DOES_NOT_EXIST", "Channel 'nowhere' does not exist");
    expect(res.body.stream).toBe("nowhere");
    const byId = await m.call("POST", "/messages", org.member, { type: "stream", to: "999999", topic: "t", content: "x" });
    expectError(byId, 400, "STREAM_DOES_NOT_EXIST", "Channel with ID '999999' does not exist");
    expect(byId.body.stream_id).toBe(999999);
  });

  it("another organization's channel and a private channel one is not in look missing", async () => {
    const cross = await m.call("POST", "/messages", org.member, { type: "stream", to: String(otherStream), topic: "t", content: "x" });
    expectError(cross, 400, "STREAM_DOES_NOT_EXIST");
    expect(cross.body.stream_id).toBe(otherStream);
    expectError(await m.call("POST", "/messages", org.member2, { type: "stream", to: "secret", topic: "t", content: "x" }), 400, "STREAM_DOES_NOT_EXIST");
    expectError(await m.call("POST", "/messages", org.member2, { type: "stream", to: String(secret), topic: "t", content: "x" }), 400, "STREAM_DOES_NOT_EXIST");
    // An administrator can see the private channel but, not being subscribed, may not post in it.
    expectError(
      await m.call("POST", "/messages", org.admin, { type: "stream", to: "secret", topic: "t", content: "x" }),
      400,
      "BAD_REQUEST",
      "Not authorized to send to channel 'secret'",
    );
    await m.send(org.member, { type: "stream", to: "secret", topic: "t", content: "members only" });
    const ev = (await m.clientEvents()).find((e) => e.type === "messaging.message.sent")!;
    expect(ev.notice.public_stream_id).toBeUndefined();
  });

  it("enforces stream_post_policy for each role", async () => {
    await m.createStream(org.owner, "announce", [org.owner, org.admin, org.moderator, org.member, org.guest], { stream_post_policy: 2 });
    await m.createStream(org.owner, "mods", [org.owner, org.moderator, org.member], { stream_post_policy: 4 });
    await m.createStream(org.owner, "full", [org.owner, org.member, org.guest], { stream_post_policy: 3 });
    const post = (who: typeof org.member, to: string) => m.call("POST", "/messages", who, { type: "stream", to, topic: "p", content: "x" });
    expectError(await post(org.moderator, "announce"), 400, "BAD_REQUEST", "Only organization administrators can send to this channel.");
    await m.ok(await post(org.admin, "announce"));
    expectError(await post(org.member, "mods"), 400, "BAD_REQUEST", "Only organization administrators and moderators can send to this channel.");
    await m.ok(await post(org.moderator, "mods"));
    expectError(await post(org.guest, "full"), 400, "BAD_REQUEST", "Guests cannot send to this channel.");
    await m.ok(await post(org.member, "full"));
    await m.setRealmSetting(org.realmId, "waiting_period_threshold", 30);
    expectError(await post(org.member, "full"), 400, "BAD_REQUEST", "New members cannot send to this channel.");
    await m.setRealmSetting(org.realmId, "waiting_period_threshold", 0);
    // A bot posts where its owner may.
    await m.ok(await m.call("POST", "/users/me/subscriptions", org.owner, { subscriptions: [{ name: "announce" }], principals: [org.bot.user_id] }));
    expectError(await post(org.bot, "announce"), 400, "BAD_REQUEST", "Only organization administrators can send to this channel.");
    await m.ok(await post(org.bot, "general"));
    // Also into a private channel its owner (member) is subscribed to and it is not.
    await m.ok(await post(org.bot, "secret"));
    expectError(await post(org.bot, "mods"), 400, "BAD_REQUEST", "Only organization administrators and moderators can send to this channel.");
  });

  it("guests post only to channels they are subscribed to", async () => {
    await m.createStream(org.owner, "no-guests", [org.owner]);
    expectError(
      await m.call("POST", "/messages", org.guest, { type: "stream", to: "no-guests", topic: "t", content: "x" }),
      400,
      "STREAM_DOES_NOT_EXIST",
    );
    await m.ok(await m.call("POST", "/messages", org.guest, { type: "stream", to: "general", topic: "t", content: "x" }));
  });
});

describe("POST /messages direct", () => {
  it("sends to ids, to emails and to comma-separated emails; all reach the same conversation", async () => {
    const a = await m.send(org.member, { type: "direct", to: JSON.stringify([org.member2.user_id]), content: "by id" });
    const b = await m.send(org.member, { type: "private", to: JSON.stringify([org.member2.email]), content: "by email" });
    const c = await m.send(org.member, { type: "direct", to: org.member2.email.toUpperCase(), content: "comma" });
    const events = (await m.clientEvents()).filter((e) => e.type === "messaging.message.sent");
    expect(events).toHaveLength(3);
    const recipientIds = new Set(events.map((e) => e.event.message.recipient_id));
    expect(recipientIds.size).toBe(1);
    const ev = events[0];
    expect(ev.event.message.type).toBe("private");
    expect(ev.event.message.subject).toBe("");
    expect(ev.event.message.display_recipient).toEqual(
      [org.member, org.member2]
        .sort((x, y) => x.user_id - y.user_id)
        .map((u) => ({ id: u.user_id, email: u.email, full_name: u.full_name, is_mirror_dummy: false })),
    );
    expect(ev.notice.public_stream_id).toBeUndefined();
    expect(ev.users.map((u: any) => u.id).sort()).toEqual([org.member.user_id, org.member2.user_id].sort());
    expect([a, b, c]).toEqual([...[a, b, c]].sort((x, y) => x - y));
  });

  it("group direct messages reach every participant", async () => {
    await m.send(org.member, { type: "direct", to: JSON.stringify([org.member2.user_id, org.admin.user_id]), content: "group" });
    const ev = (await m.clientEvents()).find((e) => e.type === "messaging.message.sent")!;
    expect(ev.users.map((u: any) => u.id).sort((x: number, y: number) => x - y)).toEqual(
      [org.member, org.member2, org.admin].map((u) => u.user_id).sort((x, y) => x - y),
    );
    expect(ev.event.message.display_recipient).toHaveLength(3);
  });

  it("a direct message to oneself", async () => {
    await m.send(org.member, { type: "direct", to: JSON.stringify([org.member.user_id]), content: "note to self" });
    const ev = (await m.clientEvents()).find((e) => e.type === "messaging.message.sent")!;
    expect(ev.users.map((u: any) => u.id)).toEqual([org.member.user_id]);
  });

  it("refuses unknown, cross-organization and deactivated recipients", async () => {
    const before = await messageCount();
    const dm = (to: string) => m.call("POST", "/messages", org.member, { type: "direct", to, content: "x" });
    expectError(await dm("[999999]"), 400, "BAD_REQUEST", "Invalid user ID 999999");
    expectError(await dm(JSON.stringify([other.member.user_id])), 400, "BAD_REQUEST", `Invalid user ID ${other.member.user_id}`);
    expectError(await dm(JSON.stringify(["nobody@nowhere.test"])), 400, "BAD_REQUEST", "Invalid email 'nobody@nowhere.test'");
    expectError(await dm(JSON.stringify([other.member.email])), 400, "BAD_REQUEST", `Invalid email '${other.member.email}'`);
    expectError(await dm("[]"), 400, "BAD_REQUEST", "Message must have recipients");
    expectError(await dm(JSON.stringify([org.member2.user_id, org.admin.email])), 400, "BAD_REQUEST", "Recipient lists may contain emails or user IDs, but not both.");
    expectError(await dm("5"), 400, "BAD_REQUEST", "Invalid data type for recipients");
    expectError(await dm(`[${org.member2.user_id}.0]`), 400, "BAD_REQUEST", "Invalid data type for recipients");
    expectError(await dm(`[${org.member2.user_id}, ${org.admin.user_id}e0]`), 400, "BAD_REQUEST", "Invalid data type for recipients");
    // Thousands of recipients are looked up in accounts in parts (one GET would be refused).
    const many = Array.from({ length: 3000 }, (_, i) => 1_000_000 + i);
    expectError(await dm(JSON.stringify(many)), 400, "BAD_REQUEST", "Invalid user ID 1000000");
    const manyEmails = Array.from({ length: 600 }, (_, i) => `someone-with-a-long-address-${i}@nowhere.test`);
    expectError(await dm(JSON.stringify(manyEmails)), 400, "BAD_REQUEST", `Invalid email '${manyEmails[0]}'`);
    const gone = await org.extra(90);
    await m.deactivate(gone);
    expectError(await dm(JSON.stringify([gone.user_id])), 400, "BAD_REQUEST", `'${gone.email}' is no longer using Zulip.`);
    expect(await messageCount()).toBe(before);
  });
});

describe("mentions", () => {
  it("sets mentioned for users named, stream and topic wildcards for their audiences", async () => {
    await m.send(org.member, { type: "stream", to: "general", topic: "mentions", content: "@**Max Member** and @_**Adam Admin** hello" });
    let ev = (await m.clientEvents()).find((e) => e.type === "messaging.message.sent")!;
    const flags = (u: { user_id: number }) => ev.users.find((x: any) => x.id === u.user_id).flags;
    expect(flags(org.member2)).toEqual(["mentioned"]);
    expect(flags(org.admin)).toEqual([]);
    expect(ev.event.message.content).toContain(`<span class="user-mention" data-user-id="${org.member2.user_id}">@Max Member</span>`);
    expect(ev.event.message.content).toContain(`<span class="user-mention silent" data-user-id="${org.admin.user_id}">Adam Admin</span>`);

    await m.send(org.member2, { type: "stream", to: "general", topic: "mentions", content: "hi @**topic**" });
    ev = (await m.clientEvents()).find((e) => e.type === "messaging.message.sent")!;
    // Topic participants so far: member, member2.
    expect(flags(org.member)).toEqual(["topic_wildcard_mentioned", "wildcard_mentioned"]);
    expect(flags(org.owner)).toEqual([]);

    await m.send(org.admin, { type: "stream", to: "general", topic: "mentions", content: "@**all** heads up" });
    ev = (await m.clientEvents()).find((e) => e.type === "messaging.message.sent")!;
    expect(flags(org.owner)).toEqual(["stream_wildcard_mentioned", "wildcard_mentioned"]);
  });

  it("group mentions mention every member", async () => {
    const groupId = await m.createGroup(org.owner, "support", [org.member2, org.moderator]);
    await m.send(org.member, { type: "stream", to: "general", topic: "groups", content: "ping @*support*" });
    const ev = (await m.clientEvents()).find((e) => e.type === "messaging.message.sent")!;
    expect(ev.event.message.content).toContain(`<span class="user-group-mention" data-user-group-id="${groupId}">@support</span>`);
    expect(ev.users.find((x: any) => x.id === org.moderator.user_id).flags).toEqual(["mentioned"]);
    expect(ev.users.find((x: any) => x.id === org.owner.user_id).flags).toEqual([]);
    // Once only administrators may mention the group, a member's loud mention is refused; a silent one is fine.
    const realm = await m.deps.accounts.getRealm(org.realmId);
    await m.setGroupCanMention(org.owner, groupId, realm.system_groups["role:administrators"]);
    const before = await m.count("messages");
    expectError(
      await m.call("POST", "/messages", org.member, { type: "stream", to: "general", topic: "groups", content: "ping @*support*" }),
      400,
      "BAD_REQUEST",
      "You are not allowed to mention user group 'support'.",
    );
    expect(await m.count("messages")).toBe(before);
    await m.send(org.member, { type: "stream", to: "general", topic: "groups", content: "fyi @_*support*" });
    await m.send(org.admin, { type: "stream", to: "general", topic: "groups", content: "ping @*support*" });
  });

  it("the wildcard mention policy applies above 15 subscribers", async () => {
    const crowd = [];
    for (let i = 0; i < 16; i++) crowd.push(await org.extra(i));
    await m.createStream(org.owner, "crowd", [org.owner, org.member, ...crowd]);
    await m.send(org.member, { type: "stream", to: "crowd", topic: "t", content: "start" });
    const before = await messageCount();
    expectError(
      await m.call("POST", "/messages", org.member, { type: "stream", to: "crowd", topic: "t", content: "@**everyone** hi" }),
      400,
      "STREAM_WILDCARD_MENTION_NOT_ALLOWED",
      "You do not have permission to use channel wildcard mentions in this channel.",
    );
    // Silent wildcards notify nobody and are always allowed.
    await m.send(org.member, { type: "stream", to: "crowd", topic: "t", content: "@_**everyone** hi" });
    // Administrators pass the default policy (admins only).
    await m.send(org.owner, { type: "stream", to: "crowd", topic: "t", content: "@**channel** hi" });
    // Topic wildcard: fine while the topic has few participants, refused once it has more than 15.
    await m.send(org.member, { type: "stream", to: "crowd", topic: "t", content: "@**topic** ok" });
    for (const u of crowd) await m.send(u, { type: "stream", to: "crowd", topic: "t", content: "me too" });
    expectError(
      await m.call("POST", "/messages", org.member, { type: "stream", to: "crowd", topic: "t", content: "@**topic** now" }),
      400,
      "TOPIC_WILDCARD_MENTION_NOT_ALLOWED",
      "You do not have permission to use topic wildcard mentions in this topic.",
    );
    expect(await messageCount()).toBe(before + 3 + crowd.length);
    await m.setRealmSetting(org.realmId, "wildcard_mention_policy", 1);
    await m.send(org.member, { type: "stream", to: "crowd", topic: "t", content: "@**all** fine now" });
    await m.setRealmSetting(org.realmId, "wildcard_mention_policy", 5);
    await m.outbox();
  });
});

describe("linkifiers", () => {
  it("the organization's linkifiers turn matches into links", async () => {
    await m.createLinkifier(org.admin, "#(?P<id>[0-9]+)", "https://tracker.example/{id}");
    const id = await m.send(org.member, { type: "stream", to: "general", topic: "links", content: "fixes #77" });
    const res = await m.ok(await m.call("GET", `/messages/${id}`, org.member));
    expect(res.message.content).toBe('<p>fixes <a href="https://tracker.example/77">#77</a></p>');
  });
});

describe("automatic topic visibility", () => {
  it("follows a topic the sender starts and tells their clients", async () => {
    const res = await m.ok(await m.call("POST", "/messages", org.member2, { type: "stream", to: "general", topic: "brand new", content: "first!" }));
    expect(res.automatic_new_visibility_policy).toBe(3);
    const events = await m.clientEvents();
    const ut = events.find((e) => e.type === "messaging.user_topic.updated")!;
    expect(ut.users).toEqual([org.member2.user_id]);
    expect(ut.event).toMatchObject({ type: "user_topic", stream_id: general, topic_name: "brand new", visibility_policy: 3 });
    // Not on a second message in the same topic.
    const again = await m.ok(await m.call("POST", "/messages", org.member2, { type: "stream", to: "general", topic: "Brand New", content: "second" }));
    expect(again.automatic_new_visibility_policy).toBeUndefined();
  });

  it("unmutes a topic the sender posts to in a muted channel", async () => {
    await m.send(org.owner, { type: "stream", to: "general", topic: "quiet", content: "start" });
    await m.ok(await m.call("POST", "/users/me/subscriptions/properties", org.member, { subscription_data: [{ stream_id: general, property: "is_muted", value: true }] }));
    await m.outbox();
    const res = await m.ok(await m.call("POST", "/messages", org.member, { type: "stream", to: "general", topic: "quiet", content: "me" }));
    expect(res.automatic_new_visibility_policy).toBe(2);
    await m.ok(await m.call("POST", "/users/me/subscriptions/properties", org.member, { subscription_data: [{ stream_id: general, property: "is_muted", value: false }] }));
  });

  it("people mentioned by name follow the topic", async () => {
    await m.outbox();
    await m.send(org.owner, { type: "stream", to: "general", topic: "quiet", content: "@**Mona Moderator** look" });
    const ut = (await m.clientEvents()).filter((e) => e.type === "messaging.user_topic.updated");
    expect(ut.map((e) => e.users[0])).toEqual([org.moderator.user_id]);
  });
});

describe("POST /internal/messages/send", () => {
  it("sends once per idempotency key", async () => {
    const params = { type: "stream", to: String(general), topic: "scheduled", content: "from the scheduler", idempotency_key: "scheduled:1" };
    const first = await m.ok(await m.call("POST", "/internal/messages/send", org.member, params));
    const second = await m.ok(await m.call("POST", "/internal/messages/send", org.member, params));
    expect(second.id).toBe(first.id);
    expect(second.automatic_new_visibility_policy).toBe(first.automatic_new_visibility_policy);
    const sent = (await m.clientEvents()).filter((e) => e.type === "messaging.message.sent");
    expect(sent).toHaveLength(1);
    // Another sender's key space is separate; a refused send records nothing.
    expectError(await m.call("POST", "/internal/messages/send", org.guest, { ...params, to: "secret", idempotency_key: "k" }), 400, "STREAM_DOES_NOT_EXIST");
    const third = await m.ok(await m.call("POST", "/internal/messages/send", org.owner, { ...params, idempotency_key: "scheduled:1" }));
    expect(third.id).not.toBe(first.id);
  });

  it("refuses callers without the internal token", async () => {
    const res = await m.app.inject({ method: "POST", url: "/api/v1/internal/messages/send", payload: {} });
    expect(res.statusCode).toBe(401);
  });
});
