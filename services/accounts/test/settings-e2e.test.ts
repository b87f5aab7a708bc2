import { InternalClient } from "@chat/platform";
import { describe, expect, it } from "vitest";
import type { DemoOrg, DemoUser } from "@chat/testkit";
import { NO_RATE_LIMITS, ok, register as registerQueue, sleep, typesOf, useDemoStack, verifyAction as verify, type EventQueue } from "@chat/testkit/e2e";
import { applyEvent, type ApplyContext } from "../../events/src/lib/apply/index";
import { PNG_1X1 } from "./settings-kit";

/**
 * Issue 10 through the whole stack (gateway, accounts, messaging, events): for each settings,
 * alert word and profile change, Zulip's verify_action: register, act through the public API,
 * collect the events (each checked against our contract and Zulip's schema), apply them to the
 * registered state and compare with a fresh register. Also who receives what.
 */

let org: DemoOrg;
const e2e = useDemoStack(NO_RATE_LIMITS, ({ demo }) => ([org] = demo.orgs));
const { as } = e2e;

const MODERN = { notification_settings_null: true, bulk_message_deletion: true, user_settings_object: true, linkifier_url_template: true };
const LEGACY = { notification_settings_null: true };

const register = (u: DemoUser, params: Record<string, unknown> = {}) => registerQueue(as(u), { client_capabilities: MODERN, ...params });

/** Zulip's verify_action for a user's queue registered with `params`. Returns the events. */
function verifyAction(u: DemoUser, action: () => Promise<unknown>, params: Record<string, unknown> = {}) {
  const ctx: ApplyContext = {
    userId: u.user_id,
    fetchTypes: (params.fetch_event_types ?? params.event_types ?? null) as string[] | null,
    includeSubscribers: false,
    clientGravatar: params.client_gravatar !== false,
  };
  return verify(action, { register: () => register(u, params), apply: (state, e) => applyEvent(state, e, ctx) });
}

/** Retries an assertion briefly: the gateway learns about account changes through events. */
async function eventually(check: () => Promise<void>, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(100);
    }
  }
}

const persons = (events: any[]) => events.filter((e) => e.type === "realm_user" && e.op === "update").map((e) => e.person);

describe("settings", () => {
  const member = () => org.users.member;

  it("a modern client gets user_settings only (with language_name for the language)", async () => {
    const events = await verifyAction(member(), async () => ok(await as(member()).patch("/settings", { twenty_four_hour_time: true, color_scheme: 2 })));
    expect(typesOf(events)).toEqual(["user_settings/update", "user_settings/update"]);
    const lang = await verifyAction(member(), async () => ok(await as(member()).patch("/settings", { default_language: "fr" })));
    expect(lang.map(({ id: _id, ...e }) => e)).toEqual([{ type: "user_settings", op: "update", property: "default_language", value: "fr", language_name: "French" }]);
  });

  it("a legacy client also gets update_display_settings / update_global_notifications and the flattened state", async () => {
    const display = await verifyAction(member(), async () => ok(await as(member()).patch("/settings", { left_side_userlist: true })), { client_capabilities: LEGACY });
    expect(typesOf(display)).toEqual(["user_settings/update", "update_display_settings"]);
    expect(display[1]).toMatchObject({ user: member().email, setting_name: "left_side_userlist", setting: true });
    const notif = await verifyAction(member(), async () => ok(await as(member()).patch("/settings", { enable_stream_audible_notifications: true })), {
      client_capabilities: LEGACY,
    });
    expect(typesOf(notif)).toEqual(["user_settings/update", "update_global_notifications"]);
    expect(notif[1]).toMatchObject({ user: member().email, notification_name: "enable_stream_audible_notifications", setting: true });
    // A setting without a legacy form: user_settings only, for both kinds of clients.
    const modern = await verifyAction(member(), async () => ok(await as(member()).patch("/settings", { send_read_receipts: false })), { client_capabilities: LEGACY });
    expect(typesOf(modern)).toEqual(["user_settings/update"]);
  });

  it("a time zone change reaches the user's settings and every user's view of them", async () => {
    const own = await verifyAction(member(), async () => ok(await as(member()).patch("/settings", { timezone: "Europe/Paris" })));
    expect(typesOf(own)).toEqual(["user_settings/update", "realm_user/update"]);
    const seen = await verifyAction(org.users.guest, async () => ok(await as(member()).patch("/settings", { timezone: "America/Denver" })));
    expect(persons(seen)).toEqual([{ user_id: member().user_id, email: member().email, timezone: "America/Denver" }]);
  });

  it("alert words", async () => {
    const add = await verifyAction(member(), async () => ok(await as(member()).post("/users/me/alert_words", { alert_words: ["rollback", "p0"] })));
    expect(add.map(({ id: _id, ...e }) => e)).toEqual([{ type: "alert_words", alert_words: ["rollback", "p0"] }]);
    expect(typesOf(await verifyAction(member(), async () => ok(await as(member()).delete("/users/me/alert_words", { alert_words: ["P0"] }))))).toEqual(["alert_words"]);
  });

  it("organization defaults for new users and message retention", async () => {
    const admin = org.users.admin;
    const defaults = await verifyAction(member(), async () => ok(await as(admin).patch("/realm/user_settings_defaults", { enter_sends: true, color_scheme: 3 })));
    expect(typesOf(defaults)).toEqual(["realm_user_settings_defaults/update", "realm_user_settings_defaults/update"]);
    const retention = await verifyAction(member(), async () => ok(await as(org.users.owner).patch("/realm", { message_retention_days: 90 })));
    expect(retention.map(({ id: _id, ...e }) => e)).toEqual([{ type: "realm", op: "update", property: "message_retention_days", value: 90 }]);
    const forever = await verifyAction(member(), async () => ok(await as(org.users.owner).patch("/realm", { message_retention_days: JSON.stringify("unlimited") })));
    expect(forever[0]).toMatchObject({ property: "message_retention_days", value: -1 });
  });
});

