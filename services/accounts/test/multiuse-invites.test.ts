import { AccountsInviteAccepted, InvitesChangedEvent } from "@chat/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doCompleteInviteAcceptance, type InviteAccepted } from "../src/actions/invites";
import { expectError, type Accounts, type Org } from "./helpers";
import { startAccountsWithMessaging, type WithMessaging } from "./messaging-peer";

/**
 * Reusable invitation links (POST/DELETE /invites/multiuse, signing up through one), resending
 * an email invitation, and how GET /invites lists both kinds, as Zulip 9 does.
 */

let t: Accounts;
let org: Org;
let other: Org;
let m: WithMessaging;
/** A public channel, and a private one only the owner and the administrator are in. */
let general: number;
let secret: number;

beforeAll(async () => {
  m = await startAccountsWithMessaging({ INVITES_DAILY_LIMIT: "30", EXTERNAL_URL: "https://chat.example.test/" });
  t = m.t;
  org = await t.createOrg();
  other = await t.createOrg();
  general = await m.createChannel(org.admin, "general");
  secret = await m.createChannel(org.admin, "secret", [org.owner], { invite_only: true });
});
afterAll(async () => {
  await m?.close();
});

const createLink = (as: any, params: Record<string, unknown> = {}) => t.call("POST", "/invites/multiuse", { as, params });
const list = async (as = org.admin.as) => (await t.ok(await t.call("GET", "/invites", { as }))).invites as any[];
const links = async (as = org.admin.as) => (await list(as)).filter((i) => i.is_multiuse);
const keyOf = (link: string) => /\/join\/([a-z2-7]{24})\/$/.exec(link)![1];
const nowSecs = () => Math.floor(t.clock.now().getTime() / 1000);
const accept = (key: string, email: string, realmId = org.realmId) =>
  t.call("POST", "/internal/invites/multiuse/accept", { params: { realm_id: realmId, key, email, full_name: `New ${email.split("@")[0]}`, password: "new-pass-1" } });
const admins = () => [org.owner.user_id, org.admin.user_id].sort((a, b) => a - b);

/** The invites_changed events written since the last look, with their audiences. */
async function invitesChanged() {
  return (await t.outbox())
    .filter((e) => e.type === "accounts.invites.changed")
    .map((e) => {
      expect(InvitesChangedEvent.parse(e.payload.client.event)).toEqual({ type: "invites_changed" });
      expect(e.realm_id).toBe(org.realmId);
      return [...e.payload.client.users].sort((a: number, b: number) => a - b);
    });
}

