import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

let m: Messaging;
let org: Org;
let other: Org;
let general: number;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  other = await m.createOrg();
  general = await m.createStream(org.owner, "general", [org.owner, org.member]);
  await m.createStream(other.owner, "theirs", [other.owner]);
});
afterAll(async () => m?.close());
beforeEach(async () => {
  await m.outbox();
});

const subscribe = (who: Org["member"], params: Record<string, unknown>) => m.call("POST", "/users/me/subscriptions", who, params);
const unsubscribe = (who: Org["member"], params: Record<string, unknown>) => m.call("DELETE", "/users/me/subscriptions", who, params);
const mySubs = async (who: Org["member"], params: Record<string, unknown> = {}) =>
  (await m.ok(await m.call("GET", "/users/me/subscriptions", who, params))).subscriptions as any[];

describe("POST /users/me/subscriptions", () => {
  it("creates a channel, subscribes the caller, and tells everyone", async () => {
    const res = await m.ok(await subscribe(org.member, { subscriptions: JSON.stringify([{ name: "Design", description: "Pixels & *things*" }]) }));
    expect(res).toEqual({ result: "success", msg: "", subscribed: { [org.member.user_id]: ["Design"] }, already_subscribed: {} });
    const events = await m.clientEvents();
    // Then the notification bot's first message in the new channel, and with it the channel's
    // first_message_id to everyone who can see the channel (Zulip, feature level 256).
    expect(events.map((e) => e.type)).toEqual([
      "messaging.stream.created",
      "messaging.subscription.added",
      "messaging.subscription.peer_added",
      "messaging.message.sent",
      "messaging.stream.updated",
    ]);
    const first = events[3].event.message.id;
    expect(events[4].event).toEqual({ type: "stream", op: "update", stream_id: events[0].event.streams[0].stream_id, name: "Design", property: "first_message_id", value: first });
    expect(events[4].users).toEqual(events[0].users);
    const created = events[0];
    expect(created.event.streams[0]).toMatchObject({ name: "Design", description: "Pixels & *things*", rendered_description: "<p>Pixels &amp; <em>things</em></p>", invite_only: false, creator_id: org.member.user_id });
    // Every non-guest of the organization learns about a public channel.
    expect(created.users).toContain(org.admin.user_id);
    expect(created.users).not.toContain(org.guest.user_id);
    const added = events[1];
    expect(added.users).toEqual([org.member.user_id]);
    expect(added.event.subscriptions[0]).toMatchObject({ name: "Design", subscribers: [org.member.user_id], is_muted: false, in_home_view: true, pin_to_top: false, color: expect.stringMatching(/^#[0-9a-f]{6}$/) });
    expect(events[2].event).toMatchObject({ op: "peer_add", user_ids: [org.member.user_id] });
    expect(events[2].users).not.toContain(org.member.user_id);
  });

  it("already_subscribed, principals by id and by email, and subscribing others needs permission", async () => {
    const res = await m.ok(await subscribe(org.owner, { subscriptions: JSON.stringify([{ name: "general" }]), principals: JSON.stringify([org.member.user_id, org.member2.user_id]) }));
    expect(res.subscribed).toEqual({ [org.member2.user_id]: ["general"] });
    expect(res.already_subscribed).toEqual({ [org.member.user_id]: ["general"] });
    await m.ok(await subscribe(org.owner, { subscriptions: JSON.stringify([{ name: "general" }]), principals: JSON.stringify([org.moderator.email]) }));
    expectError(await subscribe(org.guest, { subscriptions: JSON.stringify([{ name: "general" }]), principals: JSON.stringify([org.admin.user_id]) }), 400, "BAD_REQUEST", "Insufficient permission");
    await m.setRealmSetting(org.realmId, "invite_to_stream_policy", 2);
    expectError(await subscribe(org.member, { subscriptions: JSON.stringify([{ name: "general" }]), principals: JSON.stringify([org.admin.user_id]) }), 400, "BAD_REQUEST", "Insufficient permission");
    await m.setRealmSetting(org.realmId, "invite_to_stream_policy", 1);
  });

  it("checks the right to subscribe others first (an email counts as another user), then the principals, then the channels", async () => {
    expectError(await subscribe(org.guest, { subscriptions: JSON.stringify([{ name: "" }]), principals: JSON.stringify([999999]) }), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await subscribe(org.guest, { subscriptions: JSON.stringify([{ name: "general" }]), principals: JSON.stringify([org.guest.email]) }), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await subscribe(org.member, { subscriptions: JSON.stringify([{ name: "" }]), principals: JSON.stringify([999999]) }), 400, "BAD_REQUEST", "No such user");
    // One's own id is not another user.
    expectError(await subscribe(org.guest, { subscriptions: JSON.stringify([{ name: "" }]), principals: JSON.stringify([org.guest.user_id]) }), 400, "BAD_REQUEST", "Channel name can't be empty.");
  });

  it("an empty principals list subscribes the caller", async () => {
    const res = await m.ok(await subscribe(other.member2, { subscriptions: JSON.stringify([{ name: "empty-principals" }]), principals: "[]" }));
    expect(res).toEqual({
      result: "success",
      msg: "",
      subscribed: { [other.member2.user_id]: ["empty-principals"] },
      already_subscribed: {},
    });
    const removed = await m.ok(await unsubscribe(other.member2, { subscriptions: JSON.stringify(["empty-principals"]), principals: "[]" }));
    expect(removed).toMatchObject({ removed: ["empty-principals"], not_removed: [] });
  });

  it("private channels: creation, invisible to others, `Unable to access`", async () => {
    await m.ok(await subscribe(org.member, { subscriptions: JSON.stringify([{ name: "hush" }]), invite_only: true }));
    const events = await m.clientEvents();
    const created = events.find((e) => e.type === "messaging.stream.created")!;
    // Only subscribers and administrators hear of a private channel.
    expect([...created.users].sort((a: number, b: number) => a - b)).toEqual([org.owner, org.admin, org.member].map((u) => u.user_id).sort((a, b) => a - b));
    expect(created.event.streams[0]).toMatchObject({ invite_only: true, history_public_to_subscribers: false });
    expectError(await subscribe(org.member2, { subscriptions: JSON.stringify([{ name: "hush" }]) }), 400, "BAD_REQUEST", "Unable to access channel (hush).");
    const lenient = await m.ok(await subscribe(org.member2, { subscriptions: JSON.stringify([{ name: "hush" }, { name: "general" }]), authorization_errors_fatal: false }));
    expect(lenient.unauthorized).toEqual(["hush"]);
    expect(lenient.already_subscribed).toEqual({ [org.member2.user_id]: ["general"] });
    expectError(await m.call("GET", "/get_stream_id", org.member2, { stream: "hush" }), 400, "BAD_REQUEST", "Invalid channel name 'hush'");
    expect((await m.ok(await m.call("GET", "/get_stream_id", org.admin, { stream: "hush" }))).stream_id).toBeGreaterThan(0);
  });

  it("validates names, policies and creation rights", async () => {
    const before = await m.count("streams");
    expectError(await subscribe(org.member, { subscriptions: JSON.stringify([{ name: "  " }]) }), 400, "BAD_REQUEST", "Channel name can't be empty.");
    expectError(await subscribe(org.member, { subscriptions: JSON.stringify([{ name: "x".repeat(61) }]) }), 400, "BAD_REQUEST", "Channel name too long (limit: 60 characters).");
    expectError(await subscribe(org.member, { subscriptions: JSON.stringify([{ name: "a\u0001b" }]) }), 400, "BAD_REQUEST", "Invalid character in channel name, at position 2.");
    expectError(await subscribe(org.member, { subscriptions: JSON.stringify([{ name: "d", description: "x".repeat(1025) }]) }), 400, "BAD_REQUEST", /description too long/);
    expectError(await subscribe(org.member, { subscriptions: "[{" }), 400, "BAD_REQUEST", "subscriptions is not valid JSON");
    expectError(await subscribe(org.member, { subscriptions: JSON.stringify([{ description: "no name" }]) }), 400, "BAD_REQUEST");
    expectError(await subscribe(org.member, {}), 400, "REQUEST_VARIABLE_MISSING", "Missing 'subscriptions' argument");
    expectError(await subscribe(org.member, { subscriptions: JSON.stringify([{ name: "p5" }]), stream_post_policy: 5 }), 400, "BAD_REQUEST", "Invalid stream_post_policy");
    expectError(await subscribe(org.guest, { subscriptions: JSON.stringify([{ name: "guest-made" }]) }), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await subscribe(org.member, { subscriptions: JSON.stringify([{ name: "web" }]), is_web_public: true }), 400, "BAD_REQUEST", "Web-public channels are not enabled.");
    await m.setRealmSetting(org.realmId, "enable_spectator_access", true);
    expectError(await subscribe(org.member, { subscriptions: JSON.stringify([{ name: "web" }]), is_web_public: true }), 400, "BAD_REQUEST", "Insufficient permission");
    await m.setRealmSetting(org.realmId, "enable_spectator_access", false);
    expectError(await subscribe(org.member, { subscriptions: JSON.stringify([{ name: "keep" }]), message_retention_days: "30" }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
    expectError(
      await subscribe(org.owner, { subscriptions: JSON.stringify([{ name: "keep" }]), message_retention_days: "0" }),
      400,
      "REQUEST_VARIABLE_INVALID",
      "Bad value for 'message_retention_days': 0",
    );
    expectError(await subscribe(org.member, { subscriptions: JSON.stringify([{ name: "x" }]), principals: JSON.stringify([999999]) }), 400, "BAD_REQUEST", "No such user");
    expectError(await subscribe(org.owner, { subscriptions: JSON.stringify([{ name: "x" }]), principals: JSON.stringify([other.member.user_id]) }), 400, "BAD_REQUEST", "No such user");
    expectError(await subscribe(org.owner, { subscriptions: JSON.stringify([{ name: "x" }]), can_remove_subscribers_group: 999999 }), 400, "BAD_REQUEST", "Invalid user group");
    expect(await m.count("streams")).toBe(before);
    const kept = await m.ok(await subscribe(org.owner, { subscriptions: JSON.stringify([{ name: "archive" }]), message_retention_days: "30", stream_post_policy: 2 }));
    expect(kept.subscribed).toEqual({ [org.owner.user_id]: ["archive"] });
    const subs = await mySubs(org.owner);
    expect(subs.find((s) => s.name === "archive")).toMatchObject({ message_retention_days: 30, stream_post_policy: 2, is_announcement_only: true });
  });
});

describe("GET /users/me/subscriptions, GET /streams, GET /get_stream_id", () => {
  it("lists subscriptions with every field of spec 2.5, subscribers on request", async () => {
    const subs = await mySubs(org.member, { include_subscribers: true });
    const g = subs.find((s) => s.stream_id === general);
    expect(Object.keys(g).sort()).toEqual(
      [
        "audible_notifications", "can_remove_subscribers_group", "color", "creator_id", "date_created", "description", "desktop_notifications",
        "email_notifications", "first_message_id", "history_public_to_subscribers", "in_home_view", "invite_only", "is_announcement_only",
        "is_muted", "is_web_public", "message_retention_days", "name", "pin_to_top", "push_notifications", "rendered_description",
        "stream_id", "stream_post_policy", "stream_weekly_traffic", "subscribers", "wildcard_mentions_notify",
      ].sort(),
    );
    expect(g.subscribers).toContain(org.member.user_id);
    expect((await mySubs(org.member)).find((s) => s.stream_id === general).subscribers).toBeUndefined();
  });

  it("GET /streams respects the include flags and roles", async () => {
    const names = async (who: Org["member"], params: Record<string, unknown> = {}) =>
      ((await m.ok(await m.call("GET", "/streams", who, params))).streams as any[]).map((s) => s.name).sort();
    expect(await names(org.member2)).toEqual(["Design", "archive", "general"].sort());
    expect(await names(org.member)).toEqual(["Design", "archive", "general", "hush"].sort());
    expect(await names(org.guest)).toEqual([]);
    expectError(await m.call("GET", "/streams", org.member, { include_all_active: true }), 400, "BAD_REQUEST", "User not authorized for this query");
    expect(await names(org.admin, { include_all_active: true })).toContain("hush");
    // In name order as sent, by code point as Zulip sorts them.
    const sent = (await m.ok(await m.call("GET", "/streams", org.member))).streams.map((s: any) => s.name);
    expect(sent).toEqual(["Design", "archive", "general", "hush"]);
    const withDefault = (await m.ok(await m.call("GET", "/streams", org.member, { include_default: true }))).streams;
    expect(withDefault.every((s: any) => s.is_default === false)).toBe(true);
  });

  it("GET /streams include_owner_subscribed: a bot also gets its owner's channels, private ones included", async () => {
    const names = async (who: Org["member"], params: Record<string, unknown>) =>
      ((await m.ok(await m.call("GET", "/streams", who, params))).streams as any[]).map((s) => s.name).sort();
    const onlyOwner = { include_public: false, include_subscribed: false, include_owner_subscribed: true };
    // The bot's owner is the member, who is in "hush" (private) and "general"; the bot is in neither.
    expect(await names(org.bot, onlyOwner)).toEqual(["Design", "general", "hush"].sort());
    expect(await names(org.bot, { include_public: false, include_subscribed: false })).toEqual([]);
    // For a human the flag adds nothing.
    expect(await names(org.member2, onlyOwner)).toEqual([]);
  });

  it("GET /streams include_owner_subscribed: the owner's channels take the place of the bot's own", async () => {
    const names = async (who: Org["member"], params: Record<string, unknown>) =>
      ((await m.ok(await m.call("GET", "/streams", who, params))).streams as any[]).map((s) => s.name).sort();
    await m.createStream(org.owner, "bots-only", [org.owner, org.bot], { invite_only: true });
    expect(await names(org.bot, { include_public: false })).toEqual(["bots-only"]);
    // The bot's owner (the member) is not in "bots-only", so Zulip leaves it out.
    expect(await names(org.bot, { include_public: false, include_owner_subscribed: true })).toEqual(["Design", "general", "hush"].sort());
  });

  it("GET /get_stream_id and GET /streams/{id}", async () => {
    expect((await m.ok(await m.call("GET", "/get_stream_id", org.member, { stream: "GENERAL" }))).stream_id).toBe(general);
    expectError(await m.call("GET", "/get_stream_id", org.member, { stream: "theirs" }), 400, "BAD_REQUEST", "Invalid channel name 'theirs'");
    expectError(await m.call("GET", "/get_stream_id", org.member, {}), 400, "REQUEST_VARIABLE_MISSING");
    expect((await m.ok(await m.call("GET", `/streams/${general}`, org.member))).stream.name).toBe("general");
    expectError(await m.call("GET", "/streams/999999", org.member), 400, "BAD_REQUEST", "Invalid channel ID");
  });
});

describe("POST /users/me/subscriptions/properties", () => {
  it("updates each property with its event; is_muted and in_home_view emit both, in_home_view first", async () => {
    const changes = [
      { stream_id: general, property: "color", value: "#abcdef" },
      { stream_id: general, property: "pin_to_top", value: true },
      { stream_id: general, property: "desktop_notifications", value: false },
      { stream_id: general, property: "audible_notifications", value: true },
      { stream_id: general, property: "push_notifications", value: true },
      { stream_id: general, property: "email_notifications", value: false },
      { stream_id: general, property: "wildcard_mentions_notify", value: true },
      { stream_id: general, property: "is_muted", value: true },
    ];
    await m.ok(await m.call("POST", "/users/me/subscriptions/properties", org.member, { subscription_data: JSON.stringify(changes) }));
    const events = (await m.clientEvents()).map((e) => [e.event.property, e.event.value]);
    expect(events).toEqual([
      ["color", "#abcdef"], ["pin_to_top", true], ["desktop_notifications", false], ["audible_notifications", true],
      ["push_notifications", true], ["email_notifications", false], ["wildcard_mentions_notify", true], ["in_home_view", false], ["is_muted", true],
    ]);
    const g = (await mySubs(org.member)).find((s) => s.stream_id === general);
    expect(g).toMatchObject({ color: "#abcdef", pin_to_top: true, desktop_notifications: false, is_muted: true, in_home_view: false, wildcard_mentions_notify: true });
    await m.ok(await m.call("POST", "/users/me/subscriptions/properties", org.member, { subscription_data: JSON.stringify([{ stream_id: general, property: "in_home_view", value: true }]) }));
    expect((await m.clientEvents()).map((e) => [e.event.property, e.event.value])).toEqual([["in_home_view", true], ["is_muted", false]]);
    expect((await mySubs(org.member)).find((s) => s.stream_id === general).is_muted).toBe(false);
  });

  it("refuses unknown properties, wrong value types, unsubscribed and hidden channels, all or nothing", async () => {
    const props = (data: unknown) => m.call("POST", "/users/me/subscriptions/properties", org.member, { subscription_data: JSON.stringify(data) });
    const ok = { stream_id: general, property: "pin_to_top", value: false };
    expectError(await props([ok, { stream_id: general, property: "volume", value: 11 }]), 400, "BAD_REQUEST", "Unknown subscription property: volume");
    expectError(await props([ok, { stream_id: general, property: "is_muted", value: "yes" }]), 400, "BAD_REQUEST", "is_muted is not a boolean");
    expectError(await props([ok, { stream_id: general, property: "color", value: "red" }]), 400, "BAD_REQUEST", "color is not a valid hex color code");
    expectError(await props([ok, { stream_id: general, property: "color", value: true }]), 400, "BAD_REQUEST", "color is not a string");
    const archive = (await mySubs(org.owner)).find((s) => s.name === "archive").stream_id;
    expectError(await props([ok, { stream_id: archive, property: "pin_to_top", value: true }]), 400, "BAD_REQUEST", `Not subscribed to channel ID ${archive}`);
    expectError(await props([{ stream_id: 999999, property: "pin_to_top", value: true }]), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await props([{ stream_id: general, property: "pin_to_top" }]), 400, "BAD_REQUEST");
    expectError(await m.call("POST", "/users/me/subscriptions/properties", org.member, { subscription_data: "nope" }), 400, "BAD_REQUEST", "subscription_data is not valid JSON");
    expect(await m.clientEvents()).toEqual([]);
    expect((await mySubs(org.member)).find((s) => s.stream_id === general).pin_to_top).toBe(true);
  });

  it("takes a color as a hex color string, the short #rgb form too (Zulip's check_color)", async () => {
    const color = (value: string) =>
      m.call("POST", "/users/me/subscriptions/properties", org.member, { subscription_data: JSON.stringify([{ stream_id: general, property: "color", value }]) });
    await m.ok(await color("#f0A"));
    expect((await mySubs(org.member)).find((s) => s.stream_id === general).color).toBe("#f0A");
    for (const bad of ["#ab", "#abcdefa", "abcdef", "#ggg"]) expectError(await color(bad), 400, "BAD_REQUEST", "color is not a valid hex color code");
    await m.ok(await color("#abcdef"));
    await m.clientEvents();
  });

  it("checks the property's name before the channel, as Zulip does", async () => {
    const props = (data: unknown) => m.call("POST", "/users/me/subscriptions/properties", org.member, { subscription_data: JSON.stringify(data) });
    expectError(await props([{ stream_id: 999999, property: "volume", value: 11 }]), 400, "BAD_REQUEST", "Unknown subscription property: volume");
    expectError(await props([{ stream_id: 999999, property: "color", value: "red" }]), 400, "BAD_REQUEST", "Invalid channel ID");
  });
});

describe("DELETE /users/me/subscriptions", () => {
  it("unsubscribes oneself: removed / not_removed and the events", async () => {
    const res = await m.ok(await unsubscribe(org.member2, { subscriptions: JSON.stringify(["general", "Design"]) }));
    expect(res).toMatchObject({ removed: ["general"], not_removed: ["Design"] });
    const events = await m.clientEvents();
    expect(events.map((e) => e.type)).toEqual(["messaging.subscription.removed", "messaging.subscription.peer_removed"]);
    expect(events[0].event).toEqual({ type: "subscription", op: "remove", subscriptions: [{ stream_id: general, name: "general" }] });
    expect(events[1].event).toEqual({ type: "subscription", op: "peer_remove", stream_ids: [general], user_ids: [org.member2.user_id] });
  });

  it("what one left unread in the channel is marked read, with an update_message_flags event", async () => {
    await m.createStream(org.owner, "chatty", [org.owner, org.member2]);
    const a = await m.send(org.owner, { type: "stream", to: "chatty", topic: "t", content: "unread one" });
    const b = await m.send(org.owner, { type: "stream", to: "chatty", topic: "t", content: "read one" });
    const c = await m.send(org.owner, { type: "stream", to: "chatty", topic: "u", content: "unread two" });
    await m.ok(await m.call("POST", "/messages/flags", org.member2, { messages: JSON.stringify([b]), op: "add", flag: "read" }));
    await m.outbox();
    await m.ok(await unsubscribe(org.member2, { subscriptions: JSON.stringify(["chatty"]) }));
    const flags = (await m.clientEvents()).filter((e) => e.type === "messaging.message_flags.updated");
    expect(flags.map((e) => [e.users, e.event])).toEqual([
      [[org.member2.user_id], { type: "update_message_flags", op: "add", operation: "add", flag: "read", messages: [a, c], all: false }],
    ]);
    const unread = await m.ok(await m.call("GET", "/messages", org.member2, { anchor: "newest", num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: "is", operand: "unread" }]) }));
    expect(unread.messages.map((msg: { id: number }) => msg.id)).not.toEqual(expect.arrayContaining([a]));
    expect(unread.messages.map((msg: { id: number }) => msg.id)).not.toContain(c);
  });

  it("a missing or hidden channel is STREAM_DOES_NOT_EXIST with `stream`", async () => {
    for (const name of ["nope", "hush", "theirs"]) {
      const res = await unsubscribe(org.member2, { subscriptions: JSON.stringify([name]) });
      expectError(res, 400, "STREAM_DOES_NOT_EXIST", `Channel '${name}' does not exist`);
      expect(res.body.stream).toBe(name);
    }
  });

  it("reads the principals before the channels", async () => {
    expectError(await unsubscribe(org.owner, { subscriptions: JSON.stringify(["nope"]), principals: JSON.stringify([999999]) }), 400, "BAD_REQUEST", "No such user");
  });

  it("unknown or deactivated principals are BAD_REQUEST", async () => {
    expectError(await unsubscribe(org.owner, { subscriptions: JSON.stringify(["general"]), principals: JSON.stringify([999999]) }), 400, "BAD_REQUEST", "No such user");
    expectError(await unsubscribe(org.owner, { subscriptions: JSON.stringify(["general"]), principals: JSON.stringify(["ghost@nowhere.test"]) }), 400, "BAD_REQUEST", "No such user");
    const gone = await org.extra(1);
    await m.ok(await subscribe(org.owner, { subscriptions: JSON.stringify([{ name: "general" }]), principals: JSON.stringify([gone.user_id]) }));
    await m.deactivate(gone);
    // The replica learns of the deactivation from accounts' events; here we refresh it as the consumer would.
    await m.deps.pool.query("UPDATE users SET is_active = false WHERE user_id = $1", [gone.user_id]);
    expectError(await unsubscribe(org.owner, { subscriptions: JSON.stringify(["general"]), principals: JSON.stringify([gone.user_id]) }), 400, "BAD_REQUEST", "No such user");
  });

  it("rule 1: administrators may remove anyone", async () => {
    await m.ok(await subscribe(org.owner, { subscriptions: JSON.stringify([{ name: "general" }]), principals: JSON.stringify([org.member2.user_id]) }));
    const res = await m.ok(await unsubscribe(org.admin, { subscriptions: JSON.stringify(["general"]), principals: JSON.stringify([org.member2.email]) }));
    expect(res.removed).toEqual(["general"]);
  });

  it("rule 2: a user may remove a bot they own, but not another user", async () => {
    await m.ok(await subscribe(org.owner, { subscriptions: JSON.stringify([{ name: "general" }]), principals: JSON.stringify([org.bot.user_id, org.member2.user_id]) }));
    expectError(await unsubscribe(org.member, { subscriptions: JSON.stringify(["general"]), principals: JSON.stringify([org.member2.user_id]) }), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await unsubscribe(org.member2, { subscriptions: JSON.stringify(["general"]), principals: JSON.stringify([org.bot.user_id]) }), 400, "BAD_REQUEST", "Insufficient permission");
    const res = await m.ok(await unsubscribe(org.member, { subscriptions: JSON.stringify(["general"]), principals: JSON.stringify([org.bot.user_id]) }));
    expect(res.removed).toEqual(["general"]);
  });

  it("rule 3: members of the channel's can_remove_subscribers_group may remove anyone", async () => {
    await m.ok(await subscribe(org.owner, { subscriptions: JSON.stringify([{ name: "garden" }]), principals: JSON.stringify([org.owner.user_id, org.member2.user_id]) }));
    // The default group is the administrators: a moderator may not.
    expectError(await unsubscribe(org.moderator, { subscriptions: JSON.stringify(["garden"]), principals: JSON.stringify([org.member2.user_id]) }), 400, "BAD_REQUEST", "Insufficient permission");
    const groupId = await m.createGroup(org.owner, "gardeners", [org.moderator]);
    await m.ok(
      await subscribe(org.owner, { subscriptions: JSON.stringify([{ name: "garden2" }]), principals: JSON.stringify([org.owner.user_id, org.member2.user_id]), can_remove_subscribers_group: groupId }),
    );
    const sub = (await mySubs(org.owner)).find((s) => s.name === "garden2");
    expect(sub.can_remove_subscribers_group).toBe(groupId);
    const res = await m.ok(await unsubscribe(org.moderator, { subscriptions: JSON.stringify(["garden2"]), principals: JSON.stringify([org.member2.user_id]) }));
    expect(res.removed).toEqual(["garden2"]);
    // A system group works too.
    await m.ok(
      await subscribe(org.owner, { subscriptions: JSON.stringify([{ name: "garden3" }]), principals: JSON.stringify([org.member2.user_id]), can_remove_subscribers_group: (await realmGroups()).moderators }),
    );
    expect((await m.ok(await unsubscribe(org.moderator, { subscriptions: JSON.stringify(["garden3"]), principals: JSON.stringify([org.member2.user_id]) }))).removed).toEqual(["garden3"]);
  });

  it("leaving a private channel hides it from a non-administrator", async () => {
    await m.ok(await subscribe(org.member, { subscriptions: JSON.stringify([{ name: "hush" }]) }));
    await m.outbox();
    await m.ok(await unsubscribe(org.member, { subscriptions: JSON.stringify(["hush"]) }));
    const events = await m.clientEvents();
    const hidden = events.find((e) => e.type === "messaging.stream.hidden")!;
    expect(hidden.users).toEqual([org.member.user_id]);
    expect(hidden.event).toMatchObject({ type: "stream", op: "delete" });
    expect(events.find((e) => e.type === "messaging.subscription.peer_removed")!.users).not.toContain(org.member2.user_id);
  });

  it("a user who gains sight of a channel by a subscription gets its stream create first; losing it, a delete", async () => {
    await m.createStream(org.owner, "backroom", [org.owner], { invite_only: true });
    await m.createStream(org.owner, "lobby", [org.owner]);
    await m.outbox();
    await m.ok(await subscribe(org.owner, { subscriptions: JSON.stringify([{ name: "backroom" }, { name: "lobby" }]), principals: JSON.stringify([org.member2.user_id, org.guest.user_id, org.admin.user_id]) }));
    const events = await m.clientEvents();
    const creates = events.filter((e) => e.type === "messaging.stream.revealed");
    const seen = creates.map((e) => [e.users[0], e.event.streams[0].name]).sort();
    // member2 could not see the private one, the guest neither; the administrator saw both.
    expect(seen).toEqual([
      [org.member2.user_id, "backroom"],
      [org.guest.user_id, "backroom"],
      [org.guest.user_id, "lobby"],
    ].sort());
    for (const e of creates) expect(e.event).toMatchObject({ type: "stream", op: "create", streams: [{ invite_only: e.event.streams[0].name === "backroom" }] });
    // Each create comes before that user's subscription add.
    const index = (type: string, userId: number) => events.findIndex((e) => e.type === type && e.users.includes(userId));
    expect(index("messaging.stream.revealed", org.guest.user_id)).toBeLessThan(index("messaging.subscription.added", org.guest.user_id));
    await m.ok(await unsubscribe(org.owner, { subscriptions: JSON.stringify(["lobby"]), principals: JSON.stringify([org.guest.user_id, org.member2.user_id]) }));
    const hidden = (await m.clientEvents()).filter((e) => e.type === "messaging.stream.hidden");
    expect(hidden.map((e) => e.users)).toEqual([[org.guest.user_id]]);
  });

  it("bad input", async () => {
    expectError(await unsubscribe(org.member, {}), 400, "REQUEST_VARIABLE_MISSING", "Missing 'subscriptions' argument");
    expectError(await unsubscribe(org.member, { subscriptions: "general" }), 400, "BAD_REQUEST", "subscriptions is not valid JSON");
    expectError(await unsubscribe(org.member, { subscriptions: JSON.stringify(["general"]), principals: "{" }), 400, "BAD_REQUEST", "principals is not valid JSON");
  });
});

async function realmGroups(): Promise<{ moderators: number }> {
  const realm = await m.deps.accounts.getRealm(org.realmId);
  return { moderators: realm.system_groups["role:moderators"] };
}
