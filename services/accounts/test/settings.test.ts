import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startAccounts, type Accounts, type Org } from "./helpers";
import { everyone, notices, registerState } from "./settings-kit";

let t: Accounts;
let org: Org;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
});
afterAll(() => t?.close());

const patchSettings = (as: Org["member"], params: Record<string, unknown>) => t.call("PATCH", "/settings", { as: as.as, params });

describe("PATCH /settings", () => {
  it("a display setting: user_settings to the user, and the legacy update_display_settings", async () => {
    await t.markOutbox();
    const res = await t.ok(await patchSettings(org.member, { twenty_four_hour_time: true }));
    expect(res).toEqual({ result: "success", msg: "" });
    const got = await notices(t);
    expect(got.map((n) => [n.type, n.event, n.users])).toEqual([
      ["accounts.user_settings.updated", { type: "user_settings", op: "update", property: "twenty_four_hour_time", value: true }, [org.member.user_id]],
      [
        "accounts.display_settings.updated",
        { type: "update_display_settings", user: org.member.email, setting_name: "twenty_four_hour_time", setting: true },
        [org.member.user_id],
      ],
    ]);
    const state = await registerState(t, org.member.as, { fetch_event_types: ["user_settings"] });
    expect(state.user_settings.twenty_four_hour_time).toBe(true);
    // Nobody else changed.
    const other = await registerState(t, org.member2.as, { fetch_event_types: ["user_settings"] });
    expect(other.user_settings.twenty_four_hour_time).toBe(false);
  });

  it("a notification setting: user_settings and the legacy update_global_notifications", async () => {
    await t.markOutbox();
    await t.ok(await patchSettings(org.member, { enable_stream_push_notifications: true, wildcard_mentions_notify: false }));
    const got = await notices(t);
    expect(got.map((n) => n.event)).toEqual([
      { type: "user_settings", op: "update", property: "enable_stream_push_notifications", value: true },
      { type: "update_global_notifications", user: org.member.email, notification_name: "enable_stream_push_notifications", setting: true },
      { type: "user_settings", op: "update", property: "wildcard_mentions_notify", value: false },
      { type: "update_global_notifications", user: org.member.email, notification_name: "wildcard_mentions_notify", setting: false },
    ]);
    expect(got.every((n) => n.users.length === 1 && n.users[0] === org.member.user_id)).toBe(true);
  });

  it("a setting newer than the legacy events sends only user_settings; an unchanged value sends nothing", async () => {
    await t.markOutbox();
    await t.ok(await patchSettings(org.member, { send_read_receipts: false, web_home_view: "recent_topics", color_scheme: 2 }));
    // Applied in the endpoint's parameter order.
    expect((await notices(t)).map((n) => [n.event.type, n.event.property ?? n.event.setting_name])).toEqual([
      ["user_settings", "color_scheme"],
      ["update_display_settings", "color_scheme"],
      ["user_settings", "web_home_view"],
      ["update_display_settings", "web_home_view"],
      ["user_settings", "send_read_receipts"],
    ]);
    await t.ok(await patchSettings(org.member, { send_read_receipts: false, color_scheme: 2 }));
    expect(await notices(t)).toEqual([]);
  });

  it("default_language carries the language's name in both events", async () => {
    await t.markOutbox();
    await t.ok(await patchSettings(org.member2, { default_language: "de" }));
    const got = await notices(t);
    expect(got.map((n) => n.event)).toEqual([
      { type: "user_settings", op: "update", property: "default_language", value: "de", language_name: "German" },
      { type: "update_display_settings", user: org.member2.email, setting_name: "default_language", setting: "de", language_name: "German" },
    ]);
    expectError(await patchSettings(org.member2, { default_language: "xx" }), 400, "BAD_REQUEST", "Invalid default_language");
  });

  it("time zone: user_settings, legacy display event, and realm_user update to everyone", async () => {
    await t.markOutbox();
    await t.ok(await patchSettings(org.member, { timezone: "Asia/Kolkata" }));
    const got = await notices(t);
    expect(got.map((n) => n.event)).toEqual([
      { type: "user_settings", op: "update", property: "timezone", value: "Asia/Kolkata" },
      { type: "update_display_settings", user: org.member.email, setting_name: "timezone", setting: "Asia/Kolkata" },
      { type: "realm_user", op: "update", person: { user_id: org.member.user_id, email: org.member.email, timezone: "Asia/Kolkata" } },
    ]);
    expect(got[2].users).toEqual(everyone(org));
    expect(got[2].payload.user).toMatchObject({ user_id: org.member.user_id, timezone: "Asia/Kolkata" });
    const { user } = await t.ok(await t.call("GET", `/users/${org.member.user_id}`, { as: org.guest.as }));
    expect(user.timezone).toBe("Asia/Kolkata");
    expectError(await patchSettings(org.member, { timezone: "Mars/Olympus" }), 400, "BAD_REQUEST", "timezone is not a recognized time zone");
  });

  it("presence_enabled lives on the user and reaches legacy notification clients", async () => {
    await t.markOutbox();
    await t.ok(await patchSettings(org.moderator, { presence_enabled: false }));
    // Everyone sees the user's presence follow the setting at once (Zulip's do_change_user_setting).
    expect((await notices(t)).map((n) => n.event.type)).toEqual(["user_settings", "update_global_notifications", "presence"]);
    const modern = await registerState(t, org.moderator.as, { fetch_event_types: ["user_settings"] });
    expect(modern.user_settings.presence_enabled).toBe(false);
    const legacy = await registerState(t, org.moderator.as, { fetch_event_types: ["update_global_notifications"] });
    expect(legacy.presence_enabled).toBe(false);
  });

  it("full name: realm_user update to everyone who can access the user", async () => {
    await t.markOutbox();
    await t.ok(await patchSettings(org.member2, { full_name: "  Maxine Member " }));
    const [n] = await notices(t);
    expect(n.event).toEqual({ type: "realm_user", op: "update", person: { user_id: org.member2.user_id, full_name: "Maxine Member" } });
    expect(n.users).toEqual(everyone(org));
    expect(n.payload.user.full_name).toBe("Maxine Member");
    expectError(await patchSettings(org.member2, { full_name: " " }), 400, "BAD_REQUEST", "Name too short!");
    // At least two characters (Zulip's MIN_NAME_LENGTH), counted as code points.
    expectError(await patchSettings(org.member2, { full_name: " x " }), 400, "BAD_REQUEST", "Name too short!");
    expectError(await patchSettings(org.member2, { full_name: "😀" }), 400, "BAD_REQUEST", "Name too short!");
    expectError(await patchSettings(org.member2, { full_name: "xx".repeat(101) }), 400, "BAD_REQUEST", "Name too long!");
    // Characters as Python counts them: 100 emoji are 100, not 200.
    expectError(await patchSettings(org.member2, { full_name: "😀".repeat(101) }), 400, "BAD_REQUEST", "Name too long!");
    await t.ok(await patchSettings(org.member2, { full_name: "😀".repeat(100) }));
    await t.ok(await patchSettings(org.member2, { full_name: "Maxine Member" }));
    expectError(await patchSettings(org.member2, { full_name: "Bad*Name" }), 400, "BAD_REQUEST", "Invalid characters in name!");
  });

  it("refuses bad values with Zulip's errors and changes nothing", async () => {
    await t.markOutbox();
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ color_scheme: 9 }, "Invalid color_scheme"],
      [{ web_home_view: "home" }, "Invalid web_home_view"],
      [{ emojiset: "apple" }, "Invalid emojiset"],
      [{ email_address_visibility: 6 }, "Invalid email_address_visibility"],
      [{ desktop_icon_count_display: 0 }, "Invalid desktop_icon_count_display"],
      [{ twenty_four_hour_time: 1 }, "twenty_four_hour_time is not a boolean"],
      [{ web_font_size_px: "big" }, "web_font_size_px is not valid JSON"],
      [{ web_font_size_px: 0 }, "Invalid web_font_size_px"],
      [{ web_font_size_px: 32_768 }, "Invalid web_font_size_px"],
      [{ web_line_height_percent: 1_000_000 }, "Invalid web_line_height_percent"],
      [{ notification_sound: "bogus" }, "Invalid notification sound 'bogus'"],
      [{ email_notifications_batching_period_seconds: 0 }, "Invalid email batching period: 0 seconds"],
      [{ email_notifications_batching_period_seconds: 7 * 86400 + 1 }, "Invalid email batching period: 604801 seconds"],
      // One bad value fails the whole request: the good one is not applied either.
      [{ dense_mode: false, notification_sound: "bogus" }, "Invalid notification sound 'bogus'"],
    ];
    for (const [params, msg] of bad) expectError(await patchSettings(org.admin, params), 400, "BAD_REQUEST", msg);
    expect(await notices(t)).toEqual([]);
    const state = await registerState(t, org.admin.as, { fetch_event_types: ["user_settings"] });
    expect(state.user_settings.dense_mode).toBe(true);
    // "none" silences notifications and is allowed.
    await t.ok(await patchSettings(org.admin, { notification_sound: "none" }));
  });

  it("reports parameters it does not know as ignored", async () => {
    const res = await t.ok(await patchSettings(org.member, { starred_message_counts: false, bogus_setting: true }));
    expect(res.ignored_parameters_unsupported).toEqual(["bogus_setting"]);
  });

  it("changes the password after checking the old one", async () => {
    expectError(await patchSettings(org.member, { old_password: "wrong", new_password: "new-pass-123" }), 400, "BAD_REQUEST", "Wrong password!");
    expectError(await patchSettings(org.member, { old_password: "member-pass-1", new_password: "abc" }), 400, "BAD_REQUEST", "New password is too weak!");
    await t.ok(await patchSettings(org.member, { old_password: "member-pass-1", new_password: "new-pass-123" }));
    const login = await t.call("POST", "/fetch_api_key", { params: { username: org.member.email, password: "new-pass-123" } });
    expect(login.status).toBe(200);
    expectError(await t.call("POST", "/fetch_api_key", { params: { username: org.member.email, password: "member-pass-1" } }), 401, "AUTHENTICATION_FAILED");
  });
});

