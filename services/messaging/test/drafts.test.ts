import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

let m: Messaging;
let org: Org;
let other: Org;
let general: number;
let secret: number;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  other = await m.createOrg();
  general = await m.createStream(org.owner, "general", [org.owner, org.member]);
  secret = await m.createStream(org.owner, "secret", [org.owner], { invite_only: true });
});
afterAll(async () => m?.close());
beforeEach(async () => {
  await m.outbox();
});

const draft = (over: Record<string, unknown> = {}) => ({ type: "stream", to: [general], topic: "plans", content: "draft text", ...over });
const create = (who: Org["member"], drafts: unknown) => m.call("POST", "/drafts", who, { drafts: JSON.stringify(drafts) });

describe("drafts", () => {
  it("round trip: create (ids in order), list, edit, delete, with events to the user", async () => {
    const res = await m.ok(
      await create(org.member, [
        draft({ timestamp: 1700000000 }),
        { type: "private", to: [org.member2.user_id], topic: "", content: "dm draft", timestamp: 1700000100 },
        { type: "", to: [], topic: "", content: "unaddressed", timestamp: 1600000000 },
      ]),
    );
    expect(res.ids).toHaveLength(3);
    expect([...res.ids].sort((a: number, b: number) => a - b)).toEqual(res.ids);
    const [added] = await m.clientEvents();
    expect(added.type).toBe("messaging.draft.added");
    expect(added.users).toEqual([org.member.user_id]);
    expect(added.event.drafts.map((d: any) => d.id)).toEqual(res.ids);

    const list = await m.ok(await m.call("GET", "/drafts", org.member));
    expect(list.count).toBe(3);
    expect(list.drafts.map((d: any) => d.id)).toEqual([res.ids[2], res.ids[0], res.ids[1]]);
    expect(list.drafts[1]).toEqual({ id: res.ids[0], type: "stream", to: [general], topic: "plans", content: "draft text", timestamp: 1700000000 });

    await m.ok(await m.call("PATCH", `/drafts/${res.ids[0]}`, org.member, { draft: JSON.stringify(draft({ content: "edited", timestamp: 1700000200 })) }));
    const [updated] = await m.clientEvents();
    expect(updated.event).toEqual({ type: "drafts", op: "update", draft: { id: res.ids[0], type: "stream", to: [general], topic: "plans", content: "edited", timestamp: 1700000200 } });

    await m.ok(await m.call("DELETE", `/drafts/${res.ids[1]}`, org.member));
    const [removed] = await m.clientEvents();
    expect(removed.event).toEqual({ type: "drafts", op: "remove", draft_id: res.ids[1] });
    expect((await m.ok(await m.call("GET", "/drafts", org.member))).count).toBe(2);
  });

  it("a direct draft to nobody is unaddressed, type \"\" (Zulip keeps no recipient for it)", async () => {
    const { ids } = await m.ok(await create(org.member, [{ type: "private", to: [], topic: "", content: "to whom?", timestamp: 1700000300 }]));
    const [added] = await m.clientEvents();
    expect(added.event.drafts).toEqual([{ id: ids[0], type: "", to: [], topic: "", content: "to whom?", timestamp: 1700000300 }]);
    const listed = (await m.ok(await m.call("GET", "/drafts", org.member))).drafts.find((d: any) => d.id === ids[0]);
    expect(listed).toEqual({ id: ids[0], type: "", to: [], topic: "", content: "to whom?", timestamp: 1700000300 });
    await m.ok(await m.call("DELETE", `/drafts/${ids[0]}`, org.member));
    await m.clientEvents();
  });

  it("fills in the timestamp; an empty list creates nothing", async () => {
    const res = await m.ok(await create(org.member, [{ type: "", to: [], topic: "", content: "now" }]));
    const list = await m.ok(await m.call("GET", "/drafts", org.member));
    const d = list.drafts.find((x: any) => x.id === res.ids[0]);
    expect(Math.abs(d.timestamp - Math.floor(m.clock.now().getTime() / 1000))).toBeLessThanOrEqual(1);
    await m.outbox();
    expect((await m.ok(await create(org.member, []))).ids).toEqual([]);
    expect((await m.ok(await m.call("POST", "/drafts", org.member))).ids).toEqual([]);
    expect(await m.clientEvents()).toEqual([]);
  });

  it("validates every field and changes nothing on error", async () => {
    const before = await m.count("drafts");
    const cases: Array<[unknown, string | RegExp]> = [
      [[draft({ to: [] })], "Must specify exactly 1 channel ID for channel messages"],
      [[draft({ to: [general, general] })], "Must specify exactly 1 channel ID for channel messages"],
      [[draft({ to: [secret] })], "Invalid channel ID"],
      [[draft({ to: [999999] })], "Invalid channel ID"],
      [[draft({ type: "private", to: [999999] })], "Invalid user ID 999999"],
      [[draft({ type: "private", to: [other.member.user_id] })], `Invalid user ID ${other.member.user_id}`],
      [[draft({ content: "a\u0000b" })], /null bytes/],
      [[draft({ topic: "a\u0000b" })], /null bytes/],
      [[draft({ content: "   " })], "Message must not be empty"],
      [[draft({ timestamp: -1 })], "Timestamp must not be negative."],
      [[draft({ timestamp: 1e13 })], "Timestamp is out of range."],
      [[draft({ timestamp: 1e20 })], "Timestamp is out of range."],
      [[draft({ id: 5 })], /Argument "id" at drafts\[0\] is unexpected/],
      [[draft({ type: "channel" })], /drafts\[0\]\["type"\]/],
      [[draft({ to: "general" })], /drafts\[0\]\["to"\]/],
      [[{ type: "stream", to: [general], content: "no topic" }], /drafts\[0\]\["topic"\]/],
      [[draft(), draft({ to: [] })], "Must specify exactly 1 channel ID for channel messages"],
    ];
    for (const [drafts, msg] of cases) expectError(await create(org.member, drafts), 400, "BAD_REQUEST", msg);
    expectError(await m.call("POST", "/drafts", org.member, { drafts: "[{" }), 400, "BAD_REQUEST", "drafts is not valid JSON");
    expectError(await m.call("POST", "/drafts", org.member, { drafts: '{"a":1}' }), 400, "BAD_REQUEST");
    expect(await m.count("drafts")).toBe(before);
    expect(await m.clientEvents()).toEqual([]);
  });

  it("a missing draft or another user's draft is 404 `Draft does not exist`", async () => {
    const [mine] = (await m.ok(await create(org.member, [draft()]))).ids;
    for (const [who, id] of [
      [org.member, 999999],
      [org.member2, mine],
      [other.owner, mine],
    ] as const) {
      expectError(await m.call("PATCH", `/drafts/${id}`, who, { draft: JSON.stringify({ type: "", to: [], topic: "", content: "x" }) }), 404, "BAD_REQUEST", "Draft does not exist");
      expectError(await m.call("DELETE", `/drafts/${id}`, who), 404, "BAD_REQUEST", "Draft does not exist");
    }
    expectError(await m.call("PATCH", `/drafts/${mine}`, org.member, {}), 400, "REQUEST_VARIABLE_MISSING", "Missing 'draft' argument");
    expectError(await m.call("PATCH", `/drafts/${mine}`, org.member, { draft: JSON.stringify(draft({ timestamp: 2 ** 63 })) }), 400, "BAD_REQUEST", "Timestamp is out of range.");
    expectError(await m.call("PATCH", `/drafts/${mine}`, org.member, { draft: JSON.stringify(draft({ id: mine })) }), 400, "BAD_REQUEST");
    expect((await m.ok(await m.call("GET", "/drafts", org.member2))).drafts).toEqual([]);
  });

  it("a missing draft is 404 even when the new draft would be refused", async () => {
    const before = await m.count("drafts");
    for (const bad of [draft({ to: [999999] }), draft({ type: "private", to: [999999] }), draft({ to: [secret] })]) {
      expectError(await m.call("PATCH", "/drafts/999999", org.member, { draft: JSON.stringify(bad) }), 404, "BAD_REQUEST", "Draft does not exist");
    }
    expect(await m.count("drafts")).toBe(before);
    expect(await m.clientEvents()).toEqual([]);
  });

  it("shows a direct draft's `to` as the other participants in id order, as Zulip does", async () => {
    const me = org.member.user_id;
    const [a, b] = [org.member2.user_id, org.owner.user_id].sort((x, y) => x - y);
    const res = await m.ok(
      await create(org.member, [
        { type: "private", to: [me, b], topic: "", content: "one to one, self listed" },
        { type: "private", to: [b, a, b], topic: "", content: "group, unordered" },
        { type: "private", to: [me, me], topic: "", content: "to myself" },
      ]),
    );
    const [added] = await m.clientEvents();
    expect(added.event.drafts.map((d: any) => d.to)).toEqual([[b], [a, b], [me]]);
    const listed = (await m.ok(await m.call("GET", "/drafts", org.member))).drafts.filter((d: any) => res.ids.includes(d.id));
    expect(listed.map((d: any) => d.to)).toEqual([[b], [a, b], [me]]);

    await m.ok(await m.call("PATCH", `/drafts/${res.ids[0]}`, org.member, { draft: JSON.stringify({ type: "private", to: [b, me, a], topic: "", content: "x" }) }));
    const [updated] = await m.clientEvents();
    expect(updated.event.draft.to).toEqual([a, b]);
  });
});
