import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startAccounts, type Accounts, type Org } from "./helpers";

/** POST /mobile_push/test_notification on a server without, then with, a push service configured. */

const HEX = "a1b2c3d4e5f60718293a4b5c6d7e8f90";
const NOT_CONFIGURED = "Server is not configured to use push notification service.";

let off: Accounts;
let on: Accounts;
let org: Org;
let onOrg: Org;

beforeAll(async () => {
  [off, on] = await Promise.all([startAccounts(), startAccounts({ PUSH_NOTIFICATIONS_ENABLED: "true" })]);
  [org, onOrg] = await Promise.all([off.createOrg(), on.createOrg()]);
  for (const [t, o] of [[off, org], [on, onOrg]] as const) {
    await t.ok(await t.call("POST", "/users/me/android_gcm_reg_id", { as: o.member.as, params: { token: "gcm-mine" } }));
    await t.ok(await t.call("POST", "/users/me/apns_device_token", { as: o.member.as, params: { token: HEX, appid: "org.zulip.Zulip" } }));
    await t.ok(await t.call("POST", "/users/me/android_gcm_reg_id", { as: o.member2.as, params: { token: "gcm-theirs" } }));
  }
});
afterAll(async () => {
  await Promise.all([off?.close(), on?.close()]);
});

const test = (t: Accounts, as: unknown, params: Record<string, unknown> = {}) => t.call("POST", "/mobile_push/test_notification", { as: as as any, params });

describe("POST /mobile_push/test_notification", () => {
  it("without a push service: a token the user has not registered is 'Device not recognized', anything else says push is not configured", async () => {
    const res = await test(off, org.member.as, { token: "unknown" });
    expectError(res, 400, "INVALID_PUSH_DEVICE_TOKEN", "Device not recognized");
    expect(Object.keys(res.body).sort()).toEqual(["code", "msg", "result"]);
    // Another user's token is not the caller's device.
    expectError(await test(off, org.member.as, { token: "gcm-theirs" }), 400, "INVALID_PUSH_DEVICE_TOKEN", "Device not recognized");
    expectError(await test(off, org.member.as, { token: "" }), 400, "INVALID_PUSH_DEVICE_TOKEN", "Device not recognized");
    expectError(await test(off, org.member.as, { token: "gcm-mine" }), 400, "PUSH_SERVICE_NOT_CONFIGURED", NOT_CONFIGURED);
    expectError(await test(off, org.member.as, { token: HEX }), 400, "PUSH_SERVICE_NOT_CONFIGURED", NOT_CONFIGURED);
    expectError(await test(off, org.member.as), 400, "PUSH_SERVICE_NOT_CONFIGURED", NOT_CONFIGURED);
    expectError(await test(off, org.guest.as), 400, "PUSH_SERVICE_NOT_CONFIGURED", NOT_CONFIGURED);
  });

  it("with a push service configured: the user's devices, or the named one, succeed", async () => {
    await on.ok(await test(on, onOrg.member.as));
    await on.ok(await test(on, onOrg.member.as, { token: "gcm-mine" }));
    await on.ok(await test(on, onOrg.member.as, { token: HEX }));
    // No devices at all: nothing to send to, as Zulip.
    await on.ok(await test(on, onOrg.guest.as));
    expectError(await test(on, onOrg.member.as, { token: "gcm-theirs" }), 400, "INVALID_PUSH_DEVICE_TOKEN", "Device not recognized");
  });

  it("refuses bots", async () => {
    for (const [t, o] of [[off, org], [on, onOrg]] as const) {
      expectError(await test(t, o.bot.as), 400, "BAD_REQUEST", "This endpoint does not accept bot requests.");
    }
  });
});
