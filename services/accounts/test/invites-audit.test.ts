import { INTERNAL_HEADERS } from "@chat/platform";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doCompleteInviteAcceptance, type InviteAccepted } from "../src/actions/invites";
import { expectError, type Accounts, type Org } from "./helpers";
import { startAccountsWithMessaging, type WithMessaging } from "./messaging-peer";

/**
 * Invitations audited against spec 4.6 and Zulip 9 (feature level 267): what invites.test.ts and
 * multiuse-invites.test.ts leave out. Accounts whose real address is hidden, the roles one may
 * invite to, who hears invites_changed, accounts made without the invitation, revoking an
 * expired invitation, new accounts of an organization that does not require invitations, and
 * what accepting one does to the address's other invitations.
 */

let m: WithMessaging;
let t: Accounts;
let org: Org;
let general: number;

beforeAll(async () => {
  m = await startAccountsWithMessaging({ INVITES_DAILY_LIMIT: "200" });
  t = m.t;
  org = await t.createOrg();
  general = await m.createChannel(org.admin, "general");
});
afterAll(async () => {
  await m?.close();
});

const invite = (as: any, params: Record<string, unknown>) => t.call("POST", "/invites", { as, params: { stream_ids: [], ...params } });
const pending = async (as = org.admin.as) => (await t.ok(await t.call("GET", "/invites", { as }))).invites as any[];
const emailsOf = async (as = org.admin.as) => (await pending(as)).filter((i) => !i.is_multiuse).map((i) => i.email as string);
const gone = "The confirmation link has expired or been deactivated.";
const byId = (a: number, b: number) => a - b;

/** The audiences of the invites_changed events written since the last look. */
async function invitesChanged(): Promise<number[][]> {
  return (await t.outbox()).filter((e) => e.type === "accounts.invites.changed").map((e) => [...e.payload.client.users].sort(byId));
}

/** A new member of `o` made through the internal API (as the CLI does), with a client identity. */
async function newUser(o: Org, email: string, role = 400) {
  const u = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: o.realmId, email, full_name: email.split("@")[0], role } }));
  return { ...u, as: t.identity({ ...u, realm_id: o.realmId, role }) };
}

describe("POST /invites: addresses that already have an account", () => {
  it("an account whose real address is hidden (a stand-in API email) is reported, active or deactivated", async () => {
    const hidden = await newUser(org, "Hidden.Person@new.test");
    await t.ok(await t.call("PATCH", "/settings", { as: hidden.as, params: { email_address_visibility: 4 } }));
    expect((await t.ok(await t.call("GET", "/users/me", { as: hidden.as }))).email).not.toBe("Hidden.Person@new.test");
    await t.markOutbox();
    const res = await invite(org.admin.as, { invitee_emails: "hidden.person@new.test, beside-hidden@new.test" });
    expectError(res, 400, "INVITATION_FAILED", "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!");
    expect(res.body).toMatchObject({
      errors: [["hidden.person@new.test", "Already has an account.", false]],
      sent_invitations: true,
      license_limit_reached: false,
      daily_limit_reached: false,
    });
    expect(await emailsOf()).toContain("beside-hidden@new.test");
    expect(await emailsOf()).not.toContain("hidden.person@new.test");

    const left = await newUser(org, "left-hidden@new.test");
    await t.ok(await t.call("PATCH", "/settings", { as: left.as, params: { email_address_visibility: 3 } }));
    await t.ok(await t.call("DELETE", "/users/me", { as: left.as }));
    const again = await invite(org.admin.as, { invitee_emails: "left-hidden@new.test" });
    expectError(again, 400, "INVITATION_FAILED", "We weren't able to invite anyone.");
    expect(again.body).toMatchObject({ errors: [["left-hidden@new.test", "Account has been deactivated.", true]], sent_invitations: false });
  });

  it("nor can a second account be made for a hidden address, by any way of making one", async () => {
    const hidden = await newUser(org, "taken-hidden@new.test");
    await t.ok(await t.call("PATCH", "/settings", { as: hidden.as, params: { email_address_visibility: 4 } }));
    const count = async () => (await t.pool.query("SELECT count(*)::int AS n FROM users WHERE lower(delivery_email) = 'taken-hidden@new.test'")).rows[0].n;
    expectError(
      await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: "Taken-Hidden@new.test", full_name: "Second One" } }),
      400,
      "BAD_REQUEST",
      "Email 'Taken-Hidden@new.test' already in use",
    );
    const link = (await t.ok(await t.call("POST", "/invites/multiuse", { as: org.admin.as, params: {} }))).invite_link as string;
    const key = /\/join\/([a-z2-7]{24})\/$/.exec(link)![1];
    expectError(
      await t.call("POST", "/internal/invites/multiuse/accept", { params: { realm_id: org.realmId, key, email: "taken-hidden@new.test", full_name: "Second Two" } }),
      400,
      "BAD_REQUEST",
      "Email 'taken-hidden@new.test' already in use",
    );
    // The reusable link's address form points the visitor to logging in, as for a visible address.
    const page = await t.app.inject({
      method: "POST",
      url: `/api/v1/join/${key}/`,
      headers: { "content-type": "application/x-www-form-urlencoded", [INTERNAL_HEADERS.token]: t.config.INTERNAL_TOKEN },
      payload: "email=taken-hidden%40new.test",
    });
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain("taken-hidden@new.test already has an account");
    expect(await count()).toBe(1);
  });
});