describe("POST /invites/multiuse", () => {
  it("answers the link; GET /invites lists it as a reusable link; administrators are told", async () => {
    await t.markOutbox();
    const body = await t.ok(await createLink(org.admin.as, { stream_ids: [general, secret, general] }));
    expect(Object.keys(body).sort()).toEqual(["invite_link", "msg", "result"]);
    expect(body.invite_link).toMatch(/^https:\/\/chat\.example\.test\/join\/[a-z2-7]{24}\/$/);
    const [link] = await links();
    expect(link).toEqual({
      id: expect.any(Number),
      invited_by_user_id: org.admin.user_id,
      invited: nowSecs(),
      expiry_date: nowSecs() + 14400 * 60,
      invited_as: 400,
      link_url: body.invite_link,
      is_multiuse: true,
    });
    expect(await invitesChanged()).toEqual([admins()]);
    const { rows } = await t.pool.query("SELECT stream_ids, include_realm_default_subscriptions FROM multiuse_invites WHERE id = $1", [link.id]);
    expect(rows[0]).toEqual({ stream_ids: [String(general), String(secret)], include_realm_default_subscriptions: false });
  });

  it("takes invite_expires_in_minutes (null never expires), invite_as and include_realm_default_subscriptions", async () => {
    const never = (await t.ok(await createLink(org.owner.as, { invite_expires_in_minutes: null, invite_as: 100, include_realm_default_subscriptions: true }))).invite_link;
    const soon = (await t.ok(await createLink(org.admin.as, { invite_expires_in_minutes: 30, invite_as: 600 }))).invite_link;
    const all = await links();
    expect(all.find((i) => i.link_url === never)).toMatchObject({ expiry_date: null, invited_as: 100, invited_by_user_id: org.owner.user_id });
    expect(all.find((i) => i.link_url === soon)).toMatchObject({ expiry_date: nowSecs() + 1800, invited_as: 600 });
    expect(new Set(all.map((i) => i.link_url)).size).toBe(all.length);
    for (const minutes of [0, -1, 10 ** 12]) {
      expectError(await createLink(org.admin.as, { invite_expires_in_minutes: minutes }), 400, "BAD_REQUEST", "Invalid invite_expires_in_minutes");
    }
  });

  it("only the realm's create_multiuse_invite_group (administrators) may; guests and bots are refused first", async () => {
    const before = (await links()).length;
    await t.markOutbox();
    for (const u of [org.moderator, org.member]) expectError(await createLink(u.as), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await createLink(org.guest.as), 400, "BAD_REQUEST", "Not allowed for guest users");
    expectError(await createLink(org.bot.as), 400, "BAD_REQUEST", "This endpoint does not accept bot requests.");
    // The permission comes before what is asked for.
    expectError(await createLink(org.member.as, { invite_as: 900, stream_ids: [999] }), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await createLink(org.admin.as, { invite_as: 100 }), 400, "BAD_REQUEST", "Must be an organization owner");
    expectError(await createLink(org.admin.as, { invite_as: 500 }), 400, "BAD_REQUEST", "Must be invited as an valid type of user");
    expect((await links()).length).toBe(before);
    expect(await invitesChanged()).toEqual([]);
  });

  it("checks every channel, then the permission to subscribe others", async () => {
    const before = (await links()).length;
    expectError(await createLink(org.admin.as, { stream_ids: [general, 999] }), 400, "BAD_REQUEST", "Invalid channel ID 999. No invites were sent.");
    expectError(await createLink(org.admin.as, { stream_ids: "[1," }), 400, "BAD_REQUEST");
    await t.pool.query("UPDATE realms SET invite_to_stream_policy = 6 WHERE id = $1", [org.realmId]);
    try {
      expectError(await createLink(org.admin.as, { stream_ids: [999] }), 400, "BAD_REQUEST", "Invalid channel ID 999. No invites were sent.");
      expectError(await createLink(org.admin.as, { stream_ids: [general] }), 400, "BAD_REQUEST", "You do not have permission to subscribe other users to channels.");
      expect((await links()).length).toBe(before);
      // Default channels may still be asked for.
      await t.ok(await createLink(org.admin.as, { include_realm_default_subscriptions: true }));
    } finally {
      await t.pool.query("UPDATE realms SET invite_to_stream_policy = 1 WHERE id = $1", [org.realmId]);
    }
  });
});

describe("GET /invites with reusable links", () => {
  it("lists email invitations first, then links; members see only their own; another organization none", async () => {
    await t.ok(await t.call("POST", "/invites", { as: org.member.as, params: { invitee_emails: "listed@new.test", stream_ids: [] } }));
    const all = await list();
    const firstLink = all.findIndex((i) => i.is_multiuse);
    expect(firstLink).toBeGreaterThan(0);
    expect(all.slice(firstLink).every((i) => i.is_multiuse)).toBe(true);
    const email = all.find((i) => i.email === "listed@new.test");
    expect(email).toEqual({
      id: expect.any(Number),
      invited_by_user_id: org.member.user_id,
      invited: nowSecs(),
      expiry_date: nowSecs() + 14400 * 60,
      invited_as: 400,
      email: "listed@new.test",
      notify_referrer_on_join: true,
      is_multiuse: false,
    });
    expect((await list(org.member.as)).map((i) => i.email)).toEqual(["listed@new.test"]);
    expect(await list(org.moderator.as)).toEqual([]);
    expect(await list(other.owner.as)).toEqual([]);
    expect((await list(org.owner.as)).length).toBe(all.length);
  });
});