describe("every realm_user update form, seen by another user", () => {
  const viewer = () => org.users.member;
  const subject = () => org.users.member2;

  it("an avatar or emoji file over 5 MiB gets the owner's message (the gateway streams it through), and changes nothing", async () => {
    const big = Buffer.concat([PNG_1X1, Buffer.alloc(5 * 1024 * 1024 + 1 - PNG_1X1.length)]);
    const avatar = await e2e.postFile(subject(), "/users/me/avatar", { name: "big.png", type: "image/png", data: big });
    expect(avatar.status, JSON.stringify(avatar.body)).toBe(400);
    expect(avatar.body).toMatchObject({ code: "BAD_REQUEST", msg: "Uploaded file is larger than the allowed limit of 5 MiB" });
    const emoji = await e2e.postFile(org.users.admin, "/realm/emoji/too_big", { name: "big.png", type: "image/png", data: big });
    expect(emoji.status, JSON.stringify(emoji.body)).toBe(400);
    expect(emoji.body).toMatchObject({ code: "BAD_REQUEST", msg: "Uploaded file is larger than the allowed limit of 5 MiB" });
    expect(ok(await as(subject()).get("/users/me")).avatar_url).toMatch(/gravatar/);
    expect(Object.values(ok(await as(subject()).get("/realm/emoji")).emoji).map((e: any) => e.name)).not.toContain("too_big");
  });

  it("full name (by the user and by an administrator)", async () => {
    let events = await verifyAction(viewer(), async () => ok(await as(subject()).patch("/settings", { full_name: "Maxwell Member" })));
    expect(persons(events)).toEqual([{ user_id: subject().user_id, full_name: "Maxwell Member" }]);
    events = await verifyAction(viewer(), async () => ok(await as(org.users.admin).patch(`/users/${subject().user_id}`, { full_name: "Max Member" })));
    expect(persons(events)).toEqual([{ user_id: subject().user_id, full_name: "Max Member" }]);
  });

  it("avatar upload and removal; the image is served at the root", async () => {
    let url = "";
    const upload = await verifyAction(viewer(), async () => {
      const res = await e2e.postFile(subject(), "/users/me/avatar", { name: "me.png", type: "image/png", data: PNG_1X1 });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      url = res.body.avatar_url;
    });
    expect(persons(upload)).toEqual([
      expect.objectContaining({ user_id: subject().user_id, avatar_source: "U", avatar_url: url, avatar_url_medium: expect.stringContaining("-medium.png") }),
    ]);
    const image = await fetch(e2e.demo.base_url + url);
    expect(image.status).toBe(200);
    expect(Buffer.from(await image.arrayBuffer()).equals(PNG_1X1)).toBe(true);
    const removal = await verifyAction(viewer(), async () => ok(await as(subject()).delete("/users/me/avatar")), { client_gravatar: false });
    expect(persons(removal)).toEqual([expect.objectContaining({ user_id: subject().user_id, avatar_source: "G", avatar_url: expect.stringMatching(/gravatar/) })]);
    expect((await fetch(e2e.demo.base_url + url)).status).toBe(404);
  });

  it("bot owner", async () => {
    const bot = org.users.bot;
    const events = await verifyAction(viewer(), async () => ok(await as(org.users.admin).patch(`/bots/${bot.user_id}`, { bot_owner_id: subject().user_id })));
    expect(persons(events)).toEqual([{ user_id: bot.user_id, bot_owner_id: subject().user_id }]);
  });

  it("role (with the system groups) and billing role (set by an operator)", async () => {
    const role = await verifyAction(viewer(), async () => ok(await as(org.users.admin).patch(`/users/${subject().user_id}`, { role: 300 })));
    // Zulip's order: the role, then out of role:members, into role:moderators, out of role:fullmembers.
    expect(typesOf(role)).toEqual(["realm_user/update", "user_group/remove_members", "user_group/add_members", "user_group/remove_members"]);
    expect(persons(role)).toEqual([{ user_id: subject().user_id, role: 300 }]);
    const back = await verifyAction(viewer(), async () => ok(await as(org.users.admin).patch(`/users/${subject().user_id}`, { role: 400 })));
    expect(typesOf(back)).toEqual(["realm_user/update", "user_group/remove_members", "user_group/add_members", "user_group/add_members"]);
    expect(persons(back)).toEqual([{ user_id: subject().user_id, role: 400 }]);
    // The billing role is an operator's change (the admin CLI's internal route), as in Zulip.
    const accounts = new InternalClient(e2e.stack.urls.accounts, e2e.stack.vars.INTERNAL_TOKEN);
    const billing = await verifyAction(viewer(), () =>
      accounts.call("POST", "/internal/users/billing_admin", { params: { realm_id: org.id, user_id: subject().user_id, is_billing_admin: true } }),
    );
    expect(persons(billing)).toEqual([{ user_id: subject().user_id, is_billing_admin: true }]);
  });

  it("the user's own role, seen by the user: own flags, permissions, channels and emails follow", async () => {
    // The subject's own queue: the applied events must equal a fresh register whatever the role.
    for (const role of [200, 400, 600, 300, 400]) {
      const events = await verifyAction(subject(), async () => ok(await as(org.users.owner).patch(`/users/${subject().user_id}`, { role })));
      expect(persons(events)).toContainEqual({ user_id: subject().user_id, role });
    }
  });

  it("delivery email visibility: delivery_email null for those who lose access, and the API email change", async () => {
    const hidden = await verifyAction(viewer(), async () => ok(await as(subject()).patch("/settings", { email_address_visibility: 4 })));
    const dummy = persons(hidden).find((p) => "new_email" in p)?.new_email as string;
    expect(dummy).toMatch(new RegExp(`^user${subject().user_id}@.+\\.invalid$`));
    const avatar = expect.objectContaining({ user_id: subject().user_id, avatar_source: "G", avatar_url: expect.stringMatching(/gravatar/) });
    expect(persons(hidden)).toEqual([{ user_id: subject().user_id, delivery_email: null }, { user_id: subject().user_id, new_email: dummy }, avatar]);
    // An administrator loses access too under "nobody".
    const shown = await verifyAction(org.users.admin, async () => ok(await as(subject()).patch("/settings", { email_address_visibility: 3 })));
    expect(persons(shown)).toEqual([{ user_id: subject().user_id, delivery_email: subject().email }]);
    const back = await verifyAction(viewer(), async () => ok(await as(subject()).patch("/settings", { email_address_visibility: 1 })));
    expect(persons(back)).toEqual([{ user_id: subject().user_id, delivery_email: subject().email }, { user_id: subject().user_id, new_email: subject().email }, avatar]);
  });

  it("custom profile field values (set, rendered, removed) and the field list", async () => {
    let fieldId = 0;
    const created = await verifyAction(viewer(), async () => {
      fieldId = ok(await as(org.users.admin).post("/realm/profile_fields", { name: "Motto", field_type: 1 })).id;
    });
    expect(typesOf(created)).toEqual(["custom_profile_fields"]);
    const set = await verifyAction(viewer(), async () => ok(await as(subject()).patch("/users/me/profile_data", { data: [{ id: fieldId, value: "Ship **it**" }] })));
    expect(persons(set)).toEqual([{ user_id: subject().user_id, custom_profile_field: { id: fieldId, value: "Ship **it**", rendered_value: "<p>Ship <strong>it</strong></p>" } }]);
    const removed = await verifyAction(viewer(), async () => ok(await as(subject()).delete("/users/me/profile_data", { data: [fieldId] })));
    expect(persons(removed)).toEqual([{ user_id: subject().user_id, custom_profile_field: { id: fieldId, value: null } }]);
    await verifyAction(viewer(), async () => ok(await as(subject()).patch("/users/me/profile_data", { data: [{ id: fieldId, value: "again" }] })));
    // Deleting the field drops everyone's values with the new field list.
    const deleted = await verifyAction(viewer(), async () => ok(await as(org.users.admin).delete(`/realm/profile_fields/${fieldId}`)));
    expect(typesOf(deleted)).toEqual(["custom_profile_fields"]);
  });

  it("deactivation and reactivation", async () => {
    const off = await verifyAction(viewer(), async () => ok(await as(org.users.admin).delete(`/users/${subject().user_id}`)));
    expect(persons(off)).toEqual(expect.arrayContaining([{ user_id: subject().user_id, is_active: false }]));
    // Their group memberships stay (Zulip before feature level 303): no user_group events, and
    // the registers before and after agree.
    expect(typesOf(off).filter((type) => type.startsWith("user_group/"))).toEqual([]);
    await eventually(async () => expect((await as(subject()).get("/users/me")).status).toBe(401));
    const on = await verifyAction(viewer(), async () => ok(await as(org.users.admin).post(`/users/${subject().user_id}/reactivate`)));
    expect(persons(on)).toEqual([{ user_id: subject().user_id, is_active: true }]);
    // Back among their channels' subscribers, as Zulip's do_reactivate_user tells peers.
    expect(typesOf(on)).toEqual(["realm_user/update", "subscription/peer_add"]);
    await eventually(async () => expect((await as(subject()).get("/users/me")).status).toBe(200));
  });
});

