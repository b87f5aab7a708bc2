import { describe, expect, it } from "vitest";
import type { ApiClient, DemoOutput } from "@chat/testkit";
import { ok, register as registerQueue, sleep, useDemoStack, type EventQueue } from "@chat/testkit/e2e";
import { UserGroupAddEvent, UserStatusEvent, RealmLinkifiersEvent } from "@chat/contracts";

/** Issue 5 through the whole stack: the gateway, the demo organization's roles, real queues. */

let demo: DemoOutput;
let c: Record<"owner" | "admin" | "moderator" | "member" | "member2" | "guest" | "bot", ApiClient>;
let o2: Record<"owner" | "member", ApiClient>;
const e2e = useDemoStack({}, (s) => {
  demo = s.demo;
  const u = demo.orgs[0].users;
  c = { owner: s.as(u.owner), admin: s.as(u.admin), moderator: s.as(u.moderator), member: s.as(u.member), member2: s.as(u.member2), guest: s.as(u.guest), bot: s.as(u.bot) };
  o2 = { owner: s.as(demo.orgs[1].users.owner), member: s.as(demo.orgs[1].users.member) };
});

/** Polls a queue until an event matching `pred` arrives (delivery goes outbox -> broker -> events). */
async function waitForEvent(client: ApiClient, queue: EventQueue, pred: (e: any) => boolean, timeoutMs = 15_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last = queue.last_event_id;
  while (Date.now() < deadline) {
    const r = ok(await client.get("/events", { queue_id: queue.queue_id, last_event_id: last, dont_block: true }));
    for (const e of r.events) {
      if (pred(e)) return e;
      last = Math.max(last, e.id);
    }
    await sleep(200);
  }
  throw new Error("event did not arrive");
}

/** A queue read from register's last_event_id (earlier events may be in its state). */
function register(client: ApiClient, eventTypes: string[], capabilities: Record<string, unknown> = {}): Promise<EventQueue> {
  return registerQueue(client, { event_types: eventTypes, fetch_event_types: eventTypes, client_capabilities: { notification_settings_null: false, ...capabilities } });
}

describe("user groups through the gateway", () => {
  it("every role but guests and bots may list groups; a created group reaches other members' queues only", async () => {
    for (const who of ["owner", "admin", "moderator", "member"] as const) ok(await c[who].get("/user_groups"));
    expect((await c.guest.get("/user_groups")).body).toMatchObject({ result: "error", code: "BAD_REQUEST", msg: "Not allowed for guest users" });
    expect((await c.bot.get("/user_groups")).body.msg).toBe("This endpoint does not accept bot requests.");

    const q = await register(c.member2, ["user_group"]);
    const q2 = await register(o2.member, ["user_group"]);
    ok(await c.member.post("/user_groups/create", { name: "e2e-team", description: "E2E", members: [demo.orgs[0].users.member.user_id] }));
    const ev = await waitForEvent(c.member2, q, (e) => e.type === "user_group" && e.op === "add");
    const { id: _id, ...event } = ev;
    expect(UserGroupAddEvent.parse(event).group).toMatchObject({ name: "e2e-team", members: [demo.orgs[0].users.member.user_id] });
    const other = ok(await o2.member.get("/events", { queue_id: q2.queue_id, last_event_id: q2.last_event_id, dont_block: true }));
    expect(other.events.filter((e: any) => e.type === "user_group")).toEqual([]);
    const theirs = ok(await o2.owner.get("/user_groups"));
    expect(theirs.user_groups.some((g: any) => g.name === "e2e-team")).toBe(false);
  });
});

describe("invitations through the gateway", () => {
  it("checks channel access with messaging, and the accepted invitee gets the channel and the referrer a notice", async () => {
    const pub = demo.orgs[0].channels.public.stream_id;
    const priv = demo.orgs[0].channels.private.stream_id;
    const theirPub = demo.orgs[1].channels.public.stream_id;
    expect((await c.member2.post("/invites", { invitee_emails: "x@e2e.test", stream_ids: [priv] })).body.msg).toBe(`Invalid channel ID ${priv}. No invites were sent.`);
    expect((await c.member.post("/invites", { invitee_emails: "x@e2e.test", stream_ids: [theirPub] })).body.msg).toBe(`Invalid channel ID ${theirPub}. No invites were sent.`);
    expect((await c.guest.post("/invites", { invitee_emails: "x@e2e.test", stream_ids: [] })).body.msg).toBe("Not allowed for guest users");
    ok(await c.member.post("/invites", { invitee_emails: "newbie@e2e.test", stream_ids: [pub, priv] }));
    const invites = ok(await c.admin.get("/invites")).invites;
    expect(invites.find((i: any) => i.email === "newbie@e2e.test")).toMatchObject({ invited_by_user_id: demo.orgs[0].users.member.user_id, invited_as: 400 });

    const acc = (await e2e.internalPost("/internal/invites/accept", { realm_id: String(demo.orgs[0].id), email: "newbie@e2e.test", full_name: "New Bie" })).body;
    expect(acc).toMatchObject({ result: "success", role: 400 });
    const newbie = e2e.client(acc);
    ok(await newbie.get("/users/me"));
    const deadline = Date.now() + 20_000;
    let subs: number[] = [];
    while (Date.now() < deadline) {
      subs = ok(await newbie.get("/users/me/subscriptions")).subscriptions.map((s: any) => s.stream_id);
      if (subs.includes(pub) && subs.includes(priv)) break;
      await sleep(250);
    }
    expect(subs).toEqual(expect.arrayContaining([pub, priv]));
    let notice: any;
    while (Date.now() < deadline && !notice) {
      const msgs = ok(await c.member.get("/messages", { anchor: "newest", num_before: 20, num_after: 0, narrow: [] })).messages;
      notice = msgs.find((m: any) => typeof m.content === "string" && m.content.includes("accepted your invitation"));
      if (!notice) await sleep(250);
    }
    expect(notice).toBeDefined();
    expect(notice.sender_email).toMatch(/^notification-bot@/);
  });
});

