import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startAccounts, type Accounts, type Org, type TestUser } from "./helpers";
import { notices, registerState } from "./settings-kit";

/**
 * Parameter values against the allowed values Zulip's API description names (enums, ranges,
 * lengths, known names), route by route: every allowed value is taken and reads back; a value
 * outside them is a 400 with Zulip's `msg` and changes nothing (no event, same value read back).
 */

let t: Accounts;
let org: Org;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
});
afterAll(() => t?.close());

/** A parameter, the values it takes (the last one is left set), and values refused with their msg. */
interface Row {
  name: string;
  good: unknown[];
  bad: Array<[value: unknown, msg: string]>;
}

/** Runs one table: `send` a value, `read` it back; nothing is written for a refused value. */
async function checkTable(rows: Row[], send: (params: Record<string, unknown>) => Promise<{ status: number; body: any }>, read: (name: string) => Promise<unknown>) {
  for (const row of rows) {
    for (const value of row.good) {
      await t.ok(await send({ [row.name]: value }));
      expect(await read(row.name), `${row.name} = ${JSON.stringify(value)}`).toEqual(value);
    }
    const kept = row.good.at(-1);
    await t.markOutbox();
    for (const [value, msg] of row.bad) {
      expectError(await send({ [row.name]: value }), 400, "BAD_REQUEST", msg);
      expect(await read(row.name), `${row.name} after ${JSON.stringify(value)}`).toEqual(kept);
    }
    expect(await notices(t), row.name).toEqual([]);
  }
}

const invalid = (name: string, ...values: unknown[]): Array<[unknown, string]> => values.map((v) => [v, `Invalid ${name}`]);
const enumRow = (name: string, good: unknown[], ...bad: unknown[]): Row => ({ name, good, bad: invalid(name, ...bad) });

/** The personal settings with named values, shared by PATCH /settings and the organization defaults. */
const PERSONAL_ROWS: Row[] = [
  enumRow("web_mark_read_on_scroll_policy", [2, 3, 1], 0, 4),
  enumRow("web_channel_default_view", [2, 1], 0, 3),
  enumRow("color_scheme", [2, 3, 1], 0, 4),
  enumRow("demote_inactive_streams", [2, 3, 1], 0, 4),
  enumRow("user_list_style", [1, 3, 2], 0, 4),
  enumRow("web_stream_unreads_count_display_policy", [1, 3, 2], 0, 4),
  enumRow("desktop_icon_count_display", [2, 3, 4, 1], 0, 5),
  enumRow("realm_name_in_email_notifications_policy", [2, 3, 1], 0, 4),
  enumRow("automatically_follow_topics_policy", [1, 2, 4, 3], 0, 5),
  enumRow("automatically_unmute_topics_in_muted_streams_policy", [1, 3, 4, 2], 0, 5),
  enumRow("email_address_visibility", [2, 3, 4, 5, 1], 0, 6),
  enumRow("web_home_view", ["recent_topics", "all_messages", "inbox"], "recent", "Inbox", ""),
  enumRow("emojiset", ["google-blob", "twitter", "text", "google"], "apple", "Google", ""),
  enumRow("web_animate_image_previews", ["always", "never", "on_hover"], "sometimes", ""),
  {
    name: "notification_sound",
    good: ["ding", "chime-saved", "none", "zulip"],
    bad: [
      ["bell", "Invalid notification sound 'bell'"],
      ["", "Invalid notification sound ''"],
    ],
  },
  {
    name: "email_notifications_batching_period_seconds",
    good: [1, 7 * 24 * 3600, 120],
    bad: [
      [0, "Invalid email batching period: 0 seconds"],
      [-5, "Invalid email batching period: -5 seconds"],
      [7 * 24 * 3600 + 1, `Invalid email batching period: ${7 * 24 * 3600 + 1} seconds`],
    ],
  },
];

describe("PATCH /settings", () => {
  const send = (params: Record<string, unknown>) => t.call("PATCH", "/settings", { as: org.member.as, params });
  const read = async (name: string) => (await registerState(t, org.member.as, { fetch_event_types: ["user_settings"] })).user_settings[name];

  it("settings with named values: each is taken, anything else is 'Invalid <name>' (or Zulip's own text)", async () => {
    await checkTable(PERSONAL_ROWS, send, read);
  });

  it("default_language is a language code the server has; timezone an IANA zone", async () => {
    await checkTable(
      [
        { name: "default_language", good: ["de", "pt_BR", "zh-hans", "en"], bad: invalid("default_language", "xx", "DE", "english", "") },
        {
          name: "timezone",
          good: ["Asia/Kolkata", "America/Argentina/Buenos_Aires", "UTC", "Europe/Berlin"],
          bad: ["Mars/Olympus", "berlin", "+02:00"].map((v) => [v, "timezone is not a recognized time zone"]),
        },
      ],
      send,
      read,
    );
  });
});

