import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startAccounts, type Accounts, type Org, type TestUser } from "./helpers";
import { registerState } from "./settings-kit";

/**
 * An organization's authentication methods as Zulip's clients read and change them: register's
 * `realm_authentication_methods` by backend name, and PATCH /realm `authentication_methods`
 * (owners only, names this server offers, at least one on). Email and password is the only
 * method here, so no valid request changes anything.
 */

let t: Accounts;
let org: Org;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
});
afterAll(() => t?.close());

const patch = (who: TestUser, methods: unknown) => t.call("PATCH", "/realm", { as: who.as, params: { authentication_methods: JSON.stringify(methods) } });

describe("authentication methods", () => {
  it("register lists email and password, on and available, by Zulip's backend name", async () => {
    const state = await registerState(t, org.member.as, { fetch_event_types: ["realm"] });
    expect(state.realm_authentication_methods).toEqual({ Email: { enabled: true, available: true } });
  });

  it("PATCH /realm takes them from owners only, refuses unknown names and turning every method off, and changes nothing", async () => {
    await t.markOutbox();
    expectError(await patch(org.admin, { Email: true }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
    expectError(await patch(org.member, { Email: true }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    expectError(await patch(org.owner, { Email: true, GitHub: true }), 400, "BAD_REQUEST", "Invalid authentication method: GitHub.");
    expectError(await patch(org.owner, { Email: false }), 400, "BAD_REQUEST", "At least one authentication method must be enabled.");
    expectError(await patch(org.owner, {}), 400, "BAD_REQUEST", "At least one authentication method must be enabled.");
    expectError(await patch(org.owner, ["Email"]), 400, "BAD_REQUEST", "authentication_methods is not a dict");
    expectError(await patch(org.owner, null), 400, "BAD_REQUEST", "authentication_methods is not a dict");
    expectError(await patch(org.owner, { Email: "yes" }), 400, "BAD_REQUEST", 'authentication_methods["Email"] is not a boolean');
    // A name that is an object's prototype in JavaScript is just another unknown name.
    const raw = (text: string) => t.call("PATCH", "/realm", { as: org.owner.as, params: { authentication_methods: text } });
    for (const text of ['{"__proto__": true}', '{"Email": true, "__proto__": true}', '{"Email": true, "__proto__": {"Email": false}}', '{"\\u005f_proto__": true}']) {
      expectError(await raw(text), 400, "BAD_REQUEST", "Invalid authentication method: __proto__.");
    }
    // What is already so: a success that answers no change and announces nothing.
    expect(await t.ok(await patch(org.owner, { Email: true }))).toEqual({ result: "success", msg: "" });
    expect(await t.outbox()).toEqual([]);
  });
});
