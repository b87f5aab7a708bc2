import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startAccounts, type Accounts, type Org, type TestUser } from "./helpers";
import { notices } from "./settings-kit";

/**
 * Differences from Zulip found by auditing custom profile fields and linkifiers against the spec,
 * Zulip's OpenAPI description and the notes, each shown through what a client reads: the answer,
 * the stored list, and the events (none when a request is refused).
 */
let t: Accounts;
let org: Org;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
});
afterAll(() => t?.close());

const createField = (params: Record<string, unknown>) => t.call("POST", "/realm/profile_fields", { as: org.admin.as, params });
const editField = (id: number, params: Record<string, unknown>) => t.call("PATCH", `/realm/profile_fields/${id}`, { as: org.admin.as, params });
const fields = async () => (await t.ok(await t.call("GET", "/realm/profile_fields", { as: org.member.as }))).custom_fields as any[];
const setOwn = (who: TestUser, data: unknown) => t.call("PATCH", "/users/me/profile_data", { as: who.as, params: { data } });
const profileOf = async (who: TestUser) => (await t.ok(await t.call("GET", "/users/me", { as: who.as }))).profile_data;

/** Each request is refused with its message, and no field changes nor is announced. */
async function refusedAll(cases: Array<[Promise<{ status: number; body: any }>, string]>) {
  const before = await fields();
  await t.markOutbox();
  for (const [res, msg] of cases) expectError(await res, 400, "BAD_REQUEST", msg);
  expect(await notices(t)).toEqual([]);
  expect(await fields()).toEqual(before);
}

describe("custom profile field definitions", () => {
  // Zulip strips the label before checking and storing it.
  it("labels lose their surrounding spaces, on create and on edit, so a padded copy of a label is taken", async () => {
    const id = (await t.ok(await createField({ name: "  Office  ", field_type: 1 }))).id;
    expect((await fields()).find((f) => f.id === id).name).toBe("Office");
    expectError(await createField({ name: "Office ", field_type: 1 }), 400, "BAD_REQUEST", "A field with that label already exists.");
    expectError(await createField({ name: "   ", field_type: 1 }), 400, "BAD_REQUEST", "Label cannot be blank.");
    await t.ok(await editField(id, { name: " Room " }));
    expect((await fields()).find((f) => f.id === id).name).toBe("Room");
  });

  // Zulip checks each option with check_dict_only named "field_data", so its messages name the
  // whole field_data rather than the option.
  it("list-of-options choices are refused with the messages of Zulip's dict check", async () => {
    const select = (field_data: unknown) => createField({ name: "Editor", field_type: 3, field_data });
    await refusedAll([
      [select({ vim: ["1"] }), "field_data is not a dict"],
      [select({ vim: { text: "Vim" } }), "order key is missing from field_data"],
      [select({ vim: { order: "1" } }), "text key is missing from field_data"],
      [select({ vim: { text: "Vim", order: 1 } }), 'field_data["order"] is not a string'],
      [select({ vim: { text: " ", order: "1" } }), 'field_data["text"] cannot be blank.'],
      [select({ vim: { text: "Vim", order: "1", color: "red" } }), "Unexpected arguments: color"],
      [select({ "": { text: "Vim", order: "1" } }), "'value' cannot be blank."],
      // The field data is checked before the label.
      [createField({ name: "", field_type: 3, field_data: {} }), "Field must have at least one choice."],
    ]);
  });

  it("external accounts: Zulip's messages for the subtype and a custom URL pattern, which must be a URL around one %(username)s", async () => {
    const account = (field_data: unknown) => createField({ name: "Profile", field_type: 7, field_data });
    await refusedAll([
      [account({}), "subtype key is missing from field_data"],
      [account({ subtype: "" }), 'field_data["subtype"] cannot be blank.'],
      [account({ subtype: 7 }), 'field_data["subtype"] is not a string'],
      [account({ subtype: "custom" }), "Custom external account must define URL pattern"],
      [account({ subtype: "custom", url_pattern: 5 }), 'field_data["url_pattern"] is not a string'],
      [account({ subtype: "custom", url_pattern: "https://forum.example.com/u/%(username)s/%(username)s" }), "Malformed URL pattern."],
      [account({ subtype: "custom", url_pattern: "forum.example.com/u/%(username)s" }), 'field_data["url_pattern"] is not a URL'],
      // Django's URL check wants a top-level domain (or localhost, or an address).
      [account({ subtype: "custom", url_pattern: "https://forum/u/%(username)s" }), 'field_data["url_pattern"] is not a URL'],
      [account({ subtype: "custom", url_pattern: "https://forum.example.com/u/%(username)s", label: "x" }), "Unexpected arguments: label"],
      [account({ subtype: "constructor" }), "Invalid external account type"],
    ]);
    const id = (await t.ok(await account({ subtype: "custom", url_pattern: "https://forum.example.com/u?name=%(username)s" }))).id;
    expect((await fields()).find((f) => f.id === id).field_data).toBe('{"subtype":"custom","url_pattern":"https://forum.example.com/u?name=%(username)s"}');
  });

  // Zulip refuses a change of a built-in account's label, hint or field data, but accepts them
  // sent unchanged (as its settings page sends them) with a change of the other flags.
  it("a built-in account keeps its label, hint and kind, and may be sent them unchanged with other changes", async () => {
    const id = (await t.ok(await createField({ field_type: 7, field_data: { subtype: "github" } }))).id;
    await refusedAll([
      [editField(id, { field_data: { subtype: "twitter" } }), "Default custom field cannot be updated."],
      [editField(id, { name: "Git" }), "Default custom field cannot be updated."],
      [editField(id, { hint: "Your handle" }), "Default custom field cannot be updated."],
    ]);
    await t.markOutbox();
    await t.ok(await editField(id, { name: "GitHub", hint: "Enter your GitHub username", field_data: { subtype: "github" }, required: true }));
    expect((await fields()).find((f) => f.id === id)).toMatchObject({ name: "GitHub", field_data: '{"subtype":"github"}', required: true });
    expect((await notices(t)).map((n) => n.event.type)).toEqual(["custom_profile_fields"]);
  });
});