describe("PATCH /realm/user_settings_defaults", () => {
  const send = (params: Record<string, unknown>) => t.call("PATCH", "/realm/user_settings_defaults", { as: org.admin.as, params });
  const read = async (name: string) => (await registerState(t, org.member2.as, { fetch_event_types: ["realm_user_settings_defaults"] })).realm_user_settings_defaults[name];

  it("the same values as a user's own settings", async () => {
    await checkTable(PERSONAL_ROWS, send, read);
  });
});

describe("PATCH /realm", () => {
  let o: Org;
  beforeAll(async () => {
    o = await t.createOrg();
  });
  const send = (params: Record<string, unknown>) => t.call("PATCH", "/realm", { as: o.owner.as, params });
  const read = async (name: string) => (await registerState(t, o.member.as, { fetch_event_types: ["realm"] }))[`realm_${name}`];

  it("each policy takes exactly Zulip 9.0's values", async () => {
    await checkTable(
      [
        enumRow("invite_to_realm_policy", [2, 3, 4, 6, 1], 0, 5, 7),
        enumRow("add_custom_emoji_policy", [2, 3, 4, 1], 0, 5),
        enumRow("delete_own_message_policy", [1, 3, 4, 5, 2], 0, 6),
        enumRow("edit_topic_policy", [1, 2, 3, 4, 6, 5], 0, 7),
        enumRow("bot_creation_policy", [2, 3, 1], 0, 4),
        enumRow("create_public_stream_policy", [2, 3, 4, 1], 0, 5),
        enumRow("create_private_stream_policy", [2, 3, 4, 1], 0, 5),
        enumRow("create_web_public_stream_policy", [2, 4, 6, 7], 1, 3, 5, 8),
        enumRow("invite_to_stream_policy", [2, 3, 4, 1], 0, 5),
        enumRow("move_messages_between_streams_policy", [1, 3, 4, 6, 2], 0, 5, 7),
        enumRow("user_group_edit_policy", [2, 3, 4, 1], 0, 5),
        enumRow("private_message_policy", [2, 1], 0, 3),
        enumRow("wildcard_mention_policy", [1, 2, 3, 6, 7, 5], 0, 4, 8),
        enumRow("digest_weekday", [0, 6, 1], -1, 7),
        enumRow("org_type", [0, 10, 35, 1000, 0], 5, 999, -1),
      ],
      send,
      read,
    );
  });

  it("lengths, ranges, languages and providers", async () => {
    await checkTable(
      [
        { name: "name", good: ["n".repeat(40), "😀".repeat(40), "Renamed"], bad: [["n".repeat(41), "name is too long (limit: 40 characters)"]] },
        { name: "description", good: ["d".repeat(1000), "About"], bad: [["d".repeat(1001), "description is too long (limit: 1000 characters)"]] },
        { name: "waiting_period_threshold", good: [0, 30, 3], bad: [[-1, "waiting_period_threshold is too small"]] },
        { name: "default_language", good: ["fr", "en"], bad: [["xx", "Invalid language 'xx'"]] },
        { name: "giphy_rating", good: [0, 3, 1], bad: [[9, "Invalid giphy_rating 9"], [-1, "Invalid giphy_rating -1"]] },
        { name: "video_chat_provider", good: [0, 1], bad: [[3, "Invalid video_chat_provider 3"], [99, "Invalid video_chat_provider 99"]] },
      ],
      send,
      read,
    );
  });
});

describe("users", () => {
  it("PATCH /users/{user_id} role: 100, 200, 300, 400 or 600; anything else is 'Invalid role'", async () => {
    const o = await t.createOrg();
    const roleOf = async (u: TestUser) => (await t.ok(await t.call("GET", `/users/${u.user_id}`, { as: o.owner.as }))).user.role;
    await checkTable(
      [enumRow("role", [300, 600, 200, 100, 400], 0, 500, 700, 1)],
      (params) => t.call("PATCH", `/users/${o.member2.user_id}`, { as: o.owner.as, params }),
      () => roleOf(o.member2),
    );
  });
});

