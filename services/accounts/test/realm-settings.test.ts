import { UpdateRealm } from "@chat/contracts";
import { AmqpClient, createLogger, identityHeaders, OutboxRelay } from "@chat/platform";
import { until } from "@chat/testkit/e2e";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doForgetDeletedChannel } from "../src/actions/realm-settings";
import { systemGroupIds } from "../src/store/user-groups";
import { consumeChannelDeletions } from "../src/consumers/channels";
import { expectError, type Accounts, type Org, type TestUser } from "./helpers";
import { startAccountsWithMessaging, type WithMessaging } from "./messaging-peer";
import { everyone, multipart, notices, PNG_1X1, registerState } from "./settings-kit";

/**
 * PATCH /realm as Zulip's update_realm: who may change what, each parameter's checks and texts,
 * the answer, the `realm` events (update, or update_dict for the message editing settings) to
 * every user of the organization and no one else, the settings in a new register and in the
 * internal realm answer other services read, and the waiting period's effect on role:fullmembers.
 */

let t: Accounts;
let org: Org;
let other: Org;
let m: WithMessaging;

beforeAll(async () => {
  m = await startAccountsWithMessaging();
  t = m.t;
  org = await t.createOrg();
  other = await t.createOrg();
});
afterAll(async () => {
  await m?.close();
});

const patchRealm = (who: TestUser, params: Record<string, unknown>) => t.call("PATCH", "/realm", { as: who.as, params });
const realmState = (who: TestUser) => registerState(t, who.as, { fetch_event_types: ["realm"] });
const internalSettings = async (o: Org) => (await t.ok(await t.call("GET", `/internal/realms/${o.realmId}`))).realm.settings;

/** A success answer, checked against the route's contract (an undeclared key fails). */
async function changed(who: TestUser, params: Record<string, unknown>) {
  const body = await t.ok(await patchRealm(who, params));
  const { result: _r, msg: _m, ignored_parameters_unsupported: _i, ...rest } = body;
  const check = UpdateRealm.response.safeParse(rest);
  expect(check.success, JSON.stringify(check.error?.issues)).toBe(true);
  return body;
}