describe("POST /invites: parsing invitee_emails", () => {
  it("takes names with angle brackets, spaces, CRLF and blank entries; one invitation per address", async () => {
    await t.ok(await invite(org.member.as, { invitee_emails: "  Bea Bee < parse1@new.test > ,\r\nparse2@new.test\n\n, parse1@new.test,Cy <parse3@new.test>" }));
    expect((await emailsOf(org.member.as)).filter((e) => e.startsWith("parse")).sort()).toEqual(["parse1@new.test", "parse2@new.test", "parse3@new.test"]);
    const bad = await invite(org.member.as, { invitee_emails: "parse4@new.test parse5@new.test, <>" });
    expectError(bad, 400, "INVITATION_FAILED", "Some emails did not validate, so we didn't send any invitations.");
    expect(bad.body.errors).toEqual([["parse4@new.test parse5@new.test", "Invalid address.", false]]);
  });
});

describe("invite_as against the caller's role", () => {
  it("equal or more restricted roles only, refused in Zulip's words; the same for reusable links", async () => {
    const cases: Array<[keyof Org, number, string | null]> = [
      ["member", 300, "Must be an organization administrator"],
      ["member", 200, "Must be an organization administrator"],
      ["member", 100, "Must be an organization owner"],
      ["moderator", 200, "Must be an organization administrator"],
      ["moderator", 100, "Must be an organization owner"],
      ["admin", 100, "Must be an organization owner"],
      ["member", 600, null],
      ["moderator", 300, null],
      ["admin", 200, null],
      ["owner", 100, null],
    ];
    for (const [who, as, msg] of cases) {
      const res = await invite((org[who] as any).as, { invitee_emails: `role-${who}-${as}@new.test`, invite_as: as });
      if (msg) expectError(res, 400, "BAD_REQUEST", msg);
      else await t.ok(res);
    }
    const listed = await pending();
    expect(listed.filter((i) => !i.is_multiuse && i.email.startsWith("role-")).map((i) => [i.email, i.invited_as])).toEqual([
      ["role-member-600@new.test", 600],
      ["role-moderator-300@new.test", 300],
      ["role-admin-200@new.test", 200],
      ["role-owner-100@new.test", 100],
    ]);
    expectError(await t.call("POST", "/invites/multiuse", { as: org.admin.as, params: { invite_as: 100 } }), 400, "BAD_REQUEST", "Must be an organization owner");
    await t.ok(await t.call("POST", "/invites/multiuse", { as: org.admin.as, params: { invite_as: 200 } }));
  });
});

describe("invites_changed", () => {
  it("reaches bots with an administrator's role too, as Zulip's administrators and bots; not other bots", async () => {
    const o = await t.createOrg();
    const adminBot = await t.ok(
      await t.call("POST", "/internal/users", { params: { realm_id: o.realmId, email: "admin-bot-bot@new.test", full_name: "Admin Bot", role: 200, bot_type: 1, bot_owner_id: o.owner.user_id } }),
    );
    const admins = [o.owner.user_id, o.admin.user_id, adminBot.user_id].sort(byId);
    await t.markOutbox();
    await t.ok(await invite(o.member.as, { invitee_emails: "audience@new.test" }));
    const id = (await pending(o.member.as)).find((i) => i.email === "audience@new.test").id;
    await t.ok(await t.call("DELETE", `/invites/${id}`, { as: o.member.as }));
    await t.ok(await t.call("POST", "/invites/multiuse", { as: o.admin.as, params: {} }));
    const withMember = [...admins, o.member.user_id].sort(byId);
    expect(await invitesChanged()).toEqual([withMember, withMember, admins]);
  });
});