describe("email address visibility", () => {
  it("hides the delivery email from those who lose access, switches the API email, and back", async () => {
    const u = org.moderator;
    await t.markOutbox();
    await t.ok(await patchSettings(u, { email_address_visibility: 3 }));
    const got = await notices(t);
    expect(got[0].event).toEqual({ type: "user_settings", op: "update", property: "email_address_visibility", value: 3 });
    // Administrators (and the user) keep seeing it; everyone else loses it.
    expect(got[1].event.person).toEqual({ user_id: u.user_id, delivery_email: null });
    expect(got[1].users).toEqual([org.member.user_id, org.member2.user_id, org.guest.user_id, org.bot.user_id].sort((a, b) => a - b));
    const dummy = `user${u.user_id}@${org.stringId}.invalid`;
    expect(got[2].event.person).toEqual({ user_id: u.user_id, new_email: dummy });
    expect(got[2].users).toEqual(everyone(org));
    expect(got[2].payload.user).toMatchObject({ email: dummy, delivery_email: u.email });
    // Clients can no longer compute the Gravatar from the API email: the avatar fields again (Zulip).
    expect(got[3].event.person).toEqual({
      user_id: u.user_id, avatar_source: "G", avatar_version: 1,
      avatar_url: expect.stringMatching(/^https:\/\/secure\.gravatar\.com\/avatar\//), avatar_url_medium: expect.stringMatching(/&s=500/),
    });
    expect(got[3].users).toEqual(everyone(org));
    expect(got).toHaveLength(4);

    // Replicas learn that the email is no longer public (message senders' avatar_url).
    expect(got[3].payload.avatar).toEqual({ avatar_source: "G", avatar_version: 1, avatar_token: null, email_public: false });
    const lookup = await t.ok(await t.call("GET", "/internal/users", { params: { realm_id: org.realmId, user_ids: [u.user_id] } }));
    expect(lookup.users[0].avatar).toEqual({ avatar_source: "G", avatar_version: 1, avatar_token: null, email_public: false });

    // GET /users/{id} with client_gravatar (its default), as the list: the Gravatar of the real
    // address (which the client cannot compute), not null.
    const realGravatar = `https://secure.gravatar.com/avatar/${createHash("md5").update(u.email.toLowerCase()).digest("hex")}?d=identicon&version=1`;
    const asMember = await t.ok(await t.call("GET", `/users/${u.user_id}`, { as: org.member.as }));
    expect(asMember.user).toMatchObject({ email: dummy, delivery_email: null, avatar_url: realGravatar });
    const asAdmin = await t.ok(await t.call("GET", `/users/${u.user_id}`, { as: org.admin.as }));
    expect(asAdmin.user).toMatchObject({ email: dummy, delivery_email: u.email, avatar_url: realGravatar });
    const ofPublic = await t.ok(await t.call("GET", `/users/${org.member2.user_id}`, { as: org.member.as }));
    expect(ofPublic.user).toMatchObject({ email: org.member2.email, avatar_url: null });
    const state = await registerState(t, org.guest.as, { fetch_event_types: ["realm_user"] });
    // With client_gravatar (the default) avatar_url is null only for users whose real email is
    // the API email; a Gravatar computed from the dummy address would be wrong.
    const gravatarOf = expect.stringMatching(/^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=1$/);
    expect(state.realm_users.find((x: any) => x.user_id === u.user_id)).toMatchObject({ email: dummy, delivery_email: null, avatar_url: gravatarOf });
    expect(state.realm_users.find((x: any) => x.user_id === org.member.user_id)).toMatchObject({ email: org.member.email, avatar_url: null });
    const asAdminState = await registerState(t, org.admin.as, { fetch_event_types: ["realm_user"] });
    expect(asAdminState.realm_users.find((x: any) => x.user_id === u.user_id)).toMatchObject({ email: dummy, delivery_email: u.email, avatar_url: gravatarOf });
    // The user still logs in with the real address.
    await t.ok(await t.call("POST", "/internal/authenticate", { params: { email: u.email, api_key: u.api_key } }));

    // Admins only -> moderators: moderators (and only they) gain access; the API email stays the dummy.
    await t.ok(await patchSettings(u, { email_address_visibility: 5 }));
    const mid = await notices(t);
    expect(mid.map((n) => n.event.person ?? n.event.property)).toEqual(["email_address_visibility"]);

    await t.ok(await patchSettings(u, { email_address_visibility: 1 }));
    const back = await notices(t);
    expect(back[1].event.person).toEqual({ user_id: u.user_id, delivery_email: u.email });
    expect(back[1].users).toEqual([org.member.user_id, org.member2.user_id, org.guest.user_id, org.bot.user_id].sort((a, b) => a - b));
    expect(back[2].event.person).toEqual({ user_id: u.user_id, new_email: u.email });
    expect(back[3].event.person).toMatchObject({ user_id: u.user_id, avatar_source: "G" });
    expect(back[3].payload.avatar).toMatchObject({ email_public: true });
    expect((await t.ok(await t.call("GET", `/users/${u.user_id}`, { as: org.member.as }))).user).toMatchObject({ email: u.email, avatar_url: null });
    const after = await registerState(t, org.guest.as, { fetch_event_types: ["realm_user"] });
    expect(after.realm_users.find((x: any) => x.user_id === u.user_id)).toMatchObject({ email: u.email, avatar_url: null });
  });
});

describe("PATCH /realm/user_settings_defaults", () => {
  it("administrators only", async () => {
    for (const who of [org.moderator, org.member, org.guest]) {
      expectError(
        await t.call("PATCH", "/realm/user_settings_defaults", { as: who.as, params: { dense_mode: false } }),
        400,
        "UNAUTHORIZED_PRINCIPAL",
        "Must be an organization administrator",
      );
    }
    expectError(await t.call("PATCH", "/realm/user_settings_defaults", { as: org.admin.as, params: { color_scheme: 7 } }), 400, "BAD_REQUEST", "Invalid color_scheme");
  });

  it("emits one event per changed default to everyone; new users start with the defaults, existing ones keep theirs", async () => {
    await t.markOutbox();
    const params = { twenty_four_hour_time: true, enter_sends: true, dense_mode: true, email_address_visibility: 2, presence_enabled: false };
    await t.ok(await t.call("PATCH", "/realm/user_settings_defaults", { as: org.admin.as, params }));
    const got = await notices(t);
    // dense_mode is already the default: no event.
    expect(got.map((n) => [n.event.property, n.event.value])).toEqual([
      ["twenty_four_hour_time", true],
      ["presence_enabled", false],
      ["enter_sends", true],
      ["email_address_visibility", 2],
    ]);
    expect(got.every((n) => n.event.type === "realm_user_settings_defaults" && n.users.join() === everyone(org).join())).toBe(true);
    const state = await registerState(t, org.member.as, { fetch_event_types: ["realm_user_settings_defaults"] });
    expect(state.realm_user_settings_defaults).toMatchObject({ twenty_four_hour_time: true, enter_sends: true, email_address_visibility: 2, presence_enabled: false });
    expect(state.realm_user_settings_defaults).not.toHaveProperty("timezone");

    await t.markOutbox();
    const created = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: "newbie@x.test", full_name: "New Bie" } }));
    const newbie = t.identity({ ...created, role: 400, realm_id: org.realmId });
    // realm_user/add reaches everyone, but only members see the real delivery email; the guest's copy says null.
    const adds = (await notices(t)).filter((n) => n.event.type === "realm_user" && n.event.op === "add");
    const members = everyone(org, [{ user_id: created.user_id } as never]).filter((id) => id !== org.guest.user_id);
    expect(adds.map((n) => [n.users, n.event.person.delivery_email])).toEqual([
      [members, "newbie@x.test"],
      [[org.guest.user_id], null],
    ]);
    expect(adds.every((n) => n.event.person.email === `user${created.user_id}@${org.stringId}.invalid`)).toBe(true);
    const fresh = await registerState(t, newbie, { fetch_event_types: ["user_settings", "realm_user"] });
    expect(fresh.user_settings).toMatchObject({ twenty_four_hour_time: true, enter_sends: true, email_address_visibility: 2, presence_enabled: false });
    // Visible to members only, so the API email is a dummy address.
    expect(fresh.email).toBe(`user${created.user_id}@${org.stringId}.invalid`);
    const guestView = await t.ok(await t.call("GET", `/users/${created.user_id}`, { as: org.guest.as }));
    expect(guestView.user.delivery_email).toBeNull();
    const old = await registerState(t, org.member2.as, { fetch_event_types: ["user_settings"] });
    expect(old.user_settings).toMatchObject({ enter_sends: false, email_address_visibility: 1 });
  });
});

