import { RealmLinkifiersEvent } from "@chat/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startAccounts, type Accounts, type Org } from "./helpers";

let t: Accounts;
let org: Org;
let other: Org;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
  other = await t.createOrg();
});
afterAll(() => t?.close());

const add = (pattern: string, url_template: string, as = org.admin.as) => t.call("POST", "/realm/filters", { as, params: { pattern, url_template } });
const list = async (as = org.member.as) => (await t.ok(await t.call("GET", "/realm/linkifiers", { as }))).linkifiers;

describe("linkifiers", () => {
  it("administrators add, edit, reorder and delete; each change sends the whole ordered list", async () => {
    await t.markOutbox();
    const a = (await t.ok(await add("#(?P<id>[0-9]+)", "https://tracker.test/issues/{id}"))).id;
    const b = (await t.ok(await add("(?P<org>[a-z]+)/(?P<repo>[a-z]+)!(?P<id>[0-9]+)", "https://git.test/{org}/{repo}/pull/{id}", org.owner.as))).id;
    expect(await list()).toEqual([
      { id: a, pattern: "#(?P<id>[0-9]+)", url_template: "https://tracker.test/issues/{id}" },
      { id: b, pattern: "(?P<org>[a-z]+)/(?P<repo>[a-z]+)!(?P<id>[0-9]+)", url_template: "https://git.test/{org}/{repo}/pull/{id}" },
    ]);
    await t.ok(await t.call("PATCH", "/realm/linkifiers", { as: org.admin.as, params: { ordered_linkifier_ids: [b, a] } }));
    expect((await list()).map((l: any) => l.id)).toEqual([b, a]);
    await t.ok(await t.call("PATCH", `/realm/filters/${a}`, { as: org.admin.as, params: { pattern: "T(?P<id>[0-9]+)", url_template: "https://t.test/{id}" } }));
    expect((await list())[1]).toEqual({ id: a, pattern: "T(?P<id>[0-9]+)", url_template: "https://t.test/{id}" });
    await t.ok(await t.call("DELETE", `/realm/filters/${b}`, { as: org.admin.as }));
    expect((await list()).map((l: any) => l.id)).toEqual([a]);

    const events = await t.outbox();
    expect(events.map((e) => e.type)).toEqual(Array(5).fill("accounts.linkifiers.changed"));
    const lists = events.map((e) => RealmLinkifiersEvent.parse(e.payload.client.event).realm_linkifiers.map((l) => l.id));
    expect(lists).toEqual([[a], [a, b], [b, a], [b, a], [a]]);
    expect(events[0].payload.client.users).toContain(org.guest.user_id);
    expect(events[0].payload.client.users).not.toContain(other.owner.user_id);

    const legacy = await t.ok(await t.call("GET", "/realm/filters", { as: org.member.as }));
    expect(legacy.filters).toEqual([["T(?P<id>[0-9]+)", "https://t.test/{id}", a]]);
    expect(await list(other.member.as)).toEqual([]);
  });

  it("register returns linkifiers only to clients that read url_template; realm_filters is always empty", async () => {
    const fetch = async (caps: Record<string, unknown>) =>
      t.ok(await t.call("POST", "/internal/register_state/accounts", { as: org.member.as, params: { fetch_event_types: ["realm_linkifiers", "realm_filters"], client_capabilities: caps } }));
    const plain = await fetch({ notification_settings_null: false });
    expect(plain.realm_linkifiers).toEqual([]);
    expect(plain.realm_filters).toEqual([]);
    const modern = await fetch({ notification_settings_null: false, linkifier_url_template: true });
    expect(modern.realm_linkifiers).toEqual(await list());
  });

  it("only administrators may change linkifiers", async () => {
    await t.markOutbox();
    for (const who of [org.moderator, org.member, org.guest]) {
      expectError(await add("x(?P<id>[0-9]+)", "https://x.test/{id}", who.as), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    }
    const [first] = await list();
    expectError(await t.call("DELETE", `/realm/filters/${first.id}`, { as: org.member.as }), 400, "UNAUTHORIZED_PRINCIPAL");
    expectError(await t.call("PATCH", "/realm/linkifiers", { as: org.member.as, params: { ordered_linkifier_ids: [first.id] } }), 400, "UNAUTHORIZED_PRINCIPAL");
    expect(await t.outbox()).toEqual([]);
  });

  it("validates patterns as linear-time regular expressions and templates as RFC 6570", async () => {
    await t.markOutbox();
    const bad = async (pattern: string, url: string, msg: string | RegExp) => {
      const res = await add(pattern, url);
      expectError(res, 400, "BAD_REQUEST", msg);
      expect(res.body.errors).toBeDefined();
    };
    await bad("(?P<id>[0-9]+", "https://x.test/{id}", /^Bad regular expression: /);
    // Backreferences and lookaround are refused: they are what makes backtracking explode.
    await bad("(?P<id>a)\\1", "https://x.test/{id}", /^Bad regular expression: /);
    await bad("(?=x)(?P<id>a)", "https://x.test/{id}", /^Bad regular expression: /);
    await bad("#(?P<id>[0-9]+)", "https://x.test/{id", "Invalid URL template.");
    await bad("#(?P<id>[0-9]+)", "https://x.test/{id}/{other}", "Group 'other' in URL template is not present in linkifier pattern.");
    await bad("#(?P<id>[0-9]+)-(?P<rev>[0-9]+)", "https://x.test/{id}", "Group 'rev' in linkifier pattern is not present in URL template.");
    await bad("T(?P<id>[0-9]+)", "https://other.test/{id}", "Linkifier with this Realm and Pattern already exists.");
    expectError(await t.call("POST", "/realm/filters", { as: org.admin.as, params: { pattern: "x" } }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'url_template' argument");
    // A classic catastrophic pattern is accepted but matches in linear time.
    const id = (await t.ok(await add("(?P<id>(a+)+)b", "https://x.test/{id}"))).id;
    await t.ok(await t.call("DELETE", `/realm/filters/${id}`, { as: org.admin.as }));
    await t.outbox();
    expect(await t.outbox()).toEqual([]);
  });

  it("unknown or another organization's linkifier is 'Linkifier not found.'; reorder must list each id once", async () => {
    const [mine] = await list();
    const theirs = (await t.ok(await add("Z(?P<id>[0-9]+)", "https://z.test/{id}", other.admin.as))).id;
    expectError(await t.call("DELETE", `/realm/filters/${theirs}`, { as: org.admin.as }), 400, "BAD_REQUEST", "Linkifier not found.");
    expectError(await t.call("PATCH", `/realm/filters/${theirs}`, { as: org.admin.as, params: { pattern: "Q(?P<id>[0-9]+)", url_template: "https://q.test/{id}" } }), 400, "BAD_REQUEST", "Linkifier not found.");
    expectError(await t.call("DELETE", "/realm/filters/99999999", { as: org.admin.as }), 400, "BAD_REQUEST", "Linkifier not found.");
    const reorder = (ids: unknown) => t.call("PATCH", "/realm/linkifiers", { as: org.admin.as, params: { ordered_linkifier_ids: ids } });
    const msg = "The ordered list must enumerate all existing linkifiers exactly once";
    expectError(await reorder([mine.id, mine.id]), 400, "BAD_REQUEST", "The ordered list must not contain duplicated linkifiers");
    expectError(await reorder([mine.id, theirs]), 400, "BAD_REQUEST", msg);
    expectError(await reorder([]), 400, "BAD_REQUEST", msg);
    expectError(await reorder("nope"), 400, "BAD_REQUEST");
    expect((await list(other.member.as)).map((l: any) => l.id)).toEqual([theirs]);
  });
});
