import { describe, expect, it } from "vitest";
import type { DemoOrg, DemoUser } from "@chat/testkit";
import { NO_RATE_LIMITS, ok, until, useDemoStack } from "@chat/testkit/e2e";

/**
 * Requirements of the contract (spec/team-chat-api.md) that no other test pinned down, found by
 * tracing every table row and behaviour sentence of sections 2-9 to the tests that assert it.
 * Each test names the section it traces; all of them go through the gateway as a client would.
 */

let org: DemoOrg;
const e2e = useDemoStack(NO_RATE_LIMITS, ({ demo }) => ([org] = demo.orgs));
const { as } = e2e;
const member = (): DemoUser => org.users.member;

/** A name no other test of this file uses. */
let seq = 0;
const fresh = (what: string) => `trace-${what}-${++seq}`;

async function systemGroup(name: string): Promise<number> {
  const { user_groups } = ok(await as(member()).get("/user_groups"));
  return user_groups.find((g: any) => g.name === name).id;
}

async function mySubscription(user: DemoUser, name: string): Promise<any> {
  const { subscriptions } = ok(await as(user).get("/users/me/subscriptions"));
  return subscriptions.find((s: any) => s.name === name);
}

describe("section 4 and 5.2: every endpoint of section 4 requires authentication", () => {
  const endpoints: Array<[string, string, Record<string, unknown>]> = [
    ["POST", "/messages", { type: "stream", to: "general", topic: "t", content: "x" }],
    ["POST", "/scheduled_messages", { type: "stream", to: 1, topic: "t", content: "x", scheduled_delivery_timestamp: 4102444800 }],
    ["PATCH", "/scheduled_messages/1", { content: "x" }],
    ["GET", "/events", { queue_id: "x" }],
    ["POST", "/users/me/subscriptions/properties", { subscription_data: "[]" }],
    ["POST", "/invites", { invitee_emails: "x@example.com", stream_ids: "[]" }],
    ["POST", "/users/me/status", { status_text: "x" }],
    ["POST", "/drafts", { drafts: "[]" }],
    ["PATCH", "/drafts/1", { draft: "{}" }],
    ["DELETE", "/users/me/subscriptions", { subscriptions: '["general"]' }],
    ["POST", "/messages/flags", { messages: "[1]", op: "add", flag: "read" }],
    ["POST", "/user_groups/create", { name: "g", description: "d", members: "[]" }],
    ["POST", "/user_groups/1/subgroups", { add: "[]" }],
    ["GET", "/user_groups", {}],
    ["GET", "/realm/linkifiers", {}],
    ["DELETE", "/attachments/1", {}],
    ["DELETE", "/users/me", {}],
    ["DELETE", "/users/me/android_gcm_reg_id", { token: "x" }],
    ["GET", "/users/me/subscriptions", {}],
    ["DELETE", "/messages/1", {}],
  ];

  it("without credentials: 401 UNAUTHORIZED, API authentication or a session required", async () => {
    const anonymous = e2e.client();
    for (const [method, path, params] of endpoints) {
      const res = await anonymous.request(method, path, params);
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.body, `${method} ${path}`).toEqual({ result: "error", code: "UNAUTHORIZED", msg: "Not logged in: API authentication or user session required" });
    }
  });

  it("with a wrong API key: 401 UNAUTHORIZED as well", async () => {
    const wrong = e2e.client({ email: member().email, api_key: "a".repeat(32) });
    for (const [method, path, params] of endpoints) {
      const res = await wrong.request(method, path, params);
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.body.code, `${method} ${path}`).toBe("UNAUTHORIZED");
    }
  });
});