describe("bots' email addresses", () => {
  it("are visible to everyone whatever the default for new users; a bot cannot narrow it", async () => {
    await t.ok(await t.call("PATCH", "/realm/user_settings_defaults", { as: org.admin.as, params: { email_address_visibility: 4 } }));
    await t.markOutbox();
    const created = await t.ok(
      await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: "helper-bot@x.test", full_name: "Helper", bot_type: 1, bot_owner_id: org.member.user_id } }),
    );
    const adds = (await notices(t)).filter((n) => n.event.type === "realm_user" && n.event.op === "add");
    expect(adds.map((n) => [n.event.person.email, n.event.person.delivery_email])).toEqual([["helper-bot@x.test", "helper-bot@x.test"]]);
    // One copy for everyone, the guest included: nobody gets a copy without the address.
    expect(adds[0].users).toEqual(expect.arrayContaining([...everyone(org), created.user_id]));
    const guestView = await t.ok(await t.call("GET", `/users/${created.user_id}`, { as: org.guest.as }));
    expect(guestView.user).toMatchObject({ email: "helper-bot@x.test", delivery_email: "helper-bot@x.test" });
    const listed = (await t.ok(await t.call("GET", "/users", { as: org.member2.as }))).members.find((u: { user_id: number }) => u.user_id === created.user_id);
    expect(listed.delivery_email).toBe("helper-bot@x.test");

    const bot = t.identity({ ...created, email: "helper-bot@x.test", role: 400, realm_id: org.realmId, is_bot: true });
    expect((await registerState(t, bot, { fetch_event_types: ["user_settings"] })).user_settings.email_address_visibility).toBe(1);
    expectError(await t.call("PATCH", "/settings", { as: bot, params: { email_address_visibility: 3 } }), 400, "BAD_REQUEST", "A bot's email address is always visible to everyone");
    expect((await registerState(t, bot, { fetch_event_types: ["user_settings"] })).user_settings.email_address_visibility).toBe(1);
    await t.ok(await t.call("PATCH", "/settings", { as: bot, params: { email_address_visibility: 1, enter_sends: true } }));
    await t.ok(await t.call("PATCH", "/realm/user_settings_defaults", { as: org.admin.as, params: { email_address_visibility: 1 } }));
  });

  it("the migration gives bots created under a narrower default (by an earlier release) their visibility back", async () => {
    await t.pool.query(
      "INSERT INTO user_settings (user_id, realm_id, settings) VALUES ($1, $2, $3) ON CONFLICT (user_id) DO UPDATE SET settings = EXCLUDED.settings",
      [org.bot.user_id, org.realmId, { email_address_visibility: 4, enter_sends: true }],
    );
    await t.pool.query(`UPDATE user_settings SET settings = settings || '{"email_address_visibility": 4}' WHERE user_id = $1`, [org.member2.user_id]);
    const seen = async (userId: number) => (await t.ok(await t.call("GET", `/users/${userId}`, { as: org.guest.as }))).user.delivery_email;
    expect(await seen(org.bot.user_id)).toBeNull();

    const file = readFileSync(fileURLToPath(new URL("../migrations/2020000000000_bots-email-visible.sql", import.meta.url)), "utf8");
    await t.pool.query(file.split("-- Down Migration")[0]);
    expect(await seen(org.bot.user_id)).toBe(org.bot.email);
    const { rows } = await t.pool.query("SELECT user_id, settings FROM user_settings WHERE user_id = ANY($1::bigint[]) ORDER BY user_id", [[org.member2.user_id, org.bot.user_id]]);
    // Only bots change, and only that setting.
    expect(rows.find((r) => Number(r.user_id) === org.bot.user_id)!.settings).toEqual({ enter_sends: true });
    expect(rows.find((r) => Number(r.user_id) === org.member2.user_id)!.settings.email_address_visibility).toBe(4);
    await t.pool.query(`UPDATE user_settings SET settings = settings - 'email_address_visibility' WHERE user_id = $1`, [org.member2.user_id]);
  });
});

