import { describe, expect, it } from "vitest";
import type { DemoOrg, DemoUser } from "@chat/testkit";
import { ok, typesOf, useDemoStack, withoutId } from "@chat/testkit/e2e";
import { encodePng } from "../../messaging/src/lib/image";
import { verifierFor } from "./verify-kit";

/**
 * Zulip's verify_action (see verify-actions-coverage.e2e.test.ts) for the organization, user and
 * channel events and variants the other end-to-end files leave out: custom emoji, linkifier
 * edits and order, profile fields and their values, a person joining, leaving and returning,
 * email visibility, user group edits, status emoji, settings and organization settings of each
 * value type, each channel property, and channels appearing and disappearing.
 */

let org: DemoOrg;
const e2e = useDemoStack({ serviceEnv: { gateway: { RATE_LIMITING_ENABLED: "false" } } }, ({ demo }) => ([org] = demo.orgs));
const { as } = e2e;
const { verifyAction, sendBefore: sendBeforeTo, makeChannel } = verifierFor(as);

const member = () => org.users.member;
const other = () => org.users.member2;
const admin = () => org.users.admin;
const owner = () => org.users.owner;
const pub = () => org.channels.public.stream_id;
/** A message sent before an action under test, once its event reached the member's queues. */
const sendBefore = (u: DemoUser, params: Record<string, unknown>) => sendBeforeTo(member(), u, params);
/** A channel the administrator makes with these subscribers, its creation's events over. */
const channel = (name: string, subscribers: DemoUser[], extra: Record<string, unknown> = {}) => makeChannel(member(), admin(), name, subscribers, extra);

describe("verify action: custom emoji", () => {
  it("uploaded, then deactivated", async () => {
    const png = encodePng(2, 1, new Uint8Array([255, 0, 0, 255, 0, 255, 0, 255]));
    const added = await verifyAction(member(), async () =>
      ok(await e2e.postFile(admin(), "/realm/emoji/verify_e2e", { field: "filename", name: "emoji.png", type: "image/png", data: png })));
    expect(typesOf(added)).toEqual(["realm_emoji/update"]);
    const removed = await verifyAction(member(), async () => ok(await as(admin()).delete("/realm/emoji/verify_e2e")));
    expect(typesOf(removed)).toEqual(["realm_emoji/update"]);
  });
});

describe("verify action: linkifiers", () => {
  it("edited, reordered and removed", async () => {
    const a = ok(await as(admin()).post("/realm/filters", { pattern: "A-(?P<id>[0-9]+)", url_template: "https://a.example.com/{id}" })).id as number;
    const b = ok(await as(admin()).post("/realm/filters", { pattern: "B-(?P<id>[0-9]+)", url_template: "https://b.example.com/{id}" })).id as number;
    const edited = await verifyAction(member(), async () => ok(await as(admin()).patch(`/realm/filters/${a}`, { pattern: "AA-(?P<id>[0-9]+)", url_template: "https://aa.example.com/{id}" })));
    expect(typesOf(edited)).toEqual(["realm_linkifiers"]);
    const reordered = await verifyAction(member(), async () => ok(await as(admin()).patch("/realm/linkifiers", { ordered_linkifier_ids: JSON.stringify([b, a]) })));
    expect(reordered[0].realm_linkifiers.map((l: any) => l.id)).toEqual([b, a]);
    const removed = await verifyAction(member(), async () => ok(await as(admin()).delete(`/realm/filters/${b}`)));
    expect(removed[0].realm_linkifiers.map((l: any) => l.id)).toEqual([a]);
  });
});

describe("verify action: custom profile fields", () => {
  it("a field edited and reordered; a user's value set, seen by others, and cleared; the field deleted with its values", async () => {
    const made = async (name: string) => ok(await as(admin()).post("/realm/profile_fields", { name, field_type: 1 })).id as number;
    const first = await made("Verify desk");
    const second = await made("Verify floor");
    const edited = await verifyAction(member(), async () => ok(await as(admin()).patch(`/realm/profile_fields/${first}`, { name: "Verify office", hint: "Where" })));
    expect(typesOf(edited)).toEqual(["custom_profile_fields"]);
    const order = ok(await as(admin()).get("/realm/profile_fields")).custom_fields.map((f: any) => f.id) as number[];
    const reordered = await verifyAction(member(), async () =>
      ok(await as(admin()).patch("/realm/profile_fields", { order: JSON.stringify([second, ...order.filter((id) => id !== second)]) })));
    expect(reordered[0].fields[0].id).toBe(second);
    const own = await verifyAction(member(), async () => ok(await as(member()).patch("/users/me/profile_data", { data: JSON.stringify([{ id: first, value: "**Room** 12" }]) })));
    expect(own).toEqual([expect.objectContaining({ type: "realm_user", op: "update", person: expect.objectContaining({ custom_profile_field: expect.objectContaining({ id: first }) }) })]);
    const seen = await verifyAction(other(), async () => ok(await as(member()).patch("/users/me/profile_data", { data: JSON.stringify([{ id: second, value: "Third" }]) })));
    expect(typesOf(seen)).toEqual(["realm_user/update"]);
    const cleared = await verifyAction(other(), async () => ok(await as(member()).delete("/users/me/profile_data", { data: JSON.stringify([second]) })));
    expect(typesOf(cleared)).toEqual(["realm_user/update"]);
    const deleted = await verifyAction(other(), async () => ok(await as(admin()).delete(`/realm/profile_fields/${first}`)));
    expect(typesOf(deleted)).toEqual(["custom_profile_fields"]);
  });
});