describe("section 2.2: which messages start read for their sender", () => {
  const sendAs = async (client: string | null) => {
    const path = client === null ? "/messages" : `/messages?client=${encodeURIComponent(client)}`;
    const { id } = ok(await as(member()).post(path, { type: "stream", to: org.channels.public.name, topic: fresh("read"), content: "hello" }));
    const { message } = ok(await as(member()).get(`/messages/${id}`));
    return message.flags as string[];
  };

  it("an API client's own message starts unread; a Zulip app's starts read", async () => {
    expect(await sendAs("ZulipPython")).not.toContain("read");
    expect(await sendAs("ZulipMobile")).toContain("read");
  });

  it("a client whose name says it is a desktop app counts as a Zulip app (Zulip's heuristic)", async () => {
    expect(await sendAs("Zulip Desktop App")).toContain("read");
  });
});

describe("section 4.1 / 4.2: a topic given for a direct message is ignored", () => {
  it("POST /messages: the direct message has no topic", async () => {
    const { id } = ok(await as(member()).post("/messages", { type: "direct", to: [org.users.member2.user_id], topic: "not a topic", content: "psst" }));
    const { message } = ok(await as(member()).get(`/messages/${id}`));
    expect(message).toMatchObject({ type: "private", subject: "" });
  });

  it("POST /scheduled_messages: the scheduled direct message has no topic", async () => {
    const { scheduled_message_id } = ok(
      await as(member()).post("/scheduled_messages", {
        type: "direct", to: [org.users.member2.user_id], topic: "not a topic", content: "later", scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 86400,
      }),
    );
    const { scheduled_messages } = ok(await as(member()).get("/scheduled_messages"));
    const mine = scheduled_messages.find((s: any) => s.scheduled_message_id === scheduled_message_id);
    expect(mine).toMatchObject({ type: "private", to: [org.users.member2.user_id] });
    expect(mine).not.toHaveProperty("topic");
    ok(await as(member()).delete(`/scheduled_messages/${scheduled_message_id}`));
  });
});

describe("section 2.4: what a draft ignores", () => {
  it("an unaddressed draft ignores its `to`; direct and unaddressed drafts ignore their topic", async () => {
    const { ids } = ok(
      await as(member()).post("/drafts", {
        drafts: [
          { type: "", to: [org.users.member2.user_id], topic: "dropped", content: "nobody yet", timestamp: 1700000000 },
          { type: "private", to: [org.users.member2.user_id], topic: "dropped", content: "to one", timestamp: 1700000001 },
        ],
      }),
    );
    const { drafts } = ok(await as(member()).get("/drafts"));
    const byId = new Map(drafts.map((d: any) => [d.id, d]));
    expect(byId.get(ids[0])).toEqual({ id: ids[0], type: "", to: [], topic: "", content: "nobody yet", timestamp: 1700000000 });
    expect(byId.get(ids[1])).toEqual({ id: ids[1], type: "private", to: [org.users.member2.user_id], topic: "", content: "to one", timestamp: 1700000001 });
    // An edit ignores them the same way.
    ok(await as(member()).patch(`/drafts/${ids[1]}`, { draft: { type: "", to: [org.users.member2.user_id], topic: "dropped", content: "edited", timestamp: 1700000002 } }));
    const edited = ok(await as(member()).get("/drafts")).drafts.find((d: any) => d.id === ids[1]);
    expect(edited).toEqual({ id: ids[1], type: "", to: [], topic: "", content: "edited", timestamp: 1700000002 });
    for (const id of ids) ok(await as(member()).delete(`/drafts/${id}`));
  });
});

describe("section 4.5 and 9.3: POST /users/me/subscriptions/properties answers", () => {
  it("an empty success, without the subscription_data echo of feature levels before 111", async () => {
    const res = await as(member()).post("/users/me/subscriptions/properties", {
      subscription_data: [{ stream_id: org.channels.public.stream_id, property: "pin_to_top", value: true }],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ result: "success", msg: "" });
  });

  it("with unsupported parameters listed in ignored_parameters_unsupported (feature level 167)", async () => {
    const res = await as(member()).post("/users/me/subscriptions/properties", {
      subscription_data: [{ stream_id: org.channels.public.stream_id, property: "pin_to_top", value: false }],
      shiny: "yes",
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ result: "success", msg: "", ignored_parameters_unsupported: ["shiny"] });
  });
});

