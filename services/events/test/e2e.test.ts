import { describe, expect, it } from "vitest";
import type { DemoOrg, DemoUser } from "@chat/testkit";
import { checkEvent, register as registerQueue, sleep, typesOf, useDemoStack, verifyAction as verify, VOLATILE_STATE } from "@chat/testkit/e2e";
import { applyEvent, type ApplyContext } from "../src/lib/apply/index";
import { CAPABILITIES } from "./verify-kit";

/**
 * The whole stack through the gateway: register, act through the public API, collect events
 * with GET /events, check each event against its contract and Zulip's schema, apply it to the
 * registered state and compare with a fresh register (Zulip's "verify action" method).
 */

let org: DemoOrg;
const e2e = useDemoStack(
  {
    serviceEnv: {
      events: { EVENTS_HEARTBEAT_SECONDS: "1", EVENTS_HEARTBEAT_JITTER_SECONDS: "0" },
      // verify_action registers again and again; the per-user limit is not what is tested here.
      gateway: { RATE_LIMITING_ENABLED: "false" },
    },
  },
  ({ demo }) => ([org] = demo.orgs),
);
const { as } = e2e;


const queueOf = (u: DemoUser, params: Record<string, unknown> = {}) => registerQueue(as(u), { client_capabilities: CAPABILITIES, ...params });
/** Register's answer (its queue stays open). */
const register = async (u: DemoUser, params: Record<string, unknown> = {}) => (await queueOf(u, params)).state;

/** Reads a queue until `done(events)` holds (heartbeats skipped); each event is checked. */
async function readUntil(u: DemoUser, queueId: string, done: (events: any[]) => boolean, timeoutMs = 8000, from?: number) {
  const events: any[] = [];
  let last: number | undefined = from;
  const deadline = Date.now() + timeoutMs;
  while (!done(events)) {
    if (Date.now() > deadline) throw new Error(`gave up waiting; got ${JSON.stringify(events)}`);
    const res = await as(u).get("/events", { queue_id: queueId, last_event_id: last });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.queue_id).toBe(queueId);
    for (const e of res.body.events) {
      expect(e.id).toBeGreaterThan(last ?? -1);
      last = e.id;
      if (e.type === "heartbeat") continue;
      checkEvent(e);
      events.push(e);
    }
  }
  return { events, last };
}

/** The keys of a JSON object's text, in order, repeats included (JSON.parse keeps the last of each). */
function topLevelKeys(text: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (depth === 1 && text[j + 1] === ":") keys.push(JSON.parse(text.slice(i, j + 1)));
      i = j;
    } else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
  }
  return keys;
}

/**
 * What a fresh register differs in without any change: its own queue. And presence's update id:
 * a presence event does not carry it (nor does Zulip's apply_event move it), so a client polls
 * from the older id and is sent that presence again.
 */
const VOLATILE = [...VOLATILE_STATE, "presence_last_update_id"];
function comparableState(state: Record<string, any>) {
  const copy = structuredClone(state);
  for (const k of VOLATILE) delete copy[k];
  return copy;
}

/**
 * Zulip's verify_action: register, act, collect the events, apply them to the registered
 * state; the result must equal a fresh register's state. Returns the events.
 */
async function verifyAction(
  u: DemoUser,
  action: () => Promise<unknown>,
  params: Record<string, unknown> = {},
  opts: { registerMidway?: boolean } = {},
) {
  // Midway: the register runs while the action is under way (its events race the state fetch).
  const running = opts.registerMidway ? action() : null;
  if (running) await sleep(30);
  const ctx: ApplyContext = {
    userId: u.user_id,
    fetchTypes: (params.fetch_event_types ?? params.event_types ?? null) as string[] | null,
    includeSubscribers: Boolean(params.include_subscribers),
    clientGravatar: params.client_gravatar !== false,
    slimPresence: params.slim_presence === true,
  };
  return verify(() => running ?? action(), {
    register: () => queueOf(u, params),
    apply: (state, e) => applyEvent(state, e, ctx),
    volatile: VOLATILE,
    timeoutMs: 8000,
    pollMs: 200,
  });
}


describe("register", () => {
  it("returns the queue keys and every service's state", async () => {
    const state = await register(org.users.member);
    expect(state).toMatchObject({ zulip_feature_level: 267, last_event_id: -1, max_message_length: 10000 });
    for (const key of ["subscriptions", "unsubscribed", "never_subscribed", "max_message_id", "drafts", "scheduled_messages", "user_status",
      "realm_user_groups", "realm_users", "realm_name", "user_id", "unread_msgs", "user_settings"]) {
      expect(state, key).toHaveProperty(key);
    }
    expect(state.user_id).toBe(org.users.member.user_id);
    await as(org.users.member).delete("/events", { queue_id: state.queue_id });
  });

  it("names every key of the answer once (the services' state is passed on as they wrote it)", async () => {
    const u = org.users.member;
    const res = await fetch(`${e2e.demo.base_url}/api/v1/register`, {
      method: "POST",
      headers: { authorization: "Basic " + Buffer.from(`${u.email}:${u.api_key}`).toString("base64"), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ client_capabilities: JSON.stringify(CAPABILITIES), unknown_thing: "1" }).toString(),
    });
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const text = await res.text();
    const keys = topLevelKeys(text);
    expect(keys.length).toBeGreaterThan(40);
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
    const state = JSON.parse(text);
    expect(state).toMatchObject({ result: "success", msg: "", last_event_id: -1, ignored_parameters_unsupported: ["unknown_thing"] });
    expect(keys.slice(0, 2)).toEqual(["result", "msg"]);
    await as(u).delete("/events", { queue_id: state.queue_id });
  });

  it("returns only the requested state", async () => {
    const state = await register(org.users.member, { fetch_event_types: ["message"] });
    expect(Object.keys(comparableState(state)).sort()).toEqual([
      "event_queue_longpoll_timeout_seconds", "max_message_id", "max_message_length", "max_topic_length",
      "zulip_feature_level", "zulip_merge_base", "zulip_version",
    ]);
    // A null fetch_event_types is none given: event_types says what state comes.
    const byEventTypes = await register(org.users.member, { event_types: ["message"], fetch_event_types: null });
    expect(Object.keys(comparableState(byEventTypes)).sort()).toEqual(Object.keys(comparableState(state)).sort());
  });
});

