import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

/**
 * Principals of POST /users/me/subscriptions are checked against accounts, not only messaging's
 * replica of users (which follows accounts' events a moment behind; this harness has no broker,
 * so here it never catches up at all).
 */

let m: Messaging;
let org: Org;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  await m.createStream(org.owner, "principals", [org.owner]);
});
afterAll(async () => m?.close());

const subscribe = (principals: unknown[]) => m.call("POST", "/users/me/subscriptions", org.owner, { subscriptions: JSON.stringify([{ name: "principals" }]), principals: JSON.stringify(principals) });

describe("principals", () => {
  it("a user deactivated a moment ago is not subscribed, by id or by email, and nobody else is either", async () => {
    // The replica knows the user as active.
    await m.ok(await subscribe([org.member2.user_id]));
    await m.ok(await m.call("DELETE", "/users/me/subscriptions", org.owner, { subscriptions: JSON.stringify(["principals"]), principals: JSON.stringify([org.member2.user_id]) }));
    await m.deactivate(org.member2);
    expectError(await subscribe([org.member2.user_id]), 400, "BAD_REQUEST", "No such user");
    expectError(await subscribe([org.member.email, org.member2.email]), 400, "BAD_REQUEST", "No such user");
    const members = await m.ok(await m.call("GET", `/streams/${(await m.ok(await m.call("GET", "/get_stream_id", org.owner, { stream: "principals" }))).stream_id}/members`, org.owner));
    expect(members.subscribers).toEqual([org.owner.user_id]);
  });

  it("active principals are subscribed as before", async () => {
    await m.ok(await subscribe([org.member.user_id]));
  });
});
