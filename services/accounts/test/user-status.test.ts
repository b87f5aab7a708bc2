import { UserSettingsUpdateEvent, UserStatusEvent } from "@chat/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startAccounts, type Accounts, type Org } from "./helpers";

let t: Accounts;
let org: Org;
let other: Org;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
  other = await t.createOrg();
});
afterAll(() => t?.close());

const set = (as: any, params: Record<string, unknown>) => t.call("POST", "/users/me/status", { as, params });
const get = async (userId: number, as = org.member2.as) => (await t.ok(await t.call("GET", `/users/${userId}/status`, { as }))).status;

describe("POST /users/me/status", () => {
  it("changes only the passed fields and sends only those in user_status", async () => {
    await t.markOutbox();
    await t.ok(await set(org.member.as, { status_text: "  In a meeting  " }));
    expect(await get(org.member.user_id)).toEqual({ status_text: "In a meeting" });
    await t.ok(await set(org.member.as, { emoji_name: "car", emoji_code: "1f697", reaction_type: "unicode_emoji" }));
    expect(await get(org.member.user_id)).toEqual({ status_text: "In a meeting", emoji_name: "car", emoji_code: "1f697", reaction_type: "unicode_emoji" });
    const events = await t.outbox();
    expect(events.map((e) => UserStatusEvent.parse(e.payload.client.event))).toEqual([
      { type: "user_status", user_id: org.member.user_id, status_text: "In a meeting" },
      { type: "user_status", user_id: org.member.user_id, emoji_name: "car", emoji_code: "1f697", reaction_type: "unicode_emoji" },
    ]);
    expect(events[0].payload.client.users).toContain(org.guest.user_id);
    expect(events[0].payload.client.users).not.toContain(other.member.user_id);
  });

  it("knows Zulip's own emoji names, which win over iamcal's (smile is 1f642)", async () => {
    for (const [name, code] of [["thumbs_up", "1f44d"], ["+1", "1f44d"], ["big_smile", "1f604"], ["working_on_it", "1f6e0"], ["smile", "1f642"]]) {
      await t.ok(await set(org.member2.as, { emoji_name: name }));
      expect(await get(org.member2.user_id)).toEqual({ emoji_name: name, emoji_code: code, reaction_type: "unicode_emoji" });
    }
    await t.ok(await set(org.member2.as, { status_text: "Busy", emoji_name: "working_on_it", emoji_code: "1f6e0", reaction_type: "unicode_emoji" }));
    await t.ok(await set(org.member2.as, { emoji_name: "smile", emoji_code: "1f642", reaction_type: "unicode_emoji" }));
    expectError(await set(org.member2.as, { emoji_name: "smile", emoji_code: "1f604", reaction_type: "unicode_emoji" }), 400, "BAD_REQUEST", "Invalid emoji name.");
    await t.ok(await set(org.member2.as, { status_text: "", emoji_name: "" }));
  });

  it("looks an emoji up by name alone, and clears it with an empty name", async () => {
    await t.ok(await set(org.member2.as, { emoji_name: "heart" }));
    expect(await get(org.member2.user_id)).toEqual({ emoji_name: "heart", emoji_code: "2764", reaction_type: "unicode_emoji" });
    await t.ok(await set(org.member2.as, { emoji_name: "zulip" }));
    expect(await get(org.member2.user_id)).toEqual({ emoji_name: "zulip", emoji_code: "zulip", reaction_type: "zulip_extra_emoji" });
    await t.ok(await set(org.member2.as, { emoji_name: "" }));
    expect(await get(org.member2.user_id)).toEqual({});
  });

  it("stores away as the inverse of presence_enabled, with the setting's events (the legacy one too)", async () => {
    await t.markOutbox();
    await t.ok(await set(org.admin.as, { away: true }));
    expect(await get(org.admin.user_id)).toEqual({ away: true });
    const events = await t.outbox();
    // The presence change that turning presence_enabled off makes comes between them, as in Zulip.
    expect(events.map((e) => e.type)).toEqual([
      "accounts.user_settings.updated",
      "accounts.global_notifications.updated",
      "accounts.presence.changed",
      "accounts.user_status.updated",
    ]);
    expect(UserSettingsUpdateEvent.parse(events[0].payload.client.event)).toMatchObject({ property: "presence_enabled", value: false });
    expect(events[0].payload.client.users).toEqual([org.admin.user_id]);
    // Clients that did not declare user_settings_object learn it as PATCH /settings tells them.
    expect(events[1].payload.client).toEqual({
      event: { type: "update_global_notifications", user: org.admin.email, notification_name: "presence_enabled", setting: false },
      users: [org.admin.user_id],
    });
    expect(events[3].payload.client.event).toEqual({ type: "user_status", user_id: org.admin.user_id, away: true });
    const state = await t.ok(await t.call("POST", "/internal/register_state/accounts", { as: org.admin.as, params: { fetch_event_types: ["user_status", "user_settings"] } }));
    expect(state.user_status[String(org.admin.user_id)]).toEqual({ away: true });
    expect(state.user_settings.presence_enabled).toBe(false);
    await t.ok(await set(org.admin.as, { away: false }));
    expect(await get(org.admin.user_id)).toEqual({});
  });

  it("refuses every bad form of spec 4.7 with Zulip's messages, changing nothing", async () => {
    await t.ok(await set(org.moderator.as, { status_text: "keep" }));
    await t.markOutbox();
    const as = org.moderator.as;
    expectError(await set(as, {}), 400, "BAD_REQUEST", "Client did not pass any new values.");
    expectError(await set(as, { emoji_code: "1f697" }), 400, "BAD_REQUEST", "Client did not pass any new values.");
    expectError(await set(as, { status_text: "x".repeat(61) }), 400, "BAD_REQUEST", "status_text is too long (limit: 60 characters)");
    expectError(await set(as, { status_text: "ok", emoji_code: "1f697" }), 400, "BAD_REQUEST", "Client must pass emoji_name if they pass either emoji_code or reaction_type.");
    expectError(await set(as, { status_text: "ok", reaction_type: "unicode_emoji" }), 400, "BAD_REQUEST", "Client must pass emoji_name if they pass either emoji_code or reaction_type.");
    expectError(await set(as, { emoji_name: "definitely_not_an_emoji" }), 400, "BAD_REQUEST", "Emoji 'definitely_not_an_emoji' does not exist");
    expectError(await set(as, { emoji_name: "car", emoji_code: "1f600", reaction_type: "unicode_emoji" }), 400, "BAD_REQUEST", "Invalid emoji name.");
    expectError(await set(as, { emoji_name: "car", emoji_code: "zzzz", reaction_type: "unicode_emoji" }), 400, "BAD_REQUEST", "Invalid emoji code.");
    expectError(await set(as, { emoji_name: "party", emoji_code: "1", reaction_type: "realm_emoji" }), 400, "BAD_REQUEST", "Invalid custom emoji.");
    expectError(await set(as, { emoji_name: "zulip", emoji_code: "other", reaction_type: "zulip_extra_emoji" }), 400, "BAD_REQUEST", "Invalid emoji code.");
    expectError(await set(as, { emoji_name: "car", emoji_code: "1f697", reaction_type: "sticker" }), 400, "BAD_REQUEST", "Invalid emoji type.");
    expectError(await set(as, { away: "yes" }), 400, "BAD_REQUEST");
    expectError(await set(org.bot.as, { status_text: "beep" }), 400, "BAD_REQUEST", "This endpoint does not accept bot requests.");
    expect(await get(org.moderator.user_id)).toEqual({ status_text: "keep" });
    expect(await t.outbox()).toEqual([]);
  });

  it("accepts exactly 60 characters (after trimming) and an empty text clears", async () => {
    await t.ok(await set(org.owner.as, { status_text: ` ${"é".repeat(60)} ` }));
    expect((await get(org.owner.user_id)).status_text).toHaveLength(60);
    await t.ok(await set(org.owner.as, { status_text: "" }));
    expect(await get(org.owner.user_id)).toEqual({});
  });
});