describe("section 9.4: older names of parameters", () => {
  it("can_remove_subscribers_group_id still sets can_remove_subscribers_group (creating and editing a channel)", async () => {
    const name = fresh("crsg");
    const moderators = await systemGroup("role:moderators");
    const created = ok(await as(org.users.admin).post("/users/me/subscriptions", { subscriptions: [{ name }], can_remove_subscribers_group_id: moderators }));
    expect(created).not.toHaveProperty("ignored_parameters_unsupported");
    const sub = await mySubscription(org.users.admin, name);
    expect(sub.can_remove_subscribers_group).toBe(moderators);
    const admins = await systemGroup("role:administrators");
    const edited = ok(await as(org.users.admin).patch(`/streams/${sub.stream_id}`, { can_remove_subscribers_group_id: admins }));
    expect(edited).not.toHaveProperty("ignored_parameters_unsupported");
    expect((await mySubscription(org.users.admin, name)).can_remove_subscribers_group).toBe(admins);
  });

  it("invite_expires_in_days was replaced by invite_expires_in_minutes: ignored, and the default validity applies", async () => {
    const email = `${fresh("days")}@example.com`;
    const res = ok(await as(org.users.admin).post("/invites", { invitee_emails: email, stream_ids: [], invite_expires_in_days: 1 }));
    expect(res.ignored_parameters_unsupported).toEqual(["invite_expires_in_days"]);
    const { invites } = ok(await as(org.users.admin).get("/invites"));
    const sent = invites.find((i: any) => i.email === email);
    expect(sent.expiry_date - sent.invited).toBe(14400 * 60);
  });

  it("url_format was replaced by url_template (feature level 176): a linkifier needs the new name", async () => {
    const res = await as(org.users.admin).post("/realm/filters", { pattern: "#(?P<id>[0-9]+)", url_format: "https://trace.test/%(id)s" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", code: "REQUEST_VARIABLE_MISSING", msg: "Missing 'url_template' argument", var_name: "url_template" });
    const { linkifiers } = ok(await as(member()).get("/realm/linkifiers"));
    for (const l of linkifiers) expect(Object.keys(l).sort()).toEqual(["id", "pattern", "url_template"]);
  });

  it("a scheduled message id on create was removed: it makes a new scheduled message and edits none", async () => {
    const at = Math.floor(Date.now() / 1000) + 86400;
    const base = { type: "stream", to: org.channels.public.stream_id, topic: fresh("sched"), scheduled_delivery_timestamp: at };
    const first = ok(await as(member()).post("/scheduled_messages", { ...base, content: "first" }));
    const second = ok(await as(member()).post("/scheduled_messages", { ...base, content: "second", scheduled_message_id: first.scheduled_message_id }));
    expect(second.scheduled_message_id).not.toBe(first.scheduled_message_id);
    expect(second.ignored_parameters_unsupported).toEqual(["scheduled_message_id"]);
    const { scheduled_messages } = ok(await as(member()).get("/scheduled_messages"));
    const content = (id: number) => scheduled_messages.find((s: any) => s.scheduled_message_id === id)?.content;
    expect(content(first.scheduled_message_id)).toBe("first");
    expect(content(second.scheduled_message_id)).toBe("second");
    for (const id of [first.scheduled_message_id, second.scheduled_message_id]) ok(await as(member()).delete(`/scheduled_messages/${id}`));
  });
});

describe("section 2.5: a new subscription's values", () => {
  it("notification settings inherit (null), retention inherits (null), traffic unknown (null); creator, time and defaults filled in", async () => {
    const name = fresh("defaults");
    const before = Math.floor(Date.now() / 1000);
    ok(await as(member()).post("/users/me/subscriptions", { subscriptions: [{ name }] }));
    const sub = await mySubscription(member(), name);
    expect(sub).toMatchObject({
      name,
      creator_id: member().user_id,
      invite_only: false,
      is_web_public: false,
      desktop_notifications: null,
      email_notifications: null,
      wildcard_mentions_notify: null,
      push_notifications: null,
      audible_notifications: null,
      pin_to_top: false,
      is_muted: false,
      in_home_view: true,
      is_announcement_only: false,
      stream_post_policy: 1,
      message_retention_days: null,
      history_public_to_subscribers: true,
      stream_weekly_traffic: null,
      can_remove_subscribers_group: await systemGroup("role:administrators"),
    });
    expect(sub.color).toMatch(/^#[0-9a-fA-F]{6}$/);
    expect(Number.isInteger(sub.date_created)).toBe(true);
    expect(sub.date_created).toBeGreaterThanOrEqual(before - 5);
    expect(sub.date_created).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 5);
    // -1 keeps messages forever; null goes back to the organization's setting.
    ok(await as(org.users.owner).post("/users/me/subscriptions", { subscriptions: [{ name }] }));
    ok(await as(org.users.owner).patch(`/streams/${sub.stream_id}`, { message_retention_days: JSON.stringify("unlimited") }));
    expect((await mySubscription(member(), name)).message_retention_days).toBe(-1);
    ok(await as(org.users.owner).patch(`/streams/${sub.stream_id}`, { message_retention_days: JSON.stringify("realm_default") }));
    expect((await mySubscription(member(), name)).message_retention_days).toBeNull();
  });
});

describe("section 4: endpoints whose response is an empty success", () => {
  const empty = (res: { status: number; body: any }) => {
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ result: "success", msg: "" });
  };

  it("PATCH /scheduled_messages/{id}, PATCH /drafts/{id}, POST /user_groups/create, POST /user_groups/{id}/subgroups", async () => {
    const { scheduled_message_id } = ok(
      await as(member()).post("/scheduled_messages", {
        type: "stream", to: org.channels.public.stream_id, topic: fresh("empty"), content: "x", scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 86400,
      }),
    );
    empty(await as(member()).patch(`/scheduled_messages/${scheduled_message_id}`, { content: "y" }));
    ok(await as(member()).delete(`/scheduled_messages/${scheduled_message_id}`));

    const { ids } = ok(await as(member()).post("/drafts", { drafts: [{ type: "", to: [], topic: "", content: "d" }] }));
    empty(await as(member()).patch(`/drafts/${ids[0]}`, { draft: { type: "", to: [], topic: "", content: "e" } }));
    ok(await as(member()).delete(`/drafts/${ids[0]}`));

    const [outer, inner] = [fresh("outer"), fresh("inner")];
    empty(await as(member()).post("/user_groups/create", { name: outer, description: "d", members: [member().user_id] }));
    empty(await as(member()).post("/user_groups/create", { name: inner, description: "d", members: [org.users.member2.user_id] }));
    const groups = ok(await as(member()).get("/user_groups")).user_groups;
    const id = (n: string) => groups.find((g: any) => g.name === n).id;
    empty(await as(org.users.admin).post(`/user_groups/${id(outer)}/subgroups`, { add: [id(inner)] }));
    empty(await as(org.users.admin).post(`/user_groups/${id(outer)}/subgroups`, { delete: [id(inner)] }));
  });

  it("DELETE /attachments/{id}, DELETE /users/me/android_gcm_reg_id, DELETE /messages/{id}, DELETE /users/me", async () => {
    ok(await e2e.postFile(member(), "/user_uploads", { name: "trace.txt", type: "text/plain", data: "trace" }));
    const { attachments } = ok(await as(member()).get("/attachments"));
    const attachment = attachments.find((a: any) => a.name === "trace.txt");
    empty(await as(member()).delete(`/attachments/${attachment.id}`));

    ok(await as(member()).post("/users/me/android_gcm_reg_id", { token: "trace-token" }));
    empty(await as(member()).delete("/users/me/android_gcm_reg_id", { token: "trace-token" }));

    const { id } = ok(await as(member()).post("/messages", { type: "stream", to: org.channels.public.name, topic: fresh("delete"), content: "gone soon" }));
    empty(await as(org.users.admin).delete(`/messages/${id}`));

    const leaver = ok(await e2e.internalPost("/internal/users", { realm_id: String(org.id), email: `${fresh("leaver")}@example.com`, full_name: "Leaver" }));
    empty(await e2e.client(leaver).delete("/users/me"));
  });
});