describe("register: settings state", () => {
  it("legacy clients get only Zulip's legacy keys flattened", async () => {
    const legacy = await registerState(t, org.member.as, { fetch_event_types: ["update_display_settings", "update_global_notifications"] });
    expect(legacy).toMatchObject({ twenty_four_hour_time: true, timezone: "Asia/Kolkata", enable_stream_push_notifications: true, presence_enabled: true });
    expect(legacy.emojiset_choices).toBeInstanceOf(Array);
    expect(legacy.available_notification_sounds).toContain("ding");
    expect(legacy).not.toHaveProperty("send_read_receipts");
    expect(legacy).not.toHaveProperty("user_settings");
    const modern = await registerState(t, org.member.as, {
      fetch_event_types: ["update_display_settings", "user_settings"],
      client_capabilities: { user_settings_object: true },
    });
    expect(Object.keys(modern).filter((k) => k !== "result" && k !== "msg")).toEqual(["user_settings"]);
    expect(modern.user_settings).toMatchObject({ send_read_receipts: false, timezone: "Asia/Kolkata", web_home_view: "recent_topics" });
  });
});

describe("PATCH /realm (message retention)", () => {
  it("owners only; 'unlimited' or a positive number of days; event to everyone", async () => {
    const o = await t.createOrg();
    expectError(await t.call("PATCH", "/realm", { as: o.member.as, params: { message_retention_days: 30 } }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    // Also when nothing it supports was sent: the endpoint is for administrators.
    for (const who of [o.member, o.guest]) {
      expectError(await t.call("PATCH", "/realm", { as: who.as, params: { name: "renamed" } }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    }
    const unsupported = { some_future_setting: "1" };
    expect(await t.ok(await t.call("PATCH", "/realm", { as: o.admin.as, params: unsupported }))).toMatchObject({ ignored_parameters_unsupported: ["some_future_setting"] });
    expectError(await t.call("PATCH", "/realm", { as: o.admin.as, params: { message_retention_days: 30 } }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
    expectError(
      await t.call("PATCH", "/realm", { as: o.owner.as, params: { message_retention_days: -5 } }),
      400,
      "REQUEST_VARIABLE_INVALID",
      "Bad value for 'message_retention_days': -5",
    );
    // Beyond a PostgreSQL integer: refused, not a 500.
    for (const days of [2 ** 31, Number.MAX_SAFE_INTEGER]) {
      expectError(
        await t.call("PATCH", "/realm", { as: o.owner.as, params: { message_retention_days: days } }),
        400,
        "REQUEST_VARIABLE_INVALID",
        `Bad value for 'message_retention_days': ${days}`,
      );
    }
    await t.markOutbox();
    await t.ok(await t.call("PATCH", "/realm", { as: o.owner.as, params: { message_retention_days: 30 } }));
    let [n] = await notices(t);
    expect(n.event).toEqual({ type: "realm", op: "update", property: "message_retention_days", value: 30 });
    expect(n.users).toEqual(everyone(o));
    let realm = (await t.ok(await t.call("GET", `/internal/realms/${o.realmId}`))).realm;
    expect(realm.settings.message_retention_days).toBe(30);
    expect((await registerState(t, o.member.as, { fetch_event_types: ["realm"] })).realm_message_retention_days).toBe(30);

    await t.ok(await t.call("PATCH", "/realm", { as: o.owner.as, params: { message_retention_days: JSON.stringify("unlimited") } }));
    [n] = await notices(t);
    expect(n.event.value).toBe(-1);
    expect(n.payload.value).toBeNull();
    realm = (await t.ok(await t.call("GET", `/internal/realms/${o.realmId}`))).realm;
    expect(realm.settings.message_retention_days).toBeNull();
    expect((await registerState(t, o.member.as, { fetch_event_types: ["realm"] })).realm_message_retention_days).toBe(-1);
  });
});
