import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startAccounts, type Accounts, type Org, type TestUser } from "./helpers";
import { everyone, notices, registerState } from "./settings-kit";

let t: Accounts;
let org: Org;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
});
afterAll(() => t?.close());

const create = (params: Record<string, unknown>, as = org.admin) => t.call("POST", "/realm/profile_fields", { as: as.as, params });
const fields = async () => (await t.ok(await t.call("GET", "/realm/profile_fields", { as: org.guest.as }))).custom_fields;
const ids: Record<string, number> = {};

describe("defining fields (administrators)", () => {
  it("refuses everyone but administrators", async () => {
    for (const who of [org.moderator, org.member, org.guest]) {
      expectError(await create({ name: "Phone", field_type: 1 }, who), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    }
    expect(await fields()).toEqual([]);
  });

  it("creates fields of each kind and announces the whole list to everyone", async () => {
    await t.markOutbox();
    ids.phone = (await t.ok(await create({ name: "Phone", hint: "Work number", field_type: 1, display_in_profile_summary: true }))).id;
    ids.bio = (await t.ok(await create({ name: "Biography", field_type: 2, required: true }))).id;
    ids.editor = (await t.ok(await create({ name: "Editor", field_type: 3, field_data: { vim: { text: "Vim", order: "1" }, emacs: { text: "Emacs", order: "2" } } }))).id;
    ids.birthday = (await t.ok(await create({ name: "Birthday", field_type: 4 }))).id;
    ids.site = (await t.ok(await create({ name: "Website", field_type: 5 }))).id;
    ids.mentor = (await t.ok(await create({ name: "Mentor", field_type: 6 }))).id;
    ids.github = (await t.ok(await create({ field_type: 7, field_data: { subtype: "github" } }))).id;
    const got = await notices(t);
    expect(got).toHaveLength(7);
    expect(got.every((n) => n.event.type === "custom_profile_fields" && n.users.join() === everyone(org).join())).toBe(true);
    const list = await fields();
    expect(got[6].event.fields).toEqual(list);
    expect(list.map((f: any) => f.name)).toEqual(["Phone", "Biography", "Editor", "Birthday", "Website", "Mentor", "GitHub"]);
    expect(list[0]).toEqual({ id: ids.phone, type: 1, order: 1, name: "Phone", hint: "Work number", field_data: "", display_in_profile_summary: true, required: false });
    expect(list[1]).toMatchObject({ required: true });
    expect(list[1]).not.toHaveProperty("display_in_profile_summary");
    expect(JSON.parse(list[2].field_data)).toEqual({ vim: { text: "Vim", order: "1" }, emacs: { text: "Emacs", order: "2" } });
    // Built-in external accounts bring their own label and hint.
    expect(list[6]).toMatchObject({ name: "GitHub", hint: "Enter your GitHub username", field_data: '{"subtype":"github"}' });
    const state = await registerState(t, org.member.as, { fetch_event_types: ["custom_profile_fields"] });
    expect(state.custom_profile_fields).toEqual(list);
    expect(state.custom_profile_field_types.USER).toEqual({ id: 6, name: "Person picker" });
  });

  it("refuses bad definitions with Zulip's errors", async () => {
    await t.markOutbox();
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ name: " ", field_type: 1 }, "Label cannot be blank."],
      [{ name: "x".repeat(41), field_type: 1 }, "name is too long (limit: 40 characters)"],
      [{ name: "Ok", hint: "h".repeat(81), field_type: 1 }, "hint is too long (limit: 80 characters)"],
      [{ name: "Ok", field_type: 99 }, "Invalid field type."],
      [{ name: "Phone", field_type: 1 }, "A field with that label already exists."],
      [{ name: "Choice", field_type: 3 }, "Field must have at least one choice."],
      [{ name: "Choice", field_type: 3, field_data: { a: { text: "A", order: "1" }, b: { text: "A", order: "2" } } }, "Field must not have duplicate choices."],
      [{ name: "Choice", field_type: 3, field_data: { a: { text: "", order: "1" } } }, 'field_data["text"] cannot be blank.'],
      [{ name: "Acct", field_type: 7, field_data: { subtype: "myspace" } }, "Invalid external account type"],
      [{ name: "Acct", field_type: 7, field_data: { subtype: "custom", url_pattern: "nope" } }, "Malformed URL pattern."],
      [{ name: "Long", field_type: 2, display_in_profile_summary: true }, "Field type not supported for display in profile summary."],
    ];
    for (const [params, msg] of bad) expectError(await create(params), 400, "BAD_REQUEST", msg);
    expectError(await create({ name: "Ok" }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'field_type' argument");
    await t.ok(await create({ name: "Pronouns", field_type: 8, display_in_profile_summary: true }));
    expectError(
      await create({ name: "Third", field_type: 1, display_in_profile_summary: true }),
      400,
      "BAD_REQUEST",
      "Only 2 custom profile fields can be displayed in the profile summary.",
    );
    expect((await notices(t)).length).toBe(1);
  });

  it("edits, reorders and deletes fields", async () => {
    await t.markOutbox();
    await t.ok(await t.call("PATCH", `/realm/profile_fields/${ids.site}`, { as: org.admin.as, params: { name: "Homepage", required: true } }));
    expectError(await t.call("PATCH", `/realm/profile_fields/${ids.github}`, { as: org.admin.as, params: { name: "Git" } }), 400, "BAD_REQUEST", "Default custom field cannot be updated.");
    expectError(await t.call("PATCH", `/realm/profile_fields/${ids.site}`, { as: org.admin.as, params: { name: "Phone" } }), 400, "BAD_REQUEST", "A field with that label already exists.");
    expectError(await t.call("PATCH", "/realm/profile_fields/999999", { as: org.admin.as, params: { name: "X" } }), 400, "BAD_REQUEST", "Field id 999999 not found.");
    expectError(await t.call("PATCH", `/realm/profile_fields/${ids.site}`, { as: org.member.as, params: { name: "X" } }), 400, "UNAUTHORIZED_PRINCIPAL");
    const list = await fields();
    expect(list.find((f: any) => f.id === ids.site)).toMatchObject({ name: "Homepage", required: true });

    const order = list.map((f: any) => f.id).reverse();
    expectError(await t.call("PATCH", "/realm/profile_fields", { as: org.admin.as, params: { order: order.slice(1) } }), 400, "BAD_REQUEST", "Invalid order mapping.");
    await t.ok(await t.call("PATCH", "/realm/profile_fields", { as: org.admin.as, params: { order } }));
    expect((await fields()).map((f: any) => f.id)).toEqual(order);

    expectError(await t.call("DELETE", "/realm/profile_fields/999999", { as: org.admin.as }), 400, "BAD_REQUEST", "Field id 999999 not found.");
    const pronouns = list.find((f: any) => f.name === "Pronouns").id;
    await t.ok(await t.call("DELETE", `/realm/profile_fields/${pronouns}`, { as: org.admin.as }));
    expect((await fields()).map((f: any) => f.name)).not.toContain("Pronouns");
    expect((await notices(t)).map((n) => n.event.type)).toEqual(["custom_profile_fields", "custom_profile_fields", "custom_profile_fields"]);
  });

  it("another organization's field answers like a missing one", async () => {
    const other = await t.createOrg();
    expectError(await t.call("DELETE", `/realm/profile_fields/${ids.phone}`, { as: other.admin.as }), 400, "BAD_REQUEST", `Field id ${ids.phone} not found.`);
    expect((await t.ok(await t.call("GET", "/realm/profile_fields", { as: other.member.as }))).custom_fields).toEqual([]);
  });
});

