import { describe, expect, it } from "vitest";
import type { DemoOrg, DemoOrg2 } from "@chat/testkit";
import { drain, NO_RATE_LIMITS, ok, register, sleep, useDemoStack, waitForEvents } from "@chat/testkit/e2e";

/**
 * Code playgrounds and the test push notification through the whole stack (gateway, accounts,
 * events), as a Zulip client calls them: the realm_playgrounds event reaches every queue of the
 * organization and none of another's; register serves the stored list.
 */

let org: DemoOrg;
let org2: DemoOrg2;
const { as } = useDemoStack(NO_RATE_LIMITS, ({ demo }) => ([org, org2] = demo.orgs));

describe("code playgrounds through the gateway", () => {
  it("reach every queue of the organization and no other organization's; register serves them", async () => {
    const { admin, member, guest } = org.users;
    const ONLY = { event_types: ["realm_playgrounds"], fetch_event_types: ["realm_playgrounds"] };
    const memberQ = await register(as(member), ONLY);
    const guestQ = await register(as(guest), ONLY);
    const outsiderQ = await register(as(org2.users.member), ONLY);
    expect(memberQ.state.realm_playgrounds).toEqual([]);

    const playground = { name: "Rust playground", pygments_language: "Rust", url_template: "https://play.rust-lang.org/?code={code}" };
    const { id } = ok(await as(admin).post("/realm/playgrounds", playground));
    const expected = { type: "realm_playgrounds", realm_playgrounds: [{ id, ...playground }] };
    for (const q of [memberQ, guestQ]) {
      const [event, ...rest] = await waitForEvents(q, 1);
      expect(rest).toEqual([]);
      expect(event).toEqual({ id: expect.any(Number), ...expected });
    }
    await sleep(500);
    expect(await drain(outsiderQ)).toEqual([]);

    expect((await register(as(member), { fetch_event_types: ["realm_playgrounds"] })).state.realm_playgrounds).toEqual(expected.realm_playgrounds);
    const all = await register(as(org2.users.member));
    expect(all.state.realm_playgrounds).toEqual([]);

    // Errors as Zulip words them, through the gateway.
    const dup = await as(admin).post("/realm/playgrounds", playground);
    expect(dup.status).toBe(400);
    expect(dup.body).toMatchObject({ result: "error", code: "BAD_REQUEST", msg: "Realm playground with this Realm, Pygments language and Name already exists." });
    const refused = await as(member).post("/realm/playgrounds", { ...playground, name: "Mine" });
    expect(refused.body).toMatchObject({ result: "error", code: "UNAUTHORIZED_PRINCIPAL", msg: "Must be an organization administrator" });
    const foreign = await as(org2.users.owner).delete(`/realm/playgrounds/${id}`);
    expect(foreign.body).toMatchObject({ result: "error", code: "BAD_REQUEST", msg: "Invalid playground" });

    ok(await as(admin).delete(`/realm/playgrounds/${id}`));
    const [removed] = await waitForEvents(memberQ, 1);
    expect(removed).toEqual({ id: expect.any(Number), type: "realm_playgrounds", realm_playgrounds: [] });
    await sleep(300);
    expect(await drain(outsiderQ)).toEqual([]);
  });
});

describe("POST /mobile_push/test_notification through the gateway", () => {
  it("is routed (no longer 404): an unknown token is not recognized; otherwise push is not configured here", async () => {
    const { member } = org.users;
    const unknown = await as(member).post("/mobile_push/test_notification", { token: "never-registered" });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ result: "error", code: "INVALID_PUSH_DEVICE_TOKEN", msg: "Device not recognized" });
    ok(await as(member).post("/users/me/android_gcm_reg_id", { token: "e2e-device" }));
    for (const params of [{ token: "e2e-device" }, {}]) {
      const res = await as(member).post("/mobile_push/test_notification", params);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: "error", code: "PUSH_SERVICE_NOT_CONFIGURED", msg: "Server is not configured to use push notification service." });
    }
  });
});
