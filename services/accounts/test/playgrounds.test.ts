import { RealmPlaygroundsClientEvent } from "@chat/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startAccounts, type Accounts, type Org } from "./helpers";

let t: Accounts;
let org: Org;
let other: Org;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
  other = await t.createOrg();
});
afterAll(() => t?.close());

const PYTHON = { name: "Python playground", pygments_language: "Python", url_template: "https://python.example.com?code={code}" };
const add = (params: Record<string, unknown>, as = org.admin.as) => t.call("POST", "/realm/playgrounds", { as, params });
const remove = (id: number | string, as = org.admin.as) => t.call("DELETE", `/realm/playgrounds/${id}`, { as });
const registered = async (as = org.member.as) =>
  (await t.ok(await t.call("POST", "/internal/register_state/accounts", { as, params: { fetch_event_types: ["realm_playgrounds"] } }))).realm_playgrounds;

describe("code playgrounds", () => {
  it("administrators add and remove; each change sends the whole list to the organization's active users", async () => {
    await t.markOutbox();
    const a = (await t.ok(await add(PYTHON))).id;
    // Values are stripped; the same language may have several playgrounds of different names.
    const b = (await t.ok(await add({ name: "  Python 3 ", pygments_language: " Python ", url_template: " https://p3.example.com/{#code} " }, org.owner.as))).id;
    expect(b).toBeGreaterThan(a);
    const both = [
      { id: a, ...PYTHON },
      { id: b, name: "Python 3", pygments_language: "Python", url_template: "https://p3.example.com/{#code}" },
    ];
    expect(await registered()).toEqual(both);
    expect(await registered(org.guest.as)).toEqual(both);
    await t.ok(await remove(a));
    expect(await registered()).toEqual([both[1]]);
    expect(await registered(other.member.as)).toEqual([]);

    const events = await t.outbox();
    expect(events.map((e) => e.type)).toEqual(Array(3).fill("accounts.playgrounds.changed"));
    expect(events.map((e) => e.realm_id)).toEqual(Array(3).fill(org.realmId));
    const lists = events.map((e) => RealmPlaygroundsClientEvent.parse(e.payload.client.event).realm_playgrounds);
    expect(lists).toEqual([[both[0]], both, [both[1]]]);
    const users = events[0].payload.client.users as number[];
    for (const u of [org.owner, org.admin, org.moderator, org.member, org.member2, org.guest, org.bot]) expect(users).toContain(u.user_id);
    for (const u of [other.owner, other.member]) expect(users).not.toContain(u.user_id);
  });

  it("a deactivated user is not told", async () => {
    const gone = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: `gone-${Date.now()}@x.test`, full_name: "Gone", role: 400 } }));
    await t.ok(await t.call("DELETE", `/users/${gone.user_id}`, { as: org.admin.as }));
    await t.markOutbox();
    const id = (await t.ok(await add({ name: "Gone test", pygments_language: "Rust", url_template: "https://rust.example.com/{code}" }))).id;
    const [event] = await t.outbox();
    expect(event.payload.client.users).toContain(org.member.user_id);
    expect(event.payload.client.users).not.toContain(gone.user_id);
    await t.ok(await remove(id));
  });

  it("only administrators may add or remove playgrounds", async () => {
    const [existing] = await registered();
    await t.markOutbox();
    for (const who of [org.moderator, org.member, org.guest, org.bot]) {
      expectError(await add({ ...PYTHON, name: "Mine" }, who.as), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
      expectError(await remove(existing.id, who.as), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    }
    expect(await t.outbox()).toEqual([]);
    expect(await registered()).toEqual([existing]);
  });

  it("validates the template as Zulip does: RFC 6570, with `code` its only variable", async () => {
    await t.markOutbox();
    const bad = async (params: Record<string, unknown>, msg: string, errors: Record<string, string[]>) => {
      const res = await add({ ...PYTHON, name: "Checked", ...params });
      expectError(res, 400, "BAD_REQUEST", msg);
      expect(res.body.errors).toEqual(errors);
    };
    const missing = 'Missing the required variable "code" in the URL template';
    const only = '"code" should be the only variable present in the URL template';
    await bad({ url_template: "https://invalid-url" }, missing, { __all__: [missing] });
    await bad({ url_template: "https://python.example.com?foo={bar}" }, missing, { __all__: [missing] });
    await bad({ url_template: "https://python.example.com{?foo,code}" }, only, { __all__: [only] });
    await bad({ url_template: "https://python.example.com/{code}/{lang}" }, only, { __all__: [only] });
    await bad({ url_template: "https://invalid-url.com/{code" }, "Invalid URL template.", { url_template: ["Invalid URL template."] });
    await bad({ url_template: "https://x.example.com/a b/{code}" }, "Invalid URL template.", { url_template: ["Invalid URL template."] });
    // Blank after stripping: each field's error, in the model's field order.
    await bad({ url_template: "  " }, "This field cannot be blank.", { url_template: ["This field cannot be blank."], __all__: [missing] });
    await bad({ name: " " }, "This field cannot be blank.", { name: ["This field cannot be blank."] });
    await bad({ name: "", pygments_language: "" }, "This field cannot be blank.", { name: ["This field cannot be blank."], pygments_language: ["This field cannot be blank."] });
    await bad({ pygments_language: "x".repeat(41) }, "Ensure this value has at most 40 characters (it has 41).", {
      pygments_language: ["Ensure this value has at most 40 characters (it has 41)."],
    });
    // The characters a code block's language may have are checked first, as sent.
    for (const lang of ["a$b$c", "<script>"]) {
      const res = await add({ ...PYTHON, pygments_language: lang });
      expectError(res, 400, "BAD_REQUEST", "Invalid characters in pygments language");
      expect(res.body).not.toHaveProperty("errors");
    }
    expectError(await add({ name: "x", pygments_language: "Python" }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'url_template' argument");
    expect(await t.outbox()).toEqual([]);

    // What the language may contain: letters, digits, space and _ + , - . / #
    const id = (await t.ok(await add({ name: "Odd", pygments_language: "C# 9/x_y+z,-.", url_template: "https://o.example.com/{code}" }))).id;
    await t.ok(await remove(id));
  });

  it("refuses a second playground of the same language and name in the organization, not in another", async () => {
    await t.markOutbox();
    const first = (await t.ok(await add({ ...PYTHON, name: "Twice" }))).id;
    const res = await add({ ...PYTHON, name: " Twice ", url_template: "https://elsewhere.example.com/{code}" });
    const msg = "Realm playground with this Realm, Pygments language and Name already exists.";
    expectError(res, 400, "BAD_REQUEST", msg);
    expect(res.body.errors).toEqual({ __all__: [msg] });
    // A template error comes first; the duplicate is reported with it.
    const both = await add({ ...PYTHON, name: "Twice", url_template: "https://x.example.com/" });
    expectError(both, 400, "BAD_REQUEST", 'Missing the required variable "code" in the URL template');
    expect(both.body.errors).toEqual({ __all__: ['Missing the required variable "code" in the URL template', msg] });
    const theirs = (await t.ok(await add({ ...PYTHON, name: "Twice" }, other.admin.as))).id;
    expect((await t.outbox()).map((e) => e.realm_id)).toEqual([org.realmId, other.realmId]);
    await t.ok(await remove(first));
    await t.ok(await remove(theirs, other.admin.as));
  });

  it("an unknown playground, or another organization's, is 'Invalid playground'", async () => {
    const theirs = (await t.ok(await add({ ...PYTHON, name: "Theirs" }, other.admin.as))).id;
    await t.markOutbox();
    expectError(await remove(theirs), 400, "BAD_REQUEST", "Invalid playground");
    expectError(await remove(99999999), 400, "BAD_REQUEST", "Invalid playground");
    expect(await t.outbox()).toEqual([]);
    expect((await registered(other.member.as)).map((p: any) => p.id)).toContain(theirs);
    // Not a number: no such URL, as Zulip's <int:playground_id> route.
    expect((await remove("abc")).status).toBe(404);
  });

  it("register leaves realm_playgrounds out unless asked for it", async () => {
    const s = await t.ok(await t.call("POST", "/internal/register_state/accounts", { as: org.member.as, params: { fetch_event_types: ["realm_linkifiers"] } }));
    expect(s).not.toHaveProperty("realm_playgrounds");
    const all = await t.ok(await t.call("POST", "/internal/register_state/accounts", { as: org.member.as, params: { fetch_event_types: null } }));
    expect(all.realm_playgrounds).toEqual(await registered());
  });
});