describe("section 4.6: notify_referrer_on_join", () => {
  it("the inviter hears of the new account only when the invitation asked for it", async () => {
    const inviter = org.users.admin;
    const quiet = `${fresh("quiet")}@example.com`;
    const loud = `${fresh("loud")}@example.com`;
    ok(await as(inviter).post("/invites", { invitee_emails: quiet, stream_ids: [], notify_referrer_on_join: false }));
    ok(await as(inviter).post("/invites", { invitee_emails: loud, stream_ids: [] }));
    ok(await e2e.internalPost("/internal/invites/accept", { realm_id: String(org.id), email: quiet, full_name: "Quiet Joiner" }));
    ok(await e2e.internalPost("/internal/invites/accept", { realm_id: String(org.id), email: loud, full_name: "Loud Joiner" }));
    const notices = async () => {
      const { messages } = ok(await as(inviter).get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow: [{ operator: "is", operand: "dm" }] }));
      return messages.map((m: any) => m.content as string).filter((c: string) => c.includes("accepted your invitation"));
    };
    const seen = await until("the notice of the invitation that asked for one", async () => {
      const got = await notices();
      return got.some((c: string) => c.includes("Loud Joiner")) && got;
    });
    expect(seen.filter((c: string) => c.includes("Quiet Joiner"))).toEqual([]);
  });
});

