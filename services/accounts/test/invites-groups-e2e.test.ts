import { describe, expect, it } from "vitest";
import type { DemoOrg, DemoOrg2, DemoUser } from "@chat/testkit";
import { drain, NO_RATE_LIMITS, ok, register as registerQueue, sleep, useDemoStack, waitForEvents, withoutId, type EventQueue } from "@chat/testkit/e2e";
import { applyEvent, type ApplyContext } from "../../events/src/lib/apply/index";

/**
 * Reusable invitation links, resending, and user group deactivation through the whole stack
 * (gateway, accounts, messaging, events), as a Zulip client sees them: answers, the events in
 * the right users' queues (checked against our contract and Zulip's schema) and none in another
 * organization's, register state with and without the include_deactivated_groups capability.
 */

let org: DemoOrg;
let org2: DemoOrg2;
const e2e = useDemoStack(NO_RATE_LIMITS, ({ demo }) => ([org, org2] = demo.orgs));
const { as } = e2e;

/** A user's queue for `types`, and what it was registered with (to register a fresh one alike). */
type Queue = EventQueue & { user: DemoUser; types: string[] };

async function register(user: DemoUser, types: string[], capabilities: Record<string, boolean> = {}): Promise<Queue> {
  const params = { event_types: types, fetch_event_types: types, client_capabilities: { notification_settings_null: true, ...capabilities } };
  return { ...(await registerQueue(as(user), params)), user, types };
}

/** Reads until `count` events arrived (delivery crosses services), then once more for stragglers. */
async function waitFor(q: Queue, count = 1): Promise<any[]> {
  const got = await waitForEvents(q, count, { pollMs: 150 });
  await sleep(300);
  got.push(...(await drain(q)));
  return got.map(withoutId);
}

describe("invitations through the gateway", () => {
  it("links and resends: invites_changed reaches administrators and the referrer only, no other organization", async () => {
    const { owner, admin, member, member2 } = org.users;
    const queues = await Promise.all([owner, admin, member, member2, org2.users.owner].map((u) => register(u, ["invites_changed"])));
    const [qOwner, qAdmin, qMember, qMember2, qOther] = queues;
    const pub = org.channels.public.stream_id;

    // A link, by an administrator.
    const { invite_link } = ok(await as(admin).post("/invites/multiuse", { invite_expires_in_minutes: 60, stream_ids: [pub] }));
    expect(invite_link).toMatch(new RegExp(`^${e2e.demo.base_url.replace(/\/+$/, "").replace(/[.]/g, "\\.")}/join/[a-z2-7]{24}/$`));
    expect(await waitFor(qAdmin)).toEqual([{ type: "invites_changed" }]);
    expect(await drain(qOwner)).toEqual([expect.objectContaining({ type: "invites_changed" })]);
    for (const q of [qMember, qMember2, qOther]) expect(await drain(q)).toEqual([]);
    expect((await as(member).post("/invites/multiuse", {})).body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Insufficient permission" });

    // An email invitation by a member, resent by an administrator: the member is told both times.
    ok(await as(member).post("/invites", { invitee_emails: "resent@e2e-links.test", stream_ids: [] }));
    const sent = ok(await as(admin).get("/invites")).invites.find((i: any) => i.email === "resent@e2e-links.test");
    expect(ok(await as(admin).post(`/invites/${sent.id}/resend`))).toEqual({ result: "success", msg: "" });
    expect(await waitFor(qMember, 2)).toEqual([{ type: "invites_changed" }, { type: "invites_changed" }]);
    expect((await waitFor(qAdmin, 2)).length).toBe(2);
    for (const q of [qMember2, qOther]) expect(await drain(q)).toEqual([]);
    expect((await as(member2).post(`/invites/${sent.id}/resend`)).body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Must be an organization administrator" });
    expect((await as(org2.users.owner).post(`/invites/${sent.id}/resend`)).body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "No such invitation" });

    // What GET /invites shows afterwards, to an administrator and to the member.
    const listed = ok(await as(admin).get("/invites")).invites;
    const link = listed.find((i: any) => i.is_multiuse && i.link_url === invite_link);
    expect(link).toEqual({ id: expect.any(Number), invited_by_user_id: admin.user_id, invited: expect.any(Number), expiry_date: link.invited + 3600, invited_as: 400, link_url: invite_link, is_multiuse: true });
    expect(ok(await as(member).get("/invites")).invites.map((i: any) => i.email)).toEqual(["resent@e2e-links.test"]);
    expect(ok(await as(org2.users.owner).get("/invites")).invites).toEqual([]);

    // Two people sign up through the link; both get its channel.
    const key = /\/join\/([a-z2-7]{24})\/$/.exec(invite_link)![1];
    for (const email of ["link-one@e2e-links.test", "link-two@e2e-links.test"]) {
      const acc = await e2e.internalPost("/internal/invites/multiuse/accept", { realm_id: String(org.id), key, email, full_name: email.split("@")[0] });
      expect(acc.body).toMatchObject({ result: "success", role: 400, email });
      const joined = e2e.client(acc.body);
      const deadline = Date.now() + 20_000;
      let subs: number[] = [];
      while (Date.now() < deadline && !subs.includes(pub)) {
        subs = ok(await joined.get("/users/me/subscriptions")).subscriptions.map((s: any) => s.stream_id);
        if (!subs.includes(pub)) await sleep(250);
      }
      expect(subs).toContain(pub);
    }

    // Revoked: gone from the list, unusable, and the administrators are told.
    await waitFor(qAdmin, 0);
    expect(ok(await as(owner).delete(`/invites/multiuse/${link.id}`))).toEqual({ result: "success", msg: "" });
    expect(await waitFor(qAdmin)).toEqual([{ type: "invites_changed" }]);
    for (const q of [qMember2, qOther]) expect(await drain(q)).toEqual([]);
    expect(ok(await as(admin).get("/invites")).invites.some((i: any) => i.is_multiuse && i.id === link.id)).toBe(false);
    const late = await e2e.internalPost("/internal/invites/multiuse/accept", { realm_id: String(org.id), key, email: "link-three@e2e-links.test", full_name: "Three" });
    expect(late.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "The confirmation link has expired or been deactivated." });
    for (const q of queues) await as(q.user).delete("/events", { queue_id: q.queue_id });
  });
});

