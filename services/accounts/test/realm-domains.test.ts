import { RealmDomainsClientEvent } from "@chat/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startAccounts, type Accounts, type Org, type TestUser } from "./helpers";
import { everyone, notices, registerState } from "./settings-kit";

/**
 * An organization's email domains (Zulip's realm domains) and the two settings that use them,
 * as Zulip 9 has them: GET/POST/PATCH/DELETE /realm/domains, the realm_domains events to every
 * user of the organization, `emails_restricted_to_domains` and
 * `disallow_disposable_email_addresses` through PATCH /realm and register, and who may then
 * join: POST /users, POST /invites, signing up through an invitation or a reusable link. Bots
 * are never restricted. Another organization is never affected.
 */

let t: Accounts;
let org: Org;
let other: Org;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
  other = await t.createOrg();
});
afterAll(() => t?.close());

const ADMIN_ONLY = "Must be an organization administrator";

const list = async (who: TestUser) => (await t.ok(await t.call("GET", "/realm/domains", { as: who.as }))).domains;
const add = (domain: string, allowSubdomains: boolean, who: TestUser) =>
  t.call("POST", "/realm/domains", { as: who.as, params: { domain, allow_subdomains: allowSubdomains } });
const change = (domain: string, allowSubdomains: boolean, who: TestUser) =>
  t.call("PATCH", `/realm/domains/${encodeURIComponent(domain)}`, { as: who.as, params: { allow_subdomains: allowSubdomains } });
const remove = (domain: string, who: TestUser) => t.call("DELETE", `/realm/domains/${encodeURIComponent(domain)}`, { as: who.as });
const patchRealm = (who: TestUser, params: Record<string, unknown>) => t.call("PATCH", "/realm", { as: who.as, params });
const state = (who: TestUser) => registerState(t, who.as, { fetch_event_types: ["realm", "realm_domains"] });

/** The client events written since the last look, each checked against its contract, with its audience. */
async function told() {
  return (await notices(t)).map((n) => {
    if (n.event.type === "realm_domains") RealmDomainsClientEvent.parse(n.event);
    return { type: n.type, event: n.event, users: n.users };
  });
}

/** An organization restricted to example.com (exactly) and corp.example.org (and its subdomains). */
async function restrictedOrg(): Promise<Org> {
  const o = await t.createOrg();
  await t.ok(await add("example.com", false, o.admin));
  await t.ok(await add("corp.example.org", true, o.admin));
  await t.ok(await patchRealm(o.admin, { emails_restricted_to_domains: true }));
  return o;
}