describe("custom profile field values", () => {
  const ids: Record<string, number> = {};
  beforeAll(async () => {
    ids.site = (await t.ok(await createField({ name: "Website", field_type: 5 }))).id;
    ids.birthday = (await t.ok(await createField({ name: "Birthday", field_type: 4 }))).id;
    ids.mentor = (await t.ok(await createField({ name: "Mentor", field_type: 6 }))).id;
  });

  /** Each value is refused with its message; the user's values stay as they were and nobody is told. */
  async function refusedValues(who: TestUser, cases: Array<[unknown, string]>) {
    const before = await profileOf(who);
    await t.markOutbox();
    for (const [data, msg] of cases) expectError(await setOwn(who, data), 400, "BAD_REQUEST", msg);
    expect(await notices(t)).toEqual([]);
    expect(await profileOf(who)).toEqual(before);
  }

  // Zulip checks links with Django's URLValidator.
  it("links are checked as Django's URL validator checks them", async () => {
    await refusedValues(org.member, [
      [[{ id: ids.site, value: "http://intranet" }], "Website is not a URL"],
      [[{ id: ids.site, value: "https://example.com/my page" }], "Website is not a URL"],
      [[{ id: ids.site, value: "mailto:me@example.com" }], "Website is not a URL"],
    ]);
    await t.ok(await setOwn(org.member, [{ id: ids.site, value: "ftp://files.example.com/me" }]));
    expect((await profileOf(org.member))[ids.site]).toEqual({ value: "ftp://files.example.com/me" });
    await t.ok(await setOwn(org.member, [{ id: ids.site, value: "http://localhost:8000/me" }]));
  });

  // Zulip reads the date with strptime and writes it back: a year before 1000 does not survive that.
  it("dates must read back unchanged: no year 0 and no year before 1000", async () => {
    await refusedValues(org.member, [
      [[{ id: ids.birthday, value: "0000-01-01" }], "Birthday is not a date"],
      [[{ id: ids.birthday, value: "0999-12-31" }], "Birthday is not a date"],
      [[{ id: ids.birthday, value: "2001-02-29" }], "Birthday is not a date"],
    ]);
    await t.ok(await setOwn(org.member, [{ id: ids.birthday, value: "1000-01-01" }]));
  });

  // Zulip's check_valid_user_ids: the list is named "User IDs"; a deactivated user or a bot is
  // refused by name.
  it("a person picker names active humans of the organization, with Zulip's messages for the others", async () => {
    const gone = org.moderator;
    await t.ok(await t.call("DELETE", `/users/${gone.user_id}`, { as: org.admin.as }));
    await refusedValues(org.member2, [
      [[{ id: ids.mentor, value: "Olivia" }], "User IDs is not a list"],
      [[{ id: ids.mentor, value: [org.owner.user_id, gone.user_id] }], `User with ID ${gone.user_id} is deactivated`],
      [[{ id: ids.mentor, value: [org.bot.user_id] }], `User with ID ${org.bot.user_id} is a bot`],
      [[{ id: ids.mentor, value: [999_999_999] }], "Invalid user ID: 999999999"],
    ]);
    // An administrator setting someone else's value gets the same answers.
    expectError(
      await t.call("PATCH", `/users/${org.member2.user_id}`, { as: org.admin.as, params: { profile_data: [{ id: ids.mentor, value: [org.bot.user_id] }] } }),
      400,
      "BAD_REQUEST",
      `User with ID ${org.bot.user_id} is a bot`,
    );
    await t.ok(await setOwn(org.member2, [{ id: ids.mentor, value: [org.owner.user_id] }]));
    expect((await profileOf(org.member2))[ids.mentor]).toEqual({ value: JSON.stringify([org.owner.user_id]) });
  });
});