describe("status, linkifiers, push tokens", () => {
  it("status updates reach the organization as user_status with only the changed fields", async () => {
    const q = await register(c.guest, ["user_status"]);
    ok(await c.member.post("/users/me/status", { status_text: "Vacation", emoji_name: "palm_tree" }));
    const ev = await waitForEvent(c.guest, q, (e) => e.type === "user_status");
    const { id: _id, ...event } = ev;
    expect(UserStatusEvent.parse(event)).toEqual({
      type: "user_status",
      user_id: demo.orgs[0].users.member.user_id,
      status_text: "Vacation",
      emoji_name: "palm_tree",
      emoji_code: "1f334",
      reaction_type: "unicode_emoji",
    });
    expect(ok(await c.guest.get(`/users/${demo.orgs[0].users.member.user_id}/status`)).status).toMatchObject({ status_text: "Vacation" });
    expect((await o2.member.get(`/users/${demo.orgs[0].users.member.user_id}/status`)).body.msg).toBe("No such user");
  });

  it("linkifiers: administrators only; the list reaches clients that read url_template", async () => {
    const q = await register(c.member, ["realm_linkifiers"], { linkifier_url_template: true });
    expect((await c.moderator.post("/realm/filters", { pattern: "#(?P<id>[0-9]+)", url_template: "https://t.test/{id}" })).body).toMatchObject({ code: "UNAUTHORIZED_PRINCIPAL" });
    const { id } = ok(await c.admin.post("/realm/filters", { pattern: "#(?P<id>[0-9]+)", url_template: "https://t.test/{id}" }));
    const ev = await waitForEvent(c.member, q, (e) => e.type === "realm_linkifiers");
    const { id: _eid, ...event } = ev;
    expect(RealmLinkifiersEvent.parse(event).realm_linkifiers).toEqual([{ id, pattern: "#(?P<id>[0-9]+)", url_template: "https://t.test/{id}" }]);
    expect(ok(await c.guest.get("/realm/linkifiers")).linkifiers).toHaveLength(1);
    expect(ok(await o2.member.get("/realm/linkifiers")).linkifiers).toEqual([]);
    expect((await o2.owner.delete(`/realm/filters/${id}`)).body.msg).toBe("Linkifier not found.");
  });

  it("push tokens belong to their user", async () => {
    ok(await c.member.post("/users/me/android_gcm_reg_id", { token: "e2e-device" }));
    expect((await o2.member.delete("/users/me/android_gcm_reg_id", { token: "e2e-device" })).body.msg).toBe("Token does not exist");
    expect((await c.member.delete("/users/me/android_gcm_reg_id", { token: "" })).body.msg).toBe("Empty or invalid length token");
    ok(await c.member.delete("/users/me/android_gcm_reg_id", { token: "e2e-device" }));
  });

  it("a POST with method=DELETE is served as the DELETE (Zulip's method override)", async () => {
    ok(await c.member.post("/users/me/android_gcm_reg_id", { token: "override-device" }));
    const removed = ok(await c.member.post("/users/me/android_gcm_reg_id", { token: "override-device", method: "DELETE" }));
    expect(removed).not.toHaveProperty("ignored_parameters_unsupported");
    expect((await c.member.delete("/users/me/android_gcm_reg_id", { token: "override-device" })).body.msg).toBe("Token does not exist");
  });
});

describe("GET /users/me through the gateway", () => {
  it("carries max_message_id: the newest message the user received, from messaging", async () => {
    const me = ok(await c.member2.get("/users/me"));
    const to = [me.user_id];
    const sent = ok(await c.member.post("/messages", { type: "private", to: JSON.stringify(to), content: "newest for max_message_id" }));
    const after = ok(await c.member2.get("/users/me"));
    expect(after.max_message_id).toBe(sent.id);
    expect(after.max_message_id).toBeGreaterThan(typeof me.max_message_id === "number" ? me.max_message_id : -2);
    // A message member2 did not receive does not move it.
    ok(await c.member.post("/messages", { type: "private", to: JSON.stringify([ok(await c.admin.get("/users/me")).user_id]), content: "not for member2" }));
    expect(ok(await c.member2.get("/users/me")).max_message_id).toBe(sent.id);
  });
});

describe("DELETE /users/me through the gateway", () => {
  it("the only owner is refused; a member's key stops working at once", async () => {
    const res = await o2.owner.delete("/users/me");
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: "CANNOT_DEACTIVATE_LAST_USER", is_last_owner: true, entity: "organization owner" });

    const created = ok(await c.admin.post("/users", { email: "shortlived@e2e.test", password: "pw-123456", full_name: "Short Lived" }));
    const login = ok(await e2e.client().post("/fetch_api_key", { username: "shortlived@e2e.test", password: "pw-123456" }));
    const leaver = e2e.client({ email: "shortlived@e2e.test", api_key: login.api_key });
    expect(ok(await leaver.get("/users/me")).user_id).toBe(created.user_id);
    ok(await leaver.delete("/users/me"));
    const started = Date.now();
    let last: any;
    while (Date.now() - started < 3000) {
      last = await leaver.get("/users/me");
      if (last.status === 401) break;
      await sleep(100);
    }
    expect(last.status).toBe(401);
    expect(last.body.msg).toBe("Account is deactivated");
    expect(Date.now() - started).toBeLessThan(1500);
  });
});