describe("/realm/domains", () => {
  it("administrators add, change and remove domains; every active user of the organization is told; register and GET follow", async () => {
    expect(await list(org.member)).toEqual([]);
    await t.markOutbox();
    // Stripped and lowercased, as Zulip stores it; the answer is Zulip's [id, domain].
    const first = await t.ok(await add("  Example.COM ", false, org.admin));
    expect(first.new_domain).toEqual([expect.any(Number), "example.com"]);
    const second = await t.ok(await add("corp.example.org", true, org.owner));
    expect(second.new_domain[0]).toBeGreaterThan(first.new_domain[0]);
    const both = [
      { domain: "example.com", allow_subdomains: false },
      { domain: "corp.example.org", allow_subdomains: true },
    ];
    for (const who of [org.guest, org.member, org.bot]) expect(await list(who)).toEqual(both);
    expect((await state(org.member)).realm_domains).toEqual(both);

    await t.ok(await change("example.com", true, org.admin));
    // Setting the value it has is still a change event, as in Zulip.
    await t.ok(await change("corp.example.org", true, org.admin));
    expect(await list(org.guest)).toEqual([{ domain: "example.com", allow_subdomains: true }, both[1]]);
    await t.ok(await remove("corp.example.org", org.admin));
    expect(await list(org.member)).toEqual([{ domain: "example.com", allow_subdomains: true }]);
    expect((await state(org.guest)).realm_domains).toEqual([{ domain: "example.com", allow_subdomains: true }]);

    const events = await told();
    expect(events.map((e) => e.event)).toEqual([
      { type: "realm_domains", op: "add", realm_domain: { domain: "example.com", allow_subdomains: false } },
      { type: "realm_domains", op: "add", realm_domain: { domain: "corp.example.org", allow_subdomains: true } },
      { type: "realm_domains", op: "change", realm_domain: { domain: "example.com", allow_subdomains: true } },
      { type: "realm_domains", op: "change", realm_domain: { domain: "corp.example.org", allow_subdomains: true } },
      { type: "realm_domains", op: "remove", domain: "corp.example.org" },
    ]);
    for (const e of events) expect([e.type, e.users]).toEqual(["accounts.realm_domains.changed", everyone(org)]);
    expect((await t.outbox({ all: true })).filter((e) => e.type === "accounts.realm_domains.changed" && e.realm_id !== org.realmId)).toEqual([]);

    // Another organization has none of them.
    expect(await list(other.member)).toEqual([]);
    expect((await state(other.member)).realm_domains).toEqual([]);
    await t.ok(await remove("example.com", org.admin));
  });

  it("a deactivated user is not told", async () => {
    const gone = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: `gone-${Date.now()}@x.test`, full_name: "Gone", role: 400 } }));
    await t.ok(await t.call("DELETE", `/users/${gone.user_id}`, { as: org.admin.as }));
    await t.markOutbox();
    await t.ok(await add("gone.example.com", false, org.admin));
    const [event] = await told();
    expect(event.users).toEqual(everyone(org));
    expect(event.users).not.toContain(gone.user_id);
    await t.ok(await remove("gone.example.com", org.admin));
  });

  it("only administrators change them; any user may list them", async () => {
    await t.ok(await add("kept.example.com", false, org.admin));
    await t.markOutbox();
    for (const who of [org.moderator, org.member, org.guest, org.bot]) {
      expectError(await add("mine.example.com", false, who), 400, "UNAUTHORIZED_PRINCIPAL", ADMIN_ONLY);
      expectError(await change("kept.example.com", true, who), 400, "UNAUTHORIZED_PRINCIPAL", ADMIN_ONLY);
      expectError(await remove("kept.example.com", who), 400, "UNAUTHORIZED_PRINCIPAL", ADMIN_ONLY);
      expect(await list(who)).toEqual([{ domain: "kept.example.com", allow_subdomains: false }]);
    }
    expect(await told()).toEqual([]);
    await t.ok(await remove("kept.example.com", org.admin));
  });

  it("refuses what is not a domain with Zulip's reason, storing nothing", async () => {
    await t.markOutbox();
    const cases: Array<[string, string]> = [
      ["", "Domain can't be empty."],
      ["   ", "Domain can't be empty."],
      ["localhost", "Domain must have at least one dot (.)"],
      [`${"a".repeat(252)}.com`, "Domain is too long"],
      [".example.com", "Domain cannot start or end with a dot (.)"],
      ["example.com.", "Domain cannot start or end with a dot (.)"],
      ["example..com", "Consecutive '.' are not allowed."],
      ["-example.com", "Subdomains cannot start or end with a '-'."],
      ["exa_mple.com", "Domain can only have letters, numbers, '.' and '-'s."],
      ["exa mple.com", "Domain can only have letters, numbers, '.' and '-'s."],
      ["@example.com", "Domain can only have letters, numbers, '.' and '-'s."],
    ];
    for (const [domain, reason] of cases) expectError(await add(domain, false, org.admin), 400, "BAD_REQUEST", `Invalid domain: ${reason}`);
    expectError(
      await t.call("POST", "/realm/domains", { as: org.admin.as, params: { domain: "ok.example.com" } }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'allow_subdomains' argument",
    );
    const withSubdomains = (value: unknown) => t.call("POST", "/realm/domains", { as: org.admin.as, params: { domain: "ok.example.com", allow_subdomains: value } });
    expectError(await withSubdomains("yes"), 400, "BAD_REQUEST", "allow_subdomains is not valid JSON");
    expectError(await withSubdomains(1), 400, "BAD_REQUEST", "allow_subdomains is not a boolean");
    expect(await told()).toEqual([]);
    expect(await list(org.admin)).toEqual([]);
  });

  it("refuses a domain the organization has (in any case), not one another organization has", async () => {
    await t.ok(await add("dup.example.com", false, org.admin));
    await t.markOutbox();
    for (const domain of ["dup.example.com", " DUP.Example.com "]) {
      expectError(await add(domain, true, org.admin), 400, "BAD_REQUEST", "The domain dup.example.com is already a part of your organization.");
    }
    expect(await told()).toEqual([]);
    expect(await list(org.admin)).toEqual([{ domain: "dup.example.com", allow_subdomains: false }]);
    await t.ok(await add("dup.example.com", true, other.admin));
    expect(await list(other.member)).toEqual([{ domain: "dup.example.com", allow_subdomains: true }]);
    expect((await told()).map((e) => e.users)).toEqual([everyone(other)]);
    await t.ok(await remove("dup.example.com", other.admin));
    expect(await list(org.member)).toEqual([{ domain: "dup.example.com", allow_subdomains: false }]);
    await t.ok(await remove("dup.example.com", org.admin));
  });

  it("an unknown domain, or another organization's, is 'No entry found' (matched as stored)", async () => {
    await t.ok(await add("theirs.example.com", false, other.admin));
    await t.ok(await add("ours.example.com", false, org.admin));
    await t.markOutbox();
    for (const domain of ["theirs.example.com", "nowhere.example.com", "OURS.example.com"]) {
      expectError(await change(domain, true, org.admin), 400, "BAD_REQUEST", `No entry found for domain ${domain}.`);
      expectError(await remove(domain, org.admin), 400, "BAD_REQUEST", `No entry found for domain ${domain}.`);
    }
    expect(await told()).toEqual([]);
    expect(await list(other.member)).toEqual([{ domain: "theirs.example.com", allow_subdomains: false }]);
    expect(await list(org.member)).toEqual([{ domain: "ours.example.com", allow_subdomains: false }]);
    await t.ok(await remove("theirs.example.com", other.admin));
    await t.ok(await remove("ours.example.com", org.admin));
  });

  it("removing the last domain of a restricted organization lifts the restriction, announced before the removal", async () => {
    const o = await restrictedOrg();
    const theirs = await restrictedOrg();
    await t.markOutbox();
    // Not the last: the restriction stays.
    await t.ok(await remove("example.com", o.admin));
    expect((await told()).map((e) => e.event)).toEqual([{ type: "realm_domains", op: "remove", domain: "example.com" }]);
    expect((await state(o.member)).realm_emails_restricted_to_domains).toBe(true);

    await t.ok(await remove("corp.example.org", o.admin));
    const events = await told();
    expect(events.map((e) => [e.type, e.event, e.users])).toEqual([
      ["accounts.realm.updated", { type: "realm", op: "update", property: "emails_restricted_to_domains", value: false }, everyone(o)],
      ["accounts.realm_domains.changed", { type: "realm_domains", op: "remove", domain: "corp.example.org" }, everyone(o)],
    ]);
    const after = await state(o.member);
    expect([after.realm_emails_restricted_to_domains, after.realm_domains]).toEqual([false, []]);
    // Another organization keeps its restriction and its domains.
    const kept = await state(theirs.member);
    expect([kept.realm_emails_restricted_to_domains, kept.realm_domains.length]).toEqual([true, 2]);

    // Unrestricted, the last domain goes alone.
    await t.ok(await add("solo.example.com", false, o.admin));
    await t.markOutbox();
    await t.ok(await remove("solo.example.com", o.admin));
    expect((await told()).map((e) => e.event)).toEqual([{ type: "realm_domains", op: "remove", domain: "solo.example.com" }]);
  });
});

