import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

let m: Messaging;
let org: Org;
let other: Org;
let general: number;
let hush: number;
let theirs: number;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  other = await m.createOrg();
  general = await m.createStream(org.owner, "general", [org.owner, org.member, org.guest]);
  hush = await m.createStream(org.member, "hush", [org.member, org.bot], { invite_only: true });
  theirs = await m.createStream(other.owner, "theirs", [other.owner]);
});
afterAll(async () => m?.close());
beforeEach(async () => {
  await m.outbox();
});

describe("GET /streams/{stream_id}/members", () => {
  it("lists the active subscribers to whoever may see the channel", async () => {
    expect(await m.ok(await m.call("GET", `/streams/${general}/members`, org.member2))).toEqual({
      result: "success",
      msg: "",
      subscribers: [org.owner.user_id, org.member.user_id, org.guest.user_id],
    });
    // A guest sees the members of a channel they are in; administrators those of a private one.
    expect((await m.ok(await m.call("GET", `/streams/${general}/members`, org.guest))).subscribers).toHaveLength(3);
    expect((await m.ok(await m.call("GET", `/streams/${hush}/members`, org.admin))).subscribers).toEqual([org.member.user_id, org.bot.user_id]);
  });

  it("a private channel one is not in, another organization's or a missing one is `Invalid channel ID`", async () => {
    for (const id of [hush, theirs, 999999]) expectError(await m.call("GET", `/streams/${id}/members`, org.member2), 400, "BAD_REQUEST", "Invalid channel ID");
    const lobby = await m.createStream(org.owner, "lobby", [org.owner]);
    expectError(await m.call("GET", `/streams/${lobby}/members`, org.guest), 400, "BAD_REQUEST", "Invalid channel ID");
  });
});

describe("GET /users/{user_id}/subscriptions/{stream_id}", () => {
  const status = (who: Org["member"], userId: number, streamId: number) => m.call("GET", `/users/${userId}/subscriptions/${streamId}`, who);

  it("says whether the user is subscribed", async () => {
    expect(await m.ok(await status(org.member2, org.member.user_id, general))).toEqual({ result: "success", msg: "", is_subscribed: true });
    expect((await m.ok(await status(org.member2, org.member2.user_id, general))).is_subscribed).toBe(false);
    expect((await m.ok(await status(org.admin, org.bot.user_id, hush))).is_subscribed).toBe(true);
    expect((await m.ok(await status(org.member, org.member2.user_id, hush))).is_subscribed).toBe(false);
  });

  it("checks the user first, then the channel", async () => {
    expectError(await status(org.member, 999999, 999999), 400, "BAD_REQUEST", "No such user");
    expectError(await status(org.member, other.member.user_id, general), 400, "BAD_REQUEST", "No such user");
    expectError(await status(org.member2, org.member.user_id, hush), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await status(org.member, org.member.user_id, theirs), 400, "BAD_REQUEST", "Invalid channel ID");
    const gone = await org.extra(1);
    await m.ok(await m.call("GET", `/users/${gone.user_id}/subscriptions/${general}`, org.member));
    await m.deactivate(gone);
    // The replica learns of the deactivation from accounts' events; here we refresh it as the consumer would.
    await m.deps.pool.query("UPDATE users SET is_active = false WHERE user_id = $1", [gone.user_id]);
    expectError(await status(org.member, gone.user_id, general), 400, "BAD_REQUEST", "User is deactivated");
  });
});
