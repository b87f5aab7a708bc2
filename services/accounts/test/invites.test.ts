import { AccountsInviteAccepted } from "@chat/contracts";
import { AmqpClient, createMemoryLogger, OutboxRelay } from "@chat/platform";
import { until } from "@chat/testkit/e2e";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doCompleteInviteAcceptance, type InviteAccepted } from "../src/actions/invites";
import { consumeInviteAccepted } from "../src/consumers/invites";
import { expectError, type Accounts, type Org } from "./helpers";
import { startAccountsWithMessaging, type WithMessaging } from "./messaging-peer";

let m: WithMessaging;
let t: Accounts;
let org: Org;
let other: Org;
/** A default public channel, and a private one only the owner, the administrator and the member are in. */
let general: number;
let secret: number;

beforeAll(async () => {
  m = await startAccountsWithMessaging({ INVITES_DAILY_LIMIT: "20" });
  t = m.t;
  org = await t.createOrg();
  other = await t.createOrg();
  general = await m.createChannel(org.admin, "general", [], { is_default_stream: true });
  secret = await m.createChannel(org.admin, "secret", [org.owner, org.member], { invite_only: true });
});
afterAll(async () => {
  await m?.close();
});

const invite = (as: any, params: Record<string, unknown>) => t.call("POST", "/invites", { as, params: { stream_ids: [], ...params } });
const pending = async (as = org.admin.as) => (await t.ok(await t.call("GET", "/invites", { as }))).invites as any[];

describe("GET /users/me and messaging", () => {
  it("carries the id of the newest message the user received, and answers without it while messaging is unreachable", async () => {
    const sent = await t.ok(await m.call("POST", "/messages", { as: org.member2.as, params: { type: "private", to: [org.member.user_id], content: "hi" } }));
    expect((await t.ok(await t.call("GET", "/users/me", { as: org.member.as }))).max_message_id).toBe(sent.id);
    m.proxy.block();
    try {
      const body = await t.ok(await t.call("GET", "/users/me", { as: org.member.as }));
      expect(body.user_id).toBe(org.member.user_id);
      expect(body).not.toHaveProperty("max_message_id");
    } finally {
      m.proxy.unblock();
    }
    expect((await t.ok(await t.call("GET", "/users/me", { as: org.member.as }))).max_message_id).toBe(sent.id);
  });
});