describe("what register points clients at", () => {
  it("the emoji data and the default logo are served, without credentials; the icon is Gravatar's", async () => {
    const state = await register(org.users.member, { fetch_event_types: ["realm"] });
    const emoji = await fetch(state.server_emoji_data_url);
    expect(emoji.status).toBe(200);
    expect(emoji.headers.get("content-type")).toMatch(/^application\/json/);
    const { code_to_names: names } = (await emoji.json()) as { code_to_names: Record<string, string[]> };
    expect(names["1f642"][0]).toBe("smile");
    expect(names["1f44d"]).toEqual(expect.arrayContaining(["+1", "thumbs_up"]));
    expect(Object.keys(names).length).toBeGreaterThan(1500);
    for (const logo of [state.realm_logo_url, state.realm_night_logo_url]) {
      const res = await fetch(logo);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
      expect(await res.text()).toContain("<svg");
    }
    expect(state.realm_icon_source).toBe("G");
    expect(state.realm_icon_url).toMatch(/^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon$/);
  });

  it("the Notification Bot's avatar is a fixed image, served without credentials, in cross_realm_bots and on its messages", async () => {
    const { admin, member2 } = org.users;
    const state = await register(member2, { fetch_event_types: ["realm_user"] });
    const [bot] = state.cross_realm_bots;
    expect(bot.avatar_url).toBe("/static/images/static_avatars/notification-bot.png");
    const res = await fetch(new URL(bot.avatar_url, e2e.stack.urls.gateway));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect([...new Uint8Array(await res.arrayBuffer()).subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    // Subscribed by someone else: the bot tells the user in a direct message (event and history).
    const q = (await register(member2, { event_types: ["message"] })).queue_id;
    const sub = await as(admin).post("/users/me/subscriptions", { subscriptions: [{ name: "bot-avatar" }], principals: [admin.user_id, member2.user_id] });
    expect(sub.status, JSON.stringify(sub.body)).toBe(200);
    const { events } = await readUntil(member2, q, (ev) => ev.some((e) => e.type === "message" && e.message.sender_id === bot.user_id));
    expect(events.find((e) => e.type === "message" && e.message.sender_id === bot.user_id).message.avatar_url).toBe(bot.avatar_url);
    for (const clientGravatar of [true, false]) {
      const page = await as(member2).get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: [{ operator: "sender", operand: bot.user_id }], client_gravatar: clientGravatar });
      expect(page.body.messages.length).toBeGreaterThan(0);
      expect(page.body.messages.map((m: any) => m.avatar_url)).toEqual(page.body.messages.map(() => bot.avatar_url));
    }
  });

  it("the state of what this server has none of, when a client asks by name", async () => {
    const types = ["realm_domains", "realm_embedded_bots", "realm_incoming_webhook_bots", "video_calls", "giphy", "stop_words", "onboarding_steps"];
    const state = await register(org.users.member, { fetch_event_types: types });
    expect(state).toMatchObject({
      realm_domains: [],
      realm_embedded_bots: [],
      has_zoom_token: false,
      giphy_api_key: "",
      onboarding_steps: [],
    });
    expect(state.stop_words).toContain("the");
    // The integrations a client may make an incoming webhook bot for (see messaging's integration tests).
    expect(state.realm_incoming_webhook_bots.map((i: any) => i.name)).toEqual(["alertmanager", "github", "grafana", "json", "slack_incoming"]);
  });

  it("the external account kinds a profile field may use, and GIPHY's ratings", async () => {
    const state = await register(org.users.member, { fetch_event_types: ["realm"] });
    expect(state.realm_default_external_accounts.github).toEqual({
      name: "GitHub username", text: "GitHub", hint: "Enter your GitHub username", url_pattern: "https://github.com/%(username)s",
    });
    expect(Object.keys(state.realm_default_external_accounts).sort()).toEqual(["github", "twitter"]);
    expect(Object.values(state.giphy_rating_options).map((o: any) => o.id)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(Object.values(state.giphy_rating_options).some((o: any) => o.id === state.realm_giphy_rating)).toBe(true);
  });
});

describe("message delivery through the gateway", () => {
  const humans = () => ["owner", "admin", "moderator", "member", "member2", "guest", "bot"] as const;

  it("a channel message reaches each subscriber's queue exactly once, and nobody else's", async () => {
    const queues = new Map<DemoUser, string>();
    for (const name of humans()) queues.set(org.users[name], (await register(org.users[name], { event_types: ["message"] })).queue_id);
    const outsider = e2e.demo.orgs[1].users.member;
    const outsiderQueue = (await register(outsider, { event_types: ["message"] })).queue_id;

    const sent = await as(org.users.member).post("/messages", { type: "stream", to: org.channels.public.stream_id, topic: "hello", content: "to all" });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const priv = await as(org.users.member).post("/messages", { type: "stream", to: org.channels.private.stream_id, topic: "inner", content: "few" });
    expect(priv.status).toBe(200);

    const privateMembers = new Set([org.users.owner, org.users.admin, org.users.member]);
    for (const [u, q] of queues) {
      const wantIds = privateMembers.has(u) ? [sent.body.id, priv.body.id] : [sent.body.id];
      const { events } = await readUntil(u, q, (ev) => ev.filter((e) => e.type === "message").length >= wantIds.length);
      // Nothing more is coming: a last non-blocking look.
      const rest = await as(u).get("/events", { queue_id: q, dont_block: true });
      const all = [...events, ...rest.body.events.filter((e: any) => !events.some((x) => x.id === e.id) && e.type !== "heartbeat")];
      expect(all.filter((e) => e.type === "message").map((e) => e.message.id)).toEqual(wantIds);
      const own = all.find((e) => e.message.id === sent.body.id);
      expect(own.message.content_type).toBe("text/x-markdown"); // apply_markdown defaults to false
      expect(own.message.content).toBe("to all");
    }
    const out = await as(outsider).get("/events", { queue_id: outsiderQueue, dont_block: true });
    expect(out.body.events.filter((e: any) => e.type === "message")).toEqual([]);
  });

  it("echoes the local id only in the queue named on send", async () => {
    const member = org.users.member;
    const q1 = (await register(member, { event_types: ["message"], apply_markdown: true })).queue_id;
    const q2 = (await register(member, { event_types: ["message"] })).queue_id;
    const q3 = (await register(org.users.member2, { event_types: ["message"] })).queue_id;
    const sent = await as(member).post("/messages", {
      type: "direct", to: [org.users.member2.user_id], content: "psst", queue_id: q1, local_id: "123.45",
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const [e1] = (await readUntil(member, q1, (ev) => ev.length >= 1)).events;
    const [e2] = (await readUntil(member, q2, (ev) => ev.length >= 1)).events;
    const [e3] = (await readUntil(org.users.member2, q3, (ev) => ev.length >= 1)).events;
    expect(e1).toMatchObject({ type: "message", local_message_id: "123.45", local_id: "123.45", message: { id: sent.body.id, content_type: "text/html" } });
    for (const e of [e2, e3]) {
      expect(e.message.id).toBe(sent.body.id);
      expect(e).not.toHaveProperty("local_message_id");
      expect(e).not.toHaveProperty("local_id");
    }
  });
});

describe("widgets through the gateway", () => {
  it("a poll's message carries its widget; a vote reaches the other recipient's queue as a submessage event", async () => {
    const { member, member2 } = org.users;
    const q = (await register(member2, { event_types: ["message", "submessage"] })).queue_id;
    const sent = await as(member).post("/messages", { type: "direct", to: [member2.user_id], content: "/poll Tea or coffee?\nTea\nCoffee" });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const vote = await as(member2).post("/submessage", { message_id: sent.body.id, msg_type: "widget", content: JSON.stringify({ type: "vote", key: "canned,0", vote: 1 }) });
    expect(vote.body).toEqual({ result: "success", msg: "" });
    const { events } = await readUntil(member2, q, (ev) => ev.some((e) => e.type === "submessage"));
    const message = events.find((e) => e.type === "message").message;
    expect(JSON.parse(message.submessages[0].content)).toEqual({ widget_type: "poll", extra_data: { question: "Tea or coffee?", options: ["Tea", "Coffee"] } });
    expect(events.find((e) => e.type === "submessage")).toMatchObject({ message_id: sent.body.id, sender_id: member2.user_id, msg_type: "widget" });
  });
});

describe("message events follow each queue's client_gravatar, as GET /messages does", () => {
  it("null avatar_url for a gravatar sender with client_gravatar (the default), the URL without it", async () => {
    const member2 = org.users.member2;
    const computed = (await register(member2, { event_types: ["message"] })).queue_id;
    const given = (await register(member2, { event_types: ["message"], client_gravatar: false })).queue_id;
    const sent = await as(org.users.member).post("/messages", { type: "direct", to: [member2.user_id], content: "avatar?" });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const [withNull] = (await readUntil(member2, computed, (ev) => ev.length >= 1)).events;
    const [withUrl] = (await readUntil(member2, given, (ev) => ev.length >= 1)).events;
    expect(withNull.message).toMatchObject({ id: sent.body.id, avatar_url: null });
    expect(withUrl.message.avatar_url).toMatch(/^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=1$/);
    const fetched = await as(member2).get("/messages", { anchor: sent.body.id, num_before: 0, num_after: 0 });
    expect(fetched.body.messages[0].avatar_url).toBeNull();
  });
});

describe("verify action: register, act, apply events, compare with a fresh register", () => {
  const member = () => org.users.member;
  const other = () => org.users.member2;
  const send = (u: DemoUser, params: Record<string, unknown>) =>
    as(u).post("/messages", params).then((r) => {
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.id as number;
    });
  /**
   * A message sent before an action under test: waits until its event has reached the member's
   * queues, so the register that follows neither gets it as an event nor misses it in its state.
   */
  const sendBefore = async (u: DemoUser, params: Record<string, unknown>) => {
    const probe = await register(member(), { event_types: ["message"] });
    const id = await send(u, params);
    await readUntil(member(), probe.queue_id, (events) => events.some((e) => e.message?.id === id), 8000, probe.last_event_id);
    await as(member()).delete("/events", { queue_id: probe.queue_id });
    return id;
  };

  it("channel and direct messages", async () => {
    let events = await verifyAction(member(), () => send(other(), { type: "stream", to: org.channels.public.stream_id, topic: "t1", content: "x" }));
    expect(typesOf(events)).toEqual(["message"]);
    events = await verifyAction(member(), () => send(other(), { type: "direct", to: [member().user_id], content: "dm" }));
    expect(typesOf(events)).toEqual(["message"]);
    events = await verifyAction(member(), () => send(other(), { type: "direct", to: [member().user_id, org.users.owner.user_id], content: "group" }));
    expect(typesOf(events)).toEqual(["message"]);
    events = await verifyAction(member(), () => send(member(), { type: "stream", to: org.channels.public.stream_id, topic: "t1", content: "mine" }));
    expect(typesOf(events)).toEqual(["message"]);
  });

  it("unread messages across channels, topics and conversations keep Zulip's order", async () => {
    const pub = org.channels.public.stream_id;
    const priv = org.channels.private.stream_id;
    const alpha: number[] = [];
    await verifyAction(member(), async () => {
      await send(other(), { type: "stream", to: pub, topic: "Zulu", content: "z" });
      await send(org.users.admin, { type: "stream", to: priv, topic: "order", content: "p" });
      alpha.push(await send(other(), { type: "stream", to: pub, topic: "alpha", content: "a" }));
      await send(org.users.admin, { type: "direct", to: [member().user_id], content: "dm" });
      alpha.push(await send(other(), { type: "stream", to: pub, topic: "ALPHA", content: "A" }));
      await send(other(), { type: "direct", to: [member().user_id], content: "dm" });
    });
    const state = await register(member());
    await as(member()).delete("/events", { queue_id: state.queue_id });
    const { streams, pms } = state.unread_msgs;
    const keys = streams.map((s: any) => [s.stream_id, s.topic.toLowerCase()]);
    expect(keys).toEqual([...keys].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0)));
    expect(streams.filter((s: any) => s.stream_id === pub && s.topic.toLowerCase() === "alpha")).toEqual([
      { stream_id: pub, topic: "alpha", unread_message_ids: alpha },
    ]);
    const others = pms.map((p: any) => p.other_user_id);
    expect(others).toEqual([...others].sort((a, b) => a - b));
    for (const bucket of [...streams, ...pms]) expect(bucket.unread_message_ids).toEqual([...bucket.unread_message_ids].sort((a, b) => a - b));
  });

  it("message flags: read, unread, starred", async () => {
    const id = await sendBefore(other(), { type: "stream", to: org.channels.public.stream_id, topic: "flags", content: "flag me" });
    const dm = await sendBefore(other(), { type: "direct", to: [member().user_id], content: "flag me too" });
    const flags = (op: string, flag: string, ids: number[]) => () => as(member()).post("/messages/flags", { messages: ids, op, flag });
    expect(typesOf(await verifyAction(member(), flags("add", "read", [id, dm])))).toEqual(["update_message_flags/add"]);
    expect(typesOf(await verifyAction(member(), flags("remove", "read", [id, dm])))).toEqual(["update_message_flags/remove"]);
    expect(typesOf(await verifyAction(member(), flags("add", "starred", [id])))).toEqual(["update_message_flags/add"]);
    expect(typesOf(await verifyAction(member(), flags("remove", "starred", [id])))).toEqual(["update_message_flags/remove"]);
  });

  it("drafts", async () => {
    let draftId = 0;
    const events = await verifyAction(member(), async () => {
      const r = await as(member()).post("/drafts", { drafts: [{ type: "stream", to: [org.channels.public.stream_id], topic: "d", content: "draft" }] });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      draftId = r.body.ids[0];
    });
    expect(typesOf(events)).toEqual(["drafts/add"]);
    expect(typesOf(await verifyAction(member(), () =>
      as(member()).patch(`/drafts/${draftId}`, { draft: { type: "stream", to: [org.channels.public.stream_id], topic: "d", content: "edited" } })))).toEqual(["drafts/update"]);
    expect(typesOf(await verifyAction(member(), () => as(member()).delete(`/drafts/${draftId}`)))).toEqual(["drafts/remove"]);
  });

  it("turning drafts synchronization off empties register's drafts without drafts events", async () => {
    const r = await as(member()).post("/drafts", { drafts: [{ type: "", to: [], topic: "", content: "kept only locally" }] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const sync = (on: boolean) => async () => {
      const res = await as(member()).patch("/settings", { enable_drafts_synchronization: on });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    };
    expect(typesOf(await verifyAction(member(), sync(false)))).toEqual(["user_settings/update"]);
    const refused = await as(member()).post("/drafts", { drafts: [{ type: "", to: [], topic: "", content: "x" }] });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ result: "error", code: "BAD_REQUEST", msg: "User has disabled synchronizing drafts." });
    expect(typesOf(await verifyAction(member(), sync(true)))).toEqual(["user_settings/update"]);
    const state = await register(member(), { fetch_event_types: ["drafts"] });
    await as(member()).delete("/events", { queue_id: state.queue_id });
    expect(state.drafts).toEqual([]);
  });

  it("subscription settings, unsubscribing and subscribing again", async () => {
    const streamId = org.channels.public.stream_id;
    const set = (property: string, value: unknown) => () =>
      as(member()).post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: streamId, property, value }] });
    expect(typesOf(await verifyAction(member(), set("is_muted", true)))).toEqual(["subscription/update", "subscription/update"]);
    expect(typesOf(await verifyAction(member(), set("is_muted", false)))).toEqual(["subscription/update", "subscription/update"]);
    expect(typesOf(await verifyAction(member(), set("color", "#aabbcc")))).toEqual(["subscription/update"]);
    expect(typesOf(await verifyAction(member(), set("pin_to_top", true)))).toEqual(["subscription/update"]);

    const unreadIn = (st: Record<string, any>) => st.unread_msgs.streams.filter((x: any) => x.stream_id === org.channels.public.stream_id);
    await sendBefore(other(), { type: "stream", to: org.channels.public.stream_id, topic: "left behind", content: "unread when leaving" });
    const before = await register(member());
    expect(unreadIn(before).length).toBeGreaterThan(0);
    await as(member()).delete("/events", { queue_id: before.queue_id });
    // Leaving marks the channel's unread messages read (Zulip), so subscribing again brings none back.
    const events = await verifyAction(member(), () => as(member()).delete("/users/me/subscriptions", { subscriptions: [org.channels.public.name] }), { include_subscribers: true });
    expect(typesOf(events)).toEqual(expect.arrayContaining(["subscription/remove", "update_message_flags/add"]));
    const back = await verifyAction(member(), () => as(member()).post("/users/me/subscriptions", { subscriptions: [{ name: org.channels.public.name }] }), { include_subscribers: true });
    expect(typesOf(back)).toContain("subscription/add");
    const returned = await register(member());
    expect(unreadIn(returned)).toEqual([]);
    await as(member()).delete("/events", { queue_id: returned.queue_id });
    // Another subscriber sees the peer change.
    const peer = await verifyAction(other(), () => as(member()).delete("/users/me/subscriptions", { subscriptions: [org.channels.public.name] }), { include_subscribers: true });
    expect(typesOf(peer)).toEqual(["subscription/peer_remove"]);
    // Subscribing again, seen by a queue registered without include_subscribers: its add event's
    // channel objects carry no subscriber list, so the applied state still equals a fresh register.
    const plain = await verifyAction(member(), () => as(member()).post("/users/me/subscriptions", { subscriptions: [{ name: org.channels.public.name }] }), {});
    const addOf = (events: any[]) => events.find((e) => e.type === "subscription" && e.op === "add");
    expect(addOf(plain).subscriptions.map((s: any) => "subscribers" in s)).toEqual([false]);
    expect(addOf(back).subscriptions.map((s: any) => Array.isArray(s.subscribers))).toEqual([true]);
  });

  it("removed from a private channel: gone from every list, live as after a reload; an administrator keeps it as unsubscribed", async () => {
    const admin = org.users.admin;
    const subscribe = await verifyAction(member(), () =>
      as(admin).post("/users/me/subscriptions", { subscriptions: [{ name: "leaving-private" }], invite_only: true, principals: [admin.user_id, member().user_id] }),
    );
    expect(typesOf(subscribe)).toContain("subscription/add");
    const id = subscribe.find((e) => e.type === "subscription" && e.op === "add").subscriptions[0].stream_id;
    const listed = (st: Record<string, any>) => ["subscriptions", "unsubscribed", "never_subscribed", "streams"].filter((k) => st[k].some((x: any) => x.stream_id === id));
    const removed = await verifyAction(member(), () => as(admin).delete("/users/me/subscriptions", { subscriptions: ["leaving-private"], principals: [member().user_id] }), {
      include_subscribers: true,
    });
    expect(typesOf(removed)).toEqual(expect.arrayContaining(["subscription/remove", "stream/delete"]));
    expect(listed(await register(member(), { include_subscribers: true }))).toEqual([]);
    await verifyAction(admin, () => as(admin).delete("/users/me/subscriptions", { subscriptions: ["leaving-private"] }));
    expect(listed(await register(admin))).toEqual(["unsubscribed", "streams"]);
  });

  it("topic visibility", async () => {
    await sendBefore(other(), { type: "stream", to: org.channels.public.stream_id, topic: "noisy", content: "unread in a topic about to be muted" });
    const events = await verifyAction(member(), () =>
      as(member()).post("/user_topics", { stream_id: org.channels.public.stream_id, topic: "noisy", visibility_policy: 1 }));
    // All event types: the legacy muted_topics list rides along, as in Zulip.
    expect(typesOf(events)).toEqual(["user_topic", "muted_topics"]);
    const legacy = await verifyAction(member(), () =>
      as(member()).post("/user_topics", { stream_id: org.channels.public.stream_id, topic: "noisy", visibility_policy: 0 }), { event_types: ["muted_topics"] });
    expect(legacy).toEqual([expect.objectContaining({ type: "muted_topics", muted_topics: [] })]);
    const named = await verifyAction(member(), () =>
      as(member()).post("/user_topics", { stream_id: org.channels.public.stream_id, topic: "noisy", visibility_policy: 1 }), { event_types: ["user_topic", "muted_topics"] });
    expect(typesOf(named)).toEqual(["user_topic"]);
  });

  it("scheduled messages", async () => {
    let id = 0;
    const at = Math.floor(Date.now() / 1000) + 3600;
    expect(typesOf(await verifyAction(member(), async () => {
      const r = await as(member()).post("/scheduled_messages", { type: "stream", to: org.channels.public.stream_id, topic: "later", content: "soon", scheduled_delivery_timestamp: at });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      id = r.body.scheduled_message_id;
    }))).toEqual(["scheduled_messages/add"]);
    expect(typesOf(await verifyAction(member(), () => as(member()).patch(`/scheduled_messages/${id}`, { content: "sooner" })))).toEqual(["scheduled_messages/update"]);
    expect(typesOf(await verifyAction(member(), () => as(member()).delete(`/scheduled_messages/${id}`)))).toEqual(["scheduled_messages/remove"]);
  });

  it("user status", async () => {
    // `away` is presence_enabled: everyone sees the presence change with it (Zulip's do_change_user_setting).
    expect(typesOf(await verifyAction(member(), () => as(other()).post("/users/me/status", { status_text: "lunch", away: true })))).toEqual(["presence", "user_status"]);
    expect(typesOf(await verifyAction(member(), () => as(other()).post("/users/me/status", { status_text: "", away: false })))).toEqual(["presence", "user_status"]);
  });

  it("user groups", async () => {
    const admin = org.users.admin;
    let groupId = 0;
    expect(typesOf(await verifyAction(member(), async () => {
      const r = await as(admin).post("/user_groups/create", { name: "events-e2e", description: "d", members: [admin.user_id] });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const list = await as(admin).get("/user_groups");
      groupId = list.body.user_groups.find((g: any) => g.name === "events-e2e").id;
    }))).toEqual(["user_group/add"]);
    expect(typesOf(await verifyAction(member(), () => as(admin).post(`/user_groups/${groupId}/members`, { add: [member().user_id] })))).toEqual(["user_group/add_members"]);
    expect(typesOf(await verifyAction(member(), () => as(admin).patch(`/user_groups/${groupId}`, { description: "changed" })))).toEqual(["user_group/update"]);
  });

  it("a new channel, and a new subscriber seen by its peers", async () => {
    // Seen by its creator, who gets its first message (the notification bot's) too: a
    // non-subscriber's first_message_id stays null until they register again (no event tells it).
    const created = await verifyAction(member(), async () => {
      const r = await as(member()).post("/users/me/subscriptions", { subscriptions: [{ name: "events-e2e-new", description: "fresh" }] });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }, { include_subscribers: true });
    expect(typesOf(created)).toContain("stream/create");
    const joined = await verifyAction(member(), async () => {
      const r = await as(other()).post("/users/me/subscriptions", { subscriptions: [{ name: "events-e2e-new" }] });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }, { include_subscribers: true });
    expect(typesOf(joined)).toEqual(["subscription/peer_add"]);
  });

  it("channel administration: description, privacy, default channels and deletion", async () => {
    const admin = org.users.admin;
    const ok = (r: { status: number; body: unknown }) => expect(r.status, JSON.stringify(r.body)).toBe(200);
    const name = `admin-e2e-${Date.now()}`;
    const params = { include_subscribers: true };
    // The channel's creation notices (its first message, the member's DM) are collected here,
    // before the checks below, which expect exactly their own events.
    await verifyAction(member(), () => as(admin).post("/users/me/subscriptions", { subscriptions: [{ name }], principals: [member().user_id, admin.user_id] }).then(ok), params);
    const id = (await as(admin).get("/get_stream_id", { stream: name })).body.stream_id as number;
    let events = await verifyAction(member(), () => as(admin).patch(`/streams/${id}`, { description: "now **bold**" }).then(ok), params);
    expect(events).toEqual([
      expect.objectContaining({ type: "stream", op: "update", property: "description", rendered_description: "<p>now <strong>bold</strong></p>" }),
      // The notification bot tells the channel (Zulip's "channel events" topic).
      expect.objectContaining({ type: "message", message: expect.objectContaining({ stream_id: id, subject: "channel events" }) }),
    ]);
    events = await verifyAction(member(), () => as(admin).patch(`/streams/${id}`, { is_private: true, history_public_to_subscribers: false }).then(ok), params);
    expect(events).toContainEqual(expect.objectContaining({ type: "stream", op: "update", property: "invite_only", value: true, history_public_to_subscribers: false }));
    // Its notice is committed before the answer but reaches the queues later: collected here, so
    // the next action's queue (registered after this answer) does not get it as well.
    events = await verifyAction(member(), () => as(admin).patch(`/streams/${id}`, { is_private: false, history_public_to_subscribers: true }).then(ok), params);
    expect(events).toContainEqual(expect.objectContaining({ type: "stream", op: "update", property: "invite_only", value: false }));
    expect(typesOf(events)).toContain("message");
    events = await verifyAction(member(), () => as(admin).post("/default_streams", { stream_id: id }).then(ok), params);
    expect(typesOf(events)).toEqual(["default_streams"]);
    events = await verifyAction(member(), () => as(admin).delete(`/streams/${id}`).then(ok), params);
    expect(typesOf(events)).toContain("stream/delete");
    const after = await register(member(), { fetch_event_types: ["subscription", "default_streams"] });
    expect([...after.subscriptions, ...after.unsubscribed, ...after.realm_default_streams].map((s: any) => s.stream_id)).not.toContain(id);
    await as(member()).delete("/events", { queue_id: after.queue_id });
  });

  it("subgroups", async () => {
    const admin = org.users.admin;
    const make = async (name: string) => {
      const r = await as(admin).post("/user_groups/create", { name, description: "", members: [admin.user_id] });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return (await as(admin).get("/user_groups")).body.user_groups.find((g: any) => g.name === name).id as number;
    };
    const parent = await make("events-parent");
    const child = await make("events-child");
    expect(typesOf(await verifyAction(member(), () => as(admin).post(`/user_groups/${parent}/subgroups`, { add: [child] })))).toEqual(["user_group/add_subgroups"]);
    expect(typesOf(await verifyAction(member(), () => as(admin).post(`/user_groups/${parent}/subgroups`, { delete: [child] })))).toEqual(["user_group/remove_subgroups"]);
  });

  it("message deletion", async () => {
    const first = await sendBefore(other(), { type: "stream", to: org.channels.public.stream_id, topic: "doomed", content: "delete me" });
    await sendBefore(other(), { type: "stream", to: org.channels.public.stream_id, topic: "doomed", content: "keep me" });
    const events = await verifyAction(member(), () => as(org.users.admin).delete(`/messages/${first}`));
    expect(events).toEqual([expect.objectContaining({ type: "delete_message", message_ids: [first], message_type: "stream" })]);
  });

  it("deleting a channel's oldest message updates its first_message_id", async () => {
    const name = `oldest-${Date.now()}`;
    const made = await as(org.users.admin).post("/users/me/subscriptions", { subscriptions: [{ name }], principals: [member().user_id, other().user_id] });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    // Its oldest message is the notification bot's, in "channel events".
    const narrow = [{ operator: "channel", operand: name }];
    const [oldest] = (await as(member()).get("/messages", { anchor: "oldest", num_before: 0, num_after: 1, narrow })).body.messages.map((m: any) => m.id);
    const next = await sendBefore(other(), { type: "stream", to: name, topic: "t", content: "next" });
    const events = await verifyAction(member(), () => as(org.users.admin).delete(`/messages/${oldest}`));
    expect(typesOf(events)).toEqual(["delete_message", "stream/update"]);
    expect(events[1]).toMatchObject({ property: "first_message_id", value: next, name });
  });
});