describe("PATCH /realm: emails_restricted_to_domains and disallow_disposable_email_addresses", () => {
  it("start as Zulip's defaults; administrators change them; each change is a realm/update event to everyone", async () => {
    const o = await t.createOrg();
    const before = await state(o.guest);
    expect([before.realm_emails_restricted_to_domains, before.realm_disallow_disposable_email_addresses]).toEqual([false, true]);
    await t.markOutbox();
    const body = await t.ok(await patchRealm(o.admin, { disallow_disposable_email_addresses: false, emails_restricted_to_domains: true }));
    expect(body).toEqual({ result: "success", msg: "", emails_restricted_to_domains: true, disallow_disposable_email_addresses: false });
    // In the order of Zulip's update_realm parameters.
    expect((await told()).map((e) => [e.type, e.event, e.users])).toEqual([
      ["accounts.realm.updated", { type: "realm", op: "update", property: "emails_restricted_to_domains", value: true }, everyone(o)],
      ["accounts.realm.updated", { type: "realm", op: "update", property: "disallow_disposable_email_addresses", value: false }, everyone(o)],
    ]);
    const after = await state(o.member);
    expect([after.realm_emails_restricted_to_domains, after.realm_disallow_disposable_email_addresses]).toEqual([true, false]);
    // The same values again: nothing changed, nothing said.
    expect(await t.ok(await patchRealm(o.owner, { disallow_disposable_email_addresses: false, emails_restricted_to_domains: true }))).toEqual({ result: "success", msg: "" });
    expect(await told()).toEqual([]);
    // Another organization keeps the defaults.
    const theirs = await state(other.member);
    expect([theirs.realm_emails_restricted_to_domains, theirs.realm_disallow_disposable_email_addresses]).toEqual([false, true]);
  });

  it("anyone else is refused, and nothing changes", async () => {
    const o = await t.createOrg();
    await t.markOutbox();
    for (const who of [o.moderator, o.member, o.guest]) {
      expectError(await patchRealm(who, { emails_restricted_to_domains: true }), 400, "UNAUTHORIZED_PRINCIPAL", ADMIN_ONLY);
      expectError(await patchRealm(who, { disallow_disposable_email_addresses: false }), 400, "UNAUTHORIZED_PRINCIPAL", ADMIN_ONLY);
    }
    expectError(await patchRealm(o.admin, { emails_restricted_to_domains: 1 }), 400, "BAD_REQUEST", "emails_restricted_to_domains is not a boolean");
    expect(await told()).toEqual([]);
    const s = await state(o.member);
    expect([s.realm_emails_restricted_to_domains, s.realm_disallow_disposable_email_addresses]).toEqual([false, true]);
  });
});

