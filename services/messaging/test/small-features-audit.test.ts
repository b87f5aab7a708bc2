import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

/**
 * Differences from Zulip found by auditing the smaller features (drafts here) against the spec,
 * Zulip's OpenAPI description and the notes, each shown through the responses a client gets.
 */
let m: Messaging;
let org: Org;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
});
afterAll(async () => m?.close());
beforeEach(async () => {
  await m.outbox();
});

const create = (drafts: unknown) => m.call("POST", "/drafts", org.member, { drafts: JSON.stringify(drafts) });

describe("direct drafts to a deactivated user", () => {
  // Zulip finds a direct draft's conversation as a send does, and that refuses a deactivated
  // participant with the send's message; the draft is not stored and nobody is told.
  it("are refused on create and on edit with the send's message, changing nothing", async () => {
    const gone = await org.extra(1);
    await m.deactivate(gone);
    const before = await m.count("drafts");
    const refusal = `'${gone.email}' is no longer using Zulip.`;
    const toGone = { type: "private", to: [gone.user_id], topic: "", content: "are you there?" };
    expectError(await create([toGone]), 400, "BAD_REQUEST", refusal);
    expectError(await create([{ ...toGone, to: [org.member2.user_id, gone.user_id] }]), 400, "BAD_REQUEST", refusal);
    // One bad draft refuses the whole list.
    expectError(await create([{ type: "", to: [], topic: "", content: "fine" }, toGone]), 400, "BAD_REQUEST", refusal);
    // Every id is looked up before anyone's activity is checked: an unknown one is named first.
    expectError(await create([{ ...toGone, to: [gone.user_id, 999_999_999] }]), 400, "BAD_REQUEST", "Invalid user ID 999999999");
    expect(await m.count("drafts")).toBe(before);

    const [id] = (await m.ok(await create([{ ...toGone, to: [org.member2.user_id] }]))).ids;
    await m.outbox();
    expectError(await m.call("PATCH", `/drafts/${id}`, org.member, { draft: JSON.stringify(toGone) }), 400, "BAD_REQUEST", refusal);
    const listed = (await m.ok(await m.call("GET", "/drafts", org.member))).drafts.find((d: any) => d.id === id);
    expect(listed).toMatchObject({ type: "private", to: [org.member2.user_id], content: "are you there?" });
    expect(await m.clientEvents()).toEqual([]);
  });
});