describe("values", () => {
  const setOwn = (as: Org["member"], data: unknown) => t.call("PATCH", "/users/me/profile_data", { as: as.as, params: { data } });

  it("a user sets values: realm_user update with custom_profile_field to everyone, rendered_value for text", async () => {
    await t.markOutbox();
    await t.ok(
      await setOwn(org.member, [
        { id: ids.phone, value: "+1 *555*" },
        { id: ids.editor, value: "vim" },
        { id: ids.birthday, value: "1990-02-28" },
        { id: ids.mentor, value: [org.owner.user_id] },
      ]),
    );
    const got = await notices(t);
    expect(got.map((n) => n.event.person.custom_profile_field)).toEqual([
      { id: ids.phone, value: "+1 *555*", rendered_value: "<p>+1 <em>555</em></p>" },
      { id: ids.editor, value: "vim" },
      { id: ids.birthday, value: "1990-02-28" },
      { id: ids.mentor, value: JSON.stringify([org.owner.user_id]) },
    ]);
    expect(got.every((n) => n.event.person.user_id === org.member.user_id && n.users.join() === everyone(org).join())).toBe(true);

    const { user } = await t.ok(await t.call("GET", `/users/${org.member.user_id}`, { as: org.guest.as, params: { include_custom_profile_fields: true } }));
    expect(user.profile_data).toEqual({
      [ids.phone]: { value: "+1 *555*", rendered_value: "<p>+1 <em>555</em></p>" },
      [ids.editor]: { value: "vim" },
      [ids.birthday]: { value: "1990-02-28" },
      [ids.mentor]: { value: JSON.stringify([org.owner.user_id]) },
    });
    const plain = await t.ok(await t.call("GET", `/users/${org.member.user_id}`, { as: org.guest.as }));
    expect(plain.user).not.toHaveProperty("profile_data");
    const me = await t.ok(await t.call("GET", "/users/me", { as: org.member.as }));
    expect(me.profile_data).toEqual(user.profile_data);
    const state = await registerState(t, org.admin.as, { fetch_event_types: ["realm_user"] });
    expect(state.realm_users.find((u: any) => u.user_id === org.member.user_id).profile_data).toEqual(user.profile_data);
    expect(state.realm_users.find((u: any) => u.user_id === org.bot.user_id)).not.toHaveProperty("profile_data");

    // The same value again changes nothing.
    await t.ok(await setOwn(org.member, [{ id: ids.editor, value: "vim" }]));
    expect(await notices(t)).toEqual([]);
  });

  it("refuses values that do not fit the field, all or nothing", async () => {
    await t.markOutbox();
    const bad: Array<[unknown, string]> = [
      [[{ id: 999999, value: "x" }], "Field id 999999 not found."],
      [[{ id: ids.phone, value: "x".repeat(51) }], "Phone is too long (limit: 50 characters)"],
      [[{ id: ids.bio, value: "x".repeat(501) }], "Biography is too long (limit: 500 characters)"],
      [[{ id: ids.editor, value: "nano" }], "'nano' is not a valid choice for 'Editor'."],
      [[{ id: ids.birthday, value: "1990-02-30" }], "Birthday is not a date"],
      [[{ id: ids.site, value: "not a url" }], "Homepage is not a URL"],
      [[{ id: ids.mentor, value: [999999] }], "Invalid user ID: 999999"],
      [[{ id: ids.mentor, value: "1" }], "User IDs is not a list"],
      [[{ id: ids.phone, value: "fine" }, { id: ids.editor, value: "nano" }], "'nano' is not a valid choice for 'Editor'."],
      [[{ id: ids.phone }], 'data[0]["value"] field is missing'],
    ];
    for (const [data, msg] of bad) expectError(await setOwn(org.member2, data), 400, "BAD_REQUEST", msg);
    expect(await notices(t)).toEqual([]);
    expect((await t.ok(await t.call("GET", "/users/me", { as: org.member2.as }))).profile_data).toEqual({});
    expectError(await setOwn(org.bot, [{ id: ids.phone, value: "1" }]), 400, "BAD_REQUEST", "This endpoint does not accept bot requests.");
  });

  it("an empty value or DELETE removes it, with value null in the event", async () => {
    await t.markOutbox();
    await t.ok(await setOwn(org.member, [{ id: ids.editor, value: "" }]));
    await t.ok(await t.call("DELETE", "/users/me/profile_data", { as: org.member.as, params: { data: [ids.birthday, ids.site] } }));
    const got = await notices(t);
    // The site had no value: nothing to announce for it.
    expect(got.map((n) => n.event.person)).toEqual([
      { user_id: org.member.user_id, custom_profile_field: { id: ids.editor, value: null } },
      { user_id: org.member.user_id, custom_profile_field: { id: ids.birthday, value: null } },
    ]);
    expectError(await t.call("DELETE", "/users/me/profile_data", { as: org.member.as, params: { data: [999999] } }), 400, "BAD_REQUEST", "Field id 999999 not found.");
    const me = await t.ok(await t.call("GET", "/users/me", { as: org.member.as }));
    expect(Object.keys(me.profile_data).map(Number).sort()).toEqual([ids.phone, ids.mentor].sort());
  });

  it("administrators set other users' values through PATCH /users/{id}", async () => {
    await t.markOutbox();
    await t.ok(await t.call("PATCH", `/users/${org.member2.user_id}`, { as: org.admin.as, params: { profile_data: [{ id: ids.bio, value: "Hello\n\nWorld" }] } }));
    const [n] = await notices(t);
    expect(n.event.person).toEqual({ user_id: org.member2.user_id, custom_profile_field: { id: ids.bio, value: "Hello\n\nWorld", rendered_value: "<p>Hello</p>\n<p>World</p>" } });
    expectError(
      await t.call("PATCH", `/users/${org.member2.user_id}`, { as: org.member.as, params: { profile_data: [{ id: ids.bio, value: "x" }] } }),
      400,
      "UNAUTHORIZED_PRINCIPAL",
      "Must be an organization administrator",
    );
  });

  it("removing a choice of a list field drops the values holding it, announced with value null", async () => {
    await t.ok(await setOwn(org.member, [{ id: ids.editor, value: "vim" }]));
    await t.ok(await setOwn(org.member2, [{ id: ids.editor, value: "emacs" }]));
    await t.markOutbox();
    await t.ok(await t.call("PATCH", `/realm/profile_fields/${ids.editor}`, { as: org.admin.as, params: { field_data: { vim: { text: "Vim", order: "1" } } } }));
    const got = await notices(t);
    expect(got.filter((n) => n.event.type === "realm_user").map((n) => n.event.person)).toEqual([
      { user_id: org.member2.user_id, custom_profile_field: { id: ids.editor, value: null } },
    ]);
    expect(got.at(-1)?.event.type).toBe("custom_profile_fields");
    const profile = async (u: TestUser) => (await t.ok(await t.call("GET", "/users/me", { as: u.as }))).profile_data;
    expect((await profile(org.member2))[ids.editor]).toBeUndefined();
    expect((await profile(org.member))[ids.editor]).toEqual({ value: "vim" });
    await t.ok(await setOwn(org.member, [{ id: ids.editor, value: null }]));
  });

  it("deleting a field drops its values", async () => {
    await t.ok(await t.call("DELETE", `/realm/profile_fields/${ids.phone}`, { as: org.admin.as }));
    const me = await t.ok(await t.call("GET", "/users/me", { as: org.member.as }));
    expect(Object.keys(me.profile_data).map(Number)).toEqual([ids.mentor]);
  });
});