describe("POST /users", () => {
  const create = async (o: Org, email: string, fullName = "New Person") => {
    // The operator's can_create_users, which POST /users needs besides the administrator's role.
    await t.ok(await t.call("POST", "/internal/users/can_create_users", { params: { realm_id: o.realmId, user_id: o.admin.user_id, can_create_users: true } }));
    return t.call("POST", "/users", { as: o.admin.as, params: { email, password: "pw-123456", full_name: fullName } });
  };
  const created = async () => (await t.outbox()).filter((e) => e.type === "accounts.user.created").map((e) => e.payload.user.email);

  it("in a restricted organization: its domains, subdomains where allowed, and no + in the address", async () => {
    const o = await restrictedOrg();
    await t.markOutbox();
    for (const email of ["a@sub.example.com", "a@elsewhere.test", "a@example.org", "a@xcorp.example.org"]) {
      expectError(await create(o, email), 400, "BAD_REQUEST", `Email '${email}' not allowed in this organization`);
    }
    expectError(await create(o, "a+tag@example.com"), 400, "BAD_REQUEST", "Email addresses containing + are not allowed.");
    // Zulip's order: the name first, the organization's domains before whether the address is taken.
    expectError(await create(o, "b@elsewhere.test", "x"), 400, "BAD_REQUEST", "Name too short!");
    expectError(await create(o, o.member.email), 400, "BAD_REQUEST", `Email '${o.member.email}' not allowed in this organization`);
    expect(await created()).toEqual([]);

    for (const email of ["ok1@Example.com", "ok2@corp.example.org", "ok3@eu.corp.example.org", "ok4@a.b.corp.example.org"]) await t.ok(await create(o, email));
    expect(await created()).toEqual(["ok1@Example.com", "ok2@corp.example.org", "ok3@eu.corp.example.org", "ok4@a.b.corp.example.org"]);

    // Another organization is not restricted by this one's domains.
    await t.ok(await create(other, "a@elsewhere.test"));
    // Without the restriction, the refused address joins (it was not created before).
    await t.ok(await patchRealm(o.admin, { emails_restricted_to_domains: false }));
    await t.ok(await create(o, "a@elsewhere.test"));
    await t.ok(await create(o, "a+tag@example.com"));
  });

  it("disposable addresses are refused while the organization disallows them (the default)", async () => {
    const o = await t.createOrg();
    await t.markOutbox();
    for (const email of ["x@mailinator.com", "x@Guerrillamail.com"]) {
      expectError(await create(o, email), 400, "BAD_REQUEST", "Disposable email addresses are not allowed in this organization");
    }
    expect(await created()).toEqual([]);
    // Zulip's exceptions to the list.
    await t.ok(await create(o, "x@opayq.com"));
    await t.ok(await patchRealm(o.admin, { disallow_disposable_email_addresses: false }));
    await t.ok(await create(o, "x@mailinator.com"));
    expect(await created()).toEqual(["x@opayq.com", "x@mailinator.com"]);
  });

  it("a restricted organization trusts its own domains over the disposable list", async () => {
    const o = await t.createOrg();
    await t.ok(await add("mailinator.com", false, o.admin));
    await t.ok(await patchRealm(o.admin, { emails_restricted_to_domains: true }));
    await t.ok(await create(o, "y@mailinator.com"));
    expectError(await create(o, "y@guerrillamail.com"), 400, "BAD_REQUEST", "Email 'y@guerrillamail.com' not allowed in this organization");
  });
});