describe("POST /invites", () => {
  it("invites comma and newline separated addresses with Zulip's defaults and emits invites_changed", async () => {
    await t.markOutbox();
    await t.ok(await invite(org.member.as, { invitee_emails: "a1@new.test, Ann Two <a2@new.test>\na3@new.test,,", stream_ids: [general, secret] }));
    const mine = (await pending(org.member.as)).filter((i) => i.email.startsWith("a"));
    expect(mine.map((i) => i.email)).toEqual(["a1@new.test", "a2@new.test", "a3@new.test"]);
    const now = Math.floor(t.clock.now().getTime() / 1000);
    expect(mine[0]).toMatchObject({ invited_by_user_id: org.member.user_id, invited_as: 400, notify_referrer_on_join: true, is_multiuse: false, invited: now });
    expect(mine[0].expiry_date).toBe(now + 14400 * 60);
    const events = await t.outbox();
    expect(events.map((e) => e.type)).toEqual(["accounts.invites.changed"]);
    expect(events[0].payload.client.event).toEqual({ type: "invites_changed" });
    expect(events[0].payload.client.users.sort()).toEqual([org.owner.user_id, org.admin.user_id, org.member.user_id].sort());
  });

  it("honours invite_expires_in_minutes (null never expires) and invite_as", async () => {
    await t.ok(await invite(org.admin.as, { invitee_emails: "never@new.test", invite_expires_in_minutes: null, invite_as: 200, notify_referrer_on_join: false }));
    await t.ok(await invite(org.admin.as, { invitee_emails: "soon@new.test", invite_expires_in_minutes: 30 }));
    const all = await pending();
    expect(all.find((i) => i.email === "never@new.test")).toMatchObject({ expiry_date: null, invited_as: 200, notify_referrer_on_join: false });
    expect(all.find((i) => i.email === "soon@new.test").expiry_date).toBe(Math.floor(t.clock.now().getTime() / 1000) + 1800);
  });

  it("refuses a validity that is not positive or ends past the year 9999, creating nothing", async () => {
    const before = (await pending()).length;
    for (const minutes of [0, -5, 10 ** 10, 10 ** 12, Number.MAX_SAFE_INTEGER]) {
      const res = await invite(org.admin.as, { invitee_emails: "far-future@new.test", invite_expires_in_minutes: minutes });
      expectError(res, 400, "BAD_REQUEST", "Invalid invite_expires_in_minutes");
    }
    expect((await pending()).length).toBe(before);
    // About 7900 years ahead is still a date.
    await t.ok(await invite(org.admin.as, { invitee_emails: "far-future@new.test", invite_expires_in_minutes: 4 * 10 ** 9 }));
    const far = (await pending()).find((i) => i.email === "far-future@new.test");
    expect(far.expiry_date).toBe(Math.floor(t.clock.now().getTime() / 1000) + 4 * 10 ** 9 * 60);
  });

  it("only roles at least as restricted as the caller's own", async () => {
    expectError(await invite(org.member.as, { invitee_emails: "x@new.test", invite_as: 300 }), 400, "BAD_REQUEST", "Must be an organization administrator");
    expectError(await invite(org.moderator.as, { invitee_emails: "x@new.test", invite_as: 200 }), 400, "BAD_REQUEST", "Must be an organization administrator");
    expectError(await invite(org.admin.as, { invitee_emails: "x@new.test", invite_as: 100 }), 400, "BAD_REQUEST", "Must be an organization owner");
    expectError(await invite(org.admin.as, { invitee_emails: "x@new.test", invite_as: 500 }), 400, "BAD_REQUEST", "Must be invited as an valid type of user");
    await t.ok(await invite(org.moderator.as, { invitee_emails: "mod-invitee@new.test", invite_as: 300 }));
    await t.ok(await invite(org.owner.as, { invitee_emails: "owner-invitee@new.test", invite_as: 100 }));
  });

  it("refuses guests and bots, empty address lists, and follows the realm's invite policy", async () => {
    expectError(await invite(org.guest.as, { invitee_emails: "x@new.test" }), 400, "BAD_REQUEST", "Not allowed for guest users");
    expectError(await invite(org.bot.as, { invitee_emails: "x@new.test" }), 400, "BAD_REQUEST", "This endpoint does not accept bot requests.");
    expectError(await invite(org.member.as, { invitee_emails: " , \n" }), 400, "BAD_REQUEST", "You must specify at least one email address.");
    // Who calls is checked before what they ask for, as Zulip's view does.
    expectError(await invite(org.guest.as, { invitee_emails: "" }), 400, "BAD_REQUEST", "Not allowed for guest users");
    expectError(await invite(org.bot.as, { invitee_emails: "", stream_ids: [999] }), 400, "BAD_REQUEST", "This endpoint does not accept bot requests.");
    expectError(await invite(org.admin.as, { invitee_emails: "", invite_as: 100 }), 400, "BAD_REQUEST", "Must be an organization owner");
    expectError(await t.call("POST", "/invites", { as: org.member.as, params: { invitee_emails: "x@new.test" } }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'stream_ids' argument");
    await t.pool.query("UPDATE realms SET invite_to_realm_policy = 2 WHERE id = $1", [org.realmId]);
    expectError(await invite(org.moderator.as, { invitee_emails: "x@new.test" }), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await invite(org.moderator.as, { invitee_emails: "" }), 400, "BAD_REQUEST", "Insufficient permission");
    await t.ok(await invite(org.admin.as, { invitee_emails: "policy-ok@new.test" }));
    await t.pool.query("UPDATE realms SET invite_to_realm_policy = 6 WHERE id = $1", [org.realmId]);
    expectError(await invite(org.owner.as, { invitee_emails: "x@new.test" }), 400, "BAD_REQUEST", "Insufficient permission");
    await t.pool.query("UPDATE realms SET invite_to_realm_policy = 1 WHERE id = $1", [org.realmId]);
  });

  it("validates every channel id, sending nothing when one is invalid or inaccessible", async () => {
    await t.markOutbox();
    const before = (await pending()).length;
    expectError(await invite(org.member2.as, { invitee_emails: "c1@new.test", stream_ids: [general, secret] }), 400, "BAD_REQUEST", `Invalid channel ID ${secret}. No invites were sent.`);
    expectError(await invite(org.member.as, { invitee_emails: "c1@new.test", stream_ids: [general, 999] }), 400, "BAD_REQUEST", "Invalid channel ID 999. No invites were sent.");
    expectError(await invite(org.member.as, { invitee_emails: "c1@new.test", stream_ids: "[1," }), 400, "BAD_REQUEST");
    // May invite but not subscribe others: a non-empty list is refused, an empty one works.
    await t.pool.query("UPDATE realms SET invite_to_stream_policy = 2 WHERE id = $1", [org.realmId]);
    expectError(await invite(org.member.as, { invitee_emails: "c1@new.test", stream_ids: [general] }), 400, "BAD_REQUEST", "You do not have permission to subscribe other users to channels.");
    // An unknown channel is reported first, as Zulip checks the ids before the permission.
    expectError(await invite(org.member.as, { invitee_emails: "c1@new.test", stream_ids: [999] }), 400, "BAD_REQUEST", "Invalid channel ID 999. No invites were sent.");
    await t.ok(await invite(org.member.as, { invitee_emails: "c1@new.test", stream_ids: [], include_realm_default_subscriptions: true }));
    await t.pool.query("UPDATE realms SET invite_to_stream_policy = 1 WHERE id = $1", [org.realmId]);
    expect((await pending()).length).toBe(before + 1);
    expect((await t.outbox()).length).toBe(1);
  });

  it("reports existing accounts with INVITATION_FAILED and still invites the others", async () => {
    const res = await invite(org.admin.as, { invitee_emails: `${org.member.email.toUpperCase()}, fresh1@new.test` });
    expectError(res, 400, "INVITATION_FAILED", "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!");
    expect(res.body).toMatchObject({
      errors: [[org.member.email.toUpperCase(), "Already has an account.", false]],
      sent_invitations: true,
      daily_limit_reached: false,
      license_limit_reached: false,
    });
    expect((await pending()).some((i) => i.email === "fresh1@new.test")).toBe(true);

    const all = await invite(org.admin.as, { invitee_emails: org.member2.email });
    expectError(all, 400, "INVITATION_FAILED", "We weren't able to invite anyone.");
    expect(all.body.sent_invitations).toBe(false);

    const gone = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: "left@x.test", full_name: "Left" } }));
    await t.ok(await t.call("DELETE", "/users/me", { as: t.identity({ ...gone, realm_id: org.realmId, role: 400 }) }));
    const deact = await invite(org.admin.as, { invitee_emails: "left@x.test, fresh2@new.test" });
    expect(deact.body.errors).toEqual([["left@x.test", "Account has been deactivated.", true]]);

    const bad = await invite(org.admin.as, { invitee_emails: "not-an-email, fresh3@new.test" });
    expectError(bad, 400, "INVITATION_FAILED", "Some emails did not validate, so we didn't send any invitations.");
    expect(bad.body).toMatchObject({ errors: [["not-an-email", "Invalid address.", false]], sent_invitations: false });
    expect((await pending()).some((i) => i.email === "fresh3@new.test")).toBe(false);
  });

  it("enforces the daily limit per organization", async () => {
    const r = await t.ok(await t.call("POST", "/internal/realms", { params: { name: "Busy", owner_email: "o@busy.test", owner_full_name: "OO" } }));
    const owner = t.identity({ ...r.owner, realm_id: r.realm_id, role: 100 });
    const emails = Array.from({ length: 20 }, (_, i) => `d${i}@busy.test`);
    await t.ok(await invite(owner, { invitee_emails: emails.slice(0, 19).join(",") }));
    const res = await invite(owner, { invitee_emails: "x1@busy.test, x2@busy.test" });
    expectError(res, 400, "INVITATION_FAILED");
    expect(res.body).toMatchObject({ daily_limit_reached: true, sent_invitations: false, errors: [] });
    await t.ok(await invite(owner, { invitee_emails: "last@busy.test" }));
    // A day later the limit is free again.
    t.clock.advance(86_400_000 + 1000);
    await t.ok(await invite(owner, { invitee_emails: "next-day@busy.test" }));
  });
});

