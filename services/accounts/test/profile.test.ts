import { INTERNAL_HEADERS, identityHeaders } from "@chat/platform";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startAccounts, type Accounts, type Org, type TestUser } from "./helpers";
import { everyone, multipart, notices, PNG_1X1, registerState } from "./settings-kit";

let t: Accounts;
let org: Org;
let groups: Record<string, number>;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
  groups = (await t.ok(await t.call("GET", `/internal/realms/${org.realmId}`))).realm.system_groups;
});
afterAll(() => t?.close());

const patchUser = (as: TestUser, userId: number, params: Record<string, unknown>) => t.call("PATCH", `/users/${userId}`, { as: as.as, params });
const getUser = async (userId: number, as = org.member) => (await t.ok(await t.call("GET", `/users/${userId}`, { as: as.as }))).user;

describe("PATCH /users/{user_id}: role", () => {
  it("is refused to every role below administrator", async () => {
    for (const who of [org.moderator, org.member, org.guest, org.bot]) {
      expectError(await patchUser(who, org.member2.user_id, { role: 300 }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    }
    expect((await getUser(org.member2.user_id)).role).toBe(400);
  });

  it("only owners grant or remove the owner role", async () => {
    expectError(await patchUser(org.admin, org.member2.user_id, { role: 100 }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
    expectError(await patchUser(org.admin, org.owner.user_id, { role: 400 }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
    expectError(await patchUser(org.admin, org.member2.user_id, { role: 250 }), 400, "BAD_REQUEST", "Invalid role");
    expectError(await patchUser(org.admin, 999999, { role: 300 }), 400, "BAD_REQUEST", "No such user");
    const other = await t.createOrg();
    expectError(await patchUser(org.admin, other.member.user_id, { role: 300 }), 400, "BAD_REQUEST", "No such user");
  });

  it("never leaves the organization without an owner", async () => {
    expectError(
      await patchUser(org.owner, org.owner.user_id, { role: 200 }),
      400,
      "BAD_REQUEST",
      "The owner permission cannot be removed from the only organization owner.",
    );
    expect((await getUser(org.owner.user_id)).role).toBe(100);
  });

  it("a role change sends realm_user update with role, then moves the user between system groups, as Zulip does", async () => {
    await t.markOutbox();
    await t.ok(await patchUser(org.admin, org.member2.user_id, { role: 200 }));
    const got = await notices(t);
    // A member leaves role:members and, no longer a member, role:fullmembers too.
    expect(got.map((n) => n.event)).toEqual([
      { type: "realm_user", op: "update", person: { user_id: org.member2.user_id, role: 200 } },
      { type: "user_group", op: "remove_members", group_id: groups["role:members"], user_ids: [org.member2.user_id] },
      { type: "user_group", op: "add_members", group_id: groups["role:administrators"], user_ids: [org.member2.user_id] },
      { type: "user_group", op: "remove_members", group_id: groups["role:fullmembers"], user_ids: [org.member2.user_id] },
      // Now an administrator: the others' bots, to them alone.
      { type: "realm_bot", op: "add", bot: expect.objectContaining({ user_id: org.bot.user_id, owner_id: org.member.user_id }) },
    ]);
    expect(got.slice(0, 4).every((n) => n.users.join() === everyone(org).join())).toBe(true);
    expect(got[4].users).toEqual([org.member2.user_id]);
    expect(got[0].payload.user).toMatchObject({ user_id: org.member2.user_id, role: 200 });
    expect(await getUser(org.member2.user_id)).toMatchObject({ role: 200, is_admin: true });
    const isAdmin = await t.ok(
      await t.call("GET", "/internal/user_groups/is_member", { params: { realm_id: org.realmId, group_id: groups["role:administrators"], user_id: org.member2.user_id } }),
    );
    expect(isAdmin.is_member).toBe(true);
    // The same role again: nothing to do.
    await t.ok(await patchUser(org.admin, org.member2.user_id, { role: 200 }));
    expect(await notices(t)).toEqual([]);
  });

  it("an owner makes another owner, who may then step down", async () => {
    await t.ok(await patchUser(org.owner, org.member2.user_id, { role: 100 }));
    await t.markOutbox();
    // The gateway would now authenticate them as an owner.
    const asOwner = { ...org.member2, as: { ...org.member2.as, role: 100 as const } };
    await t.ok(await patchUser(asOwner, org.member2.user_id, { role: 400 }));
    const got = await notices(t);
    // Back to member (the waiting period is 0): role:members, and role:fullmembers at once.
    expect(got.map((n) => [n.event.op, n.event.group_id ?? n.event.person?.role])).toEqual([
      ["update", 400],
      ["remove_members", groups["role:owners"]],
      ["add_members", groups["role:members"]],
      ["add_members", groups["role:fullmembers"]],
      ["delete", undefined],
    ]);
    expect(got[4]).toMatchObject({ event: { type: "realm_bot", bot: { user_id: org.bot.user_id } }, users: [org.member2.user_id] });
  });
});

describe("PATCH /users/{user_id}: name (the billing role is not a parameter)", () => {
  it("an administrator renames a user", async () => {
    await t.markOutbox();
    await t.ok(await patchUser(org.admin, org.guest.user_id, { full_name: "Gus The Guest" }));
    const [n] = await notices(t);
    expect(n.event).toEqual({ type: "realm_user", op: "update", person: { user_id: org.guest.user_id, full_name: "Gus The Guest" } });
    expect(n.users).toEqual(everyone(org));
    expectError(await patchUser(org.admin, org.guest.user_id, { full_name: "" }), 400, "BAD_REQUEST", "Name too short!");
  });

  it("PATCH does not take the billing role (Zulip has no such parameter): it is ignored and reported", async () => {
    await t.markOutbox();
    const res = await t.ok(await patchUser(org.owner, org.member.user_id, { is_billing_admin: true }));
    expect(res.ignored_parameters_unsupported).toEqual(["is_billing_admin"]);
    expect(await notices(t)).toEqual([]);
    expect((await getUser(org.member.user_id, org.guest)).is_billing_admin).toBe(false);
  });
});

describe("POST /internal/users/billing_admin (the operator's billing role)", () => {
  const setBilling = (userId: number, value: boolean, realmId = org.realmId) =>
    t.call("POST", "/internal/users/billing_admin", { params: { realm_id: realmId, user_id: userId, is_billing_admin: value } });

  it("grants the billing role and sends realm_user update with is_billing_admin to everyone", async () => {
    await t.markOutbox();
    await t.ok(await setBilling(org.member.user_id, true));
    const [n] = await notices(t);
    expect(n.event).toEqual({ type: "realm_user", op: "update", person: { user_id: org.member.user_id, is_billing_admin: true } });
    expect(n.users).toEqual(everyone(org));
    expect((await getUser(org.member.user_id, org.guest)).is_billing_admin).toBe(true);
    expect((await registerState(t, org.member.as, { fetch_event_types: ["realm_user"] })).is_billing_admin).toBe(true);
    // The same value again changes nothing and notifies no one.
    await t.ok(await setBilling(org.member.user_id, true));
    expect(await notices(t)).toEqual([]);
    await t.ok(await setBilling(org.member.user_id, false));
    expect((await notices(t)).map((x) => x.event.person)).toEqual([{ user_id: org.member.user_id, is_billing_admin: false }]);
    expect((await getUser(org.member.user_id, org.guest)).is_billing_admin).toBe(false);
  });

  it("answers No such user for a bot, a missing user or another organization's user", async () => {
    const other = await t.createOrg();
    await t.markOutbox();
    expectError(await setBilling(org.bot.user_id, true), 400, "BAD_REQUEST", "No such user");
    expectError(await setBilling(999999, true), 400, "BAD_REQUEST", "No such user");
    expectError(await setBilling(other.member.user_id, true), 400, "BAD_REQUEST", "No such user");
    expect(await notices(t)).toEqual([]);
    expect((await getUser(other.member.user_id, other.member)).is_billing_admin).toBe(false);
  });
});

describe("deactivation and reactivation by administrators", () => {
  let victim: TestUser;
  let victimBot: TestUser;

  beforeAll(async () => {
    const mk = async (params: Record<string, unknown>) => {
      const u = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, ...params } }));
      return { ...u, role: 400, realm_id: org.realmId, as: t.identity({ ...u, role: 400, realm_id: org.realmId }) } as TestUser;
    };
    victim = await mk({ email: "victim@x.test", full_name: "Vic Tim", password: "victim-pass" });
    victimBot = await mk({ email: "vbot-bot@x.test", full_name: "Vic Bot", bot_type: 1, bot_owner_id: victim.user_id });
  });

  it("is refused to non-administrators, and for owners to non-owners", async () => {
    for (const who of [org.moderator, org.member]) {
      expectError(await t.call("DELETE", `/users/${victim.user_id}`, { as: who.as }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
      // Refused before the user is looked at, as Zulip's decorator does.
      expectError(await t.call("DELETE", "/users/999999", { as: who.as }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    }
    expectError(await t.call("DELETE", `/users/${org.owner.user_id}`, { as: org.admin.as }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
    expectError(await t.call("DELETE", `/users/${org.owner.user_id}`, { as: org.owner.as }), 400, "BAD_REQUEST", "Cannot deactivate the only organization owner");
    expectError(await t.call("DELETE", `/users/${victimBot.user_id}`, { as: org.admin.as }), 400, "BAD_REQUEST", "No such user");
    expectError(await t.call("DELETE", "/users/999999", { as: org.admin.as }), 400, "BAD_REQUEST", "No such user");
  });

  it("deactivates the user and their bots: realm_user update is_active false to the remaining users", async () => {
    await t.ok(await t.call("POST", "/users/me/android_gcm_reg_id", { as: victim.as, params: { token: "victim-phone" } }));
    await t.markOutbox();
    await t.ok(await t.call("DELETE", `/users/${victim.user_id}`, { as: org.admin.as, params: { deactivation_notification_comment: "Bye" } }));
    const all = await notices(t);
    const got = all.filter((n) => n.event.type === "realm_user");
    expect(got.map((n) => [n.type, n.event.person])).toEqual([
      ["accounts.user.deactivated", { user_id: victim.user_id, is_active: false }],
      ["accounts.user.deactivated", { user_id: victimBot.user_id, is_active: false }],
    ]);
    expect(got[0].users).toEqual(everyone(org, [victimBot]));
    expect(got[1].users).toEqual(everyone(org));
    // They stay in their groups' member lists, as in Zulip before feature level 303: no user_group events.
    expect(all.filter((n) => n.event.type === "user_group")).toEqual([]);
    const state = await registerState(t, org.member.as, { fetch_event_types: ["realm_user_groups"] });
    const listed = (name: string) => state.realm_user_groups.find((g: any) => g.id === groups[name]).members;
    expect(listed("role:members")).toEqual(expect.arrayContaining([victim.user_id, victimBot.user_id]));
    expect(listed("role:fullmembers")).toEqual(expect.arrayContaining([victim.user_id, victimBot.user_id]));
    expectError(await t.call("POST", "/internal/authenticate", { params: { email: victim.email, api_key: victim.api_key } }), 401, "UNAUTHORIZED", "Account is deactivated");
    expect((await getUser(victim.user_id)).is_active).toBe(false);
    // A deactivated account gets no more notifications on its devices.
    const { rows } = await t.pool.query("SELECT count(*)::int AS n FROM push_device_tokens WHERE user_id = $1", [victim.user_id]);
    expect(rows[0].n).toBe(0);
    expectError(await t.call("DELETE", `/users/${victim.user_id}`, { as: org.admin.as }), 400, "BAD_REQUEST", "User is deactivated");
  });

  it("a deactivated user's role change moves them between the groups' lists, with the user_group events", async () => {
    await t.markOutbox();
    await t.ok(await patchUser(org.admin, victim.user_id, { role: 300 }));
    const got = await notices(t);
    expect(got.map((n) => n.event)).toEqual([
      { type: "realm_user", op: "update", person: { user_id: victim.user_id, role: 300 } },
      { type: "user_group", op: "remove_members", group_id: groups["role:members"], user_ids: [victim.user_id] },
      { type: "user_group", op: "add_members", group_id: groups["role:moderators"], user_ids: [victim.user_id] },
      { type: "user_group", op: "remove_members", group_id: groups["role:fullmembers"], user_ids: [victim.user_id] },
    ]);
    expect(got[1].users).toEqual(everyone(org));
    const state = await registerState(t, org.member.as, { fetch_event_types: ["realm_user_groups"] });
    expect(state.realm_user_groups.find((g: any) => g.id === groups["role:moderators"]).members).toContain(victim.user_id);
    await t.ok(await patchUser(org.admin, victim.user_id, { role: 400 }));
  });

  it("reactivates: administrators only; realm_user update is_active true", async () => {
    expectError(await t.call("POST", `/users/${victim.user_id}/reactivate`, { as: org.member.as }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    // A bot whose owner is deactivated becomes the reactivating administrator's: see user-lifecycle-audit.test.ts.
    await t.markOutbox();
    await t.ok(await t.call("POST", `/users/${victim.user_id}/reactivate`, { as: org.admin.as }));
    // Their group memberships never went away: only realm_user update.
    const [n, ...rest] = await notices(t);
    expect(n.event.person).toEqual({ user_id: victim.user_id, is_active: true });
    expect(rest).toEqual([]);
    expect(n.users).toEqual(everyone(org, [victim]));
    expect(n.payload.user).toMatchObject({ user_id: victim.user_id, is_active: true });
    await t.ok(await t.call("POST", "/internal/authenticate", { params: { email: victim.email, api_key: victim.api_key } }));
    expectError(await t.call("POST", `/users/${victim.user_id}/reactivate`, { as: org.admin.as }), 400, "BAD_REQUEST", "User is already active");
    await t.ok(await t.call("POST", `/users/${victimBot.user_id}/reactivate`, { as: org.admin.as }));
    const state = await registerState(t, org.member.as, { fetch_event_types: ["realm_user"] });
    expect(state.realm_users.map((u: any) => u.user_id)).toEqual(expect.arrayContaining([victim.user_id, victimBot.user_id]));
    expect(state.realm_non_active_users).toEqual([]);
  });
});

describe("avatar", () => {
  const upload = (as: TestUser, files: Parameters<typeof multipart>[0]) => {
    const body = multipart(files);
    return t.app
      .inject({
        method: "POST",
        url: "/api/v1/users/me/avatar",
        headers: { ...identityHeaders(as.as, t.config.INTERNAL_TOKEN), "content-type": body.contentType },
        payload: body.payload,
      })
      .then((r) => ({ status: r.statusCode, body: r.json(), headers: r.headers }));
  };
  const fetchImage = (url: string) => t.app.inject({ method: "GET", url: `/api/v1${url}`, headers: { [INTERNAL_HEADERS.token]: t.config.INTERNAL_TOKEN } });

  it("uploads an image: new URL, version bump, realm_user update with the avatar fields", async () => {
    const before = await getUser(org.member.user_id);
    await t.markOutbox();
    const res = await t.ok(await upload(org.member, [{ name: "file", filename: "me.png", type: "image/png", data: PNG_1X1 }]));
    expect(res.avatar_url).toMatch(new RegExp(`^/user_avatars/${org.realmId}/[A-Za-z0-9]+\\.png\\?version=${before.avatar_version + 1}$`));
    const [n] = await notices(t);
    expect(n.event.person).toEqual({
      user_id: org.member.user_id,
      avatar_url: res.avatar_url,
      avatar_source: "U",
      avatar_url_medium: res.avatar_url.replace(".png", "-medium.png"),
      avatar_version: before.avatar_version + 1,
    });
    expect(n.users).toEqual(expect.arrayContaining(everyone(org)));
    // Others see the uploaded URL even with client_gravatar; the image itself is served publicly.
    const seen = await t.ok(await t.call("GET", `/users/${org.member.user_id}`, { as: org.guest.as, params: { client_gravatar: true } }));
    expect(seen.user).toMatchObject({ avatar_url: res.avatar_url, avatar_version: before.avatar_version + 1 });
    const own = await registerState(t, org.member.as, { fetch_event_types: ["realm_user"] });
    expect(own).toMatchObject({ avatar_source: "U", avatar_url: res.avatar_url });
    const image = await fetchImage(res.avatar_url.split("?")[0]);
    expect(image.statusCode).toBe(200);
    expect(image.headers["content-type"]).toBe("image/png");
    expect(image.rawPayload.equals(PNG_1X1)).toBe(true);
    expect((await fetchImage(`/user_avatars/${org.realmId}/nope.png`)).statusCode).toBe(404);
    expect((await fetchImage(`/user_avatars/${org.realmId + 1}/${res.avatar_url.split("/")[3].split("?")[0]}`)).statusCode).toBe(404);
  });

  it("refuses anything but exactly one image within the size limit", async () => {
    await t.markOutbox();
    const png = { name: "f", filename: "a.png", type: "image/png", data: PNG_1X1 };
    expectError(await upload(org.member2, []), 400, "BAD_REQUEST", "You must upload exactly one avatar.");
    expectError(await upload(org.member2, [png, { ...png, name: "g" }]), 400, "BAD_REQUEST", "You must upload exactly one avatar.");
    expectError(
      await upload(org.member2, [{ ...png, type: "image/png", data: Buffer.from("not an image at all") }]),
      400,
      "BAD_REQUEST",
      "Could not decode image; did you upload an image file?",
    );
    const big = Buffer.concat([PNG_1X1, Buffer.alloc(5 * 1024 * 1024)]);
    expectError(await upload(org.member2, [{ ...png, data: big }]), 400, "BAD_REQUEST", "Uploaded file is larger than the allowed limit of 5 MiB");
    expect(await notices(t)).toEqual([]);
  });

  it("DELETE goes back to Gravatar with another version bump", async () => {
    const before = await getUser(org.member.user_id);
    const uploaded = before.avatar_url as string;
    await t.markOutbox();
    const res = await t.ok(await t.call("DELETE", "/users/me/avatar", { as: org.member.as }));
    expect(res.avatar_url).toMatch(/^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=/);
    const [n] = await notices(t);
    expect(n.event.person).toMatchObject({ user_id: org.member.user_id, avatar_source: "G", avatar_version: before.avatar_version + 1, avatar_url: res.avatar_url });
    expect((await fetchImage(uploaded.split("?")[0])).statusCode).toBe(404);
    expect((await t.ok(await t.call("GET", `/users/${org.member.user_id}`, { as: org.guest.as }))).user.avatar_url).toBeNull();
  });
});
