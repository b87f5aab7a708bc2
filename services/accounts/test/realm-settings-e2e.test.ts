import { describe, expect, it } from "vitest";
import type { DemoOrg, DemoOrg2, DemoUser } from "@chat/testkit";
import { NO_RATE_LIMITS, ok, register as registerQueue, sleep, useDemoStack, verifyAction as verify, withoutId } from "@chat/testkit/e2e";
import { applyEvent, type ApplyContext } from "../../events/src/lib/apply/index";

/**
 * PATCH /realm through the whole stack (gateway, accounts, messaging, events), as Zulip's
 * verify_action checks it: register, change a setting as an administrator, collect the events
 * (each checked against our contract and Zulip's schema), apply them to the registered state and
 * compare with a fresh register. Users of another organization hear nothing.
 */

let org: DemoOrg;
let org2: DemoOrg2;
const { as } = useDemoStack(NO_RATE_LIMITS, ({ demo }) => ([org, org2] = demo.orgs));
const MODERN = { notification_settings_null: true, bulk_message_deletion: true, user_settings_object: true, linkifier_url_template: true };

const queueOf = (u: DemoUser) => registerQueue(as(u), { client_capabilities: MODERN });
/** A fresh register's state. */
const register = async (u: DemoUser) => (await queueOf(u)).state;

/**
 * Zulip's YAML (feature level 330) no longer lists edit_topic_policy in update_dict's data: its
 * changelog says it was removed at feature level 316, after the level we speak (267).
 */
const removedAfterOurLevel = (e: any) => e.type === "realm" && e.op === "update_dict" && "edit_topic_policy" in e.data;

/** Register, act, apply the events to the state, compare with a fresh register. Returns the events. */
function verifyAction(u: DemoUser, action: () => Promise<unknown>) {
  const ctx: ApplyContext = { userId: u.user_id, fetchTypes: null, includeSubscribers: false, clientGravatar: true };
  const queue = async () => ({ ...(await queueOf(u)), zulipForm: (e: Record<string, any>) => (removedAfterOurLevel(e) ? null : e) });
  return verify(action, { register: queue, apply: (state, e) => applyEvent(state, e, ctx) });
}

const patchRealm = (who: DemoUser, params: Record<string, unknown>) => as(who).patch("/realm", params);
const bodies = (events: any[]) => events.map(withoutId);