describe("invitations", () => {
  const pending = async () => (await t.ok(await t.call("GET", "/invites", { as: org.owner.as }))).invites as any[];

  it("invite_as is one of the roles; invite_expires_in_minutes a positive number of minutes or null", async () => {
    let n = 0;
    for (const role of [100, 200, 300, 400, 600]) {
      const email = `as${role}@new.test`;
      await t.ok(await t.call("POST", "/invites", { as: org.owner.as, params: { invitee_emails: email, invite_as: role, stream_ids: [] } }));
      expect((await pending()).find((i) => i.email === email).invited_as).toBe(role);
    }
    for (const minutes of [1, null]) {
      const email = `expires${++n}@new.test`;
      await t.ok(await t.call("POST", "/invites", { as: org.owner.as, params: { invitee_emails: email, invite_expires_in_minutes: minutes, stream_ids: [] } }));
      const got = (await pending()).find((i) => i.email === email);
      expect(got.expiry_date).toBe(minutes === null ? null : Math.floor(t.clock.now().getTime() / 1000) + 60);
    }
    const before = (await pending()).length;
    await t.markOutbox();
    for (const role of [0, 500, 700, 1]) {
      expectError(
        await t.call("POST", "/invites", { as: org.owner.as, params: { invitee_emails: "bad@new.test", invite_as: role, stream_ids: [] } }),
        400,
        "BAD_REQUEST",
        "Must be invited as an valid type of user",
      );
    }
    for (const minutes of [0, -10]) {
      expectError(
        await t.call("POST", "/invites", { as: org.owner.as, params: { invitee_emails: "bad@new.test", invite_expires_in_minutes: minutes, stream_ids: [] } }),
        400,
        "BAD_REQUEST",
        "Invalid invite_expires_in_minutes",
      );
    }
    expect((await pending()).length).toBe(before);
    expect(await notices(t)).toEqual([]);
  });

  it("POST /invites/multiuse: the same roles and expiry", async () => {
    const links = async () => (await pending()).filter((i) => i.is_multiuse);
    for (const role of [100, 600]) {
      await t.ok(await t.call("POST", "/invites/multiuse", { as: org.owner.as, params: { invite_as: role } }));
      expect((await links()).at(-1).invited_as).toBe(role);
    }
    const before = (await links()).length;
    await t.markOutbox();
    for (const role of [0, 500]) {
      expectError(await t.call("POST", "/invites/multiuse", { as: org.owner.as, params: { invite_as: role } }), 400, "BAD_REQUEST", "Must be invited as an valid type of user");
    }
    expectError(await t.call("POST", "/invites/multiuse", { as: org.owner.as, params: { invite_expires_in_minutes: 0 } }), 400, "BAD_REQUEST", "Invalid invite_expires_in_minutes");
    expect((await links()).length).toBe(before);
    expect(await notices(t)).toEqual([]);
  });
});