describe("user group deactivation through the gateway", () => {
  const comparable = ({ queue_id: _q, last_event_id: _l, result: _r, msg: _m, ...rest }: Record<string, any>) => rest;
  const ctx = (q: Queue): ApplyContext => ({ userId: q.user.user_id, fetchTypes: q.types, includeSubscribers: false, clientGravatar: true });

  it("an update for clients that list deactivated groups, a remove for the others; both agree with a fresh register", async () => {
    const { member, member2 } = org.users;
    ok(await as(member).post("/user_groups/create", { name: "e2e-retiring", description: "soon gone", members: [member.user_id] }));
    const id = ok(await as(member).get("/user_groups")).user_groups.find((g: any) => g.name === "e2e-retiring").id;
    const capable = await register(member2, ["user_group", "realm_user_groups"], { include_deactivated_groups: true });
    const plain = await register(member2, ["user_group", "realm_user_groups"]);
    const other = await register(org2.users.member, ["user_group"]);
    expect(capable.state.realm_user_groups.find((g: any) => g.id === id)).toMatchObject({ deactivated: false });

    expect(ok(await as(member).post(`/user_groups/${id}/deactivate`))).toEqual({ result: "success", msg: "" });
    expect(await waitFor(capable)).toEqual([{ type: "user_group", op: "update", group_id: id, data: { deactivated: true } }]);
    expect(await waitFor(plain)).toEqual([{ type: "user_group", op: "remove", group_id: id }]);
    expect(await drain(other)).toEqual([]);

    for (const [q, caps] of [[capable, { include_deactivated_groups: true }], [plain, {}]] as const) {
      const state = structuredClone(q.state);
      for (const e of q.seen) expect(applyEvent(state, e, ctx(q))).toBe(true);
      const fresh = (await register(member2, q.types, caps)).state;
      expect(comparable(state)).toEqual(comparable(fresh));
    }
    expect(capable.state.realm_user_groups.length).toBe(plain.state.realm_user_groups.length);

    // GET /user_groups afterwards.
    expect(ok(await as(member2).get("/user_groups")).user_groups.some((g: any) => g.id === id)).toBe(false);
    expect(ok(await as(member2).get("/user_groups", { include_deactivated_groups: true })).user_groups.find((g: any) => g.id === id)).toMatchObject({
      name: "e2e-retiring",
      members: [member.user_id],
      deactivated: true,
    });
    expect((await as(member).post(`/user_groups/${id}/deactivate`)).body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "User group is deactivated." });

    // Renamed while deactivated: only the capable queue hears of it.
    ok(await as(member).patch(`/user_groups/${id}`, { name: "e2e-retired" }));
    expect(await waitFor(capable)).toEqual([{ type: "user_group", op: "update", group_id: id, data: { name: "e2e-retired" } }]);
    expect(await drain(plain)).toEqual([]);
  });

  it("DELETE /user_groups/{id} (Zulip 9's deletion): the group is gone for a client of that level", async () => {
    const { member, member2 } = org.users;
    ok(await as(member).post("/user_groups/create", { name: "e2e-deleted", description: "", members: [member.user_id] }));
    const id = ok(await as(member).get("/user_groups")).user_groups.find((g: any) => g.name === "e2e-deleted").id;
    const plain = await register(member2, ["user_group", "realm_user_groups"]);
    expect(ok(await as(member).delete(`/user_groups/${id}`))).toEqual({ result: "success", msg: "" });
    expect(await waitFor(plain)).toEqual([{ type: "user_group", op: "remove", group_id: id }]);
    expect(ok(await as(member2).get("/user_groups")).user_groups.some((g: any) => g.id === id)).toBe(false);
    // Only those who may change it may delete it.
    ok(await as(member).post("/user_groups/create", { name: "e2e-kept", description: "", members: [member.user_id] }));
    const kept = ok(await as(member).get("/user_groups")).user_groups.find((g: any) => g.name === "e2e-kept").id;
    expect((await as(member2).delete(`/user_groups/${kept}`)).body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Insufficient permission" });
  });

  it("a channel's setting keeps a group in use (asked of messaging); a deactivated group is no channel setting nor mention", async () => {
    const { owner, member } = org.users;
    ok(await as(member).post("/user_groups/create", { name: "e2e-guardians", description: "", members: [member.user_id] }));
    const id = ok(await as(member).get("/user_groups")).user_groups.find((g: any) => g.name === "e2e-guardians").id;
    ok(await as(owner).post("/users/me/subscriptions", { subscriptions: [{ name: "e2e-guarded" }], can_remove_subscribers_group: id }));
    const channel = ok(await as(owner).get("/get_stream_id", { stream: "e2e-guarded" })).stream_id;
    const mention = async () => {
      const sent = ok(await as(member).post("/messages", { type: "stream", to: channel, topic: "t", content: "@*e2e-guardians* hello" })).id;
      return ok(await as(member).get(`/messages/${sent}`)).message.content as string;
    };
    expect(await mention()).toContain(`data-user-group-id="${id}"`);
    const refused = await as(member).post(`/user_groups/${id}/deactivate`);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      result: "error",
      code: "CANNOT_DEACTIVATE_GROUP_IN_USE",
      msg: "Cannot deactivate user group in use.",
      objections: [{ type: "channel", channel_id: channel, settings: ["can_remove_subscribers_group"] }],
    });
    const admins = ok(await as(owner).get("/user_groups")).user_groups.find((g: any) => g.name === "role:administrators").id;
    ok(await as(owner).patch(`/streams/${channel}`, { can_remove_subscribers_group: admins }));
    ok(await as(member).post(`/user_groups/${id}/deactivate`));
    expect((await as(owner).patch(`/streams/${channel}`, { can_remove_subscribers_group: id })).body).toMatchObject({ result: "error", msg: "Invalid user group" });
    expect(await mention()).not.toContain("user-group-mention");
  });
});