describe("section 2.2: flags the server keeps, changed when the message is edited", () => {
  it("has_alert_word, stream_wildcard_mentioned, topic_wildcard_mentioned and wildcard_mentioned follow the content", async () => {
    const reader = org.users.member2;
    const word = `tracealert${Date.now() % 100000}`;
    ok(await as(reader).post("/users/me/alert_words", { alert_words: [word] }));
    const topic = fresh("edit-flags");
    const send = (content: string, who: DemoUser = member()) =>
      as(who).post("/messages", { type: "stream", to: org.channels.public.name, topic, content });
    ok(await send("I was here first", reader)); // makes the reader a participant of the topic
    const { id } = ok(await send("plain words"));
    const flagsOf = async () => {
      const { message } = ok(await as(reader).get(`/messages/${id}`));
      return (message.flags as string[]).filter((f) => f !== "read").sort();
    };
    const edit = async (content: string) => ok(await as(member()).patch(`/messages/${id}`, { content }));
    expect(await flagsOf()).toEqual([]);
    // The alert word comes from accounts: wait until messaging knows it.
    await until("the alert word to reach messaging", async () => {
      await edit(`now with ${word} and a counter ${Date.now()}`);
      return (await flagsOf()).includes("has_alert_word");
    });
    await edit("hey @**all**");
    expect(await flagsOf()).toEqual(["stream_wildcard_mentioned", "wildcard_mentioned"]);
    // Content without a wildcard clears both (a topic wildcard after a channel one would leave
    // the channel one set, as Zulip's update_user_message_flags does).
    await edit("plain words");
    expect(await flagsOf()).toEqual([]);
    await edit("hey @**topic**");
    expect(await flagsOf()).toEqual(["topic_wildcard_mentioned", "wildcard_mentioned"]);
    await edit("plain words again");
    expect(await flagsOf()).toEqual([]);
  });
});
