import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAccounts, type Accounts, type Org } from "./helpers";

let t: Accounts;
let org: Org;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
});
afterAll(() => t?.close());

const state = async (as: any, params: Record<string, unknown> = {}) => {
  const { result: _r, msg: _m, ...rest } = await t.ok(await t.call("POST", "/internal/register_state/accounts", { as, params }));
  return rest as Record<string, any>;
};

describe("register state (accounts slice)", () => {
  it("returns only the keys of the requested event types", async () => {
    expect(Object.keys(await state(org.member.as, { fetch_event_types: ["user_settings"] }))).toEqual(["user_settings"]);
    expect(Object.keys(await state(org.member.as, { fetch_event_types: ["message", "subscription"] }))).toEqual([]);
    const all = await state(org.member.as, { fetch_event_types: null });
    for (const key of ["realm_name", "realm_users", "realm_user_groups", "user_status", "user_settings", "realm_linkifiers", "realm_filters", "realm_user_settings_defaults"]) {
      expect(all, key).toHaveProperty(key);
    }
    // The events service owns these.
    for (const key of ["queue_id", "last_event_id", "max_message_length", "zulip_feature_level"]) expect(all).not.toHaveProperty(key);
  });

  it("realm: settings, limits and the organization's identity", async () => {
    const s = await state(org.member.as, { fetch_event_types: ["realm"] });
    expect(s).toMatchObject({
      realm_name: expect.any(String),
      realm_wildcard_mention_policy: 5,
      realm_invite_to_stream_policy: 1,
      realm_waiting_period_threshold: 0,
      realm_message_retention_days: -1,
      max_stream_name_length: 60,
      max_stream_description_length: 1024,
      realm_new_stream_announcements_stream_id: -1,
    });
    expect(typeof s.realm_date_created).toBe("number");
    expect(s.realm_url).toBe(t.config.EXTERNAL_URL.replace(/\/$/, ""));
  });

  it("realm_user: active, inactive and cross-realm bots, plus the caller's own keys and permissions", async () => {
    const member = await state(org.member.as, { fetch_event_types: ["realm_user"], client_gravatar: false });
    expect(member.realm_users.map((u: any) => u.user_id)).toEqual(
      expect.arrayContaining([org.owner.user_id, org.admin.user_id, org.moderator.user_id, org.member.user_id, org.guest.user_id, org.bot.user_id]),
    );
    expect(member.realm_non_active_users).toEqual([]);
    expect(member.cross_realm_bots).toHaveLength(1);
    expect(member.cross_realm_bots[0]).toMatchObject({ is_bot: true, is_system_bot: true, full_name: "Notification Bot" });
    expect(member).toMatchObject({
      user_id: org.member.user_id,
      email: org.member.email,
      full_name: "Mel Member",
      is_admin: false,
      is_owner: false,
      is_moderator: false,
      is_guest: false,
      can_create_streams: true,
      can_subscribe_other_users: true,
      can_invite_others_to_realm: true,
      avatar_source: "G",
    });
    expect(member.avatar_url).toMatch(/gravatar/);
    const guest = await state(org.guest.as, { fetch_event_types: ["realm_user"] });
    expect(guest).toMatchObject({ is_guest: true, can_create_streams: false, can_subscribe_other_users: false, can_invite_others_to_realm: false });
    // The own avatar is a full URL whatever client_gravatar says (Zulip forces it for the own user).
    expect(guest.avatar_url).toMatch(/gravatar/);
    const owner = await state(org.owner.as, { fetch_event_types: ["realm_user"] });
    expect(owner).toMatchObject({ is_owner: true, is_admin: true });
  });

  it("user_settings as an object, or flattened for legacy clients", async () => {
    const modern = await state(org.member.as, { fetch_event_types: ["user_settings", "update_display_settings"], client_capabilities: { user_settings_object: true } });
    expect(Object.keys(modern)).toEqual(["user_settings"]);
    expect(modern.user_settings).toMatchObject({ presence_enabled: true, enable_drafts_synchronization: true, emojiset: "google" });
    const legacy = await state(org.member.as, { fetch_event_types: ["update_display_settings", "update_global_notifications"] });
    expect(legacy).toMatchObject({ emojiset: "google", presence_enabled: true, enable_sounds: true });
  });
});