describe("DELETE /invites/multiuse/{invite_id}", () => {
  it("the creator or an administrator revokes, an owner's owner link needs an owner; twice is refused", async () => {
    const ownerLink = (await t.ok(await createLink(org.owner.as, { invite_as: 100 }))).invite_link;
    const adminLink = (await t.ok(await createLink(org.admin.as))).invite_link;
    const all = await links();
    const ownerId = all.find((i) => i.link_url === ownerLink).id;
    const adminId = all.find((i) => i.link_url === adminLink).id;
    expectError(await t.call("DELETE", `/invites/multiuse/${adminId}`, { as: other.owner.as }), 400, "BAD_REQUEST", "No such invitation");
    expectError(await t.call("DELETE", "/invites/multiuse/987654321", { as: org.owner.as }), 400, "BAD_REQUEST", "No such invitation");
    expectError(await t.call("DELETE", `/invites/multiuse/${adminId}`, { as: org.moderator.as }), 400, "BAD_REQUEST", "Must be an organization administrator");
    expectError(await t.call("DELETE", `/invites/multiuse/${adminId}`, { as: org.guest.as }), 400, "BAD_REQUEST", "Not allowed for guest users");
    expectError(await t.call("DELETE", `/invites/multiuse/${ownerId}`, { as: org.admin.as }), 400, "BAD_REQUEST", "Must be an organization owner");
    await t.markOutbox();
    await t.ok(await t.call("DELETE", `/invites/multiuse/${ownerId}`, { as: org.owner.as }));
    await t.ok(await t.call("DELETE", `/invites/multiuse/${adminId}`, { as: org.owner.as }));
    expect(await invitesChanged()).toEqual([admins(), admins()]);
    expect((await links()).some((i) => i.id === ownerId || i.id === adminId)).toBe(false);
    expectError(await t.call("DELETE", `/invites/multiuse/${adminId}`, { as: org.admin.as }), 400, "BAD_REQUEST", "Invitation has already been revoked");
    // An email invitation with the same id is another invitation.
    expectError(await accept(keyOf(adminLink), "after-revoke@new.test"), 400, "BAD_REQUEST", "The confirmation link has expired or been deactivated.");
  });

  it("revokes an expired link too (it is not listed any more)", async () => {
    const link = (await t.ok(await createLink(org.admin.as, { invite_expires_in_minutes: 5 }))).invite_link;
    const id = (await links()).find((i) => i.link_url === link).id;
    t.clock.advance(6 * 60_000);
    expect((await links()).some((i) => i.id === id)).toBe(false);
    await t.ok(await t.call("DELETE", `/invites/multiuse/${id}`, { as: org.admin.as }));
    expectError(await t.call("DELETE", `/invites/multiuse/${id}`, { as: org.admin.as }), 400, "BAD_REQUEST", "Invitation has already been revoked");
  });
});

