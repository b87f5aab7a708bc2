import { SavedSnippetsAddClientEvent, SavedSnippetsRemoveClientEvent } from "@chat/contracts";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

let m: Messaging;
let org: Org;
let other: Org;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  other = await m.createOrg();
});
afterAll(async () => m?.close());
beforeEach(async () => {
  await m.outbox();
});

type User = Org["member"];
const create = (who: User, params: Record<string, unknown>) => m.call("POST", "/saved_snippets", who, params);
const list = async (who: User) => (await m.ok(await m.call("GET", "/saved_snippets", who))).saved_snippets;
const remove = (who: User, id: number | string) => m.call("DELETE", `/saved_snippets/${id}`, who);
const registered = async (who: User) =>
  (await m.ok(await m.call("POST", "/internal/register_state/messaging", who, { fetch_event_types: JSON.stringify(["saved_snippets"]) }))).saved_snippets;

describe("saved snippets", () => {
  it("create, list, delete: the user's own, oldest first, each change an event to the user alone", async () => {
    const now = Math.floor(m.clock.now().getTime() / 1000);
    const first = (await m.ok(await create(org.member, { title: "Welcome", content: "Welcome to the organization." }))).saved_snippet_id;
    const [added] = await m.clientEvents();
    expect(added.type).toBe("messaging.saved_snippet.added");
    expect(added.users).toEqual([org.member.user_id]);
    const snippet = { id: first, title: "Welcome", content: "Welcome to the organization.", date_created: now };
    expect(SavedSnippetsAddClientEvent.parse(added.event)).toEqual({ type: "saved_snippets", op: "add", saved_snippet: snippet });

    m.clock.advance(60_000);
    // Both values are stripped before they are stored.
    const second = (await m.ok(await create(org.member, { title: "  Bye ", content: "\n**See you**\n\n" }))).saved_snippet_id;
    expect(second).toBeGreaterThan(first);
    const [again] = await m.clientEvents();
    const secondSnippet = again.event.saved_snippet;
    expect(secondSnippet).toEqual({ id: second, title: "Bye", content: "**See you**", date_created: now + 60 });

    expect(await list(org.member)).toEqual([snippet, secondSnippet]);
    expect(await registered(org.member)).toEqual([snippet, secondSnippet]);
    expect(await list(org.member2)).toEqual([]);
    expect(await registered(org.member2)).toEqual([]);

    await m.ok(await remove(org.member, first));
    const [removed] = await m.clientEvents();
    expect(removed.type).toBe("messaging.saved_snippet.removed");
    expect(removed.users).toEqual([org.member.user_id]);
    expect(SavedSnippetsRemoveClientEvent.parse(removed.event)).toEqual({ type: "saved_snippets", op: "remove", saved_snippet_id: first });
    expect(await list(org.member)).toEqual([secondSnippet]);
  });

  it("guests and bots keep snippets too", async () => {
    for (const who of [org.guest, org.bot]) {
      const id = (await m.ok(await create(who, { title: "Mine", content: "x" }))).saved_snippet_id;
      expect((await list(who)).map((s: any) => s.id)).toEqual([id]);
    }
  });

  it("empty after stripping: 'Title cannot be empty.', then 'Content cannot be empty.'", async () => {
    const before = await m.count("saved_snippets");
    expectError(await create(org.member, { title: "", content: "x" }), 400, "BAD_REQUEST", "Title cannot be empty.");
    expectError(await create(org.member, { title: " \n\t", content: "" }), 400, "BAD_REQUEST", "Title cannot be empty.");
    expectError(await create(org.member, { title: "t", content: "   " }), 400, "BAD_REQUEST", "Content cannot be empty.");
    expectError(await create(org.member, { content: "x" }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'title' argument");
    expectError(await create(org.member, { title: "x" }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'content' argument");
    expect(await m.count("saved_snippets")).toBe(before);
    expect(await m.outbox()).toEqual([]);
  });

  it("title at most 60 characters and content at most 10000, counted as sent (an emoji is one)", async () => {
    await m.ok(await create(org.member2, { title: "😀".repeat(60), content: "é".repeat(10000) }));
    await m.outbox();
    expectError(await create(org.member2, { title: "x".repeat(61), content: "x" }), 400, "BAD_REQUEST", "title is too long (limit: 60 characters)");
    // Checked before stripping, as Zulip's parameter constraint is.
    expectError(await create(org.member2, { title: `${"x".repeat(59)}  `, content: "x" }), 400, "BAD_REQUEST", "title is too long (limit: 60 characters)");
    expectError(await create(org.member2, { title: "x", content: "x".repeat(10001) }), 400, "BAD_REQUEST", "content is too long (limit: 10000 characters)");
    expect(await m.outbox()).toEqual([]);
  });

  it("another user's snippet, another organization's, or a missing one: 404 'Saved snippet does not exist.'", async () => {
    const mine = (await m.ok(await create(org.member, { title: "Private", content: "mine" }))).saved_snippet_id;
    const theirs = (await m.ok(await create(other.member, { title: "Other org", content: "theirs" }))).saved_snippet_id;
    await m.outbox();
    for (const [who, id] of [[org.member2, mine], [org.owner, mine], [org.member, theirs], [org.member, 99999999]] as const) {
      expectError(await remove(who, id), 404, "BAD_REQUEST", "Saved snippet does not exist.");
    }
    expect(await m.outbox()).toEqual([]);
    await m.ok(await remove(org.member, mine));
    expectError(await remove(org.member, mine), 404, "BAD_REQUEST", "Saved snippet does not exist.");
    expect((await list(other.member)).map((s: any) => s.id)).toEqual([theirs]);
  });

  it("register leaves saved_snippets out unless asked for it", async () => {
    const s = await m.ok(await m.call("POST", "/internal/register_state/messaging", org.member, { fetch_event_types: JSON.stringify(["drafts"]) }));
    expect(s).not.toHaveProperty("saved_snippets");
    const all = await m.ok(await m.call("POST", "/internal/register_state/messaging", org.member, {}));
    expect(all.saved_snippets).toEqual(await list(org.member));
  });
});