describe("POST /invites", () => {
  const invite = (o: Org, emails: string) => t.call("POST", "/invites", { as: o.admin.as, params: { invitee_emails: emails, stream_ids: [] } });
  const pending = async (o: Org) => ((await t.ok(await t.call("GET", "/invites", { as: o.admin.as }))).invites as any[]).map((i) => i.email).sort();

  it("refuses addresses outside a restricted organization's domains, each with Zulip's reason, inviting no one", async () => {
    const o = await restrictedOrg();
    await t.markOutbox();
    const res = await invite(o, "in@example.com, out@elsewhere.test, plus+x@example.com, not-an-email, sub@sub.example.com");
    expectError(res, 400, "INVITATION_FAILED", "Some emails did not validate, so we didn't send any invitations.");
    expect(res.body).toMatchObject({
      errors: [
        ["out@elsewhere.test", "Outside your domain.", false],
        ["plus+x@example.com", "Email addresses containing + are not allowed.", false],
        ["not-an-email", "Invalid address.", false],
        ["sub@sub.example.com", "Outside your domain.", false],
      ],
      sent_invitations: false,
    });
    // A refused address and an existing account: both reported, as Zulip's errors + skipped.
    const both = await invite(o, `out@elsewhere.test, ${o.member.email}`);
    expect(both.body.errors).toEqual([
      ["out@elsewhere.test", "Outside your domain.", false],
      [o.member.email, "Outside your domain.", false],
    ]);
    expect(await pending(o)).toEqual([]);
    expect((await t.outbox()).filter((e) => e.type === "accounts.invites.changed")).toEqual([]);

    await t.ok(await invite(o, "in@example.com, deep@eu.corp.example.org"));
    expect(await pending(o)).toEqual(["deep@eu.corp.example.org", "in@example.com"]);
    // Another organization invites anyone.
    await t.ok(await invite(other, "out@elsewhere.test"));
  });

  it("refuses disposable addresses while the organization disallows them", async () => {
    const o = await t.createOrg();
    const res = await invite(o, "real@example.net, temp@mailinator.com");
    expectError(res, 400, "INVITATION_FAILED", "Some emails did not validate, so we didn't send any invitations.");
    expect(res.body.errors).toEqual([["temp@mailinator.com", "Please use your real email address.", false]]);
    expect(await pending(o)).toEqual([]);
    await t.ok(await patchRealm(o.admin, { disallow_disposable_email_addresses: false }));
    await t.ok(await invite(o, "real@example.net, temp@mailinator.com"));
    expect(await pending(o)).toEqual(["real@example.net", "temp@mailinator.com"]);
  });
});