describe("verify action: people", () => {
  it("a member deactivated and reactivated, as others see it", async () => {
    const target = org.users.moderator;
    const off = await verifyAction(member(), async () => ok(await as(owner()).delete(`/users/${target.user_id}`)));
    expect(off).toContainEqual(expect.objectContaining({ type: "realm_user", op: "update", person: { user_id: target.user_id, is_active: false } }));
    const on = await verifyAction(member(), async () => ok(await as(owner()).post(`/users/${target.user_id}/reactivate`)));
    expect(on).toContainEqual(expect.objectContaining({ type: "realm_user", op: "update", person: { user_id: target.user_id, is_active: true } }));
  });

  it("a new member joins through an invitation link, with a channel", async () => {
    const link = ok(await as(admin()).post("/invites/multiuse", { invite_expires_in_minutes: 60, stream_ids: JSON.stringify([org.channels.public.stream_id]) })).invite_link as string;
    const key = /\/join\/([a-z2-7]{24})\/$/.exec(link)![1];
    const joined = await verifyAction(member(), async () => {
      const res = await e2e.internalPost("/internal/invites/multiuse/accept", { realm_id: String(org.id), key, email: "verify-joiner@example.com", full_name: "Verify Joiner" });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }, { include_subscribers: true }, (events) => events.some((e) => e.type === "subscription" && e.op === "peer_add"));
    expect(typesOf(joined)).toEqual(expect.arrayContaining(["realm_user/add", "subscription/peer_add"]));
  });

  it("who may see one's email address", async () => {
    // Administrators only, nobody, members, everyone: as a member, an administrator and the user see each change.
    const set = (visibility: number) => async () => ok(await as(member()).patch("/settings", { email_address_visibility: visibility }));
    for (const viewer of [other(), admin(), member()]) {
      for (const visibility of [4, 5, 2, 1]) {
        const events = await verifyAction(viewer, set(visibility));
        if (viewer === member()) expect(events.map(withoutId)).toContainEqual({ type: "user_settings", op: "update", property: "email_address_visibility", value: visibility });
      }
    }
  });

  it("a status with an emoji, and cleared", async () => {
    const set = await verifyAction(member(), async () => ok(await as(other()).post("/users/me/status", { status_text: "on a boat", emoji_name: "boat" })));
    expect(set.map(withoutId)).toEqual([expect.objectContaining({ type: "user_status", user_id: other().user_id, emoji_name: "boat", emoji_code: "26f5", reaction_type: "unicode_emoji" })]);
    const cleared = await verifyAction(member(), async () => ok(await as(other()).post("/users/me/status", { status_text: "", emoji_name: "" })));
    expect(typesOf(cleared)).toEqual(["user_status"]);
  });
});

describe("verify action: user groups", () => {
  it("renamed, members removed, mention permission changed, deactivated", async () => {
    ok(await as(admin()).post("/user_groups/create", { name: "verify-e2e", description: "d", members: JSON.stringify([admin().user_id, member().user_id]) }));
    const groups = ok(await as(admin()).get("/user_groups")).user_groups;
    const id = groups.find((g: any) => g.name === "verify-e2e").id as number;
    const moderators = groups.find((g: any) => g.name === "role:moderators").id as number;
    const renamed = await verifyAction(member(), async () => ok(await as(admin()).patch(`/user_groups/${id}`, { name: "verify-e2e-renamed" })));
    expect(renamed.map(withoutId)).toEqual([{ type: "user_group", op: "update", group_id: id, data: { name: "verify-e2e-renamed" } }]);
    const mention = await verifyAction(member(), async () => ok(await as(admin()).patch(`/user_groups/${id}`, { can_mention_group: JSON.stringify({ new: moderators }) })));
    expect(typesOf(mention)).toEqual(["user_group/update"]);
    const removed = await verifyAction(member(), async () => ok(await as(admin()).post(`/user_groups/${id}/members`, { delete: JSON.stringify([member().user_id]) })));
    expect(typesOf(removed)).toEqual(["user_group/remove_members"]);
    const gone = await verifyAction(member(), async () => ok(await as(admin()).post(`/user_groups/${id}/deactivate`)));
    expect(typesOf(gone)).toEqual(["user_group/remove"]);
  });
});