describe("an account made without the invitation", () => {
  it("voids pending invitations to its address and tells those who manage them (POST /users, the CLI)", async () => {
    await t.ok(await invite(org.member.as, { invitee_emails: "made-by-cli@new.test" }));
    await t.ok(await invite(org.member2.as, { invitee_emails: "Made-By-Admin@new.test" }));
    await t.markOutbox();
    await newUser(org, "MADE-BY-CLI@new.test");
    expect(await emailsOf(org.member.as)).not.toContain("made-by-cli@new.test");
    expect(await invitesChanged()).toEqual([[org.owner.user_id, org.admin.user_id, org.member.user_id].sort(byId)]);
    expectError(await t.call("POST", "/internal/invites/accept", { params: { realm_id: org.realmId, email: "made-by-cli@new.test", full_name: "Late" } }), 400, "BAD_REQUEST", gone);

    // An administrator the operator allowed to create users.
    await t.pool.query("UPDATE users SET can_create_users = true WHERE id = $1", [org.admin.user_id]);
    await t.ok(await t.call("POST", "/users", { as: org.admin.as, params: { email: "made-by-admin@new.test", password: "a-long-password-1", full_name: "Made By Admin" } }));
    expect(await emailsOf(org.member2.as)).not.toContain("Made-By-Admin@new.test");
    expect(await invitesChanged()).toEqual([[org.owner.user_id, org.admin.user_id, org.member2.user_id].sort(byId)]);
  });

  it("through a reusable link, its real address counts even when the organization hides new users' addresses", async () => {
    const o = await t.createOrg();
    await t.ok(await t.call("PATCH", "/realm/user_settings_defaults", { as: o.admin.as, params: { email_address_visibility: 4 } }));
    await t.ok(await invite(o.member.as, { invitee_emails: "hidden-joiner@new.test" }));
    const link = (await t.ok(await t.call("POST", "/invites/multiuse", { as: o.admin.as, params: {} }))).invite_link as string;
    const key = /\/join\/([a-z2-7]{24})\/$/.exec(link)![1];
    await t.markOutbox();
    const acc = await t.ok(await t.call("POST", "/internal/invites/multiuse/accept", { params: { realm_id: o.realmId, key, email: "hidden-joiner@new.test", full_name: "Hidden Joiner" } }));
    expect(acc.email).not.toBe("hidden-joiner@new.test");
    expect(await emailsOf(o.member.as)).toEqual([]);
    expect(await invitesChanged()).toEqual([[o.owner.user_id, o.admin.user_id, o.member.user_id].sort(byId)]);
  });
});

describe("DELETE /invites/{invite_id}", () => {
  it("revokes an invitation that expired unused (Zulip finds it until cleanup); accepted ones are unknown", async () => {
    await t.ok(await invite(org.member.as, { invitee_emails: "expired-revoke@new.test", invite_expires_in_minutes: 5 }));
    const id = (await pending(org.member.as)).find((i) => i.email === "expired-revoke@new.test").id;
    t.clock.advance(6 * 60_000);
    expect(await emailsOf(org.member.as)).not.toContain("expired-revoke@new.test");
    expectError(await t.call("DELETE", `/invites/${id}`, { as: org.member2.as }), 400, "BAD_REQUEST", "Must be an organization administrator");
    await t.markOutbox();
    await t.ok(await t.call("DELETE", `/invites/${id}`, { as: org.member.as }));
    expect(await invitesChanged()).toEqual([[org.owner.user_id, org.admin.user_id, org.member.user_id].sort(byId)]);
    expectError(await t.call("DELETE", `/invites/${id}`, { as: org.member.as }), 400, "BAD_REQUEST", "No such invitation");
    // Resending stays limited to invitations still listed.
    await t.ok(await invite(org.member.as, { invitee_emails: "expired-resend@new.test", invite_expires_in_minutes: 5 }));
    const late = (await pending(org.member.as)).find((i) => i.email === "expired-resend@new.test").id;
    t.clock.advance(6 * 60_000);
    expectError(await t.call("POST", `/invites/${late}/resend`, { as: org.member.as }), 400, "BAD_REQUEST", "No such invitation");

    await t.ok(await invite(org.member.as, { invitee_emails: "accepted-revoke@new.test" }));
    const used = (await pending(org.member.as)).find((i) => i.email === "accepted-revoke@new.test").id;
    await t.ok(await t.call("POST", "/internal/invites/accept", { params: { realm_id: org.realmId, email: "accepted-revoke@new.test", full_name: "Accepted Revoke" } }));
    expectError(await t.call("DELETE", `/invites/${used}`, { as: org.member.as }), 400, "BAD_REQUEST", "No such invitation");
  });
});