describe("who may change organization settings", () => {
  it("administrators and owners; anyone else is refused whatever they send", async () => {
    for (const who of [org.moderator, org.member, org.guest, org.bot]) {
      expectError(await patchRealm(who, { name: "Renamed" }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
      expectError(await patchRealm(who, { mandatory_topics: true }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    }
    await t.markOutbox();
    expectError(await patchRealm(org.member, {}), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    expect(await notices(t)).toEqual([]);
    expect((await realmState(org.member)).realm_mandatory_topics).toBe(false);
  });

  it("invite_required, invite_to_realm_policy and message_retention_days are the owners' (with anything else sent, nothing changes)", async () => {
    await t.markOutbox();
    for (const params of [{ invite_required: false }, { invite_to_realm_policy: 2 }, { name: "Admin's", invite_required: false }]) {
      expectError(await patchRealm(org.admin, params), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
    }
    expect(await notices(t)).toEqual([]);
    expect(await changed(org.owner, { invite_required: false, invite_to_realm_policy: 2 })).toEqual({
      result: "success",
      msg: "",
      invite_required: false,
      invite_to_realm_policy: 2,
    });
    expect((await notices(t)).map((n) => n.event)).toEqual([
      { type: "realm", op: "update", property: "invite_required", value: false },
      { type: "realm", op: "update", property: "invite_to_realm_policy", value: 2 },
    ]);
    const withUser = (who: TestUser) => registerState(t, who.as, { fetch_event_types: ["realm", "realm_user"] });
    const state = await withUser(org.member);
    expect([state.realm_invite_required, state.realm_invite_to_realm_policy, state.can_invite_others_to_realm]).toEqual([false, 2, false]);
    expect((await withUser(org.admin)).can_invite_others_to_realm).toBe(true);
  });
});

describe("name and description", () => {
  it("are announced to every active user of the organization, and a new register shows them; the other organization is untouched", async () => {
    const o = await t.createOrg();
    await t.markOutbox();
    const res = await changed(o.admin, { name: "Renamed Org", description: "Where **we** talk" });
    expect(res).toEqual({ result: "success", msg: "", name: "updated", description: "updated" });
    const got = await notices(t);
    expect(got.map((n) => [n.type, n.event, n.users])).toEqual([
      ["accounts.realm.updated", { type: "realm", op: "update", property: "name", value: "Renamed Org" }, everyone(o)],
      ["accounts.realm.updated", { type: "realm", op: "update", property: "description", value: "Where **we** talk" }, everyone(o)],
    ]);
    expect(got.every((n) => n.payload.realm_id === o.realmId)).toBe(true);
    const state = await realmState(o.guest);
    expect([state.realm_name, state.realm_description]).toEqual(["Renamed Org", "Where **we** talk"]);
    expect((await t.ok(await t.call("GET", `/internal/realms/${o.realmId}`))).realm.name).toBe("Renamed Org");
    const theirs = await realmState(other.member);
    expect(theirs.realm_name).not.toBe("Renamed Org");
    expect(theirs.realm_description).toBe("");
  });

  it("the same value again changes nothing and sends nothing", async () => {
    const o = await t.createOrg();
    await t.ok(await patchRealm(o.admin, { name: "Same" }));
    await t.markOutbox();
    expect(await t.ok(await patchRealm(o.admin, { name: "Same", mandatory_topics: false }))).toEqual({ result: "success", msg: "" });
    expect(await notices(t)).toEqual([]);
  });

  it("a deactivated user hears nothing", async () => {
    const o = await t.createOrg();
    await t.ok(await t.call("DELETE", `/users/${o.member2.user_id}`, { as: o.admin.as }));
    await t.markOutbox();
    await t.ok(await patchRealm(o.admin, { name: "After" }));
    const [n] = await notices(t);
    expect(n.users).not.toContain(o.member2.user_id);
    expect(n.users).toContain(o.member.user_id);
  });

  it("refuses a name over 40 characters and a description over 1000 (code points)", async () => {
    expectError(await patchRealm(org.admin, { name: "n".repeat(41) }), 400, "BAD_REQUEST", "name is too long (limit: 40 characters)");
    expectError(await patchRealm(org.admin, { description: "d".repeat(1001) }), 400, "BAD_REQUEST", "description is too long (limit: 1000 characters)");
    await t.ok(await patchRealm(org.admin, { name: "🙂".repeat(40) }));
    expect((await realmState(org.member)).realm_name).toBe("🙂".repeat(40));
  });
});

describe("values", () => {
  it("each policy takes only Zulip's values: 'Invalid <name>'", async () => {
    const bad: Record<string, number> = {
      invite_to_stream_policy: 5,
      wildcard_mention_policy: 4,
      create_public_stream_policy: 6,
      create_private_stream_policy: 0,
      create_web_public_stream_policy: 1,
      edit_topic_policy: 7,
      move_messages_between_streams_policy: 5,
      delete_own_message_policy: 6,
      private_message_policy: 3,
      user_group_edit_policy: 5,
      bot_creation_policy: 4,
      add_custom_emoji_policy: 5,
      digest_weekday: 7,
      org_type: 11,
    };
    for (const [name, value] of Object.entries(bad)) {
      expectError(await patchRealm(org.owner, { [name]: value }), 400, "BAD_REQUEST", `Invalid ${name}`);
    }
    expectError(await patchRealm(org.owner, { mandatory_topics: 1 }), 400, "BAD_REQUEST", "mandatory_topics is not a boolean");
    expectError(await patchRealm(org.owner, { waiting_period_threshold: -1 }), 400, "BAD_REQUEST", "waiting_period_threshold is too small");
    expectError(await patchRealm(org.owner, { default_language: "xx" }), 400, "BAD_REQUEST", "Invalid language 'xx'");
    expectError(await patchRealm(org.owner, { video_chat_provider: 3 }), 400, "BAD_REQUEST", "Invalid video_chat_provider 3");
    expectError(await patchRealm(org.owner, { giphy_rating: 9 }), 400, "BAD_REQUEST", "Invalid giphy_rating 9");
  });

  it("a request with one bad value changes nothing", async () => {
    const o = await t.createOrg();
    await t.markOutbox();
    expectError(await patchRealm(o.owner, { name: "Half", giphy_rating: 9 }), 400, "BAD_REQUEST", "Invalid giphy_rating 9");
    expectError(
      await patchRealm(o.owner, { name: "Half", message_content_edit_limit_seconds: 0 }),
      400,
      "REQUEST_VARIABLE_INVALID",
      "Bad value for 'message_content_edit_limit_seconds': 0",
    );
    expect(await notices(t)).toEqual([]);
    expect((await realmState(o.member)).realm_name).not.toBe("Half");
  });

  it("every stored setting reaches register, the internal realm answer (where other services read it) and the answer", async () => {
    const o = await t.createOrg();
    const params = {
      wildcard_mention_policy: 7,
      create_public_stream_policy: 2,
      create_private_stream_policy: 4,
      create_web_public_stream_policy: 6,
      invite_to_stream_policy: 3,
      mandatory_topics: true,
      enable_spectator_access: true,
      delete_own_message_policy: 5,
      move_messages_between_streams_policy: 6,
      private_message_policy: 2,
      enable_read_receipts: true,
      presence_disabled: true,
      default_language: "de",
      allow_edit_history: false,
      user_group_edit_policy: 4,
      bot_creation_policy: 3,
      add_custom_emoji_policy: 2,
      digest_emails_enabled: true,
      digest_weekday: 4,
      email_changes_disabled: true,
      name_changes_disabled: true,
      avatar_changes_disabled: true,
      inline_image_preview: false,
      inline_url_embed_preview: true,
      video_chat_provider: 0,
      giphy_rating: 4,
      require_unique_names: true,
      send_welcome_emails: false,
      message_content_allowed_in_email_notifications: false,
      enable_guest_user_indicator: false,
      want_advertise_in_communities_directory: true,
      default_code_block_language: "python",
      org_type: 35,
    };
    await t.markOutbox();
    const answer = await changed(o.admin, params);
    expect(answer).toEqual({ result: "success", msg: "", ...params, default_language: "updated", default_code_block_language: "updated" });
    const got = await notices(t);
    // One event per setting, in the order of Zulip's update_realm parameters (the contract's); a
    // channel creation policy's change is announced in Zulip 9.0's group form right after it.
    const order = Object.keys(UpdateRealm.params).filter((name) => name in params) as Array<keyof typeof params>;
    const groups = await systemGroupIds(t.pool, o.realmId);
    const groupForm: Record<string, Record<string, number>> = {
      create_public_stream_policy: { can_create_public_channel_group: groups["role:administrators"] },
      create_private_stream_policy: { can_create_private_channel_group: groups["role:moderators"] },
    };
    expect(got.map((n) => n.event)).toEqual(
      order.flatMap((property) => [
        { type: "realm", op: "update", property, value: params[property] },
        ...(groupForm[property] ? [{ type: "realm", op: "update_dict", property: "default", data: groupForm[property] }] : []),
      ]),
    );
    expect(got.every((n) => n.type === "accounts.realm.updated" && JSON.stringify(n.users) === JSON.stringify(everyone(o)))).toBe(true);
    const state = await realmState(o.member);
    for (const [name, value] of Object.entries(params)) expect([name, state[`realm_${name}`]]).toEqual([name, value]);
    // What the member may do follows the new policies.
    const mine = await registerState(t, o.member.as, { fetch_event_types: ["realm_user"] });
    expect([mine.can_create_public_streams, mine.can_create_private_streams, mine.can_create_streams, mine.can_create_web_public_streams]).toEqual([
      false,
      false,
      false,
      false,
    ]);
    const settings = await internalSettings(o);
    expect(settings).toMatchObject({
      wildcard_mention_policy: 7,
      create_public_stream_policy: 2,
      create_private_stream_policy: 4,
      create_web_public_stream_policy: 6,
      invite_to_stream_policy: 3,
      mandatory_topics: true,
      enable_spectator_access: true,
      delete_own_message_policy: 5,
      move_messages_between_streams_policy: 6,
      private_message_policy: 2,
      enable_read_receipts: true,
      allow_edit_history: false,
      add_custom_emoji_policy: 2,
    });
    // The other organization keeps Zulip's defaults.
    const theirs = await realmState(other.member);
    expect([theirs.realm_private_message_policy, theirs.realm_enable_read_receipts, theirs.realm_default_language, theirs.realm_giphy_rating]).toEqual([1, false, "en", 2]);
    expect((await internalSettings(other)).enable_read_receipts).toBe(false);
  });

  it("unknown parameters are listed as ignored, the known ones applied", async () => {
    const o = await t.createOrg();
    const res = await changed(o.admin, { name: "Known", can_create_groups: "1" });
    expect(res).toEqual({ result: "success", msg: "", name: "updated", ignored_parameters_unsupported: ["can_create_groups"] });
  });
});

describe("message editing and time limits", () => {
  it("allow_message_editing, edit_topic_policy and message_content_edit_limit_seconds go as update_dict, one event each", async () => {
    const o = await t.createOrg();
    await t.markOutbox();
    const res = await changed(o.admin, { allow_message_editing: false, edit_topic_policy: 6, message_content_edit_limit_seconds: 3600 });
    expect(res).toEqual({ result: "success", msg: "", allow_message_editing: false, edit_topic_policy: 6, message_content_edit_limit_seconds: 3600 });
    expect((await notices(t)).map((n) => [n.event, n.users])).toEqual([
      [{ type: "realm", op: "update_dict", property: "default", data: { allow_message_editing: false } }, everyone(o)],
      [{ type: "realm", op: "update_dict", property: "default", data: { edit_topic_policy: 6 } }, everyone(o)],
      [{ type: "realm", op: "update_dict", property: "default", data: { message_content_edit_limit_seconds: 3600 } }, everyone(o)],
    ]);
    const state = await realmState(o.member);
    expect([state.realm_allow_message_editing, state.realm_edit_topic_policy, state.realm_message_content_edit_limit_seconds]).toEqual([false, 6, 3600]);
    expect(await internalSettings(o)).toMatchObject({ allow_message_editing: false, edit_topic_policy: 6, message_content_edit_limit_seconds: 3600 });
  });

  it("'unlimited' is null (no limit) for each time limit; a string or a number not positive is a bad value", async () => {
    const o = await t.createOrg();
    const limits = [
      "message_content_delete_limit_seconds",
      "message_content_edit_limit_seconds",
      "move_messages_within_stream_limit_seconds",
      "move_messages_between_streams_limit_seconds",
    ];
    for (const name of limits) {
      for (const [bad, shown] of [[0, "0"], [-60, "-60"], [JSON.stringify("forever"), "forever"], [2 ** 31, String(2 ** 31)]] as const) {
        expectError(await patchRealm(o.admin, { [name]: bad }), 400, "REQUEST_VARIABLE_INVALID", `Bad value for '${name}': ${shown}`);
      }
    }
    await t.ok(await patchRealm(o.admin, Object.fromEntries(limits.map((name) => [name, 60]))));
    await t.markOutbox();
    const unlimited = Object.fromEntries(limits.map((name) => [name, JSON.stringify("unlimited")]));
    expect(await changed(o.admin, unlimited)).toEqual({ result: "success", msg: "", ...Object.fromEntries(limits.map((name) => [name, null])) });
    expect((await notices(t)).map((n) => n.event)).toEqual([
      { type: "realm", op: "update", property: "message_content_delete_limit_seconds", value: null },
      { type: "realm", op: "update_dict", property: "default", data: { message_content_edit_limit_seconds: null } },
      { type: "realm", op: "update", property: "move_messages_within_stream_limit_seconds", value: null },
      { type: "realm", op: "update", property: "move_messages_between_streams_limit_seconds", value: null },
    ]);
    let state = await realmState(o.member);
    for (const name of limits) expect(state[`realm_${name}`]).toBeNull();
    expect(await internalSettings(o)).toMatchObject(Object.fromEntries(limits.map((name) => [name, null])));

    await t.ok(await patchRealm(o.admin, { move_messages_within_stream_limit_seconds: 86400, message_content_delete_limit_seconds: 120 }));
    state = await realmState(o.member);
    expect([state.realm_move_messages_within_stream_limit_seconds, state.realm_message_content_delete_limit_seconds]).toEqual([86400, 120]);
    expect((await internalSettings(o)).move_messages_within_stream_limit_seconds).toBe(86400);
    // Zulip's defaults elsewhere: 10 minutes to edit, 7 days to move, no delete limit.
    const theirs = await realmState(other.member);
    expect([
      theirs.realm_message_content_edit_limit_seconds,
      theirs.realm_move_messages_within_stream_limit_seconds,
      theirs.realm_move_messages_between_streams_limit_seconds,
      theirs.realm_message_content_delete_limit_seconds,
    ]).toEqual([600, 604800, 604800, null]);
  });
});

describe("waiting_period_threshold", () => {
  it("re-evaluates role:fullmembers in the same change: members newer than the period leave it, and join again when it shrinks", async () => {
    const o = await t.createOrg();
    const groups = (await t.ok(await t.call("GET", `/internal/realms/${o.realmId}`))).realm.system_groups;
    const full = groups["role:fullmembers"];
    const members = [o.member.user_id, o.member2.user_id, o.bot.user_id].sort((a, b) => a - b);
    const directMembers = async () =>
      (await t.ok(await t.call("GET", `/user_groups/${full}/members`, { as: o.member.as, params: { direct_member_only: true } }))).members;
    expect(await directMembers()).toEqual(members);

    await t.markOutbox();
    expect(await changed(o.admin, { waiting_period_threshold: 3 })).toEqual({ result: "success", msg: "", waiting_period_threshold: 3 });
    expect((await notices(t)).map((n) => [n.event, n.users])).toEqual([
      [{ type: "realm", op: "update", property: "waiting_period_threshold", value: 3 }, everyone(o)],
      [{ type: "user_group", op: "remove_members", group_id: full, user_ids: members }, everyone(o)],
    ]);
    expect(await directMembers()).toEqual([]);
    expect((await realmState(o.member)).realm_waiting_period_threshold).toBe(3);
    expect((await internalSettings(o)).waiting_period_threshold).toBe(3);
    // Another organization's members stay where they were.
    const theirFull = (await t.ok(await t.call("GET", `/internal/realms/${other.realmId}`))).realm.system_groups["role:fullmembers"];
    expect((await t.ok(await t.call("GET", `/user_groups/${theirFull}/members`, { as: other.member.as, params: { direct_member_only: true } }))).members).toHaveLength(3);

    await t.ok(await patchRealm(o.admin, { waiting_period_threshold: 0 }));
    expect((await notices(t)).map((n) => n.event)).toEqual([
      { type: "realm", op: "update", property: "waiting_period_threshold", value: 0 },
      { type: "user_group", op: "add_members", group_id: full, user_ids: members },
    ]);
    expect(await directMembers()).toEqual(members);
  });
});

describe("announcement channels", () => {
  const names = ["new_stream_announcements_stream_id", "signup_announcements_stream_id", "zulip_update_announcements_stream_id"];

  it("a channel of the organization (messaging says which; private ones too), or -1 for none", async () => {
    const o = await t.createOrg();
    const announce = await m.createChannel(o.admin, "announce");
    // Private, and the administrator is not subscribed: Zulip lets administrators name it.
    const welcome = await m.createChannel(o.owner, "welcome", [], { invite_only: true });
    expect((await m.subscriptions(o.admin)).map(([id]) => id)).not.toContain(welcome);
    const elsewhere = await m.createChannel(other.admin, `elsewhere ${o.slug}`);
    await t.markOutbox();
    for (const name of names) {
      for (const id of [987654321, elsewhere]) expectError(await patchRealm(o.admin, { [name]: id }), 400, "BAD_REQUEST", "Invalid channel ID");
    }
    expect(await notices(t)).toEqual([]);
    const params = { new_stream_announcements_stream_id: announce, signup_announcements_stream_id: welcome, zulip_update_announcements_stream_id: announce };
    expect(await changed(o.admin, params)).toEqual({ result: "success", msg: "", ...params });
    expect((await notices(t)).map((n) => n.event)).toEqual(names.map((property) => ({ type: "realm", op: "update", property, value: params[property as keyof typeof params] })));
    let state = await realmState(o.member);
    expect(names.map((name) => state[`realm_${name}`])).toEqual([announce, welcome, announce]);
    expect(await changed(o.admin, { signup_announcements_stream_id: -1 })).toEqual({ result: "success", msg: "", signup_announcements_stream_id: -1 });
    expect((await notices(t)).map((n) => [n.event, n.payload.value])).toEqual([
      [{ type: "realm", op: "update", property: "signup_announcements_stream_id", value: -1 }, null],
    ]);
    state = await realmState(o.member);
    expect(state.realm_signup_announcements_stream_id).toBe(-1);
    expect((await realmState(other.member)).realm_new_stream_announcements_stream_id).toBe(-1);
  });

  it("a deleted channel is forgotten (messaging.stream.deleted), in its organization only", async () => {
    const o = await t.createOrg();
    const o2 = await t.createOrg();
    const ours = await m.createChannel(o.admin, "news");
    const theirs = await m.createChannel(o2.admin, "news");
    await t.ok(await patchRealm(o.admin, { new_stream_announcements_stream_id: ours, zulip_update_announcements_stream_id: ours }));
    await t.ok(await patchRealm(o2.admin, { new_stream_announcements_stream_id: theirs, zulip_update_announcements_stream_id: theirs }));
    const announcements = async (x: Org) => {
      const state = await realmState(x.member);
      return [state.realm_new_stream_announcements_stream_id, state.realm_zulip_update_announcements_stream_id];
    };
    // Messaging's relay and accounts' consumer for real: the deletion reaches accounts through the broker.
    const log = createLogger("accounts-test", "silent");
    const amqp = new AmqpClient(t.config.AMQP_URL, t.config.AMQP_EXCHANGE, t.config.AMQP_QUEUE_PREFIX, log, t.config.AMQP_QUEUE_EXPIRES_MS);
    await amqp.start();
    try {
      await consumeChannelDeletions(amqp, t.deps);
      await t.ok(await m.call("DELETE", `/streams/${ours}`, { as: o.admin.as }));
      await new OutboxRelay({ pool: m.deps.pool, schema: "messaging", amqp, log }).drain();
      await until("the deleted channel forgotten", async () => (await announcements(o))[0] === -1);
    } finally {
      await amqp.close();
    }
    expect(await announcements(o)).toEqual([-1, -1]);
    expect(await announcements(o2)).toEqual([theirs, theirs]);
    // Handled again (a redelivery), or named with another organization's channel: nothing changes.
    await doForgetDeletedChannel(t.deps, o.realmId, ours);
    await doForgetDeletedChannel(t.deps, o.realmId, theirs);
    expect(await announcements(o)).toEqual([-1, -1]);
    expect(await announcements(o2)).toEqual([theirs, theirs]);
  });
});

describe("message_retention_days", () => {
  it("is announced as -1 when unlimited, and the internal answer keeps null", async () => {
    const o = await t.createOrg();
    expect(await changed(o.owner, { message_retention_days: 30 })).toEqual({ result: "success", msg: "", message_retention_days: 30 });
    await t.markOutbox();
    expect(await changed(o.owner, { message_retention_days: JSON.stringify("unlimited") })).toEqual({ result: "success", msg: "", message_retention_days: -1 });
    const [n] = await notices(t);
    expect([n.event.value, n.payload.value]).toEqual([-1, null]);
    expect((await internalSettings(o)).message_retention_days).toBeNull();
  });
});

describe("settings accounts enforces", () => {
  it("bot_creation_policy: administrators only (3), or generic bots for administrators only (2)", async () => {
    const o = await t.createOrg();
    const createBot = (who: TestUser, short_name: string, bot_type: number) =>
      t.call("POST", "/bots", { as: who.as, params: { full_name: `Bot ${short_name}`, short_name, bot_type } });
    await t.ok(await patchRealm(o.admin, { bot_creation_policy: 3 }));
    expectError(await createBot(o.member, "one", 1), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    expectError(await createBot(o.member, "hook", 2), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    await t.ok(await createBot(o.admin, "admins", 1));
    await t.ok(await patchRealm(o.admin, { bot_creation_policy: 2 }));
    expectError(await createBot(o.member, "one", 1), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    await t.ok(await createBot(o.member, "hook", 2));
    await t.ok(await patchRealm(o.admin, { bot_creation_policy: 1 }));
    await t.ok(await createBot(o.member, "one", 1));
  });

  it("user_group_edit_policy: who may create and change user groups ('Insufficient permission')", async () => {
    const o = await t.createOrg();
    const create = (who: TestUser, name: string) =>
      t.call("POST", "/user_groups/create", { as: who.as, params: { name, description: "d", members: JSON.stringify([who.user_id]) } });
    await t.ok(await create(o.member, "members-own"));
    const groups = (await t.ok(await t.call("GET", "/user_groups", { as: o.member.as }))).user_groups;
    const own = groups.find((g: any) => g.name === "members-own").id;
    await t.ok(await patchRealm(o.admin, { user_group_edit_policy: 4 }));
    expectError(await create(o.member, "refused"), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await t.call("PATCH", `/user_groups/${own}`, { as: o.member.as, params: { description: "new" } }), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(
      await t.call("POST", `/user_groups/${own}/members`, { as: o.member.as, params: { add: JSON.stringify([o.member2.user_id]) } }),
      400,
      "BAD_REQUEST",
      "Insufficient permission",
    );
    await t.ok(await create(o.moderator, "moderators-own"));
    // Full members only: new members wait out the waiting period.
    await t.ok(await patchRealm(o.admin, { user_group_edit_policy: 3, waiting_period_threshold: 10 }));
    expectError(await create(o.member, "still refused"), 400, "BAD_REQUEST", "Insufficient permission");
    t.clock.advance(11 * 86_400_000);
    await t.ok(await create(o.member, "full member's"));
  });

  it("name_changes_disabled: a member's new name is ignored without an error; administrators still change theirs", async () => {
    const o = await t.createOrg();
    await t.ok(await patchRealm(o.admin, { name_changes_disabled: true }));
    await t.markOutbox();
    expect(await t.ok(await t.call("PATCH", "/settings", { as: o.member.as, params: { full_name: "Someone Else" } }))).toEqual({ result: "success", msg: "" });
    expect(await notices(t)).toEqual([]);
    await t.ok(await t.call("PATCH", "/settings", { as: o.admin.as, params: { full_name: "Admin Renamed" } }));
    const users = (await registerState(t, o.member.as, { fetch_event_types: ["realm_user"] })).realm_users;
    const nameOf = (u: TestUser) => users.find((x: any) => x.user_id === u.user_id).full_name;
    expect([nameOf(o.member), nameOf(o.admin)]).toEqual(["Mel Member", "Admin Renamed"]);
  });

  it("avatar_changes_disabled: members may neither upload nor remove an avatar; administrators may", async () => {
    const o = await t.createOrg();
    await t.ok(await patchRealm(o.admin, { avatar_changes_disabled: true }));
    const upload = async (who: TestUser) => {
      const body = multipart([{ name: "file", filename: "me.png", type: "image/png", data: PNG_1X1 }]);
      const r = await t.app.inject({
        method: "POST",
        url: "/api/v1/users/me/avatar",
        headers: { ...identityHeaders(who.as, t.config.INTERNAL_TOKEN), "content-type": body.contentType },
        payload: body.payload,
      });
      return { status: r.statusCode, body: r.json() };
    };
    expectError(await upload(o.member), 400, "BAD_REQUEST", "Avatar changes are disabled in this organization.");
    expectError(await t.call("DELETE", "/users/me/avatar", { as: o.member.as }), 400, "BAD_REQUEST", "Avatar changes are disabled in this organization.");
    await t.ok(await upload(o.admin));
    await t.ok(await t.call("DELETE", "/users/me/avatar", { as: o.admin.as }));
  });

  it("require_unique_names: a name another user has (case and Unicode form aside) is refused, for renames and new users", async () => {
    const o = await t.createOrg();
    await t.ok(await patchRealm(o.admin, { require_unique_names: true }));
    expectError(await t.call("PATCH", "/settings", { as: o.member.as, params: { full_name: "MAX member" } }), 400, "BAD_REQUEST", "Unique names required in this organization.");
    expectError(
      await t.call("PATCH", `/users/${o.member.user_id}`, { as: o.admin.as, params: { full_name: "ｍａｘ ｍｅｍｂｅｒ" } }),
      400,
      "BAD_REQUEST",
      "Unique names required in this organization.",
    );
    // One's own name, differently written, is no conflict.
    await t.ok(await t.call("PATCH", "/settings", { as: o.member.as, params: { full_name: "MEL MEMBER" } }));
    expectError(
      await t.call("POST", "/internal/users", { params: { realm_id: o.realmId, email: `max2@${o.slug}.test`, full_name: "Max Member", role: 400 } }),
      400,
      "BAD_REQUEST",
      "Unique names required in this organization.",
    );
    expectError(
      await t.call("POST", "/bots", { as: o.member.as, params: { full_name: "Gus Guest", short_name: "gus", bot_type: 1 } }),
      400,
      "BAD_REQUEST",
      "Unique names required in this organization.",
    );
    // Elsewhere, names may repeat.
    await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: other.realmId, email: `max2@${other.slug}.test`, full_name: "Max Member", role: 400 } }));
  });

  it("presence_disabled: nobody's presence is shown and reports tell no one; on again, presence is back", async () => {
    const o = await t.createOrg();
    const report = (who: TestUser) => t.call("POST", "/users/me/presence", { as: who.as, params: { status: "active", slim_presence: true } });
    await t.ok(await report(o.member));
    await t.ok(await patchRealm(o.admin, { presence_disabled: true }));
    await t.markOutbox();
    expect((await t.ok(await report(o.member2))).presences).toEqual({});
    expect((await notices(t)).filter((n) => n.event.type === "presence")).toEqual([]);
    expect((await t.ok(await t.call("GET", "/realm/presence", { as: o.member.as }))).presences).toEqual({});
    expect((await registerState(t, o.member.as, { fetch_event_types: ["presence"], slim_presence: true })).presences).toEqual({});
    await t.ok(await patchRealm(o.admin, { presence_disabled: false }));
    const shown = (await registerState(t, o.member.as, { fetch_event_types: ["presence"], slim_presence: true })).presences;
    expect(Object.keys(shown).sort()).toEqual([String(o.member.user_id), String(o.member2.user_id)].sort());
  });

  it("default_language: new users start with the organization's language", async () => {
    const o = await t.createOrg();
    await t.ok(await patchRealm(o.admin, { default_language: "fr" }));
    const u = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: o.realmId, email: `new@${o.slug}.test`, full_name: "New Person", role: 400 } }));
    const as = t.identity({ ...u, role: 400, realm_id: o.realmId });
    expect((await registerState(t, as, { fetch_event_types: ["user_settings"] })).user_settings.default_language).toBe("fr");
    expect((await registerState(t, o.member.as, { fetch_event_types: ["user_settings"] })).user_settings.default_language).toBe("en");
  });
});