describe("linkifiers", () => {
  const add = (pattern: string, url_template: string) => t.call("POST", "/realm/filters", { as: org.admin.as, params: { pattern, url_template } });
  const list = async () => (await t.ok(await t.call("GET", "/realm/linkifiers", { as: org.member.as }))).linkifiers as any[];

  // Zulip strips both before validating and storing them.
  it("pattern and URL template lose their surrounding spaces, on add and on edit", async () => {
    await t.markOutbox();
    const id = (await t.ok(await add("  #(?P<id>[0-9]+) ", " https://tracker.example.com/{id}\n"))).id;
    const stored = { id, pattern: "#(?P<id>[0-9]+)", url_template: "https://tracker.example.com/{id}" };
    expect(await list()).toEqual([stored]);
    expect((await t.outbox()).map((e) => e.payload.client.event.realm_linkifiers)).toEqual([[stored]]);
    // The padded pattern is the same pattern.
    expectError(await add("#(?P<id>[0-9]+)  ", "https://other.example.com/{id}"), 400, "BAD_REQUEST", "Linkifier with this Realm and Pattern already exists.");

    await t.ok(await t.call("PATCH", `/realm/filters/${id}`, { as: org.admin.as, params: { pattern: " T(?P<id>[0-9]+) ", url_template: " https://t.example.com/{id} " } }));
    expect(await list()).toEqual([{ id, pattern: "T(?P<id>[0-9]+)", url_template: "https://t.example.com/{id}" }]);
  });

  // Django's blank check on the model field comes before the template validator.
  it("a blank URL template is 'This field cannot be blank.', as a blank pattern is", async () => {
    const before = await list();
    await t.markOutbox();
    for (const blank of ["", "   "]) {
      const res = await add("Q(?P<id>[0-9]+)", blank);
      expectError(res, 400, "BAD_REQUEST", "This field cannot be blank.");
      expect(res.body.errors).toEqual({ url_template: ["This field cannot be blank."] });
    }
    expectError(await add("  ", "https://q.example.com/"), 400, "BAD_REQUEST", "This field cannot be blank.");
    expect(await t.outbox()).toEqual([]);
    expect(await list()).toEqual(before);
  });

  it("reordering: a repeated id has Zulip's own message; with no linkifiers an empty list changes nothing and tells nobody", async () => {
    const [only] = await list();
    await t.markOutbox();
    const reorder = (as: TestUser, ids: unknown) => t.call("PATCH", "/realm/linkifiers", { as: as.as, params: { ordered_linkifier_ids: ids } });
    expectError(await reorder(org.admin, [only.id, only.id]), 400, "BAD_REQUEST", "The ordered list must not contain duplicated linkifiers");
    const empty = await t.createOrg();
    await t.markOutbox();
    await t.ok(await reorder(empty.admin, []));
    expect(await t.outbox()).toEqual([]);
  });
});