describe("accepting an email invitation", () => {
  it("applies the role and channels, consumes it, voids the address's other invitations; no notice when not asked", async () => {
    await t.ok(await invite(org.member2.as, { invitee_emails: "Guest-Joiner@new.test" }));
    await t.ok(await invite(org.member.as, { invitee_emails: "guest-joiner@new.test", invite_as: 600, stream_ids: [general], notify_referrer_on_join: false }));
    await t.markOutbox();
    const acc = await t.ok(await t.call("POST", "/internal/invites/accept", { params: { realm_id: org.realmId, email: "guest-joiner@new.test", full_name: "Guest Joiner" } }));
    expect(acc.role).toBe(600);
    expect(await emailsOf(org.member.as)).not.toContain("guest-joiner@new.test");
    expect(await emailsOf(org.member2.as)).not.toContain("Guest-Joiner@new.test");
    expect(await invitesChanged()).toEqual([[org.owner.user_id, org.admin.user_id, org.member.user_id].sort(byId)]);
    const accepted = (await t.outbox({ all: true })).filter((e) => e.type === "accounts.invite.accepted" && e.payload.user_id === acc.user_id);
    expect(accepted).toHaveLength(1);
    const before = (await m.messages(org.member)).length;
    await doCompleteInviteAcceptance(t.deps, org.realmId, accepted[0].payload as InviteAccepted);
    expect(await m.subscriptions(t.identity({ ...acc, role: 600, realm_id: org.realmId }))).toEqual([[general, "general"]]);
    expect((await m.messages(org.member)).length).toBe(before);
    expectError(await t.call("POST", "/internal/invites/accept", { params: { realm_id: org.realmId, email: "guest-joiner@new.test", full_name: "Guest Again" } }), 400, "BAD_REQUEST", gone);
  });
});

describe("an organization that does not require invitations", () => {
  it("a member whose account is under INVITES_MIN_USER_AGE_DAYS old may not invite; administrators may", async () => {
    const o = await t.createOrg();
    await t.ok(await t.call("PATCH", "/realm", { as: o.owner.as, params: { invite_required: false } }));
    await t.markOutbox();
    for (const u of [o.member, o.moderator]) {
      const res = await invite(u.as, { invitee_emails: "too-new@new.test" });
      expectError(res, 400, "INVITATION_FAILED", "Your account is too new to send invites for this organization. Ask an organization admin, or a more experienced user.");
      expect(res.body).toMatchObject({ errors: [], sent_invitations: false, license_limit_reached: false, daily_limit_reached: false });
    }
    expect(await emailsOf(o.admin.as)).toEqual([]);
    expect(await invitesChanged()).toEqual([]);
    await t.ok(await invite(o.admin.as, { invitee_emails: "by-admin@new.test" }));
    // Reusable links are the administrators' (and not limited by age in Zulip).
    t.clock.advance(3 * 86_400_000 + 1000);
    await t.ok(await invite(o.member.as, { invitee_emails: "old-enough@new.test" }));
    expect((await emailsOf(o.admin.as)).sort()).toEqual(["by-admin@new.test", "old-enough@new.test"]);
    // Where invitations are required, a brand-new member may invite at once.
    const fresh = await newUser(o, "fresh-member@new.test");
    expectError(await invite(fresh.as, { invitee_emails: "x-fresh@new.test" }), 400, "INVITATION_FAILED");
    await t.ok(await t.call("PATCH", "/realm", { as: o.owner.as, params: { invite_required: true } }));
    await t.ok(await invite(fresh.as, { invitee_emails: "x-fresh@new.test" }));
  });
});