describe("signing up through a reusable link", () => {
  it("works for several people with the link's role and channels; the link stays listed", async () => {
    const link = (await t.ok(await createLink(org.admin.as, { invite_as: 300, stream_ids: [secret], include_realm_default_subscriptions: true }))).invite_link;
    const id = (await links()).find((i) => i.link_url === link).id;
    await t.markOutbox();
    const a = await t.ok(await accept(keyOf(link), "First@Link.test"));
    const b = await t.ok(await accept(keyOf(link), "second@link.test"));
    expect(a).toMatchObject({ email: "First@Link.test", role: 300 });
    expect(b).toMatchObject({ email: "second@link.test", role: 300 });
    await t.ok(await t.call("POST", "/internal/authenticate", { params: { email: "second@link.test", api_key: b.api_key } }));
    const accepted = (await t.outbox()).filter((e) => e.type === "accounts.invite.accepted").map((e) => AccountsInviteAccepted.parse(e.payload));
    expect(accepted).toEqual([a, b].map((u) => ({
      invite_id: id,
      user_id: u.user_id,
      referrer_id: org.admin.user_id,
      stream_ids: [secret],
      include_realm_default_subscriptions: true,
      notify_referrer_on_join: false,
      is_multiuse: true,
    })));
    // Completed as accounts' consumer does: both join the link's channel (the organization has no
    // default channels), and the link's creator is not told (notify_referrer_on_join is false).
    for (const e of accepted) await doCompleteInviteAcceptance(t.deps, org.realmId, e as InviteAccepted);
    for (const u of [a, b]) expect(await m.subscriptions(t.identity({ ...u, role: 300, realm_id: org.realmId }))).toEqual([[secret, "secret"]]);
    expect((await m.messages(org.admin)).filter((x) => x.content.includes("accepted your invitation"))).toEqual([]);
    expect((await links()).some((i) => i.id === id)).toBe(true);
    expectError(await accept(keyOf(link), "first@link.test"), 400, "BAD_REQUEST", "Email 'first@link.test' already in use");
  });

  it("refuses another organization's, an unknown, a revoked or an expired link", async () => {
    const link = (await t.ok(await createLink(org.admin.as, { invite_expires_in_minutes: 10 }))).invite_link;
    const gone = "The confirmation link has expired or been deactivated.";
    expectError(await accept(keyOf(link), "x1@link.test", other.realmId), 400, "BAD_REQUEST", gone);
    expectError(await accept("aaaaaaaaaaaaaaaaaaaaaaaa", "x1@link.test"), 400, "BAD_REQUEST", gone);
    t.clock.advance(11 * 60_000);
    expectError(await accept(keyOf(link), "x1@link.test"), 400, "BAD_REQUEST", gone);
    const { rows } = await t.pool.query("SELECT count(*)::int AS n FROM users WHERE lower(email) = 'x1@link.test'");
    expect(rows[0].n).toBe(0);
  });

  it("voids pending email invitations to the address and tells those who manage them", async () => {
    await t.ok(await t.call("POST", "/invites", { as: org.member2.as, params: { invitee_emails: "both@link.test", stream_ids: [] } }));
    const link = (await t.ok(await createLink(org.admin.as))).invite_link;
    await t.markOutbox();
    await t.ok(await accept(keyOf(link), "both@link.test"));
    expect(await invitesChanged()).toEqual([[...admins(), org.member2.user_id].sort((x, y) => x - y)]);
    expect((await list(org.member2.as)).some((i) => i.email === "both@link.test")).toBe(false);
    await t.markOutbox();
    await t.ok(await accept(keyOf(link), "alone@link.test"));
    expect(await invitesChanged()).toEqual([]);
  });

  it("a deactivated creator's links stop working, as their email invitations do", async () => {
    const creator = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: "leaving-admin@x.test", full_name: "Leaving", role: 200 } }));
    const as = t.identity({ ...creator, realm_id: org.realmId, role: 200 });
    const link = (await t.ok(await createLink(as))).invite_link;
    await t.markOutbox();
    await t.ok(await t.call("DELETE", "/users/me", { as }));
    expect(await invitesChanged()).toEqual([admins()]);
    expect((await links()).some((i) => i.link_url === link)).toBe(false);
    expectError(await accept(keyOf(link), "late@link.test"), 400, "BAD_REQUEST", "The confirmation link has expired or been deactivated.");
  });
});

