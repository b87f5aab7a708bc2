import type { IncomingMessage } from "node:http";
import { AmqpClient, createLogger, OutboxRelay } from "@chat/platform";
import { serviceClient } from "@chat/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consumeUserSettings } from "../src/consumers/user-settings";
import { selectUserSettings, setUserSetting } from "../src/store/user-settings";
import { expectError, startMessaging, type Messaging, type Org, type TestUser } from "./helpers";

/**
 * What messaging learns from accounts: users, user groups and linkifiers through accounts'
 * internal routes (never its public ones under a borrowed identity), and the personal settings
 * it honours (drafts synchronization, automatic topic visibility) from a replica fed by
 * `accounts.user_settings.updated`, read through on a miss. Real relay, broker and consumer.
 */
let m: Messaging;
let org: Org;
let amqp: AmqpClient;
let relay: OutboxRelay;
/** Every request messaging made to accounts over HTTP. */
const accountsRequests: string[] = [];

beforeAll(async () => {
  m = await startMessaging();
  m.accountsApp.server.on("request", (req: IncomingMessage) => accountsRequests.push(`${req.method} ${req.url}`));
  const log = createLogger("accounts-data-test", "silent");
  const c = m.deps.config;
  amqp = new AmqpClient(c.AMQP_URL, c.AMQP_EXCHANGE, c.AMQP_QUEUE_PREFIX, log, c.AMQP_QUEUE_EXPIRES_MS);
  await amqp.start();
  await consumeUserSettings(amqp, m.deps);
  relay = new OutboxRelay({ pool: m.accountsPool, schema: "accounts", amqp, log, pollMs: 50 });
  relay.start();
  org = await m.createOrg();
});
afterAll(async () => {
  await relay?.stop();
  await amqp?.close();
  await m?.close();
});

/** Calls accounts in-process as `user` (the test's own calls; not recorded above). */
const accounts = (method: "GET" | "POST" | "PATCH" | "DELETE", path: string, user: TestUser | null, params: Record<string, unknown> = {}) =>
  serviceClient(m.accountsApp, m.deps.config.INTERNAL_TOKEN)(method, path, { as: user?.as ?? null, params });