describe("signing up", () => {
  const refusedSignup = (email: string) =>
    `Your email address, ${email}, is not in one of the domains that are allowed to register for accounts in this organization.`;

  it("through an email invitation: the organization's rules when the invitation is accepted", async () => {
    const o = await t.createOrg();
    await t.ok(await t.call("POST", "/invites", { as: o.admin.as, params: { invitee_emails: "early@elsewhere.test", stream_ids: [] } }));
    await t.ok(await add("example.com", false, o.admin));
    await t.ok(await patchRealm(o.admin, { emails_restricted_to_domains: true }));
    const accept = () => t.call("POST", "/internal/invites/accept", { params: { realm_id: o.realmId, email: "early@elsewhere.test", full_name: "Early Bird" } });
    await t.markOutbox();
    expectError(await accept(), 400, "BAD_REQUEST", refusedSignup("early@elsewhere.test"));
    expect((await t.outbox()).map((e) => e.type)).toEqual([]);
    // The invitation is still there: once the restriction is lifted, it can be used.
    await t.ok(await patchRealm(o.admin, { emails_restricted_to_domains: false }));
    expect(await t.ok(await accept())).toMatchObject({ email: "early@elsewhere.test", role: 400 });
  });

  it("through a reusable link: only addresses the organization lets in", async () => {
    const o = await restrictedOrg();
    const link = (await t.ok(await t.call("POST", "/invites/multiuse", { as: o.admin.as, params: {} }))).invite_link as string;
    const key = /\/join\/([a-z2-7]{24})\/$/.exec(link)![1];
    const accept = (email: string) => t.call("POST", "/internal/invites/multiuse/accept", { params: { realm_id: o.realmId, key, email, full_name: "Link User" } });
    await t.markOutbox();
    expectError(await accept("out@elsewhere.test"), 400, "BAD_REQUEST", refusedSignup("out@elsewhere.test"));
    expectError(await accept("in+x@example.com"), 400, "BAD_REQUEST", "Email addresses containing + are not allowed.");
    expect((await t.outbox()).map((e) => e.type)).toEqual([]);
    expect(await t.ok(await accept("in@example.com"))).toMatchObject({ email: "in@example.com" });

    await t.ok(await patchRealm(o.admin, { emails_restricted_to_domains: false }));
    expectError(await accept("temp@mailinator.com"), 400, "BAD_REQUEST", "Please use your real email address.");
  });
});

describe("bots", () => {
  it("are never restricted: their addresses are the server's", async () => {
    const o = await restrictedOrg();
    const bot = await t.ok(await t.call("POST", "/bots", { as: o.member.as, params: { full_name: "Helper Bot", short_name: "helper" } }));
    expect(bot.user_id).toEqual(expect.any(Number));
    // The operators' tool creates bots (and people) as it is asked.
    await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: o.realmId, email: "tool-bot@elsewhere.test", full_name: "Tool Bot", role: 400, bot_type: 1, bot_owner_id: o.member.user_id } }));
  });
});