describe("GET /invites and DELETE /invites/{id}", () => {
  it("members see their own invitations, administrators all; another organization sees none", async () => {
    const mine = await pending(org.member.as);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((i) => i.invited_by_user_id === org.member.user_id)).toBe(true);
    expect((await pending(org.admin.as)).length).toBeGreaterThan(mine.length);
    expect(await pending(other.owner.as)).toEqual([]);
    expectError(await t.call("GET", "/invites", { as: org.guest.as }), 400, "BAD_REQUEST", "Not allowed for guest users");
  });

  it("revokes: the referrer or an administrator; owner invitations need an owner", async () => {
    await t.ok(await invite(org.member.as, { invitee_emails: "rev1@new.test" }));
    await t.ok(await invite(org.member2.as, { invitee_emails: "rev2@new.test" }));
    const all = await pending();
    const rev1 = all.find((i) => i.email === "rev1@new.test").id;
    const rev2 = all.find((i) => i.email === "rev2@new.test").id;
    const ownerInvite = all.find((i) => i.email === "owner-invitee@new.test").id;
    expectError(await t.call("DELETE", `/invites/${rev2}`, { as: org.member.as }), 400, "BAD_REQUEST", "Must be an organization administrator");
    expectError(await t.call("DELETE", `/invites/${rev2}`, { as: org.moderator.as }), 400, "BAD_REQUEST", "Must be an organization administrator");
    expectError(await t.call("DELETE", `/invites/${rev1}`, { as: other.owner.as }), 400, "BAD_REQUEST", "No such invitation");
    expectError(await t.call("DELETE", `/invites/${ownerInvite}`, { as: org.admin.as }), 400, "BAD_REQUEST", "Must be an organization owner");
    await t.markOutbox();
    await t.ok(await t.call("DELETE", `/invites/${rev1}`, { as: org.member.as }));
    await t.ok(await t.call("DELETE", `/invites/${rev2}`, { as: org.admin.as }));
    expect((await t.outbox()).map((e) => e.type)).toEqual(["accounts.invites.changed", "accounts.invites.changed"]);
    expectError(await t.call("DELETE", `/invites/${rev1}`, { as: org.member.as }), 400, "BAD_REQUEST", "No such invitation");
    expectError(await t.call("POST", "/internal/invites/accept", { params: { realm_id: org.realmId, email: "rev1@new.test", full_name: "RR" } }), 400, "BAD_REQUEST", "The confirmation link has expired or been deactivated.");
  });
});