describe("GET /users/{id}/status", () => {
  it("another organization's user is 'No such user'", async () => {
    expectError(await t.call("GET", `/users/${other.member.user_id}/status`, { as: org.member.as }), 400, "BAD_REQUEST", "No such user");
    expect(await get(org.guest.user_id)).toEqual({});
  });

  // Zulip reads the user with access_user_by_id's defaults: bots and deactivated users are refused.
  it("a bot is 'No such user'; a deactivated user 'User is deactivated'", async () => {
    expectError(await t.call("GET", `/users/${org.bot.user_id}/status`, { as: org.member.as }), 400, "BAD_REQUEST", "No such user");
    const { rows } = await t.pool.query("SELECT notification_bot_id FROM realms WHERE id = $1", [org.realmId]);
    expectError(await t.call("GET", `/users/${rows[0].notification_bot_id}/status`, { as: org.member.as }), 400, "BAD_REQUEST", "No such user");
    const gone = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: "gone@x.test", full_name: "Gone Away" } }));
    await t.ok(await set(t.identity({ ...gone, realm_id: org.realmId, role: 400 }), { status_text: "Moving on" }));
    await t.ok(await t.call("DELETE", `/users/${gone.user_id}`, { as: org.admin.as }));
    expectError(await t.call("GET", `/users/${gone.user_id}/status`, { as: org.member.as }), 400, "BAD_REQUEST", "User is deactivated");
    await t.ok(await t.call("POST", `/users/${gone.user_id}/reactivate`, { as: org.admin.as }));
    expect(await get(gone.user_id)).toEqual({ status_text: "Moving on" });
  });
});