describe("verify action: accounts and organization changes", () => {
  const member = () => org.users.member;
  const ok = (r: { status: number; body: unknown }) => expect(r.status, JSON.stringify(r.body)).toBe(200);

  it("own settings and full name", async () => {
    expect(typesOf(await verifyAction(member(), async () => ok(await as(member()).patch("/settings", { dense_mode: false }))))).toEqual(["user_settings/update"]);
    const legacy = await verifyAction(member(), async () => ok(await as(member()).patch("/settings", { enable_sounds: false })), {
      client_capabilities: { notification_settings_null: true },
    });
    expect(typesOf(legacy)).toEqual(expect.arrayContaining(["user_settings/update", "update_global_notifications"]));
    const named = await verifyAction(member(), async () => ok(await as(member()).patch("/settings", { full_name: "Mara M. Member" })));
    expect(typesOf(named)).toEqual(["realm_user/update"]);
  });

  it("alert words", async () => {
    expect(typesOf(await verifyAction(member(), async () => ok(await as(member()).post("/users/me/alert_words", { alert_words: ["castle"] }))))).toEqual(["alert_words"]);
    expect(typesOf(await verifyAction(member(), async () => ok(await as(member()).delete("/users/me/alert_words", { alert_words: ["castle"] }))))).toEqual(["alert_words"]);
  });

  it("an administrator edits another user, the organization, linkifiers, profile fields and defaults", async () => {
    const admin = org.users.admin;
    const owner = org.users.owner;
    expect(typesOf(await verifyAction(member(), async () => ok(await as(admin).patch(`/users/${org.users.member2.user_id}`, { full_name: "Max M. Member" }))))).toEqual(["realm_user/update"]);
    // A role change also moves the user between system groups.
    const role = await verifyAction(member(), async () => ok(await as(admin).patch(`/users/${org.users.member2.user_id}`, { role: 300 })));
    expect(typesOf(role)).toEqual(expect.arrayContaining(["realm_user/update", "user_group/add_members", "user_group/remove_members"]));
    expect(typesOf(await verifyAction(member(), async () => ok(await as(owner).patch("/realm", { message_retention_days: 30 }))))).toEqual(["realm/update"]);
    expect(typesOf(await verifyAction(member(), async () => ok(await as(admin).post("/realm/filters", { pattern: "#(?P<id>[0-9]+)", url_template: "https://example.com/{id}" }))))).toEqual(["realm_linkifiers"]);
    expect(typesOf(await verifyAction(member(), async () => ok(await as(admin).post("/realm/profile_fields", { name: "Team", field_type: 1 }))))).toEqual(["custom_profile_fields"]);
    expect(typesOf(await verifyAction(admin, async () => ok(await as(admin).patch("/realm/user_settings_defaults", { dense_mode: false }))))).toEqual(["realm_user_settings_defaults/update"]);
  });

  it("a new bot appears to everyone; a deactivated one moves to the inactive users", async () => {
    let botId = 0;
    const events = await verifyAction(member(), async () => {
      const r = await as(org.users.member2).post("/bots", { full_name: "Event Bot", short_name: "eventbot" });
      ok(r);
      botId = (r.body as any).user_id;
    });
    expect(typesOf(events)).toContain("realm_user/add");
    const gone = await verifyAction(member(), async () => ok(await as(org.users.member2).delete(`/bots/${botId}`)));
    expect(typesOf(gone)).toContain("realm_user/update");
  });

  it("code playgrounds: the whole list to everyone", async () => {
    const admin = org.users.admin;
    let id = 0;
    const added = await verifyAction(member(), async () => {
      const r = await as(admin).post("/realm/playgrounds", { name: "Python", pygments_language: "Python", url_template: "https://python.example.com?code={code}" });
      ok(r);
      id = (r.body as any).id;
    });
    expect(typesOf(added)).toEqual(["realm_playgrounds"]);
    expect(added[0].realm_playgrounds).toContainEqual({ id, name: "Python", pygments_language: "Python", url_template: "https://python.example.com?code={code}" });
    const removed = await verifyAction(member(), async () => ok(await as(admin).delete(`/realm/playgrounds/${id}`)), { fetch_event_types: ["realm_playgrounds"] });
    expect(typesOf(removed)).toEqual(["realm_playgrounds"]);
  });

  it("saved snippets", async () => {
    let id = 0;
    const added = await verifyAction(member(), async () => {
      const r = await as(member()).post("/saved_snippets", { title: "Hello", content: "Welcome to the organization." });
      ok(r);
      id = (r.body as any).saved_snippet_id;
    });
    expect(typesOf(added)).toEqual(["saved_snippets/add"]);
    expect(added[0].saved_snippet).toMatchObject({ id, title: "Hello", content: "Welcome to the organization." });
    expect(typesOf(await verifyAction(member(), async () => ok(await as(member()).delete(`/saved_snippets/${id}`)), { fetch_event_types: ["saved_snippets"] }))).toEqual([
      "saved_snippets/remove",
    ]);
  });

  it("invitations tell administrators to refresh", async () => {
    const admin = org.users.admin;
    const events = await verifyAction(admin, async () =>
      ok(await as(admin).post("/invites", { invitee_emails: "newcomer-events@example.com", stream_ids: [org.channels.public.stream_id] })));
    expect(typesOf(events)).toEqual(["invites_changed"]);
  });
});