describe("POST /invites/{invite_id}/resend", () => {
  const send = async (as: any, email: string, extra: Record<string, unknown> = {}) => {
    await t.ok(await t.call("POST", "/invites", { as, params: { invitee_emails: email, stream_ids: [], ...extra } }));
    return (await list()).find((i) => i.email === email);
  };
  const resend = (as: any, id: number) => t.call("POST", `/invites/${id}/resend`, { as });

  it("sends a new link, valid as long again as the first; the list shows the new sending time", async () => {
    const inv = await send(org.member.as, "resend-me@new.test", { invite_expires_in_minutes: 60 });
    const { rows: before } = await t.pool.query("SELECT key_hash FROM invites WHERE id = $1", [inv.id]);
    t.clock.advance(20 * 60_000);
    await t.markOutbox();
    const body = await t.ok(await resend(org.member.as, inv.id));
    expect(Object.keys(body).sort()).toEqual(["msg", "result"]);
    expect(await invitesChanged()).toEqual([[...admins(), org.member.user_id].sort((a, b) => a - b)]);
    const after = (await list(org.member.as)).find((i) => i.id === inv.id);
    expect(after).toMatchObject({ invited: nowSecs(), expiry_date: nowSecs() + 3600, email: "resend-me@new.test" });
    const { rows } = await t.pool.query("SELECT key_hash FROM invites WHERE id = $1", [inv.id]);
    expect(rows[0].key_hash).not.toBe(before[0].key_hash);
    // Resent again by an administrator: the validity measured from the last sending.
    t.clock.advance(10 * 60_000);
    await t.ok(await resend(org.admin.as, inv.id));
    expect((await list()).find((i) => i.id === inv.id)).toMatchObject({ invited: nowSecs(), expiry_date: nowSecs() + 3600 });
    // Signing up still works (email invitations are accepted by address).
    await t.ok(await t.call("POST", "/internal/invites/accept", { params: { realm_id: org.realmId, email: "resend-me@new.test", full_name: "Re Sent" } }));
  });

  it("a never-expiring invitation stays so", async () => {
    const inv = await send(org.admin.as, "forever@new.test", { invite_expires_in_minutes: null });
    await t.ok(await resend(org.admin.as, inv.id));
    expect((await list()).find((i) => i.id === inv.id)).toMatchObject({ expiry_date: null, invited: nowSecs() });
  });

  it("the referrer or an administrator (an owner for owner invitations); others' and unusable ones are unknown", async () => {
    const mine = await send(org.member2.as, "resend-perm@new.test");
    const owners = await send(org.owner.as, "resend-owner@new.test", { invite_as: 100 });
    await t.markOutbox();
    expectError(await resend(org.member.as, mine.id), 400, "BAD_REQUEST", "Must be an organization administrator");
    expectError(await resend(org.moderator.as, mine.id), 400, "BAD_REQUEST", "Must be an organization administrator");
    expectError(await resend(org.admin.as, owners.id), 400, "BAD_REQUEST", "Must be an organization owner");
    expectError(await resend(org.guest.as, mine.id), 400, "BAD_REQUEST", "Not allowed for guest users");
    expectError(await resend(org.bot.as, mine.id), 400, "BAD_REQUEST", "This endpoint does not accept bot requests.");
    expectError(await resend(other.owner.as, mine.id), 400, "BAD_REQUEST", "No such invitation");
    expectError(await resend(org.owner.as, 987654321), 400, "BAD_REQUEST", "No such invitation");
    expect(await invitesChanged()).toEqual([]);
    await t.ok(await resend(org.owner.as, owners.id));

    // Revoked, accepted and expired invitations cannot be resent.
    await t.ok(await t.call("DELETE", `/invites/${mine.id}`, { as: org.member2.as }));
    expectError(await resend(org.member2.as, mine.id), 400, "BAD_REQUEST", "No such invitation");
    const used = await send(org.admin.as, "resend-used@new.test");
    await t.ok(await t.call("POST", "/internal/invites/accept", { params: { realm_id: org.realmId, email: "resend-used@new.test", full_name: "Used" } }));
    expectError(await resend(org.admin.as, used.id), 400, "BAD_REQUEST", "No such invitation");
    const late = await send(org.admin.as, "resend-late@new.test", { invite_expires_in_minutes: 1 });
    t.clock.advance(2 * 60_000);
    expectError(await resend(org.admin.as, late.id), 400, "BAD_REQUEST", "No such invitation");
  });

  it("counts against the organization's daily limit", async () => {
    const r = await t.ok(await t.call("POST", "/internal/realms", { params: { name: "Resends", owner_email: "o@resends.test", owner_full_name: "OO" } }));
    const owner = t.identity({ ...r.owner, realm_id: r.realm_id, role: 100 });
    await t.pool.query("UPDATE realms SET max_invites_per_day = 3 WHERE id = $1", [r.realm_id]);
    await t.ok(await t.call("POST", "/invites", { as: owner, params: { invitee_emails: "r1@resends.test, r2@resends.test", stream_ids: [] } }));
    const [first] = await list(owner);
    await t.ok(await resend(owner, first.id));
    const res = await resend(owner, first.id);
    expectError(res, 400, "INVITATION_FAILED", "To protect users, Zulip limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.");
    expect(res.body).toMatchObject({ errors: [], sent_invitations: false, daily_limit_reached: true, license_limit_reached: false });
    expectError(await t.call("POST", "/invites", { as: owner, params: { invitee_emails: "r3@resends.test", stream_ids: [] } }), 400, "INVITATION_FAILED");
    t.clock.advance(86_400_000 + 1000);
    await t.ok(await resend(owner, first.id));
  });
});
