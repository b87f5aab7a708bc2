import { describe, expect, it } from "vitest";
import type { ApiClient, DemoOrg, DemoOrg2, DemoUser } from "@chat/testkit";
import { NO_RATE_LIMITS, ok, refused, sleep, until, useDemoStack } from "@chat/testkit/e2e";
import { encodePng } from "../../messaging/src/lib/image";

/**
 * Through the whole stack: a user status with an organization's custom emoji (messaging owns
 * them; accounts' replica learns them from messaging.realm_emoji.updated or reads messaging on a
 * miss), and new users joining the organization's default channels (POST /users, the admin
 * CLI's internal route, an invitation with include_realm_default_subscriptions).
 */

let org: DemoOrg;
let org2: DemoOrg2;
const e2e = useDemoStack(NO_RATE_LIMITS, ({ demo }) => ([org, org2] = demo.orgs));
const { as } = e2e;

/** Polls until `check` passes (work that crosses services through RabbitMQ); the value that passed. */
async function eventually<T extends object>(get: () => Promise<T>, check: (v: T) => boolean): Promise<T> {
  const found = async () => {
    const v = await get();
    return check(v) ? v : null;
  };
  return until("work that crosses services", found, { timeoutMs: 15_000, pollMs: 200 });
}

const png = encodePng(2, 1, new Uint8Array([255, 0, 0, 255, 0, 255, 0, 255]));
const uploadEmoji = (u: DemoUser, name: string) => e2e.postFile(u, `/realm/emoji/${name}`, { field: "filename", name: "emoji.png", type: "image/png", data: png });
async function emojiId(u: DemoUser, name: string): Promise<string> {
  const { emoji } = ok(await as(u).get("/realm/emoji"));
  return (Object.values(emoji) as any[]).find((e) => e.name === name && !e.deactivated).id;
}

describe("user status with a custom emoji", () => {
  it("by name and by id once uploaded; refused once deactivated, and another organization's", async () => {
    const { member, member2, admin } = org.users;
    refused(await as(member).post("/users/me/status", { emoji_name: "octopus_e2e" }), "Emoji 'octopus_e2e' does not exist");
    ok(await uploadEmoji(member2, "octopus_e2e"));
    const id = await emojiId(member2, "octopus_e2e");

    // Right after the upload: found in the replica, or read from messaging if its event is late.
    ok(await as(member).post("/users/me/status", { emoji_name: "octopus_e2e" }));
    expect(ok(await as(member).get(`/users/${member.user_id}/status`)).status).toEqual({ emoji_name: "octopus_e2e", emoji_code: id, reaction_type: "realm_emoji" });
    ok(await as(admin).post("/users/me/status", { status_text: "eight arms", emoji_name: "octopus_e2e", emoji_code: id, reaction_type: "realm_emoji" }));
    refused(await as(admin).post("/users/me/status", { emoji_name: "octopus", emoji_code: id, reaction_type: "realm_emoji" }), "Invalid custom emoji name.");

    ok(await as(member2).delete("/realm/emoji/octopus_e2e"));
    // The deactivation reaches accounts through messaging's event.
    const byId = () => as(member).post("/users/me/status", { emoji_name: "octopus_e2e", emoji_code: id, reaction_type: "realm_emoji" });
    refused(await eventually(byId, (r) => r.status === 400), "This custom emoji has been deactivated.");
    refused(await as(member).post("/users/me/status", { emoji_name: "octopus_e2e" }), "Emoji 'octopus_e2e' does not exist");

    // Another organization's emoji, by id and by name.
    ok(await uploadEmoji(org2.users.owner, "theirs_e2e"));
    const theirs = await emojiId(org2.users.owner, "theirs_e2e");
    refused(await as(member).post("/users/me/status", { emoji_name: "theirs_e2e", emoji_code: theirs, reaction_type: "realm_emoji" }), "Invalid custom emoji.");
    refused(await as(member).post("/users/me/status", { emoji_name: "theirs_e2e" }), "Emoji 'theirs_e2e' does not exist");
    ok(await as(org2.users.member).post("/users/me/status", { emoji_name: "theirs_e2e" }));
  });
});

describe("new users join the default channels", () => {
  const subscribed = async (c: ApiClient) => ok(await c.get("/users/me/subscriptions")).subscriptions.map((s: any) => s.stream_id) as number[];

  it("created by POST /users, by the admin CLI, or through an invitation that asks for them", async () => {
    const { owner, admin } = org.users;
    const channel = org.channels.public.stream_id;
    ok(await as(admin).post("/default_streams", { stream_id: channel }));

    // POST /users by an administrator.
    const password = "a-long-enough-password-e2e";
    const created = ok(await as(admin).post("/users", { email: "made@e2e-defaults.test", password, full_name: "Made" }));
    const key = ok(await e2e.client().post("/fetch_api_key", { username: "made@e2e-defaults.test", password }));
    expect(key.user_id).toBe(created.user_id);
    const made = e2e.client(key);
    expect(await eventually(() => subscribed(made), (ids) => ids.includes(channel))).toContain(channel);

    // The admin CLI's user creation (`pnpm chat user create`).
    const cli = ok(await e2e.internalPost("/internal/users", { realm_id: String(org.id), email: "cli@e2e-defaults.test", full_name: "Cli" }));
    const cliUser = e2e.client(cli);
    expect(await eventually(() => subscribed(cliUser), (ids) => ids.includes(channel))).toContain(channel);

    // Invitations: with include_realm_default_subscriptions (a guest too, as Zulip's
    // do_create_user adds them whatever the role), and without (Zulip's default false).
    for (const [email, asked, role] of [
      ["asked@e2e-defaults.test", true, 400],
      ["guest@e2e-defaults.test", true, 600],
      ["plain@e2e-defaults.test", false, 400],
    ] as const) {
      ok(await as(owner).post("/invites", { invitee_emails: email, stream_ids: "[]", invite_as: String(role), include_realm_default_subscriptions: String(asked) }));
      const joined = ok(await e2e.internalPost("/internal/invites/accept", { realm_id: String(org.id), email, full_name: email.split("@")[0] }));
      const them = e2e.client(joined);
      if (asked) expect(await eventually(() => subscribed(them), (ids) => ids.includes(channel))).toContain(channel);
      else {
        await sleep(1500);
        expect(await subscribed(them)).toEqual([]);
      }
    }
  });
});