describe("verify action: settings of each value type", () => {
  it("own settings: a string, a number, a boolean", async () => {
    for (const [property, value] of [["emojiset", "text"], ["web_home_view", "all_messages"], ["demote_inactive_streams", 2], ["user_list_style", 3], ["fluid_layout_width", true]] as const) {
      const events = await verifyAction(member(), async () => ok(await as(member()).patch("/settings", { [property]: value })));
      expect(events.map(withoutId), property).toEqual([{ type: "user_settings", op: "update", property, value }]);
    }
  });

  it("organization settings: a string, a number, a boolean, a channel", async () => {
    for (const [property, value] of [["default_code_block_language", "python"], ["video_chat_provider", 0], ["allow_edit_history", false], ["default_language", "de"]] as const) {
      const events = await verifyAction(member(), async () => ok(await as(owner()).patch("/realm", { [property]: typeof value === "string" ? value : JSON.stringify(value) })));
      expect(typesOf(events), property).toEqual(["realm/update"]);
    }
    const signups = await verifyAction(member(), async () => ok(await as(owner()).patch("/realm", { signup_announcements_stream_id: org.channels.public.stream_id })));
    expect(typesOf(signups)).toEqual(["realm/update"]);
  });
});

describe("verify action: channel properties", () => {
  it("name, posting policy, retention, who may unsubscribe others, history and default channels", async () => {
    const id = await channel(`props-${Date.now()}`, [admin(), member()]);
    const patch = (params: Record<string, unknown>, who = admin()) => async () => ok(await as(who).patch(`/streams/${id}`, params));
    const renamed = await verifyAction(member(), patch({ new_name: `renamed-${Date.now()}` }));
    expect(renamed).toContainEqual(expect.objectContaining({ type: "stream", op: "update", property: "name" }));
    const policy = await verifyAction(member(), patch({ stream_post_policy: 2 }));
    expect(policy.filter((e) => e.type === "stream").map((e) => e.property)).toEqual(["stream_post_policy", "is_announcement_only"]);
    const retention = await verifyAction(member(), patch({ message_retention_days: 30 }, org.users.owner));
    expect(retention).toContainEqual(expect.objectContaining({ type: "stream", property: "message_retention_days", value: 30 }));
    const groups = ok(await as(admin()).get("/user_groups")).user_groups;
    const moderators = groups.find((g: any) => g.name === "role:moderators").id;
    const unsubscribe = await verifyAction(member(), patch({ can_remove_subscribers_group: moderators }));
    expect(unsubscribe).toEqual([expect.objectContaining({ type: "stream", property: "can_remove_subscribers_group", value: moderators })]);
    const history = await verifyAction(member(), patch({ is_private: true, history_public_to_subscribers: true }));
    expect(history).toContainEqual(expect.objectContaining({ type: "stream", property: "invite_only", value: true, history_public_to_subscribers: true }));
    const byDefault = await verifyAction(member(), patch({ is_private: false, is_default_stream: true }));
    expect(typesOf(byDefault)).toEqual(expect.arrayContaining(["stream/update", "default_streams"]));
    const notDefault = await verifyAction(member(), async () => ok(await as(admin()).delete("/default_streams", { stream_id: id })));
    expect(typesOf(notDefault)).toEqual(["default_streams"]);
  });

  it("a channel the member is not in made private (gone from sight) and public again; a channel with unread messages deleted", async () => {
    const name = `privacy-${Date.now()}`;
    const id = await channel(name, [admin(), other()]);
    const hidden = await verifyAction(member(), async () => ok(await as(admin()).patch(`/streams/${id}`, { is_private: true })));
    expect(typesOf(hidden)).toEqual(["stream/delete"]);
    const shown = await verifyAction(member(), async () => ok(await as(admin()).patch(`/streams/${id}`, { is_private: false })));
    expect(typesOf(shown)).toContain("stream/create");
    const doomed = await channel(`doomed-${Date.now()}`, [admin(), member(), other()]);
    await sendBefore(other(), { type: "stream", to: doomed, topic: "last words", content: "unread when deleted" });
    await sendBefore(other(), { type: "direct", to: [member().user_id], content: "newer" });
    const deleted = await verifyAction(member(), async () => ok(await as(admin()).delete(`/streams/${doomed}`)));
    expect(typesOf(deleted)).toContain("stream/delete");
  });

  it("an administrator unsubscribes the member from a public channel; the member subscribes again", async () => {
    const name = `unsubscribed-${Date.now()}`;
    const id = await channel(name, [admin(), member(), other()]);
    await sendBefore(other(), { type: "stream", to: id, topic: "left", content: "unread when removed" });
    const removed = await verifyAction(member(), async () => ok(await as(admin()).delete("/users/me/subscriptions", { subscriptions: [name], principals: [member().user_id] })));
    expect(typesOf(removed)).toContain("subscription/remove");
    const seen = await verifyAction(other(), async () => ok(await as(member()).post("/users/me/subscriptions", { subscriptions: [{ name }] })));
    expect(typesOf(seen)).toEqual(["subscription/peer_add"]);
  });
});