describe("PATCH /realm through the stack", () => {
  it("name, description and other settings: realm/update events that bring a registered state up to date", async () => {
    const events = await verifyAction(org.users.member, async () =>
      expect(ok(await patchRealm(org.users.admin, { name: "E2E Renamed", description: "Our **place**", mandatory_topics: true, giphy_rating: 3 }))).toEqual({
        result: "success",
        msg: "",
        name: "updated",
        description: "updated",
        mandatory_topics: true,
        giphy_rating: 3,
      }),
    );
    expect(bodies(events)).toEqual([
      { type: "realm", op: "update", property: "name", value: "E2E Renamed" },
      { type: "realm", op: "update", property: "description", value: "Our **place**" },
      { type: "realm", op: "update", property: "mandatory_topics", value: true },
      { type: "realm", op: "update", property: "giphy_rating", value: 3 },
    ]);
  });

  it("the message editing settings: realm/update_dict events", async () => {
    const events = await verifyAction(org.users.guest, async () =>
      ok(await patchRealm(org.users.admin, { allow_message_editing: false, edit_topic_policy: 2, message_content_edit_limit_seconds: JSON.stringify("unlimited") })),
    );
    expect(bodies(events)).toEqual([
      { type: "realm", op: "update_dict", property: "default", data: { allow_message_editing: false } },
      { type: "realm", op: "update_dict", property: "default", data: { edit_topic_policy: 2 } },
      { type: "realm", op: "update_dict", property: "default", data: { message_content_edit_limit_seconds: null } },
    ]);
    await verifyAction(org.users.guest, async () => ok(await patchRealm(org.users.admin, { allow_message_editing: true, edit_topic_policy: 5, message_content_edit_limit_seconds: 600 })));
  });

  it("a policy changes what the user may do, in the applied state as in a fresh register", async () => {
    const member = org.users.member;
    const before = await register(member);
    expect(before.can_create_public_streams).toBe(true);
    await verifyAction(member, async () => ok(await patchRealm(org.users.admin, { create_public_stream_policy: 2, invite_to_stream_policy: 4 })));
    const after = await register(member);
    expect([after.can_create_public_streams, after.can_subscribe_other_users, after.can_create_private_streams]).toEqual([false, false, true]);
    // Enforced by messaging too (its cached settings were dropped by the announcement).
    const res = await as(member).post("/users/me/subscriptions", { subscriptions: [{ name: "not allowed" }] });
    expect(res.body).toMatchObject({ result: "error", msg: "Insufficient permission" });
    await verifyAction(member, async () => ok(await patchRealm(org.users.admin, { create_public_stream_policy: 1, invite_to_stream_policy: 1 })));
  });

  it("Zulip 9.0's channel creation groups: the policies' system groups, changed in either form, announced in both", async () => {
    const { admin, member } = org.users;
    const state = await register(member);
    const group = (name: string) => state.realm_user_groups.find((g: any) => g.name === name).id;
    expect([state.realm_can_create_public_channel_group, state.realm_can_create_private_channel_group]).toEqual([group("role:members"), group("role:members")]);
    expect(state.server_supported_permission_settings.realm.can_create_public_channel_group).toMatchObject({
      require_system_group: true,
      allow_nobody_group: false,
      allow_everyone_group: false,
      default_group_name: "role:members",
    });
    expect(state.server_supported_permission_settings.group.can_mention_group.default_for_system_groups).toBe("role:nobody");

    let answer: unknown;
    const events = await verifyAction(member, async () => (answer = ok(await patchRealm(admin, { can_create_public_channel_group: group("role:administrators") }))));
    expect(answer).toEqual({ result: "success", msg: "", can_create_public_channel_group: group("role:administrators") });
    expect(bodies(events)).toEqual([
      { type: "realm", op: "update", property: "create_public_stream_policy", value: 2 },
      { type: "realm", op: "update_dict", property: "default", data: { can_create_public_channel_group: group("role:administrators") } },
    ]);
    const after = await register(member);
    expect([after.can_create_public_streams, after.can_create_private_streams, after.realm_create_public_stream_policy]).toEqual([false, true, 2]);
    const refused = await as(member).post("/users/me/subscriptions", { subscriptions: [{ name: "by group" }] });
    expect(refused.body).toMatchObject({ result: "error", msg: "Insufficient permission" });

    // The old policy's change is announced in the group's form too.
    const legacy = await verifyAction(member, async () => ok(await patchRealm(admin, { create_private_stream_policy: 4 })));
    expect(bodies(legacy)).toEqual([
      { type: "realm", op: "update", property: "create_private_stream_policy", value: 4 },
      { type: "realm", op: "update_dict", property: "default", data: { can_create_private_channel_group: group("role:moderators") } },
    ]);

    // {new, old}: old must be the current group; nothing changes otherwise.
    const stale = await patchRealm(admin, { can_create_public_channel_group: JSON.stringify({ new: group("role:members"), old: group("role:members") }) });
    expect(stale.body).toEqual({ result: "error", msg: "'old' value does not match the expected value.", code: "BAD_REQUEST" });
    const refusals: Array<[unknown, string]> = [
      [group("role:nobody"), "'can_create_public_channel_group' setting cannot be set to 'role:nobody' group."],
      [group("role:everyone"), "'can_create_public_channel_group' setting cannot be set to 'role:everyone' group."],
      [987654, "Invalid user group"],
    ];
    for (const [value, msg] of refusals) {
      const res = await patchRealm(admin, { can_create_public_channel_group: value });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: "error", msg, code: "BAD_REQUEST" });
    }
    ok(await as(admin).post("/user_groups/create", { name: "creators", description: "may create", members: JSON.stringify([admin.user_id]) }));
    const mine = (await register(admin)).realm_user_groups.find((g: any) => g.name === "creators").id;
    const named = await patchRealm(admin, { can_create_public_channel_group: mine });
    expect(named.body).toEqual({ result: "error", msg: "'can_create_public_channel_group' must be a system user group.", code: "BAD_REQUEST" });
    const other = (await register(org2.users.owner)).realm_user_groups.find((g: any) => g.name === "role:members").id;
    expect((await patchRealm(admin, { can_create_public_channel_group: other })).body).toMatchObject({ result: "error", msg: "Invalid user group" });
    expect((await register(member)).realm_can_create_public_channel_group).toBe(group("role:administrators"));

    await verifyAction(member, async () =>
      ok(
        await patchRealm(admin, {
          can_create_public_channel_group: JSON.stringify({ new: group("role:members"), old: group("role:administrators") }),
          can_create_private_channel_group: group("role:members"),
        }),
      ),
    );
    expect((await register(member)).can_create_public_streams).toBe(true);
  });

  it("who may create reusable invitation links (create_multiuse_invite_group): set by group, announced, and enforced", async () => {
    const { admin, member, moderator } = org.users;
    const state = await register(member);
    const group = (name: string) => state.realm_user_groups.find((g: any) => g.name === name).id;
    expect(state.realm_create_multiuse_invite_group).toBe(group("role:administrators"));
    const link = () => as(member).post("/invites/multiuse", { invite_as: 400 });
    expect((await link()).body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Insufficient permission" });

    const events = await verifyAction(member, async () => ok(await patchRealm(admin, { create_multiuse_invite_group: group("role:members") })));
    expect(bodies(events)).toEqual([{ type: "realm", op: "update_dict", property: "default", data: { create_multiuse_invite_group: group("role:members") } }]);
    expect(ok(await link()).invite_link).toMatch(/\/join\//);

    // role:nobody is allowed (not even administrators then); role:everyone (guests) is not.
    ok(await patchRealm(admin, { create_multiuse_invite_group_id: JSON.stringify({ new: group("role:nobody"), old: group("role:members") }) }));
    expect((await as(admin).post("/invites/multiuse", {})).body).toMatchObject({ result: "error", msg: "Insufficient permission" });
    expect((await patchRealm(admin, { create_multiuse_invite_group: group("role:everyone") })).body).toMatchObject({
      result: "error",
      msg: "'create_multiuse_invite_group' setting cannot be set to 'role:everyone' group.",
    });
    ok(await patchRealm(admin, { create_multiuse_invite_group: group("role:moderators") }));
    expect(ok(await as(moderator).post("/invites/multiuse", {})).invite_link).toMatch(/\/join\//);
    expect((await link()).body).toMatchObject({ result: "error", msg: "Insufficient permission" });
    await verifyAction(member, async () => ok(await patchRealm(admin, { create_multiuse_invite_group: group("role:administrators") })));
  });

  it("the organization's Jitsi server (jitsi_server_url): a URL or \"default\", and the deprecated key follows", async () => {
    const { admin, member } = org.users;
    const state = await register(member);
    expect([state.realm_jitsi_server_url, state.server_jitsi_server_url, state.jitsi_server_url]).toEqual([null, "https://meet.jit.si", "https://meet.jit.si"]);
    let answer: unknown;
    const events = await verifyAction(member, async () => (answer = ok(await patchRealm(admin, { jitsi_server_url: JSON.stringify("https://jitsi.example.org") }))));
    expect(answer).toEqual({ result: "success", msg: "", jitsi_server_url: "updated" });
    expect(bodies(events)).toEqual([{ type: "realm", op: "update", property: "jitsi_server_url", value: "https://jitsi.example.org" }]);
    expect((await register(member)).jitsi_server_url).toBe("https://jitsi.example.org");
    for (const bad of ["jitsi.example.org", "ftp://jitsi.example.org", ""]) {
      expect((await patchRealm(admin, { jitsi_server_url: JSON.stringify(bad) })).body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "jitsi_server_url is not a URL" });
    }
    await verifyAction(member, async () => expect(ok(await patchRealm(admin, { jitsi_server_url: JSON.stringify("default") })).jitsi_server_url).toBeNull());
    expect((await register(member)).jitsi_server_url).toBe("https://meet.jit.si");
  });

  it("a waiting period takes new members out of role:fullmembers (user_group events in the same change)", async () => {
    const events = await verifyAction(org.users.member, async () => ok(await patchRealm(org.users.admin, { waiting_period_threshold: 30 })));
    expect(events.map((e) => `${e.type}/${e.op}`)).toEqual(["realm/update", "user_group/remove_members"]);
    expect(events[1].user_ids).toContain(org.users.member.user_id);
    const back = await verifyAction(org.users.member, async () => ok(await patchRealm(org.users.admin, { waiting_period_threshold: 0 })));
    expect(back.map((e) => `${e.type}/${e.op}`)).toEqual(["realm/update", "user_group/add_members"]);
  });

  it("an announcement channel: set to a channel, and forgotten (-1) once the channel is deleted", async () => {
    const { admin, member } = org.users;
    // In a verify, which waits for the notification bot's messages (committed before the answer,
    // delivered after) so that they do not reach the next verify's queue too.
    await verifyAction(member, async () =>
      ok(await as(admin).post("/users/me/subscriptions", { subscriptions: [{ name: "announce-e2e" }], principals: [admin.user_id, member.user_id] })),
    );
    const channel = ok(await as(admin).get("/get_stream_id", { stream: "announce-e2e" })).stream_id;
    const set = await verifyAction(member, async () => ok(await patchRealm(admin, { new_stream_announcements_stream_id: channel })));
    expect(bodies(set)).toEqual([{ type: "realm", op: "update", property: "new_stream_announcements_stream_id", value: channel }]);
    const refused = await patchRealm(admin, { signup_announcements_stream_id: 987654 });
    expect(refused.body).toMatchObject({ result: "error", msg: "Invalid channel ID" });
    // The channel's delete event tells clients; accounts learns it from messaging's domain event.
    const gone = await verifyAction(member, async () => ok(await as(admin).delete(`/streams/${channel}`)));
    expect(gone.some((e) => e.type === "stream" && e.op === "delete")).toBe(true);
    expect((await register(member)).realm_new_stream_announcements_stream_id).toBe(-1);
  });

  it("users of another organization hear nothing and keep their settings", async () => {
    const stranger = org2.users.member;
    const state = await register(stranger);
    ok(await patchRealm(org.users.admin, { name: "Only Ours", presence_disabled: true }));
    await sleep(500);
    const res = ok(await as(stranger).get("/events", { queue_id: state.queue_id, last_event_id: state.last_event_id, dont_block: true }));
    expect(res.events.filter((e: any) => e.type !== "heartbeat")).toEqual([]);
    const fresh = await register(stranger);
    expect([fresh.realm_name, fresh.realm_presence_disabled]).toEqual([state.realm_name, false]);
  });

  it("members are refused, as a Zulip client shows it", async () => {
    const res = await patchRealm(org.users.member, { name: "Mine" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg: "Must be an organization administrator", code: "UNAUTHORIZED_PRINCIPAL" });
  });
});