/** Changes the user's own settings through accounts' public route, then waits for messaging's replica. */
async function setSettings(user: TestUser, settings: Record<string, unknown>) {
  await m.ok(await accounts("PATCH", "/settings", user, settings));
  const deadline = Date.now() + 10_000;
  for (;;) {
    const got = (await selectUserSettings(m.deps.pool, user.realm_id, [user.user_id])).get(user.user_id) ?? {};
    const done = Object.entries(settings).every(([k, v]) => got[k] === v);
    if (done || Date.now() > deadline) return expect(got).toMatchObject(settings);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Each recipient's flags on the message event of the last send. */
async function flagsOfLastSend(): Promise<Map<number, string[]>> {
  const sent = (await m.clientEvents()).filter((e) => e.type === "messaging.message.sent").at(-1)!;
  return new Map(sent.users.map((u: { id: number; flags: string[] }) => [u.id, u.flags]));
}

/** The user_topic notices of the last writes: [user id, topic, policy]. */
async function userTopicChanges(): Promise<Array<[number, string, number]>> {
  return (await m.clientEvents())
    .filter((e) => e.type === "messaging.user_topic.updated")
    .map((e) => [e.users[0], e.event.topic_name, e.event.visibility_policy]);
}

describe("users, groups and linkifiers come from accounts' internal routes", () => {
  it("mentions by name find users of a realm messaging has not replicated yet", async () => {
    const fresh = await m.createOrg();
    await m.createStream(fresh.owner, "general", [fresh.owner, fresh.member, fresh.member2]);
    await m.outbox();
    const id = await m.send(fresh.owner, { type: "stream", to: "general", topic: "hello", content: "@**Mel Member** and @**Max Member|" + fresh.member2.user_id + "**" });
    const flags = await flagsOfLastSend();
    expect(flags.get(fresh.member.user_id)).toContain("mentioned");
    expect(flags.get(fresh.member2.user_id)).toContain("mentioned");
    const msg = (await m.ok(await m.call("GET", `/messages/${id}`, fresh.owner))).message;
    expect(msg.content).toContain(`<span class="user-mention" data-user-id="${fresh.member.user_id}">@Mel Member</span>`);
    // The replica now holds the whole organization.
    const { rows } = await m.deps.pool.query("SELECT user_id FROM users WHERE realm_id = $1", [fresh.realmId]);
    const replicated = rows.map((r) => Number(r.user_id));
    for (const u of [fresh.owner, fresh.admin, fresh.moderator, fresh.member, fresh.member2, fresh.guest, fresh.bot]) expect(replicated).toContain(u.user_id);
  });

  it("group mentions use the realm's named groups; system groups cannot be mentioned", async () => {
    await m.createStream(org.owner, "groups", [org.owner, org.member, org.member2]);
    const support = await m.createGroup(org.owner, "support", [org.member2]);
    await m.outbox();
    const id = await m.send(org.owner, { type: "stream", to: "groups", topic: "help", content: "@*support* and @*role:members*" });
    const flags = await flagsOfLastSend();
    expect(flags.get(org.member2.user_id)).toContain("mentioned");
    expect(flags.get(org.member.user_id)).not.toContain("mentioned");
    const msg = (await m.ok(await m.call("GET", `/messages/${id}`, org.owner))).message;
    expect(msg.content).toContain(`data-user-group-id="${support}">@support</span>`);
    expect(msg.content).not.toContain("role:members</span>");
  });

  it("a channel's can_remove_subscribers_group must be a group of the organization", async () => {
    const support = await m.createGroup(org.owner, "support-2", [org.member]);
    const other = await m.createOrg();
    const theirs = await m.createGroup(other.owner, "theirs", [other.member]);
    const subscribe = (name: string, group: number) =>
      m.call("POST", "/users/me/subscriptions", org.owner, { subscriptions: JSON.stringify([{ name }]), can_remove_subscribers_group: group });
    await m.ok(await subscribe("custom-group", support));
    const sub = (await m.ok(await m.call("GET", "/users/me/subscriptions", org.owner))).subscriptions.find((s: any) => s.name === "custom-group");
    expect(sub.can_remove_subscribers_group).toBe(support);
    expectError(await subscribe("foreign-group", theirs), 400, "BAD_REQUEST", "Invalid user group");
  });

  it("the organization's linkifiers are applied", async () => {
    await m.createLinkifier(org.admin, "TICKET-(?P<id>[0-9]+)", "https://tickets.example/{id}");
    const id = await m.send(org.member, { type: "stream", to: "groups", topic: "links", content: "see TICKET-12" });
    const msg = (await m.ok(await m.call("GET", `/messages/${id}`, org.member))).message;
    expect(msg.content).toBe('<p>see <a href="https://tickets.example/12">TICKET-12</a></p>');
  });

  it("topic_links: the linkifiers' matches in the topic and its web addresses, in the order they appear, in the event too", async () => {
    await m.createLinkifier(org.admin, "BUG-(?P<id>[0-9]+)", "https://bugs.example/{id}");
    await m.outbox();
    const topic = "see https://docs.example/a?b=1, BUG-7 and BUG-8x";
    const id = await m.send(org.member, { type: "stream", to: "groups", topic, content: "topic links" });
    const expected = [
      { text: "https://docs.example/a?b=1", url: "https://docs.example/a?b=1" },
      { text: "BUG-7", url: "https://bugs.example/7" },
    ];
    expect((await m.ok(await m.call("GET", `/messages/${id}`, org.member))).message.topic_links).toEqual(expected);
    const sent = (await m.clientEvents()).find((e) => e.type === "messaging.message.sent")!;
    expect(sent.event.message.topic_links).toEqual(expected);
    const plain = await m.send(org.member, { type: "stream", to: "groups", topic: "nothing here", content: "x" });
    expect((await m.ok(await m.call("GET", `/messages/${plain}`, org.member))).message.topic_links).toEqual([]);
  });
});

describe("drafts synchronization (enable_drafts_synchronization)", () => {
  it("turned off: every drafts endpoint refuses and the server's drafts are dropped silently", async () => {
    const draft = { type: "", to: [], topic: "", content: "kept locally" };
    const { ids } = await m.ok(await m.call("POST", "/drafts", org.member2, { drafts: JSON.stringify([draft]) }));
    await setSettings(org.member2, { enable_drafts_synchronization: false });
    await m.outbox();
    const refused = "User has disabled synchronizing drafts.";
    expectError(await m.call("GET", "/drafts", org.member2), 400, "BAD_REQUEST", refused);
    expectError(await m.call("POST", "/drafts", org.member2, { drafts: JSON.stringify([draft]) }), 400, "BAD_REQUEST", refused);
    expectError(await m.call("PATCH", `/drafts/${ids[0]}`, org.member2, { draft: JSON.stringify(draft) }), 400, "BAD_REQUEST", refused);
    expectError(await m.call("DELETE", `/drafts/${ids[0]}`, org.member2), 400, "BAD_REQUEST", refused);
    const { rows } = await m.deps.pool.query("SELECT count(*)::int AS n FROM drafts WHERE user_id = $1", [org.member2.user_id]);
    expect(rows[0].n).toBe(0);
    expect(await m.clientEvents()).toEqual([]);
    // Others are not affected.
    await m.ok(await m.call("GET", "/drafts", org.member));

    await setSettings(org.member2, { enable_drafts_synchronization: true });
    expect((await m.ok(await m.call("GET", "/drafts", org.member2))).drafts).toEqual([]);
    await m.ok(await m.call("POST", "/drafts", org.member2, { drafts: JSON.stringify([draft]) }));
  });

  it("answers by what accounts holds, not by a replica that has not caught up", async () => {
    const draft = { type: "", to: [], topic: "", content: "just now" };
    await setSettings(org.member, { enable_drafts_synchronization: false });
    // The replica lagging behind the switch: it still says on.
    await setUserSetting(m.deps.pool, org.member.realm_id, org.member.user_id, "enable_drafts_synchronization", true);
    expectError(await m.call("POST", "/drafts", org.member, { drafts: JSON.stringify([draft]) }), 400, "BAD_REQUEST", "User has disabled synchronizing drafts.");
    await setSettings(org.member, { enable_drafts_synchronization: true });
    await setUserSetting(m.deps.pool, org.member.realm_id, org.member.user_id, "enable_drafts_synchronization", false);
    await m.ok(await m.call("POST", "/drafts", org.member, { drafts: JSON.stringify([draft]) }));
    await setUserSetting(m.deps.pool, org.member.realm_id, org.member.user_id, "enable_drafts_synchronization", true);
  });

  it("register shows no drafts once synchronization is off, even before messaging has dropped them", async () => {
    const drafts = async () => (await m.ok(await m.call("POST", "/internal/register_state/messaging", org.member, { fetch_event_types: JSON.stringify(["drafts"]) }))).drafts;
    await m.ok(await m.call("POST", "/drafts", org.member, { drafts: JSON.stringify([{ type: "", to: [], topic: "", content: "synced" }]) }));
    expect((await drafts()).map((d: any) => d.content)).toContain("synced");
    await setSettings(org.member, { enable_drafts_synchronization: false });
    expect(await drafts()).toEqual([]);
    // The change on its way: accounts says off, messaging still holds a draft and thinks it on.
    await setUserSetting(m.deps.pool, org.member.realm_id, org.member.user_id, "enable_drafts_synchronization", true);
    await m.deps.pool.query(
      "INSERT INTO drafts (realm_id, user_id, type, content, last_edit_time) VALUES ($1, $2, '', 'not yet dropped', now())",
      [org.member.realm_id, org.member.user_id],
    );
    expect(await drafts()).toEqual([]);
    await setSettings(org.member, { enable_drafts_synchronization: true });
    expect((await drafts()).map((d: any) => d.content)).toEqual(["not yet dropped"]);
  });

  it("a new user who starts with the organization's default off is refused at once (read through)", async () => {
    const fresh = await m.createOrg();
    await m.ok(await accounts("PATCH", "/realm/user_settings_defaults", fresh.admin, { enable_drafts_synchronization: false }));
    const u = await m.ok(await accounts("POST", "/internal/users", null, { realm_id: fresh.realmId, email: `late@${fresh.slug}.test`, full_name: "Late Comer" }));
    const late: TestUser = { user_id: u.user_id, email: u.email, full_name: "Late Comer", role: 400, realm_id: fresh.realmId, as: m.identity({ ...u, role: 400, realm_id: fresh.realmId }) };
    expectError(await m.call("GET", "/drafts", late), 400, "BAD_REQUEST", "User has disabled synchronizing drafts.");
    // Users created before the change keep their own value.
    await m.ok(await m.call("GET", "/drafts", fresh.member));
  });
});

describe("automatic topic visibility follows each user's settings", () => {
  let ops: number;
  beforeAll(async () => {
    ops = await m.createStream(org.owner, "ops", [org.owner, org.moderator, org.member, org.member2, org.bot]);
    await m.send(org.owner, { type: "stream", to: "ops", topic: "existing", content: "started by the owner" });
  });

  it("automatically_follow_topics_policy: never, then on send", async () => {
    await setSettings(org.member, { automatically_follow_topics_policy: 4 });
    await m.outbox();
    const started = await m.ok(await m.call("POST", "/messages", org.member, { type: "stream", to: "ops", topic: "mine", content: "new topic" }));
    expect(started.automatic_new_visibility_policy).toBeUndefined();
    expect(await userTopicChanges()).toEqual([]);

    await setSettings(org.member, { automatically_follow_topics_policy: 2 });
    await m.outbox();
    const sent = await m.ok(await m.call("POST", "/messages", org.member, { type: "stream", to: "ops", topic: "existing", content: "joining" }));
    expect(sent.automatic_new_visibility_policy).toBe(3);
    expect(await userTopicChanges()).toEqual([[org.member.user_id, "existing", 3]]);
  });

  it("automatically_unmute_topics_in_muted_streams_policy: never, then on participation", async () => {
    await setSettings(org.moderator, { automatically_follow_topics_policy: 4, automatically_unmute_topics_in_muted_streams_policy: 4 });
    await m.ok(await m.call("POST", "/users/me/subscriptions/properties", org.moderator, { subscription_data: JSON.stringify([{ stream_id: ops, property: "is_muted", value: true }]) }));
    await m.outbox();
    const quiet = await m.ok(await m.call("POST", "/messages", org.moderator, { type: "stream", to: "ops", topic: "existing", content: "muted here" }));
    expect(quiet.automatic_new_visibility_policy).toBeUndefined();

    await setSettings(org.moderator, { automatically_unmute_topics_in_muted_streams_policy: 1 });
    await m.outbox();
    const res = await m.ok(await m.call("POST", "/messages", org.moderator, { type: "stream", to: "ops", topic: "existing", content: "now unmuted" }));
    expect(res.automatic_new_visibility_policy).toBe(2);
    expect(await userTopicChanges()).toEqual([[org.moderator.user_id, "existing", 2]]);
  });

  it("automatically_follow_topics_where_mentioned: only users who chose it, never over a mute, never bots", async () => {
    await setSettings(org.member2, { automatically_follow_topics_where_mentioned: false });
    await m.ok(await m.call("POST", "/user_topics", org.moderator, { stream_id: ops, topic: "mentions", visibility_policy: 1 }));
    await m.send(org.owner, { type: "stream", to: "ops", topic: "mentions", content: "first" });
    await m.outbox();
    await m.send(org.owner, { type: "stream", to: "ops", topic: "mentions", content: "@**Max Member** @**Mona Moderator** @**Mel Member** @**Bo Bot**" });
    const flags = await flagsOfLastSend();
    expect(flags.get(org.member2.user_id)).toContain("mentioned");
    // The owner follows the topic they started; of those mentioned only the member follows:
    // member2 turned it off, the moderator muted the topic, bots never follow.
    const changes = (await m.deps.pool.query("SELECT user_id, visibility_policy FROM user_topics WHERE stream_id = $1 AND topic_name = 'mentions' ORDER BY user_id", [ops])).rows;
    expect(changes.map((r) => [Number(r.user_id), r.visibility_policy])).toEqual(
      [
        [org.owner.user_id, 3],
        [org.moderator.user_id, 1],
        [org.member.user_id, 3],
      ].sort((a, b) => a[0] - b[0]),
    );
  });
});

describe("POST /internal/subscriptions/new_user (an accepted invitation's channels)", () => {
  it("subscribes the new user to the channels that exist, with the usual events, once", async () => {
    const fresh = await m.createOrg();
    const pub = await m.createStream(fresh.owner, "welcome", [fresh.owner]);
    const priv = await m.createStream(fresh.owner, "inner", [fresh.owner, fresh.member], { invite_only: true });
    const joiner = await m.ok(await accounts("POST", "/internal/users", null, { realm_id: fresh.realmId, email: `joiner@${fresh.slug}.test`, full_name: "Jo Iner" }));
    await m.outbox();
    const res = await m.ok(await m.call("POST", "/internal/subscriptions/new_user", null, { realm_id: fresh.realmId, user_id: joiner.user_id, stream_ids: [priv, 999999, pub] }));
    expect(res.stream_ids).toEqual([pub, priv]);
    const events = await m.clientEvents();
    const added = events.find((e) => e.type === "messaging.subscription.added")!;
    expect(added.users).toEqual([joiner.user_id]);
    expect(added.event.subscriptions.map((s: any) => s.stream_id)).toEqual([pub, priv]);
    // The private channel's subscribers (and administrators, who see its members) learn about their new peer.
    const peers = events.filter((e) => e.type === "messaging.subscription.peer_added");
    const byId = (a: number, b: number) => a - b;
    expect(peers.find((e) => e.event.stream_ids[0] === priv)!.users.sort(byId)).toEqual([fresh.owner.user_id, fresh.admin.user_id, fresh.member.user_id].sort(byId));
    // A retry changes nothing.
    await m.ok(await m.call("POST", "/internal/subscriptions/new_user", null, { realm_id: fresh.realmId, user_id: joiner.user_id, stream_ids: [priv, pub] }));
    expect(await m.clientEvents()).toEqual([]);
    // Another organization's user or channels are unknown.
    expectError(await m.call("POST", "/internal/subscriptions/new_user", null, { realm_id: org.realmId, user_id: joiner.user_id, stream_ids: [pub] }), 400, "BAD_REQUEST", "No such user");
    expect((await m.ok(await m.call("POST", "/internal/subscriptions/new_user", null, { realm_id: fresh.realmId, user_id: fresh.member2.user_id, stream_ids: [] }))).stream_ids).toEqual([]);
    const elsewhere = await m.createStream(org.owner, "elsewhere", [org.owner]);
    expect((await m.ok(await m.call("POST", "/internal/subscriptions/new_user", null, { realm_id: fresh.realmId, user_id: fresh.member2.user_id, stream_ids: [elsewhere] }))).stream_ids).toEqual([]);
  });

  it("refuses callers without the internal token", async () => {
    const res = await m.app.inject({ method: "POST", url: "/api/v1/internal/subscriptions/new_user", payload: {} });
    expect(res.statusCode).toBe(401);
  });
});

describe("no borrowed identities", () => {
  it("every call messaging made to accounts was to an internal route", () => {
    expect(accountsRequests.length).toBeGreaterThan(0);
    const external = accountsRequests.filter((r) => !r.split(" ")[1].startsWith("/api/v1/internal/"));
    expect(external).toEqual([]);
    for (const path of ["/internal/users", "/internal/user_groups", "/internal/linkifiers", "/internal/user_settings"]) {
      expect(accountsRequests.some((r) => r.includes(`/api/v1${path}?`))).toBe(true);
    }
  });
});