describe("who receives what", () => {
  it("a realm_user update reaches every user of the organization (guests included) and nobody outside it", async () => {
    // (The demo bot went with its new owner's deactivation above.)
    const watchers = [org.users.guest, org.users.owner, org.users.moderator];
    const outsider = e2e.demo.orgs[1].users.member;
    // Each queue is read from its register's last_event_id: an event already on its way when the
    // queue was made may be counted in the register's state, and the queue then starts after it.
    const queues = new Map<DemoUser, EventQueue>();
    for (const u of [...watchers, outsider]) queues.set(u, await register(u, { event_types: ["realm_user", "user_settings", "update_display_settings"] }));
    const legacyQueue = await register(org.users.member, { event_types: ["user_settings", "update_display_settings"], client_capabilities: LEGACY });
    const modernQueue = await register(org.users.member, { event_types: ["user_settings", "update_display_settings"] });
    ok(await as(org.users.member).patch("/settings", { full_name: "Melanie Member", high_contrast_mode: true }));
    const read = async (u: DemoUser, q: EventQueue, want: number) => {
      const deadline = Date.now() + 10_000;
      let events: any[] = [];
      while (Date.now() < deadline) {
        events = ok(await as(u).get("/events", { queue_id: q.queue_id, last_event_id: q.last_event_id, dont_block: true })).events.filter((e: any) => e.type !== "heartbeat");
        if (events.length >= want) break;
        await sleep(150);
      }
      return events;
    };
    for (const u of watchers) expect(typesOf(await read(u, queues.get(u)!, 1)), u.email).toEqual(["realm_user/update"]);
    expect(typesOf(await read(org.users.member, legacyQueue, 2))).toEqual(["user_settings/update", "update_display_settings"]);
    expect(typesOf(await read(org.users.member, modernQueue, 1))).toEqual(["user_settings/update"]);
    await sleep(300);
    expect(await read(outsider, queues.get(outsider)!, 0)).toEqual([]);
    expect(typesOf(await read(org.users.member, modernQueue, 1))).toEqual(["user_settings/update"]);
  });
});
