import { beforeAll, afterAll, describe, expect, it } from "vitest";
import { createPool } from "@chat/platform";
import { browse, mailLink, startMailCatcher, type ApiClient, type DemoOrg, type DemoUser, type MailCatcher, type StackOptions } from "@chat/testkit";
import { ok, typesOf, useDemoStack, withoutId } from "@chat/testkit/e2e";
import { CAPABILITIES, verifierFor } from "./verify-kit";

/**
 * Zulip's verify_action (see verify-actions-coverage.e2e.test.ts) for what happens to an account
 * or its messages away from the acting client: an email address changed through its mailed link
 * (as others and as the user see it), messages the retention job deletes, a data export being
 * made, and a guest limited to the users it shares a channel with losing them one channel at a time.
 */

let catcher: MailCatcher;
// The mail catcher's address is known once it listens, before the stack starts (hooks run in order).
const options: StackOptions = {
  // The retention job runs every second, so messages backdated by the test go at once.
  serviceEnv: { gateway: { RATE_LIMITING_ENABLED: "false" }, messaging: { RETENTION_INTERVAL_SECONDS: "1" } },
  env: {},
};
beforeAll(async () => {
  catcher = await startMailCatcher();
  Object.assign(options.env!, catcher.env, { NOREPLY_EMAIL_ADDRESS: "noreply@chat.test" });
});
afterAll(async () => {
  await catcher?.close();
});

let org: DemoOrg;
const e2e = useDemoStack(options, ({ demo }) => ([org] = demo.orgs));

/** Users whose email address a test changed: their credentials from then on. */
const renamed = new Map<DemoUser, { email: string; api_key: string }>();
/** A user's client, with the address they have at each request (a queue registered before a change is read after it). */
const as = (u: DemoUser): ApiClient =>
  new Proxy({} as ApiClient, { get: (_, key) => (renamed.has(u) ? e2e.client(renamed.get(u)) : e2e.as(u))[key as keyof ApiClient] });
const { verifyAction, sendBefore, makeChannel } = verifierFor(as);

const member = () => org.users.member;
const other = () => org.users.member2;
const admin = () => org.users.admin;
const owner = () => org.users.owner;

describe("verify action: an email address changed", () => {
  /** Asks for the change, then presses the mailed link's button, as the user's browser would. */
  async function changeEmail(u: DemoUser, to: string): Promise<void> {
    expect(ok(await as(u).patch("/settings", { email: to })).account_email).toBe("Check your email for a confirmation link.");
    const mail = await catcher.waitFor(to);
    const page = await browse(e2e.stack.baseUrl, mailLink(mail.text, "/accounts/confirm_new_email/").path, { form: {} });
    expect(page.status, page.text).toBe(200);
    renamed.set(u, { email: to, api_key: (renamed.get(u) ?? u).api_key });
  }

  it("as another member sees it, and as the user sees it", async () => {
    const mover = org.users.moderator;
    const first = `verify-moved-${Date.now()}@example.com`;
    const seen = await verifyAction(member(), () => changeEmail(mover, first), { include_subscribers: true }, (events) =>
      events.some((e) => e.type === "realm_user" && "new_email" in e.person));
    expect(seen.map(withoutId)).toContainEqual({ type: "realm_user", op: "update", person: { user_id: mover.user_id, new_email: first } });

    const second = `verify-moved-again-${Date.now()}@example.com`;
    const own = await verifyAction(mover, () => changeEmail(mover, second), { include_subscribers: true }, (events) =>
      events.some((e) => e.type === "realm_user" && "new_email" in e.person));
    expect(own.map(withoutId)).toEqual(expect.arrayContaining([
      { type: "realm_user", op: "update", person: { user_id: mover.user_id, delivery_email: second } },
      { type: "realm_user", op: "update", person: { user_id: mover.user_id, new_email: second } },
    ]));
  });
});