describe("accepting an invitation", () => {
  it("creates the account with the invited role; channels and the referrer's notice follow through the broker", async () => {
    await t.ok(await invite(org.member.as, { invitee_emails: "joiner@new.test", stream_ids: [secret], include_realm_default_subscriptions: true }));
    await t.markOutbox();
    const acc = await t.ok(await t.call("POST", "/internal/invites/accept", { params: { realm_id: org.realmId, email: "Joiner@new.test", full_name: "Jo Iner", password: "jo-pass" } }));
    expect(acc).toMatchObject({ email: "joiner@new.test", role: 400 });
    await t.ok(await t.call("POST", "/internal/authenticate", { params: { email: "joiner@new.test", api_key: acc.api_key } }));
    const events = await t.outbox();
    const accepted = events.find((e) => e.type === "accounts.invite.accepted")!;
    expect(AccountsInviteAccepted.parse(accepted.payload)).toMatchObject({
      user_id: acc.user_id,
      referrer_id: org.member.user_id,
      stream_ids: [secret],
      include_realm_default_subscriptions: true,
      notify_referrer_on_join: true,
    });
    expect((await pending(org.member.as)).some((i) => i.email === "joiner@new.test")).toBe(false);

    const realm = (await t.ok(await t.call("GET", `/internal/realms/${org.realmId}`))).realm;
    const joiner = t.identity({ ...acc, role: 400, realm_id: org.realmId });
    const earlier = new Set((await m.messages(org.member)).map((x) => x.id));
    const newNotices = async () => (await m.messages(org.member)).filter((x) => x.sender_id === realm.notification_bot_id && !earlier.has(x.id));
    expect(await m.subscriptions(joiner)).toEqual([]);

    // Relay + consumer for real: messaging is unreachable at the first attempt, and the work reaches it on a retry.
    const { log, lines } = createMemoryLogger("accounts-test", "warn");
    const amqp = new AmqpClient(t.config.AMQP_URL, t.config.AMQP_EXCHANGE, t.config.AMQP_QUEUE_PREFIX, log, t.config.AMQP_QUEUE_EXPIRES_MS);
    await amqp.start();
    try {
      m.proxy.block();
      try {
        await consumeInviteAccepted(amqp, t.deps);
        await new OutboxRelay({ pool: t.pool, schema: "accounts", amqp, log }).drain();
        await until("a failed first attempt", async () => lines.some((l) => l.msg === "handler failed, retrying"));
      } finally {
        m.proxy.unblock();
      }
      const [notice] = await until("the referrer's notice", async () => {
        const got = await newNotices();
        return got.length > 0 && got;
      });
      expect(notice).toMatchObject({ type: "private", content: `@_**Jo Iner|${acc.user_id}** accepted your invitation to join ${realm.name}!` });
      expect(notice.display_recipient.map((r: any) => r.id).sort()).toEqual([realm.notification_bot_id, org.member.user_id].sort());
      // The new user is in the invitation's channel and the default one. Nobody's identity was
      // borrowed for it: no one "subscribed you" (the notice a subscription by someone sends).
      expect(await m.subscriptions(joiner)).toEqual([
        [general, "general"],
        [secret, "secret"],
      ]);
      expect(await m.messages(joiner, [{ operator: "is", operand: "dm" }])).toEqual([]);
      // The event handled again (a redelivery) repeats nothing: one notice, the same channels.
      await doCompleteInviteAcceptance(t.deps, org.realmId, accepted.payload as InviteAccepted);
      expect(await newNotices()).toEqual([notice]);
      expect((await m.subscriptions(joiner)).map(([id]) => id)).toEqual([general, secret]);
    } finally {
      await amqp.close();
    }
  });

  it("uses the invitation's role; a used, expired or unknown invitation cannot be used", async () => {
    const acc = await t.ok(await t.call("POST", "/internal/invites/accept", { params: { realm_id: org.realmId, email: "mod-invitee@new.test", full_name: "Mo" } }));
    expect(acc.role).toBe(300);
    const again = await t.call("POST", "/internal/invites/accept", { params: { realm_id: org.realmId, email: "mod-invitee@new.test", full_name: "Mo" } });
    expectError(again, 400, "BAD_REQUEST", "The confirmation link has expired or been deactivated.");
    expectError(await t.call("POST", "/internal/invites/accept", { params: { realm_id: other.realmId, email: "a1@new.test", full_name: "AA" } }), 400, "BAD_REQUEST", "The confirmation link has expired or been deactivated.");
    await t.ok(await invite(org.admin.as, { invitee_emails: "late@new.test", invite_expires_in_minutes: 10 }));
    t.clock.advance(11 * 60_000);
    expectError(await t.call("POST", "/internal/invites/accept", { params: { realm_id: org.realmId, email: "late@new.test", full_name: "LL" } }), 400, "BAD_REQUEST", "The confirmation link has expired or been deactivated.");
    expect((await pending()).some((i) => i.email === "late@new.test")).toBe(false);
    const { deleted } = await t.ok(await t.call("POST", "/internal/invites/cleanup"));
    expect(deleted).toBeGreaterThanOrEqual(1);
    const { rows } = await t.pool.query("SELECT count(*)::int AS n FROM invites WHERE email = 'late@new.test'");
    expect(rows[0].n).toBe(0);
  });
});