describe("register races and restarts", () => {
  it("a register in the middle of a burst of messages misses none and applies none twice", async () => {
    const member = org.users.member;
    const sender = org.users.member2;
    const sent: number[] = [];
    const events = await verifyAction(
      member,
      async () => {
        for (let i = 0; i < 15; i++) {
          const r = await as(sender).post("/messages", { type: "direct", to: [member.user_id], content: `burst ${i}` });
          expect(r.status).toBe(200);
          sent.push(r.body.id);
        }
      },
      {},
      { registerMidway: true },
    );
    const delivered = events.filter((e) => e.type === "message").map((e) => e.message.id);
    expect(new Set(delivered).size).toBe(delivered.length);
    expect(sent.slice(-1)[0]).toBeGreaterThan(0);
  });

  it("an events restart or crash loses no queue and no event", async () => {
    const member = org.users.member;
    const state = await register(member, { event_types: ["message"] });
    const exit = await e2e.stack.kill("events", "SIGTERM");
    expect(exit).toEqual({ code: 0, signal: null });
    const down = await as(member).get("/events", { queue_id: state.queue_id, last_event_id: -1, dont_block: true });
    expect(down.status).toBe(503);
    const id = await as(org.users.member2)
      .post("/messages", { type: "direct", to: [member.user_id], content: "while you were out" })
      .then((r) => r.body.id);
    await e2e.stack.start("events");
    const { events, last } = await readUntil(member, state.queue_id, (ev) => ev.some((e) => e.type === "message"));
    expect(events.filter((e) => e.type === "message").map((e) => e.message.id)).toEqual([id]);

    // Killed outright in the middle of a poll: that request fails; the queue does not.
    const held = as(member).get("/events", { queue_id: state.queue_id, last_event_id: last });
    await sleep(200);
    expect((await e2e.stack.kill("events", "SIGKILL")).signal).toBe("SIGKILL");
    const cut = await held.catch(() => null);
    expect(cut?.status ?? 503).not.toBe(200);
    const id2 = await as(org.users.member2)
      .post("/messages", { type: "direct", to: [member.user_id], content: "after the crash" })
      .then((r) => r.body.id);
    await e2e.stack.start("events");
    const after = await readUntil(member, state.queue_id, (ev) => ev.some((e) => e.type === "message"), 15_000, last);
    expect(after.events.filter((e) => e.type === "message").map((e) => e.message.id)).toEqual([id2]);
  });
});