describe("verify action: messages the retention job deletes", () => {
  it("a channel's old messages (its first message moves on), then old direct messages under the organization's setting", async () => {
    const name = `verify-retention-${Date.now()}`;
    const id = await makeChannel(member(), admin(), name, [admin(), member(), other()]);
    const send = async (params: Record<string, unknown>) => ok(await as(other()).post("/messages", params)).id as number;
    const oldUnread = await send({ type: "stream", to: id, topic: "old", content: "unread, expiring" });
    const oldStarred = await send({ type: "stream", to: id, topic: "old", content: "starred, expiring" });
    ok(await as(member()).post("/messages/flags", { messages: JSON.stringify([oldStarred]), op: "add", flag: "starred" }));
    const oldDirect = await send({ type: "direct", to: [member().user_id], content: "direct, expiring" });
    // Newer ones stay: the newest message, and the conversation's, are not the deleted ones.
    const kept = await send({ type: "stream", to: id, topic: "fresh", content: "kept" });
    await sendBefore(member(), other(), { type: "direct", to: [member().user_id], content: "direct, kept" });

    const pool = createPool(e2e.stack.env.databaseUrl, "messaging", 1);
    try {
      // The channel's messages before the kept one (its creation's notice too), and the direct one.
      const aged = await pool.query(
        "UPDATE messages SET date_sent = now() - interval '30 days' WHERE (stream_id = $1 AND id < $2) OR id = $3",
        [id, kept, oldDirect],
      );
      expect(aged.rowCount).toBeGreaterThanOrEqual(3);
    } finally {
      await pool.end();
    }

    const deletedFrom = (events: any[], ids: number[]) => events.some((e) => e.type === "delete_message" && ids.every((m) => e.message_ids.includes(m)));
    const inChannel = await verifyAction(member(), async () => ok(await as(owner()).patch(`/streams/${id}`, { message_retention_days: 1 })), { include_subscribers: true }, (events) =>
      deletedFrom(events, [oldUnread, oldStarred]) && events.some((e) => e.property === "first_message_id"));
    expect(inChannel.map(withoutId)).toContainEqual({ type: "delete_message", message_type: "stream", message_ids: [oldUnread, oldStarred], stream_id: id, topic: "old" });
    expect(inChannel.map(withoutId)).toContainEqual(expect.objectContaining({ type: "stream", op: "update", stream_id: id, property: "first_message_id", value: kept }));

    try {
      const direct = await verifyAction(member(), async () => ok(await as(owner()).patch("/realm", { message_retention_days: 1 })), { include_subscribers: true }, (events) =>
        deletedFrom(events, [oldDirect]));
      expect(direct.map(withoutId)).toContainEqual({ type: "delete_message", message_type: "private", message_ids: [oldDirect] });
    } finally {
      ok(await as(owner()).patch("/realm", { message_retention_days: JSON.stringify("unlimited") }));
    }
  });
});

describe("verify action: a data export", () => {
  it("asked for and made, as the administrator who asked sees it", async () => {
    const events = await verifyAction(admin(), async () => ok(await as(admin()).post("/export/realm")), { include_subscribers: true }, (ev) =>
      ev.some((e) => e.type === "realm_export" && e.exports.some((x: any) => x.pending === false)));
    expect(typesOf(events)).toEqual(["realm_export", "realm_export"]);
  });
});

describe("verify action: a guest limited to the users it shares a channel with", () => {
  const GUEST = { include_subscribers: true, client_capabilities: { ...CAPABILITIES, user_list_incomplete: true } };
  const removed = (events: any[]) => events.filter((e) => e.type === "realm_user" && e.op === "remove").map((e) => e.person.user_id).sort((a: number, b: number) => a - b);

  it("loses the users of a channel it leaves, then the last one it shared a channel with; all of them again when guests are no longer limited", async () => {
    const guest = org.users.guest;
    const { realm_user_groups: groups } = ok(await as(admin()).post("/register", { fetch_event_types: JSON.stringify(["realm_user_groups"]) }));
    const groupId = (name: string) => groups.find((g: any) => g.is_system_group && g.name === name).id as number;
    const limit = (group: string) => async () => ok(await as(admin()).patch("/realm", { can_access_all_users_group: groupId(group) }));
    await verifyAction(guest, limit("role:members"), GUEST);

    const nook = `verify-nook-${Date.now()}`;
    await makeChannel(member(), admin(), nook, [admin(), guest]);
    const humans = [owner(), admin(), org.users.moderator, member(), other()].map((u) => u.user_id);
    const everyoneElse = humans.filter((u) => u !== admin().user_id).sort((a, b) => a - b);
    const left = await verifyAction(guest, async () =>
      ok(await as(admin()).delete("/users/me/subscriptions", { subscriptions: JSON.stringify([org.channels.public.name]), principals: JSON.stringify([guest.user_id]) })),
    GUEST, (events) => removed(events).length >= everyoneElse.length);
    expect(removed(left)).toEqual(everyoneElse);

    const alone = await verifyAction(guest, async () =>
      ok(await as(admin()).delete("/users/me/subscriptions", { subscriptions: JSON.stringify([nook]), principals: JSON.stringify([guest.user_id]) })),
    GUEST, (events) => removed(events).length > 0);
    expect(alone.map(withoutId)).toContainEqual({ type: "realm_user", op: "remove", person: { user_id: admin().user_id, full_name: "Unknown user" } });

    const back = await verifyAction(guest, limit("role:everyone"), GUEST, (events) => events.filter((e) => e.type === "realm_user" && e.op === "add").length >= humans.length);
    expect(back.filter((e) => e.type === "realm_user" && e.op === "add").map((e) => e.person.user_id).sort((a: number, b: number) => a - b)).toEqual([...humans].sort((a, b) => a - b));
  });
});