describe("user status, presence, alert words", () => {
  const statusOf = async (u: TestUser) => (await t.ok(await t.call("GET", `/users/${u.user_id}/status`, { as: org.owner.as }))).status;

  it("POST /users/me/status: status_text up to 60 characters, reaction_type one of the three namespaces", async () => {
    const send = (params: Record<string, unknown>) => t.call("POST", "/users/me/status", { as: org.moderator.as, params });
    await t.ok(await send({ status_text: "x".repeat(60) }));
    expect((await statusOf(org.moderator)).status_text).toBe("x".repeat(60));
    // Counted in characters, not UTF-16 units.
    await t.ok(await send({ status_text: "😀".repeat(60) }));
    expect((await statusOf(org.moderator)).status_text).toBe("😀".repeat(60));
    for (const [reaction_type, emoji_name, emoji_code] of [
      ["unicode_emoji", "car", "1f697"],
      ["zulip_extra_emoji", "zulip", "zulip"],
    ]) {
      await t.ok(await send({ reaction_type, emoji_name, emoji_code }));
      expect(await statusOf(org.moderator)).toMatchObject({ reaction_type, emoji_name, emoji_code });
    }
    const kept = await statusOf(org.moderator);
    await t.markOutbox();
    expectError(await send({ status_text: "y".repeat(61) }), 400, "BAD_REQUEST", "status_text is too long (limit: 60 characters)");
    expectError(await send({ status_text: "😀".repeat(61) }), 400, "BAD_REQUEST", "status_text is too long (limit: 60 characters)");
    expectError(await send({ reaction_type: "custom_emoji", emoji_name: "car", emoji_code: "1f697" }), 400, "BAD_REQUEST", "Invalid emoji type.");
    expectError(await send({ reaction_type: "", emoji_name: "car", emoji_code: "1f697" }), 400, "BAD_REQUEST", "Invalid emoji type.");
    expect(await statusOf(org.moderator)).toEqual(kept);
    expect(await notices(t)).toEqual([]);
  });

  it("POST /users/me/presence: status is 'active' or 'idle'", async () => {
    const send = (status: string) => t.call("POST", "/users/me/presence", { as: org.member2.as, params: { status, ping_only: true } });
    const presence = async () => (await t.ok(await t.call("GET", `/users/${org.member2.user_id}/presence`, { as: org.owner.as }))).presence;
    // Idle long after any activity reads as idle (Zulip's legacy form counts recent activity as active).
    t.clock.advance(3600_000);
    await t.ok(await send("idle"));
    expect((await presence()).aggregated.status).toBe("idle");
    await t.ok(await send("active"));
    expect((await presence()).aggregated.status).toBe("active");
    await t.markOutbox();
    for (const bad of ["offline", "away", "ACTIVE", ""]) expectError(await send(bad), 400, "BAD_REQUEST", `Invalid status: ${bad}`);
    expect((await presence()).aggregated.status).toBe("active");
    expect(await notices(t)).toEqual([]);
  });

  it("POST /users/me/alert_words: each word at most 100 characters", async () => {
    const send = (words: string[]) => t.call("POST", "/users/me/alert_words", { as: org.member2.as, params: { alert_words: words } });
    const long = "w".repeat(100);
    expect((await t.ok(await send([long, "😀".repeat(100)]))).alert_words).toEqual(expect.arrayContaining([long, "😀".repeat(100)]));
    await t.markOutbox();
    expectError(await send(["fine", "v".repeat(101)]), 400, "BAD_REQUEST", "alert_words[1] is too long (limit: 100 characters)");
    expectError(await send(["😀".repeat(101)]), 400, "BAD_REQUEST", "alert_words[0] is too long (limit: 100 characters)");
    const { alert_words } = await t.ok(await t.call("GET", "/users/me/alert_words", { as: org.member2.as }));
    expect(alert_words).not.toContain("fine");
    expect(await notices(t)).toEqual([]);
  });
});

describe("user groups", () => {
  const groups = async () => (await t.ok(await t.call("GET", "/user_groups", { as: org.owner.as }))).user_groups as any[];

  it("a group's name: at most 100 characters, not starting with 'role:' or '@' (create and rename)", async () => {
    const name = "g".repeat(100);
    await t.ok(await t.call("POST", "/user_groups/create", { as: org.admin.as, params: { name, description: "d", members: [] } }));
    expect((await groups()).some((g) => g.name === name)).toBe(true);
    const before = (await groups()).length;
    await t.markOutbox();
    expectError(
      await t.call("POST", "/user_groups/create", { as: org.admin.as, params: { name: "h".repeat(101), description: "d", members: [] } }),
      400,
      "BAD_REQUEST",
      "User group name cannot exceed 100 characters.",
    );
    for (const prefix of ["role:", "@"]) {
      expectError(
        await t.call("POST", "/user_groups/create", { as: org.admin.as, params: { name: `${prefix}x`, description: "d", members: [] } }),
        400,
        "BAD_REQUEST",
        `User group name cannot start with '${prefix}'.`,
      );
    }
    expect((await groups()).length).toBe(before);
    const id = (await groups()).find((g) => g.name === name).id;
    expectError(await t.call("PATCH", `/user_groups/${id}`, { as: org.admin.as, params: { name: "i".repeat(101) } }), 400, "BAD_REQUEST", "User group name cannot exceed 100 characters.");
    expect((await groups()).find((g) => g.id === id).name).toBe(name);
    expect(await notices(t)).toEqual([]);
  });
});

