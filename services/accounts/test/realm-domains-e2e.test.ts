import { describe, expect, it } from "vitest";
import type { DemoOrg, DemoOrg2, DemoUser } from "@chat/testkit";
import { drain, NO_RATE_LIMITS, ok, refused, register as registerQueue, sleep, useDemoStack, verifyAction as verify, withoutId } from "@chat/testkit/e2e";
import { applyEvent, type ApplyContext } from "../../events/src/lib/apply/index";

/**
 * An organization's email domains through the whole stack (gateway, accounts, events), as
 * Zulip's verify_action checks them: register, act as an administrator, collect the events
 * (each checked against our contract and Zulip's schema), apply them to the registered state and
 * compare with a fresh register. Another organization's queues hear nothing; its users may
 * still be anyone.
 */

let org: DemoOrg;
let org2: DemoOrg2;
const { as } = useDemoStack(NO_RATE_LIMITS, ({ demo }) => ([org, org2] = demo.orgs));
const TYPES = ["realm", "realm_domains"];

/** Register (the domains and the organization's settings), act, apply, compare with a fresh register. */
function verifyAction(u: DemoUser, action: () => Promise<unknown>) {
  const ctx: ApplyContext = { userId: u.user_id, fetchTypes: TYPES, includeSubscribers: false, clientGravatar: true };
  const queue = () => registerQueue(as(u), { fetch_event_types: TYPES, event_types: TYPES });
  return verify(action, { register: queue, apply: (state, e) => applyEvent(state, e, ctx) }).then((events) => events.map(withoutId));
}

describe("realm domains through the stack", () => {
  it("add, change, the restriction, and the last removal lifting it: events bring a registered state up to date", async () => {
    const { admin, member, guest } = org.users;
    const outsider = await registerQueue(as(org2.users.member), { fetch_event_types: TYPES, event_types: TYPES });
    expect(outsider.state.realm_domains).toEqual([]);

    expect(await verifyAction(member, async () => expect(ok(await as(admin).post("/realm/domains", { domain: "E2E.Example.com", allow_subdomains: false })).new_domain).toEqual([expect.any(Number), "e2e.example.com"]))).toEqual([
      { type: "realm_domains", op: "add", realm_domain: { domain: "e2e.example.com", allow_subdomains: false } },
    ]);
    expect(await verifyAction(guest, async () => ok(await as(admin).patch("/realm/domains/e2e.example.com", { allow_subdomains: true })))).toEqual([
      { type: "realm_domains", op: "change", realm_domain: { domain: "e2e.example.com", allow_subdomains: true } },
    ]);
    expect(await verifyAction(member, async () => ok(await as(admin).patch("/realm", { emails_restricted_to_domains: true, disallow_disposable_email_addresses: false })))).toEqual([
      { type: "realm", op: "update", property: "emails_restricted_to_domains", value: true },
      { type: "realm", op: "update", property: "disallow_disposable_email_addresses", value: false },
    ]);
    expect(ok(await as(member).get("/realm/domains")).domains).toEqual([{ domain: "e2e.example.com", allow_subdomains: true }]);

    // Restricted: the organization's domains, their subdomains; not another organization's people.
    const create = (email: string) => as(admin).post("/users", { email, password: "pw-123456", full_name: "Newcomer" });
    refused(await create("new@elsewhere.test"), "Email 'new@elsewhere.test' not allowed in this organization");
    ok(await create("new@eu.e2e.example.com"));
    const invited = await as(admin).post("/invites", { invitee_emails: "x@elsewhere.test", stream_ids: "[]" });
    expect(invited.body).toMatchObject({ result: "error", code: "INVITATION_FAILED", errors: [["x@elsewhere.test", "Outside your domain.", false]], sent_invitations: false });
    ok(await as(org2.users.owner).post("/users", { email: "new@elsewhere.test", password: "pw-123456", full_name: "Newcomer" }));
    refused(await as(org2.users.owner).post("/users", { email: "new@mailinator.com", password: "pw-123456", full_name: "Temp" }), "Disposable email addresses are not allowed in this organization");

    // The last domain takes the restriction with it, announced first.
    expect(await verifyAction(guest, async () => ok(await as(admin).delete("/realm/domains/e2e.example.com")))).toEqual([
      { type: "realm", op: "update", property: "emails_restricted_to_domains", value: false },
      { type: "realm_domains", op: "remove", domain: "e2e.example.com" },
    ]);
    ok(await create("new@elsewhere.test"));
    refused(await as(admin).delete("/realm/domains/e2e.example.com"), "No entry found for domain e2e.example.com.");
    refused(await as(member).post("/realm/domains", { domain: "mine.example.com", allow_subdomains: false }), "Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL");

    await sleep(500);
    expect(await drain(outsider)).toEqual([]);
    await as(org2.users.member).delete("/events", { queue_id: outsider.queue_id });
  });
});