describe("custom profile fields", () => {
  const fields = async () => (await t.ok(await t.call("GET", "/realm/profile_fields", { as: org.member.as }))).custom_fields as any[];
  const create = (params: Record<string, unknown>) => t.call("POST", "/realm/profile_fields", { as: org.admin.as, params });

  it("field_type is one of the eight types; name and hint have their limits", async () => {
    const made: Array<[number, string]> = [
      [1, "Short"],
      [2, "Long"],
      [4, "Birthday"],
      [5, "Homepage"],
      [6, "Mentor"],
      [8, "Pronouns"],
    ];
    for (const [field_type, name] of made) {
      await t.ok(await create({ name, field_type }));
      expect((await fields()).find((f) => f.name === name).type).toBe(field_type);
    }
    await t.ok(await create({ name: "Team", field_type: 3, field_data: { a: { text: "A", order: "1" } } }));
    expect((await fields()).find((f) => f.name === "Team").type).toBe(3);
    await t.ok(await create({ field_type: 7, field_data: { subtype: "github" } }));
    expect((await fields()).some((f) => f.type === 7)).toBe(true);
    await t.ok(await create({ name: "n".repeat(40), hint: "h".repeat(80), field_type: 1 }));
    const before = await fields();
    await t.markOutbox();
    for (const field_type of [0, 9, -1]) expectError(await create({ name: "Bad", field_type }), 400, "BAD_REQUEST", "Invalid field type.");
    expectError(await create({ name: "x".repeat(41), field_type: 1 }), 400, "BAD_REQUEST", "name is too long (limit: 40 characters)");
    expectError(await create({ name: "Hinted", hint: "x".repeat(81), field_type: 1 }), 400, "BAD_REQUEST", "hint is too long (limit: 80 characters)");
    expect(await fields()).toEqual(before);
    expect(await notices(t)).toEqual([]);
  });
});

describe("bots", () => {
  it("bot_type 1, 2 or 3 (4 only where embedded bots are on); interface_type 1 or 2", async () => {
    const o = await t.createOrg();
    const bots = async () => (await t.ok(await t.call("GET", "/bots", { as: o.member.as }))).bots as any[];
    const create = (params: Record<string, unknown>) => t.call("POST", "/bots", { as: o.member.as, params });
    await t.ok(await create({ full_name: "Generic", short_name: "generic", bot_type: 1 }));
    await t.ok(await create({ full_name: "Hook", short_name: "hook", bot_type: 2 }));
    await t.ok(await create({ full_name: "Out", short_name: "out", bot_type: 3, payload_url: JSON.stringify("https://example.com/hook"), interface_type: 2 }));
    const got = await bots();
    expect(got.map((b) => [b.full_name, b.bot_type])).toEqual(expect.arrayContaining([["Generic", 1], ["Hook", 2], ["Out", 3]]));
    const { realm_bots } = await registerState(t, o.member.as, { fetch_event_types: ["realm_bot"] });
    expect(realm_bots.find((b: any) => b.full_name === "Out").services).toEqual([expect.objectContaining({ interface: 2 })]);
    await t.markOutbox();
    for (const bot_type of [0, 5, 9]) expectError(await create({ full_name: "Bad", short_name: "bad", bot_type }), 400, "BAD_REQUEST", "Invalid bot type");
    for (const interface_type of [0, 3]) {
      expectError(
        await create({ full_name: "Bad", short_name: "bad", bot_type: 3, payload_url: JSON.stringify("https://example.com/hook"), interface_type }),
        400,
        "BAD_REQUEST",
        "Invalid interface type",
      );
    }
    expect((await bots()).length).toBe(got.length);
    expect(await notices(t)).toEqual([]);

    // PATCH /bots/{bot_id}: the same interface types, and a role as for users.
    const out = got.find((b) => b.full_name === "Out").user_id;
    const patch = (params: Record<string, unknown>) => t.call("PATCH", `/bots/${out}`, { as: o.admin.as, params });
    const service = async () => (await registerState(t, o.member.as, { fetch_event_types: ["realm_bot"] })).realm_bots.find((b: any) => b.user_id === out).services[0].interface;
    await checkTable([{ name: "service_interface", good: [1, 2], bad: [[0, "Invalid interface type"], [3, "Invalid interface type"]] }], patch, service);
    const roleOf = async () => (await t.ok(await t.call("GET", `/users/${out}`, { as: o.owner.as }))).user.role;
    await checkTable([enumRow("role", [300, 400], 0, 500)], patch, roleOf);
  });
});
